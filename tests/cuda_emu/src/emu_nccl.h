/* emu_nccl.h — cuda-emu, the in-tree EMULATION of CUDA for CI
 * (tests/cuda_emu/README.md): what the two halves of the NCCL emulation share
 * (emu_nccl.cpp: the API, communicators and groups; emu_nccl_run.cpp: the
 * checks and the execution over MPI). C++ only. */
#ifndef CG_CUDA_EMU_NCCL_INTERNAL_H
#define CG_CUDA_EMU_NCCL_INTERNAL_H

#include <mpi.h>

#include <set>
#include <vector>

#include "nccl.h"

struct ncclComm {
    MPI_Comm comm;
    int rank, nranks, device;
};

namespace cg_emu_nccl {

enum kind { ALL_REDUCE, REDUCE, BROADCAST, ALL_GATHER, REDUCE_SCATTER, SEND, RECV };
extern const char *const kind_names[]; /* "ncclAllReduce", ... */

/* One call. */
struct op {
    kind k;
    const void *send;
    void *recv;
    size_t count;
    ncclDataType_t type;
    ncclRedOp_t red;
    int root; /* the root, or the peer of a send/recv */
    ncclComm_t comm;
};

extern std::set<ncclComm_t> comms; /* the live communicators */

/* Keeps the message for ncclGetLastError, says it on stderr, returns r. */
ncclResult_t fail(ncclResult_t r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One call's arguments, as NCCL checks them when the call is made. */
ncclResult_t check(const op &o);
/* A group (or one call): sends and receives posted, collectives in order, the wait. */
ncclResult_t run(const std::vector<op> &ops);

} /* namespace cg_emu_nccl */

#endif
