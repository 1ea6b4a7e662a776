/* backend_pytorch_launch.c — one launch of W PyTorch ranks
 * (backend_pytorch_internal.h): start them, read their lines as they come,
 * judge each job once every rank has reported it, and when they stop short
 * (the deadline, a rank that died, a fatal line) say where each rank was. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend_pytorch_internal.h"
#include "runner.h"
#include "stop.h"

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ---- where the ranks were ------------------------------------------------------- */

static void last_line(const char *path, char *buf, size_t len)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    char line[512];
    while (f && fgets(line, sizeof line, f))
        if (strspn(line, " \t\n") != strlen(line))
            snprintf(buf, len, "%s", line);
    if (f)
        fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
}

enum { NOT_ENDED = INT_MIN };

/* Seconds since the epoch with their fraction, as the ranks stamp their
 * status (time.time()): time(NULL)'s whole seconds made "for -0.7 s". */
static double wall_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* exits[r]: how rank r's process ended (the supervisor's exits file,
 * pytorch_env.c): its exit status, minus the signal that killed it, or
 * NOT_ENDED. */
static void read_exits(const cg_pt_launch *L, int *exits)
{
    char path[1024];
    for (int r = 0; r < L->world; r++)
        exits[r] = NOT_ENDED;
    cg_pt_rank_file(L, "exits", 0, path, sizeof path);
    FILE *f = fopen(path, "r");
    int r, st;
    while (f && fscanf(f, "%d %d", &r, &st) == 2)
        if (r >= 0 && r < L->world)
            exits[r] = st;
    if (f)
        fclose(f);
}

/* "exited with status 1" or "was killed by signal 9 (Killed)". */
static void how_it_ended(int st, char *buf, size_t len)
{
    if (st < 0)
        snprintf(buf, len, "was killed by signal %d (%s)", -st, strsignal(-st));
    else
        snprintf(buf, len, "exited with status %d", st);
}

/* The first rank that ended badly (a signal, a non-zero status) while
 * jobs remain, in a clause for why; false when none has. */
static bool a_rank_died(const cg_pt_launch *L, char *why, size_t whylen)
{
    int exits[CG_MAX_WORLD];
    read_exits(L, exits);
    for (int r = 0; r < L->world; r++)
        if (exits[r] != NOT_ENDED && exits[r] != 0) {
            char how[96];
            how_it_ended(exits[r], how, sizeof how);
            snprintf(why, whylen, "rank %d's process %s before its jobs were done", r, how);
            return true;
        }
    return false;
}

/* "rank 1 was at backward at x.case:7:1 (job 3) for 12.0 s, exited with status 1
 * (last output: ...)": one clause per rank that had not reported job `k`. */
static void describe(const cg_pt_launch *L, const cg_pt_job *job, int k, char *buf, size_t len)
{
    int exits[CG_MAX_WORLD];
    char path[1024], line[512];
    read_exits(L, exits);
    int r;
    size_t at = 0;
    buf[0] = '\0';
    for (r = 0; r < L->world && at < len; r++) {
        if (job->ranks[r].outcome != CG_PT_PENDING)
            continue;
        int sjob = -2;
        double since = 0;
        char what[300] = "";
        cg_pt_rank_file(L, "status", r, path, sizeof path);
        FILE *s = fopen(path, "r");
        if (s && fgets(line, sizeof line, s) && sscanf(line, "%d\t%lf\t%299[^\n]", &sjob, &since, what) == 3) {
            at += (size_t)snprintf(buf + at, len - at, "%srank %d was %s%s (job %d) for %.1f s", at ? "; " : "", r,
                                   sjob == k ? "at " : "", what, sjob, wall_clock() - since);
        } else {
            at += (size_t)snprintf(buf + at, len - at, "%srank %d never reported", at ? "; " : "", r);
        }
        if (s)
            fclose(s);
        if (exits[r] != NOT_ENDED && at < len) {
            char how[96];
            how_it_ended(exits[r], how, sizeof how);
            cg_pt_rank_file(L, "log", r, path, sizeof path);
            last_line(path, line, sizeof line);
            at += (size_t)snprintf(buf + at, len - at, ", %s%s%s", how,
                                   line[0] ? " (last output: " : "", line[0] ? line : "");
            if (line[0] && at < len)
                at += (size_t)snprintf(buf + at, len - at, ")");
        }
    }
}

