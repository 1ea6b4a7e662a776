/* emu_nccl.cpp — cuda-emu, the in-tree EMULATION of CUDA for CI
 * (tests/cuda_emu/README.md): the NCCL subset of include/nccl.h over MPI.
 *
 * A communicator is an MPI communicator split from MPI_COMM_WORLD by its
 * ncclUniqueId. As NCCL does, every call checks its arguments when it is made
 * and refuses a buffer that is not device memory ("... is not a valid pointer
 * (not device memory)"). A call outside a group runs at once; inside
 * ncclGroupStart/End the calls wait for ncclGroupEnd, which posts the sends
 * and receives (MPI_Issend/MPI_Irecv), runs the collectives in issue order,
 * then waits for the sends and receives. Sends are synchronous (Issend, so a
 * lone send is MPI_Ssend): like NCCL's, a send completes only when its
 * receiver takes it, so a program whose ranks all send first hangs here too.
 * A group moves no data before the send of each of its receives has been
 * posted (emu_nccl_run.cpp), so a group that pairs a send and a receive the
 * peer puts in separate groups hangs too (NCCL leaves it undefined).
 * A receive of another size than its send is reported (NCCL would not say).
 * The arithmetic is in emu_nccl_run.cpp. Everything completes inside the
 * call: nothing is left on the stream, so ncclCommGetAsyncError always says
 * ncclSuccess. */
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "emu_internal.h"
#include "emu_nccl.h"

using namespace cg_emu_nccl;

std::set<ncclComm_t> cg_emu_nccl::comms;

namespace {

std::vector<op> group;
int group_depth;
ncclResult_t group_error = ncclSuccess;
char last_error[512];
const char ID_MAGIC[] = "cuda-emu nccl id";

ncclResult_t enqueue(const op &o)
{
    ncclResult_t r = check(o);
    if (r != ncclSuccess) {
        if (group_depth && group_error == ncclSuccess)
            group_error = r;
        return r;
    }
    if (group_depth) {
        group.push_back(o);
        return ncclSuccess;
    }
    return run(std::vector<op>(1, o));
}

uint32_t id_color(const ncclUniqueId &id)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < sizeof id.internal; i++)
        h = (h ^ (unsigned char)id.internal[i]) * 16777619u;
    return h & 0x7fffffffu;
}

/* NCCL refuses two ranks of one communicator on one GPU of one host. */
ncclResult_t check_duplicate_gpu(ncclComm_t c)
{
    char key[320] = "", host[256] = "";
    const char *id = getenv("NCCL_HOSTID");
    if (!id || !*id) {
        gethostname(host, sizeof host - 1);
        id = host;
    }
    snprintf(key, sizeof key, "%s|%d", id, c->device);
    std::vector<char> keys(sizeof key * (size_t)c->nranks);
    if (MPI_Allgather(key, (int)sizeof key, MPI_BYTE, keys.data(), (int)sizeof key, MPI_BYTE,
                      c->comm) != MPI_SUCCESS)
        return fail(ncclSystemError, "ncclCommInitRank : MPI_Allgather failed");
    for (int r = 0; r < c->nranks; r++)
        if (r != c->rank && strcmp(keys.data() + (size_t)r * sizeof key, key) == 0)
            return fail(ncclInvalidUsage, "Duplicate GPU detected : rank %d and rank %d both on "
                        "CUDA device %d", c->rank, r, c->device);
    return ncclSuccess;
}

} /* namespace */

ncclResult_t cg_emu_nccl::fail(ncclResult_t r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    cg_emu_report("%s", last_error);
    return r;
}

extern "C" {

const char *ncclGetErrorString(ncclResult_t r)
{
    switch (r) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError:
        return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError:
        return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
    }
}

const char *ncclGetLastError(ncclComm_t comm)
{
    (void)comm;
    return last_error;
}

/* 0: no real NCCL is behind this (reports show "NCCL 0.0.0"). */
ncclResult_t ncclGetVersion(int *version)
{
    *version = 0;
    return ncclSuccess;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    static unsigned serial;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    memset(id, 0, sizeof *id);
    snprintf(id->internal, sizeof id->internal, "%s %ld %u %ld.%09ld", ID_MAGIC, (long)getpid(),
             serial++, (long)ts.tv_sec, ts.tv_nsec);
    return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *out, int nranks, ncclUniqueId id, int rank)
{
    int initialized = 0, size = 0, me = -1, ok;
    *out = NULL;
    cg_emu_init();
    MPI_Initialized(&initialized);
    if (!initialized)
        return fail(ncclSystemError, "ncclCommInitRank : the NCCL emulation runs over MPI, and "
                    "MPI is not initialized");
    if (nranks < 1 || rank < 0 || rank >= nranks ||
        strncmp(id.internal, ID_MAGIC, strlen(ID_MAGIC)) != 0)
        return fail(ncclInvalidArgument, "ncclCommInitRank : invalid rank %d, nranks %d or id",
                    rank, nranks);
    ncclComm_t c = new ncclComm();
    if (cudaGetDevice(&c->device) != cudaSuccess) {
        delete c;
        return fail(ncclUnhandledCudaError, "ncclCommInitRank : cudaGetDevice failed");
    }
    MPI_Comm_split(MPI_COMM_WORLD, (int)id_color(id), rank, &c->comm);
    MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
    MPI_Comm_size(c->comm, &size);
    MPI_Comm_rank(c->comm, &me);
    c->rank = rank;
    c->nranks = nranks;
    ok = size == nranks && me == rank;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, c->comm);
    ncclResult_t r = ok ? check_duplicate_gpu(c)
                        : fail(ncclInvalidUsage, "ncclCommInitRank : %d ranks joined with this "
                               "id as ranks of %d", size, nranks);
    if (r != ncclSuccess) {
        MPI_Comm_free(&c->comm);
        delete c;
        return r;
    }
    comms.insert(c);
    *out = c;
    return ncclSuccess;
}

