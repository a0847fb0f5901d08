/* submit.h - job_submit_pin.so's decisions, without slurmctld
 *
 * Given the site rules (libconf), a job description as slurmctld hands it
 * to a job_submit plugin, and the submitting user's name, decide: refuse
 * the job (one line naming the value and what is allowed), or accept it
 * with an effective policy (asked, default or forced) and the allocation
 * fields to add so that Slurm allocates what the policy needs
 * (doc/job-submit.md has the table and the reasons).
 *
 * Pure: no logging, no allocation, no Slurm calls; only the types and
 * constants of <slurm/slurm.h>.  The job is read, never written, except by
 * submit_apply_fields() (plain numbers, no memory).  Strings the glue must
 * copy into the job with Slurm's allocator are returned in the decision.
 */
#ifndef PIN_SUBMIT_H
#define PIN_SUBMIT_H

#include <slurm/slurm.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "libconf/conf.h"
#include "libconf/pinopt.h"
#include "experiment.h"
#include "libutil/errprintf.h"

/* The option as it arrives in job_desc->spank_job_env (FACTS.md). */
#define SUBMIT_SPANK_ENV_NAME "_SLURM_SPANK_OPTION_pin_pin_policy"
/* --pin-profile[=INTERVAL] there: validated at submission (the value is
 * read again by pin.so in slurmstepd, Profile= of pin.conf applies where
 * the job gives none). */
#define SUBMIT_PROFILE_ENV_NAME "_SLURM_SPANK_OPTION_pin_pin_profile"
/* The same in a batch job's environment, read by srun in the script
 * (Slurm's spank_process_env_options(): "SLURM_SPANK_" + the above). */
#define SUBMIT_JOB_ENV_NAME "SLURM_SPANK__SLURM_SPANK_OPTION_pin_pin_policy"

/* What pin.so puts into the job control environment when srun itself
 * creates the job (pinopt.h), as it arrives in spank_job_env (without the
 * "SPANK_" that Slurm adds for the prolog and epilog only): such a job
 * runs only srun's own step, so its task count may be reshaped
 * (doc/job-submit.md). */
#define SUBMIT_SRUN_MARK_NAME PINOPT_SRUN_MARK_NAME
#define SUBMIT_SRUN_MARK_VALUE PINOPT_SRUN_MARK_VALUE

/* Longest text submit_decide() puts into note (without the NUL). */
#define SUBMIT_NOTE_MAX 200

enum submit_source {
    SUBMIT_NONE = 0, /* no policy asked, no default: nothing to do */
    SUBMIT_ASKED,    /* --pin-policy given and allowed */
    SUBMIT_DEFAULT,  /* DefaultPolicy (global or the partition's) */
    SUBMIT_FORCED,   /* the partition's ForcedPolicy */
    SUBMIT_EXPERIMENT, /* an arm of the partition's Experiment= */
};

struct submit_decision {
    enum submit_source source;
    int policy;   /* enum place_policy; meaningless if SUBMIT_NONE */
    bool verbose; /* ",verbose" was asked */
    /* The option value the job must carry, "POLICY[,verbose]", when the
     * job did not carry it already (default, forced): the glue writes
     * SUBMIT_SPANK_ENV_NAME=value into spank_job_env and, for a batch
     * job, SUBMIT_JOB_ENV_NAME=value into its environment.  "" if the
     * job already carries what it needs. */
    char write_value[80];
    /* Allocation fields to set; NO_VAL16 / NO_VAL: leave as they are. */
    uint16_t threads_per_core;
    uint32_t task_dist;
    /* numa-spread's reshape of a one-task job srun creates (SpreadSockets=
     * S): S tasks of C/S CPUs, one per socket, for "-n 1 -c C". */
    uint32_t num_tasks;
    uint16_t cpus_per_task;
    uint16_t ntasks_per_socket;
    /* GpuBinding=enforce: add GRES_ENFORCE_BIND (--gres-flags=
     * enforce-binding) to job->bitflags: the job asks for GPUs, its
     * policy pins and it gives no --gres-flags of its own. */
    bool gres_enforce_binding;
    /* What was decided, for the job's comment: "pin: numa-local
     * (partition default); added threads_per_core=1".  "" if nothing. */
    char note[SUBMIT_NOTE_MAX + 1];
    /* SUBMIT_EXPERIMENT: the token for the job's AdminComment,
     * "pin-experiment=NAME/ARM/BLOCK" (libacct/acct.h); else "" */
    char admin_token[160];
    /* an eligible job left out of the partition's experiment: why (for
     * slurmctld's debug log); else "" */
    char exp_why[160];
};

