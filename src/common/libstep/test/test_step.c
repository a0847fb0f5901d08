/* test/test_step.c - a step's life against a temporary cgroup tree and
 * StateDir (the seam of libcgroup2): no root, no Slurm.  The topology is
 * this machine's (the placement checks skip on a single PU). */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libacct/acct.h"
#include "libaffinity/affinity.h"
#include "libconf/conf.h"
#include "libplace/place.h"
#include "libstep/step.h"
#include "libstep/step_private.h"
#include "libtest/tap.h"
#include "libtest/tmptree.h"
#include "libtopo/topo.h"

static struct pin_conf conf;
static char lines[8][1024];
static int nlines;

static void sink (void *arg, enum steplog_level level, const char *line)
{
    (void)arg;
    (void)level;
    if (nlines < 8)
        snprintf (lines[nlines++], sizeof (lines[0]), "%s", line);
}

/* A cgroup root of plain files (cpu only: the seam cannot enforce a
 * cpuset) and a StateDir below the temporary tree. */
static void setup (void)
{
    tmptree_setup ("test_step");
    tmptree_put ("cg/cgroup.controllers", "cpu\n");
    tmptree_put ("cg/cgroup.subtree_control", "");
    tmptree_put ("cg/slurm-pin/cgroup.subtree_control", "");
    tmptree_put ("cg/slurm-pin/job_7/cgroup.subtree_control", "");
    pin_conf_defaults (&conf);
    tmptree_path (conf.cgroup_root, sizeof (conf.cgroup_root), "cg");
    tmptree_path (conf.state_dir, sizeof (conf.state_dir), "state");
    tmptree_path (conf.topology_cache,
                  sizeof (conf.topology_cache),
                  "topology.xml");
    snprintf (conf.cgroup_base, sizeof (conf.cgroup_base), "slurm-pin");
    nlines = 0;
}

static void teardown (void)
{
    tmptree_teardown ();
}

/* A numbered step of job 7 with one task of one CPU on Slurm's core
 * list `cores` (the job: every core), planned. */
static pin_step_t *planned (uint32_t stepid,
                            int policy,
                            const char *cores,
                            pin_error_t *e)
{
    char name[32];
    struct pin_step_args a = {
        .conf = &conf,
        .job = 7,
        .step = stepid,
        .stepname = name,
        .log = {sink, NULL},
    };
    struct pin_step_tasks t = {
        .policy = policy,
        .ntasks = 1,
        .cpus_per_task = 1,
    };
    pin_step_t *s;
    bool first = false;

    snprintf (name, sizeof (name), "7.%u", stepid);
    ck_assert_ptr_nonnull (s = pin_step_create (&a, e));
    ck_assert_int_eq (pin_step_set_tasks (s, &t, e), 0);
    ck_assert_int_lt (pin_step_set_tasks (s, &t, e), 0); /* once */
    ck_assert_msg (pin_step_load_topology (s, NULL, e) == 0, "%s", e->text);
    ck_assert_msg (pin_step_set_alloc (s, "0-1", cores, e) == 0,
                   "%s",
                   e->text);
    pin_step_detect_mode (s);
    ck_assert_int_eq (pin_step_mode (s), CG2_MODE_STANDALONE);
    ck_assert (!pin_step_cpuset (s));
    ck_assert (pin_step_warning (s)[0] != '\0');
    ck_assert_msg (pin_step_prepare_state (s, &first, e) == 0, "%s", e->text);
    ck_assert_msg (pin_step_plan (s, PIN_STEP_PLAN_START, NULL, NULL, e) == 0,
                   "%s",
                   e->text);
    return s;
}

static int cpus_here (void)
{
    hwloc_bitmap_t mine = hwloc_bitmap_alloc ();
    int n = affinity_get (0, mine) == 0 ? hwloc_bitmap_weight (mine) : 0;

    hwloc_bitmap_free (mine);
    return n;
}

/* create, plan, apply (cgroup, move, affinity), release, destroy: the
 * claim and the tree come and go. */
