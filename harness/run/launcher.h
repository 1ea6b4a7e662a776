/* launcher.h — the distributed run from outside MPI (launcher.c). */
#ifndef CG_LAUNCHER_H
#define CG_LAUNCHER_H

#include "case_set.h"
#include "cli.h"
#include "result.h"

/* Run every job through `mpiexec -n W` per world size, printing a progress
 * line per job into rep. Returns the exit status (cli.h). */
int cg_run_launcher(const cg_options *o, const cg_case_set *set, cg_report *rep);

#endif
