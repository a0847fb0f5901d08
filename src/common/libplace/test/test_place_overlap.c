/* test_place_overlap.c - --overlap steps on busy PUs (issue 18, item 9)
 *
 * A step too large for the free PUs (an --overlap step in a job whose
 * steps hold every CPU) is placed on the least-loaded allowed PUs, the
 * load of a busy PU being how many other steps hold it (req.load).
 *  - exact: hand-checked plans with holder counts, on the project's own
 *    machines and on shared fixtures (POWER SMT4 with its sparse first
 *    PU, an SNC machine);
 *  - sequence: on every machine (own and shared), 40 one-CPU --overlap
 *    steps of every placing policy arrive one after the other in a job of
 *    2 PUs and of 3 cores, each seeing the earlier ones as busy with
 *    their counts: after every step the steps per allowed PU differ by at
 *    most one.  Without the counts (a busy bitmap, as before) the same
 *    sequence piles onto the lowest PU: the test fails there.
 * Every plan also goes through placecheck().
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

static struct fixture *fx; /* own machines, then the shared ones */
static size_t nfx;

static const char *src_of (const char *name)
{
    for (size_t i = 0; i < nfx; i++)
        if (strcmp (fx[i].name, name) == 0)
            return fx[i].src;
    return NULL;
}

static hwloc_bitmap_t set_of (const char *list)
{
    hwloc_bitmap_t s = hwloc_bitmap_alloc ();
    ck_assert_ptr_nonnull (s);
    ck_assert_int_eq (topo_list_parse (list, s, NULL), 0);
    return s;
}

/* ---- exact plans with holder counts ------------------------------------ */

struct exact {
    const char *machine;
    const char *policy;
    unsigned ntasks, cpt;
    const char *allowed;
    const char *busy;
    const char *load;      /* "pu:count,..." of the busy PUs; NULL: none */
    const char *expect[4]; /* per task "cpus|fallback" */
};

static const struct exact exact[] = {
    /* own-2s-smt-linux, allowed 0-1,8-9: core 0 = {0,8}, core 1 = {1,9},
     * logical order 0,8,1,9.  Without counts: the lowest logical PU. */
    {"own-2s-smt-linux",
     "numa-local",
     1,
     1,
     "0-1,8-9",
     "0-1,8-9",
     NULL,
     {"0|shared-with-step"}},
    /* 0 held by 3 steps, 8 by 2, 1 and 9 by 1: PU 1 (core 1 holds 2 in
     * all, the tie of 1 and 9 goes to the lower logical index) */
    {"own-2s-smt-linux",
     "numa-local",
     1,
     1,
     "0-1,8-9",
     "0-1,8-9",
     "0:3,8:2,1:1,9:1",
     {"1|shared-with-step"}},
    /* two tasks: 1, then 9 (held by 1, fewer than 8's 2) */
    {"own-2s-smt-linux",
     "numa-spread",
     2,
     1,
     "0-1,8-9",
     "0-1,8-9",
     "0:3,8:2,1:1,9:1",
     {"1|shared-with-step", "9|shared-with-step"}},
    /* a task of 2: the two least held PUs */
    {"own-2s-smt-linux",
     "cache-shared",
     1,
     2,
     "0-1,8-9",
     "0-1,8-9",
     "0:1,8:4,1:2,9:3",
     {"0-1|shared-with-step"}},
    /* a free PU still comes first, whatever the counts of the busy ones */
    {"own-2s-smt-linux",
     "numa-local",
     2,
     1,
     "0-1,8-9",
     "0-1,8",
     "0:1,1:1,8:1",
     {"9|", "0|shared-with-step"}},
    /* equal counts: as without counts (the core with fewer holders) */
    {"own-2s-smt-linux",
     "numa-local",
     3,
     1,
     "0-1,8-9",
     "0-1,8-9",
     "0:2,8:2,1:2,9:2",
     {"0|shared-with-step", "1|shared-with-step", "8|shared-with-step"}},
    /* POWER9 SMT4, first usable PU 8: one core 8-11 allowed, all held */
    {"coral-lassen.xml",
     "numa-local",
     1,
     1,
     "8-11",
     "8-11",
     "8:5,9:2,10:2,11:3",
     {"9|shared-with-step"}},
    /* the step's own tasks first: task 1 takes the two PUs task 0 left,
     * however many steps hold them */
    {"coral-lassen.xml",
     "numa-spread",
     2,
     2,
     "8-11",
     "8-11",
     "8:5,9:2,10:2,11:3",
     {"9-10|shared-with-step", "8,11|shared-with-step"}},
    /* SNC: the 2 first PUs of the two NUMA domains of package 0 */
    {"ipa20.xml",
     "numa-local",
     1,
     1,
     "0,14",
     "0,14",
     "0:4,14:3",
     {"14|shared-with-step"}},
};

