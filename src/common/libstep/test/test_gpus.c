/* test_gpus.c - gres.conf, slurmctld's gres_detail_str and the PCI bus id
 * behind a GPU device file (libstep/gpus.h) */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "libstep/gpus.h"
#include "libtest/tap.h"
#include "libtest/tmptree.h"

/* NodeName= matcher for the tests: an exact name or "node[1-2]" */
static bool match_node1 (const char *expr, void *arg)
{
    (void)arg;
    return !strcmp (expr, "node1") || !strcmp (expr, "node[1-2]");
}

/* ---- gres_detail_str ---------------------------------------------------- */

static const struct {
    const char *detail;
    const char *idx; /* hwloc list of the indexes, "" none */
} details[] = {
    {"gpu:2(IDX:0-1)", "0-1"},
    {"gpu:a100:1(IDX:3)", "3"},
    {"gpu(CNT:0)", ""},
    {"N/A", ""},
    {"", ""},
    {"gpu:tesla:3(IDX:0,2-3)", "0,2-3"},
    {"gpu:a100:1(IDX:1),shard:a100:4(1/4,0/4)", "1"},
    {"mps:100(0/100,0/100),gpu:2(IDX:4-5)", "4-5"},
    {"gpux:1(IDX:7)", ""},     /* another GRES whose name starts with gpu */
    {"gpu:h100:2(IDX:0-1),gpu:a100:1(IDX:6)", "0-1,6"},
};

START_TEST (test_detail)
{
    hwloc_bitmap_t idx = hwloc_bitmap_alloc ();
    hwloc_bitmap_t want = hwloc_bitmap_alloc ();
    pin_error_t err = {""};

    ck_assert_int_eq (gpus_detail_parse (details[_i].detail, idx, &err), 0);
    if (details[_i].idx[0])
        hwloc_bitmap_list_sscanf (want, details[_i].idx);
    ck_assert_msg (hwloc_bitmap_isequal (idx, want),
                   "%s: wrong indexes",
                   details[_i].detail);
    hwloc_bitmap_free (idx);
    hwloc_bitmap_free (want);
}
END_TEST

START_TEST (test_detail_bad)
{
    hwloc_bitmap_t idx = hwloc_bitmap_alloc ();
    pin_error_t err = {""};

    ck_assert_int_eq (gpus_detail_parse ("gpu:2(IDX:0-x)", idx, &err), -1);
    ck_assert_ptr_nonnull (strstr (err.text, "bad IDX list"));
    ck_assert_ptr_nonnull (strstr (err.text, "gpu:2(IDX:0-x)"));
    ck_assert_int_eq (gpus_detail_parse (NULL, idx, &err), 0);
    ck_assert (hwloc_bitmap_iszero (idx));
    hwloc_bitmap_free (idx);
}
END_TEST

/* ---- gres.conf ---------------------------------------------------------- */

START_TEST (test_conf)
{
    struct gpus_conf c;
    pin_error_t err = {""};
    const char *text = "# gres.conf\n"
                       "AutoDetect=off\n"
                       "NodeName=node1 Name=gpu Type=a100 File=/dev/nvidia[0-1] "
                       "Cores=0-7\n"
                       "NodeName=node9 Name=gpu File=/dev/nvidia[0-7]\n"
                       "NodeName=node1 Name=mps Count=200 File=/dev/nvidia0\n"
                       "Name=gpu File=/dev/nvidia3 Cores=8-15 # a comment\n"
                       "NodeName=node[1-2]\tname=GPU\tfile=/dev/dri/renderD[128,130]\n";

    ck_assert_int_eq (gpus_conf_parse (text, match_node1, NULL, &c, &err), 0);
    ck_assert_uint_eq (c.n, 5);
    ck_assert (!c.autodetect);
    ck_assert_str_eq (c.dev[0].file, "/dev/nvidia0");
    ck_assert_str_eq (c.dev[0].cores, "0-7");
    ck_assert_str_eq (c.dev[1].file, "/dev/nvidia1");
    ck_assert_str_eq (c.dev[1].cores, "0-7");
    ck_assert_str_eq (c.dev[2].file, "/dev/nvidia3");
    ck_assert_str_eq (c.dev[2].cores, "8-15");
    ck_assert_str_eq (c.dev[3].file, "/dev/dri/renderD128");
    ck_assert_str_eq (c.dev[3].cores, "");
    ck_assert_str_eq (c.dev[4].file, "/dev/dri/renderD130");
}
END_TEST

