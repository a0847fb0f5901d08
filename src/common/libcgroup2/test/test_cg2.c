/* test_cg2.c - unit tests for the cgroup v2 layer
 *
 * The seam: a temporary directory of plain files stands for the cgroup2
 * mount; tests write the files the kernel would (cgroup.controllers,
 * cgroup.events, cpuset.cpus.effective) and read back what the library
 * wrote.  One case runs on the real cgroup2 mount when run as root; it is
 * reported as SKIP otherwise.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libcgroup2/cg2.h"
#include "libcgroup2/cg2_private.h"
#include "libtest/tap.h"
#include "libtest/tmptree.h"
#include "libtopo/topo.h"

static void setup (void)
{
    tmptree_setup ("test_cg2");
    tmptree_put ("cgroup.controllers", "cpuset cpu io memory pids\n");
    tmptree_put ("cgroup.subtree_control", "");
}

static void teardown (void)
{
    tmptree_teardown ();
}

static cg2_t *open_seam (void)
{
    pin_error_t e = {""};
    cg2_t *cg = cg2_open (tmptree_root (), &e);
    ck_assert_msg (cg != NULL, "cg2_open: %s", e.text);
    ck_assert (!cg2_is_cgroup2fs (cg));
    return cg;
}

static hwloc_bitmap_t set_of (const char *list)
{
    hwloc_bitmap_t s = hwloc_bitmap_alloc ();
    pin_error_t e;
    ck_assert_ptr_nonnull (s);
    ck_assert_msg (topo_list_parse (list, s, &e) == 0, "%s", e.text);
    return s;
}

static void assert_set (hwloc_const_bitmap_t s, const char *want)
{
    char *got = topo_list_format (s);
    ck_assert_ptr_nonnull (got);
    ck_assert_msg (strcmp (got, want) == 0,
                   "set is '%s', want '%s'",
                   got,
                   want);
    free (got);
}

/* ---- open
 * ------------------------------------------------------------------- */

START_TEST (test_open)
{
    pin_error_t e = {""};
    char path[512];
    cg2_t *cg = open_seam ();

    ck_assert_str_eq (cg2_root (cg), tmptree_root ());
    ck_assert (cg2_has_controller (cg, "cpuset"));
    ck_assert (cg2_has_controller (cg, "cpu"));
    ck_assert (cg2_has_controller (cg, "pids"));
    ck_assert (!cg2_has_controller (cg, "cpus"));
    ck_assert (!cg2_has_controller (cg, "rdma"));
    ck_assert (!cg2_has_controller (cg, ""));
    ck_assert (!cg2_has_controller (NULL, "cpu"));
    cg2_close (cg);
    cg2_close (NULL);

    /* a directory without cgroup.controllers is not a hierarchy */
    tmptree_mkdirs ("plain", true);
    tmptree_path (path, sizeof (path), "plain");
    ck_assert_ptr_null (cg2_open (path, &e));
    ck_assert_msg (strstr (e.text, "not a cgroup v2 hierarchy") != NULL,
                   "%s",
                   e.text);
    ck_assert_ptr_null (cg2_open ("relative/dir", &e));
    ck_assert_msg (strstr (e.text, "not an absolute path") != NULL,
                   "%s",
                   e.text);
    tmptree_path (path, sizeof (path), "absent");
    ck_assert_ptr_null (cg2_open (path, &e));
    ck_assert_int_eq (errno, ENOENT);
}
END_TEST

START_TEST (test_mountinfo)
{
    pin_error_t e = {""};
    char buf[256];
    char path[512];

    tmptree_put ("mountinfo",
                 "22 27 0:21 / /proc rw,nosuid - proc proc rw\n"
                 "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs "
                 "rw,mode=755\n"
                 "34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup "
                 "cgroup "
                 "rw,cpuset\n"
                 "41 31 0:38 / /sys/fs/cgroup/uni\\040fied rw,relatime "
                 "shared:9 - "
                 "cgroup2 cgroup2 rw\n"
                 "42 31 0:39 / /other rw - cgroup2 cgroup2 rw\n");
    tmptree_path (path, sizeof (path), "mountinfo");
    ck_assert_msg (cg2_mountinfo_find (path, buf, sizeof (buf), &e) == 0,
                   "%s",
                   e.text);
    ck_assert_str_eq (buf, "/sys/fs/cgroup/uni fied");

    tmptree_put ("mountinfo",
                 "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n"
                 "34 31 0:31 / /sys/fs/cgroup/cpuset rw - cgroup cgroup "
                 "rw,cpuset\n");
    ck_assert_int_lt (cg2_mountinfo_find (path, buf, sizeof (buf), &e), 0);
    ck_assert_int_eq (errno, ENOENT);
    ck_assert_msg (strstr (e.text, "no cgroup2 file system is mounted")
                       != NULL,
                   "%s",
                   e.text);

    /* this host's own table parses (whatever it holds) */
    if (cg2_mountinfo_find ("/proc/self/mountinfo", buf, sizeof (buf), &e)
        == 0)
        ck_assert (buf[0] == '/');
    else
        ck_assert_int_eq (errno, ENOENT);
}
END_TEST

static const struct norm_case {
    const char *in;
    const char *out; /* NULL: refused */
} norm_cases[] = {
    {"", ""},
    {"/", ""},
    {"//", ""},
    {"a", "a"},
    {"/a/b", "a/b"},
    {"a//b///c/", "a/b/c"},
    {"/system.slice/node1_slurmstepd.scope/job_12/step_0/user/task_3",
     "system.slice/node1_slurmstepd.scope/job_12/step_0/user/task_3"},
    {"..a/b..", "..a/b.."},
    {"user@1000.service", "user@1000.service"},
    {"..", NULL},
    {"/..", NULL},
    {"a/../b", NULL},
    {"a/./b", NULL},
    {".", NULL},
    {"a/..", NULL},
    {"a\nb", NULL},
    {"a\tb", NULL},
    {"a/b\x7f", NULL},
    {"1/2/3/4/5/6/7/8/9/10/11/12/13/14/15/16/17/18/19/20/21/22/23/24/25/"
     "26/27/28/29/30/31/32",
     "1/2/3/4/5/6/7/8/9/10/11/12/13/14/15/16/17/18/"
     "19/20/21/22/23/24/25/26/27/28/29/30/31/32"},
    {"1/2/3/4/5/6/7/8/9/10/11/12/13/14/15/16/17/18/19/20/21/22/23/24/25/"
     "26/27/28/29/30/31/32/33",
     NULL},
};

