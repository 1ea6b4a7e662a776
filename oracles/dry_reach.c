/* dry_reach.c — each rank's program replayed alone, with the real worker
 * wiring (rank_comm.c, reference rules) over a transport that moves nothing:
 * the values are meaningless but the graph is the rank's real autograd graph
 * (dry_reach.h). Backward calls only record their roots and the sends and
 * recvs on the tape; reachability is then a walk from the roots through node
 * inputs. Sends count as roots too, as in the design note's FAST mode: a
 * send's backward always waits for its gradient. */
#include "dry_reach.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd.h"
#include "interp.h"
#include "rank_run.h"

enum { MAX_EVENTS = CG_DRY_MAX_EVENTS };

/* ---- a transport that moves nothing -------------------------------------- */

/* Every call returns 0 and leaves its buffers alone: only shapes matter. */
static int dry_call(cg_transport *t, const cgt_call *c) { return 0; }

static const cg_transport_ops dry_ops = {
    .abi_version = CG_TRANSPORT_ABI_VERSION, .name = "dry", .version = "",
    .caps = CGT_CAP_HOST | CGT_CAP_HALF, .call = dry_call,
};

/* ---- one rank's graph and its backward events ---------------------------- */

typedef struct dry_rank {
    cg_tensor *roots[MAX_EVENTS]; /* roots[e]: this rank's root in backward event e (NULL: the rank does not
                                     call backward there, a statement of another rank's block) */
    int nevents;
    signed char *p2p;             /* p2p[e * (nseq + 1) + seq]: 1 when send/recv #seq is on the tape at event e */
    int nseq;
} dry_rank;

typedef struct dry_comm {
    cg_comm inner;
    dry_rank *rank;
    cg_rank_comm *w;
} dry_comm;

/* A process group, dry: the rank's handle is the dry table with its place
 * in the group (nothing to split: no call moves anything). */
static int dry_group(void *self, cg_graph *g, int id, const int *members, int n)
{
    dry_comm *d = self;
    cg_rank_comm *w = d->w;
    cg_tp **grown = realloc(w->groups, (size_t)(w->ngroups + 1) * sizeof *grown);
    if (!grown)
        return cg_error_infra(cg_graph_status(g), "out of memory for a process group");
    w->groups = grown;
    w->groups[w->ngroups] = NULL;
    for (int k = 0; k < n; k++)
        if (members[k] == w->rank) {
            cg_tp *h = calloc(1, sizeof *h);
            if (!h)
                return cg_error_infra(cg_graph_status(g), "out of memory for a process group");
            h->ops = &dry_ops;
            h->rank = k;
            h->world = n;
            w->groups[w->ngroups] = h;
        }
    (void)id;
    w->ngroups++;
    return 0;
}

static int dry_collective(void *self, cg_graph *g, const cg_coll *c, cg_tensor **in, cg_tensor **out)
{
    dry_comm *d = self;
    return d->inner.collective(d->inner.self, g, c, in, out);
}

static int dry_comm_send(void *self, cg_graph *g, const cg_coll *c, int slot, cg_tensor *t)
{
    dry_comm *d = self;
    return d->inner.send(d->inner.self, g, c, slot, t);
}

static cg_tensor *dry_comm_recv(void *self, cg_graph *g, const cg_coll *c, int slot)
{
    dry_comm *d = self;
    return d->inner.recv(d->inner.self, g, c, slot);
}

static int dry_backward(void *self, cg_graph *g, const cg_srcpos *pos, cg_tensor **roots)
{
    dry_comm *d = self;
    dry_rank *dr = d->rank;
    (void)pos;
    if (dr->nevents >= MAX_EVENTS)
        return 0;
    if (dr->p2p) /* the sends and recvs this event's backward runs: every one on the tape (they always run) */
        for (cg_node *n = cg_graph_tape(g); n; n = n->prev)
            if (n->always_run && (n->iarg[1] == CG_C_SEND || n->iarg[1] == CG_C_RECV) && n->iarg[0] >= 0 &&
                n->iarg[0] < dr->nseq)
                dr->p2p[(size_t)dr->nevents * ((size_t)dr->nseq + 1) + (size_t)n->iarg[0]] = 1;
    dr->roots[dr->nevents++] = roots[0];
    return 0;
}

static int dry_zero_grad(void *self, cg_graph *g) { return 0; }

/* Mark every node reachable from t through node inputs. */
static void reach(cg_tensor *t, cg_node **seen, int *nseen, int cap)
{
    if (!t || !t->node)
        return;
    for (int i = 0; i < *nseen; i++)
        if (seen[i] == t->node)
            return;
    if (*nseen == cap)
        return;
    seen[(*nseen)++] = t->node;
    for (int i = 0; i < t->node->nin; i++)
        reach(t->node->in[i], seen, nseen, cap);
}

static bool is_seen(cg_node *n, cg_node *const *seen, int nseen)
{
    for (int i = 0; i < nseen; i++)
        if (seen[i] == n)
            return true;
    return false;
}

/* Which comm calls one backward event's roots reach, from the tape of one dry
 * run: writes row[seq] = 1 reached, 0 present but unreached (-1 stays where
 * this rank has no such call). root NULL: no root, only FAST mode's sends. */