START_TEST (test_life)
{
    pin_error_t e = {""};
    hwloc_bitmap_t before = hwloc_bitmap_alloc (), now = hwloc_bitmap_alloc ();
    const struct place_task *t;
    const char *msg;
    pin_step_t *s;

    ck_assert_int_eq (affinity_get (0, before), 0);
    s = planned (0, PLACE_NUMA_LOCAL, "0", &e);
    ck_assert (tmptree_exists ("state/claims/job_7.step_0"));
    ck_assert (tmptree_exists ("cg/slurm-pin/job_7/step_0"));
    ck_assert_str_eq (pin_step_acct_rel (s, NULL, 0),
                      "slurm-pin/job_7/step_0");
    ck_assert_ptr_nonnull (t = pin_step_task (s, 0));
    ck_assert_int_eq (hwloc_bitmap_weight (t->cpus), 1);
    ck_assert_ptr_null (pin_step_task (s, 1));
    ck_assert_int_eq (pin_step_task_status (s, 0, &msg),
                      PIN_STEP_TASK_PENDING);

    /* the task: this process (its cgroup.procs is a plain file) */
    tmptree_put ("cg/slurm-pin/job_7/step_0/cgroup.subtree_control", "");
    tmptree_put ("cg/slurm-pin/job_7/step_0/task_0/cgroup.procs", "");
    ck_assert_msg (pin_step_apply_task (s, 0, getpid (), &e) == 0,
                   "%s",
                   e.text);
    ck_assert_int_eq (pin_step_task_status (s, 0, &msg),
                      PIN_STEP_TASK_APPLIED);
    ck_assert_int_eq (atoi (tmptree_get ("cg/slurm-pin/job_7/step_0/task_0/"
                                         "cgroup.procs")),
                      (int)getpid ());
    ck_assert_int_eq (affinity_get (0, now), 0);
    ck_assert (hwloc_bitmap_isequal (now, t->cpus));
    ck_assert_int_eq (affinity_set (0, before, &e), 0);

    /* out of range: refused, nothing recorded */
    ck_assert_int_lt (pin_step_apply_task (s, 1, getpid (), &e), 0);
    ck_assert_int_eq (errno, EINVAL);

    ck_assert_int_eq (pin_step_release (s, &e), 0);
    ck_assert (!tmptree_exists ("state/claims/job_7.step_0"));
    ck_assert_int_eq (pin_step_release (s, &e), 0); /* again: nothing */
    pin_step_destroy (s);
    ck_assert (!tmptree_exists ("cg/slurm-pin/job_7/step_0"));
    ck_assert (!tmptree_exists ("cg/slurm-pin/job_7"));
    hwloc_bitmap_free (before);
    hwloc_bitmap_free (now);
}
END_TEST

/* Two steps of one job that Slurm gave the same core (srun --overlap):
 * the second reads the first's claim and moves onto the job's other PU. */
START_TEST (test_overlap)
{
    pin_error_t e = {""};
    pin_step_t *a, *b;
    const struct place_task *ta, *tb;

    if (cpus_here () < 2)
        return; /* counted as a skip in main() */
    a = planned (1, PLACE_NUMA_LOCAL, "0", &e);
    b = planned (2, PLACE_NUMA_LOCAL, "0", &e);
    ta = pin_step_task (a, 0);
    tb = pin_step_task (b, 0);
    ck_assert (!hwloc_bitmap_intersects (ta->cpus, tb->cpus));
    /* the moved step's PUs are the job's */
    ck_assert_int_eq (hwloc_bitmap_weight (pin_step_allowed (b)), 2);
    ck_assert (tmptree_exists ("state/claims/job_7.step_2"));
    pin_step_destroy (b);
    /* destroy drops the claim too */
    ck_assert (!tmptree_exists ("state/claims/job_7.step_2"));
    pin_step_destroy (a);
}
END_TEST

/* Policy dynamic places nothing at start; its confinement plans
 * numa-local around what others hold, claims, and leaves the step's own
 * plan empty. */
