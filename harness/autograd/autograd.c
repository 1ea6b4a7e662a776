/* autograd.c — the tape and the reverse pass.
 *
 * A pass has three steps: seed the roots' pgrad with ones, run every node's
 * backward from newest to oldest (a node whose output got no gradient is
 * skipped unless it must run for the collectives to line up), then fold the
 * pass's pgrads into the accumulated grads of leaves and retained tensors.
 * pgrads are dropped at the end of every pass, successful or not, so a failed
 * pass leaves .grad exactly as it was. */
#include "autograd.h"

#include <stdlib.h>
#include <string.h>

cg_node *cg_record(cg_graph *g, const char *op, cg_tensor *out, cg_tensor *const *in,
                   int nin, int (*backward)(cg_graph *, cg_node *))
{
    cg_node *n = cg_alloc(g, sizeof *n);
    cg_tensor **ins = cg_alloc(g, (size_t)(nin > 0 ? nin : 1) * sizeof *ins);
    if (!n || !ins)
        return NULL;
    if (nin > 0)
        memcpy(ins, in, (size_t)nin * sizeof *ins);
    n->op = op;
    n->out = out;
    n->in = ins;
    n->nin = nin;
    n->backward = backward;
    cg_graph_push_tape(g, n);
    out->node = n;
    out->requires_grad = true;
    return n;
}

cg_tensor *cg_record_if_needed(cg_graph *g, const char *op, cg_tensor *out, cg_tensor *const *in, int nin,
                               int (*backward)(cg_graph *, cg_node *), int64_t arg0, int64_t arg1)
{
    if (!cg_any_requires_grad(in, nin))
        return out;
    cg_node *n = cg_record(g, op, out, in, nin, backward);
    if (!n)
        return NULL;
    n->iarg[0] = arg0;
    n->iarg[1] = arg1;
    return out;
}

bool cg_any_requires_grad(cg_tensor *const *in, int nin)
{
    for (int i = 0; i < nin; i++)
        if (in[i]->requires_grad)
            return true;
    return false;
}

/* t->pgrad, made (zeros, t's dtype and shape) when this pass has none yet. */
/* t->pgrad = p for the first time in this pass, remembered so the pass folds
 * and drops it (and counted while t's node has yet to run). */
int cg_set_pgrad(cg_graph *g, cg_tensor *t, cg_tensor *p)
{
    t->pgrad = p;
    return cg_graph_touch(g, t);
}

static cg_tensor *pgrad_of(cg_graph *g, cg_tensor *t)
{
    if (!t->pgrad) {
        cg_tensor *p = cg_tensor_like(g, t);
        if (!p || cg_set_pgrad(g, t, p) < 0)
            return NULL;
    }
    return t->pgrad;
}

int cg_accum_grad(cg_graph *g, cg_tensor *t, const cg_tensor *d)
{
    if (!t->requires_grad)
        return 0;
    if (d->numel != t->numel) {
        cg_error(cg_graph_status(g), "expected a gradient of %lld elements, got %lld",
                 (long long)t->numel, (long long)d->numel);
        return -1;
    }
    if (!t->pgrad && d->dtype == t->dtype && d->on_device == t->on_device) {
        /* the first gradient to arrive is copied, not added to zeros: one pass, not two */
        cg_tensor *p = cg_tensor_new(g, t->dtype, t->ndim, t->shape);
        if (!p || cg_tensor_copy_elems(g, p, 0, d, 0, d->numel) < 0)
            return -1;
        return cg_set_pgrad(g, t, p);
    }
    cg_tensor *p = pgrad_of(g, t);
    return p ? cg_tensor_accumulate(g, p, d) : -1;
}

