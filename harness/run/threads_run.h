/* threads_run.h — a case under one rule set on W threads of this process,
 * over the in-process transport (transport_threads.h): what a worker does per
 * rank (worker.c's run_rank), the results kept in memory instead of sent.
 *
 * It makes the runs a diagnosis compares with (the emulations, re-run in the
 * judging process without MPI): the judge's runner (judge.h).
 *
 * Ownership: every thread and buffer it makes is freed before it returns;
 * obs receives malloc'd arrays (cg_observed_free). */
#ifndef CG_THREADS_RUN_H
#define CG_THREADS_RUN_H

#include "judge.h"
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

/* The judge's runner (judge.h) on threads: cg_threads_run_rules over a
 * transport that misorders as the diagnosis asks, on the host whatever the
 * run under test used. A rank that fails under an
 * emulation ends every wait for it, so an emulation that raises on one rank
 * only is a run with that rank's error, never a hang. */
extern const cg_emulation_runner cg_threads_runner;

#endif
