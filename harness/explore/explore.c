/* explore.c — the driver of `collgrad-check explore` (explore.h): drawing
 * and judging the programs, the runs, the classes and the summary; the
 * options are explore_opts.c's, the shrinking of each class
 * explore_findings.c's. */
#include "explore.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "explore_state.h"
#include "backend_pytorch.h"
#include "junit.h"
#include "preflight.h"
#include "report_file.h"
#include "rules.h"
#include "runner.h"

/* ---- classes ------------------------------------------------------------------ */

static void record(explore *e, const char *program, const char *name)
{
    if (!name[0])
        return;
    bool tool = strncmp(name, "tool:", 5) == 0, generator = strncmp(name, "generator:", 10) == 0;
    e->tool_bugs += tool;
    e->rejected += generator;
    e->findings += !tool && !generator;
    for (int i = 0; i < e->nclasses; i++)
        if (strcmp(e->classes[i].name, name) == 0) {
            e->classes[i].count++;
            return;
        }
    if (e->nclasses == MAX_CLASSES)
        return;
    cls *k = &e->classes[e->nclasses++];
    snprintf(k->name, sizeof k->name, "%s", name);
    snprintf(k->first, sizeof k->first, "%s", program);
    k->count = 1;
}

/* A report's cases into the classes, counted: a run that wrote none ran
 * nothing (an interpreter without torch: the tool's exit 3). */
typedef struct {
    explore *e;
    long cases, errors; /* errors: the reference's cases that ended in an error */
} report_reading;

static void record_case(const char *name, const char *cls_name, void *ctx)
{
    report_reading *r = ctx;
    r->cases++;
    r->errors += strcmp(cls_name, CG_EXPLORE_REFERENCE_ERROR) == 0;
    record(r->e, name, cls_name);
}

static double left(const explore *e) { return e->budget > 0 ? e->budget - (cg_now() - e->t0) : -1; }

/* One line, redrawn on a terminal; elsewhere (CI logs) a line per tenth. */
static void progress(const explore *e, bool last)
{
    static int tty = -1;
    if (tty < 0)
        tty = isatty(2);
    long tenth = e->count >= 10 ? e->count / 10 : 1;
    if (!tty && !last && e->done % tenth != 0)
        return;
    double l = left(e);
    fprintf(stderr, "%sexplore: %ld/%ld programs, %ld disagreements (%d classes), %ld rejected", tty ? "\r" : "",
            e->done, e->count, e->tool_bugs + e->findings, e->nclasses, e->rejected);
    if (l >= 0)
        fprintf(stderr, ", %.0f s left", l > 0 ? l : 0.0);
    fprintf(stderr, "%s", tty && !last ? " " : "\n");
    fflush(stderr);
}

void cgx_program_path(const explore *e, const char *name, char *path, size_t n)
{
    snprintf(path, n, "%s/programs/%s.case", e->out, name);
}

int cgx_write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int rc = fputs(text, f) < 0 ? -1 : 0;
    return fclose(f) != 0 ? -1 : rc;
}

/* Phase 1: draw, parse and judge each program by the oracle; the ones that
 * pass go to DIR/programs for the runs. */
static int draw(explore *e)
{
    for (long i = 0; i < e->count; i++) {
        if (e->budget > 0 && left(e) <= 0)
            break;
        char name[64], path[PATH_MAX], cls_name[CG_CLASS_LEN];
        snprintf(name, sizeof name, "s%llu_p%ld", (unsigned long long)e->seed, i);
        char *text = cg_explore_program(e->seed, i, &e->gen, name);
        if (!text)
            return CG_EXIT_INFRA;
        cgx_program_path(e, name, path, sizeof path);
        char *judged = cg_explore_judged(text, path, cls_name);
        free(text);
        if (!(text = judged))
            return CG_EXIT_INFRA;
        if (cgx_write_text(path, text) != 0) {
            fprintf(stderr, "collgrad-check explore: cannot write %s\n", path);
            free(text);
            return CG_EXIT_INFRA;
        }
        record(e, name, cls_name);
        if (cls_name[0]) { /* the runs take only programs the oracle accepts */
            char rejected[PATH_MAX + 16];
            snprintf(rejected, sizeof rejected, "%s.rejected", path);
            if (rename(path, rejected) != 0) {
                fprintf(stderr, "collgrad-check explore: cannot rename %s: %s\n", path, strerror(errno));
                free(text);
                return CG_EXIT_INFRA;
            }
        } else {
            e->accepted++;
            if (e->rules) {
                cg_explore_rules_class(text, path, e->rules, cls_name);
                record(e, name, cls_name);
            }
        }
        free(text);
        e->done++;
        progress(e, false);
    }
    progress(e, true);
    return 0;
}

