/* account.c - a step's accounting record, and the job's at its end
 * (step.h; libacct/acct.h, doc/accounting.md)
 *
 * The step's identity (node, cluster, user, array ids, partition, job
 * name) comes from the caller, from Slurm (ident.h), never from the job's
 * environment, which the user sets; strings are stored as valid UTF-8 by
 * libacct.  Nothing here may fail a step: errors go to the sink.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "account.h"
#include "libacct/acct.h"
#include "libaffinity/affinity.h"
#include "libtopo/topo.h"

static int64_t now_us (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

struct stepacct *stepacct_begin (const struct pin_conf *conf,
                                 uint32_t job,
                                 uint32_t step,
                                 const char *stepname,
                                 const struct steplog *log)
{
    struct stepacct *a;
    struct acct_record *r;

    if (!conf->accounting || !(a = calloc (1, sizeof (*a))))
        return NULL;
    r = &a->rec;
    a->conf = conf;
    if (log)
        a->log = *log;
    snprintf (a->stepname, sizeof (a->stepname), "step %s", stepname);
    acct_record_init (r);
    r->start_us = now_us ();
    r->kind = ACCT_KIND_STEP;
    r->job_id = job;
    r->step_id = step;
    a->cpus = hwloc_bitmap_alloc ();
    a->mems[0] = '\0';
    a->worst_rank = -1;
    a->worst = -1;
    a->have_snap = false;
    a->last_exit_us = 0;
    return a;
}

void stepacct_destroy (struct stepacct *a)
{
    int saved = errno;

    if (a) {
        hwloc_bitmap_free (a->cpus);
        free (a);
    }
    errno = saved;
}

void stepacct_task (struct stepacct *a, pid_t pid)
{
    hwloc_bitmap_t set;
    char path[64], line[512];
    FILE *f;

    if (!a || pid <= 0)
        return;
    if (a->cpus && (set = hwloc_bitmap_alloc ())) {
        if (affinity_get (pid, set) == 0)
            hwloc_bitmap_or (a->cpus, a->cpus, set);
        hwloc_bitmap_free (set);
    }
    if (a->mems[0])
        return;
    snprintf (path, sizeof (path), "/proc/%d/status", (int)pid);
    if (!(f = fopen (path, "re")))
        return;
    while (fgets (line, sizeof (line), f)) {
        if (strncmp (line, "Mems_allowed_list:", 18) == 0) {
            char *v = line + 18;
            v += strspn (v, " \t");
            v[strcspn (v, "\n")] = '\0';
            acct_utf8_copy (a->mems, sizeof (a->mems), v, strlen (v));
            break;
        }
    }
    fclose (f);
}

/* 3 killed by a signal, 2 non-zero exit, 1 exit 0 */
static int status_rank (int st)
{
    if (WIFSIGNALED (st))
        return 3;
    return WIFEXITED (st) && WEXITSTATUS (st) ? 2 : 1;
}

void stepacct_task_exit (struct stepacct *a,
                         int st,
                         bool last,
                         cg2_t *cg,
                         const char *rel)
{
    if (!a || a->done)
        return;
    if (status_rank (st) > a->worst_rank) {
        a->worst_rank = status_rank (st);
        a->worst = st;
    }
    if (!last)
        return;
    a->last_exit_us = now_us ();
    if (cg && rel && rel[0]
        && cg2_read_cpu_stat (cg, rel, &a->snap, NULL) == 0)
        a->have_snap = true;
}

static bool read_u64 (cg2_t *cg,
                      const char *rel,
                      const char *file,
                      const char *key,
                      uint64_t *v)
{
    char *text = cg2_read (cg, rel, file, NULL), *p;
    size_t klen = key ? strlen (key) : 0;
    bool ok = false;

    if (!text)
        return false;
    for (p = text; p && *p; p = strchr (p, '\n'), p = p ? p + 1 : NULL) {
        if (key && (strncmp (p, key, klen) != 0 || p[klen] != ' '))
            continue;
        char *end;
        errno = 0;
        unsigned long long x = strtoull (p + klen + (key ? 1 : 0), &end, 10);
        if (!errno && end != p + klen)
            *v = x, ok = true;
        break;
    }
    free (text);
    return ok;
}

