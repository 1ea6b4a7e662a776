/* diagnose.h — naming the known mistake a mismatch matches.
 *
 * When a distributed job's gradients differ from the oracle, its observed
 * gradients on every param are compared with candidate explanations computed
 * in the same run: every built-in emulation rule set (re-run over the trusted
 * MPI transport), the oracle's replicated and own-loss gradients, the oracle
 * with collectives straight-through or gathers keeping the local slot, and
 * the truth scaled by W or 1/W. Every candidate that matches within the
 * job's tolerance is reported; when several match, the case cannot tell them
 * apart and the diagnosis says so instead of picking one.
 *
 * A run that raised is matched by the emulations that raise the same error.
 * Wrong forward values are a transport problem, not a gradient rule: those
 * are diagnosed from the values alone ("rank 0 holds rank 1's result"). */
#ifndef CG_DIAGNOSE_H
#define CG_DIAGNOSE_H

#include "observed.h"
#include "oracle.h"
#include "result.h"

typedef struct cg_rule_run {
    const char *rules;       /* the emulation's name */
    const cg_observed *obs;  /* what it produced (rank errors included); NULL if lost */
} cg_rule_run;

typedef struct cg_diag_inputs {
    const cg_case *cs;
    const cg_oracle *truth;
    const cg_oracle *straight_through;  /* may be NULL */
    const cg_oracle *local_slot;        /* may be NULL */
    const cg_observed *obs;             /* the job under diagnosis */
    const char *rules;                  /* the job's rule set */
    const cg_rule_run *runs;            /* emulation re-runs */
    int nruns;
    cg_tol tol;
} cg_diag_inputs;

/* True when res has a failing value or gradient check against the oracle,
 * or the run raised where the truth does not. */
bool cg_diag_needed(const cg_case_result *res, const cg_observed *obs, bool *values_wrong);

/* Fill res's diagnosis fields. */
void cg_diagnose(const cg_diag_inputs *in, cg_case_result *res);

#endif
