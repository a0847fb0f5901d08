/* test_exp.c - the statistics of a policy experiment (libexp/exp.h)
 *
 * Synthetic experiments with a known effect, drawn from splitmix64 (the
 * generator of policy random, libplace/place.c) so that every run draws
 * the same numbers on every libc: the interval must cover the true
 * effect about as often as it says, the verdict must state a real effect,
 * and with no effect a "difference" must be stated no more often than the
 * 5 % the interval allows.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "libexp/exp.h"
#include "libtest/tap.h"

#define MINUS "\xe2\x88\x92"

/* ---- synthetic data ---------------------------------------------------- */

static uint64_t splitmix64 (uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double uniform (uint64_t *s) /* (0, 1) */
{
    return ((double)(splitmix64 (s) >> 11) + 0.5) / 9007199254740992.0;
}

static double normal (uint64_t *s) /* Box-Muller */
{
    double u = uniform (s), v = uniform (s);
    return sqrt (-2 * log (u)) * cos (2 * M_PI * v);
}

static double lognormal (uint64_t *s, double sigma)
{
    return exp (sigma * normal (s));
}

#define T0 1700000000000000LL

static struct acct_record rec;

/* One step record of job `job`. */
static void step (struct exp *e,
                  uint32_t job,
                  uint32_t step_id,
                  const char *node,
                  const char *arm,
                  const char *policy,
                  const char *block,
                  uint32_t cpus,
                  double wall_s,
                  double cpu_s,
                  double share)
{
    acct_record_init (&rec);
    rec.kind = ACCT_KIND_STEP;
    snprintf (rec.cluster, sizeof (rec.cluster), "c1");
    rec.job_id = job;
    rec.step_id = step_id;
    snprintf (rec.node, sizeof (rec.node), "%s", node);
    snprintf (rec.experiment, sizeof (rec.experiment), "exp1");
    snprintf (rec.arm, sizeof (rec.arm), "%s", arm);
    snprintf (rec.policy, sizeof (rec.policy), "%s", policy);
    snprintf (rec.block, sizeof (rec.block), "%s", block);
    rec.alloc_cpus = cpus;
    rec.start_us = T0 + (int64_t)job * 1000000;
    rec.end_us = rec.start_us + (int64_t)(wall_s * 1e6);
    rec.elapsed_us = rec.end_us - rec.start_us;
    rec.system_usec = (uint64_t)(cpu_s * share * 1e6);
    rec.user_usec = (uint64_t)(cpu_s * 1e6) - rec.system_usec;
    ck_assert_int_ge (exp_add (e, &rec), 0);
}

struct effect {
    double sys, wall, cpu; /* factors of arm numa-local against none */
};

/* An experiment of `nblocks` blocks, each with 2 to 4 jobs of each arm
 * ("none", the control, and "numa-local"), the arm's jobs scaled by `f`;
 * per job lognormal noise (sigma 0.3 on CPU time, 0.2 on share and wall
 * time); blocks differ a lot (CPU time over two orders of magnitude). */
static struct exp *synth (uint64_t seed, int nblocks, struct effect f)
{
    struct exp *e = exp_create ("exp1");
    uint64_t s = seed * 0x2545f4914f6cdd1dULL + 1;
    uint32_t job = 1;

    ck_assert_ptr_nonnull (e);
    for (int b = 0; b < nblocks; b++) {
        char block[32];
        double cpu_b = 600 * lognormal (&s, 1.2);
        double share_b = 0.05 + 0.25 * uniform (&s);
        uint32_t cpus = 1 + (uint32_t)(splitmix64 (&s) % 16);
        double wall_b = cpu_b / cpus / (0.5 + 0.4 * uniform (&s));

        snprintf (block, sizeof (block), "%016llx", (unsigned long long)b);
        for (int arm = 0; arm < 2; arm++) {
            int n = 2 + (int)(splitmix64 (&s) % 3);
            for (int k = 0; k < n; k++) {
                double cpu = cpu_b * lognormal (&s, 0.3) * (arm ? f.cpu : 1);
                double share =
                    share_b * lognormal (&s, 0.2) * (arm ? f.sys : 1);
                double wall =
                    wall_b * lognormal (&s, 0.2) * (arm ? f.wall : 1);
                const char *a = arm ? "numa-local" : "none";
                if (share > 0.95)
                    share = 0.95;
                step (e, job++, 0, "n1", a, a, block, cpus, wall, cpu, share);
            }
        }
    }
    return e;
}

static void analyze (struct exp *e, struct exp_result *res)
{
    pin_error_t err = {""};
    ck_assert_msg (exp_analyze (e, NULL, res, &err) == 0, "%s", err.text);
    ck_assert_uint_eq (res->ncmps, 1);
    ck_assert_str_eq (res->control, "none");
}

/* ---- the pieces -------------------------------------------------------- */

static const struct {
    unsigned df;
    double q; /* t(0.975, df), from published tables */
} t_cases[] = {
    {1, 12.7062047},
    {2, 4.3026527},
    {5, 2.5705818},
    {9, 2.2621572},
    {39, 2.0226910},
    {1000, 1.9623391},
};

START_TEST (test_t_quantile)
{
    double q = exp_t_quantile (0.975, t_cases[_i].df);
    ck_assert_double_eq_tol (q, t_cases[_i].q, 1e-5);
    ck_assert_double_eq_tol (exp_t_quantile (0.025, t_cases[_i].df), -q, 1e-9);
}
END_TEST

START_TEST (test_paired_interval)
{
    /* d = ln 0.8 +- 0.1: mean ln 0.8, s = 0.1 * sqrt (4/3), n = 4 */
    double d[4] = {log (0.8) - 0.1,
                   log (0.8) + 0.1,
                   log (0.8) - 0.1,
                   log (0.8) + 0.1};
    struct exp_diff x;
    double half = 3.1824463 * 0.1 * sqrt (4.0 / 3) / 2;

    exp_paired_interval (d, 4, &x);
    ck_assert (x.valid);
    ck_assert_uint_eq (x.nblocks, 4);
    ck_assert_double_eq_tol (x.estimate, -0.2, 1e-12);
    ck_assert_double_eq_tol (x.low, 0.8 * exp (-half) - 1, 1e-6);
    ck_assert_double_eq_tol (x.high, 0.8 * exp (half) - 1, 1e-6);
    exp_paired_interval (d, 1, &x);
    ck_assert (!x.valid);
}
END_TEST

START_TEST (test_fmt_count)
{
    char b[32];
    exp_fmt_count (0, b, sizeof (b));
    ck_assert_str_eq (b, "0");
    exp_fmt_count (999, b, sizeof (b));
    ck_assert_str_eq (b, "999");
    exp_fmt_count (1204, b, sizeof (b));
    ck_assert_str_eq (b, "1,204");
    exp_fmt_count (1234567, b, sizeof (b));
    ck_assert_str_eq (b, "1,234,567");
}
END_TEST

/* ---- known effects ----------------------------------------------------- */

/* -25 % system time share, nothing else: over 200 seeds the interval
 * covers -25 % in about 95 % of them (at least 90 %: 180 of 200; the
 * binomial sd at 95 % is 3.1, so 180 is more than 3 sd below 190), and
 * the verdict states the effect (its power here is about 1: at least
 * 195 of 200).  The other three metrics have no effect: at most 5 % of
 * false statements, with the slack of the no-effect test below. */
START_TEST (test_known_effect)
{
    const struct effect f = {0.75, 1, 1};
    int cover = 0, stated = 0, false_other = 0;

    for (uint64_t seed = 1; seed <= 200; seed++) {
        struct exp *e = synth (seed, 40, f);
        struct exp_result res;
        const struct exp_diff *d;

        analyze (e, &res);
        ck_assert (res.cmps[0].enough);
        ck_assert_uint_eq (res.cmps[0].matched_blocks, 40);
        d = &res.cmps[0].diff[EXP_M_SYS_SHARE];
        ck_assert (d->valid);
        cover += d->low <= -0.25 && -0.25 <= d->high;
        stated += d->stated && d->high < 0;
        for (int m = EXP_M_WALL; m < EXP_NMETRICS; m++)
            false_other += res.cmps[0].diff[m].stated;
        if (seed == 1) {
            /* "numa-local: −2x % system time share (95 % CI −a to −b %),
             * N matched jobs; wall time: no difference (95 % CI ...)" */
            const char *v = res.cmps[0].verdict;
            ck_assert_msg (strncmp (v, "numa-local: " MINUS "2", 14) == 0,
                           "%s",
                           v);
            ck_assert_msg (strstr (v, " % system time share (95 % CI " MINUS),
                           "%s",
                           v);
            ck_assert_msg (strstr (v, " matched jobs"), "%s", v);
        }
        exp_result_free (&res);
        exp_destroy (e);
    }
    fprintf (stderr,
             "# -25 %% system share: covered in %d of 200, stated in %d; "
             "false statements on the other metrics: %d of 600\n",
             cover,
             stated,
             false_other);
    ck_assert_msg (cover >= 180,
                   "interval covered -25 %% in %d of 200",
                   cover);
    ck_assert_msg (stated >= 195, "-25 %% stated in %d of 200", stated);
    /* 600 chances at 5 %: mean 30, sd 5.3; 3 sd above: 46 */
    ck_assert_msg (false_other <= 46,
                   "%d false statements of 600 (wall, CPU, efficiency)",
                   false_other);
}
END_TEST

/* An effect on wall time only, -10 %: stated, and efficiency (CPU over
 * wall x CPUs) moves the other way, +11 %. */
START_TEST (test_wall_effect)
{
    const struct effect f = {1, 0.9, 1};
    struct exp *e = synth (7, 60, f);
    struct exp_result res;
    const struct exp_diff *w, *ef;

    analyze (e, &res);
    w = &res.cmps[0].diff[EXP_M_WALL];
    ef = &res.cmps[0].diff[EXP_M_EFF];
    ck_assert_msg (w->stated && w->low <= -0.1 && -0.1 <= w->high,
                   "wall %g [%g, %g]",
                   w->estimate,
                   w->low,
                   w->high);
    ck_assert_msg (ef->stated && ef->low <= 1 / 0.9 - 1
                       && 1 / 0.9 - 1 <= ef->high,
                   "eff %g [%g, %g]",
                   ef->estimate,
                   ef->low,
                   ef->high);
    ck_assert_msg (strstr (res.cmps[0].verdict, " % wall time (95 % CI "),
                   "%s",
                   res.cmps[0].verdict);
    ck_assert_msg (strstr (res.cmps[0].verdict, " % efficiency (95 % CI +"),
                   "%s",
                   res.cmps[0].verdict);
    exp_result_free (&res);
    exp_destroy (e);
}
END_TEST

/* No effect at all: over 400 seeds, each metric is stated as a
 * difference in about 5 % of them.  400 runs at a true rate of 5 %: mean
 * 20, binomial sd 4.4; more than 33 (3 sd above) is a test that says
 * "difference" too often, fewer than 7 (3 sd below) an interval wider
 * than it says.  The verdict then reads "no difference from none". */
START_TEST (test_no_effect)
{
    const struct effect f = {1, 1, 1};
    int false_stated[EXP_NMETRICS] = {0};
    int clean = 0;

    for (uint64_t seed = 1001; seed <= 1400; seed++) {
        struct exp *e = synth (seed, 40, f);
        struct exp_result res;
        bool any = false;

        analyze (e, &res);
        for (int m = 0; m < EXP_NMETRICS; m++) {
            false_stated[m] += res.cmps[0].diff[m].stated;
            any |= res.cmps[0].diff[m].stated;
        }
        if (!any) {
            ck_assert_msg (strncmp (res.cmps[0].verdict,
                                    "numa-local: no difference from none, ",
                                    37)
                               == 0,
                           "%s",
                           res.cmps[0].verdict);
            ck_assert_msg (strstr (res.cmps[0].verdict,
                                   "; system time share: no difference "
                                   "(95 % CI "),
                           "%s",
                           res.cmps[0].verdict);
            clean++;
        }
        exp_result_free (&res);
        exp_destroy (e);
    }
    fprintf (stderr,
             "# no effect, 400 runs: stated as a difference: system share "
             "%d, wall %d, CPU %d, efficiency %d; no statement at all: %d\n",
             false_stated[0],
             false_stated[1],
             false_stated[2],
             false_stated[3],
             clean);
    for (int m = 0; m < EXP_NMETRICS; m++)
        ck_assert_msg (false_stated[m] >= 7 && false_stated[m] <= 33,
                       "%s: a difference stated in %d of 400 runs without "
                       "one (5 %%: 20, allowed 7 to 33)",
                       exp_metric_key (m),
                       false_stated[m]);
    ck_assert_int_gt (clean, 0);
}
END_TEST

/* ---- too few ----------------------------------------------------------- */

START_TEST (test_too_few_blocks)
{
    const struct effect f = {0.5, 0.5, 0.5}; /* big, but too few blocks */
    struct exp *e = synth (3, 9, f);
    struct exp_result res;

    analyze (e, &res);
    ck_assert (!res.cmps[0].enough);
    ck_assert_uint_eq (res.cmps[0].matched_blocks, 9);
    for (int m = 0; m < EXP_NMETRICS; m++)
        ck_assert (!res.cmps[0].diff[m].stated);
    ck_assert_msg (strstr (res.cmps[0].verdict,
                           "numa-local: too few matched jobs to conclude (9 "
                           "matched blocks, "),
                   "%s",
                   res.cmps[0].verdict);
    ck_assert_msg (strstr (res.cmps[0].verdict,
                           "; need at least 10 blocks and 20 jobs per arm)"),
                   "%s",
                   res.cmps[0].verdict);
    exp_result_free (&res);
    exp_destroy (e);
}
END_TEST

/* 12 blocks of one job per arm: blocks enough, jobs not (12 < 20). */
START_TEST (test_too_few_jobs)
{
    struct exp *e = exp_create ("exp1");
    struct exp_result res;
    char block[32];

    for (uint32_t b = 0; b < 12; b++) {
        snprintf (block, sizeof (block), "%016x", b);
        step (e, 2 * b + 1, 0, "n1", "none", "none", block, 2, 100, 150, 0.2);
        step (e,
              2 * b + 2,
              0,
              "n1",
              "numa-local",
              "numa-local",
              block,
              2,
              100,
              150,
              0.1);
    }
    analyze (e, &res);
    ck_assert (!res.cmps[0].enough);
    ck_assert_str_eq (res.cmps[0].verdict,
                      "numa-local: too few matched jobs to conclude (12 "
                      "matched blocks, 12 jobs of numa-local and 12 of none; "
                      "need at least 10 blocks and 20 jobs per arm)");
    exp_result_free (&res);
    exp_destroy (e);
}
END_TEST

/* ---- what is counted and what is left out ------------------------------ */

START_TEST (test_counts)
{
    struct exp *e = exp_create ("exp1");
    struct exp_result res;
    pin_error_t err = {""};
    const struct exp_arm *none, *nl;

    /* job 1 (none): two steps, step 0 on two nodes; extern ignored */
    step (e, 1, ACCT_STEP_BATCH, "n1", "none", "", "b1", 1, 100, 10, 0.1);
    step (e, 1, 0, "n1", "none", "none", "b1", 4, 50, 100, 0.1);
    step (e, 1, 0, "n2", "none", "none", "b1", 4, 50, 100, 0.1);
    step (e, 1, 0, "n2", "none", "none", "b1", 4, 50, 999, 0.1); /* dup */
    step (e,
          1,
          ACCT_STEP_EXTERN,
          "n1",
          "none",
          "none",
          "b1",
          8,
          100,
          9999,
          0.5);
    /* job 2 (numa-local) */
    step (e, 2, 0, "n1", "numa-local", "numa-local", "b1", 2, 200, 300, 0.2);
    /* job 3 (numa-local) opted out: its step 1 ran numa-spread */
    step (e, 3, 0, "n1", "numa-local", "numa-local", "b1", 2, 100, 100, 0.2);
    step (e, 3, 1, "n1", "numa-local", "numa-spread", "b1", 2, 100, 100, 0.2);
    /* job 4: its records disagree on the block */
    step (e, 4, 0, "n1", "numa-local", "numa-local", "b1", 2, 100, 100, 0.2);
    step (e, 4, 0, "n2", "numa-local", "numa-local", "b2", 2, 100, 100, 0.2);
    /* job 5: a step recorded without the experiment (before or after) */
    step (e, 5, 0, "n1", "none", "none", "b1", 2, 100, 100, 0.2);
    rec.step_id = 1;
    rec.experiment[0] = rec.arm[0] = rec.block[0] = '\0';
    ck_assert_int_eq (exp_add (e, &rec), 0);
    acct_record_init (&rec);
    rec.kind = ACCT_KIND_STEP;
    snprintf (rec.cluster, sizeof (rec.cluster), "c1");
    rec.job_id = 6;
    rec.step_id = 0;
    snprintf (rec.experiment, sizeof (rec.experiment), "other");
    ck_assert_int_eq (exp_add (e, &rec), 0);
    step (e, 6, 1, "n1", "none", "none", "b1", 2, 100, 100, 0.2);
    /* job 7: another cluster's job 2 is another job */
    snprintf (rec.cluster, sizeof (rec.cluster), "c2");
    rec.job_id = 2;
    ck_assert_int_eq (exp_add (e, &rec), 1);
    /* a job record is not a step */
    rec.kind = ACCT_KIND_JOB;
    rec.job_id = 99;
    ck_assert_int_eq (exp_add (e, &rec), 0);

    ck_assert_int_eq (exp_analyze (e, NULL, &res, &err), 0);
    ck_assert_uint_eq (res.jobs, 7);
    ck_assert_uint_eq (res.inconsistent, 3); /* 4, 5, 6 */
    ck_assert_uint_eq (res.narms, 2);
    none = &res.arms[0];
    nl = &res.arms[1];
    ck_assert_str_eq (none->name, "none");
    ck_assert_str_eq (nl->name, "numa-local");
    ck_assert_str_eq (res.control, "none");
    /* none: job 1 and c2's job 2 */
    ck_assert_uint_eq (none->jobs, 2);
    ck_assert_uint_eq (none->steps, 3); /* batch, 0; c2: 1 */
    ck_assert_uint_eq (none->opted_out, 0);
    /* job 1: CPU 10 + 100 + 100 (system 21), allocated 100x1 + 50x4 +
     * 50x4; c2's 2: CPU 100 (system 20) over 100 s x 2 */
    ck_assert_double_eq_tol (none->cpu_us, 310e6, 1);
    ck_assert_double_eq_tol (none->system_us, 41e6, 1);
    ck_assert_double_eq_tol (exp_arm_eff (none), 310.0 / 700, 1e-9);
    ck_assert_double_eq_tol (exp_arm_sys_share (none), 41.0 / 310, 1e-6);
    ck_assert_double_eq_tol (exp_arm_wall_s (none), 100, 1e-9);
    ck_assert_double_eq_tol (exp_arm_cpu_s (none), 155, 1e-9);
    ck_assert_double_eq_tol (exp_arm_cpu_hours (none), 310.0 / 3600, 1e-9);
    ck_assert_uint_eq (nl->jobs, 1);
    ck_assert_uint_eq (nl->steps, 1);
    ck_assert_uint_eq (nl->opted_out, 1);
    ck_assert_double_eq_tol (exp_arm_eff (nl), 300.0 / 400, 1e-9);
    ck_assert_double_eq_tol (exp_arm_wall_s (nl), 200, 1e-9);
    ck_assert_uint_eq (res.ncmps, 1);
    ck_assert_uint_eq (res.cmps[0].matched_blocks, 1);
    ck_assert_uint_eq (res.cmps[0].arm_jobs, 1);
    ck_assert_uint_eq (res.cmps[0].control_jobs, 2);
    exp_result_free (&res);

    /* --control: another arm, or one that is not there */
    {
        struct exp_opts o = {"numa-local", 0, 0};
        ck_assert_int_eq (exp_analyze (e, &o, &res, &err), 0);
        ck_assert_str_eq (res.control, "numa-local");
        ck_assert_str_eq (res.cmps[0].arm, "none");
        exp_result_free (&res);
        o.control = "numa-spread";
        ck_assert_int_eq (exp_analyze (e, &o, &res, &err), -1);
        ck_assert_int_eq (errno, EINVAL);
        ck_assert_str_eq (err.text,
                          "--control=numa-spread: no such arm in experiment "
                          "exp1; its arms: none, numa-local");
        /* a window that holds none of the jobs */
        o.control = NULL;
        o.start_us = T0 + 1000000000;
        ck_assert_int_eq (exp_analyze (e, &o, &res, &err), -1);
        ck_assert_int_eq (errno, ENOENT);
        ck_assert_str_eq (err.text,
                          "experiment exp1: no step records in the time "
                          "window");
        /* a window that holds jobs 1 to 3 only (starts T0+1 .. T0+3 s) */
        o.start_us = 0;
        o.end_us = T0 + 3500000;
        ck_assert_int_eq (exp_analyze (e, &o, &res, &err), 0);
        ck_assert_uint_eq (res.jobs, 3); /* c2's 2 started at T0+6 s */
        exp_result_free (&res);
    }
    exp_destroy (e);

    /* no record at all */
    e = exp_create ("exp2");
    ck_assert_int_eq (exp_analyze (e, NULL, &res, &err), -1);
    ck_assert_int_eq (errno, ENOENT);
    ck_assert_str_eq (err.text, "experiment exp2: no step records");
    exp_destroy (e);
    ck_assert_ptr_null (exp_create (""));
    ck_assert_int_eq (errno, EINVAL);
}
END_TEST

/* Without an arm "none", the control is the first arm by name; the
 * result does not depend on the order of the records. */
START_TEST (test_control_default_and_order)
{
    struct exp *a = exp_create ("exp1"), *b = exp_create ("exp1");
    struct exp_result ra, rb;
    pin_error_t err = {""};
    const char *arms[3] = {"numa-spread", "numa-local", "random"};
    uint32_t job = 1;

    struct {
        char block[32];
        const char *arm;
        double cpu, share;
    } p[72];
    uint64_t s = 42;

    for (int bl = 0; bl < 12; bl++) {
        for (int k = 0; k < 6; k++, job++) {
            snprintf (p[job - 1].block, sizeof (p[0].block), "%016x", bl);
            p[job - 1].arm = arms[k % 3];
            p[job - 1].share = 0.1 * lognormal (&s, 0.2);
            p[job - 1].cpu = 100 * lognormal (&s, 0.2);
        }
    }
    /* a: in job order; b: the other way round */
    for (uint32_t j = 1; j <= 72; j++)
        step (a,
              j,
              0,
              "n1",
              p[j - 1].arm,
              p[j - 1].arm,
              p[j - 1].block,
              2,
              100,
              p[j - 1].cpu,
              p[j - 1].share);
    for (uint32_t j = 72; j >= 1; j--)
        step (b,
              j,
              0,
              "n1",
              p[j - 1].arm,
              p[j - 1].arm,
              p[j - 1].block,
              2,
              100,
              p[j - 1].cpu,
              p[j - 1].share);
    ck_assert_int_eq (exp_analyze (a, NULL, &ra, &err), 0);
    ck_assert_int_eq (exp_analyze (b, NULL, &rb, &err), 0);
    ck_assert_str_eq (ra.control, "numa-local");
    ck_assert_uint_eq (ra.ncmps, 2);
    ck_assert_str_eq (ra.cmps[0].arm, "numa-spread");
    ck_assert_str_eq (ra.cmps[1].arm, "random");
    ck_assert_str_eq (ra.cmps[0].verdict, rb.cmps[0].verdict);
    ck_assert_str_eq (ra.cmps[1].verdict, rb.cmps[1].verdict);
    /* 12 blocks, 24 jobs of each arm: enough */
    ck_assert (ra.cmps[0].enough);
    ck_assert_uint_eq (ra.cmps[0].arm_jobs, 24);
    exp_result_free (&ra);
    exp_result_free (&rb);
    exp_destroy (a);
    exp_destroy (b);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("exp");
    TCase *tc = tcase_create ("core");
    tcase_set_timeout (tc, 120);
    tcase_add_loop_test (tc,
                         test_t_quantile,
                         0,
                         sizeof (t_cases) / sizeof (t_cases[0]));
    tcase_add_test (tc, test_paired_interval);
    tcase_add_test (tc, test_fmt_count);
    tcase_add_test (tc, test_known_effect);
    tcase_add_test (tc, test_wall_effect);
    tcase_add_test (tc, test_no_effect);
    tcase_add_test (tc, test_too_few_blocks);
    tcase_add_test (tc, test_too_few_jobs);
    tcase_add_test (tc, test_counts);
    tcase_add_test (tc, test_control_default_and_order);
    suite_add_tcase (s, tc);
    return tap_run (s, NULL, 0);
}
