/* expect.c — expectations to checks (expect.h). */
#include "expect.h"
#include "hazards.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool cg_expect_applies(const cg_expect *x, int world)
{
    if (x->nlists == 0)
        return true;
    if (x->nranks == 0) /* one list per rank of the world */
        return x->nlists == world;
    for (int i = 0; i < x->nranks; i++) /* one list per rank after 'on' */
        if (x->ranks[i] >= world)
            return false;
    return true;
}

/* Which of x's value lists belongs to rank: its position after 'on', or
 * the rank itself; -1 when none does. */
static int list_of(const cg_expect *x, int rank)
{
    if (x->nranks == 0)
        return rank < x->nlists ? rank : -1;
    for (int i = 0; i < x->nranks; i++)
        if (x->ranks[i] == rank)
            return i < x->nlists ? i : -1;
    return -1;
}

cg_tol cg_case_tol(const cg_case *cs, cg_tol tol_default)
{
    cg_tol t = tol_default;
    if (cs->rtol > 0)
        t.rtol = cs->rtol;
    if (cs->atol > 0)
        t.atol = cs->atol;
    return t;
}

double *cg_expect_values(const cg_oracle *o, const cg_case *cs, const cg_expect *x, int world, int rank,
                         int64_t numel, cg_status *st)
{
    const double *src = NULL;
    double *owned = NULL;
    int64_t n = 0;
    if (x->nlists > 0) {
        int l = list_of(x, rank);
        if (l < 0) {
            cg_error_at(st, x->pos, "expected a value list for rank %d, got none", rank);
            return NULL;
        }
        src = x->lists[l];
        n = x->list_len[l];
    } else if (x->expr) {
        owned = cg_oracle_eval_expr(o, cs, world, rank, x->expr, &n, st);
        if (!owned)
            return NULL;
        src = owned;
    }
    double *v = NULL;
    if (n != 1 && n != numel)
        cg_error_at(st, x->pos, "expected 1 or %lld values for %s on rank %d, got %lld", (long long)numel,
                    x->tensor, rank, (long long)n);
    else if (!(v = malloc(((size_t)numel + 1) * sizeof *v)))
        cg_error_infra(st, "out of memory");
    else
        for (int64_t i = 0; i < numel; i++)
            v[i] = src[n == 1 ? 0 : i];
    free(owned);
    return v;
}

const double *cg_oracle_values(const cg_otensor *t, cg_semantics sem, bool value)
{
    if (value)
        return t->value;
    switch (sem) {
    case CG_SEM_PER_RANK: return t->per_rank;
    case CG_SEM_OWN_LOSS: return t->own_loss;
    case CG_SEM_REPLICATED: return t->replicated;
    }
    return NULL;
}

static bool rank_selected(const cg_expect *x, int rank)
{
    if (x->nranks == 0)
        return true;
    for (int i = 0; i < x->nranks; i++)
        if (x->ranks[i] == rank)
            return true;
    return false;
}

/* expect grad(x) replicated undefined: one case-level check. */
static void check_undefined(const cg_oracle *o, const cg_expect *x, cg_case_result *res)
{
    char note[320];
    snprintf(note, sizeof note, "replicated is %s: %s", o->replicated_defined ? "defined" : "undefined",
             o->replicated_reason);
    cg_case_add_note(res, x->tensor, -1, "replicated", NULL,
                     o->replicated_defined ? CG_FAIL : CG_PASS, note);
}

static void check_values(const cg_case *cs, const cg_oracle *o, const cg_expect *x, cg_tol tol,
                         cg_case_result *res)
{
    bool value = x->kind == CG_X_VALUE;
    const char *sem = value ? "value" : cg_semantics_name(x->semantics);
    for (int r = 0; r < o->world; r++) {
        if (!rank_selected(x, r))
            continue;
        const cg_otensor *t = cg_oracle_find(o, x->tensor, r);
        char err[CG_ERR_LEN] = "";
        if (!t) {
            snprintf(err, sizeof err, "%s:%d:%d: expected '%s' to exist on rank %d, got no binding there",
                     x->pos.file, x->pos.line, x->pos.col, x->tensor, r);
            cg_case_add_note(res, x->tensor, r, sem, NULL, CG_FAIL, err);
            continue;
        }
        const double *obs = cg_oracle_values(t, x->semantics, value);
        if (!obs) {
            snprintf(err, sizeof err, "replicated is undefined: %s", o->replicated_reason);
            cg_case_add_note(res, x->tensor, r, sem, NULL, CG_FAIL, err);
            continue;
        }
        cg_status st = CG_STATUS_OK;
        double *exp = cg_expect_values(o, cs, x, o->world, r, t->numel, &st);
        if (!exp) {
            cg_case_add_note(res, x->tensor, r, sem, NULL, CG_FAIL, st.msg);
            continue;
        }
        cg_case_add_check(res, x->tensor, r, sem, NULL, "case", exp, obs, t->numel, tol);
        free(exp);
    }
}

