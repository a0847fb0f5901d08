/* test_place.c - placement policies on the project's own machines
 *
 * Exact plans written by hand for the canonical cases (see the comment of
 * each machine for its numbering), the error messages, policy names and
 * fallback strings, the random policy's determinism and spread, and the
 * invariants of placecheck.c on every machine of fixtures_own[].  Needs
 * nothing outside the repository.
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

#include "libplace/place.h"
#include "libtest/fixtures.h"
#include "libtopo/topo.h"
#include "placecheck.h"

static topo_t *load_own (const char *name)
{
    pin_error_t err;
    for (const struct fixture *f = fixtures_own; f->name; f++) {
        if (strcmp (f->name, name) == 0) {
            topo_t *t = topo_load (f->src, 0, &err);
            ck_assert_msg (t != NULL, "%s: %s", name, err.text);
            return t;
        }
    }
    ck_abort_msg ("no own fixture '%s'", name);
    return NULL;
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

/* "cpus|mems|fallback" of one task */
static void task_string (const struct place_task *t, char *buf, size_t len)
{
    char fb[128];
    char *c = topo_list_format (t->cpus);
    char *m = topo_list_format (t->mems);
    snprintf (buf,
              len,
              "%s|%s|%s",
              c,
              m,
              place_fallback_string (t->fallback, fb, sizeof (fb)));
    free (c);
    free (m);
}

/* ---- exact plans ---------------------------------------------------------
 *
 * own-2s-smt-linux: 2 packages = 2 NUMA nodes, one L3 each, 4 cores with
 *   private L2, 2 threads; core j of package p has PUs 4p+j and 8+4p+j.
 * own-2s-smt-roundrobin: the same machine; package 0 has the even PUs,
 *   core j of package p has PUs 2j+p and 8+2j+p.
 * own-2s-snc2: 2 packages x 2 NUMA under one L3 x 4 cores x 2 threads;
 *   core j (0-15) has PUs j and 16+j, NUMA n has cores 4n..4n+3.
 * own-epyc-like: 2 packages x 2 NUMA x 2 L3 x 3 cores x 2 threads; core j
 *   (0-23) has PUs j and 24+j; NUMA n has cores 6n..6n+5, L3 3 cores.
 * own-knl-like: 1 package, 4 NUMA x 4 L2 x 2 cores x 4 threads, logical
 *   numbering: NUMA n = 32n..32n+31, L2 u = 8u..8u+7, core = 4 PUs.
 * own-4s-nosmt: 4 packages = 4 NUMA, 6 cores each, PU = core, 0-23.
 * own-tiny: 1 PU.
 */
struct exact {
    const char *machine;
    const char *policy;
    unsigned ntasks, cpt;
    const char *busy;    /* NULL: none */
    const char *allowed; /* NULL: the whole machine */
    uint64_t seed;
    const char *expect[6]; /* per task "cpus|mems|fallback" */
};

