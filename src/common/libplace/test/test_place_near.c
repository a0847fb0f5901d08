/* test_place_near.c - tasks near their GPUs or NIC (issue 24, item 3)
 *
 *  - exact: hand-checked cases on real fixtures (g4dnmetal: 8 T4, 4 per
 *    socket; epyc-corona: 4 GPUs on NUMA 1, 2, 5, 7 with a SLIT of 16 in
 *    a package and 32 across): block-wise and explicit task masks, fewer
 *    tasks than GPUs, a partial node without CPUs near the GPU (nearest
 *    domain by distance, gpu-remote), a request too large for the free
 *    PUs, policies that do not pin;
 *  - every fixture with GPUs: random allocations of whole cores, random
 *    GPU subsets, task counts and sizes (seeded): every plan passes
 *    placecheck(), tasks are disjoint and inside the allocation, a task is
 *    marked gpu-remote exactly when a CPU of it is not local to its GPUs,
 *    and when every GPU's locality is disjoint from the others' and holds
 *    enough free allowed PUs for its tasks, no task is gpu-remote.
 * Without the shared fixtures: TAP SKIP.
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

static struct fixture *fx;
static size_t nfx;

static topo_t *load (const char *name)
{
    pin_error_t e = {{0}};
    for (size_t i = 0; i < nfx; i++)
        if (strcmp (fx[i].name, name) == 0) {
            topo_t *t = topo_load (fx[i].src, 0, &e);
            ck_assert_msg (t != NULL, "%s: %s", name, e.text);
            return t;
        }
    ck_abort_msg ("fixture %s not found", name);
    return NULL;
}

/* near[] for the GPUs of t listed in idx (hwloc GPU indexes) */
static unsigned gpus_near (const topo_t *t,
                           const unsigned *idx,
                           unsigned n,
                           struct place_near *near)
{
    for (unsigned k = 0; k < n; k++) {
        char spec[16];
        snprintf (spec, sizeof (spec), "%u", idx[k]);
        int i = topo_dev_find (t, TOPO_DEV_GPU, spec, NULL);
        ck_assert_int_ge (i, 0);
        near[k].cpus = topo_dev (t, (unsigned)i)->cpuset;
        near[k].numa = topo_dev (t, (unsigned)i)->numa;
    }
    return n;
}

static char *fmt (hwloc_const_bitmap_t s)
{
    static char buf[8][256];
    static int k;
    char *l = topo_list_format (s);
    char *b = buf[k++ % 8];
    snprintf (b, 256, "%s", l ? l : "?");
    free (l);
    return b;
}

/* What every plan with devices must be: tasks of cpus_per_task PUs in the
 * allocation (the whole allocation for policies that do not pin),
 * pairwise disjoint when the request fits the free PUs, memory on their
 * PUs' NUMA nodes.  placecheck()'s policy rules (spread over the whole
 * allocation, balance) do not hold: device locality overrides them. */
static void check_plan (const topo_t *t,
                        const struct place_request *req,
                        const struct place_plan *p)
{
    hwloc_bitmap_t all = hwloc_bitmap_alloc ();
    bool fits = (uint64_t)req->ntasks * req->cpus_per_task
                <= placecheck_navail (t, req);
    bool pins = req->policy != PLACE_NONE && req->policy != PLACE_DYNAMIC;

    ck_assert_uint_eq (p->ntasks, req->ntasks);
    for (unsigned i = 0; i < p->ntasks; i++) {
        hwloc_const_bitmap_t c = p->tasks[i].cpus;
        if (req->allowed)
            ck_assert_msg (hwloc_bitmap_isincluded (c, req->allowed),
                           "task %u on %s outside the allocation",
                           i,
                           fmt (c));
        if (pins && fits) {
            ck_assert_int_eq (hwloc_bitmap_weight (c), (int)req->cpus_per_task);
            ck_assert_msg (!hwloc_bitmap_intersects (c, all),
                           "task %u on %s shares a PU",
                           i,
                           fmt (c));
            if (req->busy)
                ck_assert (!hwloc_bitmap_intersects (c, req->busy));
        }
        hwloc_bitmap_or (all, all, c);
        ck_assert (!hwloc_bitmap_iszero (p->tasks[i].mems));
    }
    hwloc_bitmap_free (all);
}

