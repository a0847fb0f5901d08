/* test/affinity.c - CPU affinity as hwloc bitmaps, on this process */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "libaffinity/affinity.h"
#include "libtest/tap.h"

START_TEST (test_get_set_restore)
{
    hwloc_bitmap_t orig = hwloc_bitmap_alloc ();
    hwloc_bitmap_t one = hwloc_bitmap_alloc ();
    hwloc_bitmap_t now = hwloc_bitmap_alloc ();
    pin_error_t e = {{0}};

    ck_assert_int_eq (affinity_get (0, orig), 0);
    ck_assert (!hwloc_bitmap_iszero (orig));
    /* the same through our pid */
    ck_assert_int_eq (affinity_get (getpid (), now), 0);
    ck_assert (hwloc_bitmap_isequal (now, orig));
    /* narrow to the last allowed CPU, read back, restore */
    hwloc_bitmap_only (one, (unsigned)hwloc_bitmap_last (orig));
    ck_assert_msg (affinity_set (0, one, &e) == 0, "%s", e.text);
    ck_assert_int_eq (affinity_get (0, now), 0);
    ck_assert (hwloc_bitmap_isequal (now, one));
    ck_assert_msg (affinity_set (0, orig, &e) == 0, "%s", e.text);
    ck_assert_int_eq (affinity_get (0, now), 0);
    ck_assert (hwloc_bitmap_isequal (now, orig));
    hwloc_bitmap_free (orig);
    hwloc_bitmap_free (one);
    hwloc_bitmap_free (now);
}
END_TEST

START_TEST (test_errors)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc ();
    hwloc_bitmap_t orig = hwloc_bitmap_alloc ();
    pin_error_t e = {{0}};

    ck_assert_int_eq (affinity_get (0, orig), 0);
    /* an empty set */
    ck_assert_int_eq (affinity_set (0, set, &e), -1);
    ck_assert_int_eq (errno, EINVAL);
    ck_assert_str_eq (e.text, "cannot build an affinity mask: empty CPU set");
    /* CPUs the machine does not have: the kernel refuses */
    hwloc_bitmap_only (set, 99999);
    ck_assert_int_eq (affinity_set (0, set, &e), -1);
    ck_assert_msg (strstr (e.text, "sched_setaffinity(pid 0): ") == e.text,
                   "%s",
                   e.text);
    /* no such process */
    ck_assert_int_eq (affinity_get (999999999, set), -1);
    ck_assert_int_eq (errno, ESRCH);
    /* nothing changed */
    ck_assert_int_eq (affinity_get (0, set), 0);
    ck_assert (hwloc_bitmap_isequal (set, orig));
    hwloc_bitmap_free (set);
    hwloc_bitmap_free (orig);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("affinity");
    TCase *tc = tcase_create ("affinity");

    tcase_add_test (tc, test_get_set_restore);
    tcase_add_test (tc, test_errors);
    suite_add_tcase (s, tc);
    return tap_run (s, NULL, 0);
}
