/* watch.c - the step's watcher and its clients, and the step's record
 * (step.h; stepwatch.h, confine.h, profclient.h, account.h) */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <limits.h>
#include <slurm/slurm.h> /* SLURM_EXTERN_CONT, a constant only */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libprof/record.h"
#include "step_private.h"

/* ---- the watcher ----------------------------------------------------------
 */

/* confine.h's plan: in the watcher thread, at the moment of confinement.
 * The main thread does not touch the claim until it has joined the
 * watcher (pin_step_watch_stop). */
static int confine_plan (void *arg,
                         hwloc_bitmap_t cpus,
                         hwloc_bitmap_t mems,
                         pin_error_t *errp)
{
    return pin_step_plan (arg, PIN_STEP_PLAN_CONFINE, cpus, mems, errp);
}

static bool dynamic_watched (const pin_step_t *s)
{
    return s->policy == PLACE_DYNAMIC && !s->batch;
}

bool pin_step_watch_wanted (const pin_step_t *s)
{
    return s && !s->sw && (dynamic_watched (s) || s->prof_rec);
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
                           : s->cpuset ? CONFINE_CPUSET
                                       : CONFINE_AFFINITY;
    char node[64] = "?", watch[PATH_MAX + 8], path[2 * PATH_MAX];
    pin_error_t err = {""};

    if (!s || s->sw)
        return;
    s->prof_rec = NULL; /* the watcher's from here on */
    if (dyn && (s->mode == CG2_MODE_NONE || !s->cg)) {
        steplog (&s->log,
                 STEPLOG_INFO,
                 "pin: step %s: policy dynamic needs "
                 "the step's cgroup v2 cpu.stat: not watched, runs as "
                 "policy none",
                 s->stepname);
        dyn = false;
    }
    if (!dyn && !prof)
        return;
    if (prof
        && !(s->prof = profclient_create (prof, s->stepname, &s->log, &err))) {
        steplog (&s->log,
                 STEPLOG_ERROR,
                 "pin: step %s: profile: %s; not "
                 "recorded",
                 s->stepname,
                 err.text);
        (void)prof_rec_finish (prof, -1, NULL);
        if (!dyn)
            return;
    }
    if (!dyn) {
        if (watch_start (s, &err) < 0)
            steplog (&s->log,
                     STEPLOG_ERROR,
                     "pin: step %s: profile: %s; "
                     "not recorded",
                     s->stepname,
                     err.text);
        return;
    }
    (void)gethostname (node, sizeof (node) - 1);
    /* Slurm's step cgroup: its tasks are below user/ (slurm/ holds
     * slurmstepd itself) */
    snprintf (watch, sizeof (watch), "%s", s->step_rel);
    if (s->mode == CG2_MODE_NESTED
        && step_fmt_path (path,
                          sizeof (path),
                          "%s/%s/user",
                          cg2_root (s->cg),
                          s->step_rel)
               == 0
        && access (path, F_OK) == 0)
        snprintf (watch, sizeof (watch), "%s/user", s->step_rel);
    struct confine_config cfg = {
        .stepname = s->stepname,
        .node = node,
        .cgroup_root = cg2_root (s->cg),
        .watch_rel = watch,
        .how = how,
        .params =
            {
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
        steplog (&s->log,
                 STEPLOG_ERROR,
                 "pin: step %s: policy dynamic: %s; "
                 "runs as policy none",
                 s->stepname,
                 err.text);
        profclient_destroy (s->prof);
        s->prof = NULL;
        confine_destroy (s->confine);
        s->confine = NULL;
        return;
    }
    for (unsigned i = 0; i < s->npids; i++)
        confine_add_task (s->confine, s->pids[i]);
    steplog (&s->log,
             STEPLOG_DEBUG,
             "pin: step %s: watching %s every %lld "
             "ms: confined (%s) after %lld ms above %g x %u CPUs",
             s->stepname,
             watch,
             s->conf->dynamic_interval_us / 1000,
             confine_how_name (how),
             s->conf->dynamic_grace_us / 1000,
             s->conf->dynamic_overuse,
             s->ntasks * s->cpus_per_task);
}

void pin_step_watch_stop (pin_step_t *s, int status)
{
    int64_t cpu_us = 0, wall_us = 0;
    struct confine_event ev = {0};

    if (!s || !stepwatch_running (s->sw))
        return;
    stepwatch_stop (s->sw, status, &cpu_us, &wall_us);
    if (s->confine)
        confine_get_event (s->confine, &ev);
    steplog (&s->log,
             STEPLOG_INFO,
             "pin: step %s: %s%s; watcher CPU time "
             "%lld us in %lld ms (%.4f%% of a CPU)",
             s->stepname,
             dynamic_watched (s) ? "policy dynamic: " : "profiled",
             !dynamic_watched (s) ? ""
             : ev.confined        ? "confined"
                                  : "never confined",
             (long long)cpu_us,
             (long long)(wall_us / 1000),
             wall_us > 0 ? 100.0 * (double)cpu_us / (double)wall_us : 0.0);
}

void pin_step_confine_event (const pin_step_t *s, struct confine_event *ev)
{
    memset (ev, 0, sizeof (*ev));
    if (s && s->confine)
        confine_get_event (s->confine, ev);
}

/* ---- accounting (account.h) ------------------------------------------------
 */

void pin_step_account_task (pin_step_t *s, pid_t pid)
{
    if (s)
        stepacct_task (s->acct, pid);
}

void pin_step_account_task_exit (pin_step_t *s, int status, bool last)
{
    if (s)
        stepacct_task_exit (s->acct,
                            status,
                            last,
                            s->cg,
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
        .gpus = s ? s->rec_gpus : "",
        .nic = s ? s->rec_nic : "",
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