START_TEST (test_conf_width_autodetect)
{
    struct gpus_conf c;
    pin_error_t err = {""};

    ck_assert_int_eq (gpus_conf_parse ("AutoDetect=nvml\n"
                                       "Name=gpu File=/dev/gpu[08-10]x\n",
                                       NULL,
                                       NULL,
                                       &c,
                                       &err),
                      0);
    ck_assert (c.autodetect);
    ck_assert_uint_eq (c.n, 3);
    ck_assert_str_eq (c.dev[0].file, "/dev/gpu08x");
    ck_assert_str_eq (c.dev[2].file, "/dev/gpu10x");
    /* NodeName= lines without a matcher name no node */
    ck_assert_int_eq (gpus_conf_parse ("NodeName=node1 Name=gpu File=/dev/a\n",
                                       NULL,
                                       NULL,
                                       &c,
                                       &err),
                      0);
    ck_assert_uint_eq (c.n, 0);
}
END_TEST

START_TEST (test_conf_nofile_count)
{
    struct gpus_conf c;
    pin_error_t err = {""};

    /* a count without device files: one index per GPU, each without a
     * file, with the line's Cores= */
    ck_assert_int_eq (gpus_conf_parse ("Name=gpu Count=3 Cores=4-5\n"
                                       "Name=gpu File=/dev/nvidia3\n",
                                       NULL,
                                       NULL,
                                       &c,
                                       &err),
                      0);
    ck_assert_uint_eq (c.n, 4);
    ck_assert_str_eq (c.dev[0].file, "");
    ck_assert_str_eq (c.dev[2].cores, "4-5");
    ck_assert_str_eq (c.dev[3].file, "/dev/nvidia3");
}
END_TEST

static const struct {
    const char *text;
    const char *msg; /* part of the error */
} bad_confs[] = {
    {"Name=gpu File=/dev/nvidia[0-1\n", "line 1: File=/dev/nvidia[0-1: expected one bracket"},
    {"\nName=gpu File=/dev/nvidia[1-0]\n", "line 2: File=/dev/nvidia[1-0]: bad range"},
    {"Name=gpu File=/dev/nvidia[a]\n", "bad range"},
    {"Name=gpu File=/dev/nvidia[0-1][0-1]\n", "expected one bracket"},
    {"Name=gpu File=/dev/nvidia[0-99999]\n", "bad range"},
    {"Name=gpu File=/dev/nvidia[0-40]\nName=gpu File=/dev/x[0-40]\n", "line 2: more than 64 GPUs"},
    {"Name=gpu Count=99999999999\n", "line 1: Count="},
};

START_TEST (test_conf_bad)
{
    struct gpus_conf c;
    pin_error_t err = {""};

    ck_assert_int_eq (gpus_conf_parse (bad_confs[_i].text, NULL, NULL, &c, &err), -1);
    ck_assert_msg (strstr (err.text, bad_confs[_i].msg) != NULL,
                   "'%s' lacks '%s'",
                   err.text,
                   bad_confs[_i].msg);
    ck_assert (strchr (err.text, '\n') == NULL);
}
END_TEST

START_TEST (test_conf_long_line)
{
    struct gpus_conf c;
    pin_error_t err = {""};
    size_t n = 5000;
    char *text = malloc (n + 1);

    memset (text, 'x', n);
    text[n] = '\0';
    memcpy (text, "Name=gpu File=/", 15);
    ck_assert_int_eq (gpus_conf_parse (text, NULL, NULL, &c, &err), -1);
    ck_assert_ptr_nonnull (strstr (err.text, "line 1: longer than"));
    free (text);
}
END_TEST

/* Include: a table of files stands for the plugin's reader */
static char *inc_read (const char *path, void *arg, pin_error_t *errp)
{
    (void)arg;
    if (!strcmp (path, "/etc/slurm/gres.d/node1.conf"))
        return strdup ("NodeName=node1 Name=gpu File=/dev/nvidia[2-3] Cores=4\n");
    if (!strcmp (path, "gres.d/common.conf"))
        return strdup ("Name=gpu File=/dev/nvidia9\n"
                       "include /etc/slurm/gres.d/node1.conf\n");
    if (!strcmp (path, "loop.conf"))
        return strdup ("Include loop.conf\n");
    if (!strcmp (path, "bad.conf"))
        return strdup ("\nName=gpu File=/dev/x[1\n");
    errprintf (errp, "%s: No such file or directory", path);
    return NULL;
}

