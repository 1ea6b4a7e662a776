/* bench.h — `collgrad-check bench`: nccl-tests for differentiable collectives.
 *
 * For each size (-b..-e by -f), every rank runs the collective's forward and
 * its backward through a rule set over a transport (autograd bookkeeping
 * included) -w + -n times, then the raw transport calls of the forward and
 * of its transpose (the floor any backward must pay), and prints a row:
 * times, algbw/busbw, the bytes the backward moved against the transpose's,
 * the ratio to raw, the peak RSS. The correctness check compares the last
 * timed iteration's output and gradient, on every rank, with the oracle's
 * (bench_check.c), and is reported beside the row.
 * `bench --oracle` times the oracle alone over simulated world sizes and
 * fits its growth exponent. */
#ifndef CG_BENCH_H
#define CG_BENCH_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "comm.h"
#include "ir.h"
#include "result.h"
#include "status.h"
#include "tensor.h"
#include "transport.h"

typedef struct cg_bench_opts {
    int64_t minbytes, maxbytes;
    int factor;                 /* -f: each size is the previous times this */
    int iters, warmup;
    cg_coll_kind coll;          /* all_reduce, all_gather, reduce_scatter, broadcast, all_to_all */
    cg_redop op;
    cg_dtype dtype;
    const char *rules, *transport;
    bool cuda;                  /* --device cuda (implied by --transport nccl): the tensors and
                                   the raw buffers live on the GPU, the timed spans end with a
                                   device synchronize */
    int world;
    const char *json;           /* NULL: no JSON */
    bool check;                 /* check each size against the oracle */
    bool oracle;                /* --oracle: time the oracle alone */
    int oracle_max_world;
    bool in_mpiexec;            /* internal: this process is one rank */
} cg_bench_opts;

/* One size's measurements, as rank 0 reports them. */
typedef struct cg_bench_row {
    int64_t bytes;              /* nccl-tests' size: the larger buffer */
    int64_t count;              /* elements of that buffer */
    double fwd_s, bwd_s, raw_s; /* mean per iteration, slowest rank */
    double raw_fwd_s;           /* raw's forward call alone (MPI_Allgather for all_gather, ...) */
    double ratio;               /* (fwd + bwd) / raw */
    int64_t bwd_bytes, transpose_bytes; /* moved by one rank (rank 0) */
    int64_t peak_rss_bytes;     /* largest rank's peak during the timed loop */
    int64_t peak_rss_run_bytes; /* largest rank's peak over the whole run up to this size's end:
                                   the oracle's truth, the check and the raw calls included */
    int64_t peak_device_bytes;  /* --device cuda: largest rank's peak of device bytes its
                                   tensors held in the timed loop (cg_cuda_arena_peak) */
    bool check_ran, check_ok;
    double check_s;
    char check_msg[160];
} cg_bench_row;

/* Entry point: argv[0] is "bench". Returns the exit status (cli.h). */
int cg_bench_main(int argc, char **argv);
/* bench_opts.c: parse argv into o (defaults first). 0 ok; -1 to exit 0
 * (--help printed); otherwise the usage status with the message printed. */
int cg_bench_parse(int argc, char **argv, cg_bench_opts *o);
/* bench_rank.c: run every size on this rank (inside MPI). Rank 0 prints the
 * table and writes the JSON. Returns the exit status. */
int cg_bench_ranks(const cg_bench_opts *o);

/* ---- a rank's phases (bench_rank.c, bench_raw.c) */
/* Phase 2: `count` elements through the transport's forward collective and
 * its transpose, warm-up then timed iterations, into row's raw_s, raw_fwd_s
 * and transpose_bytes. 0, or -1 with st. */
int cg_bench_raw(const cg_bench_opts *o, cg_tp *tp, int64_t count, cg_bench_row *row, cg_status *st);
/* The device's queued work done before a timestamp is taken: 0, or -1 with st. */
int cg_bench_settle(const cg_bench_opts *o, cg_status *st);
/* The bytes this rank's handle moved so far, over every entry. */
uint64_t cg_bench_bytes_moved(const cg_tp *tp);
/* bench_fit.c: whether `bytes` fits every node's host memory (node: this
 * rank's MPI_COMM_TYPE_SHARED communicator; collective over MPI_COMM_WORLD).
 * 1 fits; 0 not, with rank 0's line in why; -1 an MPI call failed. */
int cg_bench_size_fits(const cg_bench_opts *o, MPI_Comm node, int64_t bytes, char *why, size_t len);
/* bench_oracle.c: the oracle-only timing. Returns the exit status. */
int cg_bench_oracle(const cg_bench_opts *o);
/* bench_table.c: print the header / one row; write the rows as JSON. */
void cg_bench_print_header(const cg_bench_opts *o);
void cg_bench_print_row(const cg_bench_opts *o, const cg_bench_row *r);
int cg_bench_write_json(const cg_bench_opts *o, const cg_bench_row *rows, int n, const char *not_run,
                        cg_status *st);
/* The bench's call in the case language, from the collective's syntax:
 * "all_gather(x)", "broadcast(x, 0)", "reduce(x, 0, sum)". */
void cg_bench_call(const cg_bench_opts *o, char *buf, size_t len);
/* bench_check.c: the bench program as a case, n input elements per rank:
 * x = param(ones(n) * (rank + 1)); y = CALL; backward(y). NULL with st. */
cg_case *cg_bench_program(const cg_bench_opts *o, int world, int64_t n, cg_status *st);
/* What one rank's y and x.grad must be at n_in input elements per rank:
 * constant on blocks of `scale` elements, so kept per block (the oracle's
 * run of the program at n_in / scale). The arrays are owned by the truth. */
typedef struct cg_bench_truth {
    int64_t scale;     /* elements per block */
    double *y, *gx;    /* per block: y's value, x's per_rank gradient */
    int64_t ny, nx;
    cg_tol tol;        /* the case's, for the dtype (result.h) */
} cg_bench_truth;
int cg_bench_truth_make(const cg_bench_opts *o, int world, int rank, int64_t n_in, cg_bench_truth *t,
                        cg_status *st);
void cg_bench_truth_free(cg_bench_truth *t);
/* 0 when y and x's gradient (NULL: zeros) match t element for element,
 * else -1 with st naming the first element off. */
int cg_bench_truth_check(const cg_bench_truth *t, const cg_tensor *x, const cg_tensor *y, cg_status *st);
/* Its halves: y right after the forward (the bench then writes the seed over
 * y, bench_rank.c), x.grad (gx, numel elements; NULL: zeros) after the
 * backward. Both read host tensors: a device run downloads them first. */
int cg_bench_truth_check_y(const cg_bench_truth *t, const cg_tensor *y, cg_status *st);
int cg_bench_truth_check_grad(const cg_bench_truth *t, const cg_tensor *gx, int64_t numel, cg_status *st);
/* The busbw factor of nccl-tests' PERFORMANCE.md for this collective. */
double cg_bench_busbw_factor(cg_coll_kind k, int world);

#endif
