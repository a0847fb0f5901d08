/* step.h - the life of one step of slurmstepd on one node
 *
 * A pin_step_t owns what slurm-pin holds for a step: the topology model,
 * the step's PUs (Slurm's cores mapped through it), the cgroup mode and
 * the step's cgroups, the plan of its tasks, its claim in StateDir, the
 * shared page where each task's outcome is kept, and its watcher
 * (stepwatch.h: policy dynamic's confinement and the profile recorder).
 * pin.so reads items from Slurm and calls, in this order:
 *
 *   pin_step_create          the step's ids (every step kind); starts its
 *                            accounting record (Accounting=yes)
 *   pin_step_set_tasks       policy and local tasks (numbered, batch and
 *                            interactive steps)
 *   pin_step_load_topology   the cached model (not for a bare policy none)
 *   pin_step_set_alloc       Slurm's core lists of the job and the step
 *   pin_step_detect_mode     nested, standalone or affinity only
 *   pin_step_prepare_state   StateDir, claims/ (unless policy none runs
 *                            without our own cgroups)
 *   pin_step_plan            lock, busy PUs, --overlap move, place, claim
 *   pin_step_apply_task      per task, as root, in task_post_fork
 *   pin_step_account_task    per task: the CPUs it got, for the record
 *   pin_step_watch_start     after the last task forked
 *   pin_step_account_task_exit               each task's exit status
 *   pin_step_watch_stop, pin_step_release   when the last task exited
 *   pin_step_account         slurm_spank_exit: the step's record
 *   pin_step_destroy         slurm_spank_exit: our cgroups removed
 *
 * The library never logs: errors come back in pin_error_t; what the
 * watcher thread does, and notes of calls that succeeded, go to the
 * caller's steplog sink (steplog.h).  Nothing here reads the job's
 * environment: every input comes from the caller (Slurm's items and
 * pin.conf), ids are integers, so no path is built from user text.
 */
#ifndef PIN_STEP_H
#define PIN_STEP_H

#include <hwloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "account.h"
#include "confine.h"
#include "ident.h"
#include "libcgroup2/cg2.h"
#include "libcgroup2/mode.h"
#include "libconf/conf.h"
#include "libplace/place.h"
#include "libutil/errprintf.h"
#include "libutil/phase.h"
#include "steplog.h"

struct prof_rec;
typedef struct pin_step pin_step_t;

struct pin_step_args {
    const struct pin_conf *conf; /* not copied: must outlive the step */
    uint32_t job, step;
    const char *stepname; /* "12.0" (copied) */
    struct phases *ph;    /* phase marks of the setup, or NULL */
    struct steplog log;
};

/* A step, with no task yet; its accounting record begins now when
 * conf->accounting.  NULL with errp (no memory). */
pin_step_t *pin_step_create (const struct pin_step_args *args,
                             pin_error_t *errp);

struct pin_step_tasks {
    int policy;             /* enum place_policy */
    bool batch;             /* batch or interactive step */
    uint32_t ntasks;        /* local tasks, > 0 */
    uint32_t cpus_per_task; /* 0 counts as 1 */
    uint64_t seed;          /* policy random */
};

/* What the step runs on this node: its policy and tasks, and the shared
 * page of the tasks' outcomes.  Once.  -1 with errp. */
int pin_step_set_tasks (pin_step_t *s,
                        const struct pin_step_tasks *t,
                        pin_error_t *errp);

/* Removes what the step made (its claim, our cgroups: errors go to the
 * sink) and frees it.  Stops the watcher if it still runs.  NULL is
 * fine; keeps errno. */
void pin_step_destroy (pin_step_t *s);

/* The topology model from pin.conf's TopologyCache (rewritten when it
 * does not fit this machine: *refreshed), or TestTopology's XML (tests
 * only).  -1 with errp. */
int pin_step_load_topology (pin_step_t *s, bool *refreshed, pin_error_t *errp);

/* The job's and the step's PUs on this node from Slurm's abstract core
 * lists (S_JOB_ALLOC_CORES, S_STEP_ALLOC_CORES; step_cores is not used
 * for the batch step, which gets the job's), within what this process may
 * use.  NULL or "" means Slurm gave none.  -1 with errp. */
int pin_step_set_alloc (pin_step_t *s,
                        const char *job_cores,
                        const char *step_cores,
                        pin_error_t *errp);

/* A GPU Slurm gave the step on this node (gpus.h says how the plugin
 * finds them). */
struct pin_step_gpu {
    unsigned index;    /* Slurm's GPU index on this node */
    const char *busid; /* its PCI bus id, NULL or "" if unknown */
    const char *cores; /* gres.conf's Cores= of it (Slurm core ids), the
                          fallback without a bus id; NULL or "" */
};

struct pin_step_devices {
    unsigned ngpus;
    const struct pin_step_gpu *gpus;
    bool nic;             /* --pin-policy=...,nic[=NAME] */
    const char *nic_name; /* NULL or "": the default NIC */
};

