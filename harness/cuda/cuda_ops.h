/* cuda_ops.h — CUDA kernels for the local ops of ops.h, forward and backward,
 * behind a plain C API (the .cu files give these functions C linkage).
 *
 * Each kernel file sits beside its CPU reference: cuda/ops_elementwise.cu
 * mirrors ops_elementwise.c, and so on. Buffers are device pointers to
 * contiguous row-major elements of one dtype (f32, f64, bf16, f16). Like the
 * CPU ops, every element is widened to double, computed, and rounded once into
 * the output dtype (bf16/f16 through float, as cg_set does), so an f32 result
 * is the correctly rounded value the CPU reference stores. The kernels know
 * no shapes: callers pass the views (n, axis views, matrix sizes) that the
 * CPU op derives from its tensors.
 *
 * Backward functions ACCUMULATE into the gradient buffers (g += ...), as
 * cg_accum_grad does; a NULL gradient buffer means "this input needs none".
 *
 * Every function returns 0, or -1 with a message readable by
 * cg_cuda_last_error() that names the failing CUDA/cuBLAS call
 * ("cudaMalloc failed: out of memory"). Nothing here aborts. Kernels run on
 * the default stream in issue order; errors raised inside a kernel surface at
 * the next synchronizing call (a download, cg_cuda_sync). Not thread-safe:
 * one thread drives the device (the last error and the cuBLAS handle are
 * process-wide). */
#ifndef CG_CUDA_OPS_H
#define CG_CUDA_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "tensor.h" /* cg_dtype */

/* The most inputs one maxn/minn call takes (the oracle's widest is a world). */
#define CG_CUDA_MAX_INPUTS 64

/* ---- device, errors, copies ------------------------------------------------ */

const char *cg_cuda_last_error(void);
/* The number of visible devices; -1 with "cudaGetDeviceCount: <why>" when the
 * runtime cannot tell (no driver, no device). */
int cg_cuda_device_count(int *count);
int cg_cuda_sync(void);                                        /* cudaDeviceSynchronize */
int cg_cuda_upload(void *dev, const void *host, size_t bytes);  /* host -> device */
int cg_cuda_download(void *host, const void *dev, size_t bytes);/* device -> host */
int cg_cuda_copy(void *dst, const void *src, size_t bytes);     /* device -> device */
void cg_cuda_shutdown(void);                                   /* drops the cuBLAS handle */

/* ---- the device arena: buffers owned together, freed together ------------- */

typedef struct cg_cuda_arena cg_cuda_arena;
cg_cuda_arena *cg_cuda_arena_new(void);              /* NULL when host memory runs out */
void *cg_cuda_alloc(cg_cuda_arena *a, size_t bytes); /* zeroed device memory; NULL + error */
void cg_cuda_free_all(cg_cuda_arena *a);             /* frees every buffer; a stays usable */
void cg_cuda_arena_free(cg_cuda_arena *a);           /* free_all, then a itself; NULL is fine */
/* The most device bytes this process's arenas held at once since the last
 * reset (what its tensors took: not NCCL's or the CUDA context's own memory);
 * reset != 0 first sets the peak to what they hold now. Always 0. */
int cg_cuda_arena_peak(int reset, size_t *peak);

/* ---- elementwise (cuda/ops_elementwise.cu) --------------------------------- */

typedef enum { CG_CUDA_ADD, CG_CUDA_SUB, CG_CUDA_MUL, CG_CUDA_DIV, CG_CUDA_POW } cg_cuda_binary_op;
typedef enum {
    CG_CUDA_NEG, CG_CUDA_EXP, CG_CUDA_LOG, CG_CUDA_TANH, CG_CUDA_RELU, CG_CUDA_ABS, CG_CUDA_GELU
} cg_cuda_unary_op;

/* out[i] = op(a[i], b[i]) for i < n; an operand with 1 element broadcasts
 * (na and nb are each n or 1). */
