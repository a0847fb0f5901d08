/* test_place_quality.c - placement quality (issue 10)
 *
 * Exact plans for the cases of issue 10 on the shared fixtures and the
 * hand-made hybrid machine, each with the quality placequality.c measures
 * (independently of libplace); then a sweep of every fixture with the
 * quality rules that must always hold (doc/policies.md, "Quality").
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libplace/place.h"
#include "libtest/fixtures.h"
#include "libtopo/topo.h"
#include "placecheck.h"
#include "placequality.h"

static struct fixture *fx;
static size_t nfx;
static bool have_shared;

/* A file of the shared fixtures ("ipa20.xml"), or of test/data with a
 * "data:" prefix. */
static topo_t *load (const char *name)
{
    char path[1024];
    pin_error_t err;

    if (strncmp (name, "data:", 5) == 0)
        snprintf (path, sizeof (path), "%s/%s", PLACE_TEST_DATA, name + 5);
    else if (strchr (name, ':') || strchr (name, ' '))
        snprintf (path, sizeof (path), "%s", name); /* synthetic */
    else
        snprintf (path, sizeof (path), "%s/%s", fixtures_dir (), name);
    topo_t *t = topo_load (path, 0, &err);
    ck_assert_msg (t != NULL, "%s: %s", path, err.text);
    return t;
}

static hwloc_bitmap_t parse_set (const char *s)
{
    if (!s)
        return NULL;
    hwloc_bitmap_t set = hwloc_bitmap_alloc ();
    pin_error_t err;
    ck_assert_msg (topo_list_parse (s, set, &err) == 0, "%s", err.text);
    return set;
}

/* "cpus|mems|fallback;..." of a plan */
static void plan_string (const struct place_plan *plan, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < plan->ntasks && used < len; i++) {
        char fb[128];
        char *c = topo_list_format (plan->tasks[i].cpus);
        char *m = topo_list_format (plan->tasks[i].mems);
        int rc = snprintf (buf + used,
                           len - used,
                           "%s%s|%s|%s",
                           i ? ";" : "",
                           c,
                           m,
                           place_fallback_string (plan->tasks[i].fallback,
                                                  fb,
                                                  sizeof (fb)));
        free (c);
        free (m);
        if (rc < 0)
            break;
        used += (size_t)rc;
    }
}

/* ---- exact plans of issue 10 ------------------------------------------ */

struct qcase {
    const char *machine; /* shared fixture, "data:FILE" or synthetic */
    const char *policy;
    unsigned ntasks, cpt;
    const char *busy, *allowed;
    const char *expect; /* "cpus|mems|fallback" per task, ';' between */
    /* quality: cores shared between tasks, tasks sharing avoidably (some
     * NUMA domain had room on wholly free cores), max - min tasks per
     * package, tasks mixing kinds while one kind had room */
    unsigned shared_cores, avoidable_any, pkg_imbalance, mixed_avoidable;
};

