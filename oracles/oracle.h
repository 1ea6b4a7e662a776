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
#include "plan.h"
#include "status.h"

typedef struct cg_otensor {
    char *name;
    int rank;
    int ndim;
    int64_t shape[CG_MAX_DIMS];
    int64_t numel;
    bool is_param;       /* made by param() */
    int stmt;            /* statement index of its final binding (for perturbation) */
    double *value;       /* forward value */
    double *per_rank;
    double *own_loss;    /* NULL until cg_oracle_add_per_root */
    double *replicated;  /* NULL when replicated is undefined */
    double **per_root;   /* NULL until cg_oracle_add_per_root; then world entries:
                          * dL_k/dx_r, NULL where rank k had no roots */
    double *fd;          /* central difference of per_rank; NULL when not checked */
    int replicas;        /* ranks whose binding is this same replicated tensor (1: its own) */
    const struct cg_otensor *holder; /* NULL: value, per_rank and replicated are its own;
                          * else the otensor (the same tensor on an earlier rank) whose they are */
    bool value_in_run;    /* value, and per_rank_in_run per_rank, point into the kept run's */
    bool per_rank_in_run; /* graph (cg_oracle.run): f64 tensors, not copied */
    int64_t fd_checked;  /* elements checked (a sample for large tensors) */
    double fd_tolerance; /* relative: |fd - g| <= it (1 + |g|) (fdcheck.c derives it) */
} cg_otensor;

/* How the simulated collectives differentiate: the truth, or a known mistake
 * kept as a reference for the diagnosis (same forward values, gradients
 * flowing differently). */
typedef enum cg_sim_mode {
    CG_SIM_TRUTH,
    CG_SIM_STRAIGHT_THROUGH, /* each collective is identity on the local input for autograd */
    CG_SIM_LOCAL_SLOT,       /* a gather's backward keeps only the rank's own slice */
} cg_sim_mode;

/* One finite-difference element and what its error is made of (fdcheck.c). */
typedef struct cg_fd_element {
    char tensor[64];
    int rank;
    int64_t index;
    double analytic, fd;     /* the oracle's gradient and the central difference */
    double step;             /* h */
    double truncation;       /* estimated |h^2 F''' / 6| (Richardson) */
    double rounding;         /* estimated eps |F| / h */
    double allowed;          /* the absolute error this element may have */
} cg_fd_element;

typedef struct cg_oracle {
    int world;
    cg_sim_mode mode;        /* how its collectives differentiate */
    cg_deadline deadline;    /* its runs stop here (cg_oracle_run_within); at 0 = none */
    bool per_root_ready;     /* own_loss and per_root are filled */
    cg_status st;            /* st.code: CG_EXIT_OK, CG_EXIT_USAGE (a bad program: st.msg is
                                "file:line:col: expected ...") or CG_EXIT_INFRA */
    int ntensors;
    cg_otensor *tensors;     /* ordered by rank, then first binding */
    int nroot_ranks;         /* ranks with at least one root after the last zero_grad */
    int nbackward;           /* backward statements executed */
    bool replicated_defined;
    char replicated_reason[256]; /* why undefined, or "one root" / "all roots agree" */
    /* finite differences */
    bool fd_ran;
    char fd_skip_reason[256];
    double fd_max_rel_err;   /* max |fd - g| / (1 + |g|) */
    double fd_tolerance;     /* the widest of the tensors' tolerances */
    bool fd_failed;          /* some element erred past its tensor's tolerance */
    cg_fd_element fd_worst;  /* the element furthest past (or closest to) its bound */
    int nevents;
    cg_plan_event *events;   /* every communication call, in program order */
    bool shared;             /* replicated values held once (interp.h cg_share) */
    struct cg_sim_run *run;  /* the first run, kept while values point into it (oracle.c) */
    char unshared_reason[96]; /* why a shared first run was redone without, or "" */
} cg_oracle;


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
