/* report_same.c — do two reports say the same about the same jobs?
 *
 *   report_same A.json B.json [KEY]...
 *
 * Every case of A must have a case in B with the same (name, world, rules),
 * and the other way round, and the two must agree member by member at every
 * depth: the same members, equal strings, numbers and literals, arrays of
 * the same length. Members named KEY (at any depth) are not compared: what
 * differs from run to run, like duration_s. The test of the launcher's merged
 * report runs the same jobs once under mpiexec directly (rank 0 writes the
 * report) and once through the launcher (the ranks' JSON lines merged).
 *
 * Prints the first difference ("cases[name W=2 rules=reference]/checks/0/numel:
 * 300 vs 256"). Exit 0 the same, 1 different, 2 bad usage or unreadable. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "json_file.h"

static int nignored;
static char **ignored;

static bool is_ignored(const char *key)
{
    for (int i = 0; key && i < nignored; i++)
        if (strcmp(key, ignored[i]) == 0)
            return true;
    return false;
}

static void print_value(const cJSON *x)
{
    char *text = x ? cJSON_PrintUnformatted(x) : NULL;
    printf("%.80s", text ? text : "(absent)");
    cJSON_free(text);
}

static bool differ(const char *path, const cJSON *a, const cJSON *b)
{
    printf("%s: ", path);
    print_value(a);
    printf(" vs ");
    print_value(b);
    printf("\n");
    return false;
}

static bool same(const char *path, const cJSON *a, const cJSON *b);

static bool same_members(const char *path, const cJSON *a, const cJSON *b)
{
    char sub[1024];
    const cJSON *m;
    cJSON_ArrayForEach(m, a)
    {
        if (is_ignored(m->string))
            continue;
        snprintf(sub, sizeof sub, "%s/%s", path, m->string);
        if (!same(sub, m, cJSON_GetObjectItemCaseSensitive(b, m->string)))
            return false;
    }
    cJSON_ArrayForEach(m, b)
    {
        snprintf(sub, sizeof sub, "%s/%s", path, m->string);
        if (!is_ignored(m->string) && !cJSON_GetObjectItemCaseSensitive(a, m->string))
            return differ(sub, NULL, m);
    }
    return true;
}

static bool same(const char *path, const cJSON *a, const cJSON *b)
{
    if (!a || !b || (a->type & 0xFF) != (b->type & 0xFF))
        return differ(path, a, b);
    if (cJSON_IsObject(a))
        return same_members(path, a, b);
    if (cJSON_IsArray(a)) {
        if (cJSON_GetArraySize(a) != cJSON_GetArraySize(b))
            return differ(path, a, b);
        char sub[1024];
        for (int i = 0; i < cJSON_GetArraySize(a); i++) {
            snprintf(sub, sizeof sub, "%s/%d", path, i);
            if (!same(sub, cJSON_GetArrayItem(a, i), cJSON_GetArrayItem(b, i)))
                return false;
        }
        return true;
    }
    if (cJSON_IsString(a))
        return strcmp(a->valuestring, b->valuestring) == 0 || differ(path, a, b);
    if (cJSON_IsNumber(a))
        return a->valuedouble == b->valuedouble || differ(path, a, b);
    return true; /* null, true, false: the type said it all */
}

static bool same_key(const cJSON *a, const cJSON *b)
{
    const cJSON *ra = cJSON_GetObjectItemCaseSensitive(a, "rules"), *rb = cJSON_GetObjectItemCaseSensitive(b, "rules");
    const char *na = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "name"));
    const char *nb = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b, "name"));
    return na && nb && strcmp(na, nb) == 0 &&
           cJSON_Compare(cJSON_GetObjectItemCaseSensitive(a, "world"), cJSON_GetObjectItemCaseSensitive(b, "world"), true) &&
           cJSON_Compare(ra, rb, true);
}

/* Every case of x has its twin in y (and, when compare, the same content). */
static bool covered(const cJSON *x, const cJSON *y, const char *which, bool compare)
{
    const cJSON *c, *d;
    cJSON_ArrayForEach(c, x)
    {
        cJSON_ArrayForEach(d, y)
        {
            if (same_key(c, d))
                break;
        }
        char label[512];
        char *rules = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(c, "rules"));
        snprintf(label, sizeof label, "cases[%s W=%g rules=%s]",
                 cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "name")),
                 cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(c, "world")), rules ? rules : "?");
        cJSON_free(rules);
        if (!d) {
            printf("%s: only in %s\n", label, which);
            return false;
        }
        if (compare && !same(label, c, d))
            return false;
    }
    return true;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: report_same A.json B.json [IGNORED_KEY]...\n");
        return 2;
    }
    nignored = argc - 3;
    ignored = argv + 3;
    char err[1024];
    cJSON *a = cg_json_load_file(argv[1], err, sizeof err), *b = a ? cg_json_load_file(argv[2], err, sizeof err) : NULL;
    const cJSON *ca = cJSON_GetObjectItemCaseSensitive(a, "cases"), *cb = cJSON_GetObjectItemCaseSensitive(b, "cases");
    int rc = 2;
    if (!a || !b)
        fprintf(stderr, "report_same: %s\n", err);
    else if (!cJSON_IsArray(ca) || !cJSON_IsArray(cb))
        fprintf(stderr, "report_same: a report has no cases array\n");
    else
        rc = covered(ca, cb, argv[1], true) && covered(cb, ca, argv[2], false) ? 0 : 1;
    cJSON_Delete(a);
    cJSON_Delete(b);
    return rc;
}
