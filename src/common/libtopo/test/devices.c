/* test_topo_devices - GPUs, NICs and NUMA distances (devices.c)
 *
 * Golden: test/devices.golden holds, for every shared fixture with a GPU
 * or a NIC, one line per device and one line of NUMA distances, as
 * dev_table() prints them.  A mismatch prints the actual table;
 * TOPO_DEV_REGEN=FILE writes the whole actual table to FILE instead of
 * comparing (review it against `lstopo-no-graphics -i FIXTURE -v` before
 * replacing the golden file).  Needs ../shared/topologies (or
 * $PIN_TOPOLOGIES); without it the program reports SKIP (77).
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libtest/fixtures.h"
#include "libtopo/topo.h"
#include "model_check.h"

static struct fixture *fixtures;
static size_t nfixtures;
static const char *golden_path;

/* The device table of t as text (caller frees). */
static char *dev_table (const topo_t *t, const char *name)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&buf, &len);
    unsigned n = topo_ndomains (t, TOPO_NUMA);

    ck_assert_ptr_nonnull (f);
    for (unsigned i = 0; i < topo_ndevs (t); i++) {
        const struct topo_dev *d = topo_dev (t, i);
        char *c = topo_list_format (d->cpuset);
        char *m = topo_list_format (d->nodeset);
        fprintf (f,
                 "%s %s %u name=%s names=%s busid=%s fabric=%d numa=%d "
                 "cpus=%s mems=%s\n",
                 name,
                 d->kind == TOPO_DEV_GPU ? "GPU" : "NIC",
                 d->index,
                 d->name,
                 d->names[0] ? d->names : "-",
                 d->busid[0] ? d->busid : "-",
                 d->fabric,
                 d->numa,
                 c,
                 m);
        free (c);
        free (m);
    }
    if (topo_ndevs (t) > 0) {
        fprintf (f, "%s distances", name);
        for (unsigned a = 0; a < n; a++)
            for (unsigned b = 0; b < n; b++)
                fprintf (f, "%s%u", b ? "," : " ", topo_numa_distance (t, a, b));
        fprintf (f, "\n");
    }
    fclose (f);
    return buf;
}

/* The golden file's lines for fixture `name` ("" if none). */
static char *golden_for (const char *name)
{
    FILE *f = fopen (golden_path, "r");
    char line[4096];
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream (&buf, &len);
    size_t n = strlen (name);

    ck_assert_msg (f != NULL, "%s: %s", golden_path, strerror (errno));
    while (fgets (line, sizeof (line), f))
        if (!strncmp (line, name, n) && line[n] == ' ')
            fputs (line, out);
    fclose (f);
    fclose (out);
    return buf;
}

START_TEST (test_golden)
{
    const struct fixture *fx = &fixtures[_i];
    pin_error_t e = {{0}};
    const char *regen = getenv ("TOPO_DEV_REGEN");
    topo_t *t;
    char *have, *want;

    if (!strchr (fx->src, '/'))
        return; /* synthetic strings have no I/O */
    t = topo_load (fx->src, 0, &e);
    ck_assert_msg (t != NULL, "%s: %s", fx->name, e.text);
    have = dev_table (t, fx->name);
    if (regen && *regen) {
        FILE *f = fopen (regen, "a");
        ck_assert_ptr_nonnull (f);
        fputs (have, f);
        fclose (f);
    } else {
        want = golden_for (fx->name);
        ck_assert_msg (!strcmp (have, want),
                       "%s: device table differs from %s; have:\n%s",
                       fx->name,
                       golden_path,
                       have);
        free (want);
    }
    /* every device's locality is within the machine */
    for (unsigned i = 0; i < topo_ndevs (t); i++) {
        const struct topo_dev *d = topo_dev (t, i);
        ck_assert (hwloc_bitmap_isincluded (d->cpuset, topo_cpuset (t)));
        ck_assert (d->numa < (int)topo_ndomains (t, TOPO_NUMA));
        ck_assert_int_eq (topo_dev_find (t, d->kind, d->name, NULL), (int)i);
        if (d->busid[0])
            ck_assert_int_eq (topo_dev_find (t, d->kind, d->busid, NULL),
                              (int)i);
    }
    /* distances: 10 or the matrix's own diagonal on the diagonal, and
     * symmetric on these machines */
    for (unsigned a = 0; a < topo_ndomains (t, TOPO_NUMA); a++)
        for (unsigned b = 0; b < topo_ndomains (t, TOPO_NUMA); b++) {
            ck_assert_uint_ne (topo_numa_distance (t, a, b), UINT_MAX);
            if (a != b)
                ck_assert_uint_gt (topo_numa_distance (t, a, b),
                                   topo_numa_distance (t, a, a));
        }
    /* the model cache keeps devices and distances (model_same) */
    model_round_trip (t, fx->name);
    free (have);
    topo_destroy (t);
}
END_TEST

