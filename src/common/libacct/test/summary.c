/* test/summary.c - the job summary in AdminComment (summary.h) */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "libacct/summary.h"
#include "libtest/tap.h"

/* A record as pin.so writes it (acct.h's keys), ~700 bytes. */
static char *record (const char *kind,
                     unsigned job,
                     unsigned step,
                     const char *node,
                     long long start_us)
{
    char *s = NULL;
    int n =
        asprintf (&s,
                  "{\"v\":1,\"kind\":\"%s\",\"cluster\":\"pin\",\"job_id\":%u,"
                  "\"step_id\":%u,\"array_job_id\":4294967294,\"array_task_"
                  "id\":4294967294,"
                  "\"node\":\"%s\",\"uid\":1000,\"user\":\"alice\","
                  "\"partition\":\"debug\","
                  "\"job_name\":\"o2-sim\",\"policy\":\"numa-local\","
                  "\"fallback\":\"\","
                  "\"cpus\":\"0-3,8-11\",\"mems\":\"0\",\"alloc_cpus\":8,"
                  "\"start_us\":%lld,"
                  "\"end_us\":%lld,\"elapsed_us\":%lld,\"user_usec\":%lld,"
                  "\"system_usec\":%lld,\"usage_usec\":%lld,\"nr_periods\":0,"
                  "\"nr_throttled\":0,\"throttled_usec\":0,\"mem_peak\":%lld,"
                  "\"exit_status\":0,\"state\":\"COMPLETED\",\"source\":"
                  "\"step-cgroup\","
                  "\"cgroup\":\"/sys/fs/cgroup/system.slice/slurmstepd.scope/"
                  "job_%u/step_%u/user\","
                  "\"mode\":\"nested\",\"confined_us\":0,\"confine_use\":0,"
                  "\"confine_cpus\":\"\",\"confine_mems\":\"\",\"steps\":%u}",
                  kind,
                  job,
                  step,
                  node,
                  start_us,
                  start_us + 61234567,
                  61234567LL,
                  400000000LL + step * 12345,
                  1234567LL + step * 77,
                  401234567LL + step * 12422,
                  123456789LL + step * 4096,
                  job,
                  step,
                  strcmp (kind, "job") == 0 ? step : 0);
    ck_assert_int_gt (n, 0);
    return s;
}

struct recs {
    char *r[256];
    size_t n;
};

/* A job's records on one node: NSTEPS steps and the job record. */
static void make_recs (struct recs *rs,
                       unsigned job,
                       const char *node,
                       unsigned nsteps)
{
    rs->n = 0;
    for (unsigned i = 0; i < nsteps; i++)
        rs->r[rs->n++] =
            record ("step", job, i, node, 1700000000000000LL + i * 1000000LL);
    rs->r[rs->n++] = record ("job", job, nsteps, node, 1700000000000000LL);
}

static void free_recs (struct recs *rs)
{
    for (size_t i = 0; i < rs->n; i++)
        free (rs->r[i]);
    rs->n = 0;
}

static const char *const *R (struct recs *rs)
{
    return (const char *const *)rs->r;
}

static int count_cb (const char *node, json_object *rec, void *arg)
{
    (void)node;
    (void)rec;
    (*(size_t *)arg)++;
    return 0;
}

