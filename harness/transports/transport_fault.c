/* transport_fault.c — a transport that wraps another and breaks it on
 * purpose, to prove the checker catches every class of fault (DESIGN 10).
 *
 * Data faults corrupt what the faulty rank receives (or sends), on every call
 * of the kinds they apply to, forward and backward: a checker that misses
 * them is blind to that class. Faults that must be consistent across ranks
 * to stay faults rather than deadlocks (wrong root, wrong element size)
 * apply on every rank. Hangs and early exits live in board.c. */
#include "transport_fault.h"

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

/* One installed wrapper, owned by the handle it wraps (cg_fault_install
 * until cg_fault_uninstall). Wrapping a wrapped handle stacks them. A
 * process group's handle (split) gets a wrapper of its own around the inner
 * transport's split, owned by that handle (destroy); it reports to the
 * installed one, `top`, which holds the case, its tolerance and the count. */
typedef struct fault_inst {
    cg_transport_ops ops;  /* the wrapper's table, with the inner transport's version and caps */
    const cg_transport_ops *inner;
    cg_transport *in;
    cg_fault f;
    int rank, world;        /* in this handle's world: a group's ranks count from 0 */
    int me;                 /* this process's rank in the world: the faulty one is a world rank */
    struct fault_inst *top; /* the installed wrapper (itself, unless a group's) */
    char case_name[96];   /* the running case (the CASE filter) */
    double rtol, atol;    /* its tolerance: what a visible change is */
    void *scratch;
    size_t scratch_bytes;
    long injected;        /* calls this rank's fault changed, since cg_fault_take_count */
} fault_inst;

#define INST(t) ((fault_inst *)(void *)(t))

static bool active(const fault_inst *fi, cg_fault_kind k, bool on_every_rank)
{
    return fi->f.kind == k && (on_every_rank || fi->me == fi->f.rank) &&
           (!fi->f.filter[0] || strstr(fi->top->case_name, fi->f.filter));
}

static size_t esize(cgt_dtype dt) { return dt == CGT_F64 ? 8 : dt == CGT_F32 ? 4 : 2; }

static double get(const void *b, size_t i, cgt_dtype dt)
{
    cg_tensor t = {.dtype = (cg_dtype)dt, .data = (void *)b};
    return cg_get(&t, (int64_t)i);
}

/* Whether old -> new is a change the checker can see: beyond the running
 * case's tolerance (a wrong_sum of 1 on 2e10 rounds away in f32 and hides
 * inside rtol in f64; a bit flipped in 0.0 makes a subnormal that atol
 * absorbs). Only such changes count as injected. */
static bool material(const fault_inst *fi, double old, double new)
{
    if (isnan(old) != isnan(new))
        return true;
    return fabs(new - old) > fi->top->rtol * fabs(old) + fi->top->atol;
}

static void count_if(fault_inst *fi, bool changed)
{
    if (changed)
        fi->top->injected++;
}

/* Flip the top significand bit of element 0: a change of a quarter to a half
 * of the value, far outside any tolerance (a low bit could hide in it). */
static void flip(fault_inst *fi, void *buf, size_t count, cgt_dtype dt)
{
    if (!count || !buf)
        return;
    double old = get(buf, 0, dt);
    unsigned char *p = buf;
    int bit = dt == CGT_F64 ? 51 : dt == CGT_F32 ? 22 : dt == CGT_BF16 ? 6 : 9;
    p[bit / 8] ^= (unsigned char)(1u << (bit % 8));
    count_if(fi, material(fi, old, get(buf, 0, dt)));
}

static bool all_zero_bytes(const void *buf, size_t bytes)
{
    const unsigned char *p = buf;
    for (size_t i = 0; i < bytes; i++)
        if (p[i])
            return false;
    return true;
}

static void set(void *b, size_t i, cgt_dtype dt, double v)
{
    cg_tensor t = {.dtype = (cg_dtype)dt, .data = b};
    cg_set(&t, (int64_t)i, v);
}

/* Corrupt a reduction's result on the faulty rank. */
static void corrupt_reduction(fault_inst *fi, void *recv, size_t count, cgt_dtype dt)
{
    if (!recv || !count)
        return;
    if (active(fi, CG_FAULT_WRONG_SUM, false)) {
        double old = get(recv, 0, dt);
        set(recv, 0, dt, old + 1.0);
        count_if(fi, material(fi, old, get(recv, 0, dt)));
    }
    if (active(fi, CG_FAULT_SCALE_WORLD, false)) {
        bool changed = false;
        for (size_t i = 0; i < count; i++) {
            double old = get(recv, i, dt);
            set(recv, i, dt, old * fi->world);
            changed |= material(fi, old, get(recv, i, dt));
        }
        count_if(fi, changed);
    }
    if (active(fi, CG_FAULT_BIT_FLIP, false))
        flip(fi, recv, count, dt);
}

