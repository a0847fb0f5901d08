/* test_topo_fixtures - libtopo on every shared fixture (real machines)
 *
 * Needs ../shared/topologies (or $PIN_TOPOLOGIES); without it the whole
 * program reports SKIP (exit 77), never a pass.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libtest/fixtures.h"
#include "libtopo/topo.h"
#include "model_check.h"

static struct fixture *fixtures;
static size_t nfixtures;

/* Find a fixture by name; fails the test if it is not in the directory. */
static const char *fixture_src (const char *name)
{
    for (size_t i = 0; i < nfixtures; i++)
        if (strcmp (fixtures[i].name, name) == 0)
            return fixtures[i].src;
    ck_abort_msg ("fixture %s not found in %s", name, fixtures_dir ());
    return NULL;
}

static topo_t *load_fixture (const char *name, int flags)
{
    pin_error_t e = {{0}};
    topo_t *t = topo_load (fixture_src (name), flags, &e);
    ck_assert_msg (t != NULL, "%s: %s", name, e.text);
    model_check (t, name);
    return t;
}

START_TEST (test_every_fixture)
{
    const struct fixture *f = &fixtures[_i];
    pin_error_t e = {{0}};
    topo_t *t, *w;

    t = topo_load (f->src, 0, &e);
    ck_assert_msg (t != NULL, "%s: %s", f->name, e.text);
    model_check (t, f->name);
    w = topo_load (f->src, TOPO_WHOLE_SYSTEM, &e);
    ck_assert_msg (w != NULL, "%s (whole system): %s", f->name, e.text);
    model_check (w, f->name);
    /* the allowed PUs are a subset of the whole system's */
    ck_assert (hwloc_bitmap_isincluded (topo_cpuset (t), topo_cpuset (w)));
    /* the model cache gives the same model, Slurm core ids included */
    model_round_trip (w, f->name);
    topo_destroy (w);
    topo_destroy (t);
}
END_TEST

/* Counts per file (default load).  PUs, cores and packages are INDEX.md's
 * numbers; L2 where INDEX.md has none is the core count (fallback), L3
 * where it has none is the NUMA domain count; NUMA domains group nodes
 * with the same CPUs (KNL: 8 nodes, 4 domains) and add pseudo domains
 * for packages without a local node (16amd64: 3 nodes + 3 pseudo). */
