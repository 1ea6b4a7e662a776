/* transport_mpi.c — the built-in "mpi" transport (collgrad_transport.h).
 *
 * Each instance works on its own duplicate of MPI_COMM_WORLD, so its traffic
 * can never match messages of the tool or of another instance, and it sets
 * MPI_ERRORS_RETURN on that duplicate so a failing call comes back as an
 * error message instead of aborting every rank.
 *
 * Its send and recv (buffered: each send's copy is held until MPI has sent
 * it) are in transport_mpi_p2p.c.
 *
 * MPI has no 16-bit float types, so bf16 and f16 travel as opaque 2-byte
 * elements and are reduced by user-defined ops that widen to float, combine,
 * and round back. MPI counts and displacements are int: larger requests are
 * refused with a message rather than silently truncated. */
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport_mpi.h"

enum { REDUCE_PIECE_BYTES = 16 << 20 }; /* mpi_reduce's pieces */

/* ---- errors --------------------------------------------------------------- */

const char *cgm_error_text(int rc, char *text)
{
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        snprintf(text, MPI_MAX_ERROR_STRING, "MPI error code %d", rc);
    return text;
}

/* ---- bf16/f16 reductions -------------------------------------------------- */

/* MPI hands a user op pairs of vectors; each pair is widened to float,
 * combined and rounded back, so a reduction over W ranks rounds W-1 times,
 * as NCCL's half-precision reductions do. MAX/MIN let a NaN win so that a
 * NaN on any rank shows up in the result. */
#define HALF_OP(name, widen, narrow, expr)                                                        \
    static void name(void *in_, void *inout_, int *len, MPI_Datatype *type)                       \
    {                                                                                             \
        (void)type;                                                                               \
        const uint16_t *in = in_;                                                                 \
        uint16_t *io = inout_;                                                                    \
        for (int i = 0; i < *len; i++) {                                                          \
            float a = widen(in[i]), b = widen(io[i]);                                             \
            io[i] = narrow(expr);                                                                 \
        }                                                                                         \
    }

HALF_OP(bf16_sum, cg_bf16_to_f32, cg_f32_to_bf16, a + b)
HALF_OP(bf16_prod, cg_bf16_to_f32, cg_f32_to_bf16, a * b)
HALF_OP(bf16_max, cg_bf16_to_f32, cg_f32_to_bf16, (isnan(a) || a > b) ? a : b)
HALF_OP(bf16_min, cg_bf16_to_f32, cg_f32_to_bf16, (isnan(a) || a < b) ? a : b)
HALF_OP(f16_sum, cg_f16_to_f32, cg_f32_to_f16, a + b)
HALF_OP(f16_prod, cg_f16_to_f32, cg_f32_to_f16, a * b)
HALF_OP(f16_max, cg_f16_to_f32, cg_f32_to_f16, (isnan(a) || a > b) ? a : b)
HALF_OP(f16_min, cg_f16_to_f32, cg_f32_to_f16, (isnan(a) || a < b) ? a : b)

static MPI_User_function *const bf16_fns[HALF_NOPS] = {bf16_sum, bf16_prod, bf16_max, bf16_min};
static MPI_User_function *const f16_fns[HALF_NOPS] = {f16_sum, f16_prod, f16_max, f16_min};

/* ---- dtypes, ops, counts -------------------------------------------------- */

int cgm_type(cg_transport *t, cgt_dtype dt, MPI_Datatype *out)
{
    switch (dt) {
    case CGT_F32: *out = MPI_FLOAT; return 0;
    case CGT_F64: *out = MPI_DOUBLE; return 0;
    case CGT_BF16:
    case CGT_F16: *out = t->half; return 0;
    }
    return cg_error(&t->st, "unknown dtype %d", (int)dt);
}

/* MPI has no average: AVG reduces with SUM and the callers then divide each
 * element by the world size locally (divide_by_world), one more rounding,
 * which is what NCCL's ncclAvg does for floating types too. */
