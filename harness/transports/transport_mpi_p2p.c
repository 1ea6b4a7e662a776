/* transport_mpi_p2p.c — the "mpi" transport's send and recv
 * (transport_mpi.h).
 *
 * A send is buffered, as the case language defines it (the oracle and the
 * threads and nccl transports agree): it goes out with MPI_Isend from a
 * private copy and returns at once. A blocking MPI_Send would return only
 * once the receiver came for any message above MPICH's eager limit, so a
 * ring where every rank sends before it receives (explore's program
 * s1_p8470: 10 KB per rank at W=6) waited forever. The copies are freed as
 * their sends complete: tested at each later send, waited for at
 * cg_mpi_flush_sends (cg_tp_settle, the end of each program) and destroy. */
#include <stdlib.h>
#include <string.h>

#include "transport_mpi.h"

/* One send in flight: MPI reads `copy` (owned, malloc'd) until req completes. */
struct cgm_held_send {
    MPI_Request req;
    void *copy;
};

static int check_p2p(cg_transport *t, size_t count, cgt_dtype dt, int peer, int tag,
                     MPI_Datatype *type, int *n)
{
    if (cgm_type(t, dt, type) || cgm_int_count(t, count, n) || cgm_check_rank(t, "peer", peer))
        return -1;
    if (tag < 0 || tag >= 32768)
        return cg_error(&t->st, "tag %d outside 0..32767", tag);
    return 0;
}

/* Frees the copies of completed sends and keeps the rest in order. 0, or -1
 * with the first failed send's MPI error. */
static int reap_sends(cg_transport *t)
{
    int kept = 0, rc = 0;
    for (int i = 0; i < t->nheld; i++) {
        int done = 0, trc = MPI_Test(&t->held[i].req, &done, MPI_STATUS_IGNORE);
        if (trc != MPI_SUCCESS && rc == 0) {
            char text[MPI_MAX_ERROR_STRING];
            rc = cg_error(&t->st, "a held send (MPI_Test) failed: %s", cgm_error_text(trc, text));
        }
        if (done || trc != MPI_SUCCESS)
            free(t->held[i].copy);
        else
            t->held[kept++] = t->held[i];
    }
    t->nheld = kept;
    return rc;
}

int cg_mpi_flush_sends(cg_transport *t)
{
    int rc = 0;
    for (int i = 0; i < t->nheld; i++) {
        int wrc = MPI_Wait(&t->held[i].req, MPI_STATUS_IGNORE);
        if (wrc != MPI_SUCCESS && rc == 0) {
            char text[MPI_MAX_ERROR_STRING];
            rc = cg_error(&t->st, "a held send (MPI_Wait) failed: %s", cgm_error_text(wrc, text));
        }
        free(t->held[i].copy);
    }
    t->nheld = 0;
    return rc;
}

int cgm_send(cg_transport *t, const void *buf, size_t count, cgt_dtype dt, int peer, int tag)
{
    MPI_Datatype type = MPI_DATATYPE_NULL;
    int n = 0, esz = 0;
    if (check_p2p(t, count, dt, peer, tag, &type, &n) || reap_sends(t))
        return -1;
    MPI_TRY(t, MPI_Type_size, (type, &esz));
    if (t->nheld == t->held_cap) {
        int cap = t->held_cap ? 2 * t->held_cap : 8;
        struct cgm_held_send *h = realloc(t->held, (size_t)cap * sizeof *h);
        if (!h)
            return cg_error(&t->st, "send: out of memory for %d held sends", cap);
        t->held = h;
        t->held_cap = cap;
    }
    size_t bytes = (size_t)n * (size_t)esz;
    void *copy = malloc(bytes ? bytes : 1);
    if (!copy)
        return cg_error(&t->st, "send: out of memory for a %zu-byte copy", bytes);
    if (bytes)
        memcpy(copy, buf, bytes);
    int rc = MPI_Isend(copy, n, type, peer, tag, t->comm, &t->held[t->nheld].req);
    if (rc != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        free(copy);
        return cg_error(&t->st, "MPI_Isend failed: %s", cgm_error_text(rc, text));
    }
    t->held[t->nheld++].copy = copy;
    return 0;
}

/* A longer message than expected fails inside MPI_Recv (truncation); a
 * shorter one is accepted by MPI, so the count is compared here. */
int cgm_recv(cg_transport *t, void *buf, size_t count, cgt_dtype dt, int peer, int tag)
{
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_Status st;
    int n = 0, got = 0;
    if (check_p2p(t, count, dt, peer, tag, &type, &n))
        return -1;
    MPI_TRY(t, MPI_Recv, (buf, n, type, peer, tag, t->comm, &st));
    MPI_TRY(t, MPI_Get_count, (&st, type, &got));
    if (got == MPI_UNDEFINED)
        return cg_error(&t->st,
                        "recv from rank %d tag %d: expected %d elements, got a partial element",
                        peer, tag, n);
    if (got != n)
        return cg_error(&t->st, "recv from rank %d tag %d: expected %d elements, got %d", peer, tag,
                        n, got);
    return 0;
}

void cgm_free_held(cg_transport *t)
{
    for (int i = 0; i < t->nheld; i++)
        free(t->held[i].copy);
    free(t->held);
    t->held = NULL;
    t->nheld = t->held_cap = 0;
}
