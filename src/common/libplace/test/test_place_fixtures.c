/* test_place_fixtures.c - every policy on every shared fixture
 *
 * For each topology of ../shared/topologies (XML files, derived/ and the
 * synthetic strings of INDEX.md), each policy, a range of task counts and
 * CPUs per task, an unrestricted and three restricted allowed sets, and
 * busy sets drawn by the test's own seeded generator, the plan is checked
 * against the invariants of placecheck.c (computed from the PU table, not
 * with libplace).  Requests larger than allowed-minus-busy must fail.
 * Files with disallowed PUs are also loaded as slurmstepd's cache does
 * (TOPO_WHOLE_SYSTEM) and go through the same grid.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libplace/place.h"
#include "libtest/fixtures.h"
#include "libtopo/topo.h"
#include "placecheck.h"

static struct fixture *fx;
static size_t nfx;

/* PUs the XML files list as offline or disallowed (INDEX.md): no plan may
 * ever use them, whatever libtopo says. */
static const struct {
    const char *file;
    const char *forbidden;
} forbidden[] = {
    {"cts1-quartz-smt1.xml", "36-71"},
    {"coral-lassen.xml", "0-7,88-95"},
    {"16em64t-4s2c2t-offlines.xml", "2,5,7-11,13-14"},
    {"16amd64-8n2c-cpusets.xml", "4,7-11"},
    {"64intel64-3g2n+2n-irregulargroups+pci.xml", "16-63"},
    {"derived/offline-cpu0-node0.xml", "0-3,21-23"},
};

static void check_forbidden (const char *name, const topo_t *t)
{
    for (size_t i = 0; i < sizeof (forbidden) / sizeof (forbidden[0]); i++) {
        if (strcmp (name, forbidden[i].file) != 0)
            continue;
        hwloc_bitmap_t bad = hwloc_bitmap_alloc ();
        ck_assert_int_eq (topo_list_parse (forbidden[i].forbidden, bad, NULL),
                          0);
        for (size_t p = 0; p < PLACECHECK_NPOLICIES; p++) {
            struct place_request req = {
                .policy = placecheck_policies[p],
                .ntasks = 1,
                .cpus_per_task = topo_npus (t),
                .seed = 1,
            };
            pin_error_t err;
            struct place_plan *plan = place_compute (t, &req, &err);
            ck_assert_msg (plan != NULL, "%s: %s", name, err.text);
            ck_assert_msg (!hwloc_bitmap_intersects (plan->tasks[0].cpus, bad),
                           "%s: %s uses an offline/disallowed PU",
                           name,
                           place_policy_name (placecheck_policies[p]));
            place_plan_destroy (plan);
        }
        hwloc_bitmap_free (bad);
    }
}

START_TEST (fixture_invariants)
{
    const struct fixture *f = &fx[_i];
    pin_error_t err;
    topo_t *t = topo_load (f->src, 0, &err);

    ck_assert_msg (t != NULL, "%s: %s", f->name, err.text);
    check_forbidden (f->name, t);
    placecheck_grid (f->name, t, 0x9e3779b97f4a7c15ULL ^ (uint64_t)(_i + 1));

    /* slurmstepd plans on the machine-wide cached topology, disallowed
     * PUs included, with Slurm's allocation as the allowed set */
    topo_t *w = topo_load (f->src, TOPO_WHOLE_SYSTEM, &err);
    ck_assert_msg (w != NULL, "%s (whole system): %s", f->name, err.text);
    if (topo_npus (w) != topo_npus (t)) {
        char name[512];
        snprintf (name, sizeof (name), "%s (whole system)", f->name);
        placecheck_grid (name, w, 0x5bd1e995ULL ^ (uint64_t)(_i + 1));
    }
    topo_destroy (w);
    topo_destroy (t);
}
END_TEST

int main (void)
{
    if (fixtures_shared (&fx, &nfx) < 0) {
        printf ("SKIP: %s not found; shared fixture tests skipped\n",
                fixtures_dir ());
        printf ("1..0 # SKIP %s not found; shared fixture tests skipped\n",
                fixtures_dir ());
        return 0;
    }
    Suite *s = suite_create ("place_fixtures");
    TCase *tc = tcase_create ("fixtures");
    tcase_set_timeout (tc, 300);
    tcase_add_loop_test (tc, fixture_invariants, 0, (int)nfx);
    suite_add_tcase (s, tc);
    int rc = placecheck_run_tap (s);
    fixtures_free (fx);
    return rc;
}
