/* result.h — what a run found: checks per case, cases per report.
 *
 * Ownership: a cg_report owns its cases, a case owns its checks, a check owns
 * its value arrays; cg_report_free releases everything. Builders copy what
 * they are given. */
#ifndef CG_RESULT_H
#define CG_RESULT_H

#include <stdbool.h>
#include <stdint.h>

#include "exit_class.h" /* cg_exit: the tool's exit status */
#include "tensor.h"

typedef enum { CG_PASS = 0, CG_FAIL, CG_ERROR, CG_SKIP } cg_outcome;

/* The tool's exit status (exit_class.h) comes from a run's worst outcome
 * (cg_exit_status) or a subcommand's: a failed check CG_EXIT_FAIL, a bad case
 * or command line CG_EXIT_USAGE, the infrastructure (launch, MPI, out of
 * memory, deadline) CG_EXIT_INFRA. */
const char *cg_outcome_name(cg_outcome s); /* "pass", "fail", "error", "skip" */

/* How close is close enough: |obs - exp| <= atol + rtol * |exp|, elementwise. */
typedef struct cg_tol {
    double rtol, atol;
    cg_dtype dtype; /* for the ULP distance */
} cg_tol;

/* The default tolerances of a dtype (used when a case gives none). */
cg_tol cg_tol_for(cg_dtype dt);

typedef struct cg_check {
    char *tensor;        /* "x"; "" for case-level checks */
    int rank;            /* -1 for case-level checks */
    char *semantics;     /* per_rank, replicated, own_loss, value, finite_difference, error */
    char *rules;         /* NULL: checked against the truth */
    char *against;       /* where expected comes from: "case", "oracle" */
    int64_t numel;
    double *expected;
    double *observed;
    double max_abs_err, max_rel_err, max_ulp;
    int64_t first_bad;   /* -1 when all elements pass */
    cg_outcome status;
    char *note;          /* why it failed or was skipped; may be NULL */
} cg_check;

typedef struct cg_case_result {
    char *name, *file, *source;
    char *rules;         /* the rule set of a distributed job; NULL in the oracle */
    int world;
    cg_outcome status;
    double duration_s;
    char *message;       /* the error of an erroring case, NULL otherwise */
    char *ran;           /* how a real framework ran it (the JAX runner's primitives: "psum, all_gather"); NULL else */
    int error_class;     /* an erroring case: 2 the case is bad, 3 infrastructure */
    bool replicated_defined;
    char *replicated_reason;
    cg_outcome fd_status;
    double fd_max_rel_err, fd_tolerance;
    char *fd_note;       /* why skipped */
    int nchecks, capchecks;
    cg_check *checks;
    /* diagnosis of a mismatch (diagnose.h); ndiag 0 with an explanation
     * means no known mistake matched */
    int nwarnings;
    char **warnings;     /* hang hazards found before running (hazards.h) */
    int ndiag;
    char **diag_matches;
    char *diag_explanation, *diag_see;
    long injected;       /* --inject: the calls the fault changed, every rank summed; -1 none */
} cg_case_result;

/* The real framework a run measured (--backend pytorch:API); every field
 * NULL in runs of the tool's own ranks. */
typedef struct cg_framework {
    char *name;          /* "pytorch" */
    char *version;       /* torch.__version__ */
    char *api;           /* nn, c10d, funcol, gatherlayer */
    char *backend;       /* the process group: gloo, nccl, mpi or a registered name */
    char *python;        /* the interpreter, and why it was chosen */
    char *isolation;     /* how the ranks were kept to the loopback interface */
} cg_framework;

typedef struct cg_report {
    char *mode;          /* "oracle-only" or "distributed" */
    char *transport, *rules, *device;
    cg_framework framework;
    /* --inject: the spec, how many calls it changed in the whole run, and
     * why it changed none (a spec that injected nothing tested nothing) */
    char *inject_spec;
    long injected;
    char *inject_reason;
    int ncases, capcases;
    cg_case_result *cases;
    int passed, failed, errors, skipped;
} cg_report;

cg_report *cg_report_new(const char *mode, const char *transport, const char *rules,
                         const char *device);
void cg_report_free(cg_report *r);
/* A new zeroed case appended to r (NULL on OOM). The pointer is valid until
 * the next call. */
cg_case_result *cg_report_add_case(cg_report *r, const char *name, const char *file,
                                   const char *source, int world);
/* Append a warning (copied). 0 or -1 on OOM. */
int cg_case_add_warning(cg_case_result *c, const char *text);
/* Set the diagnosis (everything copied). */
void cg_case_set_diagnosis(cg_case_result *c, const char *const *matches, int n, const char *explanation,
                           const char *see);
/* Record the framework a run measured (every string copied; NULLs allowed). */
void cg_report_set_framework(cg_report *r, const cg_framework *f);
/* Record the run's --inject verdict (strings copied; reason NULL when it
 * injected something). */
void cg_report_set_injection(cg_report *r, const char *spec, long injected, const char *reason);
/* Set the rule set a job ran under (copied). */
void cg_case_set_rules(cg_case_result *c, const char *rules);
/* Compare and append a check; returns it, or NULL on OOM. n may be 0. */
cg_check *cg_case_add_check(cg_case_result *c, const char *tensor, int rank,
                            const char *semantics, const char *rules, const char *against,
                            const double *expected, const double *observed, int64_t n, cg_tol tol);
/* Append a check with a fixed status and note and no values. */
cg_check *cg_case_add_note(cg_case_result *c, const char *tensor, int rank, const char *semantics,
                           const char *rules, cg_outcome st, const char *note);
/* The case's status from its checks (fail beats pass; error is set by hand). */
void cg_case_finish(cg_case_result *c);
void cg_report_count(cg_report *r);

/* Elementwise comparison used by checks; fills the error fields. */
cg_outcome cg_compare(const double *expected, const double *observed, int64_t n, cg_tol tol,
                     double *max_abs, double *max_rel, double *max_ulp, int64_t *first_bad);

#endif
