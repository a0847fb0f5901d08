/* place.h - CPU placement policies (pure functions)
 *
 * Inputs: a topology (libtopo's flattened model), the allowed set (what
 * Slurm gave the step on this node), the busy set (PUs held by other
 * running steps), a task count, CPUs per task, and a seed for `random`.
 * Output: per task its CPUs and memory nodes, and whether and why a
 * fallback was used.  No Slurm, no file I/O, no logging: the rules are in
 * doc/policies.md and ../shared/DESIGN.md.
 */
#ifndef PIN_PLACE_H
#define PIN_PLACE_H

#include <hwloc.h>
#include <stdint.h>

#include "libtopo/topo.h"
#include "libutil/errprintf.h"

enum place_policy {
    PLACE_NONE = 0,
    PLACE_NUMA_LOCAL,
    PLACE_NUMA_SPREAD,
    PLACE_CACHE_SHARED,
    PLACE_RANDOM,
    PLACE_DYNAMIC, /* runs as none; the plugin's watcher may
                      confine it later (libwatch) */
};

/* Parse a policy name (exact, case-sensitive) into *policy (may be NULL:
 * validate only).  -1 with errno EINVAL and errp
 * ("'numa-locl': unknown policy; known: numa-local, numa-spread, ...";
 * callers prefix the option name) if NULL, empty, longer than 64
 * characters or unknown; *policy is then untouched. */
int place_policy_parse (const char *name,
                        enum place_policy *policy,
                        pin_error_t *errp);
/* Static name of a policy, "unknown" for a value out of range. */
const char *place_policy_name (enum place_policy policy);

/* "numa-local, numa-spread, cache-shared, random, dynamic, none" */
const char *place_policy_list (void);

/* Fallback reasons, a bit mask per task; place_fallback_string() joins
 * the names with ','.  When each bit is set: doc/policies.md. */
enum {
    PLACE_FB_MULTI_NUMA = 1,     /* "multi-numa": task spans NUMA domains */
    PLACE_FB_SHARED_L2 = 2,      /* "shared-l2": distinct L2 impossible */
    PLACE_FB_SHARED_CORE = 4,    /* "shared-core": SMT siblings in one task */
    PLACE_FB_UNBALANCED = 8,     /* "unbalanced": numa-spread counts differ
                                    by more than one */
    PLACE_FB_PARTIAL_CORE = 16,  /* "partial-core": cache-shared had to use
                                    cores that are not wholly free */
    PLACE_FB_NO_LOCAL_NUMA = 32, /* "no-local-numa": PUs without a NUMA node */
    PLACE_FB_SHARED_WITH_TASK = 64,  /* "shared-with-task": a core of the
                                   task holds a PU of an earlier task */
    PLACE_FB_MIXED_KINDS = 128,      /* "mixed-kinds": the task's PUs are of
                                       several CPU kinds, as no kind alone had
                                       room in a domain */
    PLACE_FB_OVERSUBSCRIBED = 256,   /* "oversubscribed": more CPUs asked
                                    than allowed; a PU of the task is given
                                    to another task of the step too, or the
                                    task got the whole (smaller) allocation */
    PLACE_FB_SHARED_WITH_STEP = 512, /* "shared-with-step": the task holds
                                  a PU that another step holds (busy) */
    PLACE_FB_ALLOC_ONE_NUMA = 1024,  /* "alloc-one-numa": numa-spread on a
                                   machine with several NUMA nodes, but
                                   the allocation holds CPUs of one only
                                   (doc/job-submit.md) */
    PLACE_FB_GPU_REMOTE = 2048,      /* "gpu-remote": a CPU of the task is
                                   not local to the task's GPU(s): the
                                   allocation had too few free CPUs there,
                                   so the nearest by NUMA distance were
                                   taken (place_request.near) */
    PLACE_FB_NIC_REMOTE = 4096,      /* "nic-remote": the same for the NIC
                                   (near_fallback names which bit) */
};

/* What place_compute() refuses instead of falling back (req.refuse). */
enum {
    PLACE_REFUSE_SHARE = 1,         /* a plan that uses busy PUs */
    PLACE_REFUSE_OVERSUBSCRIBE = 2, /* more CPUs than allowed */
};

/* Larger entries of place_request.load count as this many (so that the
 * sums over a core cannot overflow). */
#define PLACE_MAX_LOAD 65536u

/* Most tasks place_compute() accepts when it has to oversubscribe
 * (8 times Slurm's MAX_TASKS_PER_NODE). */
#define PLACE_MAX_TASKS 4096

/* A device the step's tasks are placed near (a GPU or a NIC): the PUs
 * local to it (may hold PUs outside the allowed set) and its NUMA domain
 * (topo_dev.numa; -1: unknown, then the domain holding most of `cpus`),
 * from which "nearest" is measured with topo_numa_distance(). */
struct place_near {
    hwloc_const_bitmap_t cpus;
    int numa;
};

/* Most devices in place_request.near (task_near is a 64-bit mask). */
#define PLACE_MAX_NEAR 64

