/* interp_call.c — function calls: tensor constructors, param() and local
 * ops here; collectives and recv in interp_comm.c; statement-only calls
 * (backward, zero_grad, send) in interp.c. */
#include "interp_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_table.h"
#include "ops.h"
#include "rng.h"

int cg_arg_at(const cg_expr *e, int pos, const char *kw)
{
    int positional = 0;
    for (int i = 0; i < e->nargs; i++) {
        if (e->kwnames && e->kwnames[i]) {
            if (kw && strcmp(e->kwnames[i], kw) == 0)
                return i;
        } else if (positional++ == pos) {
            return i;
        }
    }
    return -1;
}

static int npositional(const cg_expr *e)
{
    int n = 0;
    for (int i = 0; i < e->nargs; i++)
        n += !(e->kwnames && e->kwnames[i]);
    return n;
}

static cg_val *arg(const cg_call *c, int i, int slot) { return &c->args[(size_t)i * c->I->nslots + slot]; }

int cg_call_int(const cg_call *c, int i, int slot, const char *what, int64_t *out)
{
    return cg_val_int(c->I, arg(c, i, slot), c->e->args[i]->pos, slot, what, out);
}

cg_tensor *cg_call_tensor(const cg_call *c, int i, int slot)
{
    cg_tensor *t = cg_val_tensor(c->I, arg(c, i, slot));
    if (!t)
        cg_error_wrap(&c->I->st, cg_graph_status(c->I->g), c->e->args[i]->pos,
                      cg_slot_rank(c->I, slot), c->I->world);
    return t;
}

/* Dimensions from positional arguments first..npositional-1. */
static int dims_from(const cg_call *c, int first, int slot, int *ndim, int64_t *shape)
{
    int n = npositional(c->e) - first;
    if (n > CG_MAX_DIMS)
        return cg_error_at_rank(&c->I->st, c->e->pos, cg_slot_rank(c->I, slot), c->I->world,
                                "expected at most %d dimensions, got %d", CG_MAX_DIMS, n);
    for (int k = 0; k < n; k++) {
        int i = cg_arg_at(c->e, first + k, NULL);
        if (cg_call_int(c, i, slot, "a dimension", &shape[k]) != 0)
            return -1;
        if (shape[k] < 0)
            return cg_error_at_rank(&c->I->st, c->e->args[i]->pos, cg_slot_rank(c->I, slot),
                                    c->I->world, "expected a dimension >= 0, got %lld",
                                    (long long)shape[k]);
    }
    *ndim = n;
    return 0;
}

/* ones, zeros, full, rand, randn, arange, eye: values in the case dtype. */
static cg_tensor *construct(const cg_call *c, int slot, cg_fn_id id)
{
    cg_interp *I = c->I;
    int ndim = 0;
    int64_t shape[CG_MAX_DIMS] = {0}, a = 0;
    bool is_full = id == CG_FN_FULL, is_eye = id == CG_FN_EYE, is_arange = id == CG_FN_ARANGE;
    if (is_arange || is_eye) {
        int64_t v[3] = {0, -1, 0};
        for (int k = 0; k < npositional(c->e); k++)
            if (cg_call_int(c, cg_arg_at(c->e, k, NULL), slot, "a size", &v[k]) != 0)
                return NULL;
        ndim = is_arange ? 1 : 2;
        shape[0] = v[0];
        shape[1] = v[1] < 0 ? v[0] : v[1];
        a = v[2];
    } else if (dims_from(c, is_full ? 1 : 0, slot, &ndim, shape) != 0) {
        return NULL;
    }
    /* built on the host and placed afterwards: the only upload of a run */
    cg_tensor *t = cg_tensor_new_host(I->g, I->dtype, ndim, shape);
    if (!t) {
        cg_error_wrap(&I->st, cg_graph_status(I->g), c->e->pos, cg_slot_rank(I, slot), I->world);
        return NULL;
    }
    char key_name[160];
    snprintf(key_name, sizeof key_name, "%s#%d", I->bind_name[0] ? I->bind_name : "stmt", I->draws);
    uint64_t key = cg_rng_key(I->cs->seed, I->ranks[slot], key_name);
    double fill = 0.0;
    if (is_full) {
        const cg_val *v = arg(c, cg_arg_at(c->e, 0, NULL), slot);
        if (v->is_tensor) {
            cg_error_at_rank(&I->st, c->e->args[0]->pos, cg_slot_rank(I, slot), I->world,
                             "expected a number to fill with, got a tensor");
            return NULL;
        }
        fill = v->s;
    }
    for (int64_t i = 0; i < t->numel; i++) {
        double v = id == CG_FN_ONES ? 1.0 : id == CG_FN_ZEROS ? 0.0 : is_full ? fill
                 : is_arange ? (double)i
                 : is_eye ? (double)(i % shape[1] == i / shape[1] + a)
                 : id == CG_FN_RAND ? cg_rng_uniform(key, i, I->cs->dtype)
                                    : cg_rng_normal(key, i, I->cs->dtype);
        cg_set(t, i, cg_round_to(I->cs->dtype, v));
    }
    cg_tensor *placed = cg_tensor_place(I->g, t);
    if (!placed)
        cg_error_wrap(&I->st, cg_graph_status(I->g), c->e->pos, cg_slot_rank(I, slot), I->world);
    return placed;
}

