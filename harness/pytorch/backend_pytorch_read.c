/* backend_pytorch_read.c — the Python ranks' result lines
 * (python/collgrad_torch/runner/results.py) into jobs: outcome, exception,
 * warnings and each final binding's value and gradient. Only complete
 * lines are consumed, so a file read while the rank writes it is read again
 * from the same place next time. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_pytorch_internal.h"
#include "report_json.h"

static char *dup_str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) && v->valuestring ? strdup(v->valuestring) : NULL;
}

void cg_pt_rank_free(cg_pt_rank *r)
{
    char *strings[] = {r->type, r->message, r->phase, r->at, r->by, r->origin, r->reason, r->ran};
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++)
        free(strings[i]);
    for (int i = 0; i < r->nwarnings; i++)
        free(r->warnings[i]);
    free(r->warnings);
    for (int i = 0; i < r->obs.ntensors; i++) {
        free(r->obs.tensors[i].name);
        free(r->obs.tensors[i].value);
        free(r->obs.tensors[i].grad);
    }
    free(r->obs.tensors);
    free(r->obs.error);
    memset(r, 0, sizeof *r);
}

void cg_pt_hello_free(cg_pt_hello *h)
{
    free(h->torch);
    free(h->python);
    free(h->python_version);
    free(h->backend_name);
    free(h->api_unavailable);
    memset(h, 0, sizeof *h);
}

/* A number as results.py writes it: a JSON number, or "nan", "inf", "-inf". */
static bool number_of(const cJSON *v, double *out)
{
    if (cJSON_IsNumber(v)) {
        *out = v->valuedouble;
        return true;
    }
    if (!cJSON_IsString(v))
        return false;
    if (strcmp(v->valuestring, "nan") == 0)
        *out = NAN;
    else if (strcmp(v->valuestring, "inf") == 0)
        *out = INFINITY;
    else if (strcmp(v->valuestring, "-inf") == 0)
        *out = -INFINITY;
    else
        return false;
    return true;
}

/* n values from a JSON array (NULL: zeros, a gradient that never arrived).
 * NULL when the array is malformed or of another length. */
static double *values_of(const cJSON *a, int64_t n)
{
    double *v = calloc((size_t)n + 1, sizeof *v);
    if (!v || cJSON_IsNull(a) || !a)
        return v;
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != n) {
        free(v);
        return NULL;
    }
    int64_t i = 0;
    for (const cJSON *x = a->child; x; x = x->next, i++)
        if (!number_of(x, &v[i])) {
            free(v);
            return NULL;
        }
    return v;
}

static bool tensor_of(const cJSON *o, cg_obs_tensor *t)
{
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(o, "shape");
    if (!cJSON_IsArray(shape) || cJSON_GetArraySize(shape) > CG_MAX_DIMS || !(t->name = dup_str(o, "name")))
        return false;
    t->numel = 1;
    for (const cJSON *d = shape->child; d; d = d->next) {
        if (!cJSON_IsNumber(d) || d->valuedouble < 0 || d->valuedouble > 1e9)
            return false;
        t->shape[t->ndim++] = (int64_t)d->valuedouble;
        t->numel *= (int64_t)d->valuedouble;
    }
    if (t->numel > 100000000)
        return false;
    t->value = values_of(cJSON_GetObjectItemCaseSensitive(o, "value"), t->numel);
    t->grad = values_of(cJSON_GetObjectItemCaseSensitive(o, "grad"), t->numel);
    return t->value && t->grad && !cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "value"));
}

static bool warnings_of(const cJSON *a, cg_pt_rank *r)
{
    int n = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;
    r->warnings = calloc((size_t)n + 1, sizeof *r->warnings);
    if (!r->warnings)
        return false;
    for (const cJSON *w = n ? a->child : NULL; w; w = w->next) {
        char line[1024];
        const char *cat = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(w, "category"));
        const char *phase = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(w, "phase"));
        const char *at = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(w, "at"));
        const char *msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(w, "message"));
        snprintf(line, sizeof line, "%s at %s (%s): %s", cat ? cat : "Warning", phase ? phase : "?",
                 at && at[0] ? at : "?", msg ? msg : "");
        if (!(r->warnings[r->nwarnings] = strdup(line)))
            return false;
        r->nwarnings++;
    }
    return true;
}

/* The error line the diff and the diagnosis see for a rank that raised:
 * "at:  Type at phase: message" (the position first, as the tool's own
 * errors read, so the diagnosis can tell which statement raised). */
