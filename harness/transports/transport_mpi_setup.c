/* transport_mpi_setup.c — the "mpi" transport's instances
 * (transport_mpi.h): made on a duplicate of MPI_COMM_WORLD or a split of a
 * parent's communicator, each with its bf16/f16 type and reduction ops, and
 * destroyed (held sends completed, MPI's objects freed) while MPI is still
 * running; after MPI_Finalize only the host memory is freed. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "transport_mpi.h"

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

/* ---- instances ------------------------------------------------------------ */

void cgm_destroy(cg_transport *t)
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

cg_transport *cgm_create(const char **err)
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
        cgm_destroy(t);
        return NULL;
    }
    return t;
}

/* A process group's instance: MPI_Comm_split of t's communicator, so the
 * group's traffic is as private as t's own. */
cg_transport *cgm_split(cg_transport *t, int color, int key, const char **err)
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
        cgm_destroy(g);
        return NULL;
    }
    return g;
}