START_TEST (test_roundtrip_idempotent)
{
    struct recs a;
    char *f1, *f2, *f3, *other = NULL;
    struct acct_summary *s = NULL;
    pin_error_t err = {""};
    size_t n = 0;

    make_recs (&a, 42, "vm", 3);
    f1 = acct_summary_merge (NULL, "vm", R (&a), a.n, ACCT_SUMMARY_MAX, &err);
    ck_assert_msg (f1 != NULL, "%s", err.text);
    ck_assert (strncmp (f1, ACCT_SUMMARY_PREFIX, strlen (ACCT_SUMMARY_PREFIX))
               == 0);
    ck_assert_ptr_null (strchr (f1, ' '));
    ck_assert (acct_summary_has_node (f1, "vm", R (&a), a.n));
    ck_assert (!acct_summary_has_node (f1, "vm-2", R (&a), a.n));
    ck_assert (!acct_summary_has_node (f1, "vm", R (&a), a.n - 1));
    /* delivering twice: the same text */
    f2 = acct_summary_merge (f1, "vm", R (&a), a.n, ACCT_SUMMARY_MAX, &err);
    ck_assert_str_eq (f1, f2);
    /* the records in another order: still the same text */
    char *t = a.r[0];
    a.r[0] = a.r[a.n - 1];
    a.r[a.n - 1] = t;
    f3 = acct_summary_merge (f1, "vm", R (&a), a.n, ACCT_SUMMARY_MAX, &err);
    ck_assert_str_eq (f1, f3);
    /* parsed back: one node, every record */
    ck_assert_int_eq (acct_summary_parse (f1, &other, &s, &err), 0);
    ck_assert_str_eq (other, "");
    ck_assert_uint_eq (acct_summary_node_count (s), 1);
    ck_assert_int_eq (acct_summary_foreach (s, count_cb, &n), 0);
    ck_assert_uint_eq (n, a.n);
    acct_summary_destroy (s);
    free (other);
    free (f1);
    free (f2);
    free (f3);
    free_recs (&a);
}
END_TEST

START_TEST (test_two_nodes)
{
    struct recs a, b, a2;
    char *f1, *f2, *f3, *f4;
    pin_error_t err = {""};

    make_recs (&a, 7, "vm", 2);
    make_recs (&b, 7, "vm-2", 4);
    f1 = acct_summary_merge ("", "vm", R (&a), a.n, ACCT_SUMMARY_MAX, &err);
    ck_assert_ptr_nonnull (f1);
    f2 = acct_summary_merge (f1, "vm-2", R (&b), b.n, ACCT_SUMMARY_MAX, &err);
    ck_assert_ptr_nonnull (f2);
    ck_assert (acct_summary_has_node (f2, "vm", R (&a), a.n));
    ck_assert (acct_summary_has_node (f2, "vm-2", R (&b), b.n));
    /* the other order of delivery: the same text */
    f3 =
        acct_summary_merge (NULL, "vm-2", R (&b), b.n, ACCT_SUMMARY_MAX, &err);
    f4 = acct_summary_merge (f3, "vm", R (&a), a.n, ACCT_SUMMARY_MAX, &err);
    ck_assert_str_eq (f2, f4);
    free (f3);
    free (f4);
    /* a node sending again (one more step) keeps the other node's part */
    make_recs (&a2, 7, "vm", 3);
    f3 = acct_summary_merge (f2, "vm", R (&a2), a2.n, ACCT_SUMMARY_MAX, &err);
    ck_assert (acct_summary_has_node (f3, "vm", R (&a2), a2.n));
    ck_assert (!acct_summary_has_node (f3, "vm", R (&a), a.n));
    ck_assert (acct_summary_has_node (f3, "vm-2", R (&b), b.n));
    free (f1);
    free (f2);
    free (f3);
    free_recs (&a);
    free_recs (&b);
    free_recs (&a2);
}
END_TEST

/* Other tools' text, kept byte for byte. */
static const char *const others[] = {
    /* jobstats: JS1: + base64(gzip(json)), without and with padding */
    "JS1:H4sIAAAAAAAAA6tWys9LSS1WsopWSi1JTc4sSs0r0YnOTEoBAGHZ8lYZAAAA",
    "JS1:H4sIALI/A2sC/6tWystPSS1WslKoVkoEkoa1tQCJsHYXEwAAAA==",
    "JS1:Short",
    "hello world",
    "two  spaces and trailing ",
    " leading space",
    "a|b,c\"d'e\\f%s%n",
    "caf\xc3\xa9 \xe2\x9c\x93",
    "slurm-pin/2:from-a-future-version",
    "xslurm-pin/1:not-a-token-of-ours",
    "AA== looks like our guard",
    "x{~}!! not at a word start",
};

/* True if TEXT has a character a base64 decoder could take (the standard
 * alphabet, padding, and the URL-safe - _). */
static bool has_b64_char (const char *text)
{
    return strpbrk (text,
                    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                    "0123456789+/=-_")
           != NULL;
}

