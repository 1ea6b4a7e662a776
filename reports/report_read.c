/* report_read.c — JSON back into results: the launcher reads the job lines
 * its workers wrote (report_json.h). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_json.h"

const char *cg_json_str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

double cg_json_num(const cJSON *o, const char *key, double dflt)
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
    cg_check *chk = cg_case_add_note(c, cg_json_str(k, "tensor"), (int)cg_json_num(k, "rank", -1),
                                     cg_json_str(k, "semantics") ? cg_json_str(k, "semantics") : "?", cg_json_str(k, "rules"),
                                     status_of(cg_json_str(k, "status")), cg_json_str(k, "note"));
    if (!chk)
        return -1;
    const char *against = cg_json_str(k, "against");
    chk->against = against ? strdup(against) : NULL;
    int64_t ne, no;
    chk->expected = values_of(k, "expected", &ne);
    chk->observed = values_of(k, "observed", &no);
    chk->numel = ne < no ? ne : no;
    chk->max_abs_err = cg_json_num(k, "max_abs_err", 0);
    chk->max_rel_err = cg_json_num(k, "max_rel_err", 0);
    chk->max_ulp = cg_json_num(k, "max_ulp", 0);
    chk->first_bad = (int64_t)cg_json_num(k, "first_bad_index", -1);
    return chk->expected && chk->observed ? 0 : -1;
}

int cg_case_from_json_line(cg_report *r, const char *line)
{
    cJSON *o = cJSON_Parse(line);
    if (!o)
        return -1;
    cg_case_result *c = cg_report_add_case(r, cg_json_str(o, "name"), cg_json_str(o, "file"), cg_json_str(o, "source"),
                                           (int)cg_json_num(o, "world", 0));
    int rc = c ? 0 : -1;
    if (c) {
        c->status = status_of(cg_json_str(o, "status"));
        cg_case_set_rules(c, cg_json_str(o, "rules"));
        c->duration_s = cg_json_num(o, "duration_s", 0);
        c->error_class = (int)cg_json_num(o, "error_class", 0);
        const char *m = cg_json_str(o, "message");
        c->message = m ? strdup(m) : NULL;
        const cJSON *rep = cJSON_GetObjectItemCaseSensitive(o, "replicated");
        c->replicated_defined = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rep, "defined"));
        const char *why = cg_json_str(rep, "reason");
        c->replicated_reason = why ? strdup(why) : NULL;
        const cJSON *fd = cJSON_GetObjectItemCaseSensitive(o, "finite_difference");
        c->fd_status = status_of(cg_json_str(fd, "status"));
        c->fd_max_rel_err = cg_json_num(fd, "max_rel_err", 0);
        c->fd_tolerance = cg_json_num(fd, "tolerance", 0);
        const char *fdr = cg_json_str(fd, "reason");
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
            cg_case_set_diagnosis(c, names, n, cg_json_str(d, "explanation"), cg_json_str(d, "see"));
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