START_TEST (test_relpath)
{
    const struct norm_case *nc = &norm_cases[_i];
    char out[4096];
    pin_error_t e = {""};
    int rc = cg2_relpath_normalize (nc->in, out, sizeof (out), &e);

    if (nc->out) {
        ck_assert_msg (rc == 0, "'%s': %s", nc->in, e.text);
        ck_assert_str_eq (out, nc->out);
    } else {
        ck_assert_msg (rc < 0, "'%s' accepted as '%s'", nc->in, out);
        ck_assert (errno == EINVAL || errno == ENAMETOOLONG);
        ck_assert (e.text[0] != '\0');
    }
}
END_TEST

/* A path longer than the buffer is refused, not truncated. */
START_TEST (test_relpath_long)
{
    char out[16];
    pin_error_t e;
    ck_assert_int_eq (cg2_relpath_normalize ("abcdefg/hijklmn",
                                             out,
                                             sizeof (out),
                                             &e),
                      0);
    ck_assert_int_lt (cg2_relpath_normalize ("abcdefg/hijklmno",
                                             out,
                                             sizeof (out),
                                             &e),
                      0);
    ck_assert_int_eq (errno, ENAMETOOLONG);
}
END_TEST

/* ---- create
 * ------------------------------------------------------------------- */

START_TEST (test_create)
{
    pin_error_t e = {""};
    cg2_t *cg = open_seam ();

    tmptree_put ("a/cgroup.subtree_control", "");
    ck_assert_msg (cg2_create (cg, "/a/b", "+cpuset +cpu +rdma", &e) == 0,
                   "%s",
                   e.text);
    /* root and every ancestor, only controllers the root has */
    ck_assert_str_eq (tmptree_get ("cgroup.subtree_control"), "+cpuset +cpu");
    ck_assert_str_eq (tmptree_get ("a/cgroup.subtree_control"),
                      "+cpuset +cpu");
    ck_assert (tmptree_exists ("a/b"));
    /* the leaf stays a leaf */
    ck_assert (!tmptree_exists ("a/b/cgroup.subtree_control"));

    /* again: fine, and files that list them all are not rewritten */
    tmptree_put ("cgroup.subtree_control", "cpuset cpu memory\n");
    ck_assert_msg (cg2_create (cg, "a/b", "cpuset cpu", &e) == 0,
                   "%s",
                   e.text);
    ck_assert_str_eq (tmptree_get ("cgroup.subtree_control"),
                      "cpuset cpu memory\n");

    /* no controllers: mkdir -p only */
    ck_assert_msg (cg2_create (cg, "p/q/r", NULL, &e) == 0, "%s", e.text);
    ck_assert (tmptree_exists ("p/q/r"));
    ck_assert_str_eq (tmptree_get ("cgroup.subtree_control"),
                      "cpuset cpu memory\n");
    ck_assert (!tmptree_exists ("p/cgroup.subtree_control"));

    /* a root without the asked controllers: nothing to enable */
    ck_assert_msg (cg2_create (cg, "p/s", "+rdma +hugetlb", &e) == 0,
                   "%s",
                   e.text);
    ck_assert (tmptree_exists ("p/s"));

    ck_assert_int_lt (cg2_create (cg, "", "+cpuset", &e), 0);
    ck_assert_int_eq (errno, EINVAL);
    ck_assert_int_lt (cg2_create (cg, "/", "+cpuset", &e), 0);
    ck_assert_int_lt (cg2_create (cg, "a/../x", "+cpuset", &e), 0);
    ck_assert (!tmptree_exists ("x"));
    ck_assert_int_lt (cg2_create (cg, "y", "+CPU$", &e), 0);
    ck_assert_int_eq (errno, EINVAL);
    ck_assert_msg (strstr (e.text, "+CPU$") != NULL, "%s", e.text);
    ck_assert (!tmptree_exists ("y"));
    cg2_close (cg);
}
END_TEST

/* Top-down: the root's subtree_control is written before a's; a failure
 * at a stops there, and directories made by the call are removed. */
START_TEST (test_create_order)
{
    pin_error_t e = {""};
    cg2_t *cg = open_seam ();

    tmptree_mkdirs ("a/cgroup.subtree_control",
                    true); /* a directory: EISDIR */
    ck_assert_int_lt (cg2_create (cg, "a/b/c", "+cpuset", &e), 0);
    ck_assert_str_eq (tmptree_get ("cgroup.subtree_control"), "+cpuset");
    ck_assert_msg (strstr (e.text,
                           "a/cgroup.subtree_control: write "
                           "'+cpuset'")
                       != NULL,
                   "%s",
                   e.text);
    ck_assert (!tmptree_exists ("a/b"));

    /* x is made, x/cgroup.subtree_control does not exist (no O_CREAT):
     * the error names it and x is removed again */
    tmptree_put ("cgroup.subtree_control", "");
    ck_assert_int_lt (cg2_create (cg, "x/y/z", "+cpu", &e), 0);
    ck_assert_msg (strstr (e.text, "x/cgroup.subtree_control") != NULL,
                   "%s",
                   e.text);
    ck_assert_int_eq (errno, ENOENT);
    ck_assert (!tmptree_exists ("x"));
    ck_assert (!tmptree_exists ("x/cgroup.subtree_control"));
    cg2_close (cg);
}
END_TEST

