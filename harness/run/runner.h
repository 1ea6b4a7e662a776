/* runner.h — running a set of cases into a report, in each mode.
 *
 * A "job" is one (case, world) pair; the world sizes are the case's own
 * ("worlds 1..8"), or the single --world N when given. */
#ifndef CG_RUNNER_H
#define CG_RUNNER_H

#include "case_set.h"
#include "cli.h"
#include "result.h"

/* Run every job in the oracle alone, printing a progress line per job.
 * Returns the exit status the results call for (0, 1, 2 or 3). */
int cg_run_oracle_only(const cg_options *o, const cg_case_set *set, cg_report *rep);

/* The exit status a finished report calls for: 3 beats 2 beats 1 beats 0.
 * An errored case counts as 2 when its error_class does not say 3, whatever
 * worst_error_class says: an error never leaves a run green. */
int cg_exit_status(const cg_report *rep, int worst_error_class);
/* Add each case file that did not load (set->bad) to rep as an errored test
 * (class 2, world 0, the parser's "file:line:col: expected ..." as its
 * message). 0, or -1 when out of memory. */
int cg_report_load_errors(cg_report *rep, const cg_case_set *set);

/* World sizes a case runs at under the options; returns the count. */
int cg_case_worlds(const cg_options *o, const cg_case *cs, int *worlds);

/* Write the reports the options ask for (--json, --junit), each one tried
 * and each failure said on stderr: rc, or 3 when one cannot be written. */
int cg_write_reports(const cg_options *o, const cg_report *rep, int rc);

double cg_now(void); /* monotonic seconds */

#endif
