/* report_json.c — the JSON report (schema "collgrad-check/report/1",
 * reports/schema/report-1.schema.json).
 *
 * Every string goes through cg_utf8_clean (utf8.h): the text a case file, a
 * path or a plugin hands us may be any bytes, the report is always UTF-8.
 * Written through report_file.h: atomically, or to a stream. */
#include "report_json.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "utf8.h"

enum { MAX_VALUES = 256 }; /* values per check written out; larger ones are truncated */

static cJSON *values_json(const double *v, int64_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (int64_t i = 0; a && v && i < n && i < MAX_VALUES; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
    return a;
}

/* A JSON string of s made valid UTF-8, or NULL on OOM. */
static cJSON *text_json(const char *s)
{
    char *clean = cg_utf8_clean(s);
    cJSON *v = clean ? cJSON_CreateString(clean) : NULL;
    free(clean);
    return v;
}

/* o[key] = s as a string (s may not be NULL). */
static void add_text(cJSON *o, const char *key, const char *s)
{
    cJSON_AddItemToObject(o, key, text_json(s));
}

static void add_string_or_null(cJSON *o, const char *key, const char *s)
{
    if (s)
        add_text(o, key, s);
    else
        cJSON_AddNullToObject(o, key);
}

static cJSON *check_json(const cg_check *k)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    add_text(o, "tensor", k->tensor ? k->tensor : "");
    cJSON_AddNumberToObject(o, "rank", k->rank);
    add_text(o, "semantics", k->semantics ? k->semantics : "?");
    add_string_or_null(o, "rules", k->rules);
    add_string_or_null(o, "against", k->against);
    cJSON_AddNumberToObject(o, "numel", (double)k->numel);
    cJSON_AddItemToObject(o, "expected", values_json(k->expected, k->numel));
    cJSON_AddItemToObject(o, "observed", values_json(k->observed, k->numel));
    if (k->numel > MAX_VALUES)
        cJSON_AddBoolToObject(o, "truncated", 1);
    cJSON_AddNumberToObject(o, "max_abs_err", k->max_abs_err);
    cJSON_AddNumberToObject(o, "max_rel_err", k->max_rel_err);
    cJSON_AddNumberToObject(o, "max_ulp", k->max_ulp);
    cJSON_AddNumberToObject(o, "first_bad_index", (double)k->first_bad);
    if (k->first_bad >= 0 && k->first_bad < k->numel && k->expected && k->observed) {
        /* on their own: the first difference may lie past the values written */
        cJSON_AddNumberToObject(o, "first_bad_expected", k->expected[k->first_bad]);
        cJSON_AddNumberToObject(o, "first_bad_observed", k->observed[k->first_bad]);
    }
    cJSON_AddStringToObject(o, "status", cg_outcome_name(k->status));
    if (k->note)
        add_text(o, "note", k->note);
    return o;
}

static cJSON *case_json(const cg_case_result *c)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    add_text(o, "name", c->name ? c->name : "");
    add_string_or_null(o, "file", c->file);
    add_string_or_null(o, "source", c->source);
    cJSON_AddNumberToObject(o, "world", c->world);
    add_string_or_null(o, "rules", c->rules);
    cJSON_AddStringToObject(o, "status", cg_outcome_name(c->status));
    cJSON_AddNumberToObject(o, "duration_s", c->duration_s);
    if (c->message)
        add_text(o, "message", c->message);
    if (c->ran)
        add_text(o, "ran", c->ran);
    if (c->status == CG_ERROR)
        cJSON_AddNumberToObject(o, "error_class", c->error_class);
    if (c->injected >= 0)
        cJSON_AddNumberToObject(o, "injected", (double)c->injected);
    cJSON *rep = cJSON_AddObjectToObject(o, "replicated");
    if (rep) {
        cJSON_AddBoolToObject(rep, "defined", c->replicated_defined);
        add_string_or_null(rep, "reason", c->replicated_reason);
    }
    cJSON *fd = cJSON_AddObjectToObject(o, "finite_difference");
    if (fd) {
        cJSON_AddStringToObject(fd, "status", cg_outcome_name(c->fd_status));
        cJSON_AddNumberToObject(fd, "max_rel_err", c->fd_max_rel_err);
        cJSON_AddNumberToObject(fd, "tolerance", c->fd_tolerance);
        if (c->fd_note)
            add_text(fd, "reason", c->fd_note);
    }
    if (c->nwarnings) {
        cJSON *w = cJSON_AddArrayToObject(o, "warnings");
        for (int i = 0; w && i < c->nwarnings; i++)
            cJSON_AddItemToArray(w, text_json(c->warnings[i]));
    }
    if (c->diag_explanation) {
        cJSON *d = cJSON_AddObjectToObject(o, "diagnosis");
        cJSON *m = d ? cJSON_AddArrayToObject(d, "matches") : NULL;
        for (int i = 0; m && i < c->ndiag; i++)
            cJSON_AddItemToArray(m, text_json(c->diag_matches[i]));
        if (d) {
            add_text(d, "explanation", c->diag_explanation);
            add_string_or_null(d, "see", c->diag_see);
        }
    }
    cJSON *checks = cJSON_AddArrayToObject(o, "checks");
    for (int i = 0; checks && i < c->nchecks; i++)
        cJSON_AddItemToArray(checks, check_json(&c->checks[i]));
    return o;
}

