/* simulate.c — each collective's forward across simulated ranks, as plain
 * differentiable ops on one graph (the table's `simulate`): the oracle runs
 * these, so its gradients are those of ordinary autograd over the global
 * function, never a backward rule. in[r] is rank r's input (row-wise kinds:
 * at least 1-d, the oracle's sim_comm.c sees to it; same-shape kinds: one
 * shape, checked there); each fills out[r] for every rank. 0, or -1 with the
 * graph's error (out of memory, the only failure). */
#include "collectives.h"

#include "autograd.h"
#include "ops.h"

/* d(x_0 + ... + x_{n-1}) / dx_j = 1: each input receives the output's gradient. */
static int sumn_backward(cg_graph *g, cg_node *n)
{
    for (int j = 0; j < n->nin; j++)
        if (cg_accum_grad(g, n->in[j], n->out->pgrad) < 0)
            return -1;
    return 0;
}

/* x_0 + ... + x_{n-1} as ONE node: a chain of n - 1 adds would keep n - 1
 * intermediate tensors and their gradients, W N memory per all_reduce for
 * nothing. Host tensors of one shape and dtype (the oracle's f64). */
static cg_tensor *sumn(cg_graph *g, cg_tensor *const *xs, int n)
{
    cg_tensor *out = cg_tensor_like(g, xs[0]);
    for (int j = 0; out && j < n; j++)
        if (cg_tensor_accumulate(g, out, xs[j]) < 0)
            return NULL;
    if (out && cg_any_requires_grad(xs, n) && !cg_record(g, "sumn", out, xs, n, sumn_backward))
        return NULL;
    return out;
}

static cg_tensor *reduce_all(cg_graph *g, cg_redop op, cg_tensor *const *xs, int w)
{
    if (op == CG_RED_MAX)
        return cg_maxn(g, xs, w);
    if (op == CG_RED_MIN)
        return cg_minn(g, xs, w);
    cg_tensor *acc = op == CG_RED_PROD ? xs[0] : sumn(g, xs, w); /* sumn: a new node even for one rank */
    for (int k = 1; op == CG_RED_PROD && k < w && acc; k++)
        acc = cg_mul(g, acc, xs[k]);
    if (acc && w == 1 && op == CG_RED_PROD) /* a distinct node even for one rank */
        acc = cg_clone(g, acc);
    if (acc && op == CG_RED_AVG)
        acc = cg_div(g, acc, cg_scalar(g, CG_F64, (double)w));
    return acc;
}

/* x's rows with no rows: a non-root's gather output */
static cg_tensor *empty_rows(cg_graph *g, const cg_tensor *like)
{
    int64_t shape[CG_MAX_DIMS];
    for (int d = 0; d < CG_MAX_DIMS; d++)
        shape[d] = like->shape[d];
    shape[0] = 0;
    return cg_tensor_new(g, CG_F64, like->ndim > 0 ? like->ndim : 1, shape);
}

cg_tensor *cg_coll_block(cg_graph *g, cg_tensor *x, const int64_t *split, int w, int r)
{
    int64_t n = x->shape[0];
    return cg_slice(g, x, 0, cg_split_lo(split, n, w, r), cg_split_lo(split, n, w, r + 1));
}

/* out[r] = clone(y) on every rank, or only at the root (zeros `like`
 * elsewhere). Replicated, every rank's output is y itself when y is a node
 * of this call's own (fresh: w >= 2, where y is a sum or a cat), else one
 * clone of it: never an input's tensor, whose gradient is its rank's. */
static int everyone_gets(cg_graph *g, const cg_coll *c, int w, cg_tensor *y, cg_tensor **in,
                         cg_tensor **out, bool replicate)
{
    const cg_collective *d = cg_collective_of(c->kind);
    if (y && replicate && !d->root_only_output) {
        cg_tensor *one = w >= 2 ? y : cg_clone(g, y);
        for (int r = 0; one && r < w; r++)
            out[r] = one;
        if (one)
            one->replicas = w;
        return one ? 0 : -1;
    }
    for (int r = 0; y && r < w; r++) {
        bool gets = !d->root_only_output || r == c->root;
        out[r] = gets ? cg_clone(g, y) : d->shape == CG_SHAPE_CAT ? empty_rows(g, in[r])
                                                                  : cg_tensor_like(g, in[r]);
        if (!out[r])
            return -1;
    }
    return y ? 0 : -1;
}

int cg_simulate_reduce(cg_graph *g, const cg_coll *c, int w, cg_tensor **in, cg_tensor **out,
                       bool replicate)
{
    return everyone_gets(g, c, w, reduce_all(g, c->op, in, w), in, out,
                         replicate); /* all_reduce, reduce */
}

int cg_simulate_concat(cg_graph *g, const cg_coll *c, int w, cg_tensor **in, cg_tensor **out,
                       bool replicate)
{
    return everyone_gets(g, c, w, cg_cat(g, in, w, 0), in, out, replicate); /* all_gather, gather */
}

int cg_simulate_broadcast(cg_graph *g, const cg_coll *c, int w, cg_tensor **in, cg_tensor **out,
                          bool replicate)
{
    cg_tensor *one = replicate ? cg_clone(g, in[c->root]) : NULL;
    if (one)
        one->replicas = w;
    for (int r = 0; r < w; r++)
        if (!(out[r] = replicate ? one : cg_clone(g, in[c->root])))
            return -1;
    return 0;
}

int cg_simulate_reduce_scatter(cg_graph *g, const cg_coll *c, int w, cg_tensor **in,
                               cg_tensor **out, bool replicate)
{
    (void)replicate; /* every rank's output is its own */
    cg_tensor *y = reduce_all(g, c->op, in, w);
    for (int r = 0; y && r < w; r++)
        if (!(out[r] = cg_coll_block(g, y, cg_split_row(c->splits, w, r), w, r)))
            return -1;
    return y ? 0 : -1;
}

int cg_simulate_scatter(cg_graph *g, const cg_coll *c, int w, cg_tensor **in, cg_tensor **out,
                        bool replicate)
{
    (void)replicate; /* every rank's output is its own */
    for (int r = 0; r < w; r++)
        if (!(out[r] = cg_coll_block(g, in[c->root], cg_split_row(c->splits, w, c->root), w, r)))
            return -1;
    return 0;
}

int cg_simulate_all_to_all(cg_graph *g, const cg_coll *c, int w, cg_tensor **in, cg_tensor **out,
                           bool replicate)
{
    (void)replicate; /* every rank's output is its own */
    for (int r = 0; r < w; r++) {
        cg_tensor *parts[CG_MAX_SIM_WORLD];
        for (int j = 0; j < w; j++)
            if (!(parts[j] = cg_coll_block(g, in[j], cg_split_row(c->splits, w, j), w, r)))
                return -1;
        if (!(out[r] = cg_cat(g, parts, w, 0)))
            return -1;
    }
    return 0;
}
