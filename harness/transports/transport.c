/* transport.c — the tool's handle on a transport (transport.h): opening a
 * built-in or plugin transport, and the cg_tp_* wrappers every rule set calls.
 *
 * Each wrapper (1) counts the call and its bytes, (2) calls the status hook
 * before and after, and (3) turns a failure into "<entry> #<seq>: <message>".
 *
 * bytes[e] adds, per call, (elements this rank sends + elements it receives)
 * x element size, counted from the buffers handed to the entry, not from
 * what goes over the wire (that depends on the library's algorithm):
 *   all_reduce      count + count
 *   all_gather      counts[rank] + sum(counts)
 *   reduce_scatter  sum(counts) + counts[rank]
 *   broadcast       count (the root sends it, the others receive it)
 *   reduce          count, + count more at the root
 *   gather          counts[rank], + sum(counts) more at the root
 *   scatter         counts[rank], + sum(counts) more at the root
 *   all_to_all      sum(sendcounts) + sum(recvcounts)
 *   send, recv      count
 *   barrier         0
 * Calls and bytes are counted when the call is issued, so a call that fails
 * or never returns is counted too. */
#include "transport.h"

#include "gpu_module.h"
#include "plugin.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cg_tp_watch(cg_tp *tp, cg_tp_watcher w)
{
    CG_CHECK(tp->nwatchers < CG_TP_MAX_WATCHERS, &tp->st, "at most %d watchers stack on a transport handle",
             CG_TP_MAX_WATCHERS);
    tp->watchers[tp->nwatchers++] = w;
    return 0;
}

static bool is_collective(cg_tp_entry e) { return e != CGT_SEND && e != CGT_RECV && e != CGT_BARRIER; }

/* The call as the watchers see it: `count` is the elements over every
 * rank's blocks (ragged gathers: their sum), what every rank must agree on. */
static cg_tp_fingerprint fingerprint(cg_tp *tp, cg_tp_site site, cg_tp_entry e, cg_dtype dt, uint64_t count, int root)
{
    int ordinal = is_collective(e) ? tp->ncoll++ : tp->ncoll - 1;
    return (cg_tp_fingerprint){e, dt, count, root, ordinal, site.seq, site.backward};
}

const char *cg_tp_entry_name(cg_tp_entry e)
{
    static const char *const names[CGT_NCALLS] = {
        "all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "gather",
        "scatter",    "all_to_all", "send",           "recv",      "barrier"};
    return (unsigned)e < CGT_NCALLS ? names[e] : "?";
}

cgt_dtype cg_tp_dtype(cg_dtype dt)
{
    switch (dt) {
    case CG_F32: return CGT_F32;
    case CG_F64: return CGT_F64;
    case CG_BF16: return CGT_BF16;
    case CG_F16: return CGT_F16;
    }
    return (cgt_dtype)dt;
}

/* ---- opening -------------------------------------------------------------- */

/* The first entry a table leaves NULL, or NULL when it is complete. */
static const char *missing_entry(const cg_transport_ops *o)
{
#define NEED(f)                                                                                   \
    if (!o->f)                                                                                    \
        return #f;
    NEED(name) NEED(create) NEED(destroy) NEED(rank) NEED(world) NEED(last_error) NEED(call)
#undef NEED
    return NULL;
}

/* The plugin stays loaded once accepted: its table and name/version strings
 * live in it, and reports may print them after cg_tp_close. */
const cg_transport_ops *cg_transport_load(const char *path, cg_status *st)
{
    void *lib;
    cg_plugin_fn fn = cg_plugin_open(path, CG_TRANSPORT_ENTRY, "transport", &lib, st);
    if (!fn)
        return NULL;
    const cg_transport_ops *ops = ((cg_transport_entry_fn)fn)();
    const char *missing = NULL;
    if (!ops)
        cg_error(st, "%s: %s() returned NULL", path, CG_TRANSPORT_ENTRY);
    else if (ops->abi_version != CG_TRANSPORT_ABI_VERSION)
        cg_error(
            st,
            "%s: transport ABI version %d, this collgrad-check needs %d: rebuild it against this "
            "collgrad_transport.h (ABI 3 replaces the entry per collective with one entry, call, "
            "taking a cgt_call; ABI 2 added split, for process groups: MPI_Comm_split's contract, "
            "or NULL for a transport without groups)",
            path, ops->abi_version, CG_TRANSPORT_ABI_VERSION);
    else if ((missing = missing_entry(ops)) != NULL)
        cg_error(st, "%s: transport table has no '%s'", path, missing);
    else
        return ops;
    cg_plugin_close(lib);
    return NULL;
}

