/* buggy_transport.c — an example transport plugin for collgrad-check, over
 * MPI, with one deliberate bug: reduce_scatter hands rank r the block that
 * belongs to rank W-1-r (the slices come out in the wrong rank order).
 * Every other entry is correct, so the tool must catch exactly the cases
 * whose forward or backward goes through reduce_scatter.
 *
 * Build: mpicc -shared -fPIC $(pkg-config --cflags collgrad-check) \
 *            buggy_transport.c -o libbuggy_transport.so
 * Run:   collgrad-check --transport ./libbuggy_transport.so CASES...
 *
 * Only f32 and f64: the table leaves CGT_CAP_HALF unset, so the tool refuses
 * bf16/f16 cases with a message before calling in. */
#include <limits.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collgrad_transport.h"

struct cg_transport {
    MPI_Comm comm;
    int rank, world;
    int *counts, *displs;   /* world ints each: MPI's int count arrays */
    int *counts2, *displs2; /* the receive side of all_to_all */
    char err[512];
};

/* ---- errors, dtypes, counts ----------------------------------------------- */

__attribute__((format(printf, 2, 3))) static int fail(cg_transport *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->err, sizeof t->err, fmt, ap);
    va_end(ap);
    return -1;
}

static int mpi_fail(cg_transport *t, const char *fn, int rc)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error code %d", rc);
    return fail(t, "%s failed: %s", fn, text);
}