/* Symlinks are never followed, in directories or files. */
START_TEST (test_no_symlinks)
{
    pin_error_t e = {""};
    char target[512], link[512];
    cg2_t *cg = open_seam ();
    char *s;

    tmptree_mkdirs ("outside", true);
    tmptree_put ("outside/cpuset.cpus", "0\n");
    tmptree_path (target, sizeof (target), "outside");
    tmptree_path (link, sizeof (link), "link");
    ck_assert_int_eq (symlink (target, link), 0);
    ck_assert_int_lt (cg2_create (cg, "link/x", NULL, &e), 0);
    ck_assert (!tmptree_exists ("outside/x"));
    ck_assert_int_lt (cg2_write (cg, "link", "cpuset.cpus", "5", &e), 0);
    ck_assert_str_eq (tmptree_get ("outside/cpuset.cpus"), "0\n");
    ck_assert_ptr_null (cg2_read (cg, "link", "cpuset.cpus", &e));

    tmptree_mkdirs ("d", true);
    tmptree_path (target, sizeof (target), "outside/cpuset.cpus");
    tmptree_path (link, sizeof (link), "d/cpuset.cpus");
    ck_assert_int_eq (symlink (target, link), 0);
    ck_assert_int_lt (cg2_write (cg, "d", "cpuset.cpus", "5", &e), 0);
    ck_assert_str_eq (tmptree_get ("outside/cpuset.cpus"), "0\n");
    s = cg2_read (cg, "d", "cpuset.cpus", &e);
    ck_assert_ptr_null (s);
    cg2_close (cg);
}
END_TEST

/* ---- write / read
 * ---------------------------------------------------------------- */

START_TEST (test_write_read)
{
    pin_error_t e = {""};
    cg2_t *cg = open_seam ();
    char *s;

    tmptree_put ("a/cpu.max", "max 100000\n");
    ck_assert_msg (cg2_write (cg, "a", "cpu.max", "50000 100000", &e) == 0,
                   "%s",
                   e.text);
    ck_assert_str_eq (tmptree_get ("a/cpu.max"), "50000 100000");
    s = cg2_read (cg, "/a/", "cpu.max", &e);
    ck_assert_ptr_nonnull (s);
    ck_assert_str_eq (s, "50000 100000");
    free (s);
    tmptree_put ("a/cpu.max", "max 100000\n");
    s = cg2_read (cg, "a", "cpu.max", &e);
    ck_assert_str_eq (s, "max 100000"); /* newline removed */
    free (s);
    s = cg2_read (cg, "", "cgroup.controllers", &e);
    ck_assert_str_eq (s, "cpuset cpu io memory pids");
    free (s);

    /* never creates a file */
    ck_assert_int_lt (cg2_write (cg, "a", "cpu.weight", "100", &e), 0);
    ck_assert_int_eq (errno, ENOENT);
    ck_assert (!tmptree_exists ("a/cpu.weight"));
    ck_assert_msg (strstr (e.text, "a/cpu.weight: write '100'") != NULL,
                   "%s",
                   e.text);
    ck_assert_int_lt (cg2_write (cg, "nope", "cpu.max", "1", &e), 0);
    ck_assert_int_eq (errno, ENOENT);

    /* file names are one safe component */
    ck_assert_int_lt (cg2_write (cg, "", "../cpu.max", "1", &e), 0);
    ck_assert_int_eq (errno, EINVAL);
    ck_assert_int_lt (cg2_write (cg, "", "a/cpu.max", "1", &e), 0);
    ck_assert_int_lt (cg2_write (cg, "", "", "1", &e), 0);
    ck_assert_int_lt (cg2_write (cg, "", "..", "1", &e), 0);
    ck_assert_ptr_null (cg2_read (cg, "", NULL, &e));
    ck_assert_int_lt (cg2_write (cg, "..", "cpu.max", "1", &e), 0);
    ck_assert_str_eq (tmptree_get ("a/cpu.max"), "max 100000\n");
    cg2_close (cg);
}
END_TEST

/* Reads are bounded: a file over 1 MiB is refused with EFBIG. */
START_TEST (test_read_bounded)
{
    pin_error_t e = {""};
    cg2_t *cg = open_seam ();
    size_t n = CG2_READ_MAX + 10;
    char *big = malloc (n + 1);
    char *s;

    ck_assert_ptr_nonnull (big);
    memset (big, '1', n);
    big[n] = '\0';
    tmptree_put ("cgroup.procs", big);
    ck_assert_ptr_null (cg2_read (cg, "", "cgroup.procs", &e));
    ck_assert_int_eq (errno, EFBIG);
    big[CG2_READ_MAX - 2] = '\0';
    tmptree_put ("cgroup.procs", big);
    s = cg2_read (cg, "", "cgroup.procs", &e);
    ck_assert_msg (s != NULL, "%s", e.text);
    ck_assert_uint_eq (strlen (s), CG2_READ_MAX - 2);
    free (s);
    free (big);
    cg2_close (cg);
}
END_TEST

/* ---- cpuset
 * --------------------------------------------------------------------- */

START_TEST (test_set_cpuset)
{
    pin_error_t e = {""};
    cg2_t *cg = open_seam ();
    hwloc_bitmap_t cpus = set_of ("2-3,8");
    hwloc_bitmap_t mems = set_of ("1");
    hwloc_bitmap_t empty = hwloc_bitmap_alloc ();

    tmptree_put ("s/cpuset.cpus", "");
    tmptree_put ("s/cpuset.mems", "");
    tmptree_put ("s/cpuset.cpus.effective", "2-3,8\n"); /* the kernel agrees */
    ck_assert_msg (cg2_set_cpuset (cg, "s", cpus, mems, &e) == 0,
                   "%s",
                   e.text);
    ck_assert_str_eq (tmptree_get ("s/cpuset.cpus"), "2-3,8");
    ck_assert_str_eq (tmptree_get ("s/cpuset.mems"), "1");

    /* mems NULL: left alone */
    tmptree_put ("s/cpuset.mems", "0\n");
    ck_assert_msg (cg2_set_cpuset (cg, "s", cpus, NULL, &e) == 0,
                   "%s",
                   e.text);
    ck_assert_str_eq (tmptree_get ("s/cpuset.mems"), "0\n");

    /* cpus NULL: only mems, no effective check */
    tmptree_put ("s/cpuset.cpus.effective", "0-15\n");
    ck_assert_msg (cg2_set_cpuset (cg, "s", NULL, mems, &e) == 0,
                   "%s",
                   e.text);
    ck_assert_str_eq (tmptree_get ("s/cpuset.mems"), "1");

    /* the kernel narrowed it (the parent lacks CPU 8): EIO, both sets */
    tmptree_put ("s/cpuset.cpus.effective", "2-3\n");
    ck_assert_int_lt (cg2_set_cpuset (cg, "s", cpus, mems, &e), 0);
    ck_assert_int_eq (errno, EIO);
    ck_assert_msg (strstr (e.text,
                           "cpuset.cpus.effective is '2-3' after "
                           "writing cpuset.cpus=2-3,8")
                       != NULL,
                   "%s",
                   e.text);

    /* no cpuset.cpus.effective: an error, not a silent pass */
    tmptree_put ("t/cpuset.cpus", "");
    tmptree_put ("t/cpuset.mems", "");
    ck_assert_int_lt (cg2_set_cpuset (cg, "t", cpus, mems, &e), 0);
    ck_assert_msg (strstr (e.text, "cpuset.cpus.effective") != NULL,
                   "%s",
                   e.text);

    ck_assert_int_lt (cg2_set_cpuset (cg, "s", empty, mems, &e), 0);
    ck_assert_int_eq (errno, EINVAL);
    ck_assert_int_lt (cg2_set_cpuset (cg, "s", cpus, empty, &e), 0);
    ck_assert_int_eq (errno, EINVAL);
    hwloc_bitmap_free (cpus);
    hwloc_bitmap_free (mems);
    hwloc_bitmap_free (empty);
    cg2_close (cg);
}
END_TEST

