/* transport_nccl_stage.c — the "nccl" transport's device views of the
 * caller's buffers and its waits (transport_nccl.h): NCCL takes device
 * memory only, so a host buffer is staged through one of the instance's two
 * device buffers (grown on demand, owned by the instance, freed at destroy),
 * and every entry ends by waiting for its stream, polling NCCL's
 * asynchronous error meanwhile. */
#include <sched.h>
#include <string.h>

#include "transport_nccl.h"

bool cgn_on_device(const void *p)
{
    struct cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        cudaGetLastError(); /* a plain host pointer may fail here; the error is not sticky */
        return false;
    }
    return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

/* Stage slot s, grown to at least `bytes`. Nothing is in flight: every entry
 * waits for its stream before it returns. */
static int stage_buffer(cg_transport *t, int s, size_t bytes, void **out)
{
    if (t->stage_cap[s] < bytes) {
        if (t->stage[s] && CUDA_CALL(t, cudaFree(t->stage[s])))
            return -1;
        t->stage[s] = NULL;
        t->stage_cap[s] = 0;
        if (CUDA_CALL(t, cudaMalloc(&t->stage[s], bytes)))
            return -1;
        t->stage_cap[s] = bytes;
    }
    *out = t->stage[s];
    return 0;
}

int cgn_dev_in(cg_transport *t, const void *p, size_t bytes, const void **out)
{
    void *d = NULL;
    *out = p;
    if (!p || bytes == 0 || cgn_on_device(p))
        return 0;
    if (stage_buffer(t, 0, bytes, &d) ||
        CUDA_CALL(t, cudaMemcpyAsync(d, p, bytes, cudaMemcpyHostToDevice, t->stream)))
        return -1;
    *out = d;
    return 0;
}

int cgn_dev_out(cg_transport *t, void *p, size_t bytes, void **out)
{
    *out = p;
    if (!p || bytes == 0 || cgn_on_device(p))
        return 0;
    return stage_buffer(t, 1, bytes, out);
}

int cgn_dev_pair(cg_transport *t, const void *in, size_t in_bytes, void *out, size_t out_bytes,
                 const void **din, void **dout)
{
    if (in && in == out) {
        if (cgn_dev_in(t, in, in_bytes > out_bytes ? in_bytes : out_bytes, din))
            return -1;
        *dout = (void *)*din;
        return 0;
    }
    return cgn_dev_in(t, in, in_bytes, din) || cgn_dev_out(t, out, out_bytes, dout) ? -1 : 0;
}

/* Polls the stream and NCCL's asynchronous error, so that a dead peer or a
 * network failure ends the wait with NCCL's message (nccl-tests'
 * testStreamSynchronize); a hang stays the watchdog's to report. */
static int wait_stream(cg_transport *t)
{
    for (;;) {
        cudaError_t q = cudaStreamQuery(t->stream);
        if (q == cudaSuccess)
            return 0;
        if (q != cudaErrorNotReady)
            return cgn_cuda_check(t, "cudaStreamQuery", q);
        ncclResult_t async = ncclSuccess;
        if (NCCL_CALL(t, ncclCommGetAsyncError(t->nccl, &async)))
            return -1;
        if (async != ncclSuccess && async != ncclInProgress) {
            const char *sep, *more = cgn_detail(t, &sep);
            t->broken = true;
            return cg_error(&t->st, "NCCL failed while this rank waited: %s%s%s",
                            ncclGetErrorString(async), sep, more);
        }
        sched_yield();
    }
}

int cgn_finish(cg_transport *t, void *user, void *dev, size_t bytes)
{
    if (wait_stream(t))
        return -1;
    if (!user || dev == user || bytes == 0)
        return 0;
    if (CUDA_CALL(t, cudaMemcpyAsync(user, dev, bytes, cudaMemcpyDeviceToHost, t->stream)))
        return -1;
    return wait_stream(t);
}

int cgn_copy(cg_transport *t, void *dst, const void *src, size_t bytes)
{
    if (bytes == 0)
        return 0;
    return CUDA_CALL(t, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, t->stream));
}
