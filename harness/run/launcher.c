/* launcher.c — outside MPI, start one `mpiexec -n W` job per world size (all
 * of that world's cases in one job: MPICH start-up and busy-polling make a
 * job per case far too slow), follow its progress through the results file,
 * and enforce the per-job deadline.
 *
 * When a job hangs or a rank dies, the status board says who was where; the
 * launcher records that as the failing job's error, and starts a new job for
 * the jobs that had not run yet, so one bad case costs one case. */
#include "launcher.h"
#include "tmpdir.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "board.h"
#include "bundle.h"
#include "bundle_share.h"
#include "jobs.h"
#include "mpiexec_job.h"
#include "report_json.h"
#include "runner.h"
#include "stop.h"
#include "terminal.h"
#include "worker.h"

typedef struct launch {
    const cg_options *o;
    const cg_case_set *set;
    cg_report *rep;
    char dir[256];           /* private temporary directory (tmpdir.h) */
    char bundle[280], board[280], results[280], log[280];
    char host[256]; /* where this launcher runs: ranks elsewhere skip its files */
    int index, total, worst;
} launch;

enum { STARTUP_LIMIT = 60 }; /* seconds mpiexec may take to start every rank */

static bool all_started(const cg_board *b)
{
    for (int r = 0; r < b->world; r++)
        if (b->slots[r].state == CG_RANK_IDLE)
            return false;
    return true;
}

/* The cases and the jobs still to run at this world, in one file that one
 * rank reads and broadcasts (bundle.h): the ranks run exactly the bytes the
 * launcher parsed, in its order, and no rank elsewhere needs this directory. */
static int write_bundle(const launch *L, const cg_job *jobs, int n, cg_status *st)
{
    FILE *f = fopen(L->bundle, "w");
    if (!f)
        return cg_error_infra(st, "cannot write %s: %s", L->bundle, strerror(errno));
    int rc = cg_bundle_write(f, L->set, jobs, n, st);
    if (fclose(f) != 0 && rc == 0)
        rc = cg_error_infra(st, "cannot write %s: %s", L->bundle, strerror(errno));
    return rc;
}

/* Read complete new lines of the results file from *offset; each that
 * carries the results prefix (worker.h) is a job. */
static int take_results(launch *L, long *offset, int *done)
{
    FILE *f = fopen(L->results, "r");
    if (!f)
        return 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int rc = 0;
    fseek(f, *offset, SEEK_SET);
    while ((len = getline(&line, &cap, f)) > 0 && line[len - 1] == '\n') {
        *offset += len;
        if (strncmp(line, CG_RESULT_PREFIX, strlen(CG_RESULT_PREFIX)) != 0)
            continue;
        if (cg_case_from_json_line(L->rep, line + strlen(CG_RESULT_PREFIX)) != 0) {
            rc = -1;
            break;
        }
        cg_case_result *c = &L->rep->cases[L->rep->ncases - 1];
        ++L->index;
        if (!L->o->quiet)
            cg_term_case(stdout, c, L->index, L->total, L->o->verbose);
        (*done)++;
    }
    free(line);
    fclose(f);
    return rc;
}

static void last_log_line(const launch *L, char *buf, size_t len)
{
    buf[0] = '\0';
    FILE *f = fopen(L->log, "r");
    if (!f)
        return;
    char line[512];
    bool ours = false; /* our own message beats MPI's "Abort(3) ..." that follows it */
    while (fgets(line, sizeof line, f)) {
        bool mine = strncmp(line, "collgrad-check:", 15) == 0;
        if (line[0] != '\n' && strspn(line, " =\n") != strlen(line) && (mine || !ours)) {
            snprintf(buf, len, "%s", line);
            ours |= mine;
        }
    }
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
}

/* The job at jobs[failed] did not finish: record why, as an error. */
static void record_lost_job(launch *L, const cg_job *job, int world, const char *why, double seconds)
{
    const cg_case *cs = L->set->cases[job->case_index];
    cg_case_result *c = cg_report_add_case(L->rep, cs->name, cs->file, cs->source, world);
    if (!c)
        return;
    cg_case_set_rules(c, job->rules);
    c->status = CG_ERROR;
    c->duration_s = seconds;
    c->error_class = CG_EXIT_INFRA;
    c->message = strdup(why);
    ++L->index;
    if (!L->o->quiet)
        cg_term_case(stdout, c, L->index, L->total, L->o->verbose);
}

static void record_unrun_job(launch *L, const cg_job *job, int world)
{
    const cg_case *cs = L->set->cases[job->case_index];
    cg_case_result *c = cg_report_add_case(L->rep, cs->name, cs->file, cs->source, world);
    if (!c)
        return;
    cg_case_set_rules(c, job->rules);
    c->status = CG_SKIP;
    char msg[64];
    snprintf(msg, sizeof msg, "not run: interrupted by signal %d", cg_stop_signal());
    c->message = strdup(msg);
    ++L->index;
    if (!L->o->quiet)
        cg_term_case(stdout, c, L->index, L->total, L->o->verbose);
}

