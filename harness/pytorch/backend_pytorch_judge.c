/* backend_pytorch_judge.c — one job of the Python ranks, judged like an MPI
 * job (worker.c) by the same call (judge.h), the emulations re-run on threads
 * (threads_run.h) for the diagnosis. What differs is what a real
 * framework can do that the tool's own ranks cannot: skip a job (the API has
 * no such op), hang (a collective timed out), raise with its own words, and
 * warn. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_pytorch_internal.h"
#include "expect.h"
#include "judge.h"
#include "rules.h"
#include "threads_run.h"

static void add_rank_warnings(const cg_pt_job *job, int world, cg_case_result *res)
{
    for (int r = 0; r < world; r++)
        for (int i = 0; i < job->ranks[r].nwarnings; i++) {
            char line[1200];
            snprintf(line, sizeof line, "rank %d: %s", r, job->ranks[r].warnings[i]);
            cg_case_add_warning(res, line);
        }
}

/* "rank 0 timed out at backward (file:7:1) ...; rank 1 finished": what each
 * rank did in a job some rank hung in. */
static void describe_ranks(const cg_pt_job *job, int world, char *buf, size_t len)
{
    size_t at = 0;
    for (int r = 0; r < world && at < len; r++) {
        const cg_pt_rank *k = &job->ranks[r];
        const char *sep = r ? "; " : "";
        if (k->outcome == CG_PT_HANG || k->outcome == CG_PT_RAISED)
            at += (size_t)snprintf(buf + at, len - at, "%srank %d %s at %s (%s): %s: %.300s", sep, r,
                                   k->outcome == CG_PT_HANG ? "timed out" : "raised", k->phase ? k->phase : "?",
                                   k->at ? k->at : "?", k->type ? k->type : "?", k->message ? k->message : "");
        else
            at += (size_t)snprintf(buf + at, len - at, "%srank %d %s", sep, r,
                                   k->outcome == CG_PT_OK ? "finished the job" : "skipped it");
    }
}

/* Does a rule set's refusal (CG_RAISES_MARK, rules.h: refuses) quote the
 * framework's message, its closing period aside? A refusal says why the
 * framework raises and quotes its words ("Argument ``gather_list`` must be
 * specified on destination rank"). */
static bool quoted_in(const char *refusal, const char *message)
{
    size_t n = message ? strlen(message) : 0;
    while (n > 0 && (message[n - 1] == '.' || message[n - 1] == ' '))
        n--;
    if (n < 16) /* too short to tell one error from another */
        return false;
    for (const char *p = strstr(refusal, "\""); p; p = strstr(p + 1, "\""))
        if (strncmp(p + 1, message, n) == 0)
            return true;
    return false;
}

/* The framework's name, before its version in a diagnosis. */
static const char *framework(const cg_pt_context *ctx) { return ctx->jax ? "jax" : "torch"; }

/* Did an emulation raise what the framework raised? Its error line
 * ("file:l:c: message") names the same file and line, and its message is part
 * of the framework's (the emulations quote PyTorch's words where they
 * reproduce a PyTorch error), or it is a declared refusal that quotes the
 * framework's message (quoted_in), so a refusal for another reason at the
 * same statement does not count. */
static bool raised_alike(const char *error, const cg_pt_rank *k)
{
    /* the same file and line: the runner names a statement by its first column, the
     * tool's interpreter a call inside it by the call's ("y = gather(...)": 13:1, 13:5) */
    const char *col = k->at ? strrchr(k->at, ':') : NULL;
    size_t n = col ? (size_t)(col - k->at) + 1 : 0; /* "file:line:" */
    if (!error || !n || strncmp(error, k->at, n) != 0)
        return false;
    const char *msg = error + n + strspn(error + n, "0123456789");
    if (*msg != ':')
        return false;
    msg += 1 + strspn(msg + 1, " ");
    if (k->message && *msg && strstr(k->message, msg) != NULL)
        return true;
    return strncmp(msg, CG_RAISES_MARK, strlen(CG_RAISES_MARK)) == 0 && quoted_in(msg, k->message);
}

static const char *first_error(const cg_observed *obs, int *rank)
{
    for (int r = 0; r < obs->world; r++)
        if (obs->ranks[r].error) {
            *rank = r;
            return obs->ranks[r].error;
        }
    return NULL;
}

