/* dynamic.h - policy dynamic in slurmstepd: the watcher thread
 *
 * pin.c starts one watcher per step of policy dynamic once its local
 * tasks are placed (task_post_fork of the last one) and stops it when the
 * last task exits, or in slurm_spank_exit.  The watcher is a thread of
 * slurmstepd: it dies with it (even on SIGKILL) and needs nothing from the
 * admin.  Every DynamicInterval it reads usage_usec from the step's own
 * cpu.stat (a directory fd opened once, files opened relative to it),
 * feeds libwatch, and on WATCH_CONFINE asks pin.c for the numa-local
 * placement (under the node lock, avoiding other steps' PUs, claimed) and
 * confines what runs: cpuset.cpus then cpuset.mems of the step's cgroup
 * where the cpuset controller is usable, else sched_setaffinity on every
 * thread of the step's cgroups until a whole pass changes nothing (and
 * again every interval afterwards, so that the confinement stays), or with
 * DynamicConfine=quota cpu.max = allocated CPUs.  doc/policies.md and
 * doc/admin-guide.md describe it for users and admins.
 */
#ifndef PIN_DYNAMIC_H
#define PIN_DYNAMIC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <hwloc.h>

#include "libutil/errprintf.h"
#include "libwatch/watch.h"

struct prof_rec;

/* How a step was (or will be) confined. */
enum dynamic_how {
    DYNAMIC_CPUSET = 0,     /* the step cgroup's cpuset */
    DYNAMIC_AFFINITY,       /* sched_setaffinity on every thread */
    DYNAMIC_QUOTA,          /* cpu.max */
};
const char *dynamic_how_name (enum dynamic_how how);

/* The confinement event, for the step's accounting record (libacct's
 * confined_us, confine_use, confine_cpus, confine_mems) and the logs. */
struct dynamic_event {
    bool confined;
    int64_t confined_us;    /* CLOCK_REALTIME, us since the epoch */
    double use;             /* CPUs in use that triggered it (mean over
                               the over-use counted against grace) */
    char cpus[256];         /* OS CPU list ("" for quota) */
    char mems[64];          /* NUMA node list ("" unless fenced) */
    enum dynamic_how how;
    unsigned threads;       /* threads moved by the affinity sweep */
    unsigned passes;        /* sweep passes until one changed nothing */
};

/* Choose and claim the placement: called once, in the watcher thread, at
 * the moment of confinement.  Fills cpus and mems; -1 with errp. */
typedef int (*dynamic_plan_f) (void *arg, hwloc_bitmap_t cpus,
                               hwloc_bitmap_t mems, pin_error_t *errp);

struct dynamic_config {
    bool watch;                 /* policy dynamic: watch and confine */
    struct prof_rec *prof;      /* a profile being recorded (libprof), or
                                   NULL: the watcher polls it, and
                                   finishes it when stopped (owned) */
    const char *stepname;       /* "12.0" (copied) */
    const char *node;           /* for the line on the task's stderr */
    const char *cgroup_root;    /* the cgroup2 mount (copied) */
    const char *watch_rel;      /* the step's cgroup holding its tasks:
                                   cpu.stat read, threads swept, cpuset or
                                   cpu.max written (copied) */
    enum dynamic_how how;
    struct watch_params params;
    dynamic_plan_f plan;
    void *plan_arg;
    uid_t uid;                  /* the job's owner */
};

/* Remember a task's pid (task_post_fork): the confinement line goes to
 * the stderr of the first one that is still there. */
void dynamic_add_task (pid_t pid);

/* Start the watcher.  -1 with errp if it cannot (the step then runs as
 * policy none, which the caller says). */
int dynamic_start (const struct dynamic_config *cfg, pin_error_t *errp);

/* The wait status the profile's end line gives the step (-1: unknown,
 * the default); call before dynamic_stop. */
void dynamic_set_status (int status);

/* Is a watcher running (started and not stopped)? */
bool dynamic_running (void);

/* Stop and join the watcher (nothing if none runs); copies the event
 * (zeroed if never confined) and the watcher's own CPU time and wall time
 * in us.  Idempotent: later calls return the same. */
void dynamic_stop (struct dynamic_event *ev, int64_t *cpu_us,
                   int64_t *wall_us);

#endif /* !PIN_DYNAMIC_H */
