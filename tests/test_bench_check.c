/* test_bench_check.c — the bench's check (bench_check.c) keeps, per block,
 * what the bench program's y and x.grad must be, from the oracle run at a
 * reduced size. Two things are tested here:
 *
 *  1. The numbers, worked out by hand for x_r = ones(n) * (r + 1) and the
 *     loss sum_k sum(y_k) (per_rank: d loss / d x_r), at W = 4:
 *       all_reduce(sum)   y_r = 1+2+3+4 = 10;           x_r.grad = W = 4
 *       all_reduce(max)   y_r = 4;    x_r.grad = 4 on rank 3 (the unique max), 0 elsewhere
 *       all_gather        y_r = [1.., 2.., 3.., 4..];   x_r.grad = 4 (every rank's y holds x_r)
 *       reduce_scatter    y_r = 10 (its block's sum);   x_r.grad = 1 (each input feeds one output)
 *       broadcast(root 0) y_r = 1;    x_0.grad = 4, x_r.grad = 0 elsewhere
 *       all_to_all        y_r = [1.., 2.., 3.., 4..] (block k from rank k); x_r.grad = 1
 *  2. The reduction itself: at a size where the full program is cheap, every
 *     element of the full oracle's y and x.grad equals the truth's block
 *     value, for every collective, op and world the bench takes.
 * And the comparison: a tensor with one element off fails, naming it. */
#include <check.h>
#include <string.h>

#include "autograd.h"
#include "bench.h"
#include "oracle.h"

static cg_bench_opts opts(cg_coll_kind k, cg_redop op)
{
    cg_bench_opts o;
    memset(&o, 0, sizeof o);
    o.coll = k;
    o.op = op;
    o.dtype = CG_F32;
    o.rules = "reference";
    o.transport = "mpi";
    return o;
}

/* The truth at W = 4, n_in = 8 per rank, on rank r. */
static cg_bench_truth truth_of(cg_coll_kind k, cg_redop op, int r)
{
    cg_bench_opts o = opts(k, op);
    cg_bench_truth t;
    cg_status st = CG_STATUS_OK;
    ck_assert_msg(cg_bench_truth_make(&o, 4, r, 8, &t, &st) == 0, "%s", st.msg);
    return t;
}

static void expect_blocks(const double *got, int64_t n, const double *want)
{
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(got[i] == want[i], "block %lld: %g, expected %g", (long long)i, got[i], want[i]);
}

START_TEST(the_numbers_by_hand)
{
    for (int r = 0; r < 4; r++) {
        cg_bench_truth t = truth_of(CG_C_ALL_REDUCE, CG_RED_SUM, r);
        ck_assert_int_eq(t.scale, 8);
        expect_blocks(t.y, t.ny, (double[]){10});
        expect_blocks(t.gx, t.nx, (double[]){4});
        cg_bench_truth_free(&t);

        t = truth_of(CG_C_ALL_REDUCE, CG_RED_MAX, r);
        expect_blocks(t.y, t.ny, (double[]){4});
        expect_blocks(t.gx, t.nx, (double[]){r == 3 ? 4 : 0});
        cg_bench_truth_free(&t);

        t = truth_of(CG_C_ALL_GATHER, CG_RED_SUM, r);
        ck_assert_int_eq(t.ny, 4);
        expect_blocks(t.y, t.ny, (double[]){1, 2, 3, 4});
        expect_blocks(t.gx, t.nx, (double[]){4});
        cg_bench_truth_free(&t);

        t = truth_of(CG_C_REDUCE_SCATTER, CG_RED_SUM, r);
        ck_assert_int_eq(t.scale, 2); /* 8 inputs, a share of 2 for each of 4 ranks */
        expect_blocks(t.y, t.ny, (double[]){10});
        expect_blocks(t.gx, t.nx, (double[]){1, 1, 1, 1});
        cg_bench_truth_free(&t);

        t = truth_of(CG_C_BROADCAST, CG_RED_SUM, r);
        expect_blocks(t.y, t.ny, (double[]){1});
        expect_blocks(t.gx, t.nx, (double[]){r == 0 ? 4 : 0});
        cg_bench_truth_free(&t);

        t = truth_of(CG_C_ALL_TO_ALL, CG_RED_SUM, r);
        ck_assert_int_eq(t.scale, 2);
        expect_blocks(t.y, t.ny, (double[]){1, 2, 3, 4});
        expect_blocks(t.gx, t.nx, (double[]){1, 1, 1, 1});
        cg_bench_truth_free(&t);
    }
}
END_TEST

/* Every element of the full-size oracle's `name` on rank r against the
 * truth's block value. */