static const struct exact exact[] = {
    /* numa-local: one node, distinct L2, fewest L3, best fit */
    {"own-2s-smt-linux", "numa-local", 1, 4, NULL, NULL, 0, {"0-3|0|"}},
    /* four tasks of 4 on 8 cores: one core per CPU would leave the last
     * two tasks on the siblings of the first two; each gets 2 whole
     * cores instead (issue 10) */
    {"own-2s-smt-linux",
     "numa-local",
     4,
     4,
     NULL,
     NULL,
     0,
     {"0-1,8-9|0|shared-l2,shared-core",
      "4-5,12-13|1|shared-l2,shared-core",
      "2-3,10-11|0|shared-l2,shared-core",
      "6-7,14-15|1|shared-l2,shared-core"}},
    /* the tasks alternate over the NUMA nodes (the fewest tasks of the
     * step first, issue 10), then fill the hole beside the first */
    {"own-2s-smt-linux",
     "numa-local",
     4,
     2,
     NULL,
     NULL,
     0,
     {"0-1|0|", "4-5|1|", "2-3|0|", "6-7|1|"}},
    {"own-2s-smt-linux",
     "numa-local",
     2,
     8,
     NULL,
     NULL,
     0,
     {"0-3,8-11|0|shared-l2,shared-core",
      "4-7,12-15|1|shared-l2,shared-core"}},
    {"own-2s-smt-linux",
     "numa-local",
     1,
     6,
     NULL,
     NULL,
     0,
     {"0-3,8-9|0|shared-l2,shared-core"}},
    {"own-2s-smt-linux",
     "numa-local",
     1,
     10,
     NULL,
     NULL,
     0,
     {"0-9|0-1|multi-numa,shared-l2,shared-core"}},
    /* node 0 has 4 L2 units left, but two beside busy siblings */
    {"own-2s-smt-linux", "numa-local", 1, 4, "0-1", NULL, 0, {"4-7|1|"}},
    {"own-2s-smt-linux", "numa-local", 1, 3, "0", NULL, 0, {"1-3|0|"}},
    {"own-2s-smt-linux", "numa-local", 1, 4, NULL, "4-7,12-15", 0, {"4-7|1|"}},
    {"own-2s-smt-roundrobin",
     "numa-local",
     1,
     4,
     NULL,
     NULL,
     0,
     {"0,2,4,6|0|"}},
    {"own-2s-snc2", "numa-local", 1, 4, NULL, NULL, 0, {"0-3|0|"}},
    /* one node with siblings before two nodes */
    {"own-2s-snc2",
     "numa-local",
     1,
     6,
     NULL,
     NULL,
     0,
     {"0-3,16-17|0|shared-l2,shared-core"}},
    {"own-epyc-like", "numa-local", 1, 3, NULL, NULL, 0, {"0-2|0|"}},
    /* the second task on the other NUMA node (balance before best fit) */
    {"own-epyc-like", "numa-local", 2, 3, NULL, NULL, 0, {"0-2|0|", "6-8|1|"}},
    {"own-epyc-like", "numa-local", 2, 4, NULL, NULL, 0, {"0-3|0|", "6-9|1|"}},
    /* best fit: the L3 with 2 clean cores left, not the one with 3 */
    {"own-epyc-like", "numa-local", 1, 2, "0", NULL, 0, {"1-2|0|"}},
    {"own-knl-like", "numa-local", 1, 4, NULL, NULL, 0, {"0,8,16,24|0|"}},
    {"own-knl-like",
     "numa-local",
     1,
     8,
     NULL,
     NULL,
     0,
     {"0,4,8,12,16,20,24,28|0|shared-l2"}},
    {"own-knl-like",
     "numa-local",
     2,
     4,
     NULL,
     NULL,
     0,
     {"0,8,16,24|0|", "32,40,48,56|1|"}},
    /* distinct cores: wholly free ones in another node before the
     * siblings of the first task */
    {"own-knl-like",
     "numa-local",
     2,
     8,
     NULL,
     NULL,
     0,
     {"0,4,8,12,16,20,24,28|0|shared-l2",
      "32,36,40,44,48,52,56,60|1|shared-l2"}},
    {"own-knl-like",
     "numa-local",
     2,
     6,
     NULL,
     NULL,
     0,
     {"0,4,8,12,16,24|0|shared-l2", "32,36,40,44,48,56|1|shared-l2"}},
    {"own-4s-nosmt",
     "numa-local",
     1,
     7,
     NULL,
     NULL,
     0,
     {"0-6|0-1|multi-numa"}},
    {"own-4s-nosmt",
     "numa-local",
     5,
     4,
     NULL,
     NULL,
     0,
     {"0-3|0|", "6-9|1|", "12-15|2|", "18-21|3|", "4-5,10-11|0-1|multi-numa"}},

    /* cache-shared: fewest wholly free cores, each filled */
    {"own-2s-smt-linux", "cache-shared", 1, 4, NULL, NULL, 0, {"0-1,8-9|0|"}},
    {"own-2s-smt-linux",
     "cache-shared",
     2,
     3,
     NULL,
     NULL,
     0,
     {"0-1,8|0|", "2-3,10|0|"}},
    {"own-2s-smt-linux", "cache-shared", 1, 4, "8", NULL, 0, {"1-2,9-10|0|"}},
    /* node 0 would need a partial core: node 1 has whole ones */
    {"own-2s-smt-linux", "cache-shared", 1, 7, "0", NULL, 0, {"4-7,12-14|1|"}},
    {"own-2s-smt-linux",
     "cache-shared",
     1,
     8,
     "0,4",
     NULL,
     0,
     {"1-3,5,8-11|0-1|multi-numa,partial-core"}},
    {"own-2s-smt-roundrobin",
     "cache-shared",
     1,
     4,
     NULL,
     NULL,
     0,
     {"0,2,8,10|0|"}},
    {"own-2s-snc2", "cache-shared", 1, 4, NULL, NULL, 0, {"0-1,16-17|0|"}},
    {"own-epyc-like", "cache-shared", 1, 6, NULL, NULL, 0, {"0-2,24-26|0|"}},
    /* the L3 whose wholly free cores reach 6 PUs */
    {"own-epyc-like", "cache-shared", 1, 6, "0", NULL, 0, {"3-5,27-29|0|"}},
    {"own-knl-like", "cache-shared", 1, 6, NULL, NULL, 0, {"0-5|0|"}},
    {"own-4s-nosmt", "cache-shared", 1, 3, NULL, NULL, 0, {"0-2|0|"}},

    /* numa-spread: every node, counts differ by at most one */
    {"own-2s-smt-linux", "numa-spread", 1, 4, NULL, NULL, 0, {"0-1,4-5|0-1|"}},
    {"own-2s-smt-linux", "numa-spread", 2, 1, NULL, NULL, 0, {"0|0|", "4|1|"}},
    {"own-2s-smt-linux", "numa-spread", 1, 6, NULL, NULL, 0, {"0-2,4-6|0-1|"}},
    {"own-2s-smt-linux",
     "numa-spread",
     1,
     12,
     NULL,
     NULL,
     0,
     {"0-9,12-13|0-1|shared-core"}},
    {"own-2s-smt-linux",
     "numa-spread",
     1,
     4,
     "0-3",
     NULL,
     0,
     {"4-5,8-9|0-1|"}},
    {"own-2s-smt-linux",
     "numa-spread",
     1,
     4,
     "4-7,12-14",
     NULL,
     0,
     {"0-2,15|0-1|unbalanced"}},
    {"own-2s-smt-roundrobin",
     "numa-spread",
     1,
     4,
     NULL,
     NULL,
     0,
     {"0-3|0-1|"}},
    /* the other package before the second node of the first */
    {"own-2s-snc2", "numa-spread", 1, 2, NULL, NULL, 0, {"0,8|0,2|"}},
    {"own-2s-snc2", "numa-spread", 1, 4, NULL, NULL, 0, {"0,4,8,12|0-3|"}},
    {"own-epyc-like",
     "numa-spread",
     1,
     8,
     NULL,
     NULL,
     0,
     {"0-1,6-7,12-13,18-19|0-3|"}},
    {"own-knl-like",
     "numa-spread",
     1,
     8,
     NULL,
     NULL,
     0,
     {"0,8,32,40,64,72,96,104|0-3|"}},
    {"own-4s-nosmt", "numa-spread", 1, 4, NULL, NULL, 0, {"0,6,12,18|0-3|"}},

    /* random: splitmix64 from the seed, the same on every libc */
    {"own-2s-smt-linux",
     "random",
     2,
     4,
     NULL,
     NULL,
     42,
     {"1,3,8,10|0|", "2,6-7,13|0-1|"}},

    /* none: the allowed set, busy or not */
    {"own-2s-smt-linux",
     "none",
     2,
     4,
     "0-3",
     NULL,
     0,
     {"0-15|0-1|", "0-15|0-1|"}},
    {"own-2s-smt-linux", "none", 1, 2, NULL, "2-3,100", 0, {"2-3|0-1|"}},
    /* none ignores busy in its size check too: it is checked against the
     * allocation (allowed), not allowed minus busy.  14 of the 16 PUs are
     * busy and -n 2 -c 8 still gets the allowed set for each task. */
    {"own-2s-smt-linux",
     "none",
     2,
     8,
     "0-13",
     NULL,
     0,
     {"0-15|0-1|", "0-15|0-1|"}},
    {"own-2s-smt-linux",
     "none",
     1,
     8,
     "0-15",
     "0-3,8-11",
     0,
     {"0-3,8-11|0-1|"}},

    /* too large (doc/policies.md, "Too large"): every allowed PU gets a
     * task before any gets a second one; a free PU before a busy one; the
     * core with the fewest tasks (and busy PUs); the lowest logical
     * index.  Allowed 0-1,8-9 is 2 cores x 2 threads: core 0 = 0,8. */
    {"own-tiny",
     "numa-local",
     2,
     1,
     NULL,
     NULL,
     0,
     {"0|0|oversubscribed", "0|0|oversubscribed"}},
    {"own-tiny",
     "none",
     3,
     1,
     NULL,
     NULL,
     0,
     {"0|0|oversubscribed", "0|0|oversubscribed", "0|0|oversubscribed"}},
    /* -n 6 on 4 threads: 0,1,8,9 once (cores alternate), then 0 and 1:
     * the threads hold 2,2,1,1 tasks, each core 3 */
    {"own-2s-smt-linux",
     "numa-local",
     6,
     1,
     NULL,
     "0-1,8-9",
     0,
     {"0|0|oversubscribed",
      "1|0|oversubscribed",
      "8|0|",
      "9|0|",
      "0|0|oversubscribed",
      "1|0|oversubscribed"}},
    {"own-2s-smt-linux",
     "cache-shared",
     5,
     1,
     NULL,
     "0-1,8-9",
     0,
     {"0|0|oversubscribed", "1|0|", "8|0|", "9|0|", "0|0|oversubscribed"}},
    /* a task larger than the allocation gets all of it */
    {"own-2s-smt-linux",
     "numa-spread",
     2,
     8,
     NULL,
     "0-1,8-9",
     0,
     {"0-1,8-9|0|oversubscribed", "0-1,8-9|0|oversubscribed"}},
    {"own-2s-smt-linux",
     "random",
     3,
     8,
     NULL,
     NULL,
     5,
     {"0-7|0-1|oversubscribed", "8-15|0-1|", "0-7|0-1|oversubscribed"}},
    /* every allowed PU busy (an --overlap step attaching to a full job) */
    {"own-2s-smt-linux",
     "numa-local",
     2,
     1,
     "0-1,8-9",
     "0-1,8-9",
     0,
     {"0|0|shared-with-step", "1|0|shared-with-step"}},
    /* the free core first, then the busy one */
    {"own-2s-smt-linux",
     "numa-local",
     3,
     1,
     "0,8",
     "0-1,8-9",
     0,
     {"1|0|", "9|0|", "0|0|shared-with-step"}},
    {"own-2s-smt-linux",
     "numa-spread",
     2,
     2,
     "0,8",
     "0-1,8-9",
     0,
     {"1,9|0|", "0,8|0|shared-with-step"}},
    /* both: 5 on 4 threads, 9 busy: core 1 counts it, so the second
     * task goes to 8 (logical order 0,8,1,9 breaks the tie) */
    {"own-2s-smt-linux",
     "numa-local",
     5,
     1,
     "9",
     "0-1,8-9",
     0,
     {"0|0|oversubscribed",
      "8|0|",
      "1|0|",
      "9|0|shared-with-step",
      "0|0|oversubscribed"}},

    {"own-tiny", "numa-local", 1, 1, NULL, NULL, 0, {"0|0|"}},
    {"own-tiny", "numa-spread", 1, 1, NULL, NULL, 0, {"0|0|"}},
    {"own-tiny", "cache-shared", 1, 1, NULL, NULL, 0, {"0|0|"}},
    {"own-tiny", "random", 1, 1, NULL, NULL, 7, {"0|0|"}},
    {"own-tiny", "none", 1, 1, NULL, NULL, 0, {"0|0|"}},
};

