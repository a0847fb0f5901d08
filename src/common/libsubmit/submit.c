/* submit.c - job_submit_pin.so's decisions, without slurmctld */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "libconf/pinopt.h"
#include "libplace/place.h"
#include "submit.h"
#include "libacct/acct.h"

#define QUOTE 64

int submit_env_find (char *const *env, uint32_t size, const char *name)
{
    size_t len = strlen (name);
    uint32_t i;

    if (!env)
        return -1;
    for (i = 0; i < size && i < (uint32_t)INT32_MAX; i++) {
        if (!env[i])
            continue;
        if (strncmp (env[i], name, len) == 0 && env[i][len] == '=')
            return (int)i;
    }
    return -1;
}

const char *submit_policy_names (unsigned mask, char *buf, size_t n)
{
    size_t o = 0;
    int p;

    if (n == 0)
        return buf;
    buf[0] = '\0';
    for (p = 0; p < 32; p++) {
        const char *name = place_policy_name ((enum place_policy)p);
        if (!(mask & (1u << p)) || strcmp (name, "unknown") == 0)
            continue;
        snprintf (buf + o, n - o, "%s%s", o ? ", " : "", name);
        o = strlen (buf);
    }
    if (o == 0)
        snprintf (buf, n, "(none)");
    return buf;
}

/* What the job asked for with an option of pin.so: the value of `name`
 * (SUBMIT_SPANK_ENV_NAME, SUBMIT_PROFILE_ENV_NAME) in spank_job_env, or
 * NULL.  Two entries with different values: refuse. */
static int asked_value (const job_desc_msg_t *job,
                        const char *name,
                        const char *option,
                        const char **value,
                        pin_error_t *errp)
{
    size_t len = strlen (name);
    const char *found = NULL;
    uint32_t i;

    *value = NULL;
    if (!job->spank_job_env)
        return 0;
    for (i = 0; i < job->spank_job_env_size; i++) {
        const char *e = job->spank_job_env[i];
        if (!e || strncmp (e, name, len) != 0 || e[len] != '=')
            continue;
        if (found && strcmp (found, e + len + 1) != 0) {
            char a[QUOTE + 8], b[QUOTE + 8];
            errno = EINVAL;
            return errprintf (errp,
                              "%s given twice (%s and %s); give it "
                              "once",
                              option,
                              pinopt_quote (found, QUOTE, a, sizeof (a)),
                              pinopt_quote (e + len + 1,
                                            QUOTE,
                                            b,
                                            sizeof (b)));
        }
        found = e + len + 1;
    }
    *value = found;
    return 0;
}

static bool unset16 (uint16_t v)
{
    return v == NO_VAL16;
}

/* Did the user choose how threads and cores are used (--threads-per-core,
 * --hint, -B, --ntasks-per-core, --cores-per-socket, ...)? */
static bool user_set_cores (const job_desc_msg_t *job)
{
    return !unset16 (job->threads_per_core) || !unset16 (job->ntasks_per_core)
           || !unset16 (job->sockets_per_node)
           || !unset16 (job->cores_per_socket)
           || (job->cpu_bind_type != 0 && job->cpu_bind_type != NO_VAL16);
}

static bool user_set_dist (const job_desc_msg_t *job)
{
    uint32_t d = job->task_dist;
    return !(d == 0 || d == NO_VAL || d == NO_VAL16
             || d == SLURM_DIST_UNKNOWN);
}

/* Was the job created by srun for its own step (pin.so's mark)? */
static bool created_by_srun (const job_desc_msg_t *job)
{
    int i = submit_env_find (job->spank_job_env,
                             job->spank_job_env_size,
                             SUBMIT_SRUN_MARK_NAME);
    return i >= 0 && !job->script
           && strcmp (job->spank_job_env[i] + strlen (SUBMIT_SRUN_MARK_NAME)
                          + 1,
                      SUBMIT_SRUN_MARK_VALUE)
                  == 0;
}

