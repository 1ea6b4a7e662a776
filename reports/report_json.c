/* report_json.c — the JSON report (schema "collgrad-check/report/1").
 *
 * Written atomically: into "FILE.tmp.PID", then rename(2) over FILE, so a
 * reader never sees half a report and a crash leaves the previous one. */
#include "report_json.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { MAX_VALUES = 256 }; /* values per check written out; larger ones are truncated */

static cJSON *values_json(const double *v, int64_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (int64_t i = 0; a && v && i < n && i < MAX_VALUES; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
    return a;
}

static void add_string_or_null(cJSON *o, const char *key, const char *s)
{
    if (s)
        cJSON_AddStringToObject(o, key, s);
    else
        cJSON_AddNullToObject(o, key);
}

static cJSON *check_json(const cg_check *k)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "tensor", k->tensor);
    cJSON_AddNumberToObject(o, "rank", k->rank);
    cJSON_AddStringToObject(o, "semantics", k->semantics);
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
    cJSON_AddStringToObject(o, "status", cg_status_name(k->status));
    if (k->note)
        cJSON_AddStringToObject(o, "note", k->note);
    return o;
}

static cJSON *case_json(const cg_case_result *c)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "name", c->name);
    add_string_or_null(o, "file", c->file);
    add_string_or_null(o, "source", c->source);
    cJSON_AddNumberToObject(o, "world", c->world);
    add_string_or_null(o, "rules", c->rules);
    cJSON_AddStringToObject(o, "status", cg_status_name(c->status));
    cJSON_AddNumberToObject(o, "duration_s", c->duration_s);
    if (c->message)
        cJSON_AddStringToObject(o, "message", c->message);
    if (c->status == CG_ERROR)
        cJSON_AddNumberToObject(o, "error_class", c->error_class);
    cJSON *rep = cJSON_AddObjectToObject(o, "replicated");
    if (rep) {
        cJSON_AddBoolToObject(rep, "defined", c->replicated_defined);
        add_string_or_null(rep, "reason", c->replicated_reason);
    }
    cJSON *fd = cJSON_AddObjectToObject(o, "finite_difference");
    if (fd) {
        cJSON_AddStringToObject(fd, "status", cg_status_name(c->fd_status));
        cJSON_AddNumberToObject(fd, "max_rel_err", c->fd_max_rel_err);
        cJSON_AddNumberToObject(fd, "tolerance", c->fd_tolerance);
        if (c->fd_note)
            cJSON_AddStringToObject(fd, "reason", c->fd_note);
    }
    if (c->nwarnings) {
        cJSON *w = cJSON_AddArrayToObject(o, "warnings");
        for (int i = 0; w && i < c->nwarnings; i++)
            cJSON_AddItemToArray(w, cJSON_CreateString(c->warnings[i]));
    }
    if (c->diag_explanation) {
        cJSON *d = cJSON_AddObjectToObject(o, "diagnosis");
        cJSON *m = d ? cJSON_AddArrayToObject(d, "matches") : NULL;
        for (int i = 0; m && i < c->ndiag; i++)
            cJSON_AddItemToArray(m, cJSON_CreateString(c->diag_matches[i]));
        if (d) {
            cJSON_AddStringToObject(d, "explanation", c->diag_explanation);
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
    cJSON_AddStringToObject(o, "host", host);
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

int cg_write_file_atomic(const char *path, const char *text, char *err, size_t errlen)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        snprintf(err, errlen, "%s: cannot write: %s", tmp, strerror(errno));
        return -1;
    }
    int bad = fputs(text, f) < 0;
    bad |= fflush(f) != 0;
    bad |= fsync(fileno(f)) != 0 && errno != EINVAL;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

int cg_report_write_json(const cg_report *r, const char *path, char *err, size_t errlen)
{
    cJSON *o = report_json(r);
    char *text = o ? cJSON_Print(o) : NULL;
    cJSON_Delete(o);
    if (!text) {
        snprintf(err, errlen, "%s: out of memory building the report", path);
        return -1;
    }
    int rc = cg_write_file_atomic(path, text, err, errlen);
    cJSON_free(text);
    return rc;
}
