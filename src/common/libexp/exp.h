/* exp.h - the statistics of a policy experiment (issue 25)
 *
 * job_submit_pin.so enrols jobs in an experiment and gives each an arm (a
 * policy) and a block (jobs of the same user, job name and CPU count);
 * pin.so writes the three into every step record (libacct/acct.h:
 * experiment, arm, block).  This library reads those step records and
 * says, per arm, what the jobs cost, and, for each arm against a control
 * arm, how much the arm changed the system time share, the wall time per
 * job, the CPU time per job and the CPU efficiency, with a 95 % confidence
 * interval and a verdict in plain words.  doc/experiments.md, "How the
 * verdict is computed", says the same for admins.
 *
 * Jobs.  Step records (kind step; extern steps left out: they hold the
 * allocation, not the work) of the experiment are grouped into jobs by
 * (cluster, job_id); an array task is a job of its own.  A record of the
 * same job and step on the same node counted once (the first).  A job's
 * arm and block are its records'; a job whose records disagree (another
 * arm or block, or a step record of the job that names another experiment
 * or none) is left out and counted as inconsistent.  A job with a step
 * whose policy ("" reads as "none") differs from its arm opted out (the
 * user gave --pin-policy to that step): counted per arm, left out of the
 * comparison and of the arm's figures.
 *
 * Per job: CPU time = user + system, summed over its step records (steps
 * and nodes); system time likewise; wall time = the latest end minus the
 * earliest start of its step records; allocated CPU time = the sum over
 * its step records of elapsed x alloc_cpus.
 *
 * Per arm (jobs kept): jobs, steps (distinct step ids), opted out, CPU
 * hours, efficiency = sum CPU / sum allocated, system share = sum system /
 * sum CPU, mean wall time and mean CPU time per job.
 *
 * The comparison: paired on matched blocks.  A block is matched for arm
 * A against the control C when it holds kept jobs of both.  In each
 * matched block b, the value of a metric for an arm is
 *     system share: sum system / sum CPU of the arm's jobs in b
 *     wall time:    mean wall time of the arm's jobs in b
 *     CPU time:     mean CPU time of the arm's jobs in b
 *     efficiency:   sum CPU / sum allocated of the arm's jobs in b
 * and d_b = ln (value_A / value_C); blocks where either value is 0 (or
 * undefined) are left out of that metric.  Over the n remaining blocks,
 * mean d and standard deviation s: the interval is
 * mean +- t(0.975, n-1) s / sqrt (n) (Student's t), and the relative
 * difference and its bounds are exp (.) - 1: an estimate of the ratio of
 * the arm's typical value to the control's in like jobs, less one.  Pairing
 * within blocks takes out what differs between users and kinds of job; the
 * log makes the effect multiplicative, so that a block of long jobs weighs
 * no more than a block of short ones.  No random numbers: the result is a
 * function of the records.
 *
 * A difference whose interval excludes 0 is stated; the others are "no
 * difference".  Each interval is 95 % on its own: over the four metrics
 * and several arms, the chance that some "difference" is noise is larger
 * (the guide says so).  With fewer than EXP_MIN_BLOCKS matched blocks or
 * fewer than EXP_MIN_JOBS jobs of either arm in them, the verdict is
 * "too few matched jobs to conclude (...)" and no difference is stated.
 *
 * Pure: no I/O, no logging.  Errors: -1 / NULL with errno, and text in a
 * pin_error_t (libutil/errprintf.h) where a person reads it.
 */
#ifndef PIN_EXP_H
#define PIN_EXP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libacct/acct.h"
#include "libutil/errprintf.h"

/* The least evidence a verdict is drawn from. */
#define EXP_MIN_BLOCKS 10
#define EXP_MIN_JOBS 20 /* per arm, in the matched blocks */
#define EXP_LEVEL 0.95  /* of every interval */

enum exp_metric {
    EXP_M_SYS_SHARE = 0, /* system time share: system / CPU */
    EXP_M_WALL = 1,      /* wall time per job */
    EXP_M_CPU = 2,       /* CPU time per job */
    EXP_M_EFF = 3,       /* CPU efficiency: CPU / allocated */
    EXP_NMETRICS
};

/* "system_share", "wall_time", "cpu_time", "efficiency" (JSON keys);
 * exp_metric_label: "system time share", "wall time", "CPU time",
 * "efficiency" (the verdict's words).  NULL out of range. */
const char *exp_metric_key (int m);
const char *exp_metric_label (int m);

