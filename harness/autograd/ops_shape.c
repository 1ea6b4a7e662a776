/* ops_shape.c — ops that move elements without arithmetic: transpose,
 * reshape, cat, slice, index, clone, detach. Each backward moves the output
 * gradient back to where its elements came from. */
#include "ops.h"

#include <string.h>

#include "cuda_ops.h"

typedef int (*backward_fn)(cg_graph *, cg_node *);

/* "[2,-1]" for a shape given as an array (ndim already checked <= 4). */
static char *dims_str(int ndim, const int64_t *shape, char *buf, size_t len)
{
    cg_tensor t = {.ndim = ndim};
    if (ndim > 0) /* a 0-d shape may come as NULL */
        memcpy(t.shape, shape, (size_t)ndim * sizeof *shape);
    return cg_shape_str(&t, buf, len);
}

static int check_axis(cg_graph *g, const cg_tensor *a, int axis)
{
    if (axis >= 0 && axis < a->ndim)
        return 0;
    cg_error(cg_graph_status(g), "expected axis in [0, %d), got %d", a->ndim, axis);
    return -1;
}

/* Records node op for out = f(in) with up to two integer arguments. */
static cg_tensor *track(cg_graph *g, const char *op, cg_tensor *out, cg_tensor *const *in,
                        int nin, backward_fn backward, int64_t arg0, int64_t arg1)
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

/* dst = src, element for element (same numel and dtype), on either side. */
static int copy_values(cg_graph *g, const char *op, cg_tensor *dst, cg_tensor *src)
{
    if (cg_check_placed(g, op, dst, &src, 1) < 0)
        return -1;
    return cg_tensor_copy_elems(g, dst, 0, src, 0, src->numel);
}

/* da(i) += dout(i): for ops that keep row-major order (reshape, clone). */
static int same_order_backward(cg_graph *g, cg_node *n)
{
    return cg_accum_grad(g, n->in[0], n->out->pgrad);
}

/* ---- transpose ----------------------------------------------------------- */

/* a seen as [batch, rows, cols] over its last two axes; fewer than two axes
 * is one row, whose transpose has the same element order. */
typedef struct {
    int64_t batch, rows, cols;
} matrix_view;

static matrix_view last_two_axes(const cg_tensor *a)
{
    if (a->ndim < 2)
        return (matrix_view){1, 1, a->numel};
    matrix_view v = {0, a->shape[a->ndim - 2], a->shape[a->ndim - 1]};
    v.batch = v.rows * v.cols != 0 ? a->numel / (v.rows * v.cols) : 0;
    return v;
}

/* dst(b, c, r) += or = src(b, r, c) for src viewed by v. */
static int transpose_into(cg_graph *g, cg_tensor *dst, const cg_tensor *src, matrix_view v,
                          bool accumulate)
{
    if (src->on_device) {
        cg_tensor *slot = dst;
        if (accumulate && cg_grad_slot(g, dst, &slot) < 0)
            return -1;
        int rc = !slot ? 0
                 : accumulate
                     ? cg_cuda_transpose_backward(src->dtype, src->data, v.batch, v.cols, v.rows,
                                                  slot->data)
                     : cg_cuda_transpose(src->dtype, src->data, v.batch, v.rows, v.cols,
                                         dst->data);
        return rc < 0 ? cg_error_cuda(cg_graph_status(g)) : 0;
    }
    for (int64_t b = 0; b < v.batch; b++)
        for (int64_t r = 0; r < v.rows; r++)
            for (int64_t c = 0; c < v.cols; c++) {
                int64_t from = (b * v.rows + r) * v.cols + c, to = (b * v.cols + c) * v.rows + r;
                if (!accumulate)
                    cg_set(dst, to, cg_get(src, from));
                else if (cg_accum_grad_at(g, dst, to, cg_get(src, from)) < 0)
                    return -1;
            }
    return 0;
}

/* da = transpose(dout): dout is viewed by the output's own shape. */
static int transpose_backward(cg_graph *g, cg_node *n)
{
    return transpose_into(g, n->in[0], n->out->pgrad, last_two_axes(n->out), true);
}

/* transpose: swaps the last two axes; 0-d and 1-D come back unchanged. Fails
 * only out of memory. */
