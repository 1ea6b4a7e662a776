/* sim_run.h — one execution of a case on W simulated ranks (internal to
 * oracles/): the graph, the simulated communicator and the interpreter,
 * opened together and torn down together.
 *
 * oracle.c opens one run for the forward values and the semantics,
 * semantics.c differentiates it, fdcheck.c opens one per perturbation. */
#ifndef CG_SIM_RUN_H
#define CG_SIM_RUN_H

#include "autograd.h"
#include "interp.h"
#include "oracle_result.h"
#include "sim_comm.h"

typedef struct cg_sim_run {
    cg_graph *g;
    cg_sim *sim;
    cg_comm comm;
    cg_interp *I;
    cg_share share; /* replicated values (interp.h): on during the run only */
} cg_sim_run;

/* Execute the program of cs on `world` simulated ranks, with one input
 * perturbed when p is not NULL, stopping at deadline d (NULL: none); with
 * `share` (CG_SIM_TRUTH, no perturbation), replicated values are one tensor
 * each (interp.h cg_share), and R->share.broken says whether the per-rank
 * gradients can be read from them (when it says not, the run stopped after
 * the statement that broke the symmetry). Returns 0; 2 with st for a bad program; 3
 * when out of memory or stopped. Whatever the result, the caller closes R. */
int cg_sim_run_open(cg_sim_run *R, const cg_case *cs, int world, const cg_perturb *p,
                    cg_sim_mode mode, bool share, const cg_deadline *d, cg_status *st);
/* Free everything R holds; R may be partly opened (or zeroed). */
void cg_sim_run_close(cg_sim_run *R);

/* semantics.c: fill o's per_rank, replicated (and the replicated verdict)
 * from the open run R, in two backward passes whatever the world size.
 * 0, 2 (backward failed, st says why) or 3 (out of memory). */
int cg_oracle_derive(cg_oracle *o, const cg_sim_run *R, cg_status *st);
/* semantics.c: fill o's per_root and own_loss from R, one backward pass per
 * rank with roots (W passes, W copies: only on request). Same returns. */
int cg_oracle_derive_per_root(cg_oracle *o, const cg_sim_run *R, cg_status *st);

#endif
