/* sim_comm.c — collectives as plain ops over the simulated ranks (sim_comm.h).
 *
 * Each collective is written as the local computation it stands for: an
 * all_reduce SUM is y_r = x_0 + ... + x_{W-1} for every r, an all_gather is
 * y_r = cat(x_0..x_{W-1}), a send/recv pair is y = clone(x_src). Ordinary
 * autograd then differentiates them, so no backward rule is ever written
 * here: that independence is the point of the oracle. */
#include "sim_comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd.h"
#include "ops.h"

typedef struct msg {
    int src, dst, seq;
    cg_tensor *t;
    cg_srcpos pos;
    bool taken;
} msg;

typedef struct root_list {
    cg_tensor **t;
    int n, cap;
} root_list;

struct cg_sim {
    int world;
    cg_sim_mode mode;
    cg_share *share; /* borrowed; NULL: every rank's output its own */
    msg *msgs;
    int nmsgs, capmsgs;
    root_list *roots; /* per rank */
    int nbackward;
    cg_plan_event *plan;
    int nplan, capplan;
};

cg_sim *cg_sim_new(int world)
{
    cg_sim *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->world = world;
    s->roots = calloc((size_t)world, sizeof *s->roots);
    if (!s->roots) {
        free(s);
        return NULL;
    }
    return s;
}

void cg_plan_free(cg_plan_event *ev, int n)
{
    for (int i = 0; ev && i < n; i++)
        free(ev[i].splits);
    free(ev);
}

void cg_sim_free(cg_sim *s)
{
    if (!s)
        return;
    for (int r = 0; r < s->world; r++)
        free(s->roots[r].t);
    free(s->roots);
    free(s->msgs);
    cg_plan_free(s->plan, s->nplan);
    free(s);
}

/* Grow *buf (of *cap elements of size sz) to hold n+1. 0 or -1 (OOM). */
static int grow(void **buf, int *cap, int n, size_t sz)
{
    if (n < *cap)
        return 0;
    int nc = *cap ? 2 * *cap : 16;
    void *b = realloc(*buf, (size_t)nc * sz);
    if (!b)
        return -1;
    *buf = b;
    *cap = nc;
    return 0;
}

static int plan_add(cg_sim *s, cg_graph *g, const cg_coll *c, int rank, int tag,
                    cg_tensor *const *per_rank)
{
    if (s->world > CG_MAX_WORLD) /* no distributed run reads a plan this large (ir.h) */
        return 0;
    if (grow((void **)&s->plan, &s->capplan, s->nplan, sizeof *s->plan) != 0) {
        cg_error(cg_graph_status(g), "expected memory for the plan, got out of memory");
        return -1;
    }
    size_t w = (size_t)(c->nmembers ? c->nmembers : s->world),
           nsplits = w * w; /* a group's: its size */
    int64_t *splits = c->splits ? malloc(nsplits * sizeof *splits) : NULL;
    if (c->splits && !splits) {
        cg_error(cg_graph_status(g), "expected memory for the plan, got out of memory");
        return -1;
    }
    cg_plan_event *ev = &s->plan[s->nplan++];
    memset(ev, 0, sizeof *ev);
    ev->coll = *c;
    ev->coll.splits = NULL; /* borrowed from the interpreter: the event keeps its own */
    ev->splits = splits ? memcpy(splits, c->splits, nsplits * sizeof *splits) : NULL;
    ev->rank = rank;
    ev->tag = tag;
    ev->coll.members = NULL; /* borrowed too: the event keeps its own copy */
    for (int k = 0; k < c->nmembers; k++)
        ev->members[k] = c->members[k];
    for (int r = 0; r < s->world; r++)
        if (per_rank[r]) {
            ev->ndim[r] = per_rank[r]->ndim;
            memcpy(ev->shape[r], per_rank[r]->shape, sizeof ev->shape[r]);
        }
    return 0;
}

/* ---- collectives --------------------------------------------------------- */

static int same_shapes(cg_graph *g, const cg_coll *c, cg_tensor *const *xs, int w)
{
    for (int r = 1; r < w; r++)
        if (!cg_same_shape(xs[0], xs[r])) {
            char a[64], b[64];
            cg_error(
                cg_graph_status(g),
                "expected the same shape on every rank for %s, got %s on rank 0 and %s on rank %d",
                cg_coll_name(c->kind), cg_shape_str(xs[0], a, sizeof a),
                cg_shape_str(xs[r], b, sizeof b), r);
            return -1;
        }
    return 0;
}

/* Gather-type ops concatenate along axis 0; a 0-d operand counts as [1]. */
static cg_tensor *as_rows(cg_graph *g, cg_tensor *x)
{
    int64_t one = 1;
    return x->ndim > 0 ? x : cg_reshape(g, x, 1, &one);
}