START_TEST (test_conf_include)
{
    struct gpus_conf c;
    pin_error_t err = {""};
    const struct gpus_include inc = {inc_read, NULL};

    ck_assert_msg (gpus_conf_parse_inc ("Name=gpu File=/dev/nvidia0\n"
                                        "Include gres.d/common.conf # all\n"
                                        "Name=gpu File=/dev/nvidia1\n",
                                        &inc,
                                        match_node1,
                                        NULL,
                                        &c,
                                        &err)
                       == 0,
                   "%s",
                   err.text);
    ck_assert_uint_eq (c.n, 5);
    ck_assert_str_eq (c.dev[0].file, "/dev/nvidia0");
    ck_assert_str_eq (c.dev[1].file, "/dev/nvidia9");
    ck_assert_str_eq (c.dev[2].file, "/dev/nvidia2");
    ck_assert_str_eq (c.dev[3].file, "/dev/nvidia3");
    ck_assert_str_eq (c.dev[3].cores, "4");
    ck_assert_str_eq (c.dev[4].file, "/dev/nvidia1");
    /* a missing file, a loop, an error inside: one line naming it */
    ck_assert_int_eq (gpus_conf_parse_inc ("Include /etc/slurm/none.conf\n", &inc, NULL, NULL, &c, &err),
                      -1);
    ck_assert_str_eq (err.text, "/etc/slurm/none.conf: No such file or directory");
    ck_assert_int_eq (gpus_conf_parse_inc ("Include loop.conf\n", &inc, NULL, NULL, &c, &err),
                      -1);
    ck_assert_ptr_nonnull (strstr (err.text, "loop.conf line 1: Include nested deeper than"));
    ck_assert_int_eq (gpus_conf_parse_inc ("Include bad.conf\n", &inc, NULL, NULL, &c, &err),
                      -1);
    ck_assert_ptr_nonnull (strstr (err.text, "bad.conf line 2: File=/dev/x[1"));
    ck_assert_int_eq (gpus_conf_parse_inc ("Include\t \n", &inc, NULL, NULL, &c, &err), -1);
    ck_assert_ptr_nonnull (strstr (err.text, "gres.conf line 1: Include without a file"));
    /* without a reader an Include is an error, not a silent skip */
    ck_assert_int_eq (gpus_conf_parse ("Include gres.d/common.conf\n", NULL, NULL, &c, &err),
                      -1);
    ck_assert_ptr_nonnull (strstr (err.text, "gres.conf line 1: Include is not read here"));
    /* a key that merely starts with include is not an Include */
    ck_assert_int_eq (gpus_conf_parse ("Includes=x Name=gpu File=/dev/n0\n", NULL, NULL, &c, &err),
                      0);
    ck_assert_uint_eq (c.n, 1);
}
END_TEST

/* ---- device file -> PCI bus id ------------------------------------------ */

/* /dev/null is a character device every test machine has: its MAJ:MIN
 * stands for the GPU's in a fake sysfs/procfs root. */
static void devnull_majmin (char *buf, size_t n, unsigned *minor_out)
{
    struct stat st;

    ck_assert_int_eq (stat ("/dev/null", &st), 0);
    ck_assert (S_ISCHR (st.st_mode));
    snprintf (buf, n, "%u:%u", major (st.st_rdev), minor (st.st_rdev));
    if (minor_out)
        *minor_out = minor (st.st_rdev);
}

START_TEST (test_busid_sysfs)
{
    char mm[32], rel[128], link[4096], busid[64] = "";
    const char *via = NULL;
    pin_error_t err = {""};

    tmptree_setup ("test_gpus");
    devnull_majmin (mm, sizeof (mm), NULL);
    snprintf (rel, sizeof (rel), "sys/dev/char/%s", mm);
    tmptree_mkdirs (rel, true);
    tmptree_mkdirs ("sys/devices/pci0000:00/0000:3B:00.0", true);
    snprintf (rel, sizeof (rel), "sys/dev/char/%s/device", mm);
    tmptree_path (link, sizeof (link), rel);
    ck_assert_int_eq (symlink ("../../../devices/pci0000:00/0000:3B:00.0", link), 0);
    ck_assert_int_eq (gpus_device_busid (tmptree_root (),
                                         "/dev/null",
                                         busid,
                                         sizeof (busid),
                                         &via,
                                         &err),
                      0);
    ck_assert_str_eq (busid, "0000:3b:00.0");
    ck_assert_str_eq (via, "sysfs");
    tmptree_teardown ();
}
END_TEST