/* numa-spread, "srun -n 1 -c C" creating its own job, SpreadSockets=S:
 * Slurm 22.05 packs one task's CPUs on one socket, so ask for S tasks of
 * C/S CPUs, one per socket; srun's step (-n 1 -c C) then gets C/S cores
 * of each socket.  Only when the user shaped nothing, the job is one
 * plain job on one node and C divides evenly (doc/job-submit.md). */
static bool spread_reshape (const job_desc_msg_t *job,
                            int sockets,
                            struct submit_decision *d)
{
    uint16_t c = job->cpus_per_task;

    if (sockets < 2 || !created_by_srun (job) || job->het_job_offset != NO_VAL
        || !(job->num_tasks == NO_VAL || job->num_tasks <= 1) || c == NO_VAL16
        || c < sockets || c % sockets != 0
        || !(job->min_nodes == NO_VAL || job->min_nodes <= 1)
        || !(job->max_nodes == NO_VAL || job->max_nodes <= 1)
        || !unset16 (job->ntasks_per_socket) || !unset16 (job->ntasks_per_node)
        || job->shared == JOB_SHARED_NONE || user_set_cores (job)
        || user_set_dist (job))
        return false;
    d->num_tasks = (uint32_t)sockets;
    d->cpus_per_task = (uint16_t)(c / sockets);
    d->ntasks_per_socket = 1;
    return true;
}

/* The allocation fields for `policy` (doc/job-submit.md). */
static void translate (const job_desc_msg_t *job,
                       int spread_sockets,
                       struct submit_decision *d,
                       char *added,
                       size_t n)
{
    size_t o = 0;

    added[0] = '\0';
    if (d->policy != PLACE_NUMA_LOCAL && d->policy != PLACE_NUMA_SPREAD)
        return;
    if (d->policy == PLACE_NUMA_SPREAD
        && spread_reshape (job, spread_sockets, d)) {
        snprintf (added + o,
                  n - o,
                  "%sntasks=%u,cpus_per_task=%u,"
                  "ntasks_per_socket=1 (srun -n 1 -c %u over %d sockets)",
                  o ? "," : "",
                  (unsigned)d->num_tasks,
                  (unsigned)d->cpus_per_task,
                  (unsigned)job->cpus_per_task,
                  spread_sockets);
        o = strlen (added);
    }
    if (!user_set_cores (job)) {
        d->threads_per_core = 1;
        snprintf (added + o, n - o, "%sthreads_per_core=1", o ? "," : "");
        o = strlen (added);
    }
    if (d->policy == PLACE_NUMA_SPREAD && !user_set_dist (job)) {
        d->task_dist = SLURM_DIST_BLOCK_CFULL;
        snprintf (added + o,
                  n - o,
                  "%sdistribution=block:fcyclic",
                  o ? "," : "");
    }
}

/* One TRES list: does an entry name gpu with a count other than 0? */
static bool tres_has_gpu (const char *tres)
{
    const char *p = tres;

    while (p && *p) {
        size_t len = strcspn (p, ",;");
        const char *e = p, *end = p + len, *cnt;

        if (len > 5 && (!strncmp (e, "gres/", 5) || !strncmp (e, "gres:", 5)))
            e += 5;
        if (end - e >= 3 && !strncmp (e, "gpu", 3)
            && (e + 3 == end || e[3] == ':' || e[3] == '=')) {
            /* the count is the last ':'/'=' field; a type alone
             * ("gpu:tesla") or no count ("gpu") is one GPU */
            bool zero = false;

            for (cnt = end; cnt > e && cnt[-1] != ':' && cnt[-1] != '=';
                 cnt--)
                ;
            if (cnt > e + 3 && cnt < end
                && strspn (cnt, "0") == (size_t)(end - cnt))
                zero = true;
            if (!zero)
                return true;
        }
        p = end;
        if (*p)
            p++;
    }
    return false;
}