/* param(t): a leaf that requires grad, holding t's values. */
static cg_tensor *make_param(const cg_call *c, int slot)
{
    cg_tensor *src = cg_call_tensor(c, 0, slot);
    cg_tensor *t = src ? cg_tensor_cast(c->I->g, src, c->I->dtype) : NULL;
    if (!t && src)
        cg_error_wrap(&c->I->st, cg_graph_status(c->I->g), c->e->pos, cg_slot_rank(c->I, slot),
                      c->I->world);
    if (t) {
        t->is_leaf = true;
        t->requires_grad = true;
    }
    return t;
}

/* The axis argument, Python-style negatives allowed; `dflt` when absent
 * (-1 = over all elements, for sum/mean/logsumexp). */
static int axis_arg(const cg_call *c, int slot, cg_tensor *t, int pos, int dflt, int *axis)
{
    int i = cg_arg_at(c->e, pos, "axis");
    if (i < 0) {
        *axis = dflt;
        return 0;
    }
    int64_t a;
    if (cg_call_int(c, i, slot, "an axis", &a) != 0)
        return -1;
    if (a < 0)
        a += t->ndim;
    if (a < 0 || a >= (t->ndim > 0 ? t->ndim : 1))
        return cg_error_at_rank(&c->I->st, c->e->args[i]->pos, cg_slot_rank(c->I, slot),
                                c->I->world, "expected an axis in [0, %d), got %lld", t->ndim,
                                (long long)a);
    *axis = (int)a;
    return 0;
}

/* ---- the op table's evaluators (op_table.h, class CG_OPC_CALL) ----------- */

/* cat(t1, t2, ..., axis=A) */
static cg_tensor *eval_cat(const cg_call *c, int slot)
{
    int n = npositional(c->e), axis = 0;
    if (n < 1) { /* the parser insists too; never read xs[0] unset */
        cg_error_at_rank(&c->I->st, c->e->pos, cg_slot_rank(c->I, slot), c->I->world,
                         "expected at least one tensor to cat, got none");
        return NULL;
    }
    cg_tensor *xs[64];
    for (int k = 0; k < n; k++)
        if (!(xs[k] = cg_call_tensor(c, cg_arg_at(c->e, k, NULL), slot)))
            return NULL;
    if (axis_arg(c, slot, xs[0], n, 0, &axis) != 0)
        return NULL;
    return cg_cat(c->I->g, xs, n, axis);
}

/* reshape(t, d0, d1, ...) */
static cg_tensor *eval_reshape(const cg_call *c, int slot)
{
    cg_tensor *t = cg_call_tensor(c, 0, slot);
    int nd = npositional(c->e) - 1;
    int64_t shape[CG_MAX_DIMS];
    for (int k = 0; t && k < nd && k < CG_MAX_DIMS; k++)
        if (cg_call_int(c, cg_arg_at(c->e, k + 1, NULL), slot, "a dimension", &shape[k]) != 0)
            return NULL;
    return t ? cg_reshape(c->I->g, t, nd, shape) : NULL;
}

/* chunk(t, n) / split(t, size): torch.chunk / torch.split on the first axis,
 * the pieces stacked: [n, rows / n, ...], so chunk(x, world)[rank] is this
 * rank's piece; the pieces must be equal (a reshape, differentiable) */
