/* test_bundle.c — the job bundle (bundle.h): what a launcher hands its ranks.
 *
 *  1. A bundle written by hand, byte for byte from the format in bundle.h,
 *     parses into the cases and jobs it spells (independent of the writer).
 *  2. Written by cg_bundle_write from loaded files and parsed back, every
 *     case and job comes back, the text byte for byte; a case text may
 *     hold anything, "jobs 9" lines included: only the lengths delimit it.
 *  3. Untrusted bytes: every proper prefix of a valid bundle, and each of a
 *     set of corruptions, is refused with "bundle: expected ..." (or the
 *     case's own parse error), never a crash or an out-of-range job. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bundle.h"

static const char case_a[] = "case a\nworld 2\nx = param(full(rank, 2))\nbackward(sum(x))\n"
                             "expect grad(x) per_rank = 1\n";
/* a comment that looks like the bundle's own lines: only the length says where it ends */
static const char case_b[] = "# jobs 9\n# job 0 0 reference\ncase b\nworlds 2..4\n"
                             "x = param(ones(3))\nbackward(sum(all_reduce(x, sum)))\n";

static char *hand_bundle(size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    fprintf(f, "collgrad-bundle 1\ncases 2\n");
    fprintf(f, "case 7 %zu\n/a.case%s\n", strlen(case_a), case_a);
    fprintf(f, "case 10 %zu\ndir/b.case%s\n", strlen(case_b), case_b);
    fprintf(f, "jobs 3\njob 1 0 reference\njob 0 1 torch-nn\njob 1 0 /plugins/my rules.so\n");
    fclose(f);
    return buf;
}

START_TEST(a_hand_written_bundle_parses)
{
    size_t len;
    char *buf = hand_bundle(&len);
    cg_case_set set;
    cg_job *jobs;
    int n;
    cg_status st = CG_STATUS_OK;
    ck_assert_int_eq(cg_bundle_parse(buf, len, NULL, &set, &jobs, &n, &st), 0);
    ck_assert_int_eq(set.n, 2);
    ck_assert_str_eq(set.cases[0]->name, "a");
    ck_assert_str_eq(set.cases[0]->file, "/a.case");
    ck_assert_int_eq(set.cases[0]->nworlds, 1);
    ck_assert_str_eq(set.cases[1]->name, "b");
    ck_assert_str_eq(set.cases[1]->file, "dir/b.case");
    ck_assert_int_eq(set.cases[1]->nworlds, 3);
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(jobs[0].case_index, 1);
    ck_assert(!jobs[0].expect_only);
    ck_assert_str_eq(jobs[0].rules, "reference");
    ck_assert_int_eq(jobs[1].case_index, 0);
    ck_assert(jobs[1].expect_only);
    ck_assert_str_eq(jobs[1].rules, "torch-nn");
    ck_assert_str_eq(jobs[2].rules, "/plugins/my rules.so"); /* rules run to the end of the line */
    ck_assert_int_eq(set.cases[0]->limits.case_bytes, CG_DEFAULT_MAX_CASE_BYTES);
    cg_case_set_free(&set);
    free(jobs);
    free(buf);
}
END_TEST

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fputs(text, f) != EOF, 1);
    ck_assert_int_eq(fclose(f), 0);
}

START_TEST(written_then_parsed_comes_back)
{
    char dir[] = "/tmp/cg-bundle-XXXXXX", pa[64], pb[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(pa, sizeof pa, "%s/a.case", dir);
    snprintf(pb, sizeof pb, "%s/b.case", dir);
    write_file(pa, case_a);
    write_file(pb, case_b);
    cg_status st = CG_STATUS_OK;
    cg_limits lim = {.case_bytes = 4096};
    cg_case *cases[2] = {cg_load_case(pa, &lim, &st), cg_load_case(pb, &lim, &st)};
    ck_assert_msg(cases[0] && cases[1], "%s", st.msg);
    ck_assert_uint_eq(cases[1]->text_len, strlen(case_b)); /* loading keeps the bytes */
    cg_case_set set = {.n = 2, .cases = cases};
    cg_job jobs[2] = {{.case_index = 1, .rules = "megatron", .expect_only = true},
                      {.case_index = 0, .rules = "reference"}};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(cg_bundle_write(f, &set, jobs, 2, &st), 0);
    fclose(f);

    cg_case_set back;
    cg_job *bj;
    int n;
    ck_assert_int_eq(cg_bundle_parse(buf, len, &lim, &back, &bj, &n, &st), 0);
    ck_assert_int_eq(back.n, 2);
    for (int i = 0; i < 2; i++) {
        ck_assert_str_eq(back.cases[i]->file, cases[i]->file);
        ck_assert_str_eq(back.cases[i]->name, cases[i]->name);
        ck_assert_int_eq(back.cases[i]->nstmts, cases[i]->nstmts);
        ck_assert_int_eq(back.cases[i]->nexpects, cases[i]->nexpects);
        ck_assert_uint_eq(back.cases[i]->limits.case_bytes, 4096);
    }
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(bj[0].case_index, 1);
    ck_assert(bj[0].expect_only);
    ck_assert_str_eq(bj[0].rules, "megatron");
    ck_assert_str_eq(bj[1].rules, "reference");
    /* a case parsed without its text cannot be handed on */
    free(cases[0]->text);
    cases[0]->text = NULL;
    free(buf);
    f = open_memstream(&buf, &len);
    ck_assert_int_eq(cg_bundle_write(f, &set, jobs, 2, &st), -1);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(st.msg, "a.case: the case's text was not kept"));
    free(buf);
    free(bj);
    cg_case_set_free(&back);
    cg_case_free(cases[0]);
    cg_case_free(cases[1]);
    unlink(pa);
    unlink(pb);
    rmdir(dir);
}
END_TEST

