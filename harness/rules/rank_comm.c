/* rank_comm.c — a rank's communicator (rank_comm.h): the forward of every
 * collective over the transport and its autograd node whose backward is the
 * rule set's, process groups, the backward passes; point to point and a
 * non-member's call are rank_comm_p2p.c's. */
#include "rank_comm_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd.h"
#include "ops.h"

/* ---- the plan ------------------------------------------------------------ */

/* The plan's event of call c on this rank: a send/recv's own, a
 * collective's, or on a process group the one of the group it is in (a
 * mesh's statement makes one event per group). */
static bool in_event(const cg_plan_event *ev, int rank)
{
    for (int k = 0; k < ev->coll.nmembers; k++)
        if (ev->members[k] == rank)
            return true;
    return ev->coll.nmembers == 0;
}

const cg_plan_event *cg_rank_comm_plan_event(const cg_rank_comm *w, cg_graph *g, const cg_coll *c)
{
    for (int i = 0; i < w->nevents; i++) {
        const cg_plan_event *ev = &w->events[i];
        if (ev->coll.seq == c->seq && (ev->rank < 0 || ev->rank == w->rank) &&
            in_event(ev, w->rank))
            return ev;
    }
    cg_error(cg_graph_status(g), "expected the oracle's plan to hold %s #%d, got nothing",
             cg_coll_name(c->kind), c->seq);
    return NULL;
}

/* ---- the collective node ------------------------------------------------- */

/* Where a collective runs: the world, or a process group as a world of its
 * own (collectives.h): its handle, this rank's place in it and its size. */
typedef struct coll_where {
    cg_tp *tp;
    int rank, world;
} coll_where;

typedef struct coll_ctx {
    cg_coll coll;
    const cg_rules *rules;
    coll_where at;
    const cg_coll_counts *counts; /* the forward's, owned by the graph */
    const char *refusal;          /* refused at the backward (rules.h, refuses_at); NULL: not */
} coll_ctx;


static int coll_backward(cg_graph *g, cg_node *n)
{
    coll_ctx *ctx = n->ctx;
    if (ctx->refusal)
        return cg_rank_comm_raise(g, &ctx->coll, ctx->refusal, CG_PHASE_BACKWARD);
    cg_tensor *x = n->in[0];
    /* reference's transpose writes gx whole where it receives into it */
    bool filled = ctx->rules == &cg_rules_reference && cg_reference_fills_gx(&ctx->coll, ctx->at.rank);
    cg_tensor *gx = filled ? cg_tensor_new_unset(g, x->dtype, x->ndim, x->shape) : cg_tensor_like(g, x);
    if (!gx)
        return -1;
    /* a failing rule set reports in the graph's status, naming the call:
     * "backward of all_reduce(prod): ..." */
    cg_rule_call call = {ctx->at.tp,
                         (cg_tp_site){ctx->coll.seq, true},
                         &ctx->coll,
                         ctx->at.rank,
                         ctx->at.world,
                         ctx->counts,
                         x,
                         n->out,
                         n->out->pgrad,
                         gx,
                         cg_graph_status(g)};
    if (cg_rules_backward(ctx->rules, &call) != 0)
        return -1;
    return cg_accum_grad_owned(g, x, gx); /* gx was made for this call alone */
}

/* In-place collectives autograd never saw (c10d): the gradient passes
 * straight through to the local input. */
static int identity_backward(cg_graph *g, cg_node *n)
{
    return cg_accum_grad(g, n->in[0], n->out->pgrad);
}

/* The output of a collective on this rank: its shape by the table's rule,
 * from every rank's input shape in the plan. Where the transport receives
 * into it, it is not cleared first (the transport writes it whole: a pass
 * over memory less; what it fails to write shows as NaN, tensor.h); off the
 * root of a root-only output it stays zeros. */
static cg_tensor *output_tensor(const coll_where *at, cg_graph *g, const cg_coll *c,
                                const cg_plan_event *ev, cg_dtype dt)
{
    int ndim = 0;
    int64_t shape[CG_MAX_DIMS];
    cg_plan_out_shape(ev, at->world, at->rank, &ndim, shape);
    bool received = !cg_collective_of(c->kind)->root_only_output || at->rank == c->root;
    return received ? cg_tensor_new_unset(g, dt, ndim, shape) : cg_tensor_new(g, dt, ndim, shape);
}