bool submit_requests_gpus (const job_desc_msg_t *job)
{
    return tres_has_gpu (job->tres_per_node) || tres_has_gpu (job->tres_per_job)
           || tres_has_gpu (job->tres_per_task)
           || tres_has_gpu (job->tres_per_socket);
}

bool submit_has_gres_flag (const job_desc_msg_t *job)
{
    uint64_t mask = GRES_ENFORCE_BIND | GRES_DISABLE_BIND;

#ifdef GRES_ONE_TASK_PER_SHARING
    mask |= GRES_ONE_TASK_PER_SHARING;
#endif
#ifdef GRES_MULT_TASKS_PER_SHARING
    mask |= GRES_MULT_TASKS_PER_SHARING;
#endif
#ifdef GRES_ALLOW_TASK_SHARING
    mask |= GRES_ALLOW_TASK_SHARING;
#endif
    return (job->bitflags & mask) != 0;
}

/* GpuBinding=enforce (doc/job-submit.md): a GPU job whose policy pins
 * asks Slurm for cores next to its GPUs, unless it says otherwise. */
static void gpu_binding (const job_desc_msg_t *job,
                         bool enforce,
                         struct submit_decision *d,
                         char *added,
                         size_t n)
{
    size_t o = strlen (added);

    if (!enforce || d->policy == PLACE_NONE || d->policy == PLACE_DYNAMIC
        || !submit_requests_gpus (job) || submit_has_gres_flag (job))
        return;
    d->gres_enforce_binding = true;
    snprintf (added + o,
              n - o,
              "%sgres_flags=enforce-binding",
              o ? "," : "");
}

/* --pin-profile's value, if the job gives one, must parse (it needs no
 * rules: pin.so applies it). */
static int check_profile (const job_desc_msg_t *job, pin_error_t *errp)
{
    char shown[QUOTE + 8], reason[200];
    const char *value = NULL;
    long long us;

    if (asked_value (job,
                     SUBMIT_PROFILE_ENV_NAME,
                     "--pin-profile",
                     &value,
                     errp)
        < 0)
        return -1;
    value = pinopt_slurm_optarg (value); /* "--pin-profile" alone */
    if (value
        && pin_conf_parse_profile (value, &us, reason, sizeof (reason)) < 0) {
        errno = EINVAL;
        return errprintf (errp,
                          "--pin-profile=%s: %s",
                          pinopt_quote (value, QUOTE, shown, sizeof (shown)),
                          reason);
    }
    return 0;
}

static void decision_init (struct submit_decision *d)
{
    memset (d, 0, sizeof (*d));
    d->threads_per_core = NO_VAL16;
    d->task_dist = NO_VAL;
    d->num_tasks = NO_VAL;
    d->cpus_per_task = NO_VAL16;
    d->ntasks_per_socket = NO_VAL16;
}

int submit_decide_unruled (const job_desc_msg_t *job,
                           const char *problem,
                           struct submit_decision *d,
                           pin_error_t *errp)
{
    char shown[QUOTE + 8];
    const char *value = NULL;

    if (!job || !d) {
        errno = EINVAL;
        return errprintf (errp, "submit_decide_unruled: invalid arguments");
    }
    decision_init (d);
    if (check_profile (job, errp) < 0)
        return -1;
    if (asked_value (job, SUBMIT_SPANK_ENV_NAME, "--pin-policy", &value, errp)
        < 0)
        return -1;
    if (!value)
        return 0; /* SUBMIT_NONE: as Slurm alone would run it */
    errno = EAGAIN;
    return errprintf (errp,
                      "--pin-policy=%s: refused until the site's pin.conf "
                      "is fixed (leave --pin-policy out meanwhile): %s",
                      pinopt_quote (value, QUOTE, shown, sizeof (shown)),
                      problem && *problem ? problem : "no rules loaded");
}

