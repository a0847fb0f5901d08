/* test/phase.c - the per-phase timer */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "libtest/tap.h"
#include "libutil/phase.h"

/* Burn some CPU time in this thread (into a volatile global: not
 * optimized away, and no set-but-unused local for gcc 16 to warn of). */
static volatile unsigned long spin_sink;

static void spin (long iters)
{
    for (long i = 0; i < iters; i++)
        spin_sink += (unsigned long)i * 2654435761u;
}

START_TEST (test_phases)
{
    struct phases p;
    char buf[256];
    long sum = 0;

    phase_start (&p);
    spin (2000000);
    phase_mark (&p, "first");
    phase_mark (&p, "empty");
    spin (4000000);
    phase_mark (&p, "second");
    ck_assert_uint_eq (p.n, 3);
    ck_assert_str_eq (p.name[0], "first");
    ck_assert_str_eq (p.name[2], "second");
    for (unsigned i = 0; i < p.n; i++) {
        ck_assert_int_ge (p.cpu_us[i], 0);
        ck_assert_int_ge (p.wall_us[i], 0);
        sum += p.cpu_us[i];
    }
    /* spinning costs CPU time; the phases add up to the total */
    ck_assert_int_gt (p.cpu_us[0], 0);
    ck_assert_int_gt (p.cpu_us[2], 0);
    ck_assert_int_eq (sum, phase_total_cpu_us (&p));
    ck_assert_int_ge (phase_total_wall_us (&p), 0);
    phase_format (&p, buf, sizeof (buf));
    ck_assert_msg (strncmp (buf, "first ", 6) == 0, "%s", buf);
    ck_assert_msg (strstr (buf, ", empty ") && strstr (buf, ", second ")
                       && strstr (buf, "; total ")
                       && strstr (buf, " us CPU, "),
                   "%s",
                   buf);
    /* truncation never overruns */
    ck_assert_ptr_eq (phase_format (&p, buf, 8), buf);
    ck_assert_uint_eq (strlen (buf), 7);
}
END_TEST

START_TEST (test_overflow)
{
    struct phases p;
    char buf[1024];

    phase_start (&p);
    for (int i = 0; i < PHASE_MAX + 5; i++)
        phase_mark (&p, i < PHASE_MAX - 1 ? "x" : "rest");
    ck_assert_uint_eq (p.n, PHASE_MAX);
    ck_assert_str_eq (p.name[PHASE_MAX - 1], "rest");
    phase_format (&p, buf, sizeof (buf));
    ck_assert_msg (strstr (buf, "rest ") != NULL, "%s", buf);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("phase");
    TCase *tc = tcase_create ("phase");

    tcase_add_test (tc, test_phases);
    tcase_add_test (tc, test_overflow);
    suite_add_tcase (s, tc);
    return tap_run (s, NULL, 0);
}
