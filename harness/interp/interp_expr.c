/* interp_expr.c — expressions: numbers, names, list literals, operators,
 * ternaries and indexing, evaluated for every active slot at once. */
#include "interp_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"

cg_tensor *cg_val_tensor(cg_interp *I, const cg_val *v)
{
    if (v->is_tensor)
        return v->t;
    return cg_scalar(I->g, I->dtype, cg_round_to(I->cs->dtype, v->s));
}

int cg_val_int(cg_interp *I, const cg_val *v, cg_srcpos pos, int slot, const char *what,
               int64_t *out)
{
    /* a one-element constant (rows = 16 / world) counts as its number */
    bool constant = v->is_tensor && v->t->numel == 1 && !v->t->requires_grad;
    if (v->is_tensor && !constant)
        return cg_error_at_rank(&I->st, pos, cg_slot_rank(I, slot), I->world,
                                "expected %s (an integer), got a tensor", what);
    /* on a CUDA graph this reads one element back: an integer argument,
     * never a value the gradients depend on */
    const cg_tensor *h = constant ? cg_tensor_host(I->g, v->t) : NULL;
    if (constant && !h)
        return cg_error_wrap(&I->st, cg_graph_status(I->g), pos, cg_slot_rank(I, slot), I->world);
    double x = constant ? cg_get(h, 0) : v->s;
    if (!isfinite(x) || x != floor(x) || fabs(x) > 1e15)
        return cg_error_at_rank(&I->st, pos, cg_slot_rank(I, slot), I->world,
                                "expected %s (an integer), got %g", what, x);
    *out = (int64_t)x;
    return 0;
}

static const char *op_text(cg_opcode op)
{
    static const char *const text[] = {
        [CG_OP_ADD] = "+", [CG_OP_SUB] = "-", [CG_OP_MUL] = "*", [CG_OP_DIV] = "/",
        [CG_OP_POW] = "**", [CG_OP_MATMUL] = "@", [CG_OP_EQ] = "==", [CG_OP_NE] = "!=",
        [CG_OP_LT] = "<", [CG_OP_LE] = "<=", [CG_OP_GT] = ">", [CG_OP_GE] = ">=",
        [CG_OP_AND] = "&&", [CG_OP_OR] = "||", [CG_OP_MOD] = "%", [CG_OP_NEG] = "-",
        [CG_OP_NOT] = "!",
    };
    return (op > 0 && op <= CG_OP_NOT) ? text[op] : "?";
}

/* ---- list literals: [1, 2], [[1, 2], [3, 4]] ---------------------------- */

/* A list's shape is syntactic: fix it from the first item at each depth,
 * check every other item against it, and collect the leaves in order. */
static int list_shape(cg_interp *I, const cg_expr *e, int depth, int *ndim, int64_t *shape,
                      const cg_expr **leaves, int64_t *n)
{
    if (e->kind != CG_E_LIST) {
        if (depth != *ndim)
            return cg_error_at(&I->st, e->pos, "expected a rectangular list, got a ragged one");
        if (leaves)
            leaves[*n] = e;
        (*n)++;
        return 0;
    }
    if (depth >= CG_MAX_DIMS)
        return cg_error_at(&I->st, e->pos, "expected at most %d nested lists, got more",
                           CG_MAX_DIMS);
    if (depth == *ndim && !leaves) {
        *ndim = depth + 1;
        shape[depth] = e->nargs;
    } else if (depth >= *ndim || shape[depth] != e->nargs) {
        return cg_error_at(&I->st, e->pos, "expected a rectangular list, got a ragged one");
    }
    for (int i = 0; i < e->nargs; i++)
        if (list_shape(I, e->args[i], depth + 1, ndim, shape, leaves, n) != 0)
            return -1;
    return 0;
}

