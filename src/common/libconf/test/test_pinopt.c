/* test_pinopt.c - the --pin-policy value and other untrusted strings */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "libconf/pinopt.h"
#include "libplace/place.h"
#include "libtest/tap.h"

static const struct {
    const char *value;
    int policy;
    bool verbose;
} good[] = {
    {"numa-local", PLACE_NUMA_LOCAL, false},
    {"numa-spread", PLACE_NUMA_SPREAD, false},
    {"cache-shared", PLACE_CACHE_SHARED, false},
    {"random", PLACE_RANDOM, false},
    {"none", PLACE_NONE, false},
    {"numa-local,verbose", PLACE_NUMA_LOCAL, true},
    {"none,verbose", PLACE_NONE, true},
    {"random,verbose,verbose", PLACE_RANDOM, true},
};

START_TEST (test_good)
{
    struct pin_option o = {.policy = -1};
    pin_error_t e = {""};

    ck_assert_msg (pinopt_parse (good[_i].value, &o, &e) == 0,
                   "%s: %s",
                   good[_i].value,
                   e.text);
    ck_assert_int_eq (o.policy, good[_i].policy);
    ck_assert (o.verbose == good[_i].verbose);
    ck_assert (!o.nic);
}
END_TEST

/* ,nic and ,nic=NAME (issue 24) */
static const struct {
    const char *value;
    bool verbose;
    const char *nic; /* NULL: no nic flag */
} nics[] = {
    {"numa-local,nic", false, ""},
    {"numa-local,nic=mlx5_0", false, "mlx5_0"},
    {"cache-shared,verbose,nic=0000:3b:00.0", true, "0000:3b:00.0"},
    {"numa-local,nic=eth0,nic", false, ""},
    {"numa-local,nic=1,verbose", true, "1"},
    {"numa-local,verbose", true, NULL},
};

START_TEST (test_nic)
{
    struct pin_option o = {.policy = -1};
    pin_error_t e = {""};

    ck_assert_msg (pinopt_parse (nics[_i].value, &o, &e) == 0,
                   "%s: %s",
                   nics[_i].value,
                   e.text);
    ck_assert (o.verbose == nics[_i].verbose);
    ck_assert (o.nic == (nics[_i].nic != NULL));
    if (nics[_i].nic)
        ck_assert_str_eq (o.nic_name, nics[_i].nic);
}
END_TEST

static const char *const bad_nics[] = {
    "numa-local,nic=",
    "numa-local,nic=eth0;rm",
    "numa-local,nic=../../etc",
    "numa-local,nic=a b",
    "numa-local,nic=0123456789012345678901234567890123",
    "numa-local,nics",
};

START_TEST (test_bad_nic)
{
    struct pin_option o = {.policy = 42};
    pin_error_t e = {""};

    ck_assert_int_eq (pinopt_parse (bad_nics[_i], &o, &e), -1);
    ck_assert_int_eq (o.policy, 42);
    ck_assert_msg (strstr (e.text, bad_nics[_i]) && strstr (e.text, "nic")
                       && !strchr (e.text, '\n'),
                   "%s",
                   e.text);
}
END_TEST

/* Each bad value: the whole message, which names the value and what is
 * valid, on one line. */