static const struct {
    const char *name;
    unsigned pus, cores, l2, l3, numa, local, pkg;
    int nodes;
    unsigned first_os;
} counts[] = {
    {"g4dnmetal.xml", 96, 48, 48, 2, 2, 2, 2, 2, 0},
    {"32em64t-2n8c2t-pci-noio.xml", 32, 16, 16, 2, 2, 2, 2, 2, 0},
    {"memorysidecaches.xml", 80, 40, 40, 2, 4, 4, 2, 4, 0},
    {"24em64t-2n6c2t-pci.xml", 24, 12, 12, 2, 2, 2, 2, 2, 0},
    {"cts1-quartz-smt1.xml", 36, 36, 36, 2, 2, 2, 2, 2, 0},
    {"ipa20.xml", 224, 112, 112, 2, 8, 8, 2, 8, 0},
    {"cascade-lake-ap-snl-hwloc1.xml", 192, 96, 96, 4, 4, 4, 4, 4, 0},
    {"epyc-corona.xml", 96, 48, 48, 16, 8, 8, 2, 8, 0},
    {"epyc-corona-p2.xml", 96, 48, 48, 16, 2, 2, 2, 2, 0},
    {"eas-tioga.xml", 128, 64, 64, 8, 4, 4, 1, 4, 0},
    {"16amd64-8n2c-cpusets.xml", 10, 10, 10, 6, 6, 3, 6, 5, 0},
    {"knl-snc4-flat-hwloc1.xml", 272, 68, 34, 4, 4, 4, 1, 8, 0},
    {"coral-lassen.xml", 160, 40, 20, 20, 2, 2, 2, 2, 8},
    {"coral-rzansel-hwloc1.xml", 176, 44, 24, 24, 2, 2, 2, 6, 0},
    {"coral-ea-hwloc1.xml", 160, 20, 20, 20, 2, 2, 2, 2, 0},
    {"arm64-ulna-hwloc1.xml", 256, 64, 64, 2, 2, 2, 2, 2, 0},
    {"16em64t-4s2c2t.xml", 16, 8, 8, 4, 1, 1, 4, 1, 0},
    {"16em64t-4s2c2t-offlines.xml", 7, 6, 6, 4, 1, 1, 4, 1, 0},
    {"64intel64-3g2n+2n-irregulargroups+pci.xml",
     16,
     16,
     16,
     2,
     2,
     2,
     2,
     2,
     0},
    {"96em64t-4n4d3ca2co-pci.xml", 96, 96, 48, 16, 4, 4, 16, 4, 0},
    {"192em64t-24n8c2t.xml", 384, 192, 192, 24, 24, 24, 24, 24, 0},
    {"2intel64-1n2c-numaroot.v1tov2.xml", 2, 2, 2, 1, 1, 1, 2, 1, 0},
    {"fakecpukinds.xml", 4, 2, 2, 1, 1, 1, 1, 1, 0},
    {"derived/128arm-2pa2n8cluster4co.xml", 128, 128, 128, 4, 4, 4, 2, 4, 0},
    {"derived/20em64t-hybrid-1p6c2t+2ca4co1t.xml",
     20,
     14,
     8,
     1,
     1,
     1,
     1,
     1,
     0},
    {"derived/offline-cpu0-node0.xml", 17, 17, 17, 2, 2, 1, 2, 1, 4},
};

START_TEST (test_counts)
{
    topo_t *t = load_fixture (counts[_i].name, 0);
    const char *n = counts[_i].name;

    ck_assert_msg (topo_npus (t) == counts[_i].pus,
                   "%s: %u PUs, want %u",
                   n,
                   topo_npus (t),
                   counts[_i].pus);
    ck_assert_msg (topo_ndomains (t, TOPO_CORE) == counts[_i].cores,
                   "%s: %u cores, want %u",
                   n,
                   topo_ndomains (t, TOPO_CORE),
                   counts[_i].cores);
    ck_assert_msg (topo_ndomains (t, TOPO_L2) == counts[_i].l2,
                   "%s: %u L2, want %u",
                   n,
                   topo_ndomains (t, TOPO_L2),
                   counts[_i].l2);
    ck_assert_msg (topo_ndomains (t, TOPO_L3) == counts[_i].l3,
                   "%s: %u L3, want %u",
                   n,
                   topo_ndomains (t, TOPO_L3),
                   counts[_i].l3);
    ck_assert_msg (topo_ndomains (t, TOPO_NUMA) == counts[_i].numa,
                   "%s: %u NUMA domains, want %u",
                   n,
                   topo_ndomains (t, TOPO_NUMA),
                   counts[_i].numa);
    ck_assert_msg (model_local_numa (t) == counts[_i].local,
                   "%s: %u local NUMA domains, want %u",
                   n,
                   model_local_numa (t),
                   counts[_i].local);
    ck_assert_msg (topo_ndomains (t, TOPO_PKG) == counts[_i].pkg,
                   "%s: %u packages, want %u",
                   n,
                   topo_ndomains (t, TOPO_PKG),
                   counts[_i].pkg);
    ck_assert_msg (hwloc_bitmap_weight (topo_nodeset (t)) == counts[_i].nodes,
                   "%s: %d memory nodes, want %d",
                   n,
                   hwloc_bitmap_weight (topo_nodeset (t)),
                   counts[_i].nodes);
    ck_assert_uint_eq (topo_pu (t, 0)->os, counts[_i].first_os);
    topo_destroy (t);
}
END_TEST

