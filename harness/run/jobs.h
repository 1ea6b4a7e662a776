/* jobs.h — the unit of a distributed run: one case at one world size under
 * one rule set.
 *
 * The default run checks each case under `reference` (it must match the
 * oracle) and, for every other rule set its expectations name, adds an
 * expectation-only job that proves the emulation reproduces the documents'
 * numbers. `--rules X` instead runs every case under X alone, compared with
 * the oracle, so a wrong rule set fails. */
#ifndef CG_JOBS_H
#define CG_JOBS_H

#include <stdbool.h>

#include "case_set.h"
#include "cli.h"

typedef struct cg_job {
    int case_index;          /* into the case set */
    char rules[512];         /* a built-in name or a plugin path */
    bool expect_only;
} cg_job;

/* Jobs of every case at world w, in case order. Returns the count (>= 0), or
 * -1 when out of memory. *jobs is malloc'd (caller frees). */
int cg_jobs_for_world(const cg_options *o, const cg_case_set *set, int w, cg_job **jobs);

#endif
