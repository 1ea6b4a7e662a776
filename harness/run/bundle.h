/* bundle.h — a launcher's job as one block of bytes: every case of the
 * selection (its path, for messages, and the very text the launcher parsed)
 * and the jobs to run at one world size.
 *
 * The launcher writes it into its private directory; one rank on the
 * launcher's node reads it and broadcasts it (bundle_share.h), so no other
 * rank opens a launcher file: ranks on other nodes, with their own /tmp,
 * run the same cases from the same bytes, and a case file edited during the
 * run cannot make the ranks disagree with the launcher.
 *
 * Format: text headers, raw bodies (a case text may hold any byte):
 *   "collgrad-bundle 1\n"
 *   "cases N\n"  then N times  "case PATHLEN TEXTLEN\n" PATH TEXT "\n"
 *   "jobs M\n"   then M times  "job CASE EXPECT_ONLY RULES\n"
 * A reader trusts none of it: every length and index is checked against
 * what is left and what was declared. */
#ifndef CG_BUNDLE_H
#define CG_BUNDLE_H

#include <stdio.h>

#include "case_set.h"
#include "jobs.h"
#include "status.h"

/* Write the set's cases (each must carry its text: cg_load_case keeps it)
 * and jobs[0..njobs) to f. 0, or -1 with st (a write failed, or a case
 * without its text). */
int cg_bundle_write(FILE *f, const cg_case_set *set, const cg_job *jobs, int njobs, cg_status *st);

/* Parse buf[0..len) into a fresh set (each case under lim, NULL: the
 * defaults) and *jobs (malloc'd, *njobs of them; the caller frees both).
 * 0; -1 with st "bundle: expected ..., got ..." for a malformed bundle or a
 * case that does not parse, with nothing left allocated. */
int cg_bundle_parse(const char *buf, size_t len, const cg_limits *lim, cg_case_set *set,
                    cg_job **jobs, int *njobs, cg_status *st);

#endif
