/* test/safefile.c - may root trust this path?
 *
 * Runs in a private temporary directory (mkdtemp, mode 0700, below
 * TMPDIR or /tmp: a sticky root directory is a safe ancestor).  The
 * case with a file owned by another uid needs root (chown).
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libtest/tap.h"
#include "libutil/safefile.h"

static char root[256];

static int rm_one (const char *path,
                   const struct stat *st,
                   int flag,
                   struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove (path) < 0 && errno != ENOENT ? -1 : 0;
}

static void setup (void)
{
    snprintf (root,
              sizeof (root),
              "%s/test_safefile.XXXXXX",
              getenv ("TMPDIR") ? getenv ("TMPDIR") : "/tmp");
    ck_assert_ptr_nonnull (mkdtemp (root));
}

static void teardown (void)
{
    nftw (root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static const char *at (const char *rel)
{
    static char buf[4][512];
    static int i;
    i = (i + 1) % 4;
    snprintf (buf[i], sizeof (buf[i]), "%s%s%s", root, *rel ? "/" : "", rel);
    return buf[i];
}

static void make_dir (const char *rel, mode_t mode)
{
    ck_assert_int_eq (mkdir (at (rel), mode), 0);
    ck_assert_int_eq (chmod (at (rel), mode), 0); /* past the umask */
}

static void make_file (const char *rel, mode_t mode)
{
    FILE *f = fopen (at (rel), "w");
    ck_assert_ptr_nonnull (f);
    ck_assert_int_eq (fclose (f), 0);
    ck_assert_int_eq (chmod (at (rel), mode), 0);
}

/* rc 0, or -1 with errno and a message containing `text` */
static void expect (const char *path, uid_t owner, int err, const char *text)
{
    pin_error_t e = {""};
    int rc;

    errno = 0;
    rc = safefile_check (path, owner, &e);
    if (err == 0) {
        ck_assert_msg (rc == 0, "%s: %s", path, e.text);
        return;
    }
    ck_assert_msg (rc == -1, "%s: passed, want errno %d", path, err);
    ck_assert_msg (errno == err,
                   "%s: errno %d (%s), want %d",
                   path,
                   errno,
                   e.text,
                   err);
    ck_assert_msg (strstr (e.text, text) != NULL,
                   "'%s' lacks '%s'",
                   e.text,
                   text);
}

START_TEST (test_safe)
{
    make_dir ("state", 0700);
    make_file ("state/lock", 0600);
    make_dir ("cache", 0755);
    make_file ("cache/topology.xml", 0644);
    expect (at (""), geteuid (), 0, NULL);
    expect (at ("state"), geteuid (), 0, NULL);
    expect (at ("state/lock"), geteuid (), 0, NULL);
    expect (at ("cache/topology.xml"), geteuid (), 0, NULL);
    expect ("/", geteuid (), 0, NULL);
}
END_TEST

START_TEST (test_writable)
{
    char want[600];

    make_dir ("open", 0777);
    make_file ("open/lock", 0600);
    snprintf (want,
              sizeof (want),
              "%s: writable by group or others (mode "
              "0777)",
              at ("open"));
    expect (at ("open"), geteuid (), EPERM, want);
    /* a file below a 0777 directory: anyone may replace it */
    expect (at ("open/lock"), geteuid (), EPERM, want);
    make_dir ("group", 0770);
    expect (at ("group"), geteuid (), EPERM, "(mode 0770)");
    make_dir ("safe", 0700);
    make_file ("safe/shared", 0666);
    expect (at ("safe/shared"), geteuid (), EPERM, "(mode 0666)");
}
END_TEST

/* A sticky directory of root's is a safe ancestor, never a safe target */
START_TEST (test_sticky)
{
    make_dir ("tmp", 01777);
    make_dir ("tmp/mine", 0700);
    expect (at ("tmp/mine"), geteuid (), 0, NULL);
    expect (at ("tmp"), geteuid (), EPERM, "(mode 1777)");
}
END_TEST

START_TEST (test_symlink)
{
    char want[600];

    make_dir ("real", 0700);
    make_file ("real/lock", 0600);
    ck_assert_int_eq (symlink (at ("real"), at ("link")), 0);
    snprintf (want, sizeof (want), "%s: a symbolic link", at ("link"));
    expect (at ("link"), geteuid (), ELOOP, want);
    /* in the middle of the path too */
    expect (at ("link/lock"), geteuid (), ELOOP, want);
    ck_assert_int_eq (symlink (at ("real/lock"), at ("real/lock2")), 0);
    expect (at ("real/lock2"), geteuid (), ELOOP, "a symbolic link");
}
END_TEST

START_TEST (test_bad_paths)
{
    make_file ("file", 0600);
    expect (at ("missing"), geteuid (), ENOENT, "No such file");
    expect (at ("missing/below"), geteuid (), ENOENT, "missing");
    expect (at ("file/below"), geteuid (), ENOTDIR, "not a directory");
    expect ("relative/path", geteuid (), EINVAL, "not an absolute path");
    expect (at ("../etc"), geteuid (), EINVAL, "'..'");
    expect (at ("a\nb"), geteuid (), EINVAL, "control character");
    expect (NULL, geteuid (), EINVAL, "not an absolute path");
}
END_TEST