static const struct qcase qcases[] = {
    /* control: an idle node, one task, nothing to improve */
    {"ipa20.xml", "numa-local", 1, 4, NULL, NULL, "0-3|0|", 0, 0, 1, 0},

    /* 1. siblings of busy cores: cores 18-23 are wholly free (was
     * 48-54, the siblings of the busy 0-6); the seventh CPU is a sibling
     * of the task's own core 18 */
    {"epyc-corona-p2.xml",
     "numa-local",
     1,
     7,
     "0-17,24-41",
     NULL,
     "18-23,66|0|shared-l2,shared-core",
     0,
     0,
     1,
     0},
    /* tasks 4 and 5 on the idle cores 6-7 and 14-15 and their own
     * siblings (task 5 was 17-19, siblings of task 0); the tasks
     * alternate over the sockets (3. below) */
    {"32em64t-2n8c2t-pci-noio.xml",
     "numa-local",
     6,
     3,
     NULL,
     NULL,
     "0-2|0|;8-10|1|;3-5|0|;11-13|1|;6-7,22|0|shared-l2,shared-core;"
     "14-15,30|1|shared-l2,shared-core",
     0,
     0,
     0,
     0},
    /* 4 whole cores of one socket for -n 2 -c 4: 2 whole cores each, as
     * Slurm gives them (was 0-3 and 16-19: every core shared) */
    {"32em64t-2n8c2t-pci-noio.xml",
     "numa-local",
     2,
     4,
     NULL,
     "0-3,16-19",
     "0-1,16-17|0|shared-l2,shared-core;2-3,18-19|0|shared-l2,shared-core",
     0,
     0,
     0,
     0},
    /* tasks 8 and 9 on the idle cores 72-87 and 160-175 (were the
     * siblings of task 0 and of task 0's cores) */
    {"coral-lassen.xml",
     "numa-local",
     10,
     4,
     NULL,
     NULL,
     "8,16,24,32|0|;96,104,112,120|8|;40,48,56,64|0|;128,136,144,152|8|;"
     "12,20,28,36|0|;100,108,116,124|8|;44,52,60,68|0|;"
     "132,140,148,156|8|;72,76,80,84|0|shared-l2;"
     "160,164,168,172|8|shared-l2",
     0,
     0,
     0,
     0},
    /* the E-cores after the P-cores (was 1,3,8,12: siblings of task 0) */
    {"data:hybrid-4p8e.xml",
     "numa-local",
     3,
     4,
     NULL,
     NULL,
     "0,2,4,6|0|;8-9,12-13|0|shared-l2;10-11,14-15|0|shared-l2",
     0,
     0,
     0,
     0},

    /* 2. numa-spread rotates a step's tasks over the packages, then over
     * the NUMA domains inside them (all were on package 0: 0 and 14;
     * 0/14/28/42; 0/6; 0/2) */
    {"ipa20.xml", "numa-spread", 2, 1, NULL, NULL, "0|0|;56|4|", 0, 0, 0, 0},
    {"ipa20.xml",
     "numa-spread",
     4,
     1,
     NULL,
     NULL,
     "0|0|;56|4|;14|1|;70|5|",
     0,
     0,
     0,
     0},
    {"epyc-corona.xml",
     "numa-spread",
     2,
     1,
     NULL,
     NULL,
     "0|0|;24|4|",
     0,
     0,
     0,
     0},
    {"memorysidecaches.xml",
     "numa-spread",
     2,
     1,
     NULL,
     NULL,
     "0|0|;1|1|",
     0,
     0,
     0,
     0},
    /* 3. NUMA balance before best fit: among the domains with room on
     * wholly free cores, the fewest tasks of the step; a task spreads
     * only if the rest of the step ends as balanced as if it packed.
     * KNL (quadrants of 18/18/16/16 cores) -n 8 -c 16 was 1/1/2/4 tasks
     * per quadrant, now 2/2/2/2 */
    {"knl-snc4-flat-hwloc1.xml",
     "numa-local",
     8,
     16,
     NULL,
     NULL,
     "0-3,68-71,136-139,204-207|0,4|shared-l2,shared-core;"
     "18-21,86-89,154-157,222-225|1,5|shared-l2,shared-core;"
     "36-39,104-107,172-175,240-243|2,6|shared-l2,shared-core;"
     "52-55,120-123,188-191,256-259|3,7|shared-l2,shared-core;"
     "4-17,72-73|0,4|shared-l2,shared-core;"
     "22-35,90-91|1,5|shared-l2,shared-core;"
     "40-51,108-111|2,6|shared-l2,shared-core;"
     "56-67,124-127|3,7|shared-l2,shared-core",
     0,
     0,
     0,
     0},
    /* POWER9 -n 4 -c 20 was 1:3 (96-115, 120-139 and 116-117,... on
     * socket 1), now 2:2 */
    {"coral-lassen.xml",
     "numa-local",
     4,
     20,
     NULL,
     NULL,
     "8-27|0|shared-l2,shared-core;96-115|8|shared-l2,shared-core;"
     "28-29,32-33,36-37,40-41,44-45,48,52,56,60,64,68,72,76,80,84|0|"
     "shared-l2,shared-core;"
     "116-117,120-121,124-125,128-129,132-133,136,140,144,148,152,156,160,"
     "164,168,172|8|shared-l2,shared-core",
     0,
     0,
     0,
     0},
    /* kept: g4dn.metal -n 4 -c 16 is 2:2 */
    {"g4dnmetal.xml",
     "numa-local",
     4,
     16,
     NULL,
     NULL,
     "0-15|0|;24-39|1|;16-23,64-71|0|shared-l2,shared-core;"
     "40-47,88-95|1|shared-l2,shared-core",
     0,
     0,
     0,
     0},
    /* each task still spread over one domain of every package */
    {"ipa20.xml",
     "numa-spread",
     2,
     4,
     NULL,
     NULL,
     "0,14,56,70|0-1,4-5|;28,42,84,98|2-3,6-7|",
     0,
     0,
     0,
     0},

    /* 4. CPU kinds (hwloc ranks kinds by efficiency, highest = the most
     * performance: P-cores here).  hybrid-4p8e: P#0-7 are 4 P-cores x 2
     * threads (kind 1), P#8-15 8 E-cores (kind 0), an L2 per 4 E-cores.
     * -c 4: the P-cores' first threads */
    {"data:hybrid-4p8e.xml",
     "numa-local",
     1,
     4,
     NULL,
     NULL,
     "0,2,4,6|0|",
     0,
     0,
     0,
     0},
    /* -c 6 was 0,2,4,6,8,12 (both kinds): 6 whole E-cores beat the
     * P-cores, which would need SMT siblings */
    {"data:hybrid-4p8e.xml",
     "numa-local",
     1,
     6,
     NULL,
     NULL,
     "8-10,12-14|0|shared-l2",
     0,
     0,
     0,
     0},
    /* two small tasks: P-cores for the first, E-cores for the second,
     * each of one kind (was 0,2,4 and 6,8,12) */
    {"data:hybrid-4p8e.xml",
     "numa-local",
     2,
     3,
     NULL,
     NULL,
     "0,2,4|0|;8-9,12|0|shared-l2",
     0,
     0,
     0,
     0},
    /* numa-spread keeps a task to one kind with c wholly free cores:
     * the 8 E-cores for -c 6 (was 0,2,4,6,8,12), the P-cores for -c 4 */
    {"data:hybrid-4p8e.xml",
     "numa-spread",
     1,
     6,
     NULL,
     NULL,
     "8-10,12-14|0|",
     0,
     0,
     0,
     0},
    {"data:hybrid-4p8e.xml",
     "numa-spread",
     1,
     4,
     NULL,
     NULL,
     "0,2,4,6|0|",
     0,
     0,
     0,
     0},
    /* Raptor-Lake-like (derived/): 6 P-cores x 2 threads (P#0-11), 8
     * E-cores (P#12-19, an L2 per 4); -c 8 on the 8 E-cores, not 6
     * P-cores plus 2 E-cores */
    {"derived/20em64t-hybrid-1p6c2t+2ca4co1t.xml",
     "numa-local",
     1,
     8,
     NULL,
     NULL,
     "12-19|0|shared-l2",
     0,
     0,
     0,
     0},
    {"derived/20em64t-hybrid-1p6c2t+2ca4co1t.xml",
     "numa-local",
     3,
     4,
     NULL,
     NULL,
     "0,2,4,6|0|;12-13,16-17|0|shared-l2;14-15,18-19|0|shared-l2",
     0,
     0,
     0,
     0},
};

