/* ops_matmul.cu — the device twin of ops_matmul.c: C = A @ B and its
 * backward through cuBLAS (cuda_ops.h).
 *
 * cuBLAS is column-major. A row-major [r, c] buffer is, read column-major,
 * the [c, r] transpose, so the row-major product C = A B is computed as the
 * column-major C^T = B^T A^T: swap the operands, keep "no transpose", and
 * every leading dimension is the row-major column count. The backward uses
 * the same reading:
 *   dA = dC B^T   ->  (dA)^T = B (dC)^T  : gemm(T, N) on (B, dC)
 *   dB = A^T dC   ->  (dB)^T = (dC)^T A  : gemm(N, T) on (dC, A)
 * with beta = 1, so gradients accumulate as cg_accum_grad does.
 *
 * f32 and f64 run cublasSgemm/cublasDgemm in CUBLAS_PEDANTIC_MATH (no TF32
 * or other reduced-precision shortcuts). Unlike the CPU op, which sums each
 * dot product in double, f32 accumulates in f32: for the sizes of case files
 * the difference stays far inside the f32 tolerance. bf16 and f16 go through
 * cublasGemmEx with f32 accumulation. */
#include <limits.h>

#include <cublas_v2.h>

#include "cuda_common.cuh"

/* Runs a cuBLAS call; on failure records "<function> failed: <status>" and
 * returns -1 from the enclosing function. */
#define CUBLASCHECK(call)                                                                          \
    do {                                                                                           \
        cublasStatus_t s_ = (call);                                                                \
        if (s_ != CUBLAS_STATUS_SUCCESS)                                                           \
            return cg_error(cg_cuda_status(), "%.*s failed: %s", cg_cuda_call_name(#call), #call,  \
                            cublasGetStatusString(s_));                                            \
    } while (0)

static cublasHandle_t handle; /* made on first use, on the current device */

static int get_handle(void)
{
    if (!handle)
        CUBLASCHECK(cublasCreate(&handle));
    return 0;
}

void cg_cuda_blas_release(void)
{
    if (handle)
        cublasDestroy(handle);
    handle = NULL;
}

/* One column-major gemm: C = op(A) op(B) + beta C with alpha = 1. */
struct gemm_args {
    cublasOperation_t ta, tb;
    int m, n, k;
    const void *a;
    int lda;
    const void *b;
    int ldb;
    double beta; /* 0 or 1 */
    void *c;
    int ldc;
};

static int gemm_half(cudaDataType_t type, const gemm_args &g)
{
    float one = 1.0f, beta = (float)g.beta;
    CUBLASCHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
    CUBLASCHECK(cublasGemmEx(handle, g.ta, g.tb, g.m, g.n, g.k, &one, g.a, type, g.lda, g.b, type,
                             g.ldb, &beta, g.c, type, g.ldc, CUBLAS_COMPUTE_32F,
                             CUBLAS_GEMM_DEFAULT));
    return 0;
}

static int gemm(cg_dtype dt, const gemm_args &g)
{
    if (get_handle() != 0)
        return -1;
    if (dt == CG_BF16 || dt == CG_F16)
        return gemm_half(dt == CG_BF16 ? CUDA_R_16BF : CUDA_R_16F, g);
    CUBLASCHECK(cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH));
    if (dt == CG_F32) {
        float one = 1.0f, beta = (float)g.beta;
        CUBLASCHECK(cublasSgemm(handle, g.ta, g.tb, g.m, g.n, g.k, &one, (const float *)g.a,
                                g.lda, (const float *)g.b, g.ldb, &beta, (float *)g.c, g.ldc));
        return 0;
    }
    if (dt == CG_F64) {
        double one = 1.0, beta = g.beta;
        CUBLASCHECK(cublasDgemm(handle, g.ta, g.tb, g.m, g.n, g.k, &one, (const double *)g.a,
                                g.lda, (const double *)g.b, g.ldb, &beta, (double *)g.c, g.ldc));
        return 0;
    }
    return cg_error(cg_cuda_status(), "matmul: unknown dtype %d", (int)dt);
}

/* cuBLAS takes int sizes; a leading dimension must be at least 1 even for an
 * empty matrix. */
static int int_dims(const char *name, int64_t m, int64_t k, int64_t n)
{
    if (m < 0 || k < 0 || n < 0 || m > INT_MAX || k > INT_MAX || n > INT_MAX)
        return cg_error(cg_cuda_status(),
                        "%s: sizes [%lld,%lld]@[%lld,%lld] do not fit cuBLAS's int", name,
                        (long long)m, (long long)k, (long long)k, (long long)n);
    return 0;
}

static int lead(int64_t cols) { return cols > 1 ? (int)cols : 1; }

static size_t dtype_bytes(cg_dtype dt) { return dt == CG_F64 ? 8 : dt == CG_F32 ? 4 : 2; }

extern "C" {

int cg_cuda_matmul(cg_dtype dt, const void *a, const void *b, void *out, int64_t m, int64_t k,
                   int64_t n)
{
    if (int_dims("matmul", m, k, n) != 0)
        return -1;
    if (m == 0 || n == 0)
        return 0;
    if (k == 0) { /* an empty sum: zeros, which gemm with k = 0 may not write */
        CUDACHECK(cudaMemset(out, 0, (size_t)(m * n) * dtype_bytes(dt)));
        return 0;
    }
    gemm_args g = {CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m, (int)k,
                   b, lead(n), a, lead(k), 0.0, out, lead(n)};
    return gemm(dt, g);
}

int cg_cuda_matmul_backward(cg_dtype dt, const void *a, const void *b, const void *gout, void *ga,
                            void *gb, int64_t m, int64_t k, int64_t n)
{
    if (int_dims("matmul backward", m, k, n) != 0)
        return -1;
    if (m == 0 || k == 0 || n == 0) /* every gradient term is an empty sum */
        return 0;
    if (ga) {
        gemm_args g = {CUBLAS_OP_T, CUBLAS_OP_N, (int)k, (int)m, (int)n,
                       b, lead(n), gout, lead(n), 1.0, ga, lead(k)};
        if (gemm(dt, g) != 0)
            return -1;
    }
    if (gb) {
        gemm_args g = {CUBLAS_OP_N, CUBLAS_OP_T, (int)n, (int)k, (int)m,
                       gout, lead(n), a, lead(k), 1.0, gb, lead(n)};
        if (gemm(dt, g) != 0)
            return -1;
    }
    return 0;
}

} /* extern "C" */
