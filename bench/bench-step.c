/* bench-step.c - the plugin's step-start path, phase by phase, in a fresh
 * process per step (as slurmstepd is), on this machine or on a bigger one
 *
 * pin.so logs its own phases in slurmstepd (bench-step-phases.sh reads
 * them), but slurmstepd can only run on the machine it is on.  This runs
 * the same library calls in the same order for a topology given as XML,
 * treated as this machine (HWLOC_XMLFILE: the cache miss discovers it,
 * the timed runs hit the model cache), in a forked child per step, cold
 * like a new slurmstepd:
 *   topology   topo_load_cached (a hit)
 *   alloc      topo_slurm_cores_to_cpuset of the step's cores
 *   statedir   safefile_check of the StateDir
 *   lock       pin_lock_acquire
 *   busy       claims_busy
 *   plan       place_compute (numa-local, -n 1 -c C)
 *   claim      claims_add
 *   unlock     pin_lock_release (then claims_remove, not timed)
 * What it leaves out: reading pin.conf (~40 us in the log), the mode
 * decision and the cgroup writes, which depend on this machine's cgroup
 * tree, not on the topology's size.  CPU time of the child
 * (CLOCK_THREAD_CPUTIME_ID), median and 90th percentile.  A measurement,
 * never an assertion.
 *
 * Usage: bench-step [-i ITERS] [-c CPUS_PER_TASK] [XML]
 *        (default: this machine; XML: e.g. a fixture of ../shared)
 *        bench-step -w CACHE XML
 *        writes the topology cache CACHE (the XML and its model) of the
 *        machine in XML as if it were this one, with this machine's
 *        fingerprint: bench-step-phases.sh --topology XML gives it to
 *        pin.so, so that the real plugin loads a big machine's model.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libclaims/claims.h"
#include "libplace/place.h"
#include "libtopo/topo.h"
#include "libutil/phase.h"
#include "libutil/safefile.h"

static void die (const char *what, const char *why)
{
    fprintf (stderr, "bench-step: %s: %s\n", what, why);
    exit (1);
}

/* One step start; phases written to fd.  Runs in the child (not inlined:
 * valgrind --toggle-collect=one_step counts its instructions alone). */
static int one_step (const char *cache,
                     const char *state,
                     const char *claims,
                     const char *lock,
                     unsigned cpt,
                     int fd) __attribute__ ((noinline));
static int one_step (const char *cache,
                     const char *state,
                     const char *claims,
                     const char *lock,
                     unsigned cpt,
                     int fd)
{
    struct phases p;
    pin_error_t err = {{0}};
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc ();
    hwloc_bitmap_t busy = hwloc_bitmap_alloc ();
    struct place_plan *plan;
    bool refreshed = false;
    char cores[32];
    topo_t *t;
    int lfd;

    phase_start (&p);
    if (!(t = topo_load_cached (cache, &refreshed, &err)))
        die (cache, err.text);
    phase_mark (&p, refreshed ? "topology (MISS)" : "topology");
    /* the step's cores: the first cpt Slurm cores (or all) */
    snprintf (cores, sizeof (cores), "0-%u", cpt - 1);
    if (topo_slurm_cores_to_cpuset (t, cores, cpus, &err) < 0)
        die ("alloc", err.text);
    phase_mark (&p, "alloc");
    if (safefile_check (state, geteuid (), &err) < 0)
        die ("statedir", err.text);
    phase_mark (&p, "statedir");
    if ((lfd = pin_lock_acquire (lock, 10000, &err)) < 0)
        die ("lock", err.text);
    phase_mark (&p, "lock");
    if (claims_busy (claims, 1, 0, busy, &err) < 0)
        die ("busy", err.text);
    phase_mark (&p, "busy");
    {
        struct place_request req = {
            .policy = PLACE_NUMA_LOCAL,
            .ntasks = 1,
            .cpus_per_task = cpt,
            .allowed = cpus,
            .busy = busy,
            .seed = 1,
        };
        if (!(plan = place_compute (t, &req, &err)))
            die ("plan", err.text);
    }
    phase_mark (&p, "plan");
    if (claims_add (claims, 1, 0, getpid (), plan->tasks[0].cpus, &err) < 0)
        die ("claim", err.text);
    phase_mark (&p, "claim");
    pin_lock_release (lfd);
    phase_mark (&p, "unlock");
    (void)claims_remove (claims, 1, 0, NULL);
    place_plan_destroy (plan);
    topo_destroy (t);
    hwloc_bitmap_free (cpus);
    hwloc_bitmap_free (busy);
    if (write (fd, &p, sizeof (p)) != (ssize_t)sizeof (p))
        return 1;
    return 0;
}

