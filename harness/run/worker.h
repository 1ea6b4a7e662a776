/* worker.h — the processes of a distributed run (one per rank).
 *
 * Two ways in: the launcher starts `mpiexec -n W collgrad-check --worker
 * --bundle F --board B --launch-host H ...` (one rank on host H reads the
 * bundle F and broadcasts it, bundle_share.h; rank 0 writes one line per
 * finished job to its stdout, which mpiexec carries back to the launcher);
 * or a user starts `mpiexec -n N collgrad-check ...`
 * (or srun) directly, and rank 0 prints and writes the reports itself.
 * The run under test keeps its tensors on `--device` (device.h). */
#ifndef CG_WORKER_H
#define CG_WORKER_H

#include <stdbool.h>

#include "case_set.h"
#include "cli.h"
#include "device.h"
#include "jobs.h"
#include "observed.h"
#include "result.h"
#include "rules.h"
#include "transport.h"

/* How a launcher's rank 0 prefixes each finished job's JSON line on the
 * results stream (its stdout; everything else a rank prints goes to stderr). */
#define CG_RESULT_PREFIX "collgrad-result "

/* Run one job on this rank over tp (fd: check the oracle by finite
 * differences); a mismatch is diagnosed (unless !diagnose) by rank 0 with
 * the emulations re-run on threads (transport_threads.h). On rank 0, res
 * receives the checks and *error_class is 2 (bad case) or 3
 * (infrastructure) for an erroring job. Returns 0, or -1 on a local failure
 * (out of memory, MPI). */
int cg_worker_job(const cg_case *cs, const cg_job *job, cg_tp *tp, cg_device dev,
                  bool fd, bool diagnose, cg_case_result *res, int *error_class);

/* Entry point inside MPI (either way in). Returns the process exit status. */
int cg_worker_main(const cg_options *o, const cg_case_set *set);

/* True when this process was started by an MPI launcher (mpiexec, srun). */
bool cg_launched_by_mpi(void);

#endif
