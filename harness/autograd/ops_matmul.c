/* ops_matmul.c — matrix product, forward and backward.
 *
 * Operands are 1-D or 2-D. As in numpy, a 1-D left operand is a row [1,k]
 * and a 1-D right operand a column [k,1], and the added axis is dropped from
 * the result: [k]@[k,n] -> [n], [m,k]@[k] -> [m], [k]@[k] -> a 0-d scalar.
 * Every dot product is summed in double and rounded once on the host; on a
 * CUDA graph cuBLAS computes it (cuda/ops_matmul.cu), f64 exactly as here,
 * f32 and half in float accumulation as every GPU library does. */
#include "ops.h"

#include "cuda_ops.h"

typedef struct {
    int64_t m, k, n;
} mm_dims;

/* The [m,k]@[k,n] view of a@b. Fails on 0-d or >2-D operands, mixed dtypes,
 * or inner dimensions that disagree. */
static int mm_view(cg_graph *g, const cg_tensor *a, const cg_tensor *b, mm_dims *d)
{
    char sa[64], sb[64];
    cg_shape_str(a, sa, sizeof sa);
    cg_shape_str(b, sb, sizeof sb);
    if (a->ndim < 1 || a->ndim > 2 || b->ndim < 1 || b->ndim > 2) {
        cg_error(cg_graph_status(g), "expected 1-D or 2-D operands for matmul, got %s and %s", sa,
                 sb);
        return -1;
    }
    if (a->dtype != b->dtype) {
        cg_error(cg_graph_status(g), "expected matching dtypes for matmul, got %s and %s",
                 cg_dtype_name(a->dtype), cg_dtype_name(b->dtype));
        return -1;
    }
    int64_t kb = b->shape[0];
    *d = (mm_dims){a->ndim == 2 ? a->shape[0] : 1, a->shape[a->ndim - 1],
                   b->ndim == 2 ? b->shape[1] : 1};
    if (d->k != kb) {
        cg_error(cg_graph_status(g), "expected inner dimensions to agree for matmul, got %s and %s",
                 sa, sb);
        return -1;
    }
    return 0;
}

/* dA(i,p) += sum_j dC(i,j) B(p,j);  dB(p,j) += sum_i A(i,p) dC(i,j). */
static int matmul_backward(cg_graph *g, cg_node *n)
{
    cg_tensor *a = n->in[0], *b = n->in[1];
    const cg_tensor *gc = n->out->pgrad;
    mm_dims d;
    if (mm_view(g, a, b, &d) < 0)
        return -1;
    if (gc->on_device) {
        cg_tensor *ga, *gb;
        if (cg_grad_slot(g, a, &ga) < 0 || cg_grad_slot(g, b, &gb) < 0)
            return -1;
        if (cg_cuda_matmul_backward(a->dtype, a->data, b->data, gc->data, ga ? ga->data : NULL,
                                    gb ? gb->data : NULL, d.m, d.k, d.n) < 0)
            return cg_error_cuda(cg_graph_status(g));
        return 0;
    }
    for (int64_t i = 0; a->requires_grad && i < d.m; i++) {
        if (cg_check_cancel(g) < 0) /* a large product takes seconds: answer a stop per row */
            return -1;
        for (int64_t p = 0; p < d.k; p++) {
            double s = 0.0;
            for (int64_t j = 0; j < d.n; j++)
                s += cg_get(gc, i * d.n + j) * cg_get(b, p * d.n + j);
            if (cg_accum_grad_at(g, a, i * d.k + p, s) < 0)
                return -1;
        }
    }
    for (int64_t p = 0; b->requires_grad && p < d.k; p++) {
        if (cg_check_cancel(g) < 0)
            return -1;
        for (int64_t j = 0; j < d.n; j++) {
            double s = 0.0;
            for (int64_t i = 0; i < d.m; i++)
                s += cg_get(a, i * d.k + p) * cg_get(gc, i * d.n + j);
            if (cg_accum_grad_at(g, b, p * d.n + j, s) < 0)
                return -1;
        }
    }
    return 0;
}

/* matmul: C = A @ B with numpy's 1-D rules. Fails on bad ranks, mismatched
 * inner dimensions or dtypes, or OOM. */
cg_tensor *cg_matmul(cg_graph *g, cg_tensor *a, cg_tensor *b)
{
    mm_dims d;
    if (mm_view(g, a, b, &d) < 0)
        return NULL;
    int64_t shape[2] = {0};
    int ndim = 0;
    if (a->ndim == 2)
        shape[ndim++] = d.m;
    if (b->ndim == 2)
        shape[ndim++] = d.n;
    cg_tensor *out = cg_tensor_new(g, a->dtype, ndim, shape);
    cg_tensor *in[2] = {a, b};
    if (!out || cg_check_placed(g, "matmul", out, in, 2) < 0)
        return NULL;
    if (out->on_device && cg_cuda_matmul(a->dtype, a->data, b->data, out->data, d.m, d.k, d.n) < 0)
        return cg_error_cuda(cg_graph_status(g)), NULL;
    for (int64_t i = 0; !out->on_device && i < d.m; i++) {
        if (cg_check_cancel(g) < 0)
            return NULL;
        for (int64_t j = 0; j < d.n; j++) {
            double s = 0.0;
            for (int64_t p = 0; p < d.k; p++)
                s += cg_get(a, i * d.k + p) * cg_get(b, p * d.n + j);
            cg_set(out, i * d.n + j, s);
        }
    }
    if (cg_any_requires_grad(in, 2) && !cg_record(g, "matmul", out, in, 2, matmul_backward))
        return NULL;
    return out;
}
