/* test_conf.c - unit tests for the pin.conf / plugstack argument parser */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libconf/conf.h"
#include "libplace/place.h"
#include "libtest/tap.h"

static char tmpdir[256];
static char cfile[300];

static void setup (void)
{
    snprintf (tmpdir,
              sizeof (tmpdir),
              "%s/test_conf.XXXXXX",
              getenv ("TMPDIR") ? getenv ("TMPDIR") : "/tmp");
    ck_assert_ptr_nonnull (mkdtemp (tmpdir));
    snprintf (cfile, sizeof (cfile), "%s/pin.conf", tmpdir);
}

static void teardown (void)
{
    char path[320];
    snprintf (path, sizeof (path), "%s/pin.conf", tmpdir);
    unlink (path);
    snprintf (path, sizeof (path), "%s/fifo", tmpdir);
    unlink (path);
    snprintf (path, sizeof (path), "%s/dir", tmpdir);
    rmdir (path);
    rmdir (tmpdir);
}

/* Write `len` bytes of text to cfile. */
static void write_conf_len (const char *text, size_t len)
{
    FILE *f = fopen (cfile, "w");
    ck_assert_ptr_nonnull (f);
    ck_assert_uint_eq (fwrite (text, 1, len, f), len);
    ck_assert_int_eq (fclose (f), 0);
}

static void write_conf (const char *text)
{
    write_conf_len (text, strlen (text));
}

static int policy (const char *name)
{
    enum place_policy p;
    pin_error_t e;
    ck_assert_msg (place_policy_parse (name, &p, &e) == 0, "%s", e.text);
    return (int)p;
}

/* ---- defaults ------------------------------------------------------------
 */

START_TEST (test_defaults)
{
    struct pin_conf c;
    pin_conf_defaults (&c);
    ck_assert_int_eq (c.default_policy, policy ("none"));
    ck_assert_uint_eq (c.allowed_policies, PIN_CONF_ALLOW_ALL);
    ck_assert_str_eq (c.cgroup_root, "auto");
    ck_assert_str_eq (c.cgroup_base, "slurm-pin");
    ck_assert_str_eq (c.topology_cache, "/var/cache/slurm-pin/topology.xml");
    ck_assert_str_eq (c.state_dir, "/run/slurm-pin");
    ck_assert (!c.verbose);
    ck_assert (c.oversubscribe); /* never fail what Slurm runs */
    ck_assert (c.share_with_steps);
    ck_assert (c.accounting);
    ck_assert_str_eq (c.journal_dir, "/var/lib/slurm-pin/journal");
    ck_assert_uint_eq (c.journal_max_size, 64ull << 20);
    ck_assert_str_eq (c.path, "");
    ck_assert (pin_conf_policy_allowed (&c, policy ("numa-local")));
    ck_assert (pin_conf_policy_allowed (&c, policy ("random")));
    ck_assert (!pin_conf_policy_allowed (&c, -1));
    ck_assert (!pin_conf_policy_allowed (NULL, 0));
}
END_TEST

/* ---- good files ------------------------------------------------------------
 */

enum field {
    F_DEFAULT,
    F_ALLOWED,
    F_ROOT,
    F_BASE,
    F_CACHE,
    F_STATE,
    F_VERBOSE,
    F_OVERSUB,
    F_SHARE,
    F_ACCT,
    F_JDIR,
    F_JMAX,
    F_DYNAMIC
};

static void check_field (const struct pin_conf *c,
                         enum field f,
                         const char *want,
                         const char *text)
{
    switch (f) {
        case F_DEFAULT:
            ck_assert_msg (c->default_policy == policy (want),
                           "[%s] default_policy %d, want %s",
                           text,
                           c->default_policy,
                           want);
            break;
        case F_ALLOWED: {
            /* want: "all" or a comma list of names */
            unsigned mask = 0;
            char buf[256], *tok, *save = NULL;
            if (strcmp (want, "all") == 0)
                mask = PIN_CONF_ALLOW_ALL;
            else {
                snprintf (buf, sizeof (buf), "%s", want);
                for (tok = strtok_r (buf, ",", &save); tok;
                     tok = strtok_r (NULL, ",", &save))
                    mask |= 1u << policy (tok);
            }
            ck_assert_msg (c->allowed_policies == mask,
                           "[%s] allowed 0x%x, want 0x%x",
                           text,
                           c->allowed_policies,
                           mask);
            break;
        }
        case F_ROOT:
            ck_assert_str_eq (c->cgroup_root, want);
            break;
        case F_BASE:
            ck_assert_str_eq (c->cgroup_base, want);
            break;
        case F_CACHE:
            ck_assert_str_eq (c->topology_cache, want);
            break;
        case F_STATE:
            ck_assert_str_eq (c->state_dir, want);
            break;
        case F_VERBOSE:
            ck_assert_msg (c->verbose == (strcmp (want, "yes") == 0),
                           "[%s] verbose %d, want %s",
                           text,
                           c->verbose,
                           want);
            break;
        case F_OVERSUB:
            ck_assert_msg (c->oversubscribe == (strcmp (want, "allow") == 0),
                           "[%s] oversubscribe %d, want %s",
                           text,
                           c->oversubscribe,
                           want);
            break;
        case F_SHARE:
            ck_assert_msg (c->share_with_steps
                               == (strcmp (want, "allow") == 0),
                           "[%s] share_with_steps %d, want %s",
                           text,
                           c->share_with_steps,
                           want);
            break;
        case F_ACCT:
            ck_assert_msg (c->accounting == (strcmp (want, "yes") == 0),
                           "[%s] accounting %d, want %s",
                           text,
                           c->accounting,
                           want);
            break;
        case F_JDIR:
            ck_assert_str_eq (c->journal_dir, want);
            break;
        case F_JMAX:
            ck_assert_msg (c->journal_max_size == strtoull (want, NULL, 10),
                           "[%s] journal_max_size %llu, want %s",
                           text,
                           c->journal_max_size,
                           want);
            break;
        case F_DYNAMIC: {
            /* want: "OVERUSE GRACE_US INTERVAL_US cpuset|quota" */
            char got[128];
            snprintf (got,
                      sizeof (got),
                      "%g %lld %lld %s",
                      c->dynamic_overuse,
                      c->dynamic_grace_us,
                      c->dynamic_interval_us,
                      c->dynamic_confine == PIN_CONFINE_QUOTA ? "quota"
                                                              : "cpuset");
            ck_assert_msg (strcmp (got, want) == 0,
                           "[%s] dynamic %s, want "
                           "%s",
                           text,
                           got,
                           want);
            break;
        }
    }
}

