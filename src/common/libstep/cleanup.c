/* cleanup.c - what a step leaves: its cgroups at its end, and what the
 * job's steps left at the job's end (step.h) */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "libclaims/claims.h"
#include "libplace/place.h"
#include "libprof/record.h"
#include "libtopo/topo.h"
#include "profclient.h"
#include "step_private.h"

/* ---- the end ------------------------------------------------------------ */

void step_remove_tree (pin_step_t *s)
{
    pin_error_t err = {""};
    bool children = true;
    char task_rel[PATH_MAX + 32];
    int fd;

    if (s->mode == CG2_MODE_NESTED && s->task_dir_created) {
        for (uint32_t i = 0; i < s->ntasks; i++) {
            if (!s->task_dir_created[i])
                continue;
            snprintf (task_rel,
                      sizeof (task_rel),
                      "%s/user/task_%u",
                      s->step_rel,
                      i);
            if (cg2_remove_tree (s->cg, task_rel, RMDIR_TIMEOUT_MS, &err) < 0)
                steplog (&s->log,
                         STEPLOG_ERROR,
                         "pin: step %s: %s",
                         s->stepname,
                         err.text);
        }
    }
    if (!s->tree_created)
        return;
    if (cg2_remove_tree (s->cg, s->step_rel, RMDIR_TIMEOUT_MS, &err) < 0)
        steplog (&s->log,
                 STEPLOG_ERROR,
                 "pin: step %s: cannot remove cgroup "
                 "%s: %s",
                 s->stepname,
                 s->step_rel,
                 err.text);
    /* The job directory goes with the job's last step.  Steps create their
     * directory under the lock, so an empty job directory seen under the
     * lock belongs to no step.  One rmdir, no EBUSY retries: nothing may
     * sleep under the node lock (every starting step waits for it). */
    if ((fd = pin_lock_acquire (s->lock_path, LOCK_TIMEOUT_MS, &err)) < 0) {
        steplog (&s->log,
                 STEPLOG_ERROR,
                 "pin: step %s: %s",
                 s->stepname,
                 err.text);
        return;
    }
    if (cg2_has_children (s->cg, s->job_rel, &children, &err) < 0)
        steplog (&s->log,
                 STEPLOG_ERROR,
                 "pin: step %s: %s",
                 s->stepname,
                 err.text);
    else if (!children && cg2_remove_tree (s->cg, s->job_rel, 0, &err) < 0)
        steplog (&s->log,
                 STEPLOG_ERROR,
                 "pin: step %s: cannot remove cgroup "
                 "%s: %s",
                 s->stepname,
                 s->job_rel,
                 err.text);
    pin_lock_release (fd);
}

/* ---- the job's end (extern step) -----------------------------------------
 */

struct cleanup {
    const struct steplog *log;
    uint32_t job;
    cg2_t *cg;
};

static void claim_removed (uint32_t step, void *arg)
{
    struct cleanup *c = arg;

    steplog (c->log,
             STEPLOG_INFO,
             "pin: job %u: removed the claim of step "
             "%u",
             c->job,
             step);
}

/* For each cgroup below the job's directory that still holds processes
 * (cgroup.procs lists its own members only): one line naming it and them. */