int cg_cuda_binary(cg_cuda_binary_op op, cg_dtype dt, const void *a, int64_t na, const void *b,
                   int64_t nb, void *out, int64_t n);
/* ga += gout * d op/da, gb += gout * d op/db; a broadcast operand's gradient
 * is the sum over all n, taken in double and added once. */
int cg_cuda_binary_backward(cg_cuda_binary_op op, cg_dtype dt, const void *a, int64_t na,
                            const void *b, int64_t nb, const void *gout, int64_t n, void *ga,
                            void *gb);
int cg_cuda_unary(cg_cuda_unary_op op, cg_dtype dt, const void *a, void *out, int64_t n);
int cg_cuda_unary_backward(cg_cuda_unary_op op, cg_dtype dt, const void *a, const void *gout,
                           void *ga, int64_t n);
/* *found = 1 when some a[i] == 0 (relu/abs note a non-differentiable point). */
int cg_cuda_any_zero(cg_dtype dt, const void *a, int64_t n, int *found);
/* dst[i] += src[i]: cg_accum_grad, and the backward of reshape and clone. */
int cg_cuda_accumulate(cg_dtype dt, void *dst, const void *src, int64_t n);

/* ---- reductions (cuda/ops_reduce.cu) --------------------------------------- */

/* A tensor seen as [outer, len, inner] around the reduced axis (ops_reduce.c). */
typedef struct {
    int64_t outer, len, inner;
} cg_cuda_axis;
/* The view of a tensor of this shape around axis; axis < 0 is every element
 * (outer = inner = 1). The caller has checked axis < ndim. */
static inline cg_cuda_axis cg_cuda_axis_of(int ndim, const int64_t *shape, int axis)
{
    cg_cuda_axis v = {1, 1, 1};
    for (int d = 0; d < ndim; d++) {
        if (axis < 0)
            v.len *= shape[d];
        else
            *(d < axis ? &v.outer : d == axis ? &v.len : &v.inner) *= shape[d];
    }
    return v;
}

/* out has outer*inner elements; log_softmax's has a's. */
int cg_cuda_sum(cg_dtype dt, cg_cuda_axis v, const void *a, void *out);
int cg_cuda_sum_backward(cg_dtype dt, cg_cuda_axis v, const void *gout, void *ga);
int cg_cuda_mean(cg_dtype dt, cg_cuda_axis v, const void *a, void *out);
int cg_cuda_mean_backward(cg_dtype dt, cg_cuda_axis v, const void *gout, void *ga);
int cg_cuda_logsumexp(cg_dtype dt, cg_cuda_axis v, const void *a, void *out);
int cg_cuda_logsumexp_backward(cg_dtype dt, cg_cuda_axis v, const void *a, const void *gout,
                               void *ga);
int cg_cuda_log_softmax(cg_dtype dt, cg_cuda_axis v, const void *a, void *out);
int cg_cuda_log_softmax_backward(cg_dtype dt, cg_cuda_axis v, const void *a, const void *gout,
                                 void *ga);

/* out[i] = max (min) over xs[0..n-1][i], nan winning; *tie = 1 when two
 * inputs attain some out[i] (tie may be NULL). 1 <= n <= CG_CUDA_MAX_INPUTS. */
int cg_cuda_maxn(cg_dtype dt, const void *const *xs, int n, int64_t numel, void *out, int *tie);
int cg_cuda_minn(cg_dtype dt, const void *const *xs, int n, int64_t numel, void *out, int *tie);
/* gxs[j][i] += gout[i] / #winners(i) for each input j attaining out[i]; the
 * backward of both maxn and minn. gxs[j] may be NULL. */
int cg_cuda_extremum_backward(cg_dtype dt, const void *const *xs, int n, int64_t numel,
                              const void *out, const void *gout, void *const *gxs);

/* ---- shape (cuda/ops_shape.cu): copies ------------------------------------- */

