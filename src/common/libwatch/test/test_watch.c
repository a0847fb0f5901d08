/* test/test_watch.c - the dynamic confinement decision on synthetic samples */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#include "libtest/tap.h"
#include "libwatch/watch.h"

#define S 1000000LL /* one second in us */

/* A CPU use profile: `use` CPUs until `until_us` (from the start), then
 * the next segment; the last one lasts forever. */
struct seg {
    int64_t until_us;
    double use;
};

/* The usage counter at time t of a profile (its integral). */
static uint64_t usage_at (const struct seg *segs, int n, int64_t t)
{
    double sum = 0;
    int64_t from = 0;

    for (int i = 0; i < n && from < t; i++) {
        int64_t to = i == n - 1 || segs[i].until_us > t ? t : segs[i].until_us;
        sum += segs[i].use * (double)(to - from);
        from = to;
    }
    return (uint64_t)sum;
}

/* Feed samples every interval (starting at `phase`) for `dur`; returns the
 * time of WATCH_CONFINE, or -1. */
static int64_t simulate (const struct watch_params *p,
                         const struct seg *segs,
                         int n,
                         int64_t phase,
                         int64_t dur,
                         struct watch_state *w)
{
    watch_init (w, p);
    for (int64_t t = phase; t <= dur; t += p->interval_us) {
        struct watch_sample s = {.time_us = t,
                                 .usage_usec = usage_at (segs, n, t)};
        enum watch_verdict v = watch_feed (w, &s, NULL);
        if (v == WATCH_CONFINE)
            return t;
        ck_assert_int_eq (v, WATCH_KEEP);
    }
    return -1;
}

/* ---- table: profiles and what must happen ------------------------------ */

static const struct {
    const char *name;
    double alloc, overuse;
    int64_t grace, interval;
    struct seg segs[4];
    int nsegs;
    int64_t overuse_from; /* -1: must never be confined */
} cases[] = {
    {"steady 1.1x of 2 CPUs", 2, 1.2, 30 * S, 5 * S, {{0, 2.2}}, 1, -1},
    {"exactly at the threshold", 2, 1.2, 30 * S, 5 * S, {{0, 2.4}}, 1, -1},
    {"idle", 4, 1.2, 10 * S, 1 * S, {{0, 0}}, 1, -1},
    {"spike of grace - interval, 3x",
     2,
     1.2,
     30 * S,
     5 * S,
     {{60 * S, 1.0}, {85 * S, 6.0}, {0, 1.0}},
     3,
     -1},
    {"spike of half the grace, 8x",
     1,
     1.2,
     20 * S,
     2 * S,
     {{10 * S, 1.0}, {20 * S, 8.0}, {0, 0.5}},
     3,
     -1},
    {"two spikes with a gap",
     2,
     1.2,
     30 * S,
     5 * S,
     {{20 * S, 6.0}, {40 * S, 1.0}, {60 * S, 6.0}, {0, 1.0}},
     4,
     -1},
    {"sustained 3x from the start", 2, 1.2, 30 * S, 5 * S, {{0, 6.0}}, 1, 0},
    {"sustained 1.3x after 100 s",
     2,
     1.2,
     30 * S,
     5 * S,
     {{100 * S, 2.0}, {0, 2.6}},
     2,
     100 * S},
    {"sustained, grace 0",
     1,
     1.2,
     0,
     1 * S,
     {{7 * S + S / 3, 0.5}, {0, 4.0}},
     2,
     7 * S + S / 3},
    {"sustained, short grace (tests' pin.conf)",
     1,
     1.5,
     4 * S,
     S,
     {{3 * S, 1.0}, {0, 3.0}},
     2,
     3 * S},
};