static enum cg2_busy_verdict log_left (const char *path,
                                       const char *sub,
                                       const char *name,
                                       void *arg)
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
            len += (size_t)snprintf (pids + len,
                                     sizeof (pids) - len,
                                     "%s%s",
                                     n ? " " : "",
                                     p);
        else {
            snprintf (pids + len, sizeof (pids) - len, " ...");
            len = SIZE_MAX;
        }
    }
    free (procs);
    if (n > 0) {
        steplog (w->log,
                 STEPLOG_ERROR,
                 "pin: job %u: cgroup %s/%s still "
                 "holds %d process%s (pid%s %s) after the job ended: %s "
                 "escaped Slurm's process tracking (ProctrackType); the "
                 "directory stays until %s, see doc/cgroup.md",
                 w->job,
                 cg2_root (w->cg),
                 path,
                 n,
                 n == 1 ? "" : "es",
                 n == 1 ? "" : "s",
                 pids,
                 n == 1 ? "it" : "they",
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
void pin_step_job_cleanup (const struct pin_conf *conf,
                           uint32_t job,
                           const struct steplog *log)
{
    struct cleanup c = {.log = log, .job = job};
    pin_error_t err = {""};
    char job_rel[PATH_MAX], lock_path[PATH_MAX], path[PATH_MAX];
    char claims[PATH_MAX];
    bool children = true;
    int fd;

    if (step_fmt_path (job_rel,
                       sizeof (job_rel),
                       "%s/job_%u",
                       conf->cgroup_base,
                       job)
            < 0
        || step_fmt_path (lock_path,
                          sizeof (lock_path),
                          "%s/lock",
                          conf->state_dir)
               < 0)
        return;
    /* the claims ("job_<id>.step_<step>" in StateDir/claims) that steps
     * of this job left behind (a killed slurmstepd) */
    if (step_fmt_path (claims, sizeof (claims), "%s/claims", conf->state_dir)
            == 0
        && claims_remove_job (claims, job, claim_removed, &c, &err) < 0)
        steplog (log, STEPLOG_ERROR, "pin: job %u: %s", job, err.text);
    if (!(c.cg = cg2_open (conf->cgroup_root, NULL)))
        return;
    if (step_fmt_path (path, sizeof (path), "%s/%s", cg2_root (c.cg), job_rel)
            < 0
        || access (path, F_OK) < 0)
        goto out;
    if (cg2_has_children (c.cg, job_rel, &children, &err) == 0 && children) {
        if (cg2_remove_below (c.cg, job_rel, RMDIR_TIMEOUT_MS, &err) < 0) {
            hwloc_bitmap_t unused = hwloc_bitmap_alloc ();

            steplog (log,
                     STEPLOG_ERROR,
                     "pin: job %u: cannot remove "
                     "leftovers in %s: %s",
                     job,
                     job_rel,
                     err.text);
            if (unused)
                (void)cg2_busy_cpus_filter (c.cg,
                                            job_rel,
                                            log_left,
                                            &c,
                                            unused,
                                            NULL);
            hwloc_bitmap_free (unused);
            goto out;
        }
        steplog (log,
                 STEPLOG_INFO,
                 "pin: job %u: removed leftovers of "
                 "crashed steps: %s",
                 job,
                 path);
    }
    if ((fd = pin_lock_acquire (lock_path, LOCK_TIMEOUT_MS, &err)) < 0) {
        steplog (log, STEPLOG_ERROR, "pin: job %u: %s", job, err.text);
        goto out;
    }
    if (cg2_has_children (c.cg, job_rel, &children, &err) < 0)
        steplog (log, STEPLOG_ERROR, "pin: job %u: %s", job, err.text);
    else if (!children && cg2_remove_tree (c.cg, job_rel, 0, &err) < 0)
        steplog (log,
                 STEPLOG_ERROR,
                 "pin: job %u: cannot remove cgroup %s: "
                 "%s",
                 job,
                 job_rel,
                 err.text);
    pin_lock_release (fd);
out:
    cg2_close (c.cg);
}

/* The end of the step handle (step.h): here, beside the cgroup tree's
 * removal, so that step.c and the watcher never call each other. */
void pin_step_destroy (pin_step_t *s)
{
    int saved = errno;
    pin_error_t err = {""};

    if (!s)
        return;
    pin_step_watch_stop (s, -1);
    if (s->prof_rec)
        (void)prof_rec_finish (s->prof_rec, -1, NULL);
    stepwatch_destroy (s->sw);
    profclient_destroy (s->prof);
    confine_destroy (s->confine);
    if (pin_step_release (s, &err) < 0)
        steplog (&s->log,
                 STEPLOG_ERROR,
                 "pin: step %s: cannot remove the "
                 "claim: %s",
                 s->stepname,
                 err.text);
    if (s->cg)
        step_remove_tree (s);
    place_plan_destroy (s->plan);
    hwloc_bitmap_free (s->allowed);
    hwloc_bitmap_free (s->job_cpus);
    hwloc_bitmap_free (s->plan_cpus);
    for (unsigned i = 0; i < PLACE_MAX_NEAR; i++)
        hwloc_bitmap_free (s->near_own[i]);
    topo_destroy (s->topo);
    cg2_close (s->cg);
    free (s->task_dir_created);
    stepacct_destroy (s->acct);
    if (s->status)
        munmap (s->status, s->status_size);
    free (s);
    errno = saved;
}
