/* emu_nccl_run.cpp — cuda-emu, the in-tree EMULATION of CUDA for CI
 * (tests/cuda_emu/README.md): the NCCL emulation's argument checks and its
 * execution over MPI (emu_nccl.cpp says how a group runs).
 *
 * Reductions are computed in the element type, in rank order 0..W-1, so every
 * rank gets the same bits (as NCCL's all_reduce guarantees), though not in
 * NCCL's own ring/tree order: half types round after every step, as NCCL's
 * half arithmetic does; max/min skip NaN (fmax/fmin); ncclAvg multiplies every
 * input by 1/W in the type before the sum for floating types (NCCL's
 * PreMulSum) and divides the sum for integers. Each collective gathers every
 * rank's input over MPI (MPI_Allgather, MPI_Gather or MPI_Alltoall) into host
 * scratch and reduces there; device memory is open for the whole group. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <type_traits>

#include "cuda_bf16.h"
#include "cuda_fp16.h"
#include "emu_internal.h"
#include "emu_nccl.h"

namespace cg_emu_nccl {

const char *const kind_names[] = {"ncclAllReduce", "ncclReduce", "ncclBroadcast",
                                  "ncclAllGather", "ncclReduceScatter", "ncclSend", "ncclRecv"};

namespace {

size_t type_size(ncclDataType_t t)
{
    static const size_t sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2};
    return (unsigned)t < ncclNumTypes ? sizes[t] : 0;
}

/* ---- arithmetic in the element type ------------------------------------------------- */

template <typename T> struct arith {
    typedef T calc;
    static calc load(T v) { return v; }
    static T store(calc v) { return (T)v; }
};
template <> struct arith<__half> {
    typedef float calc;
    static calc load(__half v) { return __half2float(v); }
    static __half store(calc v) { return __float2half_rn(v); }
};
template <> struct arith<__nv_bfloat16> {
    typedef float calc;
    static calc load(__nv_bfloat16 v) { return __bfloat162float(v); }
    static __nv_bfloat16 store(calc v) { return __float2bfloat16_rn(v); }
};

template <typename C> C pick(C x, C y, bool max)
{
    if constexpr (std::is_floating_point<C>::value)
        return max ? fmax(x, y) : fmin(x, y);
    else
        return max ? (x > y ? x : y) : (x < y ? x : y);
}

/* out[i] = in[0][i] op ... op in[W-1][i]; the W inputs lie n elements apart. */
template <typename T> void reduce(T *out, const T *in, size_t n, int W, ncclRedOp_t red)
{
    typedef arith<T> A;
    typedef typename A::calc C;
    const bool floating = std::is_floating_point<C>::value;
    const C scale = A::load(A::store((C)(1.0 / W))); /* 1/W in the type, for PreMulSum */
    for (size_t i = 0; i < n; i++) {
        T acc = in[i];
        for (int r = 0; r < W; r++) {
            T x = in[(size_t)r * n + i];
            if (red == ncclAvg && floating)
                x = A::store(A::load(x) * scale);
            C a = A::load(acc), v = A::load(x);
            acc = r == 0                ? x
                  : red == ncclProd     ? A::store(a * v)
                  : red == ncclMax      ? A::store(pick(a, v, true))
                  : red == ncclMin      ? A::store(pick(a, v, false))
                                        : A::store(a + v);
        }
        if (red == ncclAvg && !floating)
            acc = A::store(A::load(acc) / (C)W);
        out[i] = acc;
    }
}

void reduce_any(const op &o, void *out, const void *in)
{
    size_t n = o.count;
    int W = o.comm->nranks;
    switch (o.type) {
    case ncclInt8: reduce((int8_t *)out, (const int8_t *)in, n, W, o.red); break;
    case ncclUint8: reduce((uint8_t *)out, (const uint8_t *)in, n, W, o.red); break;
    case ncclInt32: reduce((int32_t *)out, (const int32_t *)in, n, W, o.red); break;
    case ncclUint32: reduce((uint32_t *)out, (const uint32_t *)in, n, W, o.red); break;
    case ncclInt64: reduce((int64_t *)out, (const int64_t *)in, n, W, o.red); break;
    case ncclUint64: reduce((uint64_t *)out, (const uint64_t *)in, n, W, o.red); break;
    case ncclFloat16: reduce((__half *)out, (const __half *)in, n, W, o.red); break;
    case ncclFloat32: reduce((float *)out, (const float *)in, n, W, o.red); break;
    case ncclFloat64: reduce((double *)out, (const double *)in, n, W, o.red); break;
    case ncclBfloat16: reduce((__nv_bfloat16 *)out, (const __nv_bfloat16 *)in, n, W, o.red); break;
    default: break;
    }
}