/* PUs without a local NUMA node, CPU-less nodes, a cpuset restriction. */
START_TEST (test_amd_cpusets)
{
    topo_t *t = load_fixture ("16amd64-8n2c-cpusets.xml", 0);

    ck_assert_str_eq (model_fmt (topo_cpuset (t)), "0-3,5-6,12-15");
    /* nodes 4 and 5 have no CPUs: in the nodeset, in no local domain */
    ck_assert_str_eq (model_fmt (topo_nodeset (t)), "1-5");
    static const struct {
        const char *cpus, *nodes;
        bool local;
    } want[] = {
        {"0-1", "1-5", false},
        {"2-3", "1", true},
        {"5", "2", true},
        {"6", "3", true},
        {"12-13", "1-5", false},
        {"14-15", "1-5", false},
    };
    ck_assert_uint_eq (topo_ndomains (t, TOPO_NUMA), 6);
    for (unsigned d = 0; d < 6; d++) {
        ck_assert_str_eq (model_fmt (topo_domain_cpuset (t, TOPO_NUMA, d)),
                          want[d].cpus);
        ck_assert_str_eq (model_fmt (topo_numa_nodeset (t, d)), want[d].nodes);
        ck_assert (topo_numa_is_local (t, d) == want[d].local);
        /* no L3: the L3 level follows the NUMA domains */
        ck_assert_str_eq (model_fmt (topo_domain_cpuset (t, TOPO_L3, d)),
                          want[d].cpus);
    }
    /* pseudo domains are one per package */
    ck_assert_str_eq (model_fmt (topo_domain_cpuset (t, TOPO_PKG, 0)), "0-1");
    topo_destroy (t);
}
END_TEST

/* No PU 0; package 0 has no NUMA node (node 0 offline). */
START_TEST (test_offline_cpu0_node0)
{
    topo_t *t = load_fixture ("derived/offline-cpu0-node0.xml", 0);

    ck_assert_int_eq (topo_pu_index (t, 0), -1);
    ck_assert_int_eq (topo_pu_index (t, 4), 0);
    ck_assert_str_eq (model_fmt (topo_nodeset (t)), "1");
    ck_assert_uint_eq (topo_ndomains (t, TOPO_NUMA), 2);
    ck_assert (!topo_numa_is_local (t, 0));
    ck_assert_str_eq (model_fmt (topo_domain_cpuset (t, TOPO_NUMA, 0)),
                      "4,6,8,10,12,14,16,18,20");
    ck_assert_str_eq (model_fmt (topo_numa_nodeset (t, 0)), "1");
    ck_assert (topo_numa_is_local (t, 1));
    ck_assert_str_eq (model_fmt (topo_domain_cpuset (t, TOPO_NUMA, 1)),
                      "5,7,9,11,13,15,17,19");
    ck_assert_str_eq (model_fmt (topo_domain_cpuset (t, TOPO_PKG, 0)),
                      "4,6,8,10,12,14,16,18,20");
    topo_destroy (t);
}
END_TEST

/* KNL SNC4 flat: DDR + MCDRAM pairs, L2 shared by 2 cores, no L3. */
START_TEST (test_knl)
{
    topo_t *t = load_fixture ("knl-snc4-flat-hwloc1.xml", 0);

    ck_assert_str_eq (model_fmt (topo_domain_cpuset (t, TOPO_CORE, 0)),
                      "0,68,136,204");
    ck_assert_str_eq (model_fmt (topo_domain_cpuset (t, TOPO_L2, 0)),
                      "0-1,68-69,136-137,204-205");
    for (unsigned d = 0; d < 4; d++) {
        hwloc_const_bitmap_t ns = topo_numa_nodeset (t, d);
        ck_assert_int_eq (hwloc_bitmap_weight (ns), 2);
        /* DDR node d and MCDRAM node d+4 */
        ck_assert (hwloc_bitmap_isset (ns, d)
                   && hwloc_bitmap_isset (ns, d + 4));
        ck_assert (
            hwloc_bitmap_isequal (topo_domain_cpuset (t, TOPO_L3, d),
                                  topo_domain_cpuset (t, TOPO_NUMA, d)));
    }
    /* unequal quadrants: 18/18/16/16 cores */
    ck_assert_int_eq (hwloc_bitmap_weight (
                          topo_domain_cpuset (t, TOPO_NUMA, 0)),
                      72);
    ck_assert_int_eq (hwloc_bitmap_weight (
                          topo_domain_cpuset (t, TOPO_NUMA, 3)),
                      64);
    topo_destroy (t);
}
END_TEST

