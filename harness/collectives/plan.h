/* plan.h — the plan of a program: every communication call it makes, with
 * each rank's shapes, computed once (by the oracle, shapes only) and handed
 * to every rank, so no metadata travels over the transport under test.
 *
 * Plain data: whoever holds an array of events owns it. */
#ifndef CG_PLAN_H
#define CG_PLAN_H

#include "comm.h"

/* One communication call as the oracle saw it: what a worker needs to know
 * about the other ranks (their shapes), without talking to them. */
typedef struct cg_plan_event {
    cg_coll coll;                       /* kind, op, root, peer, seq */
    int rank;                           /* issuing rank for send/recv; -1 for collectives */
    int tag;                            /* send/recv: the seq of the send (matches the pair) */
    int ndim[CG_MAX_WORLD];             /* input shape on each rank (send/recv: the message) */
    int64_t shape[CG_MAX_WORLD][CG_MAX_DIMS];
} cg_plan_event;

#endif
