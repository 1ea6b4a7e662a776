/* injection.c — see injection.h. */
#include "injection.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The rank and case filter of "KIND[:RANK[:CASE]]" (the spec passed
 * preflight, so only the fields are read here; rank 0 when absent). */
static void spec_fields(const char *spec, int *rank, const char **filter)
{
    const char *colon = strchr(spec, ':');
    *rank = colon ? atoi(colon + 1) : 0;
    const char *second = colon ? strchr(colon + 1, ':') : NULL;
    *filter = second && second[1] ? second + 1 : NULL;
}

/* Why a spec injected nothing, from what the run did. */
static void reason_for(const cg_options *o, const cg_report *rep, char *buf, size_t len)
{
    int rank, largest = 0;
    const char *filter;
    bool filter_met = false;
    spec_fields(o->inject, &rank, &filter);
    for (int i = 0; i < rep->ncases; i++) {
        const cg_case_result *c = &rep->cases[i];
        if (c->status == CG_SKIP)
            continue;
        if (c->world > largest)
            largest = c->world;
        filter_met |= !filter || (c->name && strstr(c->name, filter));
    }
    bool board = strncmp(o->inject, "hang", 4) == 0 || strncmp(o->inject, "exit", 4) == 0;
    if (o->oracle_only)
        snprintf(buf, len, "--oracle-only runs no transport to inject into");
    else if (largest == 0)
        snprintf(buf, len, "no job ran");
    else if (rank >= largest)
        snprintf(buf, len, "rank %d is in no world this run ran (the largest was W=%d)", rank, largest);
    else if (!filter_met)
        snprintf(buf, len, "no case this run ran has '%s' in its name", filter);
    else if (board)
        snprintf(buf, len, "rank %d made no communication call in the cases it applies to", rank);
    else
        snprintf(buf, len, "every call it applies to kept its values within the case's tolerance (zeros, "
                 "equal blocks, W=1, or a change that rounds away)");
}

int cg_injection_verdict(const cg_options *o, cg_report *rep, int rc)
{
    if (!o->inject)
        return rc;
    long total = rep->injected;
    for (int i = 0; i < rep->ncases; i++)
        if (rep->cases[i].injected > 0)
            total += rep->cases[i].injected;
    char why[512] = "";
    if (total == 0)
        reason_for(o, rep, why, sizeof why);
    cg_report_set_injection(rep, o->inject, total, total ? NULL : why);
    if (total > 0)
        return rc;
    fprintf(stderr, "collgrad-check: --inject %s injected nothing: %s; a self-test that injects nothing "
            "tests nothing\n", o->inject, why);
    return rc > CG_EXIT_USAGE ? rc : CG_EXIT_USAGE;
}