START_TEST (test_busid_nvidia)
{
    char mm[32], info[256], busid[64] = "";
    unsigned mi;
    const char *via = NULL;
    pin_error_t err = {""};

    tmptree_setup ("test_gpus");
    devnull_majmin (mm, sizeof (mm), &mi);
    /* sysfs knows the device, but not as a PCI function */
    tmptree_mkdirs ("proc/driver/nvidia/gpus/0000:18:00.0", true);
    snprintf (info, sizeof (info), "Model: \t H100\nDevice Minor: \t %u\n", mi + 1);
    tmptree_put ("proc/driver/nvidia/gpus/0000:18:00.0/information", info);
    snprintf (info, sizeof (info), "Model: \t H100\nDevice Minor: \t %u\n", mi);
    tmptree_put ("proc/driver/nvidia/gpus/0000:9A:00.0/information", info);
    tmptree_put ("proc/driver/nvidia/gpus/not-a-busid/information", info);
    ck_assert_int_eq (gpus_device_busid (tmptree_root (),
                                         "/dev/null",
                                         busid,
                                         sizeof (busid),
                                         &via,
                                         &err),
                      0);
    ck_assert_str_eq (busid, "0000:9a:00.0");
    ck_assert_str_eq (via, "nvidia");
    tmptree_teardown ();
}
END_TEST

START_TEST (test_busid_errors)
{
    char busid[64] = "";
    const char *via = NULL;
    pin_error_t err = {""};

    tmptree_setup ("test_gpus");
    /* neither source knows it */
    errno = 0;
    ck_assert_int_eq (gpus_device_busid (tmptree_root (),
                                         "/dev/null",
                                         busid,
                                         sizeof (busid),
                                         &via,
                                         &err),
                      -1);
    ck_assert_int_eq (errno, ENOENT);
    ck_assert_ptr_nonnull (strstr (err.text, "no PCI device"));
    ck_assert_str_eq (via, "");
    /* not a character device, missing, relative */
    tmptree_put ("file", "x");
    char path[4096];
    tmptree_path (path, sizeof (path), "file");
    ck_assert_int_eq (gpus_device_busid (tmptree_root (), path, busid, sizeof (busid), &via, &err),
                      -1);
    ck_assert_ptr_nonnull (strstr (err.text, "not a character device"));
    tmptree_path (path, sizeof (path), "missing");
    ck_assert_int_eq (gpus_device_busid (tmptree_root (), path, busid, sizeof (busid), &via, &err),
                      -1);
    ck_assert_ptr_nonnull (strstr (err.text, "No such file"));
    ck_assert_int_eq (gpus_device_busid (NULL, "dev/null", busid, sizeof (busid), &via, &err),
                      -1);
    ck_assert_ptr_nonnull (strstr (err.text, "not an absolute path"));
    tmptree_teardown ();
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("gpus");
    TCase *tc = tcase_create ("gpus");

    tcase_add_loop_test (tc, test_detail, 0, (int)(sizeof (details) / sizeof (details[0])));
    tcase_add_test (tc, test_detail_bad);
    tcase_add_test (tc, test_conf);
    tcase_add_test (tc, test_conf_width_autodetect);
    tcase_add_test (tc, test_conf_nofile_count);
    tcase_add_loop_test (tc,
                         test_conf_bad,
                         0,
                         (int)(sizeof (bad_confs) / sizeof (bad_confs[0])));
    tcase_add_test (tc, test_conf_long_line);
    tcase_add_test (tc, test_conf_include);
    tcase_add_test (tc, test_busid_sysfs);
    tcase_add_test (tc, test_busid_nvidia);
    tcase_add_test (tc, test_busid_errors);
    suite_add_tcase (s, tc);
    return tap_run (s, NULL, 0);
}
