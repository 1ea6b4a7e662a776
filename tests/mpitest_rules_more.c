/* mpitest_rules_more.c — the emulations of design.md section 4 after the first
 * five (torch-funcol, horovod, torch-xla, megatron) over the real MPI
 * transport; mpitest_rules.c covers the rest with the same harness.
 *
 * Run as `mpiexec -n W mpitest_rules_more` for W = 1..4. Every rank builds
 * its tensors from closed-form per-rank values, so it can also compute every
 * other rank's; the expected gradients are worked out here from each
 * implementation's documented formula with plain loops, never taken from the
 * code under test. Each check also counts the transport calls the backward
 * made: a local formula must not communicate. Rank 0 prints "N passed, N
 * failed"; the exit status is non-zero on any failure. */
#include <math.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mpitest_rules.h"

/* ---- one backward call ------------------------------------------------------ */

static uint64_t transport_calls(void)
{
    uint64_t n = 0;
    for (int e = 0; e < CGT_NCALLS; e++)
        n += tp.calls[e];
    return n;
}

/* Runs rules' backward of c on k, compares gx with k->want and the number
 * of transport calls it made with `calls`, frees k. */
static void run_case(const cg_rules *rules, bw_case *k, cg_coll c, int calls, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static void run_case(const cg_rules *rules, bw_case *k, cg_coll c, int calls, const char *fmt, ...)
{
    char what[128];
    cg_status st = CG_STATUS_OK;
    int len = snprintf(what, sizeof what, "%s ", rules->name);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what + len, sizeof what - (size_t)len, fmt, ap);
    va_end(ap);
    cg_tensor *gx = cg_tensor_like(k->g, k->x);
    cg_rule_call call = {.tp = &tp, .coll = &c, .rank = my_rank, .world = world_size,
                         .counts = counts_of(&c, k), .x = k->x, .y = k->y, .gy = k->gy, .gx = gx,
                         .st = &st};
    uint64_t before = transport_calls();
    int rc = cg_rules_backward(rules, &call);
    uint64_t made = transport_calls() - before;
    CHECK(rc == 0, "%s failed: %s", what, st.msg);
    CHECK(made == (uint64_t)calls, "%s made %llu transport calls, want %d", what,
          (unsigned long long)made, calls);
    if (rc == 0)
        expect_grad(what, gx, k->want);
    cg_graph_free(k->g);
}

/* ---- each collective, with the expected gradient as a parameter ---------- */

typedef enum {
    GX_REDUCED_G, /* op_r g_r: all_reduce of g with the forward's op (SUM, AVG: the truth) */
    GX_OWN_G,     /* g_i unchanged: identity */
    GX_XLA_LOCAL, /* torch_xla's local formula */
    GX_NONE,      /* 0: no gradient reaches x (torch-funcol@2.4) */
} all_reduce_want;

/* torch_xla/core/functions.py AllReduce.backward, restated. */
static double xla_want(cg_redop op, int64_t e)
{
    double g = gv(my_rank, e), in = xred(my_rank, e), out = over_ranks(op, xred, e);
    switch (op) {
    case CG_RED_SUM: return g;
    case CG_RED_AVG: return g / world_size;
    case CG_RED_PROD: return in != 0.0 ? g * out / in : 0.0;
    default: return in == out ? g : 0.0;
    }
}

static void test_all_reduce(const cg_rules *rules, cg_redop op, cg_dtype dt, all_reduce_want how,
                            int calls)
{
    bw_case k = case_new(dt, 12, 0, 12, 0);
    for (int64_t e = 0; e < 12; e++) {
        cg_set(k.x, e, xred(my_rank, e));
        cg_set(k.y, e, over_ranks(op, xred, e));
        cg_set(k.gy, e, gv(my_rank, e));
        k.want[e] = how == GX_REDUCED_G ? over_ranks(op, gv, e)
                    : how == GX_OWN_G   ? gv(my_rank, e)
                    : how == GX_NONE    ? 0.0
                                        : xla_want(op, e);
    }
    run_case(rules, &k, coll(CG_C_ALL_REDUCE, op, 0), calls, "all_reduce(%s) %s",
             cg_redop_name(op), cg_dtype_name(dt));
}

