/* test_oracle_share.c — replicated values in the oracle (interp.h cg_share):
 * a value every rank computes alike is one tensor, held once in the result,
 * and every rank's gradient of it is still that rank's own, by hand:
 *
 *   x_r = rank + 1 (3 elements), y = all_gather(x) or all_reduce(x):
 *   backward(y) on every rank:  dy_r = 1, dx_r = W (all_gather: x_r sits in
 *                               every rank's y; all_reduce: dy sums to W)
 *   z = y * y, backward(sum(z)), y = all_reduce(x) = S = W(W+1)/2:
 *                               dz_r = 1, dy_r = 2S, dx_r = W * 2S
 *   z = y * rank (asymmetric):  dy_r = r, dx_r = sum_k k = W(W-1)/2, and
 *                               the oracle says why it did not share.
 * The case files and the distributed runs check the rest (every built-in
 * case, shared or not, against every rank's own computation). */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "ir.h"
#include "oracle.h"

static cg_case *program(const char *body)
{
    char text[1024];
    snprintf(text, sizeof text, "case t\nworlds 1..8\n\nx = param(ones(3) * (rank + 1))\n%s", body);
    cg_status st = CG_STATUS_OK;
    cg_case *cs = cg_parse_case("t.case", text, strlen(text), &st);
    ck_assert_msg(cs != NULL, "%s", st.msg);
    /* no element limits: the 1024-rank runs below are sized on purpose */
    cs->limits.value_elements = cs->limits.case_elements = 0;
    return cs;
}

static void check_all(const double *g, double want, int64_t n)
{
    ck_assert_ptr_nonnull(g);
    for (int64_t e = 0; e < n; e++)
        ck_assert_double_eq_tol(g[e], want, 1e-9 * (1.0 + want));
}

START_TEST(all_gather_output_is_held_once)
{
    cg_case *cs = program("y = all_gather(x)\nbackward(y)\n");
    for (int w = 2; w <= 8; w *= 2) {
        cg_oracle *o = cg_oracle_run(cs, w, false);
        ck_assert_int_eq(o->st.code, 0);
        ck_assert_msg(o->shared, "W=%d: %s", w, o->unshared_reason);
        const cg_otensor *y0 = cg_oracle_find(o, "y", 0);
        ck_assert_int_eq(y0->replicas, w);
        ck_assert_ptr_null(y0->holder);
        for (int r = 0; r < w; r++) {
            const cg_otensor *y = cg_oracle_find(o, "y", r), *x = cg_oracle_find(o, "x", r);
            ck_assert_ptr_eq(y->value, y0->value); /* one copy of the W x 3 values */
            ck_assert(r == 0 || y->holder == y0);
            for (int k = 0; k < w; k++)
                check_all(y->value + 3 * k, k + 1.0, 3);
            check_all(y->per_rank, 1.0, 3 * w);
            check_all(x->per_rank, (double)w, 3);
            check_all(x->replicated, 1.0, 3);
            ck_assert_int_eq(x->replicas, 1); /* a param is each rank's own */
        }
        ck_assert(o->replicated_defined);
        cg_oracle_free(o);
    }
    cg_case_free(cs);
}
END_TEST

START_TEST(a_chain_of_shared_ops_keeps_rank_gradients)
{
    cg_case *cs = program("y = all_reduce(x)\nz = y * y\nbackward(sum(z))\n");
    for (int w = 1; w <= 4; w++) {
        cg_oracle *o = cg_oracle_run(cs, w, false);
        ck_assert_int_eq(o->st.code, 0);
        ck_assert_msg(o->shared, "W=%d: %s", w, o->unshared_reason);
        double S = w * (w + 1) / 2.0;
        for (int r = 0; r < w; r++) {
            check_all(cg_oracle_find(o, "y", r)->value, S, 3);
            check_all(cg_oracle_find(o, "z", r)->per_rank, 1.0, 3);
            check_all(cg_oracle_find(o, "y", r)->per_rank, 2.0 * S, 3);
            check_all(cg_oracle_find(o, "x", r)->per_rank, w * 2.0 * S, 3);
        }
        ck_assert_int_eq(cg_oracle_find(o, "z", 0)->replicas, w > 1 ? w : 1);
        cg_oracle_free(o);
    }
    cg_case_free(cs);
}
END_TEST