cg_tensor *cg_transpose(cg_graph *g, cg_tensor *a)
{
    int64_t shape[CG_MAX_DIMS];
    memcpy(shape, a->shape, sizeof shape);
    if (a->ndim >= 2) {
        shape[a->ndim - 2] = a->shape[a->ndim - 1];
        shape[a->ndim - 1] = a->shape[a->ndim - 2];
    }
    cg_tensor *out = cg_tensor_new(g, a->dtype, a->ndim, shape);
    if (!out || cg_check_placed(g, "transpose", out, &a, 1) < 0 ||
        transpose_into(g, out, a, last_two_axes(a), false) < 0)
        return NULL;
    return track(g, "transpose", out, &a, 1, transpose_backward, 0, 0);
}

/* ---- reshape ------------------------------------------------------------- */

static int reshape_mismatch(cg_graph *g, const cg_tensor *a, int ndim, const int64_t *shape)
{
    char sa[64], ss[64];
    cg_error(cg_graph_status(g), "expected a shape with %lld elements to reshape %s, got %s",
             (long long)a->numel, cg_shape_str(a, sa, sizeof sa),
             dims_str(ndim, shape, ss, sizeof ss));
    return -1;
}

/* Fills out[] with shape, its one -1 replaced so the element count is numel
 * (a -1 beside a 0 could be anything, so that fails as torch does). Fails on
 * a bad ndim, a second -1, a negative dim, or a count mismatch. */
static int resolve_shape(cg_graph *g, const cg_tensor *a, int ndim, const int64_t *shape,
                         int64_t *out)
{
    if (ndim < 0 || ndim > CG_MAX_DIMS) {
        cg_error(cg_graph_status(g), "expected 0 to %d dimensions for reshape, got %d", CG_MAX_DIMS,
                 ndim);
        return -1;
    }
    int infer = -1;
    int64_t known = 1;
    for (int d = 0; d < ndim; d++) {
        out[d] = shape[d];
        if (shape[d] == -1 && infer < 0) {
            infer = d;
        } else if (shape[d] < 0) {
            char ss[64];
            cg_error(cg_graph_status(g),
                     "expected non-negative dimensions and at most one -1 for reshape, got %s",
                     dims_str(ndim, shape, ss, sizeof ss));
            return -1;
        } else if (shape[d] > 0 && known > INT64_MAX / shape[d]) {
            return reshape_mismatch(g, a, ndim, shape);
        } else {
            known *= shape[d];
        }
    }
    if (infer < 0)
        return known == a->numel ? 0 : reshape_mismatch(g, a, ndim, shape);
    if (known == 0 || a->numel % known != 0)
        return reshape_mismatch(g, a, ndim, shape);
    out[infer] = a->numel / known;
    return 0;
}

/* reshape: the same elements in row-major order under a new shape. */
cg_tensor *cg_reshape(cg_graph *g, cg_tensor *a, int ndim, const int64_t *shape)
{
    int64_t resolved[CG_MAX_DIMS];
    if (resolve_shape(g, a, ndim, shape, resolved) < 0)
        return NULL;
    cg_tensor *out = cg_tensor_new(g, a->dtype, ndim, resolved);
    if (!out || copy_values(g, "reshape", out, a) < 0)
        return NULL;
    return track(g, "reshape", out, &a, 1, same_order_backward, 0, 0);
}

/* ---- cat ----------------------------------------------------------------- */

/* Like torch.cat, a 1-D input with no elements takes no part in the shape
 * check (the legacy "empty tensor" that concatenates with anything). */
static bool skipped_in_cat(const cg_tensor *x)
{
    return x->ndim == 1 && x->numel == 0;
}

/* How many entries along axis x adds to the output. */
static int64_t cat_width(const cg_tensor *x, int axis)
{
    return skipped_in_cat(x) ? 0 : x->shape[axis];
}

static bool fits_cat(const cg_tensor *x, const cg_tensor *ref, int axis)
{
    if (skipped_in_cat(x))
        return true;
    if (x->ndim != ref->ndim)
        return false;
    for (int d = 0; d < x->ndim; d++)
        if (d != axis && x->shape[d] != ref->shape[d])
            return false;
    return true;
}

