/* pytorch_env.c — where the PyTorch ranks come from: the interpreter, the
 * collgrad_torch package, the network they may use, and the processes
 * themselves (backend_pytorch_internal.h).
 *
 * Isolation: the ranks use a FileStore (nothing listens for the rendezvous)
 * and GLOO_SOCKET_IFNAME=lo, so gloo binds to the loopback interface. As
 * root the tool does more: the supervisor of the ranks enters a private
 * network namespace (unshare(CLONE_NEWNET), then brings its `lo` up), where
 * no interface but loopback exists at all, so no backend, however it binds,
 * is reachable from outside. COLLGRAD_NETNS=0 turns that off. */
#define _GNU_SOURCE /* unshare(2), CLONE_NEWNET; struct ifreq */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend_pytorch_internal.h"

/* ---- the interpreter -------------------------------------------------------- */

/* Does `python` find the package `module` (torch, jax)? Asks importlib (no
 * import, which takes seconds); a missing interpreter answers no. */
static bool has_module(const char *python, const char *module)
{
    char probe[160];
    snprintf(probe, sizeof probe, "import importlib.util, sys; sys.exit(importlib.util.find_spec('%s') is None)",
             module);
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDWR);
        if (devnull >= 0) {
            dup2(devnull, STDIN_FILENO);
            dup2(devnull, STDOUT_FILENO);
            dup2(devnull, STDERR_FILENO);
        }
        execlp(python, python, "-c", probe, (char *)NULL);
        _exit(127);
    }
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return false;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int cg_pt_find_python(const char *given, bool jax, char *path, size_t len, char *why, size_t whylen)
{
    const char *module = jax ? "jax" : "torch", *var = jax ? "COLLGRAD_JAX_PYTHON" : "COLLGRAD_PYTHON";
    const char *usual = jax ? "/opt/venv-jax/bin/python" : "/usr/bin/python3";
    const char *env = getenv(var);
    char reason[160] = "--python";
    const char *pick = given;
    if (!pick && env && *env) {
        pick = env;
        snprintf(reason, sizeof reason, "$%s", var);
    }
    if (!pick && has_module(usual, module)) {
        pick = usual;
        snprintf(reason, sizeof reason, "%s has %s", usual, module);
    }
    if (!pick) {
        pick = "python3";
        snprintf(reason, sizeof reason, "python3 on PATH (%s has no %s)", usual, module);
    }
    snprintf(path, len, "%s", pick);
    if (!has_module(pick, module)) {
        if (jax)
            snprintf(why, whylen, "%s (chosen by %s) cannot import jax: install it (scripts/jax-venv.sh makes "
                     "/opt/venv-jax), or choose an interpreter that has it with --python or $COLLGRAD_JAX_PYTHON",
                     pick, reason);
        else
            snprintf(why, whylen, "%s (chosen by %s) cannot import torch: install it (Debian: apt-get install "
                     "python3-torch), or choose an interpreter that has it with --python or $COLLGRAD_PYTHON",
                     pick, reason);
        return -1;
    }
    snprintf(why, whylen, "%s", reason);
    return 0;
}

/* ---- the package ------------------------------------------------------------- */

static bool is_package_dir(const char *dir)
{
    char init[PATH_MAX + 32];
    snprintf(init, sizeof init, "%s/collgrad_torch/runner/rank.py", dir);
    return access(init, R_OK) == 0;
}

int cg_pt_package_dir(char *buf, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            snprintf(buf, len, "%s/../share/collgrad-check/python", self);
            if (is_package_dir(buf))
                return 0;
        }
    }
    snprintf(buf, len, "%s", CG_PYTHON_DIR);
    return is_package_dir(buf) ? 0 : -1;
}

/* ---- isolation ---------------------------------------------------------------- */

/* Bring the loopback interface of the current network namespace up. */
static int loopback_up(void)
{
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    if (s < 0)
        return -1;
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
    int rc = ioctl(s, SIOCGIFFLAGS, &ifr);
    if (rc == 0) {
        ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
        rc = ioctl(s, SIOCSIFFLAGS, &ifr);
    }
    close(s);
    return rc;
}

static bool netns_wanted(void)
{
    const char *v = getenv("COLLGRAD_NETNS");
    return geteuid() == 0 && !(v && strcmp(v, "0") == 0);
}

