/* transport_fault.c — a transport that wraps another and breaks it on
 * purpose, to prove the checker catches every class of fault (design.md section 10).
 *
 * Data faults corrupt what the faulty rank receives (or sends), on every call
 * of the kinds they apply to, forward and backward: a checker that misses
 * them is blind to that class. Faults that must be consistent across ranks
 * to stay faults rather than deadlocks (wrong root, wrong element size)
 * apply on every rank. Hangs and early exits live in board.c. What a data
 * fault does to a buffer is transport_fault_data.c's. */
#include "transport_fault_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[] = {
    [CG_FAULT_WRONG_SUM] = "wrong_sum",     [CG_FAULT_DROP_RANK] = "drop_rank",
    [CG_FAULT_SWAP_SLICES] = "swap_slices", [CG_FAULT_BIT_FLIP] = "bit_flip",
    [CG_FAULT_SCALE_WORLD] = "scale_world", [CG_FAULT_WRONG_ROOT] = "wrong_root",
    [CG_FAULT_DTYPE_SIZE] = "wrong_dtype_size",
};

int cg_fault_tail_parse(const char *s, int *rank, char *filter, size_t len)
{
    if (!*s)
        return 0;
    size_t digits = strspn(s + 1, "0123456789");
    if (s[0] != ':' || digits == 0 || digits > 7)
        return -1;
    long r = strtol(s + 1, NULL, 10);
    const char *rest = s + 1 + digits;
    if (r > 1048575 || (*rest && (rest[0] != ':' || !rest[1])))
        return -1;
    *rank = (int)r;
    snprintf(filter, len, "%s", *rest ? rest + 1 : "");
    return 0;
}

int cg_fault_parse(const char *spec, cg_fault *f, cg_status *st)
{
    char kind[32] = "";
    int n = 0;
    memset(f, 0, sizeof *f);
    f->rank = 0;
    if (sscanf(spec, "%31[a-z_]%n", kind, &n) < 1)
        goto bad;
    for (int k = 1; k < CG_FAULT_COUNT; k++)
        if (strcmp(kind, kind_names[k]) == 0)
            f->kind = (cg_fault_kind)k;
    if (f->kind == CG_FAULT_NONE)
        return 1; /* not a data fault: hang/exit are the board's */
    if (cg_fault_tail_parse(spec + n, &f->rank, f->filter, sizeof f->filter) != 0)
        goto bad;
    return 0;
bad:
    cg_error(st, "expected --inject KIND[:RANK[:CASE]] with KIND one of hang, exit, wrong_sum, "
             "drop_rank, swap_slices, bit_flip, scale_world, wrong_root, wrong_dtype_size, RANK in 0..1048575 "
             "and CASE not empty; got '%s'", spec);
    return -1;
}

/* ---- the wrapper instance ------------------------------------------------ */


static cg_transport *f_create(const char **err) { *err = "the fault wrapper is installed, not created"; return NULL; }

/* The installed wrapper goes with cg_fault_uninstall; a group's, here, with
 * the inner handle it wraps. */
static void f_destroy(cg_transport *t)
{
    fault_inst *fi = INST(t);
    if (fi->top == fi)
        return;
    fi->inner->destroy(fi->in);
    free(fi->scratch);
    free(fi);
}

/* A process group: the inner transport's split, wrapped, so the fault
 * follows the faulty process into every group it is in. */
static cg_transport *f_split(cg_transport *t, int color, int key, const char **err)
{
    fault_inst *fi = INST(t);
    if (!fi->inner->split) {
        *err = "the wrapped transport has no process groups (its table leaves split NULL)";
        return NULL;
    }
    cg_transport *in = fi->inner->split(fi->in, color, key, err);
    if (!in)
        return NULL; /* *err says why, or NULL off the group */
    fault_inst *g = calloc(1, sizeof *g);
    if (!g) {
        fi->inner->destroy(in);
        *err = "out of memory for a process group's fault wrapper";
        return NULL;
    }
    *g = (fault_inst){.ops = fi->ops,
                      .inner = fi->inner,
                      .in = in,
                      .f = fi->f,
                      .rank = fi->inner->rank(in),
                      .world = fi->inner->world(in),
                      .me = fi->me,
                      .top = fi->top};
    return (cg_transport *)(void *)g;
}
static int f_rank(const cg_transport *t) { return INST(t)->rank; }
static int f_world(const cg_transport *t) { return INST(t)->world; }
static const char *f_last_error(const cg_transport *t) { return INST(t)->inner->last_error(INST(t)->in); }