static int eval_list(cg_interp *I, const cg_expr *e, cg_val *out)
{
    int ndim = 0;
    int64_t shape[CG_MAX_DIMS] = {0}, n = 0;
    if (list_shape(I, e, 0, &ndim, shape, NULL, &n) != 0)
        return -1;
    size_t ns = (size_t)I->nslots;
    const cg_expr **leaves = calloc((size_t)n + 1, sizeof *leaves);
    cg_val *vals = calloc(((size_t)n + 1) * ns, sizeof *vals);
    int64_t m = 0;
    int rc = (leaves && vals) ? list_shape(I, e, 0, &ndim, shape, leaves, &m)
                              : cg_error_at(&I->st, e->pos, "expected memory, got out of memory");
    for (int64_t i = 0; rc == 0 && i < n; i++)
        rc = cg_eval(I, leaves[i], vals + i * ns);
    for (int s = 0; rc == 0 && s < I->nslots; s++) {
        if (!I->active[s])
            continue;
        cg_tensor *t = cg_tensor_new_host(I->g, I->dtype, ndim, shape);
        if (!t) {
            rc = cg_error_wrap(&I->st, cg_graph_status(I->g), e->pos, cg_slot_rank(I, s), I->world);
            break;
        }
        for (int64_t i = 0; rc == 0 && i < n; i++) {
            if (vals[i * ns + s].is_tensor)
                rc = cg_error_at_rank(&I->st, leaves[i]->pos, cg_slot_rank(I, s), I->world,
                                      "expected a number in a list literal, got a tensor");
            else
                cg_set(t, i, cg_round_to(I->cs->dtype, vals[i * ns + s].s));
        }
        if (rc == 0 && !(t = cg_tensor_place(I->g, t))) {
            rc = cg_error_wrap(&I->st, cg_graph_status(I->g), e->pos, cg_slot_rank(I, s), I->world);
            break;
        }
        out[s] = (cg_val){.is_tensor = true, .t = t};
    }
    free(leaves);
    free(vals);
    return rc;
}

/* ---- operators ----------------------------------------------------------- */

static int scalar_binary(cg_opcode op, double a, double b, double *r)
{
    switch (op) {
    case CG_OP_ADD: *r = a + b; return 0;
    case CG_OP_SUB: *r = a - b; return 0;
    case CG_OP_MUL: *r = a * b; return 0;
    case CG_OP_DIV: *r = a / b; return 0;
    case CG_OP_POW: *r = pow(a, b); return 0;
    case CG_OP_MOD: *r = fmod(a, b); return 0;
    case CG_OP_EQ: *r = a == b; return 0;
    case CG_OP_NE: *r = a != b; return 0;
    case CG_OP_LT: *r = a < b; return 0;
    case CG_OP_LE: *r = a <= b; return 0;
    case CG_OP_GT: *r = a > b; return 0;
    case CG_OP_GE: *r = a >= b; return 0;
    case CG_OP_AND: *r = (a != 0) && (b != 0); return 0;
    case CG_OP_OR: *r = (a != 0) || (b != 0); return 0;
    default: return -1;
    }
}

static cg_tensor *tensor_binary(cg_graph *g, cg_opcode op, cg_tensor *a, cg_tensor *b)
{
    switch (op) {
    case CG_OP_ADD: return cg_add(g, a, b);
    case CG_OP_SUB: return cg_sub(g, a, b);
    case CG_OP_MUL: return cg_mul(g, a, b);
    case CG_OP_DIV: return cg_div(g, a, b);
    case CG_OP_POW: return cg_pow(g, a, b);
    case CG_OP_MATMUL: return cg_matmul(g, a, b);
    default: return NULL;
    }
}

