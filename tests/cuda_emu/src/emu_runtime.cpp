/* emu_runtime.cpp — cuda-emu, the in-tree EMULATION of CUDA for CI
 * (tests/cuda_emu/README.md): the CUDA runtime API of
 * include/cuda_runtime_api.h on the host.
 *
 * One emulated device (CG_CUDA_EMU_DEVICES=N gives N, 0 none: then
 * cudaGetDeviceCount fails with cudaErrorNoDevice, as on a machine without a
 * GPU). Every call completes before it returns: streams and events are
 * handles whose work is always done. Copies are checked more strictly than
 * CUDA checks them: a device side must lie inside one live allocation, a host
 * side outside the device region, and the kind must match the pointers;
 * anything else is cudaErrorInvalidValue with a "cuda-emu:" line on stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <set>

#include "emu_internal.h"

namespace {

cudaError_t last_error = cudaSuccess, sticky_error = cudaSuccess;
int current_device;
std::set<const void *> streams, events;
std::set<const void *> recorded; /* events that have been recorded */
struct event_time {
    double ms;
};

int device_count(void)
{
    const char *n = getenv("CG_CUDA_EMU_DEVICES");
    return n && *n ? atoi(n) : 1;
}

cudaError_t fail(cudaError_t e) { return cg_emu_fail(e, 0); }

/* Every call first returns a sticky error, as a broken context does. */
#define STICKY()                                                                                  \
    do {                                                                                          \
        cg_emu_init();                                                                            \
        if (sticky_error != cudaSuccess)                                                          \
            return sticky_error;                                                                  \
    } while (0)

const char *kind_name(cudaMemcpyKind k)
{
    static const char *const names[] = {"HostToHost", "HostToDevice", "DeviceToHost",
                                        "DeviceToDevice", "Default"};
    return (unsigned)k <= cudaMemcpyDefault ? names[k] : "?";
}

/* One side of a copy: device (inside one allocation) or host (outside the
 * region), as the kind says; cudaMemcpyDefault decides by the pointer. */
bool side_ok(const char *call, const char *which, const void *p, size_t n, int want_device)
{
    bool dev = cg_emu_in_device_region(p);
    if (want_device < 0)
        want_device = dev;
    if (want_device && !cg_emu_device_range(p, n))
        cg_emu_report("%s: %s %p (%zu bytes) is not inside one device allocation", call, which,
                      p, n);
    else if (!want_device && dev)
        cg_emu_report("%s: %s %p is device memory where the kind says host", call, which, p);
    else
        return true;
    return false;
}

cudaError_t copy(void *dst, const void *src, size_t n, cudaMemcpyKind kind, cudaStream_t s,
                 const char *call)
{
    STICKY();
    if (!cg_emu_stream_ok(s))
        return fail(cudaErrorInvalidResourceHandle);
    if ((unsigned)kind > cudaMemcpyDefault)
        return fail(cudaErrorInvalidMemcpyDirection);
    if (n == 0)
        return cudaSuccess;
    char what[64];
    snprintf(what, sizeof what, "%s(%s)", call, kind_name(kind));
    int dst_dev = kind == cudaMemcpyDefault ? -1 : kind == 1 || kind == 3;
    int src_dev = kind == cudaMemcpyDefault ? -1 : kind == 2 || kind == 3;
    if (!side_ok(what, "destination", dst, n, dst_dev) || !side_ok(what, "source", src, n, src_dev))
        return fail(cudaErrorInvalidValue);
    cg_emu_window w;
    memmove(dst, src, n);
    return cudaSuccess;
}

double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

} /* namespace */

void cg_emu_init(void)
{
    static bool said;
    if (said)
        return;
    said = true;
    const char *quiet = getenv("CG_CUDA_EMU_QUIET");
    if (!quiet || strcmp(quiet, "1") != 0)
        fprintf(stderr, "cuda-emu: EMULATED CUDA device (tests/cuda_emu): kernels, cuBLAS and "
                        "NCCL run on the host; this checks host logic and kernel arithmetic, not "
                        "a GPU\n");
}

extern "C" {

cudaError_t cg_emu_fail(cudaError_t e, int sticky)
{
    if (sticky && sticky_error == cudaSuccess)
        sticky_error = e;
    last_error = e;
    return e;
}

cudaError_t cg_emu_sticky(void) { return sticky_error; }

int cg_emu_stream_ok(cudaStream_t s) { return !s || streams.count(s); }

const char *cudaGetErrorName(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInitializationError: return "cudaErrorInitializationError";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidMemcpyDirection: return "cudaErrorInvalidMemcpyDirection";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorNotReady: return "cudaErrorNotReady";
    case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
    }
    return "cudaErrorUnknown";
}

/* CUDA's own texts. */
const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInitializationError: return "initialization error";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    }
    return "unrecognized error code";
}

cudaError_t cudaGetLastError(void)
{
    cudaError_t e = last_error;
    last_error = sticky_error;
    return e;
}

cudaError_t cudaPeekAtLastError(void) { return last_error; }

