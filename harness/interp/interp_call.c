/* interp_call.c — function calls: tensor constructors, param(), local ops,
 * collectives and recv. Statement-only calls (backward, zero_grad, send) are
 * in interp.c. */
#include "interp_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_table.h"
#include "ops.h"
#include "rng.h"

/* Index into e->args of positional argument `pos` or keyword `kw`; -1 if absent. */
static int arg_at(const cg_expr *e, int pos, const char *kw)
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

/* Per-call scratch: the evaluated arguments, args[i * nslots + slot]. */
typedef struct call_ctx {
    cg_interp *I;
    const cg_expr *e;
    cg_val *args;
} call_ctx;

static cg_val *arg(const call_ctx *c, int i, int slot) { return &c->args[(size_t)i * c->I->nslots + slot]; }

static int int_arg(const call_ctx *c, int i, int slot, const char *what, int64_t *out)
{
    return cg_val_int(c->I, arg(c, i, slot), c->e->args[i]->pos, slot, what, out);
}

static cg_tensor *tensor_arg(const call_ctx *c, int i, int slot)
{
    cg_tensor *t = cg_val_tensor(c->I, arg(c, i, slot));
    if (!t)
        cg_error_wrap(&c->I->st, cg_graph_status(c->I->g), c->e->args[i]->pos,
                      cg_slot_rank(c->I, slot), c->I->world);
    return t;
}