/* a seen as [batch, rows, cols]; out is [batch, cols, rows]. The backward
 * takes a's rows and cols and adds transpose(gout) into ga. */
int cg_cuda_transpose(cg_dtype dt, const void *a, int64_t batch, int64_t rows, int64_t cols,
                      void *out);
int cg_cuda_transpose_backward(cg_dtype dt, const void *gout, int64_t batch, int64_t rows,
                               int64_t cols, void *ga);
/* Input j is [outer, widths[j], inner]; out is [outer, sum widths, inner]. */
int cg_cuda_cat(cg_dtype dt, const void *const *xs, const int64_t *widths, int n, int64_t outer,
                int64_t inner, void *out);
int cg_cuda_cat_backward(cg_dtype dt, const void *gout, const int64_t *widths, int n,
                         int64_t outer, int64_t inner, void *const *gxs);
/* out = a[:, start:start+width, :] for a viewed as v (bounds already clamped). */
int cg_cuda_slice(cg_dtype dt, cg_cuda_axis v, int64_t start, int64_t width, const void *a,
                  void *out);
int cg_cuda_slice_backward(cg_dtype dt, cg_cuda_axis v, int64_t start, int64_t width,
                           const void *gout, void *ga);
/* out = a[i] for a of `len` blocks of `block` elements (0 <= i < len). */
int cg_cuda_index(cg_dtype dt, const void *a, int64_t len, int64_t block, int64_t i, void *out);
int cg_cuda_index_backward(cg_dtype dt, const void *gout, int64_t len, int64_t block, int64_t i,
                           void *ga);

/* ---- matmul (cuda/ops_matmul.cu): cuBLAS ----------------------------------- */

/* out[m,n] = a[m,k] @ b[k,n], row-major; 1-D operands are m = 1 or n = 1. */
int cg_cuda_matmul(cg_dtype dt, const void *a, const void *b, void *out, int64_t m, int64_t k,
                   int64_t n);
/* ga += gout @ b^T, gb += a^T @ gout (either may be NULL). */
int cg_cuda_matmul_backward(cg_dtype dt, const void *a, const void *b, const void *gout, void *ga,
                            void *gb, int64_t m, int64_t k, int64_t n);

/* ---- whole-tensor updates by a number (cuda/ops_scalar.cu) ------------------ */

/* dst[i] += v, *= v, /= v; the host loops are in tensor_math.c. */
int cg_cuda_add_scalar(cg_dtype dt, void *dst, int64_t n, double v);
int cg_cuda_mul_scalar(cg_dtype dt, void *dst, int64_t n, double v);
int cg_cuda_div_scalar(cg_dtype dt, void *dst, int64_t n, double v);
/* dst[i] = src[i] converted from `from` to `to` (cg_tensor_cast). */
int cg_cuda_convert(cg_dtype to, void *dst, cg_dtype from, const void *src, int64_t n);

/* ---- the rule sets' local arithmetic (cuda/rules_local.cu) -------------------- */

/* The twins of rules_local.c; formulas in rules_local_math.h. zeros, nonzero,
 * mask and ties are f64 buffers of n elements. */
int cg_cuda_prod_split(cg_dtype dt, const void *x, int64_t n, double *zeros, double *nonzero);
int cg_cuda_prod_scale(cg_dtype dt, const void *x, const double *zeros, const double *nonzero,
                       void *gx, int64_t n);
int cg_cuda_equal_mask(cg_dtype dt, const void *x, const void *m, int64_t n, double *mask);
int cg_cuda_tie_scale(cg_dtype dt, const void *x, const void *m, const double *ties, void *gx,
                      int64_t n);
/* gx = torch_xla's AllReduce.backward: prod ? g*y/x (0 at x == 0) : g where x == y. */
int cg_cuda_xla_grad(cg_dtype dt, int prod, const void *gy, const void *x, const void *y, void *gx,
                     int64_t n);

#endif
