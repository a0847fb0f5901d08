/* pin.c - SPANK plugin: --pin-policy=POLICY[,verbose]
 *
 * Thin glue between Slurm and the libraries of slurm-pin:
 *   srun/sbatch/salloc  register the option (in slurm_spank_init, so that
 *                       sbatch and salloc see it too), validate its value
 *                       and the site's AllowedPolicies;
 *   slurmstepd          per step, as root (init_post_opt): load the cached
 *                       topology, map the step's cores to PUs, take the
 *                       node lock, read what other steps hold (live claims
 *                       and the cgroup tree), plan every local task, claim
 *                       the PUs, create the step cgroup, release the lock;
 *                       per task (task_post_fork, root): write the task's
 *                       cpuset, move it in (standalone), sched_setaffinity,
 *                       verify; in the task (task_init, as the user):
 *                       OMP_* and the verbose line; at the end (task_exit,
 *                       exit): drop the claim, remove our cgroups.
 * Errors that concern a step (bad value, too few free PUs, a conflicting
 * --cpu-bind) are printed by the step's first task on its stderr, which
 * then fails; Slurm sees only a failed task.  Nothing here may crash the
 * slurmstepd: every error path logs a "pin: " line and returns.
 * doc/admin-guide.md has the design decisions.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "libcgroup2/cg2.h"
#include "libcgroup2/mode.h"
#include "libconf/conf.h"
#include "libplace/place.h"
#include "libprof/profdir.h"
#include "libprof/record.h"
#include "libtopo/topo.h"
#include "libutil/errprintf.h"
#include "libutil/mkdirp.h"
#include "libutil/phase.h"
#include "libutil/safefile.h"
#include "libcgroup2/stepcg.h"
#include "libstep/step.h"
#include "libstep/ompenv.h"
#include "pinopt.h"
#include "libacct/deliver.h"
#include "ident.h"

SPANK_PLUGIN (pin, 1);

/* The plugin's one global: what it read from Slurm and pin.conf in this
 * process (the step's input), and the step itself (libstep/step.h), which
 * owns the topology, the plan, the claim, the cgroups and the watcher. */
static struct {
    /* every context */
    struct pin_conf conf;
    bool conf_ok;
    char conf_error[sizeof (((pin_error_t *)0)->text)];
    bool opt_given;             /* --pin-policy reached this process */
    struct pin_option opt;
    char opt_error[sizeof (((pin_error_t *)0)->text)];
    bool prof_given;            /* --pin-profile reached this process */
    long long prof_opt_us;      /* its interval; 0: off */

    /* slurmstepd: the step */
    bool active;                /* a step we handle (not extern) */
    bool ready;                 /* planned (or policy none) and set up */
    uint32_t job, step;
    char stepname[32];          /* "12.0", "12.batch" */
    struct step_ident ident;    /* node, user, partition, ... from Slurm */
    int policy;
    bool verbose;
    bool batch;                 /* batch or interactive step */
    uint32_t ntasks;
    uint32_t cpus_per_task;
    uint64_t seed;
    char error[512];            /* why this step cannot run: its task 0
                                   prints it and every task fails */
    char bind_note[384];        /* a policy not applied for a --cpu-bind
                                   (check_cpu_bind): task 0 prints it */
    pin_step_t *st;             /* NULL: no step of ours on this node */
    uint32_t tasks_exited;
    /* profiling (doc/profiling.md): the recorder, opened in
     * init_post_opt, handed to the step's watcher after the last task
     * forked */
    long long profile_us;       /* 0: not profiled */
    struct prof_rec *prof;
    char prof_path[PATH_MAX];
    char prof_note[384];        /* why not profiled, for task 0's stderr */
    uint32_t tasks_forked;
    int exit_status;            /* the first non-zero, or the only one */

    /* where the plugin's time goes (debug log: libutil/phase.h) */
    struct phases ph_init;      /* slurm_spank_init: pin.conf */
    struct phases ph;           /* init_post_opt: the step's setup */
} g;

static int opt_cb (int val, const char *optarg, int remote);

static char opt_usage[256];

static int prof_opt_cb (int val, const char *optarg, int remote);

static struct spank_option prof_spank_option = {
    "pin-profile",
    "[INTERVAL]",
    "Record every process and thread of each step and sample them every "
    "INTERVAL (default 1s; e.g. 500ms, 2s; 'off' to turn off a site "
    "default). See slurm-pin-profile(1).",
    2,
    0,
    prof_opt_cb,
};

static struct spank_option pin_spank_option = {
    "pin-policy",
    "POLICY[,verbose]",
    opt_usage,
    1,
    0,
    opt_cb,
};

/* ---- small helpers ---------------------------------------------------- */

