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
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "libaffinity/affinity.h"
#include "libcgroup2/cg2.h"
#include "libcgroup2/mode.h"
#include "libclaims/claims.h"
#include "libconf/conf.h"
#include "libplace/place.h"
#include "libprof/profdir.h"
#include "libprof/record.h"
#include "libtopo/topo.h"
#include "libutil/errprintf.h"
#include "libutil/mkdirp.h"
#include "libutil/phase.h"
#include "libutil/safefile.h"
#include "acctstep.h"
#include "dynamic.h"
#include "ompenv.h"
#include "libconf/pinopt.h"
#include "deliver_spawn.h"
#include "ident.h"
#include "libcgroup2/stepcg.h"

SPANK_PLUGIN (pin, 1);

#define LOCK_TIMEOUT_MS 10000   /* wait for other steps' plan-and-apply */
#define RMDIR_TIMEOUT_MS 10000  /* EBUSY retries when removing our tree */
#define CONTROLLERS "+cpuset +cpu"

/* What task_post_fork (in slurmstepd) did for each task, in memory shared
 * with the task processes, which read it in task_init (they were forked
 * before task_post_fork ran, and released only after it). */
enum { TASK_PENDING = 0, TASK_APPLIED, TASK_FAILED };
struct task_status {
    int state;
    char msg[sizeof (((pin_error_t *)0)->text)];
};

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
    char warning[384];          /* affinity-only fallback, printed by
                                   task 0 in verbose mode */
    char bind_note[384];        /* a policy not applied for a --cpu-bind
                                   (check_cpu_bind): task 0 prints it */
    topo_t *topo;
    hwloc_bitmap_t allowed;     /* PUs the step is placed in (see
                                   plan_locked) */
    hwloc_bitmap_t job_cpus;    /* PUs of the job on this node */
    hwloc_bitmap_t plan_cpus;   /* union of the tasks' PUs */
    bool moved;                 /* placed outside the step's own cores */
    bool widened;               /* nested: Slurm's step cpuset widened */
    struct place_plan *plan;    /* NULL for policy none */
    enum cg2_mode mode;         /* libcgroup2/mode.h */
    bool cpuset;                /* cpuset controller usable */
    cg2_t *cg;
    char job_rel[PATH_MAX];     /* standalone: <base>/job_<id> */
    char step_rel[PATH_MAX];    /* the step's cgroup (ours or Slurm's) */
    bool tree_created;          /* standalone tree exists: remove at exit */
    bool *task_dir_created;     /* nested: task dirs we made (ntasks) */
    struct task_status *status; /* shared mapping, ntasks entries */
    size_t status_size;
    char claims_dir[PATH_MAX];
    char lock_path[PATH_MAX];
    bool claimed;
    uint32_t tasks_exited;
    uint32_t tasks_applied;
    /* policy dynamic (dynamic.c): the confinement, for the step's
     * accounting record (confined_us, confine_use, confine_cpus,
     * confine_mems) */
    struct dynamic_event dyn;
    /* profiling (doc/profiling.md): the recorder, opened in
     * init_post_opt, handed to the watcher after the last task forked */
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