/* cpuset.cpus is written before cpuset.mems: when cpus cannot be
 * written, mems is untouched; when mems cannot be, cpus already is. */
START_TEST (test_set_cpuset_order)
{
    pin_error_t e = {""};
    cg2_t *cg = open_seam ();
    hwloc_bitmap_t cpus = set_of ("4-5");
    hwloc_bitmap_t mems = set_of ("0");

    tmptree_mkdirs ("u/cpuset.cpus", true); /* EISDIR */
    tmptree_put ("u/cpuset.mems", "old\n");
    ck_assert_int_lt (cg2_set_cpuset (cg, "u", cpus, mems, &e), 0);
    ck_assert_str_eq (tmptree_get ("u/cpuset.mems"), "old\n");
    ck_assert_msg (strstr (e.text, "u/cpuset.cpus: write '4-5'") != NULL,
                   "%s",
                   e.text);

    tmptree_put ("v/cpuset.cpus", "old\n");
    tmptree_mkdirs ("v/cpuset.mems", true); /* EISDIR */
    ck_assert_int_lt (cg2_set_cpuset (cg, "v", cpus, mems, &e), 0);
    ck_assert_str_eq (tmptree_get ("v/cpuset.cpus"), "4-5");
    ck_assert_msg (strstr (e.text, "v/cpuset.mems: write '0'") != NULL,
                   "%s",
                   e.text);
    hwloc_bitmap_free (cpus);
    hwloc_bitmap_free (mems);
    cg2_close (cg);
}
END_TEST

START_TEST (test_attach)
{
    pin_error_t e = {""};
    char want[32];
    cg2_t *cg = open_seam ();

    tmptree_put ("a/cgroup.procs", "");
    ck_assert_msg (cg2_attach (cg, "a", getpid (), &e) == 0, "%s", e.text);
    snprintf (want, sizeof (want), "%ld", (long)getpid ());
    ck_assert_str_eq (tmptree_get ("a/cgroup.procs"), want);
    ck_assert_int_lt (cg2_attach (cg, "a", 0, &e), 0);
    ck_assert_int_eq (errno, EINVAL);
    ck_assert_int_lt (cg2_attach (cg, "a", -5, &e), 0);
    ck_assert_int_lt (cg2_attach (cg, "b", getpid (), &e), 0);
    ck_assert_int_eq (errno, ENOENT);
    cg2_close (cg);
}
END_TEST

START_TEST (test_populated)
{
    cg2_t *cg = open_seam ();

    tmptree_put ("a/cgroup.events", "populated 1\nfrozen 0\n");
    tmptree_put ("b/cgroup.events", "populated 0\nfrozen 0\n");
    tmptree_put ("b/cgroup.procs", "123\n"); /* events win over procs */
    tmptree_put ("c/cgroup.procs", "");
    tmptree_put ("c/d/cgroup.procs", "");
    tmptree_put ("c/d/e/cgroup.procs", "4242\n"); /* no events: procs, deep */
    tmptree_put ("f/cgroup.procs", "\n");
    ck_assert (cg2_populated (cg, "a"));
    ck_assert (!cg2_populated (cg, "b"));
    ck_assert (cg2_populated (cg, "c"));
    ck_assert (cg2_populated (cg, "c/d"));
    ck_assert (!cg2_populated (cg, "f"));
    ck_assert (!cg2_populated (cg, "absent"));
    ck_assert (!cg2_populated (cg, ".."));
    ck_assert (!cg2_populated (NULL, "a"));
    cg2_close (cg);
}
END_TEST

/* ---- cpu.stat
 * ------------------------------------------------------------------- */

static const struct stat_case {
    const char *text;
    int rc;
    uint64_t usage, user, system, periods, throttled, throttled_usec;
} stat_cases[] = {
    /* a real 6.1 file with the cpu controller enabled */
    {"usage_usec 123\nuser_usec 100\nsystem_usec 23\nnr_periods 0\n"
     "nr_throttled 0\nthrottled_usec 0\nnr_bursts 0\nburst_usec 0\n",
     0,
     123,
     100,
     23,
     0,
     0,
     0},
    /* without the cpu controller: only the first three; 6.6+ adds more */
    {"usage_usec 9\nuser_usec 5\nsystem_usec 4\n", 0, 9, 5, 4, 0, 0, 0},
    {"usage_usec 18446744073709551615\nuser_usec 1\nsystem_usec 2\n"
     "nr_periods 7\nnr_throttled 3\nthrottled_usec 99\n"
     "core_sched.force_idle_usec 0\n",
     0,
     UINT64_MAX,
     1,
     2,
     7,
     3,
     99},
    {"usage_usec 1\nuser_usec 1\nsystem_usec 0", 0, 1, 1, 0, 0, 0, 0},
    {"user_usec 100\nsystem_usec 23\n", -1, 0, 0, 0, 0, 0, 0},
    {"usage_usec abc\n", -1, 0, 0, 0, 0, 0, 0},
    {"usage_usec -1\n", -1, 0, 0, 0, 0, 0, 0},
    {"usage_usec 18446744073709551616\n", -1, 0, 0, 0, 0, 0, 0},
    {"usage_usec 12 13\n", -1, 0, 0, 0, 0, 0, 0},
    {"usage_usec\n", -1, 0, 0, 0, 0, 0, 0},
    {"usage_usec 1\ngarbage\n", -1, 0, 0, 0, 0, 0, 0},
    {"", -1, 0, 0, 0, 0, 0, 0},
};