START_TEST (exact_plans)
{
    const struct exact *e = &exact[_i];
    topo_t *t = load_own (e->machine);
    hwloc_bitmap_t busy = parse_set (e->busy);
    hwloc_bitmap_t allowed = parse_set (e->allowed);
    struct place_request req = {
        .ntasks = e->ntasks,
        .cpus_per_task = e->cpt,
        .busy = busy,
        .allowed = allowed,
        .seed = e->seed,
    };
    pin_error_t err;
    char got[256], msg[512];

    ck_assert_int_eq (place_policy_parse (e->policy, &req.policy, NULL), 0);
    struct place_plan *plan = place_compute (t, &req, &err);
    ck_assert_msg (plan != NULL,
                   "%s %s -n %u -c %u: %s",
                   e->machine,
                   e->policy,
                   e->ntasks,
                   e->cpt,
                   err.text);
    ck_assert_uint_eq (plan->ntasks, e->ntasks);
    for (unsigned i = 0; i < e->ntasks; i++) {
        task_string (&plan->tasks[i], got, sizeof (got));
        ck_assert_msg (e->expect[i] && strcmp (got, e->expect[i]) == 0,
                       "%s %s -n %u -c %u busy %s allowed %s: task %u is "
                       "%s, expected %s",
                       e->machine,
                       e->policy,
                       e->ntasks,
                       e->cpt,
                       e->busy ? e->busy : "-",
                       e->allowed ? e->allowed : "-",
                       i,
                       got,
                       e->expect[i] ? e->expect[i] : "(none)");
    }
    /* the hand-written plans obey the invariants too */
    ck_assert_msg (placecheck (t, &req, plan, msg, sizeof (msg)) == 0,
                   "%s %s: %s",
                   e->machine,
                   e->policy,
                   msg);
    place_plan_destroy (plan);
    hwloc_bitmap_free (busy);
    hwloc_bitmap_free (allowed);
    topo_destroy (t);
}
END_TEST

