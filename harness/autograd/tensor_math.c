/* tensor_math.c — whole-tensor moves and updates that work on either side:
 * placing host-built inputs on the device, reading results back, copies
 * between tensors, and the in-place updates autograd (gradient accumulation,
 * the seed dL/dL = 1) and the rule sets (scaling) make.
 *
 * Each function has its host loop here and its device twin under cuda/
 * (ops_scalar.cu, ops_elementwise.cu's accumulate). Both sides must agree:
 * a tensor and the one it is combined with live in the same place, which
 * every function checks, because mixing them would read a device pointer on
 * the host. The only transfers are cg_tensor_place (upload) and
 * cg_tensor_host (download). */
#include "autograd.h"

#include <string.h>

#include "cuda_ops.h"

static int same_side(cg_graph *g, const char *what, const cg_tensor *a, const cg_tensor *b)
{
    if (a->on_device == b->on_device)
        return 0;
    cg_error(cg_graph_status(g), "%s: one tensor is on the device and the other on the host", what);
    return -1;
}

int cg_check_placed(cg_graph *g, const char *op, const cg_tensor *out, cg_tensor *const *in,
                    int nin)
{
    for (int k = 0; k < nin; k++)
        if (same_side(g, op, out, in[k]) < 0)
            return -1;
    return 0;
}

cg_tensor *cg_tensor_place(cg_graph *g, cg_tensor *host)
{
    if (!host || !cg_graph_on_cuda(g) || host->on_device)
        return host;
    cg_tensor *d = cg_tensor_new(g, host->dtype, host->ndim, host->shape);
    if (!d)
        return NULL;
    if (cg_cuda_upload(d->data, host->data, (size_t)host->numel * cg_dtype_size(host->dtype)) < 0) {
        cg_error_cuda(cg_graph_status(g));
        return NULL;
    }
    return d;
}

const cg_tensor *cg_tensor_host(cg_graph *g, const cg_tensor *t)
{
    if (!t || !t->on_device)
        return t;
    cg_tensor *h = cg_tensor_new_host(g, t->dtype, t->ndim, t->shape);
    if (!h)
        return NULL;
    if (cg_cuda_download(h->data, t->data, (size_t)t->numel * cg_dtype_size(t->dtype)) < 0) {
        cg_error_cuda(cg_graph_status(g));
        return NULL;
    }
    return h;
}

int cg_tensor_copy_elems(cg_graph *g, cg_tensor *dst, int64_t dst_at, const cg_tensor *src,
                         int64_t src_at, int64_t n)
{
    if (same_side(g, "copy", dst, src) < 0)
        return -1;
    if (dst->dtype != src->dtype || dst_at < 0 || src_at < 0 || n < 0 ||
        dst_at + n > dst->numel || src_at + n > src->numel) {
        cg_error(cg_graph_status(g),
                 "copy of %lld elements out of bounds (%lld of %lld into %lld of %lld)",
                 (long long)n, (long long)src_at, (long long)src->numel, (long long)dst_at,
                 (long long)dst->numel);
        return -1;
    }
    size_t es = cg_dtype_size(dst->dtype);
    char *to = (char *)dst->data + (size_t)dst_at * es;
    const char *from = (const char *)src->data + (size_t)src_at * es;
    if (n == 0)
        return 0;
    if (dst->on_device)
        return cg_cuda_copy(to, from, (size_t)n * es) < 0 ? cg_error_cuda(cg_graph_status(g)) : 0;
    memcpy(to, from, (size_t)n * es);
    return 0;
}

int cg_tensor_accumulate(cg_graph *g, cg_tensor *dst, const cg_tensor *src)
{
    if (same_side(g, "accumulate", dst, src) < 0)
        return -1;
    if (dst->numel != src->numel || dst->dtype != src->dtype) {
        cg_error(cg_graph_status(g), "expected a gradient of %lld elements (%s), got %lld (%s)",
                 (long long)dst->numel, cg_dtype_name(dst->dtype), (long long)src->numel,
                 cg_dtype_name(src->dtype));
        return -1;
    }
    if (dst->on_device)
        return cg_cuda_accumulate(dst->dtype, dst->data, src->data, dst->numel) < 0
                   ? cg_error_cuda(cg_graph_status(g))
                   : 0;
    if (dst->dtype == CG_F32) { /* the common dtypes without cg_get's switch per element; a  */
        float *d = dst->data;  /* float sum equals the double sum rounded to float exactly */
        const float *s = src->data;
        for (int64_t i = 0; i < dst->numel; i++)
            d[i] += s[i];
    } else if (dst->dtype == CG_F64) {
        double *d = dst->data;
        const double *s = src->data;
        for (int64_t i = 0; i < dst->numel; i++)
            d[i] += s[i];
    } else {
        for (int64_t i = 0; i < dst->numel; i++)
            cg_set(dst, i, cg_get(dst, i) + cg_get(src, i));
    }
    return 0;
}

int cg_tensor_add_scalar(cg_graph *g, cg_tensor *t, double v)
{
    if (t->on_device)
        return cg_cuda_add_scalar(t->dtype, t->data, t->numel, v) < 0
                   ? cg_error_cuda(cg_graph_status(g))
                   : 0;
    if (t->dtype == CG_F32) { /* computed in double and rounded once, as cg_set would */
        float *d = t->data;
        for (int64_t i = 0; i < t->numel; i++)
            d[i] = (float)((double)d[i] + v);
    } else if (t->dtype == CG_F64) {
        double *d = t->data;
        for (int64_t i = 0; i < t->numel; i++)
            d[i] += v;
    } else {
        for (int64_t i = 0; i < t->numel; i++)
            cg_set(t, i, cg_get(t, i) + v);
    }
    return 0;
}

int cg_tensor_fill(cg_graph *g, cg_tensor *t, double v)
{
    if (t->on_device)
        return cg_tensor_mul_scalar(g, t, 0.0) < 0 ? -1 : cg_tensor_add_scalar(g, t, v);
    if (t->dtype == CG_F32) { /* the common dtypes without cg_set's switch per element */
        float *d = t->data, f = (float)v;
        for (int64_t i = 0; i < t->numel; i++)
            d[i] = f;
    } else if (t->dtype == CG_F64) {
        double *d = t->data;
        for (int64_t i = 0; i < t->numel; i++)
            d[i] = v;
    } else {
        for (int64_t i = 0; i < t->numel; i++)
            cg_set(t, i, v);
    }
    return 0;
}

int cg_tensor_scale_by(cg_tensor *t, double v, bool divide)
{
    if (t->on_device)
        return divide ? cg_cuda_div_scalar(t->dtype, t->data, t->numel, v)
                      : cg_cuda_mul_scalar(t->dtype, t->data, t->numel, v);
    for (int64_t i = 0; i < t->numel; i++)
        cg_set(t, i, divide ? cg_get(t, i) / v : cg_get(t, i) * v);
    return 0;
}

int cg_tensor_mul_scalar(cg_graph *g, cg_tensor *t, double v)
{
    return cg_tensor_scale_by(t, v, false) < 0 ? cg_error_cuda(cg_graph_status(g)) : 0;
}

int cg_tensor_div_scalar(cg_graph *g, cg_tensor *t, double v)
{
    return cg_tensor_scale_by(t, v, true) < 0 ? cg_error_cuda(cg_graph_status(g)) : 0;
}