static int mpi_op(cg_transport *t, cgt_dtype dt, cgt_redop op, MPI_Op *out)
{
    static const MPI_Op builtin[] = {MPI_SUM, MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN};
    static const int half_index[] = {HALF_SUM, HALF_SUM, HALF_PROD, HALF_MAX, HALF_MIN};
    if ((unsigned)op > CGT_MIN)
        return cg_error(&t->st, "unknown reduction op %d", (int)op);
    if (dt == CGT_BF16 || dt == CGT_F16)
        *out = (dt == CGT_BF16 ? t->bf16_op : t->f16_op)[half_index[op]];
    else
        *out = builtin[op];
    return 0;
}

static int type_and_op(cg_transport *t, cgt_dtype dt, cgt_redop op, MPI_Datatype *type, MPI_Op *mop)
{
    return cgm_type(t, dt, type) || mpi_op(t, dt, op, mop) ? -1 : 0;
}

static void divide_by_world(void *buf, size_t n, cgt_dtype dt, int world)
{
    float *f = buf;
    double *d = buf;
    uint16_t *h = buf;
    for (size_t i = 0; i < n; i++) {
        switch (dt) {
        case CGT_F32: f[i] /= (float)world; break;
        case CGT_F64: d[i] /= world; break;
        case CGT_BF16: h[i] = cg_f32_to_bf16(cg_bf16_to_f32(h[i]) / (float)world); break;
        case CGT_F16: h[i] = cg_f32_to_f16(cg_f16_to_f32(h[i]) / (float)world); break;
        }
    }
}

int cgm_int_count(cg_transport *t, size_t n, int *out)
{
    if (n > INT_MAX)
        return cg_error(&t->st, "count %zu exceeds INT_MAX (%d): MPI counts are int", n, INT_MAX);
    *out = (int)n;
    return 0;
}

/* Per-rank counts to MPI's int counts and displacements. The total must fit
 * in int too, so that every displacement does. */
static int int_counts(cg_transport *t, const size_t *counts, int *ic, int *displs)
{
    size_t total = 0;
    for (int k = 0; k < t->world; k++) {
        if (counts[k] > INT_MAX || total + counts[k] > INT_MAX)
            return cg_error(&t->st,
                            "counts[%d] = %zu brings the total past INT_MAX (%d): MPI counts and "
                            "displacements are int",
                            k, counts[k], INT_MAX);
        ic[k] = (int)counts[k];
        displs[k] = (int)total;
        total += counts[k];
    }
    return 0;
}

/* The count every rank has when all of ic's world entries are equal, or -1:
 * then the plain collective (MPI_Allgather, MPI_Reduce_scatter_block, ...)
 * serves, which MPI implements far better than its v-variant (MPICH's
 * MPI_Allgatherv took 260x MPI_Allgather's time for 16 MiB per rank). Only
 * for counts every rank holds alike, so that all ranks choose the same call. */
static int uniform_count(const cg_transport *t, const int *ic)
{
    for (int k = 1; k < t->world; k++)
        if (ic[k] != ic[0])
            return -1;
    return ic[0];
}

int cgm_check_rank(cg_transport *t, const char *what, int r)
{
    if (r < 0 || r >= t->world)
        return cg_error(&t->st, "%s %d out of range (world %d)", what, r, t->world);
    return 0;
}

/* ---- collectives ---------------------------------------------------------- */

static int mpi_all_reduce(cg_transport *t, const void *send, void *recv, size_t count,
                          cgt_dtype dt, cgt_redop op)
{
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_Op mop = MPI_OP_NULL;
    int n = 0;
    if (type_and_op(t, dt, op, &type, &mop) || cgm_int_count(t, count, &n))
        return -1;
    const void *src = send == recv ? MPI_IN_PLACE : send;
    MPI_TRY(t, MPI_Allreduce, (src, recv, n, type, mop, t->comm));
    if (op == CGT_AVG)
        divide_by_world(recv, count, dt, t->world);
    return 0;
}

static int mpi_all_gather(cg_transport *t, const void *send, void *recv, const size_t *counts,
                          cgt_dtype dt)
{
    MPI_Datatype type = MPI_DATATYPE_NULL;
    if (cgm_type(t, dt, &type) || int_counts(t, counts, t->counts, t->displs))
        return -1;
    int n = uniform_count(t, t->counts);
    if (n >= 0)
        MPI_TRY(t, MPI_Allgather, (send, n, type, recv, n, type, t->comm));
    else
        MPI_TRY(t, MPI_Allgatherv, (send, t->counts[t->rank], type, recv, t->counts, t->displs, type,
                                    t->comm));
    return 0;
}

