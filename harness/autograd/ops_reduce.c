/* ops_reduce.c — reductions along an axis (sum, mean, logsumexp,
 * log_softmax) and the elementwise extremum of n tensors (maxn, minn).
 *
 * A reduction sees its input as [outer, len, inner] with the reduced axis in
 * the middle; axis < 0 reduces everything (outer = inner = 1). Output element
 * (o, j) collects input elements (o, k, j) for k in [0, len). On a CUDA graph
 * each op hands the same view to its kernel twin (cuda/ops_reduce.cu). */
#include "ops.h"

#include <math.h>
#include <stdio.h>

#include "cuda_ops.h"

typedef struct {
    int64_t outer, len, inner;
} axis_view;

static int64_t at(const axis_view *v, int64_t o, int64_t k, int64_t j)
{
    return (o * v->len + k) * v->inner + j;
}

/* Splits a around axis. Fails when axis >= ndim (a 0-d tensor has no axis). */
static int view_axis(cg_graph *g, const cg_tensor *a, int axis, axis_view *v)
{
    if (axis >= a->ndim) {
        cg_error(cg_graph_status(g), "expected axis in [0, %d), got %d", a->ndim, axis);
        return -1;
    }
    if (axis < 0) {
        *v = (axis_view){1, a->numel, 1};
        return 0;
    }
    *v = (axis_view){1, a->shape[axis], 1};
    for (int d = 0; d < axis; d++)
        v->outer *= a->shape[d];
    for (int d = axis + 1; d < a->ndim; d++)
        v->inner *= a->shape[d];
    return 0;
}

static cg_cuda_axis device_view(const axis_view *v)
{
    return (cg_cuda_axis){v->outer, v->len, v->inner};
}

/* The kernel twins of the backward passes below: the gradient slot of the
 * node's one input, or NULL when it needs none. */
typedef int (*axis_backward_fn)(cg_dtype, cg_cuda_axis, const void *gout, void *ga);
typedef int (*axis_backward_a_fn)(cg_dtype, cg_cuda_axis, const void *a, const void *gout,
                                  void *ga);

/* A zero tensor shaped like a with axis removed (a 0-d scalar for axis < 0). */
static cg_tensor *reduced_like(cg_graph *g, const cg_tensor *a, int axis)
{
    int64_t shape[CG_MAX_DIMS] = {0};
    int ndim = 0;
    for (int d = 0; axis >= 0 && d < a->ndim; d++)
        if (d != axis)
            shape[ndim++] = a->shape[d];
    return cg_tensor_new(g, a->dtype, ndim, shape);
}

/* Records node op for out = f(a) and keeps the axis for the backward. */
static cg_tensor *track_axis(cg_graph *g, const char *op, cg_tensor *out, cg_tensor *a, int axis,
                             int (*backward)(cg_graph *, cg_node *))
{
    if (!a->requires_grad)
        return out;
    cg_node *n = cg_record(g, op, out, &a, 1, backward);
    if (!n)
        return NULL;
    n->iarg[0] = axis;
    return out;
}

/* ---- sum and mean -------------------------------------------------------- */

/* out(o, j) = scale * sum_k a(o, k, j); scale is 1 for sum, 1/len for mean
 * (so the mean of nothing is nan, like torch). Fails on a bad axis or OOM. */
static cg_tensor *sum_scaled(cg_graph *g, const char *op, cg_tensor *a, int axis, bool mean,
                             int (*backward)(cg_graph *, cg_node *))
{
    axis_view v;
    cg_tensor *out = view_axis(g, a, axis, &v) < 0 ? NULL : reduced_like(g, a, axis);
    if (!out || cg_check_placed(g, op, out, &a, 1) < 0)
        return NULL;
    if (out->on_device) {
        int rc = mean ? cg_cuda_mean(a->dtype, device_view(&v), a->data, out->data)
                      : cg_cuda_sum(a->dtype, device_view(&v), a->data, out->data);
        return rc < 0 ? (cg_error_cuda(cg_graph_status(g)), NULL)
                      : track_axis(g, op, out, a, axis, backward);
    }
    for (int64_t o = 0; o < v.outer; o++)
        for (int64_t j = 0; j < v.inner; j++) {
            double s = 0.0;
            for (int64_t k = 0; k < v.len; k++)
                s += cg_get(a, at(&v, o, k, j));
            cg_set(out, o * v.inner + j, mean ? s / (double)v.len : s);
        }
    return track_axis(g, op, out, a, axis, backward);
}

