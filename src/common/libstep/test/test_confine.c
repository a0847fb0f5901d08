/* test/test_confine.c - policy dynamic end to end in the seam: a step of
 * policy dynamic whose cpu.stat says it uses 2 CPUs of its 1 is confined
 * by its watcher (the confinement client planning through pin_step_plan,
 * claimed), here with the affinity sweep over its cgroup.threads, which
 * names a thread of this test.  No root, no Slurm. */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "libaffinity/affinity.h"
#include "libconf/conf.h"
#include "libplace/place.h"
#include "libstep/step.h"
#include "libstep/stepwatch.h"
#include "libtest/tap.h"
#include "libtest/tmptree.h"
#include "libtopo/topo.h"

static struct pin_conf conf;
static pthread_mutex_t lines_lock = PTHREAD_MUTEX_INITIALIZER;
static char lines[32][1024];
static int nlines;

static void sink (void *arg, enum steplog_level level, const char *line)
{
    (void)arg;
    (void)level;
    pthread_mutex_lock (&lines_lock);
    if (nlines < 32)
        snprintf (lines[nlines++], sizeof (lines[0]), "%s", line);
    pthread_mutex_unlock (&lines_lock);
}

static bool logged (const char *what)
{
    bool found = false;

    pthread_mutex_lock (&lines_lock);
    for (int i = 0; i < nlines && !found; i++)
        found = strstr (lines[i], what) != NULL;
    pthread_mutex_unlock (&lines_lock);
    return found;
}

/* A thread of the "step": it only waits. */
static pid_t helper_tid;
static volatile int helper_stop;
static void *helper (void *arg)
{
    (void)arg;
    helper_tid = (pid_t)syscall (SYS_gettid);
    while (!helper_stop)
        usleep (1000);
    return NULL;
}

/* usage_usec of the step's cpu.stat, replaced whole (rename). */
static void put_usage (uint64_t usec)
{
    char tmp[PATH_MAX], dst[PATH_MAX], text[64];
    FILE *f;

    tmptree_path (tmp, sizeof (tmp), "cg/slurm-pin/job_9/step_0/.cpu.stat");
    tmptree_path (dst, sizeof (dst), "cg/slurm-pin/job_9/step_0/cpu.stat");
    snprintf (text,
              sizeof (text),
              "usage_usec %llu\nuser_usec 0\n"
              "system_usec 0\n",
              (unsigned long long)usec);
    ck_assert_ptr_nonnull (f = fopen (tmp, "w"));
    fputs (text, f);
    ck_assert_int_eq (fclose (f), 0);
    ck_assert_int_eq (rename (tmp, dst), 0);
}