/* libstep's lines (the watcher thread's, and notes) into slurmd's log */
static void log_sink (void *arg, enum steplog_level level, const char *line)
{
    (void)arg;
    if (level == STEPLOG_ERROR)
        slurm_error ("%s", line);
    else if (level == STEPLOG_INFO)
        slurm_info ("%s", line);
    else
        slurm_debug ("%s", line);
}

static const struct steplog step_log = { log_sink, NULL };

static void copy_text (char *dst, size_t n, const char *src)
{
    snprintf (dst, n, "%s", src);
}

static const char *policy_name (int policy)
{
    return place_policy_name ((enum place_policy)policy);
}

/* "numa-local, none": the known policies the site allows. */
static const char *allowed_list (char *buf, size_t n)
{
    char names[256];
    char *save = NULL, *tok;
    size_t off = 0;

    buf[0] = '\0';
    copy_text (names, sizeof (names), place_policy_list ());
    for (tok = strtok_r (names, ", ", &save); tok;
         tok = strtok_r (NULL, ", ", &save)) {
        enum place_policy p;
        if (place_policy_parse (tok, &p, NULL) < 0
            || !pin_conf_policy_allowed (&g.conf, (int)p))
            continue;
        int len = snprintf (buf + off, n - off, "%s%s", off ? ", " : "", tok);
        if (len < 0 || (size_t)len >= n - off)
            break;
        off += (size_t)len;
    }
    return buf;
}

/* Set g.error (once: the first reason wins) and log it. */
static void step_fail (const char *fmt, ...)
    __attribute__ ((format (printf, 1, 2)));
static void step_fail (const char *fmt, ...)
{
    char msg[sizeof (g.error)];
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (msg, sizeof (msg), fmt, ap);
    va_end (ap);
    slurm_error ("pin: step %s: %s", g.stepname, msg);
    if (!g.error[0])
        copy_text (g.error, sizeof (g.error), msg);
}

/* ---- option ----------------------------------------------------------- */

static int opt_cb (int val, const char *optarg, int remote)
{
    struct pin_option o;
    pin_error_t err = { "" };

    if (pinopt_parse (optarg, &o, &err) < 0)
        goto fail;
    if (g.conf_ok && !pin_conf_policy_allowed (&g.conf, o.policy)) {
        char shown[PINOPT_VALUE_MAX + 8], allowed[192];
        errprintf (&err, "--pin-policy=%s: policy '%s' is not allowed on "
                   "this cluster; allowed: %s",
                   pinopt_quote (optarg, PINOPT_VALUE_MAX, shown,
                                 sizeof (shown)),
                   policy_name (o.policy),
                   allowed_list (allowed, sizeof (allowed)));
        goto fail;
    }
    g.opt = o;
    g.opt_given = true;
    g.opt_error[0] = '\0';
    return 0;
fail:
    slurm_error ("pin: %s", err.text);
    if (remote)
        copy_text (g.opt_error, sizeof (g.opt_error), err.text);
    return -1;
}

static int prof_opt_cb (int val, const char *optarg, int remote)
{
    char why[200], shown[PINOPT_VALUE_MAX + 8];
    long long us;

    (void)val;
    optarg = pinopt_slurm_optarg (optarg);  /* "--pin-profile" alone */
    if (pin_conf_parse_profile (optarg, &us, why, sizeof (why)) < 0) {
        pin_error_t err = { "" };
        errprintf (&err, "--pin-profile=%s: %s",
                   pinopt_quote (optarg, PINOPT_VALUE_MAX, shown,
                                 sizeof (shown)), why);
        slurm_error ("pin: %s", err.text);
        if (!remote)
            return -1;      /* srun, sbatch, salloc: refused */
        /* slurmstepd (srun checked it already; a value from elsewhere):
         * the step runs unprofiled and task 0 says why */
        copy_text (g.prof_note, sizeof (g.prof_note), err.text);
        us = 0;
    }
    g.prof_given = true;
    g.prof_opt_us = us;
    return 0;
}

/* ---- init ------------------------------------------------------------- */

