/* transport_threads_internal.h — the in-process transport's shared state,
 * shared by transport_threads.c (the table) and transport_threads_sync.c
 * (where the ranks meet). Not a public interface: transport_threads.h is. */
#ifndef CG_TRANSPORT_THREADS_INTERNAL_H
#define CG_TRANSPORT_THREADS_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>

#include "transport.h"
#include "transport_threads.h"

/* A buffered message from one rank to another, in send order. */
typedef struct cg_threads_msg {
    struct cg_threads_msg *next;
    int tag;
    size_t bytes;
    char data[];
} cg_threads_msg;

/* What a rank publishes for the collective the ranks are in. */
typedef struct cg_threads_slot {
    const void *send;
    const size_t *counts;  /* all_to_all: the elements it sends to each rank */
    const size_t *counts2; /* all_to_all: the elements it receives from each rank */
} cg_threads_slot;

struct cg_threads {
    int world;
    pthread_mutex_t mu;
    pthread_cond_t cv;        /* any change: an arrival, a message, an abort, a finish */
    int arrived;
    unsigned long generation; /* barriers completed */
    int readers;              /* ranks still reading the buffers of the collective under way (leave) */
    bool aborted;
    char why[384];            /* the first abort's reason */
    bool finished[CG_MAX_WORLD];
    int nfinished;
    cg_threads_slot slots[CG_MAX_WORLD];
    cg_threads_msg *box[CG_MAX_WORLD][CG_MAX_WORLD]; /* [from][to] */
    /* process groups (split): each rank's color while a split is under way,
     * the state its lowest-ranked member made for the others, and every
     * group made, owned here (freed with this state; aborted with it) */
    int colors[CG_MAX_WORLD];
    struct cg_threads *made[CG_MAX_WORLD];
    struct cg_threads **children;
    int nchildren;
    cg_misorder misorder; /* a hypothesis of the diagnosis: wrong rank order (groups inherit it) */
    struct cg_transport *endpoints; /* the world's: one instance per rank (cg_threads_new) */
};

/* One rank's instance of the transport. */
struct cg_transport {
    cg_threads *sh;
    int rank;
    bool split;   /* a process group's: malloc'd by th_split, freed by destroy */
    cg_status st; /* the last failure: what last_error says */
};

/* 0, or -1 when the mutex or condition cannot be made. */
int cg_threads_init(cg_threads *sh, int world);
void cg_threads_destroy(cg_threads *sh); /* frees undelivered messages and the groups */

/* ---- where the ranks meet (transport_threads_sync.c); each returns -1 with
 * t->st set on an abort, a wait past CG_THREADS_WAIT_LIMIT, or a missing rank */

/* Every rank meets here. A publishing meeting that completes makes every
 * rank a reader of the others' published buffers until cg_threads_leave. */
int cg_threads_meet(cg_transport *t, bool publishing);
/* The end of a collective: this rank is done reading; returns once every
 * rank is, so no rank frees a buffer another still reads. */
int cg_threads_leave(cg_transport *t);
/* Buffered point-to-point: send never waits; recv waits for the message
 * with `tag` from peer, or for peer to finish. */
int cg_threads_send(cg_transport *t, const void *buf, size_t count, cgt_dtype dt, int peer, int tag);
int cg_threads_recv(cg_transport *t, void *buf, size_t count, cgt_dtype dt, int peer, int tag);
/* The transport's split entry (MPI_Comm_split over the threads). */
cg_transport *cg_threads_split(cg_transport *t, int color, int key, const char **err);
const cg_transport_ops *cg_threads_ops(void);

#endif
