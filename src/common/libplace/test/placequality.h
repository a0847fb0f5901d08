/* placequality.h - how good a placement is, measured independently
 *
 * placecheck.c asks "does the plan follow the rules of doc/policies.md";
 * this file asks "is it a good plan": it replays a plan task by task on
 * its own copy of the machine (libtopo's PU table only, nothing of
 * libplace) and measures what a user of the node would look at: cores
 * shared between tasks of the step or with other steps, and whether that
 * was avoidable; the L2 and L3 domains of each task; how the tasks are
 * spread over NUMA domains and packages; whether each task's memory is
 * local to its CPUs; whether a task mixes CPU kinds.
 *
 * "Wholly free core" is the strict reading of doc/policies.md: every PU
 * of the core in the table is in allowed-minus-busy and taken by no
 * earlier task of the step.
 */
#ifndef PIN_PLACEQUALITY_H
#define PIN_PLACEQUALITY_H

#include <stdbool.h>
#include <stddef.h>

#include "libplace/place.h"
#include "libtopo/topo.h"

struct pq_task {
    unsigned ncores, nl2, nl3, nnuma, npkg; /* domains the task touches */
    unsigned shared_task; /* its cores holding a PU of an earlier task */
    unsigned shared_busy; /* its cores holding a busy PU (other steps) */
    /* it took a PU on a core that was not wholly free while its own NUMA
     * domain still had a wholly free core it left unused */
    bool avoidable_same_numa;
    /* it took a PU on a core that was not wholly free while some NUMA
     * domain had c PUs on wholly free cores (room for the whole task) */
    bool avoidable_any_numa;
    bool mems_local;  /* mems == the nodesets of its CPUs' domains */
    bool mixed_kinds; /* its PUs are of several CPU kinds */
    /* mixed, while one NUMA domain had c free PUs of one kind */
    bool mixed_avoidable;
    /* mixed, while one kind had c PUs on wholly free cores of one domain,
     * or no domain had c PUs on wholly free cores (mixing kept no core
     * whole) and one kind had c free PUs: the kind rule's order */
    bool mixed_needless;
};

struct placequality {
    unsigned ntasks;
    struct pq_task *task;         /* [ntasks] */
    unsigned shared_cores;        /* cores holding PUs of two or more tasks */
    unsigned shared_busy;         /* cores holding a task's PU and a busy PU */
    unsigned avoidable_same_numa; /* tasks, see pq_task */
    unsigned avoidable_any_numa;
    unsigned mems_wrong; /* tasks whose mems are not local (numa-local,
                            cache-shared, numa-spread only) */
    unsigned mixed_kinds, mixed_avoidable, mixed_needless; /* tasks */
    unsigned nnuma;
    unsigned *numa_tasks; /* [nnuma] tasks with a PU in each domain */
    /* max - min of numa_tasks over the domains that had a wholly free
     * core before the step (those a task could have been put on) */
    unsigned numa_imbalance;
    /* tasks placed on a core shared with an earlier task of the step
     * while another NUMA domain had c PUs on wholly free cores */
    unsigned numa_stacked;
    unsigned npkg;
    unsigned *pkg_tasks; /* [npkg] tasks with a PU in each package */
    /* max - min of pkg_tasks over the packages that had a free PU */
    unsigned pkg_imbalance;
};

/* Measure `plan` (computed for `req` on `t`) into *q, which the caller
 * frees with placequality_free().  Returns 0, or -1 with errno ENOMEM
 * (q is then empty). */
int placequality (const topo_t *t,
                  const struct place_request *req,
                  const struct place_plan *plan,
                  struct placequality *q);

/* Free what placequality() allocated; accepts an empty q. */
void placequality_free (struct placequality *q);

/* One line for a test message: "shared 2 busy 0 avoidable 1/0 ...". */
const char *placequality_string (const struct placequality *q,
                                 char *buf,
                                 size_t len);

#endif /* !PIN_PLACEQUALITY_H */
