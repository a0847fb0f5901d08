/* apply.c - a step's plan applied to each task, as root (step.h) */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libaffinity/affinity.h"
#include "step_private.h"

/* Nested mode, a step moved onto other PUs of its job: Slurm confined the
 * step's cgroup to the cores it allocated (task/cgroup writes it after
 * the plugin's init_post_opt, so this runs in task_post_fork), so widen
 * it (parent first) to also hold the planned PUs, all of them inside the
 * job's cgroup. */
static int widen_slurm_cpuset (pin_step_t *s,
                               hwloc_const_bitmap_t cpus,
                               pin_error_t *errp)
{
    const char *levels[] = {"", "/user"};
    pin_error_t err = {""};

    for (int i = 0; i < 2; i++) {
        char rel[PATH_MAX + 8], *cur, *want = NULL;
        hwloc_bitmap_t set = hwloc_bitmap_alloc ();
        int rc = -1;

        if (!set
            || step_fmt_path (rel,
                              sizeof (rel),
                              "%s%s",
                              s->step_rel,
                              levels[i])
                   < 0) {
            hwloc_bitmap_free (set);
            return errprintf (errp,
                              "cannot widen the step cgroup: %s",
                              strerror (errno));
        }
        if (!(cur = cg2_read (s->cg, rel, "cpuset.cpus", &err))) {
            hwloc_bitmap_free (set);
            return errprintf (errp, "%s", err.text);
        }
        if (!*cur
            || (topo_list_parse (cur, set, NULL) == 0
                && hwloc_bitmap_isincluded (cpus, set)))
            rc = 0; /* inherits, or holds them already */
        else {
            hwloc_bitmap_or (set, set, cpus);
            if (!(want = topo_list_format (set)))
                errprintf (errp, "out of memory");
            else if (cg2_write (s->cg, rel, "cpuset.cpus", want, &err) < 0)
                errprintf (errp,
                           "cannot widen %s to cpus %s for an "
                           "overlapping step: %s",
                           rel,
                           want,
                           err.text);
            else {
                steplog (&s->log,
                         STEPLOG_DEBUG,
                         "pin: step %s: %s "
                         "cpuset.cpus %s -> %s",
                         s->stepname,
                         rel,
                         cur,
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
    pin_error_t err = {""};
    char task_rel[PATH_MAX + 32];

    if (s->mode == CG2_MODE_STANDALONE) {
        if (step_fmt_path (task_rel,
                           sizeof (task_rel),
                           "%s/task_%d",
                           s->step_rel,
                           id)
                < 0
            || cg2_create (s->cg,
                           task_rel,
                           s->cpuset ? CONTROLLERS : "+cpu",
                           &err)
                   < 0)
            return errprintf (errp,
                              "cannot create cgroup %s: %s",
                              task_rel,
                              err.text);
        if (t && s->cpuset
            && cg2_set_cpuset (s->cg, task_rel, t->cpus, t->mems, &err) < 0)
            return errprintf (errp, "%s", err.text);
        if (cg2_attach (s->cg, task_rel, pid, &err) < 0)
            return errprintf (errp,
                              "cannot move pid %d into cgroup %s: %s",
                              (int)pid,
                              task_rel,
                              err.text);
    } else if (s->mode == CG2_MODE_NESTED && t && s->cpuset) {
        char *now, *procs;
        bool here;

        if (step_fmt_path (task_rel,
                           sizeof (task_rel),
                           "%s/user/task_%d",
                           s->step_rel,
                           id)
            < 0)
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
        here = now
               && strcmp (now[0] == '/' ? now + 1 : now,
                          task_rel[0] == '/' ? task_rel + 1 : task_rel)
                      == 0;
        free (now);
        if (!here
            && !(procs = cg2_read (s->cg, task_rel, "cgroup.procs", NULL))) {
            if (cg2_create (s->cg, task_rel, NULL, &err) < 0)
                return errprintf (errp,
                                  "cannot create cgroup %s: %s",
                                  task_rel,
                                  err.text);
            if (s->task_dir_created)
                s->task_dir_created[id] = true;
        } else if (!here)
            free (procs);
        if (cg2_set_cpuset (s->cg, task_rel, t->cpus, t->mems, &err) < 0)
            return errprintf (errp, "%s", err.text);
        if (!here && cg2_attach (s->cg, task_rel, pid, &err) < 0)
            return errprintf (errp,
                              "cannot move pid %d into cgroup %s: %s",
                              (int)pid,
                              task_rel,
                              err.text);
    }
    /* After the cgroup move: older kernels reset affinity on a move. */
    if (t && affinity_set (pid, t->cpus, &err) < 0)
        return errprintf (errp, "%s", err.text);
    return 0;
}

int pin_step_apply_task (pin_step_t *s, int id, pid_t pid, pin_error_t *errp)
{
    pin_error_t err = {""};

    if (!s || id < 0 || (uint32_t)id >= s->ntasks || pid <= 0) {
        errno = EINVAL;
        return errprintf (errp,
                          "task id %d / pid %d out of range",
                          id,
                          (int)pid);
    }
    if (apply_task (s, id, pid, &err) < 0) {
        snprintf (s->status[id].msg,
                  sizeof (s->status[id].msg),
                  "%s",
                  err.text);
        s->status[id].state = PIN_STEP_TASK_FAILED;
        return errprintf (errp, "%s", err.text);
    }
    s->status[id].state = PIN_STEP_TASK_APPLIED;
    return 0;
}

enum pin_step_task_state pin_step_task_status (const pin_step_t *s,
                                               int id,
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