static const struct good_case {
    const char *text;
    enum field field;
    const char *want;
} good_cases[] = {
    {"DefaultPolicy=numa-local\n", F_DEFAULT, "numa-local"},
    {"defaultpolicy=numa-spread\n", F_DEFAULT, "numa-spread"},
    {"  DEFAULTPOLICY  =  cache-shared   \n", F_DEFAULT, "cache-shared"},
    {"\tDefaultPolicy\t=\trandom\t# trailing comment\n", F_DEFAULT, "random"},
    {"DefaultPolicy=none", F_DEFAULT, "none"}, /* no final newline */
    {"# comment\n\n   \nDefaultPolicy=random\n#x=y\n", F_DEFAULT, "random"},
    {"AllowedPolicies=all\n", F_ALLOWED, "all"},
    {"AllowedPolicies=ALL\n", F_ALLOWED, "all"},
    {"AllowedPolicies=none,numa-local\n", F_ALLOWED, "none,numa-local"},
    {"AllowedPolicies = none , random , cache-shared\n",
     F_ALLOWED,
     "none,random,cache-shared"},
    {"DefaultPolicy=random\nAllowedPolicies=random\n", F_ALLOWED, "random"},
    {"AllowedPolicies=random\nDefaultPolicy=random\n", F_DEFAULT, "random"},
    {"CgroupRoot=auto\n", F_ROOT, "auto"},
    {"CgroupRoot=AUTO\n", F_ROOT, "auto"},
    {"CgroupRoot=/sys/fs/cgroup\n", F_ROOT, "/sys/fs/cgroup"},
    {"cgrouproot=/sys/fs/cgroup/unified/\n",
     F_ROOT,
     "/sys/fs/cgroup/unified/"},
    {"CgroupBase=slurm-pin\n", F_BASE, "slurm-pin"},
    {"CgroupBase=Pin_2.x-y\n", F_BASE, "Pin_2.x-y"},
    {"CgroupBase=..a\n", F_BASE, "..a"},
    {"TopologyCache=/var/tmp/topo.xml\n", F_CACHE, "/var/tmp/topo.xml"},
    {"TopologyCache=/a..b/c.d/x.xml\n", F_CACHE, "/a..b/c.d/x.xml"},
    {"StateDir=/run/pin\n", F_STATE, "/run/pin"},
    {"StateDir=/\n", F_STATE, "/"},
    {"Verbose=yes\n", F_VERBOSE, "yes"},
    {"Verbose=TRUE\n", F_VERBOSE, "yes"},
    {"Verbose=1\n", F_VERBOSE, "yes"},
    {"Verbose=yes\n", F_VERBOSE, "yes"},
    {"Verbose=no\n", F_VERBOSE, "no"},
    {"Verbose=False\n", F_VERBOSE, "no"},
    {"Verbose=0\n", F_VERBOSE, "no"},
    {"StateDir=/run/a=b\n", F_STATE, "/run/a=b"},
    {"Oversubscribe=refuse\n", F_OVERSUB, "refuse"},
    {"oversubscribe = REFUSE # srun -O fails\n", F_OVERSUB, "refuse"},
    {"Oversubscribe=allow\n", F_OVERSUB, "allow"},
    {"ShareWithSteps=refuse\n", F_SHARE, "refuse"},
    {"sharewithsteps=Allow\n", F_SHARE, "allow"},
    {"Oversubscribe=refuse\n", F_SHARE, "allow"}, /* independent */
    {"ShareWithSteps=refuse\n", F_OVERSUB, "allow"},
    {"\n\n\n\n\n\n\n\nStateDir=/x\n\n", F_STATE, "/x"},
    {"Accounting=no\n", F_ACCT, "no"},
    {"accounting = YES\n", F_ACCT, "yes"},
    {"Verbose=yes\n", F_ACCT, "yes"}, /* independent */
    {"Accounting=no\nVerbose=yes\n", F_VERBOSE, "yes"},
    {"JournalDir=/var/tmp/j\n", F_JDIR, "/var/tmp/j"},
    {"\n", F_JDIR, "/var/lib/slurm-pin/journal"},
    {"JournalMaxSize=4096\n", F_JMAX, "4096"},
    {"JournalMaxSize=0\n", F_JMAX, "0"},
    {"JournalMaxSize=64M\n", F_JMAX, "67108864"},
    {"JournalMaxSize=2g\n", F_JMAX, "2147483648"},
    {"JournalMaxSize=8K\n", F_JMAX, "8192"},
    {"\n", F_JMAX, "67108864"},
    {"Verbose=no\n", F_DYNAMIC, "1.2 60000000 5000000 cpuset"},
    {"DynamicOveruse=1.5\nDynamicGrace=4\nDynamicInterval=1s\n",
     F_DYNAMIC,
     "1.5 4000000 1000000 cpuset"},
    {"dynamicgrace=500ms\nDynamicInterval=0.25\nDynamicConfine=QUOTA\n",
     F_DYNAMIC,
     "1.2 500000 250000 quota"},
    {"DynamicGrace=2m\n", F_DYNAMIC, "1.2 120000000 5000000 cpuset"},
    {"DynamicGrace=0\nDynamicConfine=cpuset\n",
     F_DYNAMIC,
     "1.2 0 5000000 cpuset"},
    {"DefaultPolicy=dynamic\n", F_DEFAULT, "dynamic"},
};

START_TEST (test_good)
{
    const struct good_case *gc = &good_cases[_i];
    struct pin_conf c;
    pin_error_t e = {""};

    pin_conf_defaults (&c);
    c.verbose = strcmp (gc->want, "no") == 0; /* see it change */
    write_conf (gc->text);
    ck_assert_msg (pin_conf_load_file (&c, cfile, true, &e) == 0,
                   "[%s]: %s",
                   gc->text,
                   e.text);
    check_field (&c, gc->field, gc->want, gc->text);
    ck_assert_str_eq (c.path, cfile);
}
END_TEST

/* ---- bad files -------------------------------------------------------------
 */

