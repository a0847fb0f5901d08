/* account.h - a step's accounting record and, at the job's end, the
 * job's (libacct/acct.h, doc/accounting.md)
 *
 * The step (step.h) keeps one stepacct from its creation when pin.conf
 * says Accounting=yes:
 *   stepacct_begin      the step starts (every step kind, extern too)
 *   stepacct_task       a task was placed: the CPUs and memory nodes it
 *                       got (its affinity, /proc/PID/status)
 *   stepacct_task_exit  a task's wait(2) status; the last one also takes
 *                       a cpu.stat snapshot, in case Slurm removes its
 *                       step cgroup before the step's end
 *   stepacct_end        the step's end, before our cgroups are removed:
 *                       read cpu.stat and append the record
 * and stepacct_job_epilog, in slurmd's epilog process, writes the job
 * record from the step records.  Nothing fails a step: errors go to the
 * caller's sink ("pin: ... accounting: ").
 */
#ifndef PIN_STEP_ACCOUNT_H
#define PIN_STEP_ACCOUNT_H

#include <hwloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ident.h"
#include "libacct/acct.h"
#include "libcgroup2/cg2.h"
#include "libconf/conf.h"
#include "steplog.h"

struct stepacct {
    bool done; /* the record is written */
    const struct pin_conf *conf;
    struct steplog log;
    char stepname[40]; /* "step 12.0" */
    struct acct_record rec;
    hwloc_bitmap_t cpus; /* union of the tasks' affinity */
    char mems[ACCT_STR]; /* Mems_allowed_list of the first task */
    int worst_rank;
    int32_t worst;
    bool have_snap; /* cpu.stat at the last task's exit */
    struct cg2_cpu_stat snap;
    int64_t last_exit_us;
};

/* NULL when conf says Accounting=no (or no memory: then unaccounted). */
struct stepacct *stepacct_begin (const struct pin_conf *conf,
                                 uint32_t job,
                                 uint32_t step,
                                 const char *stepname,
                                 const struct steplog *log);
void stepacct_destroy (struct stepacct *a); /* NULL is fine */

void stepacct_task (struct stepacct *a, pid_t pid);

/* `status`: the task's wait status; `last`: every local task has exited.
 * `cg`, `rel`: the step's cgroup (may be NULL). */
void stepacct_task_exit (struct stepacct *a,
                         int status,
                         bool last,
                         cg2_t *cg,
                         const char *rel);

/* What is known of the step at its end. */
struct stepacct_info {
    cg2_t *cg;           /* NULL: no cgroup v2 (mode affinity) */
    const char *rel;     /* the cgroup holding the step's tasks */
    const char *job_rel; /* nested: Slurm's job cgroup, for the extern
                            step's job record; NULL otherwise */
    const char *mode;    /* cg2_mode_name() */
    const char *policy;
    const char *fallback; /* "" or comma list */
    const char *gpus;     /* "" or the GPUs' bus ids (pin_step_gpus_text) */
    const char *nic;      /* "" or the NIC's name */
    bool has_seed;
    uint64_t seed;
    const char *cpus; /* NULL: the tasks' affinity, as seen */
    const char *mems; /* NULL: the tasks' Mems_allowed_list */
    uint32_t alloc_cpus;
    /* policy dynamic: when and how the step was confined (0: never) */
    int64_t confined_us;
    double confine_use; /* CPUs in use that triggered it */
    const char *confine_cpus;
    const char *confine_mems;
    /* who and where: from Slurm (ident.h), never the step's environment */
    const struct step_ident *ident;
};

/* Append the step's record (once). */
void stepacct_end (struct stepacct *a, const struct stepacct_info *in);

/* What the epilog process knows of a job. */
struct stepacct_epilog {
    uint32_t job;
    bool have_uid;
    uint32_t uid;
    /* slurmd's environment of the epilog (prep_script_slurmd.c's
     * _build_env), not the job's; NULL if unset */
    const char *cluster, *user, *partition;
    const struct steplog *log;
    /* what slurmctld says of the ended job (slurm_load_job), when it
     * answered: the job record takes the job's State, ExitCode, Start, End
     * and (one node) AllocCPUS from there, as slurmdbd has them */
    bool have_slurm;
    const char *slurm_state;
    int32_t slurm_exit_status;
    int64_t slurm_start_us, slurm_end_us;
    int64_t slurm_submit_us; /* this job's records: a reused id's earlier
                                job's are left out */
    uint32_t slurm_cpus; /* 0: unknown (the steps' count stays) */
};

/* The job's record on this node from its step records (unless the extern
 * step wrote one); a job no step recorded keeps a line with what the
 * epilog knows. */
void stepacct_job_epilog (const struct pin_conf *conf,
                          const struct stepacct_epilog *in);

#endif /* !PIN_STEP_ACCOUNT_H */
