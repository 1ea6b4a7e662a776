/* test_big_blocks.c — the arena's large blocks (big_blocks.h): a block given
 * back is reused, zeroed, by the next step that asks for its size; one that
 * a whole step left untaken is unmapped; a scratch graph inside a step does
 * not end it; and through the arena, a same-sized tensor of the next graph
 * lands in the previous graph's memory. A block taken back unset is not
 * cleared but poisoned (0xff, NaN in every float type) at each page's start
 * and at its end, with the caller's header zeroed. */
#include <check.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "big_blocks.h"
#include "tensor.h"

static size_t cached(void)
{
    size_t bytes;
    return cg_big_cached(&bytes);
}

START_TEST(reused_zeroed_then_unmapped)
{
    size_t cap, cap2, n = 3 * CG_BIG_BLOCK + 5;
    ck_assert_uint_eq(cached(), 0);
    cg_big_enter(); /* step 1 */
    unsigned char *a = cg_big_alloc(n, &cap);
    ck_assert_ptr_nonnull(a);
    ck_assert_uint_ge(cap, n);
    memset(a, 0xab, n);
    cg_big_free(a, cap);
    cg_big_leave();
    ck_assert_uint_eq(cached(), 1);

    cg_big_enter(); /* step 2 takes it back, zeroed */
    unsigned char *b = cg_big_alloc(n, &cap2);
    ck_assert_ptr_eq(b, a);
    ck_assert_uint_eq(cap2, cap);
    for (size_t i = 0; i < n; i += 4099)
        ck_assert_uint_eq(b[i], 0);
    ck_assert_uint_eq(b[n - 1], 0);
    ck_assert_uint_eq(cached(), 0);
    cg_big_free(b, cap2);
    cg_big_leave();

    cg_big_enter(); /* step 3 asks for another size: the block waits out this step */
    unsigned char *c = cg_big_alloc(2 * n, &cap2);
    ck_assert_ptr_nonnull(c);
    ck_assert_uint_eq(cached(), 1);
    cg_big_free(c, cap2);
    cg_big_leave(); /* a's block sat through step 3 untaken: unmapped; c's waits */
    ck_assert_uint_eq(cached(), 1);
    size_t bytes;
    cg_big_cached(&bytes);
    ck_assert_uint_eq(bytes, cap2);
    cg_big_enter();
    cg_big_leave();
    ck_assert_uint_eq(cached(), 0);
}
END_TEST

START_TEST(trim_unmaps_the_cache_now)
{
    size_t cap, n = 2 * CG_BIG_BLOCK;
    cg_big_enter();
    void *a = cg_big_alloc(n, &cap), *b = cg_big_alloc(n, &cap);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    cg_big_free(a, cap);
    cg_big_free(b, cap);
    cg_big_leave();
    ck_assert_uint_eq(cached(), 2); /* would wait out the next step */
    cg_big_trim();
    size_t bytes;
    ck_assert_uint_eq(cg_big_cached(&bytes), 0);
    ck_assert_uint_eq(bytes, 0);
    cg_big_enter(); /* the next step maps fresh, zeroed memory */
    unsigned char *c = cg_big_alloc(n, &cap);
    ck_assert_ptr_nonnull(c);
    ck_assert_uint_eq(c[n - 1], 0);
    cg_big_free(c, cap);
    cg_big_leave();
    cg_big_trim();
}
END_TEST

START_TEST(a_nested_graph_does_not_end_the_step)
{
    int64_t n = (int64_t)(CG_BIG_BLOCK / sizeof(double)) * 2;
    cg_graph *g1 = cg_graph_new();
    cg_tensor *t1 = cg_tensor_new(g1, CG_F64, 1, &n);
    ck_assert_ptr_nonnull(t1);
    ((double *)t1->data)[7] = 42.0;
    void *data = t1->data;
    cg_graph_free(g1); /* step ends: the block waits */
    ck_assert_uint_eq(cached(), 1);

    cg_graph *g2 = cg_graph_new();
    cg_graph *scratch = cg_graph_new(); /* a rule set's scratch, inside g2's step */
    cg_graph_free(scratch);
    ck_assert_uint_eq(cached(), 1); /* not a step's end: still there */
    cg_tensor *t2 = cg_tensor_new(g2, CG_F64, 1, &n);
    ck_assert_ptr_eq(t2->data, data);
    ck_assert_double_eq(((double *)t2->data)[7], 0.0);
    cg_graph_free(g2);
    cg_graph *g3 = cg_graph_new();
    cg_graph_free(g3); /* g2's block waited a whole step untaken */
    ck_assert_uint_eq(cached(), 0);
}
END_TEST

