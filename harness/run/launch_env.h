/* launch_env.h — was this process started by an MPI launcher?
 *
 * A variable such as PMI_RANK can be inherited from anywhere (a CI job that
 * exported it, a shell left over from an MPI session), and taking it for a
 * launcher made the tool run as a lone rank of a world of one: a silent
 * partial pass. So a rank is recognised by the connection its launcher
 * gives it, not by a rank number:
 *   MPICH Hydra, Slurm PMI-1/2   PMI_FD or PMI_PORT (with PMI_RANK)
 *   PMIx (Open MPI 5, Slurm)     PMIX_SERVER_URI*, PMIX_NAMESPACE
 *   Open MPI 4 (ORTE)            OMPI_MCA_orte_hnp_uri, OMPI_MCA_ess_base_jobid
 * Slurm's srun without an MPI plugin gives none of these to its N tasks; each
 * would start an mpiexec of its own and hang, so that is refused. */
#ifndef CG_LAUNCH_ENV_H
#define CG_LAUNCH_ENV_H

#include <stddef.h>

typedef enum {
    CG_LAUNCH_NONE,        /* no launcher: this process launches mpiexec */
    CG_LAUNCH_RANK,        /* one rank of a launcher's job */
    CG_LAUNCH_STRAY,       /* rank variables with no launcher behind them: ignored */
    CG_LAUNCH_SRUN_NO_MPI, /* srun -n N without --mpi: refused */
} cg_launch_env;

/* Classify the environment; for STRAY and SRUN_NO_MPI, why says what was
 * found and what to do. */
cg_launch_env cg_launch_env_detect(char *why, size_t len);

#endif