START_TEST (test_confine_plan)
{
    pin_error_t e = {""};
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc (), mems = hwloc_bitmap_alloc ();
    pin_step_t *other, *s;

    if (cpus_here () < 2)
        return;
    other = planned (3, PLACE_NUMA_LOCAL, "0", &e);
    s = planned (4, PLACE_DYNAMIC, "0-1", &e);
    ck_assert_ptr_null (pin_step_task (s, 0));
    ck_assert (!tmptree_exists ("state/claims/job_7.step_4"));
    ck_assert_msg (pin_step_plan (s, PIN_STEP_PLAN_CONFINE, cpus, mems, &e)
                       == 0,
                   "%s",
                   e.text);
    ck_assert_int_eq (hwloc_bitmap_weight (cpus), 1);
    ck_assert (
        !hwloc_bitmap_intersects (cpus, pin_step_task (other, 0)->cpus));
    ck_assert (!hwloc_bitmap_iszero (mems));
    ck_assert (tmptree_exists ("state/claims/job_7.step_4"));
    ck_assert_ptr_null (pin_step_task (s, 0));
    ck_assert_int_eq (hwloc_bitmap_weight (pin_step_allowed (s)), 2);
    pin_step_destroy (s);
    pin_step_destroy (other);
    hwloc_bitmap_free (cpus);
    hwloc_bitmap_free (mems);
}
END_TEST

/* What Slurm gives, wrong: one line naming it. */
static const struct {
    const char *job, *step, *want;
} bad_alloc[] = {
    {"", "0", "Slurm gave no job cores for this node"},
    {NULL, "0", "Slurm gave no job cores for this node"},
    {"0", "", "Slurm gave no step cores for this node"},
    {"0", "4096", "step cores 4096:"},
    {"x", "0", "job cores x:"},
};

START_TEST (test_bad_alloc)
{
    struct pin_step_args a = {
        .conf = &conf,
        .job = 7,
        .step = 0,
        .stepname = "7.0",
    };
    struct pin_step_tasks t = {.policy = PLACE_NUMA_LOCAL, .ntasks = 1};
    pin_error_t e = {""};
    pin_step_t *s = pin_step_create (&a, &e);

    ck_assert_ptr_nonnull (s);
    ck_assert_int_eq (pin_step_set_tasks (s, &t, &e), 0);
    /* no topology yet */
    ck_assert_int_lt (pin_step_set_alloc (s, "0", "0", &e), 0);
    ck_assert_int_eq (pin_step_load_topology (s, NULL, &e), 0);
    ck_assert_int_lt (pin_step_set_alloc (s,
                                          bad_alloc[_i].job,
                                          bad_alloc[_i].step,
                                          &e),
                      0);
    ck_assert_msg (strstr (e.text, bad_alloc[_i].want) == e.text,
                   "'%s' does not begin with '%s'",
                   e.text,
                   bad_alloc[_i].want);
    pin_step_destroy (s);
}
END_TEST

/* A StateDir that is not a directory: the step fails with its name. */
START_TEST (test_bad_state_dir)
{
    struct pin_step_args a = {
        .conf = &conf,
        .job = 7,
        .step = 0,
        .stepname = "7.0",
    };
    struct pin_step_tasks t = {.policy = PLACE_NONE, .ntasks = 2};
    pin_error_t e = {""};
    pin_step_t *s = pin_step_create (&a, &e);

    ck_assert_int_eq (pin_step_set_tasks (s, &t, &e), 0);
    tmptree_put ("state", "a file\n");
    pin_step_detect_mode (s);
    ck_assert_int_lt (pin_step_prepare_state (s, NULL, &e), 0);
    ck_assert_msg (strncmp (e.text, "StateDir ", 9) == 0, "%s", e.text);
    ck_assert_int_eq (pin_step_task_status (s, 1, NULL),
                      PIN_STEP_TASK_PENDING);
    pin_step_destroy (s);
    pin_step_destroy (NULL);
}
END_TEST

/* The extern step's cleanup: a claim left by a killed step goes. */
START_TEST (test_job_cleanup)
{
    pin_error_t e = {""};
    pin_step_t *s = planned (5, PLACE_NUMA_LOCAL, "0", &e);

    ck_assert (tmptree_exists ("state/claims/job_7.step_5"));
    pin_step_job_cleanup (&conf, 7, &(struct steplog){sink, NULL});
    ck_assert (!tmptree_exists ("state/claims/job_7.step_5"));
    ck_assert_int_ge (nlines, 1);
    ck_assert_msg (strstr (lines[0], "removed the claim of step 5") != NULL,
                   "%s",
                   lines[0]);
    pin_step_destroy (s);
}
END_TEST

/* The step's record: its policy, its plan's CPUs, the worst task status,
 * who and where as the caller says, the cgroup it was measured in. */
