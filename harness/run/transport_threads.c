/* transport_threads.c — the in-process transport (transport_threads.h):
 * shared state, the barrier that can be aborted, and every entry of the
 * table. The runner that drives W threads through a case is threads_run.c. */
#include "transport_threads_internal.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- shared state ----------------------------------------------------------- */

int cg_threads_init(cg_threads *sh, int world)
{
    memset(sh, 0, sizeof *sh);
    sh->world = world;
    if (pthread_mutex_init(&sh->mu, NULL) != 0)
        return -1;
    if (pthread_cond_init(&sh->cv, NULL) != 0) {
        pthread_mutex_destroy(&sh->mu);
        return -1;
    }
    return 0;
}

void cg_threads_destroy(cg_threads *sh)
{
    for (int i = 0; i < sh->nchildren; i++) {
        cg_threads_destroy(sh->children[i]);
        free(sh->children[i]);
    }
    free(sh->children);
    for (int s = 0; s < sh->world; s++)
        for (int d = 0; d < sh->world; d++)
            while (sh->box[s][d]) {
                cg_threads_msg *m = sh->box[s][d];
                sh->box[s][d] = m->next;
                free(m);
            }
    pthread_cond_destroy(&sh->cv);
    pthread_mutex_destroy(&sh->mu);
}

/* The first reason wins; every waiter wakes up. Mutex held. */
static void abort_locked(cg_threads *sh, const char *why)
{
    if (!sh->aborted) {
        sh->aborted = true;
        snprintf(sh->why, sizeof sh->why, "%s", why);
    }
    pthread_cond_broadcast(&sh->cv);
}

void cg_threads_abort(cg_threads *sh, const char *fmt, ...)
{
    char why[sizeof sh->why];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&sh->mu);
    abort_locked(sh, why);
    int n = sh->nchildren;
    pthread_mutex_unlock(&sh->mu);
    for (int i = 0; i < n; i++) /* a group's waiters wake too */
        cg_threads_abort(sh->children[i], "%s", why);
}

void cg_threads_finished(cg_threads *sh, int rank)
{
    pthread_mutex_lock(&sh->mu);
    sh->finished[rank] = true;
    sh->nfinished++;
    pthread_cond_broadcast(&sh->cv);
    pthread_mutex_unlock(&sh->mu);
}

/* Wait on the shared condition with the mutex held; false once the wait
 * limit has passed (the caller then aborts). */
static bool wait_locked(cg_threads *sh, const struct timespec *until)
{
    return pthread_cond_timedwait(&sh->cv, &sh->mu, until) != ETIMEDOUT;
}

static struct timespec deadline(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += CG_THREADS_WAIT_LIMIT;
    return ts;
}

/* Every rank meets here. -1 with t->st once aborted, or when a rank that
 * will never come (it finished its program) is missing. A publishing
 * barrier that completes makes every rank a reader of the others' buffers
 * (leave). */
static int meet(cg_transport *t, bool publishing)
{
    cg_threads *sh = t->sh;
    struct timespec until = deadline();
    pthread_mutex_lock(&sh->mu);
    unsigned long gen = sh->generation;
    if (!sh->aborted && ++sh->arrived == sh->world) {
        sh->arrived = 0;
        sh->generation++;
        if (publishing)
            sh->readers = sh->world;
        pthread_cond_broadcast(&sh->cv);
    }
    while (!sh->aborted && sh->generation == gen && sh->nfinished == 0)
        if (!wait_locked(sh, &until))
            abort_locked(sh, "the ranks waited for each other longer than the limit (CG_THREADS_WAIT_LIMIT)");
    bool ok = sh->generation != gen; /* a completed barrier stands, even if an abort follows */
    if (!ok && !sh->aborted) {
        int gone = 0;
        while (!sh->finished[gone])
            gone++;
        cg_error(&t->st, "rank %d finished its program while rank %d waits for it", gone, t->rank);
    } else if (!ok) {
        cg_error(&t->st, "%s", sh->why);
    }
    pthread_mutex_unlock(&sh->mu);
    return ok ? 0 : -1;
}

static int barrier(cg_transport *t) { return meet(t, false); }

/* The end of a collective: this rank has read what it needed of the others'
 * published buffers, then meets them. An abort ends that meeting early, but
 * a rank still leaves only once every rank has read (a rank that returns
 * may free its buffers: the program fails and its graph goes), so a slow
 * reader never reads freed memory. */
static int leave(cg_transport *t)
{
    cg_threads *sh = t->sh;
    pthread_mutex_lock(&sh->mu);
    if (sh->readers > 0)
        sh->readers--;
    pthread_cond_broadcast(&sh->cv);
    pthread_mutex_unlock(&sh->mu);
    int rc = barrier(t);
    struct timespec until = deadline();
    pthread_mutex_lock(&sh->mu);
    while (sh->readers > 0)
        if (!wait_locked(sh, &until)) {
            abort_locked(sh, "the ranks waited for each other longer than the limit (CG_THREADS_WAIT_LIMIT)");
            break;
        }
    pthread_mutex_unlock(&sh->mu);
    return rc;
}

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
    return meet(t, true);
}

