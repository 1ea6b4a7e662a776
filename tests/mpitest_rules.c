/* mpitest_rules.c — the rule sets over the real MPI transport.
 *
 * Run as `mpiexec -n W mpitest_rules` for W = 1..4. Every rank builds its
 * tensors from closed-form per-rank values, so each rank can also compute
 * every other rank's values; the expected gradients are worked out here from
 * the formulas of design.md sections 3 and 4 with plain loops, never taken from
 * the code under test. Rank 0 prints "N passed, N failed"; the exit status
 * is non-zero on any failure. */
#include <math.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mpitest_rules.h"

/* ---- closed-form per-rank values ------------------------------------------ */

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

/* ---- one backward call ------------------------------------------------------ */

/* Runs rules' backward of c on k, compares gx with k->want, frees k. */
static void run_case(const cg_rules *rules, bw_case *k, cg_coll c, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void run_case(const cg_rules *rules, bw_case *k, cg_coll c, const char *fmt, ...)
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
    int rc = cg_rules_backward(rules, &call);
    CHECK(rc == 0, "%s failed: %s", what, st.msg);
    if (rc == 0)
        expect_grad(what, gx, k->want);
    cg_graph_free(k->g);
}

/* ---- every collective ---------------------------------------------------- */

/* op_on_gradient: torch-nn, whose backward is all_reduce(g, op). */
static void test_all_reduce(const cg_rules *rules, cg_redop op, cg_dtype dt, bool op_on_gradient)
{
    bw_case k = case_new(dt, 12, 0, 12, 0);
    for (int64_t e = 0; e < 12; e++) {
        cg_set(k.x, e, xred(my_rank, e));
        cg_set(k.y, e, over_ranks(op, xred, e));
        cg_set(k.gy, e, gv(my_rank, e));
        k.want[e] = op_on_gradient ? over_ranks(op, gv, e)
                                   : sum_of_gy(e) * local_factor(op, my_rank, e);
    }
    run_case(rules, &k, coll(CG_C_ALL_REDUCE, op, 0), "all_reduce(%s) %s", cg_redop_name(op),
             cg_dtype_name(dt));
}

/* Ragged inputs; own_slice: gatherlayer. Also counts the calls it makes. */
static void test_all_gather(const cg_rules *rules, bool own_slice, int reduce_scatters, int reduces)
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
        k.want[e] = own_slice ? gv(my_rank, off + e) : sum_of_gy(off + e);
    }
    uint64_t rs = tp.calls[CG_C_REDUCE_SCATTER], red = tp.calls[CG_C_REDUCE];
    run_case(rules, &k, coll(CG_C_ALL_GATHER, CG_RED_SUM, 0), "all_gather");
    rs = tp.calls[CG_C_REDUCE_SCATTER] - rs;
    red = tp.calls[CG_C_REDUCE] - red;
    CHECK(rs == (uint64_t)reduce_scatters && red == (uint64_t)reduces,
          "%s all_gather: %llu reduce_scatter and %llu reduce calls, want %d and %d", rules->name,
          (unsigned long long)rs, (unsigned long long)red, reduce_scatters, reduces);
}

/* x is [rows, 2] on every rank (0-d when rows < 0); y is this rank's block. */
static void test_reduce_scatter(const cg_rules *rules, cg_redop op, int64_t rows, bool apply_factor)
{
    bool scalar = rows < 0;
    int64_t cols = scalar ? 1 : 2, nrows = scalar ? 1 : rows;
    int64_t lo = block_lo(nrows, my_rank), mine = block_lo(nrows, my_rank + 1) - lo;
    bw_case k = case_new(CG_F64, nrows, scalar ? -1 : cols, mine, cols);
    for (int64_t j = 0; j < mine * cols; j++) {
        cg_set(k.y, j, over_ranks(op, xred, lo * cols + j));
        cg_set(k.gy, j, gv(my_rank, j));
    }
    for (int64_t e = 0; e < nrows * cols; e++) {
        int owner = owner_of_row(nrows, e / cols);
        cg_set(k.x, e, xred(my_rank, e));
        k.want[e] = gv(owner, e - block_lo(nrows, owner) * cols) *
                    (apply_factor ? local_factor(op, my_rank, e) : 1.0);
    }
    run_case(rules, &k, coll(CG_C_REDUCE_SCATTER, op, 0), "reduce_scatter(%s) rows %lld",
             cg_redop_name(op), (long long)rows);
}

