/* report_read.c — JSON back into results: the launcher reads the job lines
 * its workers wrote (report_json.h). Every field cg_case_json_line writes is
 * read back, so the merged report says what the ranks said
 * (tests/test_report_io.c writes, reads and writes again, and compares). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
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

/* The comparisons come first and the cast after: converting a double
 * outside int's range (1e308, a hand-edited report) is undefined behaviour. */
int cg_json_int(const cJSON *o, const char *key, int dflt)
{
    double v = cg_json_num(o, key, NAN);
    return v >= INT_MIN && v <= INT_MAX && v == floor(v) ? (int)v : dflt;
}

int64_t cg_json_int64(const cJSON *o, const char *key, int64_t dflt)
{
    double v = cg_json_num(o, key, NAN);
    /* 2^63 is exact as a double; INT64_MAX is not, and rounds up to it */
    return v >= -0x1p63 && v < 0x1p63 && v == floor(v) ? (int64_t)v : dflt;
}

static cg_outcome outcome_of(const char *s)
{
    if (!s)
        return CG_ERROR;
    for (int k = CG_PASS; k <= CG_SKIP; k++)
        if (strcmp(s, cg_outcome_name((cg_outcome)k)) == 0)
            return (cg_outcome)k;
    return CG_ERROR;
}

/* The values array o[key], padded with NaN to numel elements: a report
 * holds only the first few values of a large tensor ("truncated"), but every
 * reader of a check may index expected and observed up to numel. NULL on OOM,
 * or when the array is longer than numel (a malformed line). */
static double *values_of(const cJSON *o, const char *key, int64_t numel)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key);
    int count = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;
    if (numel < count || (uint64_t)numel >= SIZE_MAX / sizeof(double))
        return NULL;
    double *v = malloc(((size_t)numel + 1) * sizeof *v);
    if (!v)
        return NULL;
    int64_t i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, a)
    {
        v[i++] = cJSON_IsNumber(e) ? e->valuedouble : NAN; /* JSON has no NaN or Inf: written as null */
    }
    for (; i < numel; i++)
        v[i] = NAN;
    return v;
}

static int read_check(cg_case_result *c, const cJSON *k)
{
    const char *sem = cg_json_str(k, "semantics");
    cg_check *chk = cg_case_add_note(c, cg_json_str(k, "tensor"), cg_json_int(k, "rank", -1), sem ? sem : "?",
                                     cg_json_str(k, "rules"), outcome_of(cg_json_str(k, "status")),
                                     cg_json_str(k, "note"));
    if (!chk)
        return -1;
    const char *against = cg_json_str(k, "against");
    chk->against = against ? strdup(against) : NULL;
    double numel = cg_json_num(k, "numel", -1);
    if (!(numel >= 0 && numel <= (double)INT64_MAX) || (against && !chk->against))
        return -1;
    chk->numel = (int64_t)numel;
    chk->expected = values_of(k, "expected", chk->numel);
    chk->observed = values_of(k, "observed", chk->numel);
    chk->max_abs_err = cg_json_num(k, "max_abs_err", NAN); /* null: NaN or Inf was written */
    chk->max_rel_err = cg_json_num(k, "max_rel_err", NAN);
    chk->max_ulp = cg_json_num(k, "max_ulp", NAN);
    chk->first_bad = cg_json_int64(k, "first_bad_index", -1);
    if (!chk->expected || !chk->observed)
        return -1;
    /* the first differing element travels on its own: it may lie past the
     * values a truncated check carries */
    if (chk->first_bad >= 0 && chk->first_bad < chk->numel) {
        chk->expected[chk->first_bad] = cg_json_num(k, "first_bad_expected", NAN);
        chk->observed[chk->first_bad] = cg_json_num(k, "first_bad_observed", NAN);
    }
    return 0;
}

/* The diagnosis object, if any, into c. 0 or -1 on OOM. */
static int read_diagnosis(cg_case_result *c, const cJSON *d)
{
    if (!cJSON_IsObject(d))
        return 0;
    const cJSON *matches = cJSON_GetObjectItemCaseSensitive(d, "matches");
    int n = cJSON_IsArray(matches) ? cJSON_GetArraySize(matches) : 0;
    const char **names = malloc(((size_t)n + 1) * sizeof *names);
    if (!names)
        return -1;
    int k = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, matches)
    {
        if (cJSON_IsString(item))
            names[k++] = item->valuestring;
    }
    cg_case_set_diagnosis(c, names, k, cg_json_str(d, "explanation"), cg_json_str(d, "see"));
    free(names);
    return c->ndiag == k ? 0 : -1;
}

