/* confine.h - policy dynamic: watch a step's CPU use, confine it once
 *
 * A stepwatch client (stepwatch.h).  Every DynamicInterval it reads
 * usage_usec from the step's own cpu.stat (a directory fd opened once,
 * files opened relative to it), feeds libwatch, and on WATCH_CONFINE asks
 * for the numa-local placement (its `plan`: pin_step_plan under the node
 * lock, avoiding other steps' PUs, claimed) and confines what runs:
 * cpuset.cpus then cpuset.mems of the step's cgroup where the cpuset
 * controller is usable, else sched_setaffinity on every thread of the
 * step's cgroups until a whole pass changes nothing (and again every
 * interval afterwards, so that the confinement stays), or with
 * DynamicConfine=quota cpu.max = allocated CPUs.  It tells the job's
 * owner in one line on a task's stderr and logs through its sink.
 * doc/policies.md and doc/admin-guide.md describe it for users and admins.
 */
#ifndef PIN_CONFINE_H
#define PIN_CONFINE_H

#include <hwloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "libutil/errprintf.h"
#include "libwatch/watch.h"
#include "steplog.h"
#include "stepwatch.h"

struct profclient;

/* How a step was (or will be) confined. */
enum confine_how {
    CONFINE_CPUSET = 0, /* the step cgroup's cpuset */
    CONFINE_AFFINITY,   /* sched_setaffinity on every thread */
    CONFINE_QUOTA,      /* cpu.max */
};
const char *confine_how_name (enum confine_how how);

/* The confinement event, for the step's accounting record (libacct's
 * confined_us, confine_use, confine_cpus, confine_mems) and the logs. */
struct confine_event {
    bool confined;
    int64_t confined_us; /* CLOCK_REALTIME, us since the epoch */
    double use;          /* CPUs in use that triggered it (mean over
                            the over-use counted against grace) */
    char cpus[256];      /* OS CPU list ("" for quota) */
    char mems[64];       /* NUMA node list ("" unless fenced) */
    enum confine_how how;
    unsigned threads; /* threads moved by the affinity sweep */
    unsigned passes;  /* sweep passes until one changed nothing */
};

/* Choose and claim the placement: called once, in the watcher thread, at
 * the moment of confinement.  Fills cpus and mems; -1 with errp. */
typedef int (*confine_plan_f) (void *arg,
                               hwloc_bitmap_t cpus,
                               hwloc_bitmap_t mems,
                               pin_error_t *errp);

struct confine_config {
    const char *stepname;    /* "12.0" (copied) */
    const char *node;        /* for the line on the task's stderr */
    const char *cgroup_root; /* the cgroup2 mount (copied) */
    const char *watch_rel;   /* the step's cgroup holding its tasks:
                                cpu.stat read, threads swept, cpuset or
                                cpu.max written (copied) */
    enum confine_how how;
    struct watch_params params;
    confine_plan_f plan;
    void *plan_arg;
    uid_t uid;               /* the job's owner */
    struct profclient *prof; /* the step's profile, or NULL: gets a
                                "confine" mark (not owned) */
    struct steplog log;
};

typedef struct confine confine_t;

/* A confinement for one step; -1/NULL with errp (bad parameters). */
confine_t *confine_create (const struct confine_config *cfg,
                           pin_error_t *errp);

/* Its stepwatch client (arg: the confine_t). */
void confine_client (confine_t *c, struct stepwatch_client *client);

/* Remember a task's pid (task_post_fork): the confinement line goes to
 * the stderr of the first one that is still there.  Thread-safe. */
void confine_add_task (confine_t *c, pid_t pid);

/* The event so far (zeroed if never confined).  Thread-safe. */
void confine_get_event (confine_t *c, struct confine_event *ev);

/* NULL is fine; call after the watcher stopped; keeps errno. */
void confine_destroy (confine_t *c);

#endif /* !PIN_CONFINE_H */
