/* experiment.h - enrolment of jobs in a policy experiment (issue 25)
 *
 * pin.conf's Experiment= keys (libconf) name an experiment and its arms
 * (policies).  A job that gives no --pin-policy of its own, in a
 * partition that forces none, passing the experiment's filters, before
 * ExperimentUntil=, is eligible.  Eligible jobs are enrolled with
 * probability ExperimentShare and each enrolled job gets an arm.
 *
 * Arms are balanced within blocks of like jobs (the same user, job name
 * and CPU count, so that arms compare like with like): permuted blocks.
 * The enrolled jobs of one block take the arms in cycles of k (k arms);
 * each cycle is a random permutation of the arms.  So after any number of
 * jobs, the arms of a block differ by at most one job.  Every random
 * draw is a hash of (seed, experiment, block, position): the same seed
 * and the same order of submissions give the same enrolments and arms.
 *
 * The positions are counted in a book kept in slurmctld's memory.  After
 * a restart a block starts a new cycle: its arms then differ by at most
 * one job per restart (doc/experiments.md).  Pure otherwise: no logging,
 * no Slurm calls.
 */
#ifndef PIN_SUBMIT_EXPERIMENT_H
#define PIN_SUBMIT_EXPERIMENT_H

#include <slurm/slurm.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "libconf/conf.h"

/* The AdminComment token is libacct's (acct.h, ACCT_EXP_TOKEN) */
#define SUBMIT_EXP_BLOCK_LEN 16 /* hex digits */

struct submit_exp_book;

/* An empty book; NULL with errno ENOMEM.  Destroy accepts NULL. */
struct submit_exp_book *submit_exp_book_create (void);
void submit_exp_book_destroy (struct submit_exp_book *b);

struct submit_enrolment {
    bool enrolled;
    char experiment[PIN_CONF_EXP_NAME_MAX];
    int arm;       /* enum place_policy */
    int arm_index; /* 0 .. narms-1 in ExperimentPolicies= order */
    int narms;
    char block[SUBMIT_EXP_BLOCK_LEN + 1];
    /* not enrolled: why, for slurmctld's debug log ("" no experiment) */
    char why[160];
};

/* Decide for an eligible-so-far job (the caller has checked that it
 * gives no --pin-policy and that its partition forces none): `r` are the
 * rules of its partition, `uid` its user, `now` the time.  Fills *en;
 * counts the job in `book`.  Returns 0, or -1 with errno ENOMEM (the job
 * is then not enrolled). */
int submit_exp_enrol (const struct pin_conf_rules *r,
                      const job_desc_msg_t *job,
                      uint32_t uid,
                      time_t now,
                      struct submit_exp_book *book,
                      struct submit_enrolment *en);

/* The job's CPU count as the block key counts it: num_tasks x
 * cpus_per_task where the job sets them, else min_cpus, else 1. */
uint32_t submit_exp_cpus (const job_desc_msg_t *job);

/* The block of (experiment, uid, job name, cpus): 16 hex digits into buf
 * (size >= 17). */
void submit_exp_block (const char *experiment,
                       uint32_t uid,
                       const char *name,
                       uint32_t cpus,
                       char *buf);

/* The experiment's seed: ExperimentSeed=, or a hash of the name (auto). */
uint64_t submit_exp_seed (const struct pin_conf_rules *r);

#endif /* !PIN_SUBMIT_EXPERIMENT_H */
