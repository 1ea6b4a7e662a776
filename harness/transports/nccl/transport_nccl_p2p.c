/* transport_nccl_p2p.c — the "nccl" transport's send and recv
 * (transport_nccl.h).
 *
 * A send in the case language is buffered (PyTorch's isend; the oracle and
 * the mpi and threads transports agree): it returns at once, and the peer
 * may receive it whenever its program gets there, after sends of its own.
 * NCCL's point to point cannot give that without knowing how the peer
 * groups its calls: an ncclSend may wait until its recv is posted, so sends
 * issued alone make a ring of send-then-recv wait forever, and a send grouped
 * with the next recv is undefined wherever the peer does not group the same
 * pair alike (NVIDIA/nccl#1279). Both were seen on NCCL 2.28.3 (H100 and
 * H200, gpu-check's p2p lane): grouped, rank 0's {send to 1, recv from 1}
 * against rank 1's recv-then-send waited forever (cases/rpc-design at W=2);
 * alone, the ring waited at W=3 and failed with an illegal memory access at
 * W=2. So by default a message moves over MPI, between the same ranks (the
 * transport's own communicator, a group's split for a group): the send copies
 * it to the host and posts MPI_Isend of the copy; the recv takes it with
 * MPI_Recv, into the caller's buffer or through a host copy onto the device.
 * Tags match as in MPI. COLLGRAD_NCCL_P2P=nccl moves them over NCCL instead,
 * grouped (transport_nccl_p2p_grouped.c), for programs that suit it.
 * Collectives, and gather, scatter and all_to_all, whose groups are alike on
 * every rank, stay NCCL's (transport_nccl.c).
 *
 * Ownership: each send in flight owns its host copy until MPI_Test or
 * MPI_Wait says the send is done; the copies of sends still in flight at
 * destroy (a program stopped early, a failure) are left to the process's end,
 * since MPI may still read them. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "transport_nccl.h"

struct cgn_mpi_send {
    MPI_Request req;
    void *copy; /* malloc'd; MPI reads it until req completes */
};

int cgn_p2p_mode(cg_transport *t, bool *over_nccl)
{
    const char *v = getenv("COLLGRAD_NCCL_P2P");
    *over_nccl = v && strcmp(v, "nccl") == 0;
    if (v && *v && !*over_nccl && strcmp(v, "mpi") != 0)
        return cg_error(&t->st, "COLLGRAD_NCCL_P2P: expected mpi or nccl, got '%s'", v);
    return 0;
}

static int check_p2p(cg_transport *t, size_t count, cgt_dtype dt, int peer, int tag, size_t *es)
{
    ncclDataType_t type;
    if (cgn_type(t, dt, &type, es) || cgn_check_rank(t, "peer", peer))
        return -1;
    if (tag < 0 || tag >= 32768)
        return cg_error(&t->st, "tag %d outside 0..32767", tag);
    if (count > (size_t)INT_MAX)
        return cg_error(&t->st, "a message of %zu elements is over MPI's int count", count);
    return 0;
}

static int mpi_failed(cg_transport *t, const char *call, int rc)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error %d", rc);
    t->broken = true;
    return cg_error(&t->st, "%s failed: %s", call, text);
}

/* Frees the copies of completed sends, keeping the rest in order; with
 * wait, waits for every one (settle). 0, or -1 with the first failure. */
static int complete_sends(cg_transport *t, bool wait)
{
    int kept = 0, rc = 0;
    for (int i = 0; i < t->nmsend; i++) {
        int done = 1, mrc = wait ? MPI_Wait(&t->msend[i].req, MPI_STATUS_IGNORE)
                                 : MPI_Test(&t->msend[i].req, &done, MPI_STATUS_IGNORE);
        if (mrc != MPI_SUCCESS && rc == 0)
            rc = mpi_failed(t, wait ? "a held send (MPI_Wait)" : "a held send (MPI_Test)", mrc);
        if (done && mrc == MPI_SUCCESS)
            free(t->msend[i].copy);
        else if (mrc == MPI_SUCCESS)
            t->msend[kept++] = t->msend[i];
        /* a failed request: its copy is left (see the ownership note) */
    }
    t->nmsend = kept;
    return rc;
}

/* MPI's element of es bytes (the counts are elements, as the mpi transport's:
 * up to INT_MAX of them); the caller frees it once the call is posted. */
static int element_type(cg_transport *t, size_t es, MPI_Datatype *type)
{
    int rc = MPI_Type_contiguous((int)es, MPI_BYTE, type);
    if (rc == MPI_SUCCESS && (rc = MPI_Type_commit(type)) != MPI_SUCCESS)
        MPI_Type_free(type);
    return rc == MPI_SUCCESS ? 0 : mpi_failed(t, "MPI_Type_contiguous", rc);
}