bool cg_pt_can_isolate(char *desc, size_t len)
{
    bool ok = false;
    if (netns_wanted()) { /* try it in a child: this process keeps its own namespace */
        pid_t pid = fork();
        if (pid == 0)
            _exit(unshare(CLONE_NEWNET) == 0 && loopback_up() == 0 ? 0 : 1);
        int status;
        ok = pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    if (ok)
        snprintf(desc, len, "a private network namespace with only loopback (root: unshare(CLONE_NEWNET))");
    else
        snprintf(desc, len, "127.0.0.1 only: FileStore rendezvous, GLOO_SOCKET_IFNAME=lo%s",
                 geteuid() == 0 ? " (a private network namespace was refused)" : "");
    return ok;
}

/* ---- starting the ranks ------------------------------------------------------------ */

void cg_pt_rank_file(const cg_pt_launch *L, const char *kind, int rank, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s-w%d-l%d-r%d", L->dir, kind, L->world, L->launch, rank);
}

/* A port nothing on 127.0.0.1 uses right now, for MASTER_PORT (the ranks
 * rendezvous through the FileStore; a backend may still want the variable). */
static int free_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t n = sizeof a;
    int port = 29500;
    if (s >= 0 && bind(s, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(s, (struct sockaddr *)&a, &n) == 0)
        port = ntohs(a.sin_port);
    if (s >= 0)
        close(s);
    return port;
}

static void set_env(const char *name, const char *value) { setenv(name, value, 1); }

/* In a child about to exec: stdout and stderr into the log file (what the
 * process prints before it dies is the error's end), stdin from /dev/null. */
static void output_to(const char *log)
{
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600), devnull = open("/dev/null", O_RDONLY);
    if (fd >= 0) {
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
    }
    if (devnull >= 0)
        dup2(devnull, STDIN_FILENO);
}

/* In the child that becomes the ranks' zygote (python/collgrad_torch/runner/zygote.py):
 * the launch's environment, its output into rank 0's log, exec. It imports
 * torch once and forks the W ranks, each `collgrad_torch.runner.rank` with the
 * arguments after "--" and its own files; it appends each rank's end to the
 * exits file. Never returns. */
static void exec_zygote(const cg_pt_launch *L, int port)
{
    char num[32], path[1024], files[1024], exits[1024], log[1024], first[32], ct[32], st[32];
    snprintf(num, sizeof num, "%d", L->world);
    set_env("WORLD_SIZE", num);
    set_env("LOCAL_WORLD_SIZE", num);
    set_env("MASTER_ADDR", "127.0.0.1");
    snprintf(num, sizeof num, "%d", port);
    set_env("MASTER_PORT", num);
    setenv("GLOO_SOCKET_IFNAME", "lo", 0);
    setenv("OMP_NUM_THREADS", "1", 0);    /* W ranks share the cores */
    set_env("PYTHONDONTWRITEBYTECODE", "1"); /* nothing written into the package's tree */
    const char *old = getenv("PYTHONPATH");
    snprintf(path, sizeof path, "%s%s%s", L->package_dir, old && *old ? ":" : "", old && *old ? old : "");
    set_env("PYTHONPATH", path);
    snprintf(files, sizeof files, "%s/{kind}-w%d-l%d-r", L->dir, L->world, L->launch); /* cg_pt_rank_file's names */
    cg_pt_rank_file(L, "exits", 0, exits, sizeof exits);
    cg_pt_rank_file(L, "log", 0, log, sizeof log);
    snprintf(num, sizeof num, "%d", L->world);
    snprintf(first, sizeof first, "%d", L->first_job);
    snprintf(ct, sizeof ct, "%g", L->collective_timeout);
    snprintf(st, sizeof st, "%g", L->startup_timeout);
    output_to(log);
    execlp(L->python, L->python, "-m", "collgrad_torch.runner.zygote", "--world", num, "--files", files, "--exits",
           exits, "--", "--ir", L->ir, "--api", L->api, "--backend", L->torch_backend, "--store", L->store,
           "--first-job", first, "--collective-timeout", ct, "--startup-timeout", st, (char *)NULL);
    fprintf(stderr, "collgrad-check: cannot run %s: %s\n", L->python, strerror(errno));
    _exit(127);
}

