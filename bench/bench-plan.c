/* bench-plan.c - how long topology loads and placements take
 *
 * Side by side in one run, so the ratios mean something on any machine:
 *  - loading the topology: from an hwloc XML fixture (default the largest,
 *    192em64t-24n8c2t.xml, 384 PUs), by live discovery of this machine
 *    ("system"), and through the cache (topo_load_cached() into a
 *    temporary directory: a first call writes the XML and the model, the
 *    timed calls hit the model), side by side with the old hit path (the
 *    cached XML loaded by hwloc and flattened), for this machine and for
 *    the fixture as if it were this machine (HWLOC_XMLFILE);
 *  - place_compute() for every policy on the fixture, for a typical step
 *    (-n 1 -c 8) and for -n 4 -c 8 with the first NUMA domain busy.
 * Reports the median and 90th percentile (CLOCK_MONOTONIC).  These are
 * measurements, never assertions: nothing here fails on time.
 *
 * Usage: bench-plan [-i LOAD_ITERS] [-p PLACE_ITERS] [XML]
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <hwloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libplace/place.h"
#include "libtest/fixtures.h"
#include "libtopo/topo.h"

#define DEFAULT_FIXTURE "192em64t-24n8c2t.xml"

struct stats {
    double median_us;
    double p90_us;
};

typedef int (*bench_fn) (void *arg);

static double now_us (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double (const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Run fn iters times (after one untimed warm-up call); -1 if fn fails. */
static int measure (bench_fn fn, void *arg, int iters, struct stats *st)
{
    double *v = calloc (iters, sizeof (*v));

    if (!v || fn (arg) < 0) {
        free (v);
        return -1;
    }
    for (int i = 0; i < iters; i++) {
        double t0 = now_us ();
        if (fn (arg) < 0) {
            free (v);
            return -1;
        }
        v[i] = now_us () - t0;
    }
    qsort (v, iters, sizeof (*v), cmp_double);
    st->median_us = v[iters / 2];
    st->p90_us = v[(iters * 9) / 10 < iters ? (iters * 9) / 10 : iters - 1];
    free (v);
    return 0;
}

static void die (const char *what, const char *why)
{
    fprintf (stderr, "bench-plan: %s: %s\n", what, why);
    exit (1);
}

/* ---- loads --------------------------------------------------------- */

struct load_arg {
    const char *src;
    unsigned npus;
};

static int load_src (void *a)
{
    struct load_arg *la = a;
    pin_error_t err;
    topo_t *t = topo_load (la->src, 0, &err);

    if (!t) {
        fprintf (stderr, "bench-plan: %s\n", err.text);
        return -1;
    }
    la->npus = topo_npus (t);
    topo_destroy (t);
    return 0;
}

struct cached_arg {
    const char *path;
    bool refreshed;
    unsigned npus;
};

static int load_cached (void *a)
{
    struct cached_arg *ca = a;
    pin_error_t err;
    topo_t *t = topo_load_cached (ca->path, &ca->refreshed, &err);

    if (!t) {
        fprintf (stderr, "bench-plan: %s\n", err.text);
        return -1;
    }
    ca->npus = topo_npus (t);
    topo_destroy (t);
    return 0;
}

/* A cache at `path` of this machine, or of the machine in the XML file
 * `as_machine` (HWLOC_XMLFILE, which live discovery honours): the miss
 * that writes it (timed once), the hits (the model), and the old hit
 * path, the cached XML loaded and flattened with hwloc. */
struct cache_bench {
    struct stats miss, hit, oldhit;
    bool written;
    unsigned npus;
};

static void bench_cache (const char *path,
                         const char *as_machine,
                         int iters,
                         struct cache_bench *cb)
{
    struct cached_arg ca = {.path = path};
    struct load_arg xa = {.src = path};
    char model[4096];
    double t0;