int cg_accum_grad_owned(cg_graph *g, cg_tensor *t, cg_tensor *d)
{
    bool same = t->requires_grad && !t->pgrad && d != t && d->dtype == t->dtype &&
                d->on_device == t->on_device && d->ndim == t->ndim &&
                memcmp(d->shape, t->shape, (size_t)t->ndim * sizeof *t->shape) == 0;
    if (!same)
        return cg_accum_grad(g, t, d);
    return cg_set_pgrad(g, t, d);
}

/* Element by element: for the CPU ops' loops only, so a device tensor here
 * is a bug in an op's dispatch, reported rather than dereferenced. */
int cg_accum_grad_at(cg_graph *g, cg_tensor *t, int64_t i, double v)
{
    if (!t->requires_grad)
        return 0;
    if (t->on_device) {
        cg_error(cg_graph_status(g),
                 "internal error: an element-wise host gradient update on a device tensor");
        return -1;
    }
    cg_tensor *p = pgrad_of(g, t);
    if (!p)
        return -1;
    cg_set(p, i, cg_get(p, i) + v);
    return 0;
}

int cg_grad_slot(cg_graph *g, cg_tensor *t, cg_tensor **slot)
{
    *slot = NULL;
    if (!t->requires_grad)
        return 0;
    *slot = pgrad_of(g, t);
    return *slot ? 0 : -1;
}

/* ---- one backward pass --------------------------------------------------- */

static int check_roots(cg_graph *g, cg_tensor *const *roots, int nroots)
{
    for (int r = 0; r < nroots; r++)
        if (roots[r] && !roots[r]->requires_grad) {
            cg_error(cg_graph_status(g),
                     "element 0 of tensors does not require grad and does not have a grad_fn");
            return -1;
        }
    return 0;
}

/* d(w root)/d(root) = w for every element (w = 1 without weights); a root
 * named k times gets the sum of its k weights, added in order (the oracle
 * names one replicated tensor as the root of each rank that shares it,
 * sim_comm.c, W times). The weights of a root are summed first and the root
 * seeded once: each element gets the very additions, in the same order, that
 * seeding it with the first weight and adding each later one made, but a
 * root named W times costs one pass over its elements, not W (an all_gather's
 * output, W N elements, named by W ranks: W^2 N before, bench --oracle's
 * exponent 1.7 at W = 1024). Only float64 roots (the oracle's) are summed
 * so: a narrower root rounds after every addition, and one that already
 * holds a gradient (none does in the passes the tool runs) sums onto it, so
 * those get each weight in turn, as before. A numel-0 root still gets a
 * pgrad, so its node runs like any other. */
static int seed_roots(cg_graph *g, cg_tensor *const *roots, const double *weights, int nroots)
{
    cg_tensor **distinct = nroots > 0 ? malloc((size_t)nroots * sizeof *distinct) : NULL;
    double *sum = nroots > 0 ? malloc((size_t)nroots * sizeof *sum) : NULL;
    int n = 0, rc = 0;
    if (nroots > 0 && (!distinct || !sum)) {
        rc = cg_error_infra(cg_graph_status(g), "out of memory (the backward pass's %d roots)", nroots);
        goto done;
    }
    for (int r = 0; r < nroots; r++) {
        cg_tensor *t = roots[r];
        if (!t)
            continue;
        double w = weights ? weights[r] : 1.0;
        if (t->pgrad || t->dtype != CG_F64) { /* weight by weight: see above */
            cg_tensor *seed = t->pgrad ? NULL : cg_full(g, t->dtype, t->ndim, t->shape, w);
            if (t->pgrad ? cg_tensor_add_scalar(g, t->pgrad, w) < 0 : !seed || cg_set_pgrad(g, t, seed) < 0) {
                rc = -1;
                goto done;
            }
            continue;
        }
        int k = 0;
        while (k < n && distinct[k] != t)
            k++;
        if (k == n) {
            distinct[n] = t;
            sum[n++] = w;
        } else {
            sum[k] += w;
        }
    }
    for (int k = 0; k < n; k++) {
        cg_tensor *t = distinct[k];
        cg_tensor *seed = cg_full(g, t->dtype, t->ndim, t->shape, sum[k]);
        if (!seed || cg_set_pgrad(g, t, seed) < 0) {
            rc = -1;
            goto done;
        }
    }
done:
    free(distinct);
    free(sum);
    return rc < 0 ? -1 : 0;
}

