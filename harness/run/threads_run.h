/* threads_run.h — a case under one rule set on W threads of this process,
 * over the in-process transport (transport_threads.h): what a worker does per
 * rank (worker.c's run_rank), the results kept in memory instead of sent.
 *
 * It makes the runs a diagnosis compares with (the emulations, re-run in the
 * judging process without MPI, on the host whatever the run under test used).
 *
 * Ownership: every thread and buffer it makes is freed before it returns;
 * obs receives malloc'd arrays (cg_observed_free). */
#ifndef CG_THREADS_RUN_H
#define CG_THREADS_RUN_H

#include "diagnose.h"
#include "observed.h"
#include "oracle.h"
#include "rules.h"
#include "transport_threads.h"

/* Run cs at plan->world under `rules`, one thread per rank, the tensors in
 * the case dtype (as a worker's). Fills obs with every rank's final bindings
 * (values and gradients) and its error, if any. Returns 0, or -1 with st
 * when threads or memory could not be had. */
int cg_threads_run_rules(const cg_case *cs, const cg_oracle *plan, const cg_rules *rules,
                         cg_observed *obs, cg_status *st);

/* cg_threads_run_rules over a transport that misorders as m says. */
int cg_threads_run_misordered(const cg_case *cs, const cg_oracle *plan, cg_misorder m, cg_observed *obs,
                              cg_status *st);

/* The runs a diagnosis compares with (diagnose.h): every built-in emulation
 * (each rule set but the reference) on threads, `first` (a rule set's name,
 * or NULL) before the others, since where several give the same numbers the
 * diagnosis names the first; then the reference over a transport that
 * delivers reduce_scatter's or all_gather's blocks reversed or rotated by
 * one (runs named "wrong_rank_order", diagnose.c's mistake). A rank that fails under an emulation ends every
 * wait for it (above), so an emulation that raises on one rank only is a
 * run with that rank's error, never a hang. Fills runs[0..n) (obs NULL for a
 * run that could not be made) from obs[0..max); returns n. The caller frees
 * each obs[i] (cg_observed_free). */
int cg_threads_run_emulations(const cg_case *cs, const cg_oracle *plan, const char *first, cg_observed *obs,
                              cg_rule_run *runs, int max);

#endif