static const struct bad_case {
    const char *text;
    int line;        /* expected line number in the message */
    const char *err; /* expected text after "FILE:LINE: " */
} bad_cases[] = {
    {"DefaultPolicy=numa-locl\n",
     1,
     "DefaultPolicy=numa-locl: unknown policy 'numa-locl'; known: "},
    {"DefaultPolicy=\n",
     1,
     "DefaultPolicy=: empty value; give a value or leave the key out "
     "(default: none)"},
    {"DefaultPolicy = # nothing\n", 1, "DefaultPolicy=: empty value"},
    {"DynamicOveruse=1\n",
     1,
     "DynamicOveruse=1: not a factor above 1; "
     "give e.g. 1.2 (20% over the allocated CPUs), at most 1000"},
    {"DynamicOveruse=1.2x\n", 1, "DynamicOveruse=1.2x: not a factor"},
    {"DynamicOveruse=-2\n", 1, "DynamicOveruse=-2: not a factor"},
    {"DynamicOveruse=nan\n", 1, "DynamicOveruse=nan: not a factor"},
    {"DynamicGrace=ten\n",
     1,
     "DynamicGrace=ten: not a duration; give "
     "seconds, e.g. 60, 60s, 500ms or 2m"},
    {"DynamicGrace=-1\n", 1, "DynamicGrace=-1: not a duration"},
    {"DynamicGrace=5h\n", 1, "DynamicGrace=5h: not a duration"},
    {"DynamicGrace=2000m\n",
     1,
     "DynamicGrace=2000m: out of range; give "
     "0ms to 86400s"},
    {"DynamicInterval=10ms\n",
     1,
     "DynamicInterval=10ms: out of range; "
     "give 100ms to 3600s"},
    {"DynamicInterval=\n",
     1,
     "DynamicInterval=: empty value; give a "
     "value or leave the key out (default: 5s)"},
    {"DynamicConfine=affinity\n",
     1,
     "DynamicConfine=affinity: expected cpuset or quota"},
    {"DynamicGrace=1\nDynamicGrace=2\n",
     2,
     "DynamicGrace=2: DynamicGrace already set ("},
    {"# header\n\nDefaultPolicy=dynamic-x\n",
     3,
     "DefaultPolicy=dynamic-x: unknown policy"},
    {"AllowedPolicies=numa-local,,random\n",
     1,
     "AllowedPolicies=numa-local,,random: empty item in the list"},
    {"AllowedPolicies=numa-local,\n", 1, "empty item in the list"},
    {"AllowedPolicies=,numa-local\n", 1, "empty item in the list"},
    {"AllowedPolicies=numa-local, ,none\n", 1, "empty item in the list"},
    {"AllowedPolicies=none,bogus\n",
     1,
     "AllowedPolicies=none,bogus: unknown policy 'bogus'; known: "},
    {"AllowedPolicies=numa-local\n",
     1,
     "DefaultPolicy=none is not in AllowedPolicies=numa-local; choose an "
     "allowed DefaultPolicy or allow none"},
    {"AllowedPolicies=random\nVerbose=no\nDefaultPolicy=numa-local\n",
     3,
     "DefaultPolicy=numa-local is not in AllowedPolicies=random"},
    {"DefaultPolicy=numa-local\nAllowedPolicies=random,none\n",
     2,
     "DefaultPolicy=numa-local is not in AllowedPolicies=random,none"},
    {"CgroupRoot=sys/fs/cgroup\n",
     1,
     "CgroupRoot=sys/fs/cgroup: not an absolute path; give a path starting "
     "with '/' (or 'auto')"},
    {"CgroupRoot=/sys/fs/../cgroup\n",
     1,
     "CgroupRoot=/sys/fs/../cgroup: '..' components are not allowed"},
    {"CgroupRoot=automatic\n", 1, "not an absolute path"},
    {"CgroupBase=a/b\n",
     1,
     "CgroupBase=a/b: not a single directory name; use only "
     "[A-Za-z0-9._-]"},
    {"CgroupBase=.\n", 1, "CgroupBase=.: '.' and '..' are not names"},
    {"CgroupBase=..\n", 1, "CgroupBase=..: '.' and '..' are not names"},
    {"CgroupBase=a b\n", 1, "CgroupBase=a b: not a single directory name"},
    {"CgroupBase=/slurm\n", 1, "not a single directory name"},
    {"CgroupBase=pin$\n", 1, "not a single directory name"},
    {"TopologyCache=topology.xml\n",
     1,
     "TopologyCache=topology.xml: not an absolute path"},
    {"TopologyCache=/var/cache/../../etc/shadow\n",
     1,
     "'..' components are not allowed"},
    {"TopologyCache=/..\n", 1, "'..' components are not allowed"},
    {"StateDir=run/slurm-pin\n",
     1,
     "StateDir=run/slurm-pin: not an absolute "
     "path"},
    {"StateDir=/run/slurm-pin/..\n", 1, "'..' components are not allowed"},
    {"StateDir=\n", 1, "StateDir=: empty value"},
    {"Verbose=maybe\n",
     1,
     "Verbose=maybe: not a boolean; use yes, no, true, false, 1 or 0"},
    {"Verbose=2\n", 1, "not a boolean"},
    {"Verbose=\n", 1, "Verbose=: empty value"},
    {"Bogus=1\n",
     1,
     "Bogus: unknown key; known: DefaultPolicy, "
     "AllowedPolicies, CgroupRoot, CgroupBase, TopologyCache, StateDir, "
     "Verbose, Oversubscribe, ShareWithSteps, NoneUsers, NoneAccounts, "
     "PartitionName, DeliverCommand, Accounting, JournalDir, "
     "JournalMaxSize, DynamicOveruse, DynamicGrace, DynamicInterval, "
     "DynamicConfine, SpreadSockets, Profile, ProfileDir, "
     "ProfileMaxSize, ProfileTaskstats, GpuBinding, Experiment, "
     "ExperimentPolicies, "
     "ExperimentShare, ExperimentUntil, ExperimentSeed, ExperimentJobNames, "
     "ExperimentAccounts, TestTopology, TestDeviceRoot"},
    {"ProfileTaskstats=maybe\n",
     1,
     "ProfileTaskstats=maybe: expected auto, on or off"},
    {"Profile=sometimes\n",
     1,
     "Profile=sometimes: not a duration; give "
     "seconds, e.g. 60, 60s, 500ms or 2m (or yes, no)"},
    {"Profile=10ms\n",
     1,
     "Profile=10ms: out of range; give 100ms to "
     "3600s (or yes, no)"},
    {"ProfileDir=profiles\n",
     1,
     "ProfileDir=profiles: not an absolute "
     "path"},
    {"ProfileMaxSize=1K\n",
     1,
     "ProfileMaxSize=1K: out of range; give 8K "
     "to 64G"},
    {"ProfileMaxSize=12X\n", 1, "ProfileMaxSize=12X: not a size"},
    {"Oversubscribe=yes\n", 1, "Oversubscribe=yes: expected allow or refuse"},
    {"\nShareWithSteps=no\n",
     2,
     "ShareWithSteps=no: expected allow or refuse"},
    {"ShareWithSteps=\n", 1, "ShareWithSteps=: empty value"},
    {"Accounting=maybe\n", 1, "Accounting=maybe: not a boolean"},
    {"JournalDir=journal\n", 1, "JournalDir=journal: not an absolute path"},
    {"JournalDir=/var/lib/../tmp\n", 1, "'..' components are not allowed"},
    {"JournalMaxSize=64X\n", 1, "JournalMaxSize=64X: unknown unit"},
    {"JournalMaxSize=64MB\n", 1, "unknown unit"},
    {"JournalMaxSize=-1\n", 1, "JournalMaxSize=-1: not a size"},
    {"JournalMaxSize=100\n", 1, "smaller than 4K"},
    {"JournalMaxSize=99999999999G\n", 1, "too large"},
    {"Oversubscribe=allow\nOversubscribe=refuse\n",
     2,
     "Oversubscribe=refuse: Oversubscribe already set ("},
    {"default_policy=none\n", 1, "default_policy: unknown key"},
    {"Default Policy=none\n", 1, "Default Policy: unknown key"},
    {"Verbose=yes\n# again\nverbose=no\n",
     3,
     "verbose=no: Verbose already set ("},
    {"DefaultPolicy numa-local\n",
     1,
     "'DefaultPolicy numa-local': missing '='; lines are Key=Value"},
    {"\n\nVerbose\n", 3, "'Verbose': missing '='"},
    {"=yes\n", 1, "'=yes': missing key before '='"},
    {"Verbose=yes\r\n",
     1,
     "control character 0x0d in column 12; pin.conf "
     "must be plain text"},
    {"Verbose=\x01yes\n", 1, "control character 0x01 in column 9"},
    {"Verbose=yes\nStateDir=/run/\x1b[31m\n",
     2,
     "control character 0x1b in column 15"},
    {"Verbose=yes\x7f\n", 1, "control character 0x7f"},
};

START_TEST (test_bad)
{
    const struct bad_case *bc = &bad_cases[_i];
    struct pin_conf c, before;
    pin_error_t e = {""};
    char prefix[400];

    pin_conf_defaults (&c);
    before = c;
    write_conf (bc->text);
    errno = 0;
    ck_assert_msg (pin_conf_load_file (&c, cfile, true, &e) < 0,
                   "[%s] loaded",
                   bc->text);
    ck_assert_int_eq (errno, EINVAL);
    snprintf (prefix, sizeof (prefix), "%s:%d: ", cfile, bc->line);
    ck_assert_msg (strncmp (e.text, prefix, strlen (prefix)) == 0,
                   "[%s] error '%s' does not start with '%s'",
                   bc->text,
                   e.text,
                   prefix);
    ck_assert_msg (strstr (e.text + strlen (prefix), bc->err) != NULL,
                   "[%s] error '%s' lacks '%s'",
                   bc->text,
                   e.text,
                   bc->err);
    ck_assert_msg (strchr (e.text, '\n') == NULL, "error has a newline");
    /* a failed load changes nothing */
    ck_assert_msg (memcmp (&c, &before, sizeof (c)) == 0,
                   "[%s] conf changed by a failed load",
                   bc->text);
}
END_TEST

/* The error names the right line among many. */
/* ---- PartitionName= lines, NoneUsers=, NoneAccounts= ------------------- */

