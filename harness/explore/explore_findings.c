/* explore_findings.c — each class of disagreement shrunk to a case file
 * (explore_state.h): its first program reduced (explore_shrink.h) against
 * the judge the class came from (the oracle in-process, a built-in rule set
 * on threads, or the tool with the backend's options), then written with the
 * oracle's per-rank gradients as expect lines and the numbers the backend
 * gave as comments. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explore_shrink.h"
#include "explore_state.h"
#include "oracle.h"
#include "rules.h"
#include "runner.h"

/* What a shrink candidate is judged by: the oracle in-process, or the tool
 * on the candidate alone with the options of the run the class came from. */
typedef struct shrink_ctx {
    const explore *e;
    bool tool, reference;
    double deadline;        /* past it every candidate is judged another class: shrinking stops */
    char cls[CG_CLASS_LEN]; /* the candidate's, from the report */
    const char *proxy;      /* a built-in rule set the candidates run under instead of the backend */
    const char *want;       /* the class shrinking keeps: what a proxy failure stands for */
} shrink_ctx;

static void one_class(const char *name, const char *cls_name, void *ctx)
{
    (void)name;
    snprintf(((shrink_ctx *)ctx)->cls, CG_CLASS_LEN, "%s", cls_name);
}

static void judge_candidate(const char *text, char cls_out[CG_CLASS_LEN], void *ctx)
{
    shrink_ctx *c = ctx;
    char path[PATH_MAX], json[PATH_MAX], log[PATH_MAX];
    if (cg_now() > c->deadline) {
        snprintf(cls_out, CG_CLASS_LEN, "(out of shrinking time)");
        return;
    }
    snprintf(path, sizeof path, "%s/candidate.case", c->e->out);
    cg_explore_oracle_class(text, path, cls_out, NULL); /* an invalid candidate never reaches the tool */
    if (cls_out[0] || !c->tool)
        return;
    if (c->e->rules && !c->reference) {
        cg_explore_rules_class(text, path, c->e->rules, cls_out);
        return;
    }
    if (c->proxy) { /* the rule set fails the candidate where the truth disagrees with it */
        cg_explore_rules_class(text, path, c->proxy, cls_out);
        if (strncmp(cls_out, "matches ", 8) == 0)
            snprintf(cls_out, CG_CLASS_LEN, "%s", c->want);
        return;
    }
    snprintf(json, sizeof json, "%s/candidate.json", c->e->out);
    snprintf(log, sizeof log, "%s/candidate.log", c->e->out);
    const char *extra[MAX_EXTRA + 4];
    cgx_tool_args(c->e, c->reference, extra);
    const char *paths[1] = {path};
    c->cls[0] = '\0';
    if (cgx_write_text(path, text) != 0 || cg_explore_run_tool(extra, json, log, paths, 1) < 0 ||
        cg_explore_report_classes(json, c->reference, one_class, c) != 0)
        snprintf(cls_out, CG_CLASS_LEN, "tool: the candidate could not be run");
    else
        snprintf(cls_out, CG_CLASS_LEN, "%s", c->cls);
}

/* The oracle's per-rank gradient of every param of text (of at most 16
 * elements) as `expect` lines, into f: what the shrunk case documents as the
 * truth (the tool checks them against its oracle when it runs the case). */
static void expect_lines(FILE *f, const char *text, const char *file)
{
    cg_status st = CG_STATUS_OK;
    cg_case *cs = cg_parse_case(file, text, strlen(text), &st);
    cg_oracle *o = cs ? cg_oracle_run(cs, cs->worlds[0], false) : NULL;
    for (int i = 0; o && !o->st.code && i < o->ntensors; i++) {
        const cg_otensor *t = &o->tensors[i];
        if (t->rank != 0 || !t->is_param || t->numel > 16 || !t->per_rank)
            continue;
        fprintf(f, "\nexpect grad(%s) per_rank", t->name);
        for (int r = 0; r < o->world; r++)
            for (int k = 0; k < o->ntensors; k++) {
                const cg_otensor *u = &o->tensors[k];
                if (u->rank != r || strcmp(u->name, t->name) != 0 || !u->per_rank)
                    continue;
                fprintf(f, " [");
                for (int64_t e = 0; e < u->numel; e++)
                    fprintf(f, "%s%.17g", e ? ", " : "", u->per_rank[e]);
                fprintf(f, "]");
            }
    }
    fprintf(f, "\n");
    cg_oracle_free(o);
    cg_case_free(cs);
}

/* The numbers the shrunk case gives where the class came from (the backend
 * under test, or the MPI reference for a class of the tool), appended to it
 * as comments: what a reader compares with the expect lines. 0, or 1 when
 * the file cannot be written (a run that fails leaves no comment). */