START_TEST (exact_quality)
{
    const struct qcase *e = &qcases[_i];
    topo_t *t = load (e->machine);
    hwloc_bitmap_t busy = parse_set (e->busy);
    hwloc_bitmap_t allowed = parse_set (e->allowed);
    struct place_request req = {
        .ntasks = e->ntasks,
        .cpus_per_task = e->cpt,
        .busy = busy,
        .allowed = allowed,
    };
    pin_error_t err;
    char got[2048], msg[512], qs[512];
    struct placequality q;

    ck_assert_int_eq (place_policy_parse (e->policy, &req.policy, NULL), 0);
    struct place_plan *plan = place_compute (t, &req, &err);
    ck_assert_msg (plan != NULL, "%s: %s", e->machine, err.text);
    plan_string (plan, got, sizeof (got));
    ck_assert_msg (strcmp (got, e->expect) == 0,
                   "%s %s -n %u -c %u busy %s allowed %s:\n got      %s\n "
                   "expected %s",
                   e->machine,
                   e->policy,
                   e->ntasks,
                   e->cpt,
                   e->busy ? e->busy : "-",
                   e->allowed ? e->allowed : "-",
                   got,
                   e->expect);
    ck_assert_msg (placecheck (t, &req, plan, msg, sizeof (msg)) == 0,
                   "%s %s: %s",
                   e->machine,
                   e->policy,
                   msg);
    ck_assert_int_eq (placequality (t, &req, plan, &q), 0);
    placequality_string (&q, qs, sizeof (qs));
    ck_assert_msg (q.shared_cores == e->shared_cores
                       && q.avoidable_any_numa == e->avoidable_any
                       && q.pkg_imbalance == e->pkg_imbalance
                       && q.mixed_avoidable == e->mixed_avoidable
                       && q.mems_wrong == 0,
                   "%s %s -n %u -c %u: quality %s; expected shared-cores %u "
                   "any-numa %u packages imbalance %u mixed avoidable %u",
                   e->machine,
                   e->policy,
                   e->ntasks,
                   e->cpt,
                   qs,
                   e->shared_cores,
                   e->avoidable_any,
                   e->pkg_imbalance,
                   e->mixed_avoidable);
    placequality_free (&q);
    place_plan_destroy (plan);
    hwloc_bitmap_free (busy);
    hwloc_bitmap_free (allowed);
    topo_destroy (t);
}
END_TEST

