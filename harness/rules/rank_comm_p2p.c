/* rank_comm_p2p.c — a rank's communicator (rank_comm.h): send and recv over
 * the transport, each with the node whose backward sends the gradient back
 * the other way, and a call a rank makes off its process group. */
#include "rank_comm_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd.h"
#include "ops.h"

/* ---- point to point ------------------------------------------------------- */

typedef struct p2p_ctx {
    cg_rank_comm *w;
    int peer, tag, seq;
} p2p_ctx;

/* send's backward: receive the gradient the peer's recv sends back. */
static int send_backward(cg_graph *g, cg_node *n)
{
    p2p_ctx *ctx = n->ctx;
    cg_tensor *x = n->in[0], *gx = cg_tensor_like(g, x);
    if (!gx)
        return -1;
    if (cg_tp_recv(ctx->w->tp, (cg_tp_site){ctx->seq, true}, gx->data, (size_t)gx->numel, gx->dtype, ctx->peer, ctx->tag) != 0) {
        cg_error(cg_graph_status(g), "backward of send: %s", ctx->w->tp->st.msg);
        return -1;
    }
    return cg_accum_grad_owned(g, x, gx);
}

/* recv's backward: send the gradient that reached the received tensor back. */
static int recv_backward(cg_graph *g, cg_node *n)
{
    p2p_ctx *ctx = n->ctx;
    cg_tensor *gy = n->out->pgrad;
    if (cg_tp_send(ctx->w->tp, (cg_tp_site){ctx->seq, true}, gy->data, (size_t)gy->numel, gy->dtype, ctx->peer, ctx->tag) != 0) {
        cg_error(cg_graph_status(g), "backward of recv: %s", ctx->w->tp->st.msg);
        return -1;
    }
    return 0;
}

static p2p_ctx *p2p_node(cg_rank_comm *w, cg_graph *g, const char *op, cg_tensor *out, cg_tensor *in,
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
    cg_node_always_run(g, n);
    out->requires_grad = true;
    return ctx;
}

int cg_rank_comm_send(void *self, cg_graph *g, const cg_coll *c, int slot, cg_tensor *t)
{
    cg_rank_comm *w = self;
    if (cg_tp_send(w->tp, (cg_tp_site){c->seq, false}, t->data, (size_t)t->numel, t->dtype, c->peer, c->seq) != 0) {
        cg_error(cg_graph_status(g), "%s", w->tp->st.msg);
        return -1;
    }
    if (w->rules->wiring(c) == CG_WIRE_DETACHED)
        return 0;
    /* The node's output is a placeholder nobody reads: it gives the node a
     * place on the tape so its backward runs in every pass. */
    cg_tensor *anchor = cg_tensor_like(g, t);
    return anchor && p2p_node(w, g, "send", anchor, t, send_backward, c->peer, c->seq, c->seq) ? 0 : -1;
}

cg_tensor *cg_rank_comm_recv(void *self, cg_graph *g, const cg_coll *c, int slot)
{
    cg_rank_comm *w = self;
    const cg_plan_event *ev = cg_rank_comm_plan_event(w, g, c);
    cg_tensor *y = ev ? cg_tensor_new(g, w->dtype, ev->ndim[c->peer], ev->shape[c->peer]) : NULL;
    if (!y)
        return NULL;
    if (cg_tp_recv(w->tp, (cg_tp_site){c->seq, false}, y->data, (size_t)y->numel, y->dtype, c->peer, ev->tag) != 0) {
        cg_error(cg_graph_status(g), "%s", w->tp->st.msg);
        return NULL;
    }
    if (w->rules->wiring(c) == CG_WIRE_DETACHED)
        return y;
    return p2p_node(w, g, "recv", y, NULL, recv_backward, c->peer, ev->tag, c->seq) ? y : NULL;
}

/* ---- a non-member's call -------------------------------------------------- */

typedef struct nonmember_ctx {
    cg_coll coll;
    const cg_rules *rules;
    const char *refusal; /* refused at the backward; NULL: not */
} nonmember_ctx;

static int nonmember_backward(cg_graph *g, cg_node *n)
{
    nonmember_ctx *ctx = n->ctx;
    if (ctx->refusal)
        return cg_rank_comm_raise(g, &ctx->coll, ctx->refusal, CG_PHASE_BACKWARD);
    cg_tensor *x = n->in[0];
    cg_tensor *gx = cg_tensor_like(g, x);
    if (!gx)
        return -1;
    cg_rule_call call = {NULL,
                         (cg_tp_site){ctx->coll.seq, true},
                         &ctx->coll,
                         -1,
                         ctx->coll.nmembers,
                         NULL,
                         x,
                         n->out,
                         n->out->pgrad,
                         gx,
                         cg_graph_status(g)};
    if (ctx->rules->nonmember_backward(&call) != 0) {
        cg_error(cg_graph_status(g), "backward of %s off its group: %s",
                 cg_coll_name(ctx->coll.kind), cg_graph_status(g)->msg);
        return -1;
    }
    return cg_accum_grad_owned(g, x, gx);
}

/* The call returns the input unsent; the rule set says what flows back
 * (rules.h, nonmember_backward), the truth's pass-through when it says
 * nothing. */
int cg_rank_comm_nonmember(void *self, cg_graph *g, const cg_coll *c, int slot, cg_tensor *in,
                       cg_tensor **out)
{
    cg_rank_comm *w = self;
    (void)slot;
    cg_phase phase;
    const char *refused = cg_rank_comm_refusal(w, c, false, &phase);
    if (refused && phase != CG_PHASE_BACKWARD)
        return cg_rank_comm_raise(g, c, refused, phase);
    if (!w->rules->nonmember_backward && !refused)
        return (*out = cg_clone(g, in)) ? 0 : -1;
    nonmember_ctx *ctx = cg_alloc(g, sizeof *ctx);
    cg_tensor *y = *out = cg_tensor_like(g, in);
    if (!ctx || !y || cg_tensor_copy_elems(g, y, 0, in, 0, in->numel) < 0)
        return -1;
    *ctx = (nonmember_ctx){*c, w->rules, refused};
    ctx->coll.splits = NULL;
    if (cg_rank_comm_keep_members(g, &ctx->coll) != 0)
        return -1;
    if (!cg_any_requires_grad(&in, 1))
        return 0;
    cg_node *n = cg_record(g, "nonmember", y, &in, 1, nonmember_backward);
    if (!n)
        return -1;
    n->ctx = ctx;
    return 0;
}

