/* interp_comm.c — a collective or recv call: its reduction op, root and
 * group arguments, and one call of the comm (cg_comm) per group the slots
 * name; a non-member of a group passes its input through. Send is a
 * statement (interp.c). */
#include "interp_internal.h"

#include <stdbool.h>
#include <stdlib.h>

#include "ops.h"

/* The reduction op of a collective call: a bare word (sum, prod, ...) as the
 * positional argument `pos` or keyword op=. Default sum. */
static int redop_arg(const cg_call *c, int pos, cg_redop *op)
{
    int i = cg_arg_at(c->e, pos, "op");
    *op = CG_RED_SUM;
    if (i < 0)
        return 0;
    const cg_expr *w = c->e->args[i];
    int r = w->kind == CG_E_WORD ? cg_redop_from_name(w->name) : -1;
    if (r < 0)
        return cg_error_at(
            &c->I->st, w->pos, "expected a reduction op (sum, avg, prod, max, min), got %s",
            w->kind == CG_E_WORD || w->kind == CG_E_NAME ? w->name : "an expression");
    *op = (cg_redop)r;
    return 0;
}

/* The root of a collective on the group `members` (NULL: the world) among
 * the slots in[] holds: the same global rank on each, and a member; *out is
 * its index in the group (the world: the rank itself). 0, or -1. */
static int root_arg(const cg_call *c, cg_tensor **in, const cg_group *members, int *out)
{
    cg_interp *I = c->I;
    int i = cg_arg_at(c->e, 1, "root"), seen = -1;
    *out = 0;
    if (i < 0)
        return 0;
    for (int s = 0; s < I->nslots; s++) {
        int64_t r;
        if (!in[s])
            continue;
        if (cg_call_int(c, i, s, "root rank", &r) != 0)
            return -1;
        if (r < 0 || r >= I->world)
            return cg_error_at_rank(&I->st, c->e->args[i]->pos, cg_slot_rank(I, s), I->world,
                                    "expected root rank in 0..%d, got %lld", I->world - 1,
                                    (long long)r);
        if (seen >= 0 && r != seen)
            return cg_error_at_rank(&I->st, c->e->args[i]->pos, cg_slot_rank(I, s), I->world,
                                    "expected the same root rank on every rank, got %d and %lld",
                                    seen, (long long)r);
        seen = (int)r;
    }
    int local = members ? cg_group_index(members, seen) : seen;
    if (seen >= 0 && local < 0) /* PyTorch: "The global rank ... is not part of the group" */
        return cg_error_at(&I->st, c->e->args[i]->pos,
                           "expected a root in the group (roots are global ranks), got rank %d",
                           seen);
    *out = local < 0 ? 0 : local;
    return 0;
}

/* Each active slot's group for collective call e: gid[s] its id, or -1 when
 * the call names none (the world). 0, or -1. */
static int group_arg(const cg_call *c, cg_coll_kind kind, int *gid)
{
    cg_interp *I = c->I;
    int i = cg_arg_at(c->e, cg_coll_keyword_index(kind, "group"), "group");
    for (int s = 0; s < I->nslots; s++) {
        gid[s] = -1;
        if (i < 0 || !I->active[s])
            continue;
        if ((gid[s] = cg_group_bound(I, s, c->e->args[i])) < 0)
            return cg_error_at_rank(&I->st, c->e->args[i]->pos, cg_slot_rank(I, s), I->world,
                                    "expected a group (made by group() or mesh()), got %s",
                                    c->e->args[i]->kind == CG_E_NAME ? c->e->args[i]->name
                                                                     : "an expression");
    }
    return 0;
}

/* One collective on the world (id -1) or on group id, over the slots whose
 * group it is: every member must be there; the call is that of a world of
 * the group's size (collectives.h). res[s] receives each member's output. */
static int run_on_group(const cg_call *c, cg_coll cc, int id, const int *gid, cg_tensor **in,
                        cg_tensor **res)
{
    cg_interp *I = c->I;
    const cg_expr *e = c->e;
    const cg_group *gr = cg_group_at(I, id);
    cg_tensor **mine = calloc((size_t)I->nslots, sizeof *mine);
    if (!mine)
        return cg_error_at(&I->st, e->pos, "expected memory, got out of memory");
    int rc = 0, nmine = 0;
    for (int s = 0; s < I->nslots && rc == 0; s++) {
        bool member = !gr || cg_group_index(gr, I->ranks[s]) >= 0;
        nmine += member;
        if (member && (!I->active[s] || gid[s] != id))
            rc = cg_error_at(&I->st, e->pos,
                             "expected every %s to take part in %s, got %s without rank %d",
                             gr ? "member of the group" : "rank", e->name,
                             I->active[s] ? "a call on another group" : "an on-block", I->ranks[s]);
        else if (member)
            mine[s] = in[s];
    }
    if (rc == 0 && nmine == 0) { /* no slot here is a member (a worker outside the group) */
        free(mine);
        return 0;
    }
    if (rc == 0 && cg_coll_has_root(cc.kind))
        rc = root_arg(c, mine, gr, &cc.root);
    /* the slots of this call in its order: a group's members by group rank */
    int *order = rc == 0 ? calloc((size_t)I->nslots, sizeof *order) : NULL, n = 0;
    if (rc == 0 && !order)
        rc = cg_error_at(&I->st, e->pos, "expected memory, got out of memory");
    for (int k = 0; rc == 0 && k < (gr ? gr->n : I->world); k++)
        for (int s = 0; s < I->nslots; s++)
            if (mine[s] && I->ranks[s] == (gr ? gr->members[k] : k))
                order[n++] = s;
    int64_t *splits = NULL;
    if (rc == 0 && (rc = cg_read_splits(I, e, cc.kind, c->args, mine, order, n,
                                        gr ? gr->n : I->world, &splits)) == 0)
        cc.splits = splits;
    free(order);
    if (rc == 0 && gr) {
        cc.group = id;
        cc.nmembers = gr->n;
        cc.members = gr->members;
    }
    if (rc == 0 && I->comm->collective(I->comm->self, I->g, &cc, mine, res) != 0)
        rc = cg_error_wrap(&I->st, cg_graph_status(I->g), e->pos, -1, 0);
    free(splits);
    free(mine);
    return rc;
}