static const struct bad_case part_bad[] = {
    {"PartitionName=\n", 1, "PartitionName=: empty value"},
    {"PartitionName=p\n",
     1,
     "PartitionName=p: no keys; give at least one "
     "of: DefaultPolicy, AllowedPolicies, ForcedPolicy, DynamicOveruse, "
     "DynamicGrace, DynamicInterval, DynamicConfine, SpreadSockets, "
     "Profile, GpuBinding"},
    {"PartitionName=p Bogus=1\n",
     1,
     "PartitionName=p: 'Bogus=1': not a "
     "per-partition Key=Value; valid here: DefaultPolicy, AllowedPolicies, "
     "ForcedPolicy, DynamicOveruse, DynamicGrace, DynamicInterval, "
     "DynamicConfine, SpreadSockets, Profile, GpuBinding, Experiment, "
     "ExperimentPolicies, ExperimentShare, ExperimentUntil, ExperimentSeed, "
     "ExperimentJobNames, ExperimentAccounts"},
    {"Experiment=-x\n", 1, "Experiment=-x: '-x' is not an experiment name"},
    {"Experiment=abcdefghijabcdefghijabcdefghijabc\n",
     1,
     "is not an experiment name; give none or up to 32 characters"},
    {"ExperimentPolicies=none\n", 1, "at least 2 arms"},
    {"ExperimentPolicies=none,numa-local,none\n", 1, "none is listed twice"},
    {"ExperimentPolicies=none,numa-locl\n", 1, "unknown policy 'numa-locl'"},
    {"ExperimentShare=0\n", 1, "ExperimentShare=0: not a share"},
    {"ExperimentShare=1.5\n", 1, "not a share"},
    {"ExperimentShare=150%\n", 1, "not a share"},
    {"ExperimentUntil=2027-13-01\n", 1, "'2027-13-01' is not a date"},
    {"ExperimentUntil=tomorrow\n", 1, "is not a date; give none, YYYY-MM-DD"},
    {"ExperimentSeed=-1\n", 1, "not a seed; give auto or a number"},
    {"ExperimentJobNames=a b\n", 1, "not a comma list of job name patterns"},
    {"ExperimentAccounts=a,,b\n", 1, "empty item"},
    {"PartitionName=p Experiment=x\n",
     1,
     "PartitionName=p: Experiment=x has no ExperimentPolicies="},
    {"PartitionName=p Experiment=x ExperimentPolicies=none,numa-local "
     "AllowedPolicies=numa-local\n",
     1,
     "ExperimentPolicies: arm none is not in AllowedPolicies"},
    {"PartitionName=p ForcedPolicy=none Experiment=x "
     "ExperimentPolicies=none,numa-local\n",
     1,
     "in a partition with ForcedPolicy=none"},
    {"PartitionName=p Profile=fast\n",
     1,
     "PartitionName=p: Profile=fast: not a duration"},
    {"PartitionName=p DynamicOveruse=0.9\n",
     1,
     "PartitionName=p: DynamicOveruse=0.9: not a factor above 1"},
    {"PartitionName=p DynamicGrace=2d\n",
     1,
     "PartitionName=p: DynamicGrace=2d"},
    {"PartitionName=p DynamicInterval=10ms\n",
     1,
     "PartitionName=p: DynamicInterval=10ms"},
    {"PartitionName=p DynamicConfine=taskset\n",
     1,
     "DynamicConfine=taskset: expected cpuset or quota"},
    {"PartitionName=p StateDir=/x\n",
     1,
     "'StateDir=/x': not a "
     "per-partition Key=Value"},
    {"PartitionName=p DefaultPolicy\n",
     1,
     "'DefaultPolicy': not a "
     "per-partition Key=Value"},
    {"PartitionName=p DefaultPolicy=\n", 1, "DefaultPolicy=: empty value"},
    {"PartitionName=p ForcedPolicy=numa-locl\n",
     1,
     "PartitionName=p: ForcedPolicy=numa-locl: unknown policy 'numa-locl'"},
    {"PartitionName=p DefaultPolicy=none DefaultPolicy=none\n",
     1,
     "DefaultPolicy already set on this line"},
    {"PartitionName=a/b DefaultPolicy=none\n",
     1,
     "PartitionName=a/b: not a partition name"},
    {"PartitionName=p DefaultPolicy=none\nPartitionName=p ForcedPolicy=none\n",
     2,
     "PartitionName=p: partition already has a line"},
    {"PartitionName=p ForcedPolicy=none AllowedPolicies=all\n",
     1,
     "ForcedPolicy decides every job of the partition"},
    {"PartitionName=p AllowedPolicies=numa-local\n",
     1,
     "PartitionName=p: DefaultPolicy=none (global) is not in its "
     "AllowedPolicies"},
    {"PartitionName=p AllowedPolicies=random DefaultPolicy=numa-local\n",
     1,
     "PartitionName=p: DefaultPolicy=numa-local is not in its "
     "AllowedPolicies"},
    {"NoneUsers=\n", 1, "NoneUsers=: empty value"},
    {"NoneUsers=a,,b\n", 1, "empty item in the list"},
    {"NoneAccounts=a b\n", 1, "NoneAccounts=a b: not a comma list of names"},
};

START_TEST (test_part_bad)
{
    const struct bad_case *bc = &part_bad[_i];
    struct pin_conf c, before;
    pin_error_t e = {""};
    char prefix[400];

    pin_conf_defaults (&c);
    before = c;
    write_conf (bc->text);
    ck_assert_int_eq (pin_conf_load_file (&c, cfile, true, &e), -1);
    snprintf (prefix, sizeof (prefix), "%s:%d: ", cfile, bc->line);
    ck_assert_msg (strncmp (e.text, prefix, strlen (prefix)) == 0,
                   "[%s] does not start with [%s]",
                   e.text,
                   prefix);
    ck_assert_msg (strstr (e.text, bc->err),
                   "[%s] lacks [%s]",
                   e.text,
                   bc->err);
    ck_assert_msg (memcmp (&c, &before, sizeof (c)) == 0, "conf changed");
}
END_TEST

