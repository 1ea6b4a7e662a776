/* cuda_common.cuh — what every kernel file shares (CUDA C++, never included
 * from C): the error macros, element access through double, the dtype
 * dispatch, grid-stride loops and a block reduction. */
#ifndef CG_CUDA_COMMON_CUH
#define CG_CUDA_COMMON_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

extern "C" {
#include "cuda_ops.h"
}
#include "status.h"

/* Threads per block everywhere; a power of two (block_reduce needs one). */
#define CG_CUDA_BLOCK 256

/* The CUDA layer's last failure, what cg_cuda_last_error() says: a kernel
 * file records it with cg_error(cg_cuda_status(), ...). One per process, as
 * CUDA's own last error is: one thread drives the device (cuda_ops.h). */
cg_status *cg_cuda_status(void);
/* The length of a call's function name in its text ("cudaMalloc(&p, n)"). */
int cg_cuda_call_name(const char *call);
/* Releases the cuBLAS handle (ops_matmul.cu), for cg_cuda_shutdown. */
void cg_cuda_blas_release(void);

/* Runs a CUDA runtime call; on failure records "<function> failed: <CUDA's
 * text>" and returns -1 from the enclosing function (NCCL's checks.h shape). */
#define CUDACHECK(call)                                                                            \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess)                                                                     \
            return cg_error(cg_cuda_status(), "%.*s failed: %s", cg_cuda_call_name(#call), #call,  \
                            cudaGetErrorString(e_));                                               \
    } while (0)

/* kernel<<<grid, block>>>(args...) on the default stream. Spelled as a macro
 * so that the host emulation (tests/cuda_emu) runs these same kernels; a
 * template kernel goes through a local pointer first (its commas would split
 * the macro's arguments): `auto *k = my_kernel<T, Op>; CG_LAUNCH(k, g, b, x);`. */
#ifndef CG_LAUNCH
#define CG_LAUNCH(kernel, grid, block, ...) kernel<<<(grid), (block)>>>(__VA_ARGS__)
#endif

/* After a launch: a bad configuration is only visible here. */
#define LAUNCHCHECK(kernel)                                                                        \
    do {                                                                                           \
        cudaError_t e_ = cudaGetLastError();                                                       \
        if (e_ != cudaSuccess)                                                                     \
            return cg_error(cg_cuda_status(), "%s launch failed: %s", (kernel),                    \
                            cudaGetErrorString(e_));                                               \
    } while (0)

/* ---- elements as double, like cg_get/cg_set -------------------------------- */

__device__ inline double ld(const float *p, int64_t i) { return p[i]; }
__device__ inline double ld(const double *p, int64_t i) { return p[i]; }
__device__ inline double ld(const __nv_bfloat16 *p, int64_t i) { return __bfloat162float(p[i]); }
__device__ inline double ld(const __half *p, int64_t i) { return __half2float(p[i]); }
/* Half types round through float, as cg_set does, so both sides round twice
 * the same way. */
__device__ inline void st(float *p, int64_t i, double v) { p[i] = (float)v; }
__device__ inline void st(double *p, int64_t i, double v) { p[i] = v; }
__device__ inline void st(__nv_bfloat16 *p, int64_t i, double v)
{
    p[i] = __float2bfloat16_rn((float)v);
}
__device__ inline void st(__half *p, int64_t i, double v) { p[i] = __float2half_rn((float)v); }

/* ---- dtype dispatch ---------------------------------------------------------- */

template <typename T> struct dtype_tag {
    typedef T type;
};

/* Calls f(dtype_tag<T>()) with T the element type of dt; f returns 0 or -1. */
template <typename F> int dispatch(cg_dtype dt, const char *what, F f)
{
    switch (dt) {
    case CG_F32: return f(dtype_tag<float>());
    case CG_F64: return f(dtype_tag<double>());
    case CG_BF16: return f(dtype_tag<__nv_bfloat16>());
    case CG_F16: return f(dtype_tag<__half>());
    }
    return cg_error(cg_cuda_status(), "%s: unknown dtype %d", what, (int)dt);
}

/* ---- launch shapes ------------------------------------------------------------- */

/* Blocks for n independent items: every kernel loops grid-stride, so the
 * grid may be capped and still cover any n. n must be > 0. */
static inline unsigned grid_for(int64_t n)
{
    int64_t blocks = (n + CG_CUDA_BLOCK - 1) / CG_CUDA_BLOCK;
    return blocks > 65535 ? 65535u : (unsigned)blocks;
}

#define GRID_STRIDE(i, n)                                                                         \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n);                     \
         i += (int64_t)blockDim.x * gridDim.x)

/* Row kernels put one block on each row, looping over rows when there are
 * more rows than blocks; the loop bound is the same for every thread of a
 * block, so the __syncthreads inside block_reduce are reached by all. */
#define BLOCK_PER_ROW(row, rows) for (int64_t row = blockIdx.x; row < (rows); row += gridDim.x)

struct sum_combine {
    __device__ double operator()(double x, double y) const { return x + y; }
};
/* fmax skips nan, as the CPU's row max does (a nan row still ends nan
 * through its sum of exponentials). */
struct max_combine {
    __device__ double operator()(double x, double y) const { return fmax(x, y); }
};

/* Combines every thread's v over the block (blockDim.x == CG_CUDA_BLOCK) and
 * returns the result to all threads. Every thread of the block must call it. */
template <typename C> __device__ double block_reduce(double v, C combine)
{
    __shared__ double buf[CG_CUDA_BLOCK];
    buf[threadIdx.x] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            buf[threadIdx.x] = combine(buf[threadIdx.x], buf[threadIdx.x + s]);
        __syncthreads();
    }
    double r = buf[0];
    __syncthreads(); /* buf is reused by the next call */
    return r;
}

#endif
