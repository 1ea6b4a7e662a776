/* transport_nccl.c — the built-in "nccl" transport (collgrad_transport.h):
 * its collectives and its table. Built only with CUDA and NCCL (HAVE_CUDA);
 * start-up, errors and staging are in transport_nccl_setup.c, send and recv
 * in transport_nccl_p2p.c.
 *
 * Every entry enqueues its NCCL calls on the instance's stream and waits for
 * them (cgn_finish), so it returns with the result in place, as MPI's do.
 * Buffers may be device or host memory: host buffers are staged through the
 * device (transport_nccl.h). NCCL has no ragged collectives and no tags, so:
 *  - all_gather / reduce_scatter with unequal counts are groups of one
 *    ncclBroadcast / ncclReduce per rank's block, rooted at its owner;
 *  - gather, scatter and all_to_all are groups of ncclSend/ncclRecv, a
 *    rank's own block copied on the device.
 * A block or an entry of 0 elements issues no NCCL call: every rank knows
 * every count, so all ranks skip it alike. Every entry first calls
 * cgn_before_entry (transport_nccl_p2p.c: the NCCL sends held back go out). */
#include <string.h>

#include "transport_nccl.h"

/* ---- dtypes, ops, counts ---------------------------------------------------- */

/* NCCL has every op, average included (ncclAvg, NCCL >= 2.10). */
static int nccl_op(cg_transport *t, cgt_redop op, ncclRedOp_t *out)
{
    static const ncclRedOp_t ops[] = {ncclSum, ncclAvg, ncclProd, ncclMax, ncclMin};
    if ((unsigned)op > CGT_MIN)
        return cg_error(&t->st, "unknown reduction op %d", (int)op);
    *out = ops[op];
    return 0;
}

static size_t sum_of(const cg_transport *t, const size_t *counts)
{
    size_t s = 0;
    for (int k = 0; k < t->world; k++)
        s += counts[k];
    return s;
}

static size_t offset_of(const size_t *counts, int rank)
{
    size_t off = 0;
    for (int k = 0; k < rank; k++)
        off += counts[k];
    return off;
}

static bool uniform(const cg_transport *t, const size_t *counts)
{
    for (int k = 1; k < t->world; k++)
        if (counts[k] != counts[0])
            return false;
    return true;
}

/* Element `elems` of a buffer of `size`-byte elements. */
static void *at(const void *base, size_t elems, size_t size)
{
    return (char *)base + elems * size;
}

/* ---- reductions ---------------------------------------------------------------- */

static int nccl_all_reduce(cg_transport *t, const void *send, void *recv, size_t count,
                           cgt_dtype dt, cgt_redop op)
{
    if (cgn_before_entry(t))
        return -1;
    ncclDataType_t type = ncclFloat32;
    ncclRedOp_t rop = ncclSum;
    size_t es = 0;
    const void *s;
    void *r;
    if (cgn_type(t, dt, &type, &es) || nccl_op(t, op, &rop))
        return -1;
    if (count == 0)
        return 0;
    if (cgn_dev_pair(t, send, count * es, recv, count * es, &s, &r) ||
        NCCL_CALL(t, ncclAllReduce(s, r, count, type, rop, t->nccl, t->stream)))
        return -1;
    return cgn_finish(t, recv, r, count * es);
}

/* recv (root only; NULL elsewhere is fine) = op_k send_k. */
static int nccl_reduce(cg_transport *t, const void *send, void *recv, size_t count, cgt_dtype dt,
                       cgt_redop op, int root)
{
    if (cgn_before_entry(t))
        return -1;
    ncclDataType_t type = ncclFloat32;
    ncclRedOp_t rop = ncclSum;
    size_t es = 0;
    const void *s;
    void *r;
    if (cgn_type(t, dt, &type, &es) || nccl_op(t, op, &rop) || cgn_check_rank(t, "root", root))
        return -1;
    if (count == 0)
        return 0;
    void *mine = t->rank == root ? recv : NULL; /* NCCL ignores recvbuff off the root */
    if (cgn_dev_pair(t, send, count * es, mine, mine ? count * es : 0, &s, &r) ||
        NCCL_CALL(t, ncclReduce(s, r, count, type, rop, root, t->nccl, t->stream)))
        return -1;
    return cgn_finish(t, mine, r, count * es);
}