int slurm_spank_init (spank_t sp, int ac, char **av)
{
    spank_context_t ctx = spank_context ();
    pin_error_t err = { "" };

    phase_start (&g.ph_init);
    pin_conf_defaults (&g.conf);
    if (pin_conf_load_args (&g.conf, ac, av, &err) < 0) {
        g.conf_ok = false;
        copy_text (g.conf_error, sizeof (g.conf_error), err.text);
    }
    else
        g.conf_ok = true;
    phase_mark (&g.ph_init, "conf");

    /* slurmd itself and prolog/epilog: never fail (a required plugin that
     * fails here would stop slurmd from starting). */
    if (ctx == S_CTX_SLURMD || ctx == S_CTX_JOB_SCRIPT) {
        if (!g.conf_ok && ctx == S_CTX_SLURMD)
            slurm_error ("pin: bad configuration: %s (jobs asking for "
                         "pinning will fail or run unpinned until it is "
                         "fixed)", g.conf_error);
        return 0;
    }
    if (ctx != S_CTX_LOCAL && ctx != S_CTX_REMOTE && ctx != S_CTX_ALLOCATOR)
        return 0;

    snprintf (opt_usage, sizeof (opt_usage),
              "Place each task's CPUs by POLICY (%s); ',verbose' prints "
              "each task's CPUs. See slurm-pin-spank(8).",
              place_policy_list ());
    if (spank_option_register (sp, &pin_spank_option) != ESPANK_SUCCESS) {
        slurm_error ("pin: cannot register --pin-policy");
        return -1;
    }
    if (spank_option_register (sp, &prof_spank_option) != ESPANK_SUCCESS) {
        slurm_error ("pin: cannot register --pin-profile");
        return -1;
    }
    if (!g.conf_ok) {
        slurm_error ("pin: bad configuration: %s", g.conf_error);
        /* srun/sbatch/salloc: a required plugin refuses the command here,
         * an optional one goes on disabled.  slurmstepd: failing here
         * makes Slurm abort the launch with a generic message (srun then
         * exits 0, and a batch job drains the node), so the step's tasks
         * fail instead, in task_init, with this reason on their stderr;
         * for an optional plugin Slurm ignores that and they run
         * unpinned. */
        return ctx == S_CTX_REMOTE ? 0 : -1;
    }
    return 0;
}

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
    pin_error_t err = { "" };
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
static void watcher_begin (spank_t sp)
{
    uid_t uid;

    if (spank_get_item (sp, S_JOB_UID, &uid) != ESPANK_SUCCESS)
        uid = (uid_t)-1;
    pin_step_watch_start (g.st, g.prof, uid);
    g.prof = NULL;      /* the watcher's now */
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

static int step_get_ids (spank_t sp)
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
    inherited = spank_getenv (sp, PINOPT_TASK_CPU_BIND, parent,
                              sizeof (parent)) == ESPANK_SUCCESS
                && pinopt_cpu_bind_same (parent, bind);
    if (user_policy && !inherited) {
        step_fail ("--cpu-bind=%s conflicts with --pin-policy=%s: both set "
                   "explicit CPUs; drop one of them (or use "
                   "--pin-policy=none)", shown, policy_name (g.policy));
        return -1;
    }
    snprintf (g.bind_note, sizeof (g.bind_note), "--cpu-bind=%s%s "
              "conflicts with policy %s (%s): the step keeps Slurm's "
              "binding, no policy applied", shown,
              inherited ? " (inherited from the step this srun runs in)"
                        : "",
              policy_name (g.policy), from);
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
    slurm_debug ("pin: step %s: plugin CPU time %ld us (init: %s; setup: "
                 "%s)", g.stepname, phase_total_cpu_us (&g.ph_init)
                                    + phase_total_cpu_us (&g.ph),
                 init, setup);
}

