/* test_stepcg.c - step cgroup names, Slurm's tree, busy PUs from a tree
 *
 * The busy and children cases run on a temporary directory of plain
 * files through libcgroup2's root seam: no root, no kernel cgroups.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <slurm/slurm.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "libcgroup2/cg2.h"
#include "libcgroup2/stepcg.h"
#include "libtest/tap.h"
#include "libtopo/topo.h"

static const struct {
    uint32_t step;
    const char *dir;
} dirs[] = {
    {0, "step_0"},
    {12, "step_12"},
    {SLURM_BATCH_SCRIPT, "step_batch"},
    {SLURM_EXTERN_CONT, "step_extern"},
    {SLURM_INTERACTIVE_STEP, "step_interactive"},
};

START_TEST (test_step_dir)
{
    char buf[32];

    ck_assert_str_eq (stepcg_step_dir (dirs[_i].step, buf, sizeof (buf)),
                      dirs[_i].dir);
}
END_TEST

static const struct {
    const char *path;
    uint32_t job, step;
    const char *found; /* NULL: not Slurm's tree of this step */
} finds[] = {
    {"/system.slice/node1_slurmstepd.scope/job_5/step_0/slurm",
     5,
     0,
     "/system.slice/node1_slurmstepd.scope/job_5/step_0"},
    {"/system.slice/slurmstepd.scope/job_5/step_batch/slurm",
     5,
     SLURM_BATCH_SCRIPT,
     "/system.slice/slurmstepd.scope/job_5/step_batch"},
    {"/system.slice/slurmstepd.scope/job_5/step_0",
     5,
     0,
     "/system.slice/slurmstepd.scope/job_5/step_0"},
    /* whole components only */
    {"/system.slice/slurmstepd.scope/job_55/step_0/slurm", 5, 0, NULL},
    {"/system.slice/slurmstepd.scope/job_5/step_01/slurm", 5, 0, NULL},
    {"/system.slice/slurmstepd.scope/job_5/step_1/slurm", 5, 0, NULL},
    {"/system.slice/slurmstepd.scope/xjob_5/step_0/slurm", 5, 0, NULL},
    {"/system.slice/slurmd.service", 5, 0, NULL},
    {"/", 5, 0, NULL},
    {NULL, 5, 0, NULL},
    /* Slurm 26.05: the job's directory is its SLUID unless
     * CgroupJobIdPaths=yes */
    {"/system.slice/node1_slurmstepd.scope/sEKNKTV3WPV500/step_0/slurm",
     5,
     0,
     "/system.slice/node1_slurmstepd.scope/sEKNKTV3WPV500/step_0"},
    {"/system.slice/slurmstepd.scope/s0123456789ABC/step_extern/slurm",
     5,
     SLURM_EXTERN_CONT,
     "/system.slice/slurmstepd.scope/s0123456789ABC/step_extern"},
    /* 25.11's CgroupSlice and 26.05's slurmd sub-cgroup move the scope */
    {"/site.slice/n1_slurmstepd.scope/sZZZZZZZZZZZZZ/step_batch/slurm",
     5,
     SLURM_BATCH_SCRIPT,
     "/site.slice/n1_slurmstepd.scope/sZZZZZZZZZZZZZ/step_batch"},
    {"/a/slurmd/system.slice/slurmstepd.scope/job_5/step_2/user/task_0",
     5,
     2,
     "/a/slurmd/system.slice/slurmstepd.scope/job_5/step_2"},
    /* not SLUIDs: length, case, letters outside Crockford's base 32 */
    {"/slurmstepd.scope/sEKNKTV3WPV50/step_0/slurm", 5, 0, NULL},
    {"/slurmstepd.scope/sEKNKTV3WPV5000/step_0/slurm", 5, 0, NULL},
    {"/slurmstepd.scope/sekNKTV3WPV500/step_0/slurm", 5, 0, NULL},
    {"/slurmstepd.scope/SEKNKTV3WPV500/step_0/slurm", 5, 0, NULL},
    {"/slurmstepd.scope/sEKNKTV3WPV50U/step_0/slurm", 5, 0, NULL},
    {"/slurmstepd.scope/sEKNKTV3WPV50I/step_0/slurm", 5, 0, NULL},
    {"/slurmstepd.scope/xsEKNKTV3WPV500/step_0/slurm", 5, 0, NULL},
    {"sEKNKTV3WPV500/step_0/slurm", 5, 0, NULL},
    {"/sEKNKTV3WPV500/step_1/slurm", 5, 0, NULL},
    {"/sEKNKTV3WPV500/step_0x/slurm", 5, 0, NULL},
    /* a later match after a near miss */
    {"/job_5/step_00/job_5/step_0/user", 5, 0, "/job_5/step_00/job_5/step_0"},
};

