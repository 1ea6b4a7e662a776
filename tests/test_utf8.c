/* test_utf8.c — reports/utf8.h: which byte sequences are UTF-8 (Unicode
 * table 3-7, by hand: each boundary of each row) and what the reports say
 * instead of the others ("\xNN" per byte). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

/* Each input and its cleaned form, worked out from the rule by hand. */
static const struct {
    const char *in, *out;
} cases[] = {
    {"", ""},
    {"plain ascii \x01\x7F", "plain ascii \x01\x7F"}, /* controls are UTF-8; JSON escapes them */
    {"\xC2\x80 \xDF\xBF", "\xC2\x80 \xDF\xBF"},         /* U+0080, U+07FF */
    {"\xE0\xA0\x80 \xEF\xBF\xBF", "\xE0\xA0\x80 \xEF\xBF\xBF"}, /* U+0800, U+FFFF */
    {"\xED\x9F\xBF \xEE\x80\x80", "\xED\x9F\xBF \xEE\x80\x80"}, /* U+D7FF, U+E000 */
    {"\xF0\x90\x80\x80 \xF4\x8F\xBF\xBF", "\xF0\x90\x80\x80 \xF4\x8F\xBF\xBF"}, /* U+10000, U+10FFFF */
    {"\x80", "\\x80"},                                  /* a lone continuation byte */
    {"\xC0\x80", "\\xC0\\x80"},                          /* overlong NUL */
    {"\xC1\xBF", "\\xC1\\xBF"},                          /* overlong U+007F */
    {"\xE0\x9F\xBF", "\\xE0\\x9F\\xBF"},                 /* overlong U+07FF */
    {"\xED\xA0\x80", "\\xED\\xA0\\x80"},                 /* U+D800, a surrogate */
    {"\xED\xBF\xBF", "\\xED\\xBF\\xBF"},                 /* U+DFFF */
    {"\xF0\x8F\xBF\xBF", "\\xF0\\x8F\\xBF\\xBF"},        /* overlong U+FFFF */
    {"\xF4\x90\x80\x80", "\\xF4\\x90\\x80\\x80"},        /* U+110000 */
    {"\xF5\x80\x80\x80", "\\xF5\\x80\\x80\\x80"},
    {"\xFE\xFF", "\\xFE\\xFF"},
    {"a\xE2\x82", "a\\xE2\\x82"},                        /* cut short at the end */
    {"\xE2\x82z\xE2\x82\xAC", "\\xE2\\x82z\xE2\x82\xAC"}, /* cut short, then a whole euro sign */
    {"\xC3(", "\\xC3("},
};

START_TEST(clean_spells_out_every_bad_byte)
{
    char *out = cg_utf8_clean(cases[_i].in);
    ck_assert_ptr_nonnull(out);
    ck_assert_msg(strcmp(out, cases[_i].out) == 0, "case %d: got \"%s\", wanted \"%s\"", _i, out, cases[_i].out);
    free(out);
}
END_TEST

START_TEST(decode_gives_code_points)
{
    uint32_t cp = 0;
    ck_assert_int_eq(cg_utf8_decode((const unsigned char *)"\xE2\x82\xAC", 3, &cp), 3);
    ck_assert_uint_eq(cp, 0x20AC);
    ck_assert_int_eq(cg_utf8_decode((const unsigned char *)"\xF0\x9F\x98\x80", 4, &cp), 4);
    ck_assert_uint_eq(cp, 0x1F600);
    ck_assert_int_eq(cg_utf8_decode((const unsigned char *)"\xE2\x82\xAC", 2, &cp), 0); /* n cuts it */
    ck_assert_int_eq(cg_utf8_decode((const unsigned char *)"", 0, &cp), 0);
    ck_assert_ptr_null(cg_utf8_clean(NULL));
}
END_TEST

START_TEST(xml_forbidden_characters)
{
    ck_assert(cg_utf8_xml_forbidden(0x00));
    ck_assert(cg_utf8_xml_forbidden(0x08));
    ck_assert(cg_utf8_xml_forbidden(0x1F));
    ck_assert(!cg_utf8_xml_forbidden(0x09));
    ck_assert(!cg_utf8_xml_forbidden(0x0A));
    ck_assert(!cg_utf8_xml_forbidden(0x0D));
    ck_assert(!cg_utf8_xml_forbidden(0x20));
    ck_assert(!cg_utf8_xml_forbidden(0x7F)); /* allowed, if discouraged */
    ck_assert(!cg_utf8_xml_forbidden(0xFFFD));
    ck_assert(cg_utf8_xml_forbidden(0xFFFE));
    ck_assert(cg_utf8_xml_forbidden(0xFFFF));
    ck_assert(!cg_utf8_xml_forbidden(0x10000));
}
END_TEST

static Suite *utf8_suite(void)
{
    Suite *s = suite_create("utf8");
    TCase *tc = tcase_create("core");
    tcase_add_loop_test(tc, clean_spells_out_every_bad_byte, 0, (int)(sizeof cases / sizeof cases[0]));
    tcase_add_test(tc, decode_gives_code_points);
    tcase_add_test(tc, xml_forbidden_characters);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(utf8_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
