/* test_mode.c - the mode decision of the plugin and slurm-pin check
 *
 * Table-driven on fake cgroup roots (plain files in a temporary directory,
 * cg2's seam) and fake slurm.conf/cgroup.conf files.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <slurm/slurm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "libcgroup2/mode.h"
#include "libtest/tap.h"

static char root[256];

static int rm_one (const char *path,
                   const struct stat *st,
                   int flag,
                   struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove (path);
}

static void put (const char *rel, const char *text)
{
    char path[1024];
    FILE *f;

    snprintf (path, sizeof (path), "%s/%s", root, rel);
    for (char *p = path + strlen (root) + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            mkdir (path, 0755);
            *p = '/';
        }
    }
    ck_assert_ptr_nonnull ((f = fopen (path, "w")));
    fputs (text, f);
    fclose (f);
}

static void setup (void)
{
    snprintf (root,
              sizeof (root),
              "%s/test_mode.XXXXXX",
              getenv ("TMPDIR") ? getenv ("TMPDIR") : "/tmp");
    ck_assert_ptr_nonnull (mkdtemp (root));
}

static void teardown (void)
{
    nftw (root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

#define SLURM_STEP "system.slice/slurmstepd.scope/job_7/step_0"

static const struct {
    const char *what;
    const char *root_controllers; /* NULL: not a cgroup2 root */
    const char *user_controllers; /* SLURM_STEP/user; NULL: none */
    const char *self;             /* NULL: slurm-pin check */
    enum cg2_slurm_cgroups slurm;
    uint32_t step;
    enum cg2_mode mode;
    bool cpuset;
    const char *step_rel;
    const char *job_rel;
} cases[] = {
    {"no hierarchy",
     NULL,
     NULL,
     "/",
     CG2_SLURM_UNKNOWN,
     0,
     CG2_MODE_NONE,
     false,
     "",
     ""},
    {"stepd in Slurm's step, cpuset below it",
     "cpuset cpu\n",
     "cpuset cpu memory\n",
     "/" SLURM_STEP "/slurm",
     CG2_SLURM_UNKNOWN,
     0,
     CG2_MODE_NESTED,
     true,
     "/" SLURM_STEP,
     ""},
    {"stepd in Slurm's step, no cpuset below it",
     "cpuset cpu\n",
     "cpu memory\n",
     "/" SLURM_STEP "/slurm",
     CG2_SLURM_UNKNOWN,
     0,
     CG2_MODE_NESTED,
     false,
     "/" SLURM_STEP,
     ""},
    {"26.05: stepd in Slurm's step below the job's SLUID",
     "cpuset cpu\n",
     NULL,
     "/system.slice/node1_slurmstepd.scope/sEKNKTV3WPV500/step_0/slurm",
     CG2_SLURM_UNKNOWN,
     0,
     CG2_MODE_NESTED,
     false,
     "/system.slice/node1_slurmstepd.scope/sEKNKTV3WPV500/step_0",
     ""},
    {"stepd of another step: standalone",
     "cpuset cpu\n",
     NULL,
     "/system.slice/slurmstepd.scope/job_7/step_1/slurm",
     CG2_SLURM_UNKNOWN,
     0,
     CG2_MODE_STANDALONE,
     true,
     "slurm-pin/job_7/step_0",
     "slurm-pin/job_7"},
    {"stepd outside Slurm's tree",
     "cpuset cpu\n",
     NULL,
     "/system.slice/slurmd.service",
     CG2_SLURM_V2,
     0,
     CG2_MODE_STANDALONE,
     true,
     "slurm-pin/job_7/step_0",
     "slurm-pin/job_7"},
    {"standalone batch step",
     "cpu\n",
     NULL,
     "/",
     CG2_SLURM_NONE,
     SLURM_BATCH_SCRIPT,
     CG2_MODE_STANDALONE,
     false,
     "slurm-pin/job_7/step_batch",
     "slurm-pin/job_7"},
    {"check: Slurm uses cgroup/v2",
     "cpuset cpu\n",
     NULL,
     NULL,
     CG2_SLURM_V2,
     0,
     CG2_MODE_NESTED,
     true,
     "",
     ""},
    {"check: Slurm makes no v2 cgroups",
     "cpuset cpu\n",
     NULL,
     NULL,
     CG2_SLURM_NONE,
     0,
     CG2_MODE_STANDALONE,
     true,
     "slurm-pin/job_0/step_0",
     "slurm-pin/job_0"},
    {"check: no cgroup.conf",
     "cpuset cpu\n",
     NULL,
     NULL,
     CG2_SLURM_UNKNOWN,
     0,
     CG2_MODE_UNDECIDED,
     true,
     "",
     ""},
    {"check: no cpuset",
     "cpu io\n",
     NULL,
     NULL,
     CG2_SLURM_NONE,
     0,
     CG2_MODE_STANDALONE,
     false,
     "slurm-pin/job_0/step_0",
     "slurm-pin/job_0"},
};

