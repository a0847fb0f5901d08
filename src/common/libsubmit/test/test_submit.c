/* test_submit.c - job_submit_pin.so's decisions on job descriptions */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libconf/conf.h"
#include "libplace/place.h"
#include "libsubmit/submit.h"
#include "libtest/tap.h"

#define ENV SUBMIT_SPANK_ENV_NAME "="
#define PENV SUBMIT_PROFILE_ENV_NAME "="

/* A job as sbatch sends it when the user gave no allocation options. */
static void job_init (job_desc_msg_t *job)
{
    memset (job, 0, sizeof (*job));
    job->threads_per_core = NO_VAL16;
    job->ntasks_per_core = NO_VAL16;
    job->sockets_per_node = NO_VAL16;
    job->cores_per_socket = NO_VAL16;
    job->task_dist = NO_VAL;
    job->cpu_bind_type = 0;
}

/* Load pin.conf text into c (fails the test on a load error). */
static void conf_from (struct pin_conf *c, const char *text)
{
    char path[] = "/tmp/test_submit.XXXXXX";
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
    "AllowedPolicies=numa-local,numa-spread,cache-shared,none\n"
    "NoneUsers=alice\n"
    "NoneAccounts=benchmarks\n"
    "PartitionName=pilot ForcedPolicy=numa-spread\n"
    "PartitionName=open AllowedPolicies=all DefaultPolicy=none\n"
    "PartitionName=strict AllowedPolicies=numa-local\n";

enum { OK, REFUSED };

static const struct dcase {
    const char *conf; /* NULL: site */
    const char *partition;
    const char *user;
    const char *account;
    const char *env[3]; /* spank_job_env entries (NULL-terminated) */
    int rc;
    /* on OK */
    enum submit_source source;
    const char *policy;
    const char *write; /* expected write_value */
    bool tpc1;         /* threads_per_core=1 added */
    bool fcyclic;      /* task_dist=block:fcyclic added */
    /* on REFUSED: a substring of the message */
    const char *err;
} cases[] = {
    /* nothing asked: defaults */
    {NULL,
     NULL,
     "bob",
     NULL,
     {NULL},
     OK,
     SUBMIT_DEFAULT,
     "numa-local",
     "numa-local",
     true,
     false,
     NULL},
    {NULL,
     "debug",
     "bob",
     NULL,
     {NULL},
     OK,
     SUBMIT_DEFAULT,
     "numa-local",
     "numa-local",
     true,
     false,
     NULL},
    {NULL,
     "open",
     "bob",
     NULL,
     {NULL},
     OK,
     SUBMIT_NONE,
     NULL,
     "",
     false,
     false,
     NULL},
    {"",
     NULL,
     "bob",
     NULL,
     {NULL},
     OK,
     SUBMIT_NONE,
     NULL,
     "",
     false,
     false,
     NULL},
    /* forced */
    {NULL,
     "pilot",
     "bob",
     NULL,
     {NULL},
     OK,
     SUBMIT_FORCED,
     "numa-spread",
     "numa-spread",
     true,
     true,
     NULL},
    {NULL,
     "pilot",
     "bob",
     NULL,
     {ENV "numa-spread,verbose"},
     OK,
     SUBMIT_ASKED,
     "numa-spread",
     "",
     true,
     true,
     NULL},
    {NULL,
     "pilot",
     "bob",
     NULL,
     {ENV "numa-local"},
     REFUSED,
     0,
     NULL,
     NULL,
     false,
     false,
     "--pin-policy=numa-local: partition pilot forces numa-spread; leave "
     "--pin-policy out or give numa-spread"},
    /* asked */
    {NULL,
     NULL,
     "bob",
     NULL,
     {ENV "cache-shared"},
     OK,
     SUBMIT_ASKED,
     "cache-shared",
     "",
     false,
     false,
     NULL},
    {NULL,
     "open",
     "bob",
     NULL,
     {ENV "random"},
     OK,
     SUBMIT_ASKED,
     "random",
     "",
     false,
     false,
     NULL},
    {NULL,
     NULL,
     "bob",
     NULL,
     {ENV "random"},
     REFUSED,
     0,
     NULL,
     NULL,
     false,
     false,
     "--pin-policy=random: not allowed in partition (default); allowed: "
     "numa-local, numa-spread, cache-shared"},
    {NULL,
     "strict",
     "bob",
     NULL,
     {ENV "numa-spread"},
     REFUSED,
     0,
     NULL,
     NULL,
     false,
     false,
     "--pin-policy=numa-spread: not allowed in partition strict; allowed: "
     "numa-local"},
    /* none: who may */
    {NULL,
     NULL,
     "bob",
     NULL,
     {ENV "none"},
     REFUSED,
     0,
     NULL,
     NULL,
     false,
     false,
     "--pin-policy=none: only the users and accounts of pin.conf's "
     "NoneUsers and NoneAccounts may choose none; allowed: numa-local, "
     "numa-spread, cache-shared"},
    {NULL,
     NULL,
     "alice",
     NULL,
     {ENV "none"},
     OK,
     SUBMIT_ASKED,
     "none",
     "",
     false,
     false,
     NULL},
    {NULL,
     NULL,
     "bob",
     "benchmarks",
     {ENV "none"},
     OK,
     SUBMIT_ASKED,
     "none",
     "",
     false,
     false,
     NULL},
    {NULL,
     NULL,
     NULL,
     NULL,
     {ENV "none"},
     REFUSED,
     0,
     NULL,
     NULL,
     false,
     false,
     "may choose none"},
    {NULL,
     NULL,
     "alic",
     "benchmark",
     {ENV "none"},
     REFUSED,
     0,
     NULL,
     NULL,
     false,
     false,
     "may choose none"},
    {"",
     NULL,
     "bob",
     NULL,
     {ENV "none"},
     OK,
     SUBMIT_ASKED,
     "none",
     "",
     false,
     false,
     NULL},
    /* multi-partition lists */
    {NULL,
     "debug,strict",
     "bob",
     NULL,
     {ENV "numa-spread"},
     REFUSED,
     0,
     NULL,
     NULL,
     false,
     false,
     "not allowed in partition debug,strict; "
     "allowed: numa-local"},
    {NULL,
     "debug,open",
     "bob",
     NULL,
     {NULL},
     REFUSED,
     0,
     NULL,
     NULL,
     false,
     false,
     "partitions debug,open have different pin.conf "
     "DefaultPolicy; give --pin-policy"},
    {NULL,
     "pilot,debug",
     "bob",
     NULL,
     {NULL},
     REFUSED,
     0,
     NULL,
     NULL,
     false,
     false,
     "partitions pilot,debug: their pin.conf ForcedPolicy "
     "differs; submit to one partition"},
    {NULL,
     "debug,strict",
     "bob",
     NULL,
     {NULL},
     OK,
     SUBMIT_DEFAULT,
     "numa-local",
     "numa-local",
     true,
     false,
     NULL},
    /* bad values */
    {NULL,
     NULL,
     "bob",
     NULL,
     {ENV "numa-locl"},
     REFUSED,
     0,
     NULL,
     NULL,
     false,
     false,
     "--pin-policy=numa-locl: unknown policy 'numa-locl'; "
     "known: numa-local, numa-spread, cache-shared, random, dynamic, none"},
    {NULL,
     NULL,
     "bob",
     NULL,
     {ENV ""},
     REFUSED,
     0,
     NULL,
     NULL,
     false,
     false,
     "--pin-policy=: empty value"},
    {NULL,
     NULL,
     "bob",
     NULL,
     {ENV "numa-local,loud"},
     REFUSED,
     0,
     NULL,
     NULL,
     false,
     false,
     "unknown flag 'loud'"},
    {NULL,
     NULL,
     "bob",
     NULL,
     {ENV "\xff\xfe numa"},
     REFUSED,
     0,
     NULL,
     NULL,
     false,
     false,
     "--pin-policy=?? numa: unknown policy '?? numa'"},
    {NULL,
     NULL,
     "bob",
     NULL,
     {ENV "numa-local\nnuma-spread"},
     REFUSED,
     0,
     NULL,
     NULL,
     false,
     false,
     "--pin-policy=numa-local?numa-spread: "
     "unknown policy"},
    {NULL,
     NULL,
     "bob",
     NULL,
     {ENV "numa-local", ENV "numa-spread"},
     REFUSED,
     0,
     NULL,
     NULL,
     false,
     false,
     "--pin-policy given twice (numa-local and numa-spread); give it once"},
    {NULL,
     NULL,
     "bob",
     NULL,
     {ENV "numa-spread", ENV "numa-spread"},
     OK,
     SUBMIT_ASKED,
     "numa-spread",
     "",
     true,
     true,
     NULL},
    /* --pin-profile: checked at submission, whatever the policy */
    {NULL,
     NULL,
     "bob",
     NULL,
     {PENV "500ms", ENV "cache-shared"},
     OK,
     SUBMIT_ASKED,
     "cache-shared",
     "",
     false,
     false,
     NULL},
    {NULL,
     "open",
     "bob",
     NULL,
     {PENV ""},
     OK,
     SUBMIT_NONE,
     NULL,
     "",
     false,
     false,
     NULL},
    {NULL,
     "open",
     "bob",
     NULL,
     {PENV "off"},
     OK,
     SUBMIT_NONE,
     NULL,
     "",
     false,
     false,
     NULL},
    /* "--pin-profile" without a value reaches job_submit as "(null)" */
    {NULL,
     "open",
     "bob",
     NULL,
     {PENV "(null)"},
     OK,
     SUBMIT_NONE,
     NULL,
     "",
     false,
     false,
     NULL},
    {NULL,
     NULL,
     "bob",
     NULL,
     {PENV "(null)", ENV "cache-shared"},
     OK,
     SUBMIT_ASKED,
     "cache-shared",
     "",
     false,
     false,
     NULL},
    {NULL,
     "open",
     "bob",
     NULL,
     {PENV "fast"},
     REFUSED,
     0,
     NULL,
     NULL,
     false,
     false,
     "--pin-profile=fast: not a duration; give seconds, "
     "e.g. 60, 60s, 500ms or 2m (or yes, no)"},
    {NULL,
     "open",
     "bob",
     NULL,
     {PENV "1ms"},
     REFUSED,
     0,
     NULL,
     NULL,
     false,
     false,
     "--pin-profile=1ms: out of range; give 100ms to 3600s"},
    {NULL,
     "open",
     "bob",
     NULL,
     {PENV "1s", PENV "2s"},
     REFUSED,
     0,
     NULL,
     NULL,
     false,
     false,
     "--pin-profile given twice (1s and 2s)"},
    /* a name that only starts like ours, and the prolog spelling: ignored */
    {NULL,
     "open",
     "bob",
     NULL,
     {SUBMIT_SPANK_ENV_NAME "x=random", "SPANK_" ENV "random"},
     OK,
     SUBMIT_NONE,
     NULL,
     "",
     false,
     false,
     NULL},
};

START_TEST (test_decide)
{
    const struct dcase *tc = &cases[_i];
    struct submit_decision d;
    struct pin_conf c;
    job_desc_msg_t job;
    pin_error_t e = {""};
    char *env[3];
    int n = 0, rc;

    conf_from (&c, tc->conf ? tc->conf : site);
    job_init (&job);
    job.partition = (char *)tc->partition;
    job.account = (char *)tc->account;
    while (n < 3 && tc->env[n]) {
        env[n] = (char *)tc->env[n];
        n++;
    }
    job.spank_job_env = n ? env : NULL;
    job.spank_job_env_size = (uint32_t)n;
    errno = 0;
    rc = submit_decide (&c, &job, tc->user, &d, &e);
    if (tc->rc == REFUSED) {
        ck_assert_msg (rc == -1, "case %d accepted", _i);
        ck_assert_int_eq (errno, EINVAL);
        ck_assert_msg (strstr (e.text, tc->err),
                       "case %d: [%s] lacks [%s]",
                       _i,
                       e.text,
                       tc->err);
        ck_assert_msg (!strchr (e.text, '\n'), "two lines: %s", e.text);
        return;
    }
    ck_assert_msg (rc == 0, "case %d: %s", _i, e.text);
    ck_assert_int_eq (d.source, tc->source);
    if (tc->policy)
        ck_assert_str_eq (place_policy_name ((enum place_policy)d.policy),
                          tc->policy);
    ck_assert_str_eq (d.write_value, tc->write);
    ck_assert_uint_eq (d.threads_per_core, tc->tpc1 ? 1 : NO_VAL16);
    ck_assert_uint_eq (d.task_dist,
                       tc->fcyclic ? (uint32_t)SLURM_DIST_BLOCK_CFULL
                                   : NO_VAL);
    if (d.source == SUBMIT_NONE)
        ck_assert_str_eq (d.note, "");
    else
        ck_assert_msg (strncmp (d.note, "pin: ", 5) == 0, "%s", d.note);
}
END_TEST

/* What the user set explicitly is never overridden. */
static const struct ucase {
    const char *what;
    uint16_t threads_per_core, ntasks_per_core, sockets, cores, cpu_bind;
    uint32_t dist;
    bool want_tpc, want_dist;
} user_cases[] = {
    {"nothing", NO_VAL16, NO_VAL16, NO_VAL16, NO_VAL16, 0, NO_VAL, true, true},
    {"--threads-per-core=2",
     2,
     NO_VAL16,
     NO_VAL16,
     NO_VAL16,
     0,
     NO_VAL,
     false,
     true},
    {"--hint=nomultithread",
     1,
     NO_VAL16,
     NO_VAL16,
     NO_VAL16,
     CPU_BIND_TO_THREADS | CPU_BIND_ONE_THREAD_PER_CORE,
     NO_VAL,
     false,
     true},
    {"--hint=multithread",
     NO_VAL16,
     INFINITE16,
     NO_VAL16,
     NO_VAL16,
     CPU_BIND_TO_THREADS,
     NO_VAL,
     false,
     true},
    {"-B 2:2", NO_VAL16, NO_VAL16, 2, 2, 0, NO_VAL, false, true},
    {"--ntasks-per-core=2",
     NO_VAL16,
     2,
     NO_VAL16,
     NO_VAL16,
     0,
     NO_VAL,
     false,
     true},
    {"--cpu-bind=cores",
     NO_VAL16,
     NO_VAL16,
     NO_VAL16,
     NO_VAL16,
     CPU_BIND_TO_CORES,
     NO_VAL,
     false,
     true},
    {"-m block:block",
     NO_VAL16,
     NO_VAL16,
     NO_VAL16,
     NO_VAL16,
     0,
     SLURM_DIST_BLOCK_BLOCK,
     true,
     false},
    {"-m cyclic",
     NO_VAL16,
     NO_VAL16,
     NO_VAL16,
     NO_VAL16,
     0,
     SLURM_DIST_CYCLIC,
     true,
     false},
    {"task_dist unknown",
     NO_VAL16,
     NO_VAL16,
     NO_VAL16,
     NO_VAL16,
     0,
     SLURM_DIST_UNKNOWN,
     true,
     true},
};

START_TEST (test_never_override)
{
    const struct ucase *uc = &user_cases[_i];
    struct submit_decision d;
    struct pin_conf c;
    job_desc_msg_t job;
    pin_error_t e = {""};
    char *env[] = {(char *)ENV "numa-spread"};

    pin_conf_defaults (&c);
    job_init (&job);
    job.threads_per_core = uc->threads_per_core;
    job.ntasks_per_core = uc->ntasks_per_core;
    job.sockets_per_node = uc->sockets;
    job.cores_per_socket = uc->cores;
    job.cpu_bind_type = uc->cpu_bind;
    job.task_dist = uc->dist;
    job.spank_job_env = env;
    job.spank_job_env_size = 1;
    ck_assert_msg (submit_decide (&c, &job, "bob", &d, &e) == 0, "%s", e.text);
    ck_assert_msg ((d.threads_per_core == 1) == uc->want_tpc,
                   "%s: tpc %u",
                   uc->what,
                   d.threads_per_core);
    ck_assert_msg ((d.task_dist == SLURM_DIST_BLOCK_CFULL) == uc->want_dist,
                   "%s: dist %x",
                   uc->what,
                   d.task_dist);
    submit_apply_fields (&job, &d);
    ck_assert_uint_eq (job.threads_per_core,
                       uc->want_tpc ? 1 : uc->threads_per_core);
    ck_assert_uint_eq (job.task_dist,
                       uc->want_dist ? (uint32_t)SLURM_DIST_BLOCK_CFULL
                                     : uc->dist);
    ck_assert_uint_eq (job.ntasks_per_core, uc->ntasks_per_core);
    ck_assert_uint_eq (job.sockets_per_node, uc->sockets);
    ck_assert_uint_eq (job.cores_per_socket, uc->cores);
    ck_assert_uint_eq (job.cpu_bind_type, uc->cpu_bind);
    if (uc->want_tpc || uc->want_dist)
        ck_assert_msg (strstr (d.note, "; added "), "%s", d.note);
}
END_TEST

/* Hostile input: very long values and partition names, many entries,
 * NULL entries; one line, bounded, no crash (run under ASan too). */
START_TEST (test_hostile)
{
    static const size_t sizes[] = {63, 64, 65, 1000, 100000};
    struct submit_decision d;
    struct pin_conf c;
    job_desc_msg_t job;
    pin_error_t e;
    size_t i;

    conf_from (&c, site);
    for (i = 0; i < sizeof (sizes) / sizeof (sizes[0]); i++) {
        size_t len = strlen (ENV) + sizes[i];
        char *v = malloc (len + 1);
        char *env[4];
        char *part = malloc (sizes[i] + 1);

        ck_assert_ptr_nonnull (v);
        ck_assert_ptr_nonnull (part);
        memcpy (v, ENV, strlen (ENV));
        memset (v + strlen (ENV), 'a', sizes[i]);
        v[len] = '\0';
        memset (part, '\xe9', sizes[i]);
        part[sizes[i]] = '\0';
        env[0] = NULL;
        env[1] = v;
        env[2] = (char *)"OTHER=1";
        env[3] = NULL;
        job_init (&job);
        job.spank_job_env = env;
        job.spank_job_env_size = 3;
        job.partition = part;
        memset (&e, 0, sizeof (e));
        ck_assert_int_eq (submit_decide (&c, &job, "bob", &d, &e), -1);
        ck_assert_msg (strncmp (e.text, "--pin-policy=aaaa", 17) == 0,
                       "%s",
                       e.text);
        ck_assert_msg (strlen (e.text) < sizeof (e.text) - 1
                           || e.text[sizeof (e.text) - 1] == '\0',
                       "unbounded");
        /* no value: the partition name alone decides (global rules) */
        job.spank_job_env = NULL;
        job.spank_job_env_size = 0;
        ck_assert_int_eq (submit_decide (&c, &job, part, &d, &e), 0);
        ck_assert_int_eq (d.source, SUBMIT_DEFAULT);
        free (v);
        free (part);
    }
    /* NULL job or conf */
    ck_assert_int_eq (submit_decide (NULL, &job, "bob", &d, &e), -1);
    ck_assert_int_eq (submit_decide (&c, NULL, "bob", &d, &e), -1);
}
END_TEST

START_TEST (test_env_find)
{
    char *env[] = {(char *)"A=1",
                   NULL,
                   (char *)"AB=2",
                   (char *)"B",
                   (char *)"B=3"};

    ck_assert_int_eq (submit_env_find (env, 5, "A"), 0);
    ck_assert_int_eq (submit_env_find (env, 5, "AB"), 2);
    ck_assert_int_eq (submit_env_find (env, 5, "B"), 4);
    ck_assert_int_eq (submit_env_find (env, 5, "C"), -1);
    ck_assert_int_eq (submit_env_find (env, 1, "AB"), -1);
    ck_assert_int_eq (submit_env_find (NULL, 5, "A"), -1);
}
END_TEST

START_TEST (test_policy_names)
{
    char buf[128];
    ck_assert_str_eq (submit_policy_names ((1u << PLACE_NUMA_LOCAL)
                                               | (1u << PLACE_NONE),
                                           buf,
                                           sizeof (buf)),
                      "none, numa-local");
    ck_assert_str_eq (submit_policy_names (0, buf, sizeof (buf)), "(none)");
    submit_policy_names (PIN_CONF_ALLOW_ALL, buf, 8);
    ck_assert_uint_lt (strlen (buf), 8);
}
END_TEST

/* numa-spread's reshape of a one-task job srun creates (SpreadSockets). */
static const struct rcase {
    const char *what;
    const char *conf; /* pin.conf text */
    const char *partition;
    const char *policy; /* --pin-policy value */
    const char *mark;   /* SPANK_PIN_ALLOC_BY value, NULL: none */
    bool batch;         /* a script: sbatch */
    uint32_t ntasks;
    uint16_t cpt;
    uint16_t shared, nps, tpc;
    uint32_t dist, het;
    uint32_t want_tasks; /* NO_VAL: not reshaped */
    uint16_t want_cpt;
} rcases[] = {
    {"srun -c 4, 2 sockets",
     "SpreadSockets=2\n",
     NULL,
     "numa-spread",
     "srun",
     false,
     1,
     4,
     NO_VAL16,
     NO_VAL16,
     NO_VAL16,
     NO_VAL,
     NO_VAL,
     2,
     2},
    {"srun -c 8, 4 sockets",
     "SpreadSockets=4\n",
     NULL,
     "numa-spread",
     "srun",
     false,
     NO_VAL,
     8,
     NO_VAL16,
     NO_VAL16,
     NO_VAL16,
     NO_VAL,
     NO_VAL,
     4,
     2},
    {"the partition's SpreadSockets",
     "PartitionName=wide SpreadSockets=2\n",
     "wide",
     "numa-spread",
     "srun",
     false,
     1,
     4,
     NO_VAL16,
     NO_VAL16,
     NO_VAL16,
     NO_VAL,
     NO_VAL,
     2,
     2},
    {"another partition: off",
     "PartitionName=wide SpreadSockets=2\n",
     "debug",
     "numa-spread",
     "srun",
     false,
     1,
     4,
     NO_VAL16,
     NO_VAL16,
     NO_VAL16,
     NO_VAL,
     NO_VAL,
     NO_VAL,
     4},
    {"SpreadSockets=0",
     "SpreadSockets=0\n",
     NULL,
     "numa-spread",
     "srun",
     false,
     1,
     4,
     NO_VAL16,
     NO_VAL16,
     NO_VAL16,
     NO_VAL,
     NO_VAL,
     NO_VAL,
     4},
    {"a partition turns it off",
     "SpreadSockets=2\nPartitionName=p "
     "SpreadSockets=0\n",
     "p",
     "numa-spread",
     "srun",
     false,
     1,
     4,
     NO_VAL16,
     NO_VAL16,
     NO_VAL16,
     NO_VAL,
     NO_VAL,
     NO_VAL,
     4},
    {"no srun mark (salloc)",
     "SpreadSockets=2\n",
     NULL,
     "numa-spread",
     NULL,
     false,
     1,
     4,
     NO_VAL16,
     NO_VAL16,
     NO_VAL16,
     NO_VAL,
     NO_VAL,
     NO_VAL,
     4},
    {"another mark value",
     "SpreadSockets=2\n",
     NULL,
     "numa-spread",
     "sbatch",
     false,
     1,
     4,
     NO_VAL16,
     NO_VAL16,
     NO_VAL16,
     NO_VAL,
     NO_VAL,
     NO_VAL,
     4},
    {"a batch script",
     "SpreadSockets=2\n",
     NULL,
     "numa-spread",
     "srun",
     true,
     1,
     4,
     NO_VAL16,
     NO_VAL16,
     NO_VAL16,
     NO_VAL,
     NO_VAL,
     NO_VAL,
     4},
    {"numa-local",
     "SpreadSockets=2\n",
     NULL,
     "numa-local",
     "srun",
     false,
     1,
     4,
     NO_VAL16,
     NO_VAL16,
     NO_VAL16,
     NO_VAL,
     NO_VAL,
     NO_VAL,
     4},
    {"-n 2",
     "SpreadSockets=2\n",
     NULL,
     "numa-spread",
     "srun",
     false,
     2,
     4,
     NO_VAL16,
     NO_VAL16,
     NO_VAL16,
     NO_VAL,
     NO_VAL,
     NO_VAL,
     4},
    {"-c 3 on 2 sockets",
     "SpreadSockets=2\n",
     NULL,
     "numa-spread",
     "srun",
     false,
     1,
     3,
     NO_VAL16,
     NO_VAL16,
     NO_VAL16,
     NO_VAL,
     NO_VAL,
     NO_VAL,
     3},
    {"-c 1",
     "SpreadSockets=2\n",
     NULL,
     "numa-spread",
     "srun",
     false,
     1,
     1,
     NO_VAL16,
     NO_VAL16,
     NO_VAL16,
     NO_VAL,
     NO_VAL,
     NO_VAL,
     1},
    {"no -c",
     "SpreadSockets=2\n",
     NULL,
     "numa-spread",
     "srun",
     false,
     1,
     NO_VAL16,
     NO_VAL16,
     NO_VAL16,
     NO_VAL16,
     NO_VAL,
     NO_VAL,
     NO_VAL,
     NO_VAL16},
    {"--exclusive",
     "SpreadSockets=2\n",
     NULL,
     "numa-spread",
     "srun",
     false,
     1,
     4,
     JOB_SHARED_NONE,
     NO_VAL16,
     NO_VAL16,
     NO_VAL,
     NO_VAL,
     NO_VAL,
     4},
    {"--ntasks-per-socket",
     "SpreadSockets=2\n",
     NULL,
     "numa-spread",
     "srun",
     false,
     1,
     4,
     NO_VAL16,
     1,
     NO_VAL16,
     NO_VAL,
     NO_VAL,
     NO_VAL,
     4},
    {"--threads-per-core",
     "SpreadSockets=2\n",
     NULL,
     "numa-spread",
     "srun",
     false,
     1,
     4,
     NO_VAL16,
     NO_VAL16,
     2,
     NO_VAL,
     NO_VAL,
     NO_VAL,
     4},
    {"-m",
     "SpreadSockets=2\n",
     NULL,
     "numa-spread",
     "srun",
     false,
     1,
     4,
     NO_VAL16,
     NO_VAL16,
     NO_VAL16,
     SLURM_DIST_CYCLIC,
     NO_VAL,
     NO_VAL,
     4},
    {"a het job component",
     "SpreadSockets=2\n",
     NULL,
     "numa-spread",
     "srun",
     false,
     1,
     4,
     NO_VAL16,
     NO_VAL16,
     NO_VAL16,
     NO_VAL,
     0,
     NO_VAL,
     4},
};

START_TEST (test_reshape)
{
    const struct rcase *rc = &rcases[_i];
    struct submit_decision d;
    struct pin_conf c;
    job_desc_msg_t job;
    pin_error_t e = {""};
    char pol[64], mark[64];
    char *env[2];
    uint32_t n = 0;

    conf_from (&c, rc->conf);
    job_init (&job);
    job.num_tasks = rc->ntasks;
    job.cpus_per_task = rc->cpt;
    job.shared = rc->shared;
    job.ntasks_per_socket = rc->nps;
    job.ntasks_per_node = NO_VAL16;
    job.threads_per_core = rc->tpc;
    job.task_dist = rc->dist;
    job.het_job_offset = rc->het;
    job.min_nodes = 1;
    job.max_nodes = NO_VAL;
    job.partition = (char *)rc->partition;
    job.script = rc->batch ? (char *)"#!/bin/sh\nsrun a.out\n" : NULL;
    snprintf (pol, sizeof (pol), "%s%s", ENV, rc->policy);
    env[n++] = pol;
    if (rc->mark) {
        snprintf (mark,
                  sizeof (mark),
                  "%s=%s",
                  SUBMIT_SRUN_MARK_NAME,
                  rc->mark);
        env[n++] = mark;
    }
    job.spank_job_env = env;
    job.spank_job_env_size = n;
    ck_assert_msg (submit_decide (&c, &job, "bob", &d, &e) == 0,
                   "%s: %s",
                   rc->what,
                   e.text);
    ck_assert_msg (d.num_tasks == rc->want_tasks,
                   "%s: num_tasks %u",
                   rc->what,
                   d.num_tasks);
    submit_apply_fields (&job, &d);
    if (rc->want_tasks == NO_VAL) {
        ck_assert_uint_eq (job.num_tasks, rc->ntasks);
        ck_assert_uint_eq (job.ntasks_per_socket, rc->nps);
        ck_assert_msg (!(job.bitflags & JOB_NTASKS_SET), "%s", rc->what);
        ck_assert_msg (!strstr (d.note, "ntasks_per_socket"),
                       "%s: %s",
                       rc->what,
                       d.note);
    } else {
        ck_assert_uint_eq (job.num_tasks, rc->want_tasks);
        ck_assert_uint_eq (job.ntasks_per_socket, 1);
        ck_assert_msg (job.bitflags & JOB_NTASKS_SET, "%s", rc->what);
        ck_assert_msg (strstr (d.note, "ntasks_per_socket=1"),
                       "%s: %s",
                       rc->what,
                       d.note);
        ck_assert_uint_eq (job.threads_per_core, 1);
    }
    ck_assert_uint_eq (job.cpus_per_task, rc->want_cpt);
}
END_TEST

/* SpreadSockets= values */
START_TEST (test_spread_conf)
{
    static const char *bad[] = {"SpreadSockets=1\n",
                                "SpreadSockets=65\n",
                                "SpreadSockets=two\n",
                                "SpreadSockets=-2\n",
                                "SpreadSockets=\n",
                                "PartitionName=p SpreadSockets=1\n"};
    char path[] = "/tmp/test_submit.XXXXXX";
    struct pin_conf c;
    struct pin_conf_rules r;
    size_t i;

    for (i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        pin_error_t e = {""};
        int fd = mkstemp (path);
        ck_assert_int_ge (fd, 0);
        ck_assert_int_eq (write (fd, bad[i], strlen (bad[i])),
                          (int)strlen (bad[i]));
        close (fd);
        pin_conf_defaults (&c);
        ck_assert_int_eq (pin_conf_load_file (&c, path, true, &e), -1);
        ck_assert_msg (strstr (e.text, "SpreadSockets"), "%s", e.text);
        ck_assert_ptr_null (strchr (e.text, '\n'));
        unlink (path);
        strcpy (path, "/tmp/test_submit.XXXXXX");
    }
    pin_conf_defaults (&c);
    pin_conf_rules_for (&c, NULL, &r);
    ck_assert_int_eq (r.spread_sockets, 0);
    conf_from (&c, "SpreadSockets=2\nPartitionName=big SpreadSockets=8\n");
    pin_conf_rules_for (&c, "big", &r);
    ck_assert_int_eq (r.spread_sockets, 8);
    pin_conf_rules_for (&c, "other", &r);
    ck_assert_int_eq (r.spread_sockets, 2);
}
END_TEST

/* No rules (pin.conf broken, no last good copy): a job without
 * --pin-policy is left alone, one with it is refused naming the problem;
 * --pin-profile is still checked. */
START_TEST (test_tres_drop_cpu)
{
    static const struct {
        const char *in, *out;
    } drops[] = {
        {"cpu=2", ""},
        {"cpu:2", ""},
        {"cpu=2,gres/gpu:1", "gres/gpu:1"},
        {"gres/gpu:1,cpu=2", "gres/gpu:1"},
        {"gres/gpu:1,cpu=2,license/a=1", "gres/gpu:1,license/a=1"},
        {"gres/gpu:1", "gres/gpu:1"},
        {"cpuset=1", "cpuset=1"},
        {"", ""},
    };
    char buf[64];

    for (size_t i = 0; i < sizeof (drops) / sizeof (drops[0]); i++) {
        snprintf (buf, sizeof (buf), "%s", drops[i].in);
        submit_tres_drop_cpu (buf);
        ck_assert_str_eq (buf, drops[i].out);
    }
    submit_tres_drop_cpu (NULL);
}
END_TEST

/* GpuBinding=enforce: GPU jobs with a pinning policy get
 * GRES_ENFORCE_BIND; others, and jobs with their own gres flag, do not. */
START_TEST (test_gpu_binding)
{
    static const struct {
        const char *tres;
        bool gpu;
    } reqs[] = {
        {"gres/gpu:1", true},
        {"gres:gpu:1", true},
        {"gres/gpu=2", true},
        {"gres/gpu:tesla:1", true},
        {"gres/gpu", true},
        {"cpu=2,gres/gpu:1", true},
        {"license/a=1;gres/gpu:1", true},
        {"gres/gpu:0", false},
        {"gres/gpu:tesla:0", false},
        {"gres/gpus:1", false},
        {"gres/mps:100", false},
        {"gres/gpuX:1", false},
        {"cpu=2", false},
        {"", false},
    };
    char *envp[2] = {NULL, NULL};
    struct submit_decision d;
    pin_error_t e = {""};
    struct pin_conf c;
    job_desc_msg_t job;

    for (size_t i = 0; i < sizeof (reqs) / sizeof (reqs[0]); i++) {
        job_init (&job);
        job.tres_per_node = (char *)reqs[i].tres;
        ck_assert_msg (submit_requests_gpus (&job) == reqs[i].gpu,
                       "%s",
                       reqs[i].tres);
        job_init (&job);
        job.tres_per_task = (char *)reqs[i].tres;
        ck_assert (submit_requests_gpus (&job) == reqs[i].gpu);
    }
    job_init (&job);
    job.tres_per_job = "gres/gpu:2";
    ck_assert (submit_requests_gpus (&job));
    job_init (&job);
    job.tres_per_socket = "gres/gpu:1";
    ck_assert (submit_requests_gpus (&job));

    /* the default: never */
    conf_from (&c, site);
    job_init (&job);
    job.tres_per_node = "gres/gpu:1";
    ck_assert_int_eq (submit_decide (&c, &job, "bob", &d, &e), 0);
    ck_assert (!d.gres_enforce_binding);

    conf_from (&c,
               "DefaultPolicy=numa-local\nGpuBinding=enforce\n"
               "PartitionName=free GpuBinding=no\n"
               "PartitionName=open DefaultPolicy=none\n");
    /* site default numa-local, GPUs: added, and written by apply */
    job_init (&job);
    job.tres_per_node = "gres/gpu:1";
    ck_assert_int_eq (submit_decide (&c, &job, "bob", &d, &e), 0);
    ck_assert (d.gres_enforce_binding);
    ck_assert_msg (strstr (d.note, "gres_flags=enforce-binding"), "%s", d.note);
    submit_apply_fields (&job, &d);
    ck_assert (job.bitflags & GRES_ENFORCE_BIND);
    /* no GPUs: nothing */
    job_init (&job);
    ck_assert_int_eq (submit_decide (&c, &job, "bob", &d, &e), 0);
    ck_assert (!d.gres_enforce_binding);
    /* the job's own flag is kept */
    job_init (&job);
    job.tres_per_node = "gres/gpu:1";
    job.bitflags = GRES_DISABLE_BIND;
    ck_assert_int_eq (submit_decide (&c, &job, "bob", &d, &e), 0);
    ck_assert (!d.gres_enforce_binding);
    submit_apply_fields (&job, &d);
    ck_assert (!(job.bitflags & GRES_ENFORCE_BIND));
    /* a partition that says no */
    job_init (&job);
    job.tres_per_node = "gres/gpu:1";
    job.partition = "free";
    ck_assert_int_eq (submit_decide (&c, &job, "bob", &d, &e), 0);
    ck_assert (!d.gres_enforce_binding);
    /* a policy that does not pin: none (partition default), dynamic */
    job_init (&job);
    job.tres_per_node = "gres/gpu:1";
    job.partition = "open";
    ck_assert_int_eq (submit_decide (&c, &job, "bob", &d, &e), 0);
    ck_assert (!d.gres_enforce_binding);
    job_init (&job);
    job.tres_per_node = "gres/gpu:1";
    envp[0] = ENV "dynamic";
    job.spank_job_env = envp;
    job.spank_job_env_size = 1;
    ck_assert_int_eq (submit_decide (&c, &job, "bob", &d, &e), 0);
    ck_assert (!d.gres_enforce_binding);
    /* asked numa-spread with --gpus: added */
    job_init (&job);
    job.tres_per_job = "gres/gpu:2";
    envp[0] = ENV "numa-spread";
    job.spank_job_env = envp;
    job.spank_job_env_size = 1;
    ck_assert_int_eq (submit_decide (&c, &job, "bob", &d, &e), 0);
    ck_assert (d.gres_enforce_binding);
    /* bad values */
    {
        static const char *bad[] = {"GpuBinding=yes\n",
                                    "GpuBinding=\n",
                                    "PartitionName=p GpuBinding=always\n"};
        for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
            char path[] = "/tmp/test_submit.XXXXXX";
            int fd = mkstemp (path);
            ck_assert_int_ge (fd, 0);
            ck_assert_int_eq (write (fd, bad[i], strlen (bad[i])),
                              (int)strlen (bad[i]));
            close (fd);
            pin_conf_defaults (&c);
            ck_assert_int_eq (pin_conf_load_file (&c, path, true, &e), -1);
            ck_assert_msg (strstr (e.text, "GpuBinding"), "%s", e.text);
            unlink (path);
        }
    }
}
END_TEST

