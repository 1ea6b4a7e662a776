/* ops_shape.c — ops that move elements without arithmetic: transpose,
 * reshape, slice, index, clone, detach (cat is ops_cat.c's). Each backward
 * moves the output gradient back to where its elements came from. */
#include "ops.h"

#include <string.h>

#include "cuda_ops.h"

/* "[2,-1]" for a shape given as an array (ndim already checked <= 4). */
static char *dims_str(int ndim, const int64_t *shape, char *buf, size_t len)
{
    cg_tensor t = {.ndim = ndim};
    if (ndim > 0) /* a 0-d shape may come as NULL */
        memcpy(t.shape, shape, (size_t)ndim * sizeof *shape);
    return cg_shape_str(&t, buf, len);
}

int cg_check_axis(cg_graph *g, const cg_tensor *a, int axis)
{
    if (axis >= 0 && axis < a->ndim)
        return 0;
    cg_error(cg_graph_status(g), "expected axis in [0, %d), got %d", a->ndim, axis);
    return -1;
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
    return cg_record_if_needed(g, "transpose", out, &a, 1, transpose_backward, 0, 0);
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
    return cg_record_if_needed(g, "reshape", out, &a, 1, same_order_backward, 0, 0);
}

/* Products of the dims before and after axis: t seen as [outer, len, inner]. */
void cg_outer_inner(const cg_tensor *out, int axis, int64_t *outer, int64_t *inner)
{
    *outer = *inner = 1;
    for (int d = 0; d < axis; d++)
        *outer *= out->shape[d];
    for (int d = axis + 1; d < out->ndim; d++)
        *inner *= out->shape[d];
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
    cg_outer_inner(n->out, axis, &outer, &inner);
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
    if (cg_check_axis(g, a, axis) < 0)
        return NULL;
    int64_t len = a->shape[axis], outer, inner, shape[CG_MAX_DIMS];
    start = clamp_bound(start, len);
    stop = clamp_bound(stop, len);
    memcpy(shape, a->shape, sizeof shape);
    shape[axis] = stop > start ? stop - start : 0;
    cg_tensor *out = cg_tensor_new(g, a->dtype, a->ndim, shape);
    if (!out || cg_check_placed(g, "slice", out, &a, 1) < 0)
        return NULL;
    cg_outer_inner(out, axis, &outer, &inner);
    if (out->on_device &&
        cg_cuda_slice(a->dtype, (cg_cuda_axis){outer, len, inner}, start, shape[axis], a->data,
                      out->data) < 0)
        return cg_error_cuda(cg_graph_status(g)), NULL;
    for (int64_t o = 0; !out->on_device && o < outer; o++)
        for (int64_t e = 0; e < shape[axis] * inner; e++)
            cg_set(out, o * shape[axis] * inner + e, cg_get(a, (o * len + start) * inner + e));
    return cg_record_if_needed(g, "slice", out, &a, 1, slice_backward, axis, start);
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
    return cg_record_if_needed(g, "index", out, &a, 1, index_backward, i, 0);
}

/* ---- clone and detach ---------------------------------------------------- */

/* clone: a copy that stays on the tape (its own node, identity gradient). */
cg_tensor *cg_clone(cg_graph *g, cg_tensor *a)
{
    cg_tensor *out = cg_tensor_like(g, a);
    if (!out || copy_values(g, "clone", out, a) < 0)
        return NULL;
    return cg_record_if_needed(g, "clone", out, &a, 1, same_order_backward, 0, 0);
}

/* detach: a copy with no history; it never requires grad. */
cg_tensor *cg_detach(cg_graph *g, cg_tensor *a)
{
    cg_tensor *out = cg_tensor_like(g, a);
    return out && copy_values(g, "detach", out, a) == 0 ? out : NULL;
}
