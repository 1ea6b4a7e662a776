/* diagnose.c — see diagnose.h. */
#include "diagnose.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "expect.h"
#include "rules.h"

/* What each known mistake is, in one sentence, and where it comes from. */
typedef struct mistake {
    const char *name, *explanation, *see;
} mistake;

/* The mistakes that are not rule sets (a rule set says what it does
 * itself: cg_rules_describe). */
static const mistake mistakes[] = {
    {"replicated", "the gradient of one copy of a loss every rank holds (replicated semantics): "
                   "per-rank divided by the number of ranks that called backward", "pytorch/pytorch#58005"},
    {"own_loss", "only each rank's own loss counts (dL_r/dx_r): the other ranks' losses are dropped",
     "pytorch/pytorch#58005"},
    {"straight_through", "collectives act as the identity on the local input in backward "
                         "(no communication)", "pytorch/pytorch#58005"},
    {"local_slot", "a gather's backward keeps only the rank's own slice",
     "shared/seeds/001_343aed518b1b6c99.txt"},
    {"scaled_by_world", "the gradient is W times too large (summed where it should be averaged)",
     "horovod/horovod#2654"},
    {"divided_by_world", "the gradient is W times too small (averaged where it should be summed)",
     "pytorch/pytorch#58005"},
    {"wrong_rank_order", "the transport delivers a collective's blocks to the wrong ranks (its reduce_scatter's "
                         "or all_gather's, reversed or rotated): the gradients of a re-run over such a "
                         "transport are these", NULL},
};

static const mistake *mistake_named(const char *name)
{
    for (size_t i = 0; i < sizeof mistakes / sizeof mistakes[0]; i++)
        if (strcmp(mistakes[i].name, name) == 0)
            return &mistakes[i];
    return NULL;
}

static const char *first_error(const cg_observed *obs)
{
    for (int r = 0; obs && r < obs->world; r++)
        if (obs->ranks[r].error)
            return obs->ranks[r].error;
    return NULL;
}

bool cg_diag_needed(const cg_case_result *res, const cg_observed *obs, bool *values_wrong)
{
    bool grads = false;
    *values_wrong = false;
    for (int r = 0; obs && r < obs->world; r++)
        if (obs->ranks[r].error && strstr(obs->ranks[r].error, "desync: "))
            return false; /* --check-sync saw the ranks issue different calls: that is what happened */
    for (int i = 0; i < res->nchecks; i++)
        if (res->checks[i].status == CG_FAIL && strcmp(res->checks[i].semantics, "error") == 0 &&
            first_error(obs))
            return true; /* raised where the truth does not */
    for (int i = 0; i < res->nchecks; i++) {
        const cg_check *k = &res->checks[i];
        if (k->status != CG_FAIL || !k->against || strcmp(k->against, "oracle") != 0)
            continue;
        if (strcmp(k->semantics, "value") == 0)
            *values_wrong = true;
        else if (strcmp(k->semantics, "per_rank") == 0)
            grads = true;
    }
    return grads || *values_wrong;
}

static const cg_obs_tensor *obs_find(const cg_observed *obs, int rank, const char *name)
{
    for (int i = 0; obs && i < obs->ranks[rank].ntensors; i++)
        if (strcmp(obs->ranks[rank].tensors[i].name, name) == 0)
            return &obs->ranks[rank].tensors[i];
    return NULL;
}

static bool close_all(const double *a, const double *b, int64_t n, cg_tol tol, double scale)
{
    for (int64_t i = 0; i < n; i++)
        if (!(fabs(a[i] - scale * b[i]) <= tol.atol + tol.rtol * fabs(scale * b[i])))
            return false;
    return true;
}

/* Does a candidate give the observed gradient of every param on every rank?
 * The candidate is either another run (cand_obs) or an oracle's semantics. */
static bool matches(const cg_diag_inputs *in, const cg_observed *cand_obs, const cg_oracle *cand_o,
                    cg_semantics sem, double scale)
{
    int compared = 0;
    for (int i = 0; i < in->truth->ntensors; i++) {
        const cg_otensor *t = &in->truth->tensors[i];
        if (!t->is_param)
            continue;
        const cg_obs_tensor *have = obs_find(in->obs, t->rank, t->name);
        const double *want = NULL;
        if (cand_obs) {
            const cg_obs_tensor *c = obs_find(cand_obs, t->rank, t->name);
            want = c && c->numel == t->numel ? c->grad : NULL;
        } else {
            const cg_otensor *c = cg_oracle_find(cand_o, t->name, t->rank);
            want = c ? cg_oracle_values(c, sem, false) : NULL;
        }
        if (!have || have->numel != t->numel || !want || !close_all(have->grad, want, t->numel, in->tol, scale))
            return false;
        compared++;
    }
    return compared > 0;
}