START_TEST (test_profiles)
{
    struct watch_params p = {
        .alloc_cpus = cases[_i].alloc,
        .overuse = cases[_i].overuse,
        .grace_us = cases[_i].grace,
        .interval_us = cases[_i].interval,
    };
    pin_error_t e = {""};
    struct watch_state w;

    ck_assert_msg (watch_params_check (&p, &e) == 0, "%s", e.text);
    /* every alignment of the samples against the profile */
    for (int k = 0; k < 10; k++) {
        int64_t phase = p.interval_us * k / 10;
        int64_t t =
            simulate (&p, cases[_i].segs, cases[_i].nsegs, phase, 600 * S, &w);
        if (cases[_i].overuse_from < 0) {
            ck_assert_msg (t < 0,
                           "%s (phase %lld): confined at %lld us",
                           cases[_i].name,
                           (long long)phase,
                           (long long)t);
            continue;
        }
        int64_t delay = t - cases[_i].overuse_from;
        ck_assert_msg (t >= 0,
                       "%s (phase %lld): never confined",
                       cases[_i].name,
                       (long long)phase);
        /* never before grace, always within grace + 2 intervals */
        ck_assert_msg (delay >= p.grace_us
                           && delay <= p.grace_us + 2 * p.interval_us,
                       "%s (phase %lld): confined %lld us after the "
                       "over-use started; grace %lld, interval %lld",
                       cases[_i].name,
                       (long long)phase,
                       (long long)delay,
                       (long long)p.grace_us,
                       (long long)p.interval_us);
        ck_assert (w.confined);
        ck_assert_int_eq (w.confine_time_us, t);
        /* the use reported is the over-use level */
        double level = cases[_i].segs[cases[_i].nsegs - 1].use;
        if (p.grace_us > 0)
            ck_assert_msg (fabs (w.confine_use - level) < 0.01,
                           "%s: use %g, expected %g",
                           cases[_i].name,
                           w.confine_use,
                           level);
        else
            ck_assert (w.confine_use > watch_threshold (&p));
        /* afterwards: confined, nothing more to decide */
        struct watch_sample s = {t + p.interval_us,
                                 usage_at (cases[_i].segs,
                                           cases[_i].nsegs,
                                           t + p.interval_us)};
        ck_assert_int_eq (watch_feed (&w, &s, NULL), WATCH_CONFINED);
    }
}
END_TEST

/* 1.1x with +-0.08 CPU of noise per interval and jittered sample times:
 * never confined over 10000 intervals. */
START_TEST (test_steady_noise)
{
    struct watch_params p = {1.2, 30 * S, 5 * S, 4};
    struct watch_state w;
    uint64_t usage = 0, x = 88172645463325252ULL;
    int64_t t = 0;

    watch_init (&w, &p);
    for (int i = 0; i < 10000; i++) {
        struct watch_report r;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        int64_t dt = p.interval_us + (int64_t)(x % 200000) - 100000;
        double use = 4.4 + ((double)(x >> 40 & 0xffff) / 65535.0 - 0.5) * 0.16;
        t += dt;
        usage += (uint64_t)(use * (double)dt);
        struct watch_sample s = {t, usage};
        ck_assert_int_eq (watch_feed (&w, &s, &r), WATCH_KEEP);
        if (i > 0) {
            ck_assert (r.valid);
            ck_assert (!r.over);
            ck_assert (fabs (r.use - use) < 1e-3);
        }
    }
}
END_TEST

/* A sequence of raw samples and the verdicts and reports expected. */
struct step {
    int64_t t;      /* seconds */
    uint64_t usage; /* seconds of CPU */
    enum watch_verdict v;
    int rebased;
    int64_t run; /* run_us expected, seconds */
};

static void run_steps (const struct watch_params *p,
                       const struct step *st,
                       int n)
{
    struct watch_state w;

    watch_init (&w, p);
    for (int i = 0; i < n; i++) {
        struct watch_sample s = {st[i].t * S, st[i].usage * (uint64_t)S};
        struct watch_report r;
        enum watch_verdict v = watch_feed (&w, &s, &r);
        ck_assert_msg (v == st[i].v,
                       "sample %d: verdict %d, expected %d",
                       i,
                       (int)v,
                       (int)st[i].v);
        if (v == WATCH_CONFINED)
            continue;
        ck_assert_msg (r.rebased == !!st[i].rebased,
                       "sample %d: rebased %d",
                       i,
                       (int)r.rebased);
        ck_assert_msg (r.run_us == st[i].run * S,
                       "sample %d: run %lld us, expected %lld s",
                       i,
                       (long long)r.run_us,
                       (long long)st[i].run);
    }
}

/* Samples taken at fixed deadlines but timed on waking: four intervals of
 * 1 s measured 3 us short of 4 s still reach a grace of 4 s (WATCH_SLACK),
 * while a run one whole interval short does not. */
START_TEST (test_wakeup_jitter)
{
    struct watch_params p = {1.2, 4 * S, 1 * S, 1};
    /* wake-up latency of each sample, us: the last one wakes sooner */
    const int64_t lat[] = {0, 20, 20, 20, 20, 17};
    struct watch_state w;
    enum watch_verdict v = WATCH_KEEP;

    watch_init (&w, &p);
    for (int i = 0; i < 6; i++) {
        /* 2 CPUs busy from t = 0 */
        struct watch_sample smp = {i * S + lat[i],
                                   (uint64_t)(2 * (i * S + lat[i]))};
        v = watch_feed (&w, &smp, NULL);
        if (i < 5)
            ck_assert_msg (v == WATCH_KEEP,
                           "sample %d: verdict %d",
                           i,
                           (int)v);
    }
    ck_assert_msg (v == WATCH_CONFINE,
                   "4 s - 3 us of over-use: verdict %d",
                   (int)v);

    /* three counted intervals (3 s) never reach 4 s */
    watch_init (&w, &p);
    for (int i = 0; i < 5; i++) {
        struct watch_sample smp = {i * S, (uint64_t)(2 * i * S)};
        v = watch_feed (&w, &smp, NULL);
        ck_assert_msg (v == WATCH_KEEP, "sample %d: verdict %d", i, (int)v);
    }
}
END_TEST

