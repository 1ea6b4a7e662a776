/* mpitest_rules.h — the harness both rule-set MPI tests share: the pass/fail
 * counters and CHECK, the closed-form per-rank values every rank can compute
 * for every other rank, and the tensors of one backward call. Header-only
 * (static inline) so each test program stays one file to build. */
#ifndef CG_MPITEST_RULES_H
#define CG_MPITEST_RULES_H

#include <math.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "rules.h"

static int my_rank, world_size;
static cg_tp tp;
static int n_passed, n_failed;

#define CHECK(cond, ...) check_that((cond), __LINE__, __VA_ARGS__)

static inline void check_that(bool ok, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static inline void check_that(bool ok, int line, const char *fmt, ...)
{
    if (ok) {
        n_passed++;
        return;
    }
    n_failed++;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL W=%d rank %d, line %d: ", world_size, my_rank, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* ---- closed-form per-rank values ------------------------------------------ */

static inline double xv(int r, int64_t i) { return r + 1 + 0.5 * (double)i; }

static inline double gv(int r, int64_t i) { return 1 + r + (double)i; }

/* x for the reductions: zeros on one and on two ranks (PROD), ties (MAX/MIN). */
static inline double xred(int r, int64_t e)
{
    switch (e % 6) {
    case 0: return r + 1.0;                 /* distinct */
    case 1: return r == 0 ? 0.0 : xv(r, e); /* one rank holds a zero */
    case 2: return r <= 1 ? 0.0 : xv(r, e); /* two ranks hold zeros */
    case 3: return 2.0;                     /* every rank ties */
    case 4: return r >= 1 ? 3.0 : 1.0;      /* ranks 1.. tie at the max */
    default: return r - 0.5;                /* negative on rank 0 */
    }
}

/* op over every rank k of v(k, e) */
static inline double over_ranks(cg_redop op, double (*v)(int, int64_t), int64_t e)
{
    double acc = v(0, e);
    for (int k = 1; k < world_size; k++) {
        double b = v(k, e);
        acc = op == CG_RED_PROD  ? acc * b
              : op == CG_RED_MAX ? fmax(acc, b)
              : op == CG_RED_MIN ? fmin(acc, b)
                                 : acc + b;
    }
    return op == CG_RED_AVG ? acc / world_size : acc;
}

static inline double sum_of_gy(int64_t e) { return over_ranks(CG_RED_SUM, gv, e); }

/* First row of rank r's block in a balanced split (comm.h's rule, restated). */
static inline int64_t block_lo(int64_t rows, int r) { return rows * r / world_size; }

static inline int owner_of_row(int64_t rows, int64_t row)
{
    int r = 0;
    while (r + 1 < world_size && block_lo(rows, r + 1) <= row)
        r++;
    return r;
}

/* Rank r of a ragged layout holds r+1 elements, after r(r+1)/2 of them. */
static inline int64_t ragged_offset(int r) { return (int64_t)r * (r + 1) / 2; }

/* ndim 2 when cols > 0, 1 when cols == 0, 0-d when cols < 0. */
static inline cg_tensor *tensor_of(cg_graph *g, cg_dtype dt, int64_t rows, int64_t cols)
{
    int64_t shape[2] = {rows, cols};
    return cg_tensor_new(g, dt, cols > 0 ? 2 : cols == 0 ? 1 : 0, shape);
}

/* The tensors of one call on this rank; everything lives in g. */
typedef struct {
    cg_graph *g;
    cg_tensor *x, *y, *gy; /* gy has y's shape */
    size_t *in;            /* every rank's input count */
    double *want;          /* the expected gx, x->numel values */
} bw_case;

/* Every rank's input count starts as x's; ragged cases overwrite it. */
static inline bw_case case_new(cg_dtype dt, int64_t x_rows, int64_t x_cols, int64_t y_rows, int64_t y_cols)
{
    bw_case k = {.g = cg_graph_new()};
    k.x = tensor_of(k.g, dt, x_rows, x_cols);
    k.y = tensor_of(k.g, dt, y_rows, y_cols);
    k.gy = tensor_of(k.g, dt, y_rows, y_cols);
    k.in = cg_alloc(k.g, (size_t)world_size * sizeof *k.in);
    k.want = cg_alloc(k.g, (size_t)k.x->numel * sizeof *k.want);
    for (int r = 0; r < world_size; r++)
        k.in[r] = (size_t)k.x->numel;
    return k;
}

/* The forward's counts on this rank for call c over k (plan.h's meaning),
 * restated here from k's sizes: every rank's input count, and the balanced
 * row blocks of the rows the call splits (a scatter's non-root knows the
 * root's rows only from its count and the row shape of its own y). */
static inline cg_coll_counts *counts_of(const cg_coll *c, const bw_case *k)
{
    cg_coll_counts *f = cg_alloc(k->g, sizeof *f);
    if (!f)
        return NULL;
    const cg_collective *d = cg_collective_of(c->kind);
    bool from_root = d->shape == CG_SHAPE_BLOCK && cg_coll_has_root(c->kind) && my_rank != c->root;
    const cg_tensor *shaped = from_root ? k->y : k->x;
    int64_t rowsize = 1;
    for (int dim = 1; dim < shaped->ndim; dim++)
        rowsize *= shaped->shape[dim];
    if (rowsize == 0) /* no elements to count rows by: every count is 0 */
        rowsize = 1;
    int src = from_root ? c->root : my_rank;
    int64_t src_rows = from_root ? (int64_t)k->in[src] / rowsize : k->x->ndim == 0 ? 1 : k->x->shape[0];
    for (int r = 0; r < world_size; r++) {
        int64_t rows_r = (int64_t)k->in[r] / rowsize;
        f->inputs[r] = k->in[r];
        f->blocks[r] = (size_t)((block_lo(src_rows, r + 1) - block_lo(src_rows, r)) * rowsize);
        f->recv[r] = (size_t)((block_lo(rows_r, my_rank + 1) - block_lo(rows_r, my_rank)) * rowsize);
    }
    return f;
}

static inline cg_coll coll(cg_coll_kind kind, cg_redop op, int root)
{
    return (cg_coll){.kind = kind, .op = op, .root = root};
}

static inline void expect_grad(const char *what, const cg_tensor *gx, const double *want)
{
    double rtol = gx->dtype == CG_F64 ? 1e-12 : 1e-5;
    int64_t bad = -1;
    /* written as !(close) so that a NaN counts as a mismatch */
    for (int64_t e = 0; e < gx->numel && bad < 0; e++)
        if (!(fabs(cg_get(gx, e) - want[e]) <= rtol * fmax(1.0, fabs(want[e]))))
            bad = e;
    CHECK(bad < 0, "%s: gx[%lld] = %.17g, want %.17g", what, (long long)bad,
          bad < 0 ? 0.0 : cg_get(gx, bad), bad < 0 ? 0.0 : want[bad]);
}

/* The whole program around the tests: MPI up, the mpi transport open, the
 * tests, then "NAME W=4: N passed, N failed" from rank 0 and the exit status. */
static inline int mpitest_main(int argc, char **argv, const char *name, void (*tests)(void))
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    cg_status st = CG_STATUS_OK;
    if (cg_tp_open(&tp, "mpi", &st) < 0) {
        fprintf(stderr, "rank %d: cannot open the mpi transport: %s\n", my_rank, st.msg);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    tests();
    cg_tp_close(&tp);
    int mine[2] = {n_passed, n_failed}, all[2];
    MPI_Allreduce(mine, all, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (my_rank == 0)
        printf("%s W=%d: %d passed, %d failed\n", name, world_size, all[0], all[1]);
    MPI_Finalize();
    return all[1] == 0 ? 0 : 1;
}

#endif