/* The output shape into shape[]; *ref is the input that sets the dims off the
 * axis. Fails on mixed dtypes, a bad axis, or shapes differing off the axis. */
static int cat_shape(cg_graph *g, cg_tensor *const *xs, int n, int axis, int64_t *shape,
                     const cg_tensor **ref)
{
    const cg_tensor *r = xs[0];
    for (int j = 1; j < n && skipped_in_cat(r); j++)
        r = xs[j];
    if (check_axis(g, r, axis) < 0)
        return -1;
    memcpy(shape, r->shape, CG_MAX_DIMS * sizeof *shape);
    shape[axis] = 0;
    for (int j = 0; j < n; j++) {
        char sr[64], sx[64];
        if (xs[j]->dtype != r->dtype) {
            cg_error(cg_graph_status(g), "expected matching dtypes for cat, got %s and %s",
                     cg_dtype_name(r->dtype), cg_dtype_name(xs[j]->dtype));
            return -1;
        }
        if (!fits_cat(xs[j], r, axis)) {
            cg_error(cg_graph_status(g),
                     "expected matching shapes except on axis %d for cat, got %s and %s", axis,
                     cg_shape_str(r, sr, sizeof sr), cg_shape_str(xs[j], sx, sizeof sx));
            return -1;
        }
        shape[axis] += cat_width(xs[j], axis);
    }
    *ref = r;
    return 0;
}

/* Products of the dims before and after axis: t seen as [outer, len, inner]. */
static void outer_inner(const cg_tensor *out, int axis, int64_t *outer, int64_t *inner)
{
    *outer = *inner = 1;
    for (int d = 0; d < axis; d++)
        *outer *= out->shape[d];
    for (int d = axis + 1; d < out->ndim; d++)
        *inner *= out->shape[d];
}

/* The kernel's arguments for n inputs: data pointers and widths along axis. */
static int cat_args(cg_graph *g, cg_tensor *const *xs, int n, int axis, const void **data,
                    int64_t *widths)
{
    if (n > CG_CUDA_MAX_INPUTS) {
        cg_error(cg_graph_status(g), "expected at most %d inputs for cat on the device, got %d",
                 CG_CUDA_MAX_INPUTS, n);
        return -1;
    }
    for (int j = 0; j < n; j++) {
        data[j] = xs[j]->data;
        widths[j] = cat_width(xs[j], axis);
    }
    return 0;
}

static int cat_backward_device(cg_graph *g, cg_node *n, int64_t outer, int64_t inner)
{
    const void *data[CG_CUDA_MAX_INPUTS];
    void *gxs[CG_CUDA_MAX_INPUTS];
    int64_t widths[CG_CUDA_MAX_INPUTS];
    if (cat_args(g, n->in, n->nin, (int)n->iarg[0], data, widths) < 0)
        return -1;
    for (int j = 0; j < n->nin; j++) {
        cg_tensor *slot;
        if (cg_grad_slot(g, n->in[j], &slot) < 0)
            return -1;
        gxs[j] = slot ? slot->data : NULL;
    }
    if (cg_cuda_cat_backward(n->out->dtype, n->out->pgrad->data, widths, n->nin, outer, inner,
                             gxs) < 0)
        return cg_error_cuda(cg_graph_status(g));
    return 0;
}

/* Input j owns entries [offset_j, offset_j + width_j) along the axis of every
 * outer row of the output; its gradient is that block of dout. An input with
 * no gradient yet in this pass gets its blocks copied into a new one (every
 * element is written once: no zeros first); one that has one adds them. */