/* Ragged inputs. gx[e] = (sum_over_ranks ? Σ_r g_r : g_i)[own + e] · scale. */
static void test_all_gather(const cg_rules *rules, bool sum_over_ranks, double scale, int calls)
{
    int64_t total = ragged_offset(world_size), off = ragged_offset(my_rank);
    bw_case k = case_new(CG_F64, my_rank + 1, 0, total, 0);
    for (int r = 0; r < world_size; r++) {
        k.in[r] = (size_t)r + 1;
        for (int64_t i = 0; i <= r; i++)
            cg_set(k.y, ragged_offset(r) + i, xv(r, i));
    }
    for (int64_t j = 0; j < total; j++)
        cg_set(k.gy, j, gv(my_rank, j));
    for (int64_t e = 0; e <= my_rank; e++) {
        cg_set(k.x, e, xv(my_rank, e));
        k.want[e] = (sum_over_ranks ? sum_of_gy(off + e) : gv(my_rank, off + e)) * scale;
    }
    run_case(rules, &k, coll(CG_C_ALL_GATHER, CG_RED_SUM, 0), calls, "all_gather");
}

/* x is [W+1, 2] on every rank; gx = cat_r g_r · scale. */
static void test_reduce_scatter(const cg_rules *rules, cg_redop op, double scale)
{
    const int64_t cols = 2, nrows = world_size + 1;
    int64_t lo = block_lo(nrows, my_rank), mine = block_lo(nrows, my_rank + 1) - lo;
    bw_case k = case_new(CG_F64, nrows, cols, mine, cols);
    for (int64_t j = 0; j < mine * cols; j++) {
        cg_set(k.y, j, over_ranks(op, xv, lo * cols + j));
        cg_set(k.gy, j, gv(my_rank, j));
    }
    for (int64_t e = 0; e < nrows * cols; e++) {
        int owner = owner_of_row(nrows, e / cols);
        cg_set(k.x, e, xv(my_rank, e));
        k.want[e] = gv(owner, e - block_lo(nrows, owner) * cols) * scale;
    }
    run_case(rules, &k, coll(CG_C_REDUCE_SCATTER, op, 0), 1, "reduce_scatter(%s)",
             cg_redop_name(op));
}

/* gx = Σ_r g_r · scale at the root, zero elsewhere. */
static void test_broadcast(const cg_rules *rules, int root, double scale)
{
    bw_case k = case_new(CG_F64, 3, 0, 3, 0);
    for (int64_t e = 0; e < 3; e++) {
        cg_set(k.x, e, xv(my_rank, e));
        cg_set(k.y, e, xv(root, e));
        cg_set(k.gy, e, gv(my_rank, e));
        k.want[e] = my_rank == root ? sum_of_gy(e) * scale : 0.0;
    }
    run_case(rules, &k, coll(CG_C_BROADCAST, CG_RED_SUM, root), 1, "broadcast(root %d)", root);
}

/* gx = g_i on every rank, root or not, no transport call: a broadcast
 * without an autograd formula (torch-funcol@2.15). */
static void test_broadcast_straight_through(const cg_rules *rules, int root)
{
    bw_case k = case_new(CG_F64, 3, 0, 3, 0);
    for (int64_t e = 0; e < 3; e++) {
        cg_set(k.x, e, xv(my_rank, e));
        cg_set(k.y, e, xv(root, e));
        cg_set(k.gy, e, gv(my_rank, e));
        k.want[e] = gv(my_rank, e);
    }
    run_case(rules, &k, coll(CG_C_BROADCAST, CG_RED_SUM, root), 0,
             "broadcast(root %d), straight through", root);
}

/* ---- refusals ----------------------------------------------------------------- */

/* The backward must fail with exactly `message` (or a message containing
 * `needle` when message is NULL), before any transport call. */
static void expect_failure(const cg_rules *rules, cg_coll c, int64_t gy_len, const char *message,
                           const char *needle)
{
    bw_case k = case_new(CG_F64, 2, 0, gy_len, 0);
    cg_status st = CG_STATUS_OK;
    cg_rule_call call = {.tp = &tp, .coll = &c, .rank = my_rank, .world = world_size,
                         .counts = counts_of(&c, &k), .x = k.x, .y = k.y, .gy = k.gy,
                         .gx = cg_tensor_like(k.g, k.x), .st = &st};
    uint64_t before = transport_calls();
    int rc = cg_rules_backward(rules, &call);
    bool right = message ? strcmp(st.msg, message) == 0 : strstr(st.msg, needle) != NULL;
    CHECK(rc == -1 && right, "%s %s: rc %d, err '%s', want '%s'", rules->name,
          cg_coll_name(c.kind), rc, st.msg, message ? message : needle);
    CHECK(transport_calls() == before, "%s %s: a refused call communicated", rules->name,
          cg_coll_name(c.kind));
    cg_graph_free(k.g);
}