/* ---- checks ---------------------------------------------------------------------------- */

bool device_ok(const op &o, const char *which, const void *p, size_t bytes)
{
    if (bytes == 0 || cg_emu_device_range(p, bytes))
        return true;
    fail(ncclInvalidArgument, "%s : %s %p (%zu bytes) is not a valid pointer (not device memory%s)",
         kind_names[o.k], which, p, bytes,
         cg_emu_in_device_region(p) ? ": not inside one allocation" : "");
    return false;
}

} /* namespace */

ncclResult_t check(const op &o)
{
    const char *name = kind_names[o.k];
    if (!comms.count(o.comm))
        return fail(ncclInvalidArgument, "%s : invalid communicator", name);
    int W = o.comm->nranks, me = o.comm->rank;
    size_t es = type_size(o.type), b = o.count * es;
    if (!es)
        return fail(ncclInvalidArgument, "%s : invalid type %d", name, (int)o.type);
    if ((unsigned)o.red >= ncclNumOps)
        return fail(ncclInvalidArgument, "%s : invalid reduction operation %d", name, (int)o.red);
    if ((o.k == REDUCE || o.k == BROADCAST || o.k == SEND || o.k == RECV) &&
        (o.root < 0 || o.root >= W))
        return fail(ncclInvalidArgument, "%s : invalid %s %d (nranks %d)", name,
                    o.k >= SEND ? "peer" : "root", o.root, W);
    if ((o.count && b / o.count != es) || b * (size_t)W > INT32_MAX)
        return fail(ncclInvalidArgument, "%s : %zu elements are too many for the emulation", name,
                    o.count);
    bool root = me == o.root;
    size_t sb = 0, rb = 0; /* the bytes of sendbuff and recvbuff this rank uses */
    switch (o.k) {
    case ALL_REDUCE: sb = rb = b; break;
    case REDUCE: sb = b, rb = root ? b : 0; break;
    case BROADCAST: sb = root ? b : 0, rb = b; break;
    case ALL_GATHER: sb = b, rb = b * (size_t)W; break;
    case REDUCE_SCATTER: sb = b * (size_t)W, rb = b; break;
    case SEND: sb = b; break;
    case RECV: rb = b; break;
    }
    return device_ok(o, "sendbuff", o.send, sb) && device_ok(o, "recvbuff", o.recv, rb)
               ? ncclSuccess
               : ncclInvalidArgument;
}

namespace {

ncclResult_t mpi_fail(const op &o, int rc)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, s, &len);
    return fail(ncclSystemError, "%s : MPI failed: %s", kind_names[o.k], s);
}

/* One collective, blocking, device memory open. */
ncclResult_t collective(const op &o)
{
    MPI_Comm c = o.comm->comm;
    int W = o.comm->nranks, b = (int)(o.count * type_size(o.type)), rc = MPI_SUCCESS;
    std::vector<char> all((size_t)b * (size_t)W);
    switch (o.k) {
    case ALL_REDUCE:
        rc = MPI_Allgather(o.send, b, MPI_BYTE, all.data(), b, MPI_BYTE, c);
        if (rc == MPI_SUCCESS)
            reduce_any(o, o.recv, all.data());
        break;
    case REDUCE:
        rc = MPI_Gather(o.send, b, MPI_BYTE, all.data(), b, MPI_BYTE, o.root, c);
        if (rc == MPI_SUCCESS && o.comm->rank == o.root)
            reduce_any(o, o.recv, all.data());
        break;
    case REDUCE_SCATTER: /* block `rank` of every rank's input */
        rc = MPI_Alltoall(o.send, b, MPI_BYTE, all.data(), b, MPI_BYTE, c);
        if (rc == MPI_SUCCESS)
            reduce_any(o, o.recv, all.data());
        break;
    case BROADCAST:
        if (o.comm->rank == o.root && o.send != o.recv)
            memmove(o.recv, o.send, (size_t)b);
        rc = MPI_Bcast(o.recv, b, MPI_BYTE, o.root, c);
        break;
    case ALL_GATHER: /* through a copy: the send buffer may be a block of recv */
        rc = MPI_Allgather(o.send, b, MPI_BYTE, all.data(), b, MPI_BYTE, c);
        if (rc == MPI_SUCCESS)
            memcpy(o.recv, all.data(), all.size());
        break;
    default: break;
    }
    return rc == MPI_SUCCESS ? ncclSuccess : mpi_fail(o, rc);
}

} /* namespace */