static int cat_backward(cg_graph *g, cg_node *n)
{
    const cg_tensor *gout = n->out->pgrad;
    int axis = (int)n->iarg[0];
    int64_t outer, inner, offset = 0, total = n->out->shape[axis];
    outer_inner(n->out, axis, &outer, &inner);
    if (gout->on_device)
        return cat_backward_device(g, n, outer, inner);
    for (int j = 0; j < n->nin; j++) {
        cg_tensor *x = n->in[j];
        int64_t chunk = cat_width(x, axis) * inner;
        if (x->requires_grad && !x->pgrad && x->dtype == gout->dtype) {
            cg_tensor *p = cg_tensor_new_unset(g, x->dtype, x->ndim, x->shape);
            for (int64_t o = 0; p && o < outer; o++)
                if (cg_tensor_copy_elems(g, p, o * chunk, gout, (o * total + offset) * inner,
                                         chunk) < 0)
                    return -1;
            if (!p || cg_set_pgrad(g, x, p) < 0)
                return -1;
        } else {
            for (int64_t o = 0; o < outer; o++)
                for (int64_t e = 0; e < chunk; e++)
                    if (cg_accum_grad_at(g, x, o * chunk + e,
                                         cg_get(gout, (o * total + offset) * inner + e)) < 0)
                        return -1;
        }
        offset += cat_width(x, axis);
    }
    return 0;
}

/* cat: xs[0..n-1] joined along axis (n >= 1). Fails on n < 1, a bad axis,
 * mismatched shapes or dtypes, or OOM. */
cg_tensor *cg_cat(cg_graph *g, cg_tensor *const *xs, int n, int axis)
{
    if (n < 1) {
        cg_error(cg_graph_status(g), "expected at least one input for cat, got %d", n);
        return NULL;
    }
    int64_t shape[CG_MAX_DIMS] = {0};
    const cg_tensor *ref;
    if (cat_shape(g, xs, n, axis, shape, &ref) < 0)
        return NULL;
    cg_tensor *out = cg_tensor_new(g, ref->dtype, ref->ndim, shape);
    if (!out || cg_check_placed(g, "cat", out, xs, n) < 0)
        return NULL;
    int64_t outer, inner, offset = 0;
    outer_inner(out, axis, &outer, &inner);
    if (out->on_device) {
        const void *data[CG_CUDA_MAX_INPUTS];
        int64_t widths[CG_CUDA_MAX_INPUTS];
        if (cat_args(g, xs, n, axis, data, widths) < 0)
            return NULL;
        if (cg_cuda_cat(out->dtype, data, widths, n, outer, inner, out->data) < 0)
            return cg_error_cuda(cg_graph_status(g)), NULL;
        return track(g, "cat", out, xs, n, cat_backward, axis, 0);
    }
    for (int j = 0; j < n; j++) {
        int64_t chunk = cat_width(xs[j], axis) * inner;
        for (int64_t o = 0; o < outer; o++)
            for (int64_t e = 0; e < chunk; e++)
                cg_set(out, (o * shape[axis] + offset) * inner + e, cg_get(xs[j], o * chunk + e));
        offset += cat_width(xs[j], axis);
    }
    return track(g, "cat", out, xs, n, cat_backward, axis, 0);
}

/* ---- slice and index ----------------------------------------------------- */

/* Python's rule for one slice bound: negatives count from the end, then
 * clamp into [0, len]. */
static int64_t clamp_bound(int64_t i, int64_t len)
{
    if (i < 0)
        i += len;
    return i < 0 ? 0 : i > len ? len : i;
}

/* da(o, start + k, j) += dout(o, k, j); the rest of a gets nothing. */
static int slice_backward(cg_graph *g, cg_node *n)
{
    const cg_tensor *gout = n->out->pgrad;
    int axis = (int)n->iarg[0];
    int64_t start = n->iarg[1], outer, inner, len = n->in[0]->shape[axis];
    int64_t chunk = n->out->shape[axis];
    outer_inner(n->out, axis, &outer, &inner);
    if (gout->on_device) {
        cg_tensor *ga;
        if (cg_grad_slot(g, n->in[0], &ga) < 0)
            return -1;
        if (ga && cg_cuda_slice_backward(gout->dtype, (cg_cuda_axis){outer, len, inner}, start,
                                         chunk, gout->data, ga->data) < 0)
            return cg_error_cuda(cg_graph_status(g));
        return 0;
    }
    for (int64_t o = 0; o < outer; o++)
        for (int64_t e = 0; e < chunk * inner; e++)
            if (cg_accum_grad_at(g, n->in[0], (o * len + start) * inner + e,
                                 cg_get(gout, o * chunk * inner + e)) < 0)
                return -1;
    return 0;
}

/* slice: a[start:stop] along axis, bounds as in Python (an empty result when
 * stop <= start). Fails on a bad axis or OOM. */
