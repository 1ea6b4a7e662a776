/* transport_nccl_p2p_grouped.c — the "nccl" transport's send and recv over
 * NCCL's own point to point, under COLLGRAD_NCCL_P2P=nccl (transport_nccl.h;
 * the default moves them over MPI: transport_nccl_p2p.c says why).
 *
 * NCCL's point to point has no tags and no buffering:
 *  - messages between two ranks match in issue order; the tag is only
 *    range-checked, and a recv whose count differs from its send's is not
 *    detected (the tool's plans make the two agree);
 *  - an ncclSend may complete only once its receiver has posted the matching
 *    recv, so a program whose ranks all send before they receive (a ring)
 *    would wait forever if each send were issued and awaited alone.
 * So a send here copies the message and returns, and the held sends are
 * issued together with the next recv, in one NCCL group (a ring of
 * send-then-recv completes, as grouped ncclSend/ncclRecv do), or on their own
 * before any other entry and at settle. That grouping is right only where the
 * peer groups the same pair of calls alike: NCCL leaves a group whose peer
 * splits it undefined (NVIDIA/nccl#1279), and on NCCL 2.28.3 rank 0's group
 * {send to 1, recv from 1} against rank 1's recv, then send, waits forever
 * (tests/data/nccl_p2p's ping-pong; docs/gpu.md, Measured on a GPU). Kept as an
 * opt-in to exercise NCCL's point to point where the programs suit it.
 * A send to this rank itself cannot wait for its own later recv, so it is
 * kept instead: copied into a device buffer that the next recv from itself
 * with that tag takes (first sent, first taken: MPI's rule for one pair);
 * the MPI path keeps its messages to itself here too. */
#include <stdlib.h>
#include <string.h>

#include "transport_nccl.h"

struct cgn_self_msg {
    void *buf; /* device copy of the message */
    size_t bytes;
    int tag;
};

struct cgn_outgoing {
    void *buf; /* device copy of the message */
    size_t count;
    ncclDataType_t type;
    int peer;
};

static int check_p2p(cg_transport *t, cgt_dtype dt, int peer, int tag, ncclDataType_t *type,
                     size_t *es)
{
    if (cgn_type(t, dt, type, es) || cgn_check_rank(t, "peer", peer))
        return -1;
    if (tag < 0 || tag >= 32768)
        return cg_error(&t->st, "tag %d outside 0..32767", tag);
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
            return cg_error(&t->st, "out of memory keeping a message to itself");
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
        return cg_error(&t->st,
                        "recv from rank %d (itself) tag %d: no such message was sent, so it "
                        "would wait forever",
                        t->rank, tag);
    struct cgn_self_msg msg = t->self[i];
    if (msg.bytes != bytes)
        return cg_error(&t->st, "recv from rank %d (itself) tag %d: expected %zu bytes, got %zu",
                        t->rank, tag, bytes, msg.bytes);
    memmove(t->self + i, t->self + i + 1, (size_t)(t->nself - i - 1) * sizeof *t->self);
    t->nself--;
    int rc = CUDA_CALL(t, cudaMemcpyAsync(buf, msg.buf, bytes, cudaMemcpyDefault, t->stream)) ||
             cgn_finish(t, NULL, NULL, 0);
    cudaFree(msg.buf);
    return rc ? -1 : 0;
}

/* Copies a message to another rank into the outbox (cudaMemcpyDefault takes
 * host or device memory). */
static int hold_send(cg_transport *t, const void *buf, size_t count, size_t es,
                     ncclDataType_t type, int peer)
{
    if (t->nout == t->out_cap) {
        int cap = t->out_cap ? 2 * t->out_cap : 8;
        struct cgn_outgoing *m = realloc(t->out, (size_t)cap * sizeof *m);
        if (!m)
            return cg_error(&t->st, "out of memory holding a send");
        t->out = m;
        t->out_cap = cap;
    }
    struct cgn_outgoing msg = {NULL, count, type, peer};
    if (CUDA_CALL(t, cudaMalloc(&msg.buf, count * es)))
        return -1;
    if (CUDA_CALL(t, cudaMemcpyAsync(msg.buf, buf, count * es, cudaMemcpyDefault, t->stream)) ||
        cgn_finish(t, NULL, NULL, 0)) {
        cudaFree(msg.buf);
        return -1;
    }
    t->out[t->nout++] = msg;
    return 0;
}

/* Inside an open group: every held send, in the order they were made. */
static int issue_held_sends(cg_transport *t)
{
    int rc = 0;
    for (int i = 0; rc == 0 && i < t->nout; i++)
        rc = NCCL_CALL(t, ncclSend(t->out[i].buf, t->out[i].count, t->out[i].type,
                                   t->out[i].peer, t->nccl, t->stream));
    return rc;
}

/* After the group that carried them has finished (or failed: a failed
 * transport is not used again). */
static void drop_held_sends(cg_transport *t)
{
    for (int i = 0; i < t->nout; i++)
        cudaFree(t->out[i].buf);
    t->nout = 0;
}

int cgn_grouped_flush(cg_transport *t)
{
    if (t->nout == 0)
        return 0;
    if (NCCL_CALL(t, ncclGroupStart()))
        return -1;
    int rc = cgn_group_end(t, issue_held_sends(t)) ? -1 : cgn_finish(t, NULL, NULL, 0);
    drop_held_sends(t);
    return rc;
}

void cgn_grouped_drop(cg_transport *t)
{
    for (int i = 0; i < t->nself; i++)
        cudaFree(t->self[i].buf);
    free(t->self);
    t->self = NULL;
    t->nself = t->self_cap = 0;
    drop_held_sends(t);
    free(t->out);
    t->out = NULL;
    t->out_cap = 0;
}

int cgn_grouped_send(cg_transport *t, const void *buf, size_t count, cgt_dtype dt, int peer, int tag)
{
    ncclDataType_t type = ncclFloat32;
    size_t es = 0;
    if (check_p2p(t, dt, peer, tag, &type, &es))
        return -1;
    if (count == 0)
        return 0;
    if (peer == t->rank)
        return keep_self(t, buf, count * es, tag);
    return hold_send(t, buf, count, es, type, peer);
}

int cgn_grouped_recv(cg_transport *t, void *buf, size_t count, cgt_dtype dt, int peer, int tag)
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
        return -1; /* the held sends are freed with the transport, as before any was issued */
    int rc = issue_held_sends(t);
    if (rc == 0)
        rc = NCCL_CALL(t, ncclRecv(d, count, type, peer, t->nccl, t->stream));
    rc = cgn_group_end(t, rc) ? -1 : cgn_finish(t, buf, d, count * es);
    drop_held_sends(t);
    return rc;
}