/* Fill the CPU fields from cgroup `rel`: 0, or -1 with errp. */
static int measure (struct stepacct *a,
                    struct acct_record *r,
                    cg2_t *cg,
                    const char *rel,
                    bool use_snap,
                    pin_error_t *errp)
{
    struct cg2_cpu_stat st;
    uint64_t v;

    if (cg2_read_cpu_stat (cg, rel, &st, errp) < 0) {
        if (!use_snap || !a->have_snap)
            return -1;
        st = a->snap; /* Slurm removed it already: the last task's */
    } else if (use_snap && a->have_snap && st.usage_usec < a->snap.usage_usec)
        st = a->snap;
    r->user_usec = st.user_usec;
    r->system_usec = st.system_usec;
    r->usage_usec = st.usage_usec;
    if (st.nr_periods || cg2_has_controller (cg, "cpu")) {
        r->has_throttle = true;
        r->nr_periods = st.nr_periods;
        r->nr_throttled = st.nr_throttled;
        r->throttled_usec = st.throttled_usec;
    }
    if (read_u64 (cg, rel, "memory.peak", NULL, &v)) {
        r->has_mem_peak = true;
        r->mem_peak = v;
    }
    snprintf (r->cgroup,
              sizeof (r->cgroup),
              "%s%s%s",
              cg2_root (cg),
              rel[0] == '/' ? "" : "/",
              rel);
    return 0;
}

static void append (const struct stepacct *a,
                    const struct acct_record *r,
                    const char *what)
{
    pin_error_t err = {""};

    if (acct_journal_append_max (a->conf->journal_dir,
                                 r,
                                 a->conf->journal_max_size,
                                 &err)
        < 0)
        steplog (&a->log,
                 STEPLOG_ERROR,
                 "pin: %s: accounting: %s",
                 what,
                 err.text);
}

void stepacct_end (struct stepacct *a, const struct stepacct_info *in)
{
    struct acct_record *r = &a->rec;
    pin_error_t err = {""};
    uint64_t oom = 0;
    char *c;

    if (!a || a->done)
        return;
    a->done = true;
    if (in->ident) {
        const struct step_ident *id = in->ident;
        r->uid = id->uid;
        snprintf (r->node, sizeof (r->node), "%s", id->node);
        snprintf (r->cluster, sizeof (r->cluster), "%s", id->cluster);
        snprintf (r->user, sizeof (r->user), "%s", id->user);
        snprintf (r->partition, sizeof (r->partition), "%s", id->partition);
        snprintf (r->job_name, sizeof (r->job_name), "%s", id->job_name);
        snprintf (r->experiment, sizeof (r->experiment), "%s", id->experiment);
        snprintf (r->arm, sizeof (r->arm), "%s", id->arm);
        snprintf (r->block, sizeof (r->block), "%s", id->block);
        snprintf (r->account, sizeof (r->account), "%s", id->account);
        snprintf (r->qos, sizeof (r->qos), "%s", id->qos);
        r->submit_us = id->submit_us;
        r->has_timelimit = id->has_timelimit;
        r->timelimit = id->timelimit;
        r->req_mem = id->req_mem;
        r->array_job_id = id->array_job_id;
        r->array_task_id = id->array_task_id;
    }
    r->end_us = a->last_exit_us ? a->last_exit_us : now_us ();
    r->elapsed_us = r->end_us - r->start_us;
    snprintf (r->mode, sizeof (r->mode), "%s", in->mode ? in->mode : "");
    snprintf (r->policy,
              sizeof (r->policy),
              "%s",
              in->policy ? in->policy : "none");
    snprintf (r->fallback,
              sizeof (r->fallback),
              "%s",
              in->fallback ? in->fallback : "");
    snprintf (r->gpus, sizeof (r->gpus), "%s", in->gpus ? in->gpus : "");
    snprintf (r->nic, sizeof (r->nic), "%s", in->nic ? in->nic : "");
    r->has_seed = in->has_seed;
    r->seed = in->seed;
    r->confined_us = in->confined_us;
    r->confine_use = in->confine_use;
    snprintf (r->confine_cpus,
              sizeof (r->confine_cpus),
              "%s",
              in->confine_cpus ? in->confine_cpus : "");
    snprintf (r->confine_mems,
              sizeof (r->confine_mems),
              "%s",
              in->confine_mems ? in->confine_mems : "");
    if (in->cpus)
        snprintf (r->cpus, sizeof (r->cpus), "%s", in->cpus);
    else if (a->cpus && !hwloc_bitmap_iszero (a->cpus)
             && (c = topo_list_format (a->cpus))) {
        snprintf (r->cpus, sizeof (r->cpus), "%s", c);
        free (c);
    }
    snprintf (r->mems, sizeof (r->mems), "%s", in->mems ? in->mems : a->mems);
    r->alloc_cpus = in->alloc_cpus;
    r->source = ACCT_SRC_STEP_CGROUP;
    if (in->cg && in->rel && in->rel[0]) {
        if (measure (a, r, in->cg, in->rel, true, &err) < 0) {
            if (r->step_id != ACCT_STEP_EXTERN)
                steplog (&a->log,
                         STEPLOG_ERROR,
                         "pin: %s: accounting: %s (CPU times "
                         "recorded as 0)",
                         a->stepname,
                         err.text);
            r->cgroup[0] = '\0';
        }
        (void)read_u64 (in->cg, in->rel, "memory.events", "oom_kill", &oom);
    }
    if (r->step_id == ACCT_STEP_EXTERN) {
        r->exit_status = 0; /* Slurm ends it with the job */
        snprintf (r->state, sizeof (r->state), "COMPLETED");
    } else {
        r->exit_status = a->worst;
        snprintf (r->state,
                  sizeof (r->state),
                  "%s",
                  acct_state_of_status (a->worst, oom > 0));
    }
    append (a, r, a->stepname);

    /* nested mode: the extern step ends with the job, and Slurm's job
     * cgroup still holds the CPU time of all its steps on this node */
    if (r->step_id == ACCT_STEP_EXTERN && in->cg && in->job_rel
        && in->job_rel[0]) {
        struct acct_record *j = malloc (sizeof (*j));
        if (j) {
            *j = *r;
            j->kind = ACCT_KIND_JOB;
            j->step_id = ACCT_NO_VAL;
            j->source = ACCT_SRC_JOB_CGROUP;
            j->has_throttle = j->has_mem_peak = false;
            j->user_usec = j->system_usec = j->usage_usec = 0;
            if (measure (a, j, in->cg, in->job_rel, false, &err) == 0)
                append (a, j, a->stepname);
            else
                steplog (&a->log,
                         STEPLOG_DEBUG,
                         "pin: %s: no job cgroup at the end: %s; "
                         "the job record comes from step records",
                         a->stepname,
                         err.text);
            free (j);
        }
    }
    hwloc_bitmap_free (a->cpus);
    a->cpus = NULL;
}

