/* watch.c - the decision of dynamic confinement; rules in watch.h */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <math.h>
#include <string.h>

#include "watch.h"

int watch_params_check (const struct watch_params *p, pin_error_t *errp)
{
    errno = EINVAL;
    if (!p)
        return errprintf (errp, "watch: missing parameters");
    if (!(p->overuse > 1.0) || !isfinite (p->overuse) || p->overuse > 1000)
        return errprintf (errp,
                          "overuse %g: must be more than 1 (and at "
                          "most 1000), e.g. 1.2",
                          p->overuse);
    if (p->grace_us < 0)
        return errprintf (errp,
                          "grace %lld us: must be 0 or more",
                          (long long)p->grace_us);
    if (p->interval_us <= 0)
        return errprintf (errp,
                          "interval %lld us: must be more than 0",
                          (long long)p->interval_us);
    if (!(p->alloc_cpus > 0) || !isfinite (p->alloc_cpus))
        return errprintf (errp,
                          "allocated CPUs %g: must be more than 0",
                          p->alloc_cpus);
    errno = 0;
    return 0;
}

double watch_threshold (const struct watch_params *p)
{
    return p->overuse * p->alloc_cpus;
}

void watch_init (struct watch_state *w, const struct watch_params *p)
{
    memset (w, 0, sizeof (*w));
    w->p = *p;
}

static void end_run (struct watch_state *w)
{
    w->in_run = false;
    w->run_us = 0;
    w->run_usage = 0;
}

enum watch_verdict watch_feed (struct watch_state *w,
                               const struct watch_sample *s,
                               struct watch_report *rep)
{
    struct watch_report r = {0};
    int64_t dt, stall;
    uint64_t du;

    if (w->confined) {
        w->prev = *s;
        if (rep)
            *rep = r;
        return WATCH_CONFINED;
    }
    if (!w->have_prev) {
        w->have_prev = true;
        w->prev = *s;
        if (rep)
            *rep = r;
        return WATCH_KEEP;
    }
    dt = s->time_us - w->prev.time_us;
    stall = w->p.grace_us > 3 * w->p.interval_us ? w->p.grace_us
                                                 : 3 * w->p.interval_us;
    if (dt <= 0 || dt > stall || s->usage_usec < w->prev.usage_usec) {
        /* no evidence: new baseline, the run (if any) ends */
        end_run (w);
        w->prev = *s;
        r.rebased = true;
        if (rep)
            *rep = r;
        return WATCH_KEEP;
    }
    du = s->usage_usec - w->prev.usage_usec;
    w->prev = *s;
    r.valid = true;
    r.use = (double)du / (double)dt;
    r.over = r.use > watch_threshold (&w->p);
    if (!r.over)
        end_run (w);
    else if (!w->in_run)
        w->in_run = true; /* may be over in part only: not counted */
    else {
        w->run_us += dt;
        w->run_usage += du;
    }
    r.run_us = w->run_us;
    r.run_use =
        w->run_us > 0 ? (double)w->run_usage / (double)w->run_us : r.use;
    if (rep)
        *rep = r;
    /* WATCH_SLACK (watch.h): a run measured a few us short of grace,
     * because the wake-ups after fixed deadlines jitter, has reached it */
    if (r.over && w->run_us + w->p.interval_us / 20 >= w->p.grace_us) {
        w->confined = true;
        w->confine_use = r.run_use;
        w->confine_time_us = s->time_us;
        return WATCH_CONFINE;
    }
    return WATCH_KEEP;
}
