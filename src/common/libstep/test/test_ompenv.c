/* test_ompenv.c - OMP_PLACES / OMP_PROC_BIND and the inherit rules */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "libplace/place.h"
#include "libstep/ompenv.h"
#include "libtest/tap.h"
#include "libtopo/topo.h"

static const struct {
    const char *cpus;
    const char *places;
} places[] = {
    {"0", "{0}"},
    {"0,2,4,6", "{0},{2},{4},{6}"},
    {"0-3", "{0},{1},{2},{3}"},
    {"7,64,1023", "{7},{64},{1023}"},
};

START_TEST (test_places)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc ();
    char *s;

    ck_assert_int_eq (topo_list_parse (places[_i].cpus, set, NULL), 0);
    s = ompenv_places (set);
    ck_assert_ptr_nonnull (s);
    ck_assert_str_eq (s, places[_i].places);
    free (s);
    hwloc_bitmap_free (set);
}
END_TEST

START_TEST (test_places_large)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc ();
    char *s;

    hwloc_bitmap_set_range (set, 0, 4095);
    s = ompenv_places (set);
    ck_assert_ptr_nonnull (s);
    ck_assert_str_eq (s + strlen (s) - 13, "{4094},{4095}");
    free (s);
    hwloc_bitmap_free (set);
}
END_TEST

START_TEST (test_places_empty)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc ();

    errno = 0;
    ck_assert_ptr_null (ompenv_places (set));
    ck_assert_int_eq (errno, EINVAL);
    ck_assert_ptr_null (ompenv_places (NULL));
    hwloc_bitmap_fill (set); /* infinite */
    ck_assert_ptr_null (ompenv_places (set));
    hwloc_bitmap_free (set);
}
END_TEST

START_TEST (test_proc_bind)
{
    ck_assert_str_eq (ompenv_proc_bind (PLACE_NUMA_LOCAL), "close");
    ck_assert_str_eq (ompenv_proc_bind (PLACE_CACHE_SHARED), "close");
    ck_assert_str_eq (ompenv_proc_bind (PLACE_RANDOM), "close");
    ck_assert_str_eq (ompenv_proc_bind (PLACE_NUMA_SPREAD), "spread");
    ck_assert_ptr_null (ompenv_proc_bind (PLACE_NONE));
    ck_assert_ptr_null (ompenv_proc_bind (99));
}
END_TEST

/* current, recorded, ours -> action */
static const struct {
    const char *current, *recorded, *ours;
    enum ompenv_action action;
} decide[] = {
    /* nothing set: ours goes in */
    {NULL, NULL, "{0}", OMPENV_SET},
    {NULL, NULL, NULL, OMPENV_KEEP},
    /* the user's own value is never touched */
    {"cores", NULL, "{0}", OMPENV_KEEP},
    {"cores", NULL, NULL, OMPENV_KEEP},
    {"cores", "{0},{1}", "{0}", OMPENV_KEEP},
    {"cores", "{0},{1}", NULL, OMPENV_KEEP},
    /* a value the plugin set in an earlier step (batch) is replaced by
     * this step's, or removed when this step is not bound */
    {"{0},{1}", "{0},{1}", "{1}", OMPENV_SET},
    {"{0},{1}", "{0},{1}", NULL, OMPENV_UNSET},
    /* a stale record without the variable: the user unset it */
    {NULL, "{0},{1}", "{1}", OMPENV_SET},
    {NULL, "{0},{1}", NULL, OMPENV_KEEP},
    /* empty strings are values too */
    {"", NULL, "{0}", OMPENV_KEEP},
    {"", "", "{0}", OMPENV_SET},
};

START_TEST (test_decide)
{
    ck_assert_int_eq (ompenv_decide (decide[_i].current,
                                     decide[_i].recorded,
                                     decide[_i].ours),
                      decide[_i].action);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("ompenv");
    TCase *tc = tcase_create ("ompenv");

    tcase_add_loop_test (tc,
                         test_places,
                         0,
                         sizeof (places) / sizeof (places[0]));
    tcase_add_test (tc, test_places_large);
    tcase_add_test (tc, test_places_empty);
    tcase_add_test (tc, test_proc_bind);
    tcase_add_loop_test (tc,
                         test_decide,
                         0,
                         sizeof (decide) / sizeof (decide[0]));
    suite_add_tcase (s, tc);
    return tap_run (s, NULL, 0);
}
