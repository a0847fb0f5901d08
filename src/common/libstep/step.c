/* step.c - the life of one step on one node (step.h) */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <slurm/slurm.h> /* SLURM_EXTERN_CONT, a constant only */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "libaffinity/affinity.h"
#include "libcgroup2/stepcg.h"
#include "libclaims/claims.h"
#include "libprof/record.h"
#include "libtopo/topo.h"
#include "libutil/mkdirp.h"
#include "libutil/safefile.h"
#include "profclient.h"
#include "step_private.h"

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
    s->acct = stepacct_begin (s->conf, s->job, s->step, s->stepname, &s->log);
    return s;
}

int pin_step_set_tasks (pin_step_t *s,
                        const struct pin_step_tasks *t,
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
    s->status = mmap (NULL,
                      s->status_size,
                      PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS,
                      -1,
                      0);
    if (s->status == MAP_FAILED) {
        s->status = NULL;
        return errprintf (errp,
                          "cannot map the task status page: %s",
                          strerror (errno));
    }
    return 0;
}

int pin_step_load_topology (pin_step_t *s, bool *refreshed, pin_error_t *errp)
{
    pin_error_t err = {""};
    bool r = false;

    if (s->conf->test_topology[0])
        s->topo = topo_load (s->conf->test_topology, TOPO_WHOLE_SYSTEM, &err);
    else
        s->topo = topo_load_cached (s->conf->topology_cache, &r, &err);
    if (!s->topo)
        return errprintf (errp, "cannot load the topology: %s", err.text);
    if (refreshed)
        *refreshed = r;
    return 0;
}

/* The PUs of Slurm's core list on this node, within what this process
 * may use itself. */
static int alloc_cpus (pin_step_t *s,
                       const char *what,
                       const char *cores,
                       hwloc_bitmap_t cpus,
                       pin_error_t *errp)
{
    hwloc_bitmap_t mine = hwloc_bitmap_alloc ();
    pin_error_t err = {""};
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
        errprintf (errp,
                   "%s cores %s map to no usable CPU on this node",
                   what,
                   cores);
        goto out;
    }
    rc = 0;
out:
    hwloc_bitmap_free (mine);
    return rc;
}

int pin_step_set_alloc (pin_step_t *s,
                        const char *job_cores,
                        const char *step_cores,
                        pin_error_t *errp)
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
        snprintf (s->warning,
                  sizeof (s->warning),
                  "out of memory: CPUs "
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
        snprintf (s->warning,
                  sizeof (s->warning),
                  "%.300s: CPUs bound with "
                  "sched_setaffinity only, not accounted",
                  res->why);
    else if (!s->cpuset)
        snprintf (s->warning,
                  sizeof (s->warning),
                  "%.300s: CPUs bound with "
                  "sched_setaffinity only, memory not fenced",
                  res->why);
    free (self);
    free (res);
}

int pin_step_prepare_state (pin_step_t *s,
                            bool *first_warning,
                            pin_error_t *errp)
{
    const char *dir = s->conf->state_dir;
    pin_error_t err = {""};
    char marker[PATH_MAX];
    int fd;

    if (first_warning)
        *first_warning = false;
    if (mkdir_p (dir, 0755, 0700, &err) < 0)
        return errprintf (errp, "StateDir %s", err.text);
    /* claims/ and lock are checked where they are opened (libclaims) */
    if (safefile_check (dir, geteuid (), &err) < 0)
        return errprintf (errp, "StateDir %s", err.text);
    if (step_fmt_path (s->claims_dir, sizeof (s->claims_dir), "%s/claims", dir)
            < 0
        || step_fmt_path (s->lock_path, sizeof (s->lock_path), "%s/lock", dir)
               < 0
        || mkdir_p (s->claims_dir, 0700, 0700, &err) < 0)
        return errprintf (errp,
                          "cannot create %s: %s",
                          s->claims_dir,
                          err.text);
    /* The affinity-only fallback is logged once per node and boot: a
     * marker in StateDir (root's, checked above). */
    if (s->warning[0] && first_warning
        && snprintf (marker, sizeof (marker), "%s/warned-affinity-only", dir)
               < (int)sizeof (marker)
        && (fd = open (marker, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600))
               >= 0) {
        close (fd);
        *first_warning = true;
    }
    return 0;
}

/* The cgroup directory of the step's job (the parent of step_rel). */

/* What other running steps of this node hold: live claims and the task
 * cgroups of the job's tree; load[os] (os < nload): how many claims hold
 * PU os (every placed step claims its PUs; a PU only the cgroups name
 * counts as one holder, place.h). */
