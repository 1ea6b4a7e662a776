/* transport_threads.c — the in-process transport (transport_threads.h):
 * every collective of the table, each computed by every rank from the
 * buffers the ranks publish. Where the ranks meet (the barrier that can be
 * aborted, messages, splits) is transport_threads_sync.c; the runner that
 * drives W threads through a case is harness/run/threads_run.c. */
#include "transport_threads_internal.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- element access ------------------------------------------------------------ */

static double get(const void *p, cgt_dtype dt, size_t i)
{
    cg_tensor v = {.dtype = (cg_dtype)dt, .data = (void *)p};
    return cg_get(&v, (int64_t)i);
}

static void set(void *p, cgt_dtype dt, size_t i, double x)
{
    cg_tensor v = {.dtype = (cg_dtype)dt, .data = p};
    cg_set(&v, (int64_t)i, x);
}

static double fold(cgt_redop op, double a, double b)
{
    switch (op) {
    case CGT_SUM:
    case CGT_AVG: return a + b;
    case CGT_PROD: return a * b;
    case CGT_MAX: return (isnan(a) || a > b) ? a : b;
    case CGT_MIN: return (isnan(a) || a < b) ? a : b;
    }
    return a;
}

/* out[i] = op over ranks of slots[r].send[at + i], i < n, rank order,
 * rounded to dt at each step. */
static void reduce_into(const cg_threads *sh, void *out, size_t at, size_t n, cgt_dtype dt, cgt_redop op)
{
    for (size_t i = 0; i < n; i++) {
        double acc = get(sh->slots[0].send, dt, at + i);
        for (int r = 1; r < sh->world; r++)
            acc = cg_round_to((cg_dtype)dt, fold(op, acc, get(sh->slots[r].send, dt, at + i)));
        if (op == CGT_AVG)
            acc /= sh->world;
        set(out, dt, i, acc);
    }
}

/* One collective: publish, meet, compute into private memory, meet, write. */
typedef struct exchange {
    void *tmp;
    size_t bytes;
} exchange;

static int publish(cg_transport *t, const void *send, const size_t *counts, const size_t *counts2)
{
    cg_threads_slot *s = &t->sh->slots[t->rank];
    s->send = send;
    s->counts = counts;
    s->counts2 = counts2;
    return cg_threads_meet(t, true);
}

static int finish(cg_transport *t, exchange *x, void *recv)
{
    int rc = cg_threads_leave(t);
    if (rc == 0 && x->bytes)
        memcpy(recv, x->tmp, x->bytes);
    free(x->tmp);
    return rc;
}

static int scratch(cg_transport *t, exchange *x, size_t count, cgt_dtype dt)
{
    x->bytes = count * cg_dtype_size((cg_dtype)dt);
    x->tmp = malloc(x->bytes + 1);
    return x->tmp ? 0 : cg_error(&t->st, "out of memory for %zu bytes", x->bytes);
}

static size_t offset_of(const size_t *counts, int r)
{
    size_t off = 0;
    for (int k = 0; k < r; k++)
        off += counts[k];
    return off;
}

/* The rank whose block of kind k rank r receives: itself, unless the state
 * holds a misorder hypothesis for k (transport_threads.h) and the blocks'
 * sizes agree. */
static int block_from(const cg_threads *sh, cg_misorder_kind k, const size_t *counts, int r)
{
    const cg_misorder *m = &sh->misorder;
    if (m->kind != k)
        return r;
    int from = m->shift < 0 ? sh->world - 1 - r : (r + m->shift) % sh->world;
    return counts[from] == counts[r] ? from : r;
}

/* ---- the table ------------------------------------------------------------------ */

static int th_all_reduce(cg_transport *t, const void *send, void *recv, size_t count, cgt_dtype dt,
                         cgt_redop op)
{
    exchange x;
    if (scratch(t, &x, count, dt) < 0)
        return -1;
    if (publish(t, send, NULL, NULL) < 0)
        return free(x.tmp), -1;
    reduce_into(t->sh, x.tmp, 0, count, dt, op);
    return finish(t, &x, recv);
}

static int th_all_gather(cg_transport *t, const void *send, void *recv, const size_t *counts, cgt_dtype dt)
{
    exchange x;
    size_t esz = cg_dtype_size((cg_dtype)dt), total = offset_of(counts, t->sh->world);
    if (scratch(t, &x, total, dt) < 0)
        return -1;
    if (publish(t, send, NULL, NULL) < 0)
        return free(x.tmp), -1;
    for (int r = 0; r < t->sh->world; r++)
        memcpy((char *)x.tmp + offset_of(counts, r) * esz,
               t->sh->slots[block_from(t->sh, CG_MISORDER_ALL_GATHER, counts, r)].send, counts[r] * esz);
    return finish(t, &x, recv);
}

static int th_reduce_scatter(cg_transport *t, const void *send, void *recv, const size_t *counts,
                             cgt_dtype dt, cgt_redop op)
{
    exchange x;
    if (scratch(t, &x, counts[t->rank], dt) < 0)
        return -1;
    if (publish(t, send, NULL, NULL) < 0)
        return free(x.tmp), -1;
    int from = block_from(t->sh, CG_MISORDER_REDUCE_SCATTER, counts, t->rank);
    reduce_into(t->sh, x.tmp, offset_of(counts, from), counts[t->rank], dt, op);
    return finish(t, &x, recv);
}