/* The handle call c runs on here: the world's, or its group's (made by
 * w_group; this rank is a member, or the interpreter would not call). */
static int where(cg_rank_comm *w, cg_graph *g, const cg_coll *c, coll_where *at)
{
    *at = (coll_where){w->tp, w->rank, w->world};
    if (c->nmembers == 0)
        return 0;
    cg_tp *gt = c->group >= 0 && c->group < w->ngroups ? w->groups[c->group] : NULL;
    if (!gt)
        return cg_error(cg_graph_status(g), "expected this rank's handle on group %d, got none",
                        c->group);
    *at = (coll_where){gt, gt->rank, gt->world};
    return 0;
}

/* The group's members, borrowed from the interpreter for the forward, as
 * the graph's own copy: a backward may read them (a rule set comparing a
 * global root with a group rank, pytorch#130515). */
int cg_rank_comm_keep_members(cg_graph *g, cg_coll *c)
{
    if (c->nmembers == 0) {
        c->members = NULL;
        return 0;
    }
    int *own = cg_alloc(g, (size_t)c->nmembers * sizeof *own);
    if (!own)
        return -1;
    memcpy(own, c->members, (size_t)c->nmembers * sizeof *own);
    c->members = own;
    return 0;
}

/* A call the framework this rule set emulates refuses: raised on every
 * rank that makes it, member or not, before anything is sent, at the
 * forward or at the backward as the rule set says (rules.h: refuses_at).
 * The refusal's message, NULL when the call is not refused; *phase where
 * this rank raises it. */
const char *cg_rank_comm_refusal(const cg_rank_comm *w, const cg_coll *c, bool member, cg_phase *phase)
{
    const char *why = w->rules->refuses ? w->rules->refuses(c) : NULL;
    *phase = why && w->rules->refuses_at ? w->rules->refuses_at(c, member) : CG_PHASE_FORWARD;
    return why;
}

/* -1 with the graph's error: "the framework raises at [backward of ]all_gather: why"
 * (the phase as cg_error_phase reads it back) */
int cg_rank_comm_raise(cg_graph *g, const cg_coll *c, const char *why, cg_phase phase)
{
    return cg_error(cg_graph_status(g), "%s at %s%s: %s", CG_RAISES_MARK,
                    phase == CG_PHASE_BACKWARD ? "backward of " : "", cg_coll_name(c->kind), why);
}

static cgt_redop tp_op(cg_redop op) { return (cgt_redop)op; } /* same order by construction */

/* The forward value: one transport call, identical under every rule set. */
static int forward(const coll_where *at, cg_graph *g, const cg_coll *c,
                   const cg_coll_counts *counts, cg_tensor *x, cg_tensor *y)
{
    const cg_collective *d = cg_collective_of(c->kind);
    if (d->in_place && cg_tensor_copy_elems(g, y, 0, x, 0, x->numel) < 0) { /* x keeps its own value */
        cg_error(&at->tp->st, "%s", cg_graph_status(g)->msg);
        return -1;
    }
    void *recv =
        d->root_only_output && at->rank != c->root ? NULL : y->data; /* the rest stay zeros */
    return cg_tp_collective(at->tp, (cg_tp_site){c->seq, false}, c->kind, tp_op(c->op), c->root,
                            x->data, recv, (size_t)x->numel, counts, x->dtype);
}

