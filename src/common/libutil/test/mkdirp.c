/* test/mkdirp.c - mkdir -p */
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

#include "libutil/mkdirp.h"
#include "libtest/tap.h"

static char root[256];

static int rm_one (const char *path, const struct stat *st, int flag,
                   struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove (path);
}

static void setup (void)
{
    snprintf (root, sizeof (root), "%s/test_mkdirp.XXXXXX",
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
    ck_assert_int_eq (mkdir_p (path, 0755, 0700), 0);
    ck_assert_uint_eq (mode_of ("a"), 0755);
    ck_assert_uint_eq (mode_of ("a/b"), 0755);
    ck_assert_uint_eq (mode_of ("a/b/c"), 0700);
    /* again: fine, modes kept */
    ck_assert_int_eq (mkdir_p (path, 0700, 0711), 0);
    ck_assert_uint_eq (mode_of ("a/b/c"), 0700);
    /* a file in the way */
    snprintf (path, sizeof (path), "%s/a/file", root);
    ck_assert_ptr_nonnull (f = fopen (path, "w"));
    fclose (f);
    ck_assert_int_eq (mkdir_p (path, 0755, 0700), -1);
    ck_assert_int_eq (errno, ENOTDIR);
    snprintf (path, sizeof (path), "%s/a/file/below", root);
    ck_assert_int_eq (mkdir_p (path, 0755, 0700), -1);
    ck_assert_int_eq (errno, ENOTDIR);
    ck_assert_int_eq (mkdir_p ("relative/dir", 0755, 0700), -1);
    ck_assert_int_eq (errno, EINVAL);
    ck_assert_int_eq (mkdir_p ("/", 0755, 0700), 0);
    umask (old);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("mkdirp");
    TCase *tc = tcase_create ("mkdirp");

    tcase_add_checked_fixture (tc, setup, teardown);
    tcase_add_test (tc, test_mkdir_p);
    suite_add_tcase (s, tc);
    return tap_run (s, NULL, 0);
}