START_TEST (exact_plans)
{
    const struct exact *e = &exact[_i];
    const char *src = src_of (e->machine);
    pin_error_t err;

    if (!src) {
        printf ("# %s not found: case %d skipped\n", e->machine, _i);
        return;
    }
    topo_t *t = topo_load (src, 0, &err);
    ck_assert_msg (t != NULL, "%s: %s", e->machine, err.text);
    hwloc_bitmap_t allowed = set_of (e->allowed);
    hwloc_bitmap_t busy = set_of (e->busy);
    unsigned load[256] = {0};
    struct place_request req = {
        .ntasks = e->ntasks,
        .cpus_per_task = e->cpt,
        .allowed = allowed,
        .busy = busy,
        .load = e->load ? load : NULL,
        .nload = 256,
    };
    for (const char *p = e->load; p && *p;) {
        unsigned pu, n;
        int used;
        ck_assert_int_eq (sscanf (p, "%u:%u%n", &pu, &n, &used), 2);
        ck_assert_uint_lt (pu, 256);
        load[pu] = n;
        p += used;
        p += *p == ',';
    }
    ck_assert_int_eq (place_policy_parse (e->policy, &req.policy, NULL), 0);
    struct place_plan *plan = place_compute (t, &req, &err);
    ck_assert_msg (plan != NULL, "%s: %s", e->machine, err.text);
    for (unsigned i = 0; i < e->ntasks; i++) {
        char got[256], fb[128];
        char *c = topo_list_format (plan->tasks[i].cpus);
        snprintf (got,
                  sizeof (got),
                  "%s|%s",
                  c,
                  place_fallback_string (plan->tasks[i].fallback,
                                         fb,
                                         sizeof (fb)));
        free (c);
        ck_assert_msg (strcmp (got, e->expect[i]) == 0,
                       "%s %s -n %u -c %u "
                       "allowed %s busy %s load %s: task %u is %s, expected "
                       "%s",
                       e->machine,
                       e->policy,
                       e->ntasks,
                       e->cpt,
                       e->allowed,
                       e->busy,
                       e->load ? e->load : "-",
                       i,
                       got,
                       e->expect[i]);
    }
    char msg[512];
    ck_assert_msg (placecheck (t, &req, plan, msg, sizeof (msg)) == 0,
                   "%s: %s",
                   e->machine,
                   msg);
    place_plan_destroy (plan);
    hwloc_bitmap_free (allowed);
    hwloc_bitmap_free (busy);
    topo_destroy (t);
}
END_TEST

/* ---- sequences of --overlap steps --------------------------------------- */

#define NSTEPS 40

/* Allowed set v of machine t: 0 the first 2 PUs in logical order (a -n2
 * job), 1 every PU of the first 3 cores. */
static hwloc_bitmap_t job_set (const topo_t *t, int v)
{
    hwloc_bitmap_t s = hwloc_bitmap_alloc ();
    unsigned n = topo_npus (t);
    unsigned cores = 0, last = ~0u;

    ck_assert_ptr_nonnull (s);
    for (unsigned i = 0; i < n; i++) {
        const struct topo_pu *p = topo_pu (t, i);
        if (v == 0) {
            if (hwloc_bitmap_weight (s) < 2)
                hwloc_bitmap_set (s, p->os);
            continue;
        }
        if (p->dom[TOPO_CORE] != last) {
            last = p->dom[TOPO_CORE];
            cores++;
        }
        if (cores <= 3)
            hwloc_bitmap_set (s, p->os);
    }
    return s;
}

/* Run NSTEPS one-CPU steps of `policy` one after the other on `allowed`,
 * each seeing the earlier ones as busy (with their counts when
 * with_load).  Returns the largest max - min of steps per allowed PU seen
 * after any step. */