/* As root: a file or directory owned by another uid is refused, unless
 * that uid is the one asked for. */
START_TEST (test_foreign_owner)
{
    make_dir ("theirs", 0700);
    make_file ("theirs/lock", 0600);
    make_dir ("mine", 0700);
    make_file ("mine/lock", 0600);
    ck_assert_int_eq (chown (at ("theirs"), 65534, 65534), 0);
    ck_assert_int_eq (chown (at ("mine/lock"), 65534, 65534), 0);
    expect (at ("theirs"), 0, EPERM, "owned by uid 65534, not uid 0");
    expect (at ("theirs/lock"), 0, EPERM, "owned by uid 65534");
    expect (at ("mine/lock"), 0, EPERM, "owned by uid 65534, not uid 0");
    expect (at ("mine/lock"), 1000, EPERM, "not uid 0 or 1000");
    expect (at ("mine/lock"), 65534, 0, NULL);
}
END_TEST

/* safefile_check_follow: links in safe places are followed, and their
 * targets checked; the lstat of the end is what was reached. */
START_TEST (test_follow)
{
    pin_error_t e = {""};
    struct stat st, want;

    make_dir ("etc", 0755);
    make_dir ("shared", 0755);
    make_dir ("shared/conf", 0755);
    make_file ("shared/conf/pin.conf", 0644);
    ck_assert_int_eq (stat (at ("shared/conf/pin.conf"), &want), 0);
    /* an absolute link, a relative one with "..", a link to a dir */
    ck_assert_int_eq (symlink (at ("shared/conf/pin.conf"),
                               at ("etc/abs.conf")),
                      0);
    ck_assert_int_eq (symlink ("../shared/conf/pin.conf", at ("etc/rel.conf")),
                      0);
    ck_assert_int_eq (symlink ("../shared/conf", at ("etc/slurm")), 0);
    ck_assert_int_eq (safefile_check (at ("etc/abs.conf"), geteuid (), &e),
                      -1);
    ck_assert_int_eq (errno, ELOOP);
    ck_assert_msg (safefile_check_follow (at ("etc/abs.conf"),
                                          geteuid (),
                                          &st,
                                          &e)
                       == 0,
                   "%s",
                   e.text);
    ck_assert (st.st_ino == want.st_ino && st.st_dev == want.st_dev);
    ck_assert_msg (safefile_check_follow (at ("etc/rel.conf"),
                                          geteuid (),
                                          &st,
                                          &e)
                       == 0,
                   "%s",
                   e.text);
    ck_assert (st.st_ino == want.st_ino);
    ck_assert_msg (safefile_check_follow (at ("etc/slurm/pin.conf"),
                                          geteuid (),
                                          &st,
                                          &e)
                       == 0,
                   "%s",
                   e.text);
    ck_assert (st.st_ino == want.st_ino);
    /* the target's directory writable by others: refused */
    ck_assert_int_eq (chmod (at ("shared/conf"), 0777), 0);
    ck_assert_int_eq (safefile_check_follow (at ("etc/rel.conf"),
                                             geteuid (),
                                             &st,
                                             &e),
                      -1);
    ck_assert_int_eq (errno, EPERM);
    ck_assert_msg (strstr (e.text,
                           "shared/conf: writable by group or "
                           "others"),
                   "%s",
                   e.text);
    ck_assert_int_eq (chmod (at ("shared/conf"), 0755), 0);
    /* a loop */
    ck_assert_int_eq (symlink ("loop", at ("etc/loop")), 0);
    ck_assert_int_eq (safefile_check_follow (at ("etc/loop"),
                                             geteuid (),
                                             &st,
                                             &e),
                      -1);
    ck_assert_int_eq (errno, ELOOP);
    /* a link owned by another user (root only: lchown) */
    if (geteuid () == 0) {
        ck_assert_int_eq (lchown (at ("etc/rel.conf"), 65534, 65534), 0);
        ck_assert_int_eq (safefile_check_follow (at ("etc/rel.conf"),
                                                 0,
                                                 &st,
                                                 &e),
                          -1);
        ck_assert_int_eq (errno, EPERM);
        ck_assert_msg (strstr (e.text, "a symbolic link owned by uid 65534"),
                       "%s",
                       e.text);
    }
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("safefile");
    TCase *tc = tcase_create ("safefile");
    const char *skips[1];
    int nskips = 0;

    tcase_add_checked_fixture (tc, setup, teardown);
    tcase_add_test (tc, test_safe);
    tcase_add_test (tc, test_writable);
    tcase_add_test (tc, test_sticky);
    tcase_add_test (tc, test_symlink);
    tcase_add_test (tc, test_bad_paths);
    tcase_add_test (tc, test_follow);
    if (geteuid () == 0)
        tcase_add_test (tc, test_foreign_owner);
    else
        skips[nskips++] = "test_foreign_owner: not root, cannot chown";
    suite_add_tcase (s, tc);
    return tap_run (s, skips, nskips);
}
