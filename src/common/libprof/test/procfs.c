/* test/procfs.c - the /proc parsers of the sampler, on fixed text */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "libprof/procfs.h"
#include "libtest/tap.h"

/* A real line (Linux 6.1) with a command holding ") (" and spaces, and
 * rsslim = 2^64-1 (field 25). */
#define STAT_LINE                                                    \
    "4242 (a) (b c) S 4241 4242 4241 34816 4242 4194304 1000 0 2 0 " \
    "150 37 0 0 20 0 3 0 987654 10000000 500 18446744073709551615 "  \
    "1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n"

static const struct {
    const char *text;
    int rc;
    char state;
    const char *comm;
} stats[] = {
    {STAT_LINE, 0, 'S', "a) (b c"},
    {"1 (init) R 0 1 1 0 -1 4194560 0 0 0 0 1 2 0 0 20 0 1 0\n",
     -1,
     0,
     NULL}, /* 21 fields */
    {"1 (init) R 0 1 1 0 -1 4194560 0 0 0 0 1 2 0 0 20 0 1 0 5\n",
     0,
     'R',
     "init"},
    {"1 init R 0", -1, 0, NULL},
    {"x (init) R 0 1", -1, 0, NULL},
    {"1 (init)", -1, 0, NULL},
    {"1 (init) R 0 1 x", -1, 0, NULL},
    {"1 (init) Z 0 1 1 0 -1 4194560 0 0 0 0 1 2 0 0 20 0 1 0 5 0 0 9 junk",
     -1,
     0,
     NULL},
    {"1 (0123456789abcdefghij) D 0 1 1 0 -1 4 0 0 0 0 1 2 0 0 20 0 1 0 5 0 0"
     " 9",
     0,
     'D',
     "0123456789abcdef"},
    {"", -1, 0, NULL},
};

START_TEST (test_stat)
{
    struct procfs_stat st, before;
    pin_error_t e = {""};

    memset (&st, 0x5a, sizeof (st));
    before = st;
    errno = 0;
    ck_assert_int_eq (procfs_parse_stat (stats[_i].text, &st, &e),
                      stats[_i].rc);
    if (stats[_i].rc < 0) {
        ck_assert_int_eq (errno, EINVAL);
        ck_assert (memcmp (&st, &before, sizeof (st)) == 0);
        ck_assert_msg (!strncmp (e.text, "stat: ", 6), "'%s'", e.text);
        return;
    }
    ck_assert_int_eq (st.state, stats[_i].state);
    ck_assert_str_eq (st.comm, stats[_i].comm);
}
END_TEST

START_TEST (test_stat_fields)
{
    struct procfs_stat st;

    ck_assert_int_eq (procfs_parse_stat (STAT_LINE, &st, NULL), 0);
    ck_assert_int_eq (st.pid, 4242);
    ck_assert_int_eq (st.ppid, 4241);
    ck_assert_uint_eq (st.utime, 150);
    ck_assert_uint_eq (st.stime, 37);
    ck_assert_int_eq (st.num_threads, 3);
    ck_assert_uint_eq (st.starttime, 987654);
    ck_assert_int_eq (st.processor, 1);
}
END_TEST

/* The real file of this very process parses. */
START_TEST (test_stat_self)
{
    char buf[4096];
    struct procfs_stat st;
    pin_error_t e = {""};

    ck_assert_int_ge (procfs_read ("/proc/self/stat", buf, sizeof (buf)), 1);
    ck_assert_msg (procfs_parse_stat (buf, &st, &e) == 0, "%s", e.text);
    ck_assert_int_eq (st.pid, getpid ());
    ck_assert_int_eq (st.state, 'R');
    ck_assert_int_ge (procfs_read ("/proc/self/status", buf, sizeof (buf)), 1);
    {
        struct procfs_status ps;
        ck_assert_msg (procfs_parse_status (buf, &ps, &e) == 0, "%s", e.text);
        ck_assert_uint_eq (ps.threads, 1);
    }
    errno = 0;
    ck_assert_int_eq (procfs_read ("/proc/self/status", buf, 8), -1);
    ck_assert_int_eq (errno, EFBIG);
    ck_assert_int_eq (procfs_read ("/proc/0/stat", buf, sizeof (buf)), -1);
}
END_TEST