ncclResult_t run(const std::vector<op> &ops)
{
    if (cg_emu_sticky() != cudaSuccess)
        return fail(ncclUnhandledCudaError, "a CUDA error is pending: %s",
                    cudaGetErrorString(cg_emu_sticky()));
    cg_emu_window w;
    std::vector<MPI_Request> reqs, announced;
    std::vector<const op *> waits;
    ncclResult_t r = ncclSuccess;
    /* A group is one fused operation: its data moves only once the send of
     * every receive in it has been posted in the sender's group. Each send
     * announces itself to its receiver (an empty message, tag 1) and each
     * receive waits for that announcement first, so a group {send to 1, recv
     * from 1} against a peer that receives, then sends in a later group waits
     * forever here, as it did on NCCL 2.28.3 (NVIDIA/nccl#1279: undefined). */
    for (const op &o : ops) {
        MPI_Request q;
        int rc = MPI_SUCCESS;
        if (o.k == SEND && (rc = MPI_Isend(NULL, 0, MPI_BYTE, o.root, 1, o.comm->comm, &q)) == MPI_SUCCESS)
            announced.push_back(q);
        if (rc == MPI_SUCCESS && o.k == RECV)
            rc = MPI_Recv(NULL, 0, MPI_BYTE, o.root, 1, o.comm->comm, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) {
            MPI_Waitall((int)announced.size(), announced.data(), MPI_STATUSES_IGNORE);
            return mpi_fail(o, rc);
        }
    }
    for (const op &o : ops) {
        if (o.k != SEND && o.k != RECV)
            continue;
        int b = (int)(o.count * type_size(o.type)), rc;
        MPI_Request q;
        rc = o.k == SEND ? MPI_Issend(o.send, b, MPI_BYTE, o.root, 0, o.comm->comm, &q)
                         : MPI_Irecv(o.recv, b, MPI_BYTE, o.root, 0, o.comm->comm, &q);
        if (rc != MPI_SUCCESS) {
            r = mpi_fail(o, rc);
            break;
        }
        reqs.push_back(q);
        waits.push_back(&o);
    }
    for (const op &o : ops)
        if (r == ncclSuccess && o.k != SEND && o.k != RECV)
            r = collective(o);
    std::vector<MPI_Status> st(reqs.size());
    int rc = MPI_Waitall((int)reqs.size(), reqs.data(), st.data());
    for (size_t i = 0; i < reqs.size(); i++) {
        const op &o = *waits[i];
        int got = -1;
        if (o.k == RECV && (rc == MPI_SUCCESS || st[i].MPI_ERROR == MPI_SUCCESS))
            MPI_Get_count(&st[i], MPI_BYTE, &got);
        size_t want = o.count * type_size(o.type);
        if (o.k == RECV && (size_t)got != want && r == ncclSuccess)
            r = fail(ncclInvalidUsage, "ncclRecv : %zu bytes expected from rank %d, but its "
                     "ncclSend sent %s", want, o.root, got < 0 ? "more" : "fewer");
    }
    if (rc != MPI_SUCCESS && r == ncclSuccess && !reqs.empty())
        r = mpi_fail(*waits[0], rc);
    if (MPI_Waitall((int)announced.size(), announced.data(), MPI_STATUSES_IGNORE) != MPI_SUCCESS &&
        r == ncclSuccess)
        r = fail(ncclSystemError, "a send's announcement (MPI_Waitall) failed");
    return r;
}

} /* namespace cg_emu_nccl */