START_TEST (test_other_text_kept)
{
    const char *o = others[_i];
    struct recs a, b;
    char *f1, *f2, *f3, *other = NULL;
    struct acct_summary *s = NULL;
    pin_error_t err = {""};

    make_recs (&a, 9, "vm", 2);
    make_recs (&b, 9, "vm-2", 1);
    f1 = acct_summary_merge (o, "vm", R (&a), a.n, ACCT_SUMMARY_MAX, &err);
    ck_assert_msg (f1 != NULL, "%s", err.text);
    /* the other text comes first, unchanged, then one space and our
     * base-16 token, in which a base64 decoder finds nothing to take */
    ck_assert (strncmp (f1, o, strlen (o)) == 0);
    ck_assert_int_eq (f1[strlen (o)], ' ');
    ck_assert (strncmp (f1 + strlen (o) + 1,
                        ACCT_SUMMARY_PREFIX_B16,
                        strlen (ACCT_SUMMARY_PREFIX_B16))
               == 0);
    ck_assert (!has_b64_char (f1 + strlen (o)));
    ck_assert_ptr_null (strchr (f1 + strlen (o) + 1, ' '));
    f2 = acct_summary_merge (f1, "vm-2", R (&b), b.n, ACCT_SUMMARY_MAX, &err);
    f3 = acct_summary_merge (f2, "vm", R (&a), a.n, ACCT_SUMMARY_MAX, &err);
    ck_assert_str_eq (f2, f3);
    ck_assert (!has_b64_char (f3 + strlen (o)));
    ck_assert_int_eq (acct_summary_parse (f3, &other, &s, &err), 0);
    ck_assert_mem_eq (other, o, strlen (o) + 1);
    ck_assert_uint_eq (acct_summary_node_count (s), 2);
    ck_assert (acct_summary_has_node (f3, "vm", R (&a), a.n));
    ck_assert (acct_summary_has_node (f3, "vm-2", R (&b), b.n));
    acct_summary_destroy (s);
    free (other);
    free (f1);
    free (f2);
    free (f3);
    free_recs (&a);
    free_recs (&b);
}
END_TEST

/* A token inflating to more than the reader allows. */
static char *bomb_token (void)
{
    size_t big = (16u << 20) + 4096;
    char *zeros = calloc (1, big);
    uLong cap = compressBound (big) + 64;
    unsigned char *gz = malloc (cap);
    z_stream zs = {0};
    char *tok, *p;
    static const char tbl[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

    ck_assert (zeros && gz);
    memset (zeros, ' ', big);
    ck_assert_int_eq (deflateInit2 (&zs,
                                    9,
                                    Z_DEFLATED,
                                    31,
                                    8,
                                    Z_DEFAULT_STRATEGY),
                      Z_OK);
    zs.next_in = (Bytef *)zeros;
    zs.avail_in = big;
    zs.next_out = gz;
    zs.avail_out = cap;
    ck_assert_int_eq (deflate (&zs, Z_FINISH), Z_STREAM_END);
    size_t n = zs.total_out;
    deflateEnd (&zs);
    tok = malloc (strlen (ACCT_SUMMARY_PREFIX) + 4 * (n + 2) / 3 + 8);
    strcpy (tok, ACCT_SUMMARY_PREFIX);
    p = tok + strlen (tok);
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = gz[i] << 16 | (i + 1 < n ? gz[i + 1] << 8 : 0)
                     | (i + 2 < n ? gz[i + 2] : 0);
        *p++ = tbl[v >> 18 & 63];
        *p++ = tbl[v >> 12 & 63];
        *p++ = i + 1 < n ? tbl[v >> 6 & 63] : '=';
        *p++ = i + 2 < n ? tbl[v & 63] : '=';
    }
    *p = '\0';
    free (zeros);
    free (gz);
    return tok;
}