START_TEST (test_status)
{
    struct procfs_status ps;
    pin_error_t e = {""};
    const char *good =
        "Name:\tx\nThreads:\t4\nVmRSS:\t   1234 kB\n"
        "voluntary_ctxt_switches:\t17\n"
        "nonvoluntary_ctxt_switches:\t3\n";

    ck_assert_int_eq (procfs_parse_status (good, &ps, &e), 0);
    ck_assert_uint_eq (ps.voluntary_ctxt_switches, 17);
    ck_assert_uint_eq (ps.nonvoluntary_ctxt_switches, 3);
    ck_assert_uint_eq (ps.threads, 4);
    ck_assert_uint_eq (ps.vmrss_kb, 1234);
    errno = 0;
    ck_assert_int_eq (procfs_parse_status ("Threads:\t4\n", &ps, &e), -1);
    ck_assert_int_eq (errno, EINVAL);
    ck_assert_int_eq (procfs_parse_status ("voluntary_ctxt_switches:\tx\n"
                                           "nonvoluntary_ctxt_switches:\t3\n",
                                           &ps,
                                           &e),
                      -1);
    ck_assert_msg (strstr (e.text, "voluntary_ctxt_switches"), "%s", e.text);
    ck_assert_int_eq (procfs_parse_status ("voluntary_ctxt_switches:\t"
                                           "99999999999999999999999\n"
                                           "nonvoluntary_ctxt_switches:\t3\n",
                                           &ps,
                                           &e),
                      -1);
    ck_assert_int_eq (procfs_parse_status (NULL, &ps, &e), -1);
}
END_TEST

START_TEST (test_rollup)
{
    struct procfs_rollup r;
    pin_error_t e = {""};
    const char *good =
        "55a0c0de0000-7ffd5f1f6000 ---p 00000000 00:00 0  [rollup]\n"
        "Rss:              365704 kB\nPss:               75616 kB\n"
        "Pss_Anon:          70000 kB\nShared_Clean:      1000 kB\n";

    ck_assert_int_eq (procfs_parse_rollup (good, &r, &e), 0);
    ck_assert_uint_eq (r.rss_kb, 365704);
    ck_assert_uint_eq (r.pss_kb, 75616);
    ck_assert_int_eq (procfs_parse_rollup ("Rss: 5 kB\n", &r, &e), -1);
    ck_assert_int_eq (procfs_parse_rollup ("Rss: 5 kB\nPss: 5 MB\n", &r, &e),
                      -1);
    ck_assert_int_eq (procfs_parse_rollup ("", &r, &e), -1);
}
END_TEST

START_TEST (test_iostat)
{
    uint64_t v[4] = {7, 7, 7, 7};
    pin_error_t e = {""};
    const char *two =
        "8:0 rbytes=1048576 wbytes=4096 rios=3 wios=1 dbytes=0 dios=0\n"
        "259:0 rbytes=1 wbytes=2 rios=4 wios=5 dbytes=9 dios=9\n";

    ck_assert_int_eq (procfs_parse_iostat (two, v, &e), 0);
    ck_assert_uint_eq (v[0], 1048577);
    ck_assert_uint_eq (v[1], 4098);
    ck_assert_uint_eq (v[2], 7);
    ck_assert_uint_eq (v[3], 6);
    /* no I/O yet: an empty file is zeros, not an error */
    ck_assert_int_eq (procfs_parse_iostat ("", v, &e), 0);
    ck_assert_uint_eq (v[0] + v[1] + v[2] + v[3], 0);
    ck_assert_int_eq (procfs_parse_iostat ("8:0 rbytes=5\n", v, &e), 0);
    ck_assert_uint_eq (v[0], 5);
    ck_assert_int_eq (procfs_parse_iostat ("8:0 rbytes=x\n", v, &e), -1);
    ck_assert_ptr_nonnull (strstr (e.text, "io.stat line 1"));
    ck_assert_int_eq (procfs_parse_iostat ("8:0 rbytes=-1\n", v, &e), -1);
    ck_assert_int_eq (procfs_parse_iostat ("sda rbytes=1\n", v, &e), -1);
    ck_assert_int_eq (procfs_parse_iostat ("8:0 rbytes\n", v, &e), -1);
    ck_assert_int_eq (procfs_parse_iostat ("8:0 "
                                           "rbytes=99999999999999999999999\n",
                                           v,
                                           &e),
                      -1);
}
END_TEST