/* ---- errors ------------------------------------------------------------- */

/* The size errors below are asked with req.refuse set (pin.conf
 * Oversubscribe=refuse, ShareWithSteps=refuse; slurm-pin plan --strict);
 * without it those requests get the fallback (refuse_one below). */

/* none ignores busy PUs, so its size check is against the allowed set:
 * a request that only busy PUs make too large is placed by none. */
static const char none_fits[] = "(none places it)";

struct bad {
    const char *machine;
    unsigned ntasks, cpt;
    const char *busy, *allowed;
    const char *message;
    const char *none_message; /* NULL: the same; none_fits: a plan */
};

static const struct bad bad[] = {
    {"own-2s-smt-linux",
     0,
     1,
     NULL,
     NULL,
     "-n 0: number of tasks must be at least 1",
     NULL},
    {"own-2s-smt-linux",
     1,
     0,
     NULL,
     NULL,
     "-c 0: CPUs per task must be at least 1",
     NULL},
    {"own-2s-smt-linux",
     2,
     8,
     "0-3",
     "0-15",
     "request of 2 tasks x 8 CPUs = 16 CPUs exceeds the 12 available "
     "(allowed 0-15 minus busy 0-3)",
     none_fits},
    {"own-2s-smt-linux",
     1,
     17,
     NULL,
     NULL,
     "request of 1 task x 17 CPUs = 17 CPUs exceeds the 16 available "
     "(allowed 0-15)",
     NULL},
    /* busy outside allowed does not count */
    {"own-2s-smt-linux",
     3,
     2,
     "0-1,8",
     "0-3,8-9",
     "request of 3 tasks x 2 CPUs = 6 CPUs exceeds the 3 available "
     "(allowed 0-3,8-9 minus busy 0-1,8)",
     none_fits},
    /* too large for the allowed set itself: none names no busy list */
    {"own-2s-smt-linux",
     1,
     5,
     "0-1",
     "0-3",
     "request of 1 task x 5 CPUs = 5 CPUs exceeds the 2 available "
     "(allowed 0-3 minus busy 0-1)",
     "request of 1 task x 5 CPUs = 5 CPUs exceeds the 4 available "
     "(allowed 0-3)"},
    {"own-2s-smt-linux",
     2,
     8,
     "0",
     NULL,
     "request of 2 tasks x 8 CPUs = 16 CPUs exceeds the 15 available "
     "(allowed 0-15 minus busy 0)",
     none_fits},
    {"own-2s-smt-linux",
     1,
     1,
     NULL,
     "100-200",
     "request of 1 task x 1 CPU = 1 CPU exceeds the 0 available "
     "(allowed none)",
     NULL},
    /* no overflow: the product is computed in 64 bits */
    {"own-2s-smt-linux",
     UINT_MAX,
     UINT_MAX,
     NULL,
     NULL,
     "request of 4294967295 tasks x 4294967295 CPUs = "
     "18446744065119617025 CPUs exceeds the 16 available (allowed 0-15)",
     NULL},
    {"own-2s-smt-linux",
     65536,
     65536,
     NULL,
     NULL,
     "request of 65536 tasks x 65536 CPUs = 4294967296 CPUs exceeds the "
     "16 available (allowed 0-15)",
     NULL},
    {"own-tiny",
     2,
     1,
     NULL,
     NULL,
     "request of 2 tasks x 1 CPU = 2 CPUs exceeds the 1 available "
     "(allowed 0)",
     NULL},
};