static int step_setup (spank_t sp)
{
    pin_error_t err = { "" };
    bool refreshed = false, first_warning = false;

    const char *from = g.opt_given ? "--pin-policy"
                                   : "pin.conf DefaultPolicy";

    g.policy = g.opt_given ? g.opt.policy : g.conf.default_policy;
    g.profile_us = g.conf.profile_us;
    /* pin.conf's PartitionName= rules (job_submit_pin(8)) for the steps
     * the job_submit plugin does not see: the partition's default when
     * the step asks for nothing, its forced policy always. */
    {
        struct pin_conf_rules r;

        /* the partition slurmctld ran the job in (ident.c), never
         * SLURM_JOB_PARTITION of the job's environment: the user's */
        if (g.ident.have_job_info) {
            pin_conf_rules_for (&g.conf, g.ident.partition, &r);
            g.conf.dynamic_overuse = r.dynamic_overuse;
            g.conf.dynamic_grace_us = r.dynamic_grace_us;
            g.conf.dynamic_interval_us = r.dynamic_interval_us;
            g.conf.dynamic_confine = r.dynamic_confine;
            g.profile_us = r.profile_us;
            if (r.forced_policy >= 0) {
                if (!g.opt_given || g.opt.policy != r.forced_policy)
                    from = "forced by the partition";
                g.policy = r.forced_policy;
            }
            else if (!g.opt_given) {
                if (r.from_partition)
                    from = "the partition's default";
                g.policy = r.default_policy;
            }
        }
    }
    g.verbose = (g.opt_given && g.opt.verbose) || g.conf.verbose;
    if (g.prof_given)
        g.profile_us = g.prof_opt_us;
    g.seed = pinopt_seed (g.job, g.step);
    if (g.opt_error[0]) {
        step_fail ("%s", g.opt_error);
        return -1;
    }
    if (check_cpu_bind (sp, g.opt_given && g.policy == g.opt.policy
                                && strcmp (from, "--pin-policy") == 0,
                        from) < 0)
        return -1;
    if (spank_get_item (sp, S_JOB_LOCAL_TASK_COUNT, &g.ntasks)
        != ESPANK_SUCCESS
        || spank_get_item (sp, S_STEP_CPUS_PER_TASK, &g.cpus_per_task)
           != ESPANK_SUCCESS) {
        step_fail ("cannot get the task count or CPUs per task");
        return -1;
    }
    if (g.ntasks == 0)
        return 0;   /* nothing to place on this node */
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
        phase_mark (&g.ph, refreshed ? "topology (cache rewritten)"
                                     : "topology");
        if (refreshed)
            slurm_info ("pin: topology cache %s refreshed",
                        g.conf.topology_cache);
        if (get_alloc (sp) < 0)
            return -1;
        phase_mark (&g.ph, "alloc");
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
    slurm_debug ("pin: step %s: policy=%s tasks=%u cpus_per_task=%u "
                 "mode=%s%s", g.stepname, policy_name (g.policy), g.ntasks,
                 g.cpus_per_task, cg2_mode_name (pin_step_mode (g.st)),
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

/* Open the recorder before the tasks exist, so that their first fork is
 * seen: ProfileDir/JOB.STEP.NODE.jsonl, root's directory, a new file of
 * root's that the job's user may read (an ACL), bounded by ProfileMaxSize
 * and by the room kept for the journal (doc/profiling.md).  A profile
 * that cannot be recorded never fails the step. */
static void profile_begin (spank_t sp)
{
    char node[ACCT_STR], dir_cg[2 * PATH_MAX], *list = NULL;
    const char *rel = pin_step_acct_rel (g.st, NULL, 0);
    struct prof_rec_opts o = {
        .max_bytes = g.conf.profile_max_size,
        .interval_ms = (unsigned)(g.profile_us / 1000),
        .cpus = pin_step_plan_cpus (g.st) ? pin_step_plan_cpus (g.st)
                                          : pin_step_allowed (g.st),
        .pss = true,
        .taskstats = true,
        .rcvbuf = 64 << 20,
        .share = true,
        .keep_free = g.conf.accounting
                     ? profdir_journal_reserve (g.conf.profile_dir,
                                                g.conf.journal_dir,
                                                g.conf.journal_max_size)
                     : 0,
    };
    json_object *h = NULL;
    pin_error_t err = { "" };
    uid_t uid;
    gid_t gid;

    /* slurmd's node name (ident.c), never SLURMD_NODENAME of the job's
     * environment: the user's */
    copy_text (node, sizeof (node), g.ident.node[0] ? g.ident.node : "node");
    for (char *c = node; *c; c++)
        if (!isalnum ((unsigned char)*c) && !strchr ("._-", *c))
            *c = '_';
    if (spank_get_item (sp, S_JOB_UID, &uid) != ESPANK_SUCCESS
        || spank_get_item (sp, S_JOB_GID, &gid) != ESPANK_SUCCESS) {
        profile_skip ("cannot get the job's user");
        return;
    }
    if (mkdir_p (g.conf.profile_dir, 0755, 0755, &err) < 0) {
        profile_skip ("ProfileDir %s", err.text);
        return;
    }
    if (safefile_check (g.conf.profile_dir, geteuid (), &err) < 0) {
        profile_skip ("ProfileDir %s", err.text);
        return;
    }
    if (snprintf (g.prof_path, sizeof (g.prof_path), "%s/%s.%s.jsonl",
                  g.conf.profile_dir, g.stepname, node)
        >= (int)sizeof (g.prof_path)) {
        profile_skip ("profile path too long");
        return;
    }
    /* Slurm's step_rel begins with '/' in nested mode: one slash, as in
     * the accounting record, so the two name the same directory alike */
    if (rel[0] && pin_step_cgroup (g.st)
        && snprintf (dir_cg, sizeof (dir_cg), "%s%s%s",
                     cg2_root (pin_step_cgroup (g.st)),
                     rel[0] == '/' ? "" : "/", rel) < (int)sizeof (dir_cg))
        o.cgroup_dir = dir_cg;
    o.path = g.prof_path;
    o.reader_uid = uid;
    if (!(h = json_object_new_object ())) {
        profile_skip ("out of memory");
        return;
    }
    json_object_object_add (h, "job", json_object_new_int64 (g.job));
    json_object_object_add (h, "step", json_object_new_string (
                                strchr (g.stepname, '.') + 1));
    json_object_object_add (h, "node", json_object_new_string (node));
    json_object_object_add (h, "uid", json_object_new_int64 (uid));
    json_object_object_add (h, "policy",
                            json_object_new_string (policy_name (g.policy)));
    json_object_object_add (h, "recorder",
                            json_object_new_string ("pin.so " PACKAGE_VERSION));
    if (o.cpus && (list = topo_list_format (o.cpus)))
        json_object_object_add (h, "step_cpus", json_object_new_string (list));
    free (list);
    o.header = h;
    if (!(g.prof = prof_rec_start (&o, &err)))
        profile_skip ("%s", err.text);
    else if (prof_rec_warning (g.prof))
        slurm_info ("pin: step %s: %s", g.stepname,
                    prof_rec_warning (g.prof));
    else
        slurm_debug ("pin: step %s: profiling every %lld ms into %s",
                     g.stepname, g.profile_us / 1000, g.prof_path);
    json_object_put (h);
}

/* The job's partition, name and array ids from slurmctld (ident.c), once
 * per step; `otherwise` says what its absence means. */
static void job_info (const char *otherwise)
{
    if (g.ident.have_job_info || g.ident.job_info_error[0])
        return;
    if (ident_job_info (g.job, &g.ident) < 0)
        slurm_error ("pin: step %s: %s: %s", g.stepname,
                     g.ident.job_info_error, otherwise);
    else
        slurm_debug ("pin: step %s: node %s, cluster %s, user %s (%u), "
                     "partition %s, job name %s; slurm_load_job took %lld us",
                     g.stepname, g.ident.node, g.ident.cluster, g.ident.user,
                     g.ident.uid, g.ident.partition, g.ident.job_name,
                     g.ident.job_info_us);
}

int slurm_spank_init_post_opt (spank_t sp, int ac, char **av)
{
    if (spank_context () == S_CTX_LOCAL) {
        /* srun: should it create its own job, job_submit_pin.so may
         * reshape it for numa-spread (doc/job-submit.md); inside a job
         * the job control environment goes nowhere.  Never fatal. */
        (void)spank_job_control_setenv (sp, PINOPT_SRUN_MARK_NAME,
                                        PINOPT_SRUN_MARK_VALUE, 1);
        return 0;
    }
    if (spank_context () != S_CTX_REMOTE)
        return 0;
    if (step_get_ids (sp) < 0)
        return 0;
    if (!g.conf_ok) {
        slurm_info ("pin: step %s: slurm-pin disabled: bad configuration: "
                    "%s", g.stepname, g.conf_error);
        return 0;
    }
    /* who and where, from Slurm (ident.c); the partition from slurmctld
     * now only where pin.conf's PartitionName= rules need it, else at
     * the end for the record (step_account), when the user no longer
     * waits for it */
    ident_step (sp, g.job, g.step, &g.ident);
    if (g.conf.npartitions > 0 && g.step != SLURM_EXTERN_CONT)
        job_info ("pin.conf's global rules apply, not its PartitionName= "
                  "lines");
    {
        /* the step (libstep); its accounting record starts now */
        struct pin_step_args a = {
            .conf = &g.conf,
            .job = g.job,
            .step = g.step,
            .stepname = g.stepname,
            .ph = &g.ph,
            .log = step_log,
        };
        pin_error_t err = { "" };

        if (!(g.st = pin_step_create (&a, &err))) {
            slurm_error ("pin: step %s: %s; not handled", g.stepname,
                         err.text);
            return 0;
        }
    }
    if (g.step == SLURM_EXTERN_CONT) {
        /* no user tasks to place (pam_slurm_adopt's domain); accounting
         * needs to know its cgroup now: at exit slurmstepd has left it */
        if (g.conf.accounting)
            pin_step_detect_mode (g.st);
        return 0;
    }
    g.active = true;
    g.batch = (g.step == SLURM_BATCH_SCRIPT
               || g.step == SLURM_INTERACTIVE_STEP);
    phase_start (&g.ph);
    (void)step_setup (sp);  /* errors reach the user through task_init */
    if (g.ready && !g.error[0] && g.profile_us)
        profile_begin (sp);
    return 0;
}

/* ---- slurmstepd: each task, as root, before it may exec ---------------- */

/* Returns 0 even when the task could not be placed: a failing
 * task_post_fork makes Slurm abort the launch with a generic message (and
 * srun exit 0).  The task itself reads the outcome from the shared status
 * page in task_init and fails with the reason on its stderr. */
int slurm_spank_task_post_fork (spank_t sp, int ac, char **av)
{
    pin_error_t err = { "" };
    int id = -1;
    pid_t pid = 0;

    if (spank_context () != S_CTX_REMOTE || !g.active || !g.ready
        || g.error[0] || !pin_step_has_status (g.st))
        return 0;
    if (spank_get_item (sp, S_TASK_ID, &id) != ESPANK_SUCCESS
        || spank_get_item (sp, S_TASK_PID, &pid) != ESPANK_SUCCESS
        || id < 0 || (uint32_t)id >= g.ntasks || pid <= 0) {
        slurm_error ("pin: step %s: task id %d / pid %d out of range",
                     g.stepname, id, (int)pid);
        return 0;
    }
    struct phases ph;
    phase_start (&ph);
    /* the outcome goes to the shared page, which the task reads */
    if (pin_step_apply_task (g.st, id, pid, &err) < 0)
        slurm_error ("pin: step %s task %d: %s", g.stepname, id, err.text);
    pin_step_account_task (g.st, pid);
    if (g.prof && prof_rec_add_root (g.prof, pid, &err) < 0)
        slurm_error ("pin: step %s task %d: profile: %s", g.stepname, id,
                     err.text);
    pin_step_add_task (g.st, pid);     /* policy dynamic's stderr line */
    if (++g.tasks_forked == g.ntasks)
        watcher_begin (sp);
    phase_mark (&ph, "apply");
    slurm_debug ("pin: step %s task %d: applied in %ld us CPU, %ld us wall",
                 g.stepname, id, phase_total_cpu_us (&ph),
                 phase_total_wall_us (&ph));
    return 0;
}

/* ---- the task itself, as the user, just before exec ------------------- */

/* Write one line to the task's stderr, in one write(2). */
static void task_say (const char *fmt, ...)
    __attribute__ ((format (printf, 1, 2)));
static void task_say (const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    int len;

    va_start (ap, fmt);
    len = vsnprintf (line, sizeof (line) - 1, fmt, ap);
    va_end (ap);
    if (len < 0)
        return;
    if ((size_t)len > sizeof (line) - 2)
        len = (int)sizeof (line) - 2;
    line[len++] = '\n';
    (void)!write (STDERR_FILENO, line, (size_t)len);
}

/* Read a variable of the task's environment; NULL if unset.  Caller
 * frees. */
static char *task_getenv (spank_t sp, const char *name)
{
    for (int size = 256; size <= (1 << 20); size *= 4) {
        char *buf = malloc ((size_t)size);
        spank_err_t rc;
        if (!buf)
            return NULL;
        rc = spank_getenv (sp, name, buf, size);
        if (rc == ESPANK_SUCCESS)
            return buf;
        free (buf);
        if (rc != ESPANK_NOSPACE)
            return NULL;
    }
    return NULL;
}

/* OMP_PLACES or OMP_PROC_BIND: set, keep or unset, see ompenv.h. */
static void task_omp (spank_t sp, const char *name, const char *ours)
{
    char record[64];
    char *current = task_getenv (sp, name);
    char *recorded;

    snprintf (record, sizeof (record), "%s%s", OMPENV_RECORD_PREFIX, name);
    recorded = task_getenv (sp, record);
    switch (ompenv_decide (current, recorded, ours)) {
        case OMPENV_SET:
            spank_setenv (sp, name, ours, 1);
            spank_setenv (sp, record, ours, 1);
            break;
        case OMPENV_UNSET:
            spank_unsetenv (sp, name);
            spank_unsetenv (sp, record);
            break;
        case OMPENV_KEEP:
            if (recorded)   /* the user's own value: forget ours */
                spank_unsetenv (sp, record);
            break;
    }
    free (current);
    free (recorded);
}

int slurm_spank_task_init (spank_t sp, int ac, char **av)
{
    const struct place_task *t;
    char node[ACCT_STR] = "?";
    char *places = NULL;
    int id = -1;

    if (spank_context () != S_CTX_REMOTE)
        return 0;
    if (spank_get_item (sp, S_TASK_ID, &id) != ESPANK_SUCCESS || id < 0)
        return 0;
    {   /* the binding Slurm gave this task, for an srun it may run
         * (check_cpu_bind: an inherited binding is not the user's) */
        char *cb = task_getenv (sp, "SLURM_CPU_BIND");
        if (cb)
            spank_setenv (sp, PINOPT_TASK_CPU_BIND, cb, 1);
        else
            spank_unsetenv (sp, PINOPT_TASK_CPU_BIND);
        free (cb);
    }
    if (g.ident.node[0])   /* slurmd's, found in init_post_opt */
        copy_text (node, sizeof (node), g.ident.node);
    else
        (void)gethostname (node, sizeof (node) - 1);
    if (!g.conf_ok) {
        /* Required: this fails the task.  Optional: Slurm ignores the
         * return code and the task runs unpinned. */
        if (id == 0)
            task_say ("pin: step %s on %s: slurm-pin disabled: bad "
                      "configuration: %s", g.stepname, node, g.conf_error);
        return -1;
    }
    if (!g.active)
        return 0;
    if (g.error[0]) {
        if (id == 0)
            task_say ("pin: error: step %s on %s: %s", g.stepname, node,
                      g.error);
        return -1;
    }
    if (!g.ready)
        return 0;
    if (id == 0 && g.prof_note[0])
        task_say ("pin: warning: step %s on %s: not profiled: %s",
                  g.stepname, node, g.prof_note);
    if (id == 0 && g.bind_note[0])
        task_say ("pin: step %s on %s: %s", g.stepname, node, g.bind_note);
    if (pin_step_has_status (g.st) && (uint32_t)id < g.ntasks) {
        const char *msg;
        enum pin_step_task_state state = pin_step_task_status (g.st, id,
                                                               &msg);
        if (state != PIN_STEP_TASK_APPLIED) {
            task_say ("pin: error: task %d of step %s on %s: %s", id,
                      g.stepname, node, state == PIN_STEP_TASK_FAILED
                      ? msg : "was not placed (see the slurmd log)");
            return -1;
        }
    }

    t = pin_step_task (g.st, id);
    if (t && !(places = ompenv_places (t->cpus)))
        slurm_error ("pin: step %s task %d: cannot format OMP_PLACES",
                     g.stepname, id);
    task_omp (sp, "OMP_PLACES", places);
    task_omp (sp, "OMP_PROC_BIND", places ? ompenv_proc_bind (g.policy)
                                          : NULL);
    free (places);

    if (g.verbose) {
        hwloc_const_bitmap_t cpus = t ? t->cpus : pin_step_allowed (g.st);
        hwloc_const_bitmap_t mems = t ? t->mems : pin_step_nodeset (g.st);
        char *c = cpus ? topo_list_format (cpus) : NULL;
        char *m = mems ? topo_list_format (mems) : NULL;
        char fb[128] = "", seed[48] = "";
        if (t && t->fallback) {
            char names[96];
            snprintf (fb, sizeof (fb), " fallback=%s",
                      place_fallback_string (t->fallback, names,
                                             sizeof (names)));
        }
        if (g.policy == PLACE_RANDOM)
            snprintf (seed, sizeof (seed), " seed=%llu",
                      (unsigned long long)g.seed);
        task_say ("pin: task %d on %s: policy=%s cpus=%s mems=%s%s%s", id,
                  node, policy_name (g.policy), c ? c : "?", m ? m : "?",
                  fb, seed);
        if (id == 0 && pin_step_warning (g.st)[0] && g.policy != PLACE_NONE)
            task_say ("pin: warning: %s: %s", node, pin_step_warning (g.st));
        free (c);
        free (m);
    }
    return 0;
}

/* ---- the end of tasks and of the step ---------------------------------- */

/* Append the step's record (libacct, through libstep) with what the
 * plugin knows from Slurm. */
static void step_account (spank_t sp)
{
    struct pin_step_account_in in = {
        .ident = &g.ident,
        .policy = g.active ? policy_name (g.policy) : "none",
        .has_seed = g.active && g.policy == PLACE_RANDOM,
        .seed = g.seed,
    };
    struct phases ph;

    if (!g.conf.accounting)
        return;
    job_info ("the step's record has no partition, job name or array ids");
    /* numbered steps: what they asked on this node; batch, interactive
     * and extern: the job's CPUs on this node (S_JOB_NCPUS) */
    if (g.active && !g.batch)
        in.alloc_cpus = g.ntasks * g.cpus_per_task;
    else {
        uint16_t n = 0;
        if (spank_get_item (sp, S_JOB_NCPUS, &n) == ESPANK_SUCCESS)
            in.alloc_cpus = n;
    }
    phase_start (&ph);
    pin_step_account (g.st, &in);
    phase_mark (&ph, "accounting");
    slurm_debug ("pin: step %s: accounting took %ld us CPU, %ld us wall",
                 g.stepname, phase_total_cpu_us (&ph),
                 phase_total_wall_us (&ph));
}

/* When the last local task has exited, its PUs are free: drop the claim
 * before slurmstepd tells srun (spank_fini runs only after that). */
int slurm_spank_task_exit (spank_t sp, int ac, char **av)
{
    pin_error_t err = { "" };

    if (spank_context () != S_CTX_REMOTE || !g.active)
        return 0;
    int status = 0;
    bool got = spank_get_item (sp, S_TASK_EXIT_STATUS, &status)
               == ESPANK_SUCCESS;
    if (got && (g.tasks_exited == 0 || status != 0) && g.exit_status == 0)
        g.exit_status = status;
    ++g.tasks_exited;
    pin_step_account_task_exit (g.st, got ? status : 0,
                                g.tasks_exited >= g.ntasks);
    if (g.tasks_exited < g.ntasks)
        return 0;
    /* joins the watcher: the claim is ours again */
    pin_step_watch_stop (g.st, g.exit_status);
    if (pin_step_release (g.st, &err) < 0)
        slurm_error ("pin: step %s: cannot remove the claim: %s",
                     g.stepname, err.text);
    return 0;
}

int slurm_spank_exit (spank_t sp, int ac, char **av)
{
    pin_error_t err = { "" };

    if (spank_context () != S_CTX_REMOTE)
        return 0;
    pin_step_watch_stop (g.st, g.exit_status); /* the confinement is final */
    if (g.prof) {       /* the tasks never all forked */
        pin_error_t e = { "" };
        if (prof_rec_finish (g.prof, -1, &e) < 0)
            slurm_error ("pin: step %s: profile: %s", g.stepname, e.text);
        g.prof = NULL;
    }
    if (g.conf_ok && g.stepname[0])
        step_account (sp);  /* before any cgroup is removed */
    if (g.conf_ok && g.step == SLURM_EXTERN_CONT && g.stepname[0])
        pin_step_job_cleanup (&g.conf, g.job, &step_log);
    if (pin_step_release (g.st, &err) < 0)
        slurm_error ("pin: step %s: cannot remove the claim: %s",
                     g.stepname, err.text);
    pin_step_destroy (g.st);    /* our cgroups removed */
    g.st = NULL;
    return 0;
}

/* ---- slurmd's `slurmstepd spank` epilog process --------------------------- */

/* The configuration the Slurm process that loaded pin.so read (slurmd's
 * `slurmstepd spank epilog` reads the slurm.conf slurmd names in
 * SLURM_CONF).  Weak: absent from processes that are not Slurm's. */
extern slurm_conf_t slurm_conf __attribute__ ((weak));

/* True when the Slurm that loaded pin.so stores accounting in slurmdbd
 * (AccountingStorageType=accounting_storage/slurmdbd in the slurm.conf it
 * read): only then is there anywhere to deliver to. */
static bool deliver_wanted (void)
{
    const char *t = &slurm_conf ? slurm_conf.accounting_storage_type : NULL;

    return t && strcmp (t, "accounting_storage/slurmdbd") == 0;
}

/* Job end on this node.  1. The job record of this node from its step
 * records, unless the extern step wrote one from the job's cgroup.
 * 2. 'slurm-pin deliver --job N' started detached, to send this node's
 * records to slurmdbd (doc/accounting-slurmdbd.md); not without slurmdbd
 * in slurm.conf, DeliverCommand=none or Accounting=no.  Never fails: a
 * failing epilog drains the node.
 * Slurm 22.05 runs it after every step of the job has ended on this node
 * (slurmd/req.c, _rpc_terminate_job). */
int slurm_spank_job_epilog (spank_t sp, int ac, char **av)
{
    pin_error_t err = { "" };
    uint32_t job = 0;

    /* Slurm calls no slurm_spank_init in this process: read pin.conf */
    pin_conf_defaults (&g.conf);
    if (pin_conf_load_args (&g.conf, ac, av, &err) < 0) {
        slurm_error ("pin: job epilog: bad configuration: %s", err.text);
        return 0;
    }
    if (g.conf.accounting
        && spank_get_item (sp, S_JOB_ID, &job) == ESPANK_SUCCESS) {
        /* the epilog's own environment is slurmd's (what a user adds
         * there arrives prefixed with SPANK_) */
        struct stepacct_epilog in = {
            .job = job,
            .cluster = getenv ("SLURM_CLUSTER_NAME"),
            .user = getenv ("SLURM_JOB_USER"),
            .partition = getenv ("SLURM_JOB_PARTITION"),
            .log = &step_log,
        };
        uid_t uid;
        if (spank_get_item (sp, S_JOB_UID, &uid) == ESPANK_SUCCESS) {
            in.have_uid = true;
            in.uid = (uint32_t)uid;
        }
        stepacct_job_epilog (&g.conf, &in);
    }
    if (g.conf.accounting && g.conf.deliver_command[0] && deliver_wanted ()
        && spank_get_item (sp, S_JOB_ID, &job) == ESPANK_SUCCESS
        && acct_deliver_spawn (g.conf.deliver_command, job, g.conf.journal_dir,
                          120, &err) < 0)
        slurm_error ("pin: job %u: accounting not sent to slurmdbd: %s", job,
                     err.text);
    return 0;
}
