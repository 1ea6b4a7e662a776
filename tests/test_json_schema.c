/* test_json_schema.c — the test suite's JSON Schema validator
 * (tests/tools/json_schema.c) and the report schema it enforces
 * (reports/schema/report-1.schema.json).
 *
 * A validator that accepts everything would make every report check in the
 * suite pass: so each keyword is shown to reject what it must, on the real
 * schema and a hand-written minimal report, with the JSON pointer of the
 * offending member; and a schema using a keyword the validator does not
 * implement is refused as a whole. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_file.h"
#include "json_schema.h"

#ifndef CG_TEST_DIR
#error "CG_TEST_DIR must name the tests directory"
#endif
#define REPORT_SCHEMA CG_TEST_DIR "/../reports/schema/report-1.schema.json"

static char err[2048];

/* A report as small as the schema allows, with one case and one check. */
static const char minimal_report[] =
    "{\"schema\": \"collgrad-check/report/1\","
    " \"tool\": {\"name\": \"collgrad-check\", \"version\": \"0.1.0\"},"
    " \"host\": \"h\", \"written\": \"2025-01-02T03:04:05Z\", \"mode\": \"distributed\","
    " \"transport\": \"mpi\", \"rules\": \"reference\", \"device\": \"cpu\","
    " \"cases\": [{\"name\": \"c\", \"file\": \"c.case\", \"source\": null, \"world\": 2,"
    "   \"rules\": \"reference\", \"status\": \"fail\", \"duration_s\": 0.5,"
    "   \"replicated\": {\"defined\": true, \"reason\": null},"
    "   \"finite_difference\": {\"status\": \"pass\", \"max_rel_err\": 0, \"tolerance\": 1e-6},"
    "   \"checks\": [{\"tensor\": \"x\", \"rank\": 0, \"semantics\": \"per_rank\", \"rules\": null,"
    "     \"against\": \"oracle\", \"numel\": 1, \"expected\": [30], \"observed\": [12],"
    "     \"max_abs_err\": 18, \"max_rel_err\": 0.6, \"max_ulp\": null, \"first_bad_index\": 0,"
    "     \"first_bad_expected\": 30, \"first_bad_observed\": 12, \"status\": \"fail\"}]}],"
    " \"summary\": {\"passed\": 0, \"failed\": 1, \"errors\": 0, \"skipped\": 0}}";

static cJSON *load_schema(void)
{
    cJSON *s = cg_json_load_file(REPORT_SCHEMA, err, sizeof err);
    ck_assert_msg(s != NULL, "%s", err);
    return s;
}

/* minimal_report with one edit applied by the caller's function. */
typedef void (*edit_fn)(cJSON *report);

static int validate_edited(edit_fn edit)
{
    cJSON *schema = load_schema(), *doc = cJSON_Parse(minimal_report);
    ck_assert_ptr_nonnull(doc);
    if (edit)
        edit(doc);
    int rc = cg_schema_validate(schema, doc, err, sizeof err);
    cJSON_Delete(doc);
    cJSON_Delete(schema);
    return rc;
}

static cJSON *first_case(cJSON *r) { return cJSON_GetArrayItem(cJSON_GetObjectItem(r, "cases"), 0); }
static cJSON *first_check(cJSON *r) { return cJSON_GetArrayItem(cJSON_GetObjectItem(first_case(r), "checks"), 0); }

static void drop_summary(cJSON *r) { cJSON_DeleteItemFromObject(r, "summary"); }
static void drop_check_numel(cJSON *r) { cJSON_DeleteItemFromObject(first_check(r), "numel"); }
static void world_as_string(cJSON *r) { cJSON_ReplaceItemInObject(first_case(r), "world", cJSON_CreateString("2")); }
static void world_fractional(cJSON *r) { cJSON_ReplaceItemInObject(first_case(r), "world", cJSON_CreateNumber(2.5)); }
static void extra_case_member(cJSON *r) { cJSON_AddNumberToObject(first_case(r), "colour", 1); }
static void extra_top_member(cJSON *r) { cJSON_AddStringToObject(r, "torch_version", "2.3"); }
static void bad_status(cJSON *r) { cJSON_ReplaceItemInObject(first_case(r), "status", cJSON_CreateString("maybe")); }
static void bad_semantics(cJSON *r) { cJSON_ReplaceItemInObject(first_check(r), "semantics", cJSON_CreateString("per_ranks")); }
static void other_schema(cJSON *r) { cJSON_ReplaceItemInObject(r, "schema", cJSON_CreateString("collgrad-check/report/2")); }
static void negative_numel(cJSON *r) { cJSON_ReplaceItemInObject(first_check(r), "numel", cJSON_CreateNumber(-1)); }
static void bad_timestamp(cJSON *r) { cJSON_ReplaceItemInObject(r, "written", cJSON_CreateString("yesterday")); }
static void truncated_false(cJSON *r) { cJSON_AddFalseToObject(first_check(r), "truncated"); }
static void value_as_string(cJSON *r)
{
    cJSON_ReplaceItemInArray(cJSON_GetObjectItem(first_check(r), "observed"), 0, cJSON_CreateString("12"));
}
static void too_many_values(cJSON *r)
{
    cJSON *a = cJSON_GetObjectItem(first_check(r), "observed");
    for (int i = 0; i < 256; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(i));
}
static void null_name(cJSON *r) { cJSON_ReplaceItemInObject(first_case(r), "name", cJSON_CreateNull()); }
static void error_class_zero(cJSON *r) { cJSON_AddNumberToObject(first_case(r), "error_class", 0); }

START_TEST(report_schema_is_usable)
{
    cJSON *schema = load_schema();
    ck_assert_msg(cg_schema_check(schema, err, sizeof err) == 0, "%s", err);
    cJSON_Delete(schema);
}
END_TEST

