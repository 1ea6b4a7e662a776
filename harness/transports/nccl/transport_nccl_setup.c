/* transport_nccl_setup.c — the "nccl" transport's instance: start-up over
 * MPI, shut-down and error messages (transport_nccl.h). The entries are in
 * transport_nccl.c and transport_nccl_p2p.c, the staging of host buffers and
 * the waits in transport_nccl_stage.c.
 *
 * Start-up, as nccl-tests does it: the node-local rank (MPI_Comm_split_type
 * with MPI_COMM_TYPE_SHARED) modulo the visible GPUs picks the device; rank 0
 * makes the ncclUniqueId and MPI_Bcast gives it to the others; then
 * ncclCommInitRank. The ranks agree (an MPI_Allreduce) that every one of them
 * has its device before any of them enters NCCL, so one rank's failure fails
 * them all with a message instead of leaving the others in ncclCommInitRank.
 *
 * Several ranks on one GPU: NCCL refuses them ("Duplicate GPU detected").
 * COLLGRAD_NCCL_SHARE_GPU=1 makes each rank claim its own host
 * (NCCL_HOSTID=collgrad-rank-<rank>) and turns off NCCL's P2P and SHM
 * transports, so the ranks talk over NCCL's network transport on this host.
 * NCCL reads these once per process, so they are set before its first call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport_nccl.h"

/* ---- errors ----------------------------------------------------------------- */

/* The function's name out of the text of a call: "ncclSend(buf, ...)". */
static int name_len(const char *call) { return (int)strcspn(call, "( "); }

/* NCCL's last message for the communicator, after ": ", or "". */
const char *cgn_detail(const cg_transport *t, const char **sep)
{
    const char *more = t->nccl ? ncclGetLastError(t->nccl) : NULL;
    *sep = more && more[0] ? ": " : "";
    return more ? more : "";
}

int cgn_nccl_check(cg_transport *t, const char *call, ncclResult_t r)
{
    if (r == ncclSuccess)
        return 0;
    const char *sep, *more = cgn_detail(t, &sep);
    t->broken = true;
    return cg_error(&t->st, "%.*s failed: %s%s%s", name_len(call), call, ncclGetErrorString(r), sep,
                    more);
}

int cgn_cuda_check(cg_transport *t, const char *call, cudaError_t e)
{
    if (e == cudaSuccess)
        return 0;
    t->broken = true;
    return cg_error(&t->st, "%.*s failed: %s", name_len(call), call, cudaGetErrorString(e));
}

int cgn_type(cg_transport *t, cgt_dtype dt, ncclDataType_t *type, size_t *size)
{
    switch (dt) {
    case CGT_F32: *type = ncclFloat32; *size = 4; return 0;
    case CGT_F64: *type = ncclFloat64; *size = 8; return 0;
    case CGT_BF16: *type = ncclBfloat16; *size = 2; return 0;
    case CGT_F16: *type = ncclFloat16; *size = 2; return 0;
    }
    return cg_error(&t->st, "unknown dtype %d", (int)dt);
}

int cgn_check_rank(cg_transport *t, const char *what, int r)
{
    if (r < 0 || r >= t->world)
        return cg_error(&t->st, "%s %d out of range (world %d)", what, r, t->world);
    return 0;
}

int cgn_group_end(cg_transport *t, int rc)
{
    ncclResult_t r = ncclGroupEnd();
    return rc ? -1 : cgn_nccl_check(t, "ncclGroupEnd", r);
}

/* ---- devices ------------------------------------------------------------------- */