static void check_fd(const cg_oracle *o, cg_case_result *res)
{
    res->fd_tolerance = o->fd_tolerance;
    res->fd_max_rel_err = o->fd_max_rel_err;
    if (!o->fd_ran) {
        res->fd_status = CG_SKIP;
        res->fd_note = strdup(o->fd_skip_reason);
        return;
    }
    res->fd_status = CG_PASS;
    for (int i = 0; i < o->ntensors; i++) {
        const cg_otensor *t = &o->tensors[i];
        if (!t->fd || t->fd_checked == 0)
            continue;
        /* |fd - g| <= tol (1 + |g|): relative for large g, absolute near 0; tol from fdcheck.c */
        cg_tol tol = {t->fd_tolerance, t->fd_tolerance, CG_F64};
        double *e = malloc(((size_t)t->numel + 1) * sizeof *e), *f = malloc(((size_t)t->numel + 1) * sizeof *f);
        int64_t n = 0;
        for (int64_t k = 0; e && f && k < t->numel; k++)
            if (!isnan(t->fd[k])) { /* only the sampled elements */
                e[n] = t->per_rank[k];
                f[n++] = t->fd[k];
            }
        cg_check *k = (e && f) ? cg_case_add_check(res, t->name, t->rank, "finite_difference", NULL,
                                                   "oracle", e, f, n, tol)
                               : NULL;
        if (k && k->status == CG_FAIL)
            res->fd_status = CG_FAIL;
        free(e);
        free(f);
    }
    if (res->fd_status == CG_FAIL && !res->fd_note) {
        const cg_fd_element *w = &o->fd_worst;
        char note[512];
        snprintf(note, sizeof note,
                 "finite difference disagrees at %s[%lld] on rank %d: analytic %.17g, finite difference %.17g "
                 "(step h = %.3g, estimated truncation %.3g, rounding %.3g, allowed %.3g)",
                 w->tensor, (long long)w->index, w->rank, w->analytic, w->fd, w->step, w->truncation, w->rounding,
                 w->allowed);
        res->fd_note = strdup(note);
    }
}

void cg_check_hazards(const cg_case *cs, const cg_oracle *plan, cg_case_result *res)
{
    char **w = NULL;
    cg_status st = CG_STATUS_OK;
    int n = 0;
    if (plan->st.code != 0)
        return;
    if (cg_find_hazards(cs, plan, &w, &n, &st) != 0) {
        char text[CG_ERR_LEN + 64];
        snprintf(text, sizeof text, "the hang-hazard analysis failed: %s", st.msg);
        cg_case_add_warning(res, text);
    }
    for (int i = 0; i < n; i++) {
        cg_case_add_warning(res, w[i]);
        free(w[i]);
    }
    free(w);
}

void cg_check_oracle(const cg_case *cs, const cg_oracle *o, cg_case_result *res)
{
    res->replicated_defined = o->replicated_defined;
    res->replicated_reason = strdup(o->replicated_reason);
    const cg_expect *want_error = NULL;
    for (int i = 0; i < cs->nexpects; i++)
        if (cs->expects[i]->kind == CG_X_ERROR && !cs->expects[i]->rules)
            want_error = cs->expects[i];
    if (o->st.code != 0) {
        if (want_error && strstr(o->st.msg, want_error->message)) {
            cg_case_add_note(res, "", -1, "error", NULL, CG_PASS, o->st.msg);
        } else {
            res->status = CG_ERROR;
            res->message = strdup(o->st.msg);
        }
        return;
    }
    if (want_error) {
        char note[CG_ERR_LEN];
        snprintf(note, sizeof note, "expected the error \"%s\", got a successful run", want_error->message);
        cg_case_add_note(res, "", -1, "error", NULL, CG_FAIL, note);
    }
    cg_tol tol = cg_case_tol(cs, cg_tol_for(CG_F64));
    for (int i = 0; i < cs->nexpects; i++) {
        const cg_expect *x = cs->expects[i];
        if (x->rules || x->kind == CG_X_ERROR || !cg_expect_applies(x, o->world))
            continue;
        if (x->undefined)
            check_undefined(o, x, res);
        else
            check_values(cs, o, x, tol, res);
    }
    check_fd(o, res);
}