/* ---- tasks per NUMA domain for steps too long to pin CPU by CPU ------ */

struct ncase {
    const char *machine, *policy;
    unsigned ntasks, cpt;
    const char *numa_tasks; /* placequality's numa_tasks, '/' between */
};

static const struct ncase ncases[] = {
    /* one task per core of each quadrant (18/18/16/16 cores), none on a
     * core of another */
    {"knl-snc4-flat-hwloc1.xml", "numa-local", 68, 2, "18/18/16/16"},
    {"knl-snc4-flat-hwloc1.xml", "numa-local", 8, 16, "2/2/2/2"},
    {"coral-lassen.xml", "numa-local", 4, 20, "2/2"},
    {"g4dnmetal.xml", "numa-local", 4, 16, "2/2"},
};

START_TEST (numa_counts)
{
    const struct ncase *e = &ncases[_i];
    topo_t *t = load (e->machine);
    struct place_request req = {
        .ntasks = e->ntasks,
        .cpus_per_task = e->cpt,
    };
    struct placequality q;
    char got[256], msg[512], qs[512];
    size_t used = 0;

    ck_assert_int_eq (place_policy_parse (e->policy, &req.policy, NULL), 0);
    struct place_plan *plan = place_compute (t, &req, NULL);
    ck_assert_ptr_nonnull (plan);
    ck_assert_msg (placecheck (t, &req, plan, msg, sizeof (msg)) == 0,
                   "%s %s: %s",
                   e->machine,
                   e->policy,
                   msg);
    ck_assert_int_eq (placequality (t, &req, plan, &q), 0);
    got[0] = '\0';
    for (unsigned d = 0; d < q.nnuma && used < sizeof (got); d++)
        used += (size_t)snprintf (got + used,
                                  sizeof (got) - used,
                                  "%s%u",
                                  d ? "/" : "",
                                  q.numa_tasks[d]);
    ck_assert_msg (strcmp (got, e->numa_tasks) == 0 && q.shared_cores == 0,
                   "%s %s -n %u -c %u: tasks per NUMA domain %s, expected "
                   "%s (%s)",
                   e->machine,
                   e->policy,
                   e->ntasks,
                   e->cpt,
                   got,
                   e->numa_tasks,
                   placequality_string (&q, qs, sizeof (qs)));
    placequality_free (&q);
    place_plan_destroy (plan);
    topo_destroy (t);
}
END_TEST

/* ---- the sweep: every fixture, the quality rules that always hold ------ */

struct sweep_counts {
    unsigned plans;
    unsigned shared_cores, avoidable_same, avoidable_any, stacked;
    unsigned mixed_avoidable, mixed_needless, mems_wrong;
};

/* Room for numa-spread's rotation: every NUMA domain is local and inside
 * one package, and the step used fewer CPUs in every domain than it had
 * free cores (so every package stayed in every round). */