struct place_request {
    enum place_policy policy;
    unsigned ntasks;              /* >= 1 */
    unsigned cpus_per_task;       /* >= 1 */
    hwloc_const_bitmap_t allowed; /* NULL: every PU of the topology */
    hwloc_const_bitmap_t busy;    /* NULL: none */
    uint64_t seed;                /* for PLACE_RANDOM */
    unsigned refuse;              /* PLACE_REFUSE_* mask; 0: never fail a
                                     request for being too large */
    const unsigned *load;         /* NULL: every busy PU is held by one
                                     other step; else load[os] (os < nload)
                                     is how many other steps hold PU os.
                                     Only a request too large for the free
                                     PUs looks at it (the least-loaded busy
                                     PUs first); a PU outside busy holds
                                     none, one in busy at least one */
    unsigned nload;               /* entries in load */

    /* Device locality (doc/policies.md, "GPUs and NICs").  With nnear > 0
     * and a policy that pins, the tasks are split into groups of the same
     * device(s); each group is placed by the policy's own rule on the
     * allowed PUs local to its device(s) first; a group with too few free
     * PUs there takes the nearest NUMA domains' allowed PUs, in order of
     * topo_numa_distance() from the device's domain, and its tasks get
     * `near_fallback`.  A request too large for allowed-minus-busy is
     * placed as without devices, and every task not wholly local gets
     * `near_fallback`.  PLACE_NONE and PLACE_DYNAMIC ignore devices. */
    unsigned nnear;                 /* 0: no device; <= PLACE_MAX_NEAR */
    const struct place_near *near;  /* nnear entries */
    const uint64_t *task_near;      /* NULL: block-wise, task i near device
                                       i * nnear / ntasks when ntasks >=
                                       nnear, else near devices
                                       [i * nnear / ntasks, (i + 1) * nnear
                                       / ntasks); else ntasks masks, bit d:
                                       near device d (0: any device) */
    unsigned near_fallback;         /* PLACE_FB_GPU_REMOTE or
                                       PLACE_FB_NIC_REMOTE */
};

struct place_task {
    hwloc_bitmap_t cpus; /* OS PU indexes */
    hwloc_bitmap_t mems; /* OS NUMA node indexes */
    unsigned fallback;   /* PLACE_FB_* mask, 0 if none */
    uint64_t near;       /* bit d: placed near place_request.near[d]; 0
                            when the request had no devices */
};

struct place_plan {
    enum place_policy policy;
    unsigned ntasks;
    unsigned cpus_per_task;
    struct place_task *tasks; /* ntasks entries */
};

/* Compute a plan.  Fails (NULL, errno EINVAL, errp filled with one line
 * naming the value and what is valid) when ntasks or cpus_per_task is 0,
 * when allowed holds no PU of the topology (the "exceeds the 0 available"
 * line), or (ENOMEM) on allocation failure.
 *
 * A request of ntasks * cpus_per_task larger than the PUs in
 * allowed-minus-busy (in allowed for PLACE_NONE, which ignores busy PUs)
 * is not placed by the policy but by the fallback of doc/policies.md
 * ("Too large"): on the least-loaded allowed PUs, busy ones counted as
 * loaded by the steps that hold them (req->load; shared-with-step), and beyond
 * the allowed PUs round after round (oversubscribed).  It fails instead, with
 * the "request of N tasks x C CPUs = T CPUs exceeds the A available (allowed L
 * minus busy B)" line, when req->refuse names the fallback it would need, or
 * when it would oversubscribe more than PLACE_MAX_TASKS tasks.  `topo` and
 * `req` (and its bitmaps) stay the caller's.  The plan and its bitmaps belong
 * to the caller, who destroys them with place_plan_destroy().
 */
struct place_plan *place_compute (const topo_t *topo,
                                  const struct place_request *req,
                                  pin_error_t *errp);

/* Destroy; accepts NULL, preserves errno. */
void place_plan_destroy (struct place_plan *plan);

/* Add `bit` (PLACE_FB_NIC_REMOTE, say) to every task of `plan` whose CPUs
 * are not all in `cpus`: a device that was recorded but did not place
 * (the NIC when GPUs placed the step). */
void place_mark_near (struct place_plan *plan,
                      hwloc_const_bitmap_t cpus,
                      unsigned bit);

/* Fallback bits the allocation alone causes (the step's allowed PUs,
 * whatever is busy), for the caller to add to every task of a plan:
 * PLACE_FB_ALLOC_ONE_NUMA for numa-spread when the machine has several
 * NUMA nodes with memory and `allowed` touches only one.  0 otherwise. */
unsigned place_alloc_confines (const topo_t *topo,
                               enum place_policy policy,
                               hwloc_const_bitmap_t allowed);

/* Write the fallback mask as "multi-numa,shared-core" into buf (size n);
 * "" when mask is 0; whole names only if buf is too small; unknown bits
 * are ignored.  Returns buf (NULL if buf is NULL). */
const char *place_fallback_string (unsigned mask, char *buf, size_t n);

#endif /* !PIN_PLACE_H */
