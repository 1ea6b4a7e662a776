/* observed.h — what a distributed run produced on each rank, and the diff of
 * it against the oracle and the case's expectations.
 *
 * Ownership: cg_observed owns its arrays; cg_observed_free releases them. */
#ifndef CG_OBSERVED_H
#define CG_OBSERVED_H

#include "ir.h"
#include "oracle.h"
#include "result.h"

typedef struct cg_obs_tensor {
    char *name;
    int ndim;
    int64_t shape[CG_MAX_DIMS];
    int64_t numel;
    double *value; /* forward value */
    double *grad;  /* accumulated gradient (zeros when none reached it) */
} cg_obs_tensor;

typedef struct cg_obs_rank {
    int ntensors;
    cg_obs_tensor *tensors;
    char *error;   /* the rank's program error, NULL when it finished */
    int error_class; /* of error: 2 the program raised, 3 out of memory or a stop on that rank */
} cg_obs_rank;

typedef struct cg_observed {
    int world;
    cg_obs_rank ranks[CG_MAX_WORLD];
} cg_observed;

void cg_observed_free(cg_observed *obs);

/* What a distributed job checks. */
typedef struct cg_diff_opts {
    const char *rules;   /* the rule set that produced obs */
    bool expect_only;    /* check only rules=<rules> expectations (an emulation job of the default run) */
    cg_tol tol;          /* observed vs oracle, by the case dtype (or the case's tolerance) */
    const char *rules_name; /* the rule set's own name when `rules` is a plugin path (its
                             * table's name, which a case's rules=NAME refers to); NULL otherwise */
} cg_diff_opts;

/* Diff one distributed job: rank errors against expected errors, observed
 * values and gradients against the oracle (per-rank semantics), rules=
 * expectations against observed. Appends checks to res. A tensor whose
 * element count differs from the oracle's is one failing "value" note that
 * begins with CG_SHAPE_NOTE and names both shapes (explore classes it). */
#define CG_SHAPE_NOTE "the distributed run's value has shape"
void cg_diff_distributed(const cg_case *cs, const cg_oracle *o, const cg_observed *obs,
                         const cg_diff_opts *opts, cg_case_result *res);

#endif
