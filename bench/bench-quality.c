/* bench-quality.c - placement quality of slurm-pin's policies next to
 * hwloc-distrib's (issue 10, part 4)
 *
 * For every XML fixture of the shared directory (../shared/topologies and
 * derived/, or $PIN_TOPOLOGIES) and a fixed set of requests, computes the
 * plans of numa-local, numa-spread, cache-shared and random (seed 0) and
 * the same request distributed by hwloc-distrib, measures each with the
 * quality checker of the unit tests (src/common/libplace/test/
 * placequality.c, which knows nothing of libplace's rules), and prints
 * markdown: a summary per request, every request where hwloc-distrib is
 * better on a metric the policy promises (with the reason recorded in
 * the reasons file, or "no reason recorded"), and the numbers per
 * fixture.  bench/compare-placements.sh turns this into
 * doc/placement-quality.md.
 *
 * The peer, for a step of n tasks x c CPUs (fixed argument arrays,
 * posix_spawnp, only stdout is parsed):
 *   hwloc-distrib --if xml -i FILE n                       -> n sets S_i
 *   hwloc-distrib --if xml -i FILE --restrict S_i --single c -> task i
 * i.e. the tasks are distributed over the machine, then each task's c
 * threads over its set, one PU each; a set of fewer than c PUs makes no
 * plan ("short").  hwloc-distrib binds no memory: its mems are "not
 * fenced" (every node).
 *
 * A second peer, optional: mpibind (LLNL), when $MPIBIND_LIB names its
 * shared library (built outside this tree, see bench/README.md).  It is
 * loaded with dlopen, so nothing links against it; the few entry points
 * used are declared below from its public header (mpibind.h).  Per
 * request: the fixture as an hwloc topology (hwloc_topology_set_xml),
 * mpibind_init, mpibind_set_ntasks (n), mpibind_set_nthreads (c),
 * mpibind_set_topology, mpibind, mpibind_get_cpus, mpibind_finalize;
 * the other parameters keep mpibind's defaults.  A task's set of more
 * than c PUs is cut to c as a user pinning c threads in it would: one PU
 * per core first (cores and PUs in libtopo's PU table order), then a
 * second PU of each core, and so on; a set of fewer than c PUs is
 * "short".  mpibind binds no memory: "not fenced".  Without
 * $MPIBIND_LIB the output is what it was before mpibind was added.
 *
 * Usage: bench-quality [-D HWLOC_DISTRIB] [-r REASONS] [-f FIXTURE]
 * Exit status 1 if a fixture does not load, hwloc-distrib fails to run,
 * or $MPIBIND_LIB is set and does not load or fails on a request.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fnmatch.h>
#include <hwloc.h>
#include <math.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libplace/place.h"
#include "libplace/test/placequality.h"
#include "libtest/fixtures.h"
#include "libtopo/topo.h"

extern char **environ;

/* ---- requests and metrics ---------------------------------------------- */

/* Request templates; N = cores of the machine. */
enum { RQ_1x4, RQ_2x4, RQ_4x2, RQ_4x8, RQ_HALFx2, RQ_2xHALF, NRQ };
static const char *rq_label[NRQ] = {
    "1x4",
    "2x4",
    "4x2",
    "4x8",
    "(N/2)x2",
    "2x(N/2)",
};

static void rq_shape (int rq, unsigned ncores, unsigned *n, unsigned *c)
{
    unsigned half = ncores / 2 ? ncores / 2 : 1;
    static const unsigned fixed[][2] = {{1, 4}, {2, 4}, {4, 2}, {4, 8}};
    if (rq < RQ_HALFx2) {
        *n = fixed[rq][0];
        *c = fixed[rq][1];
    } else if (rq == RQ_HALFx2) {
        *n = half;
        *c = 2;
    } else {
        *n = 2;
        *c = half;
    }
}

/* Columns: slurm-pin's policies, then the peers (mpibind only with
 * $MPIBIND_LIB: ncol is NCOL then, COL_MPIBIND otherwise). */
enum {
    COL_LOCAL,
    COL_SPREAD,
    COL_CACHE,
    COL_RANDOM,
    COL_PEER,
    COL_MPIBIND,
    NCOL
};
static const char *col_name[NCOL] = {
    "numa-local",
    "numa-spread",
    "cache-shared",
    "random",
    "hwloc-distrib",
    "mpibind",
};
static int ncol = COL_MPIBIND;
static const enum place_policy col_policy[COL_PEER] = {
    PLACE_NUMA_LOCAL,
    PLACE_NUMA_SPREAD,
    PLACE_CACHE_SHARED,
    PLACE_RANDOM,
};

enum {
    M_SHARED,    /* cores holding PUs of two tasks */
    M_STACKED,   /* tasks on fewer than min(c, cores) cores: SMT first */
    M_CORES_MAX, /* cores per task, max */
    M_L2_MAX,
    M_L2_MEAN,
    M_L3_MAX,
    M_L3_MEAN,
    M_NUMA_MAX, /* NUMA domains per task, max */
    M_NUMA_MIN, /* NUMA domains per task, min */
    M_NUMA_IMB,
    M_PKG_IMB,
    M_MEMS_LOCAL, /* tasks whose mems are exactly their CPUs' nodes */
    M_MIXED,      /* tasks mixing CPU kinds */
    NMETRIC
};
static const struct {
    const char *name;
    int better; /* -1: lower is better, +1: higher is better */
} metric[NMETRIC] = {
    [M_SHARED] = {"shared-cores", -1},
    [M_STACKED] = {"smt-stacked", -1},
    [M_CORES_MAX] = {"cores-max", -1},
    [M_L2_MAX] = {"l2-max", -1},
    [M_L2_MEAN] = {"l2-mean", -1},
    [M_L3_MAX] = {"l3-max", -1},
    [M_L3_MEAN] = {"l3-mean", -1},
    [M_NUMA_MAX] = {"numa-max", -1},
    [M_NUMA_MIN] = {"numa-min", +1},
    [M_NUMA_IMB] = {"numa-imbalance", -1},
    [M_PKG_IMB] = {"pkg-imbalance", -1},
    [M_MEMS_LOCAL] = {"mems-local", +1},
    [M_MIXED] = {"mixed-kinds", -1},
};

/* What each policy promises (doc/policies.md), compared with the peer. */
static const int promised[COL_PEER][NMETRIC + 1] = {
    [COL_LOCAL] = {M_NUMA_MAX, M_STACKED, M_SHARED, M_MEMS_LOCAL, -1},
    [COL_SPREAD] = {M_NUMA_MIN, M_NUMA_IMB, M_PKG_IMB, -1},
    [COL_CACHE] =
        {M_L2_MAX, M_L2_MEAN, M_L3_MAX, M_L3_MEAN, M_CORES_MAX, M_SHARED, -1},
    [COL_RANDOM] = {-1},
};

struct result {
    bool ok;
    char why[300]; /* when !ok */
    double m[NMETRIC];
};

struct row {
    const char *fixture;
    int rq;
    unsigned n, c;
    struct result r[NCOL];
};

/* ---- reasons ---------------------------------------------------------- */

/* "peer|fixture|request|policy|metric|reason", globs in the first five. */
struct reason {
    char *pat[5];
    char *text;
};
static struct reason *reasons;
static size_t nreasons;