static int observed_comment(const explore *e, const shrink_ctx *ctx, const char *shrunk, const char *opts)
{
    char json[PATH_MAX], log[PATH_MAX];
    snprintf(json, sizeof json, "%s/candidate.json", e->out);
    snprintf(log, sizeof log, "%s/candidate.log", e->out);
    const char *extra[MAX_EXTRA + 4];
    cgx_tool_args(e, ctx->reference, extra);
    const char *paths[1] = {shrunk};
    if (cg_explore_run_tool(extra, json, log, paths, 1) < 0)
        return 0;
    char under[1024];
    int len = snprintf(under, sizeof under, "%s", opts[0] ? opts : "the reference rules over MPI");
    while (len > 0 && under[len - 1] == ' ')
        under[--len] = '\0';
    FILE *f = fopen(shrunk, "a");
    if (!f)
        return 1;
    (void)cg_explore_observed_comment(json, under, f); /* an unreadable report adds nothing */
    return fclose(f) != 0;
}

/* A backend's class that names a built-in rule set ("matches torch-nn@1.13":
 * the backend gives that emulation's numbers) shrinks against the rule set
 * on threads first, a candidate in milliseconds where real PyTorch takes
 * seconds; the result stands if the backend still gives it the class. NULL
 * when no rule set is named, or the backend disagrees with the result (then
 * the caller shrinks against the backend itself). */
static char *shrink_by_proxy(const explore *e, shrink_ctx *ctx, const char *text, cls *k, int *tries)
{
    const char *named = strncmp(k->name, "matches ", 8) == 0 ? k->name + 8 : NULL;
    if (!ctx->tool || ctx->reference || e->rules || !named || !cg_rules_find(named))
        return NULL;
    ctx->proxy = named;
    int statements = 0, proxy_tries = 0;
    char *small = cg_explore_shrink(text, k->name, judge_candidate, ctx, &statements, &proxy_tries);
    ctx->proxy = NULL;
    char got[CG_CLASS_LEN] = "";
    if (small)
        judge_candidate(small, got, ctx); /* the backend itself, once */
    *tries += proxy_tries + 1;
    fprintf(stderr, "explore: shrunk under the rule set %s in %d tries: %s under the backend\n", named,
            proxy_tries, strcmp(got, k->name) == 0 ? "the same class" : "another class, shrinking again");
    if (small && strcmp(got, k->name) == 0) {
        k->statements = statements;
        return small;
    }
    free(small);
    return NULL;
}

int cgx_shrink_all(explore *e)
{
    for (int i = 0; i < e->nclasses; i++) {
        cls *k = &e->classes[i];
        char first[PATH_MAX], file[PATH_MAX + 16];
        cgx_program_path(e, k->first, first, sizeof first);
        bool oracle_class = strncmp(k->name, "generator:", 10) == 0 || strstr(k->name, "finite differences");
        snprintf(file, sizeof file, "%s%s", first, oracle_class ? ".rejected" : ""); /* draw() renamed it */
        char *text = cgx_slurp(file);
        if (!text)
            return CG_EXIT_INFRA;
        shrink_ctx ctx = {e, !oracle_class, strncmp(k->name, "tool:", 5) == 0, cg_now() + e->shrink_time, "",
                          NULL, k->name};
        int tries = 0;
        fprintf(stderr, "explore: shrinking %s (%s)\n", k->first, k->name);
        char *small = shrink_by_proxy(e, &ctx, text, k, &tries);
        if (!small)
            small = cg_explore_shrink(text, k->name, judge_candidate, &ctx, &k->statements, &tries);
        free(text);
        if (!small)
            return CG_EXIT_INFRA;
        snprintf(k->shrunk, sizeof k->shrunk, "%s/shrunk-%d.case", e->out, i + 1);
        char opts[1024] = "";
        for (int x = 0, len = 0; !ctx.reference && ctx.tool && x < e->nextra && len < (int)sizeof opts; x++)
            len += snprintf(opts + len, sizeof opts - (size_t)len, "%s ", e->extra[x]);
        FILE *f = fopen(k->shrunk, "w");
        int rc = !f || fprintf(f, "# collgrad-check explore: %s\n# shrunk from %s (seed %llu) to %d statements in "
                                  "%d tries; reproduce: collgrad-check %s%s%s\n%s",
                               k->name, k->first, (unsigned long long)e->seed, k->statements, tries,
                               ctx.tool ? "" : "--oracle-only ", opts, k->shrunk, small) < 0;
        if (f && !rc)
            expect_lines(f, small, k->shrunk);
        if (f && fclose(f) != 0)
            rc = 1;
        free(small);
        if (!rc && ctx.tool)
            rc = observed_comment(e, &ctx, k->shrunk, opts);
        if (rc) {
            fprintf(stderr, "collgrad-check explore: cannot write %s\n", k->shrunk);
            return CG_EXIT_INFRA;
        }
    }
    return 0;
}