void cgx_tool_args(const explore *e, bool reference, const char *extra[MAX_EXTRA + 4])
{
    int n = 0;
    extra[n++] = "--no-fd";
    extra[n++] = "--timeout";
    extra[n++] = e->timeout;
    for (int i = 0; !reference && i < e->nextra; i++)
        extra[n++] = e->extra[i];
    extra[n] = NULL;
}

/* Phases 2 and 3: the folder of programs through the tool. */
static int run(explore *e, bool reference)
{
    char dir[PATH_MAX], json[PATH_MAX], log[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/programs", e->out);
    snprintf(json, sizeof json, "%s/%s.json", e->out, reference ? "reference" : "backend");
    snprintf(log, sizeof log, "%s/%s.log", e->out, reference ? "reference" : "backend");
    const char *extra[MAX_EXTRA + 4];
    cgx_tool_args(e, reference, extra);
    const char *paths[1] = {dir};
    fprintf(stderr, "explore: %s run of the programs (log: %s)\n", reference ? "the MPI reference" : "the backend's",
            log);
    int rc = cg_explore_run_tool(extra, json, log, paths, 1);
    report_reading r = {e, 0, 0};
    if (rc < 0 || rc == CG_EXIT_USAGE || cg_explore_report_classes(json, reference, record_case, &r) != 0) {
        fprintf(stderr, "collgrad-check explore: the %s run failed (exit %d): see %s\n",
                reference ? "reference" : "backend", rc, log);
        return rc == CG_EXIT_USAGE ? CG_EXIT_USAGE : CG_EXIT_INFRA;
    }
    if (r.cases == 0 && e->accepted > 0) { /* else "0 findings" would pass a backend that never ran */
        fprintf(stderr, "collgrad-check explore: the %s run ran none of the programs (exit %d): see %s\n",
                reference ? "reference" : "backend", rc, log);
        return CG_EXIT_INFRA;
    }
    /* every program an error under the reference, with the tool's exit 3: mpiexec that cannot start
     * the ranks (or a machine out of memory), not as many disagreements of the tool */
    if (reference && rc == CG_EXIT_INFRA && r.errors == r.cases) {
        fprintf(stderr, "collgrad-check explore: the MPI reference run ended in an error for every program "
                "(exit 3): the machine's, not a disagreement of the tool; see %s\n", log);
        return CG_EXIT_INFRA;
    }
    return 0;
}

char *cgx_slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    char *text = f ? calloc(1, 1 << 16) : NULL;
    if (text)
        (void)!fread(text, 1, (1 << 16) - 1, f);
    if (f)
        fclose(f);
    return text;
}

/* The summary: stdout, DIR/explore.json, and DIR/explore.xml with one test
 * per class (its shrunk case, or its first program, attached). */
