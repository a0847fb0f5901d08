/* setup.c - pin.so in slurmstepd: the step's setup (init_post_opt)
 *
 * The effective policy (option, pin.conf, the partition's line), the
 * --cpu-bind conflict, the step's tasks and PUs from Slurm, then libstep:
 * topology, cgroup mode, StateDir, the plan under the node lock, and the
 * profile.  Errors that concern the step go to g.error (step_fail) and
 * reach the user through task_init.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "glue.h"
#include "libcgroup2/mode.h"
#include "libcgroup2/stepcg.h"

/* ---- slurmstepd: plan the step ---------------------------------------- */

/* A core list of Slurm's for this node ("" if none). */
static const char *alloc_cores (spank_t sp, spank_item_t item)
{
    char *cores = NULL;

    if (spank_get_item (sp, item, &cores) != ESPANK_SUCCESS || !cores)
        return "";
    return cores;
}

/* The step's PUs (the batch step: the job's) and the job's PUs on this
 * node, from Slurm's core lists. */
static int get_alloc (spank_t sp)
{
    pin_error_t err = {""};
    const char *job = alloc_cores (sp, S_JOB_ALLOC_CORES);
    const char *step = g.batch ? NULL : alloc_cores (sp, S_STEP_ALLOC_CORES);

    if (pin_step_set_alloc (g.st, job, step, &err) < 0) {
        step_fail ("%s", err.text);
        return -1;
    }
    g.cpus_per_task = pin_step_cpus_per_task (g.st);
    return 0;
}

/* The affinity-only fallback is logged once per node and boot (a marker
 * in StateDir: first), then at debug level. */
static void warn_fallback (bool first)
{
    const char *warning = pin_step_warning (g.st);

    if (!warning[0])
        return;
    if (first)
        slurm_info ("pin: warning: %s", warning);
    else
        slurm_debug ("pin: step %s: %s", g.stepname, warning);
}

/* After the last local task is placed: start the step's watcher, for
 * policy dynamic and/or the profile (libstep). */
void watcher_begin (spank_t sp)
{
    uid_t uid;

    if (!pin_step_watch_wanted (g.st))
        return; /* neither dynamic nor profiled: the common case */
    if (spank_get_item (sp, S_JOB_UID, &uid) != ESPANK_SUCCESS)
        uid = (uid_t)-1;
    pin_step_watch_start (g.st, uid);
}

/* The step's policy and tasks on this node, from Slurm and pin.conf. */
static int step_tasks (pin_error_t *errp)
{
    struct pin_step_tasks t = {
        .policy = g.policy,
        .batch = g.batch,
        .ntasks = g.ntasks,
        .cpus_per_task = g.cpus_per_task,
        .seed = g.seed,
    };

    return pin_step_set_tasks (g.st, &t, errp);
}

int step_get_ids (spank_t sp)
{
    char stepdir[32];

    if (spank_get_item (sp, S_JOB_ID, &g.job) != ESPANK_SUCCESS
        || spank_get_item (sp, S_JOB_STEPID, &g.step) != ESPANK_SUCCESS) {
        slurm_error ("pin: cannot get the job and step ids");
        return -1;
    }
    stepcg_step_dir (g.step, stepdir, sizeof (stepdir));
    snprintf (g.stepname, sizeof (g.stepname), "%u.%s", g.job, stepdir + 5);
    return 0;
}

/* A --cpu-bind list (map_cpu, mask_cpu, ...) and a binding policy both
 * name CPUs.  The user's own --pin-policy with the user's own --cpu-bind:
 * refused, as slurm-pin-spank(8) says.  Any other conflict falls back: the
 * step runs as Slurm alone would run it (policy none, Slurm's binding
 * kept) and task 0 says so in one line:
 *  - the policy came from the site (pin.conf's DefaultPolicy, a
 *    partition's default or forced policy), not from --pin-policy;
 *  - the binding was inherited: an srun inside a task of another step
 *    takes the parent task's SLURM_CPU_BIND, which srun reads as
 *    --cpu-bind; task_init recorded that binding in the task's
 *    PINOPT_TASK_CPU_BIND, which the srun copies too.
 * `from` says where the policy came from; `user_policy`: --pin-policy.
 * The variables read here are the user's, and only decide what happens to
 * the user's own step. */