/* g4dnmetal: 8 tasks x 4 CPUs, 8 GPUs: task i next to GPU i */
START_TEST (test_one_task_per_gpu)
{
    topo_t *t = load ("g4dnmetal.xml");
    unsigned idx[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    struct place_near near[8];
    struct place_request req = {
        .policy = PLACE_NUMA_LOCAL,
        .ntasks = 8,
        .cpus_per_task = 4,
        .nnear = gpus_near (t, idx, 8, near),
        .near = near,
        .near_fallback = PLACE_FB_GPU_REMOTE,
    };
    pin_error_t e = {{0}};
    struct place_plan *p = place_compute (t, &req, &e);

    ck_assert_msg (p != NULL, "%s", e.text);
    check_plan (t, &req, p);
    for (unsigned i = 0; i < 8; i++) {
        ck_assert_msg (hwloc_bitmap_isincluded (p->tasks[i].cpus,
                                                near[i].cpus),
                       "task %u on %s, GPU %u is near %s",
                       i,
                       fmt (p->tasks[i].cpus),
                       i,
                       fmt (near[i].cpus));
        ck_assert_uint_eq (p->tasks[i].near, 1ull << i);
        ck_assert_uint_eq (p->tasks[i].fallback & PLACE_FB_GPU_REMOTE, 0);
        /* numa-local's own rule inside: distinct cores, no SMT siblings */
        ck_assert_uint_eq (p->tasks[i].fallback & PLACE_FB_SHARED_CORE, 0);
    }
    place_plan_destroy (p);

    /* 8 tasks x 12 PUs: the 4 GPUs of a socket are near the same PUs, so
     * their tasks are placed together as one request would be: 6 whole
     * cores each, no core shared between tasks (bench-quality -G found
     * groups placed apart taking each other's SMT siblings) */
    req.cpus_per_task = 12;
    ck_assert_ptr_nonnull (p = place_compute (t, &req, &e));
    check_plan (t, &req, p);
    for (unsigned i = 0; i < 8; i++) {
        ck_assert (hwloc_bitmap_isincluded (p->tasks[i].cpus, near[i].cpus));
        ck_assert_uint_eq (p->tasks[i].fallback & PLACE_FB_SHARED_WITH_TASK, 0);
        for (unsigned j = 0; j < i; j++)
            for (unsigned c = 0; c < topo_ndomains (t, TOPO_CORE); c++) {
                hwloc_const_bitmap_t core = topo_domain_cpuset (t, TOPO_CORE, c);
                ck_assert_msg (!(hwloc_bitmap_intersects (core, p->tasks[i].cpus)
                                 && hwloc_bitmap_intersects (core,
                                                             p->tasks[j].cpus)),
                               "tasks %u and %u share core %u",
                               j,
                               i,
                               c);
            }
    }
    place_plan_destroy (p);
    req.cpus_per_task = 4;

    /* 2 tasks per GPU, GPUs 3 and 4 (one per socket) */
    unsigned two[2] = {3, 4};
    req.ntasks = 4;
    req.nnear = gpus_near (t, two, 2, near);
    ck_assert_ptr_nonnull (p = place_compute (t, &req, &e));
    check_plan (t, &req, p);
    ck_assert_str_eq (fmt (p->tasks[0].cpus), "0-3");
    ck_assert (hwloc_bitmap_isincluded (p->tasks[1].cpus, near[0].cpus));
    ck_assert (hwloc_bitmap_isincluded (p->tasks[2].cpus, near[1].cpus));
    ck_assert (hwloc_bitmap_isincluded (p->tasks[3].cpus, near[1].cpus));
    ck_assert_uint_eq (p->tasks[3].near, 2);
    place_plan_destroy (p);

    /* explicit masks: task 0 near GPU 4, tasks 1-3 near GPU 3 */
    uint64_t masks[4] = {2, 1, 1, 1};
    req.task_near = masks;
    ck_assert_ptr_nonnull (p = place_compute (t, &req, &e));
    check_plan (t, &req, p);
    ck_assert (hwloc_bitmap_isincluded (p->tasks[0].cpus, near[1].cpus));
    for (unsigned i = 1; i < 4; i++)
        ck_assert (hwloc_bitmap_isincluded (p->tasks[i].cpus, near[0].cpus));
    place_plan_destroy (p);

    /* one task, two GPUs (one per socket): near both = anywhere near
     * either, not marked */
    req.task_near = NULL;
    req.ntasks = 1;
    ck_assert_ptr_nonnull (p = place_compute (t, &req, &e));
    ck_assert_uint_eq (p->tasks[0].near, 3);
    ck_assert_uint_eq (p->tasks[0].fallback & PLACE_FB_GPU_REMOTE, 0);
    place_plan_destroy (p);
    topo_destroy (t);
}
END_TEST

/* Partial node: the allocation has no CPU near the GPU */
START_TEST (test_partial_node_remote)
{
    topo_t *t = load ("epyc-corona.xml");
    unsigned idx[1] = {0}; /* opencl0d0, NUMA 1: 6-11,54-59 */
    struct place_near near[1];
    hwloc_bitmap_t allowed = hwloc_bitmap_alloc ();
    pin_error_t e = {{0}};
    struct place_request req = {
        .policy = PLACE_NUMA_LOCAL,
        .ntasks = 1,
        .cpus_per_task = 4,
        .allowed = allowed,
        .nnear = gpus_near (t, idx, 1, near),
        .near = near,
        .near_fallback = PLACE_FB_GPU_REMOTE,
    };
    struct place_plan *p;

    ck_assert_int_eq (near[0].numa, 1);
    /* NUMA 2 (12-17, distance 16 from 1) and NUMA 4 (24-29, distance 32):
     * the nearer one */
    hwloc_bitmap_list_sscanf (allowed, "12-17,24-29,60-65,72-77");
    ck_assert_ptr_nonnull (p = place_compute (t, &req, &e));
    check_plan (t, &req, p);
    ck_assert_msg (hwloc_bitmap_isincluded (p->tasks[0].cpus,
                                            topo_domain_cpuset (t,
                                                                TOPO_NUMA,
                                                                2)),
                   "placed on %s",
                   fmt (p->tasks[0].cpus));
    ck_assert_uint_ne (p->tasks[0].fallback & PLACE_FB_GPU_REMOTE, 0);
    place_plan_destroy (p);

    /* some CPUs near it (8-11) but not enough for 6: the region widens to
     * NUMA 2, and numa-local's own rule keeps the task in one domain */
    hwloc_bitmap_list_sscanf (allowed, "8-11,12-17,24-29");
    req.cpus_per_task = 6;
    ck_assert_ptr_nonnull (p = place_compute (t, &req, &e));
    check_plan (t, &req, p);
    ck_assert_str_eq (fmt (p->tasks[0].cpus), "12-17");
    ck_assert_uint_ne (p->tasks[0].fallback & PLACE_FB_GPU_REMOTE, 0);
    place_plan_destroy (p);

    /* enough near it: there, not marked */
    req.cpus_per_task = 4;
    ck_assert_ptr_nonnull (p = place_compute (t, &req, &e));
    ck_assert_str_eq (fmt (p->tasks[0].cpus), "8-11");
    ck_assert_uint_eq (p->tasks[0].fallback & PLACE_FB_GPU_REMOTE, 0);
    place_plan_destroy (p);

    /* busy PUs near it are not taken: 2 free there are too few for 4, so
     * NUMA 2 (one domain, numa-local's rule) */
    hwloc_bitmap_t busy = hwloc_bitmap_alloc ();
    hwloc_bitmap_list_sscanf (busy, "8-9");
    req.busy = busy;
    ck_assert_ptr_nonnull (p = place_compute (t, &req, &e));
    check_plan (t, &req, p);
    ck_assert_str_eq (fmt (p->tasks[0].cpus), "12-15");
    ck_assert_uint_ne (p->tasks[0].fallback & PLACE_FB_GPU_REMOTE, 0);
    place_plan_destroy (p);

    /* a group that must widen keeps what fits near its GPU there: 2
     * tasks x 4 with 4 free PUs near it (8-11): task 0 local, task 1 on
     * the nearest domain (NUMA 2), only task 1 gpu-remote */
    req.busy = NULL;
    req.ntasks = 2;
    hwloc_bitmap_list_sscanf (allowed, "8-11,12-17,24-29");
    ck_assert_ptr_nonnull (p = place_compute (t, &req, &e));
    check_plan (t, &req, p);
    ck_assert_str_eq (fmt (p->tasks[0].cpus), "8-11");
    ck_assert_uint_eq (p->tasks[0].fallback & PLACE_FB_GPU_REMOTE, 0);
    ck_assert (hwloc_bitmap_isincluded (p->tasks[1].cpus,
                                        topo_domain_cpuset (t, TOPO_NUMA, 2)));
    ck_assert_uint_ne (p->tasks[1].fallback & PLACE_FB_GPU_REMOTE, 0);
    place_plan_destroy (p);
    req.ntasks = 1;
    req.busy = busy;

    /* a task_near bit beyond the devices is refused */
    uint64_t far[1] = {2};
    req.task_near = far;
    ck_assert_ptr_null (place_compute (t, &req, &e));
    ck_assert_ptr_nonnull (strstr (e.text, "near device bit 1, but the step has 1"));
    req.task_near = NULL;

    /* too large for the free PUs: the plain fallback, marked */
    req.cpus_per_task = 15;
    ck_assert_ptr_nonnull (p = place_compute (t, &req, &e));
    check_plan (t, &req, p);
    ck_assert_uint_ne (p->tasks[0].fallback & PLACE_FB_GPU_REMOTE, 0);
    ck_assert_uint_eq (p->tasks[0].near, 1);
    place_plan_destroy (p);

    /* none and dynamic do not pin: the allocation, not marked */
    req.cpus_per_task = 4;
    req.policy = PLACE_NONE;
    ck_assert_ptr_nonnull (p = place_compute (t, &req, &e));
    ck_assert (hwloc_bitmap_isequal (p->tasks[0].cpus, allowed));
    ck_assert_uint_eq (p->tasks[0].fallback, 0);
    place_plan_destroy (p);

    /* the NIC's mark for a plan GPUs made */
    req.policy = PLACE_NUMA_LOCAL;
    req.busy = NULL;
    ck_assert_ptr_nonnull (p = place_compute (t, &req, &e));
    place_mark_near (p, topo_domain_cpuset (t, TOPO_NUMA, 3),
                     PLACE_FB_NIC_REMOTE);
    ck_assert_uint_ne (p->tasks[0].fallback & PLACE_FB_NIC_REMOTE, 0);
    place_mark_near (p, near[0].cpus, 8192);
    ck_assert_uint_eq (p->tasks[0].fallback & 8192, 0);
    place_plan_destroy (p);

    /* bad device tables */
    req.nnear = PLACE_MAX_NEAR + 1;
    ck_assert_ptr_null (place_compute (t, &req, &e));
    ck_assert_ptr_nonnull (strstr (e.text, "at most 64"));
    struct place_near bad = {.cpus = NULL, .numa = 0};
    req.nnear = 1;
    req.near = &bad;
    ck_assert_ptr_null (place_compute (t, &req, &e));
    hwloc_bitmap_free (busy);
    hwloc_bitmap_free (allowed);
    topo_destroy (t);
}
END_TEST

static uint64_t rnd (uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Random requests on every fixture with GPUs; plans without devices
 * keep passing placecheck() (nnear = 0 is the plain path) */
START_TEST (test_properties)
{
    const struct fixture *f = &fx[_i];
    pin_error_t e = {{0}};
    topo_t *t;
    unsigned ngpu = 0, gidx[64];
    uint64_t seed = 0x5eed0000u + (uint64_t)_i;

    if (!strchr (f->src, '/'))
        return;
    ck_assert_msg ((t = topo_load (f->src, 0, &e)) != NULL, "%s", e.text);
    for (unsigned i = 0; i < topo_ndevs (t) && ngpu < 64; i++)
        if (topo_dev (t, i)->kind == TOPO_DEV_GPU
            && !hwloc_bitmap_iszero (topo_dev (t, i)->cpuset))
            gidx[ngpu++] = topo_dev (t, i)->index;
    if (ngpu == 0) {
        topo_destroy (t);
        return;
    }
    hwloc_bitmap_t allowed = hwloc_bitmap_alloc ();
    hwloc_bitmap_t local = hwloc_bitmap_alloc ();
    hwloc_bitmap_t seen = hwloc_bitmap_alloc ();
    for (int round = 0; round < 60; round++) {
        struct place_near near[64];
        unsigned pick[64], n = 0;
        unsigned ncore = topo_ndomains (t, TOPO_CORE);
        /* a random half (or all) of the cores */
        hwloc_bitmap_zero (allowed);
        for (unsigned c = 0; c < ncore; c++)
            if (round % 4 == 0 || rnd (&seed) % 2)
                hwloc_bitmap_or (allowed,
                                 allowed,
                                 topo_domain_cpuset (t, TOPO_CORE, c));
        if (hwloc_bitmap_iszero (allowed))
            hwloc_bitmap_copy (allowed, topo_domain_cpuset (t, TOPO_CORE, 0));
        for (unsigned g = 0; g < ngpu; g++)
            if (rnd (&seed) % 2 || (g == ngpu - 1 && n == 0))
                pick[n++] = gidx[g];
        gpus_near (t, pick, n, near);
        int w = hwloc_bitmap_weight (allowed);
        unsigned ntasks = 1 + (unsigned)(rnd (&seed) % (2 * n));
        unsigned cpt = 1 + (unsigned)(rnd (&seed) % 4);
        if (ntasks * cpt > (unsigned)w)
            ntasks = 1, cpt = 1;
        struct place_request req = {
            .policy = placecheck_policies[rnd (&seed) % PLACECHECK_NPOLICIES],
            .ntasks = ntasks,
            .cpus_per_task = cpt,
            .allowed = allowed,
            .seed = rnd (&seed),
            .nnear = n,
            .near = near,
            .near_fallback = PLACE_FB_GPU_REMOTE,
        };
        struct place_plan *p = place_compute (t, &req, &e);
        ck_assert_msg (p != NULL, "%s round %d: %s", f->name, round, e.text);
        check_plan (t, &req, p);
        bool pins = req.policy != PLACE_NONE && req.policy != PLACE_DYNAMIC;
        /* localities disjoint and each big enough: never remote */
        bool roomy = pins;
        uint64_t need[64] = {0};
        for (unsigned i = 0; i < ntasks; i++)
            if (pins && __builtin_popcountll (p->tasks[i].near) == 1)
                need[__builtin_ctzll (p->tasks[i].near)] += cpt;
            else
                roomy = false;
        hwloc_bitmap_zero (seen);
        for (unsigned d = 0; d < n && roomy; d++) {
            hwloc_bitmap_and (local, near[d].cpus, allowed);
            if (hwloc_bitmap_intersects (local, seen)
                || (uint64_t)hwloc_bitmap_weight (local) < need[d])
                roomy = false;
            hwloc_bitmap_or (seen, seen, near[d].cpus);
        }
        for (unsigned i = 0; i < ntasks; i++) {
            struct place_task *tk = &p->tasks[i];
            ck_assert (hwloc_bitmap_isincluded (tk->cpus, allowed));
            if (!pins) {
                ck_assert_uint_eq (tk->fallback & PLACE_FB_GPU_REMOTE, 0);
                continue;
            }
            hwloc_bitmap_zero (local);
            for (unsigned d = 0; d < n; d++)
                if ((tk->near >> d) & 1)
                    hwloc_bitmap_or (local, local, near[d].cpus);
            ck_assert_msg (tk->near != 0, "%s: task %u has no device", f->name, i);
            bool in = hwloc_bitmap_isincluded (tk->cpus, local);
            ck_assert_msg (in == !(tk->fallback & PLACE_FB_GPU_REMOTE),
                           "%s round %d task %u: cpus %s, local %s, "
                           "fallback %#x",
                           f->name,
                           round,
                           i,
                           fmt (tk->cpus),
                           fmt (local),
                           tk->fallback);
            if (roomy)
                ck_assert_msg (in,
                               "%s round %d task %u: remote (%s) though its "
                               "GPU's %s had room",
                               f->name,
                               round,
                               i,
                               fmt (tk->cpus),
                               fmt (local));
        }
        place_plan_destroy (p);
    }
    hwloc_bitmap_free (allowed);
    hwloc_bitmap_free (local);
    hwloc_bitmap_free (seen);
    topo_destroy (t);
}
END_TEST

int main (void)
{
    if (fixtures_shared (&fx, &nfx) < 0) {
        printf ("1..1\nok 1 # SKIP %s not found: GPU placement tests\n",
                fixtures_dir ());
        return 0;
    }
    Suite *s = suite_create ("place_near");
    TCase *tc = tcase_create ("near");
    tcase_set_timeout (tc, 300);
    tcase_add_test (tc, test_one_task_per_gpu);
    tcase_add_test (tc, test_partial_node_remote);
    tcase_add_loop_test (tc, test_properties, 0, (int)nfx);
    suite_add_tcase (s, tc);
    int rc = placecheck_run_tap (s);
    fixtures_free (fx);
    return rc;
}