/* The step's GPUs and NIC (after pin_step_set_alloc): each GPU is found
 * in the topology by bus id, else located by its Cores=, else left out;
 * the NIC by name (topo_dev_find).  The plan then places tasks near them
 * (place_request.near: GPUs, or the NIC when there is no GPU) and the
 * record names them.  What was used and what was not found goes to the
 * sink; -1 with errp only when nothing can be done at all (no topology,
 * no memory). */
int pin_step_set_devices (pin_step_t *s,
                          const struct pin_step_devices *d,
                          pin_error_t *errp);

/* The record's text of them: PCI bus ids of the GPUs the tasks were
 * placed near (',' joined; "gres:N" for one known by its Cores= only)
 * and the NIC's name; "" when none.  Owned by the step. */
const char *pin_step_gpus_text (const pin_step_t *s);

/* What the verbose output says once per node about the devices: GPUs
 * located by gres.conf Cores= ("GPU 1 (gres:1) located by gres.conf
 * Cores=0-7"), GPUs not located, a NIC not found; "; "-joined, "" when
 * every device was found by its PCI bus id. */
const char *pin_step_devices_note (const pin_step_t *s);

/* " gpus=BUSID[,BUSID] nic=NAME" for task id's verbose line (the GPUs of
 * the task where the step was placed, every located GPU otherwise); ""
 * without devices.  Into buf (size n), returned. */
const char *pin_step_task_devices (const pin_step_t *s,
                                   int id,
                                   char *buf,
                                   size_t n);
const char *pin_step_nic_text (const pin_step_t *s);

/* Decide the cgroup mode (cg2_mode_detect with this process's own
 * cgroup).  The affinity-only reason, if any, in pin_step_warning. */
void pin_step_detect_mode (pin_step_t *s);

/* StateDir and its claims/ (made and checked: libutil/safefile.h).
 * *first_warning: the affinity-only warning was not yet logged on this
 * node since boot (a marker file in StateDir).  -1 with errp. */
int pin_step_prepare_state (pin_step_t *s,
                            bool *first_warning,
                            pin_error_t *errp);

/* What a plan is for. */
enum pin_step_plan_for {
    PIN_STEP_PLAN_START = 0, /* at step start: the step's policy, every
                                local task, the step cgroup made
                                (standalone) */
    PIN_STEP_PLAN_CONFINE,   /* policy dynamic's confinement: numa-local,
                                the union in cpus and mems */
};

/* Under the node lock: the PUs other running steps hold (claims with
 * their holder counts, and the cgroups of the job's tree), srun
 * --overlap moved onto the job's PUs, the placement (libplace), the claim.
 * At start the batch step neither reads nor claims; policies none and
 * dynamic place nothing.  For CONFINE, cpus and mems receive the
 * placement (otherwise unused, may be NULL).  -1 with errp. */
int pin_step_plan (pin_step_t *s,
                   enum pin_step_plan_for why,
                   hwloc_bitmap_t cpus,
                   hwloc_bitmap_t mems,
                   pin_error_t *errp);

/* Apply the plan to task `id` (pid): its cgroup (standalone: ours;
 * nested: Slurm's task cgroup, our own if Slurm made none), the cpuset,
 * the move, then sched_setaffinity.  The outcome is kept in the shared
 * page (pin_step_task_status).  -1 with errp (one line). */
int pin_step_apply_task (pin_step_t *s, int id, pid_t pid, pin_error_t *errp);

enum pin_step_task_state {
    PIN_STEP_TASK_PENDING = 0,
    PIN_STEP_TASK_APPLIED,
    PIN_STEP_TASK_FAILED,
};

/* What pin_step_apply_task did for task id, readable in the task's own
 * process (the page is shared with the forked tasks); *msg: the error of
 * a failed task. */
enum pin_step_task_state pin_step_task_status (const pin_step_t *s,
                                               int id,
                                               const char **msg);

/* Has the shared page (false only if ntasks is 0)? */
bool pin_step_has_status (const pin_step_t *s);

/* The task's plan, NULL when nothing is placed (policy none, dynamic) or
 * id is out of range.  Owned by the step. */
const struct place_task *pin_step_task (const pin_step_t *s, int id);

/* The step's PUs (the batch step: the job's), the union of the tasks'
 * PUs (NULL without a plan), the machine's NUMA nodes.  Owned by the
 * step; NULL before they are known. */
hwloc_const_bitmap_t pin_step_allowed (const pin_step_t *s);
hwloc_const_bitmap_t pin_step_plan_cpus (const pin_step_t *s);
hwloc_const_bitmap_t pin_step_nodeset (const pin_step_t *s);
uint32_t pin_step_cpus_per_task (const pin_step_t *s);

