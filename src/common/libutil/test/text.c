/* test/text.c - text_sanitize(): what reaches a terminal */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libtest/tap.h"
#include "libutil/text.h"

static const struct {
    const char *in, *out, *ascii; /* ascii: with TEXT_ASCII */
} cases[] = {
    /* kept */
    {"", "", ""},
    {"python3 job-1 a_b.c", "python3 job-1 a_b.c", "python3 job-1 a_b.c"},
    {"caf\xc3\xa9", "caf\xc3\xa9", "caf??"}, /* é */
    {"\xe6\x97\xa5\xe6\x9c\xac", "\xe6\x97\xa5\xe6\x9c\xac", "??????"},
    {"\xf0\x9f\x98\x80!",
     "\xf0\x9f\x98\x80!",
     "????"
     "!"},                                            /* emoji */
    {"\xc2\xa0\xc2\xa9", "\xc2\xa0\xc2\xa9", "????"}, /* U+00A0, © */
    {"\xe2\x80\x8b", "\xe2\x80\x8b", "???"},          /* ZWSP */
    /* C0 controls, ESC sequences, DEL */
    {"a\nb", "a?b", "a?b"},
    {"a\tb\rc", "a?b?c", "a?b?c"},
    {"\x1b]0;PWNED\a\x1b[31m", "?]0;PWNED??[31m", "?]0;PWNED??[31m"},
    {"\x01\x1f x \x7f", "?? x ?", "?? x ?"},
    /* C1 controls in UTF-8: one '?' per character */
    {"\xc2\x80"
     "a"
     "\xc2\x9b"
     "31m"
     "\xc2\x9f",
     "?a?31m?",
     "??a??31m??"},
    {"\xc2\x9d"
     "0;x"
     "\xc2\x9c",
     "?0;x?",
     "??0;x??"},
    /* bidi controls, line and paragraph separators */
    {"a\xe2\x80\xae"
     "evil",
     "a?evil",
     "a???evil"}, /* RLO */
    {"\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad",
     "????",
     "????????????"},
    {"\xe2\x81\xa6x\xe2\x81\xa7y\xe2\x81\xa8z\xe2\x81\xa9",
     "?x?y?z?",
     "???x???y???z???"},
    {"\xd8\x9c\xe2\x80\x8e\xe2\x80\x8f", "???", "????????"}, /* ALM LRM RLM */
    {"a\xe2\x80\xa8"
     "b\xe2\x80\xa9",
     "a?b?",
     "a???b???"},
    {"\xe2\x81\xa5", "\xe2\x81\xa5", "???"}, /* U+2065, unassigned: kept */
    /* invalid UTF-8: every byte */
    {"\x9b"
     "31m",
     "?31m",
     "?31m"}, /* raw 8-bit CSI */
    {"a\x80\xbf"
     "b",
     "a??b",
     "a??b"},           /* stray continuations */
    {"\xc3", "?", "?"}, /* truncated at the end */
    {"\xe2\x80"
     "x",
     "??x",
     "??x"},                              /* truncated in the middle */
    {"\xc0\xaf", "??", "??"},             /* overlong '/' */
    {"\xe0\x80\xaf", "???", "???"},       /* overlong '/' */
    {"\xc1\x9b", "??", "??"},             /* overlong ESC [ */
    {"\xed\xa0\x80", "???", "???"},       /* surrogate */
    {"\xf4\x90\x80\x80", "????", "????"}, /* > U+10FFFF */
    {"\xf5\xff\xfe", "???", "???"},
    {"\xf0\x9f\x98", "???", "???"}, /* truncated 4-byte */
};

START_TEST (test_table)
{
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        char buf[128], inplace[128];

        text_sanitize (buf, sizeof (buf), cases[i].in, 0);
        ck_assert_msg (strcmp (buf, cases[i].out) == 0,
                       "case %zu: got '%s'",
                       i,
                       buf);
        ck_assert_int_eq (text_is_safe (cases[i].in, 0),
                          strcmp (cases[i].in, cases[i].out) == 0);
        text_sanitize (buf, sizeof (buf), cases[i].in, TEXT_ASCII);
        ck_assert_msg (strcmp (buf, cases[i].ascii) == 0,
                       "case %zu (ascii): got '%s'",
                       i,
                       buf);
        ck_assert_int_eq (text_is_safe (cases[i].in, TEXT_ASCII),
                          strcmp (cases[i].in, cases[i].ascii) == 0);
        /* in place gives the same */
        snprintf (inplace, sizeof (inplace), "%s", cases[i].in);
        text_sanitize (inplace, sizeof (inplace), inplace, 0);
        ck_assert_str_eq (inplace, cases[i].out);
        /* the result is safe itself: sanitising twice changes nothing */
        ck_assert (text_is_safe (cases[i].out, 0));
    }
}
END_TEST