/* The framework raised: which emulations raise at the same statement? */
static void diagnose_raise(const cg_pt_context *ctx, const cg_pt_rank *k, const cg_emulations *runs,
                           cg_case_result *res)
{
    const char *names[32];
    int n = 0;
    for (int i = 0; i < runs->n && n < 32; i++) {
        const cg_rule_run *run = &runs->runs[i];
        bool alike = false; /* any rank's: the rank before it may have stopped only because it raised */
        for (int r = 0; run->obs && r < run->obs->world && !alike; r++)
            alike = raised_alike(run->obs->ranks[r].error, k);
        if (alike)
            names[n++] = run->rules;
    }
    char text[1024];
    bool forward = k->phase && strcmp(k->phase, "forward") == 0;
    if (n == 0 && forward) /* no gradient was involved yet: the collective itself was refused */
        snprintf(text, sizeof text, "the framework refused at forward: %s at %s %s over %s raised %s at %s "
                 "(%.200s); no emulation refuses there: the collective, not its gradient, is missing",
                 ctx->label, framework(ctx), ctx->torch, ctx->backend, k->type ? k->type : "an exception",
                 k->at ? k->at : "?", k->message ? k->message : "");
    else if (n == 0)
        snprintf(text, sizeof text, "unknown behaviour: %s raised %s at %s (%s) where no emulation raises; "
                 "a finding about %s at %s %s over %s", ctx->label, k->type ? k->type : "an exception",
                 k->phase ? k->phase : "?", k->at ? k->at : "?", ctx->label, framework(ctx), ctx->torch, ctx->backend);
    else
        snprintf(text, sizeof text, "%s at %s %s over %s matches rule set %s%s: it raises the same error "
                 "at the same statement (%s at %s)", ctx->label, framework(ctx), ctx->torch, ctx->backend, names[0],
                 n > 1 ? " (and others raising there too)" : "", k->type ? k->type : "?", k->at ? k->at : "?");
    const cg_rules *rs = n ? cg_rules_find(names[0]) : NULL;
    cg_case_set_diagnosis(res, names, n, text, rs ? rs->see : NULL);
}

bool cg_pytorch_error_is_echo(const char *message)
{
    static const char *const echoes[] = {"Connection closed by peer", "Connection reset by peer",
                                         "Timed out waiting", "Broken pipe"};
    for (size_t i = 0; message && i < sizeof echoes / sizeof *echoes; i++)
        if (strstr(message, echoes[i]))
            return true;
    return false;
}

/* A job some rank hung in, where another raised for a reason of its own:
 * does an emulation raise there too (then the hang is what it models: the
 * members wait for a rank that raised, as torch-nn's non-member all_gather)?
 * Diagnosed as a raise of that rank (diagnose_raise). */
static void diagnose_hang(const cg_pt_context *ctx, const cg_case *cs, const cg_pt_job *job, int world,
                          cg_case_result *res)
{
    const cg_pt_rank *first = NULL, *k = NULL;
    for (int r = 0; r < world && !first; r++)
        if (job->ranks[r].outcome == CG_PT_RAISED && !cg_pytorch_error_is_echo(job->ranks[r].message))
            first = &job->ranks[r];
    if (!first || !ctx->diagnose)
        return;
    cg_emulations runs;
    cg_emulations_run(&cg_threads_runner, cs, job->plan, ctx->emulation, &runs);
    /* the rank an emulation explains, else the first that raised: a non-member's error of the
     * runner's own line (torch.cat of no tensors) comes before the root's refusal */
    for (int r = 0; r < world && !k; r++)
        for (int i = 0; i < runs.n && !k && job->ranks[r].outcome == CG_PT_RAISED; i++) {
            const cg_observed *o = runs.runs[i].obs;
            for (int q = 0; o && q < o->world && !k; q++)
                if (raised_alike(o->ranks[q].error, &job->ranks[r]))
                    k = &job->ranks[r];
        }
    diagnose_raise(ctx, k ? k : first, &runs, res);
    cg_emulations_free(&runs);
}

/* A rank raised where the truth does not: which emulations raise alike (their
 * runs only when gradients, not values, are wrong, as the judge's own). */
static void diagnose_raised(const cg_pt_context *ctx, const cg_pt_job *job, const cg_case *cs, int rank,
                            bool values_wrong, cg_case_result *res)
{
    cg_emulations runs = {0};
    if (!values_wrong)
        cg_emulations_run(&cg_threads_runner, cs, job->plan, ctx->emulation, &runs);
    diagnose_raise(ctx, &job->ranks[rank], &runs, res);
    cg_emulations_free(&runs);
}