static void load_reasons (const char *path)
{
    FILE *f = fopen (path, "r");
    char line[1024];
    if (!f) {
        fprintf (stderr, "bench-quality: %s: %s\n", path, strerror (errno));
        exit (1);
    }
    while (fgets (line, sizeof (line), f)) {
        char *p = line, *field[6];
        int k = 0;
        line[strcspn (line, "\n")] = '\0';
        if (line[0] == '#' || line[0] == '\0')
            continue;
        while (k < 6 && p) {
            field[k++] = p;
            p = k < 6 ? strchr (p, '|') : NULL;
            if (p)
                *p++ = '\0';
        }
        if (k != 6) {
            fprintf (stderr,
                     "bench-quality: %s: not 6 fields "
                     "(peer|fixture|request|policy|metric|reason): %s\n",
                     path,
                     line);
            exit (1);
        }
        struct reason *nr =
            realloc (reasons, (nreasons + 1) * sizeof (*reasons));
        if (!nr)
            exit (1);
        reasons = nr;
        for (int i = 0; i < 5; i++)
            reasons[nreasons].pat[i] = strdup (field[i]);
        reasons[nreasons].text = strdup (field[5]);
        nreasons++;
    }
    fclose (f);
}

static const char *find_reason (const char *peer,
                                const char *fixture,
                                const char *rq,
                                const char *policy,
                                const char *m)
{
    const char *key[5] = {peer, fixture, rq, policy, m};
    for (size_t i = 0; i < nreasons; i++) {
        int k = 0;
        while (k < 5 && fnmatch (reasons[i].pat[k], key[k], 0) == 0)
            k++;
        if (k == 5)
            return reasons[i].text;
    }
    return NULL;
}

/* ---- the peer: hwloc-distrib ------------------------------------------ */

