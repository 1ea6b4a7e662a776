/* list.c — --list: the selection a run would make, without running it (list.h). */
#include "list.h"

#include <stdio.h>
#include <stdlib.h>

#include "jobs.h"
#include "runner.h"

/* The jobs a run would do: the oracle's one per (case, world), a case
 * without a matching world counting once as skipped (run_oracle.c); a
 * distributed run's one per (case, world, rule set) (jobs.h). -1 on OOM. */
static int count_jobs(const cg_options *o, const cg_case_set *set)
{
    int n = 0, worlds[CG_MAX_WORLD];
    if (o->oracle_only) {
        for (int i = 0; i < set->n; i++) {
            int k = cg_case_worlds(o, set->cases[i], worlds);
            n += k ? k : 1;
        }
        return n;
    }
    for (int w = 1; w <= CG_MAX_WORLD; w++) {
        cg_job *jobs = NULL;
        int k = cg_jobs_for_world(o, set, w, &jobs);
        free(jobs);
        if (k < 0)
            return -1;
        n += k;
    }
    return n;
}

int cg_list_selection(const cg_options *o, const cg_case_set *set)
{
    for (int i = 0; i < set->n; i++) {
        const cg_case *cs = set->cases[i];
        int worlds[CG_MAX_WORLD], nw = cg_case_worlds(o, cs, worlds);
        printf("%-40s W=", cs->name);
        for (int w = 0; w < nw; w++)
            printf("%s%d", w ? "," : "", worlds[w]);
        printf("%s  %s\n", nw ? "" : "(none: skipped)", cs->file);
    }
    for (int i = 0; i < set->nbad; i++)
        printf("%-40s ERROR  %s\n", set->bad[i].file, set->bad[i].message);
    int jobs = count_jobs(o, set);
    if (jobs < 0) {
        fprintf(stderr, "collgrad-check: out of memory\n");
        return CG_EXIT_INFRA;
    }
    printf("%d cases, %d jobs, %d errors\n", set->n, jobs, set->nbad);
    return set->nbad ? CG_EXIT_USAGE : CG_EXIT_OK;
}