START_TEST (test_cpu_stat_parse)
{
    const struct stat_case *sc = &stat_cases[_i];
    struct cg2_cpu_stat st;
    pin_error_t e = {""};
    int rc;

    memset (&st, 0xff, sizeof (st));
    rc = cg2_parse_cpu_stat (sc->text, &st, &e);
    if (sc->rc < 0) {
        ck_assert_msg (rc < 0, "[%s] accepted", sc->text);
        ck_assert_int_eq (errno, EINVAL);
        ck_assert_msg (strncmp (e.text, "cpu.stat: ", 10) == 0, "%s", e.text);
        return;
    }
    ck_assert_msg (rc == 0, "[%s]: %s", sc->text, e.text);
    ck_assert_uint_eq (st.usage_usec, sc->usage);
    ck_assert_uint_eq (st.user_usec, sc->user);
    ck_assert_uint_eq (st.system_usec, sc->system);
    ck_assert_uint_eq (st.nr_periods, sc->periods);
    ck_assert_uint_eq (st.nr_throttled, sc->throttled);
    ck_assert_uint_eq (st.throttled_usec, sc->throttled_usec);
}
END_TEST

/* The bad line is quoted on one printable line: a control character in
 * the file (a CR, an escape) shows as '?'. */
START_TEST (test_cpu_stat_parse_message)
{
    struct cg2_cpu_stat st;
    pin_error_t e = {""};

    ck_assert_int_lt (cg2_parse_cpu_stat ("usage_usec 1\r\nuser_usec 2\r\n",
                                          &st,
                                          &e),
                      0);
    ck_assert_str_eq (e.text,
                      "cpu.stat: line 1 is not 'key value': "
                      "'usage_usec 1?'");
    ck_assert_int_lt (cg2_parse_cpu_stat ("usage_usec 1\nuser_usec 1\033[2J"
                                          "\n",
                                          &st,
                                          &e),
                      0);
    ck_assert_str_eq (e.text,
                      "cpu.stat: line 2 is not 'key value': "
                      "'user_usec 1?[2J'");
}
END_TEST

START_TEST (test_cpu_stat_read)
{
    struct cg2_cpu_stat st;
    pin_error_t e = {""};
    cg2_t *cg = open_seam ();

    tmptree_put ("job_1/step_0/cpu.stat",
                 "usage_usec 123\nuser_usec 100\n"
                 "system_usec 23\nnr_periods 0\nnr_throttled "
                 "0\nthrottled_usec 0\n");
    ck_assert_msg (cg2_read_cpu_stat (cg, "job_1/step_0", &st, &e) == 0,
                   "%s",
                   e.text);
    ck_assert_uint_eq (st.usage_usec, 123);
    ck_assert_uint_eq (st.user_usec, 100);
    ck_assert_uint_eq (st.system_usec, 23);
    tmptree_put ("job_1/step_1/cpu.stat", "usage_usec x\n");
    ck_assert_int_lt (cg2_read_cpu_stat (cg, "job_1/step_1", &st, &e), 0);
    ck_assert_msg (strstr (e.text, "job_1/step_1/cpu.stat: line 1") != NULL,
                   "%s",
                   e.text);
    ck_assert_int_lt (cg2_read_cpu_stat (cg, "job_1/step_9", &st, &e), 0);
    ck_assert_int_eq (errno, ENOENT);
    cg2_close (cg);
}
END_TEST

/* ---- remove
 * ------------------------------------------------------------------- */

START_TEST (test_remove_tree)
{
    pin_error_t e = {""};
    cg2_t *cg = open_seam ();

    tmptree_put ("base/job_1/cgroup.procs", "");
    tmptree_put ("base/job_1/step_0/cpuset.cpus", "0-1\n");
    tmptree_put ("base/job_1/step_0/task_0/cgroup.events", "populated 0\n");
    tmptree_put ("base/job_1/step_0/task_1/cgroup.procs", "");
    tmptree_put ("base/job_1/step_1/cpu.stat", "usage_usec 1\n");
    tmptree_mkdirs ("base/job_1/step_1/empty/deeper", true);
    tmptree_put ("base/job_2/cgroup.procs", "");
    ck_assert_msg (cg2_remove_tree (cg, "base/job_1", 0, &e) == 0,
                   "%s",
                   e.text);
    ck_assert (!tmptree_exists ("base/job_1"));
    ck_assert (tmptree_exists ("base/job_2/cgroup.procs")); /* sibling kept */
    ck_assert (tmptree_exists ("base"));

    /* absent: success */
    ck_assert_msg (cg2_remove_tree (cg, "base/job_1", 0, &e) == 0,
                   "%s",
                   e.text);
    ck_assert_int_eq (cg2_remove_tree (cg, "nothing/here", 0, &e), 0);

    /* only interface-like names are unlinked in the seam: another file
     * makes rmdir fail (ENOTEMPTY), reported, and it is kept */
    tmptree_put ("base/job_3/step_0/README", "keep me\n");
    tmptree_put ("base/job_3/step_0/cpuset.cpus", "1\n");
    ck_assert_int_lt (cg2_remove_tree (cg, "base/job_3", 0, &e), 0);
    ck_assert_int_eq (errno, ENOTEMPTY);
    ck_assert_msg (strstr (e.text, "base/job_3/step_0: rmdir") != NULL,
                   "%s",
                   e.text);
    ck_assert (tmptree_exists ("base/job_3/step_0/README"));

    /* never the root, never outside */
    ck_assert_int_lt (cg2_remove_tree (cg, "", 0, &e), 0);
    ck_assert_int_eq (errno, EINVAL);
    ck_assert_int_lt (cg2_remove_tree (cg, "/", 0, &e), 0);
    ck_assert_int_lt (cg2_remove_tree (cg, "base/..", 0, &e), 0);
    ck_assert (tmptree_exists ("cgroup.controllers"));
    cg2_close (cg);
}
END_TEST

