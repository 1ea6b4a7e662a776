/* transport_nccl_p2p.c — the "nccl" transport's send and recv
 * (transport_nccl.h).
 *
 * NCCL's point to point has no tags and no buffering:
 *  - messages between two ranks match in issue order; the tag is only
 *    range-checked, and a recv whose count differs from its send's is not
 *    detected (the tool's plans make the two agree);
 *  - a send returns once its receiver has taken it (MPI_Ssend's semantics,
 *    where MPI_Send buffers small messages), so a program whose ranks all
 *    send before they receive waits forever: the tool reports the hang.
 * A send to this rank itself cannot wait for its own later recv, so it is
 * kept instead: copied into a device buffer that the next recv from itself
 * with that tag takes (first sent, first taken: MPI's rule for one pair). */
#include <stdlib.h>
#include <string.h>

#include "transport_nccl.h"

struct cgn_self_msg {
    void *buf; /* device copy of the message */
    size_t bytes;
    int tag;
};

static int check_p2p(cg_transport *t, cgt_dtype dt, int peer, int tag, ncclDataType_t *type,
                     size_t *es)
{
    if (cgn_type(t, dt, type, es) || cgn_check_rank(t, "peer", peer))
        return -1;
    if (tag < 0 || tag >= 32768)
        return cgn_fail(t, "tag %d outside 0..32767", tag);
    return 0;
}

/* Keeps a copy of a message to this rank itself. cudaMemcpyDefault takes
 * host or device memory alike (unified addressing). */
static int keep_self(cg_transport *t, const void *buf, size_t bytes, int tag)
{
    if (t->nself == t->self_cap) {
        int cap = t->self_cap ? 2 * t->self_cap : 8;
        struct cgn_self_msg *m = realloc(t->self, (size_t)cap * sizeof *m);
        if (!m)
            return cgn_fail(t, "out of memory keeping a message to itself");
        t->self = m;
        t->self_cap = cap;
    }
    struct cgn_self_msg msg = {NULL, bytes, tag};
    if (CUDA_CALL(t, cudaMalloc(&msg.buf, bytes)))
        return -1;
    if (CUDA_CALL(t, cudaMemcpyAsync(msg.buf, buf, bytes, cudaMemcpyDefault, t->stream)) ||
        cgn_finish(t, NULL, NULL, 0)) {
        cudaFree(msg.buf);
        return -1;
    }
    t->self[t->nself++] = msg;
    return 0;
}

/* Hands the oldest kept message with this tag to buf. */
static int take_self(cg_transport *t, void *buf, size_t bytes, int tag)
{
    int i = 0;
    while (i < t->nself && t->self[i].tag != tag)
        i++;
    if (i == t->nself)
        return cgn_fail(t, "recv from rank %d (itself) tag %d: no such message was sent, so it "
                        "would wait forever", t->rank, tag);
    struct cgn_self_msg msg = t->self[i];
    if (msg.bytes != bytes)
        return cgn_fail(t, "recv from rank %d (itself) tag %d: expected %zu bytes, got %zu",
                        t->rank, tag, bytes, msg.bytes);
    memmove(t->self + i, t->self + i + 1, (size_t)(t->nself - i - 1) * sizeof *t->self);
    t->nself--;
    int rc = CUDA_CALL(t, cudaMemcpyAsync(buf, msg.buf, bytes, cudaMemcpyDefault, t->stream)) ||
             cgn_finish(t, NULL, NULL, 0);
    cudaFree(msg.buf);
    return rc ? -1 : 0;
}

void cgn_drop_self_messages(cg_transport *t)
{
    for (int i = 0; i < t->nself; i++)
        cudaFree(t->self[i].buf);
    free(t->self);
    t->self = NULL;
    t->nself = t->self_cap = 0;
}

int cgn_send(cg_transport *t, const void *buf, size_t count, cgt_dtype dt, int peer, int tag)
{
    ncclDataType_t type = ncclFloat32;
    size_t es = 0;
    const void *d;
    if (check_p2p(t, dt, peer, tag, &type, &es))
        return -1;
    if (count == 0)
        return 0;
    if (peer == t->rank)
        return keep_self(t, buf, count * es, tag);
    if (cgn_dev_in(t, buf, count * es, &d) || NCCL_CALL(t, ncclGroupStart()))
        return -1;
    int rc = NCCL_CALL(t, ncclSend(d, count, type, peer, t->nccl, t->stream));
    return cgn_group_end(t, rc) ? -1 : cgn_finish(t, NULL, NULL, 0);
}

int cgn_recv(cg_transport *t, void *buf, size_t count, cgt_dtype dt, int peer, int tag)
{
    ncclDataType_t type = ncclFloat32;
    size_t es = 0;
    void *d;
    if (check_p2p(t, dt, peer, tag, &type, &es))
        return -1;
    if (count == 0)
        return 0;
    if (peer == t->rank)
        return take_self(t, buf, count * es, tag);
    if (cgn_dev_out(t, buf, count * es, &d) || NCCL_CALL(t, ncclGroupStart()))
        return -1;
    int rc = NCCL_CALL(t, ncclRecv(d, count, type, peer, t->nccl, t->stream));
    return cgn_group_end(t, rc) ? -1 : cgn_finish(t, buf, d, count * es);
}
