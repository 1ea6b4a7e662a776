/* plan.h — the plan of a program: every communication call it makes, with
 * each rank's shapes, computed once (by the oracle, shapes only) and handed
 * to every rank, so no metadata travels over the transport under test.
 *
 * Plain data: whoever holds an array of events owns it. */
#ifndef CG_PLAN_H
#define CG_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "comm.h"

/* One communication call as the oracle saw it: what a worker needs to know
 * about the other ranks (their shapes), without talking to them. */
typedef struct cg_plan_event {
    cg_coll coll;                       /* kind, op, root, peer, seq */
    int rank;                           /* issuing rank for send/recv; -1 for collectives */
    int tag;                            /* send/recv: the seq of the send (matches the pair) */
    int ndim[CG_MAX_WORLD];             /* input shape on each rank (send/recv: the message) */
    int64_t shape[CG_MAX_WORLD][CG_MAX_DIMS];
    /* The call's explicit row splits, world x world (row j: rank j's input,
     * entry r the rows of its block r), owned by the plan array (freed with
     * it); NULL: the balanced split. */
    int64_t *splits;
    /* A call on a process group (coll.nmembers > 0): its members' global
     * ranks, ascending; ndim, shape, root and splits are then indexed by
     * group rank (member k is k), as in a world of nmembers ranks. */
    int members[CG_MAX_WORLD];
} cg_plan_event;

/* Rank r's input in the event: elements, rows (a 0-d input is one row) and
 * elements per row. */
int64_t cg_plan_numel(const cg_plan_event *ev, int r);
int64_t cg_plan_rows(const cg_plan_event *ev, int r);
int64_t cg_plan_row_size(const cg_plan_event *ev, int r);
/* Rows of block r of rank j's input, by the event's splits or balanced. */
static inline int64_t cg_plan_block_rows(const cg_plan_event *ev, int world, int j, int r)
{
    return cg_split_rows(cg_split_row(ev->splits, world, j), cg_plan_rows(ev, j), world, r);
}

/* The shape of the collective's output on rank me, by its table's shape
 * rule, from every rank's input shape. */
void cg_plan_out_shape(const cg_plan_event *ev, int world, int me, int *ndim, int64_t shape[CG_MAX_DIMS]);

/* The per-rank element counts a transport call on rank me takes (world
 * entries each): inputs[r] is rank r's input, blocks[r] block r of the rows
 * this rank's call splits (its own input; scatter: the root's), recv[r] what
 * rank r's all_to_all sends to me. */
typedef struct cg_coll_counts {
    size_t inputs[CG_MAX_WORLD], blocks[CG_MAX_WORLD], recv[CG_MAX_WORLD];
} cg_coll_counts;
void cg_plan_counts(const cg_plan_event *ev, int world, int me, cg_coll_counts *c);

#endif