int submit_decide (const struct pin_conf *conf,
                   const job_desc_msg_t *job,
                   const char *user,
                   struct submit_decision *d,
                   pin_error_t *errp)
{
    return submit_decide_at (conf, job, user, NULL, d, errp);
}

int submit_decide_at (const struct pin_conf *conf,
                      const job_desc_msg_t *job,
                      const char *user,
                      const struct submit_ctx *ctx,
                      struct submit_decision *d,
                      pin_error_t *errp)
{
    char whybuf[PIN_CONF_EXP_NAME_MAX + 64];
    struct pin_conf_effective eff;
    struct pin_conf_request req = {NULL, false, 0, false, false, 0};
    const struct pin_conf_rules *rules = &eff.rules;
    struct pin_option opt = {.policy = 0};
    const char *value = NULL;
    char shown[QUOTE + 8], allowed[256], part[QUOTE + 8], added[200];
    const char *why = "";

    if (!conf || !job || !d) {
        errno = EINVAL;
        return errprintf (errp, "submit_decide: invalid arguments");
    }
    decision_init (d);
    if (check_profile (job, errp) < 0)
        return -1;
    if (asked_value (job, SUBMIT_SPANK_ENV_NAME, "--pin-policy", &value, errp)
        < 0)
        return -1;
    if (value && pinopt_parse (value, &opt, errp) < 0)
        return -1;
    /* --pin-profile is only checked here (above): pin.so applies it */
    req.partitions = job->partition;
    req.policy_given = value != NULL;
    req.policy = opt.policy;
    req.verbose = opt.verbose;
    if (pin_conf_resolve (conf, &req, &eff, errp) < 0)
        return -1;
    pinopt_quote (value, QUOTE, shown, sizeof (shown));
    if (job->partition && *job->partition)
        pinopt_quote (job->partition, QUOTE, part, sizeof (part));
    else
        snprintf (part, sizeof (part), "(default)");

    if (rules->forced_policy >= 0) {
        const char *fname = place_policy_name ((enum place_policy)eff.policy);
        if (eff.forced_over_option) {
            errno = EINVAL;
            return errprintf (errp,
                              "--pin-policy=%s: partition %s forces "
                              "%s; leave --pin-policy out or give %s",
                              shown,
                              part,
                              fname,
                              fname);
        }
        d->source =
            eff.source == PIN_CONF_FROM_OPTION ? SUBMIT_ASKED : SUBMIT_FORCED;
        d->policy = eff.policy;
        d->verbose = opt.verbose;
        why = d->source == SUBMIT_ASKED ? "asked, forced by partition"
                                        : "forced by partition";
    } else if (eff.source == PIN_CONF_FROM_OPTION) {
        unsigned mask = rules->allowed_policies;
        bool none_ok = pin_conf_none_permitted (conf, user, job->account);

        if (!none_ok)
            mask &= ~(1u << PLACE_NONE);
        if (!(rules->allowed_policies & (1u << eff.policy))) {
            errno = EINVAL;
            return errprintf (errp,
                              "--pin-policy=%s: not allowed in "
                              "partition %s; allowed: %s",
                              shown,
                              part,
                              submit_policy_names (mask,
                                                   allowed,
                                                   sizeof (allowed)));
        }
        if (eff.policy == PLACE_NONE && !none_ok) {
            errno = EINVAL;
            return errprintf (errp,
                              "--pin-policy=%s: only the users and "
                              "accounts of pin.conf's NoneUsers and "
                              "NoneAccounts may choose none; allowed: %s",
                              shown,
                              submit_policy_names (mask,
                                                   allowed,
                                                   sizeof (allowed)));
        }
        d->source = SUBMIT_ASKED;
        d->policy = eff.policy;
        d->verbose = opt.verbose;
        why = "asked";
    } else {
        if (eff.defaults_differ) {
            errno = EINVAL;
            return errprintf (errp,
                              "partitions %s have different pin.conf "
                              "DefaultPolicy; give --pin-policy (allowed: "
                              "%s) or one partition",
                              part,
                              submit_policy_names (rules->allowed_policies,
                                                   allowed,
                                                   sizeof (allowed)));
        }
        if (ctx && !(job->partition && strchr (job->partition, ','))) {
            struct submit_enrolment en;
            if (submit_exp_enrol (rules, job, ctx->uid, ctx->now, ctx->book, &en)
                    == 0
                && en.enrolled) {
                d->source = SUBMIT_EXPERIMENT;
                d->policy = en.arm;
                snprintf (d->admin_token,
                          sizeof (d->admin_token),
                          "%s%s/%s/%s",
                          ACCT_EXP_TOKEN,
                          en.experiment,
                          place_policy_name ((enum place_policy)en.arm),
                          en.block);
                snprintf (whybuf,
                          sizeof (whybuf),
                          "experiment %s, arm %d of %d; opt out with "
                          "--pin-policy",
                          en.experiment,
                          en.arm_index + 1,
                          en.narms);
                why = whybuf;
            } else if (en.experiment[0])
                snprintf (d->exp_why,
                          sizeof (d->exp_why),
                          "not enrolled in experiment %s: %.80s",
                          en.experiment,
                          en.why[0] ? en.why : "out of memory");
        }
        if (d->source != SUBMIT_EXPERIMENT) {
            if (eff.policy == PLACE_NONE)
                return 0; /* SUBMIT_NONE: the job is left alone */
            d->source = SUBMIT_DEFAULT;
            d->policy = eff.policy;
            why = eff.source == PIN_CONF_FROM_PARTITION_DEFAULT
                      ? "partition default"
                      : "site default";
        }
    }
    if (d->source != SUBMIT_ASKED)
        snprintf (d->write_value,
                  sizeof (d->write_value),
                  "%s",
                  place_policy_name ((enum place_policy)d->policy));
    translate (job, rules->spread_sockets, d, added, sizeof (added));
    gpu_binding (job,
                 rules->gpu_binding == PIN_GPU_BINDING_ENFORCE,
                 d,
                 added,
                 sizeof (added));
    snprintf (d->note,
              sizeof (d->note),
              "pin: %s (%s)%s%s",
              place_policy_name ((enum place_policy)d->policy),
              why,
              added[0] ? "; added " : "",
              added);
    return 0;
}