static const char *fixture_src (const char *name)
{
    for (size_t i = 0; i < nfixtures; i++)
        if (strcmp (fixtures[i].name, name) == 0)
            return fixtures[i].src;
    ck_abort_msg ("fixture %s not found in %s", name, fixtures_dir ());
    return NULL;
}

/* g4dnmetal: 8 NVIDIA T4 (cuda0-7, 4 per socket), an EFA and an ENA */
START_TEST (test_find)
{
    pin_error_t e = {{0}};
    topo_t *t = topo_load (fixture_src ("g4dnmetal.xml"), 0, &e);
    const struct topo_dev *d;
    int i;

    ck_assert_msg (t != NULL, "%s", e.text);
    ck_assert_int_eq (topo_dev_find (t, TOPO_DEV_GPU, "0", &e), 0);
    i = topo_dev_find (t, TOPO_DEV_GPU, "5", &e);
    ck_assert_int_ge (i, 0);
    d = topo_dev (t, (unsigned)i);
    ck_assert_str_eq (d->name, "cuda5");
    ck_assert_str_eq (d->busid, "0000:e8:00.0");
    ck_assert_int_eq (d->numa, 1);
    /* bus id: full, short, upper case; OS device names */
    ck_assert_int_eq (topo_dev_find (t, TOPO_DEV_GPU, "0000:E8:00.0", NULL),
                      i);
    ck_assert_int_eq (topo_dev_find (t, TOPO_DEV_GPU, "e8:00.0", NULL), i);
    ck_assert_int_eq (topo_dev_find (t, TOPO_DEV_GPU, "nvml5", NULL), i);
    ck_assert_int_eq (topo_dev_find (t, TOPO_DEV_GPU, "opencl0d5", NULL), i);
    /* bad specs: one line naming it and what there is */
    ck_assert_int_eq (topo_dev_find (t, TOPO_DEV_GPU, "8", &e), -1);
    ck_assert_int_eq (errno, ENOENT);
    ck_assert_msg (strstr (e.text, "GPU '8': no such GPU")
                       && strstr (e.text, "0 (0000:18:00.0)")
                       && !strchr (e.text, '\n'),
                   "%s",
                   e.text);
    ck_assert_int_eq (topo_dev_find (t, TOPO_DEV_GPU, "05", NULL), -1);
    ck_assert_int_eq (topo_dev_find (t, TOPO_DEV_GPU, "-1", NULL), -1);
    ck_assert_int_eq (topo_dev_find (t, TOPO_DEV_GPU, "eth0", NULL), -1);
    ck_assert_int_eq (topo_dev_find (t, TOPO_DEV_GPU, "", &e), -1);
    ck_assert_int_eq (topo_dev_find (t, TOPO_DEV_GPU, "0000:e8:00.0x", NULL),
                      -1);
    /* NICs: the default is the OpenFabrics one (EFA), then by name */
    i = topo_dev_find (t, TOPO_DEV_NIC, NULL, &e);
    ck_assert_int_ge (i, 0);
    ck_assert (topo_dev (t, (unsigned)i)->fabric);
    ck_assert_int_eq (topo_dev_find (t, TOPO_DEV_NIC, "", NULL), i);
    i = topo_dev_find (t, TOPO_DEV_NIC, "eth0", &e);
    ck_assert_int_ge (i, 0);
    ck_assert (!topo_dev (t, (unsigned)i)->fabric);
    ck_assert_int_eq (topo_dev_find (t, TOPO_DEV_NIC, "cuda0", NULL), -1);
    /* the ACPI SLIT of this machine */
    ck_assert_uint_eq (topo_numa_distance (t, 0, 1), 21);
    ck_assert_uint_eq (topo_numa_distance (t, 1, 1), 10);
    ck_assert_uint_eq (topo_numa_distance (t, 2, 1), UINT_MAX);
    topo_destroy (t);
}
END_TEST