/* ---- wrong on purpose: the oracle's explanations of a mismatch ------------
 * Each variant keeps the true forward value and changes only where the
 * gradient flows, by adding a detached correction: y = live + detach(y - live). */

static cg_tensor *with_value_of(cg_graph *g, cg_tensor *live, cg_tensor *value)
{
    cg_tensor *d = cg_sub(g, value, live);
    return d ? cg_add(g, live, cg_detach(g, d)) : NULL;
}

/* Rank r's live contribution to its own output under the variant, or NULL
 * when the output keeps the true gradient. */
static cg_tensor *variant_live(cg_sim *s, cg_graph *g, const cg_coll *c, cg_tensor **in, int w,
                               int r)
{
    const cg_collective *d = cg_collective_of(c->kind);
    bool has_output = !d->root_only_output || r == c->root;
    bool gather = d->shape == CG_SHAPE_CAT && has_output;
    if (s->mode == CG_SIM_LOCAL_SLOT && !gather)
        return NULL;
    if (gather) { /* own slice live, every other rank's slice constant */
        cg_tensor *parts[CG_MAX_SIM_WORLD];
        for (int k = 0; k < w; k++)
            if (!(parts[k] = k == r ? in[k] : cg_detach(g, in[k])))
                return NULL;
        return cg_cat(g, parts, w, 0);
    }
    /* the rank's own input, or its own block of it; a scatter's only at the
     * root, whose rows it cuts; all_to_all has no block that is the rank's own */
    if (d->shape == CG_SHAPE_SAME)
        return has_output ? in[r] : NULL;
    if (d->shape == CG_SHAPE_BLOCK && (!cg_coll_has_root(d->kind) || r == c->root))
        return cg_coll_block(g, in[r], cg_split_row(c->splits, w, r), w, r);
    return NULL;
}

static int apply_variant(cg_sim *s, cg_graph *g, const cg_coll *c, cg_tensor **in, cg_tensor **out,
                         int w)
{
    for (int r = 0; r < w; r++) {
        cg_tensor *live = variant_live(s, g, c, in, w, r);
        if (live && cg_same_shape(live, out[r]) && !(out[r] = with_value_of(g, live, out[r])))
            return -1;
    }
    return 0;
}

/* A replicated input is used alike by its ranks only in an all_reduce that
 * all of them, and only they, call with it: each input then gets the same
 * gradient (the sum, or its share of a tie or product of equals). Anything
 * else (a gather's blocks, a broadcast's root) tells its ranks apart. */
static void check_replicated_inputs(cg_sim *s, const cg_coll *c, cg_tensor *const *in, int w)
{
    bool any = false, alike = c->kind == CG_C_ALL_REDUCE;
    for (int k = 0; k < w; k++) {
        any |= in[k]->replicas > 1 && in[k]->requires_grad; /* a constant's is nobody's */
        alike &= in[k] == in[0] && in[k]->replicas == w;
    }
    if (any && !alike)
        cg_share_break(s->share, "a replicated value in a collective that tells its ranks apart");
}

static int sim_local(cg_sim *s, cg_graph *g, const cg_coll *c, int w, cg_tensor **in,
                     cg_tensor **out)
{
    if (plan_add(s, g, c, -1, -1, in) != 0)
        return -1;
    const cg_collective *d = cg_collective_of(c->kind);
    for (int r = 0; r < w; r++) /* row-wise collectives see a 0-d input as one row */
        if (d->shape != CG_SHAPE_SAME && !(in[r] = as_rows(g, in[r])))
            return -1;
    if (d->same_shape && same_shapes(g, c, in, w) != 0)
        return -1;
    if (!d->simulate) {
        cg_error(cg_graph_status(g), "expected a collective, got %s", cg_coll_name(c->kind));
        return -1;
    }
    bool replicate = s->share && s->share->on && s->mode == CG_SIM_TRUTH;
    if (replicate)
        check_replicated_inputs(s, c, in, w);
    if (d->simulate(g, c, w, in, out, replicate) != 0)
        return -1;
    return s->mode == CG_SIM_TRUTH ? 0 : apply_variant(s, g, c, in, out, w);
}

/* The collective over the world, or over c's group as a world of its own
 * (collectives.h): member k is local rank k, its slot its global rank. */
static int sim_collective(void *self, cg_graph *g, const cg_coll *c, cg_tensor **slot_in,
                          cg_tensor **slot_out)
{
    cg_sim *s = self;
    int w = c->nmembers ? c->nmembers : s->world;
    cg_tensor *in[CG_MAX_SIM_WORLD] = {0}, *out[CG_MAX_SIM_WORLD] = {0};
    for (int k = 0; k < w; k++)
        in[k] = slot_in[c->nmembers ? c->members[k] : k];
    int rc = sim_local(s, g, c, w, in, out);
    for (int k = 0; rc == 0 && k < w; k++)
        slot_out[c->nmembers ? c->members[k] : k] = out[k];
    return rc;
}
/* ---- point to point ------------------------------------------------------- */