/* Unequal blocks: block k is reduced onto its owner k. */
static int ragged_reduce_scatter(cg_transport *t, const void *s, void *r, const size_t *counts,
                                 ncclDataType_t type, size_t es, ncclRedOp_t rop)
{
    if (NCCL_CALL(t, ncclGroupStart()))
        return -1;
    int rc = 0;
    for (int k = 0; rc == 0 && k < t->world; k++)
        if (counts[k])
            rc = NCCL_CALL(t, ncclReduce(at(s, offset_of(counts, k), es), k == t->rank ? r : NULL,
                                         counts[k], type, rop, k, t->nccl, t->stream));
    return cgn_group_end(t, rc);
}

static int nccl_reduce_scatter(cg_transport *t, const void *send, void *recv, const size_t *counts,
                               cgt_dtype dt, cgt_redop op)
{
    if (cgn_before_entry(t))
        return -1;
    ncclDataType_t type = ncclFloat32;
    ncclRedOp_t rop = ncclSum;
    size_t es = 0, total = sum_of(t, counts), mine = counts[t->rank];
    const void *s;
    void *r;
    if (cgn_type(t, dt, &type, &es) || nccl_op(t, op, &rop))
        return -1;
    if (total == 0)
        return 0;
    if (cgn_dev_pair(t, send, total * es, recv, mine * es, &s, &r))
        return -1;
    int rc = uniform(t, counts)
                 ? NCCL_CALL(t, ncclReduceScatter(s, r, mine, type, rop, t->nccl, t->stream))
                 : ragged_reduce_scatter(t, s, r, counts, type, es, rop);
    return rc ? -1 : cgn_finish(t, recv, r, mine * es);
}

/* ---- data movement ---------------------------------------------------------------- */

static int nccl_broadcast(cg_transport *t, void *buf, size_t count, cgt_dtype dt, int root)
{
    if (cgn_before_entry(t))
        return -1;
    ncclDataType_t type = ncclFloat32;
    size_t es = 0;
    const void *d;
    if (cgn_type(t, dt, &type, &es) || cgn_check_rank(t, "root", root))
        return -1;
    if (count == 0)
        return 0;
    if (cgn_dev_in(t, buf, count * es, &d) ||
        NCCL_CALL(t, ncclBroadcast(d, (void *)d, count, type, root, t->nccl, t->stream)))
        return -1;
    return cgn_finish(t, buf, (void *)d, count * es);
}

/* Unequal blocks: each rank broadcasts its block into its offset everywhere. */
static int ragged_all_gather(cg_transport *t, const void *s, void *r, const size_t *counts,
                             ncclDataType_t type, size_t es)
{
    if (NCCL_CALL(t, ncclGroupStart()))
        return -1;
    int rc = 0;
    for (int k = 0; rc == 0 && k < t->world; k++) {
        void *dst = at(r, offset_of(counts, k), es);
        if (counts[k])
            rc = NCCL_CALL(t, ncclBroadcast(k == t->rank ? s : dst, dst, counts[k], type, k,
                                            t->nccl, t->stream));
    }
    return cgn_group_end(t, rc);
}

static int nccl_all_gather(cg_transport *t, const void *send, void *recv, const size_t *counts,
                           cgt_dtype dt)
{
    if (cgn_before_entry(t))
        return -1;
    ncclDataType_t type = ncclFloat32;
    size_t es = 0, total = sum_of(t, counts);
    const void *s;
    void *r;
    if (cgn_type(t, dt, &type, &es))
        return -1;
    if (total == 0)
        return 0;
    if (cgn_dev_pair(t, send, counts[t->rank] * es, recv, total * es, &s, &r))
        return -1;
    int rc = uniform(t, counts)
                 ? NCCL_CALL(t, ncclAllGather(s, r, counts[0], type, t->nccl, t->stream))
                 : ragged_all_gather(t, s, r, counts, type, es);
    return rc ? -1 : cgn_finish(t, recv, r, total * es);
}