/* snprintf for paths: -1 (ENAMETOOLONG) instead of a truncated path. */
static int fmt_path (char *buf, size_t n, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
static int fmt_path (char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    int len;

    va_start (ap, fmt);
    len = vsnprintf (buf, n, fmt, ap);
    va_end (ap);
    if (len < 0 || (size_t)len >= n) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
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

/* The PUs of Slurm's core list `item` on this node, within what this
 * slurmstepd may use itself. */
static int alloc_cpus (spank_t sp, spank_item_t item, hwloc_bitmap_t cpus)
{
    const char *what = item == S_JOB_ALLOC_CORES ? "job" : "step";
    hwloc_bitmap_t mine = hwloc_bitmap_alloc ();
    pin_error_t err = { "" };
    char *cores = NULL;
    int rc = -1;

    if (!mine) {
        step_fail ("out of memory");
        return -1;
    }
    if (spank_get_item (sp, item, &cores) != ESPANK_SUCCESS || !cores
        || !*cores) {
        step_fail ("Slurm gave no %s cores for this node", what);
        goto out;
    }
    if (topo_slurm_cores_to_cpuset (g.topo, cores, cpus, &err) < 0) {
        step_fail ("%s cores %s: %s", what, cores, err.text);
        goto out;
    }
    hwloc_bitmap_and (cpus, cpus, topo_cpuset (g.topo));
    if (affinity_get (0, mine) == 0)
        hwloc_bitmap_and (cpus, cpus, mine);
    if (hwloc_bitmap_iszero (cpus)) {
        step_fail ("%s cores %s map to no usable CPU on this node", what,
                   cores);
        goto out;
    }
    rc = 0;
out:
    hwloc_bitmap_free (mine);
    return rc;
}

/* g.allowed: the step's PUs (the batch step: the job's); g.job_cpus: the
 * job's PUs on this node. */
static int get_alloc (spank_t sp)
{
    if (!(g.allowed = hwloc_bitmap_alloc ())
        || !(g.job_cpus = hwloc_bitmap_alloc ())) {
        step_fail ("out of memory");
        return -1;
    }
    if (alloc_cpus (sp, S_JOB_ALLOC_CORES, g.job_cpus) < 0)
        return -1;
    if (g.batch) {
        hwloc_bitmap_copy (g.allowed, g.job_cpus);
        return 0;
    }
    if (alloc_cpus (sp, S_STEP_ALLOC_CORES, g.allowed) < 0)
        return -1;
    return 0;
}

/* Decide nested/standalone/none and whether cpusets can be written
 * (libcgroup2's cg2_mode_detect(), which slurm-pin check uses too). */
static void cgroup_detect (void)
{
    struct cg2_mode_input in = {
        .cgroup_root = g.conf.cgroup_root,
        .cgroup_base = g.conf.cgroup_base,
        .job = g.job,
        .step = g.step,
    };
    struct cg2_mode_result *res = calloc (1, sizeof (*res));
    char *self = cg2_pid_path (getpid (), NULL);

    if (!res) {
        free (self);
        g.mode = CG2_MODE_NONE;
        copy_text (g.warning, sizeof (g.warning), "out of memory: CPUs "
                   "bound with sched_setaffinity only, not accounted");
        return;
    }
    in.self_cgroup = self ? self : "";
    g.cg = cg2_mode_detect (&in, res);
    g.mode = res->mode;
    g.cpuset = res->cpuset;
    copy_text (g.step_rel, sizeof (g.step_rel), res->step_rel);
    copy_text (g.job_rel, sizeof (g.job_rel), res->job_rel);
    if (g.mode == CG2_MODE_NONE)
        snprintf (g.warning, sizeof (g.warning), "%.300s: CPUs bound with "
                  "sched_setaffinity only, not accounted", res->why);
    else if (!g.cpuset)
        snprintf (g.warning, sizeof (g.warning), "%.300s: CPUs bound with "
                  "sched_setaffinity only, memory not fenced", res->why);
    free (self);
    free (res);
}

/* The affinity-only fallback is logged once per node and boot (a marker
 * in StateDir), then at debug level. */
static void warn_fallback (void)
{
    char marker[PATH_MAX];
    int fd;

    if (!g.warning[0])
        return;
    if (snprintf (marker, sizeof (marker), "%s/warned-affinity-only",
                  g.conf.state_dir) < (int)sizeof (marker)
        && (fd = open (marker, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC,
                       0600)) >= 0) {
        close (fd);
        slurm_info ("pin: warning: %s", g.warning);
    }
    else
        slurm_debug ("pin: step %s: %s", g.stepname, g.warning);
}

/* The cgroup directory of the step's job (the parent of step_rel). */
static void job_dir_of_step (char *buf, size_t n)
{
    const char *slash = strrchr (g.step_rel, '/');

    snprintf (buf, n, "%.*s", (int)(slash ? slash - g.step_rel : 0),
              g.step_rel);
}

/* What other running steps of this node hold: live claims and the task
 * cgroups of the job's tree; load[os] (os < nload): how many claims hold
 * PU os (every placed step claims its PUs; a PU only the cgroups name
 * counts as one holder, place.h). */
static int read_busy (hwloc_bitmap_t busy, unsigned *load, unsigned nload,
                      pin_error_t *errp)
{
    pin_error_t err = { "" };
    char job_rel[PATH_MAX], stepdir[32];

    if (claims_load (g.claims_dir, g.job, g.step, busy, load, nload,
                     &err) < 0)
        return errprintf (errp, "cannot read the claims in %s: %s",
                          g.claims_dir, err.text);
    if (g.mode == CG2_MODE_NONE || !g.cpuset)
        return 0;
    job_dir_of_step (job_rel, sizeof (job_rel));
    if (stepcg_busy (g.cg, job_rel,
                     stepcg_step_dir (g.step, stepdir, sizeof (stepdir)),
                     busy, &err) < 0)
        return errprintf (errp, "cannot read the cgroups of other steps: "
                          "%s", err.text);
    return 0;
}

/* A zeroed holder table for read_busy, one entry per PU index. */
static unsigned *load_alloc (unsigned *n)
{
    hwloc_const_bitmap_t all = topo_cpuset (g.topo);
    int last = all ? hwloc_bitmap_last (all) : -1;

    *n = last < 0 ? 0 : (unsigned)last + 1;
    return calloc (*n ? *n : 1, sizeof (unsigned));
}

/* Nested mode, a step moved onto other PUs of its job: Slurm confined the
 * step's cgroup to the cores it allocated (task/cgroup writes it after
 * the plugin's init_post_opt, so this runs in task_post_fork), so widen
 * it (parent first) to also hold the planned PUs, all of them inside the
 * job's cgroup. */
static int widen_slurm_cpuset (hwloc_const_bitmap_t cpus, pin_error_t *errp)
{
    const char *levels[] = { "", "/user" };
    pin_error_t err = { "" };

    for (int i = 0; i < 2; i++) {
        char rel[PATH_MAX + 8], *cur, *want = NULL;
        hwloc_bitmap_t set = hwloc_bitmap_alloc ();
        int rc = -1;

        if (!set || fmt_path (rel, sizeof (rel), "%s%s", g.step_rel,
                              levels[i]) < 0) {
            hwloc_bitmap_free (set);
            return errprintf (errp, "cannot widen the step cgroup: %s",
                              strerror (errno));
        }
        if (!(cur = cg2_read (g.cg, rel, "cpuset.cpus", &err))) {
            hwloc_bitmap_free (set);
            return errprintf (errp, "%s", err.text);
        }
        if (!*cur || (topo_list_parse (cur, set, NULL) == 0
                      && hwloc_bitmap_isincluded (cpus, set)))
            rc = 0;     /* inherits, or holds them already */
        else {
            hwloc_bitmap_or (set, set, cpus);
            if (!(want = topo_list_format (set)))
                errprintf (errp, "out of memory");
            else if (cg2_write (g.cg, rel, "cpuset.cpus", want, &err) < 0)
                errprintf (errp, "cannot widen %s to cpus %s for an "
                           "overlapping step: %s", rel, want, err.text);
            else {
                slurm_debug ("pin: step %s: %s cpuset.cpus %s -> %s",
                             g.stepname, rel, cur, want);
                rc = 0;
            }
        }
        free (want);
        free (cur);
        hwloc_bitmap_free (set);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* `refused`: the pin.conf key that refused the fallback, or NULL. */
static void fail_no_room (const char *why, hwloc_const_bitmap_t busy,
                          const char *refused)
{
    char *b = topo_list_format (busy);

    step_fail ("%s; other running steps hold cpus %s%s%s%s", why,
               b && *b ? b : "none", refused ? "; refused by " : "",
               refused ? refused : "",
               refused ? " in pin.conf (allow runs it on shared cpus)" : "");
    free (b);
}

/* The pin.conf key that refuses what a too large request needs, or NULL
 * (the request fits, or the fallback is allowed). */
static const char *refused_by (const struct place_request *req,
                               hwloc_const_bitmap_t busy)
{
    uint64_t total = (uint64_t)req->ntasks * req->cpus_per_task;
    int na = hwloc_bitmap_weight (req->allowed);
    hwloc_bitmap_t avail = hwloc_bitmap_dup (req->allowed);
    int nf = avail && hwloc_bitmap_andnot (avail, avail, busy) == 0
             ? hwloc_bitmap_weight (avail) : na;

    hwloc_bitmap_free (avail);
    if (na >= 0 && total > (uint64_t)na
        && (req->refuse & PLACE_REFUSE_OVERSUBSCRIBE))
        return "Oversubscribe=refuse";
    if (nf >= 0 && total > (uint64_t)nf && nf != na
        && (req->refuse & PLACE_REFUSE_SHARE))
        return "ShareWithSteps=refuse";
    return NULL;
}

/* Say in the node log that the step did not get its policy's placement
 * but the fallback (oversubscribed, shared-with-step). */
static void log_overflow (const struct place_plan *plan,
                          hwloc_const_bitmap_t allowed,
                          hwloc_const_bitmap_t busy)
{
    unsigned mask = 0, ntasks = 0;
    char names[96];

    for (uint32_t i = 0; i < plan->ntasks; i++) {
        unsigned fb = plan->tasks[i].fallback
                      & (PLACE_FB_OVERSUBSCRIBED | PLACE_FB_SHARED_WITH_STEP);
        mask |= fb;
        ntasks += fb != 0;
    }
    if (!mask)
        return;
    char *a = topo_list_format (allowed);
    char *b = topo_list_format (busy);
    slurm_info ("pin: step %s: %u task%s x %u CPU%s do not fit in cpus %s "
                "minus busy %s: placed %s (%u of %u tasks; pin.conf "
                "Oversubscribe=, ShareWithSteps=)", g.stepname,
                plan->ntasks, plan->ntasks == 1 ? "" : "s",
                plan->cpus_per_task, plan->cpus_per_task == 1 ? "" : "s",
                a ? a : "?", b && *b ? b : "none",
                place_fallback_string (mask, names, sizeof (names)), ntasks,
                plan->ntasks);
    free (a);
    free (b);
}

/* Under the node lock: busy PUs, the plan, the claim, our step cgroup.
 * Returns -1 after step_fail(). */
static int plan_locked (void)
{
    hwloc_bitmap_t busy = hwloc_bitmap_alloc ();
    hwloc_bitmap_t all = hwloc_bitmap_alloc ();
    unsigned nload, *load = load_alloc (&nload);
    pin_error_t err = { "" };
    bool moved = false;
    int rc = -1;

    if (!busy || !all || !load) {
        step_fail ("out of memory");
        goto out;
    }
    /* dynamic places nothing now: dynamic.c calls dynamic_plan() */
    if (g.policy != PLACE_NONE && g.policy != PLACE_DYNAMIC) {
        struct place_request req = {
            .policy = (enum place_policy)g.policy,
            .ntasks = g.ntasks,
            .cpus_per_task = g.cpus_per_task,
            .allowed = g.allowed,
            .busy = busy,
            .seed = g.seed,
            .refuse = (g.conf.oversubscribe ? 0 : PLACE_REFUSE_OVERSUBSCRIBE)
                      | (g.conf.share_with_steps ? 0 : PLACE_REFUSE_SHARE),
            .load = load,
            .nload = nload,
        };
        /* The batch (or interactive) step is the allocation's shell: it
         * neither waits for other steps nor holds PUs against them. */
        if (!g.batch && read_busy (busy, load, nload, &err) < 0) {
            step_fail ("%s", err.text);
            goto out;
        }
        phase_mark (&g.ph, "busy");
        /* srun --overlap: Slurm gives every overlapping step the same
         * first cores of the job.  Such a step is placed on the job's PUs
         * on this node instead, so concurrent steps stay disjoint. */
        if (!g.batch && hwloc_bitmap_intersects (g.allowed, busy)
            && !hwloc_bitmap_isequal (g.allowed, g.job_cpus)) {
            hwloc_bitmap_copy (g.allowed, g.job_cpus);
            moved = true;
        }
        if (!(g.plan = place_compute (g.topo, &req, &err))) {
            fail_no_room (err.text, busy, refused_by (&req, busy));
            goto out;
        }
        log_overflow (g.plan, g.allowed, busy);
        /* a policy its allocation confines says so (alloc-one-numa) */
        {
            unsigned fb = place_alloc_confines (g.topo, req.policy,
                                                g.allowed);
            for (uint32_t i = 0; fb && i < g.plan->ntasks; i++)
                g.plan->tasks[i].fallback |= fb;
        }
        phase_mark (&g.ph, "plan");
        for (uint32_t i = 0; i < g.plan->ntasks; i++)
            hwloc_bitmap_or (all, all, g.plan->tasks[i].cpus);
        if (!(g.plan_cpus = hwloc_bitmap_dup (all))) {
            step_fail ("out of memory");
            goto out;
        }
        g.moved = moved;
        if (!g.batch) {
            if (claims_add (g.claims_dir, g.job, g.step, getpid (), all,
                            &err) < 0) {
                step_fail ("cannot record the claim in %s: %s",
                           g.claims_dir, err.text);
                goto out;
            }
            g.claimed = true;
            phase_mark (&g.ph, "claim");
        }
    }
    if (g.mode == CG2_MODE_STANDALONE) {
        if (cg2_create (g.cg, g.step_rel, g.cpuset ? CONTROLLERS : "+cpu",
                        &err) < 0) {
            step_fail ("cannot create cgroup %s/%s: %s", cg2_root (g.cg),
                       g.step_rel, err.text);
            goto out;
        }
        g.tree_created = true;
        phase_mark (&g.ph, "step cgroup");
    }
    rc = 0;
out:
    hwloc_bitmap_free (busy);
    hwloc_bitmap_free (all);
    free (load);
    return rc;
}

/* ---- policy dynamic (dynamic.c) ---------------------------------------- */

/* In the watcher thread, at the moment of confinement: the numa-local
 * placement of the step's tasks, under the node lock, avoiding what other
 * steps hold (as plan_locked), and claimed.  The main thread does not
 * touch the claim until it has joined the watcher (dynamic_stop). */
static int dynamic_plan (void *arg, hwloc_bitmap_t cpus, hwloc_bitmap_t mems,
                         pin_error_t *errp)
{
    hwloc_bitmap_t busy = hwloc_bitmap_alloc ();
    hwloc_bitmap_t allowed = hwloc_bitmap_dup (g.allowed);
    unsigned nload, *load = load_alloc (&nload);
    struct place_plan *plan = NULL;
    pin_error_t err = { "" };
    int fd, rc = -1;

    (void)arg;
    if (!busy || !allowed || !load) {
        errprintf (errp, "out of memory");
        goto out;
    }
    if ((fd = pin_lock_acquire (g.lock_path, LOCK_TIMEOUT_MS, &err)) < 0) {
        errprintf (errp, "cannot take the lock %s: %s", g.lock_path,
                   err.text);
        goto out;
    }
    if (read_busy (busy, load, nload, errp) == 0) {
        struct place_request req = {
            .policy = PLACE_NUMA_LOCAL,
            .ntasks = g.ntasks,
            .cpus_per_task = g.cpus_per_task,
            .allowed = allowed,
            .busy = busy,
            .refuse = (g.conf.oversubscribe ? 0 : PLACE_REFUSE_OVERSUBSCRIBE)
                      | (g.conf.share_with_steps ? 0 : PLACE_REFUSE_SHARE),
            .load = load,
            .nload = nload,
        };
        /* srun --overlap: as in plan_locked */
        if (hwloc_bitmap_intersects (allowed, busy)
            && !hwloc_bitmap_isequal (allowed, g.job_cpus))
            hwloc_bitmap_copy (allowed, g.job_cpus);
        if (!(plan = place_compute (g.topo, &req, &err)))
            errprintf (errp, "%s", err.text);
        else {
            hwloc_bitmap_zero (cpus);
            hwloc_bitmap_zero (mems);
            for (uint32_t i = 0; i < plan->ntasks; i++) {
                hwloc_bitmap_or (cpus, cpus, plan->tasks[i].cpus);
                hwloc_bitmap_or (mems, mems, plan->tasks[i].mems);
            }
            log_overflow (plan, allowed, busy);
            if (claims_add (g.claims_dir, g.job, g.step, getpid (), cpus,
                            &err) < 0)
                errprintf (errp, "cannot record the claim in %s: %s",
                           g.claims_dir, err.text);
            else {
                g.claimed = true;
                rc = 0;
            }
        }
    }
    pin_lock_release (fd);
out:
    place_plan_destroy (plan);
    hwloc_bitmap_free (busy);
    hwloc_bitmap_free (allowed);
    free (load);
    return rc;
}

/* After the last local task is placed: start the step's watcher, for
 * policy dynamic and/or the profile. */
static void watcher_begin (spank_t sp)
{
    bool dyn = g.policy == PLACE_DYNAMIC && !g.batch;
    struct dynamic_config cfg = {
        .watch = dyn,
        .stepname = g.stepname,
        .how = g.conf.dynamic_confine == PIN_CONFINE_QUOTA ? DYNAMIC_QUOTA
               : g.cpuset ? DYNAMIC_CPUSET : DYNAMIC_AFFINITY,
        .params = {
            .overuse = g.conf.dynamic_overuse,
            .grace_us = g.conf.dynamic_grace_us,
            .interval_us = g.conf.dynamic_interval_us,
            .alloc_cpus = (double)g.ntasks * g.cpus_per_task,
        },
        .plan = dynamic_plan,
    };
    char node[64] = "?", watch[PATH_MAX + 8], path[2 * PATH_MAX];
    pin_error_t err = { "" };

    if (dyn && (g.mode == CG2_MODE_NONE || !g.cg)) {
        slurm_info ("pin: step %s: policy dynamic needs the step's cgroup "
                    "v2 cpu.stat: not watched, runs as policy none",
                    g.stepname);
        cfg.watch = dyn = false;
    }
    if (!dyn && !g.prof)
        return;
    cfg.prof = g.prof;
    g.prof = NULL;      /* the watcher's now */
    if (!dyn) {
        pin_error_t e = { "" };
        if (dynamic_start (&cfg, &err) < 0) {
            slurm_error ("pin: step %s: profile: %s; not recorded",
                         g.stepname, err.text);
            (void)prof_rec_finish (cfg.prof, -1, &e);
        }
        return;
    }
    (void)gethostname (node, sizeof (node) - 1);
    if (spank_get_item (sp, S_JOB_UID, &cfg.uid) != ESPANK_SUCCESS)
        cfg.uid = (uid_t)-1;
    /* Slurm's step cgroup: its tasks are below user/ (slurm/ holds
     * slurmstepd itself) */
    snprintf (watch, sizeof (watch), "%s", g.step_rel);
    if (g.mode == CG2_MODE_NESTED
        && fmt_path (path, sizeof (path), "%s/%s/user", cg2_root (g.cg),
                     g.step_rel) == 0
        && access (path, F_OK) == 0)
        snprintf (watch, sizeof (watch), "%s/user", g.step_rel);
    cfg.node = node;
    cfg.cgroup_root = cg2_root (g.cg);
    cfg.watch_rel = watch;
    if (dynamic_start (&cfg, &err) < 0) {
        slurm_error ("pin: step %s: policy dynamic: %s; runs as policy none",
                     g.stepname, err.text);
        if (cfg.prof)
            (void)prof_rec_finish (cfg.prof, -1, NULL);
    }
    else
        slurm_debug ("pin: step %s: watching %s every %lld ms: confined "
                     "(%s) after %lld ms above %g x %u CPUs", g.stepname,
                     watch, g.conf.dynamic_interval_us / 1000,
                     dynamic_how_name (cfg.how),
                     g.conf.dynamic_grace_us / 1000, g.conf.dynamic_overuse,
                     g.ntasks * g.cpus_per_task);
}

/* Stop watching (the last task exited, or the step ends): keep the event,
 * log the watcher's own cost. */
static void dynamic_end (void)
{
    int64_t cpu_us = 0, wall_us = 0;

    if (!dynamic_running ())
        return;
    dynamic_set_status (g.exit_status);
    dynamic_stop (&g.dyn, &cpu_us, &wall_us);
    slurm_info ("pin: step %s: %s%s; watcher CPU time %lld us "
                "in %lld ms (%.4f%% of a CPU)", g.stepname,
                g.policy == PLACE_DYNAMIC && !g.batch ? "policy dynamic: "
                                                      : "profiled",
                g.policy != PLACE_DYNAMIC || g.batch ? ""
                : g.dyn.confined ? "confined" : "never confined",
                (long long)cpu_us, (long long)(wall_us / 1000),
                wall_us > 0 ? 100.0 * (double)cpu_us / (double)wall_us : 0.0);
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
    bool refreshed = false;
    int fd;

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
    pin_conf_narrow (&g.conf, &eff.rules);  /* the dynamic keys */
    g.policy = eff.policy;
    g.verbose = eff.verbose;
    g.profile_us = eff.profile_us;
    from = pin_conf_source_name (eff.source);
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
    /* Policy none places nothing: the topology (a few ms to load) is only
     * needed to name the step's CPUs in the verbose line. */
    if (g.policy != PLACE_NONE || g.verbose || g.profile_us) {
        phase_mark (&g.ph, "start");
        if (!(g.topo = topo_load_cached (g.conf.topology_cache, &refreshed,
                                         &err))) {
            step_fail ("cannot load the topology: %s", err.text);
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
    if (g.batch && g.allowed) {
        /* The batch step gets all CPUs of the node (job->cpus), which
         * may count more than the PUs Slurm's cores map to. */
        unsigned n = (unsigned)hwloc_bitmap_weight (g.allowed);
        if (g.cpus_per_task > n)
            g.cpus_per_task = n;
    }
    g.status_size = (size_t)g.ntasks * sizeof (struct task_status);
    g.status = mmap (NULL, g.status_size, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (g.status == MAP_FAILED) {
        g.status = NULL;
        step_fail ("cannot map the task status page: %s", strerror (errno));
        return -1;
    }
    cgroup_detect ();
    phase_mark (&g.ph, "mode");

    if (g.policy == PLACE_NONE && g.mode != CG2_MODE_STANDALONE) {
        g.ready = true;
        log_phases ();
        return 0;
    }
    if (mkdir_p (g.conf.state_dir, 0755, 0700, &err) < 0) {
        step_fail ("StateDir %s", err.text);
        return -1;
    }
    /* claims/ and lock are checked where they are opened (libclaims) */
    if (safefile_check (g.conf.state_dir, geteuid (), &err) < 0) {
        step_fail ("StateDir %s", err.text);
        return -1;
    }
    if (fmt_path (g.claims_dir, sizeof (g.claims_dir), "%s/claims",
                  g.conf.state_dir) < 0
        || fmt_path (g.lock_path, sizeof (g.lock_path), "%s/lock",
                     g.conf.state_dir) < 0
        || mkdir_p (g.claims_dir, 0700, 0700, &err) < 0) {
        step_fail ("cannot create %s: %s", g.claims_dir, err.text);
        return -1;
    }
    warn_fallback ();
    phase_mark (&g.ph, "statedir");
    if ((fd = pin_lock_acquire (g.lock_path, LOCK_TIMEOUT_MS, &err)) < 0) {
        step_fail ("cannot take the lock %s: %s", g.lock_path, err.text);
        return -1;
    }
    phase_mark (&g.ph, "lock");
    int rc = plan_locked ();
    pin_lock_release (fd);
    phase_mark (&g.ph, "unlock");
    if (rc < 0)
        return -1;
    if (g.mode == CG2_MODE_NESTED
        && !(g.task_dir_created = calloc (g.ntasks, sizeof (bool)))) {
        step_fail ("out of memory");
        return -1;
    }
    slurm_debug ("pin: step %s: policy=%s tasks=%u cpus_per_task=%u "
                 "mode=%s%s", g.stepname, policy_name (g.policy), g.ntasks,
                 g.cpus_per_task, cg2_mode_name (g.mode),
                 g.cpuset ? "" : " (affinity only)");
    g.ready = true;
    log_phases ();
    return 0;
}

/* ---- slurmstepd: the step's profile (doc/profiling.md) ----------------- */

static const char *acct_rel (char *job_rel, size_t n);

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
    const char *rel = acct_rel (NULL, 0);
    struct prof_rec_opts o = {
        .max_bytes = g.conf.profile_max_size,
        .interval_ms = (unsigned)(g.profile_us / 1000),
        .cpus = g.plan_cpus ? g.plan_cpus : g.allowed,
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
    if (fmt_path (g.prof_path, sizeof (g.prof_path), "%s/%s.%s.jsonl",
                  g.conf.profile_dir, g.stepname, node) < 0) {
        profile_skip ("profile path too long");
        return;
    }
    /* Slurm's step_rel begins with '/' in nested mode: one slash, as in
     * the accounting record, so the two name the same directory alike */
    if (rel[0] && g.cg
        && fmt_path (dir_cg, sizeof (dir_cg), "%s%s%s", cg2_root (g.cg),
                     rel[0] == '/' ? "" : "/", rel) == 0)
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
    if (o.cpus && hwloc_bitmap_list_asprintf (&list, o.cpus) >= 0 && list)
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
    acctstep_begin (sp, &g.conf, g.job, g.step, g.stepname);
    if (g.step == SLURM_EXTERN_CONT) {
        /* no user tasks to place (pam_slurm_adopt's domain); accounting
         * needs to know its cgroup now: at exit slurmstepd has left it */
        if (g.conf.accounting)
            cgroup_detect ();
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

/* Apply the plan to one task; -1 with errp (one line) on failure. */
static int apply_task (int id, pid_t pid, pin_error_t *errp)
{
    const struct place_task *t = g.plan ? &g.plan->tasks[id] : NULL;
    pin_error_t err = { "" };
    char task_rel[PATH_MAX + 32];

    if (g.mode == CG2_MODE_STANDALONE) {
        if (fmt_path (task_rel, sizeof (task_rel), "%s/task_%d", g.step_rel,
                      id) < 0
            || cg2_create (g.cg, task_rel, g.cpuset ? CONTROLLERS : "+cpu",
                           &err) < 0)
            return errprintf (errp, "cannot create cgroup %s: %s", task_rel,
                              err.text);
        if (t && g.cpuset
            && cg2_set_cpuset (g.cg, task_rel, t->cpus, t->mems, &err) < 0)
            return errprintf (errp, "%s", err.text);
        if (cg2_attach (g.cg, task_rel, pid, &err) < 0)
            return errprintf (errp, "cannot move pid %d into cgroup %s: %s",
                              (int)pid, task_rel, err.text);
    }
    else if (g.mode == CG2_MODE_NESTED && t && g.cpuset) {
        char *now, *procs;
        bool here;

        if (fmt_path (task_rel, sizeof (task_rel), "%s/user/task_%d",
                      g.step_rel, id) < 0)
            return errprintf (errp, "cgroup path too long");
        if (g.moved && !g.widened) {
            if (widen_slurm_cpuset (g.plan_cpus, errp) < 0)
                return -1;
            g.widened = true;
        }
        /* Slurm normally put the task in user/task_<n>; it may also have
         * left it in user/task_special (22.05 with ConstrainCores but not
         * ConstrainRAMSpace), or made no task cgroup at all (no
         * task/cgroup).  Then the task goes into its own task_<n>, made
         * by us if Slurm did not, and removed by us at the end. */
        now = cg2_pid_path (pid, NULL);
        here = now && strcmp (now[0] == '/' ? now + 1 : now,
                              task_rel[0] == '/' ? task_rel + 1 : task_rel)
                      == 0;
        free (now);
        if (!here && !(procs = cg2_read (g.cg, task_rel, "cgroup.procs",
                                         NULL))) {
            if (cg2_create (g.cg, task_rel, NULL, &err) < 0)
                return errprintf (errp, "cannot create cgroup %s: %s",
                                  task_rel, err.text);
            g.task_dir_created[id] = true;
        }
        else if (!here)
            free (procs);
        if (cg2_set_cpuset (g.cg, task_rel, t->cpus, t->mems, &err) < 0)
            return errprintf (errp, "%s", err.text);
        if (!here && cg2_attach (g.cg, task_rel, pid, &err) < 0)
            return errprintf (errp, "cannot move pid %d into cgroup %s: %s",
                              (int)pid, task_rel, err.text);
    }
    /* After the cgroup move: older kernels reset affinity on a move. */
    if (t && affinity_set (pid, t->cpus, &err) < 0)
        return errprintf (errp, "%s", err.text);
    return 0;
}

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
        || g.error[0] || !g.status)
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
    if (apply_task (id, pid, &err) < 0) {
        slurm_error ("pin: step %s task %d: %s", g.stepname, id, err.text);
        copy_text (g.status[id].msg, sizeof (g.status[id].msg), err.text);
        g.status[id].state = TASK_FAILED;
    }
    else
        g.status[id].state = TASK_APPLIED;
    acctstep_task (pid);
    if (g.prof && prof_rec_add_root (g.prof, pid, &err) < 0)
        slurm_error ("pin: step %s task %d: profile: %s", g.stepname, id,
                     err.text);
    /* the batch (or interactive) step, the allocation's shell, is not
     * watched: it holds no PUs against the job's steps (plan_locked) */
    if (g.policy == PLACE_DYNAMIC && !g.batch)
        dynamic_add_task (pid);
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
    if (g.status && (uint32_t)id < g.ntasks
        && g.status[id].state != TASK_APPLIED) {
        task_say ("pin: error: task %d of step %s on %s: %s", id, g.stepname,
                  node, g.status[id].state == TASK_FAILED
                        ? g.status[id].msg : "was not placed (see the slurmd "
                                             "log)");
        return -1;
    }

    t = g.plan && (uint32_t)id < g.plan->ntasks ? &g.plan->tasks[id] : NULL;
    if (t && !(places = ompenv_places (t->cpus)))
        slurm_error ("pin: step %s task %d: cannot format OMP_PLACES",
                     g.stepname, id);
    task_omp (sp, "OMP_PLACES", places);
    task_omp (sp, "OMP_PROC_BIND", places ? ompenv_proc_bind (g.policy)
                                          : NULL);
    free (places);

    if (g.verbose) {
        hwloc_const_bitmap_t cpus = t ? t->cpus : g.allowed;
        hwloc_const_bitmap_t mems = t ? t->mems : topo_nodeset (g.topo);
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
        if (id == 0 && g.warning[0] && g.policy != PLACE_NONE)
            task_say ("pin: warning: %s: %s", node, g.warning);
        free (c);
        free (m);
    }
    return 0;
}

/* ---- the end of tasks and of the step ---------------------------------- */

/* The cgroup that holds the step's tasks and nothing else: Slurm's
 * step_<id>/user in nested mode (without slurmstepd), ours in standalone;
 * "" without one.  The job's cgroup (nested only) in job_rel. */
static const char *acct_rel (char *job_rel, size_t n)
{
    static char rel[PATH_MAX + 8];

    if (job_rel && n)
        job_rel[0] = '\0';
    if (!g.cg || g.mode == CG2_MODE_NONE || !g.step_rel[0])
        return "";
    if (g.mode == CG2_MODE_NESTED) {
        if (job_rel)
            job_dir_of_step (job_rel, n);
        snprintf (rel, sizeof (rel), "%s/user", g.step_rel);
        return rel;
    }
    return g.step_rel;
}

/* Append the step's record (libacct) with what the plugin knows. */
static void step_account (spank_t sp)
{
    char job_rel[PATH_MAX], fb[96] = "", *cpus = NULL, *mems = NULL;
    struct acctstep_info in = {
        .cg = g.cg,
        .mode = cg2_mode_name (g.mode),
        .policy = g.active ? policy_name (g.policy) : "none",
        .fallback = fb,
        .has_seed = g.active && g.policy == PLACE_RANDOM,
        .seed = g.seed,
    };
    unsigned mask = 0;

    if (g.conf.accounting)
        job_info ("the step's record has no partition, job name or array "
                  "ids");
    in.ident = &g.ident;
    in.rel = acct_rel (job_rel, sizeof (job_rel));
    in.job_rel = g.step == SLURM_EXTERN_CONT ? job_rel : NULL;
    if (g.plan) {
        hwloc_bitmap_t m = hwloc_bitmap_alloc ();
        for (uint32_t i = 0; m && i < g.plan->ntasks; i++) {
            mask |= g.plan->tasks[i].fallback;
            hwloc_bitmap_or (m, m, g.plan->tasks[i].mems);
        }
        if (mask)
            place_fallback_string (mask, fb, sizeof (fb));
        if (g.plan_cpus)
            cpus = topo_list_format (g.plan_cpus);
        if (m)
            mems = topo_list_format (m);
        hwloc_bitmap_free (m);
    }
    in.cpus = cpus;
    in.mems = mems;
    if (g.dyn.confined) {
        in.confined_us = g.dyn.confined_us;
        in.confine_use = g.dyn.use;
        in.confine_cpus = g.dyn.cpus;
        in.confine_mems = g.dyn.mems;
    }
    /* numbered steps: what they asked on this node; batch, interactive
     * and extern: the job's CPUs on this node (S_JOB_NCPUS) */
    if (g.active && !g.batch)
        in.alloc_cpus = g.ntasks * g.cpus_per_task;
    struct phases ph;
    phase_start (&ph);
    acctstep_end (sp, &in);
    phase_mark (&ph, "accounting");
    if (g.conf.accounting)
        slurm_debug ("pin: step %s: accounting took %ld us CPU, %ld us "
                     "wall", g.stepname, phase_total_cpu_us (&ph),
                     phase_total_wall_us (&ph));
    free (cpus);
    free (mems);
}

/* When the last local task has exited, its PUs are free: drop the claim
 * before slurmstepd tells srun (spank_fini runs only after that). */
int slurm_spank_task_exit (spank_t sp, int ac, char **av)
{
    pin_error_t err = { "" };

    if (spank_context () != S_CTX_REMOTE || !g.active)
        return 0;
    {
        int status = 0;
        if (spank_get_item (sp, S_TASK_EXIT_STATUS, &status)
            == ESPANK_SUCCESS && (g.tasks_exited == 0 || status != 0)
            && g.exit_status == 0)
            g.exit_status = status;
    }
    ++g.tasks_exited;
    acctstep_task_exit (sp, g.tasks_exited >= g.ntasks, g.cg,
                        acct_rel (NULL, 0));
    if (g.tasks_exited < g.ntasks)
        return 0;
    dynamic_end ();     /* joins the watcher: the claim is ours again */
    if (!g.claimed)
        return 0;
    if (claims_remove (g.claims_dir, g.job, g.step, &err) < 0)
        slurm_error ("pin: step %s: cannot remove the claim: %s",
                     g.stepname, err.text);
    g.claimed = false;
    return 0;
}

static void remove_tree (void)
{
    pin_error_t err = { "" };
    bool children = true;
    char task_rel[PATH_MAX + 32];
    int fd;

    if (g.mode == CG2_MODE_NESTED && g.task_dir_created) {
        for (uint32_t i = 0; i < g.ntasks; i++) {
            if (!g.task_dir_created[i])
                continue;
            snprintf (task_rel, sizeof (task_rel), "%s/user/task_%u",
                      g.step_rel, i);
            if (cg2_remove_tree (g.cg, task_rel, RMDIR_TIMEOUT_MS, &err) < 0)
                slurm_error ("pin: step %s: %s", g.stepname, err.text);
        }
    }
    if (!g.tree_created)
        return;
    if (cg2_remove_tree (g.cg, g.step_rel, RMDIR_TIMEOUT_MS, &err) < 0)
        slurm_error ("pin: step %s: cannot remove cgroup %s: %s",
                     g.stepname, g.step_rel, err.text);
    /* The job directory goes with the job's last step.  Steps create their
     * directory under the lock, so an empty job directory seen under the
     * lock belongs to no step.  One rmdir, no EBUSY retries: nothing may
     * sleep under the node lock (every starting step waits for it). */
    if ((fd = pin_lock_acquire (g.lock_path, LOCK_TIMEOUT_MS, &err)) < 0) {
        slurm_error ("pin: step %s: %s", g.stepname, err.text);
        return;
    }
    if (cg2_has_children (g.cg, g.job_rel, &children, &err) < 0)
        slurm_error ("pin: step %s: %s", g.stepname, err.text);
    else if (!children && cg2_remove_tree (g.cg, g.job_rel, 0, &err) < 0)
        slurm_error ("pin: step %s: cannot remove cgroup %s: %s",
                     g.stepname, g.job_rel, err.text);
    pin_lock_release (fd);
}

static void claim_removed (uint32_t step, void *arg)
{
    (void)arg;
    slurm_info ("pin: job %u: removed the claim of step %u", g.job, step);
}

/* Drop the claims ("job_<id>.step_<step>" in StateDir/claims) that steps
 * of this job left behind (a killed slurmstepd). */
static void remove_job_claims (void)
{
    pin_error_t err = { "" };
    char dir[PATH_MAX];

    if (fmt_path (dir, sizeof (dir), "%s/claims", g.conf.state_dir) < 0)
        return;
    if (claims_remove_job (dir, g.job, claim_removed, NULL, &err) < 0)
        slurm_error ("pin: job %u: %s", g.job, err.text);
}

/* For each cgroup below the job's directory that still holds processes
 * (cgroup.procs lists its own members only): one line naming it and them. */
struct left_walk {
    cg2_t *cg;
};

static enum cg2_busy_verdict log_left (const char *path, const char *sub,
                                       const char *name, void *arg)
{
    struct left_walk *w = arg;
    char *procs, *p, *save = NULL, pids[128] = "";
    int n = 0;
    size_t len = 0;

    (void)sub;
    (void)name;
    if (!(procs = cg2_read (w->cg, path, "cgroup.procs", NULL)))
        return CG2_BUSY_DESCEND;
    /* the first pids that fit, then " ..." */
    for (p = strtok_r (procs, "\n", &save); p;
         p = strtok_r (NULL, "\n", &save), n++) {
        if (len == SIZE_MAX)
            continue;
        if (len + strlen (p) + 6 < sizeof (pids))
            len += (size_t)snprintf (pids + len, sizeof (pids) - len,
                                     "%s%s", n ? " " : "", p);
        else {
            snprintf (pids + len, sizeof (pids) - len, " ...");
            len = SIZE_MAX;
        }
    }
    free (procs);
    if (n > 0) {
        slurm_error ("pin: job %u: cgroup %s/%s still holds %d process%s "
                     "(pid%s %s) after the job ended: %s escaped Slurm's "
                     "process tracking (ProctrackType); the directory stays "
                     "until %s, see doc/cgroup.md", g.job, cg2_root (w->cg),
                     path, n, n == 1 ? "" : "es", n == 1 ? "" : "s", pids,
                     n == 1 ? "it" : "they", n == 1 ? "it exits" :
                     "they exit");
    }
    return CG2_BUSY_DESCEND;
}

/* The extern step (PrologFlags=Contain) ends with the job: remove what
 * its steps left of our tree (a killed slurmstepd, or processes that
 * escaped Slurm's process tracking).  The step directories are removed
 * with EBUSY retries and without the node lock; only the job directory
 * itself is removed under the lock, once, when it is empty (as in
 * remove_tree()).  doc/cgroup.md, "When a job ends", says why. */
static void extern_cleanup (void)
{
    pin_error_t err = { "" };
    char job_rel[PATH_MAX], lock_path[PATH_MAX], path[PATH_MAX];
    bool children = true;
    cg2_t *cg;
    int fd;

    if (fmt_path (job_rel, sizeof (job_rel), "%s/job_%u",
                  g.conf.cgroup_base, g.job) < 0
        || fmt_path (lock_path, sizeof (lock_path), "%s/lock",
                     g.conf.state_dir) < 0)
        return;
    remove_job_claims ();
    if (!(cg = cg2_open (g.conf.cgroup_root, NULL)))
        return;
    if (fmt_path (path, sizeof (path), "%s/%s", cg2_root (cg), job_rel) < 0
        || access (path, F_OK) < 0)
        goto out;
    if (cg2_has_children (cg, job_rel, &children, &err) == 0 && children) {
        if (cg2_remove_below (cg, job_rel, RMDIR_TIMEOUT_MS, &err) < 0) {
            struct left_walk w = { .cg = cg };
            hwloc_bitmap_t unused = hwloc_bitmap_alloc ();

            slurm_error ("pin: job %u: cannot remove leftovers in %s: %s",
                         g.job, job_rel, err.text);
            if (unused)
                (void)cg2_busy_cpus_filter (cg, job_rel, log_left, &w,
                                            unused, NULL);
            hwloc_bitmap_free (unused);
            goto out;
        }
        slurm_info ("pin: job %u: removed leftovers of crashed steps: %s",
                    g.job, path);
    }
    if ((fd = pin_lock_acquire (lock_path, LOCK_TIMEOUT_MS, &err)) < 0) {
        slurm_error ("pin: job %u: %s", g.job, err.text);
        goto out;
    }
    if (cg2_has_children (cg, job_rel, &children, &err) < 0)
        slurm_error ("pin: job %u: %s", g.job, err.text);
    else if (!children && cg2_remove_tree (cg, job_rel, 0, &err) < 0)
        slurm_error ("pin: job %u: cannot remove cgroup %s: %s", g.job,
                     job_rel, err.text);
    pin_lock_release (fd);
out:
    cg2_close (cg);
}

int slurm_spank_exit (spank_t sp, int ac, char **av)
{
    pin_error_t err = { "" };

    if (spank_context () != S_CTX_REMOTE)
        return 0;
    dynamic_end ();     /* the confinement event is final */
    if (g.prof) {       /* the tasks never all forked */
        pin_error_t e = { "" };
        if (prof_rec_finish (g.prof, -1, &e) < 0)
            slurm_error ("pin: step %s: profile: %s", g.stepname, e.text);
        g.prof = NULL;
    }
    if (g.conf_ok && g.stepname[0])
        step_account (sp);  /* before any cgroup is removed */
    if (g.conf_ok && g.step == SLURM_EXTERN_CONT && g.stepname[0])
        extern_cleanup ();
    if (g.claimed
        && claims_remove (g.claims_dir, g.job, g.step, &err) < 0)
        slurm_error ("pin: step %s: cannot remove the claim: %s",
                     g.stepname, err.text);
    g.claimed = false;
    if (g.cg)
        remove_tree ();
    place_plan_destroy (g.plan);
    g.plan = NULL;
    hwloc_bitmap_free (g.allowed);
    g.allowed = NULL;
    hwloc_bitmap_free (g.job_cpus);
    g.job_cpus = NULL;
    hwloc_bitmap_free (g.plan_cpus);
    g.plan_cpus = NULL;
    topo_destroy (g.topo);
    g.topo = NULL;
    cg2_close (g.cg);
    g.cg = NULL;
    free (g.task_dir_created);
    g.task_dir_created = NULL;
    if (g.status)
        munmap (g.status, g.status_size);
    g.status = NULL;
    return 0;
}

/* ---- slurmd's `slurmstepd spank` epilog process --------------------------- */

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
    acctstep_job_epilog (sp, &g.conf);
    if (g.conf.accounting && g.conf.deliver_command[0] && deliver_wanted ()
        && spank_get_item (sp, S_JOB_ID, &job) == ESPANK_SUCCESS
        && deliver_spawn (g.conf.deliver_command, job, g.conf.journal_dir,
                          120, &err) < 0)
        slurm_error ("pin: job %u: accounting not sent to slurmdbd: %s", job,
                     err.text);
    return 0;
}
