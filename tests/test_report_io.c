/* test_report_io.c — the JSON report as written and as read back.
 *
 * - A job's result travels from rank 0 to the launcher as one JSON line
 *   (cg_case_json_line) and is merged back (cg_case_from_json_line): the
 *   merged case must say everything the rank's said, field by field,
 *   including numel and truncated of a large tensor, a first difference
 *   past the values written, NaN and infinities, and 40 diagnosis matches.
 * - Whatever bytes the strings hold, the report file is valid UTF-8 (checked
 *   here with a decoder written differently from reports/utf8.c: code points
 *   by bit masks, then the ranges) and says the bad bytes as "\xNN".
 * - The report written from such a case is valid against the schema. */
#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json_file.h"
#include "json_schema.h"
#include "report_json.h"

#ifndef CG_TEST_DIR
#error "CG_TEST_DIR must name the tests directory"
#endif
#define REPORT_SCHEMA CG_TEST_DIR "/../reports/schema/report-1.schema.json"

enum { BIG = 300, BAD_AT = 280, NMATCH = 40 };

/* A failing job with every field of a case set, and a large tensor whose
 * first difference lies past the 256 values a report carries. */
static cg_report *rich_report(const char *name)
{
    cg_report *r = cg_report_new("distributed", "mpi", "reference", "cpu");
    ck_assert_ptr_nonnull(r);
    cg_case_result *c = cg_report_add_case(r, name, "cases/x.case", "doc \"quoted\"", 4);
    ck_assert_ptr_nonnull(c);
    cg_case_set_rules(c, "torch-nn");
    c->duration_s = 1.25;
    c->replicated_defined = false;
    c->replicated_reason = strdup("roots differ between ranks");
    c->fd_status = CG_SKIP;
    c->fd_max_rel_err = 0.125;
    c->fd_tolerance = 1e-6;
    c->fd_note = strdup("relu(0)");
    ck_assert_int_eq(cg_case_add_warning(c, "rank 0's recv #1 is unused"), 0);
    ck_assert_int_eq(cg_case_add_warning(c, "second"), 0);
    const char *matches[NMATCH];
    char names[NMATCH][16];
    for (int i = 0; i < NMATCH; i++) {
        snprintf(names[i], sizeof names[i], "m%d", i);
        matches[i] = names[i];
    }
    cg_case_set_diagnosis(c, matches, NMATCH, "matches rule set torch-nn", NULL);
    double e[BIG], o[BIG];
    for (int i = 0; i < BIG; i++) {
        e[i] = 1.0 + i;
        o[i] = i < BAD_AT ? e[i] : -e[i]; /* wrong from element 280 on */
    }
    cg_tol tol = cg_tol_for(CG_F64);
    ck_assert_ptr_nonnull(cg_case_add_check(c, "x", 2, "per_rank", NULL, "oracle", e, o, BIG, tol));
    double e2[3] = {1, 2, 3}, o2[3] = {1, NAN, INFINITY};
    ck_assert_ptr_nonnull(cg_case_add_check(c, "y", 0, "value", "torch-nn", "case", e2, o2, 3, tol));
    ck_assert_ptr_nonnull(cg_case_add_note(c, "", -1, "error", "torch-nn", CG_FAIL, "raised: \"boom\""));
    cg_case_finish(c);
    cg_case_result *err = cg_report_add_case(r, "lost", NULL, NULL, 2);
    ck_assert_ptr_nonnull(err);
    err->status = CG_ERROR;
    err->error_class = 3;
    err->message = strdup("rank 1 exited early in all_reduce #0 (forward)");
    cg_report_count(r);
    return r;
}

/* The first member where a and b differ ("" when none), as a path. */
static bool same_json(const cJSON *a, const cJSON *b, char *path, size_t len)
{
    if (!a || !b || (a->type & 0xFF) != (b->type & 0xFF))
        return false;
    if (cJSON_IsNumber(a))
        return a->valuedouble == b->valuedouble;
    if (cJSON_IsString(a))
        return strcmp(a->valuestring, b->valuestring) == 0;
    if (cJSON_IsArray(a) && cJSON_GetArraySize(a) != cJSON_GetArraySize(b))
        return false;
    if (cJSON_IsObject(a) && cJSON_GetArraySize(a) != cJSON_GetArraySize(b))
        return false; /* a member missing on one side */
    size_t at = strlen(path);
    const cJSON *m = a->child;
    for (int i = 0; m; m = m->next, i++) {
        const cJSON *n = cJSON_IsObject(a) ? cJSON_GetObjectItemCaseSensitive(b, m->string) : cJSON_GetArrayItem(b, i);
        if (cJSON_IsObject(a))
            snprintf(path + at, len - at, "/%s", m->string);
        else
            snprintf(path + at, len - at, "/%d", i);
        if (!same_json(m, n, path, len))
            return false;
        path[at] = '\0';
    }
    return true;
}