/* The records of one experiment, gathered job by job. */
struct exp;

/* An empty gathering for experiment `name` (copied).  NULL with errno
 * ENOMEM, or EINVAL for a NULL or empty name.  exp_destroy accepts NULL
 * and keeps errno. */
struct exp *exp_create (const char *name);
void exp_destroy (struct exp *e);

/* Take one record.  Job records, extern steps and records of jobs that
 * have nothing to do with the experiment are passed over; a step record
 * of an enrolled job that names another experiment (or none) marks that
 * job inconsistent, whichever comes first.  Returns 1 when the record
 * counted for the experiment, 0 when passed over, -1 with errno ENOMEM
 * (the gathering is then unchanged). */
int exp_add (struct exp *e, const struct acct_record *r);

/* Step records taken (counted once per job, step and node). */
size_t exp_nrecords (const struct exp *e);

struct exp_opts {
    const char *control; /* NULL: "none" if an arm, else the first by name */
    int64_t start_us;    /* jobs that ran at some time in [start, end] */
    int64_t end_us;      /* (0: open); a job's span is its records' */
};

struct exp_arm {
    char name[64];
    size_t jobs;      /* kept: consistent, not opted out, in the window */
    size_t steps;     /* their distinct steps */
    size_t opted_out; /* jobs with a step of another policy */
    double cpu_us, system_us, alloc_us, wall_us; /* sums over kept jobs */
};

/* CPU hours, efficiency (cpu / alloc), system share (system / cpu), mean
 * wall and CPU time per job in seconds; -1 when undefined (no jobs, or a
 * zero denominator). */
double exp_arm_cpu_hours (const struct exp_arm *a);
double exp_arm_eff (const struct exp_arm *a);
double exp_arm_sys_share (const struct exp_arm *a);
double exp_arm_wall_s (const struct exp_arm *a);
double exp_arm_cpu_s (const struct exp_arm *a);

struct exp_diff {
    size_t nblocks;   /* matched blocks the metric was defined in */
    bool valid;       /* nblocks >= 2: an interval exists */
    double estimate;  /* relative difference, -0.25 = 25 % less */
    double low, high; /* its 95 % interval */
    bool stated;      /* enough evidence and the interval excludes 0 */
};

struct exp_comparison {
    char arm[64];
    size_t matched_blocks;
    size_t arm_jobs;     /* the arm's kept jobs in matched blocks */
    size_t control_jobs; /* the control's kept jobs in matched blocks */
    bool enough;         /* >= EXP_MIN_BLOCKS blocks, >= EXP_MIN_JOBS jobs
                            of each arm */
    struct exp_diff diff[EXP_NMETRICS];
    char verdict[1024]; /* one line, UTF-8 (U+2212 minus) */
};

struct exp_result {
    char experiment[64];
    char control[64];
    size_t records;       /* step records taken */
    size_t jobs;          /* jobs of the experiment in the window */
    size_t inconsistent;  /* of them, left out: records disagree */
    size_t blocks;        /* distinct blocks of kept jobs */
    struct exp_arm *arms; /* sorted by name; the caller frees the result
                             with exp_result_free */
    size_t narms;
    struct exp_comparison *cmps; /* each arm but the control, by name */
    size_t ncmps;
};

/* Analyse what was gathered.  0; -1 with errno ENOENT when no record of
 * the experiment was taken (or none in the window), EINVAL when
 * opts->control names no arm (errp lists the arms), ENOMEM.  `opts` may
 * be NULL.  The result is a function of the records and options only. */
int exp_analyze (const struct exp *e,
                 const struct exp_opts *opts,
                 struct exp_result *res,
                 pin_error_t *errp);
void exp_result_free (struct exp_result *res); /* res may be NULL */

/* ---- the pieces, for tests ------------------------------------------ */

/* The p-quantile (0 < p < 1) of Student's t with df >= 1 degrees of
 * freedom (bisection on the CDF, the regularized incomplete beta by its
 * continued fraction); NAN for df == 0. */
double exp_t_quantile (double p, unsigned df);

/* The paired interval of exp.h's head over d[0..n-1] (log ratios):
 * fills estimate/low/high/nblocks/valid of `out` (stated left false). */
void exp_paired_interval (const double *d, size_t n, struct exp_diff *out);

/* "1,204" */
void exp_fmt_count (size_t n, char *buf, size_t len);

#endif /* !PIN_EXP_H */