START_TEST (errors)
{
    const struct bad *b = &bad[_i];
    topo_t *t = load_own (b->machine);
    hwloc_bitmap_t busy = parse_set (b->busy);
    hwloc_bitmap_t allowed = parse_set (b->allowed);

    for (size_t p = 0; p < PLACECHECK_NPOLICIES; p++) {
        struct place_request req = {
            .policy = placecheck_policies[p],
            .ntasks = b->ntasks,
            .cpus_per_task = b->cpt,
            .busy = busy,
            .allowed = allowed,
            .refuse = PLACE_REFUSE_SHARE | PLACE_REFUSE_OVERSUBSCRIBE,
        };
        pin_error_t err = {{0}};
        const char *message = b->message;
        if (req.policy == PLACE_NONE && b->none_message)
            message = b->none_message;
        errno = 0;
        struct place_plan *plan = place_compute (t, &req, &err);
        if (message == none_fits) {
            /* none: every task gets allowed ∩ topology, busy or not */
            hwloc_bitmap_t want = hwloc_bitmap_dup (topo_cpuset (t));
            if (allowed)
                hwloc_bitmap_and (want, want, allowed);
            ck_assert_msg (plan != NULL,
                           "none -n %u -c %u: %s",
                           b->ntasks,
                           b->cpt,
                           err.text);
            ck_assert_uint_eq (plan->ntasks, b->ntasks);
            for (unsigned i = 0; i < plan->ntasks; i++)
                ck_assert (hwloc_bitmap_isequal (plan->tasks[i].cpus, want));
            hwloc_bitmap_free (want);
            place_plan_destroy (plan);
            continue;
        }
        ck_assert_ptr_null (plan);
        ck_assert_int_eq (errno, EINVAL);
        ck_assert_str_eq (err.text, message);
        /* a NULL errp is allowed */
        ck_assert_ptr_null (place_compute (t, &req, NULL));
    }
    hwloc_bitmap_free (busy);
    hwloc_bitmap_free (allowed);
    topo_destroy (t);
}
END_TEST