static cJSON *report_json(const cg_report *r)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    char host[256] = "unknown";
    if (gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "unknown");
    host[sizeof host - 1] = '\0';
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    cJSON_AddStringToObject(o, "schema", "collgrad-check/report/1");
    cJSON *tool = cJSON_AddObjectToObject(o, "tool");
    if (tool) {
        cJSON_AddStringToObject(tool, "name", "collgrad-check");
        cJSON_AddStringToObject(tool, "version", CG_VERSION);
    }
    add_text(o, "host", host);
    cJSON_AddStringToObject(o, "written", when);
    add_string_or_null(o, "mode", r->mode);
    add_string_or_null(o, "transport", r->transport);
    add_string_or_null(o, "rules", r->rules);
    add_string_or_null(o, "device", r->device);
    if (r->framework.name) { /* a real framework's run (--backend) */
        cJSON *fw = cJSON_AddObjectToObject(o, "framework");
        const char *keys[] = {"name", "version", "api", "backend", "python", "isolation"};
        const char *vals[] = {r->framework.name, r->framework.version, r->framework.api,
                              r->framework.backend, r->framework.python, r->framework.isolation};
        for (size_t i = 0; fw && i < sizeof keys / sizeof keys[0]; i++)
            add_string_or_null(fw, keys[i], vals[i]);
    }
    if (r->inject_spec) { /* --inject: what the self-test injected */
        cJSON *inj = cJSON_AddObjectToObject(o, "injection");
        if (inj) {
            add_text(inj, "spec", r->inject_spec);
            cJSON_AddNumberToObject(inj, "count", (double)r->injected);
            cJSON_AddStringToObject(inj, "status", r->injected > 0 ? "injected" : "injected nothing");
            add_string_or_null(inj, "reason", r->inject_reason);
        }
    }
    cJSON *cases = cJSON_AddArrayToObject(o, "cases");
    for (int i = 0; cases && i < r->ncases; i++)
        cJSON_AddItemToArray(cases, case_json(&r->cases[i]));
    cJSON *sum = cJSON_AddObjectToObject(o, "summary");
    if (sum) {
        cJSON_AddNumberToObject(sum, "passed", r->passed);
        cJSON_AddNumberToObject(sum, "failed", r->failed);
        cJSON_AddNumberToObject(sum, "errors", r->errors);
        cJSON_AddNumberToObject(sum, "skipped", r->skipped);
    }
    return o;
}

char *cg_case_json_line(const cg_case_result *c)
{
    cJSON *o = case_json(c);
    char *text = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return text;
}

int cg_report_write_json(const cg_report *r, const char *path, cg_status *st)
{
    cJSON *o = report_json(r);
    char *text = o ? cJSON_Print(o) : NULL;
    cJSON_Delete(o);
    size_t n = text ? strlen(text) : 0;
    char *line = text ? malloc(n + 2) : NULL; /* a text file ends with a newline */
    if (!line) {
        cJSON_free(text);
        cg_error_infra(st, "%s: out of memory building the report", path);
        return -1;
    }
    memcpy(line, text, n);
    memcpy(line + n, "\n", 2);
    cJSON_free(text);
    int rc = cg_report_output_write(path, line, st);
    free(line);
    return rc;
}

void cg_json_numbers_text(const cJSON *arr, int max, int digits, char *buf, size_t len)
{
    size_t at = (size_t)snprintf(buf, len, "[");
    int i = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, arr)
    {
        if (at >= len)
            break;
        if (i == max) {
            at += (size_t)snprintf(buf + at, len - at, ", ...");
            break;
        }
        if (cJSON_IsNumber(v))
            at += (size_t)snprintf(buf + at, len - at, "%s%.*g", i ? ", " : "", digits, v->valuedouble);
        else
            at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "",
                                   cJSON_IsString(v) ? v->valuestring : "?");
        i++;
    }
    if (at < len)
        snprintf(buf + at, len - at, "]");
}