static int sim_send(void *self, cg_graph *g, const cg_coll *c, int slot, cg_tensor *t)
{
    cg_sim *s = self;
    cg_tensor *per_rank[CG_MAX_SIM_WORLD] = {0};
    per_rank[slot] = t;
    if (t->replicas > 1 && t->requires_grad)
        cg_share_break(s->share, "a replicated value sent by one of its ranks");
    if (grow((void **)&s->msgs, &s->capmsgs, s->nmsgs, sizeof *s->msgs) != 0 ||
        plan_add(s, g, c, slot, c->seq, per_rank) != 0) {
        cg_error(cg_graph_status(g), "expected memory for a message, got out of memory");
        return -1;
    }
    s->msgs[s->nmsgs++] = (msg){slot, c->peer, c->seq, t, c->pos, false};
    return 0;
}

/* The oldest message from c->peer to this rank not yet taken: program order
 * is the matching order, as with MPI's non-overtaking rule. */
static cg_tensor *sim_recv(void *self, cg_graph *g, const cg_coll *c, int slot)
{
    cg_sim *s = self;
    for (int i = 0; i < s->nmsgs; i++) {
        msg *m = &s->msgs[i];
        if (!m->taken && m->src == c->peer && m->dst == slot) {
            cg_tensor *per_rank[CG_MAX_SIM_WORLD] = {0};
            per_rank[m->src] = m->t;
            m->taken = true;
            if (plan_add(s, g, c, slot, m->seq, per_rank) != 0)
                return NULL;
            return cg_clone(g, m->t);
        }
    }
    cg_error(cg_graph_status(g),
             "expected a send from rank %d to rank %d earlier in the program, got none", c->peer,
             slot);
    return NULL;
}

int cg_sim_check_mailbox(const cg_sim *s, cg_status *st)
{
    for (int i = 0; i < s->nmsgs; i++) {
        const msg *m = &s->msgs[i];
        if (!m->taken) {
            cg_error(st, "%s:%d:%d: expected rank %d to recv this send from rank %d, got no "
                     "matching recv", m->pos.file, m->pos.line, m->pos.col, m->dst, m->src);
            return -1;
        }
    }
    return 0;
}

/* ---- backward: the oracle only records roots; oracle.c differentiates ---- */

static int sim_backward(void *self, cg_graph *g, const cg_srcpos *pos, cg_tensor **roots)
{
    cg_sim *s = self;
    (void)pos;
    s->nbackward++;
    for (int r = 0; r < s->world; r++) { /* a replicated root: a root of each of its ranks */
        int named = 0;
        for (int k = 0; roots[r] && roots[r]->replicas > 1 && k < s->world; k++)
            named += roots[k] == roots[r];
        if (roots[r] && roots[r]->replicas > 1 && named != roots[r]->replicas)
            cg_share_break(s->share, "a replicated value a root of some of its ranks only");
    }
    for (int r = 0; r < s->world; r++) {
        if (!roots[r])
            continue;
        if (!roots[r]->requires_grad) {
            cg_error(cg_graph_status(g),
                     "element 0 of tensors does not require grad and does not have a grad_fn");
            return -1;
        }
        root_list *l = &s->roots[r];
        if (grow((void **)&l->t, &l->cap, l->n, sizeof *l->t) != 0) {
            cg_error(cg_graph_status(g), "expected memory for a root, got out of memory");
            return -1;
        }
        l->t[l->n++] = roots[r];
    }
    return 0;
}

static int sim_zero_grad(void *self, cg_graph *g)
{
    cg_sim *s = self;
    (void)g;
    for (int r = 0; r < s->world; r++)
        s->roots[r].n = 0;
    return 0;
}

int cg_sim_roots(const cg_sim *s, int rank, cg_tensor *const **roots)
{
    *roots = s->roots[rank].t;
    return s->roots[rank].n;
}

int cg_sim_nbackward(const cg_sim *s) { return s->nbackward; }

cg_plan_event *cg_sim_take_plan(cg_sim *s, int *nevents)
{
    cg_plan_event *p = s->plan;
    *nevents = s->nplan;
    s->plan = NULL;
    s->nplan = s->capplan = 0;
    return p;
}

void cg_sim_set_mode(cg_sim *s, cg_sim_mode mode) { s->mode = mode; }

void cg_sim_set_share(cg_sim *s, cg_share *sh) { s->share = sh; }

/* Groups cost the oracle nothing: each call carries its members. */
static int sim_group(void *self, cg_graph *g, int id, const int *members, int n)
{
    (void)self, (void)g, (void)id, (void)members, (void)n;
    return 0;
}

cg_comm cg_sim_comm(cg_sim *s)
{
    return (cg_comm){
        s,   sim_collective, sim_send, sim_recv, sim_backward, sim_zero_grad, sim_group,
        NULL}; /* a non-member passes its gradient: the truth */
}