/* Run jobs[0..n) at world w in as many mpiexec launches as failures need. */
static int run_world(launch *L, const cg_job *jobs, int n, int w)
{
    int start = 0;
    while (start < n && !cg_stop_signal()) {
        char why[2048], log_line[512];
        cg_status st = CG_STATUS_OK;
        long offset = 0;
        int done = 0, status = 0;
        cg_board board = {0};
        if (write_bundle(L, jobs + start, n - start, &st) != 0 ||
            cg_board_create(&board, L->board, w, &st) != 0) {
            fprintf(stderr, "collgrad-check: %s\n", st.msg);
            return -1;
        }
        unlink(L->results);
        cg_job_files files = {L->bundle, L->board, L->results, L->log, L->host};
        pid_t pid = cg_mpiexec_start(L->o, w, &files);
        if (pid < 0) {
            cg_board_close(&board);
            return -1;
        }
        double began = cg_now(), last = began;
        bool exited = false;
        int job_fd = cg_mpiexec_exit_fd(pid);
        while (!exited && !cg_stop_signal()) {
            cg_mpiexec_tick(job_fd, 20);
            exited = waitpid(pid, &status, WNOHANG) == pid;
            int before = done;
            if (take_results(L, &offset, &done) != 0)
                break;
            if (done > before)
                last = cg_now();
            /* the deadline clock starts once every rank is up: mpiexec
             * start-up is not the case's time (but is bounded too) */
            if (!all_started(&board) && cg_now() - began < STARTUP_LIMIT)
                last = cg_now();
            if (!exited && cg_now() - last > L->o->timeout)
                break;
        }
        if (!exited) {
            cg_board_describe(&board, why, sizeof why);
            char msg[2048];
            if (cg_stop_signal())
                snprintf(msg, sizeof msg, "interrupted by signal %d while running: %s", cg_stop_signal(),
                         why[0] ? why : "no rank reported");
            else
                snprintf(msg, sizeof msg, "killed after the %g s deadline: %s", L->o->timeout,
                         why[0] ? why : "no rank reported");
            cg_mpiexec_kill(pid);
            take_results(L, &offset, &done);
            snprintf(why, sizeof why, "%s", msg);
        } else {
            take_results(L, &offset, &done);
            char ranks[1400];
            cg_board_describe(&board, ranks, sizeof ranks);
            last_log_line(L, log_line, sizeof log_line);
            snprintf(why, sizeof why, "the job ended early (mpiexec exit status %d): %s%s%s",
                     WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
                     ranks[0] ? ranks : "no rank reported", log_line[0] ? "; last output: " : "", log_line);
        }
        if (job_fd >= 0)
            close(job_fd);
        for (int r = 0; r < w; r++) /* hang and exit faults that fired (injection.h) */
            L->rep->injected += board.slots[r].injected != 0;
        cg_board_close(&board);
        start += done;
        if (start < n) {
            record_lost_job(L, &jobs[start], w, why, cg_now() - last);
            start++;
        }
    }
    for (; start < n; start++) /* interrupted: say what did not run */
        record_unrun_job(L, &jobs[start], w);
    return 0;
}

static int cleanup_dir(launch *L)
{
    const char *files[] = {"bundle", "board", "results", "log"};
    return cg_tmpdir_remove(L->dir, files, (int)(sizeof files / sizeof files[0]));
}

int cg_run_launcher(const cg_options *o, const cg_case_set *set, cg_report *rep)
{
    launch L = {.o = o, .set = set, .rep = rep};
    cg_status st = CG_STATUS_OK;
    cg_tmpdir_reap_stale(); /* what a launcher killed by SIGKILL left behind */
    if (cg_tmpdir_create(L.dir, sizeof L.dir, &st) != 0) {
        fprintf(stderr, "collgrad-check: %s\n", st.msg);
        return CG_EXIT_INFRA;
    }
    snprintf(L.bundle, sizeof L.bundle, "%s/bundle", L.dir);
    snprintf(L.board, sizeof L.board, "%s/board", L.dir);
    snprintf(L.results, sizeof L.results, "%s/results", L.dir);
    snprintf(L.log, sizeof L.log, "%s/log", L.dir);
    cg_job *per_world[CG_MAX_WORLD + 1] = {0};
    int counts[CG_MAX_WORLD + 1] = {0}, rc = 0;
    if (cg_host_name(L.host, sizeof L.host) != 0) {
        fprintf(stderr, "collgrad-check: cannot read this host's name: %s\n", strerror(errno));
        rc = CG_EXIT_INFRA;
    }
    for (int w = 1; w <= CG_MAX_WORLD && rc == 0; w++) {
        counts[w] = cg_jobs_for_world(o, set, w, &per_world[w]);
        if (counts[w] < 0)
            rc = CG_EXIT_INFRA;
        else
            L.total += counts[w];
    }
    for (int w = 1; w <= CG_MAX_WORLD && rc == 0; w++)
        if (counts[w] > 0 && run_world(&L, per_world[w], counts[w], w) != 0) {
            fprintf(stderr, "collgrad-check: cannot start the W=%d job (%s)\n", w, cg_mpiexec_path());
            rc = CG_EXIT_INFRA;
        }
    for (int w = 1; w <= CG_MAX_WORLD; w++)
        free(per_world[w]);
    cleanup_dir(&L);
    cg_report_count(rep);
    for (int i = 0; i < rep->ncases; i++)
        if (rep->cases[i].status == CG_ERROR && rep->cases[i].error_class > L.worst)
            L.worst = rep->cases[i].error_class;
    if (rc == 0)
        rc = cg_exit_status(rep, L.worst);
    if (cg_stop_signal() && rc < CG_EXIT_INFRA)
        rc = CG_EXIT_INFRA;
    return rc;
}