/* The judge's explanation names the framework and version it is about. */
static void name_framework(const cg_pt_context *ctx, cg_case_result *res)
{
    if (!res->diag_explanation)
        return;
    char text[1400];
    if (res->ndiag == 0)
        snprintf(text, sizeof text, "unknown behaviour: no emulation and no known mistake gives what "
                 "%s computed at %s %s over %s (the numbers are in the checks): a finding",
                 ctx->label, framework(ctx), ctx->torch, ctx->backend);
    else
        snprintf(text, sizeof text, "%s at %s %s over %s: %s", ctx->label, framework(ctx), ctx->torch, ctx->backend,
                 res->diag_explanation);
    char *dup = strdup(text);
    if (dup) {
        free(res->diag_explanation);
        res->diag_explanation = dup;
    }
}

/* The diff labels its checks with the rule set it was given (the emulation,
 * so that the case's rules=<emulation> expectations are checked against the
 * real run); checks against the oracle or the run's own errors are about
 * the framework run, and say so. */
static void relabel(cg_case_result *res, int first, const cg_pt_context *ctx)
{
    for (int i = first; i < res->nchecks; i++) {
        cg_check *k = &res->checks[i];
        bool ours = k->rules && strcmp(k->rules, ctx->emulation) == 0 &&
                    (!k->against || strcmp(k->against, "case") != 0);
        char *label = ours ? strdup(ctx->label) : NULL;
        if (label) {
            free(k->rules);
            k->rules = label;
        }
    }
}

int cg_pt_judge(const cg_pt_context *ctx, const cg_case *cs, cg_pt_job *job, int world, cg_case_result *res)
{
    int skipped = 0, hung = 0;
    for (int r = 0; r < world; r++) {
        skipped += job->ranks[r].outcome == CG_PT_SKIPPED;
        hung += job->ranks[r].outcome == CG_PT_HANG;
    }
    add_rank_warnings(job, world, res);
    if (skipped == world) {
        res->status = CG_SKIP;
        res->message = strdup(job->ranks[0].reason ? job->ranks[0].reason : "skipped");
        return 0;
    }
    if (hung || skipped) {
        char ranks[3000], msg[3200];
        describe_ranks(job, world, ranks, sizeof ranks);
        snprintf(msg, sizeof msg, "%s: %s", hung ? "hang" : "the ranks disagree on skipping the job", ranks);
        for (int r = 0; r < world; r++) /* what a rank raised is often why the others wait: kept per rank */
            if (job->ranks[r].outcome == CG_PT_RAISED && job->ranks[r].obs.error)
                cg_case_add_note(res, "", r, "error", ctx->label, CG_FAIL, job->ranks[r].obs.error);
        cg_check_hazards(cs, job->plan, res); /* a reachability hazard explains most hangs */
        if (hung)
            diagnose_hang(ctx, cs, job, world, res);
        res->status = CG_ERROR;
        res->message = strdup(msg);
        res->error_class = CG_EXIT_INFRA;
        return CG_EXIT_INFRA;
    }
    cg_observed obs; /* borrows the ranks' arrays: never cg_observed_free'd */
    memset(&obs, 0, sizeof obs);
    obs.world = world;
    for (int r = 0; r < world; r++)
        obs.ranks[r] = job->ranks[r].obs;
    /* a framework's raise is diagnosed here (its ranks say where and what), the
     * rest by the judge, the API's own emulation first: where several give the
     * same numbers, the diagnosis names and explains the first */
    int raised_rank = -1;
    bool raised = first_error(&obs, &raised_rank) != NULL;
    cg_judge_job j = {cs, job->plan, &obs, {ctx->emulation, false, cg_case_tol(cs, cg_tol_for(cs->dtype)), NULL},
                      ctx->fd, ctx->diagnose && !raised, &cg_threads_runner, ctx->emulation, ctx->label};
    int first = res->nchecks;
    cg_judge(&j, res);
    relabel(res, first, ctx);
    bool values_wrong;
    if (raised && ctx->diagnose && cg_diag_needed(res, &obs, &values_wrong))
        diagnose_raised(ctx, job, cs, raised_rank, values_wrong, res);
    else
        name_framework(ctx, res);
    cg_case_finish(res);
    return 0;
}
