/* transport_threads.h — W ranks as W threads of one process: a transport
 * over shared memory (collgrad_transport.h's table).
 *
 * It serves the runs a diagnosis compares with (the emulations, re-run in the
 * judging process without MPI: harness/run/threads_run.h drives the threads).
 * Every collective publishes each rank's buffers, meets at a barrier,
 * computes its own output from the others' inputs into private memory, meets
 * again, and only then writes its output, so in-place calls are safe.
 * Reductions fold in rank order in double and round to the dtype at every
 * step, as the MPI transport's do. Sends are buffered (copied into the
 * receiver's mailbox).
 *
 * Failure: a rank whose program fails aborts the shared state
 * (cg_threads_abort), so ranks waiting in a collective for it return -1
 * ("rank R failed ...") instead of waiting forever; a rank that finished its
 * program (cg_threads_finished) likewise ends every wait for it. A recv waits
 * for its sender only (its message, or its end): the sender may still send
 * after another rank failed. A wait longer than CG_THREADS_WAIT_LIMIT
 * seconds aborts too.
 *
 * Ownership: cg_threads_new's state owns every rank's instance, message and
 * process group; cg_threads_free frees them, after every thread has left. */
#ifndef CG_TRANSPORT_THREADS_H
#define CG_TRANSPORT_THREADS_H

#include "transport.h"

#define CG_THREADS_WAIT_LIMIT 60

/* A transport that delivers a collective's results in the wrong rank order,
 * a hypothesis the diagnosis tests by re-running the case (the reference
 * rules) over it: rank r's reduce_scatter block, or all_gather's block r,
 * is rank from(r)'s instead, from(r) = W-1-r (shift < 0) or r + shift mod W.
 * Only between blocks of equal size. */
typedef enum { CG_MISORDER_NONE, CG_MISORDER_REDUCE_SCATTER, CG_MISORDER_ALL_GATHER } cg_misorder_kind;
typedef struct cg_misorder {
    cg_misorder_kind kind;
    int shift;
} cg_misorder;

/* The state W ranks share. */
typedef struct cg_threads cg_threads;

/* A world of `world` ranks over the transport, misordering as m says (groups
 * split from it inherit m). NULL with st when memory or a mutex is lacking. */
cg_threads *cg_threads_new(int world, cg_misorder m, cg_status *st);
void cg_threads_free(cg_threads *sh);

/* Rank's handle on the world: tp made over rank's instance (no watchers: a
 * private re-run has no status board and no sync check). */
void cg_threads_tp(cg_threads *sh, int rank, cg_tp *tp);

/* Wake every waiter with this reason (the first one is kept). */
void cg_threads_abort(cg_threads *sh, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* rank has left its program: waits that need it end. */
void cg_threads_finished(cg_threads *sh, int rank);

#endif