int cg_case_from_json_line(cg_report *r, const char *line)
{
    cJSON *o = cJSON_Parse(line);
    if (!o)
        return -1;
    cg_case_result *c = cg_report_add_case(r, cg_json_str(o, "name"), cg_json_str(o, "file"), cg_json_str(o, "source"),
                                           cg_json_int(o, "world", 0));
    int rc = c ? 0 : -1;
    if (c) {
        c->status = outcome_of(cg_json_str(o, "status"));
        cg_case_set_rules(c, cg_json_str(o, "rules"));
        c->duration_s = cg_json_num(o, "duration_s", 0);
        c->error_class = cg_json_int(o, "error_class", 0);
        c->injected = (long)cg_json_int64(o, "injected", -1);
        const char *m = cg_json_str(o, "message");
        c->message = m ? strdup(m) : NULL;
        const char *ran = cg_json_str(o, "ran");
        c->ran = ran ? strdup(ran) : NULL;
        const cJSON *rep = cJSON_GetObjectItemCaseSensitive(o, "replicated");
        c->replicated_defined = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rep, "defined"));
        const char *why = cg_json_str(rep, "reason");
        c->replicated_reason = why ? strdup(why) : NULL;
        const cJSON *fd = cJSON_GetObjectItemCaseSensitive(o, "finite_difference");
        c->fd_status = outcome_of(cg_json_str(fd, "status"));
        c->fd_max_rel_err = cg_json_num(fd, "max_rel_err", NAN);
        c->fd_tolerance = cg_json_num(fd, "tolerance", NAN);
        const char *fdr = cg_json_str(fd, "reason");
        c->fd_note = fdr ? strdup(fdr) : NULL;
        const cJSON *wi;
        cJSON_ArrayForEach(wi, cJSON_GetObjectItemCaseSensitive(o, "warnings"))
        {
            if (cJSON_IsString(wi) && cg_case_add_warning(c, wi->valuestring) != 0)
                rc = -1;
        }
        if (read_diagnosis(c, cJSON_GetObjectItemCaseSensitive(o, "diagnosis")) != 0)
            rc = -1;
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

/* The whole file, NUL-terminated in *len bytes (caller frees), or NULL with st. */
static char *read_whole(const char *path, size_t *len, cg_status *st)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        cg_error(st, "%s: cannot read: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *text = malloc(cap);
    while (text) {
        n += fread(text + n, 1, cap - n - 1, f);
        if (ferror(f) || feof(f) || n + 1 < cap)
            break;
        char *bigger = realloc(text, cap *= 2);
        if (!bigger)
            free(text);
        text = bigger;
    }
    bool bad = !text || ferror(f);
    if (fclose(f) != 0 || bad) {
        cg_error_infra(st, "%s: cannot read: %s", path, text ? strerror(errno) : "out of memory");
        free(text);
        return NULL;
    }
    text[n] = '\0';
    *len = n;
    return text;
}

/* A report has our schema, a cases array, and every case a name and a world
 * (a whole number of ranks; 0 for a case that never got as far as one). */
static bool looks_like_report(const cJSON *root)
{
    const char *schema = cg_json_str(root, "schema");
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(root, "cases");
    if (!schema || strncmp(schema, "collgrad-check/report/", 22) != 0 || !cJSON_IsArray(cases))
        return false;
    const cJSON *c;
    cJSON_ArrayForEach(c, cases)
    {
        if (!cg_json_str(c, "name") || cg_json_int(c, "world", -1) < 0)
            return false;
    }
    return true;
}

cJSON *cg_report_json_load(const char *path, cg_status *st)
{
    size_t n;
    char *text = read_whole(path, &n, st);
    if (!text)
        return NULL;
    cJSON *root = cJSON_ParseWithLength(text, n);
    free(text);
    if (!root || !looks_like_report(root)) {
        cg_error(st, "%s: not a collgrad-check report", path);
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}
