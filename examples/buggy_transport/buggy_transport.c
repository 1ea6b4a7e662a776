/* buggy_transport.c — an example transport plugin for collgrad-check with one
 * deliberate bug: reduce_scatter hands rank r the block that belongs to rank
 * W-1-r (the slices come out in the wrong rank order). Every other call is
 * the tool's own MPI transport, reached through the public plugin ABI
 * (collgrad_builtin_transport), so the tool must catch exactly the cases
 * whose forward or backward goes through reduce_scatter.
 *
 * Build: cc -shared -fPIC $(pkg-config --cflags collgrad-check) \
 *            buggy_transport.c -o libbuggy_transport.so
 * Run:   collgrad-check --transport ./libbuggy_transport.so CASES...
 *
 * Only f32 and f64: the table leaves CGT_CAP_HALF unset, so the tool refuses
 * bf16/f16 cases with a message before calling in.
 *
 * One entry takes every call (ABI 3), so the wrapper intercepts the one it
 * breaks and hands the rest on. Process groups: split wraps the built-in's
 * split (ABI 2), bug included.
 *
 * Ownership: an instance owns the MPI transport instance it wraps and
 * destroys it with itself. */
#include <stdlib.h>
#include <string.h>

#include "collgrad_transport.h"

struct cg_transport {
    const cg_transport_ops *mpi; /* the built-in table, never NULL once created */
    cg_transport *inner;         /* its instance: every correct call goes there */
    const char *err;             /* this wrapper's own failure, or NULL */
};

static cg_transport *b_create(const char **err)
{
    const cg_transport_ops *mpi = collgrad_builtin_transport("mpi");
    cg_transport *t = mpi ? calloc(1, sizeof *t) : NULL;
    if (!t) {
        *err = mpi ? "out of memory" : "collgrad-check offers no built-in 'mpi' transport";
        return NULL;
    }
    t->mpi = mpi;
    if (!(t->inner = mpi->create(err))) {
        free(t);
        return NULL;
    }
    return t;
}

static void b_destroy(cg_transport *t)
{
    if (t)
        t->mpi->destroy(t->inner);
    free(t);
}

static int b_rank(const cg_transport *t) { return t->mpi->rank(t->inner); }
static int b_world(const cg_transport *t) { return t->mpi->world(t->inner); }
static const char *b_last_error(const cg_transport *t)
{
    return t->err ? t->err : t->mpi->last_error(t->inner);
}

/* THE BUG: the full reduction is right (one all_reduce of the whole send
 * buffer), but rank r copies out the block of rank W-1-r instead of its own
 * (as much of it as fits; the rest is zero). At W = 1, and for the middle
 * rank of an odd world, it happens to be right. */
static int b_reduce_scatter(cg_transport *t, const cgt_call *c)
{
    int rank = b_rank(t), world = b_world(t), wrong = world - 1 - rank;
    size_t esz = c->dtype == CGT_F64 ? sizeof(double) : sizeof(float), total = 0, offset = 0;
    t->err = NULL;
    if (c->dtype != CGT_F32 && c->dtype != CGT_F64)
        return t->err = "buggy-mpi: f32 and f64 only", -1;
    for (int k = 0; k < world; k++) {
        offset = k == wrong ? total : offset;
        total += c->counts[k];
    }
    char *all = malloc(total * esz + 1);
    if (!all)
        return t->err = "buggy-mpi: out of memory for the reduced buffer", -1;
    memcpy(all, c->send, total * esz);
    const cgt_call whole = {.kind = CGT_ALL_REDUCE, .send = all, .recv = all, .count = total, .dtype = c->dtype, .op = c->op};
    int rc = t->mpi->call(t->inner, &whole);
    if (rc == 0) {
        size_t mine = c->counts[rank], n = mine < c->counts[wrong] ? mine : c->counts[wrong];
        memcpy(c->recv, all + offset * esz, n * esz);
        memset((char *)c->recv + n * esz, 0, (mine - n) * esz);
    }
    free(all);
    return rc;
}

/* The table's one entry: the broken reduce_scatter, every other call the
 * built-in MPI transport's, unchanged. */
static int b_call(cg_transport *t, const cgt_call *c)
{
    t->err = NULL;
    if (c->kind == CGT_REDUCE_SCATTER)
        return b_reduce_scatter(t, c);
    return t->mpi->call(t->inner, c);
}

/* Process groups (ABI 2): the built-in's split of the inner instance, wrapped
 * like the world's, so a group's reduce_scatter has the same bug. */
static cg_transport *b_split(cg_transport *t, int color, int key, const char **err)
{
    cg_transport *inner = t->mpi->split(t->inner, color, key, err);
    if (!inner)
        return NULL; /* *err says why, or NULL: this rank is no member */
    cg_transport *g = calloc(1, sizeof *g);
    if (!g) {
        t->mpi->destroy(inner);
        *err = "out of memory";
        return NULL;
    }
    g->mpi = t->mpi;
    g->inner = inner;
    return g;
}

static const cg_transport_ops buggy_ops = {
    .abi_version = CG_TRANSPORT_ABI_VERSION,
    .name = "buggy-mpi",
    .version =
        "example 3 (the built-in mpi with groups; reduce_scatter slices in the wrong rank order)",
    .caps = CGT_CAP_HOST,
    .create = b_create,
    .destroy = b_destroy,
    .rank = b_rank,
    .world = b_world,
    .last_error = b_last_error,
    .call = b_call,
    .split = b_split,
};

/* The one exported symbol (collgrad_transport.h). */
const cg_transport_ops *collgrad_transport(void);
const cg_transport_ops *collgrad_transport(void) { return &buggy_ops; }
