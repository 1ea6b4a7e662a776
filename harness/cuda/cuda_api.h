/* cuda_api.h — the GPU module's table of CUDA entry points: every function
 * of cuda_ops.h, reached through one struct the module hands the tool.
 *
 * The CUDA kernels, cuBLAS and the nccl transport live in a shared library,
 * libcollgrad-gpu.so, that the tool dlopens on first use (gpu_module.h), so a
 * CPU-only run maps no CUDA or NCCL library. The tool's cg_cuda_* functions
 * (autograd/cuda_module.c) forward through this table; the module fills it
 * with its own (cuda_entry.c). Both expand CG_CUDA_INT_API, so each row is
 * written once and checked by the compiler against cuda_ops.h's prototype.
 *
 * Rows: X(name, (parameters), (arguments)) for every function returning int;
 * the six others are members by hand. */
#ifndef CG_CUDA_API_H
#define CG_CUDA_API_H

#include "cuda_ops.h"

/* Raised whenever the struct below changes: the tool refuses a module built
 * from another version ("rebuild libcollgrad-gpu.so with the tool"). */
#define CG_CUDA_API_VERSION 2
/* The module's exported function returning its table. */
#define CG_CUDA_API_ENTRY "collgrad_gpu_cuda"

#define CG_CUDA_INT_API(X) \
    X(cg_cuda_device_count, (int *count), (count))                                               \
    X(cg_cuda_sync, (void), ())                                                                  \
    X(cg_cuda_arena_peak, (int reset, size_t *peak), (reset, peak))                              \
    X(cg_cuda_upload, (void *dev, const void *host, size_t bytes), (dev, host, bytes))           \
    X(cg_cuda_download, (void *host, const void *dev, size_t bytes), (host, dev, bytes))         \
    X(cg_cuda_copy, (void *dst, const void *src, size_t bytes), (dst, src, bytes))               \
    X(cg_cuda_binary, (cg_cuda_binary_op op, cg_dtype dt, const void *a, int64_t na,             \
      const void *b, int64_t nb, void *out, int64_t n), (op, dt, a, na, b, nb, out, n))          \
    X(cg_cuda_binary_backward, (cg_cuda_binary_op op, cg_dtype dt, const void *a, int64_t na,    \
      const void *b, int64_t nb, const void *gout, int64_t n, void *ga, void *gb),               \
      (op, dt, a, na, b, nb, gout, n, ga, gb))                                                   \
    X(cg_cuda_unary, (cg_cuda_unary_op op, cg_dtype dt, const void *a, void *out, int64_t n),    \
      (op, dt, a, out, n))                                                                       \
    X(cg_cuda_unary_backward, (cg_cuda_unary_op op, cg_dtype dt, const void *a,                  \
      const void *gout, void *ga, int64_t n), (op, dt, a, gout, ga, n))                          \
    X(cg_cuda_any_zero, (cg_dtype dt, const void *a, int64_t n, int *found), (dt, a, n, found))  \
    X(cg_cuda_accumulate, (cg_dtype dt, void *dst, const void *src, int64_t n),                  \
      (dt, dst, src, n))                                                                         \
    X(cg_cuda_sum, (cg_dtype dt, cg_cuda_axis v, const void *a, void *out), (dt, v, a, out))     \
    X(cg_cuda_sum_backward, (cg_dtype dt, cg_cuda_axis v, const void *gout, void *ga),           \
      (dt, v, gout, ga))                                                                         \
    X(cg_cuda_mean, (cg_dtype dt, cg_cuda_axis v, const void *a, void *out), (dt, v, a, out))    \
    X(cg_cuda_mean_backward, (cg_dtype dt, cg_cuda_axis v, const void *gout, void *ga),          \
      (dt, v, gout, ga))                                                                         \
    X(cg_cuda_logsumexp, (cg_dtype dt, cg_cuda_axis v, const void *a, void *out),                \
      (dt, v, a, out))                                                                           \
    X(cg_cuda_logsumexp_backward, (cg_dtype dt, cg_cuda_axis v, const void *a, const void *gout, \
      void *ga), (dt, v, a, gout, ga))                                                           \
    X(cg_cuda_log_softmax, (cg_dtype dt, cg_cuda_axis v, const void *a, void *out),              \
      (dt, v, a, out))                                                                           \
    X(cg_cuda_log_softmax_backward, (cg_dtype dt, cg_cuda_axis v, const void *a,                 \
      const void *gout, void *ga), (dt, v, a, gout, ga))                                         \
    X(cg_cuda_maxn, (cg_dtype dt, const void *const *xs, int n, int64_t numel, void *out,        \
      int *tie), (dt, xs, n, numel, out, tie))                                                   \
    X(cg_cuda_minn, (cg_dtype dt, const void *const *xs, int n, int64_t numel, void *out,        \
      int *tie), (dt, xs, n, numel, out, tie))                                                   \
    X(cg_cuda_extremum_backward, (cg_dtype dt, const void *const *xs, int n, int64_t numel,      \
      const void *out, const void *gout, void *const *gxs), (dt, xs, n, numel, out, gout, gxs))  \
    X(cg_cuda_transpose, (cg_dtype dt, const void *a, int64_t batch, int64_t rows, int64_t cols, \
      void *out), (dt, a, batch, rows, cols, out))                                               \
    X(cg_cuda_transpose_backward, (cg_dtype dt, const void *gout, int64_t batch, int64_t rows,   \
      int64_t cols, void *ga), (dt, gout, batch, rows, cols, ga))                                \
    X(cg_cuda_cat, (cg_dtype dt, const void *const *xs, const int64_t *widths, int n,            \
      int64_t outer, int64_t inner, void *out), (dt, xs, widths, n, outer, inner, out))          \
    X(cg_cuda_cat_backward, (cg_dtype dt, const void *gout, const int64_t *widths, int n,        \
      int64_t outer, int64_t inner, void *const *gxs), (dt, gout, widths, n, outer, inner, gxs)) \
    X(cg_cuda_slice, (cg_dtype dt, cg_cuda_axis v, int64_t start, int64_t width, const void *a,  \
      void *out), (dt, v, start, width, a, out))                                                 \
    X(cg_cuda_slice_backward, (cg_dtype dt, cg_cuda_axis v, int64_t start, int64_t width,        \
      const void *gout, void *ga), (dt, v, start, width, gout, ga))                              \
    X(cg_cuda_index, (cg_dtype dt, const void *a, int64_t len, int64_t block, int64_t i,         \
      void *out), (dt, a, len, block, i, out))                                                   \
    X(cg_cuda_index_backward, (cg_dtype dt, const void *gout, int64_t len, int64_t block,        \
      int64_t i, void *ga), (dt, gout, len, block, i, ga))                                       \
    X(cg_cuda_matmul, (cg_dtype dt, const void *a, const void *b, void *out, int64_t m,          \
      int64_t k, int64_t n), (dt, a, b, out, m, k, n))                                           \
    X(cg_cuda_matmul_backward, (cg_dtype dt, const void *a, const void *b, const void *gout,     \
      void *ga, void *gb, int64_t m, int64_t k, int64_t n), (dt, a, b, gout, ga, gb, m, k, n))   \
    X(cg_cuda_add_scalar, (cg_dtype dt, void *dst, int64_t n, double v), (dt, dst, n, v))        \
    X(cg_cuda_mul_scalar, (cg_dtype dt, void *dst, int64_t n, double v), (dt, dst, n, v))        \
    X(cg_cuda_div_scalar, (cg_dtype dt, void *dst, int64_t n, double v), (dt, dst, n, v))        \
    X(cg_cuda_convert, (cg_dtype to, void *dst, cg_dtype from, const void *src, int64_t n),      \
      (to, dst, from, src, n))                                                                   \
    X(cg_cuda_prod_split, (cg_dtype dt, const void *x, int64_t n, double *zeros,                 \
      double *nonzero), (dt, x, n, zeros, nonzero))                                              \
    X(cg_cuda_prod_scale, (cg_dtype dt, const void *x, const double *zeros,                      \
      const double *nonzero, void *gx, int64_t n), (dt, x, zeros, nonzero, gx, n))               \
    X(cg_cuda_equal_mask, (cg_dtype dt, const void *x, const void *m, int64_t n, double *mask),  \
      (dt, x, m, n, mask))                                                                       \
    X(cg_cuda_tie_scale, (cg_dtype dt, const void *x, const void *m, const double *ties,         \
      void *gx, int64_t n), (dt, x, m, ties, gx, n))                                             \
    X(cg_cuda_xla_grad, (cg_dtype dt, int prod, const void *gy, const void *x, const void *y,    \
      void *gx, int64_t n), (dt, prod, gy, x, y, gx, n))

typedef struct cg_cuda_api {
    int version; /* CG_CUDA_API_VERSION */
    const char *(*cg_cuda_last_error)(void);
    void (*cg_cuda_shutdown)(void);
    cg_cuda_arena *(*cg_cuda_arena_new)(void);
    void *(*cg_cuda_alloc)(cg_cuda_arena *a, size_t bytes);
    void (*cg_cuda_free_all)(cg_cuda_arena *a);
    void (*cg_cuda_arena_free)(cg_cuda_arena *a);
#define CG_CUDA_API_MEMBER(name, params, args) int (*name) params;
    CG_CUDA_INT_API(CG_CUDA_API_MEMBER)
#undef CG_CUDA_API_MEMBER
} cg_cuda_api;

typedef const cg_cuda_api *(*cg_cuda_api_entry_fn)(void);

#endif