int cg_nccl_missing(cg_status *st)
{
#ifdef HAVE_CUDA
    return cg_error(st, "nccl: %s", cg_gpu_module_error());
#else
    return cg_error(st, "%s", CG_NCCL_NOT_BUILT);
#endif
}

const cg_transport_ops *collgrad_builtin_transport(const char *name)
{
    if (name && strcmp(name, "mpi") == 0)
        return cg_transport_mpi();
#ifdef HAVE_CUDA
    if (name && strcmp(name, "nccl") == 0)
        return cg_transport_nccl();
#endif
    return NULL;
}

int cg_tp_open(cg_tp *tp, const char *name, cg_status *st)
{
    memset(tp, 0, sizeof *tp);
    const cg_transport_ops *ops = collgrad_builtin_transport(name);
    if (!ops && strcmp(name, "nccl") == 0)
        cg_nccl_missing(&tp->st);
    else if (!ops && cg_is_plugin_path(name))
        ops = cg_transport_load(name, &tp->st);
    else if (!ops)
        cg_error(&tp->st, "unknown transport '%s' (built in: mpi)", name);
    if (ops) {
        const char *why = NULL;
        tp->inst = ops->create(&why);
        if (tp->inst) {
            tp->ops = ops;
            if (strcmp(name, "mpi") == 0)
                tp->flush_sends = cg_mpi_flush_sends;
#ifdef HAVE_CUDA
            else if (strcmp(name, "nccl") == 0) /* no module load for mpi */
                tp->flush_sends = cgn_flush_sends;
#endif
            if (tp->flush_sends) {
                tp->holder = tp->inst;
                tp->holder_ops = ops;
            }
            tp->rank = ops->rank(tp->inst);
            tp->world = ops->world(tp->inst);
            return 0;
        }
        cg_error(&tp->st, "%s: %s", name, why ? why : "create failed");
    }
    if (st)
        *st = tp->st; /* the handle is not open: the caller may not keep it */
    return -1;
}

int cg_tp_settle(cg_tp *tp)
{
    if (tp->flush_sends && tp->flush_sends(tp->holder) != 0) {
        cg_error(&tp->st, "%s", tp->holder_ops->last_error(tp->holder));
        return -1;
    }
    return 0;
}

void cg_tp_close(cg_tp *tp)
{
    if (tp->ops && tp->inst)
        tp->ops->destroy(tp->inst);
    tp->inst = NULL;
}

int cg_tp_split(cg_tp *tp, int color, int key, cg_tp **out)
{
    *out = NULL;
    if (!tp->ops->split)
        return cg_error(&tp->st,
                        "transport '%s' has no process groups (its table leaves split NULL)",
                        tp->ops->name);
    /* the watchers first, in their order on every rank: they may split too */
    cg_tp_watcher follow[CG_TP_MAX_WATCHERS];
    int nfollow = 0;
    for (int i = 0; i < tp->nwatchers; i++) {
        const cg_tp_watcher *w = &tp->watchers[i];
        cg_tp_watcher child = {0};
        if (w->split && w->split(w->self, tp, color, key, &child) != 0) {
            for (int k = 0; k < nfollow; k++)
                if (follow[k].close)
                    follow[k].close(follow[k].self);
            return -1;
        }
        if (child.before || child.after)
            follow[nfollow++] = child;
    }
    const char *why = NULL;
    cg_transport *inst = tp->ops->split(tp->inst, color, key, &why);
    cg_tp *g = inst ? calloc(1, sizeof *g) : NULL;
    if (!g) {
        for (int k = 0; k < nfollow; k++)
            if (follow[k].close)
                follow[k].close(follow[k].self);
        if (inst)
            tp->ops->destroy(inst);
        if (inst || why)
            return inst ? cg_error_infra(&tp->st, "%s: split: out of memory", tp->ops->name)
                        : cg_error(&tp->st, "%s: split: %s", tp->ops->name, why);
        return 0; /* not a member */
    }
    g->ops = tp->ops;
    g->inst = inst;
    g->rank = tp->ops->rank(inst);
    g->world = tp->ops->world(inst);
    memcpy(g->watchers, follow,
           (size_t)nfollow * sizeof *follow); /* the board, --check-sync, faults */
    g->nwatchers = nfollow;
    *out = g;
    return 0;
}

