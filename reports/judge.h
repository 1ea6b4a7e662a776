/* judge.h — the verdict on one job of a case (a case at one world, run one
 * way), as one library call, the same for every way a case is run: the
 * distributed worker (harness/run/worker.c), the PyTorch backend
 * (harness/pytorch/backend_pytorch_judge.c), explore's classifier,
 * --oracle-only (harness/run/run_oracle.c) and anything that judges programs
 * in-process.
 *
 *   cg_judge: the oracle against finite differences and the case's
 *             expectations, the hazards, the observed run against the oracle
 *             and against its rules= expectations; then, when a value or
 *             gradient is wrong, the diagnosis: the emulations' runs of the
 *             same case, which the judge asks the job's runner for (the
 *             caller's way of running a case: threads in this process, ...),
 *             and the oracle's variants, matched against the run under test.
 *
 * The two steps are public too (cg_judge_check, cg_judge_diagnose) for a
 * caller with a diagnosis of its own (a real framework's raise, which its
 * ranks describe better than an error string), and cg_emulations_run makes the
 * runs such a diagnosis compares with.
 *
 * Ownership: nothing is kept; the checks and the diagnosis are appended to
 * res, which owns them; a cg_emulations owns its runs (cg_emulations_free). */
#ifndef CG_JUDGE_H
#define CG_JUDGE_H

#include "diagnose.h"
#include "expect.h" /* cg_case_tol: a job's tolerance */
#include "rules.h"
#include "transport_threads.h" /* cg_misorder: a hypothesis a runner's transport plays */

/* A way to run a case under a rule set, as a rank of a job would, over a
 * transport that may misorder a collective's blocks (m: a hypothesis of the
 * diagnosis). Fills obs with every rank's final bindings and its error;
 * 0, or -1 with st when the run could not be made. */
typedef struct cg_emulation_runner {
    const char *name;
    int (*run)(const cg_case *cs, const cg_oracle *plan, const cg_rules *rules, cg_misorder m,
               cg_observed *obs, cg_status *st);
} cg_emulation_runner;

/* The runs a diagnosis compares with (diagnose.h), owned. */
#define CG_MAX_EMULATIONS 16
typedef struct cg_emulations {
    int n;
    cg_rule_run runs[CG_MAX_EMULATIONS];  /* runs[i].obs: &obs[i], or NULL for a run not made */
    cg_observed obs[CG_MAX_EMULATIONS];
} cg_emulations;

/* Every built-in emulation (each rule set but the reference) through runner,
 * `first` (a rule set's name, or NULL) before the others, since where several
 * give the same numbers the diagnosis names the first; then the reference
 * over a transport that delivers reduce_scatter's or all_gather's blocks
 * reversed or rotated by one (runs named "wrong_rank_order", diagnose.c's
 * mistake). Returns out->n. */
int cg_emulations_run(const cg_emulation_runner *runner, const cg_case *cs, const cg_oracle *plan,
                      const char *first, cg_emulations *out);
void cg_emulations_free(cg_emulations *e);

typedef struct cg_judge_job {
    const cg_case *cs;
    cg_oracle *o;            /* the oracle's kept run at the job's world; the diagnosis adds to it */
    const cg_observed *obs;  /* the run under test; NULL: the oracle alone (--oracle-only) */
    cg_diff_opts diff;       /* the rule set obs came from, expect_only, the tolerance */
    bool fd;                 /* check the oracle against finite differences: a second oracle
                              * run (o itself was run without them, or with them: then false) */
    bool diagnose;           /* name the mistake when a value or gradient is wrong */
    const cg_emulation_runner *runner; /* makes the emulations' runs a diagnosis compares with */
    const char *first;       /* the emulation named first where several match (or NULL) */
    const char *label;       /* names the run under test in the explanation */
} cg_judge_job;

/* What a job's diagnosis needs. */
typedef enum { CG_JUDGE_NO_DIAGNOSIS = 0, CG_JUDGE_VALUES_WRONG, CG_JUDGE_GRADIENTS_WRONG } cg_judge_need;

/* One job judged: the checks appended to res, then, when j->diagnose and a
 * value or gradient is wrong, the diagnosis (the emulations' runs made through
 * j->runner when gradients are wrong). Returns the job's error class (0, or
 * the oracle's: CG_EXIT_USAGE for a program the truth cannot run,
 * CG_EXIT_INFRA for infrastructure), which it also sets in res. */
int cg_judge(const cg_judge_job *j, cg_case_result *res);

/* cg_judge's first step: the checks; *need says whether and what to diagnose
 * (never without j->diagnose, an observed run and a mismatch; never for an
 * expect_only job). */
int cg_judge_check(const cg_judge_job *j, cg_case_result *res, cg_judge_need *need);

/* cg_judge's second step: the diagnosis of a mismatch from the emulations'
 * runs (none are read when only values are wrong: NULL) and the oracle's
 * variants (own loss, straight-through collectives, gathers keeping the local
 * slot), which it computes. */
void cg_judge_diagnose(const cg_judge_job *j, cg_judge_need need, const cg_emulations *runs,
                       cg_case_result *res);

#endif
