/* matrix_run.c — see matrix_run.h (its options: matrix_opts.c). Each column is a whole run of this
 * executable in a child process (its stdout and stderr to a log in the
 * matrix's temporary directory), so an emulation runs on its MPI ranks and
 * a PyTorch API on its own ranks exactly as the main command runs them;
 * the matrix reads back only their JSON reports. */
#include "matrix_run.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend_pytorch.h"
#include "case_set.h"
#include "cli.h"
#include "matrix.h"
#include "matrix_opts.h"
#include "report_file.h"
#include "report_json.h"
#include "rules.h"

enum { MAX_ARGS = 64 };

/* ---- one column ---------------------------------------------------------------- */

/* Run this executable for backend b; its report at json, its output at log.
 * The child's exit status says little (1 for any wrong cell, 3 for a hang):
 * the report is what counts. -1 when it could not be started. */
static int run_column(const char *self, const cg_matrix_opts *o, const char *b, const char *json,
                      const char *log)
{
    const char *args[MAX_ARGS + 8];
    int n = 0;
    args[n++] = self;
    bool real = strncmp(b, "pytorch:", 8) == 0 || cg_backend_is_jax(b);
    if (real) {
        args[n++] = "--backend";
        args[n++] = b;
        if (o->python && !cg_backend_is_jax(b)) {
            args[n++] = "--python";
            args[n++] = o->python;
        }
    } else {
        args[n++] = "--rules";
        args[n++] = b;
    }
    args[n++] = "--no-fd"; /* each backend against the oracle; FD checks the oracle, not them */
    if (!real) /* an emulation's cell needs a verdict only (naming its mistake re-runs every emulation);
                * a framework's keeps the diagnosis: which emulation it behaves like */
        args[n++] = "--no-diagnosis";
    args[n++] = "--json";
    args[n++] = json;
    if (o->world) {
        args[n++] = "--world";
        args[n++] = o->world;
    }
    if (o->timeout) {
        args[n++] = "--timeout";
        args[n++] = o->timeout;
    }
    for (int i = 0; i < o->ncases && n < MAX_ARGS; i++)
        args[n++] = o->cases[i];
    args[n] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        FILE *out = freopen(log, "w", stdout);
        if (!out || dup2(fileno(stdout), STDERR_FILENO) < 0)
            _exit(127);
        execv(self, (char *const *)args);
        fprintf(stderr, "cannot run %s: %s\n", self, strerror(errno));
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return 0;
}

/* The last non-empty line of the column's log: why it wrote no report. */
static void last_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    char line[512];
    snprintf(buf, len, "no output");
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0])
            snprintf(buf, len, "%s", line);
    }
    if (f)
        fclose(f);
}

/* Whether any case of the report ran (was not skipped); the first skip reason otherwise. */
static bool any_ran(const cJSON *report, const char **why)
{
    const cJSON *cs;
    *why = NULL;
    cJSON_ArrayForEach(cs, cJSON_GetObjectItemCaseSensitive(report, "cases"))
    {
        const char *st = cg_json_str(cs, "status");
        if (st && strcmp(st, "skip") != 0)
            return true;
        if (!*why)
            *why = cg_json_str(cs, "message");
    }
    return false;
}

/* ---- the table -------------------------------------------------------------- */

/* The table into memory, then to path through the report writer: a file is
 * replaced whole (never half a table after a full disk), '-' and streams as
 * the tool's reports are. */
static int write_to(const char *path, const cg_matrix *m,
                    int (*write)(const cg_matrix *, FILE *, const char *), const char *title)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    int rc = f ? write(m, f, title) : -1;
    if (f && fclose(f) != 0)
        rc = -1;
    cg_status st = CG_STATUS_OK;
    if (rc != 0)
        fprintf(stderr, "collgrad-check matrix: %s: out of memory\n", path);
    else if (fflush(stdout) != 0 || cg_report_output_write(path, text, &st) != 0) {
        fprintf(stderr, "collgrad-check matrix: %s\n", st.msg[0] ? st.msg : "standard output: cannot write");
        rc = -1;
    }
    free(text);
    return rc;
}

/* The table's targets, before any column runs: each writable, no two the same. */
static int check_targets(const cg_matrix_opts *o)
{
    const char *opt[3] = {"--md", "--html", "--json"}, *path[3] = {o->md, o->html, o->json};
    cg_status st = CG_STATUS_OK;
    for (int i = 0; i < 3; i++) {
        if (!path[i])
            continue;
        if (cg_report_target_check(opt[i], path[i], &st) != 0) {
            fprintf(stderr, "collgrad-check matrix: %s\n", st.msg);
            return CG_EXIT_USAGE;
        }
        for (int k = 0; k < i; k++)
            if (path[k] && strcmp(path[k], path[i]) == 0) {
                char both[96];
                snprintf(both, sizeof both, "%s and %s", opt[k], opt[i]);
                return cg_matrix_bad_usage("%s name the same target; give each its own", both);
            }
    }
    return 0;
}

/* The case paths, before any column runs: one that cannot be read would be
 * each column's refusal, a table of "error: cannot read" rows and exit 0.
 * A file that does not parse is a row of errors, as in a run: not refused. */
