/* interp.c — statements, bindings and errors of the interpreter (interp.h).
 * Expressions are in interp_expr.c, function calls in interp_call.c. */
#include "interp_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"

cg_interp *cg_interp_new(const cg_case *cs, int world, const int *ranks, int nslots,
                         cg_dtype dtype, cg_graph *g, cg_comm *comm)
{
    cg_interp *I = calloc(1, sizeof *I);
    if (!I)
        return NULL;
    I->cs = cs;
    I->world = world;
    I->nslots = nslots;
    I->dtype = dtype;
    I->g = g;
    I->comm = comm;
    I->ranks = calloc((size_t)nslots, sizeof *I->ranks);
    I->env = calloc((size_t)nslots, sizeof *I->env);
    I->active = calloc((size_t)nslots, sizeof *I->active);
    I->genv = calloc((size_t)nslots, sizeof *I->genv);
    I->share_count = calloc((size_t)nslots, sizeof *I->share_count);
    if (!I->ranks || !I->env || !I->active || !I->genv || !I->share_count) {
        cg_interp_free(I);
        return NULL;
    }
    memcpy(I->ranks, ranks, (size_t)nslots * sizeof *ranks);
    /* the case's element limits (ir.h), for each rank this graph simulates */
    cg_graph_set_limits(g, cs->limits.value_elements, cs->limits.case_elements, nslots);
    return I;
}

void cg_interp_free(cg_interp *I)
{
    if (!I)
        return;
    if (I->env)
        for (int s = 0; s < I->nslots; s++)
            free(I->env[s].b);
    free(I->env);
    cg_groups_free(I);
    free(I->ranks);
    free(I->active);
    free(I->share_count);
    free(I);
}

void cg_interp_set_share(cg_interp *I, cg_share *sh) { I->share = sh; }

void cg_interp_set_perturb(cg_interp *I, const cg_perturb *p)
{
    I->has_perturb = p != NULL;
    if (p)
        I->perturb = *p;
}

const cg_status *cg_interp_status(const cg_interp *I) { return &I->st; }

/* ---- bindings ------------------------------------------------------------ */

const cg_binding *cg_interp_lookup(const cg_interp *I, int slot, const char *name)
{
    const cg_env *env = &I->env[slot];
    for (int i = 0; i < env->n; i++)
        if (strcmp(env->b[i].name, name) == 0)
            return &env->b[i];
    return NULL;
}

int cg_interp_bindings(const cg_interp *I, int slot, const cg_binding **out)
{
    *out = I->env[slot].b;
    return I->env[slot].n;
}

/* The perturbed copy of t for a finite-difference run: a fresh constant so
 * that earlier users of t (or aliases of it) keep the unperturbed value. */
static cg_tensor *perturbed(cg_interp *I, cg_tensor *t)
{
    cg_tensor *c = cg_tensor_cast(I->g, t, t->dtype);
    if (!c)
        return NULL;
    c->requires_grad = t->requires_grad; /* a leaf standing in for t */
    c->is_leaf = t->requires_grad;
    if (I->perturb.elem < c->numel)
        cg_set(c, I->perturb.elem, cg_get(c, I->perturb.elem) + I->perturb.delta);
    return c;
}

static int bind(cg_interp *I, int slot, const char *name, cg_tensor *t, cg_srcpos pos)
{
    if (I->has_perturb && I->perturb.stmt == I->stmt && I->ranks[slot] == I->perturb.rank &&
        strcmp(I->perturb.name, name) == 0) {
        t = perturbed(I, t);
        if (!t)
            return cg_error_wrap(&I->st, cg_graph_status(I->g), pos, cg_slot_rank(I, slot),
                                 I->world);
    }
    t->retain = true; /* named tensors report their gradient, like retain_grad() */
    cg_env *env = &I->env[slot];
    for (int i = 0; i < env->n; i++)
        if (strcmp(env->b[i].name, name) == 0) {
            env->b[i].t = t;
            env->b[i].stmt = I->stmt;
            return 0;
        }
    if (env->n == env->cap) {
        int cap = env->cap ? 2 * env->cap : 16;
        cg_binding *b = realloc(env->b, (size_t)cap * sizeof *b);
        if (!b)
            return cg_error_at_rank(&I->st, pos, cg_slot_rank(I, slot), I->world,
                                    "expected memory for a binding, got out of memory");
        env->b = b;
        env->cap = cap;
    }
    env->b[env->n++] = (cg_binding){name, t, I->stmt};
    return 0;
}

/* ---- statements ---------------------------------------------------------- */