START_TEST (test_part_good)
{
    struct pin_conf c;
    struct pin_conf_rules r;
    pin_error_t e = {""};
    char many[64 * 48 + 64];
    size_t o = 0;
    int i;

    pin_conf_defaults (&c);
    write_conf (
        "DefaultPolicy=numa-local\n"
        "AllowedPolicies=numa-local,numa-spread,none\n"
        "partitionname=pilot  forcedpolicy=numa-spread # whole nodes\n"
        "PartitionName=open\tAllowedPolicies=all DefaultPolicy=none\n"
        "PartitionName=strict AllowedPolicies=numa-local\n"
        "NoneUsers=alice,bob\nNoneAccounts=bench\n");
    ck_assert_msg (pin_conf_load_file (&c, cfile, true, &e) == 0,
                   "%s",
                   e.text);
    ck_assert_int_eq (c.npartitions, 3);
    pin_conf_rules_for (&c, "pilot", &r);
    ck_assert_int_eq (r.forced_policy, policy ("numa-spread"));
    ck_assert (r.from_partition);
    pin_conf_rules_for (&c, "open", &r);
    ck_assert_int_eq (r.forced_policy, -1);
    ck_assert_int_eq (r.default_policy, policy ("none"));
    ck_assert_uint_eq (r.allowed_policies, PIN_CONF_ALLOW_ALL);
    pin_conf_rules_for (&c, "strict", &r);
    ck_assert_int_eq (r.default_policy, policy ("numa-local"));
    ck_assert_uint_eq (r.allowed_policies, 1u << policy ("numa-local"));
    pin_conf_rules_for (&c, "Pilot", &r); /* names are exact */
    ck_assert (!r.from_partition);
    ck_assert_int_eq (r.forced_policy, -1);
    pin_conf_rules_for (&c, NULL, &r);
    ck_assert_int_eq (r.default_policy, policy ("numa-local"));
    ck_assert (pin_conf_none_permitted (&c, "bob", NULL));
    ck_assert (pin_conf_none_permitted (&c, "carol", "bench"));
    ck_assert (!pin_conf_none_permitted (&c, "carol", "benc"));
    ck_assert (!pin_conf_none_permitted (&c, "ali", NULL));
    ck_assert (!pin_conf_none_permitted (&c, NULL, NULL));
    pin_conf_defaults (&c);
    ck_assert (pin_conf_none_permitted (&c, NULL, NULL));

    /* Dynamic* per partition: the partition's value, else the global one */
    pin_conf_defaults (&c);
    write_conf (
        "DynamicGrace=30s\nDynamicOveruse=1.5\n"
        "PartitionName=pilot DynamicGrace=2m DynamicInterval=500ms "
        "DynamicConfine=quota\n");
    ck_assert_msg (pin_conf_load_file (&c, cfile, true, &e) == 0,
                   "%s",
                   e.text);
    pin_conf_rules_for (&c, "pilot", &r);
    ck_assert_int_eq (r.dynamic_grace_us, 120LL * 1000000);
    ck_assert_int_eq (r.dynamic_interval_us, 500000);
    ck_assert_int_eq (r.dynamic_confine, PIN_CONFINE_QUOTA);
    ck_assert (r.dynamic_overuse == 1.5);
    pin_conf_rules_for (&c, "batch", &r);
    ck_assert_int_eq (r.dynamic_grace_us, 30LL * 1000000);
    ck_assert_int_eq (r.dynamic_interval_us, 5LL * 1000000);
    ck_assert_int_eq (r.dynamic_confine, PIN_CONFINE_CPUSET);
    ck_assert (r.dynamic_overuse == 1.5);
    pin_conf_defaults (&c);

    /* Profile= per partition, and its values */
    ck_assert_int_eq (c.profile_us, 0);
    ck_assert_uint_eq (c.profile_max_size, 256ull << 20);
    ck_assert_str_eq (c.profile_dir, PIN_CONF_DEFAULT_PROFILE_DIR);
    ck_assert_int_eq (c.profile_taskstats, PIN_PROFILE_TS_AUTO);
    write_conf (
        "Profile=2s\nProfileDir=/srv/prof\nProfileMaxSize=1G\n"
        "ProfileTaskstats=off\n"
        "PartitionName=pilot Profile=no\n"
        "PartitionName=debug Profile=yes\n"
        "PartitionName=fast Profile=250ms\n");
    ck_assert_msg (pin_conf_load_file (&c, cfile, true, &e) == 0,
                   "%s",
                   e.text);
    ck_assert_str_eq (c.profile_dir, "/srv/prof");
    ck_assert_uint_eq (c.profile_max_size, 1ull << 30);
    ck_assert_int_eq (c.profile_taskstats, PIN_PROFILE_TS_OFF);
    pin_conf_rules_for (&c, "pilot", &r);
    ck_assert_int_eq (r.profile_us, 0);
    pin_conf_rules_for (&c, "debug", &r);
    ck_assert_int_eq (r.profile_us, PIN_CONF_PROFILE_DEFAULT_US);
    pin_conf_rules_for (&c, "fast", &r);
    ck_assert_int_eq (r.profile_us, 250000);
    pin_conf_rules_for (&c, "batch", &r);
    ck_assert_int_eq (r.profile_us, 2000000);
    {
        long long us = -1;
        char why[200];
        ck_assert_int_eq (pin_conf_parse_profile (NULL,
                                                  &us,
                                                  why,
                                                  sizeof (why)),
                          0);
        ck_assert_int_eq (us, PIN_CONF_PROFILE_DEFAULT_US);
        ck_assert_int_eq (pin_conf_parse_profile ("OFF",
                                                  &us,
                                                  why,
                                                  sizeof (why)),
                          0);
        ck_assert_int_eq (us, 0);
        ck_assert_int_eq (pin_conf_parse_profile ("1m",
                                                  &us,
                                                  why,
                                                  sizeof (why)),
                          0);
        ck_assert_int_eq (us, 60000000);
        us = 7;
        ck_assert_int_eq (pin_conf_parse_profile ("-1",
                                                  &us,
                                                  why,
                                                  sizeof (why)),
                          -1);
        ck_assert_int_eq (us, 7);
        ck_assert_int_eq (pin_conf_parse_profile ("2h",
                                                  &us,
                                                  why,
                                                  sizeof (why)),
                          -1);
    }
    pin_conf_defaults (&c);

    /* the 65th line is refused, the 64th accepted */
    for (i = 0; i < PIN_CONF_PARTITIONS_MAX + 1; i++)
        o += (size_t)snprintf (many + o,
                               sizeof (many) - o,
                               "PartitionName=p%d DefaultPolicy=none\n",
                               i);
    write_conf (many);
    ck_assert_int_eq (pin_conf_load_file (&c, cfile, true, &e), -1);
    ck_assert_msg (strstr (e.text, ":65: PartitionName=p64: more than 64"),
                   "%s",
                   e.text);
}
END_TEST

/* Experiment keys: global values, a partition's line replacing them, a
 * partition's Experiment=none, and the whole-experiment checks */
START_TEST (test_experiment)
{
    struct pin_conf c;
    struct pin_conf_rules r;
    pin_error_t e = {""};
    struct tm tm = {0};

    pin_conf_defaults (&c);
    ck_assert_str_eq (c.experiment, "");
    ck_assert_int_eq (c.experiment_policies.n, 0);
    ck_assert (c.experiment_share == 1.0);
    ck_assert_int_eq (c.experiment_until, 0);
    ck_assert_int_eq (c.experiment_seed, -1);
    write_conf ("Experiment=pin-2027\n"
                "ExperimentPolicies=none, numa-local,cache-shared\n"
                "ExperimentShare=20%\n"
                "ExperimentUntil=2027-01-31T18:30\n"
                "ExperimentSeed=42\n"
                "ExperimentJobNames=sim-*,reco\n"
                "PartitionName=off Experiment=none\n"
                "PartitionName=half ExperimentShare=0.5 "
                "ExperimentPolicies=numa-local,none ExperimentAccounts=alice\n"
                "PartitionName=forced ForcedPolicy=numa-local\n");
    ck_assert_msg (pin_conf_load_file (&c, cfile, true, &e) == 0,
                   "%s",
                   e.text);
    pin_conf_rules_for (&c, NULL, &r);
    ck_assert_str_eq (r.experiment, "pin-2027");
    ck_assert_int_eq (r.experiment_policies.n, 3);
    ck_assert_int_eq (r.experiment_policies.policy[0], policy ("none"));
    ck_assert_int_eq (r.experiment_policies.policy[2], policy ("cache-shared"));
    ck_assert (r.experiment_share > 0.1999 && r.experiment_share < 0.2001);
    tm.tm_year = 127;
    tm.tm_mon = 0;
    tm.tm_mday = 31;
    tm.tm_hour = 18;
    tm.tm_min = 30;
    tm.tm_isdst = -1;
    ck_assert_int_eq (r.experiment_until, (long long)mktime (&tm));
    ck_assert_int_eq (r.experiment_seed, 42);
    ck_assert_str_eq (r.experiment_job_names, "sim-*,reco");
    ck_assert_str_eq (r.experiment_accounts, "");
    pin_conf_rules_for (&c, "off", &r);
    ck_assert_str_eq (r.experiment, "");
    pin_conf_rules_for (&c, "half", &r);
    ck_assert_str_eq (r.experiment, "pin-2027");
    ck_assert_int_eq (r.experiment_policies.n, 2);
    ck_assert_int_eq (r.experiment_policies.policy[0], policy ("numa-local"));
    ck_assert (r.experiment_share == 0.5);
    ck_assert_str_eq (r.experiment_accounts, "alice");
    ck_assert_str_eq (r.experiment_job_names, "sim-*,reco");
    /* a global experiment does not reach a forced partition: loads */
    pin_conf_rules_for (&c, "forced", &r);
    ck_assert_int_eq (r.forced_policy, policy ("numa-local"));

    /* an experiment whose arm the site does not allow */
    pin_conf_defaults (&c);
    write_conf ("AllowedPolicies=numa-local,none\nExperiment=x\n"
                "ExperimentPolicies=none,random\n");
    ck_assert (pin_conf_load_file (&c, cfile, true, &e) < 0);
    ck_assert_msg (strstr (e.text, "arm random is not in AllowedPolicies"),
                   "%s",
                   e.text);
    /* an experiment without arms */
    pin_conf_defaults (&c);
    write_conf ("Experiment=x\n");
    ck_assert (pin_conf_load_file (&c, cfile, true, &e) < 0);
    ck_assert_msg (strstr (e.text, "Experiment=x has no ExperimentPolicies="),
                   "%s",
                   e.text);
    /* arms alone wait for a partition's Experiment= */
    pin_conf_defaults (&c);
    write_conf ("ExperimentPolicies=none,numa-local\n"
                "PartitionName=p Experiment=y\n");
    ck_assert_msg (pin_conf_load_file (&c, cfile, true, &e) == 0,
                   "%s",
                   e.text);
    pin_conf_rules_for (&c, "p", &r);
    ck_assert_str_eq (r.experiment, "y");
    ck_assert_int_eq (r.experiment_policies.n, 2);
}
END_TEST