/* What slurmd put in the epilog's own environment, bounded. */
static void epilog_copy (const char *v, char *dst, size_t n)
{
    dst[0] = '\0';
    if (v)
        acct_utf8_copy (dst, n, v, strnlen (v, 1024));
}

/* Job record J holds nothing of the job (no step of it wrote a record on
 * this node: its slurmstepd was killed or crashed, or no step ran here):
 * complete it with what the epilog knows, so that the job keeps a line. */
static void job_known (const struct stepacct_epilog *in,
                       struct acct_record *j,
                       const char *what)
{
    if (in->have_uid)
        j->uid = in->uid;
    epilog_copy (in->cluster, j->cluster, sizeof (j->cluster));
    epilog_copy (in->user, j->user, sizeof (j->user));
    epilog_copy (in->partition, j->partition, sizeof (j->partition));
    j->start_us = 0; /* unknown */
    j->end_us = now_us ();
    j->elapsed_us = 0;
    steplog (in->log,
             STEPLOG_INFO,
             "pin: %s: no step of it left a record on this node (a "
             "slurmstepd killed, or no step ran here): its job record "
             "holds only what the epilog knows",
             what);
}

void stepacct_job_epilog (const struct pin_conf *conf,
                          const struct stepacct_epilog *in)
{
    struct acct_record *j;
    pin_error_t err = {""};
    char node[ACCT_STR], what[64];
    struct stepacct a = {.conf = conf};
    uint32_t job = in->job;
    int rc;

    if (!conf->accounting)
        return;
    if (in->log)
        a.log = *in->log;
    if (!(j = malloc (sizeof (*j))))
        return;
    step_ident_node (0, 0, node, sizeof (node)); /* slurmd's, for the epilog */
    snprintf (what, sizeof (what), "job %" PRIu32, job);
    rc = acct_job_from_steps_at (conf->journal_dir,
                                 job,
                                 in->have_slurm ? in->slurm_submit_us : 0,
                                 node,
                                 j,
                                 &err);
    if (rc < 0 && errno == ENOENT) {
        /* no journal yet: nothing of the job either */
        acct_record_init (j);
        j->kind = ACCT_KIND_JOB;
        j->job_id = job;
        j->nsteps = 0;
        snprintf (j->state, sizeof (j->state), "UNKNOWN");
        snprintf (j->policy, sizeof (j->policy), "none");
        snprintf (j->node, sizeof (j->node), "%s", node);
        j->source = ACCT_SRC_STEP_SUM;
        rc = 2;
    }
    if (rc < 0)
        steplog (in->log,
                 STEPLOG_ERROR,
                 "pin: %s: accounting: %s",
                 what,
                 err.text);
    if (rc == 2)
        job_known (in, j, what);
    if (rc > 0 && in->have_slurm) {
        /* one definition of the job line, whichever source is read
         * (doc/accounting-reports.md): slurmctld's, as slurmdbd keeps it */
        snprintf (j->state, sizeof (j->state), "%s", in->slurm_state);
        j->exit_status = in->slurm_exit_status;
        j->start_us = in->slurm_start_us;
        j->end_us = in->slurm_end_us;
        j->elapsed_us = j->end_us - j->start_us;
        if (in->slurm_cpus)
            j->alloc_cpus = in->slurm_cpus;
    }
    if (rc > 0) {
        append (&a, j, what);
    }
    free (j);
}
