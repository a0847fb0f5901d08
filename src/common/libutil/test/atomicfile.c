/* test/atomicfile.c - write_file_atomic() */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libtest/tap.h"
#include "libutil/atomicfile.h"

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
              "%s/test_atomicfile.XXXXXX",
              getenv ("TMPDIR") ? getenv ("TMPDIR") : "/tmp");
    ck_assert_ptr_nonnull (mkdtemp (root));
}

static void teardown (void)
{
    nftw (root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The number of entries in the test directory (no temporary left). */
static int entries (void)
{
    DIR *d = opendir (root);
    struct dirent *e;
    int n = 0;

    ck_assert_ptr_nonnull (d);
    while ((e = readdir (d)))
        if (strcmp (e->d_name, ".") != 0 && strcmp (e->d_name, "..") != 0)
            n++;
    closedir (d);
    return n;
}

static void read_back (const char *path, char *buf, size_t size)
{
    FILE *f = fopen (path, "re");
    size_t n;

    ck_assert_ptr_nonnull (f);
    n = fread (buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose (f);
}

START_TEST (test_write_and_replace)
{
    char path[PATH_MAX];
    char buf[64];
    struct stat st;

    snprintf (path, sizeof (path), "%s/file", root);
    ck_assert_int_eq (write_file_atomic (path, "first\n", 6, 0644), 0);
    read_back (path, buf, sizeof (buf));
    ck_assert_str_eq (buf, "first\n");
    ck_assert_int_eq (stat (path, &st), 0);
    ck_assert_int_eq (st.st_mode & 07777, 0644);

    /* a shorter text replaces the whole file, with the mode asked for */
    ck_assert_int_eq (write_file_atomic (path, "2nd", 3, 0600), 0);
    read_back (path, buf, sizeof (buf));
    ck_assert_str_eq (buf, "2nd");
    ck_assert_int_eq (stat (path, &st), 0);
    ck_assert_int_eq (st.st_mode & 07777, 0600);
    ck_assert_int_eq (entries (), 1);

    /* an empty file */
    ck_assert_int_eq (write_file_atomic (path, "", 0, 0644), 0);
    ck_assert_int_eq (stat (path, &st), 0);
    ck_assert_int_eq (st.st_size, 0);
}
END_TEST

START_TEST (test_failure_leaves_nothing)
{
    char path[PATH_MAX];
    char buf[64];

    /* the rename fails (the target is a directory that is not empty):
     * the temporary file is gone and the target is as it was */
    snprintf (path, sizeof (path), "%s/dir", root);
    ck_assert_int_eq (mkdir (path, 0755), 0);
    snprintf (path, sizeof (path), "%s/dir/keep", root);
    ck_assert_int_eq (write_file_atomic (path, "kept", 4, 0644), 0);
    snprintf (path, sizeof (path), "%s/dir", root);
    errno = 0;
    ck_assert_int_eq (write_file_atomic (path, "x", 1, 0644), -1);
    ck_assert (errno == EISDIR || errno == ENOTEMPTY || errno == EEXIST);
    ck_assert_int_eq (entries (), 1);
    snprintf (path, sizeof (path), "%s/dir/keep", root);
    read_back (path, buf, sizeof (buf));
    ck_assert_str_eq (buf, "kept");

    /* the directory does not exist */
    snprintf (path, sizeof (path), "%s/missing/file", root);
    errno = 0;
    ck_assert_int_eq (write_file_atomic (path, "x", 1, 0644), -1);
    ck_assert_int_eq (errno, ENOENT);
    ck_assert_int_eq (entries (), 1);
}
END_TEST

START_TEST (test_bad_arguments)
{
    char path[PATH_MAX + 16];

    errno = 0;
    ck_assert_int_eq (write_file_atomic (NULL, "x", 1, 0644), -1);
    ck_assert_int_eq (errno, EINVAL);
    errno = 0;
    ck_assert_int_eq (write_file_atomic ("", "x", 1, 0644), -1);
    ck_assert_int_eq (errno, EINVAL);
    errno = 0;
    ck_assert_int_eq (write_file_atomic ("/tmp/x", NULL, 1, 0644), -1);
    ck_assert_int_eq (errno, EINVAL);

    /* no room for the temporary name's suffix */
    memset (path, 'a', sizeof (path) - 1);
    path[0] = '/';
    path[sizeof (path) - 1] = '\0';
    errno = 0;
    ck_assert_int_eq (write_file_atomic (path, "x", 1, 0644), -1);
    ck_assert_int_eq (errno, ENAMETOOLONG);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("atomicfile");
    TCase *tc = tcase_create ("atomicfile");

    tcase_add_checked_fixture (tc, setup, teardown);
    tcase_add_test (tc, test_write_and_replace);
    tcase_add_test (tc, test_failure_leaves_nothing);
    tcase_add_test (tc, test_bad_arguments);
    suite_add_tcase (s, tc);
    return tap_run (s, NULL, 0);
}