/* The root receives every other rank's block; the others send theirs. */
static int nccl_gather(cg_transport *t, const void *send, void *recv, const size_t *counts,
                       cgt_dtype dt, int root)
{
    if (cgn_before_entry(t))
        return -1;
    ncclDataType_t type = ncclFloat32;
    size_t es = 0, total = sum_of(t, counts), mine = counts[t->rank];
    const void *s;
    void *r;
    bool at_root = t->rank == root;
    if (cgn_type(t, dt, &type, &es) || cgn_check_rank(t, "root", root))
        return -1;
    if (total == 0)
        return 0;
    void *out = at_root ? recv : NULL;
    if (cgn_dev_pair(t, send, mine * es, out, at_root ? total * es : 0, &s, &r) ||
        (at_root && cgn_copy(t, at(r, offset_of(counts, root), es), s, mine * es)) ||
        NCCL_CALL(t, ncclGroupStart()))
        return -1;
    int rc = 0;
    for (int k = 0; rc == 0 && k < t->world; k++) {
        if (!counts[k] || k == root || (!at_root && k != t->rank))
            continue;
        rc = at_root ? NCCL_CALL(t, ncclRecv(at(r, offset_of(counts, k), es), counts[k], type, k,
                                             t->nccl, t->stream))
                     : NCCL_CALL(t, ncclSend(s, counts[k], type, root, t->nccl, t->stream));
    }
    return cgn_group_end(t, rc) ? -1 : cgn_finish(t, out, r, at_root ? total * es : 0);
}

/* The root sends every other rank its block; the others receive theirs. */
static int nccl_scatter(cg_transport *t, const void *send, void *recv, const size_t *counts,
                        cgt_dtype dt, int root)
{
    if (cgn_before_entry(t))
        return -1;
    ncclDataType_t type = ncclFloat32;
    size_t es = 0, total = sum_of(t, counts), mine = counts[t->rank];
    const void *s;
    void *r;
    bool at_root = t->rank == root;
    if (cgn_type(t, dt, &type, &es) || cgn_check_rank(t, "root", root))
        return -1;
    if (total == 0)
        return 0;
    const void *in = at_root ? send : NULL;
    if (cgn_dev_pair(t, in, at_root ? total * es : 0, recv, mine * es, &s, &r) ||
        (at_root && cgn_copy(t, r, at(s, offset_of(counts, root), es), mine * es)) ||
        NCCL_CALL(t, ncclGroupStart()))
        return -1;
    int rc = 0;
    for (int k = 0; rc == 0 && k < t->world; k++) {
        if (!counts[k] || k == root || (!at_root && k != t->rank))
            continue;
        rc = at_root ? NCCL_CALL(t, ncclSend(at(s, offset_of(counts, k), es), counts[k], type, k,
                                             t->nccl, t->stream))
                     : NCCL_CALL(t, ncclRecv(r, counts[k], type, root, t->nccl, t->stream));
    }
    return cgn_group_end(t, rc) ? -1 : cgn_finish(t, recv, r, mine * es);
}

