/* test/safeio.c - readers that never block, writers that never write
 * through another user's symbolic link */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libtest/tap.h"
#include "libutil/safeio.h"

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
              "%s/test_safeio.XXXXXX",
              getenv ("TMPDIR") ? getenv ("TMPDIR") : "/tmp");
    ck_assert_ptr_nonnull (mkdtemp (root));
    ck_assert_int_eq (chmod (root, 0755), 0);
}

static void teardown (void)
{
    nftw (root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static const char *at (const char *rel)
{
    static char buf[4][PATH_MAX];
    static int n;
    char *p = buf[n++ % 4];

    snprintf (p, PATH_MAX, "%s/%s", root, rel);
    return p;
}

static void put (const char *rel, const char *text)
{
    FILE *f = fopen (at (rel), "w");

    ck_assert_ptr_nonnull (f);
    fputs (text, f);
    fclose (f);
}

static char *get (const char *rel)
{
    static char buf[256];
    FILE *f = fopen (at (rel), "r");
    size_t n;

    if (!f)
        return NULL;
    n = fread (buf, 1, sizeof (buf) - 1, f);
    buf[n] = '\0';
    fclose (f);
    return buf;
}

/* A FIFO, a directory, a device: refused at once, named. */
START_TEST (test_read_not_regular)
{
    pin_error_t e = {""};
    FILE *f;
    int fd;

    alarm (10); /* a blocking open fails the case instead of hanging */
    put ("ok.jsonl", "x\n");
    ck_assert_int_ge (fd = safein_open (at ("ok.jsonl"), O_NOFOLLOW, &e), 0);
    ck_assert_int_eq (fcntl (fd, F_GETFL) & O_NONBLOCK, 0);
    close (fd);
    ck_assert_int_eq (mkfifo (at ("p.jsonl"), 0644), 0);
    ck_assert_int_eq (safein_open (at ("p.jsonl"), 0, &e), -1);
    ck_assert_int_eq (errno, EINVAL);
    ck_assert_str_eq (strstr (e.text, "/p.jsonl"),
                      "/p.jsonl: a FIFO, not a regular file");
    ck_assert_ptr_null (f = safein_fopen (at ("p.jsonl"), &e));
    ck_assert_ptr_nonnull (strstr (e.text, "a FIFO, not a regular file"));
    ck_assert_ptr_null (safein_fopen (root, &e));
    ck_assert_ptr_nonnull (strstr (e.text, ": a directory, not a regular"));
    ck_assert_ptr_null (safein_fopen ("/dev/zero", &e));
    ck_assert_str_eq (e.text,
                      "/dev/zero: a character device, not a regular file");
    ck_assert_ptr_null (safein_fopen (at ("none"), &e));
    ck_assert_int_eq (errno, ENOENT);
    ck_assert_ptr_nonnull (strstr (e.text, "/none: cannot open: No such"));
    ck_assert_ptr_nonnull (f = safein_fopen (at ("ok.jsonl"), &e));
    fclose (f);
    alarm (0);
}
END_TEST

/* Without links: O_EXCL, --force's rename, a new inode. */
START_TEST (test_write_plain)
{
    pin_error_t e = {""};
    struct stat a, b;
    char cwd[PATH_MAX];
    int fd, old;

    ck_assert_int_eq (safeout_write_file (at ("out.png"), "one", 3, false, &e),
                      0);
    ck_assert_str_eq (get ("out.png"), "one");
    ck_assert_int_eq (safeout_write_file (at ("out.png"), "two", 3, false, &e),
                      -1);
    ck_assert_int_eq (errno, EEXIST);
    ck_assert_int_eq (safeout_write_file (at ("out.png"), "two", 3, true, &e),
                      0);
    ck_assert_str_eq (get ("out.png"), "two");
    /* a link at the last component is replaced, its target untouched */
    put ("target", "keep");
    ck_assert_int_eq (symlink (at ("target"), at ("ln.png")), 0);
    ck_assert_int_eq (safeout_write_file (at ("ln.png"), "x", 1, false, &e),
                      -1);
    ck_assert_int_eq (errno, EEXIST);
    ck_assert_int_eq (safeout_write_file (at ("ln.png"), "x", 1, true, &e), 0);
    ck_assert_str_eq (get ("target"), "keep");
    ck_assert_str_eq (get ("ln.png"), "x");
    /* a new inode every time (the old one kept open, so that its number
     * is not reused at once) */
    ck_assert_int_ge (old = open (at ("out.png"), O_RDONLY), 0);
    ck_assert_int_eq (fstat (old, &a), 0);
    ck_assert_int_ge (fd = safeout_create (at ("out.png"),
                                           SAFEOUT_NEW_INODE,
                                           0600,
                                           &e),
                      0);
    close (fd);
    ck_assert_int_eq (stat (at ("out.png"), &b), 0);
    close (old);
    ck_assert (a.st_ino != b.st_ino);
    ck_assert_uint_eq (b.st_mode & 0077, 0);
    ck_assert_int_eq (safeout_create (at ("out.png"), SAFEOUT_EXCL, 0600, &e),
                      -1);
    ck_assert_int_eq (errno, EEXIST);
    ck_assert_int_eq (safeout_unlink (at ("out.png"), &e), 0);
    ck_assert_int_eq (access (at ("out.png"), F_OK), -1);
    /* appending: created if missing, a FIFO or a link refused at once */
    ck_assert_int_ge (fd = safeout_create (at ("log"),
                                           SAFEOUT_APPEND,
                                           0600,
                                           &e),
                      0);
    ck_assert_int_eq (write (fd, "a\n", 2), 2);
    close (fd);
    ck_assert_int_ge (fd = safeout_create (at ("log"),
                                           SAFEOUT_APPEND,
                                           0600,
                                           &e),
                      0);
    ck_assert_int_eq (write (fd, "b\n", 2), 2);
    ck_assert_int_eq (fcntl (fd, F_GETFL) & O_NONBLOCK, 0);
    close (fd);
    ck_assert_str_eq (get ("log"), "a\nb\n");
    ck_assert_int_eq (mkfifo (at ("fifo"), 0600), 0);
    alarm (10);
    ck_assert_int_eq (safeout_create (at ("fifo"), SAFEOUT_APPEND, 0600, &e),
                      -1);
    /* with a reader, so that the open itself succeeds */
    ck_assert_int_ge (old = open (at ("fifo"), O_RDONLY | O_NONBLOCK), 0);
    ck_assert_int_eq (safeout_create (at ("fifo"), SAFEOUT_APPEND, 0600, &e),
                      -1);
    ck_assert_int_eq (errno, EINVAL);
    close (old);
    ck_assert_ptr_nonnull (strstr (e.text,
                                   "/fifo: a FIFO, not a regular "
                                   "file"));
    alarm (0);
    ck_assert_int_eq (symlink (at ("target"), at ("ln2")), 0);
    ck_assert_int_eq (safeout_create (at ("ln2"), SAFEOUT_APPEND, 0600, &e),
                      -1);
    ck_assert_int_eq (errno, ELOOP);
    /* no file name; a file on the way */
    ck_assert_int_eq (safeout_create (at ("d/"), SAFEOUT_EXCL, 0600, &e), -1);
    ck_assert_int_eq (errno, EISDIR);
    ck_assert_int_eq (safeout_create (at ("target/x"), SAFEOUT_EXCL, 0600, &e),
                      -1);
    ck_assert_int_eq (errno, ENOTDIR);
    /* relative, from the current directory, '..' included */
    ck_assert_ptr_nonnull (getcwd (cwd, sizeof (cwd)));
    ck_assert_int_eq (mkdir (at ("sub"), 0755), 0);
    ck_assert_int_eq (chdir (at ("sub")), 0);
    ck_assert_int_eq (safeout_write_file ("../rel.png", "r", 1, false, &e), 0);
    ck_assert_int_eq (safeout_write_file ("here.png", "h", 1, false, &e), 0);
    ck_assert_int_eq (chdir (cwd), 0);
    ck_assert_str_eq (get ("rel.png"), "r");
    ck_assert_str_eq (get ("sub/here.png"), "h");
}
END_TEST

/* The caller's own links (and root's) are followed, relative or not. */
START_TEST (test_own_links)
{
    pin_error_t e = {""};

    ck_assert_int_eq (mkdir (at ("real"), 0755), 0);
    ck_assert_int_eq (mkdir (at ("real/deep"), 0755), 0);
    ck_assert_int_eq (symlink (at ("real"), at ("abs")), 0);
    ck_assert_int_eq (symlink ("real/deep", at ("rel")), 0);
    ck_assert_int_eq (symlink ("../rel", at ("real/up")), 0);
    ck_assert_int_eq (safeout_write_file (at ("abs/a.png"), "a", 1, false, &e),
                      0);
    ck_assert_str_eq (get ("real/a.png"), "a");
    ck_assert_int_eq (safeout_write_file (at ("rel/b.png"), "b", 1, true, &e),
                      0);
    ck_assert_str_eq (get ("real/deep/b.png"), "b");
    ck_assert_int_eq (safeout_write_file (at ("abs/up/c.png"),
                                          "c",
                                          1,
                                          false,
                                          &e),
                      0);
    ck_assert_str_eq (get ("real/deep/c.png"), "c");
    /* a loop */
    ck_assert_int_eq (symlink ("loop", at ("loop")), 0);
    ck_assert_int_eq (safeout_write_file (at ("loop/x"), "x", 1, false, &e),
                      -1);
    ck_assert_int_eq (errno, ELOOP);
    /* a dangling link */
    ck_assert_int_eq (symlink ("nowhere", at ("dangle")), 0);
    ck_assert_int_eq (safeout_write_file (at ("dangle/x"), "x", 1, false, &e),
                      -1);
    ck_assert_int_eq (errno, ENOENT);
    /* even one's own link is not followed in a directory others can
     * write (not sticky): anyone could have put it there */
    ck_assert_int_eq (mkdir (at ("open"), 0777), 0);
    ck_assert_int_eq (chmod (at ("open"), 0777), 0);
    ck_assert_int_eq (symlink (at ("real"), at ("open/ln")), 0);
    ck_assert_int_eq (safeout_write_file (at ("open/ln/d.png"),
                                          "d",
                                          1,
                                          false,
                                          &e),
                      -1);
    ck_assert_int_eq (errno, EPERM);
    ck_assert_ptr_nonnull (strstr (e.text,
                                   "/open/ln: a symbolic link in a "
                                   "directory that group or others can "
                                   "write"));
    ck_assert_ptr_null (get ("real/d.png"));
    /* but files in it are fine (no link followed) */
    ck_assert_int_eq (safeout_write_file (at ("open/e.png"),
                                          "e",
                                          1,
                                          false,
                                          &e),
                      0);
}
END_TEST

/* R4: a user's link in the user's directory, to a root-only directory:
 * root does not write there.  To that user's own directory: it does. */
START_TEST (test_other_users_link)
{
    pin_error_t e = {""};
    int fd;

    if (geteuid () != 0)
        return;
    ck_assert_int_eq (mkdir (at ("rootonly"), 0700), 0);
    put ("rootonly/rec.jsonl", "data");
    ck_assert_int_eq (mkdir (at ("out"), 0755), 0);
    ck_assert_int_eq (chown (at ("out"), 65534, 65534), 0);
    ck_assert_int_eq (symlink (at ("rootonly"), at ("out/work")), 0);
    ck_assert_int_eq (lchown (at ("out/work"), 65534, 65534), 0);
    ck_assert_int_eq (safeout_create (at ("out/work/rec.jsonl"),
                                      SAFEOUT_NEW_INODE,
                                      0600,
                                      &e),
                      -1);
    ck_assert_int_eq (errno, EPERM);
    ck_assert_msg (strstr (e.text, "/out/work is uid 65534's and leads to ")
                       && strstr (e.text, "/rootonly, a directory of uid 0"),
                   "%s",
                   e.text);
    ck_assert_int_eq (safeout_write_file (at ("out/work/rec.jsonl"),
                                          "x",
                                          1,
                                          true,
                                          &e),
                      -1);
    ck_assert_int_eq (errno, EPERM);
    ck_assert_int_eq (safeout_unlink (at ("out/work/rec.jsonl"), &e), -1);
    ck_assert_str_eq (get ("rootonly/rec.jsonl"), "data");
    /* the same through a relative link, and through a second link of
     * root's behind the user's */
    ck_assert_int_eq (unlink (at ("out/work")), 0);
    ck_assert_int_eq (symlink ("../rootonly", at ("out/work")), 0);
    ck_assert_int_eq (lchown (at ("out/work"), 65534, 65534), 0);
    ck_assert_int_eq (safeout_write_file (at ("out/work/rec.jsonl"),
                                          "x",
                                          1,
                                          true,
                                          &e),
                      -1);
    ck_assert_int_eq (errno, EPERM);
    ck_assert_int_eq (symlink (at ("rootonly"), at ("rootln")), 0);
    ck_assert_int_eq (unlink (at ("out/work")), 0);
    ck_assert_int_eq (symlink ("../rootln", at ("out/work")), 0);
    ck_assert_int_eq (lchown (at ("out/work"), 65534, 65534), 0);
    ck_assert_int_eq (safeout_write_file (at ("out/work/rec.jsonl"),
                                          "x",
                                          1,
                                          true,
                                          &e),
                      -1);
    ck_assert_int_eq (errno, EPERM);
    ck_assert_str_eq (get ("rootonly/rec.jsonl"), "data");
    /* a link of root's that the user moved into the user's directory is
     * the user's to aim: the same */
    ck_assert_int_eq (unlink (at ("out/work")), 0);
    ck_assert_int_eq (symlink (at ("rootonly"), at ("out/work")), 0);
    ck_assert_int_eq (safeout_write_file (at ("out/work/rec.jsonl"),
                                          "x",
                                          1,
                                          true,
                                          &e),
                      -1);
    ck_assert_int_eq (errno, EPERM);
    ck_assert_str_eq (get ("rootonly/rec.jsonl"), "data");
    /* to a directory of the user's own: followed (~u/results ->
     * /scratch/u/results) */
    ck_assert_int_eq (mkdir (at ("scratch"), 0755), 0);
    ck_assert_int_eq (chown (at ("scratch"), 65534, 65534), 0);
    ck_assert_int_eq (unlink (at ("out/work")), 0);
    ck_assert_int_eq (symlink (at ("scratch"), at ("out/work")), 0);
    ck_assert_int_eq (lchown (at ("out/work"), 65534, 65534), 0);
    ck_assert_int_eq (safeout_write_file (at ("out/work/p.png"),
                                          "p",
                                          1,
                                          true,
                                          &e),
                      0);
    ck_assert_str_eq (get ("scratch/p.png"), "p");
    ck_assert_int_ge (fd = safeout_create (at ("out/work/rec.jsonl"),
                                           SAFEOUT_NEW_INODE,
                                           0600,
                                           &e),
                      0);
    close (fd);
    ck_assert_ptr_nonnull (get ("scratch/rec.jsonl"));
    /* a link of another user (65533) on the way to 65534's directory */
    ck_assert_int_eq (mkdir (at ("other"), 0755), 0);
    ck_assert_int_eq (symlink (at ("out/work"), at ("other/ln")), 0);
    ck_assert_int_eq (lchown (at ("other/ln"), 65533, 65533), 0);
    ck_assert_int_eq (safeout_write_file (at ("other/ln/q.png"),
                                          "q",
                                          1,
                                          false,
                                          &e),
                      -1);
    ck_assert_int_eq (errno, EPERM);
    ck_assert_ptr_null (get ("scratch/q.png"));
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("safeio");
    TCase *tc = tcase_create ("safeio");
    const char *skips[1];
    int nskips = 0;

    tcase_add_checked_fixture (tc, setup, teardown);
    tcase_add_test (tc, test_read_not_regular);
    tcase_add_test (tc, test_write_plain);
    tcase_add_test (tc, test_own_links);
    if (geteuid () == 0)
        tcase_add_test (tc, test_other_users_link);
    else
        skips[nskips++] = "test_other_users_link: needs root (chown)";
    suite_add_tcase (s, tc);
    return tap_run (s, skips, nskips);
}