START_TEST (test_line_numbers)
{
    char text[4096];
    size_t len = 0;
    int bad;

    for (bad = 1; bad <= 40; bad += 13) {
        struct pin_conf c;
        pin_error_t e;
        char want[1024];
        int i;

        len = 0;
        for (i = 1; i < bad; i++)
            len += snprintf (text + len,
                             sizeof (text) - len,
                             i % 3 == 0   ? "# comment %d\n"
                             : i % 3 == 1 ? "\n"
                                          : "  # %d\n",
                             i);
        len += snprintf (text + len,
                         sizeof (text) - len,
                         "Verbose=perhaps\nStateDir=/x\n");
        write_conf (text);
        pin_conf_defaults (&c);
        ck_assert_int_lt (pin_conf_load_file (&c, cfile, true, &e), 0);
        snprintf (want,
                  sizeof (want),
                  "%s:%d: Verbose=perhaps: not a "
                  "boolean",
                  cfile,
                  bad);
        ck_assert_msg (strncmp (e.text, want, strlen (want)) == 0,
                       "got '%s' want '%s'",
                       e.text,
                       want);
    }
}
END_TEST

/* A line of 1 MB is refused, not truncated, with the right line number;
 * so is one a single byte over the limit, while one at the limit loads. */
START_TEST (test_long_lines)
{
    struct pin_conf c;
    pin_error_t e;
    char want[1024];
    size_t n = 1024 * 1024;
    char *text = malloc (n + 64);
    int len;

    ck_assert_ptr_nonnull (text);
    len = snprintf (text, 64, "Verbose=yes\nStateDir=/");
    memset (text + len, 'a', n);
    strcpy (text + len + n, "\n");
    write_conf (text);
    pin_conf_defaults (&c);
    ck_assert_int_lt (pin_conf_load_file (&c, cfile, true, &e), 0);
    snprintf (want,
              sizeof (want),
              "%s:2: line longer than %d characters; "
              "shorten it",
              cfile,
              PIN_CONF_LINE_MAX - 1);
    ck_assert_str_eq (e.text, want);
    ck_assert (!c.verbose);

    /* exactly PIN_CONF_LINE_MAX - 1 characters: a comment line loads */
    memset (text, '#', PIN_CONF_LINE_MAX - 1);
    strcpy (text + PIN_CONF_LINE_MAX - 1, "\nVerbose=yes\n");
    write_conf (text);
    ck_assert_msg (pin_conf_load_file (&c, cfile, true, &e) == 0,
                   "%s",
                   e.text);
    ck_assert (c.verbose);

    /* one more: refused */
    memset (text, '#', PIN_CONF_LINE_MAX);
    strcpy (text + PIN_CONF_LINE_MAX, "\n");
    write_conf (text);
    ck_assert_int_lt (pin_conf_load_file (&c, cfile, true, &e), 0);
    ck_assert_msg (strstr (e.text, ":1: line longer than") != NULL,
                   "%s",
                   e.text);
    free (text);
}
END_TEST

START_TEST (test_nul_byte)
{
    static const char text[] = "Verbose=no\nDefaultPolicy=ran\0dom\n";
    struct pin_conf c;
    pin_error_t e;
    char want[1024];

    write_conf_len (text, sizeof (text) - 1);
    pin_conf_defaults (&c);
    ck_assert_int_lt (pin_conf_load_file (&c, cfile, true, &e), 0);
    snprintf (want,
              sizeof (want),
              "%s:2: NUL byte in column 18; pin.conf "
              "must be plain text",
              cfile);
    ck_assert_str_eq (e.text, want);
}
END_TEST

START_TEST (test_missing_file)
{
    struct pin_conf c, before;
    pin_error_t e = {""};
    char path[320];
    char want[1024];

    snprintf (path, sizeof (path), "%s/absent.conf", tmpdir);
    pin_conf_defaults (&c);
    before = c;
    ck_assert_int_eq (pin_conf_load_file (&c, path, false, &e), 0);
    ck_assert (memcmp (&c, &before, sizeof (c)) == 0);
    ck_assert_str_eq (c.path, "");

    errno = 0;
    ck_assert_int_lt (pin_conf_load_file (&c, path, true, &e), 0);
    ck_assert_int_eq (errno, ENOENT);
    snprintf (want,
              sizeof (want),
              "%s: no such file; give an existing "
              "pin.conf (see pin.conf(5))",
              path);
    ck_assert_str_eq (e.text, want);

    ck_assert_int_lt (pin_conf_load_file (&c, "", false, &e), 0);
    ck_assert_int_lt (pin_conf_load_file (&c, NULL, false, &e), 0);
}
END_TEST

/* A directory or a FIFO is not a config file (and a FIFO must not hang). */
START_TEST (test_not_regular)
{
    struct pin_conf c;
    pin_error_t e;
    char path[320];

    pin_conf_defaults (&c);
    snprintf (path, sizeof (path), "%s/dir", tmpdir);
    ck_assert_int_eq (mkdir (path, 0700), 0);
    ck_assert_int_lt (pin_conf_load_file (&c, path, false, &e), 0);
    ck_assert_msg (strstr (e.text, "/dir: a directory, not a regular file")
                       != NULL,
                   "%s",
                   e.text);

    snprintf (path, sizeof (path), "%s/fifo", tmpdir);
    ck_assert_int_eq (mkfifo (path, 0600), 0);
    ck_assert_int_lt (pin_conf_load_file (&c, path, true, &e), 0);
    ck_assert_msg (strstr (e.text, "/fifo: a FIFO, not a regular file")
                       != NULL,
                   "%s",
                   e.text);
}
END_TEST

/* Loading twice: the second file overrides what it sets, keeps the rest. */
START_TEST (test_file_over_file)
{
    struct pin_conf c;
    pin_error_t e;

    pin_conf_defaults (&c);
    write_conf ("Verbose=yes\nStateDir=/a\n");
    ck_assert_int_eq (pin_conf_load_file (&c, cfile, true, &e), 0);
    write_conf ("StateDir=/b\n");
    ck_assert_int_eq (pin_conf_load_file (&c, cfile, true, &e), 0);
    ck_assert (c.verbose);
    ck_assert_str_eq (c.state_dir, "/b");
}
END_TEST

/* ---- plugstack arguments
 * ----------------------------------------------------- */

/* forward declaration for the test below */
static int load_args (struct pin_conf *c, pin_error_t *e, ...);

/* plugstack.conf spells them oversubscribe= and share_with_steps= and
 * overrides pin.conf */
START_TEST (test_args_allow_refuse)
{
    struct pin_conf c;
    pin_error_t e = {""};
    char confarg[320];

    write_conf ("Oversubscribe=refuse\nShareWithSteps=refuse\n");
    snprintf (confarg, sizeof (confarg), "conf=%s", cfile);
    pin_conf_defaults (&c);
    ck_assert_msg (load_args (&c,
                              &e,
                              confarg,
                              "share_with_steps=allow",
                              (char *)NULL)
                       == 0,
                   "%s",
                   e.text);
    ck_assert (!c.oversubscribe);
    ck_assert (c.share_with_steps);
    pin_conf_defaults (&c);
    ck_assert_int_lt (load_args (&c,
                                 &e,
                                 confarg,
                                 "oversubscribe=never",
                                 (char *)NULL),
                      0);
    ck_assert_str_eq (e.text,
                      "plugstack.conf argument 'oversubscribe=never': "
                      "expected allow or refuse");
}
END_TEST