/* `a, b, c = t` binds equal pieces of t along axis 0. */
static int run_assign(cg_interp *I, const cg_stmt *st)
{
    if (cg_is_group_maker(st->expr))
        return cg_run_group_assign(I, st);
    cg_val *v = calloc((size_t)I->nslots, sizeof *v);
    if (!v)
        return cg_error_at(&I->st, st->pos, "expected memory, got out of memory");
    int rc = cg_eval(I, st->expr, v);
    for (int s = 0; rc == 0 && s < I->nslots; s++) {
        if (!I->active[s])
            continue;
        cg_tensor *t = cg_val_tensor(I, &v[s]);
        if (!t) {
            rc =
                cg_error_wrap(&I->st, cg_graph_status(I->g), st->pos, cg_slot_rank(I, s), I->world);
            break;
        }
        if (st->nnames == 1) {
            rc = bind(I, s, st->names[0], t, st->pos);
            continue;
        }
        int64_t rows = t->ndim > 0 ? t->shape[0] : 0;
        if (t->ndim == 0 || rows % st->nnames != 0) {
            char sh[64];
            rc = cg_error_at_rank(&I->st, st->pos, cg_slot_rank(I, s), I->world,
                                  "expected a tensor whose first dimension splits into %d "
                                  "equal parts, got shape %s",
                                  st->nnames, cg_shape_str(t, sh, sizeof sh));
            break;
        }
        int64_t part = rows / st->nnames;
        for (int k = 0; rc == 0 && k < st->nnames; k++) {
            cg_tensor *p = cg_slice(I->g, t, 0, k * part, (k + 1) * part);
            rc = p ? bind(I, s, st->names[k], p, st->pos)
                   : cg_error_wrap(&I->st, cg_graph_status(I->g), st->pos, cg_slot_rank(I, s),
                                   I->world);
        }
    }
    free(v);
    return rc;
}

static int run_backward(cg_interp *I, const cg_stmt *st, const cg_val *v)
{
    cg_tensor **roots = calloc((size_t)I->nslots, sizeof *roots);
    if (!roots)
        return cg_error_at(&I->st, st->pos, "expected memory, got out of memory");
    int rc = 0;
    for (int s = 0; s < I->nslots && rc == 0; s++) {
        if (!I->active[s])
            continue;
        if (!v[s].is_tensor)
            rc = cg_error_at_rank(&I->st, st->expr->pos, cg_slot_rank(I, s), I->world,
                                  "expected a tensor to call backward on, got a number");
        roots[s] = v[s].t;
    }
    if (rc == 0 && I->comm->backward(I->comm->self, I->g, &st->pos, roots) != 0)
        rc = cg_error_wrap(&I->st, cg_graph_status(I->g), st->pos, -1, 0);
    free(roots);
    return rc;
}

static int run_send(cg_interp *I, const cg_stmt *st, const cg_val *t, const cg_val *dst)
{
    cg_coll c = {.kind = CG_C_SEND, .seq = I->seq++, .pos = st->expr->pos};
    for (int s = 0; s < I->nslots; s++) {
        if (!I->active[s])
            continue;
        int64_t peer;
        if (cg_val_int(I, &dst[s], st->expr->args[1]->pos, s, "destination rank", &peer) != 0)
            return -1;
        if (peer < 0 || peer >= I->world || peer == I->ranks[s])
            return cg_error_at_rank(&I->st, st->expr->args[1]->pos, cg_slot_rank(I, s), I->world,
                                    "expected a destination rank in 0..%d other than %d, got %lld",
                                    I->world - 1, I->ranks[s], (long long)peer);
        cg_tensor *x = cg_val_tensor(I, &t[s]);
        c.peer = (int)peer;
        if (!x || I->comm->send(I->comm->self, I->g, &c, s, x) != 0)
            return cg_error_wrap(&I->st, cg_graph_status(I->g), st->expr->pos, cg_slot_rank(I, s),
                                 I->world);
    }
    return 0;
}

static int run_call(cg_interp *I, const cg_stmt *st)
{
    const cg_expr *e = st->expr;
    if (strcmp(e->name, "zero_grad") == 0)
        return I->comm->zero_grad(I->comm->self, I->g) == 0
                   ? 0
                   : cg_error_wrap(&I->st, cg_graph_status(I->g), e->pos, -1, 0);
    int n = e->nargs;
    cg_val *v = calloc((size_t)(I->nslots * n), sizeof *v);
    if (!v)
        return cg_error_at(&I->st, e->pos, "expected memory, got out of memory");
    int rc = 0;
    for (int a = 0; a < n && rc == 0; a++)
        rc = cg_eval(I, e->args[a], v + (size_t)a * I->nslots);
    if (rc == 0 && strcmp(e->name, "backward") == 0)
        rc = run_backward(I, st, v);
    else if (rc == 0 && strcmp(e->name, "send") == 0)
        rc = run_send(I, st, v, v + I->nslots);
    else if (rc == 0)
        rc = cg_error_at(&I->st, e->pos, "expected backward, zero_grad or send, got '%s'", e->name);
    free(v);
    return rc;
}

