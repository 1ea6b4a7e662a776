/* jobs.c — see jobs.h. */
#include "jobs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "rules.h"
#include "runner.h"

static bool applies(const cg_expect *x, int w)
{
    return x->kind == CG_X_ERROR || cg_expect_applies(x, w);
}

/* A built-in rule set by its table's own name, the version included
 * ("torch-nn" runs as "torch-nn@1.13", and reports say so); a plugin's name
 * as it is. */
static const char *full_name(const char *name)
{
    const cg_rules *r = cg_rules_find(name);
    return r ? r->name : name;
}

/* Rule sets other than reference that the case's expectations name at w. */
static int emulations(const cg_case *cs, int w, const char **names, int max)
{
    int n = 0;
    for (int i = 0; i < cs->nexpects; i++) {
        const cg_expect *x = cs->expects[i];
        if (!x->rules || strcmp(x->rules, "reference") == 0 || !applies(x, w))
            continue;
        const char *name = full_name(x->rules);
        bool seen = false;
        for (int k = 0; k < n; k++)
            seen |= strcmp(names[k], name) == 0;
        if (!seen && n < max)
            names[n++] = name;
    }
    return n;
}

int cg_jobs_for_world(const cg_options *o, const cg_case_set *set, int w, cg_job **jobs)
{
    int cap = 16, n = 0;
    cg_job *j = malloc((size_t)cap * sizeof *j);
    if (!j)
        return -1;
    for (int i = 0; i < set->n; i++) {
        int worlds[CG_MAX_WORLD], nw = cg_case_worlds(o, set->cases[i], worlds);
        bool at_w = false;
        for (int k = 0; k < nw; k++)
            at_w |= worlds[k] == w;
        if (!at_w)
            continue;
        const char *names[17];
        int ne = o->rules ? 0 : emulations(set->cases[i], w, names + 1, 16);
        names[0] = o->rules ? full_name(o->rules) : "reference";
        for (int k = 0; k <= ne; k++) {
            if (n == cap) {
                cap *= 2;
                cg_job *g = realloc(j, (size_t)cap * sizeof *g);
                if (!g) {
                    free(j);
                    return -1;
                }
                j = g;
            }
            j[n].case_index = i;
            snprintf(j[n].rules, sizeof j[n].rules, "%s", names[k]);
            j[n].expect_only = k > 0;
            n++;
        }
    }
    *jobs = j;
    return n;
}