/* keep_gy: diffdist, whose non-roots return their own g. */
static void test_broadcast(const cg_rules *rules, int root, bool keep_gy)
{
    bw_case k = case_new(CG_F64, 3, 0, 3, 0);
    for (int64_t e = 0; e < 3; e++) {
        cg_set(k.x, e, xv(my_rank, e));
        cg_set(k.y, e, xv(root, e));
        cg_set(k.gy, e, gv(my_rank, e));
        k.want[e] = my_rank == root ? sum_of_gy(e) : keep_gy ? gv(my_rank, e) : 0.0;
    }
    run_case(rules, &k, coll(CG_C_BROADCAST, CG_RED_SUM, root), "broadcast(root %d)", root);
}

/* Non-roots get a nonzero gy that must be ignored: their output is constant. */
static void test_reduce(const cg_rules *rules, cg_redop op, int root, bool apply_factor)
{
    bw_case k = case_new(CG_F64, 6, 0, 6, 0);
    for (int64_t e = 0; e < 6; e++) {
        cg_set(k.x, e, xred(my_rank, e));
        cg_set(k.y, e, my_rank == root ? over_ranks(op, xred, e) : 0.0);
        cg_set(k.gy, e, my_rank == root ? gv(root, e) : 100.0 + e);
        k.want[e] = gv(root, e) * (apply_factor ? local_factor(op, my_rank, e) : 1.0);
    }
    run_case(rules, &k, coll(CG_C_REDUCE, op, root), "reduce(%s, root %d)", cg_redop_name(op),
             root);
}

static void test_gather(int root)
{
    int64_t out = my_rank == root ? ragged_offset(world_size) : 0;
    bw_case k = case_new(CG_F64, my_rank + 1, 0, out, 0);
    for (int r = 0; r < world_size; r++) {
        k.in[r] = (size_t)r + 1;
        for (int64_t i = 0; i <= r && out > 0; i++)
            cg_set(k.y, ragged_offset(r) + i, xv(r, i));
    }
    for (int64_t j = 0; j < out; j++)
        cg_set(k.gy, j, gv(root, j));
    for (int64_t e = 0; e <= my_rank; e++) {
        cg_set(k.x, e, xv(my_rank, e));
        k.want[e] = gv(root, ragged_offset(my_rank) + e);
    }
    run_case(&cg_rules_reference, &k, coll(CG_C_GATHER, CG_RED_SUM, root), "gather(root %d)", root);
}

/* x is [rows, 2] at the root; non-roots hold the same shape, or one row when
 * small_nonroots (the forward ignores their values and shapes). */
static void test_scatter(int root, int64_t rows, bool small_nonroots)
{
    const int64_t cols = 2;
    int64_t lo = block_lo(rows, my_rank), mine = block_lo(rows, my_rank + 1) - lo;
    int64_t x_rows = my_rank != root && small_nonroots ? 1 : rows;
    bw_case k = case_new(CG_F64, x_rows, cols, mine, cols);
    for (int r = 0; r < world_size; r++)
        k.in[r] = (size_t)((r != root && small_nonroots ? 1 : rows) * cols);
    for (int64_t j = 0; j < mine * cols; j++) {
        cg_set(k.y, j, xv(root, lo * cols + j));
        cg_set(k.gy, j, gv(my_rank, j));
    }
    for (int64_t e = 0; e < x_rows * cols; e++) {
        int owner = owner_of_row(rows, e / cols);
        cg_set(k.x, e, xv(my_rank, e));
        k.want[e] = my_rank == root ? gv(owner, e - block_lo(rows, owner) * cols) : 0.0;
    }
    run_case(&cg_rules_reference, &k, coll(CG_C_SCATTER, CG_RED_SUM, root),
             "scatter(root %d) rows %lld%s", root, (long long)rows,
             small_nonroots ? ", small non-root inputs" : "");
}