static int mpi_reduce_scatter(cg_transport *t, const void *send, void *recv, const size_t *counts,
                              cgt_dtype dt, cgt_redop op)
{
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_Op mop = MPI_OP_NULL;
    if (type_and_op(t, dt, op, &type, &mop) || int_counts(t, counts, t->counts, t->displs))
        return -1;
    int n = uniform_count(t, t->counts);
    if (n >= 0)
        MPI_TRY(t, MPI_Reduce_scatter_block, (send, recv, n, type, mop, t->comm));
    else
        MPI_TRY(t, MPI_Reduce_scatter, (send, recv, t->counts, type, mop, t->comm));
    if (op == CGT_AVG)
        divide_by_world(recv, counts[t->rank], dt, t->world);
    return 0;
}

static int mpi_broadcast(cg_transport *t, void *buf, size_t count, cgt_dtype dt, int root)
{
    MPI_Datatype type = MPI_DATATYPE_NULL;
    int n = 0;
    if (cgm_type(t, dt, &type) || cgm_int_count(t, count, &n) || cgm_check_rank(t, "root", root))
        return -1;
    MPI_TRY(t, MPI_Bcast, (buf, n, type, root, t->comm));
    return 0;
}

static int mpi_reduce(cg_transport *t, const void *send, void *recv, size_t count, cgt_dtype dt,
                      cgt_redop op, int root)
{
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_Op mop = MPI_OP_NULL;
    int n = 0;
    if (type_and_op(t, dt, op, &type, &mop) || cgm_int_count(t, count, &n) ||
        cgm_check_rank(t, "root", root))
        return -1;
    bool at_root = t->rank == root, in_place = at_root && send == recv;
    int esz = 0;
    MPI_TRY(t, MPI_Type_size, (type, &esz));
    /* In pieces: MPICH's MPI_Reduce mallocs and fills temporaries of the
     * whole count on the other ranks (the receive buffer they lack, the
     * tree's partial sums), so a broadcast's backward would hold one more
     * gradient's worth on every non-root; per piece they are a few MiB. Each
     * element's sum is the same: MPI reduces element by element.
     * In place, the root's piece goes out from a copy: MPICH 4.0.2's
     * MPI_Reduce with MPI_IN_PLACE at a root other than 0 reads a bad
     * address from about 1000 elements on (pmodels/mpich#6540; seen here at
     * W=2, root 1, 1000 f32), so MPI_IN_PLACE is never passed. */
    int piece = REDUCE_PIECE_BYTES / esz, off = 0;
    char *staged = in_place ? malloc((size_t)(n < piece ? n : piece) * (size_t)esz + 1) : NULL;
    if (in_place && !staged)
        return cg_error(&t->st, "reduce: out of memory for a %d-element piece", n < piece ? n : piece);
    do {
        int len = n - off < piece ? n - off : piece;
        const char *s = (const char *)send + (size_t)off * (size_t)esz;
        char *r = at_root ? (char *)recv + (size_t)off * (size_t)esz : recv;
        if (staged)
            s = memcpy(staged, s, (size_t)len * (size_t)esz);
        int rc = MPI_Reduce(s, r, len, type, mop, root, t->comm);
        if (rc != MPI_SUCCESS) {
            char text[MPI_MAX_ERROR_STRING];
            free(staged);
            return cg_error(&t->st, "MPI_Reduce failed: %s", cgm_error_text(rc, text));
        }
        off += len;
    } while (off < n);
    free(staged);
    if (op == CGT_AVG && at_root)
        divide_by_world(recv, count, dt, t->world);
    return 0;
}

static int mpi_gather(cg_transport *t, const void *send, void *recv, const size_t *counts,
                      cgt_dtype dt, int root)
{
    MPI_Datatype type = MPI_DATATYPE_NULL;
    if (cgm_type(t, dt, &type) || int_counts(t, counts, t->counts, t->displs) ||
        cgm_check_rank(t, "root", root))
        return -1;
    int n = uniform_count(t, t->counts);
    if (n >= 0)
        MPI_TRY(t, MPI_Gather, (send, n, type, recv, n, type, root, t->comm));
    else
        MPI_TRY(t, MPI_Gatherv, (send, t->counts[t->rank], type, recv, t->counts, t->displs, type, root,
                                 t->comm));
    return 0;
}

