/* diff.c — a distributed job against the oracle and the expectations
 * (observed.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "observed.h"

void cg_observed_free(cg_observed *obs)
{
    for (int r = 0; r < obs->world; r++) {
        cg_obs_rank *rk = &obs->ranks[r];
        for (int i = 0; i < rk->ntensors; i++) {
            free(rk->tensors[i].name);
            free(rk->tensors[i].value);
            free(rk->tensors[i].grad);
        }
        free(rk->tensors);
        free(rk->error);
        memset(rk, 0, sizeof *rk);
    }
}

static const cg_obs_tensor *obs_find(const cg_observed *obs, int rank, const char *name)
{
    const cg_obs_rank *rk = &obs->ranks[rank];
    for (int i = 0; i < rk->ntensors; i++)
        if (strcmp(rk->tensors[i].name, name) == 0)
            return &rk->tensors[i];
    return NULL;
}

/* A case's rules=NAME names the rule set that ran: by the name given on
 * the command line, or by its table's own name (a plugin's; a built-in's
 * with its version, which a family name covers: cg_rules_name_covers). */
static bool rules_match(const char *want, const cg_diff_opts *opts)
{
    return want && (cg_rules_name_covers(want, opts->rules) ||
                    cg_rules_name_covers(want, opts->rules_name));
}

/* Rank errors: a pass when the case expects that error under these rules. */
static bool check_errors(const cg_case *cs, const cg_observed *obs, const cg_diff_opts *opts,
                         cg_case_result *res)
{
    const cg_expect *want = NULL;
    for (int i = 0; i < cs->nexpects; i++) {
        const cg_expect *x = cs->expects[i];
        if (x->kind == CG_X_ERROR && (rules_match(x->rules, opts) ||
                                     (!x->rules && strcmp(opts->rules, "reference") == 0)))
            want = x;
    }
    bool any = false, in_phase = false;
    for (int r = 0; r < obs->world; r++) {
        const char *e = obs->ranks[r].error;
        if (!e)
            continue;
        any = true;
        bool ok = want && strstr(e, want->message) && (!want->raises || strstr(e, CG_RAISES_MARK));
        in_phase |= ok && (want->phase == CG_PHASE_ANY || cg_error_phase(e) == want->phase);
        cg_case_add_note(res, "", r, "error", want ? want->rules : opts->rules, ok ? CG_PASS : CG_FAIL, e);
    }
    if (want && want->phase != CG_PHASE_ANY && any && !in_phase) { /* no refusal came then */
        char note[CG_ERR_LEN];
        snprintf(note, sizeof note, "expected %s to raise at %s, but no rank's expected error came at %s",
                 want->rules, cg_phase_name(want->phase), cg_phase_name(want->phase));
        cg_case_add_note(res, "", -1, "error", want->rules, CG_FAIL, note);
    }
    if (want && !any) {
        char note[CG_ERR_LEN];
        if (want->raises)
            snprintf(note, sizeof note, "expected %s to raise%s%s, got a successful run",
                     want->rules, want->message[0] ? ": " : "", want->message);
        else
            snprintf(note, sizeof note, "expected the error \"%s\", got a successful run",
                     want->message);
        cg_case_add_note(res, "", -1, "error", want->rules, CG_FAIL, note);
    }
    return any;
}

/* Every named tensor on every rank: forward value and gradient against the oracle. */
static void check_against_oracle(const cg_oracle *o, const cg_observed *obs, const cg_diff_opts *opts,
                                 cg_case_result *res)
{
    for (int i = 0; i < o->ntensors; i++) {
        const cg_otensor *t = &o->tensors[i];
        const cg_obs_tensor *ob = obs_find(obs, t->rank, t->name);
        if (!ob) {
            cg_case_add_note(res, t->name, t->rank, "per_rank", opts->rules, CG_FAIL,
                             "the distributed run has no such tensor on this rank");
            continue;
        }
        if (ob->numel != t->numel) { /* the forward itself differs: nothing to compare */
            char have[96], want[96], note[CG_ERR_LEN];
            cg_dims_str(ob->ndim, ob->shape, have, sizeof have);
            cg_dims_str(t->ndim, t->shape, want, sizeof want);
            snprintf(note, sizeof note, "%s %s (%lld elements), the oracle's %s (%lld): its value and "
                     "gradient cannot be compared", CG_SHAPE_NOTE, have, (long long)ob->numel, want,
                     (long long)t->numel);
            cg_case_add_note(res, t->name, t->rank, "value", opts->rules, CG_FAIL, note);
            continue;
        }
        cg_case_add_check(res, t->name, t->rank, "value", opts->rules, "oracle", t->value, ob->value,
                          t->numel, opts->tol);
        cg_case_add_check(res, t->name, t->rank, "per_rank", opts->rules, "oracle", t->per_rank, ob->grad,
                          t->numel, opts->tol);
    }
}

/* rules=<rules> expectations against what the run observed. */
static void check_rules_expectations(const cg_case *cs, const cg_oracle *o, const cg_observed *obs,
                                     const cg_diff_opts *opts,
                                     cg_case_result *res)
{
    for (int i = 0; i < cs->nexpects; i++) {
        const cg_expect *x = cs->expects[i];
        if (x->kind == CG_X_ERROR || !rules_match(x->rules, opts) ||
            !cg_expect_applies(x, obs->world))
            continue;
        const char *sem = x->kind == CG_X_VALUE ? "value" : cg_semantics_name(x->semantics);
        for (int r = 0; r < obs->world; r++) {
            bool selected = x->nranks == 0;
            for (int k = 0; k < x->nranks; k++)
                selected |= x->ranks[k] == r;
            const cg_obs_tensor *ob = selected ? obs_find(obs, r, x->tensor) : NULL;
            if (!selected)
                continue;
            cg_status st = CG_STATUS_OK;
            double *exp = ob ? cg_expect_values(o, cs, x, obs->world, r, ob->numel, &st) : NULL;
            if (!ob)
                cg_error(&st, "the distributed run has no '%s' on rank %d", x->tensor, r);
            if (!exp) {
                cg_case_add_note(res, x->tensor, r, sem, x->rules, CG_FAIL, st.msg);
                continue;
            }
            const double *have = x->kind == CG_X_VALUE ? ob->value : ob->grad;
            cg_case_add_check(res, x->tensor, r, sem, x->rules, "case", exp, have, ob->numel,
                              cg_case_tol(cs, opts->tol));
            free(exp);
        }
    }
}

void cg_diff_distributed(const cg_case *cs, const cg_oracle *o, const cg_observed *obs,
                         const cg_diff_opts *opts, cg_case_result *res)
{
    if (check_errors(cs, obs, opts, res)) {
        /* an expected error documents an emulation; it is still not the truth */
        bool truth_raises = false;
        for (int i = 0; i < cs->nexpects; i++)
            truth_raises |= cs->expects[i]->kind == CG_X_ERROR && !cs->expects[i]->rules;
        if (!opts->expect_only && !truth_raises)
            cg_case_add_note(res, "", -1, "error", opts->rules, CG_FAIL,
                             "the run raised where the truth (the oracle) computes gradients");
        return; /* a run that raised has no gradients to compare */
    }
    if (!opts->expect_only)
        check_against_oracle(o, obs, opts, res);
    check_rules_expectations(cs, o, obs, opts, res);
}