static bool spread_room (const topo_t *t,
                         const struct place_request *req,
                         const struct place_plan *plan,
                         unsigned *npkg_free)
{
    unsigned npkg = topo_ndomains (t, TOPO_PKG);
    bool *pfree = calloc (npkg + 1, sizeof (*pfree));
    unsigned nnuma = topo_ndomains (t, TOPO_NUMA);
    unsigned ncore = topo_ndomains (t, TOPO_CORE);
    unsigned *pkg = calloc (nnuma + 1, sizeof (*pkg));
    unsigned *fcores = calloc (nnuma + 1, sizeof (*fcores));
    unsigned *used = calloc (nnuma + 1, sizeof (*used));
    bool *seen = calloc (ncore + 1, sizeof (*seen));
    bool ok = pkg && fcores && used && seen && pfree;

    for (unsigned d = 0; d < nnuma; d++) {
        pkg[d] = ~0u;
        if (!topo_numa_is_local (t, d))
            ok = false;
    }
    for (unsigned i = 0; ok && i < topo_npus (t); i++) {
        const struct topo_pu *p = topo_pu (t, i);
        unsigned d = p->dom[TOPO_NUMA];
        if (pkg[d] == ~0u)
            pkg[d] = p->dom[TOPO_PKG];
        else if (pkg[d] != p->dom[TOPO_PKG])
            ok = false;
        bool free_pu =
            (!req->allowed || hwloc_bitmap_isset (req->allowed, p->os))
            && !(req->busy && hwloc_bitmap_isset (req->busy, p->os));
        if (free_pu)
            pfree[p->dom[TOPO_PKG]] = true;
        if (free_pu && !seen[p->dom[TOPO_CORE]]) {
            seen[p->dom[TOPO_CORE]] = true;
            fcores[d]++;
        }
        for (unsigned k = 0; k < plan->ntasks; k++)
            used[d] += hwloc_bitmap_isset (plan->tasks[k].cpus, p->os);
    }
    for (unsigned d = 0; ok && d < nnuma; d++)
        if (fcores[d] > 0 && used[d] >= fcores[d])
            ok = false;
    *npkg_free = 0;
    for (unsigned p = 0; ok && p < npkg; p++)
        *npkg_free += pfree[p];
    free (pfree);
    free (pkg);
    free (fcores);
    free (used);
    free (seen);
    return ok;
}

/* Is every core of one CPU kind (as on real hybrid machines)? */
static bool cores_of_one_kind (const topo_t *t)
{
    unsigned ncore = topo_ndomains (t, TOPO_CORE);
    int *kind = malloc ((ncore + 1) * sizeof (*kind));
    bool ok = true;

    ck_assert_ptr_nonnull (kind);
    for (unsigned c = 0; c < ncore; c++)
        kind[c] = -2;
    for (unsigned i = 0; i < topo_npus (t); i++) {
        const struct topo_pu *p = topo_pu (t, i);
        unsigned c = p->dom[TOPO_CORE];
        if (kind[c] == -2)
            kind[c] = p->kind;
        else if (kind[c] != p->kind)
            ok = false;
    }
    free (kind);
    return ok;
}

static void sweep_one (const char *name,
                       const topo_t *t,
                       struct place_request *req,
                       struct sweep_counts *sc)
{
    struct placequality q;
    char buf[512], msg[512];
    /* the quality of the policies: a too large request is placed by the
     * fallback, not by the policy, so refuse it (placecheck's tests cover
     * the fallback and the error) */
    req->refuse = PLACE_REFUSE_SHARE | PLACE_REFUSE_OVERSUBSCRIBE;
    struct place_plan *plan = place_compute (t, req, NULL);