static int check_cpu_bind (spank_t sp, bool user_policy, const char *from)
{
    char type[256], bind[256], shown[96], parent[256];
    bool inherited;

    if (g.batch || g.policy == PLACE_NONE)
        return 0;
    if (spank_getenv (sp, "SLURM_CPU_BIND_TYPE", type, sizeof (type))
        != ESPANK_SUCCESS)
        return 0;
    if (!pinopt_cpu_bind_conflicts (type))
        return 0;
    if (spank_getenv (sp, "SLURM_CPU_BIND", bind, sizeof (bind))
        != ESPANK_SUCCESS)
        copy_text (bind, sizeof (bind), type);
    pinopt_quote (bind, 64, shown, sizeof (shown));
    inherited =
        spank_getenv (sp, PINOPT_TASK_CPU_BIND, parent, sizeof (parent))
            == ESPANK_SUCCESS
        && pinopt_cpu_bind_same (parent, bind);
    if (user_policy && !inherited) {
        step_fail (
            "--cpu-bind=%s conflicts with --pin-policy=%s: both set "
            "explicit CPUs; drop one of them (or use "
            "--pin-policy=none)",
            shown,
            policy_name (g.policy));
        return -1;
    }
    snprintf (g.bind_note,
              sizeof (g.bind_note),
              "--cpu-bind=%s%s "
              "conflicts with policy %s (%s): the step keeps Slurm's "
              "binding, no policy applied",
              shown,
              inherited ? " (inherited from the step this srun runs in)" : "",
              policy_name (g.policy),
              from);
    slurm_info ("pin: step %s: %s", g.stepname, g.bind_note);
    g.policy = PLACE_NONE;
    return 0;
}

/* The debug log's account of the plugin's CPU time for this step on this
 * node, per phase (bench/README.md: how to read it). */
static void log_phases (void)
{
    char init[128], setup[512];

    phase_format (&g.ph_init, init, sizeof (init));
    phase_format (&g.ph, setup, sizeof (setup));
    slurm_debug (
        "pin: step %s: plugin CPU time %ld us (init: %s; setup: "
        "%s)",
        g.stepname,
        phase_total_cpu_us (&g.ph_init) + phase_total_cpu_us (&g.ph),
        init,
        setup);
}

int step_setup (spank_t sp)
{
    pin_error_t err = {""};
    bool refreshed = false, first_warning = false;

    /* pin.conf's global rules and PartitionName= line for the partition
     * slurmctld ran the job in (ident.c; never SLURM_JOB_PARTITION of the
     * job's environment: the user's), for the steps the job_submit
     * plugin does not see too: the partition's default when the step
     * asks for nothing, its forced policy always (libconf, as
     * job_submit_pin.so and slurm-pin check decide) */
    struct pin_conf_request req = {
        .partitions = g.ident.have_job_info ? g.ident.partition : NULL,
        .policy_given = g.opt_given,
        .policy = g.opt.policy,
        .verbose = g.opt.verbose,
        .profile_given = g.prof_given,
        .profile_us = g.prof_opt_us,
    };
    struct pin_conf_effective eff;
    const char *from;

    if (pin_conf_resolve (&g.conf, &req, &eff, &err) < 0) {
        step_fail ("%s", err.text);
        return -1;
    }
    pin_conf_narrow (&g.conf, &eff.rules); /* the dynamic keys */
    g.policy = eff.policy;
    g.verbose = eff.verbose;
    g.profile_us = eff.profile_us;
    from = pin_conf_source_name (eff.source);
    g.seed = pinopt_seed (g.job, g.step);
    if (g.opt_error[0]) {
        step_fail ("%s", g.opt_error);
        return -1;
    }
    if (check_cpu_bind (sp,
                        g.opt_given && g.policy == g.opt.policy
                            && strcmp (from, "--pin-policy") == 0,
                        from)
        < 0)
        return -1;
    if (spank_get_item (sp, S_JOB_LOCAL_TASK_COUNT, &g.ntasks)
            != ESPANK_SUCCESS
        || spank_get_item (sp, S_STEP_CPUS_PER_TASK, &g.cpus_per_task)
               != ESPANK_SUCCESS) {
        step_fail ("cannot get the task count or CPUs per task");
        return -1;
    }
    if (g.ntasks == 0)
        return 0; /* nothing to place on this node */
    if (g.cpus_per_task == 0)
        g.cpus_per_task = 1;
    if (step_tasks (&err) < 0) {
        step_fail ("%s", err.text);
        return -1;
    }
    /* Policy none places nothing: the topology (a few ms to load) is only
     * needed to name the step's CPUs in the verbose line. */
    if (g.policy != PLACE_NONE || g.verbose || g.profile_us) {
        phase_mark (&g.ph, "start");
        if (pin_step_load_topology (g.st, &refreshed, &err) < 0) {
            step_fail ("%s", err.text);
            return -1;
        }
        phase_mark (&g.ph,
                    refreshed ? "topology (cache rewritten)" : "topology");
        if (refreshed)
            slurm_info ("pin: topology cache %s refreshed",
                        g.conf.topology_cache);
        if (get_alloc (sp) < 0)
            return -1;
        phase_mark (&g.ph, "alloc");
        step_devices (sp);
    }
    pin_step_detect_mode (g.st);
    phase_mark (&g.ph, "mode");

    if (g.policy == PLACE_NONE
        && pin_step_mode (g.st) != CG2_MODE_STANDALONE) {
        g.ready = true;
        log_phases ();
        return 0;
    }
    if (pin_step_prepare_state (g.st, &first_warning, &err) < 0) {
        step_fail ("%s", err.text);
        return -1;
    }
    warn_fallback (first_warning);
    phase_mark (&g.ph, "statedir");
    /* lock, busy PUs, --overlap, placement, claim, step cgroup, unlock */
    if (pin_step_plan (g.st, PIN_STEP_PLAN_START, NULL, NULL, &err) < 0) {
        step_fail ("%s", err.text);
        return -1;
    }
    slurm_debug (
        "pin: step %s: policy=%s tasks=%u cpus_per_task=%u "
        "mode=%s%s",
        g.stepname,
        policy_name (g.policy),
        g.ntasks,
        g.cpus_per_task,
        cg2_mode_name (pin_step_mode (g.st)),
        pin_step_cpuset (g.st) ? "" : " (affinity only)");
    g.ready = true;
    log_phases ();
    return 0;
}