static cg_tensor *eval_pieces(const cg_call *c, int slot)
{
    const char *f = c->e->name;
    cg_tensor *t = cg_call_tensor(c, 0, slot);
    int64_t k;
    if (!t || cg_call_int(c, 1, slot, f[0] == 'c' ? "a number of chunks" : "a chunk size", &k) != 0)
        return NULL;
    int64_t rows = t->ndim ? t->shape[0] : 1;
    int64_t n = f[0] == 'c' ? k : (k > 0 ? rows / k : 0), size = n > 0 ? rows / n : 0;
    if (t->ndim == 0 || k <= 0 || n * size != rows || (f[0] == 's' && size != k)) {
        cg_error_at_rank(&c->I->st, c->e->args[1]->pos, cg_slot_rank(c->I, slot), c->I->world,
                         "expected %s that cuts the first axis (%lld rows) into equal pieces, "
                         "got %lld", f[0] == 'c' ? "a number of chunks" : "a chunk size",
                         (long long)rows, (long long)k);
        return NULL;
    }
    int64_t shape[CG_MAX_DIMS + 1] = {n, size};
    for (int d = 1; d < t->ndim; d++)
        shape[d + 1] = t->shape[d];
    if (t->ndim + 1 > CG_MAX_DIMS) {
        cg_error_at_rank(&c->I->st, c->e->pos, cg_slot_rank(c->I, slot), c->I->world,
                         "expected at most %d dimensions after %s, got %d", CG_MAX_DIMS, f,
                         t->ndim + 1);
        return NULL;
    }
    return cg_reshape(c->I->g, t, t->ndim + 1, shape);
}

/* slice(t, axis, lo, hi) */
static cg_tensor *eval_slice(const cg_call *c, int slot)
{
    cg_tensor *t = cg_call_tensor(c, 0, slot);
    int64_t v[3];
    for (int k = 0; t && k < 3; k++)
        if (cg_call_int(c, k + 1, slot, k == 0 ? "an axis" : "an index", &v[k]) != 0)
            return NULL;
    return t ? cg_slice(c->I->g, t, (int)v[0], v[1], v[2]) : NULL;
}

/* cross_entropy's labels are read, never differentiated: its own signature */
static cg_tensor *cross_entropy_of(cg_graph *g, cg_tensor *logits, cg_tensor *labels)
{
    return cg_cross_entropy(g, logits, labels);
}

/* Each op's entry, typed by its class: the op table's last column. */
typedef union op_entry {
    const void *none; /* CG_OPC_CTOR, CG_OPC_LEAF: construct() and make_param() */
    cg_tensor *(*unary)(cg_graph *, cg_tensor *);
    cg_tensor *(*binary)(cg_graph *, cg_tensor *, cg_tensor *);
    cg_tensor *(*axis)(cg_graph *, cg_tensor *, int);
    cg_tensor *(*call)(const cg_call *, int);
} op_entry;

