/* dry_reach.h — what each rank's backward calls reach, from a dry run of its
 * program (a transport that moves nothing, the real autograd graph): the
 * hang-hazard analysis (hazards.h) reads it. */
#ifndef CG_DRY_REACH_H
#define CG_DRY_REACH_H

#include "ir.h"
#include "oracle_result.h"

/* Backward events recorded per rank; the last row is the sends' own reach
 * (FAST mode: a send's backward always runs), and events beyond it share it. */
#define CG_DRY_MAX_EVENTS 64

/* Each rank's reach, every array owned here (cg_dry_reach_free): rows[r],
 * real[r] and p2p[r] are CG_DRY_MAX_EVENTS rows of stride nseq + 1.
 * rows[r][e][seq]: 1 event e's roots reach call #seq, 0 present and not
 * reached, -1 not this rank's; real[r][e]: r calls backward at event e (a
 * statement in another rank's `on` block is not its call); p2p[r][e][seq]: 1
 * when send/recv #seq is on r's tape at event e (it runs there, as every
 * send and recv node does). nevents: the backward statements of the last
 * rank (each rank records every statement, its own calls or not). */
typedef struct cg_dry_reach {
    signed char **rows, **real, **p2p;
    int world, nseq, nevents;
} cg_dry_reach;

/* The number of communication calls in plan (1 + the largest seq). */
int cg_dry_count_seq(const cg_oracle *plan);
/* One dry run per rank of cs at plan->world into *s; 0, or -1 with st. *s
 * is to be freed either way. */
int cg_dry_reach_all(const cg_case *cs, const cg_oracle *plan, int nseq, cg_dry_reach *s, cg_status *st);
void cg_dry_reach_free(cg_dry_reach *s);

#endif