static char *error_line(const cg_pt_rank *r)
{
    size_t n = strlen(r->message ? r->message : "") + 256 + strlen(r->at ? r->at : "");
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s: %s at %s: %s", r->at ? r->at : "?", r->type ? r->type : "Exception",
                 r->phase ? r->phase : "?", r->message ? r->message : "");
    return s;
}

static int job_line(const cJSON *o, int rank, cg_pt_job *jobs, int njobs, cg_status *st)
{
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "job");
    const char *outcome = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "outcome"));
    if (!cJSON_IsNumber(k) || k->valuedouble < 0 || k->valuedouble >= njobs || !outcome) {
        cg_error(st, "rank %d wrote a job line without a known job number and outcome", rank);
        return -1;
    }
    cg_pt_job *job = &jobs[(int)k->valuedouble];
    cg_pt_rank *r = &job->ranks[rank];
    if (r->outcome != CG_PT_PENDING) {
        cg_error(st, "rank %d reported job %d twice", rank, (int)k->valuedouble);
        return -1;
    }
    static const char *const names[] = {"", "ok", "raised", "hang", "skipped"};
    for (int i = CG_PT_OK; i <= CG_PT_SKIPPED; i++)
        if (strcmp(outcome, names[i]) == 0)
            r->outcome = (cg_pt_outcome)i;
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "error");
    if (cJSON_IsObject(e)) {
        r->type = dup_str(e, "type");
        r->message = dup_str(e, "message");
        r->phase = dup_str(e, "phase");
        r->at = dup_str(e, "at");
        r->by = dup_str(e, "by");
        r->origin = dup_str(e, "origin");
    }
    r->reason = dup_str(o, "reason");
    r->ran = dup_str(o, "ran");
    r->seconds = cg_json_num(o, "seconds", 0.0);
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(o, "tensors");
    int nt = cJSON_IsArray(ts) ? cJSON_GetArraySize(ts) : 0;
    r->obs.tensors = calloc((size_t)nt + 1, sizeof *r->obs.tensors);
    bool ok = r->outcome != CG_PT_PENDING && r->obs.tensors &&
              warnings_of(cJSON_GetObjectItemCaseSensitive(o, "warnings"), r);
    for (const cJSON *t = nt ? ts->child : NULL; ok && t; t = t->next)
        ok = tensor_of(t, &r->obs.tensors[r->obs.ntensors++]);
    if (ok && (r->outcome == CG_PT_RAISED || r->outcome == CG_PT_HANG))
        ok = (r->obs.error = error_line(r)) != NULL;
    if (!ok) {
        cg_error(st, "rank %d's line for job %d is malformed (outcome '%s')", rank,
                 (int)k->valuedouble, outcome);
        return -1;
    }
    job->reported++;
    return 0;
}

static void hello_line(const cJSON *h, cg_pt_hello *hello)
{
    if (hello->seen)
        return;
    hello->seen = true;
    hello->torch = dup_str(h, "torch");
    if (!hello->torch) /* collgrad_jax.runner's hello names jax's version */
        hello->torch = dup_str(h, "jax");
    hello->python = dup_str(h, "python");
    hello->python_version = dup_str(h, "python_version");
    hello->backend_name = dup_str(h, "backend_name");
    hello->api_unavailable = dup_str(h, "api_unavailable");
}

int cg_pt_read_rank(cg_pt_reader *rd, int rank, cg_pt_job *jobs, int njobs, cg_pt_hello *hello,
                    cg_pt_fatal *fatal, cg_status *st)
{
    FILE *f = fopen(rd->path, "r");
    if (!f)
        return 0; /* not written yet */
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int n = 0;
    if (fseek(f, rd->offset, SEEK_SET) != 0)
        len = -1;
    while ((len = getline(&line, &cap, f)) > 0 && line[len - 1] == '\n') {
        rd->offset += len;
        cJSON *o = cJSON_Parse(line);
        const cJSON *h = cJSON_GetObjectItemCaseSensitive(o, "hello");
        const char *why = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "fatal"));
        if (cJSON_IsObject(h)) {
            hello_line(h, hello);
        } else if (why) {
            if (!fatal->why) {
                fatal->why = strdup(why);
                fatal->usage = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "class")) == CG_EXIT_USAGE;
            }
        } else if (!o || job_line(o, rank, jobs, njobs, st) != 0) {
            if (!o)
                cg_error(st, "rank %d wrote a line that is not JSON", rank);
            n = -1;
        } else {
            n++;
        }
        cJSON_Delete(o);
        if (n < 0)
            break;
    }
    free(line);
    fclose(f);
    return n;
}