/* cg2_remove_below: the children go, relpath itself stays. */
START_TEST (test_remove_below)
{
    pin_error_t e = {""};
    cg2_t *cg = open_seam ();

    tmptree_put ("base/job_1/cgroup.procs", "");
    tmptree_put ("base/job_1/step_0/task_0/cgroup.procs", "");
    tmptree_put ("base/job_1/step_1/cpu.stat", "usage_usec 1\n");
    ck_assert_msg (cg2_remove_below (cg, "base/job_1", 0, &e) == 0,
                   "%s",
                   e.text);
    ck_assert (tmptree_exists ("base/job_1"));
    ck_assert (!tmptree_exists ("base/job_1/step_0"));
    ck_assert (!tmptree_exists ("base/job_1/step_1"));
    /* nothing below, or nothing at all: success */
    ck_assert_msg (cg2_remove_below (cg, "base/job_1", 0, &e) == 0,
                   "%s",
                   e.text);
    ck_assert_int_eq (cg2_remove_below (cg, "nothing/here", 0, &e), 0);

    /* a child that cannot go is reported and kept, and so is relpath */
    tmptree_put ("base/job_3/step_0/README", "keep me\n");
    ck_assert_int_lt (cg2_remove_below (cg, "base/job_3", 0, &e), 0);
    ck_assert_int_eq (errno, ENOTEMPTY);
    ck_assert_msg (strstr (e.text, "base/job_3/step_0: rmdir") != NULL,
                   "%s",
                   e.text);
    ck_assert (tmptree_exists ("base/job_3/step_0/README"));

    ck_assert_int_lt (cg2_remove_below (cg, "", 0, &e), 0);
    ck_assert_int_eq (errno, EINVAL);
    ck_assert_int_lt (cg2_remove_below (cg, "base/..", 0, &e), 0);
    cg2_close (cg);
}
END_TEST

/* A symlink inside the tree is not followed: what it points to stays. */
START_TEST (test_remove_tree_symlink)
{
    pin_error_t e = {""};
    char target[512], link[512];
    cg2_t *cg = open_seam ();

    tmptree_put ("outside/cpuset.cpus", "0\n");
    tmptree_put ("t/step_0/cpuset.cpus", "0\n");
    tmptree_path (target, sizeof (target), "outside");
    tmptree_path (link, sizeof (link), "t/step_0/evil.link");
    ck_assert_int_eq (symlink (target, link), 0);
    (void)cg2_remove_tree (cg, "t", 0, &e);
    ck_assert (tmptree_exists ("outside/cpuset.cpus"));
    cg2_close (cg);
}
END_TEST

/* ---- busy
 * --------------------------------------------------------------------- */

static void busy_tree (void)
{
    /* Slurm-like: step_0 holds 0-7, its tasks were narrowed */
    tmptree_put ("job_1/step_0/cgroup.events", "populated 1\n");
    tmptree_put ("job_1/step_0/cpuset.cpus", "0-7\n");
    tmptree_put ("job_1/step_0/user/cgroup.events", "populated 1\n");
    tmptree_put ("job_1/step_0/user/task_0/cgroup.events", "populated 1\n");
    tmptree_put ("job_1/step_0/user/task_0/cpuset.cpus", "0-1\n");
    tmptree_put ("job_1/step_0/user/task_1/cgroup.events", "populated 1\n");
    tmptree_put ("job_1/step_0/user/task_1/cpuset.cpus", "2-3\n");
    tmptree_put ("job_1/step_0/user/task_2/cgroup.events", "populated 0\n");
    tmptree_put ("job_1/step_0/user/task_2/cpuset.cpus", "10\n");
    tmptree_put ("job_1/step_0/slurm/cgroup.events", "populated 1\n");
    tmptree_put ("job_1/step_0/slurm/cpuset.cpus", "\n");
    /* finished step: ignored */
    tmptree_put ("job_1/step_1/cgroup.events", "populated 0\n");
    tmptree_put ("job_1/step_1/cpuset.cpus", "4-5\n");
    /* running step without task dirs */
    tmptree_put ("job_1/step_2/cgroup.events", "populated 1\n");
    tmptree_put ("job_1/step_2/cpuset.cpus", "6\n");
    /* running, no cpuset of its own: holds nothing */
    tmptree_put ("job_1/step_3/cgroup.events", "populated 1\n");
    tmptree_put ("job_1/step_3/cpuset.cpus", "\n");
    /* the caller's own step */
    tmptree_put ("job_1/step_4/cgroup.events", "populated 1\n");
    tmptree_put ("job_1/step_4/cpuset.cpus", "8-9\n");
    tmptree_put ("job_1/step_4/task_0/cgroup.events", "populated 1\n");
    tmptree_put ("job_1/step_4/task_0/cpuset.cpus", "9\n");
    /* tasks without cpusets: the step's own set counts */
    tmptree_put ("job_1/step_5/cgroup.events", "populated 1\n");
    tmptree_put ("job_1/step_5/cpuset.cpus", "12-15\n");
    tmptree_put ("job_1/step_5/task_0/cgroup.events", "populated 1\n");
    tmptree_put ("job_1/step_5/task_0/cpuset.cpus", "\n");
    /* below a directory of another name */
    tmptree_put ("job_1/other/step_9/cgroup.events", "populated 1\n");
    tmptree_put ("job_1/other/step_9/cpuset.cpus", "20\n");
    /* a name that only starts like one */
    tmptree_put ("job_1/stepx/cgroup.events", "populated 1\n");
    tmptree_put ("job_1/stepx/cpuset.cpus", "30\n");
    /* no cgroup.events: not known to be populated */
    tmptree_put ("job_1/step_6/cpuset.cpus", "31\n");
}