/* Every byte value alone and after a lead byte: no control byte and no
 * C1 character survives, and the output is never longer than the input. */
START_TEST (test_every_byte)
{
    for (int a = 1; a < 256; a++) {
        for (int b = 0; b < 256; b++) {
            char in[4] = {(char)a, (char)b, 0, 0}, out[8];
            const unsigned char *p;

            text_sanitize (out, sizeof (out), in, 0);
            ck_assert_uint_le (strlen (out), strlen (in));
            for (p = (const unsigned char *)out; *p; p++) {
                ck_assert_msg (*p >= 0x20 && *p != 0x7f, "%02x %02x", a, b);
                ck_assert_msg (!(p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f),
                               "%02x %02x: C1 kept",
                               a,
                               b);
            }
            ck_assert (text_is_safe (out, 0));
        }
    }
}
END_TEST

START_TEST (test_bounds)
{
    char buf[8];

    /* NULL reads as "", n = 0 writes nothing */
    memset (buf, 'x', sizeof (buf));
    ck_assert_ptr_eq (text_sanitize (buf, sizeof (buf), NULL, 0), buf);
    ck_assert_str_eq (buf, "");
    memset (buf, 'x', sizeof (buf));
    text_sanitize (buf, 0, "abc", 0);
    ck_assert_int_eq (buf[0], 'x');
    /* cut to n - 1 bytes, never inside a character */
    text_sanitize (buf, 4, "abcdef", 0);
    ck_assert_str_eq (buf, "abc");
    text_sanitize (buf, 4, "ab\xc3\xa9", 0);
    ck_assert_str_eq (buf, "ab");
    text_sanitize (buf, 5, "ab\xc3\xa9", 0);
    ck_assert_str_eq (buf, "ab\xc3\xa9");
    text_sanitize (buf, 3, "a\x1b[", 0);
    ck_assert_str_eq (buf, "a?");
    ck_assert (text_is_safe (NULL, 0));
}
END_TEST

/* text_json_ascii(): every character outside ASCII a \u escape (a pair
 * above U+FFFF), every invalid byte \ufffd, ASCII as it is. */
static const struct {
    const char *in, *want;
} json_ascii[] = {
    {"{\"a\":\"plain \\n\"}", "{\"a\":\"plain \\n\"}"},
    {"\"caf\xc3\xa9\"", "\"caf\\u00e9\""},
    {"\"\xef\xbf\xbd\"", "\"\\ufffd\""},
    {"\"\xe2\x80\xa8\"", "\"\\u2028\""},
    {"\"\xf0\x9f\x98\x80!\"", "\"\\ud83d\\ude00!\""},
    {"\"\xf4\x8f\xbf\xbf\"", "\"\\udbff\\udfff\""},
    {"\"\xff\xc3\"", "\"\\ufffd\\ufffd\""},
    {"\"\xed\xa0\x80\"", "\"\\ufffd\\ufffd\\ufffd\""},
    {"", ""},
};

START_TEST (test_json_ascii)
{
    char *out = text_json_ascii (json_ascii[_i].in);

    ck_assert_ptr_nonnull (out);
    ck_assert_str_eq (out, json_ascii[_i].want);
    free (out);
}
END_TEST

/* The worst case of the length bound: 4-byte characters only. */
START_TEST (test_json_ascii_worst)
{
    char in[4 * 64 + 1], *out;

    for (int i = 0; i < 64; i++)
        memcpy (in + 4 * i, "\xf0\x9f\x98\x80", 4);
    in[4 * 64] = '\0';
    ck_assert_ptr_nonnull (out = text_json_ascii (in));
    ck_assert_uint_eq (strlen (out), 12 * 64);
    free (out);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("text");
    TCase *tc = tcase_create ("text");

    tcase_add_test (tc, test_table);
    tcase_add_test (tc, test_every_byte);
    tcase_add_test (tc, test_bounds);
    tcase_add_loop_test (tc,
                         test_json_ascii,
                         0,
                         (int)(sizeof (json_ascii) / sizeof (json_ascii[0])));
    tcase_add_test (tc, test_json_ascii_worst);
    suite_add_tcase (s, tc);
    return tap_run (s, NULL, 0);
}