/* Disallowed PUs kept in the XML: 16 PUs by default, 64 whole. */
START_TEST (test_disallowed)
{
    const char *name = "64intel64-3g2n+2n-irregulargroups+pci.xml";
    topo_t *t = load_fixture (name, 0);
    topo_t *w = load_fixture (name, TOPO_WHOLE_SYSTEM);

    ck_assert_uint_eq (topo_npus (t), 16);
    ck_assert_str_eq (model_fmt (topo_cpuset (t)), "0-15");
    ck_assert_uint_eq (topo_ndomains (t, TOPO_NUMA), 2);
    ck_assert_uint_eq (topo_npus (w), 64);
    ck_assert_uint_eq (topo_ndomains (w, TOPO_NUMA), 8);
    ck_assert_uint_eq (topo_ndomains (w, TOPO_PKG), 8);
    ck_assert_int_eq (hwloc_bitmap_weight (topo_nodeset (w)), 8);
    topo_destroy (w);
    topo_destroy (t);
}
END_TEST

/* SNC2 with round-robin numbering: NUMA domain 1 is node P#2. */
START_TEST (test_memorysidecaches)
{
    topo_t *t = load_fixture ("memorysidecaches.xml", 0);

    ck_assert_str_eq (model_fmt (topo_domain_cpuset (t, TOPO_PKG, 0)),
                      "0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30,32,34,36,"
                      "38,40,42,44,46,48,50,52,54,56,58,60,62,64,66,68,70,72,"
                      "74,76,78");
    ck_assert_str_eq (model_fmt (topo_numa_nodeset (t, 0)), "0");
    ck_assert_str_eq (model_fmt (topo_numa_nodeset (t, 1)), "2");
    ck_assert_int_eq (hwloc_bitmap_weight (
                          topo_domain_cpuset (t, TOPO_NUMA, 0)),
                      20);
    /* one L3 spans the package's two NUMA domains */
    ck_assert (hwloc_bitmap_isequal (topo_domain_cpuset (t, TOPO_L3, 0),
                                     topo_domain_cpuset (t, TOPO_PKG, 0)));
    ck_assert_str_eq (model_fmt (topo_domain_cpuset (t, TOPO_CORE, 1)),
                      "4,44");
    topo_destroy (t);
}
END_TEST

/* Hybrid: P-cores with SMT (kind 1), E-cores in L2 clusters (kind 0). */
START_TEST (test_hybrid)
{
    topo_t *t = load_fixture ("derived/20em64t-hybrid-1p6c2t+2ca4co1t.xml", 0);

    for (unsigned i = 0; i < topo_npus (t); i++) {
        const struct topo_pu *pu = topo_pu (t, i);
        ck_assert_msg (pu->kind == (pu->os < 12 ? 1 : 0),
                       "P#%u kind %d",
                       pu->os,
                       pu->kind);
    }
    ck_assert_str_eq (model_fmt (topo_domain_cpuset (t, TOPO_CORE, 0)), "0-1");
    ck_assert_str_eq (model_fmt (topo_domain_cpuset (t, TOPO_CORE, 6)), "12");
    ck_assert_str_eq (model_fmt (topo_domain_cpuset (t, TOPO_L2, 6)), "12-15");
    ck_assert_str_eq (model_fmt (topo_domain_cpuset (t, TOPO_L2, 7)), "16-19");
    topo_destroy (t);
}
END_TEST

