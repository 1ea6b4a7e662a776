/* report_read.c — JSON back into results: the launcher reads the job lines
 * its workers wrote (report_json.h). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_json.h"

static const char *str_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double num_of(const cJSON *o, const char *key, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

static cg_status status_of(const char *s)
{
    if (!s)
        return CG_ERROR;
    for (int k = CG_PASS; k <= CG_SKIP; k++)
        if (strcmp(s, cg_status_name((cg_status)k)) == 0)
            return (cg_status)k;
    return CG_ERROR;
}

static double *values_of(const cJSON *o, const char *key, int64_t *n)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key);
    int count = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;
    double *v = malloc(((size_t)count + 1) * sizeof *v);
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, a)
    {
        if (v) /* JSON has no NaN or Inf: cJSON wrote them as null */
            v[i++] = cJSON_IsNumber(e) ? e->valuedouble : NAN;
    }
    *n = count;
    return v;
}

static int read_check(cg_case_result *c, const cJSON *k)
{
    cg_check *chk = cg_case_add_note(c, str_of(k, "tensor"), (int)num_of(k, "rank", -1),
                                     str_of(k, "semantics") ? str_of(k, "semantics") : "?", str_of(k, "rules"),
                                     status_of(str_of(k, "status")), str_of(k, "note"));
    if (!chk)
        return -1;
    const char *against = str_of(k, "against");
    chk->against = against ? strdup(against) : NULL;
    int64_t ne, no;
    chk->expected = values_of(k, "expected", &ne);
    chk->observed = values_of(k, "observed", &no);
    chk->numel = ne < no ? ne : no;
    chk->max_abs_err = num_of(k, "max_abs_err", 0);
    chk->max_rel_err = num_of(k, "max_rel_err", 0);
    chk->max_ulp = num_of(k, "max_ulp", 0);
    chk->first_bad = (int64_t)num_of(k, "first_bad_index", -1);
    return chk->expected && chk->observed ? 0 : -1;
}

int cg_case_from_json_line(cg_report *r, const char *line)
{
    cJSON *o = cJSON_Parse(line);
    if (!o)
        return -1;
    cg_case_result *c = cg_report_add_case(r, str_of(o, "name"), str_of(o, "file"), str_of(o, "source"),
                                           (int)num_of(o, "world", 0));
    int rc = c ? 0 : -1;
    if (c) {
        c->status = status_of(str_of(o, "status"));
        cg_case_set_rules(c, str_of(o, "rules"));
        c->duration_s = num_of(o, "duration_s", 0);
        c->error_class = (int)num_of(o, "error_class", 0);
        const char *m = str_of(o, "message");
        c->message = m ? strdup(m) : NULL;
        const cJSON *rep = cJSON_GetObjectItemCaseSensitive(o, "replicated");
        c->replicated_defined = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rep, "defined"));
        const char *why = str_of(rep, "reason");
        c->replicated_reason = why ? strdup(why) : NULL;
        const cJSON *fd = cJSON_GetObjectItemCaseSensitive(o, "finite_difference");
        c->fd_status = status_of(str_of(fd, "status"));
        c->fd_max_rel_err = num_of(fd, "max_rel_err", 0);
        c->fd_tolerance = num_of(fd, "tolerance", 0);
        const char *fdr = str_of(fd, "reason");
        c->fd_note = fdr ? strdup(fdr) : NULL;
        const cJSON *wi;
        cJSON_ArrayForEach(wi, cJSON_GetObjectItemCaseSensitive(o, "warnings"))
        {
            if (cJSON_IsString(wi) && cg_case_add_warning(c, wi->valuestring) != 0)
                rc = -1;
        }
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(o, "diagnosis");
        if (d) {
            const char *names[32];
            int n = 0;
            const cJSON *item;
            cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(d, "matches"))
            {
                if (n < 32 && cJSON_IsString(item))
                    names[n++] = item->valuestring;
            }
            cg_case_set_diagnosis(c, names, n, str_of(d, "explanation"), str_of(d, "see"));
        }
        const cJSON *k;
        cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(o, "checks"))
        {
            if (rc == 0)
                rc = read_check(c, k);
        }
    }
    cJSON_Delete(o);
    return rc;
}