/* The number of visible GPUs, or -1 with the reason there is none. */
static int visible_devices(int *n, cg_status *st)
{
    cudaError_t e = cudaGetDeviceCount(n);
    if (e != cudaSuccess || *n <= 0) {
        *n = 0;
        return cg_error(st, "no CUDA device is visible (cudaGetDeviceCount: %s)",
                        e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    }
    return 0;
}

int cg_nccl_available(cg_status *st)
{
    int n = 0;
    if (visible_devices(&n, st) == 0)
        return 0;
    return cg_error(st, "nccl: %s", st ? st->msg : "");
}

static bool share_gpu_requested(void)
{
    const char *v = getenv("COLLGRAD_NCCL_SHARE_GPU");
    return v && strcmp(v, "1") == 0;
}

/* Each rank its own "host", and only NCCL's network transport between them. */
static void share_gpu_env(int rank)
{
    char host[64];
    snprintf(host, sizeof host, "collgrad-rank-%d", rank);
    setenv("NCCL_HOSTID", host, 1);
    setenv("NCCL_P2P_DISABLE", "1", 1);
    setenv("NCCL_SHM_DISABLE", "1", 1);
}

/* This rank's GPU (its node-local rank modulo the node's GPUs), its stream
 * and its barrier int. Collective: every rank calls it, failing or not. The
 * stream is a blocking one: it is ordered with the legacy default stream,
 * where the kernels of cuda_ops.h run, so a buffer a kernel is still writing
 * is complete before NCCL reads it, and NCCL's result before a kernel reads it. */
static int claim_device(cg_transport *t)
{
    MPI_Comm node;
    int local = 0, nlocal = 1, ndev = 0;
    if (MPI_Comm_split_type(t->comm, MPI_COMM_TYPE_SHARED, t->rank, MPI_INFO_NULL, &node) !=
        MPI_SUCCESS)
        return cg_error(&t->st, "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) failed");
    MPI_Comm_rank(node, &local);
    MPI_Comm_size(node, &nlocal);
    MPI_Comm_free(&node);
    if (visible_devices(&ndev, &t->st))
        return -1;
    bool share = share_gpu_requested();
    if (nlocal > ndev && !share)
        return cg_error(&t->st,
                        "%d ranks on this host share %d GPU%s, which NCCL refuses (\"Duplicate "
                        "GPU detected\"); set COLLGRAD_NCCL_SHARE_GPU=1 to run them anyway",
                        nlocal, ndev, ndev == 1 ? "" : "s");
    if (share)
        share_gpu_env(t->rank);
    t->device = local % ndev;
    if (CUDA_CALL(t, cudaSetDevice(t->device)) ||
        CUDA_CALL(t, cudaStreamCreate(&t->stream)) ||
        CUDA_CALL(t, cudaMalloc((void **)&t->one, sizeof *t->one)) ||
        CUDA_CALL(t, cudaMemset(t->one, 0, sizeof *t->one)))
        return -1;
    return 0;
}

/* 0 when every rank's ok is set; else -1, with this rank's own message kept. */
static int agree(cg_transport *t, int ok, const char *what)
{
    int all = 0;
    if (MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, t->comm) != MPI_SUCCESS)
        return cg_error(&t->st, "MPI_Allreduce failed while agreeing on %s", what);
    if (all)
        return 0;
    if (ok)
        cg_error(&t->st, "another rank failed %s (its message says why)", what);
    return -1;
}

/* Rank 0's ncclUniqueId to every rank, with whether rank 0 could make one. */
static int share_unique_id(cg_transport *t, ncclUniqueId *id)
{
    struct {
        int ok;
        ncclUniqueId id;
    } msg;
    memset(&msg, 0, sizeof msg);
    if (t->rank == 0)
        msg.ok = NCCL_CALL(t, ncclGetUniqueId(&msg.id)) == 0;
    if (MPI_Bcast(&msg, (int)sizeof msg, MPI_BYTE, 0, t->comm) != MPI_SUCCESS)
        return cg_error(&t->st, "MPI_Bcast of the ncclUniqueId failed");
    if (!msg.ok)
        return t->rank == 0 ? -1 : cg_error(&t->st, "rank 0 could not make an ncclUniqueId");
    *id = msg.id;
    return 0;
}

static int setup(cg_transport *t)
{
    if (MPI_Comm_dup(MPI_COMM_WORLD, &t->comm) != MPI_SUCCESS)
        return cg_error(&t->st, "MPI_Comm_dup(MPI_COMM_WORLD) failed");
    if (MPI_Comm_rank(t->comm, &t->rank) != MPI_SUCCESS ||
        MPI_Comm_size(t->comm, &t->world) != MPI_SUCCESS)
        return cg_error(&t->st, "MPI_Comm_rank/MPI_Comm_size failed");
    /* send and recv go over this communicator (transport_nccl_p2p.c): a failing
     * call must come back as an error, not end the process; a group's split
     * inherits it */
    if (MPI_Comm_set_errhandler(t->comm, MPI_ERRORS_RETURN) != MPI_SUCCESS)
        return cg_error(&t->st, "MPI_Comm_set_errhandler failed");
    if (cgn_p2p_mode(t, &t->p2p_nccl))
        return -1;
    ncclUniqueId id;
    if (agree(t, claim_device(t) == 0, "to set up its GPU") || share_unique_id(t, &id))
        return -1;
    return NCCL_CALL(t, ncclCommInitRank(&t->nccl, t->world, id, t->rank));
}

/* ---- instances ------------------------------------------------------------------ */

void cgn_destroy(cg_transport *t)
{
    if (!t)
        return;
    if (t->nccl && t->broken)
        ncclCommAbort(t->nccl); /* after a failure, destroy could wait on dead peers */
    else if (t->nccl)
        ncclCommDestroy(t->nccl);
    cgn_drop_sends(t);
    for (int s = 0; s < 2; s++)
        if (t->stage[s])
            cudaFree(t->stage[s]);
    if (t->one)
        cudaFree(t->one);
    if (t->stream)
        cudaStreamDestroy(t->stream);
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && t->comm != MPI_COMM_NULL)
        MPI_Comm_free(&t->comm);
    free(t);
}

