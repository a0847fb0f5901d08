/* glue.h - what the SPANK plugin's files share (pin.c: options, init
 * and the end; setup.c: the step's setup; task.c: the tasks).  The plugin
 * reads items from Slurm and calls libstep; it keeps no state of its own
 * beyond `g`, the input of the step and its handle.
 */
#ifndef PIN_SPANK_GLUE_H
#define PIN_SPANK_GLUE_H

#include <slurm/slurm.h>
#include <slurm/spank.h>
#include <stdbool.h>
#include <stdint.h>

#include "ident.h"
#include "libconf/conf.h"
#include "libconf/pinopt.h"
#include "libplace/place.h"
#include "libstep/step.h"
#include "libutil/errprintf.h"
#include "libutil/phase.h"

/* The plugin's one global: what it read from Slurm and pin.conf in this
 * process (the step's input), and the step itself (libstep/step.h), which
 * owns the topology, the plan, the claim, the cgroups, the watcher and
 * the record.  Defined in pin.c. */
struct pin_glue {
    /* every context */
    struct pin_conf conf;
    bool conf_ok;
    char conf_error[sizeof (((pin_error_t *)0)->text)];
    bool opt_given; /* --pin-policy reached this process */
    struct pin_option opt;
    char opt_error[sizeof (((pin_error_t *)0)->text)];
    bool prof_given;       /* --pin-profile reached this process */
    long long prof_opt_us; /* its interval; 0: off */

    /* slurmstepd: the step */
    bool active; /* a step we handle (not extern) */
    bool ready;  /* planned (or policy none) and set up */
    uint32_t job, step;
    char stepname[32];       /* "12.0", "12.batch" */
    struct step_ident ident; /* node, user, partition, ... from Slurm */
    int policy;
    bool verbose;
    bool batch; /* batch or interactive step */
    uint32_t ntasks;
    uint32_t cpus_per_task;
    uint64_t seed;
    char error[512];     /* why this step cannot run: its task 0
                            prints it and every task fails */
    char bind_note[384]; /* a policy not applied for a --cpu-bind
                            (check_cpu_bind): task 0 prints it */
    pin_step_t *st;      /* NULL: no step of ours on this node */
    uint32_t tasks_exited;
    /* profiling (doc/profiling.md): the recorder, opened in
     * init_post_opt, handed to the step's watcher after the last task
     * forked */
    long long profile_us; /* 0: not profiled */
    char prof_note[384];  /* why not profiled, for task 0's stderr */
    uint32_t tasks_forked;
    int exit_status; /* the first non-zero, or the only one */

    /* where the plugin's time goes (debug log: libutil/phase.h) */
    struct phases ph_init; /* slurm_spank_init: pin.conf */
    struct phases ph;      /* init_post_opt: the step's setup */
};
extern struct pin_glue g;

/* libstep's lines (the watcher thread's, and notes) into slurmd's log */
extern const struct steplog step_log;

void copy_text (char *dst, size_t n, const char *src);
const char *policy_name (int policy);

/* Set g.error (once: the first reason wins) and log it. */
void step_fail (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

/* setup.c */
int step_get_ids (spank_t sp);
int step_setup (spank_t sp);
void profile_begin (spank_t sp);
void job_info (const char *otherwise);
void watcher_begin (spank_t sp);

/* task.c */
void step_account (spank_t sp);

/* The step's GPUs (from Slurm) and --pin-policy's NIC into the step
 * (gpus.c); after its topology and allocation are known. */
void step_devices (spank_t sp);

#endif /* !PIN_SPANK_GLUE_H */
