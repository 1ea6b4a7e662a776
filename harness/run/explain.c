/* explain.c — `--explain CASE`: everything a person reading a thread like
 * #58005 wants side by side: the program, each root's own gradient, the
 * per-rank and replicated answers, and which rule sets give which. */
#define _DEFAULT_SOURCE /* realpath(3) */
#include "explain.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "launcher.h"
#include "oracle.h"
#include "rules.h"
#include "runner.h"

static void print_values(const double *v, int64_t n)
{
    printf("[");
    for (int64_t i = 0; i < n && i < 6; i++)
        printf("%s%.6g", i ? ", " : "", v[i]);
    printf("%s]", n > 6 ? ", ..." : "");
}

static bool same(const double *a, const double *b, int64_t n, cg_tol tol)
{
    for (int64_t i = 0; a && b && i < n; i++)
        if (!(fabs(a[i] - b[i]) <= tol.atol + tol.rtol * fabs(b[i])))
            return false;
    return a && b;
}

static void print_oracle(const cg_oracle *o)
{
    printf("\noracle (all ranks in one graph, f64):\n");
    for (int i = 0; i < o->ntensors; i++) {
        const cg_otensor *t = &o->tensors[i];
        if (!t->is_param)
            continue;
        printf("  grad(%s) on rank %d\n", t->name, t->rank);
        for (int k = 0; t->per_root && k < o->world; k++)
            if (t->per_root[k]) {
                printf("    dL_%d/d%s_%d      ", k, t->name, t->rank);
                print_values(t->per_root[k], t->numel);
                printf("\n");
            }
        printf("    per_rank        ");
        print_values(t->per_rank, t->numel);
        printf("   (sum over every rank's loss: PyTorch's meaning)\n    replicated      ");
        if (t->replicated)
            print_values(t->replicated, t->numel);
        else
            printf("undefined");
        printf("   (one loss every rank holds a copy of)\n");
    }
    printf("  replicated: %s\n", o->replicated_reason);
}

/* Run every built-in rule set over MPI and say which semantics each one's
 * gradients agree with. */
static int print_rule_sets(const cg_options *o, const cg_case_set *set, const cg_case *cs,
                           const cg_oracle *truth, int world)
{
    printf("\nrule sets (distributed over MPI, W=%d):\n", world);
    cg_tol tol = cg_case_tol(cs, cg_tol_for(cs->dtype));
    const cg_rules *const *all = cg_rules_all();
    for (int i = 0; all[i]; i++) {
        cg_options ro = *o;
        ro.rules = all[i]->name;
        ro.world = world;
        ro.quiet = true;
        ro.explain = NULL;
        cg_report *rep = cg_report_new("distributed", o->transport, all[i]->name, "cpu");
        if (!rep)
            return CG_EXIT_INFRA;
        int rc = cg_run_launcher(&ro, set, rep);
        printf("  %-18s", all[i]->name);
        if (rep->ncases == 0 || rep->cases[0].status == CG_ERROR) {
            printf("error: %s\n", rep->ncases && rep->cases[0].message ? rep->cases[0].message : "no result");
        } else {
            const cg_case_result *c = &rep->cases[0];
            bool per_rank = true, replicated = truth->replicated_defined, own = true, raised = false;
            for (int k = 0; k < c->nchecks; k++) {
                const cg_check *chk = &c->checks[k];
                raised |= strcmp(chk->semantics, "error") == 0;
                if (strcmp(chk->semantics, "per_rank") || !chk->against || strcmp(chk->against, "oracle"))
                    continue;
                const cg_otensor *t = cg_oracle_find(truth, chk->tensor, chk->rank);
                if (!t || !t->is_param)
                    continue;
                printf("%s(%s) r%d ", "grad", chk->tensor, chk->rank);
                print_values(chk->observed, chk->numel);
                printf("  ");
                per_rank &= same(chk->observed, t->per_rank, t->numel, tol);
                replicated &= same(chk->observed, t->replicated, t->numel, tol);
                own &= same(chk->observed, t->own_loss, t->numel, tol);
            }
            printf("-> %s\n", raised ? "raises in backward"
                              : per_rank ? "per-rank (correct)"
                              : replicated ? "replicated"
                              : own ? "own loss only"
                              : "neither semantics");
        }
        cg_report_free(rep);
        if (rc == CG_EXIT_INFRA)
            return rc;
    }
    return 0;
}

int cg_explain(const cg_options *o, const cg_case_set *set)
{
    const cg_case *cs = NULL;
    char want[PATH_MAX], got[PATH_MAX]; /* a case's file as any path names it (relative, ./, links) */
    bool path = realpath(o->explain, want) != NULL;
    for (int i = 0; i < set->n && !cs; i++)
        if (strcmp(set->cases[i]->name, o->explain) == 0 ||
            (path && realpath(set->cases[i]->file, got) && strcmp(got, want) == 0))
            cs = set->cases[i];
    if (!cs) {
        fprintf(stderr, "collgrad-check: --explain: no case named '%s', nor in that file (see --list)\n", o->explain);
        return CG_EXIT_USAGE;
    }
    /* only this case: the rule-set runs load the set again from its file */
    cg_case_set one = {.n = 1, .cap = 1, .cases = (cg_case **)&cs};
    char *paths[1] = {cs->file};
    cg_options eo = *o;
    eo.paths = paths;
    eo.npaths = 1;
    int worlds[CG_MAX_WORLD], nw = cg_case_worlds(o, cs, worlds), rc = 0;
    for (int w = 0; w < nw && rc == 0; w++) {
        printf("== %s at W=%d\nsource: %s\nfile:   %s\n\n", cs->name, worlds[w], cs->source ? cs->source : "-",
               cs->file);
        cg_case_print(stdout, cs);
        cg_oracle *truth = cg_oracle_run(cs, worlds[w], false);
        if (truth && truth->st.code == 0)
            (void)cg_oracle_add_per_root(cs, truth); /* printed below; a failure says so */
        if (!truth || truth->st.code != 0) {
            fprintf(stderr, "collgrad-check: %s\n", truth ? truth->st.msg : "out of memory");
            rc = truth ? truth->st.code : CG_EXIT_INFRA;
        } else {
            print_oracle(truth);
            rc = print_rule_sets(&eo, &one, cs, truth, worlds[w]);
        }
        cg_oracle_free(truth);
        printf("\n");
    }
    return rc;
}