/* A zeroed copy of send, standing in for the dropped rank's contribution. */
static const void *maybe_dropped(fault_inst *fi, const void *send, size_t count, cgt_dtype dt)
{
    if (!active(fi, CG_FAULT_DROP_RANK, false) || !send)
        return send;
    size_t bytes = count * esize(dt);
    count_if(fi, !all_zero_bytes(send, bytes)); /* zeros dropped are zeros sent */
    if (bytes > fi->scratch_bytes) {
        void *p = realloc(fi->scratch, bytes);
        if (!p)
            return send;
        fi->scratch = p;
        fi->scratch_bytes = bytes;
    }
    memset(fi->scratch, 0, bytes);
    return fi->scratch;
}

/* wrong_dtype_size: the transport thinks elements are half as big, so it
 * moves half the bytes of every buffer (on every rank, to stay in step). */
static size_t sized(fault_inst *fi, size_t count)
{
    if (!active(fi, CG_FAULT_DTYPE_SIZE, true))
        return count;
    count_if(fi, count > 0);
    return count / 2;
}

static int root_of(fault_inst *fi, int root)
{
    if (!active(fi, CG_FAULT_WRONG_ROOT, true))
        return root;
    count_if(fi, fi->world > 1); /* at W=1 root + 1 is the root again */
    return (root + 1) % fi->world;
}

static const size_t *counts_of(fault_inst *fi, const size_t *counts, size_t *buf)
{
    if (!active(fi, CG_FAULT_DTYPE_SIZE, true))
        return counts;
    bool changed = false;
    for (int r = 0; r < fi->world; r++) {
        buf[r] = counts[r] / 2;
        changed |= counts[r] > 0;
    }
    count_if(fi, changed);
    return buf;
}

/* swap_slices: the faulty rank's gathered blocks 0 and 1 trade places. */
static void swap_blocks(fault_inst *fi, void *recv, const size_t *counts, cgt_dtype dt)
{
    if (!recv || fi->world < 2 || !active(fi, CG_FAULT_SWAP_SLICES, false))
        return;
    size_t n = counts[0] < counts[1] ? counts[0] : counts[1], es = esize(dt);
    unsigned char *a = recv, *b = a + counts[0] * es, tmp[8];
    count_if(fi, n > 0 && memcmp(a, b, n * es) != 0); /* equal blocks swapped are the same bytes */
    for (size_t i = 0; i < n * es; i += es) {
        memcpy(tmp, a + i, es);
        memcpy(a + i, b + i, es);
        memcpy(b + i, tmp, es);
    }
}

static size_t total(const size_t *c, int w)
{
    size_t s = 0;
    for (int r = 0; r < w; r++)
        s += c[r];
    return s;
}

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

static int f_all_reduce(cg_transport *t, const void *send, void *recv, size_t count, cgt_dtype dt, cgt_redop op)
{
    fault_inst *fi = INST(t);
    const void *s = send;
    if (active(fi, CG_FAULT_DROP_RANK, false)) { /* the rank contributes zeros */
        if (send == recv) {
            count_if(fi, !all_zero_bytes(recv, count * esize(dt)));
            memset(recv, 0, count * esize(dt));
        } else
            s = maybe_dropped(fi, send, count, dt);
    }
    int rc = fi->inner->all_reduce(fi->in, s, recv, sized(fi, count), dt, op);
    corrupt_reduction(fi, recv, count, dt);
    return rc;
}

static int f_all_gather(cg_transport *t, const void *send, void *recv, const size_t *counts, cgt_dtype dt)
{
    fault_inst *fi = INST(t);
    size_t buf[64];
    int rc = fi->inner->all_gather(fi->in, maybe_dropped(fi, send, counts[fi->rank], dt), recv,
                                   counts_of(fi, counts, buf), dt);
    swap_blocks(fi, recv, counts, dt);
    if (active(fi, CG_FAULT_BIT_FLIP, false))
        flip(fi, recv, total(counts, fi->world), dt);
    return rc;
}

