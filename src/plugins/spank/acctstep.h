/* acctstep.h - the plugin's accounting glue: one record per step and one
 * per job and node in the journal (libacct/acct.h, doc/accounting.md)
 *
 * Called from pin.c at fixed points of a step's life in slurmstepd:
 *   acctstep_begin       init_post_opt, every step kind (extern too)
 *   acctstep_task        task_post_fork: the CPUs and memory nodes a
 *                        task got
 *   acctstep_task_exit   task_exit: the task's wait(2) status; the last
 *                        one also takes a cpu.stat snapshot, in case
 *                        Slurm removes its step cgroup before spank exit
 *   acctstep_end         spank exit, before the plugin removes its
 *                        cgroups: read cpu.stat and append the record
 *   acctstep_job_epilog  job_epilog (slurmd's `slurmstepd spank`
 *                        process): the job record from step records
 * Every error is logged (slurm_error, "pin: ... accounting: ") and never
 * reaches the step.
 */
#ifndef PIN_ACCTSTEP_H
#define PIN_ACCTSTEP_H

#include <stdbool.h>
#include <stdint.h>

#include <slurm/spank.h>

#include "libcgroup2/cg2.h"
#include "libconf/conf.h"
#include "ident.h"

void acctstep_begin (spank_t sp, const struct pin_conf *conf, uint32_t job,
                     uint32_t step, const char *stepname);

void acctstep_task (pid_t pid);

/* `last`: every local task has exited. `cg`, `rel`: the step's cgroup
 * (may be NULL) */
void acctstep_task_exit (spank_t sp, bool last, cg2_t *cg, const char *rel);

/* What pin.c knows about the step at its end. */
struct acctstep_info {
    cg2_t *cg;              /* NULL: no cgroup v2 (mode affinity) */
    const char *rel;        /* the cgroup holding the step's tasks */
    const char *job_rel;    /* nested: Slurm's job cgroup, for the extern
                               step's job record; NULL otherwise */
    const char *mode;       /* cg2_mode_name() */
    const char *policy;
    const char *fallback;   /* "" or comma list */
    bool has_seed;
    uint64_t seed;
    const char *cpus;       /* NULL: the tasks' affinity, as seen */
    const char *mems;       /* NULL: the tasks' Mems_allowed_list */
    uint32_t alloc_cpus;    /* 0: ask Slurm (S_JOB_NCPUS) */
    /* policy dynamic: when and how the step was confined (0: never) */
    int64_t confined_us;
    double confine_use;     /* CPUs in use that triggered it */
    const char *confine_cpus;
    const char *confine_mems;
    /* who and where: from Slurm (ident.h), never the step's environment */
    const struct step_ident *ident;
};

void acctstep_end (spank_t sp, const struct acctstep_info *info);

void acctstep_job_epilog (spank_t sp, const struct pin_conf *conf);

#endif /* !PIN_ACCTSTEP_H */