static int load_args (struct pin_conf *c, pin_error_t *e, ...)
{
    char *av[16];
    int ac = 0;
    va_list ap;
    const char *s;

    va_start (ap, e);
    while ((s = va_arg (ap, const char *)) && ac < 15)
        av[ac++] = (char *)s;
    va_end (ap);
    av[ac] = NULL;
    return pin_conf_load_args (c, ac, av, e);
}

START_TEST (test_args_override)
{
    struct pin_conf c;
    pin_error_t e = {""};
    char confarg[320];

    write_conf (
        "DefaultPolicy=numa-local\nStateDir=/run/a\nVerbose=yes\n"
        "AllowedPolicies=numa-local,random,none\n");
    snprintf (confarg, sizeof (confarg), "conf=%s", cfile);
    pin_conf_defaults (&c);
    /* conf= given last still loads first; the others override */
    ck_assert_msg (load_args (&c,
                              &e,
                              "default_policy=random",
                              "STATE_DIR=/run/b",
                              "cgroupbase=pin2",
                              confarg,
                              (char *)NULL)
                       == 0,
                   "%s",
                   e.text);
    ck_assert_str_eq (c.path, cfile);
    ck_assert_int_eq (c.default_policy, policy ("random"));
    ck_assert_str_eq (c.state_dir, "/run/b");
    ck_assert_str_eq (c.cgroup_base, "pin2");
    ck_assert (c.verbose); /* from the file */
    check_field (&c, F_ALLOWED, "numa-local,random,none", "args");

    /* every key by its plugstack spelling */
    pin_conf_defaults (&c);
    ck_assert_msg (load_args (&c,
                              &e,
                              confarg,
                              "Default_Policy=none",
                              "allowed_policies=all",
                              "cgroup_root=/cg",
                              "cgroup_base=b",
                              "topology_cache=/t.xml",
                              "state_dir=/s",
                              "verbose=no",
                              (char *)NULL)
                       == 0,
                   "%s",
                   e.text);
    ck_assert_str_eq (c.cgroup_root, "/cg");
    ck_assert_str_eq (c.cgroup_base, "b");
    ck_assert_str_eq (c.topology_cache, "/t.xml");
    ck_assert_str_eq (c.state_dir, "/s");
    ck_assert (!c.verbose);
    ck_assert_uint_eq (c.allowed_policies, PIN_CONF_ALLOW_ALL);

    /* an argument may fix what the file alone would refuse */
    write_conf ("AllowedPolicies=numa-local\n");
    pin_conf_defaults (&c);
    ck_assert_msg (load_args (&c,
                              &e,
                              confarg,
                              "default_policy=numa-local",
                              (char *)NULL)
                       == 0,
                   "%s",
                   e.text);
    ck_assert_int_eq (c.default_policy, policy ("numa-local"));
}
END_TEST

static const struct arg_bad_case {
    const char *args[4];
    const char *err; /* exact message, %s = the pin.conf path */
} arg_bad_cases[] = {
    {{"foo=1"},
     "plugstack.conf argument 'foo=1': unknown key; known: conf, "
     "DefaultPolicy, AllowedPolicies, CgroupRoot, CgroupBase, TopologyCache, "
     "StateDir, Verbose, Oversubscribe, ShareWithSteps, NoneUsers, "
     "NoneAccounts, PartitionName, DeliverCommand, Accounting, "
     "JournalDir, JournalMaxSize, DynamicOveruse, DynamicGrace, "
     "DynamicInterval, DynamicConfine, SpreadSockets, Profile, ProfileDir, "
     "ProfileMaxSize, ProfileTaskstats, GpuBinding, Experiment, "
     "ExperimentPolicies, "
     "ExperimentShare, ExperimentUntil, ExperimentSeed, ExperimentJobNames, "
     "ExperimentAccounts, TestTopology, TestDeviceRoot"},
    {{"verbose"},
     "plugstack.conf argument 'verbose': missing '='; use key=value (e.g. "
     "default_policy=numa-local)"},
    {{"=x"}, "plugstack.conf argument '=x': unknown key; known: conf, "},
    {{"default_policy=numa-locl"},
     "plugstack.conf argument 'default_policy=numa-locl': unknown policy "
     "'numa-locl'; known: "},
    {{"verbose=yes", "Verbose=no"},
     "plugstack.conf argument 'Verbose=no': Verbose already set "
     "(plugstack.conf argument 'verbose=yes'); set each key once"},
    {{"state_dir=relative"},
     "plugstack.conf argument 'state_dir=relative': not an absolute path"},
    {{"cgroup_base="},
     "plugstack.conf argument 'cgroup_base=': empty value; give a value or "
     "leave the key out (default: slurm-pin)"},
    {{"conf=relative.conf"},
     "plugstack.conf argument 'conf=relative.conf': not an absolute path"},
    {{"conf="}, "plugstack.conf argument 'conf=': empty value"},
    {{"conf=/nonexistent/pin.conf"},
     "/nonexistent/pin.conf: no such file; give an existing pin.conf"},
    {{"conf=/a", "conf=/b"},
     "plugstack.conf argument 'conf=/b': conf= already given ('conf=/a'); "
     "give it once"},
    {{"allowed_policies=random"},
     "plugstack.conf argument 'allowed_policies=random': DefaultPolicy=none "
     "is not in AllowedPolicies=random"},
    {{"verbose=\x01"},
     "plugstack.conf argument 2: control character 0x01 "
     "in column 9; use printable key=value"},
};

START_TEST (test_args_bad)
{
    const struct arg_bad_case *ac = &arg_bad_cases[_i];
    struct pin_conf c, before;
    pin_error_t e = {""};
    char confarg[320];
    char *av[8];
    int n = 0, i;

    /* an empty pin.conf via conf=, unless the case has its own conf= */
    write_conf ("# empty\n");
    snprintf (confarg, sizeof (confarg), "conf=%s", cfile);
    for (i = 0; i < 4 && ac->args[i]; i++)
        if (strncmp (ac->args[i], "conf=", 5) == 0)
            break;
    if (i == 4 || !ac->args[i])
        av[n++] = confarg;
    for (i = 0; i < 4 && ac->args[i]; i++)
        av[n++] = (char *)ac->args[i];
    av[n] = NULL;

    pin_conf_defaults (&c);
    before = c;
    ck_assert_msg (pin_conf_load_args (&c, n, av, &e) < 0,
                   "[%s] loaded",
                   ac->args[0]);
    ck_assert_msg (strncmp (e.text, ac->err, strlen (ac->err)) == 0,
                   "[%s] got '%s' want '%s'",
                   ac->args[0],
                   e.text,
                   ac->err);
    ck_assert (memcmp (&c, &before, sizeof (c)) == 0);
}
END_TEST

/* A bad line in the conf= file is reported with its line number. */
START_TEST (test_args_bad_file)
{
    struct pin_conf c;
    pin_error_t e;
    char confarg[320];
    char want[1024];

    write_conf ("Verbose=yes\nCgroupBase=../x\n");
    snprintf (confarg, sizeof (confarg), "conf=%s", cfile);
    pin_conf_defaults (&c);
    ck_assert_int_lt (load_args (&c, &e, confarg, "verbose=no", (char *)NULL),
                      0);
    snprintf (want,
              sizeof (want),
              "%s:2: CgroupBase=../x: not a single "
              "directory name",
              cfile);
    ck_assert_msg (strncmp (e.text, want, strlen (want)) == 0, "%s", e.text);
}
END_TEST