START_TEST (test_confine_affinity)
{
    struct pin_step_args a = {
        .conf = &conf,
        .job = 9,
        .step = 0,
        .stepname = "9.0",
        .log = {sink, NULL},
    };
    struct pin_step_tasks t = {.policy = PLACE_DYNAMIC,
                               .ntasks = 1,
                               .cpus_per_task = 1};
    hwloc_bitmap_t want = hwloc_bitmap_alloc (), got = hwloc_bitmap_alloc ();
    struct confine_event ev;
    pin_error_t e = {""};
    char text[32];
    pthread_t th;
    pin_step_t *s;
    int64_t t0;

    tmptree_setup ("test_confine");
    tmptree_put ("cg/cgroup.controllers", "cpu\n");
    tmptree_put ("cg/cgroup.subtree_control", "");
    tmptree_put ("cg/slurm-pin/cgroup.subtree_control", "");
    tmptree_put ("cg/slurm-pin/job_9/cgroup.subtree_control", "");
    pin_conf_defaults (&conf);
    tmptree_path (conf.cgroup_root, sizeof (conf.cgroup_root), "cg");
    tmptree_path (conf.state_dir, sizeof (conf.state_dir), "state");
    tmptree_path (conf.topology_cache,
                  sizeof (conf.topology_cache),
                  "topology.xml");
    snprintf (conf.cgroup_base, sizeof (conf.cgroup_base), "slurm-pin");
    conf.accounting = false;
    conf.dynamic_overuse = 1.2;
    conf.dynamic_grace_us = 40000;
    conf.dynamic_interval_us = 20000;

    ck_assert_int_eq (pthread_create (&th, NULL, helper, NULL), 0);
    while (!helper_tid)
        usleep (1000);
    ck_assert_ptr_nonnull (s = pin_step_create (&a, &e));
    ck_assert_int_eq (pin_step_set_tasks (s, &t, &e), 0);
    ck_assert_msg (pin_step_load_topology (s, NULL, &e) == 0, "%s", e.text);
    ck_assert_msg (pin_step_set_alloc (s, "0-1", "0-1", &e) == 0,
                   "%s",
                   e.text);
    pin_step_detect_mode (s);
    ck_assert_int_eq (pin_step_mode (s), CG2_MODE_STANDALONE);
    ck_assert_int_eq (pin_step_prepare_state (s, NULL, &e), 0);
    ck_assert_msg (pin_step_plan (s, PIN_STEP_PLAN_START, NULL, NULL, &e) == 0,
                   "%s",
                   e.text);
    /* dynamic: nothing placed, nothing claimed at start */
    ck_assert_ptr_null (pin_step_task (s, 0));
    ck_assert (!tmptree_exists ("state/claims/job_9.step_0"));

    snprintf (text, sizeof (text), "%d\n", (int)helper_tid);
    tmptree_put ("cg/slurm-pin/job_9/step_0/cgroup.threads", text);
    put_usage (0);
    pin_step_watch_start (s, getuid ());
    /* 2 CPUs in use for a step of 1: over 1.2 x 1 from the start */
    t0 = stepwatch_clock_us (CLOCK_MONOTONIC);
    for (;;) {
        int64_t now = stepwatch_clock_us (CLOCK_MONOTONIC);
        put_usage ((uint64_t)(2 * (now - t0)));
        pin_step_confine_event (s, &ev);
        if (ev.confined || now - t0 > 5000000)
            break;
        usleep (2000);
    }
    ck_assert_msg (ev.confined, "not confined in 5 s");
    ck_assert_int_eq (ev.how, CONFINE_AFFINITY);
    ck_assert_msg (ev.use > 1.2, "use %g", ev.use);
    ck_assert_int_eq (topo_list_parse (ev.cpus, want, NULL), 0);
    ck_assert_int_eq (hwloc_bitmap_weight (want), 1);
    /* the claim is the confinement's */
    ck_assert (tmptree_exists ("state/claims/job_9.step_0"));
    /* the thread named in cgroup.threads runs on those CPUs now */
    ck_assert_int_eq (affinity_get (helper_tid, got), 0);
    ck_assert (hwloc_bitmap_isequal (got, want));
    ck_assert (logged ("confined to cpus"));
    ck_assert (logged ("affinity sweep moved 1 thread(s)"));

    pin_step_watch_stop (s, 0);
    ck_assert (logged ("policy dynamic: confined; watcher CPU time"));
    ck_assert_int_eq (pin_step_release (s, &e), 0);
    ck_assert (!tmptree_exists ("state/claims/job_9.step_0"));
    pin_step_destroy (s);
    helper_stop = 1;
    pthread_join (th, NULL);
    hwloc_bitmap_free (want);
    hwloc_bitmap_free (got);
    tmptree_teardown ();
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("confine");
    TCase *tc = tcase_create ("confine");
    hwloc_bitmap_t mine = hwloc_bitmap_alloc ();
    const char *skip = "test_confine_affinity: needs 2 usable CPUs";
    bool two = affinity_get (0, mine) == 0 && hwloc_bitmap_weight (mine) >= 2;

    hwloc_bitmap_free (mine);
    tcase_set_timeout (tc, 30);
    if (two)
        tcase_add_test (tc, test_confine_affinity);
    suite_add_tcase (s, tc);
    return tap_run (s, two ? NULL : &skip, two ? 0 : 1);
}
