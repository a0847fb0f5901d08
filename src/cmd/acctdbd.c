/* acctdbd.c - records of jobs from slurmdbd (acctdbd.h) */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <json-c/json.h>
#include <slurm/slurm.h>
#include <slurm/slurmdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acctdbd.h"
#include "libacct/summary.h"
#include "slurm_compat.h"

/* sacct's spelling of a job or step state (src/common/slurm_protocol_defs.c
 * job_state_string; the base states of 22.05, in enum job_states order). */
static void state_name (uint32_t state, uint32_t requid, char *buf, size_t n)
{
    static const char *const names[] = {
        "PENDING",
        "RUNNING",
        "SUSPENDED",
        "COMPLETED",
        "CANCELLED",
        "FAILED",
        "TIMEOUT",
        "NODE_FAIL",
        "PREEMPTED",
        "BOOT_FAIL",
        "DEADLINE",
        "OUT_OF_MEMORY",
    };
    uint32_t base = state & JOB_STATE_BASE;

    if (base >= sizeof (names) / sizeof (names[0]))
        snprintf (buf, n, "UNKNOWN");
    else if (base == JOB_CANCELLED && requid != (uint32_t)-1
             && requid != NO_VAL)
        snprintf (buf, n, "CANCELLED by %u", requid); /* as sacct prints it */
    else
        snprintf (buf, n, "%s", names[base]);
}

/* The count of TRES `want` in a TRES string "1=4,2=1000,..." (ids: 1
 * cpu, 2 mem, 4 node); `none` when it is not there. */
static uint64_t tres_count (const char *tres,
                            unsigned long want,
                            uint64_t none)
{
    const char *p = tres;

    while (p && *p) {
        char *end;
        unsigned long id = strtoul (p, &end, 10);
        if (end != p && *end == '=') {
            unsigned long long v = strtoull (end + 1, &end, 10);
            if (id == want)
                return v;
        }
        p = strchr (p, ',');
        if (p)
            p++;
    }
    return none;
}