START_TEST (test_detect)
{
    struct cg2_mode_result res;
    struct cg2_mode_input in = {
        .cgroup_root = root,
        .cgroup_base = "slurm-pin",
        .job = cases[_i].self ? 7 : 0,
        .step = cases[_i].step,
        .self_cgroup = cases[_i].self,
        .slurm = cases[_i].slurm,
    };
    cg2_t *cg;

    if (cases[_i].root_controllers)
        put ("cgroup.controllers", cases[_i].root_controllers);
    if (cases[_i].user_controllers)
        put (SLURM_STEP "/user/cgroup.controllers",
             cases[_i].user_controllers);
    cg = cg2_mode_detect (&in, &res);
    ck_assert_msg (res.mode == cases[_i].mode,
                   "%s: mode %s, want %s",
                   cases[_i].what,
                   cg2_mode_name (res.mode),
                   cg2_mode_name (cases[_i].mode));
    ck_assert_msg (res.cpuset == cases[_i].cpuset,
                   "%s: cpuset %d",
                   cases[_i].what,
                   res.cpuset);
    ck_assert_str_eq (res.step_rel, cases[_i].step_rel);
    ck_assert_str_eq (res.job_rel, cases[_i].job_rel);
    ck_assert ((cg == NULL) == (cases[_i].mode == CG2_MODE_NONE));
    if (!cases[_i].cpuset || cases[_i].mode == CG2_MODE_NONE)
        ck_assert_msg (res.why[0] != '\0', "%s: no reason", cases[_i].what);
    cg2_close (cg);
}
END_TEST

START_TEST (test_base_too_long)
{
    static char base[PATH_MAX];
    struct cg2_mode_result res;
    struct cg2_mode_input in = {.cgroup_root = root,
                                .cgroup_base = base,
                                .job = 1,
                                .step = 0,
                                .self_cgroup = "/"};

    memset (base, 'b', sizeof (base) - 1);
    put ("cgroup.controllers", "cpuset\n");
    ck_assert_ptr_null (cg2_mode_detect (&in, &res));
    ck_assert_int_eq (res.mode, CG2_MODE_NONE);
    ck_assert (strstr (res.why, "path too long") != NULL);
}
END_TEST

static const struct {
    const char *slurm_conf;  /* NULL: no file */
    const char *cgroup_conf; /* NULL: no file */
    enum cg2_slurm_cgroups want;
} confs[] = {
    {"TaskPlugin=task/affinity\nProctrackType=proctrack/linuxproc\n",
     "CgroupPlugin=cgroup/v2\n",
     CG2_SLURM_NONE},
    {"TaskPlugin=task/cgroup,task/affinity\n",
     "CgroupPlugin=cgroup/v2\n",
     CG2_SLURM_V2},
    {"ProctrackType=cgroup\n",
     "CgroupPlugin=\"cgroup/v2\" # yes\n",
     CG2_SLURM_V2},
    {"TaskPlugin=task/cgroup\n", "CgroupPlugin=cgroup/v1\n", CG2_SLURM_NONE},
    {"TaskPlugin=task/cgroup\n", NULL, CG2_SLURM_UNKNOWN},
    {NULL, NULL, CG2_SLURM_UNKNOWN},
    {NULL, "CgroupPlugin=cgroup/v2\n", CG2_SLURM_V2},
};

START_TEST (test_slurm_conf)
{
    struct cg2_slurm_conf sc;
    char path[512];

    if (confs[_i].slurm_conf)
        put ("etc/slurm.conf", confs[_i].slurm_conf);
    else
        put ("etc/.keep", "");
    if (confs[_i].cgroup_conf)
        put ("etc/cgroup.conf", confs[_i].cgroup_conf);
    snprintf (path, sizeof (path), "%s/etc/slurm.conf", root);
    cg2_slurm_conf_read (path, &sc);
    ck_assert_int_eq (sc.slurm_conf_found, confs[_i].slurm_conf != NULL);
    ck_assert_int_eq (sc.cgroup_conf_found, confs[_i].cgroup_conf != NULL);
    ck_assert_int_eq (cg2_slurm_cgroups (&sc), confs[_i].want);
}
END_TEST

#define NELEM(a) (sizeof (a) / sizeof ((a)[0]))

int main (void)
{
    Suite *s = suite_create ("mode");
    TCase *tc = tcase_create ("mode");

    tcase_add_checked_fixture (tc, setup, teardown);
    tcase_add_loop_test (tc, test_detect, 0, NELEM (cases));
    tcase_add_test (tc, test_base_too_long);
    tcase_add_loop_test (tc, test_slurm_conf, 0, NELEM (confs));
    suite_add_tcase (s, tc);
    return tap_run (s, NULL, 0);
}