    if (!plan)
        return;
    ck_assert_msg (placecheck (t, req, plan, msg, sizeof (msg)) == 0,
                   "%s: %s -n %u -c %u: %s",
                   name,
                   place_policy_name (req->policy),
                   req->ntasks,
                   req->cpus_per_task,
                   msg);
    ck_assert_int_eq (placequality (t, req, plan, &q), 0);
    sc->plans++;
    sc->shared_cores += q.shared_cores;
    sc->avoidable_same += q.avoidable_same_numa;
    sc->avoidable_any += q.avoidable_any_numa;
    sc->stacked += q.numa_stacked;
    sc->mixed_avoidable += q.mixed_avoidable;
    /* needless mixing counts for the policies that keep kinds apart */
    if (req->policy == PLACE_NUMA_LOCAL
        || (req->policy == PLACE_CACHE_SHARED && cores_of_one_kind (t)))
        sc->mixed_needless += q.mixed_needless;
    sc->mems_wrong += q.mems_wrong;
    /* numa-local never puts a task on a core holding another task or
     * step while a NUMA domain has room for it on wholly free cores, nor
     * leaves a wholly free core of its own domain unused while it
     * shares one */
    if (req->policy == PLACE_NUMA_LOCAL)
        ck_assert_msg (q.avoidable_any_numa == 0 && q.avoidable_same_numa == 0
                           && q.numa_stacked == 0,
                       "%s: numa-local -n %u -c %u: %s",
                       name,
                       req->ntasks,
                       req->cpus_per_task,
                       placequality_string (&q, buf, sizeof (buf)));
    /* every policy that chooses cores (numa-local, numa-spread,
     * cache-shared) never puts a task on a core that holds another
     * task's or step's PU while a wholly free core of the same NUMA
     * domain stays unused (doc/policies.md, "Sharing a core") */
    if (req->policy == PLACE_NUMA_SPREAD || req->policy == PLACE_CACHE_SHARED)
        ck_assert_msg (q.avoidable_same_numa == 0,
                       "%s: %s -n %u -c %u: a "
                       "task shares a core while a wholly free core of its "
                       "NUMA domain stays unused: %s",
                       name,
                       place_policy_name (req->policy),
                       req->ntasks,
                       req->cpus_per_task,
                       placequality_string (&q, buf, sizeof (buf)));
    /* numa-spread rotates the tasks of a step over the packages: with
     * no more tasks than packages with a free CPU, one CPU each, every task on
     * its own package; and the tasks per package never differ by more than
     * one. Where room allows: the packages hold the NUMA domains (not one
     * domain over several packages) and no domain ran out of free cores
     * during the step. */
    unsigned npkg_free;
    if (req->policy == PLACE_NUMA_SPREAD
        && spread_room (t, req, plan, &npkg_free)) {
        unsigned npkg = topo_ndomains (t, TOPO_PKG);
        if (req->cpus_per_task == 1 && req->ntasks <= npkg_free)
            for (unsigned p = 0; p < npkg; p++)
                ck_assert_msg (q.pkg_tasks[p] <= 1,
                               "%s: numa-spread -n %u "
                               "-c 1: %u tasks on package %u",
                               name,
                               req->ntasks,
                               q.pkg_tasks[p],
                               p);
        ck_assert_msg (q.pkg_imbalance <= 1,
                       "%s: numa-spread -n %u -c %u: "
                       "%s",
                       name,
                       req->ntasks,
                       req->cpus_per_task,
                       placequality_string (&q, buf, sizeof (buf)));
    }
    /* CPU kinds: numa-local and cache-shared keep a task to one kind
     * where one kind has room, after keeping it off shared cores
     * (separation comes first: a whole core of another kind beats a
     * sibling of a busy core of the preferred one) */
    if (req->policy == PLACE_NUMA_LOCAL)
        ck_assert_msg (q.mixed_needless == 0,
                       "%s: numa-local -n %u -c %u: "
                       "a task mixed CPU kinds needlessly: %s",
                       name,
                       req->ntasks,
                       req->cpus_per_task,
                       placequality_string (&q, buf, sizeof (buf)));
    /* cache-shared fills whole cores first: on a machine whose cores mix
     * kinds (fakecpukinds.xml: P#0 and P#2 of one core differ) a whole
     * core may have to mix them, so that case is left out */
    if (req->policy == PLACE_CACHE_SHARED && cores_of_one_kind (t))
        ck_assert_msg (q.mixed_needless == 0,
                       "%s: cache-shared -n %u -c %u: "
                       "a task mixed CPU kinds needlessly: %s",
                       name,
                       req->ntasks,
                       req->cpus_per_task,
                       placequality_string (&q, buf, sizeof (buf)));
    /* memory is local to the CPUs for every placing policy */
    ck_assert_msg (q.mems_wrong == 0,
                   "%s: %s -n %u -c %u: %s",
                   name,
                   place_policy_name (req->policy),
                   req->ntasks,
                   req->cpus_per_task,
                   placequality_string (&q, buf, sizeof (buf)));
    placequality_free (&q);
    place_plan_destroy (plan);
}

