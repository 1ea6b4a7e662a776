/* emu_cublas.cpp — cuda-emu, the in-tree EMULATION of CUDA for CI
 * (tests/cuda_emu/README.md): the cuBLAS gemm subset of include/cublas_v2.h
 * on the host.
 *
 * C = alpha op(A) op(B) + beta C, column-major, with BLAS's argument checks
 * (CUBLAS_STATUS_INVALID_VALUE for negative sizes or short leading
 * dimensions). Each dot product is accumulated in the compute type in k
 * order with fused multiply-adds: f32 for Sgemm and for GemmEx's
 * CUBLAS_COMPUTE_32F (half inputs widened, the result rounded once into the
 * output type), f64 for Dgemm. Real cuBLAS blocks the k loop differently, so
 * results agree to rounding, not bit for bit. The math mode changes nothing
 * here (no TF32 or tensor-core shortcut is modelled). beta == 0 never reads C,
 * as in BLAS. A, B and C must lie inside device allocations over the extent
 * the sizes imply; alpha and beta are read from host memory (the default
 * CUBLAS_POINTER_MODE_HOST). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include <set>

#include "cublas_v2.h"
#include "cuda_bf16.h"
#include "cuda_fp16.h"
#include "emu_internal.h"

struct cublasContext {
    cublasMath_t mode;
};

namespace {

std::set<cublasHandle_t> handles;

/* An operand's element type, read and written through its compute type. */
template <typename T> struct elem;
template <> struct elem<float> {
    static float get(const float *p, size_t i) { return p[i]; }
    static void put(float *p, size_t i, float v) { p[i] = v; }
};
template <> struct elem<double> {
    static double get(const double *p, size_t i) { return p[i]; }
    static void put(double *p, size_t i, double v) { p[i] = v; }
};
template <> struct elem<__half> {
    static float get(const __half *p, size_t i) { return __half2float(p[i]); }
    static void put(__half *p, size_t i, float v) { p[i] = __float2half_rn(v); }
};
template <> struct elem<__nv_bfloat16> {
    static float get(const __nv_bfloat16 *p, size_t i) { return __bfloat162float(p[i]); }
    static void put(__nv_bfloat16 *p, size_t i, float v) { p[i] = __float2bfloat16_rn(v); }
};

float fused(float a, float b, float c) { return fmaf(a, b, c); }
double fused(double a, double b, double c) { return fma(a, b, c); }

struct gemm_shape {
    cublasOperation_t ta, tb;
    int m, n, k, lda, ldb, ldc;
};

/* Elements an operand of `rows` x `cols` (as stored) spans with leading dimension ld. */
size_t extent(int rows, int cols, int ld)
{
    return rows && cols ? (size_t)(cols - 1) * (size_t)ld + (size_t)rows : 0;
}

cublasStatus_t check(cublasHandle_t h, const gemm_shape &s, const void *A, const void *B,
                     const void *C, size_t es, const char *call)
{
    cg_emu_init();
    if (!handles.count(h))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (cg_emu_sticky() != cudaSuccess)
        return CUBLAS_STATUS_EXECUTION_FAILED;
    bool na = s.ta == CUBLAS_OP_N, nb = s.tb == CUBLAS_OP_N;
    int arows = na ? s.m : s.k, acols = na ? s.k : s.m;
    int brows = nb ? s.k : s.n, bcols = nb ? s.n : s.k;
    if ((unsigned)s.ta > CUBLAS_OP_C || (unsigned)s.tb > CUBLAS_OP_C || s.m < 0 || s.n < 0 ||
        s.k < 0 || s.lda < (arows > 1 ? arows : 1) || s.ldb < (brows > 1 ? brows : 1) ||
        s.ldc < (s.m > 1 ? s.m : 1))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (s.m == 0 || s.n == 0)
        return CUBLAS_STATUS_SUCCESS;
    struct {
        const char *name;
        const void *p;
        size_t n;
    } ops[] = {{"A", A, s.k ? extent(arows, acols, s.lda) : 0},
               {"B", B, s.k ? extent(brows, bcols, s.ldb) : 0},
               {"C", C, extent(s.m, s.n, s.ldc)}};
    for (auto &o : ops)
        if (o.n && !cg_emu_device_range(o.p, o.n * es)) {
            cg_emu_report("%s: %s %p (%zu elements) is not inside one device allocation (not "
                          "device memory, or too short)", call, o.name, o.p, o.n);
            return CUBLAS_STATUS_INVALID_VALUE;
        }
    return CUBLAS_STATUS_SUCCESS;
}

