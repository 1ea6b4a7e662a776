/* explore_class.c — what class a failing program falls in (explore_class.h):
 * from a rule set's run on threads, in-process, or from a case of the tool's
 * JSON report (the MPI reference's, the backend's). A class is what explore
 * counts programs by and shrinks a program against, so it names what stays
 * while the program shrinks: the explanation, the error without where it
 * was raised, never a line number or a rank. */
#include "explore_class.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_pytorch.h"
#include "hazards.h"
#include "judge.h"
#include "report_json.h"
#include "rules.h"
#include "threads_run.h"

/* Where "file:line:col: " ends in e, or NULL. */
static const char *past_location(const char *e)
{
    for (const char *c = strchr(e, ':'); c; c = strchr(c + 1, ':')) {
        size_t line = strspn(c + 1, "0123456789"), col = line ? strspn(c + 2 + line, "0123456789") : 0;
        if (line && c[1 + line] == ':' && col && strncmp(c + 2 + line + col, ": ", 2) == 0)
            return c + 2 + line + col + 2;
    }
    return NULL;
}

/* Past "ENTRY #N: rank R failed: " at the start of e: another rank's error
 * passed on (which rank's comes first varies from run to run), or NULL. */
static const char *past_passed_on(const char *e)
{
    const char *r = strstr(e, ": rank "), *f = r ? strstr(r, " failed: ") : NULL;
    return f && strspn(r + 7, "0123456789") == (size_t)(f - r - 7) ? f + 9 : NULL;
}

/* An error as its class names it: past the rank it was passed on from and
 * past its location (which moves as the program shrinks). */
static const char *error_core(const char *e)
{
    const char *own = past_passed_on(e), *after = past_location(own ? own : e);
    return after ? after : own ? own : e;
}

/* An error that names no cause of its own: passed on from another rank,
 * or the echo of another rank's stop (cg_pytorch_error_is_echo). */
static bool weak_error(const char *e) { return past_passed_on(e) || cg_pytorch_error_is_echo(e); }

/* Which rank error names the class: a rank's own before one passed on or
 * echoed. *chosen is the choice so far (NULL: none yet). */
static void choose_rank_error(const char **chosen, const char *e)
{
    if (e && (!*chosen || (weak_error(*chosen) && !weak_error(e))))
        *chosen = e;
}

/* "raises: " + the error's core, at most 100 characters of it (a cut one
 * ends in "..."). */
static void raises_class(const char *rank_error, char cls[CG_CLASS_LEN])
{
    const char *core = error_core(rank_error);
    if (strlen(core) > 100)
        snprintf(cls, CG_CLASS_LEN, "raises: %.97s...", core);
    else
        snprintf(cls, CG_CLASS_LEN, "raises: %s", core);
}

/* A hang the hazard analysis foresaw (hazards.h), named by its kind alone:
 * which collective's backward a rank does not reach is the same finding
 * (an engine that runs only reachable nodes) whatever the collective, and one
 * class for it keeps explore from shrinking it once per collective. */
static void hazard_class(const char *warning, char cls[CG_CLASS_LEN])
{
    snprintf(cls, CG_CLASS_LEN, "hangs as the hazard analysis predicts: %s",
             strstr(warning, CG_HAZARD_UNREACHED) ? "a rank never reaches the backward of a collective that "
                                                    "others run"
                                                  : "a recv no root uses leaves its sender waiting");
}

/* The first warning of the case that names a hang hazard, or NULL. */
static const char *hazard_warning(const cJSON *c)
{
    const cJSON *w;
    cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(c, "warnings"))
    {
        if (cJSON_IsString(w) &&
            (strstr(w->valuestring, CG_HAZARD_UNREACHED) || strstr(w->valuestring, CG_HAZARD_UNUSED_RECV)))
            return w->valuestring;
    }
    return NULL;
}

/* A failing program's class. A run that did not end (an error: the
 * deadline, a timeout of the framework's) that an emulation models (the
 * backend's diagnosis of a hang names a rule set raising alike) is "matches
 * A"; else one where a rank raised for a reason of its own is "raises:
 * ERROR", that rank's error, as when every rank raises: one cause, one class,
 * whether the other ranks then wait (a c10d gather's detached output raising
 * at one rank's backward while the rest wait in the next collective, gloo
 * refusing AVG on the ranks that reach it first: explore --seeds 47, 48) or
 * raise too; else "hangs as the hazard analysis predicts: ..." where the
 * case's warnings name a hang hazard (the wait is what an engine that runs
 * only reachable nodes does: PyTorch's, expected), else "hangs"
 * (unexplained) or "raises". A run that ended: the first explanation its
 * diagnosis names ("matches A"), else the error a rank raised without any
 * emulation raising it ("raises: RuntimeError at forward: ..."), else
 * "shape" where a value's shape is not the oracle's (the backend's forward
 * itself differs: a real module returning one chunk of uninitialized memory
 * to a non-member of a scatter's group, explore --seed 42), else "unknown".
 * Errors are named without their location, which moves as the program
 * shrinks. */
