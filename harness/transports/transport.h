/* transport.h — the tool's handle on a transport (collgrad_transport.h).
 *
 * Every call goes through these wrappers, which (1) count calls and bytes
 * per entry, (2) show the call to the watchers stacked on the handle (the
 * status board's "rank R is in all_reduce #seq (backward)", --check-sync's
 * cross-rank comparison), and (3) turn a failure into a message naming the
 * entry. Rule sets call only these. Data faults (transport_fault.h) wrap the
 * transport table itself, so they stack under the watchers on any transport.
 *
 * Ownership: cg_tp_open returns a handle the caller closes with cg_tp_close. */
#ifndef CG_TRANSPORT_H
#define CG_TRANSPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "collgrad_transport.h"
#include "plan.h"
#include "status.h"
#include "tensor.h"

/* A call of the transport table (collgrad_transport.h's cgt_kind): what
 * the tool counts and watches. A collective kind is carried by one or more
 * (transport_collective.c); the barrier no program calls, but the tool does. */
typedef cgt_kind cg_tp_entry;

const char *cg_tp_entry_name(cg_tp_entry e); /* "all_reduce", ..., "barrier" */

/* What every rank must agree on before a collective (--check-sync). */
typedef struct cg_tp_fingerprint {
    int entry;          /* cg_tp_entry */
    int dtype;          /* cg_dtype */
    uint64_t count;     /* elements over all ranks' blocks (ragged gathers: their sum) */
    int root;           /* -1 when none */
    int ordinal;        /* this rank's n-th collective in the job */
    int seq;            /* the program's communication call it serves */
    int backward;
} cg_tp_fingerprint;

typedef struct cg_tp cg_tp;

/* Which program call a transport call serves (its messages, the watchers,
 * --check-sync): an argument of every call, never state on the handle. */
typedef struct cg_tp_site {
    int seq;       /* the program's communication call (cg_coll.seq) */
    bool backward; /* in its backward pass */
} cg_tp_site;

/* A watcher stacked on a handle, a decorator of every call that reaches the
 * transport (the status board, --check-sync's comparison): `before` sees the
 * call's fingerprint once it is counted and may refuse it (-1 with tp->st),
 * `after` sees it when it returned (rc 0 or -1). Watchers run in the order
 * they were pushed, `after` in reverse; either may be NULL. The ordinal of
 * a send, recv or barrier is the last collective's: they are not counted. */
typedef struct cg_tp_watcher {
    int (*before)(void *self, cg_tp *tp, const cg_tp_fingerprint *call);
    void (*after)(void *self, cg_tp *tp, const cg_tp_fingerprint *call, int rc);
    void *self;
    /* A process group's handle is made from the watched one (cg_tp_split):
     * called on every rank of the parent in the same order, member or not
     * (it may split a communicator of its own: collective), with the
     * split's color and key. *child is what to stack on a member's new
     * handle (NULL entries: nothing). 0, or -1 with tp->st. NULL: the
     * watcher does not follow into groups. */
    int (*split)(void *self, cg_tp *tp, int color, int key, struct cg_tp_watcher *child);
    void (*close)(void *self); /* a group handle's watcher goes with it; may be NULL */
} cg_tp_watcher;
#define CG_TP_MAX_WATCHERS 4

struct cg_tp {
    const cg_transport_ops *ops;
    cg_transport *inst;
    int rank, world;
    uint64_t calls[CGT_NCALLS];
    uint64_t bytes[CGT_NCALLS];   /* bytes this rank handed to or received from the entry
                                       (the rule per entry: transport.c) */
    int ncoll;                      /* collectives issued in this job (reset per job) */
    cg_tp_watcher watchers[CG_TP_MAX_WATCHERS]; /* cg_tp_watch; a private replay has none */
    int nwatchers;
    /* The built-in mpi and nccl instances hold sends back (transport_mpi_p2p.c,
     * transport_nccl_p2p.c) until cg_tp_settle: the instance cg_tp_open made
     * (inst may since be a wrapper: --inject), its table and its flush.
     * NULL for plugins and for group handles (whose destroy completes them). */
    cg_transport *holder;
    const cg_transport_ops *holder_ops;
    int (*flush_sends)(cg_transport *t);
    cg_status st;                   /* the last call's error: st.msg names the entry and seq */
};

/* The built-in transport named `name` ("mpi", "nccl"), or a plugin path ("./libx.so").
 * 0, or -1 with st. MPI must be initialized. */
int cg_tp_open(cg_tp *tp, const char *name, cg_status *st);
/* Completes what the transport may still hold back (the built-in nccl's
 * sends, which otherwise go out with its next call; the built-in mpi's, in
 * flight from a copy): the worker calls it at the end of every program,
 * before results leave over MPI. 0, or -1 with tp->st.msg. A no-op for a
 * plugin (a plugin wrapping a built-in completes them at destroy). */
