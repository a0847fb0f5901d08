/* watch.h - the decision of dynamic confinement (policy "dynamic")
 *
 * Pure: samples of a step's CPU counter in, a verdict out.  No clock, no
 * file I/O, no logging; the caller (the SPANK plugin's watcher thread)
 * reads cpu.stat's usage_usec and CLOCK_MONOTONIC every interval and feeds
 * them here.  The rules (doc/policies.md, "dynamic"):
 *
 *  - the use of an interval is  delta(usage_usec) / delta(time)  in CPUs;
 *  - an interval is "over" when its use exceeds overuse x alloc_cpus;
 *  - the first over interval of a run of over intervals only starts the
 *    run (it may hold the over-use only in part); each further over
 *    interval adds its length to the run; a run that reaches `grace`
 *    confines (WATCH_CONFINE), an interval that is not over ends the run
 *    (forgiven).  "Reaches" allows 1/20 of an interval (WATCH_SLACK):
 *    the samples are taken at fixed deadlines but read the clock after
 *    waking, so n intervals can measure a few microseconds short of n x
 *    interval, which would otherwise cost a whole extra interval about
 *    every other time.  So a steady over-use that starts at t0 is
 *    confined by t0 + grace + 2 intervals (grace a multiple of the
 *    interval), and a spike shorter than grace - 1.05 intervals is always
 *    forgiven;
 *  - a sample whose counter went backwards (the cgroup was re-created),
 *    whose time did not advance, or that comes more than
 *    max(grace, 3 intervals) after the previous one (the watcher was
 *    stopped, the clock jumped) proves nothing: it becomes the new
 *    baseline and ends the run.
 * Once WATCH_CONFINE has been returned the state stays confined: later
 * samples return WATCH_CONFINED.
 */
#ifndef PIN_WATCH_H
#define PIN_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "libutil/errprintf.h"

#define WATCH_DEFAULT_OVERUSE 1.2
#define WATCH_DEFAULT_GRACE_US (60 * 1000000LL)
#define WATCH_DEFAULT_INTERVAL_US (5 * 1000000LL)

struct watch_params {
    double overuse;      /* > 1.0 (pin.conf DynamicOveruse) */
    int64_t grace_us;    /* >= 0 (DynamicGrace) */
    int64_t interval_us; /* > 0 (DynamicInterval): the expected
                            spacing of samples */
    double alloc_cpus;   /* > 0: CPUs allocated to the step here */
};

/* Check params; -1 with errno EINVAL and errp naming the bad value. */
int watch_params_check (const struct watch_params *p, pin_error_t *errp);

enum watch_verdict {
    WATCH_KEEP = 0, /* keep watching */
    WATCH_CONFINE,  /* confine now (returned once) */
    WATCH_CONFINED, /* confined earlier: nothing more to decide */
};

struct watch_sample {
    int64_t time_us;     /* CLOCK_MONOTONIC, microseconds */
    uint64_t usage_usec; /* cpu.stat usage_usec */
};

/* What the last sample showed; filled by watch_feed(). */
struct watch_report {
    bool valid;     /* the sample gave a use (not a baseline) */
    double use;     /* CPUs used in the last interval */
    bool over;      /* use > overuse x alloc_cpus */
    int64_t run_us; /* over-use counted so far in this run */
    double run_use; /* mean use over the counted run */
    bool rebased;   /* counter reset, clock jump or stall */
};

struct watch_state {
    struct watch_params p;
    bool have_prev;
    struct watch_sample prev;
    bool in_run;        /* a run of over intervals has started */
    int64_t run_us;     /* time counted (first interval excluded) */
    uint64_t run_usage; /* usage counted over run_us */
    bool confined;
    double confine_use;      /* run_use when WATCH_CONFINE was returned */
    int64_t confine_time_us; /* time_us of that sample */
};

/* Start watching; params must have passed watch_params_check(). */
void watch_init (struct watch_state *w, const struct watch_params *p);

/* Feed one sample; `rep` (may be NULL) says what it showed. */
enum watch_verdict watch_feed (struct watch_state *w,
                               const struct watch_sample *s,
                               struct watch_report *rep);

/* The threshold in CPUs: overuse x alloc_cpus. */
double watch_threshold (const struct watch_params *p);

#endif /* !PIN_WATCH_H */