    if (as_machine)
        setenv ("HWLOC_XMLFILE", as_machine, 1);
    t0 = now_us ();
    if (load_cached (&ca) < 0)
        die (path, "cached load failed");
    cb->miss.median_us = cb->miss.p90_us = now_us () - t0;
    cb->written = ca.refreshed;
    if (as_machine)
        unsetenv ("HWLOC_XMLFILE");
    if (measure (load_cached, &ca, iters, &cb->hit) < 0)
        die (path, "cached load failed");
    if (ca.refreshed)
        die (path,
             "the cache was rewritten on a second load: no hit to "
             "measure");
    cb->npus = ca.npus;
    if (measure (load_src, &xa, iters, &cb->oldhit) < 0)
        die (path, "load of the cache file as XML failed");
    snprintf (model, sizeof (model), "%s.model", path);
    unlink (model);
    unlink (path);
}

static void row (const char *what,
                 int iters,
                 const struct stats *st,
                 const char *note);

static void cache_rows (const struct cache_bench *cb,
                        int iters,
                        const char *which)
{
    char what[128];
    snprintf (what, sizeof (what), "cache miss (%s)", which);
    row (what,
         1,
         &cb->miss,
         cb->written ? "XML + model written" : "cache NOT written?");
    snprintf (what, sizeof (what), "cache hit, model (%u PUs)", cb->npus);
    row (what, iters, &cb->hit, "target < 1000");
    snprintf (what, sizeof (what), "old hit: cached XML (%u PUs)", cb->npus);
    row (what, iters, &cb->oldhit, "hwloc load + flatten");
}

/* ---- placements ------------------------------------------------------ */

struct place_arg {
    const topo_t *t;
    struct place_request req;
};

static int place_once (void *a)
{
    struct place_arg *pa = a;
    pin_error_t err;
    struct place_plan *plan = place_compute (pa->t, &pa->req, &err);

    if (!plan) {
        fprintf (stderr, "bench-plan: place_compute: %s\n", err.text);
        return -1;
    }
    place_plan_destroy (plan);
    return 0;
}

/* ---- report ---------------------------------------------------------- */

static void row (const char *what,
                 int iters,
                 const struct stats *st,
                 const char *note)
{
    printf ("%-44s %6d %11.1f %11.1f  %s\n",
            what,
            iters,
            st->median_us,
            st->p90_us,
            note ? note : "");
}

static void usage (void)
{
    fprintf (stderr,
             "Usage: bench-plan [-i LOAD_ITERS] [-p PLACE_ITERS] "
             "[XML]\n");
    exit (1);
}

