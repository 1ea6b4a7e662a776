/* hazards.h — hang hazards: communication whose backward some rank would
 * never run under an engine that runs only the nodes reachable from that
 * rank's roots (PyTorch's), so the ranks that do run it wait forever; and
 * received tensors no root uses, whose senders then wait (the design note's
 * SMART-mode problem). collgrad-check itself runs every rank's whole record,
 * so these are warnings about other engines, found before running. */
#ifndef CG_HAZARDS_H
#define CG_HAZARDS_H

#include "ir.h"
#include "oracle_result.h"

/* What each kind of warning says, in its middle (explore classes hangs by
 * them): a rank that does not reach a collective's backward others run, and
 * a recv no root uses, whose sender waits for a gradient never sent. */
#define CG_HAZARD_UNREACHED "never reaches the backward of"
#define CG_HAZARD_UNUSED_RECV "is unused: no root reaches it"

/* Analyse cs at plan->world using the oracle's plan. On success returns 0
 * with *warnings a malloc'd array of *nwarnings malloc'd sentences (caller
 * frees each and the array); -1 with st on failure. */
int cg_find_hazards(const cg_case *cs, const cg_oracle *plan, char ***warnings, int *nwarnings, cg_status *st);

/* Refuse, before anything runs, a program whose send's backward would wait on
 * MPI or NCCL ranks for a gradient the peer cannot send yet: a backward call
 * that runs (as every backward call does) the backward of a send while the
 * matching recv comes later in the peer's program. 0, or -1 with st a usage
 * error naming both places (the oracle, which runs every rank's backward at
 * once, would not notice). */
int cg_check_p2p_order(const cg_case *cs, const cg_oracle *plan, cg_status *st);

#endif
