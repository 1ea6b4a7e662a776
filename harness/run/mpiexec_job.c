/* mpiexec_job.c — one `mpiexec -n W` job of workers (mpiexec_job.h). */
#define _DEFAULT_SOURCE /* syscall (pidfd_open) */
#include "mpiexec_job.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

const char *cg_mpiexec_path(void)
{
    const char *env = getenv("CG_MPIEXEC");
    return env && *env ? env : CG_MPIEXEC;
}

/* argv for: mpiexec -n W <self> --worker --bundle F --board B --launch-host H <options>;
 * mpiexec's stdout (rank 0's results, worker.h) into f->results, its stderr into f->log */
pid_t cg_mpiexec_start(const cg_options *o, int world, const cg_job_files *f)
{
    char self[PATH_MAX], wbuf[16], tbuf[32], lbuf[3][32];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return -1;
    self[n] = '\0';
    snprintf(wbuf, sizeof wbuf, "%d", world);
    snprintf(tbuf, sizeof tbuf, "%g", o->timeout);
    const char *argv[64];
    int a = 0;
    const char *fixed[] = {cg_mpiexec_path(),
                           "-n",
                           wbuf,
                           self,
                           "--worker",
                           "--bundle",
                           f->bundle,
                           "--board",
                           f->board,
                           "--launch-host",
                           f->host,
                           "--transport",
                           o->transport,
                           "--timeout",
                           tbuf};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        argv[a++] = fixed[i];
    if (o->device) {
        argv[a++] = "--device";
        argv[a++] = o->device;
    }
    if (o->no_fd)
        argv[a++] = "--no-fd";
    if (o->no_diagnosis)
        argv[a++] = "--no-diagnosis";
    if (o->check_sync)
        argv[a++] = "--check-sync";
    if (o->inject) {
        argv[a++] = "--inject";
        argv[a++] = o->inject;
    }
    const cg_limits *lim = &o->limits; /* the ranks load and run under the same limits */
    const char *lim_flag[3] = {"--max-case-bytes", "--max-elements", "--max-case-elements"};
    unsigned long long lim_val[3] = {lim->case_bytes, (unsigned long long)lim->value_elements,
                                     (unsigned long long)lim->case_elements};
    for (int k = 0; k < 3; k++)
        if (lim_val[k]) {
            snprintf(lbuf[k], sizeof lbuf[k], "%llu", lim_val[k]);
            argv[a++] = lim_flag[k];
            argv[a++] = lbuf[k];
        }
    if (o->world) {
        argv[a++] = "--world";
        argv[a++] = wbuf;
    }
    argv[a] = NULL; /* the cases travel in the bundle, never as arguments (write_bundle) */
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0); /* one group: a timeout kills mpiexec and every rank */
        /* the launcher killed (even by SIGKILL) takes mpiexec with it, and the
         * ranks follow their parents (worker_main.c): no orphan spins on */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
            _exit(127);
        int results = open(f->results, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int log = open(f->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int devnull = open("/dev/null", O_RDONLY);
        if (results < 0 || log < 0 || devnull < 0 || dup2(results, STDOUT_FILENO) < 0 ||
            dup2(log, STDERR_FILENO) < 0 || dup2(devnull, STDIN_FILENO) < 0)
            _exit(127);
        execv(argv[0], (char *const *)argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    if (pid > 0)
        setpgid(pid, pid);
    return pid;
}

/* A descriptor that becomes readable when process pid exits (Linux 5.3's
 * pidfd), or -1 where the kernel has none. */
int cg_mpiexec_exit_fd(pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    return -1;
#endif
}

/* One tick of watching a job: up to ms, over at once when its mpiexec
 * exits (fd from cg_mpiexec_exit_fd), so the last job's results are read when they
 * are complete, not up to a tick later; a signal ends it too. */
void cg_mpiexec_tick(int fd, long ms)
{
    struct pollfd p = {fd, POLLIN, 0};
    if (fd < 0)
        sleep_ms(ms);
    else
        (void)poll(&p, 1, (int)ms); /* EINTR is a signal, which the caller reads */
}

void cg_mpiexec_kill(pid_t pid)
{
    kill(-pid, SIGTERM);
    for (int i = 0; i < 40 && waitpid(pid, NULL, WNOHANG) == 0; i++)
        sleep_ms(50);
    kill(-pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

