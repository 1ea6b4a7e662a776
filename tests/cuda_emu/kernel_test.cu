/* kernel_test.cu — cuda-emu (the in-tree EMULATION of CUDA for CI,
 * tests/cuda_emu/README.md) proves its kernel launches: block reductions
 * through __shared__ memory and __syncthreads, 3-D grids and blocks, atomics,
 * both thread orders, and the launch failures it must report (a bad
 * configuration; in forked children, because they are sticky: a barrier only
 * some threads reach, a host pointer argument, a write past an allocation).
 * Compiled as host C++ against tests/cuda_emu/include, like harness/cuda. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_runtime.h>

#define BLOCK 256

static int passed, failed;

static void check(bool ok, const char *what)
{
    if (ok) {
        passed++;
        return;
    }
    failed++;
    printf("FAIL: %s\n", what);
}

/* out[b] = sum of in over block b's strided share, through a shared tree. */
__global__ void block_sum(const double *in, int n, double *out)
{
    __shared__ double buf[BLOCK];
    double s = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        s += in[i];
    buf[threadIdx.x] = s;
    __syncthreads();
    for (unsigned h = blockDim.x / 2; h > 0; h >>= 1) {
        if (threadIdx.x < h)
            buf[threadIdx.x] += buf[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = buf[0];
}

/* Every thread of a 3-D launch marks its own cell, and counts itself. */
__global__ void mark(int *cells, unsigned *count)
{
    unsigned bx = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    unsigned tx = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    cells[bx * (blockDim.x * blockDim.y * blockDim.z) + tx] += 1;
    atomicAdd(count, 1u);
}

__global__ void divergent_barrier(int *x)
{
    if (threadIdx.x % 2)
        return;
    __syncthreads();
    x[threadIdx.x] = 1;
}

__global__ void write_one_past(char *p, int n)
{
    if (threadIdx.x == 0)
        p[n] = 1;
}

static double sum_on_device(int n)
{
    double *in = NULL, *out = NULL, total = 0, parts[3];
    double *host = (double *)malloc(n * sizeof *host);
    for (int i = 0; i < n; i++)
        host[i] = i % 7 - 3;
    cudaMalloc(&in, n * sizeof *in);
    cudaMalloc(&out, sizeof parts);
    cudaMemcpy(in, host, n * sizeof *in, cudaMemcpyHostToDevice);
    CG_LAUNCH(block_sum, 3, BLOCK, in, n, out);
    if (cudaGetLastError() != cudaSuccess ||
        cudaMemcpy(parts, out, sizeof parts, cudaMemcpyDeviceToHost) != cudaSuccess)
        total = -1e300;
    else
        total = parts[0] + parts[1] + parts[2];
    cudaFree(in);
    cudaFree(out);
    free(host);
    return total;
}

static void test_launches(void)
{
    const int n = 5000; /* sum of i%7-3: 714 full cycles of 0, then 0-3+...: exact */
    double want = 0;
    for (int i = 0; i < n; i++)
        want += i % 7 - 3;
    check(sum_on_device(n) == want, "block_sum across 3 blocks of 256 threads");
    setenv("CG_CUDA_EMU_ORDER", "reverse", 1);
    check(sum_on_device(n) == want, "the same in reverse thread and block order");
    unsetenv("CG_CUDA_EMU_ORDER");

    dim3 grid(3, 2, 2), block(4, 4, 2);
    const int cells_n = 12 * 32;
    int *cells = NULL, host[12 * 32];
    unsigned *count = NULL, counted = 0;
    cudaMalloc(&cells, sizeof host);
    cudaMalloc(&count, sizeof *count);
    cudaMemset(cells, 0, sizeof host);
    cudaMemset(count, 0, sizeof *count);
    CG_LAUNCH(mark, grid, block, cells, count);
    cudaMemcpy(host, cells, sizeof host, cudaMemcpyDeviceToHost);
    cudaMemcpy(&counted, count, sizeof counted, cudaMemcpyDeviceToHost);
    bool once = true;
    for (int i = 0; i < cells_n; i++)
        once = once && host[i] == 1;
    check(once && counted == (unsigned)cells_n, "a 3-D launch runs every thread once");

    CG_LAUNCH(mark, 1, 2048, cells, count);
    check(cudaGetLastError() == cudaErrorInvalidConfiguration,
          "2048 threads per block: cudaErrorInvalidConfiguration");
    CG_LAUNCH(mark, 0, 32, cells, count);
    check(cudaGetLastError() == cudaErrorInvalidConfiguration, "0 blocks: the same");
    check(cudaDeviceSynchronize() == cudaSuccess, "a bad configuration is not sticky");
    cudaFree(cells);
    cudaFree(count);
}

/* Runs a faulty launch in a child; 1 when the child saw `want` from
 * cudaDeviceSynchronize and from every call after it (sticky). */
static bool sticky_in_child(int which, cudaError_t want)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", 1);
        dup2(devnull, 2); /* the emulation's explanation is expected here */
        int *x = NULL, host[4];
        cudaMalloc(&x, BLOCK * sizeof *x);
        if (which == 0)
            CG_LAUNCH(divergent_barrier, 1, 64, x);
        else if (which == 1)
            CG_LAUNCH(divergent_barrier, 1, 64, host);
        else
            CG_LAUNCH(write_one_past, 1, 32, (char *)x, BLOCK * (int)sizeof *x);
        bool ok = cudaDeviceSynchronize() == want && cudaMemset(x, 0, 4) == want;
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int main(void)
{
    test_launches();
    check(sticky_in_child(0, cudaErrorLaunchFailure),
          "a barrier that half the threads skip: sticky cudaErrorLaunchFailure");
    check(sticky_in_child(1, cudaErrorIllegalAddress),
          "a host pointer as a kernel argument: sticky cudaErrorIllegalAddress");
    check(sticky_in_child(2, cudaErrorIllegalAddress),
          "a kernel writing past its allocation: sticky cudaErrorIllegalAddress");
    printf("cuda_emu_kernel: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