/* ---- the four rule sets ------------------------------------------------------ */

static void test_torch_funcol(void)
{
    const cg_rules *f = &cg_rules_torch_funcol; /* torch-funcol@2.15 */
    test_all_reduce(f, CG_RED_SUM, CG_F64, GX_REDUCED_G, 1);
    test_all_reduce(f, CG_RED_AVG, CG_F64, GX_REDUCED_G, 1);
    expect_failure(f, coll(CG_C_ALL_REDUCE, CG_RED_PROD, 0), 2,
                   "backward of all_reduce(prod): not supported by _functional_collectives "
                   "(all_reduce backward only supports `sum`, `premul_sum`, `avg`, `max`, `min` "
                   "reductions, got 'product')", /* torch 2.15's own words */
                   NULL);
    expect_failure(f, coll(CG_C_REDUCE_SCATTER, CG_RED_MAX, 0), 2,
                   "backward of reduce_scatter(max): not supported by _functional_collectives "
                   "(reduce_scatter_tensor backward only supports 'sum' reduction, got 'max')",
                   NULL);
    test_reduce_scatter(f, CG_RED_SUM, 1.0);
    test_all_gather(f, true, 1.0, 1);
    test_broadcast_straight_through(f, world_size - 1);
    /* torch 2.4: no formula for any of them, so no input gets a gradient */
    const cg_rules *f24 = &cg_rules_torch_funcol_2_4;
    test_all_reduce(f24, CG_RED_SUM, CG_F64, GX_NONE, 0);
    test_all_reduce(f24, CG_RED_PROD, CG_F64, GX_NONE, 0);
}

static void test_horovod(void)
{
    const cg_rules *h = &cg_rules_horovod;
    for (cg_redop op = CG_RED_SUM; op < CG_RED_COUNT; op++)
        test_all_reduce(h, op, CG_F64, GX_REDUCED_G, 1);
    test_all_gather(h, true, 1.0 / world_size, 1);
    test_reduce_scatter(h, CG_RED_SUM, world_size);
    test_reduce_scatter(h, CG_RED_AVG, 1.0);
    expect_failure(h, coll(CG_C_REDUCE_SCATTER, CG_RED_PROD, 0), 2,
                   "backward of reduce_scatter(prod): not supported by horovod (reducescatter "
                   "takes only sum and average)",
                   NULL);
    test_broadcast(h, 0, 1.0 / world_size);
    test_broadcast(h, world_size - 1, 1.0 / world_size);
}

static void test_torch_xla(void)
{
    const cg_rules *x = &cg_rules_torch_xla;
    for (cg_redop op = CG_RED_SUM; op < CG_RED_COUNT; op++)
        test_all_reduce(x, op, CG_F64, GX_XLA_LOCAL, 0);
    test_all_reduce(x, CG_RED_PROD, CG_F32, GX_XLA_LOCAL, 0);
    test_all_reduce(x, CG_RED_SUM, CG_F64, GX_OWN_G, 0);
    test_all_gather(x, false, 1.0, 0);
    test_reduce_scatter(x, CG_RED_SUM, 1.0);
    test_broadcast(x, 0, 1.0);
    expect_failure(x, coll(CG_C_ALL_GATHER, CG_RED_SUM, 0), 1, NULL, "gy 1");
    expect_failure(x, coll(CG_C_ALL_REDUCE, CG_RED_SUM, 0), 3, NULL, "elements");
}

static void test_megatron(void)
{
    const cg_rules *m = &cg_rules_megatron;
    test_all_reduce(m, CG_RED_SUM, CG_F64, GX_OWN_G, 0);
    test_all_reduce(m, CG_RED_AVG, CG_F64, GX_REDUCED_G, 1);
    test_all_gather(m, false, 1.0, 0);
    test_reduce_scatter(m, CG_RED_SUM, 1.0);
    test_broadcast(m, world_size - 1, 1.0);
    expect_failure(m, coll(CG_C_ALL_REDUCE, CG_RED_SUM, 0), 3, NULL, "gy 3");
    expect_failure(m, coll(CG_C_ALL_GATHER, CG_RED_SUM, 0), 1, NULL, "gy 1");
}

static void all_tests(void)
{
    test_torch_funcol();
    test_horovod();
    test_torch_xla();
    test_megatron();
}

int main(int argc, char **argv) { return mpitest_main(argc, argv, "mpitest_rules_more", all_tests); }