START_TEST (test_flat)
{
    static const char *const keys[] = {"anon", "file", "shmem"};
    uint64_t v[3] = {7, 7, 7};
    pin_error_t e = {""};
    const char *mem =
        "anon 4096\nfile 8192\nkernel 1\nanon_thp 0\nshmem 12288\n"
        "file_mapped 5\n";

    ck_assert_int_eq (procfs_parse_flat (mem, keys, v, 3, "memory.stat", &e),
                      7);
    ck_assert_uint_eq (v[0], 4096); /* not anon_thp */
    ck_assert_uint_eq (v[1], 8192); /* not file_mapped */
    ck_assert_uint_eq (v[2], 12288);
    v[2] = 7;
    ck_assert_int_eq (procfs_parse_flat ("anon 1\nfile 2",
                                         keys,
                                         v,
                                         3,
                                         "memory.stat",
                                         &e),
                      3);
    ck_assert_uint_eq (v[1], 2);
    ck_assert_uint_eq (v[2], 7); /* absent: untouched */
    ck_assert_int_eq (procfs_parse_flat ("anon 1x\n",
                                         keys,
                                         v,
                                         3,
                                         "memory.stat",
                                         &e),
                      -1);
    ck_assert (strstr (e.text, "memory.stat: the value of anon"));
    ck_assert_int_eq (procfs_parse_flat ("anon -1\n",
                                         keys,
                                         v,
                                         3,
                                         "memory.stat",
                                         &e),
                      -1);
    ck_assert_int_eq (procfs_parse_flat ("", keys, v, 3, "x", &e), 0);
    ck_assert_int_eq (procfs_parse_flat (NULL, keys, v, 3, "x", &e), -1);
}
END_TEST

static const char cpustat[] =
    "cpu  10 20 30 40 50 60 70 80 0 0\n"
    "cpu0 1 2 3 4 5 6 7 8 0 0\n"
    "cpu1 11 12 13 14 15 16 17 18 0 0\n"
    "cpu2 21 22 23 24\n"
    "cpu3 31 32 33 34 35 36 37 38 0 0\n"
    "intr 12345 0 0\nctxt 999\n";

static const struct {
    const char *text, *cpus;
    int rc, err;
    int first_cpu;
    uint64_t first_user, first_steal;
} cpus[] = {
    {cpustat, "1,3", 2, 0, 1, 11, 18},
    {cpustat, "2", 1, 0, 2, 21, 0},
    {cpustat, "", 0, 0, -1, 0, 0},
    {cpustat, "0-4", -1, ENOENT, -1, 0, 0},
    {"cpu0 1 2 3\n", "0", -1, EINVAL, -1, 0, 0},
    {"cpu0 1 2 x 4\n", "0", -1, EINVAL, -1, 0, 0},
    {"cpu99999999 1 2 3 4\n", "0", -1, EINVAL, -1, 0, 0},
    {"cpu0 1 2 3 4 5 6 7 8 9 10 11 12\n", "0", 1, 0, 0, 1, 8},
};

START_TEST (test_cpustat)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc ();
    struct procfs_cpu out[8];
    pin_error_t e = {""};
    int rc;

    ck_assert_int_eq (hwloc_bitmap_list_sscanf (set, cpus[_i].cpus), 0);
    errno = 0;
    rc = procfs_parse_cpustat (cpus[_i].text, set, out, 8, &e);
    ck_assert_msg (rc == cpus[_i].rc, "case %d: %d (%s)", _i, rc, e.text);
    if (rc < 0)
        ck_assert_int_eq (errno, cpus[_i].err);
    if (rc > 0) {
        ck_assert_int_eq (out[0].cpu, cpus[_i].first_cpu);
        ck_assert_uint_eq (out[0].user, cpus[_i].first_user);
        ck_assert_uint_eq (out[0].steal, cpus[_i].first_steal);
    }
    hwloc_bitmap_free (set);
}
END_TEST

START_TEST (test_cpustat_room)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc ();
    struct procfs_cpu out[1];

    hwloc_bitmap_set_range (set, 0, 1);
    errno = 0;
    ck_assert_int_eq (procfs_parse_cpustat (cpustat, set, out, 1, NULL), -1);
    ck_assert_int_eq (errno, E2BIG);
    hwloc_bitmap_free (set);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("procfs");
    TCase *tc = tcase_create ("procfs");

    tcase_add_loop_test (tc, test_stat, 0, sizeof (stats) / sizeof (stats[0]));
    tcase_add_test (tc, test_stat_fields);
    tcase_add_test (tc, test_stat_self);
    tcase_add_test (tc, test_status);
    tcase_add_test (tc, test_rollup);
    tcase_add_test (tc, test_flat);
    tcase_add_test (tc, test_iostat);
    tcase_add_loop_test (tc,
                         test_cpustat,
                         0,
                         sizeof (cpus) / sizeof (cpus[0]));
    tcase_add_test (tc, test_cpustat_room);
    suite_add_tcase (s, tc);
    return tap_run (s, NULL, 0);
}