cudaError_t cudaGetDeviceCount(int *count)
{
    cg_emu_init();
    *count = device_count() > 0 ? device_count() : 0;
    return *count ? cudaSuccess : fail(cudaErrorNoDevice);
}

cudaError_t cudaSetDevice(int device)
{
    STICKY();
    if (device < 0 || device >= device_count())
        return fail(device_count() > 0 ? cudaErrorInvalidDevice : cudaErrorNoDevice);
    current_device = device;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int *device)
{
    STICKY();
    if (device_count() <= 0)
        return fail(cudaErrorNoDevice);
    *device = current_device;
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void)
{
    STICKY();
    return cudaSuccess;
}

/* 0: no real runtime or driver is behind this (reports show "CUDA runtime 0.0"). */
cudaError_t cudaRuntimeGetVersion(int *version) { *version = 0; return cudaSuccess; }
cudaError_t cudaDriverGetVersion(int *version) { *version = 0; return cudaSuccess; }

cudaError_t cudaMalloc(void **p, size_t size)
{
    *p = NULL;
    STICKY();
    if (device_count() <= 0)
        return fail(cudaErrorNoDevice);
    if (size == 0)
        return cudaSuccess;
    *p = cg_emu_alloc(size);
    return *p ? cudaSuccess : fail(cudaErrorMemoryAllocation);
}

cudaError_t cudaFree(void *p)
{
    STICKY();
    if (!p)
        return cudaSuccess;
    int rc = cg_emu_free(p);
    if (rc < 0) {
        cg_emu_report("cudaFree(%p): not the start of a live device allocation", p);
        return fail(cudaErrorInvalidValue);
    }
    return rc ? cg_emu_fail(cudaErrorIllegalAddress, 1) : cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    STICKY();
    cg_emu_memory_info(free_bytes, total_bytes);
    return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *p, int value, size_t n, cudaStream_t s)
{
    STICKY();
    if (!cg_emu_stream_ok(s))
        return fail(cudaErrorInvalidResourceHandle);
    if (n && !cg_emu_device_range(p, n)) {
        cg_emu_report("cudaMemset: %p (%zu bytes) is not inside one device allocation", p, n);
        return fail(cudaErrorInvalidValue);
    }
    cg_emu_window w;
    memset(p, value, n);
    return cudaSuccess;
}

cudaError_t cudaMemset(void *p, int value, size_t n) { return cudaMemsetAsync(p, value, n, 0); }

cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, cudaMemcpyKind kind)
{
    return copy(dst, src, n, kind, 0, "cudaMemcpy");
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, cudaMemcpyKind kind,
                            cudaStream_t s)
{
    return copy(dst, src, n, kind, s, "cudaMemcpyAsync");
}

/* Device memory is the region; anything else is an unregistered host
 * pointer, which CUDA (11 and later) also answers with success. */
cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *a, const void *p)
{
    STICKY();
    memset(a, 0, sizeof *a);
    if (cg_emu_in_device_region(p)) {
        a->type = cudaMemoryTypeDevice;
        a->device = current_device;
        a->devicePointer = (void *)p;
    } else {
        a->type = cudaMemoryTypeUnregistered;
        a->device = -2;
        a->hostPointer = (void *)p;
    }
    return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags)
{
    STICKY();
    (void)flags;
    *s = (cudaStream_t)malloc(1);
    if (!*s)
        return fail(cudaErrorMemoryAllocation);
    streams.insert(*s);
    return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *s) { return cudaStreamCreateWithFlags(s, 0); }

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    STICKY();
    if (!s || !streams.erase(s))
        return fail(cudaErrorInvalidResourceHandle);
    free(s);
    return cudaSuccess;
}

cudaError_t cudaStreamQuery(cudaStream_t s)
{
    STICKY();
    return cg_emu_stream_ok(s) ? cudaSuccess : fail(cudaErrorInvalidResourceHandle);
}

cudaError_t cudaStreamSynchronize(cudaStream_t s) { return cudaStreamQuery(s); }

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags)
{
    STICKY();
    (void)flags;
    *e = (cudaEvent_t)calloc(1, sizeof(event_time));
    if (!*e)
        return fail(cudaErrorMemoryAllocation);
    events.insert(*e);
    return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *e) { return cudaEventCreateWithFlags(e, 0); }

cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    STICKY();
    if (!e || !events.erase(e))
        return fail(cudaErrorInvalidResourceHandle);
    recorded.erase(e);
    free(e);
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    STICKY();
    if (!events.count(e) || !cg_emu_stream_ok(s))
        return fail(cudaErrorInvalidResourceHandle);
    ((event_time *)e)->ms = now_ms();
    recorded.insert(e);
    return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t e)
{
    STICKY();
    return events.count(e) ? cudaSuccess : fail(cudaErrorInvalidResourceHandle);
}

cudaError_t cudaEventSynchronize(cudaEvent_t e) { return cudaEventQuery(e); }

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    STICKY();
    if (!recorded.count(start) || !recorded.count(end))
        return fail(cudaErrorInvalidResourceHandle);
    *ms = (float)(((event_time *)end)->ms - ((event_time *)start)->ms);
    return cudaSuccess;
}

} /* extern "C" */