static void expect_full(const cg_oracle *full, const char *name, int r, bool grad, const double *blocks,
                        int64_t nblocks, int64_t scale)
{
    const cg_otensor *t = cg_oracle_find(full, name, r);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(t->numel, nblocks * scale);
    const double *v = grad ? t->per_rank : t->value;
    for (int64_t e = 0; e < t->numel; e++)
        ck_assert_msg(v[e] == blocks[e / scale], "%s%s[%lld] on rank %d: %g, the truth %g", name,
                      grad ? ".grad" : "", (long long)e, r, v[e], blocks[e / scale]);
}

START_TEST(the_reduced_program_has_the_full_ones_blocks)
{
    const struct {
        cg_coll_kind k;
        cg_redop op;
    } calls[] = {{CG_C_ALL_REDUCE, CG_RED_SUM},     {CG_C_ALL_REDUCE, CG_RED_AVG},
                 {CG_C_ALL_REDUCE, CG_RED_PROD},    {CG_C_ALL_REDUCE, CG_RED_MAX},
                 {CG_C_ALL_REDUCE, CG_RED_MIN},     {CG_C_ALL_GATHER, CG_RED_SUM},
                 {CG_C_REDUCE_SCATTER, CG_RED_SUM}, {CG_C_REDUCE_SCATTER, CG_RED_AVG},
                 {CG_C_BROADCAST, CG_RED_SUM},      {CG_C_ALL_TO_ALL, CG_RED_SUM}};
    for (size_t c = 0; c < sizeof calls / sizeof calls[0]; c++) {
        for (int w = 2; w <= 4; w++) {
            cg_bench_opts o = opts(calls[c].k, calls[c].op);
            int64_t n_in = (int64_t)w * 6;
            cg_status st = CG_STATUS_OK;
            cg_case *cs = cg_bench_program(&o, w, n_in, &st);
            ck_assert_msg(cs != NULL, "%s", st.msg);
            cg_oracle *full = cg_oracle_run(cs, w, false);
            ck_assert_msg(full && full->st.code == 0, "%s", full ? full->st.msg : "out of memory");
            for (int r = 0; r < w; r++) {
                cg_bench_truth t;
                ck_assert_msg(cg_bench_truth_make(&o, w, r, n_in, &t, &st) == 0, "%s", st.msg);
                ck_assert_int_lt(t.nx, n_in); /* it is a reduction */
                expect_full(full, "y", r, false, t.y, t.ny, t.scale);
                expect_full(full, "x", r, true, t.gx, t.nx, t.scale);
                cg_bench_truth_free(&t);
            }
            cg_oracle_free(full);
            cg_case_free(cs);
        }
    }
}
END_TEST

START_TEST(one_element_off_fails_and_is_named)
{
    cg_bench_truth t = truth_of(CG_C_ALL_GATHER, CG_RED_SUM, 2); /* y = [1 x8, 2 x8, 3 x8, 4 x8] */
    cg_graph *g = cg_graph_new();
    int64_t n = 8, ny = 32;
    cg_tensor *x = cg_full(g, CG_F32, 1, &n, 3.0), *y = cg_tensor_new(g, CG_F32, 1, &ny);
    for (int64_t e = 0; e < ny; e++)
        cg_set(y, e, (double)(e / 8 + 1));
    x->grad = cg_full(g, CG_F32, 1, &n, 4.0);
    cg_status st = CG_STATUS_OK;
    ck_assert_msg(cg_bench_truth_check(&t, x, y, &st) == 0, "%s", st.msg);

    cg_set(y, 15, 3.0); /* the last element of block 1 (of 2s) takes block 2's value */
    ck_assert_int_eq(cg_bench_truth_check(&t, x, y, &st), -1);
    ck_assert_str_eq(st.msg, "y[15] = 3, the oracle says 2");

    cg_set(y, 15, 2.0);
    st = CG_STATUS_OK;
    cg_set(x->grad, 7, 4.5);
    ck_assert_int_eq(cg_bench_truth_check(&t, x, y, &st), -1);
    ck_assert_str_eq(st.msg, "x.grad[7] = 4.5, the oracle says 4");

    st = CG_STATUS_OK;
    x->grad = NULL; /* no gradient reached x: zeros */
    ck_assert_int_eq(cg_bench_truth_check(&t, x, y, &st), -1);
    ck_assert_str_eq(st.msg, "x.grad[0] = 0, the oracle says 4");
    cg_graph_free(g);
    cg_bench_truth_free(&t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bench_check");
    TCase *tc = tcase_create("truth");
    tcase_add_test(tc, the_numbers_by_hand);
    tcase_add_test(tc, the_reduced_program_has_the_full_ones_blocks);
    tcase_add_test(tc, one_element_off_fails_and_is_named);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
