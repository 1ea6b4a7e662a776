/* check_sync.c — see check_sync.h. */
#include "check_sync.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The ranks that compare: the world's, or a group's. A group's is malloc'd
 * with its handle's watcher and freed with it (sync_close). */
typedef struct sync_watch {
    MPI_Comm comm;
    bool group;
} sync_watch;

static sync_watch world_watch = {MPI_COMM_NULL, false}; /* MPI_COMM_WORLD, set at install */

/* A rank's fingerprint once its program has ended (cg_check_sync_end): it
 * matches only the others' ends, so a rank still waiting in a collective
 * sees a desync instead of a partner that never comes. */
enum { END_OF_PROGRAM = -1 };
static bool end_met; /* this job: a world check met another rank's end (reset by cg_check_sync_end) */

/* "rank 1 issued all_reduce #2 (backward, f64, 3 elements, root -1, program
 * call 0)", or "rank 1 ended its program" (finished, or failed). */
static void describe(char *out, size_t len, const char *who, int r, const long long *f, int ordinal)
{
    if (f[0] == END_OF_PROGRAM)
        snprintf(out, len, "%s %d ended its program", who, r);
    else
        snprintf(out, len, "%s %d issued %s #%d (%s, %s, %lld elements, root %lld, program call %lld)", who, r,
                 cg_tp_entry_name((cg_tp_entry)f[0]), ordinal, f[4] ? "backward" : "forward",
                 cg_dtype_name((cg_dtype)f[1]), f[2], f[3], f[5]);
}

/* Sends and receives pair two ranks only, so there is nothing for all to
 * agree on; the barrier carries nothing. */
static int check_sync(void *self, cg_tp *tp, const cg_tp_fingerprint *fp)
{
    enum { F = 6 };
    const sync_watch *sw = self;
    if (fp->entry == CG_C_SEND || fp->entry == CG_C_RECV || fp->entry == CG_TP_BARRIER)
        return 0;
    long long mine[F] = {fp->entry, fp->dtype,    (long long)fp->count,
                         fp->root,  fp->backward, fp->seq};
    long long *all = malloc(sizeof(long long) * F * (size_t)tp->world);
    if (!all ||
        MPI_Allgather(mine, F, MPI_LONG_LONG, all, F, MPI_LONG_LONG, sw->comm) != MPI_SUCCESS) {
        free(all);
        return cg_error(&tp->st, "--check-sync: comparing fingerprints over MPI failed");
    }
    /* another rank's end met this rank's call: that rank's end check is done, and
     * this rank must not start one of its own (no one would meet it) */
    for (int r = 0; sw == &world_watch && fp->entry != END_OF_PROGRAM && r < tp->world; r++)
        if (all[F * r] == END_OF_PROGRAM)
            end_met = true;
    int rc = 0;
    const char *who = sw->group ? "group rank" : "rank";
    for (int r = 1; r < tp->world && rc == 0; r++) {
        const long long *a = all, *b = all + F * r;
        if (memcmp(a, b, sizeof(long long) * F) == 0)
            continue;
        /* the program's call each rank serves (seq) is compared too: a rank
         * that skipped a collective issues the next one, which may look the
         * same in every other field */
        char theirs[256], zero[256];
        describe(theirs, sizeof theirs, who, r, b, fp->ordinal);
        describe(zero, sizeof zero, who, 0, a, fp->ordinal);
        rc = cg_error(&tp->st, "desync: %s while %s", theirs, zero);
    }
    free(all);
    return rc;
}

static void sync_close(void *self)
{
    sync_watch *sw = self;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && sw->comm != MPI_COMM_NULL)
        MPI_Comm_free(&sw->comm);
    free(sw);
}

/* Every rank splits the watcher's communicator as the transport splits its
 * own (collective over it); a member's group compares over its part. */
static int sync_split(void *self, cg_tp *tp, int color, int key, cg_tp_watcher *child)
{
    const sync_watch *sw = self;
    MPI_Comm comm = MPI_COMM_NULL;
    if (MPI_Comm_split(sw->comm, color < 0 ? MPI_UNDEFINED : color, key, &comm) != MPI_SUCCESS)
        return cg_error(&tp->st, "--check-sync: MPI_Comm_split for a process group failed");
    if (comm == MPI_COMM_NULL)
        return 0;
    sync_watch *mine = malloc(sizeof *mine);
    if (!mine) {
        MPI_Comm_free(&comm);
        return cg_error_infra(&tp->st, "--check-sync: out of memory for a process group");
    }
    *mine = (sync_watch){comm, true};
    *child = (cg_tp_watcher){check_sync, NULL, mine, sync_split, sync_close};
    return 0;
}

int cg_check_sync_end(cg_tp *tp)
{
    if (end_met) { /* the ranks that ended met this one's call already */
        end_met = false;
        return 0;
    }
    for (int i = 0; i < tp->nwatchers; i++)
        if (tp->watchers[i].self == &world_watch) {
            cg_tp_fingerprint end = {.entry = END_OF_PROGRAM, .ordinal = tp->ncoll, .seq = -1};
            return check_sync(&world_watch, tp, &end);
        }
    return 0;
}

int cg_check_sync_install(cg_tp *tp)
{
    world_watch.comm = MPI_COMM_WORLD;
    return cg_tp_watch(tp, (cg_tp_watcher){check_sync, NULL, &world_watch, sync_split, NULL});
}