static int mpi_send(cg_transport *t, const void *buf, size_t count, size_t es, int peer, int tag)
{
    if (complete_sends(t, false))
        return -1;
    if (t->nmsend == t->msend_cap) {
        int cap = t->msend_cap ? 2 * t->msend_cap : 8;
        struct cgn_mpi_send *m = realloc(t->msend, (size_t)cap * sizeof *m);
        if (!m)
            return cg_error(&t->st, "send: out of memory for %d held sends", cap);
        t->msend = m;
        t->msend_cap = cap;
    }
    size_t bytes = count * es;
    void *copy = malloc(bytes);
    if (!copy)
        return cg_error(&t->st, "send: out of memory for a %zu-byte copy", bytes);
    MPI_Datatype type;
    /* the stream's copy, then its wait: the same order as every entry's work */
    if (CUDA_CALL(t, cudaMemcpyAsync(copy, buf, bytes, cudaMemcpyDefault, t->stream)) ||
        cgn_finish(t, NULL, NULL, 0) || element_type(t, es, &type)) {
        free(copy);
        return -1;
    }
    int rc = MPI_Isend(copy, (int)count, type, peer, tag, t->comm, &t->msend[t->nmsend].req);
    MPI_Type_free(&type); /* a posted send keeps what it needs */
    if (rc != MPI_SUCCESS) {
        free(copy);
        return mpi_failed(t, "MPI_Isend", rc);
    }
    t->msend[t->nmsend++].copy = copy;
    return 0;
}

/* A longer message than expected fails inside MPI_Recv (truncation); a
 * shorter one is accepted by MPI, so the count is compared here. */
static int mpi_recv(cg_transport *t, void *buf, size_t count, size_t es, int peer, int tag)
{
    size_t bytes = count * es;
    bool dev = cgn_on_device(buf);
    void *host = dev ? malloc(bytes) : buf;
    MPI_Datatype type;
    if (!host)
        return cg_error(&t->st, "recv: out of memory for a %zu-byte copy", bytes);
    if (element_type(t, es, &type)) {
        if (dev)
            free(host);
        return -1;
    }
    MPI_Status st;
    int got = 0, rc = MPI_Recv(host, (int)count, type, peer, tag, t->comm, &st);
    if (rc == MPI_SUCCESS)
        rc = MPI_Get_count(&st, type, &got);
    MPI_Type_free(&type);
    if (rc != MPI_SUCCESS)
        rc = mpi_failed(t, "MPI_Recv", rc);
    else if (got == MPI_UNDEFINED || (size_t)got != count)
        rc = cg_error(&t->st, "recv from rank %d tag %d: expected %zu elements, got %s", peer, tag,
                      count, got == MPI_UNDEFINED ? "a partial element" : "fewer");
    else if (dev && (CUDA_CALL(t, cudaMemcpyAsync(buf, host, bytes, cudaMemcpyHostToDevice, t->stream)) ||
                     cgn_finish(t, NULL, NULL, 0)))
        rc = -1;
    if (dev)
        free(host);
    return rc ? -1 : 0;
}

/* A message to this rank itself is kept on the device either way (the
 * grouped file's queue): an MPI send to itself would complete only once
 * received, so a program's unreceived one would hold settle forever. */
int cgn_send(cg_transport *t, const void *buf, size_t count, cgt_dtype dt, int peer, int tag)
{
    if (t->p2p_nccl || peer == t->rank)
        return cgn_grouped_send(t, buf, count, dt, peer, tag);
    size_t es = 0;
    if (check_p2p(t, count, dt, peer, tag, &es))
        return -1;
    return count ? mpi_send(t, buf, count, es, peer, tag) : 0;
}

int cgn_recv(cg_transport *t, void *buf, size_t count, cgt_dtype dt, int peer, int tag)
{
    if (t->p2p_nccl || peer == t->rank)
        return cgn_grouped_recv(t, buf, count, dt, peer, tag);
    size_t es = 0;
    if (check_p2p(t, count, dt, peer, tag, &es))
        return -1;
    return count ? mpi_recv(t, buf, count, es, peer, tag) : 0;
}

int cgn_before_entry(cg_transport *t)
{
    return t->p2p_nccl ? cgn_grouped_flush(t) : complete_sends(t, false);
}

int cgn_flush_sends(cg_transport *t)
{
    return t->p2p_nccl ? cgn_grouped_flush(t) : complete_sends(t, true);
}

/* Never waits: settle has waited for every send of a program that ran to its
 * end, and a send of one that stopped early may never be received. */
void cgn_drop_sends(cg_transport *t)
{
    if (!t->broken)
        complete_sends(t, false);
    free(t->msend); /* the copies of sends still in flight stay allocated (ownership note) */
    t->msend = NULL;
    t->nmsend = t->msend_cap = 0;
    cgn_grouped_drop(t);
}