/* The cgroup mode and whether the cpuset controller is usable. */
enum cg2_mode pin_step_mode (const pin_step_t *s);
bool pin_step_cpuset (const pin_step_t *s);
/* Why CPUs are bound with sched_setaffinity only ("" otherwise). */
const char *pin_step_warning (const pin_step_t *s);
/* The cgroup root (NULL in mode none). */
cg2_t *pin_step_cgroup (const pin_step_t *s);

/* The cgroup that holds the step's tasks and nothing else: Slurm's
 * step_<id>/user in nested mode (without slurmstepd), ours in standalone;
 * "" without one.  The job's cgroup (nested only) in job_rel when given.
 * Owned by the step. */
const char *pin_step_acct_rel (pin_step_t *s, char *job_rel, size_t n);

/* For the step's record: the plan's CPU and NUMA lists (caller frees;
 * NULL without a plan) and the union of its tasks' fallbacks. */
void pin_step_record (const pin_step_t *s,
                      char **cpus,
                      char **mems,
                      unsigned *fallback);

/* The step's profile (doc/profiling.md), opened before its tasks exist
 * so that their first fork is seen: ProfileDir/JOB.STEP.NODE.jsonl in
 * root's directory (made and checked), a new file of root's that the
 * job's user may read (an ACL), bounded by ProfileMaxSize and by the
 * room kept for the journal.  node: slurmd's name (characters other than
 * [A-Za-z0-9._-] become '_'; "" or NULL: "node"). */
struct pin_step_profile {
    long long interval_us;
    const char *node;
    uid_t uid;            /* the job's owner: may read it */
    const char *policy;   /* for the header */
    const char *recorder; /* "pin.so VERSION" */
};

/* -1 with errp: why the step is not profiled (it runs anyway). */
int pin_step_profile_open (pin_step_t *s,
                           const struct pin_step_profile *p,
                           pin_error_t *errp);
/* The recorder's warning (NULL if none) and the file's path. */
const char *pin_step_profile_warning (const pin_step_t *s);
const char *pin_step_profile_path (const pin_step_t *s);
/* A task's pid as a root of the recorded tree (nothing when not
 * profiled).  -1 with errp. */
int pin_step_profile_add_task (pin_step_t *s, pid_t pid, pin_error_t *errp);
/* Finish a profile the watcher never took (the tasks never all forked);
 * 0 when there is none.  -1 with errp. */
int pin_step_profile_close (pin_step_t *s, pin_error_t *errp);

/* Start the step's watcher after its last task forked: policy dynamic
 * (not for the batch step) and/or the open profile (then the watcher's:
 * finished when it stops, or at once when it cannot start).  uid: the
 * job's owner, for the confinement line on a task's stderr.  Problems go
 * to the sink (the step then runs as policy none, or unprofiled). */
void pin_step_watch_start (pin_step_t *s, uid_t uid);

/* Would pin_step_watch_start start anything (policy dynamic outside the
 * batch step, or an open profile)? */
bool pin_step_watch_wanted (const pin_step_t *s);

/* Remember a task's pid for the confinement line (policy dynamic). */
void pin_step_add_task (pin_step_t *s, pid_t pid);

/* Stop the watcher (nothing if none runs): status is the step's wait
 * status for the profile's last line.  The watcher's cost goes to the
 * sink.  Idempotent. */
void pin_step_watch_stop (pin_step_t *s, int status);

/* The confinement (zeroed if none). */
void pin_step_confine_event (const pin_step_t *s, struct confine_event *ev);

/* Drop the step's claim (its last task exited).  -1 with errp. */
int pin_step_release (pin_step_t *s, pin_error_t *errp);

/* Accounting (account.h): a placed task's CPUs and memory nodes; a
 * task's wait status (last: every local task exited, a cpu.stat snapshot
 * is taken). */
void pin_step_account_task (pin_step_t *s, pid_t pid);
void pin_step_account_task_exit (pin_step_t *s, int status, bool last);

/* What the caller knows of the step at its end, from Slurm. */
struct pin_step_account_in {
    const struct step_ident *ident;
    const char *policy; /* the policy name for the record */
    bool has_seed;
    uint64_t seed;
    uint32_t alloc_cpus; /* what it asked on this node, or the
                            job's CPUs here (S_JOB_NCPUS) */
};

/* Append the step's record (once; nothing with Accounting=no), with the
 * cgroup's CPU time, the plan and the confinement: before the step's
 * cgroups are removed (pin_step_destroy). */
void pin_step_account (pin_step_t *s, const struct pin_step_account_in *in);

/* The job's end, in its extern step: the claims its steps left behind
 * (a killed slurmstepd) and our cgroup tree of the job (leftovers of
 * crashed steps, then the job directory itself under the node lock).
 * Everything it does or cannot do goes to the sink. */
void pin_step_job_cleanup (const struct pin_conf *conf,
                           uint32_t job,
                           const struct steplog *log);

#endif /* !PIN_STEP_H */
