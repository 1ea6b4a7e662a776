/* bench_rank.c — one rank of `collgrad-check bench` (bench.h).
 *
 * Per size, three phases, each behind a barrier so that no rank's phase
 * overlaps another's:
 *   1. the differentiable collective: a fresh graph, a param x, the
 *      collective through the rule set (forward) and backward from its
 *      output (seeded with ones, as backward(y) is), timed separately;
 *   2. the raw transport calls: the forward collective and its transpose,
 *      on buffers allocated once (bench_raw.c);
 *   3. the correctness check of the last iteration of 1: every rank compares
 *      its y and x.grad with the oracle's (bench_check.c), after the timed
 *      span, and rank 0 reports the first rank off.
 * Times are the slowest rank's mean per iteration; bytes are rank 0's own
 * (the transport's per-entry counters, transport.h).
 * With --device cuda (implied by --transport nccl) x, y, the gradients and
 * the raw buffers are device memory, allocated outside the timed spans, and
 * each span ends with a device synchronize: the times are the collectives'
 * and the kernels', not host<->device copies; the check downloads after the
 * span. */
#include "bench.h"

#include <malloc.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ir.h"
#include "report_file.h"
#include "autograd.h"
#include "big_blocks.h"
#include "cuda_ops.h"
#include "rss.h"
#include "runner.h"
#include "transport.h"
#include "rank_comm.h"

typedef struct shape {
    int64_t count;       /* elements of the larger buffer (nccl-tests' size) */
    int64_t n_in, n_out; /* per rank */
} shape;

static shape shape_for(const cg_bench_opts *o, int64_t bytes, int world)
{
    int64_t count = bytes / (int64_t)cg_dtype_size(o->dtype);
    cg_shape_rule rule = cg_collective_of(o->coll)->shape;
    bool gathers = rule == CG_SHAPE_CAT, splits = rule == CG_SHAPE_BLOCK; /* by rows, into W blocks */
    bool exchanges = rule == CG_SHAPE_BLOCKS; /* all_to_all: W blocks out, W blocks in */
    if (count < 1)
        count = 1;
    if (gathers || splits || exchanges)
        count = count < world ? world : count / world * world;
    shape s = {count, count, count};
    if (gathers)
        s.n_in = count / world;
    if (splits)
        s.n_out = count / world;
    return s;
}

uint64_t cg_bench_bytes_moved(const cg_tp *tp)
{
    uint64_t sum = 0;
    for (int e = 0; e < CGT_NCALLS; e++)
        sum += tp->bytes[e];
    return sum;
}

/* backward(y) seeds y's gradient with ones. Once y's value has been used
 * (checked), the seed can be written over y's own storage: then a rank holds
 * x, y and x.grad through the backward, not a fourth tensor of ones. Only
 * where no rule reads y in the backward: SUM and AVG (MAX and MIN find the
 * extremum in y, PROD divides by it), and never when y is x's storage (an
 * in-place emulation). The seed, or NULL with *rc 0 where backward(y) makes
 * its own, or with *rc -1 and the graph's error. */
static cg_tensor *seed_over_output(const cg_bench_opts *o, cg_graph *g, const cg_tensor *x,
                                   const cg_tensor *y, int *rc)
{
    bool reads_y = cg_coll_has_op(o->coll) && o->op != CG_RED_SUM && o->op != CG_RED_AVG;
    *rc = 0;
    if (reads_y || y == x || y->data == x->data)
        return NULL;
    cg_tensor *seed = cg_alloc(g, sizeof *seed); /* a second header over y's data */
    if (!seed || (*seed = *y, 0))
        return *rc = -1, NULL;
    seed->node = NULL;
    seed->grad = seed->pgrad = NULL;
    seed->is_leaf = seed->requires_grad = seed->retain = false;
    if (cg_tensor_fill(g, seed, 1.0) < 0)
        return *rc = -1, NULL;
    return seed;
}

/* The device's queued work done before a timestamp is taken: the nccl
 * transport waits for its own stream, the ops' kernels run on theirs. 0, or
 * -1 with st. Nothing to wait for on the host. */
int cg_bench_settle(const cg_bench_opts *o, cg_status *st)
{
    if (o->cuda && cg_cuda_sync() != 0)
        return cg_error(st, "%s", cg_cuda_last_error());
    return 0;
}

