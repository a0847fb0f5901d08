/* step.c - the life of one step on one node (step.h) */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <slurm/slurm.h>    /* SLURM_EXTERN_CONT, a constant only */

#include "libaffinity/affinity.h"
#include "libcgroup2/stepcg.h"
#include "libclaims/claims.h"
#include "libprof/record.h"
#include "libtopo/topo.h"
#include "libutil/mkdirp.h"
#include "libutil/safefile.h"
#include "profclient.h"
#include "step_private.h"

#define LOCK_TIMEOUT_MS 10000   /* wait for other steps' plan-and-apply */
#define RMDIR_TIMEOUT_MS 10000  /* EBUSY retries when removing our tree */
#define CONTROLLERS "+cpuset +cpu"

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

static void mark (pin_step_t *s, const char *what)
{
    if (s->ph)
        phase_mark (s->ph, what);
}

pin_step_t *pin_step_create (const struct pin_step_args *a, pin_error_t *errp)
{
    pin_step_t *s;

    if (!a || !a->conf || !a->stepname) {
        errno = EINVAL;
        errprintf (errp, "pin_step_create: invalid argument");
        return NULL;
    }
    if (!(s = calloc (1, sizeof (*s)))) {
        errprintf (errp, "out of memory");
        return NULL;
    }
    s->conf = a->conf;
    s->job = a->job;
    s->step = a->step;
    snprintf (s->stepname, sizeof (s->stepname), "%s", a->stepname);
    s->policy = PLACE_NONE;
    s->cpus_per_task = 1;
    s->ph = a->ph;
    s->log = a->log;
    s->mode = CG2_MODE_NONE;
    s->acct = stepacct_begin (s->conf, s->job, s->step, s->stepname,
                              &s->log);
    return s;
}