static int finish(cg_transport *t, exchange *x, void *recv)
{
    int rc = leave(t);
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
                           : (publish(t, send, NULL, NULL) < 0 ? -1 : leave(t));
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

static int th_send(cg_transport *t, const void *buf, size_t count, cgt_dtype dt, int peer, int tag)
{
    size_t bytes = count * cg_dtype_size((cg_dtype)dt);
    cg_threads_msg *m = malloc(sizeof *m + bytes + 1);
    if (!m)
        return cg_error(&t->st, "out of memory for a %zu-byte message", bytes);
    m->next = NULL;
    m->tag = tag;
    m->bytes = bytes;
    memcpy(m->data, buf, bytes);
    cg_threads *sh = t->sh;
    pthread_mutex_lock(&sh->mu);
    cg_threads_msg **end = &sh->box[t->rank][peer];
    while (*end)
        end = &(*end)->next;
    *end = m;
    pthread_cond_broadcast(&sh->cv);
    pthread_mutex_unlock(&sh->mu);
    return 0;
}

static int th_recv(cg_transport *t, void *buf, size_t count, cgt_dtype dt, int peer, int tag)
{
    cg_threads *sh = t->sh;
    size_t bytes = count * cg_dtype_size((cg_dtype)dt);
    struct timespec until = deadline();
    pthread_mutex_lock(&sh->mu);
    cg_threads_msg **at = NULL;
    /* The message, or its sender's end: another rank's failure (an abort)
     * does not end this wait, since the peer may still send (each rank then
     * fails where its own program does, as its own process would). */
    for (;;) {
        for (at = &sh->box[peer][t->rank]; *at && (*at)->tag != tag; at = &(*at)->next)
            ;
        if (*at || sh->finished[peer])
            break;
        if (!wait_locked(sh, &until)) {
            abort_locked(sh, "a recv waited longer than the limit (CG_THREADS_WAIT_LIMIT)");
            break;
        }
    }
    cg_threads_msg *m = *at;
    int rc = 0;
    if (m && m->bytes == bytes) {
        *at = m->next;
        memcpy(buf, m->data, bytes);
        free(m);
    } else if (m) {
        rc = cg_error(&t->st, "rank %d sent %zu bytes with tag %d, rank %d expects %zu", peer,
                      m->bytes, tag, t->rank, bytes);
    } else if (sh->aborted) {
        rc = cg_error(&t->st, "%s", sh->why);
    } else {
        rc = cg_error(&t->st, "rank %d finished its program without sending tag %d to rank %d",
                      peer, tag, t->rank);
    }
    pthread_mutex_unlock(&sh->mu);
    return rc;
}

/* MPI_Comm_split over the threads: every rank posts its color; the lowest
 * rank of each color makes the group's state; each member then joins it at
 * its place among the members (by key, then rank). Three barriers, so the
 * colors and the made states are read before the next split reuses them. */
static cg_transport *th_split(cg_transport *t, int color, int key, const char **err)
{
    cg_threads *sh = t->sh;
    *err = NULL;
    pthread_mutex_lock(&sh->mu);
    sh->colors[t->rank] = color;
    sh->made[t->rank] = NULL;
    pthread_mutex_unlock(&sh->mu);
    if (barrier(t) != 0)
        return *err = "a rank failed before the split", NULL;
    int lowest = -1, n = 0, me = 0;
    for (int r = 0; r < sh->world; r++)
        if (color >= 0 && sh->colors[r] == color) {
            if (lowest < 0)
                lowest = r;
            me += r < t->rank;
            n++;
        }
    (void)key;               /* the callers' key is the rank: member order is rank order */
    if (lowest == t->rank) { /* a member that finds no state fails below */
        cg_threads *g = calloc(1, sizeof *g);
        pthread_mutex_lock(&sh->mu);
        cg_threads **kids =
            g ? realloc(sh->children, (size_t)(sh->nchildren + 1) * sizeof *kids) : NULL;
        if (kids)
            sh->children = kids;
        if (kids && cg_threads_init(g, n) == 0) {
            g->misorder = sh->misorder;
            sh->children[sh->nchildren++] = g;
            sh->made[t->rank] = g;
        } else {
            free(g);
        }
        pthread_mutex_unlock(&sh->mu);
    }
    int rc = barrier(t);
    cg_threads *g = color >= 0 && lowest >= 0 ? sh->made[lowest] : NULL;
    if (rc != 0 || barrier(t) != 0)
        return *err = "a rank failed during the split", NULL;
    if (color < 0)
        return NULL;
    cg_transport *mine = g ? calloc(1, sizeof *mine) : NULL;
    if (!mine)
        return *err = "out of memory for a process group", NULL;
    *mine = (cg_transport){.sh = g, .rank = me, .split = true};
    return mine;
}

static int th_barrier(cg_transport *t) { return barrier(t); }
static int th_rank(const cg_transport *t) { return t->rank; }
static int th_world(const cg_transport *t) { return t->sh->world; }
static const char *th_last_error(const cg_transport *t) { return t->st.msg; }
/* The runner's own instances live in its arrays; a group's was malloc'd by
 * th_split, and leaving it is this rank finishing there (its state is the
 * parent's to free). */
static void th_destroy(cg_transport *t)
{
    if (!t || !t->split)
        return;
    cg_threads_finished(t->sh, t->rank);
    free(t);
}

static const cg_transport_ops threads_ops = {
    .abi_version = CG_TRANSPORT_ABI_VERSION,
    .name = "threads",
    .version = "1",
    .caps = CGT_CAP_HOST | CGT_CAP_HALF,
    .create = NULL, /* instances are made by the runner (threads_run.c), never over MPI */
    .destroy = th_destroy,
    .rank = th_rank,
    .world = th_world,
    .last_error = th_last_error,
    .all_reduce = th_all_reduce,
    .all_gather = th_all_gather,
    .reduce_scatter = th_reduce_scatter,
    .broadcast = th_broadcast,
    .reduce = th_reduce,
    .gather = th_gather,
    .scatter = th_scatter,
    .all_to_all = th_all_to_all,
    .send = th_send,
    .recv = th_recv,
    .barrier = th_barrier,
    .split = th_split,
};

const cg_transport_ops *cg_threads_ops(void) { return &threads_ops; }
