/* test_junit.c — the JUnit writer (reports/junit.h): test ids unique per
 * report and naming transport, rule set and world; a failure message with
 * the first differing element, both values and the diagnosis; <error> and
 * <skipped> with their messages; text that is UTF-8 and XML 1.0 whatever
 * bytes the strings hold; and the file valid against the junit-10 XSD
 * (xmllint, the same check the e2e scripts make). */
#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "junit.h"

#ifndef CG_TEST_DIR
#error "CG_TEST_DIR must name the tests directory"
#endif
#define JUNIT_XSD CG_TEST_DIR "/../reports/schema/junit-10.xsd"

static char dir[512], path[600];

static void make_dir(void)
{
    const char *tmpdir = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/cg_test_junit_XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/r.xml", dir);
}

static void remove_dir(void)
{
    unlink(path);
    rmdir(dir);
}

/* Write r, return the file's text (caller frees), and check it against the XSD. */
static char *write_and_read(const cg_report *r)
{
    cg_status st = CG_STATUS_OK;
    ck_assert_msg(cg_report_write_junit(r, path, &st) == 0, "%s", st.msg);
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    char *text = calloc(1, 1 << 20);
    ck_assert_ptr_nonnull(text);
    size_t n = fread(text, 1, (1 << 20) - 1, f);
    fclose(f);
    text[n] = '\0';
    char cmd[1600];
    snprintf(cmd, sizeof cmd, "out=$(xmllint --noout --schema '%s' '%s' 2>&1) || { echo \"$out\"; exit 1; }",
             JUNIT_XSD, path);
    int rc = system(cmd);
    if (rc != 0)
        printf("%s\n", text);
    ck_assert_msg(rc == 0, "xmllint rejects the JUnit file %s", path);
    return text;
}

/* needle must be in the file's text x (printed whole when it is not). */
static void expect_in(const char *x, const char *needle)
{
    if (!strstr(x, needle))
        printf("%s\n", x);
    ck_assert_msg(strstr(x, needle) != NULL, "not in the JUnit file: %s", needle);
}

static cg_case_result *add_case(cg_report *r, const char *name, int world, const char *rules, cg_outcome st)
{
    cg_case_result *c = cg_report_add_case(r, name, "cases/c.case", "doc", world);
    ck_assert_ptr_nonnull(c);
    cg_case_set_rules(c, rules);
    c->status = st;
    return c;
}

START_TEST(ids_name_transport_rules_world_and_are_unique)
{
    make_dir();
    cg_report *r = cg_report_new("distributed", "mpi", "reference", "cpu");
    add_case(r, "c", 2, "reference", CG_PASS);
    add_case(r, "c", 2, "torch-nn", CG_PASS);
    add_case(r, "c", 4, "reference", CG_PASS);
    add_case(r, "c", 2, "reference", CG_PASS);     /* the same job twice */
    add_case(r, "c", 2, "./lib.rules.so", CG_PASS); /* a plugin path */
    cg_report_count(r);
    char *x = write_and_read(r);
    expect_in(x, "<testcase classname=\"collgrad-check.mpi.reference.W2\" name=\"c\"");
    expect_in(x, "<testcase classname=\"collgrad-check.mpi.torch-nn.W2\" name=\"c\"");
    expect_in(x, "<testcase classname=\"collgrad-check.mpi.reference.W4\" name=\"c\"");
    expect_in(x, "<testcase classname=\"collgrad-check.mpi.reference.W2\" name=\"c #2\"");
    expect_in(x, "<testcase classname=\"collgrad-check.mpi.__lib_rules_so.W2\" name=\"c\"");
    free(x);
    cg_report_free(r);
    r = cg_report_new("oracle-only", NULL, NULL, "cpu");
    add_case(r, "c", 2, NULL, CG_PASS);
    cg_report_count(r);
    x = write_and_read(r);
    expect_in(x, "<testcase classname=\"collgrad-check.oracle.oracle.W2\" name=\"c\"");
    free(x);
    cg_report_free(r);
    remove_dir();
}
END_TEST

