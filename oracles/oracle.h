/* oracle.h — the single-process oracle: all W ranks of a case simulated in
 * one autograd graph in f64, collectives as plain differentiable ops.
 *
 * Its gradients come from ordinary autograd over the simulated global
 * function, never from a rule set, which is what makes it the reference.
 * From one forward run and two backward passes (semantics.c says why two
 * suffice) it derives, for every named tensor on every rank (design.md
 * section 2), in time and memory linear in W N:
 *   per_rank   d(sum_k L_k)/dx_r        (PyTorch's meaning; the default)
 *   replicated dL_k/dx_r, defined only when every rank k with roots yields the
 *              same per-root gradients; otherwise "undefined" with the reason
 * and, on request only (cg_oracle_add_per_root: W more passes, W^2 N memory),
 *   own_loss   dL_r/dx_r, and per_root dL_k/dx_r
 * and a central finite difference of per_rank (fdcheck.c).
 *
 * Ownership: cg_oracle_run returns a result the caller frees with
 * cg_oracle_free; it keeps no pointer into the case. */
#ifndef CG_ORACLE_H
#define CG_ORACLE_H

#include "comm.h"
#include "ir.h"
#include "oracle_result.h"
#include "plan.h"
#include "status.h"

/* Run the case at world size `world`. Always returns a result (NULL only when
 * out of memory); on a bad program, st.code is 2 and st.msg says where. With
 * fd false the finite-difference check is skipped ("not requested"). */
cg_oracle *cg_oracle_run(const cg_case *cs, int world, bool fd);
/* The same, stopping once `seconds` (> 0) have passed: every run of the
 * program, the finite differences' included, answers "deadline: the S s job
 * limit (--timeout) passed in <phase> of case X" (st.code 3). */
cg_oracle *cg_oracle_run_within(const cg_case *cs, int world, bool fd, double seconds);
/* The same under a variant mode (no finite differences). */
cg_oracle *cg_oracle_run_mode(const cg_case *cs, int world, cg_sim_mode mode);
void cg_oracle_free(cg_oracle *o);
/* Fill own_loss and per_root (every tensor), re-running the program: one
 * backward pass per rank with roots. Idempotent; runs on its own when the
 * case has an own_loss expectation. Returns 0, or 2/3 when the passes
 * fail: o's other results stay valid and o->st unchanged, and own_loss and
 * per_root stay NULL. */
int cg_oracle_add_per_root(const cg_case *cs, cg_oracle *o);

const cg_otensor *cg_oracle_find(const cg_oracle *o, const char *name, int rank);

/* Evaluate an expectation's "= EXPR" on rank `rank` against the oracle's
 * forward values: returns a malloc'd array of n values, or NULL with st.
 * With o (a truth oracle whose run completed) the expression is evaluated in
 * o's kept run, no second simulation; else (o NULL) the program runs again. */
double *cg_oracle_eval_expr(const cg_oracle *o, const cg_case *cs, int world, int rank, const cg_expr *e,
                            int64_t *n, cg_status *st);

/* internal, shared with fdcheck.c: the global function sum_k L_k at a
 * perturbed input (see interp.h), or NAN with st on failure. */
double cg_oracle_objective(const cg_case *cs, int world, const void *perturb, const cg_deadline *d,
                           cg_status *st);
int cg_oracle_fdcheck(const cg_case *cs, cg_oracle *o);

#endif