static int summarize(const explore *e)
{
    double took = cg_now() - e->t0;
    printf("explore: seed %llu, %ld programs in %.1f s: %ld disagreements of the tool (oracle, finite "
           "differences%s), %ld rejected programs (the generator's), %ld findings\n",
           (unsigned long long)e->seed, e->done, took, e->tool_bugs, e->mpi ? ", MPI reference" : "", e->rejected,
           e->findings);
    cJSON *doc = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(doc, "classes");
    cJSON_AddStringToObject(doc, "schema", "collgrad-check/explore/1");
    cJSON_AddNumberToObject(doc, "seed", (double)e->seed);
    cJSON_AddNumberToObject(doc, "programs", (double)e->done);
    cJSON_AddNumberToObject(doc, "seconds", took);
    cJSON_AddNumberToObject(doc, "tool_disagreements", (double)e->tool_bugs);
    cJSON_AddNumberToObject(doc, "rejected", (double)e->rejected);
    cJSON_AddNumberToObject(doc, "findings", (double)e->findings);
    cg_report *rep = cg_report_new("explore", "mpi", "reference", "cpu");
    for (int i = 0; rep && i < e->nclasses; i++) {
        const cls *k = &e->classes[i];
        char first[PATH_MAX];
        cgx_program_path(e, k->first, first, sizeof first);
        const char *file = k->shrunk[0] ? k->shrunk : first;
        printf("  %-60s %6d programs   %s\n", k->name, k->count, file);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "class", k->name);
        cJSON_AddNumberToObject(o, "programs", k->count);
        cJSON_AddStringToObject(o, "first", k->first);
        cJSON_AddStringToObject(o, "case", file);
        cJSON_AddItemToArray(arr, o);
        cg_case_result *res = cg_report_add_case(rep, k->name, file, NULL, 0);
        if (res) {
            res->status = CG_FAIL;
            res->message = cgx_slurp(file);
        }
    }
    if (rep && e->nclasses == 0) {
        cg_case_result *res = cg_report_add_case(rep, "explore", e->out, NULL, 0);
        if (res)
            res->status = CG_PASS;
    }
    char path[PATH_MAX];
    cg_status st = CG_STATUS_OK;
    char *text = cJSON_Print(doc);
    snprintf(path, sizeof path, "%s/explore.json", e->out);
    int rc = text && cg_write_file_atomic(path, text, &st) == 0 ? 0 : CG_EXIT_INFRA;
    snprintf(path, sizeof path, "%s/explore.xml", e->out);
    if (rc == 0 && (!rep || cg_report_write_junit(rep, path, &st) != 0))
        rc = CG_EXIT_INFRA;
    if (rc)
        fprintf(stderr, "collgrad-check explore: %s\n", st.msg[0] ? st.msg : "out of memory");
    cJSON_free(text);
    cJSON_Delete(doc);
    cg_report_free(rep);
    return rc ? rc : e->nclasses ? CG_EXIT_FAIL : CG_EXIT_OK;
}

int cg_explore_main(int argc, char **argv)
{
    explore *e = calloc(1, sizeof *e);
    if (!e)
        return CG_EXIT_INFRA;
    int rc = cgx_parse(e, argc, argv);
    if (rc) {
        free(e);
        return rc >= 100 ? rc - 100 : rc;
    }
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/programs", e->out);
    const char *failed = mkdir(e->out, 0755) != 0 && errno != EEXIST ? e->out
                         : mkdir(dir, 0755) != 0 && errno != EEXIST  ? dir
                                                                     : NULL;
    if (failed) {
        bool users = errno == ENOTDIR || errno == ENOENT || errno == EACCES || errno == EROFS;
        fprintf(stderr, "collgrad-check explore: --out %s: cannot make %s: %s\n", e->out, failed, strerror(errno));
        free(e);
        return users ? CG_EXIT_USAGE : CG_EXIT_INFRA; /* a path the user named wrong, or the machine's fault */
    }
    /* a built-in rule set alone needs no launch: its ranks run on threads */
    if (e->nextra == 2 && strcmp(e->extra[0], "--rules") == 0 && cg_rules_find(e->extra[1]))
        e->rules = e->extra[1];
    e->t0 = cg_now();
    rc = draw(e);
    if (rc == 0 && e->mpi && e->accepted)
        rc = run(e, true);
    if (rc == 0 && e->nextra && !e->rules && e->accepted)
        rc = run(e, false);
    if (rc == 0)
        rc = cgx_shrink_all(e);
    if (rc == 0)
        rc = summarize(e);
    free(e);
    return rc;
}