/* Each refuse bit alone refuses only the fallback it names. */
static const struct {
    const char *machine;
    unsigned ntasks, cpt;
    const char *busy, *allowed;
    unsigned refuse;
    const char *message; /* NULL: a plan */
} refusals[] = {
    /* sharing only: refused by REFUSE_SHARE alone */
    {"own-2s-smt-linux",
     2,
     1,
     "0-1",
     "0-1",
     PLACE_REFUSE_SHARE,
     "request of 2 tasks x 1 CPU = 2 CPUs exceeds the 0 available "
     "(allowed 0-1 minus busy 0-1)"},
    {"own-2s-smt-linux", 2, 1, "0-1", "0-1", PLACE_REFUSE_OVERSUBSCRIBE, NULL},
    /* oversubscribing only: refused by REFUSE_OVERSUBSCRIBE alone */
    {"own-tiny",
     2,
     1,
     NULL,
     NULL,
     PLACE_REFUSE_OVERSUBSCRIBE,
     "request of 2 tasks x 1 CPU = 2 CPUs exceeds the 1 available "
     "(allowed 0)"},
    {"own-tiny", 2, 1, NULL, NULL, PLACE_REFUSE_SHARE, NULL},
    /* both needed: either bit refuses */
    {"own-2s-smt-linux",
     3,
     1,
     "0",
     "0-1",
     PLACE_REFUSE_SHARE,
     "request of 3 tasks x 1 CPU = 3 CPUs exceeds the 1 available "
     "(allowed 0-1 minus busy 0)"},
    {"own-2s-smt-linux",
     3,
     1,
     "0",
     "0-1",
     PLACE_REFUSE_OVERSUBSCRIBE,
     "request of 3 tasks x 1 CPU = 3 CPUs exceeds the 1 available "
     "(allowed 0-1 minus busy 0)"},
    /* no allowed PU at all: no fallback can help */
    {"own-2s-smt-linux",
     1,
     1,
     NULL,
     "100-200",
     0,
     "request of 1 task x 1 CPU = 1 CPU exceeds the 0 available "
     "(allowed none)"},
    /* far too many tasks to oversubscribe */
    {"own-2s-smt-linux",
     PLACE_MAX_TASKS + 1,
     1,
     NULL,
     NULL,
     0,
     "-n 4097: more than 4096 tasks cannot share the 16 allowed CPUs; "
     "ask for fewer tasks"},
    {"own-2s-smt-linux",
     UINT_MAX,
     UINT_MAX,
     NULL,
     NULL,
     0,
     "-n 4294967295: more than 4096 tasks cannot share the 16 allowed "
     "CPUs; ask for fewer tasks"},
    {"own-2s-smt-linux", PLACE_MAX_TASKS, 1, NULL, NULL, 0, NULL},
};

START_TEST (refuse_one)
{
    topo_t *t = load_own (refusals[_i].machine);
    hwloc_bitmap_t busy = parse_set (refusals[_i].busy);
    hwloc_bitmap_t allowed = parse_set (refusals[_i].allowed);
    struct place_request req = {
        .policy = PLACE_NUMA_LOCAL,
        .ntasks = refusals[_i].ntasks,
        .cpus_per_task = refusals[_i].cpt,
        .busy = busy,
        .allowed = allowed,
        .refuse = refusals[_i].refuse,
    };
    pin_error_t err = {{0}};
    char msg[512];

    errno = 0;
    struct place_plan *plan = place_compute (t, &req, &err);
    if (refusals[_i].message) {
        ck_assert_ptr_null (plan);
        ck_assert_int_eq (errno, EINVAL);
        ck_assert_str_eq (err.text, refusals[_i].message);
    } else {
        ck_assert_msg (plan != NULL, "%s", err.text);
        ck_assert_msg (placecheck (t, &req, plan, msg, sizeof (msg)) == 0,
                       "%s",
                       msg);
    }
    place_plan_destroy (plan);
    hwloc_bitmap_free (busy);
    hwloc_bitmap_free (allowed);
    topo_destroy (t);
}
END_TEST

START_TEST (bad_arguments)
{
    topo_t *t = load_own ("own-tiny");
    struct place_request req = {.policy = PLACE_NUMA_LOCAL,
                                .ntasks = 1,
                                .cpus_per_task = 1};
    pin_error_t err;

    errno = 0;
    ck_assert_ptr_null (place_compute (NULL, &req, &err));
    ck_assert_int_eq (errno, EINVAL);
    ck_assert_ptr_null (place_compute (t, NULL, &err));
    req.policy = (enum place_policy)42;
    ck_assert_ptr_null (place_compute (t, &req, &err));
    ck_assert_str_eq (err.text,
                      "policy 42: unknown policy; known: "
                      "numa-local, numa-spread, cache-shared, random, "
                      "dynamic, none");
    errno = 1234;
    place_plan_destroy (NULL);
    ck_assert_int_eq (errno, 1234);
    topo_destroy (t);
}
END_TEST

/* ---- names -------------------------------------------------------------- */

static const struct {
    const char *name;
    int policy; /* -1: rejected */
    const char *message;
} names[] = {
    {"numa-local", PLACE_NUMA_LOCAL, NULL},
    {"numa-spread", PLACE_NUMA_SPREAD, NULL},
    {"cache-shared", PLACE_CACHE_SHARED, NULL},
    {"random", PLACE_RANDOM, NULL},
    {"none", PLACE_NONE, NULL},
    {"numa-locl",
     -1,
     "'numa-locl': unknown policy; known: numa-local, "
     "numa-spread, cache-shared, random, dynamic, none"},
    {"NUMA-LOCAL",
     -1,
     "'NUMA-LOCAL': unknown policy; known: numa-local, "
     "numa-spread, cache-shared, random, dynamic, none"},
    {"numa-local ",
     -1,
     "'numa-local ': unknown policy; known: "
     "numa-local, numa-spread, cache-shared, random, dynamic, none"},
    {"none\n",
     -1,
     "'none?': unknown policy; known: numa-local, "
     "numa-spread, cache-shared, random, dynamic, none"},
    {"",
     -1,
     "'': empty policy name; known: numa-local, numa-spread, "
     "cache-shared, random, dynamic, none"},
    {"dynamic", PLACE_DYNAMIC, NULL},
    {"dynamik",
     -1,
     "'dynamik': unknown policy; known: numa-local, "
     "numa-spread, cache-shared, random, dynamic, none"},
};

