/* test_explore_shrink.c — explore's shrinker (explore_shrink.h) against
 * judges written here, whose class is a plain text test, so the smallest
 * program each admits is known by hand: which statements a class needs,
 * which world, which group, which shapes. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "explore_shrink.h"

static const char *const program = "case t\n"
                                   "world 4\n"
                                   "dtype f64\n"
                                   "\n"
                                   "g0 = group([0, 2])\n"
                                   "x0 = param(randn(8, 3))\n"
                                   "x1 = param(randn(4))\n"
                                   "v2 = all_reduce(x0, sum, group=g0)\n"
                                   "v3 = exp(x1)\n"
                                   "backward(sum(v2 * v2) * (rank + 1))\n";

/* Does the text name group g0 where it also makes it (else it would not
 * parse: the real judge's class would change)? */
static bool groups_made(const char *text)
{
    return !strstr(text, "group=g0") || strstr(text, "g0 = group(");
}

/* "bad" while the all_reduce of x0 stays and x0 keeps 2, 4 or 8 rows:
 * nothing else matters, so the smallest program is that call, x0's line
 * with 2 rows and 1 column, the group gone, world 1. */
static void needs_rows(const char *text, char cls[CG_CLASS_LEN], void *ctx)
{
    (void)ctx;
    bool rows = strstr(text, "x0 = param(randn(2, ") || strstr(text, "x0 = param(randn(4, ") ||
                strstr(text, "x0 = param(randn(8, ");
    snprintf(cls, CG_CLASS_LEN, "%s",
             groups_made(text) && strstr(text, "all_reduce(x0, sum") && rows ? "bad" : "");
}

/* "bad" only on a group of 3 or more ranks and at W >= 2: the group
 * (made, used) and the world stay. */
static void needs_group(const char *text, char cls[CG_CLASS_LEN], void *ctx)
{
    (void)ctx;
    bool used = strstr(text, "all_reduce(x0, sum, group=g0)") && strstr(text, "g0 = group(");
    snprintf(cls, CG_CLASS_LEN, "%s", used && !strstr(text, "world 1\n") ? "bad" : "");
}

START_TEST(statements_world_group_and_shapes_shrink)
{
    int statements = 0, tries = 0;
    char *out = cg_explore_shrink(program, "bad", needs_rows, NULL, &statements, &tries);
    ck_assert_ptr_nonnull(out);
    ck_assert_str_eq(out, "case t\n"
                          "world 1\n"
                          "dtype f64\n"
                          "\n"
                          "x0 = param(randn(2, 1))\n"
                          "v2 = all_reduce(x0, sum)\n");
    ck_assert_int_eq(statements, 2);
    ck_assert_int_gt(tries, 0);
    free(out);
}
END_TEST

START_TEST(a_group_the_class_needs_stays)
{
    int statements = 0, tries = 0;
    char *out = cg_explore_shrink(program, "bad", needs_group, NULL, &statements, &tries);
    ck_assert_ptr_nonnull(out);
    ck_assert_str_eq(out, "case t\n"
                          "world 2\n"
                          "dtype f64\n"
                          "\n"
                          "g0 = group([0, 2])\n"
                          "v2 = all_reduce(x0, sum, group=g0)\n");
    ck_assert_int_eq(statements, 2);
    free(out);
}
END_TEST

START_TEST(statements_count_no_header_blank_or_comment)
{
    ck_assert_int_eq(cg_explore_statements(program), 6);
    ck_assert_int_eq(cg_explore_statements("case t\n# a comment\ntolerance rtol=1 atol=2\n\nx = 1\n"), 1);
}
END_TEST

static Suite *shrink_suite(void)
{
    Suite *s = suite_create("explore_shrink");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, statements_world_group_and_shapes_shrink);
    tcase_add_test(tc, a_group_the_class_needs_stays);
    tcase_add_test(tc, statements_count_no_header_blank_or_comment);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(shrink_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