static int got_record (const struct acct_record *r, void *arg)
{
    *(struct acct_record *)arg = *r;
    return 0;
}

START_TEST (test_account)
{
    pin_error_t e = {""};
    struct step_ident who = {.node = "n1",
                             .cluster = "c1",
                             .uid = 4242,
                             .user = "u1",
                             .array_job_id = ACCT_NO_VAL,
                             .array_task_id = ACCT_NO_VAL};
    struct pin_step_account_in in = {.ident = &who,
                                     .policy = "numa-local",
                                     .alloc_cpus = 1};
    struct acct_record r;
    char *cpus;
    pin_step_t *s;

    conf.accounting = true;
    tmptree_path (conf.journal_dir, sizeof (conf.journal_dir), "journal");
    s = planned (6, PLACE_NUMA_LOCAL, "0", &e);
    tmptree_put ("cg/slurm-pin/job_7/step_6/cpu.stat",
                 "usage_usec 300\nuser_usec 200\nsystem_usec 100\n");
    pin_step_account_task (s, getpid ());
    pin_step_account_task_exit (s, 0, false);
    pin_step_account_task_exit (s, 256, true); /* exit 1 */
    pin_step_account (s, &in);
    pin_step_account (s, &in); /* once */
    memset (&r, 0, sizeof (r));
    ck_assert_msg (acct_journal_read (conf.journal_dir,
                                      got_record,
                                      &r,
                                      NULL,
                                      &e)
                       == 0,
                   "%s",
                   e.text);
    ck_assert_int_eq (r.job_id, 7);
    ck_assert_int_eq (r.step_id, 6);
    ck_assert_str_eq (r.policy, "numa-local");
    ck_assert_str_eq (r.mode, "standalone");
    ck_assert_str_eq (r.node, "n1");
    ck_assert_str_eq (r.user, "u1");
    ck_assert_int_eq (r.uid, 4242);
    ck_assert_int_eq (r.exit_status, 256);
    ck_assert_int_eq (r.usage_usec, 300);
    ck_assert_int_eq (r.user_usec, 200);
    ck_assert_ptr_nonnull (cpus =
                               topo_list_format (pin_step_task (s, 0)->cpus));
    ck_assert_str_eq (r.cpus, cpus);
    ck_assert (strstr (r.cgroup, "slurm-pin/job_7/step_6") != NULL);
    free (cpus);
    pin_step_destroy (s);
    conf.accounting = false;
}
END_TEST

/* The device locality handed to the plan (step_private.h's near[]): the
 * lent H100's topology (t/fixtures/gpu), GPU 0 by bus id, GPU 1 by
 * gres.conf Cores= only, GPU 2 by nothing; then the NIC alone. */