/* The counter goes backwards (cgroup re-created): a new baseline, the run
 * ends, no huge use from an unsigned wrap. */
START_TEST (test_counter_reset)
{
    struct watch_params p = {1.2, 10 * S, 5 * S, 1};
    const struct step st[] = {
        {0, 100, WATCH_KEEP, 0, 0},
        {5, 110, WATCH_KEEP, 0, 0}, /* 2 CPUs: run starts */
        {10, 120, WATCH_KEEP, 0, 5},
        {15, 3, WATCH_KEEP, 1, 0},  /* reset: forgiven */
        {20, 13, WATCH_KEEP, 0, 0}, /* run starts again */
        {25, 23, WATCH_KEEP, 0, 5},
        {30, 33, WATCH_CONFINE, 0, 10},
        {35, 0, WATCH_CONFINED, 0, 0},
    };
    run_steps (&p, st, sizeof (st) / sizeof (st[0]));
}
END_TEST

/* Time that does not advance or goes back, and a jump forward (the watcher
 * stopped for longer than grace): new baselines, never a verdict from
 * them. */
START_TEST (test_clock_jumps)
{
    struct watch_params p = {1.2, 10 * S, 5 * S, 1};
    const struct step st[] = {
        {100, 0, WATCH_KEEP, 0, 0},
        {105, 10, WATCH_KEEP, 0, 0}, /* run starts */
        {105, 12, WATCH_KEEP, 1, 0}, /* no time: rebased */
        {90, 14, WATCH_KEEP, 1, 0},  /* backwards: rebased */
        {95, 24, WATCH_KEEP, 0, 0},
        {100, 34, WATCH_KEEP, 0, 5},
        /* 1000 s later, 1990 CPU-s: the average is over, but it proves
         * nothing about the whole time */
        {1100, 2024, WATCH_KEEP, 1, 0},
        {1105, 2025, WATCH_KEEP, 0, 0}, /* 0.2 CPUs: not over */
        {1110, 2035, WATCH_KEEP, 0, 0},
        /* 15 s late (3 intervals) is not a stall: counted */
        {1125, 2065, WATCH_CONFINE, 0, 15},
    };
    run_steps (&p, st, sizeof (st) / sizeof (st[0]));
}
END_TEST

static const struct {
    struct watch_params p;
    const char *error;
} bad[] = {
    {{1.0, S, S, 1},
     "overuse 1: must be more than 1 (and at most 1000), "
     "e.g. 1.2"},
    {{0.5, S, S, 1},
     "overuse 0.5: must be more than 1 (and at most "
     "1000), e.g. 1.2"},
    {{NAN, S, S, 1},
     "overuse nan: must be more than 1 (and at most "
     "1000), e.g. 1.2"},
    {{1.2, -1, S, 1}, "grace -1 us: must be 0 or more"},
    {{1.2, S, 0, 1}, "interval 0 us: must be more than 0"},
    {{1.2, S, S, 0}, "allocated CPUs 0: must be more than 0"},
};

START_TEST (test_params)
{
    pin_error_t e = {""};

    errno = 0;
    ck_assert_int_eq (watch_params_check (&bad[_i].p, &e), -1);
    ck_assert_int_eq (errno, EINVAL);
    ck_assert_str_eq (e.text, bad[_i].error);
}
END_TEST

START_TEST (test_first_sample)
{
    struct watch_params p = {1.2, 0, S, 1};
    struct watch_state w;
    struct watch_report r;
    struct watch_sample s = {5 * S, 1000 * (uint64_t)S};

    ck_assert_int_eq (watch_params_check (&p, NULL), 0);
    watch_init (&w, &p);
    /* a baseline gives no use, even with grace 0 and a big counter */
    ck_assert_int_eq (watch_feed (&w, &s, &r), WATCH_KEEP);
    ck_assert (!r.valid);
    ck_assert (!r.rebased);
    ck_assert (fabs (watch_threshold (&p) - 1.2) < 1e-9);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("watch");
    TCase *tc = tcase_create ("watch");

    tcase_add_loop_test (tc,
                         test_profiles,
                         0,
                         (int)(sizeof (cases) / sizeof (cases[0])));
    tcase_add_test (tc, test_steady_noise);
    tcase_add_test (tc, test_counter_reset);
    tcase_add_test (tc, test_wakeup_jitter);
    tcase_add_test (tc, test_clock_jumps);
    tcase_add_loop_test (tc,
                         test_params,
                         0,
                         (int)(sizeof (bad) / sizeof (bad[0])));
    tcase_add_test (tc, test_first_sample);
    suite_add_tcase (s, tc);
    return tap_run (s, NULL, 0);
}