START_TEST (test_fakecpukinds)
{
    topo_t *t = load_fixture ("fakecpukinds.xml", 0);
    static const int want[] = {0, 0, 1, 2}; /* by OS index */

    for (unsigned i = 0; i < topo_npus (t); i++) {
        const struct topo_pu *pu = topo_pu (t, i);
        ck_assert_msg (pu->kind == want[pu->os],
                       "P#%u kind %d, want %d",
                       pu->os,
                       pu->kind,
                       want[pu->os]);
    }
    /* a kind boundary cuts through core 0 = P#0,2 */
    ck_assert_str_eq (model_fmt (topo_domain_cpuset (t, TOPO_CORE, 0)), "0,2");
    topo_destroy (t);
}
END_TEST

/* The first PU is P#8 (cores reserved for the OS are not in the file). */
START_TEST (test_lassen)
{
    topo_t *t = load_fixture ("coral-lassen.xml", 0);

    ck_assert_uint_eq (topo_pu (t, 0)->os, 8);
    ck_assert_int_eq (topo_pu_index (t, 0), -1);
    ck_assert_int_eq (topo_pu_index (t, 8), 0);
    ck_assert_str_eq (model_fmt (topo_domain_cpuset (t, TOPO_CORE, 0)),
                      "8-11");
    /* L2 and L3 are shared by core pairs */
    ck_assert_str_eq (model_fmt (topo_domain_cpuset (t, TOPO_L2, 0)), "8-15");
    topo_destroy (t);
}
END_TEST

/* SMT siblings offline: one PU per core. */
START_TEST (test_quartz)
{
    topo_t *t = load_fixture ("cts1-quartz-smt1.xml", 0);

    ck_assert_str_eq (model_fmt (topo_cpuset (t)), "0-35");
    for (unsigned c = 0; c < topo_ndomains (t, TOPO_CORE); c++)
        ck_assert_int_eq (hwloc_bitmap_weight (
                              topo_domain_cpuset (t, TOPO_CORE, c)),
                          1);
    topo_destroy (t);
}
END_TEST

/* ---- Slurm core ids on real machines ------------------------------------ */

static const struct {
    const char *name;
    const char *cores;
    const char *cpus;
} slurm_cases[] = {
    /* Linux numbering: core 1 = P#1 and its sibling P#49 */
    {"g4dnmetal.xml", "1", "1,49"},
    {"g4dnmetal.xml", "24", "24,72"},        /* first of socket 1 */
    {"g4dnmetal.xml", "0-23", "0-23,48-71"}, /* socket 0 */
    /* round-robin: core 1 is the second core of socket 0 */
    {"24em64t-2n6c2t-pci.xml", "1", "2,14"},
    {"24em64t-2n6c2t-pci.xml", "6", "1,13"},
    {"memorysidecaches.xml", "1", "4,44"},
    /* P#8 first */
    {"coral-lassen.xml", "0", "8-11"},
    /* hybrid: cores have 2 or 1 PUs */
    {"derived/20em64t-hybrid-1p6c2t+2ca4co1t.xml", "5-6", "10-12"},
    /* no PU 0, asymmetric packages: ids stay dense over existing cores */
    {"derived/offline-cpu0-node0.xml", "0", "4"},
    {"derived/offline-cpu0-node0.xml", "8-9", "5,20"}, /* pkg 0 ends at 8 */
};