/* The collective a name was bound to, "y = reduce_scatter(...)", or NULL. */
static const char *collective_of(const cg_stmt *const *stmts, int n, const char *name)
{
    for (int i = 0; i < n; i++) {
        const cg_stmt *st = stmts[i];
        if (st->kind == CG_S_ON) {
            const char *c = collective_of((const cg_stmt *const *)st->body, st->nbody, name);
            if (c)
                return c;
        } else if (st->kind == CG_S_ASSIGN && strcmp(st->names[0], name) == 0 &&
                   st->expr->kind == CG_E_CALL && cg_coll_from_name(st->expr->name) >= 0) {
            return st->expr->name;
        }
    }
    return NULL;
}

/* Wrong forward values: name the tensor, its collective, and, when the value
 * is another rank's, say so — results delivered in the wrong rank order. */
static void diagnose_values(const cg_diag_inputs *in, cg_case_result *res)
{
    char text[768];
    for (int i = 0; i < in->truth->ntensors; i++) {
        const cg_otensor *t = &in->truth->tensors[i];
        const cg_obs_tensor *have = obs_find(in->obs, t->rank, t->name);
        if (!have || have->numel != t->numel || close_all(have->value, t->value, t->numel, in->tol, 1.0))
            continue;
        const char *coll = collective_of((const cg_stmt *const *)in->cs->stmts, in->cs->nstmts, t->name);
        int other = -1;
        for (int k = 0; k < in->truth->world && other < 0; k++) {
            const cg_otensor *o = k == t->rank ? NULL : cg_oracle_find(in->truth, t->name, k);
            if (o && o->numel == t->numel && close_all(have->value, o->value, t->numel, in->tol, 1.0))
                other = k;
        }
        const char *name = other >= 0 ? "wrong_rank_order" : "wrong_forward_value";
        if (other >= 0)
            snprintf(text, sizeof text, "the transport's %s delivers results in the wrong rank order: rank %d "
                     "holds rank %d's value of %s", coll ? coll : "collective", t->rank, other, t->name);
        else
            snprintf(text, sizeof text, "the transport's %s computes a wrong forward value of %s on rank %d "
                     "(not a gradient rule: the collective itself is wrong)", coll ? coll : "collective",
                     t->name, t->rank);
        cg_case_set_diagnosis(res, &name, 1, text, NULL);
        return;
    }
}

/* Is rank r's observed gradient of param `name` the truth's on rank k
 * (per-rank semantics)? */
static bool grad_is_ranks(const cg_diag_inputs *in, const char *name, int r, int k)
{
    const cg_otensor *t = cg_oracle_find(in->truth, name, r), *want = cg_oracle_find(in->truth, name, k);
    const cg_obs_tensor *have = obs_find(in->obs, r, name);
    const double *g = want ? cg_oracle_values(want, CG_SEM_PER_RANK, false) : NULL;
    return t && have && g && want->numel == t->numel && have->numel == t->numel &&
           close_all(have->grad, g, t->numel, in->tol, 1.0);
}

/* Right forward values, and each param's gradients a permutation of the
 * truth's over the ranks (every rank holds one rank's, its own where that
 * is right), not all in place: a collective of the backward delivers its
 * results to the wrong ranks, the gradient face of wrong_rank_order. */