START_TEST(unset_reuse_is_poisoned_not_cleared)
{
    size_t cap, cap2, n = 2 * CG_BIG_BLOCK + 100, head = 32, page = (size_t)sysconf(_SC_PAGESIZE);
    cg_big_enter();
    unsigned char *a = cg_big_alloc_unset(n, head, &cap); /* fresh: the kernel's zeros */
    ck_assert_ptr_nonnull(a);
    for (size_t i = 0; i < n; i += 4099)
        ck_assert_uint_eq(a[i], 0);
    memset(a, 0x11, n); /* an earlier step's values */
    cg_big_free(a, cap);
    cg_big_leave();

    cg_big_enter();
    unsigned char *b = cg_big_alloc_unset(n, head, &cap2);
    ck_assert_ptr_eq(b, a);
    for (size_t i = 0; i < head; i++)
        ck_assert_uint_eq(b[i], 0);
    for (size_t at = page; at < n; at += page) /* every page's first 64 bytes */
        for (size_t i = at; i < at + 64 && i < n; i++)
            ck_assert_uint_eq(b[i], 0xff);
    for (size_t i = n - 64; i < n; i++)
        ck_assert_uint_eq(b[i], 0xff);
    ck_assert_uint_eq(b[page + 64], 0x11); /* the rest is not cleared: that is the saving */
    cg_big_free(b, cap2);
    cg_big_leave();
    cg_big_enter();
    cg_big_leave();
    ck_assert_uint_eq(cached(), 0);
}
END_TEST

/* Through the arena: a reused block's receive buffer reads as NaN where a
 * callee wrote nothing, in f64 and f32 alike; cg_tensor_new's stay zeros. */
START_TEST(unset_tensor_reads_nan_where_unwritten)
{
    const cg_dtype types[] = {CG_F64, CG_F32, CG_F16, CG_BF16};
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        int64_t n = (int64_t)(CG_BIG_BLOCK / cg_dtype_size(types[k])) * 2;
        cg_graph *g1 = cg_graph_new();
        cg_tensor *t1 = cg_tensor_new(g1, types[k], 1, &n);
        ck_assert_ptr_nonnull(t1);
        cg_tensor_fill(g1, t1, 3.0); /* the last step's right answer */
        cg_graph_free(g1);
        cg_graph *g2 = cg_graph_new();
        cg_tensor *t2 = cg_tensor_new_unset(g2, types[k], 1, &n);
        ck_assert_ptr_nonnull(t2);
        ck_assert_msg(isnan(cg_get(t2, 0)) && isnan(cg_get(t2, n - 1)), "dtype %zu", k);
        cg_graph_free(g2);
        cg_graph *g3 = cg_graph_new();
        cg_tensor *t3 = cg_tensor_new(g3, types[k], 1, &n); /* fresh or reused: zeros */
        ck_assert_double_eq(cg_get(t3, 0), 0.0);
        ck_assert_double_eq(cg_get(t3, n - 1), 0.0);
        cg_graph_free(g3);
        cg_graph_free(cg_graph_new()); /* nothing waits into the next dtype */
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("big_blocks");
    TCase *tc = tcase_create("big_blocks");
    tcase_add_test(tc, reused_zeroed_then_unmapped);
    tcase_add_test(tc, a_nested_graph_does_not_end_the_step);
    tcase_add_test(tc, trim_unmaps_the_cache_now);
    tcase_add_test(tc, unset_reuse_is_poisoned_not_cleared);
    tcase_add_test(tc, unset_tensor_reads_nan_where_unwritten);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* one thread, one cache, in order */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
