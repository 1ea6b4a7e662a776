/* test_plan.c — the collectives layer: the table its kinds' files make
 * (every row its own kind, named by its words, its transpose's transpose
 * itself, as a linear map's is), and explicit row splits: the shapes and
 * counts a rank's transport call takes (plan.c) and the oracle's forward
 * (simulate.c), against numbers worked out by hand below.
 *
 * The all_to_all at W=3: rank 0 has 3 rows and splits them [0, 2, 1],
 * rank 1 has 1 row split [1, 0, 0], rank 2 has 2 rows split [1, 1, 0].
 *   rank 0 receives rank 1's row 0 and rank 2's row 0     -> 2 rows
 *   rank 1 receives rank 0's rows 0-1 and rank 2's row 1  -> 3 rows
 *   rank 2 receives rank 0's row 2                        -> 1 row
 * With x_0 = [10, 11, 12], x_1 = [20], x_2 = [30, 31]:
 *   y_0 = [20, 30], y_1 = [10, 11, 31], y_2 = [12]. */
#include <check.h>
#include <string.h>

#include "autograd.h"
#include "collectives.h"
#include "plan.h"

static const int64_t a2a_splits[9] = {0, 2, 1, /**/ 1, 0, 0, /**/ 1, 1, 0};
static const int64_t a2a_rows[3] = {3, 1, 2};

/* The event of that all_to_all, each row `cols` elements wide (0: 1-d). */
static cg_plan_event a2a_event(int64_t cols, int64_t *splits)
{
    cg_plan_event ev;
    memset(&ev, 0, sizeof ev);
    ev.coll.kind = CG_C_ALL_TO_ALL;
    ev.rank = ev.tag = -1;
    for (int r = 0; r < 3; r++) {
        ev.ndim[r] = cols ? 2 : 1;
        ev.shape[r][0] = a2a_rows[r];
        ev.shape[r][1] = cols;
    }
    memcpy(splits, a2a_splits, sizeof a2a_splits);
    ev.splits = splits;
    return ev;
}

START_TEST(every_row_is_its_own_kind)
{
    ck_assert_int_ge(CG_C_COUNT, 10);
    for (int k = 0; k < CG_C_COUNT; k++) {
        const cg_collective *d = cg_collective_of((cg_coll_kind)k);
        ck_assert_msg(d && (int)d->kind == k, "kind %d: row of kind %d", k, d ? (int)d->kind : -1);
        ck_assert_ptr_eq(cg_collective_named(cg_coll_name((cg_coll_kind)k)), d);
        const cg_collective *t = cg_collective_of(d->transpose);
        ck_assert_msg(t && t->transpose == d->kind, "%s: the transpose of its transpose %s is %s",
                      cg_coll_name(d->kind), t ? cg_coll_name(t->kind) : "?",
                      t ? cg_coll_name(t->transpose) : "?");
        ck_assert_msg(d->p2p == (d->simulate == NULL), "%s: the oracle simulates every collective, pairs p2p",
                      cg_coll_name(d->kind));
        ck_assert_msg(!(d->p2p && d->run), "%s: a p2p half has no run", cg_coll_name(d->kind));
        ck_assert_msg(d->busbw_factor && d->busbw_factor(4) > 0, "%s: busbw", cg_coll_name(d->kind));
    }
    ck_assert_ptr_null(cg_collective_of(CG_C_COUNT));
    ck_assert_ptr_null(cg_collective_named("no_such_kind"));
}
END_TEST

START_TEST(all_to_all_shapes_follow_the_splits)
{
    int64_t splits[9];
    cg_plan_event ev = a2a_event(2, splits);
    const int64_t want_rows[3] = {2, 3, 1};
    for (int me = 0; me < 3; me++) {
        int ndim;
        int64_t shape[CG_MAX_DIMS];
        cg_plan_out_shape(&ev, 3, me, &ndim, shape);
        ck_assert_int_eq(ndim, 2);
        ck_assert_int_eq(shape[0], want_rows[me]);
        ck_assert_int_eq(shape[1], 2);
    }
}
END_TEST

START_TEST(all_to_all_counts_follow_the_splits)
{
    int64_t splits[9];
    cg_plan_event ev = a2a_event(2, splits);
    /* elements = rows * 2; blocks: my own split; recv: what each rank sends me */
    const size_t want_blocks[3][3] = {{0, 4, 2}, {2, 0, 0}, {2, 2, 0}};
    const size_t want_recv[3][3] = {{0, 2, 2}, {4, 0, 2}, {2, 0, 0}};
    for (int me = 0; me < 3; me++) {
        cg_coll_counts c;
        cg_plan_counts(&ev, 3, me, &c);
        for (int r = 0; r < 3; r++) {
            ck_assert_uint_eq(c.inputs[r], (size_t)(a2a_rows[r] * 2));
            ck_assert_uint_eq(c.blocks[r], want_blocks[me][r]);
            ck_assert_uint_eq(c.recv[r], want_recv[me][r]);
        }
    }
}
END_TEST