#define KNOWN "numa-local, numa-spread, cache-shared, random, dynamic, none"
static const struct {
    const char *value;
    const char *message;
} bad[] = {
    {"numa-locl",
     "--pin-policy=numa-locl: unknown policy 'numa-locl'; known: " KNOWN},
    {"",
     "--pin-policy=: empty value; use POLICY[,verbose][,nic[=NAME]] with POLICY one "
     "of: " KNOWN},
    {"NUMA-LOCAL",
     "--pin-policy=NUMA-LOCAL: unknown policy 'NUMA-LOCAL'; known: " KNOWN},
    {",verbose", "--pin-policy=,verbose: unknown policy ''; known: " KNOWN},
    {"numa-local,loud",
     "--pin-policy=numa-local,loud: unknown flag 'loud'; use "
     "POLICY[,verbose][,nic[=NAME]] with POLICY one of: " KNOWN},
    {"numa-local,",
     "--pin-policy=numa-local,: empty flag after ','; use POLICY[,verbose][,nic[=NAME]] "
     "with POLICY one of: " KNOWN},
    {"numa-local,,verbose",
     "--pin-policy=numa-local,,verbose: unknown flag ''; use "
     "POLICY[,verbose][,nic[=NAME]] with POLICY one of: " KNOWN},
    {"verbose,numa-local",
     "--pin-policy=verbose,numa-local: unknown policy 'verbose'; "
     "known: " KNOWN},
    {"numa-local verbose",
     "--pin-policy=numa-local verbose: unknown policy 'numa-local verbose'; "
     "known: " KNOWN},
    {"rand\n\033[2J",
     "--pin-policy=rand??[2J: unknown policy 'rand??[2J'; known: " KNOWN},
    {"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
     "--pin-policy=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
     "xxxxxxxx...: value longer than 64 characters; known policies: " KNOWN},
};

START_TEST (test_bad)
{
    struct pin_option o = {.policy = 42, .verbose = true};
    pin_error_t e = {""};

    errno = 0;
    ck_assert_int_eq (pinopt_parse (bad[_i].value, &o, &e), -1);
    ck_assert_int_eq (errno, EINVAL);
    ck_assert_str_eq (e.text, bad[_i].message);
    ck_assert_ptr_null (strchr (e.text, '\n'));
    /* untouched on failure */
    ck_assert_int_eq (o.policy, 42);
    ck_assert (o.verbose);
}
END_TEST

START_TEST (test_null)
{
    struct pin_option o;
    pin_error_t e = {""};

    ck_assert_int_eq (pinopt_parse (NULL, &o, &e), -1);
    ck_assert_ptr_nonnull (strstr (e.text, "--pin-policy=(null): empty"));
}
END_TEST

/* srun rewrites an inherited mask: the same binding */
START_TEST (test_cpu_bind_same)
{
    ck_assert (
        pinopt_cpu_bind_same ("quiet,mask_cpu:0x1", "quiet,mask_cpu:1"));
    ck_assert (pinopt_cpu_bind_same ("quiet,mask_cpu:0x0F,0x30",
                                     "quiet,mask_cpu:f,30"));
    ck_assert (
        pinopt_cpu_bind_same ("quiet,map_cpu:0,1", "quiet,map_cpu:0,1"));
    ck_assert (
        !pinopt_cpu_bind_same ("quiet,mask_cpu:0x1", "quiet,mask_cpu:2"));
    ck_assert (
        !pinopt_cpu_bind_same ("quiet,mask_cpu:1", "verbose,mask_cpu:1"));
    ck_assert (!pinopt_cpu_bind_same ("quiet,map_cpu:0,1", "quiet,map_cpu:0"));
    ck_assert (
        !pinopt_cpu_bind_same ("quiet,map_cpu:0:1", "quiet,map_cpu:0,1"));
    ck_assert (!pinopt_cpu_bind_same (NULL, "quiet"));
    ck_assert (!pinopt_cpu_bind_same ("quiet", NULL));
    ck_assert (pinopt_cpu_bind_same ("", ""));
}
END_TEST

/* Slurm 22.05 hands "--pin-profile" without a value on as "(null)" */
START_TEST (test_slurm_optarg)
{
    ck_assert_ptr_null (pinopt_slurm_optarg (NULL));
    ck_assert_ptr_null (pinopt_slurm_optarg ("(null)"));
    ck_assert_str_eq (pinopt_slurm_optarg ("2s"), "2s");
    ck_assert_str_eq (pinopt_slurm_optarg (""), "");
    ck_assert_str_eq (pinopt_slurm_optarg ("(null)x"), "(null)x");
}
END_TEST