START_TEST (test_slurm_cores)
{
    topo_t *t = load_fixture (slurm_cases[_i].name, TOPO_WHOLE_SYSTEM);
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc ();
    pin_error_t e = {{0}};

    ck_assert_msg (topo_slurm_cores_to_cpuset (t,
                                               slurm_cases[_i].cores,
                                               cpus,
                                               &e)
                       == 0,
                   "%s",
                   e.text);
    ck_assert_msg (strcmp (model_fmt (cpus), slurm_cases[_i].cpus) == 0,
                   "%s: cores %s -> %s, want %s",
                   slurm_cases[_i].name,
                   slurm_cases[_i].cores,
                   model_fmt (cpus),
                   slurm_cases[_i].cpus);
    hwloc_bitmap_free (cpus);
    topo_destroy (t);
}
END_TEST

/* With the whole system loaded, core id N is core domain N everywhere. */
START_TEST (test_slurm_cores_every_fixture)
{
    const struct fixture *f = &fixtures[_i];
    topo_t *t = topo_load (f->src, TOPO_WHOLE_SYSTEM, NULL);
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc ();
    unsigned n;
    char id[16];
    pin_error_t e = {{0}};

    ck_assert_ptr_nonnull (t);
    n = topo_ndomains (t, TOPO_CORE);
    for (unsigned c = 0; c < n; c++) {
        snprintf (id, sizeof (id), "%u", c);
        ck_assert_int_eq (topo_slurm_cores_to_cpuset (t, id, cpus, NULL), 0);
        ck_assert_msg (hwloc_bitmap_isequal (cpus,
                                             topo_domain_cpuset (t,
                                                                 TOPO_CORE,
                                                                 c)),
                       "%s: core %u -> %s, core domain %s",
                       f->name,
                       c,
                       model_fmt (cpus),
                       model_fmt (topo_domain_cpuset (t, TOPO_CORE, c)));
    }
    snprintf (id, sizeof (id), "%u", n);
    ck_assert_int_eq (topo_slurm_cores_to_cpuset (t, id, cpus, &e), -1);
    ck_assert_msg (strstr (e.text, "out of range") != NULL, "%s", e.text);
    hwloc_bitmap_free (cpus);
    topo_destroy (t);
}
END_TEST

#define NELEM(a) ((int)(sizeof (a) / sizeof ((a)[0])))

static Suite *fixtures_suite (void)
{
    Suite *s = suite_create ("libtopo-fixtures");
    TCase *tc;

    tc = tcase_create ("every");
    tcase_set_timeout (tc, 120);
    tcase_add_loop_test (tc, test_every_fixture, 0, (int)nfixtures);
    tcase_add_loop_test (tc,
                         test_slurm_cores_every_fixture,
                         0,
                         (int)nfixtures);
    suite_add_tcase (s, tc);

    tc = tcase_create ("machines");
    tcase_set_timeout (tc, 120);
    tcase_add_loop_test (tc, test_counts, 0, NELEM (counts));
    tcase_add_test (tc, test_amd_cpusets);
    tcase_add_test (tc, test_offline_cpu0_node0);
    tcase_add_test (tc, test_knl);
    tcase_add_test (tc, test_disallowed);
    tcase_add_test (tc, test_memorysidecaches);
    tcase_add_test (tc, test_hybrid);
    tcase_add_test (tc, test_fakecpukinds);
    tcase_add_test (tc, test_lassen);
    tcase_add_test (tc, test_quartz);
    tcase_add_loop_test (tc, test_slurm_cores, 0, NELEM (slurm_cases));
    suite_add_tcase (s, tc);
    return s;
}

int main (void)
{
    SRunner *sr;
    int failed;

    if (fixtures_shared (&fixtures, &nfixtures) < 0) {
        printf ("SKIP: %s not found; shared fixture tests skipped\n",
                fixtures_dir ());
        return 77;
    }
    sr = srunner_create (fixtures_suite ());
    srunner_run_all (sr, CK_NORMAL);
    failed = srunner_ntests_failed (sr);
    srunner_free (sr);
    fixtures_free (fixtures);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