/* T: the storage type of A, B and C; Acc: the compute type. */
template <typename T, typename Acc>
cublasStatus_t gemm(cublasHandle_t h, const gemm_shape &s, Acc alpha, const T *A, const T *B,
                    Acc beta, T *C, const char *call)
{
    cublasStatus_t st = check(h, s, A, B, C, sizeof(T), call);
    if (st != CUBLAS_STATUS_SUCCESS || s.m == 0 || s.n == 0)
        return st;
    bool na = s.ta == CUBLAS_OP_N, nb = s.tb == CUBLAS_OP_N;
    cg_emu_window w;
    for (int j = 0; j < s.n; j++)
        for (int i = 0; i < s.m; i++) {
            Acc acc = 0;
            for (int p = 0; p < s.k; p++) {
                size_t ai = na ? (size_t)i + (size_t)p * s.lda : (size_t)p + (size_t)i * s.lda;
                size_t bi = nb ? (size_t)p + (size_t)j * s.ldb : (size_t)j + (size_t)p * s.ldb;
                acc = fused((Acc)elem<T>::get(A, ai), (Acc)elem<T>::get(B, bi), acc);
            }
            size_t ci = (size_t)i + (size_t)j * s.ldc;
            Acc v = alpha * acc;
            if (beta != 0)
                v = fused(beta, (Acc)elem<T>::get(C, ci), v);
            elem<T>::put(C, ci, v);
        }
    return CUBLAS_STATUS_SUCCESS;
}

} /* namespace */

extern "C" {

const char *cublasGetStatusString(cublasStatus_t s)
{
    switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    }
    return "CUBLAS_STATUS_UNKNOWN_ERROR";
}

cublasStatus_t cublasCreate(cublasHandle_t *handle)
{
    int n = 0;
    cg_emu_init();
    if (cudaGetDeviceCount(&n) != cudaSuccess)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    *handle = (cublasHandle_t)calloc(1, sizeof(cublasContext));
    if (!*handle)
        return CUBLAS_STATUS_ALLOC_FAILED;
    handles.insert(*handle);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy(cublasHandle_t handle)
{
    if (!handles.erase(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    free(handle);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
{
    if (!handles.count(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if ((unsigned)mode > CUBLAS_TF32_TENSOR_OP_MATH)
        return CUBLAS_STATUS_INVALID_VALUE;
    handle->mode = mode;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream)
{
    if (!handles.count(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    return cg_emu_stream_ok(stream) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasSgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                           int n, int k, const float *alpha, const float *A, int lda,
                           const float *B, int ldb, const float *beta, float *C, int ldc)
{
    gemm_shape s = {ta, tb, m, n, k, lda, ldb, ldc};
    return gemm<float, float>(h, s, *alpha, A, B, *beta, C, "cublasSgemm");
}

cublasStatus_t cublasDgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                           int n, int k, const double *alpha, const double *A, int lda,
                           const double *B, int ldb, const double *beta, double *C, int ldc)
{
    gemm_shape s = {ta, tb, m, n, k, lda, ldb, ldc};
    return gemm<double, double>(h, s, *alpha, A, B, *beta, C, "cublasDgemm");
}

/* One type for A, B and C: f16, bf16 or f32 with a 32F compute type (alpha and
 * beta are floats), or f64 with CUBLAS_COMPUTE_64F (doubles). */
cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                            int n, int k, const void *alpha, const void *A, cudaDataType_t at,
                            int lda, const void *B, cudaDataType_t bt, int ldb, const void *beta,
                            void *C, cudaDataType_t ct, int ldc, cublasComputeType_t compute,
                            cublasGemmAlgo_t algo)
{
    (void)algo;
    gemm_shape s = {ta, tb, m, n, k, lda, ldb, ldc};
    bool c32 = compute == CUBLAS_COMPUTE_32F || compute == CUBLAS_COMPUTE_32F_PEDANTIC;
    if (at != bt || at != ct)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    const char *call = "cublasGemmEx";
    if (at == CUDA_R_64F && compute == CUBLAS_COMPUTE_64F)
        return gemm<double, double>(h, s, *(const double *)alpha, (const double *)A,
                                    (const double *)B, *(const double *)beta, (double *)C, call);
    if (!c32)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    float a = *(const float *)alpha, b = *(const float *)beta;
    switch (at) {
    case CUDA_R_32F:
        return gemm<float, float>(h, s, a, (const float *)A, (const float *)B, b, (float *)C, call);
    case CUDA_R_16F:
        return gemm<__half, float>(h, s, a, (const __half *)A, (const __half *)B, b, (__half *)C,
                                   call);
    case CUDA_R_16BF:
        return gemm<__nv_bfloat16, float>(h, s, a, (const __nv_bfloat16 *)A,
                                          (const __nv_bfloat16 *)B, b, (__nv_bfloat16 *)C, call);
    default: return CUBLAS_STATUS_NOT_SUPPORTED;
    }
}

} /* extern "C" */