int cg_tp_settle(cg_tp *tp);
void cg_tp_close(cg_tp *tp);
/* A handle on a process group of tp's ranks (collgrad_transport.h's split):
 * collective over tp. *out is a malloc'd handle (cg_tp_free_split), or NULL
 * for a rank with color < 0. 0, or -1 with tp->st. */
int cg_tp_split(cg_tp *tp, int color, int key, cg_tp **out);
void cg_tp_free_split(cg_tp *g);
const cg_transport_ops *cg_transport_mpi(void);
/* Load a transport plugin's table and check its ABI and entries (the plugin
 * stays loaded). NULL with st ("PATH: transport ABI version 7, ..."). */
const cg_transport_ops *cg_transport_load(const char *path, cg_status *st);
/* The built-in "nccl" transport (transport_nccl.c), present only in a build
 * with CUDA and NCCL (HAVE_CUDA), in the GPU module: NULL when it cannot be
 * loaded (cg_nccl_missing says why); cg_nccl_available is its pre-check: 0 when
 * a CUDA device is visible, else -1 with st "nccl: no CUDA device is visible
 * (cudaGetDeviceCount: ...)". */
const cg_transport_ops *cg_transport_nccl(void);
int cg_nccl_available(cg_status *st);
/* Issues the nccl sends held back since its last call (one NCCL group) and
 * waits for them; 0, or -1 with the instance's error. */
int cgn_flush_sends(cg_transport *t);
/* Waits for the built-in mpi transport's sends still in flight and frees
 * their copies; 0, or -1 with the instance's error. */
int cg_mpi_flush_sends(cg_transport *t);
#define CG_NCCL_NOT_BUILT "nccl: this collgrad-check was built without CUDA/NCCL"
/* Why "nccl" has no table here: a build without CUDA, or the GPU module that
 * cannot be loaded (gpu_module.h). */
int cg_nccl_missing(cg_status *st); /* -1 */

cgt_dtype cg_tp_dtype(cg_dtype dt);

int cg_tp_all_reduce(cg_tp *tp, cg_tp_site site, const void *send, void *recv, size_t count, cg_dtype dt, cgt_redop op);
int cg_tp_all_gather(cg_tp *tp, cg_tp_site site, const void *send, void *recv, const size_t *counts, cg_dtype dt);
int cg_tp_reduce_scatter(cg_tp *tp, cg_tp_site site, const void *send, void *recv, const size_t *counts, cg_dtype dt,
                         cgt_redop op);
int cg_tp_broadcast(cg_tp *tp, cg_tp_site site, void *buf, size_t count, cg_dtype dt, int root);
int cg_tp_reduce(cg_tp *tp, cg_tp_site site, const void *send, void *recv, size_t count, cg_dtype dt, cgt_redop op,
                 int root);
int cg_tp_gather(cg_tp *tp, cg_tp_site site, const void *send, void *recv, const size_t *counts, cg_dtype dt, int root);
int cg_tp_scatter(cg_tp *tp, cg_tp_site site, const void *send, void *recv, const size_t *counts, cg_dtype dt, int root);
int cg_tp_all_to_all(cg_tp *tp, cg_tp_site site, const void *send, const size_t *sendcounts, void *recv,
                     const size_t *recvcounts, cg_dtype dt);
int cg_tp_send(cg_tp *tp, cg_tp_site site, const void *buf, size_t count, cg_dtype dt, int peer, int tag);
int cg_tp_recv(cg_tp *tp, cg_tp_site site, void *buf, size_t count, cg_dtype dt, int peer, int tag);
int cg_tp_barrier(cg_tp *tp, cg_tp_site site);

/* One collective of any kind: the transport entry kind k maps to, given the
 * counts that entry takes (counts as cg_plan_counts makes them; n, the
 * elements of same-shape kinds). send and recv as that entry says
 * (collgrad_transport.h); broadcast works in place on recv. 0, or -1 with
 * tp->st.msg. The one place a kind turns into a transport entry. */
int cg_tp_collective(cg_tp *tp, cg_tp_site site, cg_coll_kind k, cgt_redop op, int root, const void *send, void *recv,
                     size_t n, const cg_coll_counts *counts, cg_dtype dt);

/* Stack w on tp (the handle keeps a copy; w.self stays the caller's). 0,
 * or -1 with tp->st when CG_TP_MAX_WATCHERS are stacked already. */
int cg_tp_watch(cg_tp *tp, cg_tp_watcher w);


#endif
