/* test/test_experiment.c - enrolment in a policy experiment
 * (experiment.h, submit_decide_at) */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libacct/acct.h"
#include "libconf/conf.h"
#include "libplace/place.h"
#include "libsubmit/experiment.h"
#include "libsubmit/submit.h"
#include "libtest/tap.h"

#define ENV SUBMIT_SPANK_ENV_NAME "="
#define NOW 1800000000 /* 2027-01-15 */

static void job_init (job_desc_msg_t *job, const char *name, uint32_t ntasks)
{
    memset (job, 0, sizeof (*job));
    job->threads_per_core = NO_VAL16;
    job->ntasks_per_core = NO_VAL16;
    job->sockets_per_node = NO_VAL16;
    job->cores_per_socket = NO_VAL16;
    job->task_dist = NO_VAL;
    job->num_tasks = ntasks;
    job->cpus_per_task = NO_VAL16;
    job->min_cpus = NO_VAL;
    job->name = (char *)name;
}

static void conf_from (struct pin_conf *c, const char *text)
{
    char path[] = "/tmp/test_experiment.XXXXXX";
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
    "Experiment=pin-2027\n"
    "ExperimentPolicies=none,numa-local,cache-shared\n"
    "ExperimentSeed=7\n"
    "PartitionName=pilot ForcedPolicy=numa-spread\n"
    "PartitionName=off Experiment=none\n"
    "PartitionName=sims ExperimentJobNames=sim-*,reco "
    "ExperimentAccounts=alice,atlas\n"
    "PartitionName=fifth ExperimentShare=0.2\n"
    "PartitionName=over ExperimentUntil=2027-01-01\n";

/* Decide for a job; returns the arm's policy (-1 not enrolled) and, in
 * tok, the AdminComment token. */
static int arm_of (const struct pin_conf *c,
                   struct submit_exp_book *book,
                   job_desc_msg_t *job,
                   uint32_t uid,
                   struct submit_decision *d)
{
    struct submit_ctx ctx = {.now = NOW, .uid = uid, .book = book};
    pin_error_t e = {""};

    ck_assert_msg (submit_decide_at (c, job, "bob", &ctx, d, &e) == 0,
                   "%s",
                   e.text);
    if (d->source != SUBMIT_EXPERIMENT) {
        ck_assert_str_eq (d->admin_token, "");
        return -1;
    }
    return d->policy;
}

static int arm_index (int policy)
{
    return policy == PLACE_NONE ? 0 : policy == PLACE_NUMA_LOCAL ? 1 : 2;
}

/* Permuted blocks: after every job, the arms of each block differ by at
 * most one; over several blocks each arm gets its third. */
START_TEST (test_balanced_in_blocks)
{
    struct pin_conf c;
    struct submit_exp_book *book = submit_exp_book_create ();
    struct submit_decision d;
    const char *names[] = {"sim-a", "reco", "ana"};
    int count[3][3][3] = {{{0}}}; /* [uid][name][arm] */
    int total[3] = {0};

    conf_from (&c, site);
    ck_assert_ptr_nonnull (book);
    for (int n = 0; n < 300; n++) {
        /* interleaved users and kinds */
        uint32_t u = (uint32_t)(n % 3), k = (uint32_t)(n / 3 % 3);
        job_desc_msg_t job;
        int p, a, lo = 1 << 30, hi = 0;

        job_init (&job, names[k], 4);
        p = arm_of (&c, book, &job, 1000 + u, &d);
        ck_assert_int_ge (p, 0);
        a = arm_index (p);
        count[u][k][a]++;
        total[a]++;
        for (int i = 0; i < 3; i++) {
            lo = count[u][k][i] < lo ? count[u][k][i] : lo;
            hi = count[u][k][i] > hi ? count[u][k][i] : hi;
        }
        ck_assert_msg (hi - lo <= 1,
                       "block (uid %u, %s) unbalanced after job %d: %d..%d",
                       1000 + u,
                       names[k],
                       n,
                       lo,
                       hi);
        /* the token names the experiment, the arm and the block */
        char name[64], arm[64], block[32], want[17];
        ck_assert (acct_exp_token_parse (d.admin_token,
                                         name,
                                         sizeof (name),
                                         arm,
                                         sizeof (arm),
                                         block,
                                         sizeof (block)));
        ck_assert_str_eq (name, "pin-2027");
        ck_assert_str_eq (arm, place_policy_name ((enum place_policy)p));
        submit_exp_block ("pin-2027", 1000 + u, names[k], 4, want);
        ck_assert_str_eq (block, want);
        /* the arm's policy is written into the job, none too (so that
         * no site default replaces it) */
        ck_assert_str_eq (d.write_value, arm);
        ck_assert_msg (strstr (d.note, "experiment pin-2027, arm "), "%s", d.note);
    }
    /* 9 blocks of 33 or 34 jobs: each arm 100, give or take one a block */
    for (int i = 0; i < 3; i++)
        ck_assert_msg (total[i] >= 100 - 9 && total[i] <= 100 + 9,
                       "arm %d: %d of 300",
                       i,
                       total[i]);
    submit_exp_book_destroy (book);
}
END_TEST

/* The same seed and order of submissions give the same arms; another
 * seed another sequence; the arms are not a fixed rotation. */
START_TEST (test_reproducible)
{
    struct pin_conf c, c2;
    int a[2][60], b[60];
    int differ = 0, rotation = 1;

    conf_from (&c, site);
    conf_from (&c2, "AllowedPolicies=all\nExperiment=pin-2027\n"
                    "ExperimentPolicies=none,numa-local,cache-shared\n"
                    "ExperimentSeed=8\n");
    for (int run = 0; run < 2; run++) {
        struct submit_exp_book *book = submit_exp_book_create ();
        for (int n = 0; n < 60; n++) {
            struct submit_decision d;
            job_desc_msg_t job;
            job_init (&job, n % 2 ? "sim-a" : "reco", 2);
            a[run][n] = arm_of (&c, book, &job, 1000, &d);
        }
        submit_exp_book_destroy (book);
    }
    ck_assert_mem_eq (a[0], a[1], sizeof (a[0]));
    {
        struct submit_exp_book *book = submit_exp_book_create ();
        for (int n = 0; n < 60; n++) {
            struct submit_decision d;
            job_desc_msg_t job;
            job_init (&job, n % 2 ? "sim-a" : "reco", 2);
            b[n] = arm_of (&c2, book, &job, 1000, &d);
            differ += b[n] != a[0][n];
        }
        submit_exp_book_destroy (book);
    }
    ck_assert_int_gt (differ, 0);
    /* within one block (every other job), cycles are permutations drawn
     * afresh: not all cycles in the same order */
    for (int n = 6; n < 60; n += 2)
        rotation &= a[0][n] == a[0][n - 6];
    ck_assert_int_eq (rotation, 0);
}
END_TEST

/* Never overrides a user's policy, a forced partition, a partition that
 * turns it off, the filters, the end date; the share is about right. */
START_TEST (test_eligibility)
{
    struct pin_conf c;
    struct submit_exp_book *book = submit_exp_book_create ();
    struct submit_decision d;
    job_desc_msg_t job;
    char *env[] = {(char *)ENV "numa-spread"};
    char *envnone[] = {(char *)ENV "none"};
    int enrolled = 0;

    conf_from (&c, site);
    /* the user's own policy, whatever it is */
    job_init (&job, "sim-a", 1);
    job.spank_job_env = env;
    job.spank_job_env_size = 1;
    ck_assert_int_eq (arm_of (&c, book, &job, 1000, &d), -1);
    ck_assert_int_eq (d.source, SUBMIT_ASKED);
    ck_assert_int_eq (d.policy, PLACE_NUMA_SPREAD);
    job.spank_job_env = envnone;
    ck_assert_int_eq (arm_of (&c, book, &job, 1000, &d), -1);
    ck_assert_int_eq (d.source, SUBMIT_ASKED);
    /* forced partition */
    job_init (&job, "sim-a", 1);
    job.partition = (char *)"pilot";
    ck_assert_int_eq (arm_of (&c, book, &job, 1000, &d), -1);
    ck_assert_int_eq (d.source, SUBMIT_FORCED);
    /* Experiment=none on the partition: the site default */
    job.partition = (char *)"off";
    ck_assert_int_eq (arm_of (&c, book, &job, 1000, &d), -1);
    ck_assert_int_eq (d.source, SUBMIT_DEFAULT);
    ck_assert_int_eq (d.policy, PLACE_NUMA_LOCAL);
    /* a list of partitions: not enrolled */
    job.partition = (char *)"sims,fifth";
    ck_assert_int_eq (arm_of (&c, book, &job, 1000, &d), -1);
    /* filters: name and account */
    job.partition = (char *)"sims";
    job.account = (char *)"alice";
    ck_assert_int_ge (arm_of (&c, book, &job, 1000, &d), 0);
    job.name = (char *)"ana";
    ck_assert_int_eq (arm_of (&c, book, &job, 1000, &d), -1);
    ck_assert_msg (strstr (d.exp_why, "ExperimentJobNames"), "%s", d.exp_why);
    job.name = (char *)"reco";
    job.account = (char *)"cms";
    ck_assert_int_eq (arm_of (&c, book, &job, 1000, &d), -1);
    job.account = NULL;
    ck_assert_int_eq (arm_of (&c, book, &job, 1000, &d), -1);
    ck_assert_msg (strstr (d.exp_why, "ExperimentAccounts"), "%s", d.exp_why);
    /* over */
    job_init (&job, "x", 1);
    job.partition = (char *)"over";
    ck_assert_int_eq (arm_of (&c, book, &job, 1000, &d), -1);
    ck_assert_msg (strstr (d.exp_why, "ExperimentUntil"), "%s", d.exp_why);
    /* without a context (job_modify): never */
    {
        pin_error_t e = {""};
        job.partition = NULL;
        ck_assert_int_eq (submit_decide (&c, &job, "bob", &d, &e), 0);
        ck_assert_int_eq (d.source, SUBMIT_DEFAULT);
    }
    /* share 0.2 over 2000 jobs of 50 blocks: within 5 sigma of 400 */
    for (int n = 0; n < 2000; n++) {
        job_init (&job, "x", (uint32_t)(1 + n % 50));
        job.partition = (char *)"fifth";
        enrolled += arm_of (&c, book, &job, 1000, &d) >= 0;
    }
    ck_assert_msg (enrolled > 400 - 90 && enrolled < 400 + 90,
                   "%d of 2000 enrolled at share 0.2",
                   enrolled);
    submit_exp_book_destroy (book);
}
END_TEST

/* The token parser: strict, anywhere after a blank */
START_TEST (test_token)
{
    char n[64], a[64], b[32];

    ck_assert (acct_exp_token_parse (
        "pin-experiment=x/none/0123456789abcdef", n, 64, a, 64, b, 32));
    ck_assert_str_eq (n, "x");
    ck_assert_str_eq (a, "none");
    ck_assert (acct_exp_token_parse (
        "JS1:abc pin-experiment=e.1/numa-local/0123456789ABCDEF rest",
        n,
        64,
        a,
        64,
        b,
        32));
    ck_assert_str_eq (a, "numa-local");
    ck_assert (!acct_exp_token_parse (NULL, n, 64, a, 64, b, 32));
    ck_assert (!acct_exp_token_parse ("xpin-experiment=x/none/0123456789abcdef",
                                      n, 64, a, 64, b, 32));
    ck_assert (!acct_exp_token_parse ("pin-experiment=x/none/0123", n, 64, a,
                                      64, b, 32));
    ck_assert (!acct_exp_token_parse ("pin-experiment=x/no ne/0123456789abcdef",
                                      n, 64, a, 64, b, 32));
    ck_assert (!acct_exp_token_parse ("pin-experiment=x/../0123456789abcdeg",
                                      n, 64, a, 64, b, 32));
    ck_assert (!acct_exp_token_parse ("pin-experiment=//0123456789abcdef", n,
                                      64, a, 64, b, 32));
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("experiment");
    TCase *tc = tcase_create ("experiment");

    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_balanced_in_blocks);
    tcase_add_test (tc, test_reproducible);
    tcase_add_test (tc, test_eligibility);
    tcase_add_test (tc, test_token);
    suite_add_tcase (s, tc);
    return tap_run (s, NULL, 0);
}
