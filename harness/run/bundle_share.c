/* bundle_share.c — see bundle_share.h. */
#include "bundle_share.h"

#include <errno.h>
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { CHUNK = 1 << 30 }; /* MPI counts are int: a large bundle goes in pieces */

int cg_host_name(char *buf, size_t len)
{
    if (gethostname(buf, len) != 0)
        return -1;
    buf[len - 1] = '\0';
    return 0;
}

/* The reader's file, whole. *len, or -1 with st. */
static char *read_whole(const char *path, long long *len, cg_status *st)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long size = -1;
    if (f && fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)size + 1)) && fread(buf, 1, (size_t)size, f) == (size_t)size) {
        fclose(f);
        *len = size;
        return buf;
    }
    int e = errno;
    cg_error_infra(st, "%s: cannot read the job bundle: %s", path, f ? "short read" : strerror(e));
    free(buf);
    if (f)
        fclose(f);
    return NULL;
}

static int bcast_bytes(char *buf, long long len, int root)
{
    for (long long at = 0; at < len; at += CHUNK) {
        int n = (int)(len - at < CHUNK ? len - at : CHUNK);
        if (MPI_Bcast(buf + at, n, MPI_CHAR, root, MPI_COMM_WORLD) != MPI_SUCCESS)
            return -1;
    }
    return 0;
}

int cg_bundle_receive(const char *path, bool on_host, const cg_limits *lim, cg_case_set *set,
                      cg_job **jobs, int *njobs, int *reader, cg_status *st)
{
    int rank = 0, mine;
    memset(set, 0, sizeof *set);
    *jobs = NULL;
    *njobs = 0;
    if (MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS)
        return cg_error_infra(st, "MPI_Comm_rank failed");
    mine = on_host ? rank : INT_MAX;
    if (MPI_Allreduce(&mine, reader, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS)
        return cg_error_infra(st,
                              "choosing the rank that reads the job bundle: MPI_Allreduce failed");
    if (*reader == INT_MAX) {
        char host[256] = "?";
        cg_host_name(host, sizeof host);
        cg_error_infra(st,
                       "no rank runs on the launcher's host, so none can read its job bundle %s "
                       "(rank %d runs on %s): place at least one rank where collgrad-check runs",
                       path, rank, host);
        return -1;
    }
    /* the length first, -1 for "could not read", whose reason follows */
    long long len = 0;
    char *buf = rank == *reader ? read_whole(path, &len, st) : NULL;
    if (rank == *reader && !buf)
        len = -1;
    if (MPI_Bcast(&len, 1, MPI_LONG_LONG, *reader, MPI_COMM_WORLD) != MPI_SUCCESS) {
        free(buf);
        return cg_error_infra(st, "broadcasting the job bundle: MPI_Bcast failed");
    }
    if (len < 0) {
        char why[CG_ERR_LEN];
        snprintf(why, sizeof why, "%s", st->msg);
        int ok = MPI_Bcast(why, (int)sizeof why, MPI_CHAR, *reader, MPI_COMM_WORLD) == MPI_SUCCESS;
        why[sizeof why - 1] = '\0';
        if (rank != *reader)
            cg_error_infra(st, "rank %d: %s", *reader, ok ? why : "cannot read the job bundle");
        return -1;
    }
    /* everyone can allocate, or no one goes on: a lone failure would leave the
     * others waiting in the broadcast */
    int have = rank == *reader || (buf = malloc((size_t)len + 1)) != NULL, all = 0;
    if (MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS || !all) {
        free(buf);
        return cg_error_infra(st, "rank %d: out of memory for the %lld-byte job bundle", rank, len);
    }
    if (bcast_bytes(buf, len, *reader) != 0) {
        free(buf);
        return cg_error_infra(st, "broadcasting the job bundle: MPI_Bcast failed");
    }
    int rc = cg_bundle_parse(buf, (size_t)len, lim, set, jobs, njobs, st);
    free(buf);
    return rc;
}