static int read_busy (pin_step_t *s,
                      hwloc_bitmap_t busy,
                      unsigned *load,
                      unsigned nload,
                      pin_error_t *errp)
{
    pin_error_t err = {""};
    char job_rel[PATH_MAX], stepdir[32];

    if (claims_load (s->claims_dir, s->job, s->step, busy, load, nload, &err)
        < 0)
        return errprintf (errp,
                          "cannot read the claims in %s: %s",
                          s->claims_dir,
                          err.text);
    if (s->mode == CG2_MODE_NONE || !s->cpuset)
        return 0;
    step_job_dir_of_step (s, job_rel, sizeof (job_rel));
    if (stepcg_busy (s->cg,
                     job_rel,
                     stepcg_step_dir (s->step, stepdir, sizeof (stepdir)),
                     busy,
                     &err)
        < 0)
        return errprintf (errp,
                          "cannot read the cgroups of other steps: "
                          "%s",
                          err.text);
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
static int fail_no_room (pin_error_t *errp,
                         const char *why,
                         hwloc_const_bitmap_t busy,
                         const char *refused)
{
    char *b = topo_list_format (busy);

    errprintf (errp,
               "%s; other running steps hold cpus %s%s%s%s",
               why,
               b && *b ? b : "none",
               refused ? "; refused by " : "",
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
                 ? hwloc_bitmap_weight (avail)
                 : na;

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
static void log_overflow (pin_step_t *s,
                          const struct place_plan *plan,
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
    steplog (&s->log,
             STEPLOG_INFO,
             "pin: step %s: %u task%s x %u CPU%s do "
             "not fit in cpus %s minus busy %s: placed %s (%u of %u tasks; "
             "pin.conf Oversubscribe=, ShareWithSteps=)",
             s->stepname,
             plan->ntasks,
             plan->ntasks == 1 ? "" : "s",
             plan->cpus_per_task,
             plan->cpus_per_task == 1 ? "" : "s",
             a ? a : "?",
             b && *b ? b : "none",
             place_fallback_string (mask, names, sizeof (names)),
             ntasks,
             plan->ntasks);
    free (a);
    free (b);
}

/* Under the node lock: busy PUs, the plan, the claim, our step cgroup
 * (see pin_step_plan). */
static int plan_locked (pin_step_t *s,
                        enum pin_step_plan_for why,
                        hwloc_bitmap_t out_cpus,
                        hwloc_bitmap_t out_mems,
                        pin_error_t *errp)
{
    bool start = why == PIN_STEP_PLAN_START;
    int policy = start ? s->policy : PLACE_NUMA_LOCAL;
    /* at start the step's own PUs are moved; a confinement places in a
     * copy, the step keeps what it was given */
    hwloc_bitmap_t allowed =
        start ? s->allowed : hwloc_bitmap_dup (s->allowed);
    hwloc_bitmap_t busy = hwloc_bitmap_alloc ();
    hwloc_bitmap_t all = hwloc_bitmap_alloc ();
    hwloc_bitmap_t mems = hwloc_bitmap_alloc ();
    unsigned nload = 0, *load = s->topo ? load_alloc (s, &nload) : NULL;
    struct place_plan *plan = NULL;
    pin_error_t err = {""};
    bool moved = false;
    int rc = -1;

    if (!busy || !all || !mems || (!start && !allowed) || (s->topo && !load)) {
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
            /* device locality at start (a confinement is numa-local of
             * the tasks' own PUs) */
            .nnear = start ? s->nnear : 0,
            .near = s->near,
            .near_fallback = s->near_fallback,
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
        if (start && s->nic_cpus)
            place_mark_near (plan, s->nic_cpus, PLACE_FB_NIC_REMOTE);
        if (start) {
            /* a policy its allocation confines says so (alloc-one-numa) */
            unsigned fb = place_alloc_confines (s->topo, req.policy, allowed);
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
            if (claims_add (s->claims_dir,
                            s->job,
                            s->step,
                            getpid (),
                            all,
                            &err)
                < 0) {
                errprintf (errp,
                           "cannot record the claim in %s: %s",
                           s->claims_dir,
                           err.text);
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
        if (cg2_create (s->cg,
                        s->step_rel,
                        s->cpuset ? CONTROLLERS : "+cpu",
                        &err)
            < 0) {
            errprintf (errp,
                       "cannot create cgroup %s/%s: %s",
                       cg2_root (s->cg),
                       s->step_rel,
                       err.text);
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

int pin_step_plan (pin_step_t *s,
                   enum pin_step_plan_for why,
                   hwloc_bitmap_t cpus,
                   hwloc_bitmap_t mems,
                   pin_error_t *errp)
{
    bool start = why == PIN_STEP_PLAN_START;
    pin_error_t err = {""};
    int fd, rc;

    if (!s || (!start && (!cpus || !mems || !s->allowed))
        || (start && s->plan)) {
        errno = EINVAL;
        return errprintf (errp, "pin_step_plan: invalid argument");
    }
    if ((fd = pin_lock_acquire (s->lock_path, LOCK_TIMEOUT_MS, &err)) < 0)
        return errprintf (errp,
                          "cannot take the lock %s: %s",
                          s->lock_path,
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

void pin_step_record (const pin_step_t *s,
                      char **cpus,
                      char **mems,
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

int pin_step_release (pin_step_t *s, pin_error_t *errp)
{
    pin_error_t err = {""};

    if (!s || !s->claimed)
        return 0;
    s->claimed = false;
    if (claims_remove (s->claims_dir, s->job, s->step, &err) < 0)
        return errprintf (errp, "%s", err.text);
    return 0;
}