/* In the child that becomes the JAX process of all W ranks: W host devices,
 * CPU, float64, the rank files as prefixes. Never returns. */
static void exec_jax(const cg_pt_launch *L)
{
    char flags[2048], pp[1024], results[1024], status[1024], log[1024], first[32], world[32];
    const char *old = getenv("XLA_FLAGS"), *path = getenv("PYTHONPATH");
    snprintf(flags, sizeof flags, "%s%s--xla_force_host_platform_device_count=%d", old && *old ? old : "",
             old && *old ? " " : "", L->world);
    set_env("XLA_FLAGS", flags);
    set_env("JAX_PLATFORMS", "cpu");
    set_env("JAX_ENABLE_X64", "1");
    set_env("PYTHONDONTWRITEBYTECODE", "1");
    snprintf(pp, sizeof pp, "%s%s%s", L->package_dir, path && *path ? ":" : "", path && *path ? path : "");
    set_env("PYTHONPATH", pp);
    snprintf(results, sizeof results, "%s/results-w%d-l%d-r", L->dir, L->world, L->launch);
    snprintf(status, sizeof status, "%s/status-w%d-l%d-r", L->dir, L->world, L->launch);
    cg_pt_rank_file(L, "log", 0, log, sizeof log);
    snprintf(first, sizeof first, "%d", L->first_job);
    snprintf(world, sizeof world, "%d", L->world);
    output_to(log);
    execlp(L->python, L->python, "-m", "collgrad_jax.runner", "--ir", L->ir, "--api", L->api, "--world", world,
           "--results-prefix", results, "--status-prefix", status, "--first-job", first, (char *)NULL);
    fprintf(stderr, "collgrad-check: cannot run %s: %s\n", L->python, strerror(errno));
    _exit(127);
}

/* How many ranks the exits file names, each marked in seen[]. */
static int exits_named(const char *path, int world, bool *seen)
{
    int n = 0, r, st;
    FILE *f = fopen(path, "r");
    while (f && fscanf(f, "%d %d", &r, &st) == 2)
        if (r >= 0 && r < world && !seen[r]) {
            seen[r] = true;
            n++;
        }
    if (f)
        fclose(f);
    return n;
}

/* The supervisor: isolates itself, starts the ranks' process (the zygote,
 * which forks the W ranks and appends a "RANK STATUS" line to the exits file
 * as each one ends: STATUS its exit status, or minus the signal that killed
 * it; or under jax the one process of every rank) and waits for it, so the
 * parent can tell a rank that died from one that waits. Where that process
 * ended without naming every rank (it could not start, or died), the ranks it
 * did not name ended as it did. Never returns. */
static void supervise(const cg_pt_launch *L)
{
    setpgid(0, 0); /* one group: the deadline kills the supervisor and every rank */
    if (L->isolate && (unshare(CLONE_NEWNET) != 0 || loopback_up() != 0)) {
        fprintf(stderr, "collgrad-check: cannot enter a private network namespace: %s\n", strerror(errno));
        _exit(CG_EXIT_INFRA);
    }
    int port = free_port();
    char exits[1024];
    cg_pt_rank_file(L, "exits", 0, exits, sizeof exits);
    FILE *f = fopen(exits, "w"); /* there from the start: the parent reads it while the ranks run */
    if (f)
        fclose(f);
    pid_t pid = fork();
    if (pid == 0 && L->jax)
        exec_jax(L);
    if (pid == 0)
        exec_zygote(L, port);
    int status = 0, code = 127;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (pid > 0)
        code = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    bool seen[CG_MAX_WORLD] = {false};
    if (L->jax || exits_named(exits, L->world, seen) < L->world) {
        f = fopen(exits, "a");
        for (int r = 0; f && r < L->world; r++)
            if (!seen[r])
                fprintf(f, "%d %d\n", r, L->jax || code != 0 ? code : 127);
        if (f)
            fclose(f);
    }
    _exit(0);
}

pid_t cg_pt_spawn(const cg_pt_launch *L)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        supervise(L);
    }
    if (pid > 0)
        setpgid(pid, pid);
    return pid;
}
