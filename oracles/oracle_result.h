/* oracle_result.h — what a run of the oracle found (cg_oracle, its tensors
 * and its worst finite-difference element): the types alone, so the modules
 * the oracle calls (hazards, dry_reach, sim_run) read a result without
 * depending on the oracle that makes it (oracle.h declares the runs).
 * Ownership is oracle.h's: cg_oracle_free frees all of it. */
#ifndef CG_ORACLE_RESULT_H
#define CG_ORACLE_RESULT_H

#include "comm.h"
#include "ir.h"
#include "plan.h"
#include "sim_comm.h"
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

#endif