/* MPI_Comm_split of the parent's communicator: the same contract. The
 * child shares the parent's device, which passed the duplicate-GPU check. */
ncclResult_t ncclCommSplit(ncclComm_t parent, int color, int key, ncclComm_t *out,
                           ncclConfig_t *config)
{
    *out = NULL;
    if (!comms.count(parent))
        return fail(ncclInvalidArgument, "ncclCommSplit : invalid communicator");
    if (config)
        return fail(ncclInvalidArgument, "ncclCommSplit : the emulation takes no config (NULL)");
    if (color < NCCL_SPLIT_NOCOLOR)
        return fail(ncclInvalidArgument, "ncclCommSplit : invalid color %d", color);
    MPI_Comm sub = MPI_COMM_NULL;
    if (MPI_Comm_split(parent->comm, color == NCCL_SPLIT_NOCOLOR ? MPI_UNDEFINED : color, key,
                       &sub) != MPI_SUCCESS)
        return fail(ncclSystemError, "ncclCommSplit : MPI_Comm_split failed");
    if (sub == MPI_COMM_NULL)
        return ncclSuccess;
    ncclComm_t c = new ncclComm();
    c->comm = sub;
    c->device = parent->device;
    MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
    MPI_Comm_size(c->comm, &c->nranks);
    MPI_Comm_rank(c->comm, &c->rank);
    comms.insert(c);
    *out = c;
    return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t c)
{
    int finalized = 0;
    if (!comms.erase(c))
        return fail(ncclInvalidArgument, "ncclCommDestroy : invalid communicator");
    MPI_Finalized(&finalized);
    if (!finalized)
        MPI_Comm_free(&c->comm);
    delete c;
    return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t c) { return ncclCommDestroy(c); }

ncclResult_t ncclCommGetAsyncError(ncclComm_t c, ncclResult_t *e)
{
    *e = ncclSuccess;
    return comms.count(c) ? ncclSuccess : ncclInvalidArgument;
}

ncclResult_t ncclCommCount(const ncclComm_t c, int *n) { return *n = c->nranks, ncclSuccess; }
ncclResult_t ncclCommCuDevice(const ncclComm_t c, int *d) { return *d = c->device, ncclSuccess; }
ncclResult_t ncclCommUserRank(const ncclComm_t c, int *r) { return *r = c->rank, ncclSuccess; }

ncclResult_t ncclGroupStart(void)
{
    group_depth++;
    return ncclSuccess;
}

ncclResult_t ncclGroupEnd(void)
{
    if (group_depth == 0)
        return fail(ncclInvalidUsage, "ncclGroupEnd : not in a group");
    if (--group_depth)
        return ncclSuccess;
    std::vector<op> ops;
    ops.swap(group);
    ncclResult_t r = group_error;
    group_error = ncclSuccess;
    return r != ncclSuccess ? r : run(ops);
}

#define NCCL_OP(k, s, r, n, t, red, root, c, st)                                                  \
    (cg_emu_stream_ok(st) ? enqueue(op{k, s, r, n, t, red, root, c})                              \
                          : fail(ncclInvalidArgument, "%s : invalid stream", kind_names[k]))

ncclResult_t ncclAllReduce(const void *s, void *r, size_t n, ncclDataType_t t, ncclRedOp_t red,
                           ncclComm_t c, cudaStream_t st)
{
    return NCCL_OP(ALL_REDUCE, s, r, n, t, red, -1, c, st);
}

ncclResult_t ncclReduce(const void *s, void *r, size_t n, ncclDataType_t t, ncclRedOp_t red,
                        int root, ncclComm_t c, cudaStream_t st)
{
    return NCCL_OP(REDUCE, s, r, n, t, red, root, c, st);
}

ncclResult_t ncclBroadcast(const void *s, void *r, size_t n, ncclDataType_t t, int root,
                           ncclComm_t c, cudaStream_t st)
{
    return NCCL_OP(BROADCAST, s, r, n, t, ncclSum, root, c, st);
}

ncclResult_t ncclAllGather(const void *s, void *r, size_t n, ncclDataType_t t, ncclComm_t c,
                           cudaStream_t st)
{
    return NCCL_OP(ALL_GATHER, s, r, n, t, ncclSum, -1, c, st);
}

ncclResult_t ncclReduceScatter(const void *s, void *r, size_t n, ncclDataType_t t,
                               ncclRedOp_t red, ncclComm_t c, cudaStream_t st)
{
    return NCCL_OP(REDUCE_SCATTER, s, r, n, t, red, -1, c, st);
}

ncclResult_t ncclSend(const void *s, size_t n, ncclDataType_t t, int peer, ncclComm_t c,
                      cudaStream_t st)
{
    return NCCL_OP(SEND, s, NULL, n, t, ncclSum, peer, c, st);
}

ncclResult_t ncclRecv(void *r, size_t n, ncclDataType_t t, int peer, ncclComm_t c,
                      cudaStream_t st)
{
    return NCCL_OP(RECV, NULL, r, n, t, ncclSum, peer, c, st);
}

} /* extern "C" */