START_TEST(merged_case_keeps_every_field)
{
    cg_report *rank = rich_report("allreduce_prod_scaled"), *merged = cg_report_new("distributed", "mpi", NULL, "cpu");
    ck_assert_ptr_nonnull(merged);
    for (int i = 0; i < rank->ncases; i++) {
        char *line = cg_case_json_line(&rank->cases[i]);
        ck_assert_ptr_nonnull(line);
        ck_assert_msg(cg_case_from_json_line(merged, line) == 0, "case %d: the line does not read back", i);
        char *again = cg_case_json_line(&merged->cases[i]);
        cJSON *a = cJSON_Parse(line), *b = cJSON_Parse(again);
        char path[512] = "";
        bool same = same_json(a, b, path, sizeof path);
        if (!same)
            printf("rank:   %s\nmerged: %s\n", line, again);
        ck_assert_msg(same, "case %d: the merged case differs from the rank's at %s", i, path);
        cJSON_Delete(a);
        cJSON_Delete(b);
        cJSON_free(line);
        cJSON_free(again);
    }
    /* and in memory: what the terminal and JUnit writers use */
    const cg_check *k = &merged->cases[0].checks[0];
    ck_assert_int_eq(k->numel, BIG);
    ck_assert_int_eq(k->first_bad, BAD_AT);
    ck_assert_double_eq(k->expected[BAD_AT], 1.0 + BAD_AT);
    ck_assert_double_eq(k->observed[BAD_AT], -(1.0 + BAD_AT));
    ck_assert_int_eq(merged->cases[0].ndiag, NMATCH);
    ck_assert_int_eq(merged->cases[1].error_class, 3);
    cg_report_free(rank);
    cg_report_free(merged);
}
END_TEST

/* The JSON line says numel 300 and truncated, and the first difference with
 * both values (the arrays stop at 256). */
START_TEST(truncated_check_says_its_size_and_first_difference)
{
    cg_report *r = rich_report("c");
    char *line = cg_case_json_line(&r->cases[0]);
    cJSON *o = cJSON_Parse(line);
    const cJSON *k = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "checks"), 0);
    ck_assert_double_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(k, "numel")), BIG);
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(k, "truncated")));
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(k, "observed")), 256);
    ck_assert_double_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(k, "first_bad_index")), BAD_AT);
    ck_assert_double_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(k, "first_bad_expected")), 281);
    ck_assert_double_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(k, "first_bad_observed")), -281);
    cJSON_Delete(o);
    cJSON_free(line);
    cg_report_free(r);
}
END_TEST

/* Valid UTF-8 by another route than reports/utf8.c: take the length from
 * the lead byte's high bits, assemble the code point by masks, then reject
 * overlong forms, surrogates and anything past U+10FFFF by value. */
static bool valid_utf8(const unsigned char *s, size_t n, size_t *bad_at)
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
        if (!ok || cp < least[len] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) {
            *bad_at = i;
            return false;
        }
        i += (size_t)len;
    }
    return true;
}

static char *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    char *buf = malloc(1 << 20);
    ck_assert_ptr_nonnull(buf);
    *n = fread(buf, 1, (1 << 20) - 1, f);
    buf[*n] = '\0';
    fclose(f);
    return buf;
}

/* Every kind of byte sequence that is not UTF-8, and some that are. */
static const char nasty[] = "ok \xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80 bad \xFF\xFE over \xC0\xAF \xE0\x80\x80 "
                            "sur \xED\xA0\x80 big \xF4\x90\x80\x80 ctl \x01\x1B\x7F cut \xE2\x82";
/* ... and the same as the report must say it (utf8.h: "\xNN" per bad byte;
 * the controls stay, JSON escapes them). */
static const char nasty_clean[] = "ok \xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80 bad \\xFF\\xFE over \\xC0\\xAF "
                                  "\\xE0\\x80\\x80 sur \\xED\\xA0\\x80 big \\xF4\\x90\\x80\\x80 ctl \x01\x1B\x7F "
                                  "cut \\xE2\\x82";

START_TEST(json_report_is_utf8_whatever_the_strings)
{
    cg_report *r = rich_report(nasty);
    cg_case_result *c = &r->cases[0];
    free(c->message);
    c->message = strdup(nasty);
    ck_assert_int_eq(cg_case_add_warning(c, nasty), 0);
    char dir[512], path[600], err[512]; /* err: the test tools (tools/json_schema.h) */
    cg_status st = CG_STATUS_OK;
    const char *tmpdir = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/cg_test_report_XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/r.json", dir);
    ck_assert_msg(cg_report_write_json(r, path, &st) == 0, "%s", st.msg);
    size_t n, bad = 0;
    char *text = read_all(path, &n);
    ck_assert_msg(valid_utf8((const unsigned char *)text, n, &bad), "invalid UTF-8 at byte %zu: ...%.20s", bad,
                  text + bad);
    cJSON *o = cJSON_Parse(text), *schema = cg_json_load_file(REPORT_SCHEMA, err, sizeof err);
    ck_assert_ptr_nonnull(o);
    ck_assert_ptr_nonnull(schema);
    const cJSON *cs = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "cases"), 0);
    ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(cs, "name")), nasty_clean);
    ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(cs, "message")), nasty_clean);
    ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItem(cs, "warnings"), 2)), nasty_clean);
    ck_assert_msg(cg_schema_validate(schema, o, err, sizeof err) == 0, "the report breaks the schema: %s", err);
    cJSON_Delete(o);
    cJSON_Delete(schema);
    free(text);
    unlink(path);
    rmdir(dir);
    cg_report_free(r);
}
END_TEST

static Suite *report_io_suite(void)
{
    Suite *s = suite_create("report_io");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, merged_case_keeps_every_field);
    tcase_add_test(tc, truncated_check_says_its_size_and_first_difference);
    tcase_add_test(tc, json_report_is_utf8_whatever_the_strings);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(report_io_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