/* The collective's output and x's gradient where the truth reads them: host
 * tensors (downloads on a device graph, owned by g). */
static int check_y(cg_graph *g, const cg_bench_truth *truth, const cg_tensor *y, cg_status *verdict)
{
    const cg_tensor *hy = y ? cg_tensor_host(g, y) : NULL;
    if (y && !hy)
        return cg_error(verdict, "downloading y: %s", cg_graph_status(g)->msg);
    return cg_bench_truth_check_y(truth, hy, verdict);
}

static int check_grad(cg_graph *g, const cg_bench_truth *truth, const cg_tensor *x, cg_status *verdict)
{
    const cg_tensor *hg = x->grad ? cg_tensor_host(g, x->grad) : NULL;
    if (x->grad && !hg)
        return cg_error(verdict, "downloading x.grad: %s", cg_graph_status(g)->msg);
    return cg_bench_truth_check_grad(truth, hg, x->numel, verdict);
}

/* One iteration of phase 1. 0, or -1 with st. With truth, the iteration's
 * y (before the backward) and x.grad are checked (phase 3): a mismatch goes
 * into *verdict. The timed spans are the collective's forward call and the
 * backward (the seed included), each ended by cg_bench_settle(). */
static int differentiable(const cg_bench_opts *o, cg_tp *tp, const cg_rules *rules, const cg_plan_event *ev,
                          int64_t n_in, double *fwd, double *bwd, uint64_t *bwd_bytes,
                          const cg_bench_truth *truth, cg_status *verdict, double *check_s, cg_status *st)
{
    cg_graph *g = cg_graph_new();
    if (g && o->cuda && cg_graph_use_cuda(g) < 0) {
        cg_error(st, "%s", cg_graph_status(g)->msg);
        cg_graph_free(g);
        return -1;
    }
    cg_tensor *x = g ? cg_full(g, o->dtype, 1, &n_in, tp->rank + 1.0) : NULL;
    if (!x) {
        cg_error_infra(st, "out of memory for %lld elements",  (long long)n_in);
        cg_graph_free(g);
        return -1;
    }
    x->is_leaf = x->requires_grad = true;
    cg_rank_comm w = cg_rank_comm_make(tp, rules, o->dtype, ev, 1);
    cg_comm comm = cg_rank_comm_as_comm(&w);
    cg_tensor *in[1] = {x}, *out[1] = {NULL};
    int rc = cg_bench_settle(o, st) == 0 && MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
    double t0 = cg_now();
    if (rc == 0)
        rc = comm.collective(comm.self, g, &ev->coll, in, out);
    if (rc == 0)
        rc = cg_bench_settle(o, st);
    double t1 = cg_now();
    if (rc == 0 && truth) {
        check_y(g, truth, out[0], verdict);
        *check_s += cg_now() - t1;
        /* the ranks leave the check at different times (a device run downloads y): without a
         * barrier the backward's span would hold the wait for the slowest rank's check (seen on
         * an H100: +20-70 ms on a 256 MiB backward at -n 3) */
        if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS)
            rc = cg_error(st, "MPI_Barrier failed");
    }
    double t1b = cg_now(); /* the seed is the backward's, as backward(y) makes it */
    cg_tensor *seed = rc == 0 && out[0] ? seed_over_output(o, g, x, out[0], &rc) : NULL;
    uint64_t b0 = cg_bench_bytes_moved(tp);
    if (rc == 0)
        rc = seed ? cg_backward_with(g, out[0], seed) : comm.backward(comm.self, g, &ev->coll.pos, out);
    if (rc == 0)
        rc = cg_bench_settle(o, st);
    double t2 = cg_now();
    *fwd += t1 - t0;
    *bwd += t2 - t1b;
    *bwd_bytes = cg_bench_bytes_moved(tp) - b0;
    if (rc == 0 && truth && !verdict->code) {
        check_grad(g, truth, x, verdict);
        *check_s += cg_now() - t2;
    }
    if (rc != 0 && !st->code)
        cg_error(st, "%s",
                 cg_graph_status(g)->msg[0] ? cg_graph_status(g)->msg : "MPI_Barrier failed");
    cg_graph_free(g);
    return rc;
}

