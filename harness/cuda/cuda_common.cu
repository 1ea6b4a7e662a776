/* cuda_common.cu — the CUDA path's shared pieces: the last error, device
 * discovery, copies, and the device arena (cuda_ops.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_common.cuh"

static cg_status last; /* cuda_common.cuh: the process's device is driven by one thread */

cg_status *cg_cuda_status(void) { return &last; }

int cg_cuda_call_name(const char *call) { return (int)strcspn(call, "( "); }

/* The arena is a growing array of cudaMalloc'd pointers and their sizes. */
struct cg_cuda_arena {
    void **bufs;
    size_t *sizes;
    size_t n, cap;
};

/* What every arena of the process holds now, and the most since the last
 * reset (cg_cuda_arena_peak: the bench's device-memory figure). */
static size_t held, held_peak;

static int grow(cg_cuda_arena *a)
{
    size_t cap = a->cap ? 2 * a->cap : 16;
    void **bufs = (void **)realloc(a->bufs, cap * sizeof *bufs);
    if (bufs)
        a->bufs = bufs;
    size_t *sizes = bufs ? (size_t *)realloc(a->sizes, cap * sizeof *sizes) : NULL;
    if (!sizes)
        return cg_error(cg_cuda_status(), "out of host memory for the device arena");
    a->sizes = sizes;
    a->cap = cap;
    return 0;
}

/* Zeroed, so a gradient buffer starts as the CPU's "no gradient yet". A
 * zero-byte request still gets a real (1-byte) buffer: NULL means failure. */
static int device_zeroed(void **p, size_t bytes)
{
    size_t n = bytes ? bytes : 1;
    CUDACHECK(cudaMalloc(p, n));
    cudaError_t e = cudaMemset(*p, 0, n);
    if (e != cudaSuccess) {
        cudaFree(*p);
        *p = NULL;
        return cg_error(&last, "cudaMemset failed: %s", cudaGetErrorString(e));
    }
    return 0;
}

extern "C" {

const char *cg_cuda_last_error(void) { return last.msg; }

int cg_cuda_device_count(int *count)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    *count = e == cudaSuccess ? n : 0;
    if (e != cudaSuccess)
        return cg_error(cg_cuda_status(), "cudaGetDeviceCount: %s", cudaGetErrorString(e));
    return 0;
}

int cg_cuda_sync(void)
{
    CUDACHECK(cudaDeviceSynchronize());
    return 0;
}

int cg_cuda_upload(void *dev, const void *host, size_t bytes)
{
    if (bytes)
        CUDACHECK(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice));
    return 0;
}

int cg_cuda_download(void *host, const void *dev, size_t bytes)
{
    if (bytes)
        CUDACHECK(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost));
    return 0;
}

int cg_cuda_copy(void *dst, const void *src, size_t bytes)
{
    if (bytes)
        CUDACHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice));
    return 0;
}

void cg_cuda_shutdown(void) { cg_cuda_blas_release(); }

cg_cuda_arena *cg_cuda_arena_new(void)
{
    cg_cuda_arena *a = (cg_cuda_arena *)calloc(1, sizeof *a);
    if (!a)
        cg_error(cg_cuda_status(), "out of host memory for the device arena");
    return a;
}

void *cg_cuda_alloc(cg_cuda_arena *a, size_t bytes)
{
    void *p = NULL;
    if ((a->n == a->cap && grow(a) != 0) || device_zeroed(&p, bytes) != 0)
        return NULL;
    a->bufs[a->n] = p;
    a->sizes[a->n++] = bytes;
    held += bytes;
    if (held > held_peak)
        held_peak = held;
    return p;
}

/* cudaFree synchronizes, so no kernel still uses a buffer once it is freed;
 * a failing cudaFree (a dead context) leaves nothing better to do. */
void cg_cuda_free_all(cg_cuda_arena *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n; i++) {
        cudaFree(a->bufs[i]);
        held -= a->sizes[i];
    }
    a->n = 0;
}

int cg_cuda_arena_peak(int reset, size_t *peak)
{
    if (reset)
        held_peak = held;
    *peak = held_peak;
    return 0;
}

void cg_cuda_arena_free(cg_cuda_arena *a)
{
    if (!a)
        return;
    cg_cuda_free_all(a);
    free(a->bufs);
    free(a->sizes);
    free(a);
}

} /* extern "C" */