static int eval_binary(cg_interp *I, const cg_expr *e, cg_val *out)
{
    cg_val *l = calloc((size_t)I->nslots * 2, sizeof *l);
    if (!l)
        return cg_error_at(&I->st, e->pos, "expected memory, got out of memory");
    cg_val *r = l + I->nslots;
    int *leader = malloc((size_t)I->nslots * sizeof *leader);
    int rc = leader ? cg_eval(I, e->args[0], l)
                    : cg_error_at(&I->st, e->pos, "expected memory, got out of memory");
    if (rc == 0)
        rc = cg_eval(I, e->args[1], r);
    if (rc == 0)
        cg_share_plan(I, l, 2, (size_t)I->nslots, leader);
    for (int s = 0; rc == 0 && s < I->nslots; s++) {
        if (!I->active[s] || leader[s] != s)
            continue;
        if (!l[s].is_tensor && !r[s].is_tensor && e->op != CG_OP_MATMUL) {
            out[s] = (cg_val){0};
            scalar_binary(e->op, l[s].s, r[s].s, &out[s].s);
            continue;
        }
        if (e->op >= CG_OP_EQ && e->op != CG_OP_MATMUL) {
            rc = cg_error_at_rank(&I->st, e->pos, cg_slot_rank(I, s), I->world,
                                  "expected numbers on both sides of '%s', got a tensor",
                                  op_text(e->op));
            break;
        }
        cg_tensor *a = cg_val_tensor(I, &l[s]), *b = cg_val_tensor(I, &r[s]);
        cg_tensor *t = (a && b) ? tensor_binary(I->g, e->op, a, b) : NULL;
        if (!t) {
            rc = cg_error_wrap(&I->st, cg_graph_status(I->g), e->pos, cg_slot_rank(I, s), I->world);
            break;
        }
        out[s] = (cg_val){.is_tensor = true, .t = t};
    }
    if (rc == 0)
        cg_share_finish(I, l, 2, (size_t)I->nslots, leader, out);
    free(leader);
    free(l);
    return rc;
}

static int eval_unary(cg_interp *I, const cg_expr *e, cg_val *out)
{
    size_t n = (size_t)I->nslots;
    cg_val *a = calloc(n, sizeof *a);
    int *leader = malloc(n * sizeof *leader);
    int rc = a && leader ? cg_eval(I, e->args[0], a)
                         : cg_error_at(&I->st, e->pos, "expected memory, got out of memory");
    if (rc == 0)
        cg_share_plan(I, a, 1, n, leader);
    for (int s = 0; rc == 0 && s < I->nslots; s++) {
        if (!I->active[s] || leader[s] != s)
            continue;
        out[s] = a[s];
        if (!out[s].is_tensor) {
            out[s].s = e->op == CG_OP_NOT ? (out[s].s == 0) : -out[s].s;
            continue;
        }
        if (e->op == CG_OP_NOT)
            rc = cg_error_at_rank(&I->st, e->pos, cg_slot_rank(I, s), I->world,
                                  "expected a number after '!', got a tensor");
        else if (!(out[s].t = cg_neg(I->g, out[s].t)))
            rc = cg_error_wrap(&I->st, cg_graph_status(I->g), e->pos, cg_slot_rank(I, s), I->world);
    }
    if (rc == 0)
        cg_share_finish(I, a, 1, n, leader, out);
    free(leader);
    free(a);
    return rc;
}

/* c ? a : b — each slot evaluates only its own branch, so per-rank values
 * (rank == 0 ? ones(2,2) : zeros(2,2)) may even differ in shape. */
static int eval_ternary(cg_interp *I, const cg_expr *e, cg_val *out)
{
    size_t n = (size_t)I->nslots;
    cg_val *c = calloc(n, sizeof *c);
    bool *saved = malloc(n * sizeof *saved);
    int rc = (c && saved) ? cg_eval(I, e->args[0], c)
                          : cg_error_at(&I->st, e->pos, "expected memory, got out of memory");
    if (rc == 0)
        memcpy(saved, I->active, n * sizeof *saved);
    for (int branch = 1; rc == 0 && branch <= 2; branch++) {
        for (size_t s = 0; s < n; s++) {
            if (saved[s] && c[s].is_tensor) {
                rc = cg_error_at_rank(&I->st, e->args[0]->pos, cg_slot_rank(I, (int)s), I->world,
                                      "expected a number as condition, got a tensor");
                break;
            }
            I->active[s] = saved[s] && ((c[s].s != 0) == (branch == 1));
        }
        if (rc == 0)
            rc = cg_eval(I, e->args[branch], out);
    }
    if (saved)
        memcpy(I->active, saved, n * sizeof *saved);
    free(c);
    free(saved);
    return rc;
}