/* Call fn(args...); on failure record MPI's message and return -1. */
#define TRY(t, fn, args)                                                                          \
    do {                                                                                          \
        int rc_ = fn args;                                                                        \
        if (rc_ != MPI_SUCCESS)                                                                   \
            return mpi_fail((t), #fn, rc_);                                                       \
    } while (0)

static int mpi_type(cg_transport *t, cgt_dtype dt, MPI_Datatype *out, size_t *size)
{
    if (dt == CGT_F32) {
        *out = MPI_FLOAT;
        *size = sizeof(float);
        return 0;
    }
    if (dt == CGT_F64) {
        *out = MPI_DOUBLE;
        *size = sizeof(double);
        return 0;
    }
    return fail(t, "dtype %d is not supported (f32 and f64 only)", (int)dt);
}

/* MPI has no average: AVG reduces with SUM, then divide_by_world. */
static int mpi_op(cg_transport *t, cgt_redop op, MPI_Op *out)
{
    static const MPI_Op ops[] = {MPI_SUM, MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN};
    if ((unsigned)op > CGT_MIN)
        return fail(t, "unknown reduction op %d", (int)op);
    *out = ops[op];
    return 0;
}

static void divide_by_world(void *buf, size_t n, cgt_dtype dt, int world)
{
    for (size_t i = 0; i < n; i++) {
        if (dt == CGT_F32)
            ((float *)buf)[i] /= (float)world;
        else
            ((double *)buf)[i] /= world;
    }
}

static int int_count(cg_transport *t, size_t n, int *out)
{
    if (n > INT_MAX)
        return fail(t, "count %zu exceeds INT_MAX: MPI counts are int", n);
    *out = (int)n;
    return 0;
}

/* Per-rank counts to MPI's int counts and displacements (total fits int). */
static int int_counts(cg_transport *t, const size_t *counts, int *ic, int *displs)
{
    size_t total = 0;
    for (int k = 0; k < t->world; k++) {
        if (counts[k] > INT_MAX || total + counts[k] > INT_MAX)
            return fail(t, "counts[%d] = %zu brings the total past INT_MAX", k, counts[k]);
        ic[k] = (int)counts[k];
        displs[k] = (int)total;
        total += counts[k];
    }
    return 0;
}

static int check_rank(cg_transport *t, const char *what, int r)
{
    return r < 0 || r >= t->world ? fail(t, "%s %d out of range (world %d)", what, r, t->world)
                                  : 0;
}

/* ---- collectives ---------------------------------------------------------- */

static int b_all_reduce(cg_transport *t, const void *send, void *recv, size_t count,
                        cgt_dtype dt, cgt_redop op)
{
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_Op mop = MPI_OP_NULL;
    size_t esz = 0;
    int n = 0;
    if (mpi_type(t, dt, &type, &esz) || mpi_op(t, op, &mop) || int_count(t, count, &n))
        return -1;
    TRY(t, MPI_Allreduce, (send == recv ? MPI_IN_PLACE : send, recv, n, type, mop, t->comm));
    if (op == CGT_AVG)
        divide_by_world(recv, count, dt, t->world);
    return 0;
}

static int b_all_gather(cg_transport *t, const void *send, void *recv, const size_t *counts,
                        cgt_dtype dt)
{
    MPI_Datatype type = MPI_DATATYPE_NULL;
    size_t esz = 0;
    if (mpi_type(t, dt, &type, &esz) || int_counts(t, counts, t->counts, t->displs))
        return -1;
    TRY(t, MPI_Allgatherv, (send, t->counts[t->rank], type, recv, t->counts, t->displs, type,
                            t->comm));
    return 0;
}

/* THE BUG: the full reduction is right, but rank r copies out the block of
 * rank W-1-r instead of its own (as much of it as fits; the rest is zero).
 * At W = 1, and for the middle rank of an odd world, it happens to be right. */
static int b_reduce_scatter(cg_transport *t, const void *send, void *recv, const size_t *counts,
                            cgt_dtype dt, cgt_redop op)
{
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_Op mop = MPI_OP_NULL;
    size_t esz = 0;
    if (mpi_type(t, dt, &type, &esz) || mpi_op(t, op, &mop) ||
        int_counts(t, counts, t->counts, t->displs))
        return -1;
    int total = t->displs[t->world - 1] + t->counts[t->world - 1];
    char *all = malloc((size_t)total * esz + 1);
    if (!all)
        return fail(t, "out of memory for %d elements", total);
    int rc = MPI_Allreduce(send, all, total, type, mop, t->comm);
    if (rc != MPI_SUCCESS) {
        free(all);
        return mpi_fail(t, "MPI_Allreduce", rc);
    }
    if (op == CGT_AVG)
        divide_by_world(all, (size_t)total, dt, t->world);
    int wrong = t->world - 1 - t->rank;
    size_t mine = counts[t->rank], theirs = counts[wrong];
    size_t n = mine < theirs ? mine : theirs;
    memcpy(recv, all + (size_t)t->displs[wrong] * esz, n * esz);
    memset((char *)recv + n * esz, 0, (mine - n) * esz);
    free(all);
    return 0;
}

static int b_broadcast(cg_transport *t, void *buf, size_t count, cgt_dtype dt, int root)
{
    MPI_Datatype type = MPI_DATATYPE_NULL;
    size_t esz = 0;
    int n = 0;
    if (mpi_type(t, dt, &type, &esz) || int_count(t, count, &n) || check_rank(t, "root", root))
        return -1;
    TRY(t, MPI_Bcast, (buf, n, type, root, t->comm));
    return 0;
}

static int b_reduce(cg_transport *t, const void *send, void *recv, size_t count, cgt_dtype dt,
                    cgt_redop op, int root)
{
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_Op mop = MPI_OP_NULL;
    size_t esz = 0;
    int n = 0;
    if (mpi_type(t, dt, &type, &esz) || mpi_op(t, op, &mop) || int_count(t, count, &n) ||
        check_rank(t, "root", root))
        return -1;
    bool at_root = t->rank == root;
    const void *src = at_root && send == recv ? MPI_IN_PLACE : send;
    TRY(t, MPI_Reduce, (src, recv, n, type, mop, root, t->comm));
    if (op == CGT_AVG && at_root)
        divide_by_world(recv, count, dt, t->world);
    return 0;
}

static int b_gather(cg_transport *t, const void *send, void *recv, const size_t *counts,
                    cgt_dtype dt, int root)
{
    MPI_Datatype type = MPI_DATATYPE_NULL;
    size_t esz = 0;
    if (mpi_type(t, dt, &type, &esz) || int_counts(t, counts, t->counts, t->displs) ||
        check_rank(t, "root", root))
        return -1;
    TRY(t, MPI_Gatherv, (send, t->counts[t->rank], type, recv, t->counts, t->displs, type, root,
                         t->comm));
    return 0;
}

static int b_scatter(cg_transport *t, const void *send, void *recv, const size_t *counts,
                     cgt_dtype dt, int root)
{
    MPI_Datatype type = MPI_DATATYPE_NULL;
    size_t esz = 0;
    if (mpi_type(t, dt, &type, &esz) || int_counts(t, counts, t->counts, t->displs) ||
        check_rank(t, "root", root))
        return -1;
    TRY(t, MPI_Scatterv, (send, t->counts, t->displs, type, recv, t->counts[t->rank], type, root,
                          t->comm));
    return 0;
}

static int b_all_to_all(cg_transport *t, const void *send, const size_t *sendcounts, void *recv,
                        const size_t *recvcounts, cgt_dtype dt)
{
    MPI_Datatype type = MPI_DATATYPE_NULL;
    size_t esz = 0;
    if (mpi_type(t, dt, &type, &esz) || int_counts(t, sendcounts, t->counts, t->displs) ||
        int_counts(t, recvcounts, t->counts2, t->displs2))
        return -1;
    TRY(t, MPI_Alltoallv, (send, t->counts, t->displs, type, recv, t->counts2, t->displs2, type,
                           t->comm));
    return 0;
}

static int check_p2p(cg_transport *t, size_t count, cgt_dtype dt, int peer, int tag,
                     MPI_Datatype *type, int *n)
{
    size_t esz = 0;
    if (mpi_type(t, dt, type, &esz) || int_count(t, count, n) || check_rank(t, "peer", peer))
        return -1;
    return tag < 0 || tag >= 32768 ? fail(t, "tag %d outside 0..32767", tag) : 0;
}

static int b_send(cg_transport *t, const void *buf, size_t count, cgt_dtype dt, int peer, int tag)
{
    MPI_Datatype type = MPI_DATATYPE_NULL;
    int n = 0;
    if (check_p2p(t, count, dt, peer, tag, &type, &n))
        return -1;
    TRY(t, MPI_Send, (buf, n, type, peer, tag, t->comm));
    return 0;
}

/* MPI accepts a shorter message than asked for: compare the count. */
static int b_recv(cg_transport *t, void *buf, size_t count, cgt_dtype dt, int peer, int tag)
{
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_Status st;
    int n = 0, got = 0;
    if (check_p2p(t, count, dt, peer, tag, &type, &n))
        return -1;
    TRY(t, MPI_Recv, (buf, n, type, peer, tag, t->comm, &st));
    TRY(t, MPI_Get_count, (&st, type, &got));
    if (got != n)
        return fail(t, "recv from rank %d tag %d: expected %d elements, got %d", peer, tag, n, got);
    return 0;
}

static int b_barrier(cg_transport *t)
{
    TRY(t, MPI_Barrier, (t->comm));
    return 0;
}

/* ---- instances ------------------------------------------------------------ */

static void b_destroy(cg_transport *t)
{
    if (!t)
        return;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && t->comm != MPI_COMM_NULL) /* no MPI call is allowed after MPI_Finalize */
        MPI_Comm_free(&t->comm);
    free(t->counts);
    free(t);
}