START_TEST(without_splits_the_split_is_balanced)
{
    cg_plan_event ev;
    memset(&ev, 0, sizeof ev);
    ev.coll.kind = CG_C_ALL_TO_ALL;
    for (int r = 0; r < 3; r++) {
        ev.ndim[r] = 1;
        ev.shape[r][0] = a2a_rows[r];
    }
    /* 3 rows over 3 ranks: 1 each; 1 row: [0, 0, 1]; 2 rows: [0, 1, 1] */
    const size_t want_recv[3][3] = {{1, 0, 0}, {1, 0, 1}, {1, 1, 1}};
    for (int me = 0; me < 3; me++) {
        cg_coll_counts c;
        cg_plan_counts(&ev, 3, me, &c);
        for (int r = 0; r < 3; r++)
            ck_assert_uint_eq(c.recv[r], want_recv[me][r]);
    }
}
END_TEST

static cg_tensor *vector(cg_graph *g, const double *v, int64_t n)
{
    cg_tensor *t = cg_tensor_new(g, CG_F64, 1, &n);
    ck_assert_ptr_nonnull(t);
    for (int64_t i = 0; i < n; i++)
        cg_set(t, i, v[i]);
    return t;
}

static void expect_values(const cg_tensor *t, const double *want, int64_t n)
{
    ck_assert_int_eq(t->numel, n);
    for (int64_t i = 0; i < n; i++)
        ck_assert_double_eq(cg_get(t, i), want[i]);
}

START_TEST(oracle_all_to_all_moves_the_split_rows)
{
    cg_graph *g = cg_graph_new();
    const double x0[] = {10, 11, 12}, x1[] = {20}, x2[] = {30, 31};
    cg_tensor *in[3] = {vector(g, x0, 3), vector(g, x1, 1), vector(g, x2, 2)}, *out[3];
    cg_coll c = {.kind = CG_C_ALL_TO_ALL, .splits = a2a_splits};
    ck_assert_int_eq(cg_collective_of(CG_C_ALL_TO_ALL)->simulate(g, &c, 3, in, out, false), 0);
    const double y0[] = {20, 30}, y1[] = {10, 11, 31}, y2[] = {12};
    expect_values(out[0], y0, 2);
    expect_values(out[1], y1, 3);
    expect_values(out[2], y2, 1);
    cg_graph_free(g);
}
END_TEST

/* reduce_scatter with blocks [1, 2, 0] of 3 rows: y = x_0 + x_1 + x_2 =
 * [6, 60, 600] with x_r = (r + 1) [1, 10, 100]; rank 0 gets [6], rank 1
 * [60, 600], rank 2 nothing. */
START_TEST(oracle_reduce_scatter_blocks_follow_the_splits)
{
    cg_graph *g = cg_graph_new();
    const double x[3][3] = {{1, 10, 100}, {2, 20, 200}, {3, 30, 300}};
    const int64_t splits[9] = {1, 2, 0, 1, 2, 0, 1, 2, 0};
    cg_tensor *in[3] = {vector(g, x[0], 3), vector(g, x[1], 3), vector(g, x[2], 3)}, *out[3];
    cg_coll c = {.kind = CG_C_REDUCE_SCATTER, .op = CG_RED_SUM, .splits = splits};
    ck_assert_int_eq(cg_collective_of(CG_C_REDUCE_SCATTER)->simulate(g, &c, 3, in, out, false), 0);
    const double y0[] = {6}, y1[] = {60, 600};
    expect_values(out[0], y0, 1);
    expect_values(out[1], y1, 2);
    expect_values(out[2], NULL, 0);
    cg_graph_free(g);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("plan");
    TCase *tc = tcase_create("splits");
    tcase_add_test(tc, every_row_is_its_own_kind);
    tcase_add_test(tc, all_to_all_shapes_follow_the_splits);
    tcase_add_test(tc, all_to_all_counts_follow_the_splits);
    tcase_add_test(tc, without_splits_the_split_is_balanced);
    tcase_add_test(tc, oracle_all_to_all_moves_the_split_rows);
    tcase_add_test(tc, oracle_reduce_scatter_blocks_follow_the_splits);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