void cg_tp_free_split(cg_tp *g)
{
    if (!g)
        return;
    for (int i = 0; i < g->nwatchers; i++)
        if (g->watchers[i].close)
            g->watchers[i].close(g->watchers[i].self);
    cg_tp_close(g);
    free(g);
}

/* ---- the wrappers --------------------------------------------------------- */

static uint64_t sum_counts(const size_t *counts, int world)
{
    uint64_t s = 0;
    for (int k = 0; counts && k < world; k++)
        s += counts[k];
    return s;
}

/* What every rank must agree on (the elements over every rank's blocks:
 * ragged gathers, their sum) and what this rank hands to or takes from the
 * call (bytes[], the rule at the top), in elements. */
static void sizes(const cg_tp *tp, const cgt_call *c, uint64_t *agreed, uint64_t *mine)
{
    uint64_t all = sum_counts(c->counts, tp->world), own = c->counts ? c->counts[tp->rank] : 0;
    bool root = tp->rank == c->root;
    switch (c->kind) {
    case CGT_ALL_REDUCE: *agreed = c->count, *mine = 2 * (uint64_t)c->count; return;
    case CGT_ALL_GATHER:
    case CGT_REDUCE_SCATTER: *agreed = all, *mine = own + all; return;
    case CGT_REDUCE: *agreed = c->count, *mine = (uint64_t)c->count * (root ? 2 : 1); return;
    case CGT_GATHER:
    case CGT_SCATTER: *agreed = all, *mine = own + (root ? all : 0); return;
    case CGT_ALL_TO_ALL: /* send counts are local: ragged ranks differ */
        *agreed = 0, *mine = all + sum_counts(c->recvcounts, tp->world);
        return;
    case CGT_BROADCAST:
    case CGT_SEND:
    case CGT_RECV: *agreed = *mine = c->count; return;
    default: *agreed = *mine = 0; return; /* the barrier */
    }
}

static bool has_root(cgt_kind k) { return k == CGT_BROADCAST || k == CGT_REDUCE || k == CGT_GATHER || k == CGT_SCATTER; }

/* Refuses a half dtype the transport does not carry; else counts the call
 * and shows it to the watchers, any of which may refuse it (the ones that saw
 * it already then see it end). 0 when the transport may be called. */
static int enter(cg_tp *tp, const cg_tp_fingerprint *fp, uint64_t elems)
{
    cg_tp_entry e = fp->entry;
    cg_dtype dt = (cg_dtype)fp->dtype;
    if ((dt == CG_BF16 || dt == CG_F16) && !(tp->ops->caps & CGT_CAP_HALF))
        return cg_error(&tp->st, "%s #%d: transport '%s' does not support %s", cg_tp_entry_name(e), fp->seq,
                        tp->ops->name, cg_dtype_name(dt));
    tp->calls[e]++;
    tp->bytes[e] += elems * cg_dtype_size(dt);
    for (int i = 0; i < tp->nwatchers; i++) {
        const cg_tp_watcher *w = &tp->watchers[i];
        if (w->before && w->before(w->self, tp, fp) != 0) {
            for (int k = i - 1; k >= 0; k--)
                if (tp->watchers[k].after)
                    tp->watchers[k].after(tp->watchers[k].self, tp, fp, -1);
            return -1;
        }
    }
    return 0;
}

static int leave(cg_tp *tp, const cg_tp_fingerprint *fp, int rc)
{
    for (int i = tp->nwatchers - 1; i >= 0; i--)
        if (tp->watchers[i].after)
            tp->watchers[i].after(tp->watchers[i].self, tp, fp, rc);
    if (rc == 0)
        return 0;
    const char *why = tp->ops->last_error(tp->inst);
    return cg_error(&tp->st, "%s #%d: %s", cg_tp_entry_name(fp->entry), fp->seq,
                    why && why[0] ? why : "failed (the transport gave no message)");
}

