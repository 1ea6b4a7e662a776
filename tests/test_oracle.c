/* test_oracle.c — the oracle's three semantics against hand-derived numbers.
 *
 * Every case below is y = all_reduce(x, sum) = sum_r x_r with x_r = param,
 * and rank k's loss L_k = sum(c_k * y) for a per-rank constant c_k, so
 *   dL_k/dx_r = c_k                   (every r: y depends on every x_r)
 *   per_rank  = sum_k c_k             (the same on every rank)
 *   own_loss  = c_r
 *   replicated defined iff all c_k are equal, and then equal to c.
 * The weighted second pass of semantics.c must find any difference in the
 * c_k, including ones that sum to zero. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "oracle.h"

/* A case of W ranks whose rank k uses c_k = COEFF (an expression in rank). */
static cg_case *allreduce_case(const char *coeff, const char *extra)
{
    char text[1024];
    snprintf(text, sizeof text,
             "case t\nworlds 1, 2, 3, 4\n\n"
             "x = param(ones(3))\ny = all_reduce(x, sum)\nl = sum(y * (%s))\nbackward(l)\n%s",
             coeff, extra);
    char err[256];
    cg_case *cs = cg_parse_case("t.case", text, strlen(text), err, sizeof err);
    ck_assert_msg(cs != NULL, "%s", err);
    return cs;
}

static void check_grad(const double *g, double want, int64_t n)
{
    ck_assert_ptr_nonnull(g);
    for (int64_t e = 0; e < n; e++)
        ck_assert_double_eq_tol(g[e], want, 1e-12);
}

START_TEST(same_loss_everywhere_is_replicated)
{
    cg_case *cs = allreduce_case("2", "");
    for (int w = 1; w <= 4; w++) {
        cg_oracle *o = cg_oracle_run(cs, w, false);
        ck_assert_int_eq(o->status, 0);
        ck_assert(o->replicated_defined);
        for (int r = 0; r < w; r++) {
            const cg_otensor *x = cg_oracle_find(o, "x", r);
            check_grad(x->per_rank, 2.0 * w, 3);
            check_grad(x->replicated, 2.0, 3);
        }
        cg_oracle_free(o);
    }
    cg_case_free(cs);
}
END_TEST

/* c_k = rank + 1: the losses differ, replicated is undefined. */
START_TEST(different_losses_are_not_replicated)
{
    cg_case *cs = allreduce_case("rank + 1", "");
    for (int w = 2; w <= 4; w++) {
        cg_oracle *o = cg_oracle_run(cs, w, false);
        ck_assert_int_eq(o->status, 0);
        ck_assert_msg(!o->replicated_defined, "W=%d: %s", w, o->replicated_reason);
        ck_assert_ptr_nonnull(strstr(o->replicated_reason, "different functions"));
        for (int r = 0; r < w; r++)
            check_grad(cg_oracle_find(o, "x", r)->per_rank, w * (w + 1) / 2.0, 3);
        cg_oracle_free(o);
    }
    cg_case_free(cs);
}
END_TEST

/* c = (1, -2, 1) at W=3: sum_k w_k c_k vanishes for equal weights and for
 * any weights in arithmetic progression (w_k = a + b k); the prime square
 * roots see the difference. */
START_TEST(cancelling_differences_are_seen)
{
    cg_case *cs = allreduce_case("(rank - 1) * (rank - 1) * 3 - 2", "");
    cg_oracle *o = cg_oracle_run(cs, 3, false);
    ck_assert_int_eq(o->status, 0);
    ck_assert_msg(!o->replicated_defined, "%s", o->replicated_reason);
    check_grad(cg_oracle_find(o, "x", 1)->per_rank, 0.0, 3);
    cg_oracle_free(o);
    cg_case_free(cs);
}
END_TEST

/* own_loss and per_root cost W passes: absent until asked for, then right. */
START_TEST(own_loss_on_request)
{
    cg_case *cs = allreduce_case("rank + 1", "");
    cg_oracle *o = cg_oracle_run(cs, 4, false);
    ck_assert_int_eq(o->status, 0);
    ck_assert(!o->per_root_ready);
    ck_assert_ptr_null(cg_oracle_find(o, "x", 0)->own_loss);
    ck_assert_int_eq(cg_oracle_add_per_root(cs, o), 0);
    ck_assert(o->per_root_ready);
    for (int r = 0; r < 4; r++) {
        const cg_otensor *x = cg_oracle_find(o, "x", r);
        check_grad(x->own_loss, r + 1.0, 3);
        for (int k = 0; k < 4; k++)
            check_grad(x->per_root[k], k + 1.0, 3);
    }
    ck_assert_int_eq(cg_oracle_add_per_root(cs, o), 0); /* idempotent */
    cg_oracle_free(o);
    cg_case_free(cs);
}
END_TEST

/* A case that expects own_loss gets it from the first run. */
START_TEST(own_loss_expectation_fills_it)
{
    cg_case *cs = allreduce_case("rank + 1", "expect grad(x) own_loss = rank + 1\n");
    cg_oracle *o = cg_oracle_run(cs, 2, false);
    ck_assert_int_eq(o->status, 0);
    ck_assert(o->per_root_ready);
    check_grad(cg_oracle_find(o, "x", 1)->own_loss, 2.0, 3);
    cg_oracle_free(o);
    cg_case_free(cs);
}
END_TEST

/* Only rank 0 has a root: replicated is defined (one loss) and equal to it. */
START_TEST(one_root_rank)
{
    char text[] = "case t\nworlds 3\n\nx = param(ones(2))\ny = all_reduce(x * (rank + 1), sum)\n"
                  "on 0 {\n  backward(sum(y * y))\n}\n";
    char err[256];
    cg_case *cs = cg_parse_case("t.case", text, strlen(text), err, sizeof err);
    ck_assert_msg(cs != NULL, "%s", err);
    cg_oracle *o = cg_oracle_run(cs, 3, false);
    ck_assert_int_eq(o->status, 0);
    ck_assert(o->replicated_defined);
    ck_assert_int_eq(o->nroot_ranks, 1);
    /* y = sum_r (r+1) x_r = 6 at x = 1; L_0 = sum(y^2): dL_0/dx_r = 2 y (r+1) = 12 (r+1) */
    for (int r = 0; r < 3; r++) {
        check_grad(cg_oracle_find(o, "x", r)->per_rank, 12.0 * (r + 1), 2);
        check_grad(cg_oracle_find(o, "x", r)->replicated, 12.0 * (r + 1), 2);
    }
    cg_oracle_free(o);
    cg_case_free(cs);
}
END_TEST

static Suite *oracle_suite(void)
{
    Suite *s = suite_create("oracle");
    TCase *tc = tcase_create("semantics");
    tcase_add_test(tc, same_loss_everywhere_is_replicated);
    tcase_add_test(tc, different_losses_are_not_replicated);
    tcase_add_test(tc, cancelling_differences_are_seen);
    tcase_add_test(tc, own_loss_on_request);
    tcase_add_test(tc, own_loss_expectation_fills_it);
    tcase_add_test(tc, one_root_rank);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(oracle_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