START_TEST(failure_error_and_skip_say_why)
{
    make_dir();
    cg_report *r = cg_report_new("distributed", "mpi", "reference", "cpu");
    cg_case_result *c = add_case(r, "prod", 2, "torch-nn", CG_PASS);
    double e[300], o[300];
    for (int i = 0; i < 300; i++) {
        e[i] = 30;
        o[i] = i < 280 ? 30 : 12;
    }
    cg_tol tol = cg_tol_for(CG_F64);
    cg_case_add_check(c, "x", 0, "per_rank", "torch-nn", "oracle", e, e, 300, tol); /* passes */
    cg_case_add_check(c, "x", 1, "per_rank", "torch-nn", "oracle", e, o, 300, tol);
    cg_case_add_note(c, "", -1, "error", "torch-nn", CG_FAIL, "raised where the truth does not");
    const char *m[] = {"torch-nn", "own_loss"};
    cg_case_set_diagnosis(c, m, 2, "matches rule set torch-nn: prod backward all-reduces with PRODUCT", "pytorch#58005");
    cg_case_finish(c);
    cg_case_result *err = add_case(r, "hung", 2, "reference", CG_ERROR);
    err->error_class = 3;
    err->message = strdup("killed after the 3 s deadline: rank 1 was waiting in all_reduce #0");
    cg_case_result *bad = add_case(r, "bad", 0, "reference", CG_ERROR);
    bad->error_class = 2;
    bad->message = strdup("bad.case:3:7: expected a tensor, got '+'");
    cg_case_result *skip = add_case(r, "later", 2, "reference", CG_SKIP);
    skip->message = strdup("not run: interrupted by signal 15");
    cg_report_count(r);
    char *x = write_and_read(r);
    /* the first failing check (rank 1), its first differing element with
     * both values, then the diagnosis; the body lists every failing check */
    expect_in(x, "<failure type=\"gradient mismatch\" message=\"2 failing checks; first: per_rank(x) rank 1 "
                            "rules=torch-nn: element [280] of 300: expected 30, observed 12; diagnosis: matches rule "
                            "set torch-nn: prod backward all-reduces with PRODUCT\">");
    expect_in(x, "fail error rules=torch-nn: raised where the truth does not\n");
    expect_in(x, "  matches: torch-nn, own_loss\n  see: pytorch#58005\n");
    expect_in(x, "<error type=\"infrastructure\" message=\"killed after the 3 s deadline: rank 1 was "
                            "waiting in all_reduce #0\"/>");
    expect_in(x, "<error type=\"bad case\" message=\"bad.case:3:7: expected a tensor, got '+'\"/>");
    expect_in(x, "<skipped message=\"not run: interrupted by signal 15\"/>");
    expect_in(x, "tests=\"4\" failures=\"1\" errors=\"2\" skipped=\"1\"");
    free(x);
    cg_report_free(r);
    remove_dir();
}
END_TEST

/* XML 1.0's Char production, decoded independently of reports/utf8.c (bit
 * masks, then ranges): the offset of the first byte that breaks it, or -1. */
static long first_non_xml(const unsigned char *s, size_t n)
{
    static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
    for (size_t i = 0; i < n;) {
        unsigned char b = s[i];
        int len = b < 0x80 ? 1 : (b & 0xE0) == 0xC0 ? 2 : (b & 0xF0) == 0xE0 ? 3 : (b & 0xF8) == 0xF0 ? 4 : 0;
        uint32_t cp = len == 1 ? b : len == 2 ? b & 0x1Fu : len == 3 ? b & 0x0Fu : b & 0x07u;
        bool ok = len > 0 && i + (size_t)len <= n;
        for (int j = 1; ok && j < len; j++) {
            ok = (s[i + j] & 0xC0) == 0x80;
            cp = cp << 6 | (s[i + j] & 0x3Fu);
        }
        ok = ok && cp >= least[len] &&
             (cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) || (cp >= 0xE000 && cp <= 0xFFFD) ||
              (cp >= 0x10000 && cp <= 0x10FFFF));
        if (!ok)
            return (long)i;
        i += (size_t)len;
    }
    return -1;
}

START_TEST(text_is_utf8_and_xml_whatever_the_strings)
{
    static const char nasty[] = "\xC3\xA9 \xFF \xC0\xAF \xED\xA0\x80 \xF4\x90\x80\x80 \x01\x08\x1B \xEF\xBF\xBE \xE2\x82";
    make_dir();
    cg_report *r = cg_report_new("distributed", nasty, nasty, "cpu");
    cg_case_result *c = add_case(r, nasty, 2, nasty, CG_PASS);
    free(c->file);
    c->file = strdup(nasty);
    cg_case_add_warning(c, nasty);
    double e = 1, o = 2;
    cg_case_add_check(c, nasty, 0, nasty, nasty, "case", &e, &o, 1, cg_tol_for(CG_F64));
    cg_case_add_note(c, "", -1, "error", NULL, CG_FAIL, nasty);
    const char *m[] = {nasty};
    cg_case_set_diagnosis(c, m, 1, nasty, nasty);
    cg_case_finish(c);
    cg_case_result *err = add_case(r, "e", 2, NULL, CG_ERROR);
    err->message = strdup(nasty);
    cg_report_count(r);
    char *x = write_and_read(r);
    long at = first_non_xml((const unsigned char *)x, strlen(x));
    ck_assert_msg(at < 0, "not an XML 1.0 character at byte %ld: ...%.24s", at, at < 0 ? "" : x + at);
    /* as junit.h says: bad bytes and forbidden characters spelled out */
    expect_in(x, "\xC3\xA9 \\xFF \\xC0\\xAF \\xED\\xA0\\x80 \\xF4\\x90\\x80\\x80 \\x01\\x08\\x1B \\uFFFE \\xE2\\x82");
    free(x);
    cg_report_free(r);
    remove_dir();
}
END_TEST

static Suite *junit_suite(void)
{
    Suite *s = suite_create("junit");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, ids_name_transport_rules_world_and_are_unique);
    tcase_add_test(tc, failure_error_and_skip_say_why);
    tcase_add_test(tc, text_is_utf8_and_xml_whatever_the_strings);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(junit_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
