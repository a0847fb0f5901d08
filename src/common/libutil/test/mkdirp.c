/* test/mkdirp.c - mkdir -p */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libtest/tap.h"
#include "libutil/mkdirp.h"

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

static void setup (void)
{
    snprintf (root,
              sizeof (root),
              "%s/test_mkdirp.XXXXXX",
              getenv ("TMPDIR") ? getenv ("TMPDIR") : "/tmp");
    ck_assert_ptr_nonnull (mkdtemp (root));
}

static void teardown (void)
{
    nftw (root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static mode_t mode_of (const char *rel)
{
    char path[512];
    struct stat st;

    snprintf (path, sizeof (path), "%s/%s", root, rel);
    ck_assert_msg (stat (path, &st) == 0, "%s: %s", path, strerror (errno));
    ck_assert (S_ISDIR (st.st_mode));
    return st.st_mode & 07777;
}

START_TEST (test_mkdir_p)
{
    char path[512];
    mode_t old = umask (022);
    FILE *f;

    snprintf (path, sizeof (path), "%s/a/b//c/", root);
    ck_assert_int_eq (mkdir_p (path, 0755, 0700, NULL), 0);
    ck_assert_uint_eq (mode_of ("a"), 0755);
    ck_assert_uint_eq (mode_of ("a/b"), 0755);
    ck_assert_uint_eq (mode_of ("a/b/c"), 0700);
    /* again: fine, modes kept */
    ck_assert_int_eq (mkdir_p (path, 0700, 0711, NULL), 0);
    ck_assert_uint_eq (mode_of ("a/b/c"), 0700);
    /* a file in the way */
    snprintf (path, sizeof (path), "%s/a/file", root);
    ck_assert_ptr_nonnull (f = fopen (path, "w"));
    fclose (f);
    ck_assert_int_eq (mkdir_p (path, 0755, 0700, NULL), -1);
    ck_assert_int_eq (errno, ENOTDIR);
    snprintf (path, sizeof (path), "%s/a/file/below", root);
    ck_assert_int_eq (mkdir_p (path, 0755, 0700, NULL), -1);
    ck_assert_int_eq (errno, ENOTDIR);
    ck_assert_int_eq (mkdir_p ("relative/dir", 0755, 0700, NULL), -1);
    ck_assert_int_eq (errno, EINVAL);
    ck_assert_int_eq (mkdir_p ("/", 0755, 0700, NULL), 0);
    umask (old);
}
END_TEST

static bool exists (const char *rel)
{
    char path[512];
    struct stat st;

    snprintf (path, sizeof (path), "%s/%s", root, rel);
    return lstat (path, &st) == 0;
}

/* A symlink on the way: refused, and nothing made where it points. */
START_TEST (test_symlink_not_followed)
{
    char path[512], target[512];
    pin_error_t err = {""};

    snprintf (target, sizeof (target), "%s/elsewhere", root);
    ck_assert_int_eq (mkdir (target, 0700), 0);
    snprintf (path, sizeof (path), "%s/link", root);
    ck_assert_int_eq (symlink (target, path), 0);
    snprintf (path, sizeof (path), "%s/link/state", root);
    ck_assert_int_eq (mkdir_p (path, 0755, 0700, &err), -1);
    ck_assert_int_eq (errno, ELOOP);
    ck_assert_msg (strstr (err.text, "/link: a symbolic link"),
                   "%s",
                   err.text);
    ck_assert (!exists ("elsewhere/state"));
    /* the last component a symlink too */
    snprintf (path, sizeof (path), "%s/link", root);
    ck_assert_int_eq (mkdir_p (path, 0755, 0700, &err), -1);
    ck_assert_int_eq (errno, ELOOP);
}
END_TEST

/* A group- or other-writable directory on the way is refused BEFORE
 * anything is made in it. */
START_TEST (test_checked_before_created)
{
    char path[512];
    pin_error_t err = {""};

    snprintf (path, sizeof (path), "%s/open", root);
    ck_assert_int_eq (mkdir (path, 0700), 0);
    ck_assert_int_eq (chmod (path, 0777), 0);
    snprintf (path, sizeof (path), "%s/open/state/claims", root);
    ck_assert_int_eq (mkdir_p (path, 0755, 0700, &err), -1);
    ck_assert_int_eq (errno, EPERM);
    ck_assert_msg (strstr (err.text, "/open: writable by group or others"),
                   "%s",
                   err.text);
    ck_assert (!exists ("open/state"));
    /* sticky but not root's: the same */
    snprintf (path, sizeof (path), "%s/open", root);
    ck_assert_int_eq (chmod (path, 01777), 0);
    snprintf (path, sizeof (path), "%s/open/state", root);
    if (geteuid () != 0) {
        ck_assert_int_eq (mkdir_p (path, 0755, 0700, &err), -1);
        ck_assert_int_eq (errno, EPERM);
        ck_assert (!exists ("open/state"));
    } else {
        /* root's and sticky (/tmp): accepted above the last component,
         * never as the last */
        ck_assert_int_eq (mkdir_p (path, 0755, 0700, &err), 0);
        snprintf (path, sizeof (path), "%s/open", root);
        ck_assert_int_eq (mkdir_p (path, 0755, 0700, &err), -1);
        ck_assert_int_eq (errno, EPERM);
    }
}
END_TEST

/* A sticky root directory (/tmp) with a directory of another user in it:
 * refused, and nothing made below it (needs root: chown). */
START_TEST (test_other_users_dir)
{
    char path[512];
    pin_error_t err = {""};

    if (geteuid () != 0)
        return;
    snprintf (path, sizeof (path), "%s/tmp", root);
    ck_assert_int_eq (mkdir (path, 0700), 0);
    ck_assert_int_eq (chmod (path, 01777), 0);
    snprintf (path, sizeof (path), "%s/tmp/victim", root);
    ck_assert_int_eq (mkdir (path, 0755), 0);
    ck_assert_int_eq (chown (path, 65534, 65534), 0);
    snprintf (path, sizeof (path), "%s/tmp/victim/state", root);
    ck_assert_int_eq (mkdir_p (path, 0755, 0700, &err), -1);
    ck_assert_int_eq (errno, EPERM);
    ck_assert_msg (strstr (err.text, "/tmp/victim: owned by uid 65534"),
                   "%s",
                   err.text);
    ck_assert (!exists ("tmp/victim/state"));
    /* a symlink of that user's in the sticky directory */
    snprintf (path, sizeof (path), "%s/tmp/victim", root);
    ck_assert_int_eq (rmdir (path), 0);
    ck_assert_int_eq (symlink ("/nonexistent-pin-victim", path), 0);
    ck_assert_int_eq (lchown (path, 65534, 65534), 0);
    snprintf (path, sizeof (path), "%s/tmp/victim/state", root);
    ck_assert_int_eq (mkdir_p (path, 0755, 0700, &err), -1);
    ck_assert_int_eq (errno, ELOOP);
    ck_assert (access ("/nonexistent-pin-victim", F_OK) < 0);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("mkdirp");
    TCase *tc = tcase_create ("mkdirp");

    tcase_add_checked_fixture (tc, setup, teardown);
    tcase_add_test (tc, test_mkdir_p);
    tcase_add_test (tc, test_symlink_not_followed);
    tcase_add_test (tc, test_checked_before_created);
    tcase_add_test (tc, test_other_users_dir);
    suite_add_tcase (s, tc);
    return tap_run (s, NULL, 0);
}
