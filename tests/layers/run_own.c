/* Compiles in the run layer: its own headers and those below. */
#include "launcher.h"
#include "judge.h"
#include "threads_run.h"

int cg_probe_run_own(void);
int cg_probe_run_own(void) { return (int)sizeof(cg_options) + (int)sizeof(cg_judge_job); }