/* ipa20: the BMC's VGA is no GPU beside 4 NVIDIA ones, which are
 * numbered by CUDA */
START_TEST (test_bmc_is_no_gpu)
{
    pin_error_t e = {{0}};
    topo_t *t = topo_load (fixture_src ("ipa20.xml"), 0, &e);
    unsigned ngpus = 0;

    ck_assert_msg (t != NULL, "%s", e.text);
    for (unsigned i = 0; i < topo_ndevs (t); i++)
        if (topo_dev (t, i)->kind == TOPO_DEV_GPU) {
            ck_assert_uint_eq (topo_dev (t, i)->index, ngpus);
            ck_assert_str_ne (topo_dev (t, i)->busid, "0000:03:00.0");
            ngpus++;
        }
    ck_assert_uint_eq (ngpus, 4);
    ck_assert_int_eq (topo_dev_find (t, TOPO_DEV_GPU, "0000:03:00.0", NULL),
                      -1);
    topo_destroy (t);
}
END_TEST

/* no distance matrix: 10 / 20 within a package / 30 */
START_TEST (test_distance_rule)
{
    topo_t *t = topo_load ("pack:2 numa:2 core:2 pu:1", 0, NULL);
    ck_assert_ptr_nonnull (t);
    ck_assert_uint_eq (topo_ndevs (t), 0);
    ck_assert_uint_eq (topo_numa_distance (t, 0, 0), 10);
    ck_assert_uint_eq (topo_numa_distance (t, 0, 1), 20);
    ck_assert_uint_eq (topo_numa_distance (t, 0, 2), 30);
    ck_assert_uint_eq (topo_numa_distance (t, 0, 4), UINT_MAX);
    ck_assert_int_eq (topo_dev_find (t, TOPO_DEV_GPU, "0", NULL), -1);
    ck_assert_int_eq (topo_dev_find (t, TOPO_DEV_NIC, NULL, NULL), -1);
    topo_destroy (t);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("libtopo-devices");
    TCase *tc;
    SRunner *sr;
    int failed;

    golden_path = getenv ("TOPO_DEV_GOLDEN");
    if (!golden_path)
        golden_path = SRCDIR "/test/devices.golden";
    if (fixtures_shared (&fixtures, &nfixtures) < 0) {
        printf ("SKIP: %s not found; device tests skipped\n", fixtures_dir ());
        return 77;
    }
    tc = tcase_create ("devices");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_distance_rule);
    tcase_add_loop_test (tc, test_golden, 0, (int)nfixtures);
    tcase_add_test (tc, test_find);
    tcase_add_test (tc, test_bmc_is_no_gpu);
    suite_add_tcase (s, tc);
    sr = srunner_create (s);
    srunner_run_all (sr, CK_NORMAL);
    failed = srunner_ntests_failed (sr);
    srunner_free (sr);
    fixtures_free (fixtures);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
