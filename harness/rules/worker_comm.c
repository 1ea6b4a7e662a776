/* worker_comm.c — forward of every communication call over the transport,
 * and its autograd node whose backward is the rule set's (worker_comm.h). */
#include "worker_comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd.h"

/* ---- the plan ------------------------------------------------------------ */

static const cg_plan_event *plan_event(const cg_wcomm *w, cg_graph *g, const cg_coll *c)
{
    for (int i = 0; i < w->nevents; i++) {
        const cg_plan_event *ev = &w->events[i];
        if (ev->coll.seq == c->seq && (ev->rank < 0 || ev->rank == w->rank))
            return ev;
    }
    cg_fail(g, "expected the oracle's plan to hold %s #%d, got nothing", cg_coll_name(c->kind), c->seq);
    return NULL;
}

static int64_t numel_of(const cg_plan_event *ev, int r)
{
    int64_t n = 1;
    for (int d = 0; d < ev->ndim[r]; d++)
        n *= ev->shape[r][d];
    return n;
}

/* Rows of rank r's input (a 0-d input counts as one row). */
static int64_t rows_of(const cg_plan_event *ev, int r) { return ev->ndim[r] ? ev->shape[r][0] : 1; }

static int64_t row_size(const cg_plan_event *ev, int r)
{
    int64_t rows = rows_of(ev, r);
    return rows ? numel_of(ev, r) / rows : 1;
}

static int64_t block_rows(int64_t n, int w, int r) { return cg_chunk_lo(n, w, r + 1) - cg_chunk_lo(n, w, r); }

/* ---- the collective node ------------------------------------------------- */

typedef struct coll_ctx {
    cg_coll coll;
    const cg_rules *rules;
    cg_wcomm *w;
    size_t *in_counts; /* world entries, owned by the graph */
} coll_ctx;

static int coll_backward(cg_graph *g, cg_node *n)
{
    coll_ctx *ctx = n->ctx;
    cg_tensor *x = n->in[0];
    cg_tensor *gx = cg_tensor_like(g, x);
    if (!gx)
        return -1;
    char err[512] = "";
    cg_rule_call call = {ctx->w->tp, &ctx->coll, ctx->w->rank, ctx->w->world, ctx->in_counts, x, n->out,
                         n->out->pgrad, gx, err, sizeof err};
    ctx->w->tp->backward = true;
    ctx->w->tp->seq = ctx->coll.seq;
    int rc = ctx->rules->backward(&call);
    if (rc != 0) {
        cg_fail(g, "%s", err); /* rule sets name the call: "backward of all_reduce(prod): ..." */
        return -1;
    }
    return cg_accum_grad(g, x, gx);
}

/* In-place collectives autograd never saw (c10d): the gradient passes
 * straight through to the local input. */
static int identity_backward(cg_graph *g, cg_node *n)
{
    return cg_accum_grad(g, n->in[0], n->out->pgrad);
}

/* The output shape of a collective on this rank, from every rank's input shape. */
static cg_tensor *output_tensor(const cg_wcomm *w, cg_graph *g, const cg_coll *c, const cg_plan_event *ev,
                                cg_dtype dt)
{
    int me = w->rank, W = w->world, ndim = ev->ndim[me] ? ev->ndim[me] : 1;
    int64_t shape[CG_MAX_DIMS];
    memcpy(shape, ev->shape[me], sizeof shape);
    if (ev->ndim[me] == 0)
        shape[0] = 1;
    int64_t rows = 0;
    switch (c->kind) {
    case CG_C_ALL_REDUCE:
    case CG_C_BROADCAST:
    case CG_C_REDUCE:
        return cg_tensor_new(g, dt, ev->ndim[me], ev->shape[me]);
    case CG_C_ALL_GATHER:
    case CG_C_GATHER:
        for (int r = 0; r < W; r++)
            rows += rows_of(ev, r);
        shape[0] = (c->kind == CG_C_GATHER && me != c->root) ? 0 : rows;
        break;
    case CG_C_REDUCE_SCATTER: shape[0] = block_rows(rows_of(ev, me), W, me); break;
    case CG_C_SCATTER:
        ndim = ev->ndim[c->root] ? ev->ndim[c->root] : 1;
        memcpy(shape, ev->shape[c->root], sizeof shape);
        shape[0] = block_rows(rows_of(ev, c->root), W, me);
        break;
    case CG_C_ALL_TO_ALL:
        for (int j = 0; j < W; j++)
            rows += block_rows(rows_of(ev, j), W, me);
        shape[0] = rows;
        break;
    default:
        break;
    }
    return cg_tensor_new(g, dt, ndim, shape);
}