static int th_broadcast(cg_transport *t, void *buf, size_t count, cgt_dtype dt, int root)
{
    exchange x;
    if (scratch(t, &x, count, dt) < 0)
        return -1;
    if (publish(t, buf, NULL, NULL) < 0)
        return free(x.tmp), -1;
    memcpy(x.tmp, t->sh->slots[root].send, x.bytes);
    return finish(t, &x, buf);
}

static int th_reduce(cg_transport *t, const void *send, void *recv, size_t count, cgt_dtype dt,
                     cgt_redop op, int root)
{
    exchange x;
    if (scratch(t, &x, t->rank == root ? count : 0, dt) < 0)
        return -1;
    if (publish(t, send, NULL, NULL) < 0)
        return free(x.tmp), -1;
    if (t->rank == root)
        reduce_into(t->sh, x.tmp, 0, count, dt, op);
    return finish(t, &x, recv);
}

static int th_gather(cg_transport *t, const void *send, void *recv, const size_t *counts, cgt_dtype dt,
                     int root)
{
    return t->rank == root ? th_all_gather(t, send, recv, counts, dt)
                           : (publish(t, send, NULL, NULL) < 0 ? -1 : cg_threads_leave(t));
}

static int th_scatter(cg_transport *t, const void *send, void *recv, const size_t *counts, cgt_dtype dt,
                      int root)
{
    exchange x;
    size_t esz = cg_dtype_size((cg_dtype)dt);
    if (scratch(t, &x, counts[t->rank], dt) < 0)
        return -1;
    if (publish(t, send, NULL, NULL) < 0)
        return free(x.tmp), -1;
    memcpy(x.tmp, (const char *)t->sh->slots[root].send + offset_of(counts, t->rank) * esz, x.bytes);
    return finish(t, &x, recv);
}

static int th_all_to_all(cg_transport *t, const void *send, const size_t *sendcounts, void *recv,
                         const size_t *recvcounts, cgt_dtype dt)
{
    exchange x;
    size_t esz = cg_dtype_size((cg_dtype)dt), at = 0;
    if (scratch(t, &x, offset_of(recvcounts, t->sh->world), dt) < 0)
        return -1;
    if (publish(t, send, sendcounts, recvcounts) < 0)
        return free(x.tmp), -1;
    for (int j = 0; j < t->sh->world; j++) {
        const cg_threads_slot *s = &t->sh->slots[j];
        size_t n = s->counts[t->rank];
        if (n != recvcounts[j]) {
            free(x.tmp);
            cg_threads_abort(t->sh, "all_to_all: rank %d sends %zu elements to rank %d, which expects %zu",
                             j, n, t->rank, recvcounts[j]);
            return cg_error(&t->st, "%s", t->sh->why);
        }
        memcpy((char *)x.tmp + at * esz, (const char *)s->send + offset_of(s->counts, t->rank) * esz, n * esz);
        at += n;
    }
    return finish(t, &x, recv);
}

static int th_barrier(cg_transport *t) { return cg_threads_meet(t, false); }
static int th_rank(const cg_transport *t) { return t->rank; }
static int th_world(const cg_transport *t) { return t->sh->world; }
static const char *th_last_error(const cg_transport *t) { return t->st.msg; }
/* The world's instances live in its state (cg_threads_new); a group's was malloc'd by
 * cg_threads_split, and leaving it is this rank finishing there (its state is the
 * parent's to free). */
static void th_destroy(cg_transport *t)
{
    if (!t || !t->split)
        return;
    cg_threads_finished(t->sh, t->rank);
    free(t);
}

/* The table's one entry (ABI 3): each call to its function above. */
static int th_call(cg_transport *t, const cgt_call *c)
{
    switch (c->kind) {
    case CGT_ALL_REDUCE: return th_all_reduce(t, c->send, c->recv, c->count, c->dtype, c->op);
    case CGT_ALL_GATHER: return th_all_gather(t, c->send, c->recv, c->counts, c->dtype);
    case CGT_REDUCE_SCATTER: return th_reduce_scatter(t, c->send, c->recv, c->counts, c->dtype, c->op);
    case CGT_BROADCAST: return th_broadcast(t, c->recv, c->count, c->dtype, c->root);
    case CGT_REDUCE: return th_reduce(t, c->send, c->recv, c->count, c->dtype, c->op, c->root);
    case CGT_GATHER: return th_gather(t, c->send, c->recv, c->counts, c->dtype, c->root);
    case CGT_SCATTER: return th_scatter(t, c->send, c->recv, c->counts, c->dtype, c->root);
    case CGT_ALL_TO_ALL: return th_all_to_all(t, c->send, c->counts, c->recv, c->recvcounts, c->dtype);
    case CGT_SEND: return cg_threads_send(t, c->send, c->count, c->dtype, c->peer, c->tag);
    case CGT_RECV: return cg_threads_recv(t, c->recv, c->count, c->dtype, c->peer, c->tag);
    case CGT_BARRIER: return th_barrier(t);
    default: break;
    }
    return cg_error(&t->st, "unknown call %d", (int)c->kind);
}

static const cg_transport_ops threads_ops = {
    .abi_version = CG_TRANSPORT_ABI_VERSION,
    .name = "threads",
    .version = "1",
    .caps = CGT_CAP_HOST | CGT_CAP_HALF,
    .create = NULL, /* instances are made with the world's state (cg_threads_new), never over MPI */
    .destroy = th_destroy,
    .rank = th_rank,
    .world = th_world,
    .last_error = th_last_error,
    .call = th_call,
    .split = cg_threads_split,
};

const cg_transport_ops *cg_threads_ops(void) { return &threads_ops; }