static bool diagnose_permuted_grads(const cg_diag_inputs *in, cg_case_result *res)
{
    int world = in->truth->world, moved = -1, moved_from = -1;
    const char *moved_name = NULL;
    if (world < 2 || world > CG_MAX_WORLD)
        return false;
    for (int i = 0; i < in->truth->ntensors; i++) {
        const cg_otensor *t = &in->truth->tensors[i];
        if (!t->is_param || t->rank != 0) /* each param once, by its rank-0 copy */
            continue;
        bool taken[CG_MAX_WORLD] = {false};
        for (int r = 0; r < world; r++) {
            int from = grad_is_ranks(in, t->name, r, r) ? r : -1;
            for (int k = 0; k < world && from < 0; k++)
                if (k != r && !taken[k] && grad_is_ranks(in, t->name, r, k))
                    from = k;
            if (from < 0 || taken[from])
                return false;
            taken[from] = true;
            if (from != r && !moved_name)
                moved = r, moved_from = from, moved_name = t->name;
        }
    }
    if (!moved_name)
        return false;
    char text[512];
    const char *name = "wrong_rank_order";
    snprintf(text, sizeof text, "gradients arrive in the wrong rank order: rank %d holds rank %d's gradient "
             "of %s (the forward values are right: a collective of the backward pass delivers its results "
             "to the wrong ranks)", moved, moved_from, moved_name);
    cg_case_set_diagnosis(res, &name, 1, text, NULL);
    return true;
}

/* The collectives a program calls, as distinct (kind, op) pairs (op SUM
 * for the kinds that take none), in program order. */
typedef struct call_kind {
    cg_coll_kind kind;
    cg_redop op;
} call_kind;

static void calls_in_expr(const cg_expr *e, call_kind *out, int *n, int cap)
{
    if (!e)
        return;
    int kind = e->kind == CG_E_CALL ? cg_coll_from_name(e->name) : -1;
    if (kind >= 0 && kind < CG_C_COUNT) {
        cg_redop op = CG_RED_SUM;
        for (int i = 1; cg_coll_has_op((cg_coll_kind)kind) && i < e->nargs; i++)
            if (e->args[i]->kind == CG_E_WORD && cg_redop_from_name(e->args[i]->name) >= 0)
                op = (cg_redop)cg_redop_from_name(e->args[i]->name);
        bool seen = false;
        for (int k = 0; k < *n; k++)
            seen |= out[k].kind == (cg_coll_kind)kind && out[k].op == op;
        if (!seen && *n < cap)
            out[(*n)++] = (call_kind){(cg_coll_kind)kind, op};
    }
    for (int i = 0; i < e->nargs; i++)
        calls_in_expr(e->args[i], out, n, cap);
}

static void calls_in(const cg_stmt *const *stmts, int nstmts, call_kind *out, int *n, int cap)
{
    for (int i = 0; i < nstmts; i++) {
        if (stmts[i]->kind == CG_S_ON)
            calls_in((const cg_stmt *const *)stmts[i]->body, stmts[i]->nbody, out, n, cap);
        else
            calls_in_expr(stmts[i]->expr, out, n, cap);
    }
}

/* "all_reduce(prod) backward: <what the rule set does>; ..." for the
 * collectives of this case where the rule set departs from the reference:
 * the rule set's own statement (rules.h), so the sentence is true for the op
 * the case uses. Falls back to its one-line summary. */
static void rule_set_sentence(const cg_case *cs, const cg_rules *r, char *buf, size_t len)
{
    call_kind calls[32];
    int n = 0;
    calls_in((const cg_stmt *const *)cs->stmts, cs->nstmts, calls, &n, 32);
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && at < len; i++) {
        bool inherited;
        const char *what = cg_rules_describe(r, calls[i].kind, calls[i].op, &inherited);
        if (!what || inherited)
            continue;
        char name[48];
        if (cg_coll_has_op(calls[i].kind))
            snprintf(name, sizeof name, "%s(%s)", cg_coll_name(calls[i].kind), cg_redop_name(calls[i].op));
        else
            snprintf(name, sizeof name, "%s", cg_coll_name(calls[i].kind));
        at += (size_t)snprintf(buf + at, len - at, "%s%s backward is %s", at ? "; " : "", name, what);
    }
    if (at == 0)
        snprintf(buf, len, "%s", r->emulates ? r->emulates : "a rule set that does not say what it does");
}

/* The diagnosis of names[0..n): the mistakes or rule sets that give what
 * the run gave. raised: the run's error, when that is what they share (its
 * text is then the sentence: a refusal says what the framework does). */
