/* judge.h — the verdict on one job of a case (a case at one world, run one
 * way), as one library call in two steps, the same for every way a case is
 * run: the distributed worker (harness/run/worker.c), the PyTorch backend's
 * judge (harness/run/pytorch/backend_pytorch_judge.c), --oracle-only
 * (harness/run/run_oracle.c) and anything that judges programs in-process.
 *
 *   cg_judge_check:    the oracle against finite differences and the case's
 *                      expectations, the hazards, the observed run against
 *                      the oracle and against its rules= expectations; says
 *                      whether a diagnosis is wanted;
 *   cg_judge_diagnose: given the emulations' runs of the same case (which
 *                      the caller makes: collectively over MPI, on threads,
 *                      ...), names the mistake the observed run matches.
 * Between the two the caller may need every rank (the worker's re-runs are
 * collective), so they are two calls rather than one with a callback.
 *
 * Ownership: nothing is kept; the checks and the diagnosis are appended to
 * res, which owns them. */
#ifndef CG_JUDGE_H
#define CG_JUDGE_H

#include "diagnose.h"
#include "expect.h" /* cg_case_tol: a job's tolerance */

typedef struct cg_judge_job {
    const cg_case *cs;
    cg_oracle *o;            /* the oracle's kept run at the job's world; the diagnosis adds to it */
    const cg_observed *obs;  /* the run under test; NULL: the oracle alone (--oracle-only) */
    cg_diff_opts diff;       /* the rule set obs came from, expect_only, the tolerance */
    bool fd;                 /* check the oracle against finite differences: a second oracle
                              * run (o itself was run without them, or with them: then false) */
    bool diagnose;           /* name the mistake when a value or gradient is wrong */
} cg_judge_job;

/* What a job's diagnosis needs. */
typedef enum { CG_JUDGE_NO_DIAGNOSIS = 0, CG_JUDGE_VALUES_WRONG, CG_JUDGE_GRADIENTS_WRONG } cg_judge_need;

/* Step 1: the checks, appended to res. Returns the job's error class (0,
 * or the oracle's: 2 for a program the truth cannot run, 3 for
 * infrastructure), which it also sets in res; *need says whether and what
 * to diagnose (never without j->diagnose, an observed run and a mismatch;
 * never for an expect_only job). */
int cg_judge_check(const cg_judge_job *j, cg_case_result *res, cg_judge_need *need);

/* Step 2: the diagnosis of a mismatch, from the emulations' runs[0..n-1]
 * (none are read when only values are wrong) and the oracle's variants
 * (own loss, straight-through collectives, gathers keeping the local slot),
 * which it computes. `label` names the run under test in the explanation. */
void cg_judge_diagnose(const cg_judge_job *j, cg_judge_need need, const cg_rule_run *runs, int n,
                       const char *label, cg_case_result *res);

#endif