/* Garbage where our token should be: reported, dropped, replaced. */
static const struct {
    const char *field;
    const char *other; /* what is kept */
    int rc;
} garbage[] = {
    {"slurm-pin/1:", "", 1},
    {"slurm-pin/1:!!!!", "", 1},
    {"slurm-pin/1:QUJD", "", 1},                    /* base64, not gzip */
    {"slurm-pin/1:QUJ", "", 1},                     /* bad length */
    {"note slurm-pin/1:H4sI tail", "note tail", 1}, /* truncated gzip */
    {"\x01\x02 binary \xff\xfe", "\x01\x02 binary \xff\xfe", 0},
    {"slurm-pin/1", "slurm-pin/1", 0},
    {"{~}", "", 1},
    {"{~}!!#", "", 1},                     /* odd length */
    {"{~}!!AB", "", 1},                    /* not a digit */
    {"{~}!#()", "", 1},                    /* base 16, not gzip */
    {"note {~}?^#! tail", "note tail", 1}, /* not gzip */
    {"x{~}!!", "x{~}!!", 0},               /* not at a word start */
    {"{\"nodes\":{}}", "{\"nodes\":{}}", 0},
};

START_TEST (test_garbage)
{
    struct recs a;
    char *other = NULL, *f;
    struct acct_summary *s = NULL;
    pin_error_t err = {""};
    int rc;

    rc = acct_summary_parse (garbage[_i].field, &other, &s, &err);
    ck_assert_int_eq (rc, garbage[_i].rc);
    if (rc == 1)
        ck_assert_msg (strlen (err.text) > 0, "no error text");
    ck_assert_str_eq (other, garbage[_i].other);
    ck_assert_uint_eq (acct_summary_node_count (s), 0);
    acct_summary_destroy (s);
    free (other);
    make_recs (&a, 3, "vm", 1);
    f = acct_summary_merge (garbage[_i].field,
                            "vm",
                            R (&a),
                            a.n,
                            ACCT_SUMMARY_MAX,
                            &err);
    ck_assert_msg (f != NULL, "%s", err.text);
    ck_assert (acct_summary_has_node (f, "vm", R (&a), a.n));
    ck_assert_int_eq (acct_summary_parse (f, &other, &s, &err), 0);
    ck_assert_str_eq (other, garbage[_i].other);
    acct_summary_destroy (s);
    free (other);
    free (f);
    free_recs (&a);
}
END_TEST

START_TEST (test_bomb)
{
    char *tok = bomb_token (), *other = NULL;
    struct acct_summary *s = NULL;
    pin_error_t err = {""};

    ck_assert_int_eq (acct_summary_parse (tok, &other, &s, &err), 1);
    ck_assert_ptr_nonnull (strstr (err.text, "inflates beyond"));
    acct_summary_destroy (s);
    free (other);
    free (tok);
}
END_TEST

START_TEST (test_bad_records)
{
    const char *bad[] = {"{\"kind\":\"step\"}", "[1,2]"};
    const char *bad2[] = {"not json"};
    struct acct_summary *s = acct_summary_create ();
    pin_error_t err = {""};

    ck_assert_int_eq (acct_summary_set_node (s, "vm", bad, 2, &err), -1);
    ck_assert_ptr_nonnull (strstr (err.text, "record 1"));
    ck_assert_int_eq (acct_summary_set_node (s, "vm", bad2, 1, &err), -1);
    ck_assert_int_eq (acct_summary_set_node (s, "", bad, 1, &err), -1);
    ck_assert_uint_eq (acct_summary_node_count (s), 0);
    acct_summary_destroy (s);
}
END_TEST

/* A lenient base64 decoder as Python 3.13's b64decode (and coreutils'
 * base64 -di): every character outside the alphabet is skipped, padding
 * included, and decoding goes on after it.  Here: the alphabet characters
 * of TEXT, in order. */
static char *b64_chars_of (const char *text)
{
    char *out = malloc (strlen (text) + 1), *o = out;

    ck_assert_ptr_nonnull (out);
    for (const char *p = text; *p; p++)
        if (strchr ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                    "0123456789+/",
                    *p))
            *o++ = *p;
    *o = '\0';
    return out;
}

/* jobstats' JS1 text before ours: what its decoder reads of the field
 * (everything after "JS1:") is exactly what it reads of its own text. */
