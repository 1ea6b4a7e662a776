/* launch_env.c — see launch_env.h. */
#include "launch_env.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

static bool set(const char *name) { return getenv(name) != NULL; }

/* A variable whose name starts with prefix (PMIX_SERVER_URI2, ...). */
static bool set_prefix(const char *prefix)
{
    size_t n = strlen(prefix);
    for (char **e = environ; e && *e; e++)
        if (strncmp(*e, prefix, n) == 0)
            return true;
    return false;
}

static const char *const rank_vars[] = {"PMI_RANK", "PMI_SIZE", "PMIX_RANK", "OMPI_COMM_WORLD_RANK",
                                        "OMPI_COMM_WORLD_SIZE", "MPI_LOCALRANKID"};

cg_launch_env cg_launch_env_detect(char *why, size_t len)
{
    if (set("PMI_FD") || set("PMI_PORT") || set_prefix("PMIX_SERVER_URI") || set("PMIX_NAMESPACE") ||
        set("OMPI_MCA_orte_hnp_uri") || set("OMPI_MCA_ess_base_jobid"))
        return CG_LAUNCH_RANK;
    const char *tasks = getenv("SLURM_STEP_NUM_TASKS");
    if (set("SLURM_STEP_ID") && set("SLURM_PROCID") && tasks && atoi(tasks) > 1) {
        snprintf(why, len, "started as one of %s tasks of srun without an MPI plugin: the tasks cannot "
                 "form one MPI job, and each would start its own mpiexec; run `srun --mpi=pmi2 ...` "
                 "(or pmix), or `srun -n 1 collgrad-check` to let it launch mpiexec", tasks);
        return CG_LAUNCH_SRUN_NO_MPI;
    }
    for (size_t i = 0; i < sizeof rank_vars / sizeof rank_vars[0]; i++)
        if (set(rank_vars[i])) {
            snprintf(why, len, "%s is set but no MPI launcher is connected (no PMI_FD, PMI_PORT, "
                     "PMIX_SERVER_URI*): ignoring it and launching mpiexec", rank_vars[i]);
            return CG_LAUNCH_STRAY;
        }
    return CG_LAUNCH_NONE;
}