START_TEST(an_asymmetric_use_runs_unshared)
{
    const char *bodies[] = {
        "y = all_reduce(x)\nz = y * rank\nbackward(sum(z))\n",             /* a per-rank operand */
        "y = all_reduce(x)\nz = all_gather(y)\nbackward(sum(z) * rank)\n", /* a gather of it */
    };
    const char *why[] = {"used by some of its ranks only", "tells its ranks apart"};
    for (int b = 0; b < 2; b++) {
        cg_case *cs = program(bodies[b]);
        int w = 4;
        cg_oracle *o = cg_oracle_run(cs, w, false);
        ck_assert_int_eq(o->st.code, 0);
        ck_assert(!o->shared);
        ck_assert_msg(strstr(o->unshared_reason, why[b]), "%s", o->unshared_reason);
        for (int r = 0; r < w; r++) {
            const cg_otensor *y = cg_oracle_find(o, "y", r);
            ck_assert_int_eq(y->replicas, 1);
            /* 0: dy_r = r; 1: dz_k = k, so dy_r = sum_k k (y_r is block r of every z_k) */
            check_all(y->per_rank, b == 0 ? r : w * (w - 1) / 2.0, 3);
            check_all(cg_oracle_find(o, "x", r)->per_rank,
                      b == 0 ? w * (w - 1) / 2.0 : w * w * (w - 1) / 2.0, 3);
        }
        cg_oracle_free(o);
        cg_case_free(cs);
    }
}
END_TEST

/* A constant every rank makes alike is one tensor too, and a rank may use it
 * alone: no gradient reaches a constant, so the sharing holds. With
 * d_r = c * r, y = all_reduce(x * d) = sum_r r x_r and every rank's loss
 * sum(y): dx_r = W r, dc = 0. */
START_TEST(a_shared_constant_used_alone_keeps_sharing)
{
    cg_case *cs = program("c = ones(3)\nd = c * rank\ny = all_reduce(x * d)\nbackward(sum(y))\n");
    int w = 3;
    cg_oracle *o = cg_oracle_run(cs, w, false);
    ck_assert_int_eq(o->st.code, 0);
    ck_assert_msg(o->shared, "%s", o->unshared_reason);
    const cg_otensor *c0 = cg_oracle_find(o, "c", 0);
    ck_assert_int_eq(c0->replicas, w);
    for (int r = 0; r < w; r++) {
        ck_assert_ptr_eq(cg_oracle_find(o, "c", r)->value, c0->value);
        check_all(cg_oracle_find(o, "c", r)->per_rank, 0.0, 3);
        check_all(cg_oracle_find(o, "d", r)->value, (double)r, 3);
        check_all(cg_oracle_find(o, "x", r)->per_rank, (double)(w * r), 3);
    }
    cg_oracle_free(o);
    cg_case_free(cs);
}
END_TEST

/* The oracle's own world limit (ir.h): 1024 simulated ranks, the plan not
 * kept (no distributed run reads it). */
START_TEST(a_thousand_ranks)
{
    cg_case *cs = program("y = all_gather(x)\nbackward(y)\n");
    int w = CG_MAX_SIM_WORLD;
    cg_oracle *o = cg_oracle_run(cs, w, false);
    ck_assert_int_eq(o->st.code, 0);
    ck_assert(o->shared);
    ck_assert_int_eq(o->nevents, 0);
    for (int r = 0; r < w; r += 341)
        check_all(cg_oracle_find(o, "x", r)->per_rank, (double)w, 3);
    const cg_otensor *y = cg_oracle_find(o, "y", w - 1);
    ck_assert_int_eq(y->numel, 3 * w);
    ck_assert_double_eq(y->value[3 * (w - 1)], (double)w);
    cg_oracle_free(o);
    cg_case_free(cs);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("oracle_share");
    TCase *tc = tcase_create("oracle_share");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, all_gather_output_is_held_once);
    tcase_add_test(tc, a_chain_of_shared_ops_keeps_rank_gradients);
    tcase_add_test(tc, an_asymmetric_use_runs_unshared);
    tcase_add_test(tc, a_shared_constant_used_alone_keeps_sharing);
    tcase_add_test(tc, a_thousand_ranks);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