#define ENTRY_CG_OPC_CTOR(f) {.none = f}
#define ENTRY_CG_OPC_LEAF(f) {.none = f}
#define ENTRY_CG_OPC_UNARY(f) {.unary = f}
#define ENTRY_CG_OPC_BINARY(f) {.binary = f}
#define ENTRY_CG_OPC_AXIS(f) {.axis = f}
#define ENTRY_CG_OPC_AXIS_LAST(f) {.axis = f}
#define ENTRY_CG_OPC_CALL(f) {.call = f}
static const op_entry entries[CG_FN_COUNT] = {
#define CG_OP_TABLE_ENTRY(id, name, lo, hi, kw, kwpos, cls, shape, dom, diff, entry)                \
    [CG_FN_##id] = ENTRY_##cls(entry),
    CG_OP_TABLE(CG_OP_TABLE_ENTRY)
#undef CG_OP_TABLE_ENTRY
};

/* A local op of the table, by its class. */
static cg_tensor *local_op(const cg_call *c, int slot, cg_fn_id id)
{
    cg_graph *g = c->I->g;
    const cg_op_info *op = cg_op_info_of(id);
    const op_entry *en = &entries[id];
    if (op->cls == CG_OPC_CALL)
        return en->call(c, slot);
    cg_tensor *t = cg_call_tensor(c, 0, slot), *b = NULL;
    if (!t)
        return NULL;
    if (id == CG_FN_DETACH) /* values and gradients part ways on purpose */
        cg_note_nondiff(g, "detach() stops the gradient on purpose");
    int axis;
    switch (op->cls) {
    case CG_OPC_UNARY:
        return en->unary(g, t);
    case CG_OPC_BINARY:
        return (b = cg_call_tensor(c, 1, slot)) ? en->binary(g, t, b) : NULL;
    case CG_OPC_AXIS:
    case CG_OPC_AXIS_LAST: /* the softmaxes default to the last axis, as torch's dim=-1 */
        if (axis_arg(c, slot, t, 1, op->cls == CG_OPC_AXIS ? -1 : t->ndim > 0 ? t->ndim - 1 : 0, &axis) != 0)
            return NULL;
        return en->axis(g, t, axis);
    default:
        break;
    }
    cg_error_at_rank(&c->I->st, c->e->pos, cg_slot_rank(c->I, slot), c->I->world,
                     "expected a tensor function, got '%s'", c->e->name);
    return NULL;
}

int cg_eval_call(cg_interp *I, const cg_expr *e, cg_val *out)
{
    if (strcmp(e->name, "backward") == 0 || strcmp(e->name, "zero_grad") == 0 ||
        strcmp(e->name, "send") == 0)
        return cg_error_at(&I->st, e->pos, "expected an expression, got statement %s()", e->name);
    cg_call c = {I, e, calloc((size_t)(e->nargs + 1) * (size_t)I->nslots, sizeof(cg_val))};
    if (!c.args)
        return cg_error_at(&I->st, e->pos, "expected memory, got out of memory");
    int rc = 0;
    if (cg_is_group_maker(e))
        rc = cg_error_at(&I->st, e->pos,
                         "expected %s() alone on the right of an assignment, got it in "
                         "an expression",
                         e->name);
    if (rc == 0 && (strcmp(e->name, "group_rank") == 0 || strcmp(e->name, "group_size") == 0)) {
        rc = cg_eval_group_query(I, e, out);
        free(c.args);
        return rc;
    }
    /* a collective's group= names a group, not a value: interp_group.c reads it */
    const cg_collective *coll = cg_collective_named(e->name);
    int group_at = coll ? cg_arg_at(e, cg_coll_keyword_index(coll->kind, "group"), "group") : -1;
    for (int i = 0; i < e->nargs && rc == 0; i++)
        if (e->args[i]->kind != CG_E_WORD && i != group_at)
            rc = cg_eval(I, e->args[i], c.args + (size_t)i * I->nslots);
    if (rc == 0 && cg_collective_named(e->name)) { /* send was refused above */
        rc = cg_eval_comm(&c, out);
        free(c.args);
        return rc;
    }
    int id = cg_op_from_name(e->name);
    const cg_op_info *op = cg_op_info_of(id);
    if (rc == 0 && !op)
        rc = cg_error_at(&I->st, e->pos, "expected a tensor function, got '%s'", e->name);
    bool ctor = op && op->cls == CG_OPC_CTOR, leaf = op && op->cls == CG_OPC_LEAF;
    bool draws = id == CG_FN_RAND || id == CG_FN_RANDN;
    /* a local op or a constant of the same arguments is made once for the
     * slots that share them (interp_share.c); a param is each slot's own leaf,
     * and rand/randn draw from a key with the rank in it */
    bool own = leaf || draws;
    int *leader = rc == 0 ? malloc((size_t)I->nslots * sizeof *leader) : NULL;
    if (rc == 0 && !leader)
        rc = cg_error_at(&I->st, e->pos, "expected memory, got out of memory");
    for (int s = 0; leader && s < I->nslots; s++)
        leader[s] = s;
    if (rc == 0 && !own)
        cg_share_plan(I, c.args, e->nargs, (size_t)I->nslots, leader);
    for (int s = 0; rc == 0 && s < I->nslots; s++) {
        if (!I->active[s] || leader[s] != s)
            continue;
        *cg_graph_status(I->g) = CG_STATUS_OK;
        cg_tensor *t = ctor ? construct(&c, s, (cg_fn_id)id) : leaf ? make_param(&c, s) : local_op(&c, s, (cg_fn_id)id);
        if (!t) {
            if (!I->st.msg[0] || cg_graph_status(I->g)->msg[0])
                cg_error_wrap(&I->st, cg_graph_status(I->g), e->pos, cg_slot_rank(I, s), I->world);
            rc = -1;
        }
        out[s] = (cg_val){.is_tensor = true, .t = t};
    }
    if (rc == 0 && !own)
        cg_share_finish(I, c.args, e->nargs, (size_t)I->nslots, leader, out);
    /* once per call, not per slot: every rank's draw k has the same key name */
    if (draws)
        I->draws++;
    free(leader);
    free(c.args);
    return rc;
}