/* Pairs of ncclSend/ncclRecv with every other rank; the own block is copied. */
static int nccl_all_to_all(cg_transport *t, const void *send, const size_t *sendcounts, void *recv,
                           const size_t *recvcounts, cgt_dtype dt)
{
    if (cgn_before_entry(t))
        return -1;
    ncclDataType_t type = ncclFloat32;
    size_t es = 0, stotal = sum_of(t, sendcounts), rtotal = sum_of(t, recvcounts);
    const void *s;
    void *r;
    int me = t->rank;
    if (cgn_type(t, dt, &type, &es))
        return -1;
    if (sendcounts[me] != recvcounts[me])
        return cg_error(&t->st, "all_to_all: rank %d sends itself %zu elements but expects %zu", me,
                        sendcounts[me], recvcounts[me]);
    if (cgn_dev_pair(t, send, stotal * es, recv, rtotal * es, &s, &r) ||
        cgn_copy(t, at(r, offset_of(recvcounts, me), es), at(s, offset_of(sendcounts, me), es),
                 sendcounts[me] * es) ||
        NCCL_CALL(t, ncclGroupStart()))
        return -1;
    int rc = 0;
    for (int j = 0; rc == 0 && j < t->world; j++) {
        if (j != me && sendcounts[j])
            rc = NCCL_CALL(t, ncclSend(at(s, offset_of(sendcounts, j), es), sendcounts[j], type, j,
                                       t->nccl, t->stream));
        if (rc == 0 && j != me && recvcounts[j])
            rc = NCCL_CALL(t, ncclRecv(at(r, offset_of(recvcounts, j), es), recvcounts[j], type, j,
                                       t->nccl, t->stream));
    }
    return cgn_group_end(t, rc) ? -1 : cgn_finish(t, recv, r, rtotal * es);
}

/* An all_reduce of one device int: returns once every rank has reached it. */
static int nccl_barrier(cg_transport *t)
{
    if (cgn_before_entry(t))
        return -1;
    if (NCCL_CALL(t, ncclAllReduce(t->one, t->one, 1, ncclInt32, ncclSum, t->nccl, t->stream)))
        return -1;
    return cgn_finish(t, NULL, NULL, 0);
}

/* ---- the table ------------------------------------------------------------------------ */

static int nccl_rank(const cg_transport *t) { return t->rank; }
static int nccl_world(const cg_transport *t) { return t->world; }
static const char *nccl_last_error(const cg_transport *t) { return t->st.msg; }

/* The table's one entry (ABI 3): each call to its function above. */
static int nccl_call(cg_transport *t, const cgt_call *c)
{
    switch (c->kind) {
    case CGT_ALL_REDUCE: return nccl_all_reduce(t, c->send, c->recv, c->count, c->dtype, c->op);
    case CGT_ALL_GATHER: return nccl_all_gather(t, c->send, c->recv, c->counts, c->dtype);
    case CGT_REDUCE_SCATTER: return nccl_reduce_scatter(t, c->send, c->recv, c->counts, c->dtype, c->op);
    case CGT_BROADCAST: return nccl_broadcast(t, c->recv, c->count, c->dtype, c->root);
    case CGT_REDUCE: return nccl_reduce(t, c->send, c->recv, c->count, c->dtype, c->op, c->root);
    case CGT_GATHER: return nccl_gather(t, c->send, c->recv, c->counts, c->dtype, c->root);
    case CGT_SCATTER: return nccl_scatter(t, c->send, c->recv, c->counts, c->dtype, c->root);
    case CGT_ALL_TO_ALL: return nccl_all_to_all(t, c->send, c->counts, c->recv, c->recvcounts, c->dtype);
    case CGT_SEND: return cgn_send(t, c->send, c->count, c->dtype, c->peer, c->tag);
    case CGT_RECV: return cgn_recv(t, c->recv, c->count, c->dtype, c->peer, c->tag);
    case CGT_BARRIER: return nccl_barrier(t);
    default: break;
    }
    return cg_error(&t->st, "unknown call %d", (int)c->kind);
}

static cg_transport_ops nccl_ops = {
    .abi_version = CG_TRANSPORT_ABI_VERSION,
    .name = "nccl",
    .version = "",
    .caps = CGT_CAP_HOST | CGT_CAP_CUDA | CGT_CAP_HALF,
    .create = cgn_create,
    .destroy = cgn_destroy,
    .rank = nccl_rank,
    .world = nccl_world,
    .last_error = nccl_last_error,
    .call = nccl_call,
    .split = cgn_split,
};

const cg_transport_ops *cg_transport_nccl(void)
{
    nccl_ops.version = cgn_version();
    return &nccl_ops;
}
