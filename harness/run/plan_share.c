/* plan_share.c — rank 0's oracle, its plan broadcast to the others
 * (plan_share.h). */
#include "plan_share.h"

#include <mpi.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* What travels first: enough for the receivers to size the events. */
typedef struct plan_head {
    int status, nevents, ok;
    char error[CG_ERR_LEN];
} plan_head;

/* The events' explicit row splits (world x world each, a group's its size
 * squared), which the events'
 * broadcast carried as rank 0's pointers: on the other ranks a non-NULL one
 * only says that the event has them. Each rank allocates its own, then rank
 * 0 broadcasts them. 0, or -1 with no pointer of rank 0's left behind. */
/* An event's splits: world x world, or a group's size squared. */
static size_t nsplits(const cg_plan_event *ev, int world)
{
    size_t w = (size_t)(ev->coll.nmembers ? ev->coll.nmembers : world);
    return w * w;
}

static int share_splits(cg_oracle *o, int rank, int world)
{
    int have = 1, all = 0;
    for (int i = 0; rank != 0 && i < o->nevents; i++) {
        bool flagged = o->events[i].splits != NULL;
        o->events[i].splits = NULL;
        if (flagged && have &&
            !(o->events[i].splits =
                  malloc(nsplits(&o->events[i], world) * sizeof *o->events[i].splits)))
            have = 0;
    }
    if (MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS || !all)
        return -1;
    for (int i = 0; i < o->nevents; i++)
        if (o->events[i].splits &&
            MPI_Bcast(o->events[i].splits, (int)nsplits(&o->events[i], world), MPI_INT64_T, 0,
                      MPI_COMM_WORLD) != MPI_SUCCESS)
            return -1;
    return 0;
}

cg_oracle *cg_plan_share(const cg_case *cs, int rank, int world)
{
    cg_oracle *o = rank == 0 ? cg_oracle_run(cs, world, false) : calloc(1, sizeof *o);
    plan_head h;
    memset(&h, 0, sizeof h);
    if (rank == 0) {
        h.ok = o != NULL;
        if (o) {
            h.status = o->st.code;
            h.nevents = o->nevents;
            memcpy(h.error, o->st.msg, sizeof h.error);
        }
    }
    /* rank 0 broadcasts even when out of memory, so no rank waits forever */
    int mpi = MPI_Bcast(&h, (int)sizeof h, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (mpi != MPI_SUCCESS || !h.ok || !o) {
        cg_oracle_free(o);
        return NULL;
    }
    if (rank != 0) {
        o->world = world;
        o->st.code = h.status;
        memcpy(o->st.msg, h.error, sizeof o->st.msg);
        o->nevents = h.nevents;
        o->events = calloc((size_t)h.nevents + 1, sizeof *o->events);
    }
    /* a rank that cannot hold the plan still takes part in the broadcast */
    int have = o->events != NULL || h.nevents == 0, all = 0;
    if (MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS || !all ||
        MPI_Bcast(o->events, (int)(h.nevents * sizeof *o->events), MPI_BYTE, 0, MPI_COMM_WORLD) !=
            MPI_SUCCESS) {
        for (int i = 0; rank != 0 && o->events && i < o->nevents; i++)
            o->events[i].splits = NULL; /* rank 0's pointers, if any arrived */
        cg_oracle_free(o);
        return NULL;
    }
    if (share_splits(o, rank, world) != 0) {
        cg_oracle_free(o);
        return NULL;
    }
    for (int i = 0; rank != 0 && i < o->nevents; i++)
        o->events[i].coll.pos.file = cs->file; /* the pointer rank 0 sent means nothing here */
    return o;
}