START_TEST (test_jobstats_reads_its_own)
{
    const char *js[] = {others[0], others[1]};
    struct recs a;
    pin_error_t err = {""};

    make_recs (&a, 11, "vm", 5);
    for (size_t i = 0; i < 2; i++) {
        char *f = acct_summary_merge (js[i],
                                      "vm",
                                      R (&a),
                                      a.n,
                                      ACCT_SUMMARY_MAX,
                                      &err);
        char *want, *got;
        ck_assert_msg (f != NULL, "%s", err.text);
        ck_assert (strncmp (f, "JS1:", 4) == 0);
        want = b64_chars_of (js[i] + 4);
        got = b64_chars_of (f + 4);
        ck_assert_str_eq (got, want);
        ck_assert (acct_summary_has_node (f, "vm", R (&a), a.n));
        free (want);
        free (got);
        free (f);
    }
    free_recs (&a);
}
END_TEST

/* The old form, OTHER " AA== " base64 token, is read, and rewritten in
 * the new form on the next merge. */
START_TEST (test_old_form_read)
{
    struct recs a, b;
    pin_error_t err = {""};
    char *alone, *old, *f, *other = NULL;
    struct acct_summary *s = NULL;
    const char *o = others[1];

    make_recs (&a, 12, "vm", 2);
    make_recs (&b, 12, "vm-2", 1);
    alone =
        acct_summary_merge (NULL, "vm", R (&a), a.n, ACCT_SUMMARY_MAX, &err);
    ck_assert_msg (alone != NULL, "%s", err.text);
    ck_assert (
        strncmp (alone, ACCT_SUMMARY_PREFIX, strlen (ACCT_SUMMARY_PREFIX))
        == 0);
    ck_assert_int_gt (asprintf (&old, "%s%s%s", o, ACCT_SUMMARY_GUARD, alone),
                      0);
    ck_assert_int_eq (acct_summary_parse (old, &other, &s, &err), 0);
    ck_assert_str_eq (other, o);
    ck_assert_uint_eq (acct_summary_node_count (s), 1);
    ck_assert (acct_summary_has_node (old, "vm", R (&a), a.n));
    ck_assert (acct_summary_present (old));
    acct_summary_destroy (s);
    free (other);
    f = acct_summary_merge (old, "vm-2", R (&b), b.n, ACCT_SUMMARY_MAX, &err);
    ck_assert_msg (f != NULL, "%s", err.text);
    ck_assert (strncmp (f, o, strlen (o)) == 0);
    ck_assert (strncmp (f + strlen (o) + 1,
                        ACCT_SUMMARY_PREFIX_B16,
                        strlen (ACCT_SUMMARY_PREFIX_B16))
               == 0);
    ck_assert_ptr_null (strstr (f, ACCT_SUMMARY_GUARD));
    ck_assert (acct_summary_has_node (f, "vm", R (&a), a.n));
    ck_assert (acct_summary_has_node (f, "vm-2", R (&b), b.n));
    ck_assert (acct_summary_present (f));
    ck_assert (!acct_summary_present (o));
    ck_assert (!acct_summary_present (NULL));
    free (f);
    free (old);
    free (alone);
    free_recs (&a);
    free_recs (&b);
}
END_TEST

/* The bound holds for the whole field in the base-16 form too: a summary
 * that fits alone in base64 is cut to fit after other text. */