static void mark_reached(cg_graph *g, cg_tensor *root, signed char *row, int nseq, cg_node **seen, int cap)
{
    int nseen = 0;
    memset(row, -1, (size_t)nseq + 1);
    reach(root, seen, &nseen, cap);
    for (cg_node *n = cg_graph_tape(g); n; n = n->prev) /* FAST mode: sends are roots */
        if (n->always_run && n->iarg[1] == CG_C_SEND)
            for (int i = 0; i < n->nin; i++) {
                if (!is_seen(n, seen, nseen) && nseen < cap)
                    seen[nseen++] = n;
                reach(n->in[i], seen, &nseen, cap);
            }
    for (cg_node *n = cg_graph_tape(g); n; n = n->prev)
        if (n->always_run && n->iarg[0] >= 0 && n->iarg[0] < nseq)
            row[n->iarg[0]] = is_seen(n, seen, nseen);
}

/* The dry comm around the rank's own (rank_run.h's wrap): d is the caller's. */
static cg_comm dry_wrap(void *ctx, cg_rank_comm *w)
{
    dry_comm *d = ctx;
    d->inner = cg_rank_comm_as_comm(w);
    d->w = w;
    return (cg_comm){d,            dry_collective, dry_comm_send, dry_comm_recv,
                     dry_backward, dry_zero_grad,  dry_group,     NULL};
}

/* One dry run of `rank`'s program, then every backward event's reach from
 * its tape: rows[e * (nseq + 1) ...] for e < MAX_EVENTS (an event this rank
 * does not have reaches only the sends). Once per rank, not once per rank
 * and event: a program of many backward calls costs one interpretation per
 * rank (issue 39 item 4). */
static int rank_reach(const cg_case *cs, const cg_oracle *plan, int rank, signed char *rows, int nseq,
                      int *nevents, signed char *real, signed char *p2p, cg_status *st)
{
    cg_tp tp;
    memset(&tp, 0, sizeof tp);
    tp.ops = &dry_ops;
    /* no watchers: no board updates, no injected faults, no sync */
    tp.rank = rank;
    tp.world = plan->world;
    dry_rank dr = {.p2p = p2p, .nseq = nseq};
    dry_comm d = {.rank = &dr};
    cg_rank_run r;
    int rc = cg_rank_run_program(&r, cs, &cg_rules_reference, &tp, plan->events, plan->nevents, false,
                                 dry_wrap, &d);
    if (rc != 0)
        cg_error_infra(st, "%s", r.I ? cg_interp_status(r.I)->msg : r.st.msg);
    cg_graph *g = r.g;
    enum { CAP = 65536 };
    cg_node **seen = rc == 0 ? malloc(CAP * sizeof *seen) : NULL;
    if (rc == 0 && !seen) {
        cg_error_infra(st, "out of memory");
        rc = -1;
    }
    if (rc == 0) {
        size_t stride = (size_t)nseq + 1;
        signed char *none = rows + (size_t)(MAX_EVENTS - 1) * stride;
        for (int e = 0; e < MAX_EVENTS - 1 && e < dr.nevents; e++)
            mark_reached(g, dr.roots[e], rows + (size_t)e * stride, nseq, seen, CAP);
        mark_reached(g, dr.nevents >= MAX_EVENTS ? dr.roots[MAX_EVENTS - 1] : NULL, none, nseq, seen, CAP);
        for (int e = dr.nevents; e < MAX_EVENTS - 1; e++)
            memcpy(rows + (size_t)e * stride, none, stride);
    }
    *nevents = dr.nevents;
    for (int e = 0; real && e < MAX_EVENTS; e++)
        real[e] = e < dr.nevents && dr.roots[e] != NULL;
    free(seen);
    cg_rank_run_end(&r);
    return rc;
}

void cg_dry_reach_free(cg_dry_reach *s)
{
    for (int r = 0; r < s->world; r++) {
        if (s->rows)
            free(s->rows[r]);
        if (s->real)
            free(s->real[r]);
        if (s->p2p)
            free(s->p2p[r]);
    }
    free(s->rows);
    free(s->real);
    free(s->p2p);
}

int cg_dry_reach_all(const cg_case *cs, const cg_oracle *plan, int nseq, cg_dry_reach *s, cg_status *st)
{
    int W = plan->world, rc = 0;
    size_t stride = (size_t)nseq + 1;
    *s = (cg_dry_reach){calloc((size_t)W, sizeof *s->rows), calloc((size_t)W, sizeof *s->real),
                     calloc((size_t)W, sizeof *s->p2p), W, nseq, 0};
    if (!s->rows || !s->real || !s->p2p)
        rc = -1;
    for (int r = 0; rc == 0 && r < W; r++)
        if (!(s->rows[r] = malloc((size_t)MAX_EVENTS * stride)) || !(s->real[r] = calloc(MAX_EVENTS, 1)) ||
            !(s->p2p[r] = calloc((size_t)MAX_EVENTS, stride)))
            rc = -1;
    if (rc != 0)
        return cg_error_infra(st, "out of memory");
    for (int r = 0; rc == 0 && r < W; r++)
        rc = rank_reach(cs, plan, r, s->rows[r], nseq, &s->nevents, s->real[r], s->p2p[r], st);
    return rc;
}

int cg_dry_count_seq(const cg_oracle *plan)
{
    int nseq = 0;
    for (int i = 0; i < plan->nevents; i++)
        if (plan->events[i].coll.seq + 1 > nseq)
            nseq = plan->events[i].coll.seq + 1;
    return nseq;
}