/* Phase 3's verdict on rank 0: the first failing rank's message, or "ok".
 * Every rank calls it. */
static int gather_verdict(cg_tp *tp, const cg_status *mine, cg_bench_row *row)
{
    char *all = tp->rank == 0 ? calloc((size_t)tp->world, CG_ERR_LEN) : NULL;
    if (tp->rank == 0 && !all)
        return -1;
    int rc = MPI_Gather(mine->msg, CG_ERR_LEN, MPI_CHAR, all, CG_ERR_LEN, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rc == MPI_SUCCESS && tp->rank == 0) {
        row->check_ran = true;
        row->check_ok = true;
        snprintf(row->check_msg, sizeof row->check_msg, "ok");
        for (int r = 0; r < tp->world && row->check_ok; r++) {
            const char *m = all + (size_t)r * CG_ERR_LEN;
            if (m[0]) {
                row->check_ok = false;
                snprintf(row->check_msg, sizeof row->check_msg, "rank %d: %.*s", r,
                         (int)sizeof row->check_msg - 16, m);
            }
        }
    }
    free(all);
    return rc == MPI_SUCCESS ? 0 : -1;
}

/* Reduce a rank-local value to its maximum on rank 0. */
static double max_on_root(double v)
{
    double m = v;
    MPI_Reduce(&v, &m, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    return m;
}

/* The process's peak resident set over the whole run so far. VmHWM is reset
 * before each size's timed loop, so that the row's peakRSS is the loop's
 * alone; the peak before each reset, and after the raw calls, is folded in
 * here: the oracle's truth, the check and the raw buffers included. */
static int64_t run_peak;

static void fold_run_peak(void)
{
    int64_t p = cg_rss_peak();
    if (p > run_peak)
        run_peak = p;
}

static int one_size(const cg_bench_opts *o, cg_tp *tp, const cg_rules *rules, int64_t bytes, cg_bench_row *row)
{
    shape s = shape_for(o, bytes, tp->world);
    memset(row, 0, sizeof *row);
    row->count = s.count;
    row->bytes = s.count * (int64_t)cg_dtype_size(o->dtype);
    cg_plan_event ev;
    memset(&ev, 0, sizeof ev);
    ev.coll = (cg_coll){.kind = o->coll, .op = o->op, .pos = {"bench", 1, 1}};
    ev.rank = ev.tag = -1;
    for (int r = 0; r < tp->world; r++) {
        ev.ndim[r] = 1;
        ev.shape[r][0] = s.n_in;
    }
    cg_status st = CG_STATUS_OK;
    double fwd = 0.0, bwd = 0.0, f = 0.0, b = 0.0;
    uint64_t bb = 0;
    int rc = 0;
    /* the oracle's answer first: its memory is not the iteration's peak */
    cg_bench_truth truth = {0};
    cg_status verdict = CG_STATUS_OK;
    double t0 = cg_now();
    if (o->check) /* a failure is the verdict; the size still runs */
        cg_bench_truth_make(o, tp->world, tp->rank, s.n_in, &truth, &verdict);
    double check_s = cg_now() - t0;
    const cg_bench_truth *check = o->check && !verdict.code ? &truth : NULL;
    fold_run_peak();
    malloc_trim(0); /* what the last size left in the heap is not this size's peak */
    cg_rss_reset_peak();
    size_t dev_peak = 0; /* only on the device: a CPU run must not load the GPU module */
    if (o->cuda)
        cg_cuda_arena_peak(1, &dev_peak);
    for (int i = 0; rc == 0 && i < o->warmup + o->iters; i++) {
        bool last = i == o->warmup + o->iters - 1;
        rc = differentiable(o, tp, rules, &ev, s.n_in, &f, &b, &bb, last ? check : NULL, &verdict,
                            &check_s, &st);
        if (i >= o->warmup) {
            fwd += f;
            bwd += b;
        }
        f = b = 0.0;
    }
    /* one reading for both rows: the kernel's RSS counters are per-thread
     * caches, so a later VmHWM can read a few pages under an earlier one */
    int64_t loop_peak = cg_rss_peak();
    if (loop_peak > run_peak)
        run_peak = loop_peak;
    row->peak_rss_bytes = (int64_t)max_on_root((double)loop_peak);
    if (o->cuda)
        cg_cuda_arena_peak(0, &dev_peak);
    row->peak_device_bytes = o->cuda ? (int64_t)max_on_root((double)dev_peak) : -1;
    row->bwd_bytes = (int64_t)bb;
    row->fwd_s = max_on_root(fwd / o->iters);
    row->bwd_s = max_on_root(bwd / o->iters);
    /* the last iteration's blocks would wait in the cache beside the raw buffers */
    cg_big_trim();
    if (rc == 0)
        rc = cg_bench_raw(o, tp, s.count, row, &st);
    fold_run_peak();
    row->peak_rss_run_bytes = (int64_t)max_on_root((double)run_peak);
    row->raw_s = max_on_root(row->raw_s);
    row->raw_fwd_s = max_on_root(row->raw_fwd_s);
    row->ratio = row->raw_s > 0 ? (row->fwd_s + row->bwd_s) / row->raw_s : 0.0;
    if (rc != 0) {
        fprintf(stderr, "collgrad-check bench: rank %d, %lld bytes: %s\n", tp->rank, (long long)row->bytes, st.msg);
        cg_bench_truth_free(&truth);
        return -1;
    }
    if (o->check) {
        row->check_s = max_on_root(check_s);
        rc = gather_verdict(tp, &verdict, row);
    }
    cg_bench_truth_free(&truth);
    return rc;
}

int cg_bench_ranks(const cg_bench_opts *o)
{
    cg_status st = CG_STATUS_OK;
    const cg_rules *rules = cg_rules_load(o->rules, &st);
    cg_tp tp;
    if (!rules || cg_tp_open(&tp, o->transport, &st) != 0) {
        fprintf(stderr, "collgrad-check bench: %s\n", st.msg);
        return CG_EXIT_USAGE;
    }
    int nrows = 0, cap = 64, rc = CG_EXIT_OK;
    cg_bench_row *rows = calloc((size_t)cap, sizeof *rows);
    if (!rows) {
        cg_tp_close(&tp);
        return CG_EXIT_INFRA;
    }
    if (tp.rank == 0 && o->json && cg_report_targets_prepare(o->json, NULL, &st) != 0) {
        fprintf(stderr, "collgrad-check bench: %s\n", st.msg);
        MPI_Abort(MPI_COMM_WORLD, CG_EXIT_USAGE);
    }
    MPI_Comm node;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS) {
        fprintf(stderr, "collgrad-check bench: MPI_Comm_split_type failed\n");
        MPI_Abort(MPI_COMM_WORLD, CG_EXIT_INFRA);
    }
    if (tp.rank == 0)
        cg_bench_print_header(o);
    char not_run[256] = "";
    for (int64_t bytes = o->minbytes; bytes <= o->maxbytes && nrows < cap; bytes *= o->factor) {
        int fits = cg_bench_size_fits(o, node, bytes, not_run, sizeof not_run);
        if (fits < 0) {
            fprintf(stderr, "collgrad-check bench: rank %d: MPI failed sizing %lld bytes\n", tp.rank,
                    (long long)bytes);
            MPI_Abort(MPI_COMM_WORLD, CG_EXIT_INFRA);
        }
        if (!fits) {
            if (tp.rank == 0)
                printf("# %s\n", not_run);
            break;
        }
        cg_bench_row *row = &rows[nrows];
        if (one_size(o, &tp, rules, bytes, row) != 0) {
            MPI_Abort(MPI_COMM_WORLD, CG_EXIT_INFRA); /* the other ranks wait in a collective */
        }
        nrows++;
        if (tp.rank == 0) {
            cg_bench_print_row(o, row);
            if (row->check_ran && !row->check_ok)
                rc = CG_EXIT_FAIL;
        }
        if (bytes > INT64_MAX / o->factor)
            break;
    }
    if (tp.rank == 0 && o->json && cg_bench_write_json(o, rows, nrows, not_run[0] ? not_run : NULL, &st) != 0) {
        fprintf(stderr, "collgrad-check bench: %s\n", st.msg);
        rc = CG_EXIT_INFRA;
    }
    free(rows);
    MPI_Comm_free(&node);
    cg_tp_close(&tp);
    return rc;
}