static int run_stmts(cg_interp *I, cg_stmt *const *stmts, int n);

/* `on r1, r2 { ... }`: the body runs on the listed ranks only; `on g { }`
 * on the members of group g (interp_group.c). */
static int run_on(cg_interp *I, const cg_stmt *st)
{
    bool *saved = malloc((size_t)I->nslots * sizeof *saved);
    cg_val *v = calloc((size_t)I->nslots, sizeof *v);
    int rc = (saved && v) ? 0 : cg_error_at(&I->st, st->pos, "expected memory, got out of memory");
    if (rc == 0)
        memcpy(saved, I->active, (size_t)I->nslots * sizeof *saved);
    bool *member = calloc((size_t)I->nslots, sizeof *member);
    if (rc == 0 && !member)
        rc = cg_error_at(&I->st, st->pos, "expected memory, got out of memory");
    /* `on g { }`: the members of the slot's group g */
    for (int s = 0; rc == 0 && st->nranks == 1 && s < I->nslots; s++)
        member[s] =
            cg_group_index(cg_group_at(I, cg_group_bound(I, s, st->ranks[0])), I->ranks[s]) >= 0;
    bool on_group = rc == 0 && st->nranks == 1 && cg_group_bound(I, 0, st->ranks[0]) >= 0;
    for (int k = 0; rc == 0 && !on_group && k < st->nranks; k++) {
        rc = cg_eval(I, st->ranks[k], v);
        for (int s = 0; rc == 0 && s < I->nslots; s++) {
            int64_t r;
            if (!I->active[s])
                continue;
            rc = cg_val_int(I, &v[s], st->ranks[k]->pos, s, "a rank", &r);
            if (rc == 0 && (r < 0 || r >= I->world))
                rc = cg_error_at_rank(&I->st, st->ranks[k]->pos, cg_slot_rank(I, s), I->world,
                                      "expected a rank in 0..%d, got %lld", I->world - 1,
                                      (long long)r);
            if (rc == 0 && r == I->ranks[s])
                member[s] = true;
        }
    }
    if (rc == 0) {
        for (int s = 0; s < I->nslots; s++)
            I->active[s] = I->active[s] && member[s];
        rc = run_stmts(I, st->body, st->nbody);
        memcpy(I->active, saved, (size_t)I->nslots * sizeof *saved);
    }
    free(member);
    free(v);
    free(saved);
    return rc;
}

static int run_stmts(cg_interp *I, cg_stmt *const *stmts, int n)
{
    for (int i = 0; i < n; i++) {
        const cg_stmt *st = stmts[i];
        I->stmt = st->index;
        I->bind_name = st->kind == CG_S_ASSIGN ? st->names[0] : "";
        I->draws = 0;
        int rc = st->kind == CG_S_ASSIGN ? run_assign(I, st)
               : st->kind == CG_S_CALL   ? run_call(I, st)
                                         : run_on(I, st);
        if (rc != 0)
            return rc;
        if (I->share && I->share->broken) /* the oracle runs it again unshared: stop here */
            return 0;
    }
    return 0;
}

int cg_interp_run(cg_interp *I)
{
    for (int s = 0; s < I->nslots; s++)
        I->active[s] = true;
    I->seq = 0;
    I->st = CG_STATUS_OK;
    if (run_stmts(I, I->cs->stmts, I->cs->nstmts) == 0)
        return 0;
    if (I->st.code == CG_EXIT_OK) /* every failure names itself; a silent one is still a failure */
        cg_error(&I->st, "%s: the program failed without a message",
                 I->cs->file ? I->cs->file : "?");
    return -1;
}

cg_tensor *cg_interp_eval_expect(cg_interp *I, const cg_expr *e, int slot)
{
    /* one of many on a kept run (the oracle's): an earlier expectation's
     * failure is not this one's, and the ranks' active flags are put back */
    cg_val *v = calloc((size_t)I->nslots, sizeof *v);
    bool *was = malloc((size_t)I->nslots * sizeof *was);
    if (!v || !was) {
        free(v);
        free(was);
        cg_error_infra(&I->st, "out of memory");
        return NULL;
    }
    memcpy(was, I->active, (size_t)I->nslots * sizeof *was);
    I->st = CG_STATUS_OK;
    *cg_graph_status(I->g) = CG_STATUS_OK;
    for (int s = 0; s < I->nslots; s++)
        I->active[s] = s == slot;
    I->bind_name = "";
    cg_tensor *t = NULL;
    if (cg_eval(I, e, v) == 0 && !(t = cg_val_tensor(I, &v[slot])))
        cg_error_wrap(&I->st, cg_graph_status(I->g), e->pos, cg_slot_rank(I, slot), I->world);
    memcpy(I->active, was, (size_t)I->nslots * sizeof *was);
    free(was);
    free(v);
    return t;
}
