/* check_sync.c — see check_sync.h. */
#include "check_sync.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The ranks that compare: the world's, or a group's. A group's is malloc'd
 * with its handle's watcher and freed with it (sync_close); while it lives
 * it is on the list of this rank's groups, which the end check walks. */
typedef struct sync_watch {
    MPI_Comm comm;
    bool group;
    bool end_met; /* this job: a check here met another rank's end (cg_check_sync_end) */
    struct sync_watch *prev, *next; /* the live groups, oldest first (groups only) */
} sync_watch;

static sync_watch world_watch = {MPI_COMM_NULL, false, false, NULL, NULL}; /* set at install */
static sync_watch *groups_head, *groups_tail; /* not owned: each group's watcher owns it */

/* A rank's fingerprint once its program has ended (cg_check_sync_end): it
 * matches only the others' ends, so a rank still waiting in a collective
 * sees a desync instead of a partner that never comes. */
enum { END_OF_PROGRAM = -1 };
/* A fingerprint's fields: the first K compared, then the call's ordinal,
 * which names it in a message (each rank's own: a rank that ended names the
 * call its peer waits in by the peer's count) */
enum { K = 6, F = K + 1 };

/* "rank 1 issued all_reduce #2 (backward, f64, 3 elements, root -1, program
 * call 0)", or "rank 1 ended its program" (finished, or failed). */
static void describe(char *out, size_t len, const char *who, int r, const long long *f)
{
    int ordinal = (int)f[K];
    if (f[0] == END_OF_PROGRAM)
        snprintf(out, len, "%s %d ended its program", who, r);
    else
        snprintf(out, len, "%s %d issued %s #%d (%s, %s, %lld elements, root %lld, program call %lld)", who, r,
                 cg_tp_entry_name((cg_tp_entry)f[0]), ordinal, f[4] ? "backward" : "forward",
                 cg_dtype_name((cg_dtype)f[1]), f[2], f[3], f[5]);
}

/* One comparison's gather, posted: nonblocking always, because a rank's end
 * posts its ends on all its communicators at once (cg_check_sync_end) and a
 * nonblocking collective never matches a blocking one (MPI-3, 5.12). */
typedef struct sync_round {
    sync_watch *sw;
    long long mine[F];
    long long *all; /* F per rank of sw->comm */
    int size;
    MPI_Request req;
} sync_round;

static int round_post(sync_round *rd, sync_watch *sw, const cg_tp_fingerprint *fp)
{
    const long long mine[F] = {fp->entry, fp->dtype,    (long long)fp->count,
                               fp->root,  fp->backward, fp->seq, fp->ordinal};
    *rd = (sync_round){.sw = sw, .req = MPI_REQUEST_NULL};
    memcpy(rd->mine, mine, sizeof mine);
    if (MPI_Comm_size(sw->comm, &rd->size) != MPI_SUCCESS ||
        !(rd->all = malloc(sizeof(long long) * F * (size_t)rd->size)))
        return -1;
    return MPI_Iallgather(rd->mine, F, MPI_LONG_LONG, rd->all, F, MPI_LONG_LONG, sw->comm, &rd->req) ==
                   MPI_SUCCESS ? 0 : -1;
}

/* The gathered fingerprints against group rank 0's: 0, or -1 with st (the
 * first rank that differs). A peer's end met by a call marks the
 * communicator: that peer's end check there is done, and this rank must not
 * post one of its own there (no one would meet it). */
static int round_compare(sync_round *rd, cg_status *st)
{
    for (int r = 0; rd->mine[0] != END_OF_PROGRAM && r < rd->size; r++)
        if (rd->all[F * r] == END_OF_PROGRAM)
            rd->sw->end_met = true;
    const char *who = rd->sw->group ? "group rank" : "rank";
    for (int r = 1; r < rd->size; r++) {
        const long long *a = rd->all, *b = rd->all + F * r;
        if (memcmp(a, b, sizeof(long long) * K) == 0)
            continue;
        /* the program's call each rank serves (seq) is compared too: a rank
         * that skipped a collective issues the next one, which may look the
         * same in every other field */
        char theirs[256], zero[256];
        describe(theirs, sizeof theirs, who, r, b);
        describe(zero, sizeof zero, who, 0, a);
        return cg_error(st, "desync: %s while %s", theirs, zero);
    }
    return 0;
}