int main (int argc, char **argv)
{
    static const enum place_policy policies[] = {
        PLACE_NUMA_LOCAL,
        PLACE_NUMA_SPREAD,
        PLACE_CACHE_SHARED,
        PLACE_RANDOM,
        PLACE_NONE,
    };
    int load_iters = 50;
    int place_iters = 2000;
    char fixture[4096];
    char tmpdir[] = "/tmp/bench-plan.XXXXXX";
    char cache[sizeof (tmpdir) + 16];
    struct stats xml, xmlexp, live;
    struct load_arg xa, ea, la;
    char exported[sizeof (tmpdir) + 16];
    pin_error_t err;
    topo_t *t;
    int c;

    while ((c = getopt (argc, argv, "i:p:h")) != -1) {
        switch (c) {
            case 'i':
                load_iters = atoi (optarg);
                break;
            case 'p':
                place_iters = atoi (optarg);
                break;
            default:
                usage ();
        }
    }
    if (load_iters < 1 || place_iters < 1 || argc - optind > 1)
        usage ();
    if (optind < argc)
        snprintf (fixture, sizeof (fixture), "%s", argv[optind]);
    else
        snprintf (fixture,
                  sizeof (fixture),
                  "%s/%s",
                  fixtures_dir (),
                  DEFAULT_FIXTURE);
    if (access (fixture, R_OK) < 0)
        die (fixture,
             "cannot read it (is ../shared beside the repository? "
             "or give an XML file)");

    /* Loads. */
    xa.src = fixture;
    if (measure (load_src, &xa, load_iters, &xml) < 0)
        die (fixture, "load failed");

    /* The fixture as a cache of that machine would hold it: re-exported
     * by libtopo (I/O objects filtered out). */
    if (!mkdtemp (tmpdir))
        die ("mkdtemp", strerror (errno));
    snprintf (exported, sizeof (exported), "%s/fixture.xml", tmpdir);
    if (!(t = topo_load (fixture, TOPO_WHOLE_SYSTEM, &err))
        || topo_export_xml (t, exported, &err) < 0)
        die (fixture, err.text);
    topo_destroy (t);
    ea.src = exported;
    if (measure (load_src, &ea, load_iters, &xmlexp) < 0)
        die (exported, "load failed");
    unlink (exported);

    la.src = "system";
    if (measure (load_src, &la, load_iters, &live) < 0)
        die ("system", "live discovery failed");

    struct cache_bench mine, big;
    snprintf (cache, sizeof (cache), "%s/topo.xml", tmpdir);
    bench_cache (cache, NULL, load_iters, &mine);
    /* the fixture as this machine: live discovery reads HWLOC_XMLFILE */
    if (!(t = topo_load (fixture, TOPO_WHOLE_SYSTEM, &err))
        || topo_export_xml (t, exported, &err) < 0)
        die (fixture, err.text);
    topo_destroy (t);
    snprintf (cache, sizeof (cache), "%s/big.xml", tmpdir);
    bench_cache (cache, exported, load_iters, &big);
    unlink (exported);
    rmdir (tmpdir);

    printf (
        "bench-plan: medians and 90th percentiles in microseconds, "
        "CLOCK_MONOTONIC\n\n");
    printf ("%-44s %6s %11s %11s  %s\n",
            "what",
            "iters",
            "median_us",
            "p90_us",
            "note");
    char what[128];
    snprintf (what, sizeof (what), "load XML fixture (%u PUs)", xa.npus);
    row (what, load_iters, &xml, NULL);
    snprintf (what,
              sizeof (what),
              "load it re-exported by libtopo (%u PUs)",
              ea.npus);
    row (what, load_iters, &xmlexp, "its cache's size");
    snprintf (what,
              sizeof (what),
              "load system, live discovery (%u PUs)",
              la.npus);
    row (what, load_iters, &live, NULL);
    cache_rows (&mine, load_iters, "this machine");
    cache_rows (&big, load_iters, "fixture as this machine");

    /* Placements on the fixture. */
    if (!(t = topo_load (fixture, 0, &err)))
        die (fixture, err.text);
    hwloc_bitmap_t busy =
        hwloc_bitmap_dup (topo_domain_cpuset (t, TOPO_NUMA, 0));
    if (!busy)
        die ("hwloc_bitmap_dup", strerror (errno));
    double worst = 0;
    printf ("\n");
    for (size_t i = 0; i < sizeof (policies) / sizeof (policies[0]); i++) {
        for (int busy_case = 0; busy_case < 2; busy_case++) {
            struct place_arg pa = {
                .t = t,
                .req =
                    {
                        .policy = policies[i],
                        .ntasks = busy_case ? 4 : 1,
                        .cpus_per_task = 8,
                        .busy = busy_case ? busy : NULL,
                        .seed = 42,
                    },
            };
            struct stats st;
            snprintf (what,
                      sizeof (what),
                      "place %s -n %u -c 8%s",
                      place_policy_name (policies[i]),
                      pa.req.ntasks,
                      busy_case ? " (NUMA 0 busy)" : "");
            if (measure (place_once, &pa, place_iters, &st) < 0)
                die (what, "failed");
            row (what, place_iters, &st, "target < 100");
            if (st.median_us > worst)
                worst = st.median_us;
        }
    }
    hwloc_bitmap_free (busy);
    topo_destroy (t);

    printf ("\nratios of medians (side by side, this run):\n");
    printf ("  cached hit / live discovery   %8.3f  (this machine)\n",
            mine.hit.median_us / live.median_us);
    printf ("  model hit / old XML hit       %8.3f  (this machine, %u PUs)\n",
            mine.hit.median_us / mine.oldhit.median_us,
            mine.npus);
    printf ("  model hit / old XML hit       %8.3f  (fixture, %u PUs)\n",
            big.hit.median_us / big.oldhit.median_us,
            big.npus);
    printf ("  XML fixture / live discovery  %8.3f  (%u vs %u PUs)\n",
            xml.median_us / live.median_us,
            xa.npus,
            la.npus);
    printf ("  re-exported / XML fixture     %8.3f\n",
            xmlexp.median_us / xml.median_us);
    printf ("  slowest placement / cached hit %7.3f  (fixture)\n",
            worst / big.hit.median_us);
    return 0;
}