static cgt_redop tp_op(cg_redop op) { return (cgt_redop)op; } /* same order by construction */

/* The forward value: one transport call, identical under every rule set. */
static int forward(cg_wcomm *w, cg_graph *g, const cg_coll *c, const cg_plan_event *ev,
                   const size_t *in_counts, cg_tensor *x, cg_tensor *y)
{
    cg_tp *tp = w->tp;
    int W = w->world, me = w->rank;
    size_t out_counts[CG_MAX_WORLD], recv_counts[CG_MAX_WORLD];
    for (int r = 0; r < W; r++) {
        /* block r of the first dimension of this rank's input (reduce_scatter,
         * all_to_all) or of the root's (scatter) */
        int src = c->kind == CG_C_SCATTER ? c->root : me;
        out_counts[r] = (size_t)(block_rows(rows_of(ev, src), W, r) * row_size(ev, src));
        recv_counts[r] = (size_t)(block_rows(rows_of(ev, r), W, me) * row_size(ev, r));
    }
    size_t n = (size_t)x->numel;
    cg_dtype dt = x->dtype;
    switch (c->kind) {
    case CG_C_ALL_REDUCE: return cg_tp_all_reduce(tp, x->data, y->data, n, dt, tp_op(c->op));
    case CG_C_ALL_GATHER: return cg_tp_all_gather(tp, x->data, y->data, in_counts, dt);
    case CG_C_REDUCE_SCATTER: return cg_tp_reduce_scatter(tp, x->data, y->data, out_counts, dt, tp_op(c->op));
    case CG_C_BROADCAST: /* in place on a copy: x stays this rank's own value */
        if (cg_tensor_copy_elems(g, y, 0, x, 0, x->numel) < 0) {
            snprintf(tp->err, sizeof tp->err, "%s", cg_graph_error(g));
            return -1;
        }
        return cg_tp_broadcast(tp, y->data, n, dt, c->root);
    case CG_C_REDUCE: /* non-root outputs stay zeros */
        return cg_tp_reduce(tp, x->data, me == c->root ? y->data : NULL, n, dt, tp_op(c->op), c->root);
    case CG_C_GATHER: return cg_tp_gather(tp, x->data, y->data, in_counts, dt, c->root);
    case CG_C_SCATTER: return cg_tp_scatter(tp, x->data, y->data, out_counts, dt, c->root);
    case CG_C_ALL_TO_ALL: return cg_tp_all_to_all(tp, x->data, out_counts, y->data, recv_counts, dt);
    default: return -1;
    }
}

static int w_collective(void *self, cg_graph *g, const cg_coll *c, cg_tensor **in, cg_tensor **out)
{
    cg_wcomm *w = self;
    const cg_plan_event *ev = plan_event(w, g, c);
    if (!ev)
        return -1;
    size_t *in_counts = cg_alloc(g, sizeof(size_t) * (size_t)w->world);
    coll_ctx *ctx = cg_alloc(g, sizeof *ctx);
    cg_tensor *x = in[0], *y = out[0] = ev ? output_tensor(w, g, c, ev, x->dtype) : NULL;
    if (!in_counts || !ctx || !y)
        return -1;
    for (int r = 0; r < w->world; r++)
        in_counts[r] = (size_t)numel_of(ev, r);
    w->tp->backward = false;
    w->tp->seq = c->seq;
    if (cg_check_placed(g, cg_coll_name(c->kind), y, &x, 1) < 0)
        return -1;
    if (forward(w, g, c, ev, in_counts, x, y) != 0) {
        cg_fail(g, "%s", w->tp->err);
        return -1;
    }
    cg_wiring wiring = w->rules->wiring(c);
    if (wiring == CG_WIRE_DETACHED)
        return 0;
    if (wiring == CG_WIRE_IDENTITY) {
        if (cg_any_requires_grad(&x, 1) && !cg_record(g, "identity", y, &x, 1, identity_backward))
            return -1;
        return 0;
    }
    *ctx = (coll_ctx){*c, w->rules, w, in_counts};
    cg_node *n = cg_record(g, cg_coll_name(c->kind), y, &x, 1, coll_backward);
    if (!n)
        return -1;
    n->ctx = ctx;
    n->iarg[0] = c->seq; /* comm nodes carry their call for analyses (hazards.c) */
    n->iarg[1] = c->kind;
    n->always_run = true; /* every rank issues every backward collective */
    /* non-root outputs of reduce and gather carry no gradient (DESIGN 3) */
    y->requires_grad = !((c->kind == CG_C_REDUCE || c->kind == CG_C_GATHER) && w->rank != c->root);
    return 0;
}

