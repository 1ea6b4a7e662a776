/* case_set.c — see case_set.h. */
#define _XOPEN_SOURCE 700 /* realpath(3) */
#include "case_set.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

typedef struct path_list {
    char **p;
    int n, cap;
} path_list;

static int push_path(path_list *l, const char *path)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 64;
        char **p = realloc(l->p, (size_t)cap * sizeof *p);
        if (!p)
            return -1;
        l->p = p;
        l->cap = cap;
    }
    if (!(l->p[l->n] = strdup(path)))
        return -1;
    l->n++;
    return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Every *.case file under dir, recursively. 0, or 3 with a message printed. */
static int walk(path_list *l, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "collgrad-check: %s: cannot open directory: %s\n", dir, strerror(errno));
        return CG_EXIT_INFRA;
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode))
            rc = walk(l, path);
        else if (ends_with(e->d_name, ".case") && push_path(l, path) != 0)
            rc = CG_EXIT_INFRA;
    }
    closedir(d);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_dir(const char *path)
{
    struct stat st;
    return path && path[0] && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* <this executable's dir>/CG_BIN_TO_CASES (../share/collgrad-check/cases),
 * which exists only when the executable is an installed one. */
static bool cases_beside_executable(char *out, size_t len)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return false;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return false;
    *slash = '\0';
    char joined[4096 + 64];
    snprintf(joined, sizeof joined, "%s/%s", exe, CG_BIN_TO_CASES);
    char *clean = realpath(joined, NULL); /* no "bin/.." in the paths reports print */
    if (!clean)
        return false;
    snprintf(out, len, "%s", clean);
    free(clean);
    return is_dir(out);
}

/* Where the built-in cases are, first found: $COLLGRAD_CASES_DIR; the cases
 * installed with this very executable (bin/../share/collgrad-check/cases,
 * so an install moved by `cmake --install --prefix P` still finds them, and
 * an installed binary runs its own version of them even while the source
 * tree is around); the source tree (a build-tree binary); the configured
 * install dir, also returned when nothing exists so the error names it. */
static const char *builtin_cases_dir(void)
{
    static char beside[4096];
    const char *env = getenv("COLLGRAD_CASES_DIR");
    if (env && env[0])
        return env;
    if (cases_beside_executable(beside, sizeof beside))
        return beside;
    if (is_dir(CG_CASES_DIR))
        return CG_CASES_DIR;
    return CG_INSTALLED_CASES_DIR;
}

static int collect(path_list *l, char *const *paths, int npaths)
{
    char *dflt[1];
    if (npaths == 0) {
        dflt[0] = (char *)builtin_cases_dir(); /* only read: paths are char * for argv */
        paths = dflt;
        npaths = 1;
    }
    for (int i = 0; i < npaths; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0) {
            fprintf(stderr, "collgrad-check: %s: cannot read: %s\n", paths[i], strerror(errno));
            return CG_EXIT_USAGE;
        }
        size_t before = (size_t)l->n;
        int rc = S_ISDIR(st.st_mode) ? walk(l, paths[i]) : push_path(l, paths[i]) ? CG_EXIT_INFRA : 0;
        if (rc != 0)
            return rc;
        qsort(l->p + before, (size_t)l->n - before, sizeof *l->p, cmp_str);
    }
    return 0;
}

int cg_case_set_load(cg_case_set *set, char *const *paths, int npaths)
{
    memset(set, 0, sizeof *set);
    path_list l = {0};
    int rc = collect(&l, paths, npaths);
    if (rc == 0 && !(set->cases = calloc((size_t)l.n + 1, sizeof *set->cases)))
        rc = CG_EXIT_INFRA;
    for (int i = 0; rc != CG_EXIT_INFRA && set->cases && i < l.n; i++) {
        char err[CG_ERR_LEN];
        cg_case *c = cg_load_case(l.p[i], err, sizeof err);
        if (c) {
            set->cases[set->n++] = c;
            continue;
        }
        fprintf(stderr, "%s\n", err);
        rc = CG_EXIT_USAGE;
        cg_case_load_error *bad = set->bad ? NULL : calloc((size_t)l.n + 1, sizeof *bad);
        if (bad)
            set->bad = bad;
        if (!set->bad || !(set->bad[set->nbad].file = strdup(l.p[i])) ||
            !(set->bad[set->nbad++].message = strdup(err)))
            rc = CG_EXIT_INFRA;
    }
    for (int i = 0; i < l.n; i++)
        free(l.p[i]);
    free(l.p);
    return rc;
}

int cg_case_set_load_list(cg_case_set *set, const char *list_file)
{
    memset(set, 0, sizeof *set);
    FILE *f = fopen(list_file, "r");
    if (!f) {
        fprintf(stderr, "collgrad-check: %s: cannot read the case list: %s\n", list_file, strerror(errno));
        return CG_EXIT_INFRA;
    }
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    while (rc == 0 && getdelim(&line, &cap, '\0', f) > 0) {
        char err[CG_ERR_LEN];
        cg_case *c = cg_load_case(line, err, sizeof err);
        cg_case **grown = c ? realloc(set->cases, (size_t)(set->n + 2) * sizeof *grown) : NULL;
        if (!c || !grown) {
            fprintf(stderr, "collgrad-check: %s no longer loads (changed during the run?): %s\n", line,
                    c ? "out of memory" : err);
            cg_case_free(c);
            rc = CG_EXIT_INFRA;
            break;
        }
        set->cases = grown;
        set->cases[set->n++] = c;
    }
    if (rc == 0 && ferror(f)) {
        fprintf(stderr, "collgrad-check: %s: cannot read the case list\n", list_file);
        rc = CG_EXIT_INFRA;
    }
    free(line);
    fclose(f);
    return rc;
}

void cg_case_set_free(cg_case_set *set)
{
    for (int i = 0; i < set->n; i++)
        cg_case_free(set->cases[i]);
    free(set->cases);
    for (int i = 0; set->bad && i <= set->nbad; i++) { /* <=: a half-made last entry */
        free(set->bad[i].file);
        free(set->bad[i].message);
    }
    free(set->bad);
    memset(set, 0, sizeof *set);
}