int pin_step_set_tasks (pin_step_t *s, const struct pin_step_tasks *t,
                        pin_error_t *errp)
{
    if (!s || !t || t->ntasks == 0 || s->status) {
        errno = EINVAL;
        return errprintf (errp, "pin_step_set_tasks: invalid argument");
    }
    s->policy = t->policy;
    s->batch = t->batch;
    s->ntasks = t->ntasks;
    s->cpus_per_task = t->cpus_per_task ? t->cpus_per_task : 1;
    s->seed = t->seed;
    s->status_size = (size_t)s->ntasks * sizeof (struct task_status);
    s->status = mmap (NULL, s->status_size, PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (s->status == MAP_FAILED) {
        s->status = NULL;
        return errprintf (errp, "cannot map the task status page: %s",
                          strerror (errno));
    }
    return 0;
}

int pin_step_load_topology (pin_step_t *s, bool *refreshed, pin_error_t *errp)
{
    pin_error_t err = { "" };
    bool r = false;

    if (!(s->topo = topo_load_cached (s->conf->topology_cache, &r, &err)))
        return errprintf (errp, "cannot load the topology: %s", err.text);
    if (refreshed)
        *refreshed = r;
    return 0;
}

/* The PUs of Slurm's core list on this node, within what this process
 * may use itself. */
static int alloc_cpus (pin_step_t *s, const char *what, const char *cores,
                       hwloc_bitmap_t cpus, pin_error_t *errp)
{
    hwloc_bitmap_t mine = hwloc_bitmap_alloc ();
    pin_error_t err = { "" };
    int rc = -1;

    if (!mine)
        return errprintf (errp, "out of memory");
    if (!cores || !*cores) {
        errprintf (errp, "Slurm gave no %s cores for this node", what);
        goto out;
    }
    if (topo_slurm_cores_to_cpuset (s->topo, cores, cpus, &err) < 0) {
        errprintf (errp, "%s cores %s: %s", what, cores, err.text);
        goto out;
    }
    hwloc_bitmap_and (cpus, cpus, topo_cpuset (s->topo));
    if (affinity_get (0, mine) == 0)
        hwloc_bitmap_and (cpus, cpus, mine);
    if (hwloc_bitmap_iszero (cpus)) {
        errprintf (errp, "%s cores %s map to no usable CPU on this node",
                   what, cores);
        goto out;
    }
    rc = 0;
out:
    hwloc_bitmap_free (mine);
    return rc;
}

int pin_step_set_alloc (pin_step_t *s, const char *job_cores,
                        const char *step_cores, pin_error_t *errp)
{
    if (!s->topo) {
        errno = EINVAL;
        return errprintf (errp, "no topology loaded");
    }
    if (!(s->allowed = hwloc_bitmap_alloc ())
        || !(s->job_cpus = hwloc_bitmap_alloc ()))
        return errprintf (errp, "out of memory");
    if (alloc_cpus (s, "job", job_cores, s->job_cpus, errp) < 0)
        return -1;
    if (s->batch)
        hwloc_bitmap_copy (s->allowed, s->job_cpus);
    else if (alloc_cpus (s, "step", step_cores, s->allowed, errp) < 0)
        return -1;
    if (s->batch) {
        /* The batch step gets all CPUs of the node (job->cpus), which
         * may count more than the PUs Slurm's cores map to. */
        unsigned n = (unsigned)hwloc_bitmap_weight (s->allowed);
        if (s->cpus_per_task > n)
            s->cpus_per_task = n;
    }
    return 0;
}

void pin_step_detect_mode (pin_step_t *s)
{
    struct cg2_mode_input in = {
        .cgroup_root = s->conf->cgroup_root,
        .cgroup_base = s->conf->cgroup_base,
        .job = s->job,
        .step = s->step,
    };
    struct cg2_mode_result *res = calloc (1, sizeof (*res));
    char *self = cg2_pid_path (getpid (), NULL);

    if (!res) {
        free (self);
        s->mode = CG2_MODE_NONE;
        snprintf (s->warning, sizeof (s->warning), "out of memory: CPUs "
                  "bound with sched_setaffinity only, not accounted");
        return;
    }
    in.self_cgroup = self ? self : "";
    s->cg = cg2_mode_detect (&in, res);
    s->mode = res->mode;
    s->cpuset = res->cpuset;
    snprintf (s->step_rel, sizeof (s->step_rel), "%s", res->step_rel);
    snprintf (s->job_rel, sizeof (s->job_rel), "%s", res->job_rel);
    if (s->mode == CG2_MODE_NONE)
        snprintf (s->warning, sizeof (s->warning), "%.300s: CPUs bound with "
                  "sched_setaffinity only, not accounted", res->why);
    else if (!s->cpuset)
        snprintf (s->warning, sizeof (s->warning), "%.300s: CPUs bound with "
                  "sched_setaffinity only, memory not fenced", res->why);
    free (self);
    free (res);
}

int pin_step_prepare_state (pin_step_t *s, bool *first_warning,
                            pin_error_t *errp)
{
    const char *dir = s->conf->state_dir;
    pin_error_t err = { "" };
    char marker[PATH_MAX];
    int fd;

    if (first_warning)
        *first_warning = false;
    if (mkdir_p (dir, 0755, 0700, &err) < 0)
        return errprintf (errp, "StateDir %s", err.text);
    /* claims/ and lock are checked where they are opened (libclaims) */
    if (safefile_check (dir, geteuid (), &err) < 0)
        return errprintf (errp, "StateDir %s", err.text);
    if (fmt_path (s->claims_dir, sizeof (s->claims_dir), "%s/claims",
                  dir) < 0
        || fmt_path (s->lock_path, sizeof (s->lock_path), "%s/lock",
                     dir) < 0
        || mkdir_p (s->claims_dir, 0700, 0700, &err) < 0)
        return errprintf (errp, "cannot create %s: %s", s->claims_dir,
                          err.text);
    /* The affinity-only fallback is logged once per node and boot: a
     * marker in StateDir (root's, checked above). */
    if (s->warning[0] && first_warning
        && snprintf (marker, sizeof (marker), "%s/warned-affinity-only",
                     dir) < (int)sizeof (marker)
        && (fd = open (marker, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC,
                       0600)) >= 0) {
        close (fd);
        *first_warning = true;
    }
    return 0;
}

/* The cgroup directory of the step's job (the parent of step_rel). */
static void job_dir_of_step (const pin_step_t *s, char *buf, size_t n)
{
    const char *slash = strrchr (s->step_rel, '/');

    snprintf (buf, n, "%.*s", (int)(slash ? slash - s->step_rel : 0),
              s->step_rel);
}

/* What other running steps of this node hold: live claims and the task
 * cgroups of the job's tree; load[os] (os < nload): how many claims hold
 * PU os (every placed step claims its PUs; a PU only the cgroups name
 * counts as one holder, place.h). */
static int read_busy (pin_step_t *s, hwloc_bitmap_t busy, unsigned *load,
                      unsigned nload, pin_error_t *errp)
{
    pin_error_t err = { "" };
    char job_rel[PATH_MAX], stepdir[32];

    if (claims_load (s->claims_dir, s->job, s->step, busy, load, nload,
                     &err) < 0)
        return errprintf (errp, "cannot read the claims in %s: %s",
                          s->claims_dir, err.text);
    if (s->mode == CG2_MODE_NONE || !s->cpuset)
        return 0;
    job_dir_of_step (s, job_rel, sizeof (job_rel));
    if (stepcg_busy (s->cg, job_rel,
                     stepcg_step_dir (s->step, stepdir, sizeof (stepdir)),
                     busy, &err) < 0)
        return errprintf (errp, "cannot read the cgroups of other steps: "
                          "%s", err.text);
    return 0;
}

/* A zeroed holder table for read_busy, one entry per PU index. */
static unsigned *load_alloc (const pin_step_t *s, unsigned *n)
{
    hwloc_const_bitmap_t all = topo_cpuset (s->topo);
    int last = all ? hwloc_bitmap_last (all) : -1;

    *n = last < 0 ? 0 : (unsigned)last + 1;
    return calloc (*n ? *n : 1, sizeof (unsigned));
}

/* `refused`: the pin.conf key that refused the fallback, or NULL. */
static int fail_no_room (pin_error_t *errp, const char *why,
                         hwloc_const_bitmap_t busy, const char *refused)
{
    char *b = topo_list_format (busy);

    errprintf (errp, "%s; other running steps hold cpus %s%s%s%s", why,
               b && *b ? b : "none", refused ? "; refused by " : "",
               refused ? refused : "",
               refused ? " in pin.conf (allow runs it on shared cpus)" : "");
    free (b);
    return -1;
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
static void log_overflow (pin_step_t *s, const struct place_plan *plan,
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
    steplog (&s->log, STEPLOG_INFO, "pin: step %s: %u task%s x %u CPU%s do "
             "not fit in cpus %s minus busy %s: placed %s (%u of %u tasks; "
             "pin.conf Oversubscribe=, ShareWithSteps=)", s->stepname,
             plan->ntasks, plan->ntasks == 1 ? "" : "s",
             plan->cpus_per_task, plan->cpus_per_task == 1 ? "" : "s",
             a ? a : "?", b && *b ? b : "none",
             place_fallback_string (mask, names, sizeof (names)), ntasks,
             plan->ntasks);
    free (a);
    free (b);
}

/* Under the node lock: busy PUs, the plan, the claim, our step cgroup
 * (see pin_step_plan). */
static int plan_locked (pin_step_t *s, enum pin_step_plan_for why,
                        hwloc_bitmap_t out_cpus, hwloc_bitmap_t out_mems,
                        pin_error_t *errp)
{
    bool start = why == PIN_STEP_PLAN_START;
    int policy = start ? s->policy : PLACE_NUMA_LOCAL;
    /* at start the step's own PUs are moved; a confinement places in a
     * copy, the step keeps what it was given */
    hwloc_bitmap_t allowed = start ? s->allowed : hwloc_bitmap_dup (s->allowed);
    hwloc_bitmap_t busy = hwloc_bitmap_alloc ();
    hwloc_bitmap_t all = hwloc_bitmap_alloc ();
    hwloc_bitmap_t mems = hwloc_bitmap_alloc ();
    unsigned nload = 0, *load = s->topo ? load_alloc (s, &nload) : NULL;
    struct place_plan *plan = NULL;
    pin_error_t err = { "" };
    bool moved = false;
    int rc = -1;

    if (!busy || !all || !mems || (!start && !allowed)
        || (s->topo && !load)) {
        errprintf (errp, "out of memory");
        goto out;
    }
    /* dynamic places nothing at start: its confinement plans later */
    if (policy != PLACE_NONE && policy != PLACE_DYNAMIC) {
        struct place_request req = {
            .policy = (enum place_policy)policy,
            .ntasks = s->ntasks,
            .cpus_per_task = s->cpus_per_task,
            .allowed = allowed,
            .busy = busy,
            .seed = start ? s->seed : 0,
            .refuse = (s->conf->oversubscribe ? 0 : PLACE_REFUSE_OVERSUBSCRIBE)
                      | (s->conf->share_with_steps ? 0 : PLACE_REFUSE_SHARE),
            .load = load,
            .nload = nload,
        };
        /* The batch (or interactive) step is the allocation's shell: it
         * neither waits for other steps nor holds PUs against them. */
        bool shell = start && s->batch;

        if (!shell && read_busy (s, busy, load, nload, errp) < 0)
            goto out;
        if (start)
            mark (s, "busy");
        /* srun --overlap: Slurm gives every overlapping step the same
         * first cores of the job.  Such a step is placed on the job's PUs
         * on this node instead, so concurrent steps stay disjoint. */
        if (!shell && hwloc_bitmap_intersects (allowed, busy)
            && !hwloc_bitmap_isequal (allowed, s->job_cpus)) {
            hwloc_bitmap_copy (allowed, s->job_cpus);
            moved = true;
        }
        if (!(plan = place_compute (s->topo, &req, &err))) {
            if (start)
                fail_no_room (errp, err.text, busy, refused_by (&req, busy));
            else
                errprintf (errp, "%s", err.text);
            goto out;
        }
        log_overflow (s, plan, allowed, busy);
        if (start) {
            /* a policy its allocation confines says so (alloc-one-numa) */
            unsigned fb = place_alloc_confines (s->topo, req.policy,
                                                allowed);
            for (uint32_t i = 0; fb && i < plan->ntasks; i++)
                plan->tasks[i].fallback |= fb;
            mark (s, "plan");
        }
        for (uint32_t i = 0; i < plan->ntasks; i++) {
            hwloc_bitmap_or (all, all, plan->tasks[i].cpus);
            hwloc_bitmap_or (mems, mems, plan->tasks[i].mems);
        }
        if (start) {
            if (!(s->plan_cpus = hwloc_bitmap_dup (all))) {
                errprintf (errp, "out of memory");
                goto out;
            }
            s->plan = plan;
            plan = NULL;
            s->moved = moved;
        }
        if (!shell) {
            if (claims_add (s->claims_dir, s->job, s->step, getpid (), all,
                            &err) < 0) {
                errprintf (errp, "cannot record the claim in %s: %s",
                           s->claims_dir, err.text);
                goto out;
            }
            s->claimed = true;
            if (start)
                mark (s, "claim");
        }
        if (!start) {
            hwloc_bitmap_copy (out_cpus, all);
            hwloc_bitmap_copy (out_mems, mems);
        }
    }
    if (start && s->mode == CG2_MODE_STANDALONE) {
        if (cg2_create (s->cg, s->step_rel, s->cpuset ? CONTROLLERS : "+cpu",
                        &err) < 0) {
            errprintf (errp, "cannot create cgroup %s/%s: %s",
                       cg2_root (s->cg), s->step_rel, err.text);
            goto out;
        }
        s->tree_created = true;
        mark (s, "step cgroup");
    }
    rc = 0;
out:
    place_plan_destroy (plan);
    if (!start)
        hwloc_bitmap_free (allowed);
    hwloc_bitmap_free (busy);
    hwloc_bitmap_free (all);
    hwloc_bitmap_free (mems);
    free (load);
    return rc;
}

int pin_step_plan (pin_step_t *s, enum pin_step_plan_for why,
                   hwloc_bitmap_t cpus, hwloc_bitmap_t mems,
                   pin_error_t *errp)
{
    bool start = why == PIN_STEP_PLAN_START;
    pin_error_t err = { "" };
    int fd, rc;

    if (!s || (!start && (!cpus || !mems || !s->allowed))
        || (start && s->plan)) {
        errno = EINVAL;
        return errprintf (errp, "pin_step_plan: invalid argument");
    }
    if ((fd = pin_lock_acquire (s->lock_path, LOCK_TIMEOUT_MS, &err)) < 0)
        return errprintf (errp, "cannot take the lock %s: %s", s->lock_path,
                          err.text);
    if (start)
        mark (s, "lock");
    rc = plan_locked (s, why, cpus, mems, errp);
    pin_lock_release (fd);
    if (start)
        mark (s, "unlock");
    if (rc < 0)
        return -1;
    if (start && s->mode == CG2_MODE_NESTED && s->ntasks
        && !(s->task_dir_created = calloc (s->ntasks, sizeof (bool))))
        return errprintf (errp, "out of memory");
    return 0;
}

/* Nested mode, a step moved onto other PUs of its job: Slurm confined the
 * step's cgroup to the cores it allocated (task/cgroup writes it after
 * the plugin's init_post_opt, so this runs in task_post_fork), so widen
 * it (parent first) to also hold the planned PUs, all of them inside the
 * job's cgroup. */
static int widen_slurm_cpuset (pin_step_t *s, hwloc_const_bitmap_t cpus,
                               pin_error_t *errp)
{
    const char *levels[] = { "", "/user" };
    pin_error_t err = { "" };

    for (int i = 0; i < 2; i++) {
        char rel[PATH_MAX + 8], *cur, *want = NULL;
        hwloc_bitmap_t set = hwloc_bitmap_alloc ();
        int rc = -1;

        if (!set || fmt_path (rel, sizeof (rel), "%s%s", s->step_rel,
                              levels[i]) < 0) {
            hwloc_bitmap_free (set);
            return errprintf (errp, "cannot widen the step cgroup: %s",
                              strerror (errno));
        }
        if (!(cur = cg2_read (s->cg, rel, "cpuset.cpus", &err))) {
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
            else if (cg2_write (s->cg, rel, "cpuset.cpus", want, &err) < 0)
                errprintf (errp, "cannot widen %s to cpus %s for an "
                           "overlapping step: %s", rel, want, err.text);
            else {
                steplog (&s->log, STEPLOG_DEBUG, "pin: step %s: %s "
                         "cpuset.cpus %s -> %s", s->stepname, rel, cur,
                         want);
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

static int apply_task (pin_step_t *s, int id, pid_t pid, pin_error_t *errp)
{
    const struct place_task *t = s->plan ? &s->plan->tasks[id] : NULL;
    pin_error_t err = { "" };
    char task_rel[PATH_MAX + 32];

    if (s->mode == CG2_MODE_STANDALONE) {
        if (fmt_path (task_rel, sizeof (task_rel), "%s/task_%d", s->step_rel,
                      id) < 0
            || cg2_create (s->cg, task_rel, s->cpuset ? CONTROLLERS : "+cpu",
                           &err) < 0)
            return errprintf (errp, "cannot create cgroup %s: %s", task_rel,
                              err.text);
        if (t && s->cpuset
            && cg2_set_cpuset (s->cg, task_rel, t->cpus, t->mems, &err) < 0)
            return errprintf (errp, "%s", err.text);
        if (cg2_attach (s->cg, task_rel, pid, &err) < 0)
            return errprintf (errp, "cannot move pid %d into cgroup %s: %s",
                              (int)pid, task_rel, err.text);
    }
    else if (s->mode == CG2_MODE_NESTED && t && s->cpuset) {
        char *now, *procs;
        bool here;

        if (fmt_path (task_rel, sizeof (task_rel), "%s/user/task_%d",
                      s->step_rel, id) < 0)
            return errprintf (errp, "cgroup path too long");
        if (s->moved && !s->widened) {
            if (widen_slurm_cpuset (s, s->plan_cpus, errp) < 0)
                return -1;
            s->widened = true;
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
        if (!here && !(procs = cg2_read (s->cg, task_rel, "cgroup.procs",
                                         NULL))) {
            if (cg2_create (s->cg, task_rel, NULL, &err) < 0)
                return errprintf (errp, "cannot create cgroup %s: %s",
                                  task_rel, err.text);
            if (s->task_dir_created)
                s->task_dir_created[id] = true;
        }
        else if (!here)
            free (procs);
        if (cg2_set_cpuset (s->cg, task_rel, t->cpus, t->mems, &err) < 0)
            return errprintf (errp, "%s", err.text);
        if (!here && cg2_attach (s->cg, task_rel, pid, &err) < 0)
            return errprintf (errp, "cannot move pid %d into cgroup %s: %s",
                              (int)pid, task_rel, err.text);
    }
    /* After the cgroup move: older kernels reset affinity on a move. */
    if (t && affinity_set (pid, t->cpus, &err) < 0)
        return errprintf (errp, "%s", err.text);
    return 0;
}

int pin_step_apply_task (pin_step_t *s, int id, pid_t pid, pin_error_t *errp)
{
    pin_error_t err = { "" };

    if (!s || id < 0 || (uint32_t)id >= s->ntasks || pid <= 0) {
        errno = EINVAL;
        return errprintf (errp, "task id %d / pid %d out of range", id,
                          (int)pid);
    }
    if (apply_task (s, id, pid, &err) < 0) {
        snprintf (s->status[id].msg, sizeof (s->status[id].msg), "%s",
                  err.text);
        s->status[id].state = PIN_STEP_TASK_FAILED;
        return errprintf (errp, "%s", err.text);
    }
    s->status[id].state = PIN_STEP_TASK_APPLIED;
    return 0;
}

enum pin_step_task_state pin_step_task_status (const pin_step_t *s, int id,
                                               const char **msg)
{
    if (msg)
        *msg = "";
    if (!s || !s->status || id < 0 || (uint32_t)id >= s->ntasks)
        return PIN_STEP_TASK_PENDING;
    if (msg)
        *msg = s->status[id].msg;
    return (enum pin_step_task_state)s->status[id].state;
}

bool pin_step_has_status (const pin_step_t *s)
{
    return s && s->status;
}

const struct place_task *pin_step_task (const pin_step_t *s, int id)
{
    if (!s || !s->plan || id < 0 || (uint32_t)id >= s->plan->ntasks)
        return NULL;
    return &s->plan->tasks[id];
}

hwloc_const_bitmap_t pin_step_allowed (const pin_step_t *s)
{
    return s ? s->allowed : NULL;
}

hwloc_const_bitmap_t pin_step_plan_cpus (const pin_step_t *s)
{
    return s ? s->plan_cpus : NULL;
}

hwloc_const_bitmap_t pin_step_nodeset (const pin_step_t *s)
{
    return s && s->topo ? topo_nodeset (s->topo) : NULL;
}

uint32_t pin_step_cpus_per_task (const pin_step_t *s)
{
    return s ? s->cpus_per_task : 0;
}

enum cg2_mode pin_step_mode (const pin_step_t *s)
{
    return s ? s->mode : CG2_MODE_NONE;
}

bool pin_step_cpuset (const pin_step_t *s)
{
    return s && s->cpuset;
}

const char *pin_step_warning (const pin_step_t *s)
{
    return s ? s->warning : "";
}

cg2_t *pin_step_cgroup (const pin_step_t *s)
{
    return s ? s->cg : NULL;
}

const char *pin_step_acct_rel (pin_step_t *s, char *job_rel, size_t n)
{
    if (job_rel && n)
        job_rel[0] = '\0';
    if (!s || !s->cg || s->mode == CG2_MODE_NONE || !s->step_rel[0])
        return "";
    if (s->mode == CG2_MODE_NESTED) {
        if (job_rel)
            job_dir_of_step (s, job_rel, n);
        snprintf (s->acct_rel, sizeof (s->acct_rel), "%s/user", s->step_rel);
        return s->acct_rel;
    }
    return s->step_rel;
}

void pin_step_record (const pin_step_t *s, char **cpus, char **mems,
                      unsigned *fallback)
{
    unsigned mask = 0;

    *cpus = *mems = NULL;
    if (s && s->plan) {
        hwloc_bitmap_t m = hwloc_bitmap_alloc ();
        for (uint32_t i = 0; m && i < s->plan->ntasks; i++) {
            mask |= s->plan->tasks[i].fallback;
            hwloc_bitmap_or (m, m, s->plan->tasks[i].mems);
        }
        if (s->plan_cpus)
            *cpus = topo_list_format (s->plan_cpus);
        if (m)
            *mems = topo_list_format (m);
        hwloc_bitmap_free (m);
    }
    *fallback = mask;
}

/* ---- the watcher ---------------------------------------------------------- */

/* confine.h's plan: in the watcher thread, at the moment of confinement.
 * The main thread does not touch the claim until it has joined the
 * watcher (pin_step_watch_stop). */
static int confine_plan (void *arg, hwloc_bitmap_t cpus, hwloc_bitmap_t mems,
                         pin_error_t *errp)
{
    return pin_step_plan (arg, PIN_STEP_PLAN_CONFINE, cpus, mems, errp);
}

static bool dynamic_watched (const pin_step_t *s)
{
    return s->policy == PLACE_DYNAMIC && !s->batch;
}

void pin_step_add_task (pin_step_t *s, pid_t pid)
{
    /* the batch (or interactive) step, the allocation's shell, is not
     * watched: it holds no PUs against the job's steps */
    if (!s || !dynamic_watched (s) || pid <= 0)
        return;
    if (s->confine)
        confine_add_task (s->confine, pid);
    else if (s->npids < MAX_PIDS)
        s->pids[s->npids++] = pid;
}

/* Start the watcher with its clients; -1 with errp.  On failure the
 * clients are destroyed (the profile finished, silently). */
static int watch_start (pin_step_t *s, pin_error_t *errp)
{
    struct stepwatch_client c;

    if (!(s->sw = stepwatch_create ()))
        return errprintf (errp, "out of memory");
    if (s->confine) {
        confine_client (s->confine, &c);
        if (stepwatch_add (s->sw, &c, errp) < 0)
            goto fail;
    }
    if (s->prof) {
        profclient_client (s->prof, &c);
        if (stepwatch_add (s->sw, &c, errp) < 0)
            goto fail;
    }
    if (stepwatch_start (s->sw, errp) < 0)
        goto fail;
    return 0;
fail:
    stepwatch_destroy (s->sw);
    s->sw = NULL;
    confine_destroy (s->confine);
    s->confine = NULL;
    profclient_destroy (s->prof);
    s->prof = NULL;
    return -1;
}

void pin_step_watch_start (pin_step_t *s, uid_t uid)
{
    struct prof_rec *prof = s ? s->prof_rec : NULL;

    bool dyn = dynamic_watched (s);
    enum confine_how how = s->conf->dynamic_confine == PIN_CONFINE_QUOTA
                           ? CONFINE_QUOTA
                           : s->cpuset ? CONFINE_CPUSET : CONFINE_AFFINITY;
    char node[64] = "?", watch[PATH_MAX + 8], path[2 * PATH_MAX];
    pin_error_t err = { "" };

    if (!s || s->sw)
        return;
    s->prof_rec = NULL;     /* the watcher's from here on */
    if (dyn && (s->mode == CG2_MODE_NONE || !s->cg)) {
        steplog (&s->log, STEPLOG_INFO, "pin: step %s: policy dynamic needs "
                 "the step's cgroup v2 cpu.stat: not watched, runs as "
                 "policy none", s->stepname);
        dyn = false;
    }
    if (!dyn && !prof)
        return;
    if (prof && !(s->prof = profclient_create (prof, s->stepname, &s->log,
                                               &err))) {
        steplog (&s->log, STEPLOG_ERROR, "pin: step %s: profile: %s; not "
                 "recorded", s->stepname, err.text);
        (void)prof_rec_finish (prof, -1, NULL);
        if (!dyn)
            return;
    }
    if (!dyn) {
        if (watch_start (s, &err) < 0)
            steplog (&s->log, STEPLOG_ERROR, "pin: step %s: profile: %s; "
                     "not recorded", s->stepname, err.text);
        return;
    }
    (void)gethostname (node, sizeof (node) - 1);
    /* Slurm's step cgroup: its tasks are below user/ (slurm/ holds
     * slurmstepd itself) */
    snprintf (watch, sizeof (watch), "%s", s->step_rel);
    if (s->mode == CG2_MODE_NESTED
        && fmt_path (path, sizeof (path), "%s/%s/user", cg2_root (s->cg),
                     s->step_rel) == 0
        && access (path, F_OK) == 0)
        snprintf (watch, sizeof (watch), "%s/user", s->step_rel);
    struct confine_config cfg = {
        .stepname = s->stepname,
        .node = node,
        .cgroup_root = cg2_root (s->cg),
        .watch_rel = watch,
        .how = how,
        .params = {
            .overuse = s->conf->dynamic_overuse,
            .grace_us = s->conf->dynamic_grace_us,
            .interval_us = s->conf->dynamic_interval_us,
            .alloc_cpus = (double)s->ntasks * s->cpus_per_task,
        },
        .plan = confine_plan,
        .plan_arg = s,
        .uid = uid,
        .prof = s->prof,
        .log = s->log,
    };
    if (!(s->confine = confine_create (&cfg, &err))
        || watch_start (s, &err) < 0) {
        steplog (&s->log, STEPLOG_ERROR, "pin: step %s: policy dynamic: %s; "
                 "runs as policy none", s->stepname, err.text);
        profclient_destroy (s->prof);
        s->prof = NULL;
        confine_destroy (s->confine);
        s->confine = NULL;
        return;
    }
    for (unsigned i = 0; i < s->npids; i++)
        confine_add_task (s->confine, s->pids[i]);
    steplog (&s->log, STEPLOG_DEBUG, "pin: step %s: watching %s every %lld "
             "ms: confined (%s) after %lld ms above %g x %u CPUs",
             s->stepname, watch, s->conf->dynamic_interval_us / 1000,
             confine_how_name (how), s->conf->dynamic_grace_us / 1000,
             s->conf->dynamic_overuse, s->ntasks * s->cpus_per_task);
}

void pin_step_watch_stop (pin_step_t *s, int status)
{
    int64_t cpu_us = 0, wall_us = 0;
    struct confine_event ev = { 0 };

    if (!s || !stepwatch_running (s->sw))
        return;
    stepwatch_stop (s->sw, status, &cpu_us, &wall_us);
    if (s->confine)
        confine_get_event (s->confine, &ev);
    steplog (&s->log, STEPLOG_INFO, "pin: step %s: %s%s; watcher CPU time "
             "%lld us in %lld ms (%.4f%% of a CPU)", s->stepname,
             dynamic_watched (s) ? "policy dynamic: " : "profiled",
             !dynamic_watched (s) ? "" : ev.confined ? "confined"
                                                    : "never confined",
             (long long)cpu_us, (long long)(wall_us / 1000),
             wall_us > 0 ? 100.0 * (double)cpu_us / (double)wall_us : 0.0);
}

void pin_step_confine_event (const pin_step_t *s, struct confine_event *ev)
{
    memset (ev, 0, sizeof (*ev));
    if (s && s->confine)
        confine_get_event (s->confine, ev);
}

int pin_step_release (pin_step_t *s, pin_error_t *errp)
{
    pin_error_t err = { "" };

    if (!s || !s->claimed)
        return 0;
    s->claimed = false;
    if (claims_remove (s->claims_dir, s->job, s->step, &err) < 0)
        return errprintf (errp, "%s", err.text);
    return 0;
}

/* ---- the end ------------------------------------------------------------ */

static void remove_tree (pin_step_t *s)
{
    pin_error_t err = { "" };
    bool children = true;
    char task_rel[PATH_MAX + 32];
    int fd;

    if (s->mode == CG2_MODE_NESTED && s->task_dir_created) {
        for (uint32_t i = 0; i < s->ntasks; i++) {
            if (!s->task_dir_created[i])
                continue;
            snprintf (task_rel, sizeof (task_rel), "%s/user/task_%u",
                      s->step_rel, i);
            if (cg2_remove_tree (s->cg, task_rel, RMDIR_TIMEOUT_MS, &err) < 0)
                steplog (&s->log, STEPLOG_ERROR, "pin: step %s: %s",
                         s->stepname, err.text);
        }
    }
    if (!s->tree_created)
        return;
    if (cg2_remove_tree (s->cg, s->step_rel, RMDIR_TIMEOUT_MS, &err) < 0)
        steplog (&s->log, STEPLOG_ERROR, "pin: step %s: cannot remove cgroup "
                 "%s: %s", s->stepname, s->step_rel, err.text);
    /* The job directory goes with the job's last step.  Steps create their
     * directory under the lock, so an empty job directory seen under the
     * lock belongs to no step.  One rmdir, no EBUSY retries: nothing may
     * sleep under the node lock (every starting step waits for it). */
    if ((fd = pin_lock_acquire (s->lock_path, LOCK_TIMEOUT_MS, &err)) < 0) {
        steplog (&s->log, STEPLOG_ERROR, "pin: step %s: %s", s->stepname,
                 err.text);
        return;
    }
    if (cg2_has_children (s->cg, s->job_rel, &children, &err) < 0)
        steplog (&s->log, STEPLOG_ERROR, "pin: step %s: %s", s->stepname,
                 err.text);
    else if (!children && cg2_remove_tree (s->cg, s->job_rel, 0, &err) < 0)
        steplog (&s->log, STEPLOG_ERROR, "pin: step %s: cannot remove cgroup "
                 "%s: %s", s->stepname, s->job_rel, err.text);
    pin_lock_release (fd);
}

void pin_step_destroy (pin_step_t *s)
{
    int saved = errno;
    pin_error_t err = { "" };

    if (!s)
        return;
    pin_step_watch_stop (s, -1);
    if (s->prof_rec)
        (void)prof_rec_finish (s->prof_rec, -1, NULL);
    stepwatch_destroy (s->sw);
    profclient_destroy (s->prof);
    confine_destroy (s->confine);
    if (pin_step_release (s, &err) < 0)
        steplog (&s->log, STEPLOG_ERROR, "pin: step %s: cannot remove the "
                 "claim: %s", s->stepname, err.text);
    if (s->cg)
        remove_tree (s);
    place_plan_destroy (s->plan);
    hwloc_bitmap_free (s->allowed);
    hwloc_bitmap_free (s->job_cpus);
    hwloc_bitmap_free (s->plan_cpus);
    topo_destroy (s->topo);
    cg2_close (s->cg);
    free (s->task_dir_created);
    stepacct_destroy (s->acct);
    if (s->status)
        munmap (s->status, s->status_size);
    free (s);
    errno = saved;
}

/* ---- accounting (account.h) ------------------------------------------------ */

void pin_step_account_task (pin_step_t *s, pid_t pid)
{
    if (s)
        stepacct_task (s->acct, pid);
}

void pin_step_account_task_exit (pin_step_t *s, int status, bool last)
{
    if (s)
        stepacct_task_exit (s->acct, status, last, s->cg,
                            pin_step_acct_rel (s, NULL, 0));
}

void pin_step_account (pin_step_t *s, const struct pin_step_account_in *in)
{
    char job_rel[PATH_MAX], fb[96] = "", *cpus = NULL, *mems = NULL;
    struct confine_event ev;
    unsigned mask = 0;
    struct stepacct_info info = {
        .cg = s ? s->cg : NULL,
        .mode = cg2_mode_name (s ? s->mode : CG2_MODE_NONE),
        .policy = in->policy,
        .fallback = fb,
        .has_seed = in->has_seed,
        .seed = in->seed,
        .alloc_cpus = in->alloc_cpus,
        .ident = in->ident,
    };

    if (!s || !s->acct)
        return;
    info.rel = pin_step_acct_rel (s, job_rel, sizeof (job_rel));
    info.job_rel = s->step == SLURM_EXTERN_CONT ? job_rel : NULL;
    pin_step_record (s, &cpus, &mems, &mask);
    if (mask)
        place_fallback_string (mask, fb, sizeof (fb));
    info.cpus = cpus;
    info.mems = mems;
    pin_step_confine_event (s, &ev);
    if (ev.confined) {
        info.confined_us = ev.confined_us;
        info.confine_use = ev.use;
        info.confine_cpus = ev.cpus;
        info.confine_mems = ev.mems;
    }
    stepacct_end (s->acct, &info);
    free (cpus);
    free (mems);
}

/* ---- the job's end (extern step) ----------------------------------------- */

struct cleanup {
    const struct steplog *log;
    uint32_t job;
    cg2_t *cg;
};

static void claim_removed (uint32_t step, void *arg)
{
    struct cleanup *c = arg;

    steplog (c->log, STEPLOG_INFO, "pin: job %u: removed the claim of step "
             "%u", c->job, step);
}

/* For each cgroup below the job's directory that still holds processes
 * (cgroup.procs lists its own members only): one line naming it and them. */
static enum cg2_busy_verdict log_left (const char *path, const char *sub,
                                       const char *name, void *arg)
{
    struct cleanup *w = arg;
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
        steplog (w->log, STEPLOG_ERROR, "pin: job %u: cgroup %s/%s still "
                 "holds %d process%s (pid%s %s) after the job ended: %s "
                 "escaped Slurm's process tracking (ProctrackType); the "
                 "directory stays until %s, see doc/cgroup.md", w->job,
                 cg2_root (w->cg), path, n, n == 1 ? "" : "es",
                 n == 1 ? "" : "s", pids, n == 1 ? "it" : "they",
                 n == 1 ? "it exits" : "they exit");
    }
    return CG2_BUSY_DESCEND;
}

/* The extern step (PrologFlags=Contain) ends with the job: remove what
 * its steps left of our tree (a killed slurmstepd, or processes that
 * escaped Slurm's process tracking).  The step directories are removed
 * with EBUSY retries and without the node lock; only the job directory
 * itself is removed under the lock, once, when it is empty (as in
 * remove_tree()).  doc/cgroup.md, "When a job ends", says why. */
void pin_step_job_cleanup (const struct pin_conf *conf, uint32_t job,
                           const struct steplog *log)
{
    struct cleanup c = { .log = log, .job = job };
    pin_error_t err = { "" };
    char job_rel[PATH_MAX], lock_path[PATH_MAX], path[PATH_MAX];
    char claims[PATH_MAX];
    bool children = true;
    int fd;

    if (fmt_path (job_rel, sizeof (job_rel), "%s/job_%u",
                  conf->cgroup_base, job) < 0
        || fmt_path (lock_path, sizeof (lock_path), "%s/lock",
                     conf->state_dir) < 0)
        return;
    /* the claims ("job_<id>.step_<step>" in StateDir/claims) that steps
     * of this job left behind (a killed slurmstepd) */
    if (fmt_path (claims, sizeof (claims), "%s/claims", conf->state_dir) == 0
        && claims_remove_job (claims, job, claim_removed, &c, &err) < 0)
        steplog (log, STEPLOG_ERROR, "pin: job %u: %s", job, err.text);
    if (!(c.cg = cg2_open (conf->cgroup_root, NULL)))
        return;
    if (fmt_path (path, sizeof (path), "%s/%s", cg2_root (c.cg), job_rel) < 0
        || access (path, F_OK) < 0)
        goto out;
    if (cg2_has_children (c.cg, job_rel, &children, &err) == 0 && children) {
        if (cg2_remove_below (c.cg, job_rel, RMDIR_TIMEOUT_MS, &err) < 0) {
            hwloc_bitmap_t unused = hwloc_bitmap_alloc ();

            steplog (log, STEPLOG_ERROR, "pin: job %u: cannot remove "
                     "leftovers in %s: %s", job, job_rel, err.text);
            if (unused)
                (void)cg2_busy_cpus_filter (c.cg, job_rel, log_left, &c,
                                            unused, NULL);
            hwloc_bitmap_free (unused);
            goto out;
        }
        steplog (log, STEPLOG_INFO, "pin: job %u: removed leftovers of "
                 "crashed steps: %s", job, path);
    }
    if ((fd = pin_lock_acquire (lock_path, LOCK_TIMEOUT_MS, &err)) < 0) {
        steplog (log, STEPLOG_ERROR, "pin: job %u: %s", job, err.text);
        goto out;
    }
    if (cg2_has_children (c.cg, job_rel, &children, &err) < 0)
        steplog (log, STEPLOG_ERROR, "pin: job %u: %s", job, err.text);
    else if (!children && cg2_remove_tree (c.cg, job_rel, 0, &err) < 0)
        steplog (log, STEPLOG_ERROR, "pin: job %u: cannot remove cgroup %s: "
                 "%s", job, job_rel, err.text);
    pin_lock_release (fd);
out:
    cg2_close (c.cg);
}
