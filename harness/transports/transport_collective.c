/* transport_collective.c — the one place a collective kind turns into
 * transport calls (transport.h cg_tp_collective): the entry of its name, or
 * the kind's own run (collectives.h), which calls other kinds' entries
 * through the handle it is given. */
#include "transport.h"

/* A kind with a run of its own (collectives.h) calls the others through here. */
typedef struct via_handle {
    cg_tp *tp;
    cg_tp_site site;
} via_handle;

static int via_call(const cg_coll_via *via, cg_coll_kind k, const cg_coll_io *io)
{
    const via_handle *h = via->self;
    if (cg_collective_of(k) && cg_collective_of(k)->run)
        return cg_error(&h->tp->st, "%s: a kind's run calls only kinds the transport carries itself",
                        cg_coll_name(k));
    return cg_tp_collective(h->tp, h->site, k, (cgt_redop)io->op, io->root, io->send, io->recv, io->n, io->counts,
                            io->dt);
}

int cg_tp_collective(cg_tp *tp, cg_tp_site site, cg_coll_kind k, cgt_redop op, int root, const void *send, void *recv,
                     size_t n, const cg_coll_counts *c, cg_dtype dt)
{
    const cg_collective *d = cg_collective_of(k);
    if (d && d->run) {
        via_handle h = {tp, site};
        const cg_coll_via via = {&h, tp->rank, tp->world, via_call};
        const cg_coll_io io = {(cg_redop)op, root, send, recv, n, c, dt};
        return d->run(&via, &io);
    }
    switch (k) {
    case CG_C_ALL_REDUCE: return cg_tp_all_reduce(tp, site, send, recv, n, dt, op);
    case CG_C_ALL_GATHER: return cg_tp_all_gather(tp, site, send, recv, c->inputs, dt);
    case CG_C_REDUCE_SCATTER: return cg_tp_reduce_scatter(tp, site, send, recv, c->blocks, dt, op);
    case CG_C_BROADCAST: return cg_tp_broadcast(tp, site, recv, n, dt, root);
    case CG_C_REDUCE: return cg_tp_reduce(tp, site, send, recv, n, dt, op, root);
    case CG_C_GATHER: return cg_tp_gather(tp, site, send, recv, c->inputs, dt, root);
    case CG_C_SCATTER: return cg_tp_scatter(tp, site, send, recv, c->blocks, dt, root);
    case CG_C_ALL_TO_ALL: return cg_tp_all_to_all(tp, site, send, c->blocks, recv, c->recv, dt);
    default: break;
    }
    cg_error(&tp->st, "%s is not a collective the transport runs", cg_coll_name(k));
    return -1;
}