int cg_eval_comm(const cg_call *c, cg_val *out)
{
    cg_interp *I = c->I;
    const cg_expr *e = c->e;
    const cg_collective *d = cg_collective_named(e->name); /* send is a statement (interp.c) */
    cg_coll cc = {.kind = d->kind, .pos = e->pos};
    bool is_recv = cc.kind == CG_C_RECV;
    int op_at = cg_coll_keyword_index(d->kind, "op");
    if (op_at >= 0 && redop_arg(c, op_at, &cc.op) != 0)
        return -1;
    cc.seq = I->seq++;
    int splits_at = cg_coll_keyword_index(d->kind, "send_splits");
    cc.sized = splits_at >= 0 && cg_arg_at(e, splits_at, "send_splits") >= 0;
    cg_tensor **in = calloc((size_t)I->nslots * 2, sizeof *in);
    int *gid = calloc((size_t)I->nslots * 2, sizeof *gid), *ids = gid + I->nslots;
    if (!in || !gid) {
        free(in);
        free(gid);
        return cg_error_at(&I->st, e->pos, "expected memory, got out of memory");
    }
    cg_tensor **res = in + I->nslots;
    int rc = is_recv ? 0 : group_arg(c, cc.kind, gid);
    for (int s = 0; rc == 0 && s < I->nslots; s++) {
        if (!I->active[s])
            continue;
        if (is_recv) {
            int64_t src;
            rc = cg_call_int(c, 0, s, "a source rank", &src);
            if (rc == 0 && (src < 0 || src >= I->world || src == I->ranks[s]))
                rc = cg_error_at_rank(&I->st, e->args[0]->pos, cg_slot_rank(I, s), I->world,
                                      "expected a source rank in 0..%d other than %d, "
                                      "got %lld",
                                      I->world - 1, I->ranks[s], (long long)src);
            cc.peer = (int)src;
            if (rc == 0 && !(res[s] = I->comm->recv(I->comm->self, I->g, &cc, s)))
                rc = cg_error_wrap(&I->st, cg_graph_status(I->g), e->pos, cg_slot_rank(I, s),
                                   I->world);
        } else if (!(in[s] = cg_call_tensor(c, 0, s))) {
            rc = -1;
        }
    }
    /* the world's call, or one call per group the slots name, in id order */
    int nids = 0;
    for (int s = 0; rc == 0 && !is_recv && s < I->nslots; s++)
        if (I->active[s] && (nids == 0 || gid[s] != -1))
            ids[nids++] = gid[s];
    if (nids > 1)
        qsort(ids, (size_t)nids, sizeof *ids, cg_cmp_int);
    for (int k = 0; rc == 0 && k < nids; k++)
        if (k == 0 || ids[k] != ids[k - 1])
            rc = run_on_group(c, cc, ids[k], gid, in, res);
    /* a non-member's call is a no-op returning its input, as in PyTorch: a
     * tensor of its own (torch.distributed.nn clones before its call) whose
     * backward is the comm's to say (a rule set's, rank_comm.c), else a
     * copy that passes the gradient through. Its root is the one it names,
     * as a group rank (the rule set's refusal may depend on it). */
    for (int s = 0; rc == 0 && !is_recv && s < I->nslots; s++) {
        const cg_group *gr = I->active[s] && gid[s] >= 0 ? cg_group_at(I, gid[s]) : NULL;
        if (!gr || cg_group_index(gr, I->ranks[s]) >= 0)
            continue;
        if (in[s]->replicas > 1 && in[s]->requires_grad) /* one rank's copy of a replicated value */
            cg_share_break(I->share, "a replicated value passed through a call off its group");
        cg_coll nc = cc; /* the call as the group's members make it */
        nc.group = gid[s];
        nc.nmembers = gr->n;
        nc.members = gr->members;
        if (cg_coll_has_root(cc.kind)) { /* the root it names, in group ranks: a rule set may read it */
            cg_tensor **alone = calloc((size_t)I->nslots, sizeof *alone);
            if (alone)
                alone[s] = in[s];
            rc = alone ? root_arg(c, alone, gr, &nc.root)
                       : cg_error_at(&I->st, e->pos, "expected memory, got out of memory");
            free(alone);
            if (rc != 0)
                break;
        }
        bool made = I->comm->nonmember
                        ? I->comm->nonmember(I->comm->self, I->g, &nc, s, in[s], &res[s]) == 0
                        : (res[s] = cg_clone(I->g, in[s])) != NULL;
        if (!made)
            rc = cg_error_wrap(&I->st, cg_graph_status(I->g), e->pos, cg_slot_rank(I, s), I->world);
    }
    for (int s = 0; rc == 0 && s < I->nslots; s++)
        if (I->active[s])
            out[s] = (cg_val){.is_tensor = true, .t = res[s]};
    free(gid);
    free(in);
    return rc;
}