START_TEST(minimal_report_is_valid)
{
    ck_assert_msg(validate_edited(NULL) == 0, "%s", err);
}
END_TEST

/* Each edit, the JSON pointer and the words the first violation must name. */
static const struct {
    edit_fn edit;
    const char *where, *why;
} wrong[] = {
    {drop_summary, "(root)", "required property 'summary' is missing"},
    {drop_check_numel, "/cases/0/checks/0", "required property 'numel' is missing"},
    {world_as_string, "/cases/0/world", "\"2\" is not of type"},
    {world_fractional, "/cases/0/world", "2.5 is not of type"},
    {extra_case_member, "/cases/0/colour", "property not allowed here"},
    {extra_top_member, "/torch_version", "property not allowed here"},
    {bad_status, "/cases/0/status", "\"maybe\" is not one of the allowed values"},
    {bad_semantics, "/cases/0/checks/0/semantics", "\"per_ranks\" is not one of the allowed values"},
    {other_schema, "/schema", "is not the constant"},
    {negative_numel, "/cases/0/checks/0/numel", "-1 is less than the minimum 0"},
    {bad_timestamp, "/written", "does not match the pattern"},
    {truncated_false, "/cases/0/checks/0/truncated", "is not the constant"},
    {value_as_string, "/cases/0/checks/0/observed/0", "\"12\" is not of type"},
    {too_many_values, "/cases/0/checks/0/observed", "257 items, more than maxItems 256"},
    {null_name, "/cases/0/name", "null is not of type"},
    {error_class_zero, "/cases/0/error_class", "0 is not one of the allowed values"},
};

START_TEST(wrong_reports_are_rejected)
{
    int rc = validate_edited(wrong[_i].edit);
    ck_assert_msg(rc == 1, "edit %d: validate returned %d (%s)", _i, rc, err);
    char want[256];
    snprintf(want, sizeof want, "%s: %s", wrong[_i].where, wrong[_i].why);
    ck_assert_msg(strncmp(err, want, strlen(wrong[_i].where) + 2) == 0 && strstr(err, wrong[_i].why),
                  "edit %d: got '%s', wanted '%s'", _i, err, want);
}
END_TEST

static int validate_text(const char *schema_text, const char *doc_text)
{
    cJSON *schema = cJSON_Parse(schema_text), *doc = cJSON_Parse(doc_text);
    ck_assert_ptr_nonnull(schema);
    ck_assert_ptr_nonnull(doc);
    int rc = cg_schema_validate(schema, doc, err, sizeof err);
    cJSON_Delete(schema);
    cJSON_Delete(doc);
    return rc;
}

START_TEST(unsupported_keywords_refuse_the_schema)
{
    /* reached or not: a keyword it cannot enforce must never pass quietly */
    ck_assert_int_eq(validate_text("{\"oneOf\": [{\"type\": \"string\"}]}", "\"s\""), -1);
    ck_assert_msg(strstr(err, "unsupported keyword 'oneOf'"), "%s", err);
    ck_assert_int_eq(validate_text("{\"properties\": {\"a\": {\"minLength\": 3}}}", "{}"), -1);
    ck_assert_msg(strstr(err, "#/properties/a/minLength: unsupported keyword"), "%s", err);
    ck_assert_int_eq(validate_text("{\"$ref\": \"#/$defs/nowhere\"}", "1"), -1);
    ck_assert_int_eq(validate_text("{\"type\": \"float\"}", "1"), -1);
    ck_assert_int_eq(validate_text("{\"pattern\": \"(\"}", "\"x\""), -1);
}
END_TEST

START_TEST(keywords_beside_the_report)
{
    ck_assert_int_eq(validate_text("false", "1"), 1);
    ck_assert_int_eq(validate_text("true", "1"), 0);
    ck_assert_int_eq(validate_text("{\"type\": \"integer\"}", "3.0"), 0);
    ck_assert_int_eq(validate_text("{\"type\": \"integer\"}", "3.5"), 1);
    ck_assert_int_eq(validate_text("{\"maximum\": 2}", "3"), 1);
    ck_assert_int_eq(validate_text("{\"maximum\": 2}", "\"3\""), 0); /* applies to numbers only */
    ck_assert_int_eq(validate_text("{\"enum\": [1, \"a\", null]}", "null"), 0);
    ck_assert_int_eq(validate_text("{\"enum\": [1, \"a\", null]}", "false"), 1);
    ck_assert_int_eq(validate_text("{\"additionalProperties\": {\"type\": \"number\"}}", "{\"a\": 1, \"b\": \"x\"}"), 1);
    ck_assert_msg(strstr(err, "/b: \"x\" is not of type"), "%s", err);
    ck_assert_int_eq(validate_text("{\"items\": {\"$ref\": \"#/$defs/s\"}, \"$defs\": {\"s\": {\"type\": \"string\"}}}",
                                   "[\"a\", 2]"),
                     1);
    ck_assert_msg(strstr(err, "/1: 2 is not of type"), "%s", err);
    /* a $ref cycle ends as an unusable schema, not a stack overflow */
    ck_assert_int_eq(validate_text("{\"$defs\": {\"a\": {\"$ref\": \"#/$defs/a\"}}, \"$ref\": \"#/$defs/a\"}", "1"), -1);
}
END_TEST

static Suite *schema_suite(void)
{
    Suite *s = suite_create("json_schema");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, report_schema_is_usable);
    tcase_add_test(tc, minimal_report_is_valid);
    tcase_add_loop_test(tc, wrong_reports_are_rejected, 0, (int)(sizeof wrong / sizeof wrong[0]));
    tcase_add_test(tc, unsupported_keywords_refuse_the_schema);
    tcase_add_test(tc, keywords_beside_the_report);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(schema_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