START_TEST (policy_names)
{
    enum place_policy p = PLACE_RANDOM;
    pin_error_t err = {{0}};
    int rc = place_policy_parse (names[_i].name, &p, &err);

    if (names[_i].policy >= 0) {
        ck_assert_int_eq (rc, 0);
        ck_assert_int_eq (p, names[_i].policy);
        ck_assert_str_eq (place_policy_name (p), names[_i].name);
    } else {
        ck_assert_int_eq (rc, -1);
        ck_assert_int_eq (errno, EINVAL);
        ck_assert_str_eq (err.text, names[_i].message);
        ck_assert_int_eq (p, PLACE_RANDOM); /* untouched */
    }
}
END_TEST

START_TEST (policy_names_hostile)
{
    char longname[4096];
    pin_error_t err;
    enum place_policy p;

    ck_assert_int_eq (place_policy_parse (NULL, &p, &err), -1);
    memset (longname, 'x', sizeof (longname) - 1);
    longname[sizeof (longname) - 1] = '\0';
    ck_assert_int_eq (place_policy_parse (longname, &p, &err), -1);
    ck_assert_str_eq (err.text,
                      "'xxxxxxxxxxxxxxxx...': policy name longer "
                      "than 64 characters; known: numa-local, numa-spread, "
                      "cache-shared, random, dynamic, none");
    ck_assert_str_eq (place_policy_list (),
                      "numa-local, numa-spread, cache-shared, random, "
                      "dynamic, none");
    ck_assert_str_eq (place_policy_name ((enum place_policy)99), "unknown");
    ck_assert_int_eq (place_policy_parse ("none", NULL, NULL), 0);
}
END_TEST

static const struct {
    unsigned mask;
    size_t size;
    const char *expect;
} fbs[] = {
    {0, 64, ""},
    {PLACE_FB_MULTI_NUMA, 64, "multi-numa"},
    {PLACE_FB_SHARED_CORE | PLACE_FB_MULTI_NUMA, 64, "multi-numa,shared-core"},
    {63,
     128,
     "multi-numa,shared-l2,shared-core,unbalanced,partial-core,"
     "no-local-numa"},
    {127,
     128,
     "multi-numa,shared-l2,shared-core,unbalanced,partial-core,"
     "no-local-numa,shared-with-task"},
    {1023,
     160,
     "multi-numa,shared-l2,shared-core,unbalanced,partial-core,"
     "no-local-numa,shared-with-task,mixed-kinds,oversubscribed,"
     "shared-with-step"},
    {PLACE_FB_MIXED_KINDS, 64, "mixed-kinds"},
    {PLACE_FB_OVERSUBSCRIBED | PLACE_FB_SHARED_WITH_STEP,
     64,
     "oversubscribed,shared-with-step"},
    {PLACE_FB_NO_LOCAL_NUMA | PLACE_FB_GPU_REMOTE | PLACE_FB_NIC_REMOTE,
     64,
     "no-local-numa,gpu-remote,nic-remote"},
    {PLACE_FB_NO_LOCAL_NUMA | 8192 | 16384, 64, "no-local-numa"},
    {PLACE_FB_ALLOC_ONE_NUMA | PLACE_FB_SHARED_CORE,
     64,
     "shared-core,alloc-one-numa"},
    /* too small: whole names only, always terminated */
    {PLACE_FB_MULTI_NUMA | PLACE_FB_SHARED_L2, 16, "multi-numa"},
    {PLACE_FB_MULTI_NUMA, 4, ""},
};

START_TEST (fallback_strings)
{
    char buf[256];
    memset (buf, 'X', sizeof (buf));
    const char *s = place_fallback_string (fbs[_i].mask, buf, fbs[_i].size);
    ck_assert_ptr_eq (s, buf);
    ck_assert_str_eq (buf, fbs[_i].expect);
    ck_assert_int_eq (buf[fbs[_i].size], 'X'); /* nothing past n */
    ck_assert_ptr_null (place_fallback_string (1, NULL, 10));
}
END_TEST

/* ---- random ------------------------------------------------------------- */

/* Each PU about equally often over many seeds (deterministic: the seeds
 * are fixed, so this cannot flake). */