/* x_j is [3j+1, cols] (1-D when cols is 0): the counts differ both ways. */
static int64_t a2a_rows(int j) { return 3 * j + 1; }

/* Elements of row block r of x_j: what rank j sends rank r. */
static int64_t a2a_block(int j, int r, int64_t rowsize)
{
    return (block_lo(a2a_rows(j), r + 1) - block_lo(a2a_rows(j), r)) * rowsize;
}

static void test_all_to_all(int64_t cols)
{
    int64_t rowsize = cols > 0 ? cols : 1, out = 0;
    for (int j = 0; j < world_size; j++)
        out += a2a_block(j, my_rank, rowsize);
    bw_case k = case_new(CG_F64, a2a_rows(my_rank), cols, out, 0);
    for (int j = 0, at = 0; j < world_size; j++) {
        k.in[j] = (size_t)(a2a_rows(j) * rowsize);
        int64_t start = block_lo(a2a_rows(j), my_rank) * rowsize;
        for (int64_t t = 0; t < a2a_block(j, my_rank, rowsize); t++, at++)
            cg_set(k.y, at, xv(j, start + t));
    }
    for (int64_t at = 0; at < out; at++)
        cg_set(k.gy, at, gv(my_rank, at));
    for (int64_t e = 0; e < k.x->numel; e++)
        cg_set(k.x, e, xv(my_rank, e));
    /* block j of x_i went to rank j, after the blocks ranks i' < i sent it */
    for (int j = 0; j < world_size; j++) {
        int64_t start = block_lo(a2a_rows(my_rank), j) * rowsize, before = 0;
        for (int i = 0; i < my_rank; i++)
            before += a2a_block(i, j, rowsize);
        for (int64_t t = 0; t < a2a_block(my_rank, j, rowsize); t++)
            k.want[start + t] = gv(j, before + t);
    }
    run_case(&cg_rules_reference, &k, coll(CG_C_ALL_TO_ALL, CG_RED_SUM, 0), "all_to_all cols %lld",
             (long long)cols);
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
    test_reduce_scatter(&cg_rules_reference, CG_RED_MAX, -1, true);
    test_reduce(&cg_rules_reference, CG_RED_MAX, 0, true);
    test_all_gather(&cg_rules_reference, false, 1, 0);
    for (int root = 0; root < world_size; root += last > 0 ? last : 1) {
        test_broadcast(&cg_rules_reference, root, false);
        test_gather(root);
        test_scatter(root, world_size + 1, false);
        test_scatter(root, world_size - 1, false);
        test_scatter(root, 2 * world_size + 1, true);
    }
    test_all_to_all(2);
    test_all_to_all(0);
}

/* ---- emulations: each one's documented difference ----------------------- */

/* pytorch#58005 at W=2: PRODUCT with x = gy = rank+2; all_reduce(g, PROD) = 6. */
static void test_torch_nn_product_issue(void)
{
    bw_case k = case_new(CG_F64, 1, 0, 1, 0);
    cg_set(k.x, 0, my_rank + 2);
    cg_set(k.y, 0, 6.0);
    cg_set(k.gy, 0, my_rank + 2);
    k.want[0] = 6.0;
    run_case(&cg_rules_torch_nn, &k, coll(CG_C_ALL_REDUCE, CG_RED_PROD, 0), "pytorch#58005 prod");
}

