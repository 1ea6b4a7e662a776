/* mpiexec_job.h — one `mpiexec -n W` job of workers, as the launcher
 * (launcher.c) starts, watches and ends it: the job is a process group of its
 * own, so a deadline kills mpiexec and every rank; the launcher killed (even
 * by SIGKILL) takes mpiexec with it (PR_SET_PDEATHSIG), and the ranks follow
 * their parents (worker_main.c): no orphan spins on. */
#ifndef CG_MPIEXEC_JOB_H
#define CG_MPIEXEC_JOB_H

#include <sys/types.h>

#include "cli.h"

/* Where a job's files are (the launcher's private directory, tmpdir.h). */
typedef struct cg_job_files {
    const char *bundle;  /* the cases and jobs to run (bundle.h), read by one rank */
    const char *board;   /* the status board (board.h) */
    const char *results; /* mpiexec's stdout: rank 0's results (worker.h) */
    const char *log;     /* mpiexec's stderr */
    const char *host;    /* where the launcher runs: ranks elsewhere skip its files */
} cg_job_files;

/* mpiexec -n world <this executable> --worker --bundle F --board B
 * --launch-host H and the options the ranks need (o's); the cases travel in
 * the bundle, never as arguments. The pid of mpiexec, or -1. */
pid_t cg_mpiexec_start(const cg_options *o, int world, const cg_job_files *f);

/* The mpiexec the jobs start: $CG_MPIEXEC, else the one configured. */
const char *cg_mpiexec_path(void);

/* A descriptor that becomes readable when process pid exits (Linux 5.3's
 * pidfd), or -1 where the kernel has none. */
int cg_mpiexec_exit_fd(pid_t pid);

/* One tick of watching a job: up to ms, over at once when its mpiexec exits
 * (fd from cg_mpiexec_exit_fd; -1: a plain sleep), so the last job's results
 * are read when they are complete; a signal ends it too. */
void cg_mpiexec_tick(int fd, long ms);

/* SIGTERM to the job's group, then SIGKILL after 2 s; reaps mpiexec. */
void cg_mpiexec_kill(pid_t pid);

#endif