static int mpi_scatter(cg_transport *t, const void *send, void *recv, const size_t *counts,
                       cgt_dtype dt, int root)
{
    MPI_Datatype type = MPI_DATATYPE_NULL;
    if (cgm_type(t, dt, &type) || int_counts(t, counts, t->counts, t->displs) ||
        cgm_check_rank(t, "root", root))
        return -1;
    int n = uniform_count(t, t->counts);
    if (n >= 0)
        MPI_TRY(t, MPI_Scatter, (send, n, type, recv, n, type, root, t->comm));
    else
        MPI_TRY(t, MPI_Scatterv, (send, t->counts, t->displs, type, recv, t->counts[t->rank], type,
                                  root, t->comm));
    return 0;
}

static int mpi_all_to_all(cg_transport *t, const void *send, const size_t *sendcounts, void *recv,
                          const size_t *recvcounts, cgt_dtype dt)
{
    MPI_Datatype type = MPI_DATATYPE_NULL;
    if (cgm_type(t, dt, &type) || int_counts(t, sendcounts, t->counts, t->displs) ||
        int_counts(t, recvcounts, t->counts2, t->displs2))
        return -1;
    /* always the v-variant: a rank sees only its own row and column of the
     * count matrix, so ranks could disagree on whether it is uniform (and
     * then call different collectives: a hang) */
    MPI_TRY(t, MPI_Alltoallv, (send, t->counts, t->displs, type, recv, t->counts2, t->displs2, type,
                               t->comm));
    return 0;
}

static int mpi_barrier(cg_transport *t)
{
    MPI_TRY(t, MPI_Barrier, (t->comm));
    return 0;
}

/* ---- instances ------------------------------------------------------------ */

static void mpi_destroy(cg_transport *t)
{
    if (!t)
        return;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) { /* after MPI_Finalize no MPI call is allowed, frees included */
        cg_mpi_flush_sends(t); /* the copies live until MPI is done with them */
        for (int k = 0; k < HALF_NOPS; k++) {
            if (t->bf16_op[k] != MPI_OP_NULL)
                MPI_Op_free(&t->bf16_op[k]);
            if (t->f16_op[k] != MPI_OP_NULL)
                MPI_Op_free(&t->f16_op[k]);
        }
        if (t->half != MPI_DATATYPE_NULL)
            MPI_Type_free(&t->half);
        if (t->comm != MPI_COMM_NULL)
            MPI_Comm_free(&t->comm);
    }
    cgm_free_held(t); /* after MPI_Finalize, which completed them; else flushed above */
    free(t->counts);
    free(t);
}

/* Everything an instance needs from MPI, on t->comm (its own communicator,
 * set by the caller); *err is set to static text on failure. */
static int setup(cg_transport *t, const char **err)
{
    *err = "MPI_Comm_set_errhandler failed";
    if (MPI_Comm_set_errhandler(t->comm, MPI_ERRORS_RETURN) != MPI_SUCCESS)
        return -1;
    *err = "MPI_Comm_rank/MPI_Comm_size failed";
    if (MPI_Comm_rank(t->comm, &t->rank) != MPI_SUCCESS ||
        MPI_Comm_size(t->comm, &t->world) != MPI_SUCCESS)
        return -1;
    *err = "MPI_Type_contiguous/MPI_Type_commit failed";
    if (MPI_Type_contiguous(2, MPI_BYTE, &t->half) != MPI_SUCCESS ||
        MPI_Type_commit(&t->half) != MPI_SUCCESS)
        return -1;
    *err = "MPI_Op_create failed";
    for (int k = 0; k < HALF_NOPS; k++)
        if (MPI_Op_create(bf16_fns[k], 1, &t->bf16_op[k]) != MPI_SUCCESS ||
            MPI_Op_create(f16_fns[k], 1, &t->f16_op[k]) != MPI_SUCCESS)
            return -1;
    *err = "out of memory";
    t->counts = calloc(4 * (size_t)t->world, sizeof *t->counts);
    if (!t->counts)
        return -1;
    t->displs = t->counts + t->world;
    t->counts2 = t->displs + t->world;
    t->displs2 = t->counts2 + t->world;
    *err = NULL;
    return 0;
}