/* A parse of bytes that must fail: no crash, nothing returned, a message. */
static void refused(const char *buf, size_t len, const char *want)
{
    cg_case_set set;
    cg_job *jobs = (cg_job *)1;
    int n = -1;
    cg_status st = CG_STATUS_OK;
    ck_assert_int_eq(cg_bundle_parse(buf, len, NULL, &set, &jobs, &n, &st), -1);
    ck_assert_ptr_null(jobs);
    ck_assert_int_eq(n, 0);
    ck_assert_int_eq(set.n, 0);
    ck_assert_msg(strstr(st.msg, want), "'%s' lacks '%s'", st.msg, want);
}

START_TEST(every_prefix_and_corruption_is_refused)
{
    size_t len;
    char *buf = hand_bundle(&len);
    for (size_t k = 0; k < len; k++) {
        char *copy = malloc(k + 1); /* exactly k bytes: ASan sees any read past them */
        memcpy(copy, buf, k);
        cg_case_set set;
        cg_job *jobs;
        int n;
        cg_status st = CG_STATUS_OK;
        ck_assert_msg(cg_bundle_parse(copy, k, NULL, &set, &jobs, &n, &st) == -1,
                      "prefix %zu accepted", k);
        ck_assert_msg(st.msg[0], "prefix %zu refused without a message", k);
        free(copy);
    }
    free(buf);

    static const char head[] = "collgrad-bundle 1\ncases 1\ncase 7 15\n/a.case";
    char b[512];
    refused("collgrad-bundle 2\n", 18, "bundle: expected 'collgrad-bundle 1' at byte 0");
    snprintf(b, sizeof b, "collgrad-bundle 1\ncases -1\n");
    refused(b, strlen(b), "expected 'cases N' at byte 18");
    snprintf(b, sizeof b, "collgrad-bundle 1\ncases 99999\n");
    refused(b, strlen(b), "expected as many cases as the bundle holds");
    snprintf(b, sizeof b, "collgrad-bundle 1\ncases 1\ncase 7 999\n/a.casecase a\n");
    refused(b, strlen(b), "whose path and text are there");
    /* the control: the head below is sound, each corruption is what fails */
    snprintf(b, sizeof b, "%scase a\nworld 2\n\njobs 1\njob 0 0 reference\n", head);
    cg_case_set ok_set;
    cg_job *ok_jobs;
    int ok_n;
    cg_status ok_st = CG_STATUS_OK;
    ck_assert_int_eq(cg_bundle_parse(b, strlen(b), NULL, &ok_set, &ok_jobs, &ok_n, &ok_st), 0);
    cg_case_set_free(&ok_set);
    free(ok_jobs);
    snprintf(b, sizeof b, "%scase a\nworld 2\n\njobs 1\njob 1 0 reference\n",
             head); /* case 1 of 1 */
    refused(b, strlen(b), "naming a case of the bundle");
    snprintf(b, sizeof b, "%scase a\nworld 2\n\njobs 1\njob 0 2 reference\n",
             head); /* expect_only 2 */
    refused(b, strlen(b), "naming a case of the bundle");
    snprintf(b, sizeof b, "%scase a\nworld 2\n\njobs 1\njob 0 0 \n", head); /* no rules */
    refused(b, strlen(b), "naming a case of the bundle");
    snprintf(b, sizeof b, "%scase a\nworld 2\n\njobs 0\ntrailing", head);
    refused(b, strlen(b), "expected the end after the last job");
    snprintf(b, sizeof b, "%scase a\nworld 2\nXjobs 0\n",
             head); /* the text's length overruns its end */
    refused(b, strlen(b), "whose path and text are there");
    snprintf(b, sizeof b, "collgrad-bundle 1\ncases 1\ncase 7 8\n/a.casecase !!\n\njobs 0\n");
    refused(b, strlen(b), "/a.case:1:6: expected"); /* the parser's own message */
    char nul[] = "collgrad-bundle 1\ncases 1\ncase 7 7\n/a\0casecase a\n\njobs 0\n";
    refused(nul, sizeof nul - 1, "expected a path without NUL bytes");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bundle");
    TCase *tc = tcase_create("bundle");
    tcase_add_test(tc, a_hand_written_bundle_parses);
    tcase_add_test(tc, written_then_parsed_comes_back);
    tcase_add_test(tc, every_prefix_and_corruption_is_refused);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
