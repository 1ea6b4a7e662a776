/* rank_run.h — one rank's run of a case's program over a transport: its
 * graph (on the GPU when asked), its comm (rank_comm.h: the rule set over
 * the transport, the oracle's plan for the other ranks' shapes) and the
 * interpreter, made, run and freed in one place for everyone who runs a
 * program as one rank: the worker (harness/run/worker.c), the threads run
 * (harness/run/threads_run.c) and the hazard finder's dry runs
 * (oracles/hazards.c). The bench makes only the comm (cg_rank_comm_make).
 *
 * Ownership: the caller keeps cs, rules, tp and the plan's events alive until
 * cg_rank_run_end; the rank run owns its graph, its interpreter and the comm's
 * process-group handles, and frees them there.
 * Failure: cg_rank_run_program returns 0 when the program ran to its end; -1 when it
 * could not start (I is NULL, st says why: out of memory, no GPU) or failed
 * (cg_interp_status(I) says why). */
#ifndef CG_RANK_RUN_H
#define CG_RANK_RUN_H

#include <stdbool.h>

#include "interp.h"
#include "rank_comm.h"

typedef struct cg_rank_run {
    int rank;         /* the interpreter's slot: tp's rank */
    cg_graph *g;
    cg_rank_comm w;
    cg_comm comm;     /* the interpreter's: w's own, or the caller's wrapping of it */
    cg_interp *I;     /* NULL when the run could not start */
    cg_status st;     /* why it could not start */
} cg_rank_run;

/* Builds the comm the interpreter calls from the rank's (the hazard finder's
 * dry run wraps it); called once, before the interpreter is made. */
typedef cg_comm (*cg_rank_wrap)(void *ctx, cg_rank_comm *w);

/* Runs cs's program as tp's rank: tensors in device memory when cuda. wrap
 * may be NULL. Always call cg_rank_run_end after, whatever it returned. */
int cg_rank_run_program(cg_rank_run *r, const cg_case *cs, const cg_rules *rules, cg_tp *tp,
                const cg_plan_event *events, int nevents, bool cuda, cg_rank_wrap wrap, void *ctx);
void cg_rank_run_end(cg_rank_run *r);

#endif