/* ---- point to point ------------------------------------------------------- */

typedef struct p2p_ctx {
    cg_wcomm *w;
    int peer, tag, seq;
} p2p_ctx;

/* send's backward: receive the gradient the peer's recv sends back. */
static int send_backward(cg_graph *g, cg_node *n)
{
    p2p_ctx *ctx = n->ctx;
    cg_tensor *x = n->in[0], *gx = cg_tensor_like(g, x);
    if (!gx)
        return -1;
    ctx->w->tp->backward = true;
    ctx->w->tp->seq = ctx->seq;
    if (cg_tp_recv(ctx->w->tp, gx->data, (size_t)gx->numel, gx->dtype, ctx->peer, ctx->tag) != 0) {
        cg_fail(g, "backward of send: %s", ctx->w->tp->err);
        return -1;
    }
    return cg_accum_grad(g, x, gx);
}

/* recv's backward: send the gradient that reached the received tensor back. */
static int recv_backward(cg_graph *g, cg_node *n)
{
    p2p_ctx *ctx = n->ctx;
    cg_tensor *gy = n->out->pgrad;
    ctx->w->tp->backward = true;
    ctx->w->tp->seq = ctx->seq;
    if (cg_tp_send(ctx->w->tp, gy->data, (size_t)gy->numel, gy->dtype, ctx->peer, ctx->tag) != 0) {
        cg_fail(g, "backward of recv: %s", ctx->w->tp->err);
        return -1;
    }
    return 0;
}

static p2p_ctx *p2p_node(cg_wcomm *w, cg_graph *g, const char *op, cg_tensor *out, cg_tensor *in,
                         int (*bw)(cg_graph *, cg_node *), int peer, int tag, int seq)
{
    p2p_ctx *ctx = cg_alloc(g, sizeof *ctx);
    cg_node *n = ctx ? cg_record(g, op, out, in ? &in : NULL, in ? 1 : 0, bw) : NULL;
    if (!n)
        return NULL;
    *ctx = (p2p_ctx){w, peer, tag, seq};
    n->ctx = ctx;
    n->iarg[0] = seq;
    n->iarg[1] = in ? CG_C_SEND : CG_C_RECV;
    n->iarg[2] = peer;
    n->always_run = true;
    out->requires_grad = true;
    return ctx;
}

static int w_send(void *self, cg_graph *g, const cg_coll *c, int slot, cg_tensor *t)
{
    cg_wcomm *w = self;
    w->tp->backward = false;
    w->tp->seq = c->seq;
    if (cg_tp_send(w->tp, t->data, (size_t)t->numel, t->dtype, c->peer, c->seq) != 0) {
        cg_fail(g, "%s", w->tp->err);
        return -1;
    }
    if (w->rules->wiring(c) == CG_WIRE_DETACHED)
        return 0;
    /* The node's output is a placeholder nobody reads: it gives the node a
     * place on the tape so its backward runs in every pass. */
    cg_tensor *anchor = cg_tensor_like(g, t);
    return anchor && p2p_node(w, g, "send", anchor, t, send_backward, c->peer, c->seq, c->seq) ? 0 : -1;
}

static cg_tensor *w_recv(void *self, cg_graph *g, const cg_coll *c, int slot)
{
    cg_wcomm *w = self;
    const cg_plan_event *ev = plan_event(w, g, c);
    cg_tensor *y = ev ? cg_tensor_new(g, w->dtype, ev->ndim[c->peer], ev->shape[c->peer]) : NULL;
    if (!y)
        return NULL;
    w->tp->backward = false;
    w->tp->seq = c->seq;
    if (cg_tp_recv(w->tp, y->data, (size_t)y->numel, y->dtype, c->peer, ev->tag) != 0) {
        cg_fail(g, "%s", w->tp->err);
        return NULL;
    }
    if (w->rules->wiring(c) == CG_WIRE_DETACHED)
        return y;
    return p2p_node(w, g, "recv", y, NULL, recv_backward, c->peer, ev->tag, c->seq) ? y : NULL;
}

static int w_backward(void *self, cg_graph *g, const cg_srcpos *pos, cg_tensor **roots)
{
    cg_wcomm *w = self;
    (void)pos;
    w->passes++;
    return cg_backward(g, roots, roots[0] ? 1 : 0);
}

static int w_zero_grad(void *self, cg_graph *g)
{
    (void)self;
    cg_zero_grad(g);
    return 0;
}

cg_comm cg_wcomm_comm(cg_wcomm *w)
{
    return (cg_comm){w, w_collective, w_send, w_recv, w_backward, w_zero_grad};
}