static void describe(const cg_case *cs, const char *const *names, int n, const char *raised,
                     cg_case_result *res)
{
    char text[1024], sentence[768];
    if (n == 0) {
        cg_case_set_diagnosis(res, names, 0, "matches no known mistake: the gradients are wrong in a way "
                              "this tool has no name for", NULL);
        return;
    }
    const mistake *m = mistake_named(names[0]);
    const cg_rules *r = m ? NULL : cg_rules_load(names[0], NULL);
    const char *see = m ? m->see : r ? r->see : NULL;
    if (m)
        snprintf(sentence, sizeof sentence, "%s", m->explanation);
    else if (r && raised && strstr(raised, CG_RAISES_MARK))
        snprintf(sentence, sizeof sentence, "%s", strstr(raised, CG_RAISES_MARK));
    else if (r)
        rule_set_sentence(cs, r, sentence, sizeof sentence);
    else
        snprintf(sentence, sizeof sentence, "a rule set this tool has no description for");
    if (r && r->measured) { /* which framework versions do this, by measurement */
        size_t used = strlen(sentence);
        snprintf(sentence + used, sizeof sentence - used, "; measured: %s", r->measured);
    }
    if (n == 1) {
        snprintf(text, sizeof text, "matches %s%s: %s", m ? "" : "rule set ", names[0], sentence);
        cg_case_set_diagnosis(res, names, 1, text, see);
        return;
    }
    size_t at = (size_t)snprintf(text, sizeof text, "this case cannot tell apart");
    for (int i = 0; i < n && at < sizeof text; i++)
        at += (size_t)snprintf(text + at, sizeof text - at, "%s %s", i == 0 ? "" : i == n - 1 ? " and" : ",",
                               names[i]);
    if (at < sizeof text)
        snprintf(text + at, sizeof text - at, ": they %s here; %s: %s",
                 raised ? "raise the same error" : "give the same gradients", names[0], sentence);
    cg_case_set_diagnosis(res, names, n, text, see);
}

void cg_diagnose(const cg_diag_inputs *in, cg_case_result *res)
{
    bool values_wrong;
    if (!cg_diag_needed(res, in->obs, &values_wrong))
        return;
    if (values_wrong) {
        diagnose_values(in, res);
        if (res->diag_explanation)
            return;
    }
    const char *names[64];
    int n = 0;
    const char *raised = first_error(in->obs);
    if (raised) { /* the same error from the same program: the same mistake */
        for (int i = 0; i < in->nruns && n < 48; i++) {
            const char *e = in->runs[i].obs ? first_error(in->runs[i].obs) : NULL;
            if (e && strcmp(e, raised) == 0 && !mistake_named(in->runs[i].rules)) /* rule sets raise */
                names[n++] = in->runs[i].rules;
        }
        describe(in->cs, names, n, raised, res);
        return;
    }
    for (int i = 0; i < in->nruns && n < 48; i++)
        if (in->runs[i].obs && !first_error(in->runs[i].obs) && !mistake_named(in->runs[i].rules) &&
            matches(in, in->runs[i].obs, NULL, CG_SEM_PER_RANK, 1.0))
            names[n++] = in->runs[i].rules;
    if (in->truth->replicated_defined && matches(in, NULL, in->truth, CG_SEM_REPLICATED, 1.0))
        names[n++] = "replicated";
    if (matches(in, NULL, in->truth, CG_SEM_OWN_LOSS, 1.0))
        names[n++] = "own_loss";
    if (in->straight_through && matches(in, NULL, in->straight_through, CG_SEM_PER_RANK, 1.0))
        names[n++] = "straight_through";
    if (in->local_slot && matches(in, NULL, in->local_slot, CG_SEM_PER_RANK, 1.0))
        names[n++] = "local_slot";
    double w = in->truth->world;
    if (w > 1 && matches(in, NULL, in->truth, CG_SEM_PER_RANK, w))
        names[n++] = "scaled_by_world";
    if (w > 1 && matches(in, NULL, in->truth, CG_SEM_PER_RANK, 1.0 / w))
        names[n++] = "divided_by_world";
    /* a transport's mistakes last, where nothing above explains the gradients: the
     * truth's gradients permuted over the ranks (any permutation, named in the
     * sentence), else a re-run over a misordering transport (runs named after the
     * mistake, from cg_emulations_run) */
    if (n == 0 && !values_wrong && diagnose_permuted_grads(in, res))
        return;
    for (int i = 0; i < in->nruns && n == 0; i++)
        if (in->runs[i].obs && !first_error(in->runs[i].obs) && mistake_named(in->runs[i].rules) &&
            matches(in, in->runs[i].obs, NULL, CG_SEM_PER_RANK, 1.0))
            names[n++] = in->runs[i].rules;
    describe(in->cs, names, n, NULL, res);
}