START_TEST (test_busy_cpus)
{
    pin_error_t e = {""};
    cg2_t *cg = open_seam ();
    hwloc_bitmap_t busy = hwloc_bitmap_alloc ();

    busy_tree ();
    ck_assert_msg (cg2_busy_cpus (cg, "job_1", "job_1/step_4", busy, &e) == 0,
                   "%s",
                   e.text);
    assert_set (busy, "0-3,6,12-15,20");

    /* what was in busy stays; exclude given with a leading '/' */
    hwloc_bitmap_only (busy, 40);
    ck_assert_msg (cg2_busy_cpus (cg, "/job_1/", "/job_1/step_0", busy, &e)
                       == 0,
                   "%s",
                   e.text);
    assert_set (busy, "6,9,12-15,20,40");

    /* exclude a task dir only: its step still counts through task_0 */
    hwloc_bitmap_zero (busy);
    ck_assert_msg (cg2_busy_cpus (cg,
                                  "job_1",
                                  "job_1/step_0/user/task_1",
                                  busy,
                                  &e)
                       == 0,
                   "%s",
                   e.text);
    assert_set (busy, "0-1,6,9,12-15,20");

    /* from the root, no exclude */
    hwloc_bitmap_zero (busy);
    ck_assert_msg (cg2_busy_cpus (cg, "", NULL, busy, &e) == 0, "%s", e.text);
    assert_set (busy, "0-3,6,9,12-15,20");

    /* missing tree: nothing */
    hwloc_bitmap_zero (busy);
    ck_assert_int_eq (cg2_busy_cpus (cg, "job_7", NULL, busy, &e), 0);
    ck_assert (hwloc_bitmap_iszero (busy));

    /* malformed cpuset: an error naming it */
    tmptree_put ("job_1/step_2/cpuset.cpus", "6-x\n");
    ck_assert_int_lt (cg2_busy_cpus (cg, "job_1", NULL, busy, &e), 0);
    ck_assert_msg (strstr (e.text, "job_1/step_2/cpuset.cpus") != NULL,
                   "%s",
                   e.text);
    ck_assert_int_lt (cg2_busy_cpus (cg, "job_1", "..", busy, &e), 0);
    ck_assert_int_lt (cg2_busy_cpus (cg, "job_1", NULL, NULL, &e), 0);
    hwloc_bitmap_free (busy);
    cg2_close (cg);
}
END_TEST

/* ---- helpers
 * -------------------------------------------------------------------- */

static pid_t dead_pid (void)
{
    int status;
    pid_t pid = fork ();
    ck_assert_int_ge (pid, 0);
    if (pid == 0)
        _exit (0);
    ck_assert_int_eq (waitpid (pid, &status, 0), pid);
    ck_assert_int_eq (kill (pid, 0), -1); /* reaped: gone */
    return pid;
}

/* ---- no fd leaks
 * ------------------------------------------------------------------ */

static int count_fds (void)
{
    DIR *d = opendir ("/proc/self/fd");
    struct dirent *de;
    int n = 0;

    ck_assert_ptr_nonnull (d);
    while ((de = readdir (d)))
        n++;
    closedir (d);
    return n;
}

/* Every call, on success and on each kind of failure, closes what it
 * opened (the plugin lives in a long-running slurmstepd). */
START_TEST (test_no_fd_leak)
{
    pin_error_t e;
    struct cg2_cpu_stat st;
    char mi[512];
    hwloc_bitmap_t cpus = set_of ("2-3");
    hwloc_bitmap_t busy = hwloc_bitmap_alloc ();
    int before, round;

    busy_tree ();
    tmptree_put ("s/cpuset.cpus", "");
    tmptree_put ("s/cpuset.mems", "");
    tmptree_put ("s/cpuset.cpus.effective", "2\n");
    tmptree_put ("s/cgroup.procs", "");
    tmptree_put ("s/cpu.stat", "usage_usec 1\n");
    tmptree_put ("mountinfo", "1 1 0:1 / /x rw - cgroup2 cgroup2 rw\n");
    tmptree_path (mi, sizeof (mi), "mountinfo");
    before = count_fds ();
    for (round = 0; round < 3; round++) {
        cg2_t *cg = open_seam ();
        char *s;
        char buf[64];

        (void)cg2_create (cg, "n/m", "+cpuset", &e); /* fails */
        (void)cg2_create (cg, "p/q", NULL, &e);
        (void)cg2_write (cg, "s", "cgroup.procs", "1", &e);
        (void)cg2_write (cg, "s", "nofile.x", "1", &e);
        free (cg2_read (cg, "s", "cpu.stat", &e));
        free (cg2_read (cg, "nodir", "cpu.stat", &e));
        (void)cg2_set_cpuset (cg, "s", cpus, cpus, &e); /* EIO */
        (void)cg2_attach (cg, "s", getpid (), &e);
        (void)cg2_populated (cg, "job_1");
        (void)cg2_read_cpu_stat (cg, "s", &st, &e);
        (void)cg2_busy_cpus (cg, "job_1", NULL, busy, &e);
        (void)cg2_remove_tree (cg, "p", 0, &e);
        (void)cg2_remove_tree (cg, "absent", 0, &e);
        (void)cg2_mountinfo_find (mi, buf, sizeof (buf), &e);
        s = cg2_pid_path (getpid (), &e);
        free (s);
        (void)cg2_pid_path (dead_pid (), &e);
        cg2_close (cg);
        ck_assert_ptr_null (cg2_open ("/nonexistent-dir", &e));
    }
    ck_assert_int_eq (count_fds (), before);
    hwloc_bitmap_free (cpus);
    hwloc_bitmap_free (busy);
}
END_TEST

/* ---- the real kernel
 * ----------------------------------------------------------------- */

/* Burn about 50 ms of CPU, then wait to be killed. */
static void child_spin (void)
{
    struct timespec ts;
    do {
        clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
    } while (ts.tv_sec == 0 && ts.tv_nsec < 50 * 1000000L);
    for (;;)
        pause ();
}