START_TEST (random_uniform)
{
    topo_t *t = load_own ("own-2s-smt-linux");
    unsigned hits[16] = {0};
    const unsigned nseeds = 3200;

    for (unsigned s = 0; s < nseeds; s++) {
        struct place_request req = {.policy = PLACE_RANDOM,
                                    .ntasks = 2,
                                    .cpus_per_task = 1,
                                    .seed = s};
        struct place_plan *plan = place_compute (t, &req, NULL);
        ck_assert_ptr_nonnull (plan);
        hits[hwloc_bitmap_first (plan->tasks[0].cpus)]++;
        hits[hwloc_bitmap_first (plan->tasks[1].cpus)]++;
        place_plan_destroy (plan);
    }
    for (int i = 0; i < 16; i++)
        ck_assert_msg (hits[i] > 300 && hits[i] < 500,
                       "PU %d drawn %u times of %u (expected about 400)",
                       i,
                       hits[i],
                       2 * nseeds);
    topo_destroy (t);
}
END_TEST

START_TEST (random_seeds)
{
    topo_t *t = load_own ("own-knl-like");
    char first[256], again[256];
    unsigned same = 0;

    for (unsigned s = 1; s <= 100; s++) {
        struct place_request req = {.policy = PLACE_RANDOM,
                                    .ntasks = 1,
                                    .cpus_per_task = 8,
                                    .seed = s};
        struct place_plan *a = place_compute (t, &req, NULL);
        struct place_plan *b = place_compute (t, &req, NULL);
        req.seed = s + 1000;
        struct place_plan *c = place_compute (t, &req, NULL);
        ck_assert (a && b && c);
        task_string (&a->tasks[0], first, sizeof (first));
        task_string (&b->tasks[0], again, sizeof (again));
        ck_assert_str_eq (first, again);
        if (hwloc_bitmap_isequal (a->tasks[0].cpus, c->tasks[0].cpus))
            same++;
        place_plan_destroy (a);
        place_plan_destroy (b);
        place_plan_destroy (c);
    }
    ck_assert_uint_eq (same, 0);
    topo_destroy (t);
}
END_TEST

/* ---- place_alloc_confines ----------------------------------------------- */

START_TEST (alloc_confines)
{
    static const struct {
        const char *fixture;
        enum place_policy policy;
        const char *allowed;
        unsigned want;
    } cases[] = {
        /* own-2s-smt-linux: NUMA 0 = PUs 0-3,8-11, NUMA 1 = 4-7,12-15 */
        {"own-2s-smt-linux",
         PLACE_NUMA_SPREAD,
         "0-3",
         PLACE_FB_ALLOC_ONE_NUMA},
        {"own-2s-smt-linux",
         PLACE_NUMA_SPREAD,
         "0,8",
         PLACE_FB_ALLOC_ONE_NUMA},
        {"own-2s-smt-linux", PLACE_NUMA_SPREAD, "0,4", 0},
        {"own-2s-smt-linux", PLACE_NUMA_SPREAD, NULL, 0},
        {"own-2s-smt-linux", PLACE_NUMA_LOCAL, "0-3", 0},
        {"own-2s-smt-linux", PLACE_CACHE_SHARED, "0-3", 0},
        {"own-tiny", PLACE_NUMA_SPREAD, "0", 0},
    };
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        topo_t *t = load_own (cases[i].fixture);
        hwloc_bitmap_t a = parse_set (cases[i].allowed);
        ck_assert_msg (place_alloc_confines (t, cases[i].policy, a)
                           == cases[i].want,
                       "case %zu",
                       i);
        hwloc_bitmap_free (a);
        topo_destroy (t);
    }
    ck_assert_uint_eq (place_alloc_confines (NULL, PLACE_NUMA_SPREAD, NULL),
                       0);
}
END_TEST

/* ---- invariants on every own machine ------------------------------------ */

START_TEST (own_invariants)
{
    const struct fixture *f = &fixtures_own[_i];
    pin_error_t err;
    topo_t *t = topo_load (f->src, 0, &err);
    ck_assert_msg (t != NULL, "%s: %s", f->name, err.text);
    placecheck_grid (f->name, t, 0xdeadbeefULL + (uint64_t)_i);
    topo_destroy (t);
}
END_TEST

#define N(a) ((int)(sizeof (a) / sizeof ((a)[0])))

int main (void)
{
    int nown = 0;
    while (fixtures_own[nown].name)
        nown++;

    Suite *s = suite_create ("place");
    TCase *tc = tcase_create ("place");
    tcase_set_timeout (tc, 120);
    tcase_add_loop_test (tc, exact_plans, 0, N (exact));
    tcase_add_test (tc, alloc_confines);
    tcase_add_loop_test (tc, errors, 0, N (bad));
    tcase_add_loop_test (tc, refuse_one, 0, N (refusals));
    tcase_add_test (tc, bad_arguments);
    tcase_add_loop_test (tc, policy_names, 0, N (names));
    tcase_add_test (tc, policy_names_hostile);
    tcase_add_loop_test (tc, fallback_strings, 0, N (fbs));
    tcase_add_test (tc, random_uniform);
    tcase_add_test (tc, random_seeds);
    tcase_add_loop_test (tc, own_invariants, 0, nown);
    suite_add_tcase (s, tc);
    return placecheck_run_tap (s);
}
