/* transport_threads_sync.c — where the in-process transport's ranks meet:
 * the shared state (made and freed), the barrier that can be aborted (a wait limit, a rank
 * that finished, another's failure), buffered send/recv and MPI_Comm_split.
 * The collectives built on them are transport_threads.c. */
#include "transport_threads_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

cg_threads *cg_threads_new(int world, cg_misorder m, cg_status *st)
{
    cg_threads *sh = calloc(1, sizeof *sh);
    struct cg_transport *ends = calloc((size_t)world, sizeof *ends);
    if (!sh || !ends || cg_threads_init(sh, world) != 0) {
        free(sh);
        free(ends);
        cg_error_infra(st, "out of memory for %d threads", world);
        return NULL;
    }
    sh->misorder = m;
    sh->endpoints = ends;
    for (int r = 0; r < world; r++)
        ends[r] = (struct cg_transport){.sh = sh, .rank = r};
    return sh;
}

void cg_threads_free(cg_threads *sh)
{
    if (!sh)
        return;
    cg_threads_destroy(sh);
    free(sh->endpoints);
    free(sh);
}

void cg_threads_tp(cg_threads *sh, int rank, cg_tp *tp)
{
    memset(tp, 0, sizeof *tp);
    tp->ops = cg_threads_ops();
    tp->inst = &sh->endpoints[rank];
    tp->rank = rank;
    tp->world = sh->world;
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
int cg_threads_meet(cg_transport *t, bool publishing)
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

static int barrier(cg_transport *t) { return cg_threads_meet(t, false); }

/* The end of a collective: this rank has read what it needed of the others'
 * published buffers, then meets them. An abort ends that meeting early, but
 * a rank still leaves only once every rank has read (a rank that returns
 * may free its buffers: the program fails and its graph goes), so a slow
 * reader never reads freed memory. */
int cg_threads_leave(cg_transport *t)
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

int cg_threads_send(cg_transport *t, const void *buf, size_t count, cgt_dtype dt, int peer, int tag)
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

int cg_threads_recv(cg_transport *t, void *buf, size_t count, cgt_dtype dt, int peer, int tag)
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
cg_transport *cg_threads_split(cg_transport *t, int color, int key, const char **err)
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