/* Run argv (no shell), return its stdout (caller frees) or NULL. */
static char *run_capture (char *const argv[])
{
    int fd[2];
    posix_spawn_file_actions_t fa;
    pid_t pid;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int status;

    if (pipe (fd) < 0)
        return NULL;
    posix_spawn_file_actions_init (&fa);
    posix_spawn_file_actions_adddup2 (&fa, fd[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose (&fa, fd[0]);
    posix_spawn_file_actions_addclose (&fa, fd[1]);
    int rc = posix_spawnp (&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy (&fa);
    close (fd[1]);
    if (rc != 0) {
        close (fd[0]);
        fprintf (stderr, "bench-quality: %s: %s\n", argv[0], strerror (rc));
        return NULL;
    }
    for (;;) {
        if (len + 4096 + 1 > cap) {
            char *nb = realloc (buf, cap = cap ? cap * 2 : 8192);
            if (!nb)
                break;
            buf = nb;
        }
        ssize_t got = read (fd[0], buf + len, cap - len - 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        len += (size_t)got;
    }
    close (fd[0]);
    while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!buf || !WIFEXITED (status) || WEXITSTATUS (status) != 0) {
        fprintf (stderr, "bench-quality: %s failed\n", argv[0]);
        free (buf);
        return NULL;
    }
    buf[len] = '\0';
    return buf;
}

/* Parse up to max lines of hwloc bitmaps into sets[]; count of lines. */
static int parse_sets (char *out, hwloc_bitmap_t *sets, unsigned max)
{
    unsigned k = 0;
    for (char *save = NULL, *l = strtok_r (out, "\n", &save); l;
         l = strtok_r (NULL, "\n", &save)) {
        if (k == max || hwloc_bitmap_sscanf (sets[k], l) < 0)
            return -1;
        k++;
    }
    return (int)k;
}

static const char *distrib = "hwloc-distrib";

/* The peer's plan for n x c on xml, or NULL with why filled ("short")
 * or, if hwloc-distrib itself failed, NULL with *fatal set. */
static struct place_plan *peer_plan (const topo_t *t,
                                     const char *xml,
                                     unsigned n,
                                     unsigned c,
                                     char *why,
                                     size_t len,
                                     bool *fatal)
{
    char nstr[16], cstr[16];
    hwloc_bitmap_t *sets = calloc (n, sizeof (*sets));
    hwloc_bitmap_t *one = calloc (c, sizeof (*one));
    struct place_plan *plan = calloc (1, sizeof (*plan));
    char *out = NULL;

    *fatal = false;
    if (!sets || !one || !plan)
        goto fail;
    plan->policy = PLACE_RANDOM; /* measured in full, mems not judged */
    plan->ntasks = n;
    plan->cpus_per_task = c;
    plan->tasks = calloc (n, sizeof (*plan->tasks));
    if (!plan->tasks)
        goto fail;
    for (unsigned i = 0; i < n; i++)
        sets[i] = hwloc_bitmap_alloc ();
    for (unsigned j = 0; j < c; j++)
        one[j] = hwloc_bitmap_alloc ();
    snprintf (nstr, sizeof (nstr), "%u", n);
    snprintf (cstr, sizeof (cstr), "%u", c);

    char *argv1[] =
        {(char *)distrib, "--if", "xml", "-i", (char *)xml, nstr, NULL};
    if (!(out = run_capture (argv1)) || parse_sets (out, sets, n) != (int)n)
        goto fatal;
    free (out);
    out = NULL;
    for (unsigned i = 0; i < n; i++) {
        char *s = NULL;
        if (hwloc_bitmap_asprintf (&s, sets[i]) < 0)
            goto fail;
        char *argv2[] = {(char *)distrib,
                         "--if",
                         "xml",
                         "-i",
                         (char *)xml,
                         "--restrict",
                         s,
                         "--single",
                         cstr,
                         NULL};
        out = run_capture (argv2);
        free (s);
        if (!out || parse_sets (out, one, c) != (int)c)
            goto fatal;
        free (out);
        out = NULL;
        plan->tasks[i].cpus = hwloc_bitmap_alloc ();
        plan->tasks[i].mems = hwloc_bitmap_dup (topo_nodeset (t));
        for (unsigned j = 0; j < c; j++)
            hwloc_bitmap_or (plan->tasks[i].cpus, plan->tasks[i].cpus, one[j]);
        int w = hwloc_bitmap_weight (plan->tasks[i].cpus);
        if (w != (int)c) {
            char *l = topo_list_format (sets[i]);
            snprintf (why,
                      len,
                      "short: task %u's set %s has %d PUs",
                      i,
                      l ? l : "?",
                      hwloc_bitmap_weight (sets[i]));
            free (l);
            goto fail;
        }
    }
    for (unsigned i = 0; i < n; i++)
        hwloc_bitmap_free (sets[i]);
    for (unsigned j = 0; j < c; j++)
        hwloc_bitmap_free (one[j]);
    free (sets);
    free (one);
    return plan;
fatal:
    *fatal = true;
    snprintf (why, len, "hwloc-distrib failed");
fail:
    free (out);
    for (unsigned i = 0; sets && i < n; i++)
        hwloc_bitmap_free (sets[i]);
    for (unsigned j = 0; one && j < c; j++)
        hwloc_bitmap_free (one[j]);
    free (sets);
    free (one);
    place_plan_destroy (plan);
    return NULL;
}

/* ---- the second peer: mpibind, loaded at run time ---------------------- */

/* mpibind's public API (mpibind.h), the entry points used here; most
 * return 0 on success.  The handle is opaque. */
typedef struct mpibind_t mpibind_t;
static struct {
    void *dl;
    int (*init) (mpibind_t **handle);
    int (*finalize) (mpibind_t *handle);
    int (*set_ntasks) (mpibind_t *handle, int ntasks);
    int (*set_nthreads) (mpibind_t *handle, int nthreads);
    int (*set_topology) (mpibind_t *handle, hwloc_topology_t topo);
    int (*run) (mpibind_t *handle);                  /* mpibind () */
    hwloc_bitmap_t *(*get_cpus) (mpibind_t *handle); /* [ntasks] */
} mb;

/* dlopen path and resolve the entry points; -1 with a message printed. */
static int mpibind_load (const char *path)
{
    static const char *names[] = {
        "mpibind_init",
        "mpibind_finalize",
        "mpibind_set_ntasks",
        "mpibind_set_nthreads",
        "mpibind_set_topology",
        "mpibind",
        "mpibind_get_cpus",
    };
    void *sym[sizeof (names) / sizeof (*names)];

    if (!(mb.dl = dlopen (path, RTLD_NOW | RTLD_LOCAL))) {
        fprintf (stderr,
                 "bench-quality: MPIBIND_LIB=%s: %s; unset it to "
                 "compare with hwloc-distrib alone\n",
                 path,
                 dlerror ());
        return -1;
    }
    for (size_t i = 0; i < sizeof (names) / sizeof (*names); i++)
        if (!(sym[i] = dlsym (mb.dl, names[i]))) {
            fprintf (stderr,
                     "bench-quality: MPIBIND_LIB=%s: no %s: not "
                     "mpibind's library?\n",
                     path,
                     names[i]);
            return -1;
        }
    /* POSIX: a data pointer from dlsym converts to a function pointer */
    *(void **)&mb.init = sym[0];
    *(void **)&mb.finalize = sym[1];
    *(void **)&mb.set_ntasks = sym[2];
    *(void **)&mb.set_nthreads = sym[3];
    *(void **)&mb.set_topology = sym[4];
    *(void **)&mb.run = sym[5];
    *(void **)&mb.get_cpus = sym[6];
    return 0;
}

/* Cut set to its first c PUs, one per core first: PUs in libtopo's table
 * order, rank r = how many PUs of the same core in set come before; take
 * every rank-0 PU in order, then rank 1, ...  out gets the result. */
static void cut_one_per_core_first (const topo_t *t,
                                    hwloc_const_bitmap_t set,
                                    unsigned c,
                                    hwloc_bitmap_t out)
{
    unsigned npu = topo_npus (t), ncore = topo_ndomains (t, TOPO_CORE);
    unsigned *seen = calloc (ncore ? ncore : 1, sizeof (*seen));
    unsigned *rank = calloc (npu ? npu : 1, sizeof (*rank));
    unsigned taken = 0, maxrank = 0;

    hwloc_bitmap_zero (out);
    if (!seen || !rank)
        goto done;
    for (unsigned i = 0; i < npu; i++) {
        const struct topo_pu *p = topo_pu (t, i);
        if (!hwloc_bitmap_isset (set, p->os))
            continue;
        rank[i] = seen[p->dom[TOPO_CORE]]++;
        if (rank[i] > maxrank)
            maxrank = rank[i];
    }
    for (unsigned r = 0; r <= maxrank && taken < c; r++)
        for (unsigned i = 0; i < npu && taken < c; i++)
            if (rank[i] == r && hwloc_bitmap_isset (set, topo_pu (t, i)->os)) {
                hwloc_bitmap_set (out, topo_pu (t, i)->os);
                taken++;
            }
done:
    free (seen);
    free (rank);
}

/* mpibind () warns on stderr for every topology loaded from XML (no PCI
 * or OS devices, not this system): 3 lines per request, true and the
 * same every time.  Run it with stderr in a temporary file, shown only
 * when it fails. */
static int mpibind_run_quiet (mpibind_t *h)
{
    FILE *tmp = tmpfile ();
    int saved = -1, rc;

    fflush (stderr);
    if (tmp && (saved = dup (STDERR_FILENO)) >= 0)
        dup2 (fileno (tmp), STDERR_FILENO);
    rc = mb.run (h);
    if (saved >= 0) {
        fflush (stderr);
        dup2 (saved, STDERR_FILENO);
        close (saved);
        if (rc != 0) {
            char buf[512];
            rewind (tmp);
            while (fgets (buf, sizeof (buf), tmp))
                fprintf (stderr, "bench-quality: mpibind: %s", buf);
        }
    }
    if (tmp)
        fclose (tmp);
    return rc;
}

/* mpibind's plan for n x c on xml, or NULL with why filled ("short"), or
 * NULL with *fatal set if mpibind or the topology failed. */
static struct place_plan *mpibind_plan (const topo_t *t,
                                        const char *xml,
                                        unsigned n,
                                        unsigned c,
                                        char *why,
                                        size_t len,
                                        bool *fatal)
{
    hwloc_topology_t topo = NULL;
    mpibind_t *h = NULL;
    hwloc_bitmap_t *cpus;
    struct place_plan *plan = calloc (1, sizeof (*plan));
    int rc;

    *fatal = true;
    snprintf (why, len, "mpibind failed");
    if (!plan || !(plan->tasks = calloc (n, sizeof (*plan->tasks))))
        goto fail;
    plan->policy = PLACE_RANDOM; /* measured in full, mems not judged */
    plan->ntasks = n;
    plan->cpus_per_task = c;
    if (hwloc_topology_init (&topo) < 0) {
        topo = NULL;
        goto fail;
    }
    if (hwloc_topology_set_xml (topo, xml) < 0
        || hwloc_topology_load (topo) < 0) {
        snprintf (why, len, "mpibind: hwloc cannot load %s", xml);
        goto fail;
    }
    if (mb.init (&h) != 0 || !h) {
        h = NULL;
        goto fail;
    }
    if ((rc = mb.set_ntasks (h, (int)n)) != 0
        || (rc = mb.set_nthreads (h, (int)c)) != 0
        || (rc = mb.set_topology (h, topo)) != 0
        || (rc = mpibind_run_quiet (h)) != 0 || !(cpus = mb.get_cpus (h))) {
        snprintf (why, len, "mpibind failed (rc %d)", rc);
        goto fail;
    }
    *fatal = false;
    for (unsigned i = 0; i < n; i++) {
        int w = hwloc_bitmap_weight (cpus[i]);
        if (w < (int)c) {
            char *l = w > 0 ? topo_list_format (cpus[i]) : NULL;
            if (w > 0)
                snprintf (why,
                          len,
                          "short: task %u's set %s has %d PUs",
                          i,
                          l ? l : "?",
                          w);
            else
                snprintf (why, len, "short: task %u got no PUs", i);
            free (l);
            goto fail;
        }
        plan->tasks[i].cpus = hwloc_bitmap_alloc ();
        plan->tasks[i].mems = hwloc_bitmap_dup (topo_nodeset (t));
        cut_one_per_core_first (t, cpus[i], c, plan->tasks[i].cpus);
        if (hwloc_bitmap_weight (plan->tasks[i].cpus) != (int)c) {
            snprintf (why,
                      len,
                      "mpibind: task %u's set is not in the PU "
                      "table",
                      i);
            *fatal = true;
            goto fail;
        }
    }
    mb.finalize (h);
    hwloc_topology_destroy (topo);
    return plan;
fail:
    if (h)
        mb.finalize (h);
    if (topo)
        hwloc_topology_destroy (topo);
    place_plan_destroy (plan);
    return NULL;
}

/* ---- measuring ---------------------------------------------------------- */

static int measure (const topo_t *t,
                    const struct place_request *req,
                    const struct place_plan *plan,
                    struct result *r)
{
    struct placequality q;
    unsigned ncores = topo_ndomains (t, TOPO_CORE);
    unsigned want = req->cpus_per_task < ncores ? req->cpus_per_task : ncores;

    if (placequality (t, req, plan, &q) < 0)
        return -1;
    memset (r->m, 0, sizeof (r->m));
    r->m[M_SHARED] = q.shared_cores;
    r->m[M_NUMA_MIN] = 1e9;
    for (unsigned i = 0; i < q.ntasks; i++) {
        const struct pq_task *pt = &q.task[i];
        r->m[M_STACKED] += pt->ncores < want;
        r->m[M_CORES_MAX] = fmax (r->m[M_CORES_MAX], pt->ncores);
        r->m[M_L2_MAX] = fmax (r->m[M_L2_MAX], pt->nl2);
        r->m[M_L2_MEAN] += (double)pt->nl2 / q.ntasks;
        r->m[M_L3_MAX] = fmax (r->m[M_L3_MAX], pt->nl3);
        r->m[M_L3_MEAN] += (double)pt->nl3 / q.ntasks;
        r->m[M_NUMA_MAX] = fmax (r->m[M_NUMA_MAX], pt->nnuma);
        r->m[M_NUMA_MIN] = fmin (r->m[M_NUMA_MIN], pt->nnuma);
        r->m[M_MEMS_LOCAL] += pt->mems_local;
        r->m[M_MIXED] += pt->mixed_kinds;
    }
    r->m[M_NUMA_IMB] = q.numa_imbalance;
    r->m[M_PKG_IMB] = q.pkg_imbalance;
    r->ok = true;
    placequality_free (&q);
    return 0;
}

/* -1: policy worse than the peer, 0 equal, 1 better (on metric m). */
static int cmp_metric (const struct row *w, int col, int peer, int m)
{
    double a = w->r[col].m[m], b = w->r[peer].m[m];
    if (fabs (a - b) < 1e-9)
        return 0;
    return (a < b ? 1 : -1) * -metric[m].better;
}

/* ---- output ------------------------------------------------------------- */

static void fmt_metric (const struct result *r, int m, char *buf, size_t len)
{
    if (m == M_L2_MEAN || m == M_L3_MEAN)
        snprintf (buf, len, "%.2f", r->m[m]);
    else
        snprintf (buf, len, "%.0f", r->m[m]);
}

static void print_summary_table (struct row *rows, size_t nrows, int peer)
{
    printf ("| request | fixtures |");
    for (int col = 0; col < COL_RANDOM; col++)
        printf (" %s better / equal / worse |", col_name[col]);
    printf (" peer short |\n|---|---:|");
    for (int col = 0; col < COL_RANDOM; col++)
        printf ("---|");
    printf ("---:|\n");
    for (int rq = 0; rq <= NRQ; rq++) {
        unsigned nfix = 0, nshort = 0, cnt[COL_RANDOM][3] = {{0}};
        for (size_t i = 0; i < nrows; i++) {
            struct row *w = &rows[i];
            if (rq < NRQ && w->rq != rq)
                continue;
            nfix++;
            if (!w->r[peer].ok) {
                nshort++;
                continue;
            }
            for (int col = 0; col < COL_RANDOM; col++) {
                bool worse = false, better = false;
                for (const int *m = promised[col]; *m >= 0; m++) {
                    int v = cmp_metric (w, col, peer, *m);
                    worse |= v < 0;
                    better |= v > 0;
                }
                cnt[col][worse ? 2 : better ? 0 : 1]++;
            }
        }
        printf ("| %s | %u |", rq < NRQ ? rq_label[rq] : "**all**", nfix);
        for (int col = 0; col < COL_RANDOM; col++)
            printf (" %u / %u / %u |", cnt[col][0], cnt[col][1], cnt[col][2]);
        printf (" %u |\n", nshort);
    }
}

static void print_metric_table (struct row *rows, size_t nrows, int peer)
{
    printf (
        "| policy | metric | better | equal | worse |\n"
        "|---|---|---:|---:|---:|\n");
    for (int col = 0; col < COL_RANDOM; col++)
        for (const int *m = promised[col]; *m >= 0; m++) {
            unsigned cnt[3] = {0};
            for (size_t i = 0; i < nrows; i++)
                if (rows[i].r[peer].ok)
                    cnt[1 - cmp_metric (&rows[i], col, peer, *m)]++;
            printf ("| %s | %s | %u | %u | %u |\n",
                    col_name[col],
                    metric[*m].name,
                    cnt[0],
                    cnt[1],
                    cnt[2]);
        }
}

static void print_summary (struct row *rows, size_t nrows)
{
    printf (
        "## Summary per request\n\n"
        "Per policy, the fixtures where the request fits, compared with "
        "hwloc-distrib on the metrics the policy promises: **better** "
        "(better on one, worse on none), **equal**, **worse** (worse on "
        "at least one); *peer short*: hwloc-distrib gave a task fewer "
        "than c PUs, so it has no plan to compare.\n\n");
    print_summary_table (rows, nrows, COL_PEER);
    if (ncol > COL_MPIBIND) {
        printf (
            "\nThe same, compared with mpibind; *peer short*: mpibind "
            "gave a task fewer than c PUs.\n\n");
        print_summary_table (rows, nrows, COL_MPIBIND);
    }

    printf (
        "\n## Per promised metric\n\n"
        "Requests (all fixtures) where the policy is better / equal / "
        "worse than hwloc-distrib on each metric it promises.\n\n");
    print_metric_table (rows, nrows, COL_PEER);
    if (ncol > COL_MPIBIND) {
        printf ("\nThe same, compared with mpibind.\n\n");
        print_metric_table (rows, nrows, COL_MPIBIND);
    }
}

static unsigned print_exceptions (struct row *rows, size_t nrows, int peer)
{
    unsigned missing = 0, total = 0;
    printf (
        "\n## Exceptions: %s better on a promised metric\n\n"
        "Reasons come from `bench/compare-placements.reasons`.\n\n"
        "| fixture | request | policy | metric | slurm-pin | "
        "%s | reason |\n|---|---|---|---|---:|---:|---|\n",
        col_name[peer],
        col_name[peer]);
    for (size_t i = 0; i < nrows; i++) {
        struct row *w = &rows[i];
        if (!w->r[peer].ok)
            continue;
        for (int col = 0; col < COL_RANDOM; col++)
            for (const int *m = promised[col]; *m >= 0; m++) {
                if (cmp_metric (w, col, peer, *m) >= 0)
                    continue;
                char a[32], b[32];
                const char *why = find_reason (col_name[peer],
                                               w->fixture,
                                               rq_label[w->rq],
                                               col_name[col],
                                               metric[*m].name);
                fmt_metric (&w->r[col], *m, a, sizeof (a));
                fmt_metric (&w->r[peer], *m, b, sizeof (b));
                printf ("| %s | -n %u -c %u | %s | %s | %s | %s | %s |\n",
                        w->fixture,
                        w->n,
                        w->c,
                        col_name[col],
                        metric[*m].name,
                        a,
                        b,
                        why ? why : "**no reason recorded**");
                missing += !why;
                total++;
            }
    }
    if (total == 0)
        printf ("| (none) | | | | | | |\n");
    if (peer == COL_PEER)
        printf ("\n%u exceptions, %u without a recorded reason.\n",
                total,
                missing);
    else
        printf ("\n%u exceptions (%s), %u without a recorded reason.\n",
                total,
                col_name[peer],
                missing);
    return missing;
}

static void print_detail (struct row *rows, size_t nrows)
{
    static const int shown[] = {M_SHARED,
                                M_STACKED,
                                M_CORES_MAX,
                                M_L2_MAX,
                                M_L2_MEAN,
                                M_L3_MAX,
                                M_L3_MEAN,
                                M_NUMA_MAX,
                                M_NUMA_MIN,
                                M_NUMA_IMB,
                                M_PKG_IMB,
                                M_MEMS_LOCAL,
                                M_MIXED};
    const char *last = NULL;

    printf (
        "\n## Per fixture\n\n"
        "Columns: cores shared between tasks; tasks on fewer cores than "
        "min(c, cores) (SMT siblings before whole cores); cores per "
        "task (max); L2 and L3 domains per task (max, mean); NUMA "
        "domains per task (max, min); NUMA and package imbalance "
        "(max - min of tasks per domain); tasks whose memory is fenced "
        "to exactly their CPUs' NUMA nodes (%s: *not fenced*, "
        "%s); tasks mixing CPU kinds.\n",
        ncol > COL_MPIBIND ? "hwloc-distrib and mpibind" : "hwloc-distrib",
        ncol > COL_MPIBIND ? "neither binds memory" : "it binds no memory");
    for (size_t i = 0; i < nrows; i++) {
        struct row *w = &rows[i];
        if (!last || strcmp (last, w->fixture) != 0) {
            last = w->fixture;
            printf (
                "\n### %s\n\n| request | plan | shared | stacked | "
                "cores max | L2 max | L2 mean | L3 max | L3 mean | "
                "NUMA max | NUMA min | NUMA imb | pkg imb | mems local | "
                "mixed |\n|---|---|",
                w->fixture);
            for (size_t k = 0; k < sizeof (shown) / sizeof (*shown); k++)
                printf ("---:|");
            printf ("\n");
        }
        for (int col = 0; col < ncol; col++) {
            const struct result *r = &w->r[col];
            printf ("| -n %u -c %u | %s |", w->n, w->c, col_name[col]);
            if (!r->ok) {
                printf (" %s |", r->why);
                for (size_t k = 1; k < sizeof (shown) / sizeof (*shown); k++)
                    printf (" |");
                printf ("\n");
                continue;
            }
            for (size_t k = 0; k < sizeof (shown) / sizeof (*shown); k++) {
                char v[32];
                if (col >= COL_PEER && shown[k] == M_MEMS_LOCAL
                    && r->m[M_MEMS_LOCAL] < w->n)
                    snprintf (v, sizeof (v), "not fenced");
                else
                    fmt_metric (r, shown[k], v, sizeof (v));
                printf (" %s |", v);
            }
            printf ("\n");
        }
    }
}

static bool is_xml (const char *name)
{
    size_t l = strlen (name);
    return l > 4 && strcmp (name + l - 4, ".xml") == 0;
}

/* GPUs in libtopo's table (they come first). */
static unsigned topo_ngpus_of (const topo_t *t)
{
    unsigned g = 0;
    while (g < topo_ndevs (t) && topo_dev (t, g)->kind == TOPO_DEV_GPU)
        g++;
    return g;
}

/* ---- GPU locality (issue 24) ---------------------------------------------- */

/* -G: on every fixture with GPUs (libtopo's device table), three cases:
 *   1/GPU   n = G tasks on the whole node, c = PUs / n
 *   2/GPU   n = 2G tasks on the whole node, c = PUs / n
 *   half    the first half of the cores (PU table order, as Slurm's block
 *           allocation from core 0), the first ceil(G/2) GPUs, one task
 *           per GPU held, c = allowed PUs / n
 * and three plans: slurm-pin (numa-local with place_request.near, the
 * tasks' GPUs block-wise as libplace assigns them), mpibind (its own
 * GPU assignment and CPUs; half: mpibind_set_restrict_ids to the
 * allowed PUs, its restrict option) and hwloc-distrib (GPU-blind, whole
 * node only, GPUs block-wise as slurm-pin's).  Measured per plan: share
 * of a task's CPUs local to its GPU(s), tasks not wholly local, tasks
 * sharing an L2 with another task, NUMA domains per task (max), tasks
 * without a GPU, tasks given a GPU the step does not hold, slurm-pin's
 * gpu-remote fallbacks. */
enum { GC_ONE, GC_TWO, GC_HALF, NGC };
static const char *gc_label[NGC] = {"1/GPU", "2/GPU", "half"};
enum { GP_PIN, GP_MPIBIND, GP_DISTRIB, NGP };
static const char *gp_name[NGP] = {"slurm-pin", "mpibind", "hwloc-distrib"};

struct gres {
    bool ok;
    char why[300];
    double local_mean; /* %, over tasks with a GPU */
    unsigned remote;   /* tasks with a GPU, not wholly local */
    unsigned core_shared; /* tasks holding a core with another task */
    unsigned l2_shared;
    unsigned numa_max;
    unsigned withgpu; /* tasks with a GPU */
    unsigned nogpu;   /* tasks without a GPU */
    unsigned notheld; /* tasks given a GPU the step does not hold */
    int fb;           /* slurm-pin: tasks with gpu-remote; -1 n/a */
    char note[200];
};

/* Block-wise, as place.h: task i near device i * k / n when n >= k, else
 * [i * k / n, (i + 1) * k / n).  Bits are positions in held[]. */
static uint64_t blockwise (unsigned i, unsigned n, unsigned k)
{
    uint64_t m = 0;
    if (n >= k)
        return (uint64_t)1 << (i * k / n);
    for (unsigned d = i * k / n; d < (i + 1) * k / n; d++)
        m |= (uint64_t)1 << d;
    return m;
}

/* gpus[i]: bit d = topo device position d. */
static void gmeasure (const topo_t *t,
                      const struct place_plan *plan,
                      const uint64_t *gpus,
                      uint64_t heldmask,
                      struct gres *r)
{
    unsigned npu = topo_npus (t), nl2 = topo_ndomains (t, TOPO_L2);
    unsigned nnuma = topo_ndomains (t, TOPO_NUMA);
    unsigned ncore = topo_ndomains (t, TOPO_CORE);
    int *l2owner = malloc ((nl2 ? nl2 : 1) * sizeof (int));
    int *coreowner = malloc ((ncore ? ncore : 1) * sizeof (int));
    bool *numa = calloc (nnuma ? nnuma : 1, sizeof (bool));
    unsigned withgpu = 0;
    hwloc_bitmap_t local = hwloc_bitmap_alloc ();
    hwloc_bitmap_t tmp = hwloc_bitmap_alloc ();

    for (unsigned k = 0; k < nl2; k++)
        l2owner[k] = -1; /* -1 none, -2 several, else the task */
    for (unsigned k = 0; k < ncore; k++)
        coreowner[k] = -1;
    r->local_mean = 0;
    for (unsigned i = 0; i < plan->ntasks; i++) {
        hwloc_const_bitmap_t cpus = plan->tasks[i].cpus;
        unsigned nn = 0;
        memset (numa, 0, (nnuma ? nnuma : 1) * sizeof (bool));
        for (unsigned p = 0; p < npu; p++) {
            const struct topo_pu *pu = topo_pu (t, p);
            if (!hwloc_bitmap_isset (cpus, pu->os))
                continue;
            unsigned l2 = pu->dom[TOPO_L2];
            if (l2owner[l2] == -1)
                l2owner[l2] = (int)i;
            else if (l2owner[l2] != (int)i)
                l2owner[l2] = -2;
            unsigned co = pu->dom[TOPO_CORE];
            if (coreowner[co] == -1)
                coreowner[co] = (int)i;
            else if (coreowner[co] != (int)i)
                coreowner[co] = -2;
            if (!numa[pu->dom[TOPO_NUMA]]) {
                numa[pu->dom[TOPO_NUMA]] = true;
                nn++;
            }
        }
        if (nn > r->numa_max)
            r->numa_max = nn;
        if (!gpus[i]) {
            r->nogpu++;
            continue;
        }
        if (gpus[i] & ~heldmask)
            r->notheld++;
        hwloc_bitmap_zero (local);
        for (unsigned d = 0; d < 64; d++)
            if (gpus[i] >> d & 1)
                hwloc_bitmap_or (local, local, topo_dev (t, d)->cpuset);
        hwloc_bitmap_and (tmp, cpus, local);
        int w = hwloc_bitmap_weight (cpus), l = hwloc_bitmap_weight (tmp);
        r->local_mean += w > 0 ? 100.0 * l / w : 0;
        r->remote += l < w;
        withgpu++;
    }
    if (withgpu)
        r->local_mean /= withgpu;
    r->withgpu = withgpu;
    for (unsigned i = 0; i < plan->ntasks; i++) {
        bool l2 = false, core = false;
        for (unsigned p = 0; p < npu; p++) {
            const struct topo_pu *pu = topo_pu (t, p);
            if (!hwloc_bitmap_isset (plan->tasks[i].cpus, pu->os))
                continue;
            l2 |= l2owner[pu->dom[TOPO_L2]] == -2;
            core |= coreowner[pu->dom[TOPO_CORE]] == -2;
        }
        r->l2_shared += l2;
        r->core_shared += core;
    }
    r->ok = true;
    hwloc_bitmap_free (local);
    hwloc_bitmap_free (tmp);
    free (l2owner);
    free (coreowner);
    free (numa);
}

/* mpibind's entry points for GPUs, resolved only in -G mode. */
static struct {
    int (*set_restrict_ids) (mpibind_t *handle, char *restr_set);
    int (*set_gpu_ids) (mpibind_t *handle, int id_type);
    char **(*get_gpus_ptask) (mpibind_t *handle, int taskid, int *ngpus);
    int (*get_num_gpus) (mpibind_t *handle);
} mbg;
#define MB_ID_PCIBUS 4 /* mpibind.h: MPIBIND_ID_PCIBUS */

static int mpibind_load_gpu (void)
{
    static const char *names[] = {
        "mpibind_set_restrict_ids",
        "mpibind_set_gpu_ids",
        "mpibind_get_gpus_ptask",
        "mpibind_get_num_gpus",
    };
    void *sym[4];
    for (size_t i = 0; i < 4; i++)
        if (!(sym[i] = dlsym (mb.dl, names[i]))) {
            fprintf (stderr, "bench-quality: MPIBIND_LIB: no %s\n", names[i]);
            return -1;
        }
    *(void **)&mbg.set_restrict_ids = sym[0];
    *(void **)&mbg.set_gpu_ids = sym[1];
    *(void **)&mbg.get_gpus_ptask = sym[2];
    *(void **)&mbg.get_num_gpus = sym[3];
    return 0;
}

/* In a child process (mpibind can crash on a topology it does not
 * expect, e.g. a GPU OS device without GPUVendor info): run mpibind for
 * n x c, restricted to restr (NULL: whole node), and write to fd
 * "G <gpus mpibind sees>" then per task "<cpu list> <busid,...|->". */
static void mpibind_gpu_child (const char *xml,
                               unsigned n,
                               unsigned c,
                               char *restr,
                               int fd)
{
    hwloc_topology_t topo;
    mpibind_t *h = NULL;
    hwloc_bitmap_t *cpus;
    FILE *out = fdopen (fd, "w");

    if (!out || hwloc_topology_init (&topo) < 0)
        _exit (2);
    /* mpibind finds GPUs among OS devices under PCI devices */
    hwloc_topology_set_type_filter (topo,
                                    HWLOC_OBJ_OS_DEVICE,
                                    HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    hwloc_topology_set_type_filter (topo,
                                    HWLOC_OBJ_PCI_DEVICE,
                                    HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_set_xml (topo, xml) < 0
        || hwloc_topology_load (topo) < 0 || mb.init (&h) != 0 || !h)
        _exit (2);
    if (mb.set_ntasks (h, (int)n) != 0 || mb.set_nthreads (h, (int)c) != 0
        || mb.set_topology (h, topo) != 0
        || (restr && mbg.set_restrict_ids (h, restr) != 0)
        || mpibind_run_quiet (h) != 0 || !(cpus = mb.get_cpus (h))
        || mbg.set_gpu_ids (h, MB_ID_PCIBUS) != 0)
        _exit (3);
    fprintf (out, "G %d\n", mbg.get_num_gpus (h));
    for (unsigned i = 0; i < n; i++) {
        int ng = 0;
        char *l = NULL;
        char **ids = mbg.get_gpus_ptask (h, (int)i, &ng);
        if (hwloc_bitmap_list_asprintf (&l, cpus[i]) < 0)
            _exit (2);
        fprintf (out, "%s ", l[0] ? l : "none");
        for (int k = 0; ids && k < ng; k++)
            fprintf (out, "%s%s", k ? "," : "", ids[k]);
        fprintf (out, "%s\n", ng > 0 ? "" : "-");
        free (l);
    }
    fflush (out);
    _exit (ferror (out) ? 2 : 0);
}

/* mpibind's plan and GPUs (gpus[i], topo device positions) for n x c,
 * restricted to allowed (NULL: whole node).  NULL with r->why on
 * failure (*fatal: mpibind failed to run at all, not on this fixture). */
static struct place_plan *mpibind_gpu_plan (const topo_t *t,
                                            const char *xml,
                                            unsigned n,
                                            unsigned c,
                                            hwloc_const_bitmap_t allowed,
                                            uint64_t *gpus,
                                            struct gres *r,
                                            bool *fatal)
{
    char *restr = NULL, line[8192];
    struct place_plan *plan = calloc (1, sizeof (*plan));
    hwloc_bitmap_t set = hwloc_bitmap_alloc ();
    int fd[2], status, seen = -1;
    unsigned got = 0;
    FILE *in = NULL;
    pid_t pid;

    *fatal = false;
    snprintf (r->why, sizeof (r->why), "mpibind failed");
    if (!plan || !set || !(plan->tasks = calloc (n, sizeof (*plan->tasks))))
        goto fail;
    plan->policy = PLACE_RANDOM;
    plan->ntasks = n;
    plan->cpus_per_task = c;
    if (allowed && hwloc_bitmap_list_asprintf (&restr, allowed) < 0)
        goto fail;
    if (pipe (fd) < 0)
        goto fail;
    fflush (stdout);
    fflush (stderr);
    if ((pid = fork ()) < 0) {
        close (fd[0]);
        close (fd[1]);
        goto fail;
    }
    if (pid == 0) {
        close (fd[0]);
        mpibind_gpu_child (xml, n, c, restr, fd[1]);
    }
    close (fd[1]);
    in = fdopen (fd[0], "r");
    while (in && fgets (line, sizeof (line), in)) {
        char cl[8192], ids[8192];
        if (sscanf (line, "G %d", &seen) == 1)
            continue;
        if (got >= n || sscanf (line, "%8191s %8191s", cl, ids) != 2)
            break;
        hwloc_bitmap_zero (set);
        if (strcmp (cl, "none") != 0)
            hwloc_bitmap_list_sscanf (set, cl);
        gpus[got] = 0;
        for (char *sv = NULL, *id = strtok_r (ids, ",", &sv);
             id && strcmp (id, "-") != 0;
             id = strtok_r (NULL, ",", &sv)) {
            pin_error_t err;
            int d = topo_dev_find (t, TOPO_DEV_GPU, id, &err);
            if (d >= 0 && d < 64)
                gpus[got] |= (uint64_t)1 << d;
        }
        int w = hwloc_bitmap_weight (set);
        if (w < (int)c) {
            snprintf (r->why,
                      sizeof (r->why),
                      "short: task %u got %d PUs",
                      got,
                      w < 0 ? 0 : w);
            goto drain;
        }
        plan->tasks[got].cpus = hwloc_bitmap_alloc ();
        plan->tasks[got].mems = hwloc_bitmap_dup (topo_nodeset (t));
        cut_one_per_core_first (t, set, c, plan->tasks[got].cpus);
        got++;
    }
drain:
    if (in)
        fclose (in);
    else
        close (fd[0]);
    while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFSIGNALED (status)) {
        snprintf (r->why,
                  sizeof (r->why),
                  "mpibind crashed (signal %d) on this topology",
                  WTERMSIG (status));
        goto fail;
    }
    if (!WIFEXITED (status) || WEXITSTATUS (status) != 0) {
        if (WIFEXITED (status) && WEXITSTATUS (status) == 2)
            *fatal = true;
        snprintf (r->why,
                  sizeof (r->why),
                  "mpibind failed (exit %d)",
                  WIFEXITED (status) ? WEXITSTATUS (status) : -1);
        goto fail;
    }
    if (got < n)
        goto fail; /* why says short */
    if (seen != (int)topo_ngpus_of (t))
        snprintf (r->note,
                  sizeof (r->note),
                  "mpibind sees %d of %u GPUs",
                  seen,
                  topo_ngpus_of (t));
    free (restr);
    hwloc_bitmap_free (set);
    return plan;
fail:
    free (restr);
    hwloc_bitmap_free (set);
    place_plan_destroy (plan);
    return NULL;
}

static FILE *gout;

/* Per plan, over the cases: sums for the summary. */
static struct {
    unsigned cases, ok, alllocal, coreshared, l2shared, nogpu, notheld, fb;
    double local;
    unsigned withlocal;
} gsum[NGP];

static void gprint (const char *fixture,
                    unsigned ngpu,
                    int gc,
                    unsigned n,
                    unsigned c,
                    unsigned held,
                    int gp,
                    const struct gres *r)
{
    fprintf (gout, "| %s | %u | %s | %u x %u, %u GPU%s | %s |",
            fixture,
            ngpu,
            gc_label[gc],
            n,
            c,
            held,
            held == 1 ? "" : "s",
            gp_name[gp]);
    gsum[gp].cases++;
    if (!r->ok) {
        fprintf (gout, " %s | | | | | | |\n", r->why);
        return;
    }
    gsum[gp].ok++;
    gsum[gp].alllocal += r->withgpu == n && r->remote == 0;
    gsum[gp].coreshared += r->core_shared > 0;
    gsum[gp].l2shared += r->l2_shared > 0;
    gsum[gp].nogpu += r->nogpu > 0;
    gsum[gp].notheld += r->notheld > 0;
    gsum[gp].fb += r->fb > 0;
    if (r->withgpu) {
        gsum[gp].local += r->local_mean;
        gsum[gp].withlocal++;
    }
    char fb[16];
    if (r->fb < 0)
        snprintf (fb, sizeof (fb), "-");
    else
        snprintf (fb, sizeof (fb), "%d", r->fb);
    char mean[16];
    if (r->withgpu)
        snprintf (mean, sizeof (mean), "%.0f %%", r->local_mean);
    else
        snprintf (mean, sizeof (mean), "-");
    fprintf (gout, " %s | %u | %u | %u | %u | %s | ",
            mean,
            r->remote,
            r->core_shared,
            r->l2_shared,
            r->numa_max,
            fb);
    const char *sep = "";
    if (r->nogpu) {
        fprintf (gout, "%u task%s without a GPU", r->nogpu, r->nogpu == 1 ? "" : "s");
        sep = "; ";
    }
    if (r->notheld) {
        fprintf (gout, "%s%u given a GPU not held", sep, r->notheld);
        sep = "; ";
    }
    if (r->note[0])
        fprintf (gout, "%s%s", sep, r->note);
    fprintf (gout, " |\n");
}

static int gpu_mode (const char *only)
{
    struct fixture *fx;
    size_t nfx;
    int status = 0;

    char *tbl = NULL;
    size_t tbllen = 0;

    if (mb.dl && mpibind_load_gpu () < 0)
        return 1;
    if (!(gout = open_memstream (&tbl, &tbllen)))
        return 1;
    if (fixtures_shared (&fx, &nfx) < 0) {
        fprintf (stderr,
                 "bench-quality: %s not found; nothing compared\n",
                 fixtures_dir ());
        return 1;
    }
    fprintf (
        gout,
        "| fixture | GPUs | case | tasks x CPUs, GPUs held | plan | "
        "GPU-local CPUs (mean) | tasks not wholly local | tasks sharing "
        "a core | tasks sharing an L2 | NUMA per task (max) | gpu-remote | "
        "note |\n"
        "|---|---:|---|---|---|---:|---:|---:|---:|---:|---:|---|\n");
    for (size_t f = 0; f < nfx; f++) {
        if (!is_xml (fx[f].name) || (only && strcmp (only, fx[f].name) != 0))
            continue;
        pin_error_t err;
        topo_t *t = topo_load (fx[f].src, 0, &err);
        if (!t) {
            fprintf (stderr, "bench-quality: %s\n", err.text);
            status = 1;
            continue;
        }
        unsigned G = topo_ngpus_of (t);
        if (G == 0 || G > 32) {
            topo_destroy (t);
            continue;
        }
        unsigned npu = topo_npus (t), ncores = topo_ndomains (t, TOPO_CORE);
        for (int gc = 0; gc < NGC; gc++) {
            unsigned held = gc == GC_HALF ? (G + 1) / 2 : G;
            unsigned n = gc == GC_TWO ? 2 * G : held;
            hwloc_bitmap_t allowed = hwloc_bitmap_alloc ();
            for (unsigned p = 0; p < npu; p++)
                if (gc != GC_HALF
                    || topo_pu (t, p)->dom[TOPO_CORE] < (ncores + 1) / 2)
                    hwloc_bitmap_set (allowed, topo_pu (t, p)->os);
            unsigned c = (unsigned)hwloc_bitmap_weight (allowed) / n;
            struct place_near near[64];
            uint64_t heldmask = 0;
            uint64_t *blk = calloc (n, sizeof (*blk));
            uint64_t *mbgpus = calloc (n, sizeof (*mbgpus));
            if (c == 0 || !blk || !mbgpus) {
                hwloc_bitmap_free (allowed);
                free (blk);
                free (mbgpus);
                continue;
            }
            for (unsigned d = 0; d < held; d++) {
                near[d].cpus = topo_dev (t, d)->cpuset;
                near[d].numa = topo_dev (t, d)->numa;
                heldmask |= (uint64_t)1 << d;
            }
            for (unsigned i = 0; i < n; i++)
                blk[i] = blockwise (i, n, held);
            for (int gp = 0; gp < NGP; gp++) {
                struct gres r = {.fb = -1};
                struct place_plan *plan = NULL;
                const uint64_t *gpus = blk;
                bool fatal = false;
                if (gp == GP_PIN) {
                    struct place_request req = {
                        .policy = PLACE_NUMA_LOCAL,
                        .ntasks = n,
                        .cpus_per_task = c,
                        .allowed = allowed,
                        .nnear = held,
                        .near = near,
                        .near_fallback = PLACE_FB_GPU_REMOTE,
                    };
                    plan = place_compute (t, &req, &err);
                    if (!plan)
                        snprintf (r.why, sizeof (r.why), "%.*s", (int)sizeof (r.why) - 1, err.text);
                } else if (gp == GP_MPIBIND) {
                    if (!mb.dl) {
                        snprintf (r.why, sizeof (r.why), "not compared");
                        continue;
                    }
                    plan = mpibind_gpu_plan (t,
                                             fx[f].src,
                                             n,
                                             c,
                                             gc == GC_HALF ? allowed : NULL,
                                             mbgpus,
                                             &r,
                                             &fatal);
                    gpus = mbgpus;
                } else {
                    if (gc == GC_HALF) {
                        snprintf (r.why,
                                  sizeof (r.why),
                                  "n/a (whole node only)");
                        gprint (fx[f].name, G, gc, n, c, held, gp, &r);
                        continue;
                    }
                    plan = peer_plan (t,
                                      fx[f].src,
                                      n,
                                      c,
                                      r.why,
                                      sizeof (r.why),
                                      &fatal);
                }
                if (fatal)
                    status = 1;
                if (plan) {
                    gmeasure (t, plan, gpus, heldmask, &r);
                    if (gp == GP_PIN) {
                        r.fb = 0;
                        for (unsigned i = 0; i < n; i++)
                            r.fb += !!(plan->tasks[i].fallback
                                       & PLACE_FB_GPU_REMOTE);
                    }
                }
                gprint (fx[f].name, G, gc, n, c, held, gp, &r);
                place_plan_destroy (plan);
            }
            hwloc_bitmap_free (allowed);
            free (blk);
            free (mbgpus);
        }
        topo_destroy (t);
    }
    fixtures_free (fx);
    fclose (gout);
    printf (
        "### Summary\n\n"
        "Cases (fixture x case) per plan: how many gave a plan (the rest: "
        "short, crashed, not applicable); of those, how many put every "
        "task's CPUs wholly local to its GPU(s), the mean GPU-local share "
        "(over the cases where a task has a GPU), and in how many a task "
        "shares a core or an L2 with another task, has no GPU, or got a "
        "GPU the step does not hold; slurm-pin's cases with a gpu-remote "
        "fallback.\n\n"
        "| plan | cases | with a plan | all tasks wholly local | mean "
        "GPU-local share | a task shares a core | a task shares an L2 | "
        "a task without a GPU | a GPU not held | gpu-remote |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int gp = 0; gp < NGP; gp++) {
        if (gp == GP_MPIBIND && !mb.dl)
            continue;
        char mean[16] = "-", fb[16] = "-";
        if (gsum[gp].withlocal)
            snprintf (mean,
                      sizeof (mean),
                      "%.0f %%",
                      gsum[gp].local / gsum[gp].withlocal);
        if (gp == GP_PIN)
            snprintf (fb, sizeof (fb), "%u", gsum[gp].fb);
        printf ("| %s | %u | %u | %u | %s | %u | %u | %u | %u | %s |\n",
                gp_name[gp],
                gsum[gp].cases,
                gsum[gp].ok,
                gsum[gp].alllocal,
                mean,
                gsum[gp].coreshared,
                gsum[gp].l2shared,
                gsum[gp].nogpu,
                gsum[gp].notheld,
                fb);
    }
    printf ("\n### Per fixture and case\n\n");
    fwrite (tbl, 1, tbllen, stdout);
    free (tbl);
    return status;
}

/* ---- main --------------------------------------------------------------- */

int main (int argc, char **argv)
{
    struct fixture *fx;
    size_t nfx;
    const char *only = NULL, *reasons_path = NULL;
    struct row *rows = NULL;
    size_t nrows = 0;
    int opt, status = 0;
    bool gpu = false;

    while ((opt = getopt (argc, argv, "D:r:f:Gh")) != -1) {
        switch (opt) {
            case 'D':
                distrib = optarg;
                break;
            case 'r':
                reasons_path = optarg;
                break;
            case 'f':
                only = optarg;
                break;
            case 'G':
                gpu = true;
                break;
            default:
                fprintf (stderr,
                         "Usage: bench-quality [-D HWLOC_DISTRIB] "
                         "[-r REASONS] [-f FIXTURE] [-G]\n");
                return opt == 'h' ? 0 : 1;
        }
    }
    if (reasons_path)
        load_reasons (reasons_path);
    const char *mblib = getenv ("MPIBIND_LIB");
    if (mblib && *mblib) {
        if (mpibind_load (mblib) < 0)
            return 1;
        ncol = NCOL;
    }
    if (gpu)
        return gpu_mode (only);
    if (fixtures_shared (&fx, &nfx) < 0) {
        fprintf (stderr,
                 "bench-quality: %s not found; nothing compared\n",
                 fixtures_dir ());
        return 1;
    }
    for (size_t f = 0; f < nfx; f++) {
        if (!is_xml (fx[f].name) || (only && strcmp (only, fx[f].name) != 0))
            continue;
        pin_error_t err;
        topo_t *t = topo_load (fx[f].src, 0, &err);
        if (!t) {
            fprintf (stderr, "bench-quality: %s\n", err.text);
            status = 1;
            continue;
        }
        unsigned ncores = topo_ndomains (t, TOPO_CORE), npus = topo_npus (t);
        for (int rq = 0; rq < NRQ; rq++) {
            unsigned n, c;
            bool dup = false;
            rq_shape (rq, ncores, &n, &c);
            for (int k = 0; k < rq; k++) {
                unsigned n2, c2;
                rq_shape (k, ncores, &n2, &c2);
                dup |= n2 == n && c2 == c;
            }
            if (dup || (unsigned long)n * c > npus)
                continue;
            struct row *nr = realloc (rows, (nrows + 1) * sizeof (*rows));
            if (!nr)
                return 1;
            rows = nr;
            struct row *w = &rows[nrows++];
            memset (w, 0, sizeof (*w));
            w->fixture = fx[f].name;
            w->rq = rq;
            w->n = n;
            w->c = c;
            struct place_request req = {.ntasks = n, .cpus_per_task = c};
            for (int col = 0; col < ncol; col++) {
                struct place_plan *plan;
                struct result *r = &w->r[col];
                if (col == COL_MPIBIND) {
                    bool fatal;
                    req.policy = PLACE_RANDOM;
                    plan = mpibind_plan (t,
                                         fx[f].src,
                                         n,
                                         c,
                                         r->why,
                                         sizeof (r->why),
                                         &fatal);
                    if (fatal)
                        status = 1;
                } else if (col == COL_PEER) {
                    bool fatal;
                    req.policy = PLACE_RANDOM;
                    plan = peer_plan (t,
                                      fx[f].src,
                                      n,
                                      c,
                                      r->why,
                                      sizeof (r->why),
                                      &fatal);
                    if (fatal)
                        status = 1;
                } else {
                    req.policy = col_policy[col];
                    plan = place_compute (t, &req, &err);
                    if (!plan)
                        snprintf (r->why,
                                  sizeof (r->why),
                                  "%.*s",
                                  (int)sizeof (r->why) - 1,
                                  err.text);
                }
                if (plan && measure (t, &req, plan, r) < 0)
                    return 1;
                place_plan_destroy (plan);
            }
        }
        topo_destroy (t);
    }
    print_summary (rows, nrows);
    print_exceptions (rows, nrows, COL_PEER);
    if (ncol > COL_MPIBIND)
        print_exceptions (rows, nrows, COL_MPIBIND);
    print_detail (rows, nrows);
    if (mb.dl)
        dlclose (mb.dl);
    free (rows);
    fixtures_free (fx);
    return status;
}
