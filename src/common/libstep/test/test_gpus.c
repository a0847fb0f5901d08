/* test/test_gpus.c - which GPUs a step holds, and which PCI devices they
 * are (libstep/gpus.h): gres.conf for this node, slurmctld's GRES detail,
 * and a device file's PCI bus id through a test root standing for / (a
 * sysfs link, and NVIDIA's /proc/driver/nvidia/gpus, which the lent H100
 * machine showed is the only way for /dev/nvidiaN: t/fixtures/gpu/).
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libstep/gpus.h"
#include "libtest/tap.h"
#include "libtopo/topo.h"

/* our node is "n3"; NodeName= expressions are lists of exact names or
 * "n[1-4]" (enough for the test; the plugin uses libslurm's hostlist) */
static bool match (const char *expr, void *arg)
{
    (void)arg;
    return strstr (expr, "n3") || !strcmp (expr, "n[1-4]");
}

START_TEST (test_conf)
{
    static struct gpus_conf c;
    pin_error_t e = {""};
    const char *text =
        "# a comment\n"
        "AutoDetect=off\n"
        "NodeName=n1 Name=gpu File=/dev/nvidia[0-7] Cores=0-7\n"
        "NodeName=n[1-4] Name=gpu Type=a100 File=/dev/nvidia[0-1] "
        "Cores=0-3 # first socket\n"
        "nodename=n3 name=gpu file=/dev/nvidia2 cores=4-7\n"
        "NodeName=n3 Name=shard Count=8 File=/dev/nvidia0\n"
        "NodeName=n3 Name=mps Count=100\n"
        "Name=gpu File=/dev/dri/card[00-01]\n"
        "\n"
        "NodeName=n3 Name=gpu Count=1\n";

    ck_assert_msg (gpus_conf_parse (text, match, NULL, &c, &e) == 0, "%s", e.text);
    ck_assert_uint_eq (c.n, 6);
    ck_assert (!c.autodetect);
    ck_assert_str_eq (c.dev[0].file, "/dev/nvidia0");
    ck_assert_str_eq (c.dev[0].cores, "0-3");
    ck_assert_str_eq (c.dev[1].file, "/dev/nvidia1");
    ck_assert_str_eq (c.dev[2].file, "/dev/nvidia2");
    ck_assert_str_eq (c.dev[2].cores, "4-7");
    ck_assert_str_eq (c.dev[3].file, "/dev/dri/card00");
    ck_assert_str_eq (c.dev[4].file, "/dev/dri/card01");
    ck_assert_str_eq (c.dev[4].cores, "");
    ck_assert_str_eq (c.dev[5].file, "");

    ck_assert_int_eq (gpus_conf_parse ("AutoDetect=nvml\n", match, NULL, &c, &e), 0);
    ck_assert (c.autodetect);
    ck_assert_uint_eq (c.n, 0);
    /* no matcher: only lines without NodeName= */
    ck_assert_int_eq (gpus_conf_parse (text, NULL, NULL, &c, &e), 0);
    ck_assert_uint_eq (c.n, 2);
}
END_TEST

static const char *const bad_confs[] = {
    "Name=gpu File=/dev/nvidia[0-1\n",
    "Name=gpu File=/dev/nvidia[1-0]\n",
    "Name=gpu File=/dev/nvidia[0-99]\n",
    "Name=gpu File=/dev/nvidia[a]\n",
    "Name=gpu File=/dev/nvidia[0][1]\n",
    "Name=gpu File=/dev/nvidia[0-40] \nName=gpu File=/dev/nvidia[0-40]\n",
};

START_TEST (test_conf_bad)
{
    static struct gpus_conf c;
    pin_error_t e = {""};
    char big[2048];

    ck_assert_int_eq (gpus_conf_parse (bad_confs[_i], match, NULL, &c, &e), -1);
    ck_assert_msg (strstr (e.text, "gres.conf line") && !strchr (e.text, '\n'),
                   "%s",
                   e.text);
    /* an over-long line */
    memset (big, 'x', sizeof (big) - 1);
    big[sizeof (big) - 1] = '\0';
    ck_assert_int_eq (gpus_conf_parse (big, match, NULL, &c, &e), -1);
    ck_assert_ptr_nonnull (strstr (e.text, "longer than"));
}
END_TEST

