/* cuda_runtime.h — cuda-emu, the in-tree EMULATION of CUDA for CI
 * (tests/cuda_emu/README.md). NOT NVIDIA's header: the runtime API of
 * cuda_runtime_api.h plus, for C++, the kernel language that the .cu files of
 * harness/cuda use, so those files compile unchanged as host C++:
 *  - __global__/__device__/__host__ vanish, __shared__ is a static (one block
 *    runs at a time, so a static is the block's shared memory);
 *  - threadIdx, blockIdx, blockDim, gridDim are globals set by the launcher;
 *  - CG_LAUNCH(kernel, grid, block, args...) (harness/cuda/cuda_common.cuh)
 *    runs every thread of every block as a fiber, blocks one after another;
 *    __syncthreads() switches to the next fiber (src/emu_kernel.cpp);
 *  - atomics are plain read-modify-writes: fibers switch only at barriers.
 * Warp-level operations (shuffles, votes, warp-synchronous code) are not
 * provided and fail to compile. */
#ifndef CG_CUDA_EMU_RUNTIME_H
#define CG_CUDA_EMU_RUNTIME_H

#include "cuda_runtime_api.h"

#ifdef __cplusplus
#include <math.h>
#include <stdint.h>

#include <cmath>
#include <tuple>
#include <type_traits>
#include <utility>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __shared__ static
#define __launch_bounds__(...)

struct uint3 {
    unsigned int x, y, z;
};
struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1)
        : x(vx), y(vy), z(vz) {}
};

/* Set by the launcher before each emulated thread runs (src/emu_kernel.cpp). */
extern uint3 threadIdx, blockIdx;
extern dim3 blockDim, gridDim;

/* Waits for every thread of the block; all of them must reach it (a thread
 * that exits while others wait is reported as a launch failure). */
void __syncthreads(void);
inline void __threadfence(void) {}
inline void __threadfence_block(void) {}

template <typename T> inline T cg_emu_atomic(T *p, T v, int how)
{
    T old = *p;
    *p = how == 0 ? old + v : how == 1 ? v : how == 2 ? (v > old ? v : old) : (v < old ? v : old);
    return old;
}
#define CG_EMU_ATOMICS(T)                                                                         \
    inline T atomicAdd(T *p, T v) { return cg_emu_atomic(p, v, 0); }                              \
    inline T atomicExch(T *p, T v) { return cg_emu_atomic(p, v, 1); }
CG_EMU_ATOMICS(int)
CG_EMU_ATOMICS(unsigned int)
CG_EMU_ATOMICS(unsigned long long)
CG_EMU_ATOMICS(float)
CG_EMU_ATOMICS(double)
#undef CG_EMU_ATOMICS
inline int atomicMax(int *p, int v) { return cg_emu_atomic(p, v, 2); }
inline int atomicMin(int *p, int v) { return cg_emu_atomic(p, v, 3); }
inline unsigned int atomicMax(unsigned int *p, unsigned int v) { return cg_emu_atomic(p, v, 2); }
inline unsigned int atomicMin(unsigned int *p, unsigned int v) { return cg_emu_atomic(p, v, 3); }
template <typename T> inline T atomicCAS(T *p, T compare, T v)
{
    T old = *p;
    if (old == compare)
        *p = v;
    return old;
}

template <class T> inline cudaError_t cudaMalloc(T **p, size_t size)
{
    return cudaMalloc((void **)p, size);
}

namespace cg_emu {

typedef void (*kernel_body)(void *ctx);
/* Runs body(ctx) as every thread of every block of the grid; errors go where
 * CUDA puts them (cudaGetLastError, or sticky for faults). */
void run_kernel(const char *file, int line, dim3 grid, dim3 block, kernel_body body, void *ctx);
/* 0 when a pointer argument is NULL or device memory; else reports and fails. */
int check_pointer_arg(const char *file, int line, int index, const void *p);

template <typename P> inline int check_arg(const char *file, int line, int index, const P &v)
{
    if constexpr (std::is_pointer<P>::value)
        return check_pointer_arg(file, line, index, (const void *)v);
    (void)file, (void)line, (void)index, (void)v;
    return 0;
}

/* kernel<<<grid, block>>>(args...): the arguments are converted to the
 * kernel's parameter types once, as CUDA copies them at the launch, and every
 * emulated thread calls the kernel with its own copy of them. */
template <typename... P, typename... A>
void launch(const char *file, int line, void (*kernel)(P...), dim3 grid, dim3 block, A &&...args)
{
    static_assert(sizeof...(P) == sizeof...(A), "CG_LAUNCH: wrong number of kernel arguments");
    typedef std::tuple<typename std::decay<P>::type...> params_t;
    params_t params(std::forward<A>(args)...);
    int bad = 0, index = 0;
    std::apply([&](const auto &...v) { ((bad |= check_arg(file, line, index++, v)), ...); },
               params);
    if (bad)
        return;
    struct call {
        void (*kernel)(P...);
        params_t *params;
    } c = {kernel, &params};
    run_kernel(file, line, grid, block,
               [](void *p) { std::apply(((call *)p)->kernel, *((call *)p)->params); }, &c);
}

} /* namespace cg_emu */

#define CG_LAUNCH(kernel, grid, block, ...)                                                       \
    ::cg_emu::launch(__FILE__, __LINE__, (kernel), (grid), (block), ##__VA_ARGS__)

#endif /* __cplusplus */

#endif