/* ---- slurmstepd: the step's profile (doc/profiling.md) ----------------- */

/* Say why the step is not profiled: slurmd's log now, task 0's stderr in
 * task_init (the tasks are forked after this). */
static void profile_skip (const char *fmt, ...)
    __attribute__ ((format (printf, 1, 2)));
static void profile_skip (const char *fmt, ...)
{
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (g.prof_note, sizeof (g.prof_note), fmt, ap);
    va_end (ap);
    slurm_error ("pin: step %s: not profiled: %s", g.stepname, g.prof_note);
}

/* Open the step's profile (libstep) before the tasks exist, so that
 * their first fork is seen.  A profile that cannot be recorded never
 * fails the step. */
void profile_begin (spank_t sp)
{
    struct pin_step_profile p = {
        .interval_us = g.profile_us,
        .node = g.ident.node, /* slurmd's (ident.c), never the job's
                                 SLURMD_NODENAME */
        .policy = policy_name (g.policy),
        .recorder = "pin.so " PACKAGE_VERSION,
    };
    pin_error_t err = {""};
    gid_t gid;

    if (spank_get_item (sp, S_JOB_UID, &p.uid) != ESPANK_SUCCESS
        || spank_get_item (sp, S_JOB_GID, &gid) != ESPANK_SUCCESS) {
        profile_skip ("cannot get the job's user");
        return;
    }
    if (pin_step_profile_open (g.st, &p, &err) < 0)
        profile_skip ("%s", err.text);
    else if (pin_step_profile_warning (g.st))
        slurm_info ("pin: step %s: %s",
                    g.stepname,
                    pin_step_profile_warning (g.st));
    else
        slurm_debug ("pin: step %s: profiling every %lld ms into %s",
                     g.stepname,
                     g.profile_us / 1000,
                     pin_step_profile_path (g.st));
}

/* The job's partition, name and array ids from slurmctld (ident.c), once
 * per step; `otherwise` says what its absence means. */
void job_info (const char *otherwise)
{
    if (g.ident.have_job_info || g.ident.job_info_error[0])
        return;
    if (ident_job_info (g.job, &g.ident) < 0)
        slurm_error ("pin: step %s: %s: %s",
                     g.stepname,
                     g.ident.job_info_error,
                     otherwise);
    else
        slurm_debug (
            "pin: step %s: node %s, cluster %s, user %s (%u), "
            "partition %s, job name %s; slurm_load_job took %lld us",
            g.stepname,
            g.ident.node,
            g.ident.cluster,
            g.ident.user,
            g.ident.uid,
            g.ident.partition,
            g.ident.job_name,
            g.ident.job_info_us);
}