START_TEST (test_detail)
{
    hwloc_bitmap_t s = hwloc_bitmap_alloc ();
    pin_error_t e = {""};
    char *l;

    ck_assert_int_eq (gpus_detail_parse ("gpu:2(IDX:0-1)", s, &e), 0);
    ck_assert_str_eq (l = topo_list_format (s), "0-1");
    free (l);
    hwloc_bitmap_zero (s);
    ck_assert_int_eq (gpus_detail_parse ("gpu:a100:2(IDX:1,3),shard:4(0/8,1/8)",
                                         s,
                                         &e),
                      0);
    ck_assert_str_eq (l = topo_list_format (s), "1,3");
    free (l);
    hwloc_bitmap_zero (s);
    ck_assert_int_eq (gpus_detail_parse ("mps:100(IDX:0),gpu(CNT:0)", s, &e), 0);
    ck_assert (hwloc_bitmap_iszero (s));
    ck_assert_int_eq (gpus_detail_parse ("N/A", s, &e), 0);
    ck_assert_int_eq (gpus_detail_parse ("", s, &e), 0);
    ck_assert_int_eq (gpus_detail_parse (NULL, s, &e), 0);
    ck_assert (hwloc_bitmap_iszero (s));
    ck_assert_int_eq (gpus_detail_parse ("gpus:1(IDX:5)", s, &e), 0);
    ck_assert (hwloc_bitmap_iszero (s));
    ck_assert_int_eq (gpus_detail_parse ("gpu:1(IDX:x)", s, &e), -1);
    ck_assert_ptr_nonnull (strstr (e.text, "bad IDX list"));
    hwloc_bitmap_free (s);
}
END_TEST

/* /dev/null (char 1:3) stands for a GPU's device file under a test root */
START_TEST (test_busid)
{
    char root[] = "/tmp/test_gpus.XXXXXX", p[512], busid[16];
    const char *via = NULL;
    pin_error_t e = {""};
    struct stat st;
    FILE *f;

    ck_assert_int_eq (stat ("/dev/null", &st), 0);
    ck_assert (S_ISCHR (st.st_mode));
    ck_assert_ptr_nonnull (mkdtemp (root));

    /* nothing known: ENOENT, one line naming the file */
    ck_assert_int_eq (gpus_device_busid (root, "/dev/null", busid, sizeof (busid), &via, &e),
                      -1);
    ck_assert_int_eq (errno, ENOENT);
    ck_assert_ptr_nonnull (strstr (e.text, "/dev/null (1:3): no PCI device"));

    /* NVIDIA's: the gpus/BUSID/information with this minor */
    snprintf (p, sizeof (p), "%s/proc/driver/nvidia/gpus/0000:3b:00.0", root);
    {
        char cmd[1400];
        snprintf (cmd, sizeof (cmd), "mkdir -p '%s' '%s/../0000:5E:00.0'", p, p);
        ck_assert_int_eq (system (cmd), 0);
    }
    snprintf (p, sizeof (p), "%s/proc/driver/nvidia/gpus/0000:5E:00.0/information", root);
    ck_assert_ptr_nonnull (f = fopen (p, "w"));
    fprintf (f, "Model: \t\t NVIDIA H100\nDevice Minor: \t 1\n");
    fclose (f);
    snprintf (p, sizeof (p), "%s/proc/driver/nvidia/gpus/0000:3b:00.0/information", root);
    ck_assert_ptr_nonnull (f = fopen (p, "w"));
    fprintf (f, "Model: \t\t NVIDIA H100\nBus Location: \t 0000:3b:00.0\nDevice Minor: \t 3\n");
    fclose (f);
    ck_assert_msg (gpus_device_busid (root, "/dev/null", busid, sizeof (busid), &via, &e) == 0,
                   "%s",
                   e.text);
    ck_assert_str_eq (busid, "0000:3b:00.0");
    ck_assert_str_eq (via, "nvidia");

    /* sysfs first, lower-cased */
    snprintf (p, sizeof (p), "%s/sys/dev/char/1:3", root);
    {
        char cmd[1400];
        snprintf (cmd, sizeof (cmd), "mkdir -p '%s' && ln -s ../../../devices/pci0000:00/0000:00:0A.0 '%s/device'", p, p);
        ck_assert_int_eq (system (cmd), 0);
    }
    ck_assert_int_eq (gpus_device_busid (root, "/dev/null", busid, sizeof (busid), &via, &e), 0);
    ck_assert_str_eq (busid, "0000:00:0a.0");
    ck_assert_str_eq (via, "sysfs");

    /* not a character device, not absolute, missing */
    ck_assert_int_eq (gpus_device_busid (root, "/tmp", busid, sizeof (busid), &via, &e), -1);
    ck_assert_ptr_nonnull (strstr (e.text, "not a character device"));
    ck_assert_int_eq (gpus_device_busid (root, "dev/null", busid, sizeof (busid), &via, &e), -1);
    ck_assert_ptr_nonnull (strstr (e.text, "not an absolute path"));
    ck_assert_int_eq (gpus_device_busid (root, "/dev/nonexistent-gpu", busid, sizeof (busid), &via, &e), -1);
    ck_assert_ptr_nonnull (strstr (e.text, "/dev/nonexistent-gpu"));
    {
        char cmd[1400];
        snprintf (cmd, sizeof (cmd), "rm -rf '%s'", root);
        ck_assert_int_eq (system (cmd), 0);
    }
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("gpus");
    TCase *tc = tcase_create ("gpus");

    tcase_add_test (tc, test_conf);
    tcase_add_loop_test (tc,
                         test_conf_bad,
                         0,
                         (int)(sizeof (bad_confs) / sizeof (bad_confs[0])));
    tcase_add_test (tc, test_detail);
    tcase_add_test (tc, test_busid);
    suite_add_tcase (s, tc);
    return tap_run (s, NULL, 0);
}