/* Newest to oldest, and no further than needed: once no tensor waits for its
 * node (pending) and no communication node is left to pass, nothing older
 * can receive a gradient. So a pass costs the part of the tape it reaches
 * (back to the oldest communication node), and a program of N backward calls
 * is linear in N, not quadratic (issue 39 item 4). */
static int run_tape(cg_graph *g)
{
    int64_t always_left = cg_graph_always_run_count(g);
    for (cg_node *n = cg_graph_tape(g); n; n = n->prev) {
        cg_graph_count_walked(g, 1);
        if (n->always_run)
            always_left--;
        if (!n->out->pgrad && !n->always_run) {
            if (cg_graph_pending(g) == 0 && always_left <= 0)
                break;
            continue;
        }
        if (!pgrad_of(g, n->out))
            return -1;
        cg_graph_node_ran(g); /* n->out was counted when its pgrad came */
        if (n->backward(g, n) < 0)
            return -1;
    }
    return 0;
}

/* The first pass to reach a tensor hands it its pgrad as .grad; later passes
 * add in place, which is how repeated backward calls accumulate. Only the
 * tensors this pass touched. */
static int fold_pgrads(cg_graph *g)
{
    int64_t n;
    cg_tensor *const *all = cg_graph_touched(g, &n);
    for (int64_t i = 0; i < n; i++) {
        cg_tensor *t = all[i];
        if (!t->pgrad || !(t->is_leaf || t->retain))
            continue;
        if (!t->grad)
            t->grad = t->pgrad;
        else if (cg_tensor_accumulate(g, t->grad, t->pgrad) < 0)
            return -1;
    }
    return 0;
}

/* The pgrad tensors stay in the arena until cg_graph_free(); case programs
 * run a handful of passes, so recycling them would buy nothing. */
static void drop_pgrads(cg_graph *g)
{
    int64_t n;
    cg_tensor *const *all = cg_graph_touched(g, &n);
    for (int64_t i = 0; i < n; i++)
        all[i]->pgrad = NULL;
    cg_graph_untouch_all(g);
}

int cg_backward(cg_graph *g, cg_tensor *const *roots, int nroots)
{
    return cg_backward_weighted(g, roots, NULL, nroots);
}

/* The pass once its roots are seeded (seeded: 0, or -1 when seeding
 * failed): the tape in reverse, then .grad, then the pass's pgrads dropped. */
static int finish_pass(cg_graph *g, int seeded)
{
    int rc = seeded;
    if (rc == 0)
        rc = run_tape(g);
    if (rc == 0)
        rc = fold_pgrads(g);
    drop_pgrads(g);
    return rc;
}

int cg_backward_weighted(cg_graph *g, cg_tensor *const *roots, const double *weights, int nroots)
{
    if (check_roots(g, roots, nroots) < 0)
        return -1;
    return finish_pass(g, seed_roots(g, roots, weights, nroots));
}

int cg_backward_with(cg_graph *g, cg_tensor *root, cg_tensor *grad)
{
    if (check_roots(g, &root, 1) < 0)
        return -1;
    return finish_pass(g, cg_accum_grad_owned(g, root, grad));
}

void cg_zero_grad(cg_graph *g)
{
    int64_t n;
    cg_tensor *const *all = cg_graph_tensors(g, &n);
    for (int64_t i = 0; i < n; i++)
        all[i]->grad = NULL;
}

int64_t cg_tape_len(const cg_graph *g)
{
    int64_t len = 0;
    for (const cg_node *n = cg_graph_tape(g); n; n = n->prev)
        len++;
    return len;
}