/* A private duplicate of MPI_COMM_WORLD keeps this transport's messages
 * apart from the tool's; MPI_ERRORS_RETURN turns failures into messages. */
static cg_transport *b_create(const char **err)
{
    int initialized = 0;
    cg_transport *t = calloc(1, sizeof *t);
    if (!t) {
        *err = "out of memory";
        return NULL;
    }
    t->comm = MPI_COMM_NULL;
    if (MPI_Initialized(&initialized) != MPI_SUCCESS || !initialized)
        *err = "MPI is not initialized";
    else if (MPI_Comm_dup(MPI_COMM_WORLD, &t->comm) != MPI_SUCCESS)
        *err = "MPI_Comm_dup(MPI_COMM_WORLD) failed";
    else if (MPI_Comm_set_errhandler(t->comm, MPI_ERRORS_RETURN) != MPI_SUCCESS)
        *err = "MPI_Comm_set_errhandler failed";
    else if (MPI_Comm_rank(t->comm, &t->rank) != MPI_SUCCESS ||
             MPI_Comm_size(t->comm, &t->world) != MPI_SUCCESS)
        *err = "MPI_Comm_rank/MPI_Comm_size failed";
    else if (!(t->counts = calloc(4 * (size_t)t->world, sizeof *t->counts)))
        *err = "out of memory";
    else {
        t->displs = t->counts + t->world;
        t->counts2 = t->displs + t->world;
        t->displs2 = t->counts2 + t->world;
        return t;
    }
    b_destroy(t);
    return NULL;
}

static int b_rank(const cg_transport *t) { return t->rank; }
static int b_world(const cg_transport *t) { return t->world; }
static const char *b_last_error(const cg_transport *t) { return t->err; }

static const cg_transport_ops buggy_ops = {
    .abi_version = CG_TRANSPORT_ABI_VERSION,
    .name = "buggy-mpi",
    .version = "example 1 (reduce_scatter slices in the wrong rank order)",
    .caps = CGT_CAP_HOST,
    .create = b_create, .destroy = b_destroy, .rank = b_rank, .world = b_world,
    .last_error = b_last_error,
    .all_reduce = b_all_reduce, .all_gather = b_all_gather, .reduce_scatter = b_reduce_scatter,
    .broadcast = b_broadcast, .reduce = b_reduce, .gather = b_gather, .scatter = b_scatter,
    .all_to_all = b_all_to_all, .send = b_send, .recv = b_recv, .barrier = b_barrier,
};

/* The one exported symbol (collgrad_transport.h). */
const cg_transport_ops *collgrad_transport(void);
const cg_transport_ops *collgrad_transport(void) { return &buggy_ops; }
