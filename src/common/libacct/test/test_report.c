/* test_report.c - per-group statistics (libacct/report.h) on known rows */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "libacct/report.h"
#include "libtest/tap.h"

static const struct {
    double v[8];
    size_t n;
    double q1, med, q3;
} q_cases[] = {
    {{0.1, 0.2, 0.3, 0.4}, 4, 0.175, 0.25, 0.325},
    {{0.5}, 1, 0.5, 0.5, 0.5},
    {{0.1, 0.9}, 2, 0.3, 0.5, 0.7},
    {{1, 2, 3, 4, 5}, 5, 2, 3, 4},
    {{0}, 0, -1, -1, -1},
};

START_TEST (test_quantile)
{
    ck_assert_double_eq_tol (acct_quantile (q_cases[_i].v,
                                            q_cases[_i].n,
                                            0.25),
                             q_cases[_i].q1,
                             1e-12);
    ck_assert_double_eq_tol (acct_quantile (q_cases[_i].v, q_cases[_i].n, 0.5),
                             q_cases[_i].med,
                             1e-12);
    ck_assert_double_eq_tol (acct_quantile (q_cases[_i].v,
                                            q_cases[_i].n,
                                            0.75),
                             q_cases[_i].q3,
                             1e-12);
}
END_TEST

static void add (struct acct_table *t,
                 uint32_t job,
                 uint32_t step,
                 const char *policy,
                 const char *user,
                 uint32_t cpus,
                 int64_t secs,
                 uint64_t user_us,
                 uint64_t sys_us)
{
    struct acct_record r;
    acct_record_init (&r);
    r.kind = ACCT_KIND_STEP;
    r.job_id = job;
    r.step_id = step;
    snprintf (r.node, sizeof (r.node), "n1");
    snprintf (r.policy, sizeof (r.policy), "%s", policy);
    snprintf (r.user, sizeof (r.user), "%s", user);
    snprintf (r.partition, sizeof (r.partition), "p");
    r.start_us = 1000000;
    r.end_us = r.start_us + secs * 1000000;
    r.alloc_cpus = cpus;
    r.user_usec = user_us;
    r.system_usec = sys_us;
    ck_assert_int_eq (acct_table_add (t, &r), 0);
}

START_TEST (test_by_policy)
{
    struct acct_table t;
    struct acct_report rep;

    acct_table_init (&t);
    /* numa-local: efficiencies 0.5, 1.0, 0.75 (2 CPUs x 100 s each) */
    add (&t, 1, 0, "numa-local", "alice", 2, 100, 90000000, 10000000);
    add (&t, 2, 0, "numa-local", "bob", 2, 100, 150000000, 50000000);
    add (&t, 3, 0, "numa-local", "bob", 2, 100, 150000000, 0);
    /* extern left out; none: one step at 0.25 */
    add (&t, 3, ACCT_STEP_EXTERN, "numa-local", "bob", 2, 100, 0, 0);
    add (&t, 4, 0, "", "alice", 4, 100, 100000000, 0);
    ck_assert_int_eq (acct_table_sort (&t), 0);
    ck_assert_int_eq (acct_report_build (&t, ACCT_BY_POLICY, false, &rep), 0);
    ck_assert_uint_eq (rep.ngroups, 2);
    struct acct_group *g = &rep.groups[0];
    ck_assert_str_eq (g->key, "none");
    ck_assert_uint_eq (g->nsteps, 1);
    ck_assert_double_eq_tol (g->median, 0.25, 1e-12);
    g = &rep.groups[1];
    ck_assert_str_eq (g->key, "numa-local");
    ck_assert_uint_eq (g->nsteps, 3);
    ck_assert_double_eq_tol (g->q1, 0.625, 1e-12);
    ck_assert_double_eq_tol (g->median, 0.75, 1e-12);
    ck_assert_double_eq_tol (g->q3, 0.875, 1e-12);
    ck_assert_double_eq_tol (acct_group_eff (g), 450.0 / 600.0, 1e-12);
    ck_assert_double_eq_tol (acct_group_sys_share (g), 60.0 / 450.0, 1e-12);
    acct_report_free (&rep);

    ck_assert_int_eq (acct_report_build (&t, ACCT_BY_POLICY, true, &rep), 0);
    ck_assert_uint_eq (rep.groups[1].nsteps, 4);
    ck_assert_double_eq_tol (rep.groups[1].q1, 0.375, 1e-12); /* 0,.5,.75,1 */
    acct_report_free (&rep);

    ck_assert_int_eq (acct_report_build (&t, ACCT_BY_USER, false, &rep), 0);
    ck_assert_uint_eq (rep.ngroups, 2);
    ck_assert_str_eq (rep.groups[0].key, "alice");
    ck_assert_uint_eq (rep.groups[0].nsteps, 2);
    ck_assert_str_eq (rep.groups[1].key, "bob");
    acct_report_free (&rep);
    acct_table_free (&t);
}
END_TEST

static const struct {
    const char *s;
    int rc;
} by_cases[] = {
    {"policy", 0},
    {"user", 0},
    {"partition", 0},
    {"Policy", -1},
    {"", -1},
    {"node", -1},
};

START_TEST (test_by_parse)
{
    enum acct_by by;
    pin_error_t e = {""};
    ck_assert_int_eq (acct_by_parse (by_cases[_i].s, &by, &e),
                      by_cases[_i].rc);
    if (by_cases[_i].rc)
        ck_assert_msg (strstr (e.text, "known: policy, user, partition"),
                       "%s",
                       e.text);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("report");
    TCase *tc = tcase_create ("core");
    tcase_add_loop_test (tc,
                         test_quantile,
                         0,
                         sizeof (q_cases) / sizeof (q_cases[0]));
    tcase_add_test (tc, test_by_policy);
    tcase_add_loop_test (tc,
                         test_by_parse,
                         0,
                         sizeof (by_cases) / sizeof (by_cases[0]));
    suite_add_tcase (s, tc);
    return tap_run (s, NULL, 0);
}