/* t[i] picks along axis 0; t[a:b] slices it (missing bounds: start, end). */
static int eval_index(cg_interp *I, const cg_expr *e, cg_val *out)
{
    size_t n = (size_t)I->nslots;
    cg_val *v = calloc(3 * n, sizeof *v);
    int *leader = malloc(n * sizeof *leader);
    if (!v || !leader) {
        free(v);
        free(leader);
        return cg_error_at(&I->st, e->pos, "expected memory, got out of memory");
    }
    int rc = cg_eval(I, e->args[0], v);
    for (int k = 1; rc == 0 && k <= 2; k++)
        if (k < e->nargs && e->args[k])
            rc = cg_eval(I, e->args[k], v + k * n);
    if (rc == 0)
        cg_share_plan(I, v, 3, n, leader);
    for (int s = 0; rc == 0 && s < I->nslots; s++) {
        if (!I->active[s] || leader[s] != s)
            continue;
        if (!v[s].is_tensor || v[s].t->ndim == 0) {
            rc = cg_error_at_rank(&I->st, e->pos, cg_slot_rank(I, s), I->world,
                                  "expected a tensor with at least one dimension to index, got %s",
                                  v[s].is_tensor ? "a 0-d tensor" : "a number");
            break;
        }
        int64_t lo = 0, hi = v[s].t->shape[0];
        if (e->nargs > 1 && e->args[1])
            rc = cg_val_int(I, &v[n + s], e->args[1]->pos, s, "an index", &lo);
        if (rc == 0 && e->is_slice && e->nargs > 2 && e->args[2])
            rc = cg_val_int(I, &v[2 * n + s], e->args[2]->pos, s, "an index", &hi);
        if (rc != 0)
            break;
        cg_tensor *t = e->is_slice ? cg_slice(I->g, v[s].t, 0, lo, hi) : cg_index(I->g, v[s].t, lo);
        if (!t) {
            rc = cg_error_wrap(&I->st, cg_graph_status(I->g), e->pos, cg_slot_rank(I, s), I->world);
            break;
        }
        out[s] = (cg_val){.is_tensor = true, .t = t};
    }
    if (rc == 0)
        cg_share_finish(I, v, 3, n, leader, out);
    free(leader);
    free(v);
    return rc;
}

int cg_eval(cg_interp *I, const cg_expr *e, cg_val *out)
{
    switch (e->kind) {
    case CG_E_NUM:
    case CG_E_RANK:
    case CG_E_WORLD:
        for (int s = 0; s < I->nslots; s++) /* active slots only: a ternary branch writes its own */
            if (I->active[s])
                out[s] = (cg_val){.s = e->kind == CG_E_NUM ? e->num
                                     : e->kind == CG_E_RANK ? I->ranks[s] : I->world};
        return 0;
    case CG_E_NAME:
        for (int s = 0; s < I->nslots; s++) {
            if (!I->active[s])
                continue;
            const cg_binding *b = cg_interp_lookup(I, s, e->name);
            if (!b)
                return cg_error_at_rank(&I->st, e->pos, cg_slot_rank(I, s), I->world,
                                        "expected '%s' to be defined on this rank, got "
                                        "no assignment to it here",
                                        e->name);
            out[s] = (cg_val){.is_tensor = true, .t = b->t};
        }
        return 0;
    case CG_E_LIST: return eval_list(I, e, out);
    case CG_E_UNARY: return eval_unary(I, e, out);
    case CG_E_BINARY: return eval_binary(I, e, out);
    case CG_E_TERNARY: return eval_ternary(I, e, out);
    case CG_E_INDEX: return eval_index(I, e, out);
    case CG_E_CALL: return cg_eval_call(I, e, out);
    case CG_E_WORD:
        return cg_error_at(&I->st, e->pos, "expected a tensor or a number, got reduction op '%s'",
                           e->name);
    }
    return cg_error_at(&I->st, e->pos, "expected an expression, got an unknown node");
}