static unsigned run_sequence (const char *name,
                              const topo_t *t,
                              enum place_policy policy,
                              hwloc_const_bitmap_t allowed,
                              bool with_load)
{
    int lastpu = hwloc_bitmap_last (topo_cpuset (t));
    unsigned nload = (unsigned)lastpu + 1;
    unsigned *load = calloc (nload, sizeof (*load));
    hwloc_bitmap_t busy = hwloc_bitmap_alloc ();
    unsigned worst = 0;

    ck_assert_ptr_nonnull (load);
    ck_assert_ptr_nonnull (busy);
    for (unsigned s = 0; s < NSTEPS; s++) {
        struct place_request req = {
            .policy = policy,
            .ntasks = 1,
            .cpus_per_task = 1,
            .allowed = allowed,
            .busy = busy,
            .seed = s + 1,
            .load = with_load ? load : NULL,
            .nload = nload,
        };
        pin_error_t err;
        char msg[512];
        struct place_plan *plan = place_compute (t, &req, &err);
        ck_assert_msg (plan != NULL, "%s: step %u: %s", name, s, err.text);
        ck_assert_msg (placecheck (t, &req, plan, msg, sizeof (msg)) == 0,
                       "%s: %s step %u: %s",
                       name,
                       place_policy_name (policy),
                       s,
                       msg);
        int pu = hwloc_bitmap_first (plan->tasks[0].cpus);
        ck_assert_int_ge (pu, 0);
        ck_assert (hwloc_bitmap_isset (allowed, (unsigned)pu));
        load[pu]++;
        hwloc_bitmap_set (busy, (unsigned)pu);
        place_plan_destroy (plan);

        unsigned lo = ~0u, hi = 0;
        int a;
        hwloc_bitmap_foreach_begin (a, allowed) if ((unsigned)a < nload)
        {
            lo = load[a] < lo ? load[a] : lo;
            hi = load[a] > hi ? load[a] : hi;
        }
        hwloc_bitmap_foreach_end ();
        if (hi - lo > worst)
            worst = hi - lo;
    }
    free (load);
    hwloc_bitmap_free (busy);
    return worst;
}

static const enum place_policy seq_policies[] = {
    PLACE_NUMA_LOCAL,
    PLACE_NUMA_SPREAD,
    PLACE_CACHE_SHARED,
    PLACE_RANDOM,
};

START_TEST (overlap_sequence)
{
    const struct fixture *f = &fx[_i];
    pin_error_t err;
    topo_t *t = topo_load (f->src, 0, &err);

    ck_assert_msg (t != NULL, "%s: %s", f->name, err.text);
    for (int v = 0; v < 2; v++) {
        hwloc_bitmap_t allowed = job_set (t, v);
        if (hwloc_bitmap_weight (allowed) < 2) {
            hwloc_bitmap_free (allowed);
            continue;
        }
        for (size_t p = 0;
             p < sizeof (seq_policies) / sizeof (seq_policies[0]);
             p++) {
            unsigned w =
                run_sequence (f->name, t, seq_policies[p], allowed, true);
            ck_assert_msg (w <= 1,
                           "%s: %d %s --overlap steps on %d PUs: "
                           "steps per PU differ by %u",
                           f->name,
                           NSTEPS,
                           place_policy_name (seq_policies[p]),
                           hwloc_bitmap_weight (allowed),
                           w);
        }
        /* the busy bitmap alone piled them up (the defect): so this test
         * fails without the counts */
        unsigned w0 =
            run_sequence (f->name, t, PLACE_NUMA_LOCAL, allowed, false);
        ck_assert_msg (w0 > 1,
                       "%s: without holder counts the steps stay "
                       "balanced (%u): the sequence tests nothing",
                       f->name,
                       w0);
        hwloc_bitmap_free (allowed);
    }
    topo_destroy (t);
}
END_TEST

int main (void)
{
    struct fixture *shared = NULL;
    size_t nshared = 0, nown = 0;

    if (fixtures_shared (&shared, &nshared) < 0) {
        printf ("# SKIP: %s not found; only the own machines\n",
                fixtures_dir ());
        nshared = 0;
    }
    while (fixtures_own[nown].name)
        nown++;
    nfx = nown + nshared;
    fx = calloc (nfx + 1, sizeof (*fx));
    if (!fx)
        return 1;
    memcpy (fx, fixtures_own, nown * sizeof (*fx));
    if (nshared)
        memcpy (fx + nown, shared, nshared * sizeof (*fx));

    Suite *s = suite_create ("place_overlap");
    TCase *tc = tcase_create ("overlap");
    tcase_set_timeout (tc, 300);
    tcase_add_loop_test (tc,
                         exact_plans,
                         0,
                         (int)(sizeof (exact) / sizeof (exact[0])));
    tcase_add_loop_test (tc, overlap_sequence, 0, (int)nfx);
    suite_add_tcase (s, tc);
    int rc = placecheck_run_tap (s);
    free (fx);
    if (shared)
        fixtures_free (shared);
    return rc;
}