void submit_tres_drop_cpu (char *tres)
{
    char *r = tres, *w = tres;

    if (!tres)
        return;
    while (*r) {
        size_t len = strcspn (r, ",");
        bool cpu = strncmp (r, "cpu", 3) == 0 && (r[3] == '=' || r[3] == ':');

        if (!cpu) {
            if (w != tres)
                *w++ = ',';
            memmove (w, r, len);
            w += len;
        }
        r += len;
        if (*r == ',')
            r++;
    }
    *w = '\0';
}

void submit_apply_fields (job_desc_msg_t *job, const struct submit_decision *d)
{
    if (d->threads_per_core != NO_VAL16)
        job->threads_per_core = d->threads_per_core;
    if (d->task_dist != NO_VAL)
        job->task_dist = d->task_dist;
    if (d->num_tasks != NO_VAL) {
        job->num_tasks = d->num_tasks;
        job->bitflags |= JOB_NTASKS_SET;
    }
    if (d->cpus_per_task != NO_VAL16) {
        job->cpus_per_task = d->cpus_per_task;
        submit_tres_drop_cpu (job->tres_per_task);
    }
    if (d->ntasks_per_socket != NO_VAL16)
        job->ntasks_per_socket = d->ntasks_per_socket;
    if (d->gres_enforce_binding)
        job->bitflags |= GRES_ENFORCE_BIND;
}

/* vi: ts=4 sw=4 expandtab
 */