/* da(o, k, j) += scale * dout(o, j). */
static int sum_scaled_backward(cg_graph *g, cg_node *n, bool mean)
{
    cg_tensor *a = n->in[0];
    const cg_tensor *gout = n->out->pgrad;
    axis_view v;
    if (view_axis(g, a, (int)n->iarg[0], &v) < 0)
        return -1;
    if (a->on_device) {
        cg_tensor *ga;
        if (cg_grad_slot(g, a, &ga) < 0)
            return -1;
        axis_backward_fn kernel = mean ? cg_cuda_mean_backward : cg_cuda_sum_backward;
        return ga && kernel(a->dtype, device_view(&v), gout->data, ga->data) < 0
                   ? cg_error_cuda(cg_graph_status(g))
                   : 0;
    }
    double scale = mean ? 1.0 / (double)v.len : 1.0;
    for (int64_t o = 0; o < v.outer; o++)
        for (int64_t j = 0; j < v.inner; j++) {
            double d = scale * cg_get(gout, o * v.inner + j);
            for (int64_t k = 0; k < v.len; k++)
                if (cg_accum_grad_at(g, a, at(&v, o, k, j), d) < 0)
                    return -1;
        }
    return 0;
}

static int sum_backward(cg_graph *g, cg_node *n) { return sum_scaled_backward(g, n, false); }
cg_tensor *cg_sum(cg_graph *g, cg_tensor *a, int axis)
{
    return sum_scaled(g, "sum", a, axis, false, sum_backward);
}

static int mean_backward(cg_graph *g, cg_node *n) { return sum_scaled_backward(g, n, true); }
cg_tensor *cg_mean(cg_graph *g, cg_tensor *a, int axis)
{
    return sum_scaled(g, "mean", a, axis, true, mean_backward);
}

/* ---- logsumexp and log_softmax ------------------------------------------- */

/* A row's logsumexp kept as shift + log(sum), sum = sum_k exp(a_k - shift):
 * softmax_k = exp(a_k - shift) / sum then never goes through the rounded
 * logsumexp, which at |a| ~ 1000 would cost it 1e-13. */
typedef struct {
    double shift, sum;
} lse_parts;

/* The shift is the row's max so large inputs do not overflow. An infinite
 * max is not subtracted (inf - inf would be nan): all -inf (or an empty row)
 * gives -inf, any +inf gives +inf, any nan gives nan. */
static lse_parts row_lse(const cg_tensor *a, const axis_view *v, int64_t o, int64_t j)
{
    double m = -INFINITY;
    for (int64_t k = 0; k < v->len; k++)
        m = fmax(m, cg_get(a, at(v, o, k, j)));
    lse_parts p = {isinf(m) ? 0.0 : m, 0.0};
    for (int64_t k = 0; k < v->len; k++)
        p.sum += exp(cg_get(a, at(v, o, k, j)) - p.shift);
    return p;
}

/* logsumexp: out(o, j) = log sum_k exp(a(o, k, j)). Fails on a bad axis or OOM. */
static int logsumexp_backward(cg_graph *g, cg_node *n);
cg_tensor *cg_logsumexp(cg_graph *g, cg_tensor *a, int axis)
{
    axis_view v;
    cg_tensor *out = view_axis(g, a, axis, &v) < 0 ? NULL : reduced_like(g, a, axis);
    if (!out || cg_check_placed(g, "logsumexp", out, &a, 1) < 0)
        return NULL;
    if (out->on_device)
        return cg_cuda_logsumexp(a->dtype, device_view(&v), a->data, out->data) < 0
                   ? (cg_error_cuda(cg_graph_status(g)), NULL)
                   : track_axis(g, "logsumexp", out, a, axis, logsumexp_backward);
    for (int64_t o = 0; o < v.outer; o++)
        for (int64_t j = 0; j < v.inner; j++) {
            lse_parts p = row_lse(a, &v, o, j);
            cg_set(out, o * v.inner + j, p.shift + log(p.sum));
        }
    return track_axis(g, "logsumexp", out, a, axis, logsumexp_backward);
}

/* The device backward of logsumexp and log_softmax: both read a itself. */
static int softmax_family_backward_device(cg_graph *g, cg_node *n, const axis_view *v,
                                          axis_backward_a_fn kernel)
{
    cg_tensor *a = n->in[0], *ga;
    if (cg_grad_slot(g, a, &ga) < 0)
        return -1;
    if (ga && kernel(a->dtype, device_view(v), a->data, n->out->pgrad->data, ga->data) < 0)
        return cg_error_cuda(cg_graph_status(g));
    return 0;
}