START_TEST (test_unruled)
{
    job_desc_msg_t job;
    struct submit_decision d;
    pin_error_t e = {""};
    char *pol[] = {"_SLURM_SPANK_OPTION_pin_pin_policy=numa-local", NULL};
    char *prof[] = {"_SLURM_SPANK_OPTION_pin_pin_profile=10ms", NULL};
    char *ok[] = {"_SLURM_SPANK_OPTION_pin_pin_profile=2s", NULL};

    job_init (&job);
    ck_assert_int_eq (submit_decide_unruled (&job, "/x/pin.conf:3: bad", &d, &e),
                      0);
    ck_assert_int_eq (d.source, SUBMIT_NONE);
    ck_assert_str_eq (d.write_value, "");
    ck_assert_uint_eq (d.threads_per_core, NO_VAL16);
    ck_assert_uint_eq (d.task_dist, NO_VAL);
    job.spank_job_env = ok;
    job.spank_job_env_size = 1;
    ck_assert_int_eq (submit_decide_unruled (&job, "/x/pin.conf:3: bad", &d, &e),
                      0);
    ck_assert_int_eq (d.source, SUBMIT_NONE);
    job.spank_job_env = pol;
    ck_assert_int_eq (submit_decide_unruled (&job, "/x/pin.conf:3: bad", &d, &e),
                      -1);
    ck_assert_int_eq (errno, EAGAIN);
    ck_assert_str_eq (e.text,
                      "--pin-policy=numa-local: refused until the site's "
                      "pin.conf is fixed (leave --pin-policy out "
                      "meanwhile): /x/pin.conf:3: bad");
    job.spank_job_env = prof;
    ck_assert_int_eq (submit_decide_unruled (&job, "/x/pin.conf:3: bad", &d, &e),
                      -1);
    ck_assert_ptr_nonnull (strstr (e.text, "--pin-profile=10ms: "));
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("submit");
    TCase *tc = tcase_create ("submit");

    tcase_add_loop_test (tc,
                         test_decide,
                         0,
                         (int)(sizeof (cases) / sizeof (cases[0])));
    tcase_add_loop_test (tc,
                         test_never_override,
                         0,
                         (int)(sizeof (user_cases) / sizeof (user_cases[0])));
    tcase_add_loop_test (tc,
                         test_reshape,
                         0,
                         (int)(sizeof (rcases) / sizeof (rcases[0])));
    tcase_add_test (tc, test_spread_conf);
    tcase_add_test (tc, test_gpu_binding);
    tcase_add_test (tc, test_hostile);
    tcase_add_test (tc, test_env_find);
    tcase_add_test (tc, test_policy_names);
    tcase_add_test (tc, test_unruled);
    tcase_add_test (tc, test_tres_drop_cpu);
    suite_add_tcase (s, tc);
    return tap_run (s, NULL, 0);
}