static void sweep (const char *name, const topo_t *t)
{
    static const unsigned ns[] = {1, 2, 3, 4, 6, 8, 10};
    static const unsigned cs[] = {1, 2, 3, 4, 7, 8, 16};
    struct sweep_counts sc = {0};
    unsigned npu = topo_npus (t);

    for (int bv = 0; bv < 3; bv++) {
        /* busy: none, an earlier numa-local step of a quarter, or one
         * thread of every third core (a neighbour given single threads) */
        hwloc_bitmap_t busy = NULL;
        if (bv == 2) {
            unsigned last = ~0u;
            busy = hwloc_bitmap_alloc ();
            ck_assert_ptr_nonnull (busy);
            for (unsigned i = 0; i < npu; i++) {
                const struct topo_pu *pu = topo_pu (t, i);
                if (pu->dom[TOPO_CORE] != last && pu->dom[TOPO_CORE] % 3 == 0)
                    hwloc_bitmap_set (busy, pu->os);
                last = pu->dom[TOPO_CORE];
            }
        }
        if (bv == 1) {
            struct place_request r0 = {
                .policy = PLACE_NUMA_LOCAL,
                .ntasks = 1,
                .cpus_per_task = npu / 4 ? npu / 4 : 1,
            };
            struct place_plan *p0 = place_compute (t, &r0, NULL);
            ck_assert_ptr_nonnull (p0);
            busy = hwloc_bitmap_dup (p0->tasks[0].cpus);
            place_plan_destroy (p0);
        }
        for (size_t ni = 0; ni < sizeof (ns) / sizeof (ns[0]); ni++) {
            for (size_t ci = 0; ci < sizeof (cs) / sizeof (cs[0]); ci++) {
                for (size_t p = 0; p < PLACECHECK_NPOLICIES; p++) {
                    struct place_request req = {
                        .policy = placecheck_policies[p],
                        .ntasks = ns[ni],
                        .cpus_per_task = cs[ci],
                        .busy = busy,
                        .seed = 7,
                    };
                    sweep_one (name, t, &req, &sc);
                }
            }
        }
        hwloc_bitmap_free (busy);
    }
    printf (
        "# %s: %u plans; shared cores %u, avoidable same-numa %u "
        "any-numa %u, stacked %u, mixed kinds avoidable %u "
        "(needless in numa-local/cache-shared %u)\n",
        name,
        sc.plans,
        sc.shared_cores,
        sc.avoidable_same,
        sc.avoidable_any,
        sc.stacked,
        sc.mixed_avoidable,
        sc.mixed_needless);
}

START_TEST (fixture_quality)
{
    pin_error_t err;
    topo_t *t = topo_load (fx[_i].src, 0, &err);
    ck_assert_msg (t != NULL, "%s: %s", fx[_i].name, err.text);
    sweep (fx[_i].name, t);
    topo_destroy (t);
}
END_TEST

/* Sparse numberings (issue 18): the machines of a POWER node with SMT2
 * of SMT8 online (core k = P#8k, 8k+1: 0-1, 8-9, ...), a POWER9 with the
 * first 2 cores of each socket taken by the OS (P# from 8, SMT4), and a
 * round-robin one with a gap, as hwloc synthetic strings with explicit
 * PU indexes: the rules look at the topology, never at the numbers. */
static const struct {
    const char *name;
    const char *shape;          /* synthetic string without the PU level */
    unsigned npkg, ncore, nthr; /* cores per package, threads per core */
    unsigned stride, base;      /* P# of thread t of global core k:
                                   base + stride * k + t */
    bool rr;                    /* round robin: core k of package p is
                                   global core npkg * k + p */
} sparse[] = {
    {"power8-2s-smt2-of-8",
     "pack:2 [numa] l3:1 l2:10 core:1",
     2,
     10,
     2,
     8,
     0,
     false},
    {"power9-2s-smt4-os-cores",
     "pack:2 [numa] l3:10 l2:1 core:2",
     2,
     20,
     4,
     4,
     8,
     false},
    {"power8-2s-smt2-rr",
     "pack:2 [numa] l3:1 l2:10 core:1",
     2,
     10,
     2,
     8,
     16,
     true},
    {"snc2-sparse",
     "pack:2 l3:1 group:2 [numa] l2:4 core:1",
     2,
     8,
     2,
     4,
     0,
     false},
};

START_TEST (sparse_quality)
{
    char desc[8192];
    int n = snprintf (desc,
                      sizeof (desc),
                      "%s pu:%u(indexes=",
                      sparse[_i].shape,
                      sparse[_i].nthr);
    unsigned np = sparse[_i].npkg, nc = sparse[_i].ncore;

    /* logical order: package, core, thread */
    for (unsigned p = 0; p < np; p++)
        for (unsigned k = 0; k < nc; k++)
            for (unsigned th = 0; th < sparse[_i].nthr; th++) {
                unsigned g = sparse[_i].rr ? np * k + p : p * nc + k;
                n += snprintf (desc + n,
                               sizeof (desc) - (size_t)n,
                               "%s%u",
                               p + k + th ? "," : "",
                               sparse[_i].base + sparse[_i].stride * g + th);
            }
    snprintf (desc + n, sizeof (desc) - (size_t)n, ")");
    ck_assert_uint_lt ((unsigned)n + 2, sizeof (desc));
    topo_t *t = load (desc);
    ck_assert_uint_eq (topo_npus (t), np * nc * sparse[_i].nthr);
    sweep (sparse[_i].name, t);
    topo_destroy (t);
}
END_TEST

START_TEST (hybrid_quality)
{
    topo_t *t = load ("data:hybrid-4p8e.xml");
    sweep ("hybrid-4p8e.xml", t);
    topo_destroy (t);
}
END_TEST