static void kill_group(pid_t pid)
{
    kill(-pid, SIGTERM);
    for (int i = 0; i < 40 && waitpid(pid, NULL, WNOHANG) == 0; i++)
        sleep_ms(50);
    kill(-pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

static void remove_launch_files(const cg_pt_launch *L)
{
    static const char *const kinds[] = {"results", "status", "log"};
    char path[1024];
    for (int r = 0; r < L->world; r++)
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
            cg_pt_rank_file(L, kinds[k], r, path, sizeof path);
            unlink(path);
            snprintf(path + strlen(path), sizeof path - strlen(path), ".tmp");
            unlink(path);
        }
    cg_pt_rank_file(L, "exits", 0, path, sizeof path);
    unlink(path);
    unlink(L->store);
    snprintf(path, sizeof path, "%s.rpc", L->store); /* pytorch:rpc's rendezvous (api_rpc.py) */
    unlink(path);
}

/* ---- one world size ---------------------------------------------------------------- */


/* One launch of W ranks from jobs[*next]; judges what they report and
 * advances *next. why: what went wrong when it did not finish them all. */
cg_pt_launch_end cg_pt_follow_launch(cg_pt_run *R, const cg_pt_launch *L, cg_pt_job *jobs, int n, int *next, char *why,
                                size_t whylen)
{
    int W = L->world;
    cg_pt_reader rd[CG_MAX_WORLD];
    cg_pt_hello hello[CG_MAX_WORLD];
    memset(hello, 0, sizeof hello);
    for (int r = 0; r < W; r++) {
        cg_pt_rank_file(L, "results", r, rd[r].path, sizeof rd[r].path);
        rd[r].offset = 0;
    }
    cg_pt_fatal fatal = {NULL, false};
    cg_status st = CG_STATUS_OK;
    pid_t pid = cg_pt_spawn(L);
    if (pid < 0) {
        snprintf(why, whylen, "cannot start the ranks: %s", strerror(errno));
        return CG_PT_LAUNCH_FATAL;
    }
    double began = cg_now(), last = began;
    bool all_hello = false, exited = false, bad = false;
    cg_pt_launch_end end = CG_PT_LAUNCH_DONE;
    while (!bad && !fatal.why && *next < n) {
        sleep_ms(20);
        exited = exited || waitpid(pid, NULL, WNOHANG) == pid;
        for (int r = 0; r < W && !bad; r++)
            bad = cg_pt_read_rank(&rd[r], r, jobs, n, &hello[r], &fatal, &st) < 0;
        if (!all_hello) {
            all_hello = true;
            for (int r = 0; r < W; r++)
                all_hello = all_hello && hello[r].seen;
            if (all_hello) {
                cg_pt_announce(R, &hello[0], W);
                last = cg_now();
            }
        }
        for (; *next < n && jobs[*next].reported == W; ++*next) {
            cg_pt_judge_job(R, &jobs[*next], W);
            last = cg_now();
        }
        if (bad || fatal.why || *next >= n)
            break;
        double now = cg_now();
        if (cg_stop_signal()) {
            snprintf(why, whylen, "interrupted by signal %d", cg_stop_signal());
            break;
        }
        if (!all_hello && now - began > L->startup_timeout) {
            snprintf(why, whylen, "the ranks did not all start within %g s", L->startup_timeout);
            break;
        }
        if (all_hello && now - last > R->o->timeout) {
            snprintf(why, whylen, "killed after the %g s deadline", R->o->timeout);
            break;
        }
        if (!exited && a_rank_died(L, why, whylen)) { /* its last lines first: a fatal one says more */
            for (int r = 0; r < W && !bad; r++)
                bad = cg_pt_read_rank(&rd[r], r, jobs, n, &hello[r], &fatal, &st) < 0;
            break;
        }
        if (exited) { /* every rank is gone: read what they left, once more */
            for (int r = 0; r < W && !bad; r++)
                bad = cg_pt_read_rank(&rd[r], r, jobs, n, &hello[r], &fatal, &st) < 0;
            for (; *next < n && jobs[*next].reported == W; ++*next)
                cg_pt_judge_job(R, &jobs[*next], W);
            if (*next < n)
                snprintf(why, whylen, "the ranks ended early");
            break;
        }
    }
    if (!exited)
        kill_group(pid);
    if (*next < n) {
        char ranks[2048];
        describe(L, &jobs[*next], *next, ranks, sizeof ranks);
        bool started = false;
        for (int r = 0; r < W; r++)
            started |= hello[r].seen;
        if (fatal.why || !started) {
            char head[512]; /* why itself may be the head: snprintf may not read what it writes */
            snprintf(head, sizeof head, "%s", fatal.why ? fatal.why : (why[0] ? why : "the ranks did not start"));
            snprintf(why, whylen, "%s", head);
            if (!fatal.why && ranks[0])
                snprintf(why + strlen(why), whylen - strlen(why), ": %s", ranks);
            end = fatal.why && fatal.usage ? CG_PT_LAUNCH_REFUSED : CG_PT_LAUNCH_FATAL;
        } else {
            char head[512];
            snprintf(head, sizeof head, "%s", bad ? st.msg : why);
            snprintf(why, whylen, "%s: %s", head, ranks[0] ? ranks : "no rank said where it was");
            end = CG_PT_LAUNCH_LOST_JOB;
        }
    }
    free(fatal.why);
    for (int r = 0; r < W; r++)
        cg_pt_hello_free(&hello[r]);
    remove_launch_files(L);
    return end;
}