/* Each call as the fault changes it: its buffers and counts on the way in
 * (`in`, handed to the inner transport's entry), then what came back. */
static int inner_call(fault_inst *fi, const cgt_call *in) { return fi->inner->call(fi->in, in); }

static int f_all_reduce(fault_inst *fi, const cgt_call *c)
{
    cgt_call in = *c;
    if (cg_fault_active(fi, CG_FAULT_DROP_RANK, false)) { /* the rank contributes zeros */
        if (c->send == c->recv) {
            cg_fault_count_if(fi, !cg_fault_all_zero(c->recv, c->count * cg_fault_esize(c->dtype)));
            memset(c->recv, 0, c->count * cg_fault_esize(c->dtype));
        } else
            in.send = cg_fault_maybe_dropped(fi, c->send, c->count, c->dtype);
    }
    in.count = cg_fault_sized(fi, c->count);
    int rc = inner_call(fi, &in);
    cg_fault_corrupt_reduction(fi, c->recv, c->count, c->dtype);
    return rc;
}

static int f_all_gather(fault_inst *fi, const cgt_call *c)
{
    size_t buf[64];
    cgt_call in = *c;
    in.send = cg_fault_maybe_dropped(fi, c->send, c->counts[fi->rank], c->dtype);
    in.counts = cg_fault_counts_of(fi, c->counts, buf);
    int rc = inner_call(fi, &in);
    cg_fault_swap_blocks(fi, c->recv, c->counts, c->dtype);
    if (cg_fault_active(fi, CG_FAULT_BIT_FLIP, false))
        cg_fault_flip(fi, c->recv, cg_fault_total(c->counts, fi->world), c->dtype);
    return rc;
}

static int f_reduce_scatter(fault_inst *fi, const cgt_call *c)
{
    size_t buf[64];
    cgt_call in = *c;
    in.send = cg_fault_maybe_dropped(fi, c->send, cg_fault_total(c->counts, fi->world), c->dtype);
    in.counts = cg_fault_counts_of(fi, c->counts, buf);
    int rc = inner_call(fi, &in);
    cg_fault_corrupt_reduction(fi, c->recv, c->counts[fi->rank], c->dtype);
    return rc;
}

static int f_broadcast(fault_inst *fi, const cgt_call *c)
{
    cgt_call in = *c;
    in.count = cg_fault_sized(fi, c->count);
    in.root = cg_fault_root_of(fi, c->root);
    int rc = inner_call(fi, &in);
    if (cg_fault_active(fi, CG_FAULT_BIT_FLIP, false))
        cg_fault_flip(fi, c->recv, c->count, c->dtype);
    return rc;
}

static int f_reduce(fault_inst *fi, const cgt_call *c)
{
    cgt_call in = *c;
    in.root = cg_fault_root_of(fi, c->root);
    in.send = cg_fault_maybe_dropped(fi, c->send, c->count, c->dtype);
    in.count = cg_fault_sized(fi, c->count);
    int rc = inner_call(fi, &in);
    if (fi->rank == in.root)
        cg_fault_corrupt_reduction(fi, c->recv, c->count, c->dtype);
    return rc;
}

static int f_gather(fault_inst *fi, const cgt_call *c)
{
    size_t buf[64];
    cgt_call in = *c;
    in.root = cg_fault_root_of(fi, c->root);
    in.send = cg_fault_maybe_dropped(fi, c->send, c->counts[fi->rank], c->dtype);
    in.counts = cg_fault_counts_of(fi, c->counts, buf);
    int rc = inner_call(fi, &in);
    if (fi->rank == in.root) {
        cg_fault_swap_blocks(fi, c->recv, c->counts, c->dtype);
        if (cg_fault_active(fi, CG_FAULT_BIT_FLIP, false))
            cg_fault_flip(fi, c->recv, cg_fault_total(c->counts, fi->world), c->dtype);
    }
    return rc;
}

static int f_scatter(fault_inst *fi, const cgt_call *c)
{
    size_t buf[64];
    cgt_call in = *c;
    in.counts = cg_fault_counts_of(fi, c->counts, buf);
    in.root = cg_fault_root_of(fi, c->root);
    int rc = inner_call(fi, &in);
    if (cg_fault_active(fi, CG_FAULT_BIT_FLIP, false))
        cg_fault_flip(fi, c->recv, c->counts[fi->rank], c->dtype);
    return rc;
}