static const struct {
    const char *in;
    size_t max;
    size_t n;
    const char *out;
} quotes[] = {
    {"abc", 64, 100, "abc"},
    {NULL, 64, 100, "(null)"},
    {"a\tb\x7f"
     "c\xff",
     64,
     100,
     "a?b?c?"},
    {"abcdef", 3, 100, "abc..."},
    {"abcdef", 64, 4, "abc"}, /* buffer bound, no room for ... */
    {"abcdef", 64, 1, ""},
};

START_TEST (test_quote)
{
    char buf[100];

    memset (buf, 'Z', sizeof (buf));
    ck_assert_str_eq (pinopt_quote (quotes[_i].in,
                                    quotes[_i].max,
                                    buf,
                                    quotes[_i].n),
                      quotes[_i].out);
}
END_TEST

static const struct {
    const char *type;
    bool conflict;
} binds[] = {
    {NULL, false},
    {"", false},
    {"none", false},
    {"cores", false},
    {"threads", false},
    {"sockets", false},
    {"rank", false},
    {"rank_ldom", false},
    {"cores,rank", false},
    {"map_cpu:", true},
    {"mask_cpu:", true},
    {"threads,map_ldom:", true},
    {"mask_ldom:", true},
};

START_TEST (test_cpu_bind)
{
    ck_assert_msg (pinopt_cpu_bind_conflicts (binds[_i].type)
                       == binds[_i].conflict,
                   "%s",
                   binds[_i].type ? binds[_i].type : "(null)");
}
END_TEST

/* The seed is a fixed function: the same ids give the same seed on every
 * node and every run, and neighbouring steps and jobs differ.  The pinned
 * values were computed outside this code (splitmix64 of job << 32 | step,
 * in Python), so they catch a change of the function, of the order of job
 * and step, or of how the two are combined. */
START_TEST (test_seed)
{
    ck_assert_uint_ne (pinopt_seed (42, 0), pinopt_seed (42, 1));
    ck_assert_uint_ne (pinopt_seed (42, 0), pinopt_seed (43, 0));
    ck_assert_uint_ne (pinopt_seed (0, 1), pinopt_seed (1, 0));
    /* pinned values: changing them breaks `slurm-pin plan --seed` replays */
    ck_assert_uint_eq (pinopt_seed (0, 0), 0xe220a8397b1dcdafULL);
    ck_assert_uint_eq (pinopt_seed (42, 0), 0xea67e2f1beabdfbbULL);
    ck_assert_uint_eq (pinopt_seed (42, 7), 0x2c582b9e1961250fULL);
    ck_assert_uint_eq (pinopt_seed (UINT32_MAX, UINT32_MAX),
                       0xe4d971771b652c20ULL);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("pinopt");
    TCase *tc = tcase_create ("pinopt");

    tcase_add_loop_test (tc, test_good, 0, sizeof (good) / sizeof (good[0]));
    tcase_add_loop_test (tc, test_nic, 0, (int)(sizeof (nics) / sizeof (nics[0])));
    tcase_add_loop_test (tc,
                         test_bad_nic,
                         0,
                         (int)(sizeof (bad_nics) / sizeof (bad_nics[0])));
    tcase_add_loop_test (tc, test_bad, 0, sizeof (bad) / sizeof (bad[0]));
    tcase_add_test (tc, test_null);
    tcase_add_test (tc, test_slurm_optarg);
    tcase_add_test (tc, test_cpu_bind_same);
    tcase_add_loop_test (tc,
                         test_quote,
                         0,
                         sizeof (quotes) / sizeof (quotes[0]));
    tcase_add_loop_test (tc,
                         test_cpu_bind,
                         0,
                         sizeof (binds) / sizeof (binds[0]));
    tcase_add_test (tc, test_seed);
    suite_add_tcase (s, tc);
    return tap_run (s, NULL, 0);
}
