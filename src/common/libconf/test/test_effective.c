/* test_effective.c - a step's effective settings (pin_conf_resolve) */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libconf/conf.h"
#include "libplace/place.h"
#include "libtest/tap.h"

static void conf_from (struct pin_conf *c, const char *text)
{
    char path[] = "/tmp/test_effective.XXXXXX";
    pin_error_t e = {""};
    int fd = mkstemp (path);

    ck_assert_int_ge (fd, 0);
    ck_assert_int_eq (write (fd, text, strlen (text)), (int)strlen (text));
    close (fd);
    pin_conf_defaults (c);
    ck_assert_msg (pin_conf_load_file (c, path, true, &e) == 0,
                   "%s: %s",
                   text,
                   e.text);
    unlink (path);
}

static const char *site =
    "DefaultPolicy=numa-local\n"
    "Profile=2s\n"
    "DynamicOveruse=1.5\n"
    "PartitionName=pilot ForcedPolicy=numa-spread Profile=no\n"
    "PartitionName=open AllowedPolicies=all DefaultPolicy=none\n"
    "PartitionName=dyn DynamicGrace=10s DynamicConfine=quota\n"
    "PartitionName=strict AllowedPolicies=numa-local,none\n";

#define NO -1 /* no --pin-policy; in profile: no --pin-profile */

static const struct ecase {
    const char *partitions;
    int asked;         /* policy number, or NO */
    long long profile; /* --pin-profile interval, or NO */
    int rc;
    const char *policy;
    enum pin_conf_source source;
    bool forced_over_option;
    bool defaults_differ;
    long long profile_us;
    long long grace_us;
    int confine;
} cases[] = {
    /* no partition known: the global rules */
    {NULL,
     NO,
     NO,
     0,
     "numa-local",
     PIN_CONF_FROM_SITE_DEFAULT,
     false,
     false,
     2000000,
     60000000,
     PIN_CONFINE_CPUSET},
    {"",
     PLACE_RANDOM,
     NO,
     0,
     "random",
     PIN_CONF_FROM_OPTION,
     false,
     false,
     2000000,
     60000000,
     PIN_CONFINE_CPUSET},
    /* a partition without a line: the global rules */
    {"batch",
     NO,
     500000,
     0,
     "numa-local",
     PIN_CONF_FROM_SITE_DEFAULT,
     false,
     false,
     500000,
     60000000,
     PIN_CONFINE_CPUSET},
    /* forced: asked for nothing, for the same, for another */
    {"pilot",
     NO,
     NO,
     0,
     "numa-spread",
     PIN_CONF_FROM_FORCED,
     false,
     false,
     0,
     60000000,
     PIN_CONFINE_CPUSET},
    {"pilot",
     PLACE_NUMA_SPREAD,
     NO,
     0,
     "numa-spread",
     PIN_CONF_FROM_OPTION,
     false,
     false,
     0,
     60000000,
     PIN_CONFINE_CPUSET},
    {"pilot",
     PLACE_NUMA_LOCAL,
     1000000,
     0,
     "numa-spread",
     PIN_CONF_FROM_FORCED,
     true,
     false,
     1000000,
     60000000,
     PIN_CONFINE_CPUSET},
    /* the partition's default, and a line that keeps the global one */
    {"open",
     NO,
     NO,
     0,
     "none",
     PIN_CONF_FROM_PARTITION_DEFAULT,
     false,
     false,
     2000000,
     60000000,
     PIN_CONFINE_CPUSET},
    {"dyn",
     NO,
     NO,
     0,
     "numa-local",
     PIN_CONF_FROM_PARTITION_DEFAULT,
     false,
     false,
     2000000,
     10000000,
     PIN_CONFINE_QUOTA},
    {"dyn",
     PLACE_DYNAMIC,
     0,
     0,
     "dynamic",
     PIN_CONF_FROM_OPTION,
     false,
     false,
     0,
     10000000,
     PIN_CONFINE_QUOTA},
    /* lists: the first partition's rules, differences flagged */
    {"open,batch",
     NO,
     NO,
     0,
     "none",
     PIN_CONF_FROM_PARTITION_DEFAULT,
     false,
     true,
     2000000,
     60000000,
     PIN_CONFINE_CPUSET},
    {"batch,strict",
     NO,
     NO,
     0,
     "numa-local",
     PIN_CONF_FROM_PARTITION_DEFAULT,
     false,
     false,
     2000000,
     60000000,
     PIN_CONFINE_CPUSET},
    {"pilot,batch",
     NO,
     NO,
     -1,
     "numa-spread",
     PIN_CONF_FROM_FORCED,
     false,
     false,
     0,
     60000000,
     PIN_CONFINE_CPUSET},
};