START_TEST (test_size_b16)
{
    struct recs a;
    pin_error_t err = {""};
    const char *o = others[0];
    char *alone, *f, *other = NULL;
    struct acct_summary *s = NULL;
    size_t max, n = 0;

    make_recs (&a, 100, "vm", 100);
    alone =
        acct_summary_merge (NULL, "vm", R (&a), a.n, ACCT_SUMMARY_MAX, &err);
    ck_assert_msg (alone != NULL, "%s", err.text);
    /* room for the other text and the base64 token, not for base 16 */
    max = strlen (o) + 1 + strlen (alone) + 16;
    f = acct_summary_merge (o, "vm", R (&a), a.n, max, &err);
    ck_assert_msg (f != NULL, "%s", err.text);
    printf (
        "# 100-step job after %zu bytes of other text: base64 alone %zu "
        "bytes, base 16 within %zu: %zu bytes\n",
        strlen (o),
        strlen (alone),
        max,
        strlen (f));
    ck_assert_uint_le (strlen (f), max);
    ck_assert (strncmp (f, o, strlen (o)) == 0);
    ck_assert_int_eq (acct_summary_parse (f, &other, &s, &err), 0);
    ck_assert_str_eq (other, o);
    ck_assert_uint_gt (acct_summary_truncated (s, "vm"), 0);
    acct_summary_foreach (s, count_cb, &n);
    ck_assert_uint_eq (n + acct_summary_truncated (s, "vm"), a.n);
    ck_assert (acct_summary_has_node (f, "vm", R (&a), a.n));
    acct_summary_destroy (s);
    free (other);
    free (f);
    /* with the default bound nothing is left out */
    f = acct_summary_merge (o, "vm", R (&a), a.n, ACCT_SUMMARY_MAX, &err);
    ck_assert_msg (f != NULL, "%s", err.text);
    ck_assert_int_eq (acct_summary_parse (f, &other, &s, &err), 0);
    ck_assert_uint_eq (acct_summary_truncated (s, "vm"), 0);
    ck_assert_uint_lt (strlen (f), 2 * strlen (alone) + strlen (o) + 16);
    acct_summary_destroy (s);
    free (other);
    free (f);
    free (alone);
    free_recs (&a);
}
END_TEST

START_TEST (test_size)
{
    struct recs a;
    char *f, *g;
    pin_error_t err = {""};
    size_t raw = 0;

    /* 100 steps + the job record on one node */
    make_recs (&a, 100, "vm", 100);
    for (size_t i = 0; i < a.n; i++)
        raw += strlen (a.r[i]) + 1;
    f = acct_summary_merge (NULL, "vm", R (&a), a.n, ACCT_SUMMARY_MAX, &err);
    ck_assert_msg (f != NULL, "%s", err.text);
    printf (
        "# 100-step job, 101 records: %zu bytes of JSON lines, field %zu "
        "bytes\n",
        raw,
        strlen (f));
    /* measured 2026-11: ~75 KB of records become well under 16 KB */
    ck_assert_uint_lt (strlen (f), 16384);
    ck_assert_uint_eq (acct_summary_has_node (f, "vm", R (&a), a.n), 1);
    /* a small bound: steps are left out, the job record stays */
    g = acct_summary_merge (NULL, "vm", R (&a), a.n, 3000, &err);
    ck_assert_msg (g != NULL, "%s", err.text);
    ck_assert_uint_le (strlen (g), 3000);
    {
        struct acct_summary *s = NULL;
        char *other = NULL;
        size_t n = 0;
        ck_assert_int_eq (acct_summary_parse (g, &other, &s, &err), 0);
        ck_assert_uint_gt (acct_summary_truncated (s, "vm"), 0);
        acct_summary_foreach (s, count_cb, &n);
        ck_assert_uint_eq (n + acct_summary_truncated (s, "vm"), a.n);
        acct_summary_destroy (s);
        free (other);
    }
    ck_assert (acct_summary_has_node (g, "vm", R (&a), a.n));
    free (g);
    /* too small even for the job record */
    errno = 0;
    g = acct_summary_merge (NULL, "vm", R (&a), a.n, 100, &err);
    ck_assert_ptr_null (g);
    ck_assert_int_eq (errno, ERANGE);
    ck_assert_ptr_nonnull (strstr (err.text, "does not fit"));
    free (f);
    free_recs (&a);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("summary");
    TCase *tc = tcase_create ("summary");

    tcase_set_timeout (tc, 30);
    tcase_add_test (tc, test_roundtrip_idempotent);
    tcase_add_test (tc, test_two_nodes);
    tcase_add_loop_test (tc,
                         test_other_text_kept,
                         0,
                         sizeof (others) / sizeof (others[0]));
    tcase_add_loop_test (tc,
                         test_garbage,
                         0,
                         sizeof (garbage) / sizeof (garbage[0]));
    tcase_add_test (tc, test_bomb);
    tcase_add_test (tc, test_bad_records);
    tcase_add_test (tc, test_jobstats_reads_its_own);
    tcase_add_test (tc, test_old_form_read);
    tcase_add_test (tc, test_size_b16);
    tcase_add_test (tc, test_size);
    suite_add_tcase (s, tc);
    return tap_run (s, NULL, 0);
}