static uint32_t tres_cpus (const char *tres)
{
    uint64_t v = tres_count (tres, 1, 0);
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* slurmdbd's own values of the job (dbd_job) and of a step (dbd_step) */
static void dbd_job (struct acct_dbd *d, const slurmdb_job_rec_t *job)
{
    memset (d, 0, sizeof (*d));
    d->valid = true;
    d->start = job->start;
    d->end = job->end;
    d->elapsed = job->elapsed;
    d->exit_code = (int32_t)job->exitcode;
    d->gid = job->gid;
    d->nnodes = job->alloc_nodes;
    d->mem_per_cpu = (job->req_mem & MEM_PER_CPU) != 0;
    d->req_mem = job->req_mem & ~MEM_PER_CPU;
    d->req_tres_mem = tres_count (job->tres_req_str, 2, 0);
    d->alloc_tres_mem = tres_count (job->tres_alloc_str, 2, 0);
    if (job->steps) {
        list_itr_t *it = slurm_list_iterator_create (job->steps);
        slurmdb_step_rec_t *s;
        while ((s = slurm_list_next (it))) {
            const slurmdb_stats_t *st = &s->stats;
            uint64_t v;
            /* seff's loop: the first step of the largest value wins, an
             * unknown value (INFINITE64) counts as 0 */
            if (st->tres_usage_in_max) {
                v = tres_count (st->tres_usage_in_max, 2, 0);
                v = v == (uint64_t)INFINITE64 ? 0 : v;
                if (v > d->rss_max) {
                    d->rss_max = v;
                    d->rss_ntasks = s->ntasks;
                }
            }
            if (st->tres_usage_in_tot) {
                v = tres_count (st->tres_usage_in_tot, 2, 0);
                v = v == (uint64_t)INFINITE64 ? 0 : v;
                if (v > d->rss_tot) {
                    d->rss_tot = v;
                    d->rss_tot_max = tres_count (st->tres_usage_in_max, 2, 0);
                    if (d->rss_tot_max == (uint64_t)INFINITE64)
                        d->rss_tot_max = 0;
                    d->rss_tot_ave = tres_count (st->tres_usage_in_ave, 2, 0);
                }
            }
        }
        slurm_list_iterator_destroy (it);
    }
}

static void dbd_step (struct acct_dbd *d, const slurmdb_step_rec_t *s)
{
    memset (d, 0, sizeof (*d));
    d->valid = true;
    d->start = s->start;
    d->end = s->end;
    d->elapsed = s->elapsed;
    d->exit_code = s->exitcode;
    d->ntasks = s->ntasks;
    if (s->stats.tres_usage_in_max) {
        uint64_t u = (uint64_t)INFINITE64;
        d->max_rss = tres_count (s->stats.tres_usage_in_max, 2, u);
        d->ave_rss = tres_count (s->stats.tres_usage_in_ave, 2, u);
        d->tot_rss = tres_count (s->stats.tres_usage_in_tot, 2, u);
        d->has_rss = true;
    }
}

struct ctx {
    const slurmdb_job_rec_t *job;
    acct_record_cb cb;
    void *arg;
    unsigned *bad;
    int rc;
    /* slurmdbd's AllocCPUS is the whole job's or step's, all nodes; the
     * table adds up the nodes' records, so only the first record of the
     * job and of each step gets it, the others 0 */
    bool job_seen;
    uint32_t *steps_seen;
    size_t nsteps_seen, capsteps_seen;
    bool raw; /* the records as the nodes wrote them */
};

/* Is this the first record of step `id` in the summary?  -1: no memory. */
static int first_of_step (struct ctx *c, uint32_t id)
{
    for (size_t i = 0; i < c->nsteps_seen; i++)
        if (c->steps_seen[i] == id)
            return 0;
    if (c->nsteps_seen == c->capsteps_seen) {
        size_t cap = c->capsteps_seen ? 2 * c->capsteps_seen : 16;
        uint32_t *n = realloc (c->steps_seen, cap * sizeof (*n));
        if (!n)
            return -1;
        c->steps_seen = n;
        c->capsteps_seen = cap;
    }
    c->steps_seen[c->nsteps_seen++] = id;
    return 1;
}

static void set_times (struct acct_record *r,
                       time_t start,
                       time_t end,
                       uint32_t elapsed)
{
    if (start > 0)
        r->start_us = (int64_t)start * 1000000;
    if (end > 0)
        r->end_us = (int64_t)end * 1000000;
    r->elapsed_us = (int64_t)elapsed * 1000000;
}

static bool dbd_duplicates;

void acct_source_dbd_duplicates (bool on)
{
    dbd_duplicates = on;
}

/* slurmdbd's connection and QOS list while acct_source_dbd_records runs
 * (QOS: the names of the ids, read once, as sacct does) */
static void *dbd_conn;
static list_t *dbd_qos;
static bool dbd_qos_read;

/* TRES `id` (2 mem, 4 node) of slurmdbd's "1=4,2=1000,4=1"; 0 when it
 * is not there or unknown (INFINITE64, NO_VAL64). */
static uint64_t tres_of (const char *tres, unsigned long id)
{
    for (const char *p = tres; p && *p;) {
        char *end;
        unsigned long k = strtoul (p, &end, 10);
        if (end != p && *end == '=' && k == id) {
            unsigned long long v = strtoull (end + 1, NULL, 10);
            return v >= (unsigned long long)NO_VAL64 ? 0 : (uint64_t)v;
        }
        p = strchr (p, ',');
        if (p)
            p++;
    }
    return 0;
}

/* libslurm's reason names, exported but in no header: the name changed
 * in 23.02; whichever this libslurm has */
extern char *slurm_job_reason_string (int inx) __attribute__ ((weak));
extern char *slurm_job_state_reason_string (int inx) __attribute__ ((weak));

/* Account, QOS, Reason, Submit, Timelimit, ReqMem, NNodes and a step's
 * MaxRSS: slurmdbd's, read through libslurmdb as sacct reads them. */
static void dbd_values (struct acct_record *r, const slurmdb_job_rec_t *job)
{
    if (job->account)
        snprintf (r->account, sizeof (r->account), "%s", job->account);
    if (!dbd_qos_read && dbd_conn) {
        slurmdb_qos_cond_t qc;
        memset (&qc, 0, sizeof (qc));
#ifdef QOS_COND_FLAG_WITH_DELETED /* 23.02 on: a flag */
        qc.flags |= QOS_COND_FLAG_WITH_DELETED;
#else
        qc.with_deleted = 1;
#endif
        dbd_qos = slurmdb_qos_get (dbd_conn, &qc);
        dbd_qos_read = true;
    }
    r->qos[0] = '\0';
    if (dbd_qos) {
        list_itr_t *it = slurm_list_iterator_create (dbd_qos);
        slurmdb_qos_rec_t *q;
        while ((q = slurm_list_next (it)))
            if (q->id == job->qosid && q->name) {
                snprintf (r->qos, sizeof (r->qos), "%s", q->name);
                break;
            }
        slurm_list_iterator_destroy (it);
    }
    r->reason[0] = '\0';
    if (slurm_job_state_reason_string)
        snprintf (r->reason,
                  sizeof (r->reason),
                  "%s",
                  slurm_job_state_reason_string ((int)job->state_reason_prev));
    else if (slurm_job_reason_string)
        snprintf (r->reason,
                  sizeof (r->reason),
                  "%s",
                  slurm_job_reason_string ((int)job->state_reason_prev));
    r->submit_us = (int64_t)job->submit * 1000000;
    r->has_timelimit = true;
    r->timelimit = job->timelimit;
    r->req_mem = tres_of (job->tres_req_str, 2);
    r->nnodes = job->alloc_nodes;
    if (!r->nnodes)
        r->nnodes = (uint32_t)tres_of (job->tres_alloc_str, 4);
    r->has_max_rss = false;
    if (r->kind == ACCT_KIND_STEP && job->steps) {
        list_itr_t *it = slurm_list_iterator_create (job->steps);
        slurmdb_step_rec_t *st;
        while ((st = slurm_list_next (it))) {
            const char *max = st->stats.tres_usage_in_max;
            if (st->step_id.step_id != r->step_id)
                continue;
            r->nnodes = st->nnodes;
            /* "2=" present: a value, 0 included */
            if (max && (strstr (max, ",2=") || strncmp (max, "2=", 2) == 0)) {
                r->has_max_rss = true;
                r->max_rss = tres_of (max, 2);
            }
            break;
        }
        slurm_list_iterator_destroy (it);
    }
}

/* One record of the summary: parse it, put slurmdbd's values over the
 * fields sacct prints, pass it on. */
static int one_record (const char *node, json_object *rec, void *arg)
{
    struct ctx *c = arg;
    const slurmdb_job_rec_t *job = c->job;
    struct acct_record r;
    pin_error_t err = {""};
    const char *text;

    (void)node;
    text = json_object_to_json_string_ext (rec, JSON_C_TO_STRING_PLAIN);
    if (!text || acct_record_from_json (text, &r, &err) < 0) {
        if (c->bad)
            (*c->bad)++;
        return 0;
    }
    if (r.job_id != job->jobid
        && !(job->array_job_id && r.array_job_id == job->array_job_id
             && r.array_task_id == job->array_task_id)) {
        if (c->bad)
            (*c->bad)++;
        return 0;
    }
    if (c->raw)
        return c->cb (&r, c->arg);
    if (job->jobname)
        snprintf (r.job_name, sizeof (r.job_name), "%s", job->jobname);
    if (job->user)
        snprintf (r.user, sizeof (r.user), "%s", job->user);
    if (job->partition)
        snprintf (r.partition, sizeof (r.partition), "%s", job->partition);
    if (job->cluster)
        snprintf (r.cluster, sizeof (r.cluster), "%s", job->cluster);
    dbd_values (&r, job);
    if (r.kind == ACCT_KIND_JOB) {
        state_name (job->state, job->requid, r.state, sizeof (r.state));
        /* the record keeps its own microseconds (CPU efficiency);
         * Start, End, Elapsed and ExitCode print slurmdbd's */
        dbd_job (&r.dbd, job);
        r.exit_status = r.dbd.exit_code;
        /* the job's AllocCPUS in sacct is the job's, all nodes */
        if (tres_cpus (job->tres_alloc_str))
            r.alloc_cpus = c->job_seen ? 0 : tres_cpus (job->tres_alloc_str);
        c->job_seen = true;
    } else if (job->steps) {
        int first = first_of_step (c, r.step_id);
        list_itr_t *it = slurm_list_iterator_create (job->steps);
        slurmdb_step_rec_t *s;
        while ((s = slurm_list_next (it))) {
            if (s->step_id.step_id != r.step_id)
                continue;
            if (s->stepname)
                snprintf (r.job_name, sizeof (r.job_name), "%s", s->stepname);
            state_name (s->state, (uint32_t)-1, r.state, sizeof (r.state));
            dbd_step (&r.dbd, s);
            r.exit_status = r.dbd.exit_code;
            if (first < 0)
                return -1;
            if (tres_cpus (s->tres_alloc_str))
                r.alloc_cpus = first ? tres_cpus (s->tres_alloc_str) : 0;
            break;
        }
        slurm_list_iterator_destroy (it);
    }
    return c->cb (&r, c->arg);
}

/* The records of a job slurm-pin has no summary of (cancelled while
 * pending, still running, or run where pin.so is not): slurmdbd's own
 * job and steps, as sacct lists them, with Slurm's CPU times (TotalCPU's
 * parts) and no placement. */
static int job_from_dbd (const slurmdb_job_rec_t *job,
                         acct_record_cb cb,
                         void *arg)
{
    struct acct_record r;
    list_itr_t *it;
    slurmdb_step_rec_t *s;
    int rc;

    acct_record_init (&r);
    r.kind = ACCT_KIND_JOB;
    r.job_id = job->jobid;
    if (job->array_job_id) {
        r.array_job_id = job->array_job_id;
        r.array_task_id = job->array_task_id;
    }
    r.uid = job->uid;
    snprintf (r.cluster,
              sizeof (r.cluster),
              "%s",
              job->cluster ? job->cluster : "");
    snprintf (r.user, sizeof (r.user), "%s", job->user ? job->user : "");
    snprintf (r.partition,
              sizeof (r.partition),
              "%s",
              job->partition ? job->partition : "");
    snprintf (r.job_name,
              sizeof (r.job_name),
              "%s",
              job->jobname ? job->jobname : "");
    snprintf (r.node, sizeof (r.node), "%s", job->nodes ? job->nodes : "");
    r.alloc_cpus = tres_cpus (job->tres_alloc_str);
    /* NO_VAL: never started (dbd.start keeps it, Start prints None) */
    set_times (&r,
               job->start == (time_t)NO_VAL ? 0 : job->start,
               job->end,
               job->elapsed);
    r.user_usec = job->user_cpu_sec * 1000000 + job->user_cpu_usec;
    r.system_usec = job->sys_cpu_sec * 1000000 + job->sys_cpu_usec;
    /* The job line's CPU time as sacct makes it: the job's own (slurmdbd
     * leaves it 0) plus that of every step that ended (its state at least
     * JOB_COMPLETE); a step still running is left out. */
    if (job->steps) {
        it = slurm_list_iterator_create (job->steps);
        while ((s = slurm_list_next (it))) {
            if (s->state < JOB_COMPLETE)
                continue;
            r.user_usec += s->user_cpu_sec * 1000000 + s->user_cpu_usec;
            r.system_usec += s->sys_cpu_sec * 1000000 + s->sys_cpu_usec;
        }
        slurm_list_iterator_destroy (it);
    }
    state_name (job->state, job->requid, r.state, sizeof (r.state));
    dbd_job (&r.dbd, job);
    r.dbd.alone = true;
    r.exit_status = r.dbd.exit_code;
    dbd_values (&r, job); /* Account, QOS, Submit, ... as sacct */
    if ((rc = cb (&r, arg)))
        return rc;
    if (!job->steps)
        return 0;
    it = slurm_list_iterator_create (job->steps);
    while (rc == 0 && (s = slurm_list_next (it))) {
        struct acct_record st = r;

        st.kind = ACCT_KIND_STEP;
        st.step_id = s->step_id.step_id;
        snprintf (st.job_name,
                  sizeof (st.job_name),
                  "%s",
                  s->stepname ? s->stepname : "");
        snprintf (st.node, sizeof (st.node), "%s", s->nodes ? s->nodes : "");
        st.alloc_cpus = tres_cpus (s->tres_alloc_str);
        st.start_us = st.end_us = st.elapsed_us = 0;
        set_times (&st, s->start, s->end, s->elapsed);
        st.user_usec = s->user_cpu_sec * 1000000 + s->user_cpu_usec;
        st.system_usec = s->sys_cpu_sec * 1000000 + s->sys_cpu_usec;
        state_name (s->state, (uint32_t)-1, st.state, sizeof (st.state));
        dbd_step (&st.dbd, s);
        st.dbd.alone = true;
        st.exit_status = st.dbd.exit_code;
        dbd_values (&st, job);
        rc = cb (&st, arg);
    }
    slurm_list_iterator_destroy (it);
    return rc;
}

int acct_source_dbd (const uint32_t *jobs,
                     size_t njobs,
                     time_t start,
                     time_t end,
                     acct_record_cb cb,
                     void *arg,
                     unsigned *bad,
                     pin_error_t *errp)
{
    return acct_source_dbd_records (jobs,
                                    njobs,
                                    start,
                                    end,
                                    false,
                                    cb,
                                    arg,
                                    bad,
                                    errp);
}

int acct_source_dbd_records (const uint32_t *jobs,
                             size_t njobs,
                             time_t start,
                             time_t end,
                             bool raw,
                             acct_record_cb cb,
                             void *arg,
                             unsigned *bad,
                             pin_error_t *errp)
{
    slurmdb_job_cond_t cond;
    void *db;
    list_t *list;
    list_itr_t *it;
    slurmdb_job_rec_t *job;
    int rc = 0;

    slurm_init (NULL);
    if (!(db = slurmdb_connection_get (NULL)))
        return errprintf (errp, "cannot connect to slurmdbd");
    memset (&cond, 0, sizeof (cond));
    cond.db_flags = SLURMDB_JOB_FLAG_NOTSET;
    if (dbd_duplicates)
        cond.flags |= JOBCOND_FLAG_DUP;
    /* sacct's and seff's default (sacct -T truncates): the job's own
     * start and end, not cut to the window, "None" for a job that never
     * started */
    cond.flags |= JOBCOND_FLAG_NO_TRUNC;
    if (njobs) {
        cond.step_list = slurm_list_create (free);
        for (size_t i = 0; i < njobs; i++) {
            slurm_selected_step_t *sel = calloc (1, sizeof (*sel));
            if (!sel) {
                slurm_list_destroy (cond.step_list);
                slurmdb_connection_close (&db);
                return errprintf (errp, "out of memory");
            }
            sel->array_task_id = NO_VAL;
            sel->het_job_offset = NO_VAL;
            sel->step_id.job_id = jobs[i];
            sel->step_id.step_id = NO_VAL;
            sel->step_id.step_het_comp = NO_VAL;
            slurm_list_append (cond.step_list, sel);
        }
    } else {
        cond.usage_start = start > 0 ? start : time (NULL) - 86400;
        cond.usage_end = end > 0 ? end : time (NULL);
    }
    list = slurmdb_jobs_get (db, &cond);
    if (cond.step_list)
        slurm_list_destroy (cond.step_list);
    if (!list) {
        slurmdb_connection_close (&db);
        return errprintf (errp, "slurmdbd did not answer the job query");
    }
    dbd_conn = db;
    it = slurm_list_iterator_create (list);
    while (rc == 0 && (job = slurm_list_next (it))) {
        struct acct_summary *s = NULL;
        char *other = NULL;
        struct ctx c = {job, cb, arg, bad, 0, false, NULL, 0, 0, raw};
        int prc;

        if (!acct_summary_present (job->admin_comment)) {
            if (!raw && job_from_dbd (job, cb, arg) < 0)
                rc = errprintf (errp, "out of memory");
            continue;
        }
        prc = acct_summary_parse (job->admin_comment, &other, &s, NULL);
        if (prc < 0) {
            rc = errprintf (errp, "out of memory");
            break;
        }
        if (prc == 1 && bad)
            (*bad)++;
        rc = acct_summary_foreach (s, one_record, &c);
        if (rc < 0)
            rc = errprintf (errp, "out of memory");
        free (c.steps_seen);
        acct_summary_destroy (s);
        free (other);
    }
    slurm_list_iterator_destroy (it);
    slurm_list_destroy (list);
    if (dbd_qos)
        slurm_list_destroy (dbd_qos);
    dbd_qos = NULL;
    dbd_qos_read = false;
    dbd_conn = NULL;
    slurmdb_connection_close (&db);
    return rc;
}