static void failure_class(bool error, const char *match, const char *message, const char *rank_error,
                          const char *hazard, bool shape, char cls[CG_CLASS_LEN])
{
    bool hang = error && message && (strncmp(message, "hang", 4) == 0 || strstr(message, "deadline"));
    if (hang && match)
        snprintf(cls, CG_CLASS_LEN, "matches %s", match);
    else if (hang && rank_error && !weak_error(rank_error))
        raises_class(rank_error, cls);
    else if (hang && hazard)
        hazard_class(hazard, cls);
    else if (error)
        snprintf(cls, CG_CLASS_LEN, "%s", hang ? "hangs" : "raises");
    else if (match)
        snprintf(cls, CG_CLASS_LEN, "matches %s", match);
    else if (rank_error)
        raises_class(rank_error, cls);
    else
        snprintf(cls, CG_CLASS_LEN, "%s", shape ? "shape: a value's shape differs from the oracle's" : "unknown");
}

/* A failing check that says a value's shape differs (diff.c). */
static bool shape_note(const char *semantics, bool failed, const char *note)
{
    return failed && semantics && strcmp(semantics, "value") == 0 && note &&
           strncmp(note, CG_SHAPE_NOTE, strlen(CG_SHAPE_NOTE)) == 0;
}

void cg_explore_rules_class(const char *text, const char *file, const char *rules, char cls[CG_CLASS_LEN])
{
    cls[0] = '\0';
    cg_status st = CG_STATUS_OK;
    const cg_rules *rs = cg_rules_load(rules, &st);
    cg_case *cs = rs ? cg_parse_case(file, text, strlen(text), &st) : NULL;
    cg_oracle *o = cs ? cg_oracle_run(cs, cs->worlds[0], false) : NULL;
    cg_report *rep = o && !o->st.code ? cg_report_new("explore", "threads", rules, "cpu") : NULL;
    cg_case_result *res = rep ? cg_report_add_case(rep, cs->name, cs->file, NULL, o->world) : NULL;
    cg_observed obs;
    memset(&obs, 0, sizeof obs);
    if (!res || cg_threads_run_rules(cs, o, rs, &obs, &st) != 0) {
        snprintf(cls, CG_CLASS_LEN, "tool: the program could not be run under %s: %s", rules,
                 st.msg[0] ? st.msg : "out of memory");
    } else {
        cg_judge_job j = {cs, o, &obs, {rules, false, cg_case_tol(cs, cg_tol_for(cs->dtype)), rs->name}, false,
                          true, &cg_threads_runner, NULL, rules};
        cg_judge(&j, res);
        cg_case_finish(res);
        const char *rank_error = NULL;
        bool shape = false;
        for (int i = 0; i < res->nchecks; i++) {
            const cg_check *k = &res->checks[i];
            if (k->rank >= 0 && strcmp(k->semantics, "error") == 0)
                choose_rank_error(&rank_error, k->note);
            shape |= shape_note(k->semantics, k->status == CG_FAIL, k->note);
        }
        if (res->status == CG_ERROR || res->status == CG_FAIL)
            failure_class(res->status == CG_ERROR, res->ndiag > 0 ? res->diag_matches[0] : NULL, res->message,
                          rank_error, NULL, shape, cls);
    }
    cg_observed_free(&obs);
    cg_report_free(rep);
    cg_oracle_free(o);
    cg_case_free(cs);
}

/* The class of one case of a report. */
static void case_class(const cJSON *c, bool reference, char cls[CG_CLASS_LEN])
{
    const char *status = cg_json_str(c, "status");
    cls[0] = '\0';
    if (!status || strcmp(status, "pass") == 0 || strcmp(status, "skip") == 0)
        return;
    if (reference) {
        if (strcmp(status, "error") == 0)
            snprintf(cls, CG_CLASS_LEN, "%s", CG_EXPLORE_REFERENCE_ERROR);
        else
            snprintf(cls, CG_CLASS_LEN, "tool: oracle vs MPI reference (%s)", status);
        return;
    }
    /* the first explanation the diagnosis names: several often match one
     * program (torch-nn@1.13 and @2.4 agree on most), and which others do
     * changes as the program shrinks; the first stays */
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c, "diagnosis"), "matches");
    const cJSON *first = cJSON_GetArrayItem(m, 0), *k;
    const char *rank_error = NULL;
    bool shape = false;
    cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(c, "checks"))
    {
        const char *sem = cg_json_str(k, "semantics"), *st = cg_json_str(k, "status");
        if (sem && strcmp(sem, "error") == 0 && cg_json_num(k, "rank", -1) >= 0)
            choose_rank_error(&rank_error, cg_json_str(k, "note"));
        shape |= shape_note(sem, st && strcmp(st, "fail") == 0, cg_json_str(k, "note"));
    }
    failure_class(strcmp(status, "error") == 0, cJSON_IsString(first) ? first->valuestring : NULL,
                  cg_json_str(c, "message"), rank_error, hazard_warning(c), shape, cls);
}

int cg_explore_report_classes(const char *json, bool reference,
                              void (*each)(const char *name, const char *cls, void *ctx), void *ctx)
{
    cg_status st = CG_STATUS_OK;
    cJSON *root = cg_report_json_load(json, &st);
    if (!root)
        return -1;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(root, "cases"))
    {
        char cls[CG_CLASS_LEN];
        case_class(c, reference, cls);
        each(cg_json_str(c, "name"), cls, ctx);
    }
    cJSON_Delete(root);
    return 0;
}
