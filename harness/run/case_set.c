/* case_set.c — loading, checking and filtering a set of cases (case_set.h);
 * finding their files is case_files.c's. */
#include "case_set.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case_files.h"
#include "cli.h"
#include "rules.h"

int cg_case_set_load(cg_case_set *set, char *const *paths, int npaths, const cg_limits *lim)
{
    memset(set, 0, sizeof *set);
    cg_case_files l;
    int rc = cg_case_files_find(&l, paths, npaths, set->refusal, sizeof set->refusal);
    if (rc == 0 && !(set->cases = calloc((size_t)l.n + 1, sizeof *set->cases)))
        rc = CG_EXIT_INFRA;
    for (int i = 0; rc != CG_EXIT_INFRA && set->cases && i < l.n; i++) {
        cg_status st = CG_STATUS_OK;
        cg_case *c = cg_load_case(l.paths[i], lim, &st);
        if (c) {
            set->cases[set->n++] = c;
            continue;
        }
        fprintf(stderr, "%s\n", st.msg);
        rc = CG_EXIT_USAGE;
        cg_case_load_error *bad = set->bad ? NULL : calloc((size_t)l.n + 1, sizeof *bad);
        if (bad)
            set->bad = bad;
        if (!set->bad || !(set->bad[set->nbad].file = strdup(l.paths[i])) ||
            !(set->bad[set->nbad++].message = strdup(st.msg)))
            rc = CG_EXIT_INFRA;
    }
    cg_case_files_free(&l);
    return rc;
}

/* The rule-set name of x, when no registered rule set has it: one line
 * naming every name that would do. 0, or -1 when the name is known. */
static int unknown_rules(const cg_case *cs, const cg_expect *x, const char *plugin_name, cg_status *st)
{
    if (!x->rules || cg_rules_find(x->rules) || (plugin_name && strcmp(x->rules, plugin_name) == 0))
        return -1;
    char names[CG_ERR_LEN] = "";
    size_t used = 0;
    const cg_rules *const *all = cg_rules_all();
    for (int i = 0; all[i] && used < sizeof names; i++)
        used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "", all[i]->name);
    char plugin[300] = "";
    if (plugin_name)
        snprintf(plugin, sizeof plugin, ", or %s of the --rules plugin", plugin_name);
    cg_error_at(st, (cg_srcpos){cs->file, x->rules_pos.line, x->rules_pos.col},
                "expected a registered rule set (%s%s), got '%s'", names, plugin, x->rules);
    return 0;
}

/* Move set->cases[i] to the load errors with message err. 0 or -1 (OOM). */
static int move_to_bad(cg_case_set *set, int i, const char *err)
{
    cg_case_load_error *bad = realloc(set->bad, (size_t)(set->nbad + 2) * sizeof *bad);
    if (!bad)
        return -1;
    set->bad = bad;
    memset(&bad[set->nbad], 0, 2 * sizeof *bad); /* the entry and the spare slot free() reads */
    if (!(bad[set->nbad].file = strdup(set->cases[i]->file)) || !(bad[set->nbad].message = strdup(err)))
        return -1;
    set->nbad++;
    cg_case_free(set->cases[i]);
    memmove(&set->cases[i], &set->cases[i + 1], (size_t)(set->n - i) * sizeof *set->cases); /* NULL too */
    set->n--;
    return 0;
}

int cg_case_set_check_rules(cg_case_set *set, const char *plugin_name)
{
    int rc = 0;
    for (int i = 0; i < set->n;) {
        const cg_case *cs = set->cases[i];
        cg_status st = CG_STATUS_OK;
        bool bad = false;
        for (int k = 0; k < cs->nexpects && !bad; k++)
            bad = unknown_rules(cs, cs->expects[k], plugin_name, &st) == 0;
        if (!bad) {
            i++;
            continue;
        }
        fprintf(stderr, "%s\n", st.msg);
        if (move_to_bad(set, i, st.msg) != 0)
            return CG_EXIT_INFRA;
        rc = CG_EXIT_USAGE;
    }
    return rc;
}

/* The name a bad file's errored test gets: its base name less ".case"
 * (the run's reports name it the same way, run_oracle.c). */
static void bad_name(const char *file, char *name, size_t len)
{
    const char *slash = strrchr(file, '/');
    snprintf(name, len, "%s", slash ? slash + 1 : file);
    char *dot = strstr(name, ".case");
    if (dot && dot[5] == '\0')
        *dot = '\0';
}

static bool selected(const regex_t *inc, const regex_t *exc, const char *name)
{
    return (!inc || regexec(inc, name, 0, NULL, 0) == 0) && (!exc || regexec(exc, name, 0, NULL, 0) != 0);
}

static int compile(regex_t *re, const char *flag, const char *pattern, cg_status *st)
{
    int rc = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB);
    if (rc == 0)
        return 0;
    char why[128];
    regerror(rc, re, why, sizeof why);
    cg_error(st, "expected a POSIX extended regular expression after %s, got '%s' (%s)", flag, pattern,
             why);
    return -1;
}

int cg_case_set_filter(cg_case_set *set, const char *include, const char *exclude, cg_status *st)
{
    if (!include && !exclude)
        return 0;
    regex_t inc, exc;
    if (include && compile(&inc, "-R", include, st) != 0)
        return CG_EXIT_USAGE;
    if (exclude && compile(&exc, "-E", exclude, st) != 0) {
        if (include)
            regfree(&inc);
        return CG_EXIT_USAGE;
    }
    const regex_t *pi = include ? &inc : NULL, *pe = exclude ? &exc : NULL;
    /* what exists, for the message when nothing is left */
    char names[1024] = "";
    size_t used = 0;
    int total = set->n + set->nbad, kept = 0, kept_bad = 0;
    for (int i = 0; i < set->n; i++) {
        if (used < sizeof names)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "", set->cases[i]->name);
        if (selected(pi, pe, set->cases[i]->name))
            set->cases[kept++] = set->cases[i];
        else
            cg_case_free(set->cases[i]);
    }
    set->n = kept;
    set->cases[kept] = NULL;
    for (int i = 0; i < set->nbad; i++) {
        char name[256];
        bad_name(set->bad[i].file, name, sizeof name);
        if (selected(pi, pe, name)) {
            set->bad[kept_bad++] = set->bad[i];
            continue;
        }
        free(set->bad[i].file);
        free(set->bad[i].message);
    }
    if (set->bad) /* the spare entry cg_case_set_free reads */
        memset(&set->bad[kept_bad], 0, sizeof *set->bad);
    set->nbad = kept_bad;
    if (include)
        regfree(&inc);
    if (exclude)
        regfree(&exc);
    if (kept + kept_bad > 0)
        return 0;
    if (used >= sizeof names)
        memcpy(names + sizeof names - 5, "...", 4);
    char inc_part[160] = "", exc_part[160] = "";
    if (include)
        snprintf(inc_part, sizeof inc_part, "-R '%s'%s", include, exclude ? " with " : "");
    if (exclude)
        snprintf(exc_part, sizeof exc_part, "-E '%s'", exclude);
    cg_error(st, "%s%s matches no case; the %d cases are: %s", inc_part, exc_part, total, names);
    return CG_EXIT_USAGE;
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