/* Sends and receives pair two ranks only, so there is nothing for all to
 * agree on; the barrier carries nothing. */
static int check_sync(void *self, cg_tp *tp, const cg_tp_fingerprint *fp)
{
    if (fp->entry == CGT_SEND || fp->entry == CGT_RECV || fp->entry == CGT_BARRIER)
        return 0;
    sync_round rd;
    int rc = round_post(&rd, self, fp) == 0 && MPI_Wait(&rd.req, MPI_STATUS_IGNORE) == MPI_SUCCESS
                 ? round_compare(&rd, &tp->st)
                 : cg_error(&tp->st, "--check-sync: comparing fingerprints over MPI failed");
    free(rd.all);
    return rc;
}

static void sync_close(void *self)
{
    sync_watch *sw = self;
    *(sw->prev ? &sw->prev->next : &groups_head) = sw->next;
    *(sw->next ? &sw->next->prev : &groups_tail) = sw->prev;
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
    *mine = (sync_watch){comm, true, false, groups_tail, NULL};
    *(groups_tail ? &groups_tail->next : &groups_head) = mine;
    groups_tail = mine;
    *child = (cg_tp_watcher){check_sync, NULL, mine, sync_split, sync_close};
    return 0;
}

static bool installed(const cg_tp *tp)
{
    for (int i = 0; i < tp->nwatchers; i++)
        if (tp->watchers[i].self == &world_watch)
            return true;
    return false;
}

/* The end is posted on the world and on every group of this rank at once,
 * save where a call of this rank met a peer's end already: a member waiting
 * in a group's check meets it there, whatever the others wait in. The
 * first desync found (world first) is the rank's error. */
int cg_check_sync_end(cg_tp *tp)
{
    if (!installed(tp))
        return 0;
    int n = 0, rc = 0;
    for (const sync_watch *g = groups_head; g; g = g->next)
        n++;
    sync_round *rounds = calloc((size_t)n + 1, sizeof *rounds);
    MPI_Request *reqs = calloc((size_t)n + 1, sizeof *reqs);
    cg_tp_fingerprint end = {.entry = END_OF_PROGRAM, .ordinal = tp->ncoll, .seq = -1};
    int posted = 0;
    if (!rounds || !reqs)
        rc = cg_error_infra(&tp->st, "--check-sync: out of memory for the end of the program");
    for (sync_watch *sw = &world_watch; sw && rc == 0; sw = sw == &world_watch ? groups_head : sw->next) {
        if (sw->end_met) {
            sw->end_met = false; /* the next job starts afresh */
            continue;
        }
        if (round_post(&rounds[posted], sw, &end) != 0)
            rc = cg_error(&tp->st, "--check-sync: comparing the ends of the programs over MPI failed");
        reqs[posted] = rounds[posted].req;
        posted++;
    }
    /* one by one (all are posted: waiting on one progresses the others); GCC 12 takes
     * MPI_Waitall's MPI_STATUSES_IGNORE for an array of size 0 */
    for (int i = 0; i < posted; i++)
        if (MPI_Wait(&reqs[i], MPI_STATUS_IGNORE) != MPI_SUCCESS && rc == 0)
            rc = cg_error(&tp->st, "--check-sync: comparing the ends of the programs over MPI failed");
    for (int i = 0; i < posted; i++) {
        if (rc == 0)
            rc = round_compare(&rounds[i], &tp->st);
        free(rounds[i].all);
    }
    free(rounds);
    free(reqs);
    return rc;
}

int cg_check_sync_install(cg_tp *tp)
{
    world_watch.comm = MPI_COMM_WORLD;
    return cg_tp_watch(tp, (cg_tp_watcher){check_sync, NULL, &world_watch, sync_split, NULL});
}
