/* test_lastgood.c - the last good pin.conf kept on disk (lastgood.h) */
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

#include "libconf/conf.h"
#include "libconf/lastgood.h"
#include "libplace/place.h"
#include "libtest/tap.h"

static char dir[256], conf[300], saved[300], other[300];

static void setup (void)
{
    snprintf (dir,
              sizeof (dir),
              "%s/test_lastgood.XXXXXX",
              getenv ("TMPDIR") ? getenv ("TMPDIR") : "/tmp");
    ck_assert_ptr_nonnull (mkdtemp (dir));
    snprintf (conf, sizeof (conf), "%s/pin.conf", dir);
    ck_assert_int_eq (pin_lastgood_path (saved, sizeof (saved), dir), 0);
    snprintf (other, sizeof (other), "%s/other", dir);
}

static void teardown (void)
{
    unlink (conf);
    unlink (saved);
    unlink (other);
    rmdir (dir);
}

static void write_text (const char *path, const char *text)
{
    FILE *f = fopen (path, "w");
    ck_assert_ptr_nonnull (f);
    ck_assert_int_eq (fputs (text, f) >= 0, 1);
    ck_assert_int_eq (fclose (f), 0);
}

START_TEST (test_path)
{
    char buf[64];
    ck_assert_int_eq (pin_lastgood_path (buf, sizeof (buf), "/var/spool/x"),
                      0);
    ck_assert_str_eq (buf, "/var/spool/x/pin.conf.last-good");
    errno = 0;
    ck_assert_int_eq (pin_lastgood_path (buf, sizeof (buf), "relative"), -1);
    ck_assert_int_eq (errno, EINVAL);
    ck_assert_int_eq (pin_lastgood_path (buf, 10, "/var/spool/x"), -1);
    ck_assert_int_eq (errno, ENAMETOOLONG);
}
END_TEST

/* save, then load: the same rules, a plain 0600 file of ours */
START_TEST (test_round_trip)
{
    struct pin_conf c;
    struct stat st;
    pin_error_t e = {""};
    enum place_policy p;

    write_text (conf,
                "AllowedPolicies=numa-local,none\n"
                "PartitionName=debug DefaultPolicy=numa-local\n");
    ck_assert_msg (pin_lastgood_save (conf, saved, &e) == 0, "%s", e.text);
    ck_assert_int_eq (lstat (saved, &st), 0);
    ck_assert (S_ISREG (st.st_mode));
    ck_assert_uint_eq (st.st_mode & 07777, 0600);
    ck_assert_uint_eq (st.st_uid, geteuid ());
    pin_conf_defaults (&c);
    ck_assert_msg (pin_lastgood_load (&c, saved, &e) == 0, "%s", e.text);
    ck_assert_str_eq (c.path, saved);
    ck_assert_int_eq (c.npartitions, 1);
    ck_assert_int_eq (place_policy_parse ("random", &p, NULL), 0);
    ck_assert (!pin_conf_policy_allowed (&c, (int)p));
    ck_assert_int_eq (access (other, F_OK), -1); /* nothing left beside */
}
END_TEST

/* a copy that does not load never replaces the one kept */
START_TEST (test_bad_copy_keeps_old)
{
    pin_error_t e = {""};
    struct pin_conf c;
    char tmp[320];

    write_text (conf, "AllowedPolicies=numa-local,none\n");
    ck_assert_int_eq (pin_lastgood_save (conf, saved, &e), 0);
    write_text (conf, "Bogus=1\n");
    ck_assert_int_eq (pin_lastgood_save (conf, saved, &e), -1);
    ck_assert_ptr_nonnull (strstr (e.text, "the copy does not load"));
    snprintf (tmp, sizeof (tmp), "%s.new", saved);
    ck_assert_int_eq (access (tmp, F_OK), -1);
    pin_conf_defaults (&c);
    ck_assert_int_eq (pin_lastgood_load (&c, saved, &e), 0);
    ck_assert_int_eq (c.npartitions, 0);
}
END_TEST

/* missing, a link, writable by others: refused, conf unchanged */
START_TEST (test_refused)
{
    pin_error_t e = {""};
    struct pin_conf c, before;

    pin_conf_defaults (&c);
    before = c;
    errno = 0;
    ck_assert_int_eq (pin_lastgood_load (&c, saved, &e), -1);
    ck_assert_int_eq (errno, ENOENT);

    write_text (other, "AllowedPolicies=none\n");
    ck_assert_int_eq (chmod (other, 0600), 0);
    ck_assert_int_eq (symlink (other, saved), 0);
    ck_assert_int_eq (pin_lastgood_load (&c, saved, &e), -1);
    ck_assert_int_eq (errno, ELOOP);
    ck_assert_ptr_nonnull (strstr (e.text, "a symbolic link"));
    ck_assert_int_eq (unlink (saved), 0);

    write_text (saved, "AllowedPolicies=none\n");
    ck_assert_int_eq (chmod (saved, 0622), 0);
    ck_assert_int_eq (pin_lastgood_load (&c, saved, &e), -1);
    ck_assert_int_eq (errno, EPERM);
    ck_assert_ptr_nonnull (strstr (e.text, "writable by nobody else"));
    ck_assert_int_eq (memcmp (&c, &before, sizeof (c)), 0);

    /* a directory others can write to: nothing read, nothing written */
    ck_assert_int_eq (chmod (saved, 0600), 0);
    ck_assert_int_eq (chmod (dir, 0777), 0);
    ck_assert_int_eq (pin_lastgood_load (&c, saved, &e), -1);
    ck_assert_ptr_nonnull (strstr (e.text, "directory not trusted"));
    write_text (conf, "AllowedPolicies=none\n");
    ck_assert_int_eq (pin_lastgood_save (conf, saved, &e), -1);
    ck_assert_int_eq (chmod (dir, 0700), 0);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("lastgood");
    TCase *tc = tcase_create ("lastgood");

    tcase_add_checked_fixture (tc, setup, teardown);
    tcase_add_test (tc, test_path);
    tcase_add_test (tc, test_round_trip);
    tcase_add_test (tc, test_bad_copy_keeps_old);
    tcase_add_test (tc, test_refused);
    suite_add_tcase (s, tc);
    return tap_run (s, NULL, 0);
}