/* da(o, k, j) += dout(o, j) * softmax(o, k, j). */
static int logsumexp_backward(cg_graph *g, cg_node *n)
{
    cg_tensor *a = n->in[0];
    const cg_tensor *gout = n->out->pgrad;
    axis_view v;
    if (view_axis(g, a, (int)n->iarg[0], &v) < 0)
        return -1;
    if (a->on_device)
        return softmax_family_backward_device(g, n, &v, cg_cuda_logsumexp_backward);
    for (int64_t o = 0; o < v.outer; o++)
        for (int64_t j = 0; j < v.inner; j++) {
            lse_parts p = row_lse(a, &v, o, j);
            double d = cg_get(gout, o * v.inner + j) / p.sum;
            for (int64_t k = 0; k < v.len; k++) {
                int64_t i = at(&v, o, k, j);
                if (cg_accum_grad_at(g, a, i, d * exp(cg_get(a, i) - p.shift)) < 0)
                    return -1;
            }
        }
    return 0;
}

/* log_softmax: out = a - logsumexp(a) along axis, same shape as a (axis < 0:
 * over all elements). Fails on a bad axis or OOM. */
static int log_softmax_backward(cg_graph *g, cg_node *n);
cg_tensor *cg_log_softmax(cg_graph *g, cg_tensor *a, int axis)
{
    axis_view v;
    cg_tensor *out = view_axis(g, a, axis, &v) < 0 ? NULL : cg_tensor_like(g, a);
    if (!out || cg_check_placed(g, "log_softmax", out, &a, 1) < 0)
        return NULL;
    if (out->on_device)
        return cg_cuda_log_softmax(a->dtype, device_view(&v), a->data, out->data) < 0
                   ? (cg_error_cuda(cg_graph_status(g)), NULL)
                   : track_axis(g, "log_softmax", out, a, axis, log_softmax_backward);
    for (int64_t o = 0; o < v.outer; o++)
        for (int64_t j = 0; j < v.inner; j++) {
            lse_parts p = row_lse(a, &v, o, j);
            double log_sum = log(p.sum);
            for (int64_t k = 0; k < v.len; k++)
                cg_set(out, at(&v, o, k, j), (cg_get(a, at(&v, o, k, j)) - p.shift) - log_sum);
        }
    return track_axis(g, "log_softmax", out, a, axis, log_softmax_backward);
}

/* da(k) += dout(k) - softmax(k) * sum_k' dout(k'), per (o, j) row. */
static int log_softmax_backward(cg_graph *g, cg_node *n)
{
    cg_tensor *a = n->in[0];
    const cg_tensor *gout = n->out->pgrad;
    axis_view v;
    if (view_axis(g, a, (int)n->iarg[0], &v) < 0)
        return -1;
    if (a->on_device)
        return softmax_family_backward_device(g, n, &v, cg_cuda_log_softmax_backward);
    for (int64_t o = 0; o < v.outer; o++)
        for (int64_t j = 0; j < v.inner; j++) {
            lse_parts p = row_lse(a, &v, o, j);
            double gsum = 0.0;
            for (int64_t k = 0; k < v.len; k++)
                gsum += cg_get(gout, at(&v, o, k, j));
            for (int64_t k = 0; k < v.len; k++) {
                int64_t i = at(&v, o, k, j);
                double d = cg_get(gout, i) - exp(cg_get(a, i) - p.shift) / p.sum * gsum;
                if (cg_accum_grad_at(g, a, i, d) < 0)
                    return -1;
            }
        }
    return 0;
}

/* ---- maxn and minn ------------------------------------------------------- */

/* Inputs that attain the extremum y (nan counts as attaining a nan y). */
static bool attains(double x, double y)
{
    return x == y || (isnan(x) && isnan(y));
}

/* out(i) = the max (sign +1) or min (sign -1) of xs[0..n-1](i); nan wins, as in
 * torch.maximum. Notes a non-differentiable point at any tie. Fails when n < 1
 * or the inputs' shapes or dtypes differ, or OOM. */