/* Dimensions from positional arguments first..npositional-1. */
static int dims_from(const call_ctx *c, int first, int slot, int *ndim, int64_t *shape)
{
    int n = npositional(c->e) - first;
    if (n > CG_MAX_DIMS)
        return cg_error_at_rank(&c->I->st, c->e->pos, cg_slot_rank(c->I, slot), c->I->world,
                                "expected at most %d dimensions, got %d", CG_MAX_DIMS, n);
    for (int k = 0; k < n; k++) {
        int i = arg_at(c->e, first + k, NULL);
        if (int_arg(c, i, slot, "a dimension", &shape[k]) != 0)
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
static cg_tensor *construct(const call_ctx *c, int slot, cg_fn_id id)
{
    cg_interp *I = c->I;
    int ndim = 0;
    int64_t shape[CG_MAX_DIMS] = {0}, a = 0;
    bool is_full = id == CG_FN_FULL, is_eye = id == CG_FN_EYE, is_arange = id == CG_FN_ARANGE;
    if (is_arange || is_eye) {
        int64_t v[3] = {0, -1, 0};
        for (int k = 0; k < npositional(c->e); k++)
            if (int_arg(c, arg_at(c->e, k, NULL), slot, "a size", &v[k]) != 0)
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
        const cg_val *v = arg(c, arg_at(c->e, 0, NULL), slot);
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
static cg_tensor *make_param(const call_ctx *c, int slot)
{
    cg_tensor *src = tensor_arg(c, 0, slot);
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
static int axis_arg(const call_ctx *c, int slot, cg_tensor *t, int pos, int dflt, int *axis)
{
    int i = arg_at(c->e, pos, "axis");
    if (i < 0) {
        *axis = dflt;
        return 0;
    }
    int64_t a;
    if (int_arg(c, i, slot, "an axis", &a) != 0)
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
static cg_tensor *eval_cat(const call_ctx *c, int slot)
{
    int n = npositional(c->e), axis = 0;
    if (n < 1) { /* the parser insists too; never read xs[0] unset */
        cg_error_at_rank(&c->I->st, c->e->pos, cg_slot_rank(c->I, slot), c->I->world,
                         "expected at least one tensor to cat, got none");
        return NULL;
    }
    cg_tensor *xs[64];
    for (int k = 0; k < n; k++)
        if (!(xs[k] = tensor_arg(c, arg_at(c->e, k, NULL), slot)))
            return NULL;
    if (axis_arg(c, slot, xs[0], n, 0, &axis) != 0)
        return NULL;
    return cg_cat(c->I->g, xs, n, axis);
}

/* reshape(t, d0, d1, ...) */
static cg_tensor *eval_reshape(const call_ctx *c, int slot)
{
    cg_tensor *t = tensor_arg(c, 0, slot);
    int nd = npositional(c->e) - 1;
    int64_t shape[CG_MAX_DIMS];
    for (int k = 0; t && k < nd && k < CG_MAX_DIMS; k++)
        if (int_arg(c, arg_at(c->e, k + 1, NULL), slot, "a dimension", &shape[k]) != 0)
            return NULL;
    return t ? cg_reshape(c->I->g, t, nd, shape) : NULL;
}

/* chunk(t, n) / split(t, size): torch.chunk / torch.split on the first axis,
 * the pieces stacked: [n, rows / n, ...], so chunk(x, world)[rank] is this
 * rank's piece; the pieces must be equal (a reshape, differentiable) */
static cg_tensor *eval_pieces(const call_ctx *c, int slot)
{
    const char *f = c->e->name;
    cg_tensor *t = tensor_arg(c, 0, slot);
    int64_t k;
    if (!t || int_arg(c, 1, slot, f[0] == 'c' ? "a number of chunks" : "a chunk size", &k) != 0)
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
static cg_tensor *eval_slice(const call_ctx *c, int slot)
{
    cg_tensor *t = tensor_arg(c, 0, slot);
    int64_t v[3];
    for (int k = 0; t && k < 3; k++)
        if (int_arg(c, k + 1, slot, k == 0 ? "an axis" : "an index", &v[k]) != 0)
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
    cg_tensor *(*call)(const call_ctx *, int);
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
static cg_tensor *local_op(const call_ctx *c, int slot, cg_fn_id id)
{
    cg_graph *g = c->I->g;
    const cg_op_info *op = cg_op_info_of(id);
    const op_entry *en = &entries[id];
    if (op->cls == CG_OPC_CALL)
        return en->call(c, slot);
    cg_tensor *t = tensor_arg(c, 0, slot), *b = NULL;
    if (!t)
        return NULL;
    if (id == CG_FN_DETACH) /* values and gradients part ways on purpose */
        cg_note_nondiff(g, "detach() stops the gradient on purpose");
    int axis;
    switch (op->cls) {
    case CG_OPC_UNARY:
        return en->unary(g, t);
    case CG_OPC_BINARY:
        return (b = tensor_arg(c, 1, slot)) ? en->binary(g, t, b) : NULL;
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

/* ---- collectives and recv ------------------------------------------------ */

/* The reduction op of a collective call: a bare word (sum, prod, ...) as the
 * positional argument `pos` or keyword op=. Default sum. */
static int redop_arg(const call_ctx *c, int pos, cg_redop *op)
{
    int i = arg_at(c->e, pos, "op");
    *op = CG_RED_SUM;
    if (i < 0)
        return 0;
    const cg_expr *w = c->e->args[i];
    int r = w->kind == CG_E_WORD ? cg_redop_from_name(w->name) : -1;
    if (r < 0)
        return cg_error_at(
            &c->I->st, w->pos, "expected a reduction op (sum, avg, prod, max, min), got %s",
            w->kind == CG_E_WORD || w->kind == CG_E_NAME ? w->name : "an expression");
    *op = (cg_redop)r;
    return 0;
}

/* The root of a collective on the group `members` (NULL: the world) among
 * the slots in[] holds: the same global rank on each, and a member; *out is
 * its index in the group (the world: the rank itself). 0, or -1. */
static int root_arg(const call_ctx *c, cg_tensor **in, const cg_group *members, int *out)
{
    cg_interp *I = c->I;
    int i = arg_at(c->e, 1, "root"), seen = -1;
    *out = 0;
    if (i < 0)
        return 0;
    for (int s = 0; s < I->nslots; s++) {
        int64_t r;
        if (!in[s])
            continue;
        if (int_arg(c, i, s, "root rank", &r) != 0)
            return -1;
        if (r < 0 || r >= I->world)
            return cg_error_at_rank(&I->st, c->e->args[i]->pos, cg_slot_rank(I, s), I->world,
                                    "expected root rank in 0..%d, got %lld", I->world - 1,
                                    (long long)r);
        if (seen >= 0 && r != seen)
            return cg_error_at_rank(&I->st, c->e->args[i]->pos, cg_slot_rank(I, s), I->world,
                                    "expected the same root rank on every rank, got %d and %lld",
                                    seen, (long long)r);
        seen = (int)r;
    }
    int local = members ? cg_group_index(members, seen) : seen;
    if (seen >= 0 && local < 0) /* PyTorch: "The global rank ... is not part of the group" */
        return cg_error_at(&I->st, c->e->args[i]->pos,
                           "expected a root in the group (roots are global ranks), got rank %d",
                           seen);
    *out = local < 0 ? 0 : local;
    return 0;
}

/* Each active slot's group for collective call e: gid[s] its id, or -1 when
 * the call names none (the world). 0, or -1. */
static int group_arg(const call_ctx *c, cg_coll_kind kind, int *gid)
{
    cg_interp *I = c->I;
    int i = arg_at(c->e, cg_coll_keyword_index(kind, "group"), "group");
    for (int s = 0; s < I->nslots; s++) {
        gid[s] = -1;
        if (i < 0 || !I->active[s])
            continue;
        if ((gid[s] = cg_group_bound(I, s, c->e->args[i])) < 0)
            return cg_error_at_rank(&I->st, c->e->args[i]->pos, cg_slot_rank(I, s), I->world,
                                    "expected a group (made by group() or mesh()), got %s",
                                    c->e->args[i]->kind == CG_E_NAME ? c->e->args[i]->name
                                                                     : "an expression");
    }
    return 0;
}

/* One collective on the world (id -1) or on group id, over the slots whose
 * group it is: every member must be there; the call is that of a world of
 * the group's size (collectives.h). res[s] receives each member's output. */
static int run_on_group(const call_ctx *c, cg_coll cc, int id, const int *gid, cg_tensor **in,
                        cg_tensor **res)
{
    cg_interp *I = c->I;
    const cg_expr *e = c->e;
    const cg_group *gr = cg_group_at(I, id);
    cg_tensor **mine = calloc((size_t)I->nslots, sizeof *mine);
    if (!mine)
        return cg_error_at(&I->st, e->pos, "expected memory, got out of memory");
    int rc = 0, nmine = 0;
    for (int s = 0; s < I->nslots && rc == 0; s++) {
        bool member = !gr || cg_group_index(gr, I->ranks[s]) >= 0;
        nmine += member;
        if (member && (!I->active[s] || gid[s] != id))
            rc = cg_error_at(&I->st, e->pos,
                             "expected every %s to take part in %s, got %s without rank %d",
                             gr ? "member of the group" : "rank", e->name,
                             I->active[s] ? "a call on another group" : "an on-block", I->ranks[s]);
        else if (member)
            mine[s] = in[s];
    }
    if (rc == 0 && nmine == 0) { /* no slot here is a member (a worker outside the group) */
        free(mine);
        return 0;
    }
    if (rc == 0 && cg_coll_has_root(cc.kind))
        rc = root_arg(c, mine, gr, &cc.root);
    /* the slots of this call in its order: a group's members by group rank */
    int *order = rc == 0 ? calloc((size_t)I->nslots, sizeof *order) : NULL, n = 0;
    if (rc == 0 && !order)
        rc = cg_error_at(&I->st, e->pos, "expected memory, got out of memory");
    for (int k = 0; rc == 0 && k < (gr ? gr->n : I->world); k++)
        for (int s = 0; s < I->nslots; s++)
            if (mine[s] && I->ranks[s] == (gr ? gr->members[k] : k))
                order[n++] = s;
    int64_t *splits = NULL;
    if (rc == 0 && (rc = cg_read_splits(I, e, cc.kind, c->args, mine, order, n,
                                        gr ? gr->n : I->world, &splits)) == 0)
        cc.splits = splits;
    free(order);
    if (rc == 0 && gr) {
        cc.group = id;
        cc.nmembers = gr->n;
        cc.members = gr->members;
    }
    if (rc == 0 && I->comm->collective(I->comm->self, I->g, &cc, mine, res) != 0)
        rc = cg_error_wrap(&I->st, cg_graph_status(I->g), e->pos, -1, 0);
    free(splits);
    free(mine);
    return rc;
}

static int eval_comm(const call_ctx *c, cg_val *out)
{
    cg_interp *I = c->I;
    const cg_expr *e = c->e;
    const cg_collective *d = cg_collective_named(e->name); /* send is a statement (interp.c) */
    cg_coll cc = {.kind = d->kind, .pos = e->pos};
    bool is_recv = cc.kind == CG_C_RECV;
    int op_at = cg_coll_keyword_index(d->kind, "op");
    if (op_at >= 0 && redop_arg(c, op_at, &cc.op) != 0)
        return -1;
    cc.seq = I->seq++;
    int splits_at = cg_coll_keyword_index(d->kind, "send_splits");
    cc.sized = splits_at >= 0 && arg_at(e, splits_at, "send_splits") >= 0;
    cg_tensor **in = calloc((size_t)I->nslots * 2, sizeof *in);
    int *gid = calloc((size_t)I->nslots * 2, sizeof *gid), *ids = gid + I->nslots;
    if (!in || !gid) {
        free(in);
        free(gid);
        return cg_error_at(&I->st, e->pos, "expected memory, got out of memory");
    }
    cg_tensor **res = in + I->nslots;
    int rc = is_recv ? 0 : group_arg(c, cc.kind, gid);
    for (int s = 0; rc == 0 && s < I->nslots; s++) {
        if (!I->active[s])
            continue;
        if (is_recv) {
            int64_t src;
            rc = int_arg(c, 0, s, "a source rank", &src);
            if (rc == 0 && (src < 0 || src >= I->world || src == I->ranks[s]))
                rc = cg_error_at_rank(&I->st, e->args[0]->pos, cg_slot_rank(I, s), I->world,
                                      "expected a source rank in 0..%d other than %d, "
                                      "got %lld",
                                      I->world - 1, I->ranks[s], (long long)src);
            cc.peer = (int)src;
            if (rc == 0 && !(res[s] = I->comm->recv(I->comm->self, I->g, &cc, s)))
                rc = cg_error_wrap(&I->st, cg_graph_status(I->g), e->pos, cg_slot_rank(I, s),
                                   I->world);
        } else if (!(in[s] = tensor_arg(c, 0, s))) {
            rc = -1;
        }
    }
    /* the world's call, or one call per group the slots name, in id order */
    int nids = 0;
    for (int s = 0; rc == 0 && !is_recv && s < I->nslots; s++)
        if (I->active[s] && (nids == 0 || gid[s] != -1))
            ids[nids++] = gid[s];
    if (nids > 1)
        qsort(ids, (size_t)nids, sizeof *ids, cg_cmp_int);
    for (int k = 0; rc == 0 && k < nids; k++)
        if (k == 0 || ids[k] != ids[k - 1])
            rc = run_on_group(c, cc, ids[k], gid, in, res);
    /* a non-member's call is a no-op returning its input, as in PyTorch: a
     * tensor of its own (torch.distributed.nn clones before its call) whose
     * backward is the comm's to say (a rule set's, worker_comm.c), else a
     * copy that passes the gradient through. Its root is not resolved: no
     * non-member has one. */
    for (int s = 0; rc == 0 && !is_recv && s < I->nslots; s++) {
        const cg_group *gr = I->active[s] && gid[s] >= 0 ? cg_group_at(I, gid[s]) : NULL;
        if (!gr || cg_group_index(gr, I->ranks[s]) >= 0)
            continue;
        if (in[s]->replicas > 1 && in[s]->requires_grad) /* one rank's copy of a replicated value */
            cg_share_break(I->share, "a replicated value passed through a call off its group");
        cg_coll nc = cc; /* the call as the group's members make it */
        nc.group = gid[s];
        nc.nmembers = gr->n;
        nc.members = gr->members;
        bool made = I->comm->nonmember
                        ? I->comm->nonmember(I->comm->self, I->g, &nc, s, in[s], &res[s]) == 0
                        : (res[s] = cg_clone(I->g, in[s])) != NULL;
        if (!made)
            rc = cg_error_wrap(&I->st, cg_graph_status(I->g), e->pos, cg_slot_rank(I, s), I->world);
    }
    for (int s = 0; rc == 0 && s < I->nslots; s++)
        if (I->active[s])
            out[s] = (cg_val){.is_tensor = true, .t = res[s]};
    free(gid);
    free(in);
    return rc;
}

int cg_eval_call(cg_interp *I, const cg_expr *e, cg_val *out)
{
    if (strcmp(e->name, "backward") == 0 || strcmp(e->name, "zero_grad") == 0 ||
        strcmp(e->name, "send") == 0)
        return cg_error_at(&I->st, e->pos, "expected an expression, got statement %s()", e->name);
    call_ctx c = {I, e, calloc((size_t)(e->nargs + 1) * (size_t)I->nslots, sizeof(cg_val))};
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
    int group_at = coll ? arg_at(e, cg_coll_keyword_index(coll->kind, "group"), "group") : -1;
    for (int i = 0; i < e->nargs && rc == 0; i++)
        if (e->args[i]->kind != CG_E_WORD && i != group_at)
            rc = cg_eval(I, e->args[i], c.args + (size_t)i * I->nslots);
    if (rc == 0 && cg_collective_named(e->name)) { /* send was refused above */
        rc = eval_comm(&c, out);
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
