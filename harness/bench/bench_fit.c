/* bench_fit.c — whether a bench size fits the memory of the nodes its ranks
 * run on, asked before the size runs (bench.h): a size that does not fit ends
 * the table with a line, where it would have met the OOM killer. */
#include "bench.h"

#include <mpi.h>
#include <stdio.h>

#include "rss.h"

/* Whether a size fits the host memory of every node before it runs: a rank
 * holds about 4 buffers of the size (input, output, their gradients; the raw
 * calls' reuse them), measured 3.7 at 64 MiB with the check, so 5 with room;
 * a node holds its ranks' (MPI_COMM_TYPE_SHARED). A size that does not fit
 * anywhere is the end of the run, said by rank 0 in why (every rank agrees);
 * device tensors are the device's to refuse. 1 fits, 0 not, -1 MPI failed. */
int cg_bench_size_fits(const cg_bench_opts *o, MPI_Comm node, int64_t bytes, char *why, size_t len)
{
    int local = 1, mine = 0, any = 0;
    double need = 0, avail = 0;
    if (MPI_Comm_size(node, &local) != MPI_SUCCESS)
        return -1;
    if (!o->cuda) {
        need = 5.0 * (double)bytes * local;
        avail = (double)cg_mem_available();
        mine = avail > 0 && need > 0.8 * avail;
    }
    if (MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
        return -1;
    if (any && mine)
        snprintf(why, len, "%lld bytes and larger: not run: %d ranks on a node need about %.1f GiB, %.1f GiB "
                 "available", (long long)bytes, local, need / 1073741824.0, avail / 1073741824.0);
    else if (any) /* rank 0's node has room: the one that has not says nothing here */
        snprintf(why, len, "%lld bytes and larger: not run: another node's ranks would not fit in its memory left",
                 (long long)bytes);
    return !any;
}
