/* mpitest_rules.c — the rule sets over the real MPI transport.
 *
 * Run as `mpiexec -n W mpitest_rules` for W = 1..4. Every rank builds its
 * tensors from closed-form per-rank values, so each rank can also compute
 * every other rank's values; the expected gradients below are worked out
 * from the formulas of DESIGN sections 3 and 4 with plain loops, never
 * taken from the code under test. Rank 0 prints "N passed, N failed"; the
 * exit status is non-zero on any failure. */
#include <math.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules.h"

static int my_rank, world_size;
static cg_tp tp;
static int n_passed, n_failed;

#define CHECK(cond, ...) check_that((cond), __LINE__, __VA_ARGS__)

static void check_that(bool ok, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void check_that(bool ok, int line, const char *fmt, ...)
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

static double xv(int r, int64_t i) { return r + 1 + 0.5 * (double)i; }
static double gv(int r, int64_t i) { return 1 + r + (double)i; }

/* x for the reductions: zeros on one and on two ranks (PROD), ties (MAX/MIN). */
static double xred(int r, int64_t e)
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

static double combine(cg_redop op, double a, double b)
{
    switch (op) {
    case CG_RED_PROD: return a * b;
    case CG_RED_MAX: return a > b ? a : b;
    case CG_RED_MIN: return a < b ? a : b;
    default: return a + b;
    }
}

/* op over every rank k of v(k, e) */
static double over_ranks(cg_redop op, double (*v)(int, int64_t), int64_t e)
{
    double acc = v(0, e);
    for (int k = 1; k < world_size; k++)
        acc = combine(op, acc, v(k, e));
    return op == CG_RED_AVG ? acc / world_size : acc;
}

/* d(op_k x_k)[e] / dx_i[e], from the definition. */
static double local_factor(cg_redop op, int i, int64_t e)
{
    if (op == CG_RED_SUM)
        return 1.0;
    if (op == CG_RED_AVG)
        return 1.0 / world_size;
    if (op == CG_RED_PROD) {
        double p = 1.0;
        for (int k = 0; k < world_size; k++)
            p *= k == i ? 1.0 : xred(k, e);
        return p;
    }
    double m = over_ranks(op, xred, e);
    int ties = 0;
    for (int k = 0; k < world_size; k++)
        ties += xred(k, e) == m;
    return xred(i, e) == m ? 1.0 / ties : 0.0;
}

static double sum_of_gy(int64_t e) { return over_ranks(CG_RED_SUM, gv, e); }

/* First row of rank r's block in a balanced split (comm.h's rule, restated). */
static int64_t block_lo(int64_t rows, int r) { return rows * r / world_size; }

static int owner_of_row(int64_t rows, int64_t row)
{
    int r = 0;
    while (r + 1 < world_size && block_lo(rows, r + 1) <= row)
        r++;
    return r;
}

/* ---- tensors and calls ---------------------------------------------------- */

static cg_tensor *tensor_of(cg_graph *g, cg_dtype dt, int64_t rows, int64_t cols)
{
    int64_t shape[2] = {rows, cols};
    return cg_tensor_new(g, dt, cols > 0 ? 2 : 1, shape);
}

static size_t *counts_of(cg_graph *g, size_t (*count)(int r))
{
    size_t *c = cg_alloc(g, (size_t)world_size * sizeof *c);
    for (int r = 0; r < world_size; r++)
        c[r] = count(r);
    return c;
}

static size_t ragged_count(int r) { return (size_t)r + 1; }
static size_t offset_of_ragged(int r) { return (size_t)r * ((size_t)r + 1) / 2; }

static cg_tensor *backward_of(const cg_rules *rules, cg_graph *g, const cg_coll *c,
                              const size_t *in_counts, const cg_tensor *x, const cg_tensor *y,
                              const cg_tensor *gy)
{
    cg_tensor *gx = cg_tensor_like(g, x);
    char err[600] = "";
    cg_rule_call call = {.tp = &tp, .coll = c, .rank = my_rank, .world = world_size,
                         .in_counts = in_counts, .x = x, .y = y, .gy = gy, .gx = gx,
                         .err = err, .errlen = sizeof err};
    int rc = rules->backward(&call);
    CHECK(rc == 0, "%s: %s failed: %s", rules->name, cg_coll_name(c->kind), err);
    return rc == 0 ? gx : NULL;
}

static void expect_grad(const char *what, const cg_tensor *gx, const double *want)
{
    if (!gx)
        return;
    double rtol = gx->dtype == CG_F64 ? 1e-12 : 1e-5;
    int64_t bad = -1;
    for (int64_t e = 0; e < gx->numel && bad < 0; e++)
        if (fabs(cg_get(gx, e) - want[e]) > rtol * fmax(1.0, fabs(want[e])))
            bad = e;
    CHECK(bad < 0, "%s: gx[%lld] = %.17g, want %.17g", what, (long long)bad,
          bad < 0 ? 0.0 : cg_get(gx, bad), bad < 0 ? 0.0 : want[bad]);
}

static double *wants(cg_graph *g, int64_t n) { return cg_alloc(g, (size_t)(n > 0 ? n : 1) * sizeof(double)); }


static cg_coll coll(cg_coll_kind kind, cg_redop op, int root)
{
    return (cg_coll){.kind = kind, .op = op, .root = root};
}

/* ---- reference: every collective, every op -------------------------------- */

/* rules is reference, or torch-nn whose backward is all_reduce(g, op). */
static void test_all_reduce(const cg_rules *rules, cg_redop op, cg_dtype dt, bool op_on_gradient)
{
    cg_graph *g = cg_graph_new();
    const int64_t n = 12;
    cg_tensor *x = tensor_of(g, dt, n, 0), *y = tensor_of(g, dt, n, 0), *gy = tensor_of(g, dt, n, 0);
    double *want = wants(g, n);
    size_t *in = cg_alloc(g, (size_t)world_size * sizeof *in);
    for (int r = 0; r < world_size; r++)
        in[r] = (size_t)n;
    for (int64_t e = 0; e < n; e++) {
        cg_set(x, e, xred(my_rank, e));
        cg_set(y, e, over_ranks(op, xred, e));
        cg_set(gy, e, gv(my_rank, e));
        want[e] = op_on_gradient ? over_ranks(op, gv, e) : sum_of_gy(e) * local_factor(op, my_rank, e);
    }
    cg_coll c = coll(CG_C_ALL_REDUCE, op, 0);
    char what[64];
    snprintf(what, sizeof what, "%s all_reduce(%s) %s", rules->name, cg_redop_name(op), cg_dtype_name(dt));
    expect_grad(what, backward_of(rules, g, &c, in, x, y, gy), want);
    cg_graph_free(g);
}

/* Ragged: rank r contributes r+1 elements. own_slice: gatherlayer. */
static void test_all_gather(const cg_rules *rules, bool own_slice, int reduce_scatters, int reduces)
{
    cg_graph *g = cg_graph_new();
    size_t *in = counts_of(g, ragged_count);
    int64_t mine = my_rank + 1, total = (int64_t)offset_of_ragged(world_size);
    cg_tensor *x = tensor_of(g, CG_F64, mine, 0), *y = tensor_of(g, CG_F64, total, 0);
    cg_tensor *gy = tensor_of(g, CG_F64, total, 0);
    double *want = wants(g, mine);
    for (int r = 0, j = 0; r < world_size; r++)
        for (int64_t i = 0; i <= r; i++, j++)
            cg_set(y, j, xv(r, i));
    for (int64_t j = 0; j < total; j++)
        cg_set(gy, j, gv(my_rank, j));
    int64_t off = (int64_t)offset_of_ragged(my_rank);
    for (int64_t e = 0; e < mine; e++) {
        cg_set(x, e, xv(my_rank, e));
        want[e] = own_slice ? gv(my_rank, off + e) : sum_of_gy(off + e);
    }
    uint64_t rs0 = tp.calls[CG_TP_REDUCE_SCATTER], red0 = tp.calls[CG_TP_REDUCE];
    cg_coll c = coll(CG_C_ALL_GATHER, CG_RED_SUM, 0);
    char what[64];
    snprintf(what, sizeof what, "%s all_gather", rules->name);
    expect_grad(what, backward_of(rules, g, &c, in, x, y, gy), want);
    CHECK(tp.calls[CG_TP_REDUCE_SCATTER] - rs0 == (uint64_t)reduce_scatters &&
              tp.calls[CG_TP_REDUCE] - red0 == (uint64_t)reduces,
          "%s: %llu reduce_scatter and %llu reduce calls, want %d and %d", what,
          (unsigned long long)(tp.calls[CG_TP_REDUCE_SCATTER] - rs0),
          (unsigned long long)(tp.calls[CG_TP_REDUCE] - red0), reduce_scatters, reduces);
    cg_graph_free(g);
}

/* x is [rows, 2] on every rank; rank r's output is its row block. */
static void test_reduce_scatter(const cg_rules *rules, cg_redop op, int64_t rows, bool apply_factor)
{
    cg_graph *g = cg_graph_new();
    const int64_t cols = 2, n = rows * cols;
    int64_t lo = block_lo(rows, my_rank) * cols, mine = block_lo(rows, my_rank + 1) * cols - lo;
    cg_tensor *x = tensor_of(g, CG_F64, rows, cols), *y = tensor_of(g, CG_F64, mine / cols, cols);
    cg_tensor *gy = tensor_of(g, CG_F64, mine / cols, cols);
    size_t *in = cg_alloc(g, (size_t)world_size * sizeof *in);
    double *want = wants(g, n);
    for (int r = 0; r < world_size; r++)
        in[r] = (size_t)n;
    for (int64_t j = 0; j < mine; j++) {
        cg_set(y, j, over_ranks(op, xred, lo + j));
        cg_set(gy, j, gv(my_rank, j));
    }
    for (int64_t e = 0; e < n; e++) {
        int owner = owner_of_row(rows, e / cols);
        cg_set(x, e, xred(my_rank, e));
        want[e] = gv(owner, e - block_lo(rows, owner) * cols) *
                  (apply_factor ? local_factor(op, my_rank, e) : 1.0);
    }
    cg_coll c = coll(CG_C_REDUCE_SCATTER, op, 0);
    char what[80];
    snprintf(what, sizeof what, "%s reduce_scatter(%s) rows %lld", rules->name, cg_redop_name(op),
             (long long)rows);
    expect_grad(what, backward_of(rules, g, &c, in, x, y, gy), want);
    cg_graph_free(g);
}

/* keep_gy: diffdist, whose non-roots return their own g. */
static void test_broadcast(const cg_rules *rules, int root, bool keep_gy)
{
    cg_graph *g = cg_graph_new();
    const int64_t n = 3;
    cg_tensor *x = tensor_of(g, CG_F64, n, 0), *y = tensor_of(g, CG_F64, n, 0), *gy = tensor_of(g, CG_F64, n, 0);
    size_t *in = cg_alloc(g, (size_t)world_size * sizeof *in);
    double *want = wants(g, n);
    for (int r = 0; r < world_size; r++)
        in[r] = (size_t)n;
    for (int64_t e = 0; e < n; e++) {
        cg_set(x, e, xv(my_rank, e));
        cg_set(y, e, xv(root, e));
        cg_set(gy, e, gv(my_rank, e));
        want[e] = my_rank == root ? sum_of_gy(e) : keep_gy ? gv(my_rank, e) : 0.0;
    }
    cg_coll c = coll(CG_C_BROADCAST, CG_RED_SUM, root);
    char what[64];
    snprintf(what, sizeof what, "%s broadcast(root %d)", rules->name, root);
    expect_grad(what, backward_of(rules, g, &c, in, x, y, gy), want);
    cg_graph_free(g);
}

/* Non-roots get a nonzero gy that must be ignored: their output is constant. */
static void test_reduce(const cg_rules *rules, cg_redop op, int root, bool apply_factor)
{
    cg_graph *g = cg_graph_new();
    const int64_t n = 6;
    cg_tensor *x = tensor_of(g, CG_F64, n, 0), *y = tensor_of(g, CG_F64, n, 0), *gy = tensor_of(g, CG_F64, n, 0);
    size_t *in = cg_alloc(g, (size_t)world_size * sizeof *in);
    double *want = wants(g, n);
    for (int r = 0; r < world_size; r++)
        in[r] = (size_t)n;
    for (int64_t e = 0; e < n; e++) {
        cg_set(x, e, xred(my_rank, e));
        cg_set(y, e, my_rank == root ? over_ranks(op, xred, e) : 0.0);
        cg_set(gy, e, my_rank == root ? gv(root, e) : 100.0 + e);
        want[e] = gv(root, e) * (apply_factor ? local_factor(op, my_rank, e) : 1.0);
    }
    cg_coll c = coll(CG_C_REDUCE, op, root);
    char what[64];
    snprintf(what, sizeof what, "%s reduce(%s, root %d)", rules->name, cg_redop_name(op), root);
    expect_grad(what, backward_of(rules, g, &c, in, x, y, gy), want);
    cg_graph_free(g);
}

static void test_gather(int root)
{
    cg_graph *g = cg_graph_new();
    size_t *in = counts_of(g, ragged_count);
    int64_t mine = my_rank + 1, total = (int64_t)offset_of_ragged(world_size);
    int64_t out = my_rank == root ? total : 0;
    cg_tensor *x = tensor_of(g, CG_F64, mine, 0), *y = tensor_of(g, CG_F64, out, 0), *gy = tensor_of(g, CG_F64, out, 0);
    double *want = wants(g, mine);
    for (int r = 0, j = 0; r < world_size && out > 0; r++)
        for (int64_t i = 0; i <= r; i++, j++) {
            cg_set(y, j, xv(r, i));
            cg_set(gy, j, gv(root, j));
        }
    for (int64_t e = 0; e < mine; e++) {
        cg_set(x, e, xv(my_rank, e));
        want[e] = gv(root, (int64_t)offset_of_ragged(my_rank) + e);
    }
    cg_coll c = coll(CG_C_GATHER, CG_RED_SUM, root);
    char what[64];
    snprintf(what, sizeof what, "reference gather(root %d)", root);
    expect_grad(what, backward_of(&cg_rules_reference, g, &c, in, x, y, gy), want);
    cg_graph_free(g);
}

/* x is [rows, 2] everywhere (non-root values are ignored by the forward). */
static void test_scatter(int root, int64_t rows)
{
    cg_graph *g = cg_graph_new();
    const int64_t cols = 2, n = rows * cols;
    int64_t lo = block_lo(rows, my_rank), mine_rows = block_lo(rows, my_rank + 1) - lo;
    cg_tensor *x = tensor_of(g, CG_F64, rows, cols), *y = tensor_of(g, CG_F64, mine_rows, cols);
    cg_tensor *gy = tensor_of(g, CG_F64, mine_rows, cols);
    size_t *in = cg_alloc(g, (size_t)world_size * sizeof *in);
    double *want = wants(g, n);
    for (int r = 0; r < world_size; r++)
        in[r] = (size_t)n;
    for (int64_t j = 0; j < mine_rows * cols; j++) {
        cg_set(y, j, xv(root, lo * cols + j));
        cg_set(gy, j, gv(my_rank, j));
    }
    for (int64_t e = 0; e < n; e++) {
        int owner = owner_of_row(rows, e / cols);
        cg_set(x, e, xv(my_rank, e));
        want[e] = my_rank == root ? gv(owner, e - block_lo(rows, owner) * cols) : 0.0;
    }
    cg_coll c = coll(CG_C_SCATTER, CG_RED_SUM, root);
    char what[64];
    snprintf(what, sizeof what, "reference scatter(root %d) rows %lld", root, (long long)rows);
    expect_grad(what, backward_of(&cg_rules_reference, g, &c, in, x, y, gy), want);
    cg_graph_free(g);
}

/* x_j is [j+2, cols] (1-D when cols is 0); y_r = cat_j (row block r of x_j). */
static int64_t a2a_rows(int j) { return j + 2; }

static int64_t a2a_block(int j, int r, int64_t rowsize)
{
    int64_t rows = a2a_rows(j);
    return (rows * (r + 1) / world_size - rows * r / world_size) * rowsize;
}

static void test_all_to_all(int64_t cols)
{
    cg_graph *g = cg_graph_new();
    int64_t rowsize = cols > 0 ? cols : 1, n = a2a_rows(my_rank) * rowsize, out = 0;
    for (int j = 0; j < world_size; j++)
        out += a2a_block(j, my_rank, rowsize);
    cg_tensor *x = tensor_of(g, CG_F64, a2a_rows(my_rank), cols), *y = tensor_of(g, CG_F64, out, 0);
    cg_tensor *gy = tensor_of(g, CG_F64, out, 0);
    size_t *in = cg_alloc(g, (size_t)world_size * sizeof *in);
    double *want = wants(g, n);
    for (int j = 0, k = 0; j < world_size; j++) {
        in[j] = (size_t)(a2a_rows(j) * rowsize);
        int64_t start = a2a_rows(j) * my_rank / world_size * rowsize;
        for (int64_t t = 0; t < a2a_block(j, my_rank, rowsize); t++, k++)
            cg_set(y, k, xv(j, start + t));
    }
    for (int64_t k = 0; k < out; k++)
        cg_set(gy, k, gv(my_rank, k));
    /* block j of x_i went to rank j, after the blocks ranks i' < i sent it */
    for (int j = 0; j < world_size; j++) {
        int64_t start = a2a_rows(my_rank) * j / world_size * rowsize, before = 0;
        for (int i = 0; i < my_rank; i++)
            before += a2a_block(i, j, rowsize);
        for (int64_t t = 0; t < a2a_block(my_rank, j, rowsize); t++)
            want[start + t] = gv(j, before + t);
    }
    for (int64_t e = 0; e < n; e++)
        cg_set(x, e, xv(my_rank, e));
    cg_coll c = coll(CG_C_ALL_TO_ALL, CG_RED_SUM, 0);
    char what[64];
    snprintf(what, sizeof what, "reference all_to_all cols %lld", (long long)cols);
    expect_grad(what, backward_of(&cg_rules_reference, g, &c, in, x, y, gy), want);
    cg_graph_free(g);
}

static void test_reference(void)
{
    int last = world_size - 1;
    for (cg_redop op = CG_RED_SUM; op < CG_RED_COUNT; op++) {
        test_all_reduce(&cg_rules_reference, op, CG_F64, false);
        test_reduce_scatter(&cg_rules_reference, op, world_size + 1, true);
        test_reduce(&cg_rules_reference, op, last, true);
    }
    test_all_reduce(&cg_rules_reference, CG_RED_PROD, CG_F32, false);
    test_all_reduce(&cg_rules_reference, CG_RED_SUM, CG_F32, false);
    test_reduce_scatter(&cg_rules_reference, CG_RED_SUM, world_size - 1, true);
    test_reduce(&cg_rules_reference, CG_RED_MAX, 0, true);
    test_all_gather(&cg_rules_reference, false, 1, 0);
    for (int root = 0; root < world_size; root += last > 0 ? last : 1) {
        test_broadcast(&cg_rules_reference, root, false);
        test_gather(root);
        test_scatter(root, world_size + 1);
        test_scatter(root, world_size - 1);
    }
    test_all_to_all(2);
    test_all_to_all(0);
}

/* ---- emulations: each one's documented difference ----------------------- */

/* pytorch#58005: PRODUCT, x = y = rank+2 at W=2, backward all_reduce(g, PROD). */
static void test_torch_nn_product_issue(void)
{
    cg_graph *g = cg_graph_new();
    cg_tensor *x = tensor_of(g, CG_F64, 1, 0), *y = tensor_of(g, CG_F64, 1, 0), *gy = tensor_of(g, CG_F64, 1, 0);
    size_t in[2] = {1, 1};
    double want[1] = {6.0};
    cg_set(x, 0, my_rank + 2);
    cg_set(y, 0, 6.0);
    cg_set(gy, 0, my_rank + 2);
    cg_coll c = coll(CG_C_ALL_REDUCE, CG_RED_PROD, 0);
    expect_grad("torch-nn all_reduce(prod) of #58005", backward_of(&cg_rules_torch_nn, g, &c, in, x, y, gy), want);
    cg_graph_free(g);
}

static void test_c10d_wiring(void)
{
    static const cg_wiring want[] = {
        [CG_C_ALL_REDUCE] = CG_WIRE_IDENTITY,     [CG_C_ALL_GATHER] = CG_WIRE_DETACHED,
        [CG_C_REDUCE_SCATTER] = CG_WIRE_DETACHED, [CG_C_BROADCAST] = CG_WIRE_IDENTITY,
        [CG_C_REDUCE] = CG_WIRE_IDENTITY,         [CG_C_GATHER] = CG_WIRE_DETACHED,
        [CG_C_SCATTER] = CG_WIRE_DETACHED,        [CG_C_ALL_TO_ALL] = CG_WIRE_DETACHED,
    };
    for (cg_coll_kind k = CG_C_ALL_REDUCE; k <= CG_C_ALL_TO_ALL; k++) {
        cg_coll c = coll(k, CG_RED_SUM, 0);
        CHECK(cg_rules_c10d.wiring(&c) == want[k], "c10d wiring of %s", cg_coll_name(k));
        for (int i = 0; cg_rules_all()[i]; i++)
            if (cg_rules_all()[i] != &cg_rules_c10d)
                CHECK(cg_rules_all()[i]->wiring(&c) == CG_WIRE_COLLECTIVE, "%s wiring of %s",
                      cg_rules_all()[i]->name, cg_coll_name(k));
    }
}

static void test_emulations(void)
{
    if (world_size == 2)
        test_torch_nn_product_issue();
    test_all_reduce(&cg_rules_torch_nn, CG_RED_SUM, CG_F64, false);
    test_all_reduce(&cg_rules_torch_nn, CG_RED_AVG, CG_F64, false);
    test_all_reduce(&cg_rules_torch_nn, CG_RED_PROD, CG_F64, true);
    test_all_reduce(&cg_rules_torch_nn, CG_RED_MAX, CG_F64, true);
    test_reduce_scatter(&cg_rules_torch_nn, CG_RED_PROD, world_size + 1, false);
    test_reduce(&cg_rules_torch_nn, CG_RED_MIN, 0, false);
    test_all_gather(&cg_rules_torch_nn, false, 1, 0);
    test_broadcast(&cg_rules_torch_nn, world_size - 1, false);
    test_all_gather(&cg_rules_gatherlayer, true, 0, 0);
    test_broadcast(&cg_rules_gatherlayer, 0, false);
    test_all_gather(&cg_rules_diffdist, false, 0, world_size);
    test_broadcast(&cg_rules_diffdist, 0, true);
    test_broadcast(&cg_rules_diffdist, world_size - 1, true);
    test_reduce(&cg_rules_diffdist, CG_RED_PROD, 0, true);
    test_c10d_wiring();
}

/* ---- registry and errors -------------------------------------------------- */

static void test_registry(void)
{
    static const char *const names[] = {"reference", "c10d", "torch-nn", "gatherlayer", "diffdist"};
    const cg_rules *const *all = cg_rules_all();
    for (int i = 0; i < 5; i++) {
        CHECK(all[i] && strcmp(all[i]->name, names[i]) == 0, "rule set %d is %s", i, names[i]);
        CHECK(cg_rules_find(names[i]) == all[i], "cg_rules_find(%s)", names[i]);
        CHECK(all[i] && all[i]->emulates && all[i]->see, "%s says what it emulates", names[i]);
    }
    CHECK(all[5] == NULL, "five built-in rule sets");
    CHECK(cg_rules_find("torch") == NULL && cg_rules_find(NULL) == NULL, "unknown names");
    size_t counts[4] = {3, 0, 2, 5}, off[4];
    cg_counts_offsets(counts, 4, off);
    CHECK(off[0] == 0 && off[1] == 3 && off[2] == 3 && off[3] == 5, "cg_counts_offsets");
}

static int fail_all_reduce(cg_transport *t, const void *s, void *r, size_t n, cgt_dtype dt, cgt_redop op)
{
    (void)t, (void)s, (void)r, (void)n, (void)dt, (void)op;
    return -1;
}

static const char *injected_error(const cg_transport *t)
{
    (void)t;
    return "injected failure";
}

/* A transport whose all_reduce fails on every rank (so no rank waits). */
static const cg_transport_ops failing_ops = {
    .abi_version = CG_TRANSPORT_ABI_VERSION, .name = "failing", .caps = CGT_CAP_HOST,
    .last_error = injected_error, .all_reduce = fail_all_reduce,
};

/* Runs one backward that must fail before or in its first collective. */
static void expect_failure(const cg_rules *rules, cg_tp *over, cg_coll_kind kind, int64_t gy_len,
                           const char *needle)
{
    cg_graph *g = cg_graph_new();
    cg_tensor *x = tensor_of(g, CG_F64, 2, 0), *y = tensor_of(g, CG_F64, 2, 0), *gy = tensor_of(g, CG_F64, gy_len, 0);
    size_t *in = cg_alloc(g, (size_t)world_size * sizeof *in);
    for (int r = 0; r < world_size; r++)
        in[r] = 2;
    char err[600] = "";
    cg_coll c = coll(kind, CG_RED_SUM, 0);
    cg_rule_call call = {.tp = over, .coll = &c, .rank = my_rank, .world = world_size, .in_counts = in,
                         .x = x, .y = y, .gy = gy, .gx = cg_tensor_like(g, x), .err = err, .errlen = sizeof err};
    uint64_t before = tp.calls[CG_TP_ALL_GATHER] + tp.calls[CG_TP_REDUCE_SCATTER];
    int rc = rules->backward(&call);
    CHECK(rc == -1 && strstr(err, needle) && strstr(err, "backward of "),
          "%s %s: rc %d, err '%s', want '%s'", rules->name, cg_coll_name(kind), rc, err, needle);
    CHECK(tp.calls[CG_TP_ALL_GATHER] + tp.calls[CG_TP_REDUCE_SCATTER] == before,
          "%s %s: no collective after a refused call", rules->name, cg_coll_name(kind));
    cg_graph_free(g);
}

static void test_errors(void)
{
    cg_tp failing = {.ops = &failing_ops, .rank = my_rank, .world = world_size};
    expect_failure(&cg_rules_reference, &failing, CG_C_ALL_REDUCE, 2, "injected failure");
    expect_failure(&cg_rules_torch_nn, &failing, CG_C_ALL_REDUCE, 2, "injected failure");
    expect_failure(&cg_rules_reference, &tp, CG_C_ALL_GATHER, 1, "gy has 1 elements");
    expect_failure(&cg_rules_gatherlayer, &tp, CG_C_ALL_GATHER, 1, "gy 1");
    expect_failure(&cg_rules_diffdist, &tp, CG_C_ALL_GATHER, 1, "gy 1");
    for (int i = 0; cg_rules_all()[i]; i++)
        expect_failure(cg_rules_all()[i], &tp, CG_C_SEND, 2, "send");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    char err[512];
    if (cg_tp_open(&tp, "mpi", err, sizeof err) < 0) {
        fprintf(stderr, "rank %d: cannot open the mpi transport: %s\n", my_rank, err);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    test_registry();
    test_reference();
    test_emulations();
    test_errors();
    cg_tp_close(&tp);
    int mine[2] = {n_passed, n_failed}, all[2];
    MPI_Allreduce(mine, all, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (my_rank == 0)
        printf("mpitest_rules W=%d: %d passed, %d failed\n", world_size, all[0], all[1]);
    MPI_Finalize();
    return all[1] == 0 ? 0 : 1;
}