START_TEST (test_resolve)
{
    const struct ecase *tc = &cases[_i];
    struct pin_conf c;
    struct pin_conf_request req = {
        .partitions = tc->partitions,
        .policy_given = tc->asked != NO,
        .policy = tc->asked,
        .profile_given = tc->profile != NO,
        .profile_us = tc->profile,
    };
    struct pin_conf_effective eff;
    pin_error_t e = {""};
    enum place_policy want;

    conf_from (&c, site);
    ck_assert_int_eq (place_policy_parse (tc->policy, &want, NULL), 0);
    errno = 0;
    ck_assert_int_eq (pin_conf_resolve (&c, &req, &eff, &e), tc->rc);
    if (tc->rc < 0) {
        ck_assert_int_eq (errno, EINVAL);
        ck_assert_str_eq (e.text,
                          "partitions pilot,batch: their pin.conf "
                          "ForcedPolicy differs; submit to one partition");
        return;
    }
    ck_assert_msg (eff.policy == (int)want,
                   "%s: policy %d, want %s",
                   tc->partitions,
                   eff.policy,
                   tc->policy);
    ck_assert_int_eq (eff.source, tc->source);
    ck_assert (eff.forced_over_option == tc->forced_over_option);
    ck_assert (eff.defaults_differ == tc->defaults_differ);
    ck_assert_int_eq (eff.profile_us, tc->profile_us);
    ck_assert_int_eq (eff.rules.dynamic_grace_us, tc->grace_us);
    ck_assert_int_eq (eff.rules.dynamic_confine, tc->confine);
    ck_assert (eff.rules.dynamic_overuse == 1.5);
    ck_assert (!eff.verbose);
}
END_TEST

/* The list's allowed policies are those of every partition. */
START_TEST (test_allowed_intersection)
{
    struct pin_conf c;
    struct pin_conf_request req = {.partitions = "open,strict"};
    struct pin_conf_effective eff;

    conf_from (&c, site);
    ck_assert_int_eq (pin_conf_resolve (&c, &req, &eff, NULL), 0);
    ck_assert_uint_eq (eff.rules.allowed_policies,
                       (1u << PLACE_NUMA_LOCAL) | (1u << PLACE_NONE));
    ck_assert (eff.rules.from_partition);
}
END_TEST

START_TEST (test_verbose)
{
    struct pin_conf c;
    struct pin_conf_request req = {.policy_given = true,
                                   .policy = PLACE_NONE,
                                   .verbose = true};
    struct pin_conf_effective eff;

    conf_from (&c, site);
    ck_assert_int_eq (pin_conf_resolve (&c, &req, &eff, NULL), 0);
    ck_assert (eff.verbose);
    req.verbose = false;
    ck_assert_int_eq (pin_conf_resolve (&c, &req, &eff, NULL), 0);
    ck_assert (!eff.verbose);
    conf_from (&c, "Verbose=yes\n");
    ck_assert_int_eq (pin_conf_resolve (&c, &req, &eff, NULL), 0);
    ck_assert (eff.verbose);
}
END_TEST

/* pin_conf_narrow: a reader of the conf sees the partition's values of
 * the per-partition keys, and the global ones of the others. */
START_TEST (test_narrow)
{
    struct pin_conf c;
    struct pin_conf_request req = {.partitions = "dyn"};
    struct pin_conf_effective eff;

    conf_from (&c, site);
    ck_assert_int_eq (pin_conf_resolve (&c, &req, &eff, NULL), 0);
    pin_conf_narrow (&c, &eff.rules);
    ck_assert_int_eq (c.dynamic_grace_us, 10000000);
    ck_assert_int_eq (c.dynamic_confine, PIN_CONFINE_QUOTA);
    ck_assert_int_eq (c.dynamic_interval_us, 5000000);
    ck_assert (c.dynamic_overuse == 1.5);
    ck_assert_int_eq (c.profile_us, 2000000);
    ck_assert_str_eq (c.state_dir, "/run/slurm-pin");
}
END_TEST

START_TEST (test_source_names)
{
    ck_assert_str_eq (pin_conf_source_name (PIN_CONF_FROM_OPTION),
                      "--pin-policy");
    ck_assert_str_eq (pin_conf_source_name (PIN_CONF_FROM_SITE_DEFAULT),
                      "pin.conf DefaultPolicy");
    ck_assert_str_eq (pin_conf_source_name (PIN_CONF_FROM_PARTITION_DEFAULT),
                      "the partition's default");
    ck_assert_str_eq (pin_conf_source_name (PIN_CONF_FROM_FORCED),
                      "forced by the partition");
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("effective");
    TCase *tc = tcase_create ("effective");

    tcase_add_loop_test (tc,
                         test_resolve,
                         0,
                         (int)(sizeof (cases) / sizeof (cases[0])));
    tcase_add_test (tc, test_allowed_intersection);
    tcase_add_test (tc, test_verbose);
    tcase_add_test (tc, test_narrow);
    tcase_add_test (tc, test_source_names);
    suite_add_tcase (s, tc);
    return tap_run (s, NULL, 0);
}