static int f_all_to_all(fault_inst *fi, const cgt_call *c)
{
    size_t sbuf[64], rbuf[64];
    cgt_call in = *c;
    in.send = cg_fault_maybe_dropped(fi, c->send, cg_fault_total(c->counts, fi->world), c->dtype);
    in.counts = cg_fault_counts_of(fi, c->counts, sbuf);
    in.recvcounts = cg_fault_counts_of(fi, c->recvcounts, rbuf);
    int rc = inner_call(fi, &in);
    cg_fault_swap_blocks(fi, c->recv, c->recvcounts, c->dtype);
    if (cg_fault_active(fi, CG_FAULT_BIT_FLIP, false))
        cg_fault_flip(fi, c->recv, cg_fault_total(c->recvcounts, fi->world), c->dtype);
    return rc;
}

static int f_send(fault_inst *fi, const cgt_call *c)
{
    cgt_call in = *c;
    in.send = cg_fault_maybe_dropped(fi, c->send, c->count, c->dtype);
    return inner_call(fi, &in);
}

static int f_recv(fault_inst *fi, const cgt_call *c)
{
    int rc = inner_call(fi, c);
    if (cg_fault_active(fi, CG_FAULT_BIT_FLIP, false))
        cg_fault_flip(fi, c->recv, c->count, c->dtype);
    return rc;
}

/* The table's one entry (ABI 3). */
static int f_call(cg_transport *t, const cgt_call *c)
{
    static int (*const by_kind[CGT_NCALLS])(fault_inst *, const cgt_call *) = {
        [CGT_ALL_REDUCE] = f_all_reduce, [CGT_ALL_GATHER] = f_all_gather, [CGT_REDUCE_SCATTER] = f_reduce_scatter,
        [CGT_BROADCAST] = f_broadcast,   [CGT_REDUCE] = f_reduce,         [CGT_GATHER] = f_gather,
        [CGT_SCATTER] = f_scatter,       [CGT_ALL_TO_ALL] = f_all_to_all, [CGT_SEND] = f_send,
        [CGT_RECV] = f_recv};
    fault_inst *fi = INST(t);
    if ((unsigned)c->kind < CGT_NCALLS && by_kind[c->kind])
        return by_kind[c->kind](fi, c);
    return inner_call(fi, c); /* the barrier, and what this wrapper does not know: untouched */
}

static const cg_transport_ops fault_ops = {
    .abi_version = CG_TRANSPORT_ABI_VERSION,
    .name = "fault",
    .create = f_create,
    .destroy = f_destroy,
    .rank = f_rank,
    .world = f_world,
    .last_error = f_last_error,
    .call = f_call,
    .split = f_split,
};

/* The wrapper tp's calls go to first, or NULL when it is not one. */
static fault_inst *outermost(const cg_tp *tp)
{
    return tp->ops && tp->ops->create == f_create ? INST(tp->inst) : NULL;
}

int cg_fault_install(cg_tp *tp, const cg_fault *f)
{
    fault_inst *fi = calloc(1, sizeof *fi);
    if (!fi)
        return cg_error_infra(&tp->st, "--inject: out of memory for the fault wrapper");
    *fi = (fault_inst){.ops = fault_ops,
                       .inner = tp->ops,
                       .in = tp->inst,
                       .f = *f,
                       .rank = tp->rank,
                       .world = tp->world,
                       .me = tp->rank};
    fi->top = fi;
    fi->ops.version = tp->ops->version;
    fi->ops.caps = tp->ops->caps;
    tp->ops = &fi->ops;
    tp->inst = (cg_transport *)(void *)fi;
    return 0;
}

void cg_fault_uninstall(cg_tp *tp)
{
    fault_inst *fi = outermost(tp);
    if (!fi)
        return;
    tp->ops = fi->inner;
    tp->inst = fi->in;
    free(fi->scratch);
    free(fi);
}

void cg_fault_set_case(cg_tp *tp, const char *name, double rtol, double atol)
{
    fault_inst *fi = outermost(tp);
    if (!fi)
        return;
    snprintf(fi->case_name, sizeof fi->case_name, "%s", name);
    fi->rtol = rtol;
    fi->atol = atol;
}

long cg_fault_take_count(cg_tp *tp)
{
    fault_inst *fi = outermost(tp);
    long n = fi ? fi->injected : 0;
    if (fi)
        fi->injected = 0;
    return n;
}
