/* transport_mpi.h — private to the built-in "mpi" transport: its instance and
 * the helpers transport_mpi.c gives its instances (transport_mpi_setup.c) and
 * its send and recv (transport_mpi_p2p.c). */
#ifndef CG_TRANSPORT_MPI_H
#define CG_TRANSPORT_MPI_H

#include <mpi.h>
#include <stddef.h>

#include "transport.h"

enum { HALF_SUM, HALF_PROD, HALF_MAX, HALF_MIN, HALF_NOPS };

struct cg_transport {
    MPI_Comm comm;
    int rank, world;
    MPI_Datatype half;              /* 2 opaque bytes: bf16 and f16 */
    MPI_Op bf16_op[HALF_NOPS];
    MPI_Op f16_op[HALF_NOPS];
    int *counts, *displs;           /* world ints each: MPI's int count arrays */
    int *counts2, *displs2;         /* the receive side of all_to_all */
    struct cgm_held_send *held;     /* sends MPI may not have completed (transport_mpi_p2p.c) */
    int nheld, held_cap;
    cg_status st;                   /* the last failure: what last_error says */
};

/* ---- errors: 0, or -1 with t->st set (cg_error, status.h) ------------------------ */

/* MPI's text for error code rc, in text (MPI_MAX_ERROR_STRING bytes). */
const char *cgm_error_text(int rc, char *text);

/* Call fn(args...) and, on failure, record "fn failed: <MPI's text>" and
 * return -1 from the calling function (the shape of NCCL's checks.h). */
#define MPI_TRY(t, fn, args)                                                                       \
    do {                                                                                           \
        int rc_ = fn args;                                                                         \
        if (rc_ != MPI_SUCCESS) {                                                                  \
            char text_[MPI_MAX_ERROR_STRING];                                                      \
            return cg_error(&(t)->st, "%s failed: %s", #fn, cgm_error_text(rc_, text_));           \
        }                                                                                          \
    } while (0)

/* MPI's type for dt (bf16 and f16: t->half). */
int cgm_type(cg_transport *t, cgt_dtype dt, MPI_Datatype *out);
/* n as MPI's int count ("count N exceeds INT_MAX" otherwise). */
int cgm_int_count(cg_transport *t, size_t n, int *out);
/* r names a rank of t ("peer 5 out of range (world 4)" otherwise). */
int cgm_check_rank(cg_transport *t, const char *what, int r);

/* ---- instances (transport_mpi_setup.c): NULL and *err (static text) on failure ---- */

/* On a duplicate of MPI_COMM_WORLD; MPI must be initialized. */
cg_transport *cgm_create(const char **err);
/* A process group's instance on MPI_Comm_split of t's communicator (its
 * traffic as private as t's); NULL with *err NULL where this rank is not a
 * member (color < 0). */
cg_transport *cgm_split(cg_transport *t, int color, int key, const char **err);
void cgm_destroy(cg_transport *t);

/* ---- send and recv (transport_mpi_p2p.c) --------------------------------------- */

int cgm_send(cg_transport *t, const void *buf, size_t count, cgt_dtype dt, int peer, int tag);
int cgm_recv(cg_transport *t, void *buf, size_t count, cgt_dtype dt, int peer, int tag);
/* After MPI_Finalize (which completed every send): frees the held copies
 * and the array. cg_mpi_flush_sends (transport.h) is the way before it. */
void cgm_free_held(cg_transport *t);

#endif