static void test_wiring(void)
{
    static const cg_wiring c10d[] = {
        [CG_C_ALL_REDUCE] = CG_WIRE_IDENTITY,     [CG_C_ALL_GATHER] = CG_WIRE_DETACHED,
        [CG_C_REDUCE_SCATTER] = CG_WIRE_DETACHED, [CG_C_BROADCAST] = CG_WIRE_IDENTITY,
        [CG_C_REDUCE] = CG_WIRE_IDENTITY,         [CG_C_GATHER] = CG_WIRE_DETACHED,
        [CG_C_SCATTER] = CG_WIRE_DETACHED,        [CG_C_ALL_TO_ALL] = CG_WIRE_DETACHED,
    };
    const cg_rules *const *all = cg_rules_all();
    for (cg_coll_kind kind = CG_C_ALL_REDUCE; kind <= CG_C_ALL_TO_ALL; kind++) {
        cg_coll c = coll(kind, CG_RED_SUM, 0);
        for (int i = 0; all[i]; i++) {
            cg_wiring want = all[i] == &cg_rules_c10d ? c10d[kind] : CG_WIRE_COLLECTIVE;
            CHECK(all[i]->wiring(&c) == want, "%s wiring of %s", all[i]->name, cg_coll_name(kind));
        }
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
    test_wiring();
}

/* ---- registry and errors -------------------------------------------------- */

static void test_registry(void)
{
    static const char *const names[] = {
        "reference",         "c10d",    "torch-nn@1.13", "gatherlayer", "diffdist",
        "torch-funcol@2.15", "horovod", "torch-xla",     "megatron",    "torch-nn@2.4",
        "torch-funcol@2.4"};
    const cg_rules *const *all = cg_rules_all();
    for (int i = 0; i < 11; i++) {
        CHECK(all[i] && strcmp(all[i]->name, names[i]) == 0, "rule set %d is %s", i, names[i]);
        CHECK(cg_rules_find(names[i]) == all[i], "cg_rules_find(%s)", names[i]);
        CHECK(all[i] && all[i]->emulates && all[i]->see, "%s says what it emulates", names[i]);
    }
    CHECK(all[11] == NULL, "eleven built-in rule sets");
    CHECK(cg_rules_find("torch") == NULL && cg_rules_find(NULL) == NULL, "unknown names");
    CHECK(cg_rules_find("torch-nn") == all[2], "a family name finds its first version");
    CHECK(cg_rules_find("torch-nn@") == NULL && cg_rules_find("torch-nn@9") == NULL &&
              cg_rules_find("torch-n") == NULL,
          "a version no table has, or a name's prefix, finds nothing");
    size_t counts[4] = {3, 0, 2, 5}, off[4];
    cg_counts_offsets(counts, 4, off);
    CHECK(off[0] == 0 && off[1] == 3 && off[2] == 3 && off[3] == 5, "cg_counts_offsets");
}

static int fail_every_call(cg_transport *t, const cgt_call *c)
{
    (void)t, (void)c;
    return -1;
}

static const char *injected_error(const cg_transport *t)
{
    (void)t;
    return "injected failure";
}

/* A transport whose every call fails on every rank, so no rank waits. */
static const cg_transport_ops failing_ops = {
    .abi_version = CG_TRANSPORT_ABI_VERSION, .name = "failing", .caps = CGT_CAP_HOST,
    .last_error = injected_error, .call = fail_every_call,
};

/* One backward that must fail with `needle` in its message, refused before
 * any collective or failing in its first. */
static void expect_failure(const cg_rules *rules, cg_tp *over, cg_coll_kind kind, int64_t gy_len,
                           const char *needle)
{
    bw_case k = case_new(CG_F64, 2, 0, gy_len, 0);
    cg_status st = CG_STATUS_OK;
    cg_coll c = coll(kind, CG_RED_SUM, 0);
    cg_rule_call call = {.tp = over, .coll = &c, .rank = my_rank, .world = world_size,
                         .counts = counts_of(&c, &k), .x = k.x, .y = k.y, .gy = k.gy,
                         .gx = cg_tensor_like(k.g, k.x), .st = &st};
    uint64_t before[CGT_NCALLS];
    memcpy(before, tp.calls, sizeof before);
    int rc = cg_rules_backward(rules, &call);
    CHECK(rc == -1 && strstr(st.msg, needle) && strncmp(st.msg, "backward of ", 12) == 0,
          "%s %s: rc %d, err '%s', want '%s'", rules->name, cg_coll_name(kind), rc, st.msg, needle);
    CHECK(memcmp(before, tp.calls, sizeof before) == 0, "%s %s: a refused call communicated",
          rules->name, cg_coll_name(kind));
    cg_graph_free(k.g);
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

static void all_tests(void)
{
    test_registry();
    test_reference();
    test_emulations();
    test_errors();
}

int main(int argc, char **argv) { return mpitest_main(argc, argv, "mpitest_rules", all_tests); }