/* What submit_decide_at() needs beyond the job: the time, the submitting
 * uid and the experiments' book (experiment.h; NULL: no experiment
 * enrols anyone). */
struct submit_ctx {
    time_t now;
    uint32_t uid;
    struct submit_exp_book *book;
};

/* Decide for `job` submitted by `user` (a name; may be NULL, then
 * NoneUsers= cannot match).  `conf` holds the rules.  Returns 0 and fills
 * *d, or -1 with errno EINVAL and errp one line for the user:
 *   "--pin-policy=random: not allowed in partition debug; allowed: ..."
 * *d is only meaningful on success.  Nothing to free.
 */
int submit_decide (const struct pin_conf *conf,
                   const job_desc_msg_t *job,
                   const char *user,
                   struct submit_decision *d,
                   pin_error_t *errp);

/* submit_decide() with policy experiments (doc/experiments.md): a job
 * that gives no --pin-policy, in a single partition (or none) that forces
 * none, may be enrolled in the partition's experiment; then d->source is
 * SUBMIT_EXPERIMENT, d->policy its arm and d->admin_token the token for
 * its AdminComment.  `ctx` NULL: as submit_decide(). */
int submit_decide_at (const struct pin_conf *conf,
                      const job_desc_msg_t *job,
                      const char *user,
                      const struct submit_ctx *ctx,
                      struct submit_decision *d,
                      pin_error_t *errp);

/* Decide for `job` when no rules can be read (pin.conf broken and no last
 * good copy of it; doc/job-submit.md).  A job that gives no --pin-policy
 * gets SUBMIT_NONE: nothing is added, it runs as Slurm alone would run it
 * (pin.so applies the node's pin.conf to its steps).  One that gives
 * --pin-policy, whatever the value, is refused: -1 with errno EAGAIN and
 * errp "--pin-policy=V: refused until the site's pin.conf is fixed ...:
 * PROBLEM" (`problem`: the loader's line naming the file).  --pin-profile
 * is checked as by submit_decide().  Nothing to free. */
int submit_decide_unruled (const job_desc_msg_t *job,
                           const char *problem,
                           struct submit_decision *d,
                           pin_error_t *errp);

/* Whether one of the job's TRES requests (tres_per_node, _job, _task,
 * _socket; "gres/gpu:2", "gres:gpu:tesla:1", "gres/gpu=1", entries
 * separated by ',' or ';') asks for at least one GPU. */
bool submit_requests_gpus (const job_desc_msg_t *job);

/* Whether the job gives a --gres-flags value of its own (any of the
 * GRES_* binding and sharing bits of its bitflags this Slurm has). */
bool submit_has_gres_flag (const job_desc_msg_t *job);

/* Write d's allocation fields (threads_per_core, task_dist and the
 * reshape: num_tasks with JOB_NTASKS_SET, cpus_per_task,
 * ntasks_per_socket, GRES_ENFORCE_BIND) into job; touches nothing else but the "cpu" entry
 * of job->tres_per_task, removed where cpus_per_task is set (see
 * submit_tres_drop_cpu; the caller frees a tres_per_task left ""). */
void submit_apply_fields (job_desc_msg_t *job,
                          const struct submit_decision *d);

/* Remove the "cpu=N" (or "cpu:N") entries of a TRES list such as
 * "cpu=2,gres/gpu:1", in place; NULL is left alone, "" may be left.
 * srun from Slurm 23.11 sends -c N also as tres_per_task "cpu=N", and
 * slurmctld rewrites that entry from cpus_per_task; srun from Slurm 25.05
 * then takes the job's cpu count per task from it for the step of a job
 * it created itself (srun_job.c, _set_step_opts), so a reshaped
 * cpus_per_task would shrink the step the user asked for. */
void submit_tres_drop_cpu (char *tres);

/* Index of the entry NAME=... in a NULL-terminated or `size`-long string
 * array (NULL entries skipped), or -1.  For spank_job_env / environment. */
int submit_env_find (char *const *env, uint32_t size, const char *name);

/* Write "p1, p2" for the policies in `mask` into buf (size n); returns
 * buf. */
const char *submit_policy_names (unsigned mask, char *buf, size_t n);

#endif /* !PIN_SUBMIT_H */