static cg_transport *instance_new(const char **err)
{
    cg_transport *t = calloc(1, sizeof *t);
    if (!t) {
        *err = "out of memory";
        return NULL;
    }
    t->comm = MPI_COMM_NULL;
    t->half = MPI_DATATYPE_NULL;
    for (int k = 0; k < HALF_NOPS; k++)
        t->bf16_op[k] = t->f16_op[k] = MPI_OP_NULL;
    return t;
}

static cg_transport *mpi_create(const char **err)
{
    int initialized = 0;
    if (MPI_Initialized(&initialized) != MPI_SUCCESS || !initialized) {
        *err = "MPI is not initialized";
        return NULL;
    }
    cg_transport *t = instance_new(err);
    if (!t)
        return NULL;
    *err = "MPI_Comm_dup(MPI_COMM_WORLD) failed";
    if (MPI_Comm_dup(MPI_COMM_WORLD, &t->comm) != MPI_SUCCESS || setup(t, err) != 0) {
        mpi_destroy(t);
        return NULL;
    }
    return t;
}

/* A process group's instance: MPI_Comm_split of t's communicator, so the
 * group's traffic is as private as t's own. */
static cg_transport *mpi_split(cg_transport *t, int color, int key, const char **err)
{
    MPI_Comm comm = MPI_COMM_NULL;
    *err = "MPI_Comm_split failed";
    if (MPI_Comm_split(t->comm, color < 0 ? MPI_UNDEFINED : color, key, &comm) != MPI_SUCCESS)
        return NULL;
    *err = NULL;
    if (comm == MPI_COMM_NULL) /* not a member */
        return NULL;
    cg_transport *g = instance_new(err);
    if (!g) {
        MPI_Comm_free(&comm);
        return NULL;
    }
    g->comm = comm;
    if (setup(g, err) != 0) {
        mpi_destroy(g);
        return NULL;
    }
    return g;
}

static int mpi_rank(const cg_transport *t) { return t->rank; }
static int mpi_world(const cg_transport *t) { return t->world; }
static const char *mpi_last_error(const cg_transport *t) { return t->st.msg; }

static cg_transport_ops mpi_ops = {
    .abi_version = CG_TRANSPORT_ABI_VERSION,
    .name = "mpi",
    .version = "",
    .caps = CGT_CAP_HOST | CGT_CAP_HALF,
    .create = mpi_create,
    .destroy = mpi_destroy,
    .rank = mpi_rank,
    .world = mpi_world,
    .last_error = mpi_last_error,
    .all_reduce = mpi_all_reduce,
    .all_gather = mpi_all_gather,
    .reduce_scatter = mpi_reduce_scatter,
    .broadcast = mpi_broadcast,
    .reduce = mpi_reduce,
    .gather = mpi_gather,
    .scatter = mpi_scatter,
    .all_to_all = mpi_all_to_all,
    .send = cgm_send,
    .recv = cgm_recv,
    .barrier = mpi_barrier,
    .split = mpi_split,
};

/* The first line of MPI_Get_library_version (e.g. "MPICH Version: 4.0.2"),
 * with runs of blanks folded to one space, for one-line reports. MPI allows
 * this call before MPI_Init. */
static void read_library_version(char *out, size_t len)
{
    static char raw[MPI_MAX_LIBRARY_VERSION_STRING];
    int n = 0;
    size_t o = 0;
    if (MPI_Get_library_version(raw, &n) != MPI_SUCCESS)
        n = 0;
    for (int i = 0; i < n && raw[i] && raw[i] != '\n' && o + 1 < len; i++) {
        bool blank = raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\r';
        if (!blank)
            out[o++] = raw[i];
        else if (o > 0 && out[o - 1] != ' ')
            out[o++] = ' ';
    }
    while (o > 0 && out[o - 1] == ' ')
        o--;
    out[o] = '\0';
}

const cg_transport_ops *cg_transport_mpi(void)
{
    static char version[256];
    if (!version[0]) {
        read_library_version(version, sizeof version);
        mpi_ops.version = version[0] ? version : "unknown MPI";
    }
    return &mpi_ops;
}
