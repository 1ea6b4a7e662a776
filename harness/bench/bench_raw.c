/* bench_raw.c — phase 2 of a bench rank (bench_rank.c): the raw transport
 * calls, the forward collective and its transpose, on buffers allocated once
 * (bench.h: cg_bench_raw). */
#include "bench.h"

#include <mpi.h>
#include <stdlib.h>

#include "cuda_ops.h"
#include "rules.h"
#include "runner.h"
#include "transport.h"

/* Phase 2's calls: the forward collective, then its transpose (the table's),
 * as a sum of gradients; every per-rank count is the bench's equal block. */
static int raw_pair(const cg_bench_opts *o, cg_tp *tp, void *a, void *b, int64_t count,
                    const cg_coll_counts *counts, uint64_t *transpose_bytes, double *fwd_s)
{
    double t0 = cg_now();
    const cg_collective *d = cg_collective_of(o->coll);
    size_t n = (size_t)count;
    const cg_tp_site site = {0, false}; /* the bench program's one call */
    int rc = cg_tp_collective(tp, site, d->kind, cg_rules_tp_op(o->op), 0, a, d->in_place ? a : b, n, counts,
                              o->dtype);
    *fwd_s = cg_now() - t0;
    uint64_t b0 = cg_bench_bytes_moved(tp);
    if (rc == 0)
        rc = cg_tp_collective(tp, (cg_tp_site){0, true}, d->transpose, CGT_SUM, 0, b, a, n, counts, o->dtype);
    *transpose_bytes = cg_bench_bytes_moved(tp) - b0;
    return rc;
}

/* The raw buffers, where the differentiable run's tensors live: zeroed
 * host memory, or an arena's zeroed device memory (*arena, the caller's to
 * free). NULL when out of memory. */
static void *raw_buffer(const cg_bench_opts *o, cg_cuda_arena **arena, size_t bytes)
{
    if (!o->cuda)
        return calloc(1, bytes ? bytes : 1);
    if (!*arena && !(*arena = cg_cuda_arena_new()))
        return NULL;
    return cg_cuda_alloc(*arena, bytes);
}

int cg_bench_raw(const cg_bench_opts *o, cg_tp *tp, int64_t count, cg_bench_row *row, cg_status *st)
{
    size_t esz = cg_dtype_size(o->dtype);
    cg_coll_counts *counts = calloc(1, sizeof *counts);
    cg_cuda_arena *arena = NULL;
    void *a = raw_buffer(o, &arena, (size_t)count * esz);
    void *b = a ? raw_buffer(o, &arena, (size_t)count * esz) : NULL;
    int rc = a && b && counts ? 0 : -1;
    if (rc)
        cg_error_infra(st, "out of memory for the raw buffers%s%s", o->cuda ? ": " : "",
                       o->cuda ? cg_cuda_last_error() : "");
    for (int r = 0; counts && r < tp->world; r++)
        counts->inputs[r] = counts->blocks[r] = counts->recv[r] = (size_t)(count / tp->world);
    uint64_t tb = 0;
    double t = 0.0, tf = 0.0, f = 0.0;
    for (int i = 0; rc == 0 && i < o->warmup + o->iters; i++) {
        if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS)
            rc = -1;
        double t0 = cg_now();
        if (rc == 0 && raw_pair(o, tp, a, b, count, counts, &tb, &f) != 0) {
            cg_error(st, "%s", tp->st.msg);
            rc = -1;
        }
        if (rc == 0 && cg_bench_settle(o, st) != 0)
            rc = -1;
        if (i >= o->warmup) {
            t += cg_now() - t0;
            tf += f;
        }
    }
    row->raw_s = t / o->iters;
    row->raw_fwd_s = tf / o->iters;
    row->transpose_bytes = (int64_t)tb;
    if (o->cuda)
        cg_cuda_arena_free(arena);
    else {
        free(a);
        free(b);
    }
    free(counts);
    return rc;
}

