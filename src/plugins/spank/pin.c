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
#include <errno.h>
#include <slurm/slurm_errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "glue.h"
#include "libacct/deliver.h"
#include "libcgroup2/stepcg.h"

SPANK_PLUGIN (pin, 1);

#if HAVE_DECL_ESPANK_JOB_FAILURE && HAVE_DECL_SLURM_SPANK_INIT_FAILURE_MODE
/* Slurm >= 25.05: should slurm_spank_init fail in slurmstepd, fail the
 * job, do not drain the node (the default, ESPANK_NODE_FAILURE).  pin.so's
 * init does not fail there for a broken pin.conf (task_init reports it);
 * this covers what is left (e.g. an option that cannot be registered). */
int slurm_spank_init_failure_mode = ESPANK_JOB_FAILURE;
#endif

struct pin_glue g;

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

const struct steplog step_log = {log_sink, NULL};

void copy_text (char *dst, size_t n, const char *src)
{
    snprintf (dst, n, "%s", src);
}

const char *policy_name (int policy)
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

void step_fail (const char *fmt, ...)
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
    pin_error_t err = {""};

    if (pinopt_parse (optarg, &o, &err) < 0)
        goto fail;
    if (g.conf_ok && !pin_conf_policy_allowed (&g.conf, o.policy)) {
        char shown[PINOPT_VALUE_MAX + 8], allowed[192];
        errprintf (&err,
                   "--pin-policy=%s: policy '%s' is not allowed on "
                   "this cluster; allowed: %s",
                   pinopt_quote (optarg,
                                 PINOPT_VALUE_MAX,
                                 shown,
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
    optarg = pinopt_slurm_optarg (optarg); /* "--pin-profile" alone */
    if (pin_conf_parse_profile (optarg, &us, why, sizeof (why)) < 0) {
        pin_error_t err = {""};
        errprintf (&err,
                   "--pin-profile=%s: %s",
                   pinopt_quote (optarg,
                                 PINOPT_VALUE_MAX,
                                 shown,
                                 sizeof (shown)),
                   why);
        slurm_error ("pin: %s", err.text);
        if (!remote)
            return -1; /* srun, sbatch, salloc: refused */
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
    pin_error_t err = {""};

    phase_start (&g.ph_init);
    pin_conf_defaults (&g.conf);
    if (pin_conf_load_args (&g.conf, ac, av, &err) < 0) {
        g.conf_ok = false;
        copy_text (g.conf_error, sizeof (g.conf_error), err.text);
    } else
        g.conf_ok = true;
    phase_mark (&g.ph_init, "conf");

    /* slurmd itself and prolog/epilog: never fail (a required plugin that
     * fails here would stop slurmd from starting). */
    if (ctx == S_CTX_SLURMD || ctx == S_CTX_JOB_SCRIPT) {
        if (!g.conf_ok && ctx == S_CTX_SLURMD)
            slurm_error (
                "pin: bad configuration: %s (jobs asking for "
                "pinning will fail or run unpinned until it is "
                "fixed)",
                g.conf_error);
        return 0;
    }
    if (ctx != S_CTX_LOCAL && ctx != S_CTX_REMOTE && ctx != S_CTX_ALLOCATOR)
        return 0;

    snprintf (opt_usage,
              sizeof (opt_usage),
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

int slurm_spank_init_post_opt (spank_t sp, int ac, char **av)
{
    if (spank_context () == S_CTX_LOCAL) {
        /* srun: should it create its own job, job_submit_pin.so may
         * reshape it for numa-spread (doc/job-submit.md); inside a job
         * the job control environment goes nowhere.  Never fatal. */
        (void)spank_job_control_setenv (sp,
                                        PINOPT_SRUN_MARK_NAME,
                                        PINOPT_SRUN_MARK_VALUE,
                                        1);
        return 0;
    }
    if (spank_context () != S_CTX_REMOTE)
        return 0;
    if (step_get_ids (sp) < 0)
        return 0;
    if (!g.conf_ok) {
        slurm_info (
            "pin: step %s: slurm-pin disabled: bad configuration: "
            "%s",
            g.stepname,
            g.conf_error);
        return 0;
    }
    /* who and where, from Slurm (ident.c); the partition from slurmctld
     * now only where pin.conf's PartitionName= rules need it, else at
     * the end for the record (step_account), when the user no longer
     * waits for it */
    ident_step (sp, g.job, g.step, &g.ident);
    if (g.conf.npartitions > 0 && g.step != SLURM_EXTERN_CONT)
        job_info (
            "pin.conf's global rules apply, not its PartitionName= "
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
        pin_error_t err = {""};

        if (!(g.st = pin_step_create (&a, &err))) {
            slurm_error ("pin: step %s: %s; not handled",
                         g.stepname,
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
    g.batch =
        (g.step == SLURM_BATCH_SCRIPT || g.step == SLURM_INTERACTIVE_STEP);
    phase_start (&g.ph);
    (void)step_setup (sp); /* errors reach the user through task_init */
    if (g.ready && !g.error[0] && g.profile_us)
        profile_begin (sp);
    return 0;
}

/* Slurm 24.11's slurmstepd queues its X11 shutdown on a conmgr thread just
 * before spank_fini() (mgr.c, _x11_signal_handler, every step, X11 or
 * not), and that thread drops the whole process to the job's user for a
 * moment (drop_privileges, seteuid), outside the auth_setuid_lock the
 * step's own code takes: root work done by slurm_spank_exit in that moment
 * fails with EACCES (seen once in CI: an extern step's journal lock and
 * claims).  Wait, at most 2 s, until this process is root again. */
static void wait_for_root (void)
{
    struct timespec ts = {0, 5 * 1000 * 1000};
    int waited = 0;

    while (geteuid () != 0 && waited < 400) {
        nanosleep (&ts, NULL);
        waited++;
    }
    if (waited)
        slurm_debug ("pin: step %s: waited %d ms for slurmstepd to be root "
                     "again",
                     g.stepname,
                     waited * 5);
}

int slurm_spank_exit (spank_t sp, int ac, char **av)
{
    pin_error_t err = {""};

    if (spank_context () != S_CTX_REMOTE)
        return 0;
    wait_for_root ();
    pin_step_watch_stop (g.st, g.exit_status); /* the confinement is final */
    /* the tasks never all forked: the profile ends unwatched */
    if (pin_step_profile_close (g.st, &err) < 0)
        slurm_error ("pin: step %s: profile: %s", g.stepname, err.text);
    if (g.conf_ok && g.stepname[0])
        step_account (sp); /* before any cgroup is removed */
    if (g.conf_ok && g.step == SLURM_EXTERN_CONT && g.stepname[0])
        pin_step_job_cleanup (&g.conf, g.job, &step_log);
    if (pin_step_release (g.st, &err) < 0)
        slurm_error ("pin: step %s: cannot remove the claim: %s",
                     g.stepname,
                     err.text);
    pin_step_destroy (g.st); /* our cgroups removed */
    g.st = NULL;
    return 0;
}

/* ---- slurmd's `slurmstepd spank` epilog process ---------------------------
 */

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
    pin_error_t err = {""};
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
        struct ident_job_end end;
        char node[ACCT_STR];
        if (spank_get_item (sp, S_JOB_UID, &uid) == ESPANK_SUCCESS) {
            in.have_uid = true;
            in.uid = (uint32_t)uid;
        }
        step_ident_node (0, 0, node, sizeof (node));
        if (ident_job_end (job, node, &end) == 0) {
            in.have_slurm = true;
            in.slurm_state = end.state;
            in.slurm_exit_status = end.exit_status;
            in.slurm_start_us = end.start_us;
            in.slurm_end_us = end.end_us;
            in.slurm_submit_us = end.submit_us;
            in.slurm_cpus = end.node_cpus;
        } else
            slurm_debug ("pin: job %u: no answer of slurmctld on the ended "
                         "job: its record keeps its steps' state and times",
                         job);
        stepacct_job_epilog (&g.conf, &in);
    }
    if (g.conf.accounting && g.conf.deliver_command[0] && deliver_wanted ()
        && spank_get_item (sp, S_JOB_ID, &job) == ESPANK_SUCCESS
        && acct_deliver_spawn (g.conf.deliver_command,
                               job,
                               g.conf.journal_dir,
                               120,
                               &err)
               < 0)
        slurm_error ("pin: job %u: accounting not sent to slurmdbd: %s",
                     job,
                     err.text);
    return 0;
}