/* Without conf=, PIN_CONF_DEFAULT_PATH is read if it exists (main()
 * skips this case when the host has one). */
START_TEST (test_args_no_conf)
{
    struct pin_conf c;
    pin_error_t e = {""};

    pin_conf_defaults (&c);
    ck_assert_msg (load_args (&c, &e, "verbose=yes", (char *)NULL) == 0,
                   "%s",
                   e.text);
    ck_assert (c.verbose);
    ck_assert_str_eq (c.path, "");
    ck_assert_int_eq (pin_conf_load_args (&c, 0, NULL, &e), 0);
}
END_TEST

/* A UTF-8 byte order mark: accepted at the start of the file, named
 * anywhere else (never shown as an invisible part of a key). */
START_TEST (test_bom)
{
    struct pin_conf c;
    pin_error_t e = {""};
    char want[1024];

    write_conf ("\xEF\xBB\xBFVerbose=yes\nStateDir=/srv/pin\n");
    pin_conf_defaults (&c);
    ck_assert_msg (pin_conf_load_file (&c, cfile, true, &e) == 0,
                   "%s",
                   e.text);
    ck_assert (c.verbose);
    ck_assert_str_eq (c.state_dir, "/srv/pin");
    write_conf ("Verbose=yes\n\xEF\xBB\xBFStateDir=/srv/pin\n");
    pin_conf_defaults (&c);
    ck_assert_int_lt (pin_conf_load_file (&c, cfile, true, &e), 0);
    snprintf (want,
              sizeof (want),
              "%s:2: a UTF-8 byte order mark (bytes EF "
              "BB BF) in column 1; remove it (it is accepted only at the "
              "start of the file)",
              cfile);
    ck_assert_str_eq (e.text, want);
    write_conf ("\xEF\xBB\xBF\xEF\xBB\xBFVerbose=yes\n");
    ck_assert_int_lt (pin_conf_load_file (&c, cfile, true, &e), 0);
    ck_assert_msg (strstr (e.text, ":1: a UTF-8 byte order mark"),
                   "%s",
                   e.text);
}
END_TEST

/* pin.conf(5) "Ownership": owned by root (or the reader), writable by
 * nobody else, no directory above it writable by others. */
START_TEST (test_ownership)
{
    struct pin_conf c;
    pin_error_t e = {""};
    char want[1024], path[320], link[320];

    write_conf ("Verbose=yes\n");
    ck_assert_int_eq (chmod (cfile, 0644), 0);
    pin_conf_defaults (&c);
    ck_assert_msg (pin_conf_load_file (&c, cfile, true, &e) == 0,
                   "%s",
                   e.text);
    ck_assert_int_eq (chmod (cfile, 0664), 0);
    errno = 0;
    ck_assert_int_lt (pin_conf_load_file (&c, cfile, true, &e), 0);
    ck_assert_int_eq (errno, EPERM);
    if (geteuid () == 0) {
        snprintf (want,
                  sizeof (want),
                  "%s: owner uid 0, mode 0664; pin.conf "
                  "must be owned by root and writable by nobody else (chown "
                  "root, chmod go-w)",
                  cfile);
        ck_assert_str_eq (e.text, want);
        ck_assert_int_eq (chmod (cfile, 0644), 0);
        ck_assert_int_eq (chown (cfile, 65534, 65534), 0);
        ck_assert_int_lt (pin_conf_load_file (&c, cfile, true, &e), 0);
        snprintf (want,
                  sizeof (want),
                  "%s: owner uid 65534, mode 0644; "
                  "pin.conf must be owned by root and writable by nobody "
                  "else (chown root, chmod go-w)",
                  cfile);
        ck_assert_str_eq (e.text, want);
        ck_assert_int_eq (chown (cfile, 0, 0), 0);
    }
    ck_assert_int_eq (chmod (cfile, 0644), 0);
    /* read by another user (slurmctld as SlurmUser): root's 0644 file is
     * accepted there */
    if (geteuid () == 0) {
        int status;
        pid_t pid;
        ck_assert_int_eq (chmod (tmpdir, 0755), 0);
        if ((pid = fork ()) == 0) {
            struct pin_conf sc;
            pin_error_t se = {""};
            pin_conf_defaults (&sc);
            _exit (setgid (65534) == 0 && setuid (65534) == 0
                           && pin_conf_load_file (&sc, cfile, true, &se) == 0
                           && sc.verbose
                       ? 0
                       : 1);
        }
        ck_assert_int_eq (waitpid (pid, &status, 0), pid);
        ck_assert_msg (WIFEXITED (status) && WEXITSTATUS (status) == 0,
                       "uid 65534 refused root's 0644 %s",
                       cfile);
        ck_assert_int_eq (chmod (tmpdir, 0700), 0);
    }
    /* the directory writable by others */
    ck_assert_int_eq (chmod (tmpdir, 0777), 0);
    ck_assert_int_lt (pin_conf_load_file (&c, cfile, true, &e), 0);
    ck_assert_int_eq (errno, EPERM);
    ck_assert_msg (strstr (e.text, "not trusted")
                       && strstr (e.text, "writable by group or others"),
                   "%s",
                   e.text);
    ck_assert_int_eq (chmod (tmpdir, 0700), 0);
    /* a symbolic link (root's, or the reader's) to a trusted file */
    snprintf (path, sizeof (path), "%s/dir", tmpdir);
    ck_assert_int_eq (mkdir (path, 0755), 0);
    snprintf (link, sizeof (link), "%s/dir/link.conf", tmpdir);
    ck_assert_int_eq (symlink ("../pin.conf", link), 0);
    pin_conf_defaults (&c);
    ck_assert_msg (pin_conf_load_file (&c, link, true, &e) == 0, "%s", e.text);
    ck_assert (c.verbose);
    ck_assert_int_eq (unlink (link), 0);
}
END_TEST

static Suite *conf_suite (const char **skip)
{
    Suite *s = suite_create ("conf");
    TCase *tc = tcase_create ("conf");

    tcase_add_checked_fixture (tc, setup, teardown);
    tcase_add_test (tc, test_defaults);
    tcase_add_loop_test (tc,
                         test_good,
                         0,
                         sizeof (good_cases) / sizeof (good_cases[0]));
    tcase_add_loop_test (tc,
                         test_bad,
                         0,
                         sizeof (bad_cases) / sizeof (bad_cases[0]));
    tcase_add_test (tc, test_line_numbers);
    tcase_add_loop_test (tc,
                         test_part_bad,
                         0,
                         (int)(sizeof (part_bad) / sizeof (part_bad[0])));
    tcase_add_test (tc, test_part_good);
    tcase_add_test (tc, test_experiment);
    tcase_add_test (tc, test_long_lines);
    tcase_add_test (tc, test_nul_byte);
    tcase_add_test (tc, test_bom);
    tcase_add_test (tc, test_ownership);
    tcase_add_test (tc, test_missing_file);
    tcase_add_test (tc, test_not_regular);
    tcase_add_test (tc, test_file_over_file);
    tcase_add_test (tc, test_args_override);
    tcase_add_test (tc, test_args_allow_refuse);
    tcase_add_loop_test (tc,
                         test_args_bad,
                         0,
                         sizeof (arg_bad_cases) / sizeof (arg_bad_cases[0]));
    tcase_add_test (tc, test_args_bad_file);
    if (access (PIN_CONF_DEFAULT_PATH, F_OK) == 0)
        *skip = "test_args_no_conf: " PIN_CONF_DEFAULT_PATH
                " exists on "
                "this host, so the case without it cannot run";
    else
        tcase_add_test (tc, test_args_no_conf);
    suite_add_tcase (s, tc);
    return s;
}

int main (void)
{
    const char *skip = NULL;
    Suite *s = conf_suite (&skip);

    return tap_run (s, &skip, skip ? 1 : 0);
}