static int f_reduce_scatter(cg_transport *t, const void *send, void *recv, const size_t *counts, cgt_dtype dt,
                            cgt_redop op)
{
    fault_inst *fi = INST(t);
    size_t buf[64];
    int rc = fi->inner->reduce_scatter(fi->in, maybe_dropped(fi, send, total(counts, fi->world), dt), recv,
                                       counts_of(fi, counts, buf), dt, op);
    corrupt_reduction(fi, recv, counts[fi->rank], dt);
    return rc;
}

static int f_broadcast(cg_transport *t, void *buf, size_t count, cgt_dtype dt, int root)
{
    fault_inst *fi = INST(t);
    int rc = fi->inner->broadcast(fi->in, buf, sized(fi, count), dt, root_of(fi, root));
    if (active(fi, CG_FAULT_BIT_FLIP, false))
        flip(fi, buf, count, dt);
    return rc;
}

static int f_reduce(cg_transport *t, const void *send, void *recv, size_t count, cgt_dtype dt, cgt_redop op,
                    int root)
{
    fault_inst *fi = INST(t);
    int r = root_of(fi, root);
    int rc = fi->inner->reduce(fi->in, maybe_dropped(fi, send, count, dt), recv, sized(fi, count), dt, op, r);
    if (fi->rank == r)
        corrupt_reduction(fi, recv, count, dt);
    return rc;
}

static int f_gather(cg_transport *t, const void *send, void *recv, const size_t *counts, cgt_dtype dt, int root)
{
    fault_inst *fi = INST(t);
    size_t buf[64];
    int r = root_of(fi, root);
    int rc = fi->inner->gather(fi->in, maybe_dropped(fi, send, counts[fi->rank], dt), recv,
                               counts_of(fi, counts, buf), dt, r);
    if (fi->rank == r) {
        swap_blocks(fi, recv, counts, dt);
        if (active(fi, CG_FAULT_BIT_FLIP, false))
            flip(fi, recv, total(counts, fi->world), dt);
    }
    return rc;
}

static int f_scatter(cg_transport *t, const void *send, void *recv, const size_t *counts, cgt_dtype dt, int root)
{
    fault_inst *fi = INST(t);
    size_t buf[64];
    int rc = fi->inner->scatter(fi->in, send, recv, counts_of(fi, counts, buf), dt, root_of(fi, root));
    if (active(fi, CG_FAULT_BIT_FLIP, false))
        flip(fi, recv, counts[fi->rank], dt);
    return rc;
}

static int f_all_to_all(cg_transport *t, const void *send, const size_t *sendcounts, void *recv,
                        const size_t *recvcounts, cgt_dtype dt)
{
    fault_inst *fi = INST(t);
    size_t sbuf[64], rbuf[64];
    int rc = fi->inner->all_to_all(fi->in, maybe_dropped(fi, send, total(sendcounts, fi->world), dt),
                                   counts_of(fi, sendcounts, sbuf), recv, counts_of(fi, recvcounts, rbuf), dt);
    swap_blocks(fi, recv, recvcounts, dt);
    if (active(fi, CG_FAULT_BIT_FLIP, false))
        flip(fi, recv, total(recvcounts, fi->world), dt);
    return rc;
}

static int f_send(cg_transport *t, const void *buf, size_t count, cgt_dtype dt, int peer, int tag)
{
    fault_inst *fi = INST(t);
    return fi->inner->send(fi->in, maybe_dropped(fi, buf, count, dt), count, dt, peer, tag);
}

static int f_recv(cg_transport *t, void *buf, size_t count, cgt_dtype dt, int peer, int tag)
{
    fault_inst *fi = INST(t);
    int rc = fi->inner->recv(fi->in, buf, count, dt, peer, tag);
    if (active(fi, CG_FAULT_BIT_FLIP, false))
        flip(fi, buf, count, dt);
    return rc;
}

static int f_barrier(cg_transport *t) { return INST(t)->inner->barrier(INST(t)->in); }

static const cg_transport_ops fault_ops = {
    .abi_version = CG_TRANSPORT_ABI_VERSION,
    .name = "fault",
    .create = f_create,
    .destroy = f_destroy,
    .rank = f_rank,
    .world = f_world,
    .last_error = f_last_error,
    .all_reduce = f_all_reduce,
    .all_gather = f_all_gather,
    .reduce_scatter = f_reduce_scatter,
    .broadcast = f_broadcast,
    .reduce = f_reduce,
    .gather = f_gather,
    .scatter = f_scatter,
    .all_to_all = f_all_to_all,
    .send = f_send,
    .recv = f_recv,
    .barrier = f_barrier,
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
