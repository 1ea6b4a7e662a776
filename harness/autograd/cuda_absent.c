/* cuda_absent.c — the CUDA API of cuda/cuda_ops.h in a build without CUDA.
 *
 * The ops, autograd and rule sets call the cg_cuda_* twins of their loops
 * whenever a tensor lives on the device. Without CUDA no graph can move to
 * the device (cg_graph_use_cuda fails first), so none of these is ever
 * reached; they exist so that one source tree links both ways without an
 * #ifdef at every call, and each fails cleanly should that ever change. */
#ifndef HAVE_CUDA

#include "cuda_ops.h"

static const char absent_msg[] = "this collgrad-check was built without CUDA";

static int absent(void) { return -1; }

/* `int name(params) { return -1; }` with the exact prototype, so the compiler
 * checks every stub against cuda_ops.h. */
#define ABSENT(name, params) int name params { return absent(); }

const char *cg_cuda_last_error(void) { return absent_msg; }
int cg_cuda_device_count(int *count) { *count = 0; return absent(); }
ABSENT(cg_cuda_sync, (void))
ABSENT(cg_cuda_upload, (void *dev, const void *host, size_t bytes))
ABSENT(cg_cuda_download, (void *host, const void *dev, size_t bytes))
ABSENT(cg_cuda_copy, (void *dst, const void *src, size_t bytes))
void cg_cuda_shutdown(void) {}

cg_cuda_arena *cg_cuda_arena_new(void) { return NULL; }
void *cg_cuda_alloc(cg_cuda_arena *a, size_t bytes) { return NULL; }
void cg_cuda_free_all(cg_cuda_arena *a) {}
void cg_cuda_arena_free(cg_cuda_arena *a) {}
int cg_cuda_arena_peak(int reset, size_t *peak) { *peak = 0; return 0; }

ABSENT(cg_cuda_binary, (cg_cuda_binary_op op, cg_dtype dt, const void *a, int64_t na,
                        const void *b, int64_t nb, void *out, int64_t n))
ABSENT(cg_cuda_binary_backward, (cg_cuda_binary_op op, cg_dtype dt, const void *a, int64_t na,
                                 const void *b, int64_t nb, const void *gout, int64_t n, void *ga,
                                 void *gb))
ABSENT(cg_cuda_unary, (cg_cuda_unary_op op, cg_dtype dt, const void *a, void *out, int64_t n))
ABSENT(cg_cuda_unary_backward, (cg_cuda_unary_op op, cg_dtype dt, const void *a,
                                const void *gout, void *ga, int64_t n))
ABSENT(cg_cuda_any_zero, (cg_dtype dt, const void *a, int64_t n, int *found))
ABSENT(cg_cuda_accumulate, (cg_dtype dt, void *dst, const void *src, int64_t n))

ABSENT(cg_cuda_sum, (cg_dtype dt, cg_cuda_axis v, const void *a, void *out))
ABSENT(cg_cuda_sum_backward, (cg_dtype dt, cg_cuda_axis v, const void *gout, void *ga))
ABSENT(cg_cuda_mean, (cg_dtype dt, cg_cuda_axis v, const void *a, void *out))
ABSENT(cg_cuda_mean_backward, (cg_dtype dt, cg_cuda_axis v, const void *gout, void *ga))
ABSENT(cg_cuda_logsumexp, (cg_dtype dt, cg_cuda_axis v, const void *a, void *out))
ABSENT(cg_cuda_logsumexp_backward, (cg_dtype dt, cg_cuda_axis v, const void *a,
                                    const void *gout, void *ga))
ABSENT(cg_cuda_log_softmax, (cg_dtype dt, cg_cuda_axis v, const void *a, void *out))
ABSENT(cg_cuda_log_softmax_backward, (cg_dtype dt, cg_cuda_axis v, const void *a,
                                      const void *gout, void *ga))
ABSENT(cg_cuda_maxn, (cg_dtype dt, const void *const *xs, int n, int64_t numel, void *out,
                      int *tie))
ABSENT(cg_cuda_minn, (cg_dtype dt, const void *const *xs, int n, int64_t numel, void *out,
                      int *tie))
ABSENT(cg_cuda_extremum_backward, (cg_dtype dt, const void *const *xs, int n, int64_t numel,
                                   const void *out, const void *gout, void *const *gxs))

ABSENT(cg_cuda_transpose, (cg_dtype dt, const void *a, int64_t batch, int64_t rows, int64_t cols,
                           void *out))
ABSENT(cg_cuda_transpose_backward, (cg_dtype dt, const void *gout, int64_t batch, int64_t rows,
                                    int64_t cols, void *ga))
ABSENT(cg_cuda_cat, (cg_dtype dt, const void *const *xs, const int64_t *widths, int n,
                     int64_t outer, int64_t inner, void *out))
ABSENT(cg_cuda_cat_backward, (cg_dtype dt, const void *gout, const int64_t *widths, int n,
                              int64_t outer, int64_t inner, void *const *gxs))
ABSENT(cg_cuda_slice, (cg_dtype dt, cg_cuda_axis v, int64_t start, int64_t width, const void *a,
                       void *out))
ABSENT(cg_cuda_slice_backward, (cg_dtype dt, cg_cuda_axis v, int64_t start, int64_t width,
                                const void *gout, void *ga))
ABSENT(cg_cuda_index, (cg_dtype dt, const void *a, int64_t len, int64_t block, int64_t i,
                       void *out))
ABSENT(cg_cuda_index_backward, (cg_dtype dt, const void *gout, int64_t len, int64_t block,
                                int64_t i, void *ga))
ABSENT(cg_cuda_matmul, (cg_dtype dt, const void *a, const void *b, void *out, int64_t m,
                        int64_t k, int64_t n))
ABSENT(cg_cuda_matmul_backward, (cg_dtype dt, const void *a, const void *b, const void *gout,
                                 void *ga, void *gb, int64_t m, int64_t k, int64_t n))

ABSENT(cg_cuda_add_scalar, (cg_dtype dt, void *dst, int64_t n, double v))
ABSENT(cg_cuda_mul_scalar, (cg_dtype dt, void *dst, int64_t n, double v))
ABSENT(cg_cuda_div_scalar, (cg_dtype dt, void *dst, int64_t n, double v))
ABSENT(cg_cuda_convert, (cg_dtype to, void *dst, cg_dtype from, const void *src, int64_t n))

ABSENT(cg_cuda_prod_split, (cg_dtype dt, const void *x, int64_t n, double *zeros,
                            double *nonzero))
ABSENT(cg_cuda_prod_scale, (cg_dtype dt, const void *x, const double *zeros,
                            const double *nonzero, void *gx, int64_t n))
ABSENT(cg_cuda_equal_mask, (cg_dtype dt, const void *x, const void *m, int64_t n, double *mask))
ABSENT(cg_cuda_tie_scale, (cg_dtype dt, const void *x, const void *m, const double *ties,
                           void *gx, int64_t n))
ABSENT(cg_cuda_xla_grad, (cg_dtype dt, int prod, const void *gy, const void *x, const void *y,
                          void *gx, int64_t n))

#else
typedef int cg_cuda_present; /* ISO C wants something in every translation unit */
#endif
