/* transport_mpi.c — the built-in "mpi" transport (collgrad_transport.h).
 *
 * Each instance works on its own duplicate of MPI_COMM_WORLD, so its traffic
 * can never match messages of the tool or of another instance, and it sets
 * MPI_ERRORS_RETURN on that duplicate so a failing call comes back as an
 * error message instead of aborting every rank.
 *
 Here: the collectives and the entry table. Instances (each with its
 * bf16/f16 ops: MPI has no 16-bit float types, so bf16 and f16 travel as
 * opaque 2-byte elements reduced by user-defined ops that widen to float)
 * are transport_mpi_setup.c; send and recv (buffered: each send's copy is
 * held until MPI has sent it) transport_mpi_p2p.c. MPI counts and displacements are int: larger requests are
 * refused with a message rather than silently truncated. */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport_mpi.h"

enum { REDUCE_PIECE_BYTES = 16 << 20 }; /* mpi_reduce's and mpi_all_reduce's pieces */

/* ---- errors --------------------------------------------------------------- */

const char *cgm_error_text(int rc, char *text)
{
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        snprintf(text, MPI_MAX_ERROR_STRING, "MPI error code %d", rc);
    return text;
}

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
    int esz = 0;
    MPI_TRY(t, MPI_Type_size, (type, &esz));
    /* In pieces, as mpi_reduce and for the same reason: MPICH's large-count
     * MPI_Allreduce (reduce-scatter, then all-gather) mallocs a temporary of
     * the whole count and fills half of it, half a gradient more on every
     * rank at its peak (bench -c all_reduce -W 4 at 64 MiB: 240 MiB, over 3x
     * the tensor bytes + 50 MB); per piece it is a few MiB. Each element's
     * result is the same: MPI reduces element by element. */
    int piece = REDUCE_PIECE_BYTES / esz, off = 0;
    do {
        int len = n - off < piece ? n - off : piece;
        char *r = (char *)recv + (size_t)off * (size_t)esz;
        const void *src = send == recv ? MPI_IN_PLACE : (const char *)send + (size_t)off * (size_t)esz;
        MPI_TRY(t, MPI_Allreduce, (src, r, len, type, mop, t->comm));
        off += len;
    } while (off < n);
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

static int mpi_rank(const cg_transport *t) { return t->rank; }
static int mpi_world(const cg_transport *t) { return t->world; }
static const char *mpi_last_error(const cg_transport *t) { return t->st.msg; }

/* The table's one entry (ABI 3): each call to its function above. */
static int mpi_call(cg_transport *t, const cgt_call *c)
{
    switch (c->kind) {
    case CGT_ALL_REDUCE: return mpi_all_reduce(t, c->send, c->recv, c->count, c->dtype, c->op);
    case CGT_ALL_GATHER: return mpi_all_gather(t, c->send, c->recv, c->counts, c->dtype);
    case CGT_REDUCE_SCATTER: return mpi_reduce_scatter(t, c->send, c->recv, c->counts, c->dtype, c->op);
    case CGT_BROADCAST: return mpi_broadcast(t, c->recv, c->count, c->dtype, c->root);
    case CGT_REDUCE: return mpi_reduce(t, c->send, c->recv, c->count, c->dtype, c->op, c->root);
    case CGT_GATHER: return mpi_gather(t, c->send, c->recv, c->counts, c->dtype, c->root);
    case CGT_SCATTER: return mpi_scatter(t, c->send, c->recv, c->counts, c->dtype, c->root);
    case CGT_ALL_TO_ALL: return mpi_all_to_all(t, c->send, c->counts, c->recv, c->recvcounts, c->dtype);
    case CGT_SEND: return cgm_send(t, c->send, c->count, c->dtype, c->peer, c->tag);
    case CGT_RECV: return cgm_recv(t, c->recv, c->count, c->dtype, c->peer, c->tag);
    case CGT_BARRIER: return mpi_barrier(t);
    default: break;
    }
    return cg_error(&t->st, "unknown call %d", (int)c->kind);
}

static cg_transport_ops mpi_ops = {
    .abi_version = CG_TRANSPORT_ABI_VERSION,
    .name = "mpi",
    .version = "",
    .caps = CGT_CAP_HOST | CGT_CAP_HALF,
    .create = cgm_create,
    .destroy = cgm_destroy,
    .rank = mpi_rank,
    .world = mpi_world,
    .last_error = mpi_last_error,
    .call = mpi_call,
    .split = cgm_split,
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