cg_transport *cgn_create(const char **err)
{
    static char why[512]; /* the ABI wants static text: the last failure's stays here */
    int initialized = 0;
    if (MPI_Initialized(&initialized) != MPI_SUCCESS || !initialized) {
        *err = "MPI is not initialized";
        return NULL;
    }
    cg_transport *t = calloc(1, sizeof *t);
    if (!t) {
        *err = "out of memory";
        return NULL;
    }
    t->comm = MPI_COMM_NULL;
    if (setup(t) == 0)
        return t;
    snprintf(why, sizeof why, "%s", t->st.msg);
    *err = why;
    cgn_destroy(t);
    return NULL;
}

/* A process group's instance (transport ABI 2, MPI_Comm_split's contract):
 * ncclCommSplit of t's communicator (NCCL >= 2.18), with an MPI_Comm_split of
 * t's MPI communicator beside it for the group's own start-up traffic. Both
 * are collective over t, in that order on every rank. The child shares t's
 * GPU and makes its own stream, so its calls never queue behind t's. NULL
 * with *err NULL off the group; NULL with *err on failure. */
cg_transport *cgn_split(cg_transport *t, int color, int key, const char **err)
{
    static char why[512];
    MPI_Comm comm = MPI_COMM_NULL;
    ncclComm_t nccl = NULL;
    *err = why;
    if (cgn_before_entry(t) != 0) { /* as every entry but send and recv */
        snprintf(why, sizeof why, "%s", t->st.msg);
        return NULL;
    }
    if (MPI_Comm_split(t->comm, color < 0 ? MPI_UNDEFINED : color, key, &comm) != MPI_SUCCESS) {
        snprintf(why, sizeof why, "MPI_Comm_split failed");
        return NULL;
    }
    if (NCCL_CALL(
            t, ncclCommSplit(t->nccl, color < 0 ? NCCL_SPLIT_NOCOLOR : color, key, &nccl, NULL))) {
        snprintf(why, sizeof why, "%s", t->st.msg);
        t->broken = true;
        if (comm != MPI_COMM_NULL)
            MPI_Comm_free(&comm);
        return NULL;
    }
    if (comm == MPI_COMM_NULL || !nccl) { /* not a member (both say so, or neither) */
        *err = comm == MPI_COMM_NULL && !nccl ? NULL : "MPI_Comm_split and ncclCommSplit disagree";
        if (comm != MPI_COMM_NULL)
            MPI_Comm_free(&comm);
        if (nccl)
            ncclCommDestroy(nccl);
        return NULL;
    }
    cg_transport *g = calloc(1, sizeof *g);
    if (!g) {
        MPI_Comm_free(&comm);
        ncclCommDestroy(nccl);
        snprintf(why, sizeof why, "out of memory");
        return NULL;
    }
    *g = (cg_transport){.comm = comm, .nccl = nccl, .device = t->device, .p2p_nccl = t->p2p_nccl};
    if (MPI_Comm_rank(comm, &g->rank) != MPI_SUCCESS ||
        MPI_Comm_size(comm, &g->world) != MPI_SUCCESS)
        cg_error(&g->st, "MPI_Comm_rank/MPI_Comm_size failed");
    else if (CUDA_CALL(g, cudaSetDevice(g->device)) == 0 &&
             CUDA_CALL(g, cudaStreamCreate(&g->stream)) == 0 &&
             CUDA_CALL(g, cudaMalloc((void **)&g->one, sizeof *g->one)) == 0 &&
             CUDA_CALL(g, cudaMemset(g->one, 0, sizeof *g->one)) == 0)
        return g;
    snprintf(why, sizeof why, "%s", g->st.msg);
    g->broken = true;
    cgn_destroy(g);
    return NULL;
}

/* "NCCL 2.28.9, CUDA runtime 13.0" for reports (NCCL >= 2.9's version code). */
const char *cgn_version(void)
{
    static char version[96];
    int nccl = 0, cuda = 0;
    if (version[0])
        return version;
    if (ncclGetVersion(&nccl) != ncclSuccess)
        nccl = 0;
    if (cudaRuntimeGetVersion(&cuda) != cudaSuccess)
        cuda = 0;
    snprintf(version, sizeof version, "NCCL %d.%d.%d, CUDA runtime %d.%d", nccl / 10000,
             nccl % 10000 / 100, nccl % 100, cuda / 1000, cuda % 1000 / 10);
    return version;
}