START_TEST (test_real_kernel)
{
    pin_error_t e = {""};
    struct cg2_cpu_stat st;
    char top[64], leaf[80], want[96];
    char *path;
    cg2_t *cg;
    pid_t pid;
    int status, fd, pfd[2];

    cg = cg2_open ("auto", &e);
    ck_assert_msg (cg != NULL, "%s", e.text);
    ck_assert (cg2_is_cgroup2fs (cg));
    snprintf (top, sizeof (top), "slurm-pin-test.%ld", (long)getpid ());
    snprintf (leaf, sizeof (leaf), "%s/a", top);
    /* +cpuset only (skipped where the root lacks it): cpu.stat exists in
     * every v2 cgroup, and the host's root keeps its other settings */
    ck_assert_msg (cg2_create (cg, leaf, "+cpuset", &e) == 0, "%s", e.text);

    ck_assert_int_eq (pipe (pfd), 0);
    pid = fork ();
    ck_assert_int_ge (pid, 0);
    if (pid == 0) {
        char x;
        close (pfd[1]);
        if (read (pfd[0], &x, 1) != 1) /* wait until attached */
            _exit (1);
        child_spin ();
    }
    close (pfd[0]);
    ck_assert_msg (cg2_attach (cg, leaf, pid, &e) == 0, "%s", e.text);
    ck_assert_int_eq (write (pfd[1], "g", 1), 1);
    close (pfd[1]);

    path = cg2_pid_path (pid, &e);
    ck_assert_msg (path != NULL, "%s", e.text);
    snprintf (want, sizeof (want), "/%s", leaf);
    ck_assert_msg (strlen (path) >= strlen (want)
                       && strcmp (path + strlen (path) - strlen (want), want)
                              == 0,
                   "child is in %s, want ...%s",
                   path,
                   want);
    free (path);
    ck_assert (cg2_populated (cg, leaf));
    ck_assert (cg2_populated (cg, top));

    if (cg2_has_controller (cg, "cpuset")) {
        hwloc_bitmap_t cpu0 = set_of ("0");
        hwloc_bitmap_t mem0 = set_of ("0");
        ck_assert_msg (cg2_set_cpuset (cg, leaf, cpu0, mem0, &e) == 0,
                       "%s",
                       e.text);
        hwloc_bitmap_free (cpu0);
        hwloc_bitmap_free (mem0);
    } else
        fprintf (stderr,
                 "# real kernel: no cpuset controller at %s: "
                 "cpuset part not run\n",
                 cg2_root (cg));

    /* wait (bounded) for the child's 50 ms of CPU to show */
    for (int i = 0; i < 500; i++) {
        ck_assert_msg (cg2_read_cpu_stat (cg, leaf, &st, &e) == 0,
                       "%s",
                       e.text);
        if (st.usage_usec >= 40000)
            break;
        usleep (10000);
    }
    ck_assert_msg (st.usage_usec >= 40000,
                   "usage_usec %llu",
                   (unsigned long long)st.usage_usec);
    ck_assert (st.user_usec + st.system_usec <= st.usage_usec + 1000);

    kill (pid, SIGKILL);
    ck_assert_int_eq (waitpid (pid, &status, 0), pid);
    ck_assert_msg (cg2_remove_tree (cg, top, 5000, &e) == 0, "%s", e.text);
    fd = open (cg2_root (cg), O_RDONLY | O_DIRECTORY);
    ck_assert_int_ge (fd, 0);
    ck_assert_int_lt (faccessat (fd, top, F_OK, AT_SYMLINK_NOFOLLOW), 0);
    ck_assert_int_eq (errno, ENOENT);
    close (fd);
    cg2_close (cg);
}
END_TEST

/* Why the real-kernel case cannot run here, or NULL if it can. */
static const char *real_kernel_skip (void)
{
    static char why[256];
    cg2_t *cg;
    pin_error_t e = {""};

    if (geteuid () != 0)
        return "test_real_kernel: not root, real cgroup2 case not run";
    if (!(cg = cg2_open ("auto", &e))) {
        snprintf (why,
                  sizeof (why),
                  "test_real_kernel: no cgroup2 mount "
                  "(%s)",
                  e.text);
        return why;
    }
    if (!cg2_is_cgroup2fs (cg)) {
        snprintf (why,
                  sizeof (why),
                  "test_real_kernel: %s is not a "
                  "cgroup2 file system",
                  cg2_root (cg));
        cg2_close (cg);
        return why;
    }
    cg2_close (cg);
    return NULL;
}

static Suite *cg2_suite (const char **skips, int *nskips)
{
    Suite *s = suite_create ("cg2");
    TCase *tc = tcase_create ("seam");
    TCase *real = tcase_create ("kernel");
    const char *why;

    tcase_add_checked_fixture (tc, setup, teardown);
    tcase_add_test (tc, test_open);
    tcase_add_test (tc, test_mountinfo);
    tcase_add_loop_test (tc,
                         test_relpath,
                         0,
                         sizeof (norm_cases) / sizeof (norm_cases[0]));
    tcase_add_test (tc, test_relpath_long);
    tcase_add_test (tc, test_create);
    tcase_add_test (tc, test_create_order);
    tcase_add_test (tc, test_no_symlinks);
    tcase_add_test (tc, test_write_read);
    tcase_add_test (tc, test_read_bounded);
    tcase_add_test (tc, test_set_cpuset);
    tcase_add_test (tc, test_set_cpuset_order);
    tcase_add_test (tc, test_attach);
    tcase_add_test (tc, test_populated);
    tcase_add_loop_test (tc,
                         test_cpu_stat_parse,
                         0,
                         sizeof (stat_cases) / sizeof (stat_cases[0]));
    tcase_add_test (tc, test_cpu_stat_parse_message);
    tcase_add_test (tc, test_cpu_stat_read);
    tcase_add_test (tc, test_remove_tree);
    tcase_add_test (tc, test_remove_below);
    tcase_add_test (tc, test_remove_tree_symlink);
    tcase_add_test (tc, test_busy_cpus);
    tcase_add_test (tc, test_no_fd_leak);
    suite_add_tcase (s, tc);

    if ((why = real_kernel_skip ()))
        skips[(*nskips)++] = why;
    else {
        tcase_set_timeout (real, 30);
        tcase_add_test (real, test_real_kernel);
        suite_add_tcase (s, real);
    }
    return s;
}

int main (void)
{
    const char *skips[4];
    int nskips = 0;
    Suite *s = cg2_suite (skips, &nskips);

    return tap_run (s, skips, nskips);
}