static int w_collective(void *self, cg_graph *g, const cg_coll *c, cg_tensor **in, cg_tensor **out)
{
    cg_rank_comm *w = self;
    const cg_plan_event *ev = cg_rank_comm_plan_event(w, g, c);
    if (!ev)
        return -1;
    coll_where at;
    cg_phase phase;
    const char *refused = cg_rank_comm_refusal(w, c, true, &phase);
    if (where(w, g, c, &at) != 0)
        return -1;
    if (refused && phase != CG_PHASE_BACKWARD)
        return cg_rank_comm_raise(g, c, refused, phase);
    cg_coll_counts *counts = cg_alloc(g, sizeof *counts);
    coll_ctx *ctx = cg_alloc(g, sizeof *ctx);
    cg_tensor *x = in[0], *y = out[0] = output_tensor(&at, g, c, ev, x->dtype);
    if (!counts || !ctx || !y)
        return -1;
    cg_plan_counts(ev, at.world, at.rank, counts);
    if (cg_check_placed(g, cg_coll_name(c->kind), y, &x, 1) < 0)
        return -1;
    if (forward(&at, g, c, counts, x, y) != 0) {
        cg_error(cg_graph_status(g), "%s", at.tp->st.msg);
        return -1;
    }
    cg_wiring wiring = refused ? CG_WIRE_COLLECTIVE : w->rules->wiring(c); /* a refusal's backward raises */
    if (wiring == CG_WIRE_DETACHED)
        return 0;
    if (wiring == CG_WIRE_IDENTITY) {
        if (cg_any_requires_grad(&x, 1) && !cg_record(g, "identity", y, &x, 1, identity_backward))
            return -1;
        return 0;
    }
    *ctx = (coll_ctx){*c, w->rules, at, counts, refused};
    ctx->coll.splits = NULL; /* borrowed for the forward; the counts say the same */
    if (cg_rank_comm_keep_members(g, &ctx->coll) != 0)
        return -1;
    cg_node *n = cg_record(g, cg_coll_name(c->kind), y, &x, 1, coll_backward);
    if (!n)
        return -1;
    n->ctx = ctx;
    n->iarg[0] = c->seq; /* comm nodes carry their call for analyses (hazards.c) */
    n->iarg[1] = c->kind;
    cg_node_always_run(g, n); /* every rank issues every backward collective */
    /* non-root outputs of reduce and gather carry no gradient (design.md section 3) */
    y->requires_grad = !(cg_collective_of(c->kind)->root_only_output && at.rank != c->root);
    return 0;
}

static int w_backward(void *self, cg_graph *g, const cg_srcpos *pos, cg_tensor **roots)
{
    cg_rank_comm *w = self;
    (void)pos;
    w->passes++;
    return cg_backward(g, roots, roots[0] ? 1 : 0);
}

static int w_zero_grad(void *self, cg_graph *g)
{
    (void)self;
    cg_zero_grad(g);
    return 0;
}

/* Process group `id`: a split of the transport under test, made here by
 * every rank (members get a handle, the others NULL) and kept for the job. */
static int w_group(void *self, cg_graph *g, int id, const int *members, int n)
{
    cg_rank_comm *w = self;
    bool member = false;
    for (int k = 0; k < n; k++)
        member |= members[k] == w->rank;
    if (id != w->ngroups)
        return cg_error(cg_graph_status(g), "expected group %d next, got group %d", w->ngroups, id);
    cg_tp **grown = realloc(w->groups, (size_t)(w->ngroups + 1) * sizeof *grown);
    if (!grown)
        return cg_error_infra(cg_graph_status(g), "out of memory for a process group");
    w->groups = grown;
    w->groups[w->ngroups] = NULL;
    if (cg_tp_split(w->tp, member ? 0 : -1, w->rank, &w->groups[w->ngroups]) != 0)
        return cg_error(cg_graph_status(g), "making process group %d: %s", id, w->tp->st.msg);
    w->ngroups++;
    return 0;
}

void cg_rank_comm_close(cg_rank_comm *w)
{
    for (int i = 0; i < w->ngroups; i++)
        cg_tp_free_split(w->groups[i]);
    free(w->groups);
    w->groups = NULL;
    w->ngroups = 0;
}

cg_rank_comm cg_rank_comm_make(cg_tp *tp, const cg_rules *rules, cg_dtype dtype, const cg_plan_event *events,
                       int nevents)
{
    return (cg_rank_comm){.tp = tp, .rules = rules, .rank = tp->rank, .world = tp->world, .dtype = dtype,
                      .events = events, .nevents = nevents};
}

cg_comm cg_rank_comm_as_comm(cg_rank_comm *w)
{
    return (cg_comm){w,          w_collective, cg_rank_comm_send,  cg_rank_comm_recv,
                     w_backward, w_zero_grad,  w_group, cg_rank_comm_nonmember};
}