START_TEST (test_find)
{
    char out[256] = "untouched";
    int rc = stepcg_find_slurm_step (finds[_i].path,
                                     finds[_i].job,
                                     finds[_i].step,
                                     out,
                                     sizeof (out));
    if (finds[_i].found) {
        ck_assert_int_eq (rc, 0);
        ck_assert_str_eq (out, finds[_i].found);
    } else
        ck_assert_int_eq (rc, -1);
}
END_TEST

START_TEST (test_find_too_long)
{
    char out[8];

    ck_assert_int_eq (stepcg_find_slurm_step ("/a/job_5/step_0/slurm",
                                              5,
                                              0,
                                              out,
                                              sizeof (out)),
                      -1);
}
END_TEST

/* ---- a fake tree ---------------------------------------------------- */

static char root[256];

static void put (const char *rel, const char *file, const char *text)
{
    char path[1024], dir[512];
    FILE *f;

    snprintf (dir, sizeof (dir), "%s/%s", root, rel);
    /* mkdir -p */
    for (char *p = dir + strlen (root) + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            mkdir (dir, 0755);
            *p = '/';
        }
    }
    mkdir (dir, 0755);
    if (!file)
        return;
    snprintf (path, sizeof (path), "%s/%s", dir, file);
    ck_assert_ptr_nonnull ((f = fopen (path, "w")));
    fputs (text, f);
    fclose (f);
}

static void setup (void)
{
    snprintf (root,
              sizeof (root),
              "%s/test_stepcg.XXXXXX",
              getenv ("TMPDIR") ? getenv ("TMPDIR") : "/tmp");
    ck_assert_ptr_nonnull (mkdtemp (root));
    put ("", "cgroup.controllers", "cpuset cpu\n");
}

static int rm_one (const char *path,
                   const struct stat *st,
                   int flag,
                   struct FTW *ftw)
{
    return remove (path);
}

