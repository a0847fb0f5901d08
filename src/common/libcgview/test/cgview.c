/* test/cgview.c - libcgroup's view, checked against /proc/self/mounts
 *
 * Runs on whatever this machine has (v1, v2 or hybrid): the expected
 * answer is worked out independently from the mount table and from each
 * cgroup2 root's cgroup.controllers.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <mntent.h>
#include <stdio.h>
#include <string.h>

#include "libcgview/cgview.h"
#include "libtest/tap.h"

/* Where `name` is bound according to the mount table: 1 or 2 with the
 * mount point, 0 if nowhere. */
static int expected (const char *name, char *mount, size_t n)
{
    FILE *f = setmntent ("/proc/self/mounts", "r");
    struct mntent *m;
    int version = 0;

    ck_assert_ptr_nonnull (f);
    while ((m = getmntent (f))) {
        if (strcmp (m->mnt_type, "cgroup") == 0 && hasmntopt (m, name)
            && !version) {
            snprintf (mount, n, "%s", m->mnt_dir);
            version = 1;
        }
    }
    endmntent (f);
    if (version)
        return version;
    f = setmntent ("/proc/self/mounts", "r");
    ck_assert_ptr_nonnull (f);
    while ((m = getmntent (f))) {
        char path[4096], line[1024] = "";
        FILE *c;
        if (strcmp (m->mnt_type, "cgroup2") != 0)
            continue;
        snprintf (path, sizeof (path), "%s/cgroup.controllers", m->mnt_dir);
        if ((c = fopen (path, "r"))) {
            char *tok, *save = NULL;
            if (fgets (line, sizeof (line), c))
                for (tok = strtok_r (line, " \n", &save); tok;
                     tok = strtok_r (NULL, " \n", &save))
                    if (strcmp (tok, name) == 0 && !version) {
                        snprintf (mount, n, "%s", m->mnt_dir);
                        version = 2;
                    }
            fclose (c);
        }
    }
    endmntent (f);
    return version;
}

START_TEST (test_view)
{
    const char *names[] = {"cpuset", "cpu", "memory"};
    struct cgview_ctl ctl[3];
    char error[256] = "";

    if (cgview_read (names, ctl, 3, error, sizeof (error)) < 0) {
        /* no cgroup at all: libcgroup says so, in one line */
        ck_assert_msg (*error && !strchr (error, '\n'), "'%s'", error);
        return;
    }
    for (int i = 0; i < 3; i++) {
        char mount[4096] = "";
        int want = expected (names[i], mount, sizeof (mount));
        if (want == 0) {
            ck_assert_msg (ctl[i].state == CGVIEW_NOT_MOUNTED,
                           "%s: state %d, want not mounted",
                           names[i],
                           ctl[i].state);
            continue;
        }
        ck_assert_msg (ctl[i].state == CGVIEW_MOUNTED,
                       "%s: state %d (%s)",
                       names[i],
                       ctl[i].state,
                       ctl[i].note);
        ck_assert_int_eq (ctl[i].version, want);
        ck_assert_int_eq (cgview_fs_version (ctl[i].mount), want);
        if (want == 1)
            ck_assert_str_eq (ctl[i].mount, mount);
    }
}
END_TEST

START_TEST (test_fs_version)
{
    ck_assert_int_eq (cgview_fs_version ("/"), 0);
    ck_assert_int_eq (cgview_fs_version ("/nonexistent"), 0);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("cgview");
    TCase *tc = tcase_create ("cgview");

    tcase_add_test (tc, test_view);
    tcase_add_test (tc, test_fs_version);
    suite_add_tcase (s, tc);
    return tap_run (s, NULL, 0);
}
