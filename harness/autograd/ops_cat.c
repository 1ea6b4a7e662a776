/* ops_cat.c — cat: tensors joined along an axis (a skipped empty operand
 * as torch.cat skips it); the backward hands each operand its slab of the
 * output gradient. */
#include "ops.h"

#include <string.h>

#include "cuda_ops.h"

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
    if (cg_check_axis(g, r, axis) < 0)
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
    cg_outer_inner(n->out, axis, &outer, &inner);
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
    cg_outer_inner(out, axis, &outer, &inner);
    if (out->on_device) {
        const void *data[CG_CUDA_MAX_INPUTS];
        int64_t widths[CG_CUDA_MAX_INPUTS];
        if (cat_args(g, xs, n, axis, data, widths) < 0)
            return NULL;
        if (cg_cuda_cat(out->dtype, data, widths, n, outer, inner, out->data) < 0)
            return cg_error_cuda(cg_graph_status(g)), NULL;
        return cg_record_if_needed(g, "cat", out, xs, n, cat_backward, axis, 0);
    }
    for (int j = 0; j < n; j++) {
        int64_t chunk = cat_width(xs[j], axis) * inner;
        for (int64_t o = 0; o < outer; o++)
            for (int64_t e = 0; e < chunk; e++)
                cg_set(out, (o * shape[axis] + offset) * inner + e, cg_get(xs[j], o * chunk + e));
        offset += cat_width(xs[j], axis);
    }
    return cg_record_if_needed(g, "cat", out, xs, n, cat_backward, axis, 0);
}