static void teardown (void)
{
    /* the fake tree: plain files in a private mkdtemp directory */
    ck_assert_int_eq (nftw (root, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

/* A task directory: populated or not, with a cpuset or not. */
static void task (const char *rel, const char *cpus, bool populated)
{
    put (rel, "cgroup.procs", populated ? "4242\n" : "");
    put (rel,
         "cgroup.events",
         populated ? "populated 1\nfrozen 0\n" : "populated 0\nfrozen 0\n");
    if (cpus)
        put (rel, "cpuset.cpus", cpus);
}

static char *busy_of (const char *job_rel, const char *self)
{
    pin_error_t e = {""};
    cg2_t *cg = cg2_open (root, &e);
    hwloc_bitmap_t busy = hwloc_bitmap_alloc ();
    char *s;

    ck_assert_msg (cg != NULL, "%s", e.text);
    ck_assert_msg (stepcg_busy (cg, job_rel, self, busy, &e) == 0,
                   "%s",
                   e.text);
    s = topo_list_format (busy);
    hwloc_bitmap_free (busy);
    cg2_close (cg);
    return s;
}

START_TEST (test_busy_standalone)
{
    char *s;

    task ("slurm-pin/job_7/step_0/task_0", "0-1\n", true);
    task ("slurm-pin/job_7/step_0/task_1", "4\n", true);
    task ("slurm-pin/job_7/step_1/task_0", "2\n", true);  /* self */
    task ("slurm-pin/job_7/step_2/task_0", "3\n", false); /* crashed */
    task ("slurm-pin/job_7/step_3/task_0", "\n", true);   /* none */
    task ("slurm-pin/job_7/step_batch/task_0", "5-7\n", true);
    task ("slurm-pin/job_7/step_4/task_0", NULL, true);  /* no cpuset */
    task ("slurm-pin/job_8/step_0/task_0", "9\n", true); /* other job */
    s = busy_of ("slurm-pin/job_7", "step_1");
    ck_assert_str_eq (s, "0-1,4");
    free (s);
    s = busy_of ("/slurm-pin/job_7", NULL);
    ck_assert_str_eq (s, "0-2,4");
    free (s);
}
END_TEST

START_TEST (test_busy_nested)
{
    const char *job = "system.slice/n1_slurmstepd.scope/job_9";
    char rel[256], *s;

    /* Slurm's step cpusets (the allocation) do not count; only task
     * cgroups with a cpuset we wrote do. */
    snprintf (rel, sizeof (rel), "%s/step_0", job);
    put (rel, "cpuset.cpus", "0-7\n");
    put (rel, "cgroup.procs", "");
    snprintf (rel, sizeof (rel), "%s/step_0/slurm", job);
    task (rel, "", true);
    snprintf (rel, sizeof (rel), "%s/step_0/user/task_0", job);
    task (rel, "2-3\n", true);
    snprintf (rel, sizeof (rel), "%s/step_1/user/task_0", job);
    task (rel, "", true); /* Slurm's own task dir: empty cpuset */
    snprintf (rel, sizeof (rel), "%s/step_1/user/task_special", job);
    task (rel, "", true);
    s = busy_of (job, "step_2");
    ck_assert_str_eq (s, "2-3");
    free (s);
}
END_TEST

START_TEST (test_busy_missing)
{
    char *s = busy_of ("slurm-pin/job_404", "step_0");

    ck_assert_str_eq (s, "");
    free (s);
}
END_TEST

/* The tree is walked below the root without following symlinks: a
 * link planted at any level (a step's user/, the job directory itself)
 * is not followed. */
START_TEST (test_busy_symlink)
{
    char target[512], link[512], *s;
    pin_error_t e = {""};
    hwloc_bitmap_t busy = hwloc_bitmap_alloc ();
    cg2_t *cg;
    bool any = false;

    task ("elsewhere/user/task_0", "9\n", true);
    task ("elsewhere/step_0/task_0", "8\n", true);
    task ("slurm-pin/job_7/step_0/task_0", "0\n", true);
    put ("slurm-pin/job_7/step_6", "cgroup.procs", "");
    snprintf (target, sizeof (target), "%s/elsewhere/user", root);
    snprintf (link, sizeof (link), "%s/slurm-pin/job_7/step_6/user", root);
    ck_assert_int_eq (symlink (target, link), 0);
    s = busy_of ("slurm-pin/job_7", NULL);
    ck_assert_str_eq (s, "0");
    free (s);

    snprintf (target, sizeof (target), "%s/elsewhere", root);
    snprintf (link, sizeof (link), "%s/slurm-pin/job_8", root);
    ck_assert_int_eq (symlink (target, link), 0);
    ck_assert_ptr_nonnull (cg = cg2_open (root, &e));
    ck_assert_int_lt (stepcg_busy (cg, "slurm-pin/job_8", NULL, busy, &e), 0);
    ck_assert (hwloc_bitmap_iszero (busy));
    ck_assert_int_lt (cg2_has_children (cg, "slurm-pin/job_8", &any, &e), 0);
    ck_assert (!any);
    hwloc_bitmap_free (busy);
    cg2_close (cg);
}
END_TEST

START_TEST (test_children)
{
    pin_error_t e = {""};
    cg2_t *cg = cg2_open (root, &e);
    bool any = true;

    ck_assert_msg (cg != NULL, "%s", e.text);
    ck_assert_int_eq (cg2_has_children (cg, "slurm-pin/job_1", &any, &e), 0);
    ck_assert (!any);
    put ("slurm-pin/job_1", "cgroup.procs", "");
    ck_assert_int_eq (cg2_has_children (cg, "slurm-pin/job_1", &any, &e), 0);
    ck_assert (!any);
    put ("slurm-pin/job_1/step_0", NULL, NULL);
    ck_assert_int_eq (cg2_has_children (cg, "slurm-pin/job_1", &any, &e), 0);
    ck_assert (any);
    cg2_close (cg);
}
END_TEST

START_TEST (test_has_controller)
{
    pin_error_t e = {""};
    cg2_t *cg = cg2_open (root, &e);

    ck_assert_msg (cg != NULL, "%s", e.text);
    put ("a", "cgroup.controllers", "cpuset cpu memory\n");
    put ("b", "cgroup.controllers", "cpu memory pids\n");
    put ("c", "cgroup.controllers", "\n");
    ck_assert (stepcg_has_controller (cg, "a", "cpuset"));
    ck_assert (stepcg_has_controller (cg, "a", "memory"));
    ck_assert (stepcg_has_controller (cg, "a", "cpu"));
    ck_assert (!stepcg_has_controller (cg, "b", "cpuset"));
    ck_assert (stepcg_has_controller (cg, "b", "pids"));
    ck_assert (!stepcg_has_controller (cg, "c", "cpu"));
    ck_assert (!stepcg_has_controller (cg, "missing", "cpu"));
    cg2_close (cg);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("stepcg");
    TCase *tc = tcase_create ("names");
    TCase *tree = tcase_create ("tree");

    tcase_add_loop_test (tc,
                         test_step_dir,
                         0,
                         sizeof (dirs) / sizeof (dirs[0]));
    tcase_add_loop_test (tc, test_find, 0, sizeof (finds) / sizeof (finds[0]));
    tcase_add_test (tc, test_find_too_long);
    suite_add_tcase (s, tc);
    tcase_add_checked_fixture (tree, setup, teardown);
    tcase_add_test (tree, test_busy_standalone);
    tcase_add_test (tree, test_busy_nested);
    tcase_add_test (tree, test_busy_missing);
    tcase_add_test (tree, test_busy_symlink);
    tcase_add_test (tree, test_children);
    tcase_add_test (tree, test_has_controller);
    suite_add_tcase (s, tree);
    return tap_run (s, NULL, 0);
}