/* Every call: counted, watched, then handed to the transport's one entry. */
static int issue(cg_tp *tp, cg_tp_site site, cg_dtype dt, cgt_call c)
{
    uint64_t agreed, mine;
    c.dtype = cg_tp_dtype(dt);
    sizes(tp, &c, &agreed, &mine);
    cg_tp_fingerprint fp = fingerprint(tp, site, c.kind, dt, agreed, has_root(c.kind) ? c.root : -1);
    if (enter(tp, &fp, mine))
        return -1;
    return leave(tp, &fp, tp->ops->call(tp->inst, &c));
}

int cg_tp_all_reduce(cg_tp *tp, cg_tp_site site, const void *send, void *recv, size_t count, cg_dtype dt,
                     cgt_redop op)
{
    return issue(tp, site, dt, (cgt_call){.kind = CGT_ALL_REDUCE, .send = send, .recv = recv, .count = count, .op = op});
}

int cg_tp_all_gather(cg_tp *tp, cg_tp_site site, const void *send, void *recv, const size_t *counts, cg_dtype dt)
{
    return issue(tp, site, dt, (cgt_call){.kind = CGT_ALL_GATHER, .send = send, .recv = recv, .counts = counts});
}

int cg_tp_reduce_scatter(cg_tp *tp, cg_tp_site site, const void *send, void *recv, const size_t *counts, cg_dtype dt,
                         cgt_redop op)
{
    return issue(tp, site, dt,
                 (cgt_call){.kind = CGT_REDUCE_SCATTER, .send = send, .recv = recv, .counts = counts, .op = op});
}

int cg_tp_broadcast(cg_tp *tp, cg_tp_site site, void *buf, size_t count, cg_dtype dt, int root)
{
    return issue(tp, site, dt, (cgt_call){.kind = CGT_BROADCAST, .recv = buf, .count = count, .root = root});
}

int cg_tp_reduce(cg_tp *tp, cg_tp_site site, const void *send, void *recv, size_t count, cg_dtype dt, cgt_redop op,
                 int root)
{
    return issue(tp, site, dt,
                 (cgt_call){.kind = CGT_REDUCE, .send = send, .recv = recv, .count = count, .op = op, .root = root});
}

int cg_tp_gather(cg_tp *tp, cg_tp_site site, const void *send, void *recv, const size_t *counts, cg_dtype dt, int root)
{
    return issue(tp, site, dt, (cgt_call){.kind = CGT_GATHER, .send = send, .recv = recv, .counts = counts, .root = root});
}

int cg_tp_scatter(cg_tp *tp, cg_tp_site site, const void *send, void *recv, const size_t *counts, cg_dtype dt, int root)
{
    return issue(tp, site, dt, (cgt_call){.kind = CGT_SCATTER, .send = send, .recv = recv, .counts = counts, .root = root});
}

int cg_tp_all_to_all(cg_tp *tp, cg_tp_site site, const void *send, const size_t *sendcounts, void *recv,
                     const size_t *recvcounts, cg_dtype dt)
{
    return issue(tp, site, dt,
                 (cgt_call){.kind = CGT_ALL_TO_ALL, .send = send, .recv = recv, .counts = sendcounts,
                            .recvcounts = recvcounts});
}

int cg_tp_send(cg_tp *tp, cg_tp_site site, const void *buf, size_t count, cg_dtype dt, int peer, int tag)
{
    return issue(tp, site, dt, (cgt_call){.kind = CGT_SEND, .send = buf, .count = count, .peer = peer, .tag = tag});
}

int cg_tp_recv(cg_tp *tp, cg_tp_site site, void *buf, size_t count, cg_dtype dt, int peer, int tag)
{
    return issue(tp, site, dt, (cgt_call){.kind = CGT_RECV, .recv = buf, .count = count, .peer = peer, .tag = tag});
}

int cg_tp_barrier(cg_tp *tp, cg_tp_site site) { return issue(tp, site, CG_F32, (cgt_call){.kind = CGT_BARRIER}); }