static cg_tensor *extremum_forward(cg_graph *g, const char *op, cg_tensor *const *xs, int n,
                                   double sign, int (*backward)(cg_graph *, cg_node *))
{
    if (n < 1) {
        cg_error(cg_graph_status(g), "expected at least one input for %s, got %d", op, n);
        return NULL;
    }
    for (int j = 1; j < n; j++) {
        char s0[64], sj[64];
        if (xs[j]->dtype != xs[0]->dtype) {
            cg_error(cg_graph_status(g), "expected matching dtypes for %s, got %s and %s", op,
                     cg_dtype_name(xs[0]->dtype), cg_dtype_name(xs[j]->dtype));
            return NULL;
        }
        if (!cg_same_shape(xs[j], xs[0])) {
            cg_error(cg_graph_status(g), "expected matching shapes for %s, got %s and %s", op,
                     cg_shape_str(xs[0], s0, sizeof s0), cg_shape_str(xs[j], sj, sizeof sj));
            return NULL;
        }
    }
    cg_tensor *out = cg_tensor_like(g, xs[0]);
    if (!out || cg_check_placed(g, op, out, xs, n) < 0)
        return NULL;
    bool tie = false;
    if (out->on_device) {
        int found = 0;
        const void *data[CG_CUDA_MAX_INPUTS];
        if (n > CG_CUDA_MAX_INPUTS) {
            cg_error(cg_graph_status(g), "expected at most %d inputs for %s on the device, got %d",
                     CG_CUDA_MAX_INPUTS, op, n);
            return NULL;
        }
        for (int j = 0; j < n; j++)
            data[j] = xs[j]->data;
        int rc = sign > 0 ? cg_cuda_maxn(out->dtype, data, n, out->numel, out->data, &found)
                          : cg_cuda_minn(out->dtype, data, n, out->numel, out->data, &found);
        if (rc < 0)
            return cg_error_cuda(cg_graph_status(g)), NULL;
        tie = found != 0;
    }
    for (int64_t i = 0; !out->on_device && i < out->numel; i++) {
        double y = cg_get(xs[0], i);
        for (int j = 1; j < n; j++) {
            double x = cg_get(xs[j], i);
            if (!isnan(y) && (isnan(x) || sign * x > sign * y))
                y = x;
        }
        int winners = 0;
        for (int j = 0; j < n; j++)
            winners += attains(cg_get(xs[j], i), y);
        tie |= winners > 1;
        cg_set(out, i, y);
    }
    if (tie) {
        char reason[64];
        snprintf(reason, sizeof reason, "%s at a tie", op);
        cg_note_nondiff(g, reason);
    }
    if (cg_any_requires_grad(xs, n) && !cg_record(g, op, out, xs, n, backward))
        return NULL;
    return out;
}

/* dxs[j](i) += dout(i) / #winners(i) for each input j attaining out(i). The
 * output holds an input's exact value, so equality finds the winners. */
static int extremum_backward_device(cg_graph *g, cg_node *n)
{
    const void *xs[CG_CUDA_MAX_INPUTS];
    void *gxs[CG_CUDA_MAX_INPUTS];
    for (int j = 0; j < n->nin; j++) { /* nin <= CG_CUDA_MAX_INPUTS: the forward checked */
        cg_tensor *slot;
        if (cg_grad_slot(g, n->in[j], &slot) < 0)
            return -1;
        xs[j] = n->in[j]->data;
        gxs[j] = slot ? slot->data : NULL;
    }
    if (cg_cuda_extremum_backward(n->out->dtype, xs, n->nin, n->out->numel, n->out->data,
                                  n->out->pgrad->data, gxs) < 0)
        return cg_error_cuda(cg_graph_status(g));
    return 0;
}

static int extremum_backward(cg_graph *g, cg_node *n)
{
    const cg_tensor *out = n->out, *gout = n->out->pgrad;
    if (out->on_device)
        return extremum_backward_device(g, n);
    for (int64_t i = 0; i < out->numel; i++) {
        double y = cg_get(out, i);
        int winners = 0;
        for (int j = 0; j < n->nin; j++)
            winners += attains(cg_get(n->in[j], i), y);
        double share = cg_get(gout, i) / winners;
        for (int j = 0; j < n->nin; j++)
            if (attains(cg_get(n->in[j], i), y) && cg_accum_grad_at(g, n->in[j], i, share) < 0)
                return -1;
    }
    return 0;
}

cg_tensor *cg_maxn(cg_graph *g, cg_tensor *const *xs, int n)
{
    return extremum_forward(g, "maxn", xs, n, 1.0, extremum_backward);
}

cg_tensor *cg_minn(cg_graph *g, cg_tensor *const *xs, int n)
{
    return extremum_forward(g, "minn", xs, n, -1.0, extremum_backward);
}