cg_tensor *cg_slice(cg_graph *g, cg_tensor *a, int axis, int64_t start, int64_t stop)
{
    if (check_axis(g, a, axis) < 0)
        return NULL;
    int64_t len = a->shape[axis], outer, inner, shape[CG_MAX_DIMS];
    start = clamp_bound(start, len);
    stop = clamp_bound(stop, len);
    memcpy(shape, a->shape, sizeof shape);
    shape[axis] = stop > start ? stop - start : 0;
    cg_tensor *out = cg_tensor_new(g, a->dtype, a->ndim, shape);
    if (!out || cg_check_placed(g, "slice", out, &a, 1) < 0)
        return NULL;
    outer_inner(out, axis, &outer, &inner);
    if (out->on_device &&
        cg_cuda_slice(a->dtype, (cg_cuda_axis){outer, len, inner}, start, shape[axis], a->data,
                      out->data) < 0)
        return cg_error_cuda(cg_graph_status(g)), NULL;
    for (int64_t o = 0; !out->on_device && o < outer; o++)
        for (int64_t e = 0; e < shape[axis] * inner; e++)
            cg_set(out, o * shape[axis] * inner + e, cg_get(a, (o * len + start) * inner + e));
    return track(g, "slice", out, &a, 1, slice_backward, axis, start);
}

/* a[i] is the contiguous block of a->numel / a->shape[0] elements at i. */
static int index_backward(cg_graph *g, cg_node *n)
{
    int64_t block = n->out->numel, first = n->iarg[0] * block;
    if (n->out->on_device) {
        cg_tensor *ga;
        if (cg_grad_slot(g, n->in[0], &ga) < 0)
            return -1;
        if (ga && cg_cuda_index_backward(ga->dtype, n->out->pgrad->data, n->in[0]->shape[0],
                                         block, n->iarg[0], ga->data) < 0)
            return cg_error_cuda(cg_graph_status(g));
        return 0;
    }
    for (int64_t e = 0; e < block; e++)
        if (cg_accum_grad_at(g, n->in[0], first + e, cg_get(n->out->pgrad, e)) < 0)
            return -1;
    return 0;
}

/* index: a[i] along axis 0, negatives from the end. Fails on a 0-d tensor,
 * an index out of range, or OOM. */
cg_tensor *cg_index(cg_graph *g, cg_tensor *a, int64_t i)
{
    char sa[64];
    if (a->ndim == 0) {
        cg_error(cg_graph_status(g), "expected a tensor with at least 1 dimension to index, got %s",
                 cg_shape_str(a, sa, sizeof sa));
        return NULL;
    }
    int64_t len = a->shape[0];
    if (i < -len || i >= len) {
        cg_error(cg_graph_status(g), "expected index in [%lld, %lld), got %lld", (long long)-len,
                 (long long)len, (long long)i);
        return NULL;
    }
    i = i < 0 ? i + len : i;
    cg_tensor *out = cg_tensor_new(g, a->dtype, a->ndim - 1, a->shape + 1);
    if (!out || cg_check_placed(g, "index", out, &a, 1) < 0)
        return NULL;
    if (out->on_device && cg_cuda_index(a->dtype, a->data, len, out->numel, i, out->data) < 0)
        return cg_error_cuda(cg_graph_status(g)), NULL;
    for (int64_t e = 0; !out->on_device && e < out->numel; e++)
        cg_set(out, e, cg_get(a, i * out->numel + e));
    return track(g, "index", out, &a, 1, index_backward, i, 0);
}

/* ---- clone and detach ---------------------------------------------------- */

/* clone: a copy that stays on the tape (its own node, identity gradient). */
cg_tensor *cg_clone(cg_graph *g, cg_tensor *a)
{
    cg_tensor *out = cg_tensor_like(g, a);
    if (!out || copy_values(g, "clone", out, a) < 0)
        return NULL;
    return track(g, "clone", out, &a, 1, same_order_backward, 0, 0);
}

/* detach: a copy with no history; it never requires grad. */
cg_tensor *cg_detach(cg_graph *g, cg_tensor *a)
{
    cg_tensor *out = cg_tensor_like(g, a);
    return out && copy_values(g, "detach", out, a) == 0 ? out : NULL;
}