START_TEST (test_devices)
{
    pin_error_t e = {""};
    struct pin_step_args a = {
        .conf = &conf,
        .job = 7,
        .step = 0,
        .stepname = "7.0",
        .log = {sink, NULL},
    };
    struct pin_step_tasks t = {
        .policy = PLACE_NUMA_LOCAL,
        .ntasks = 1,
        .cpus_per_task = 1,
    };
    const struct pin_step_gpu gpus[] = {
        {0, "0000:00:06.0", "0-3"},
        {1, "0000:99:00.0", "1"},
        {2, NULL, NULL},
    };
    struct pin_step_devices d = {3, gpus, true, "eth0"};
    char buf[256];
    pin_step_t *s;
    int gpu;

    snprintf (conf.test_topology, sizeof (conf.test_topology), "%s",
              PIN_GPU_FIXTURE);
    ck_assert_ptr_nonnull (s = pin_step_create (&a, &e));
    ck_assert_int_eq (pin_step_set_tasks (s, &t, &e), 0);
    ck_assert_msg (pin_step_load_topology (s, NULL, &e) == 0, "%s", e.text);
    /* TestTopology= replaced this node's topology, and no cache was made */
    ck_assert_uint_eq (topo_npus (s->topo), 16);
    ck_assert (!tmptree_exists ("topology.xml"));
    ck_assert_int_eq (pin_step_set_alloc (s, "0-1", "0-1", &e), 0);
    ck_assert_msg (pin_step_set_devices (s, &d, &e) == 0, "%s", e.text);
    gpu = topo_dev_find (s->topo, TOPO_DEV_GPU, "0000:00:06.0", NULL);
    ck_assert_int_ge (gpu, 0);
    ck_assert_uint_eq (s->nnear, 2);
    ck_assert_ptr_eq (s->near[0].cpus,
                      topo_dev (s->topo, (unsigned)gpu)->cpuset);
    ck_assert_str_eq (s->near_label[0], "0000:00:06.0");
    ck_assert_int_eq (hwloc_bitmap_first (s->near[1].cpus), 1);
    ck_assert_int_eq (hwloc_bitmap_weight (s->near[1].cpus), 1);
    ck_assert_int_eq (s->near[1].numa, -1);
    ck_assert_str_eq (s->near_label[1], "gres:1");
    ck_assert (!s->near_is_nic);
    ck_assert_ptr_nonnull (s->nic_cpus);
    ck_assert_uint_eq (s->near_fallback, PLACE_FB_GPU_REMOTE);
    ck_assert_str_eq (pin_step_gpus_text (s), "0000:00:06.0,gres:1");
    ck_assert_str_eq (pin_step_nic_text (s), "eth0");
    ck_assert_str_eq (pin_step_task_devices (s, 5, buf, sizeof (buf)),
                      " gpus=0000:00:06.0,gres:1 nic=eth0");
    bool said1 = false, said2 = false;
    for (int i = 0; i < nlines; i++) {
        said1 |= strstr (lines[i], "pin: step 7.0: GPU 1 located by gres.conf "
                                   "Cores=1")
                 != NULL;
        said2 |= strstr (lines[i], "pin: step 7.0: GPU 2: not located") != NULL;
    }
    ck_assert_msg (said1 && said2, "log lines missing (%d lines)", nlines);
    ck_assert_str_eq (pin_step_devices_note (s),
                      "GPU 1 (gres:1) located by gres.conf Cores=1; GPU 2 "
                      "not located: placed without it");

    /* the NIC alone places; an unknown NIC is said and names nothing */
    struct pin_step_devices nic = {0, NULL, true, NULL};
    ck_assert_int_eq (pin_step_set_devices (s, &nic, &e), 0);
    ck_assert_uint_eq (s->nnear, 1);
    ck_assert (s->near_is_nic);
    ck_assert_ptr_null (s->nic_cpus);
    ck_assert_uint_eq (s->near_fallback, PLACE_FB_NIC_REMOTE);
    ck_assert_str_eq (pin_step_gpus_text (s), "");
    ck_assert_str_eq (pin_step_nic_text (s), "eth0");
    ck_assert_str_eq (pin_step_task_devices (s, 0, buf, sizeof (buf)), " nic=eth0");
    ck_assert_str_eq (pin_step_devices_note (s), "");
    struct pin_step_devices bad = {0, NULL, true, "ib9"};
    nlines = 0;
    ck_assert_int_eq (pin_step_set_devices (s, &bad, &e), 0);
    ck_assert_uint_eq (s->nnear, 0);
    ck_assert_str_eq (pin_step_nic_text (s), "");
    ck_assert_int_ge (nlines, 1);
    ck_assert_ptr_nonnull (strstr (lines[0], "tasks are not placed near a NIC"));
    pin_step_destroy (s);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("step");
    TCase *tc = tcase_create ("step");
    const char *skips[2];
    int nskips = 0;

    tcase_add_checked_fixture (tc, setup, teardown);
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_life);
    tcase_add_test (tc, test_devices);
    if (cpus_here () >= 2) {
        tcase_add_test (tc, test_overlap);
        tcase_add_test (tc, test_confine_plan);
    } else {
        skips[nskips++] = "test_overlap: needs 2 usable CPUs";
        skips[nskips++] = "test_confine_plan: needs 2 usable CPUs";
    }
    tcase_add_loop_test (tc,
                         test_bad_alloc,
                         0,
                         (int)(sizeof (bad_alloc) / sizeof (bad_alloc[0])));
    tcase_add_test (tc, test_bad_state_dir);
    tcase_add_test (tc, test_job_cleanup);
    tcase_add_test (tc, test_account);
    suite_add_tcase (s, tc);
    return tap_run (s, skips, nskips);
}