static int cmp_long (const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static void report (const char *name, long *v, int n)
{
    qsort (v, (size_t)n, sizeof (*v), cmp_long);
    printf ("  %-20s %8ld %8ld\n",
            name,
            v[(n - 1) / 2],
            v[(int)(n * 0.9 + 0.5) - 1 < 0 ? 0 : (int)(n * 0.9 + 0.5) - 1]);
}

int main (int argc, char **argv)
{
    int iters = 30;
    unsigned cpt = 1;
    const char *xml = NULL;
    /* StateDir on a tmpfs, as the admin guide asks (/run); /tmp else */
    char dir[] = "/run/bench-step.XXXXXX";
    char cache[64], state[64], claims[80], lock[80];
    struct phases *runs;
    unsigned npus = 0;
    int c;

    const char *write_cache = NULL;

    while ((c = getopt (argc, argv, "i:c:w:h")) != -1) {
        switch (c) {
            case 'w':
                write_cache = optarg;
                break;
            case 'i':
                iters = atoi (optarg);
                break;
            case 'c':
                cpt = (unsigned)atoi (optarg);
                break;
            default:
                fprintf (stderr,
                         "Usage: bench-step [-i ITERS] "
                         "[-c CPUS_PER_TASK] [XML] | -w CACHE XML\n");
                return 1;
        }
    }
    if (optind < argc)
        xml = argv[optind];
    if (write_cache) {
        pin_error_t err = {{0}};
        bool refreshed = false;
        topo_t *t;
        if (!xml)
            die ("-w", "give the XML of the machine");
        setenv ("HWLOC_XMLFILE", xml, 1);
        if (!(t = topo_load_cached (write_cache, &refreshed, &err)))
            die (write_cache, err.text);
        if (!refreshed)
            die (write_cache,
                 "not written (an existing cache of this "
                 "machine? remove it first)");
        printf ("bench-step: wrote %s (%u PUs of %s)\n",
                write_cache,
                topo_npus (t),
                xml);
        topo_destroy (t);
        return 0;
    }
    if (iters < 1 || cpt < 1)
        die ("options", "-i and -c take positive numbers");
    if (!mkdtemp (dir)) {
        memcpy (dir, "/tmp", 4);
        if (!mkdtemp (dir))
            die ("mkdtemp", strerror (errno));
    }
    snprintf (cache, sizeof (cache), "%s/topology.xml", dir);
    snprintf (state, sizeof (state), "%s/state", dir);
    snprintf (claims, sizeof (claims), "%s/claims", state);
    snprintf (lock, sizeof (lock), "%s/lock", state);
    if (mkdir (state, 0700) < 0 || mkdir (claims, 0700) < 0)
        die (state, strerror (errno));

    /* the miss: discover (the XML as this machine) and write the cache */
    {
        pin_error_t err = {{0}};
        bool refreshed = false;
        topo_t *t;
        if (xml)
            setenv ("HWLOC_XMLFILE", xml, 1);
        if (!(t = topo_load_cached (cache, &refreshed, &err)))
            die (cache, err.text);
        if (!refreshed)
            die (cache, "the cache was not written");
        npus = topo_npus (t);
        topo_destroy (t);
        unsetenv ("HWLOC_XMLFILE");
    }
    if (!(runs = calloc ((size_t)iters, sizeof (*runs))))
        die ("calloc", strerror (errno));
    for (int i = 0; i < iters; i++) {
        int fds[2], status;
        pid_t pid;
        if (pipe (fds) < 0 || (pid = fork ()) < 0)
            die ("fork", strerror (errno));
        if (pid == 0) {
            close (fds[0]);
            _exit (one_step (cache, state, claims, lock, cpt, fds[1]));
        }
        close (fds[1]);
        if (read (fds[0], &runs[i], sizeof (runs[i]))
            != (ssize_t)sizeof (runs[i]))
            die ("child", "no result");
        close (fds[0]);
        if (waitpid (pid, &status, 0) < 0 || !WIFEXITED (status)
            || WEXITSTATUS (status) != 0)
            die ("child", "failed");
    }

    printf (
        "bench-step: %s (%u PUs), numa-local -n 1 -c %u, %d fresh "
        "processes, state in %s\n",
        xml ? xml : "this machine",
        npus,
        cpt,
        iters,
        dir);
    printf ("CPU time per phase, microseconds (median, p90):\n");
    long *v = calloc ((size_t)iters, sizeof (*v));
    if (!v)
        die ("calloc", strerror (errno));
    for (unsigned k = 0; k < runs[0].n; k++) {
        for (int i = 0; i < iters; i++)
            v[i] = runs[i].cpu_us[k];
        report (runs[0].name[k], v, iters);
    }
    for (int i = 0; i < iters; i++)
        v[i] = phase_total_cpu_us (&runs[i]);
    report ("total", v, iters);
    free (v);
    free (runs);
    unlink (cache);
    {
        char model[80];
        snprintf (model, sizeof (model), "%s.model", cache);
        unlink (model);
    }
    unlink (lock);
    rmdir (claims);
    rmdir (state);
    rmdir (dir);
    return 0;
}