/* hwloc 2.10 to 2.12 report a homogeneous AMD part as several CPU kinds
 * that differ only in FrequencyMaxMHz (hwloc #690).  The derived
 * test/data/epyc-rome-bogus-kinds.xml is epyc-corona-p2.xml with five such
 * kinds: one kind to slurm-pin, so that no kind rule splits a socket. */
START_TEST (bogus_kinds_one_kind)
{
    topo_t *t = load ("data:epyc-rome-bogus-kinds.xml");

    ck_assert_uint_eq (topo_npus (t), 96);
    for (unsigned i = 0; i < topo_npus (t); i++)
        ck_assert_msg (topo_pu (t, i)->kind == 0,
                       "P#%u: kind %d, expected 0 (one kind)",
                       topo_pu (t, i)->os,
                       topo_pu (t, i)->kind);
    sweep ("epyc-rome-bogus-kinds.xml", t);
    topo_destroy (t);
}
END_TEST

/* ... and every plan is the one of the original machine (one kind). */
START_TEST (bogus_kinds_same_plans)
{
    static const char *policies[] = {"numa-local",
                                     "numa-spread",
                                     "cache-shared"};
    static const unsigned shapes[][2] = {
        {1, 1},
        {1, 2},
        {1, 3},
        {1, 6},
        {1, 7},
        {2, 4},
        {4, 6},
        {3, 16},
        {8, 6},
        {12, 8},
        {48, 2},
        {96, 1},
    };
    static const char *busy[] = {NULL, "0-11", "1,13,25,29,44,61,77,92"};
    topo_t *a = load ("epyc-corona-p2.xml");
    topo_t *b = load ("data:epyc-rome-bogus-kinds.xml");

    for (size_t p = 0; p < 3; p++)
        for (size_t k = 0; k < sizeof (shapes) / sizeof (shapes[0]); k++)
            for (size_t u = 0; u < 3; u++) {
                hwloc_bitmap_t bs = parse_set (busy[u]);
                struct place_request req = {
                    .ntasks = shapes[k][0],
                    .cpus_per_task = shapes[k][1],
                    .busy = bs,
                };
                struct place_plan *pa, *pb;
                char ga[8192], gb[8192];
                pin_error_t err;

                ck_assert_int_eq (place_policy_parse (policies[p],
                                                      &req.policy,
                                                      NULL),
                                  0);
                pa = place_compute (a, &req, &err);
                ck_assert_msg (pa != NULL, "%s", err.text);
                pb = place_compute (b, &req, &err);
                ck_assert_msg (pb != NULL, "%s", err.text);
                plan_string (pa, ga, sizeof (ga));
                plan_string (pb, gb, sizeof (gb));
                ck_assert_msg (!strcmp (ga, gb),
                               "%s -n %u -c %u busy %s:\n original    %s\n "
                               "bogus kinds %s",
                               policies[p],
                               shapes[k][0],
                               shapes[k][1],
                               busy[u] ? busy[u] : "-",
                               ga,
                               gb);
                place_plan_destroy (pa);
                place_plan_destroy (pb);
                hwloc_bitmap_free (bs);
            }
    topo_destroy (a);
    topo_destroy (b);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("place_quality");
    TCase *tc = tcase_create ("quality");

    have_shared = fixtures_shared (&fx, &nfx) == 0;
    tcase_set_timeout (tc, 300);
    tcase_add_test (tc, hybrid_quality);
    tcase_add_test (tc, bogus_kinds_one_kind);
    tcase_add_loop_test (tc,
                         sparse_quality,
                         0,
                         (int)(sizeof (sparse) / sizeof (sparse[0])));
    if (have_shared) {
        tcase_add_loop_test (tc,
                             exact_quality,
                             0,
                             (int)(sizeof (qcases) / sizeof (qcases[0])));
        tcase_add_loop_test (tc,
                             numa_counts,
                             0,
                             (int)(sizeof (ncases) / sizeof (ncases[0])));
        tcase_add_loop_test (tc, fixture_quality, 0, (int)nfx);
        tcase_add_test (tc, bogus_kinds_same_plans);
    } else
        printf (
            "# SKIP: %s not found; shared fixture quality tests "
            "skipped\n",
            fixtures_dir ());
    suite_add_tcase (s, tc);
    int rc = placecheck_run_tap (s);
    if (have_shared)
        fixtures_free (fx);
    return rc;
}