static int check_cases(const cg_matrix_opts *o)
{
    cg_case_set set;
    memset(&set, 0, sizeof set);
    int rc = cg_case_set_load(&set, o->cases, o->ncases, NULL); /* it prints the refusal */
    rc = set.refusal[0] ? CG_EXIT_USAGE : rc == CG_EXIT_INFRA ? rc : 0;
    cg_case_set_free(&set);
    return rc;
}

static int md(const cg_matrix *m, FILE *f, const char *t)
{
    return (void)t, cg_matrix_write_markdown(m, f);
}
static int json(const cg_matrix *m, FILE *f, const char *t)
{
    return (void)t, cg_matrix_write_json(m, f);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int cg_matrix_main(int argc, char **argv)
{
    cg_matrix_opts o;
    int rc = cg_matrix_parse(argc, argv, &o);
    if (rc != 0)
        return rc == 1 ? 0 : rc;
    if ((rc = check_targets(&o)) != 0 || (rc = check_cases(&o)) != 0)
        return rc;
    char self[PATH_MAX], dir[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) {
        fprintf(stderr, "collgrad-check matrix: cannot find this executable: %s\n",
                strerror(errno));
        return CG_EXIT_INFRA;
    }
    self[len] = '\0';
    if (o.reports &&
        ((mkdir(o.reports, 0777) != 0 && errno != EEXIST) || access(o.reports, W_OK | X_OK) != 0)) {
        fprintf(stderr, "collgrad-check matrix: --reports %s: cannot write there: %s\n", o.reports,
                strerror(errno));
        return CG_EXIT_USAGE;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/collgrad-matrix-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "collgrad-check matrix: cannot create a directory in %s: %s\n",
                tmp && *tmp ? tmp : "/tmp", strerror(errno));
        return CG_EXIT_INFRA;
    }
    cJSON *reports[MAX_COLUMNS] = {0};
    char notes[MAX_COLUMNS][600];
    int kept = 0;
    for (int c = 0; c < o.nbackends; c++) {
        char json_path[PATH_MAX + 32], log[PATH_MAX + 32];
        if (o.reports)
            snprintf(json_path, sizeof json_path, "%s/%s.json", o.reports, o.backends[c]);
        else
            snprintf(json_path, sizeof json_path, "%s/col%d.json", dir, c);
        snprintf(log, sizeof log, "%s/col%d.log", dir, c);
        double t0 = now_s();
        notes[c][0] = '\0';
        cg_status st = CG_STATUS_OK;
        if (run_column(self, &o, o.backends[c], json_path, log) != 0)
            snprintf(notes[c], sizeof notes[c], "not run: cannot start it: %s", strerror(errno));
        else if (!(reports[c] = cg_report_json_load(json_path, &st))) {
            char why[512];
            last_line(log, why, sizeof why);
            snprintf(notes[c], sizeof notes[c], "not run: %s", why);
        } else {
            const char *why;
            if (!any_ran(reports[c], &why)) {
                snprintf(notes[c], sizeof notes[c], "every case skipped: %s",
                         why ? why : "no case selected");
                cJSON_Delete(reports[c]);
                reports[c] = NULL;
            } else {
                kept++;
            }
        }
        fprintf(stderr, "matrix: [%d/%d] %s: %s (%.1f s)\n", c + 1, o.nbackends, o.backends[c],
                notes[c][0] ? notes[c] : "ran", now_s() - t0);
        if (!o.reports)
            unlink(json_path);
        unlink(log);
    }
    if (rmdir(dir) != 0)
        fprintf(stderr, "collgrad-check matrix: %s left behind: %s\n", dir, strerror(errno));
    cg_matrix *m = kept ? cg_matrix_new(kept) : NULL;
    rc = kept ? (m ? 0 : 3) : 3;
    if (!kept)
        fprintf(stderr, "collgrad-check matrix: no backend ran a case\n");
    for (int c = 0, col = 0; m && rc == 0 && c < o.nbackends; c++)
        if (reports[c] && cg_matrix_add_column(m, col++, o.backends[c], reports[c]) != 0) {
            fprintf(stderr, "collgrad-check matrix: out of memory\n");
            rc = CG_EXIT_INFRA;
        }
    if (m && rc == 0 && cg_matrix_sort(m) != 0)
        rc = CG_EXIT_INFRA;
    for (int c = 0; m && rc == 0 && c < o.nbackends; c++) /* what is not in the table, and why */
        if (notes[c][0]) {
            char line[700];
            snprintf(line, sizeof line, "%s left out: %s", o.backends[c], notes[c]);
            if (cg_matrix_add_note(m, line) != 0)
                rc = CG_EXIT_INFRA;
        }
    for (int c = 0; c < o.nbackends; c++)
        cJSON_Delete(reports[c]);
    const char *title = "collgrad-check: case x backend";
    if (rc == 0) {
        if (!o.md && !o.html && !o.json)
            o.md = "-";
        if (o.md && write_to(o.md, m, md, title) != 0)
            rc = CG_EXIT_INFRA;
        if (o.html && write_to(o.html, m, cg_matrix_write_html, title) != 0)
            rc = CG_EXIT_INFRA;
        if (o.json && write_to(o.json, m, json, title) != 0)
            rc = CG_EXIT_INFRA;
    }
    cg_matrix_free(m);
    return rc;
}
