/* ident.c - who and where a step runs, from Slurm itself (ident.h) */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <slurm/slurm.h>
#include <slurm/spank.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ident.h"
#include "slurm_compat.h"

/* libslurm's, from the process that loads pin.so (slurmstepd, srun, ...);
 * weak, so that pin.so still loads where one is missing. */
extern slurm_conf_t slurm_conf __attribute__ ((weak));
#pragma weak slurm_load_job /* its type: slurm.h (slurm_compat.h) */
extern void slurm_free_job_info_msg (job_info_msg_t *msg)
    __attribute__ ((weak));
extern char *slurm_strerror (int errnum) __attribute__ ((weak));
#pragma weak slurm_hostlist_create
#pragma weak slurm_hostlist_find
#pragma weak slurm_hostlist_destroy
#pragma weak slurm_init

/* The position of node in the hostlist expression nodes, -1 if absent
 * (or without libslurm's hostlist in this process). */
static int node_index (const char *nodes, const char *node)
{
    int i = -1;

    if (!nodes || !node || !*node || !slurm_hostlist_create
        || !slurm_hostlist_find || !slurm_hostlist_destroy)
        return -1;
    __typeof__ (slurm_hostlist_create (NULL)) hl = slurm_hostlist_create (nodes);
    if (hl) {
        i = slurm_hostlist_find (hl, node);
        slurm_hostlist_destroy (hl);
    }
    return i;
}

bool ident_node_in (const char *expr, const char *node)
{
    return node_index (expr, node) >= 0;
}

static void copy (char *dst, size_t n, const char *src)
{
    acct_utf8_copy (dst, n, src ? src : "", src ? strlen (src) : 0);
}

static long long now_us (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Slurm: array_task_id NO_VAL (and array_job_id 0 or the job id) for a
 * plain job */
static void set_array (struct step_ident *id,
                       uint32_t array_job,
                       uint32_t array_task)
{
    if (array_job != 0 && array_job != NO_VAL && array_task != NO_VAL
        && array_task != INFINITE) {
        id->array_job_id = array_job;
        id->array_task_id = array_task;
    } else
        id->array_job_id = id->array_task_id = ACCT_NO_VAL;
}

/* The memory of slurmctld's ReqTRES text ("cpu=2,mem=2000M,node=1") in
 * MB, as slurmdbd's ReqMem holds it; 0 when not there. */
static uint64_t tres_mem_mb (const char *tres)
{
    const char *p = tres;

    while (p && *p) {
        if (strncmp (p, "mem=", 4) == 0) {
            char *end;
            double v = strtod (p + 4, &end);
            switch (*end) {
                case 'K':
                    v /= 1024;
                    break;
                case 'G':
                    v *= 1024;
                    break;
                case 'T':
                    v *= 1024.0 * 1024;
                    break;
                case 'P':
                    v *= 1024.0 * 1024 * 1024;
                    break;
            }
            return v > 0 ? (uint64_t)(v + 0.5) : 0;
        }
        p = strchr (p, ',');
        if (p)
            p++;
    }
    return 0;
}

int ident_job_info (uint32_t job, struct step_ident *id)
{
    job_info_msg_t *msg = NULL;
    long long t0;

    if (id->have_job_info)
        return 0;
    id->job_info_error[0] = '\0';
    if (!slurm_load_job || !slurm_free_job_info_msg) {
        snprintf (id->job_info_error,
                  sizeof (id->job_info_error),
                  "slurm_load_job() not available in this process");
        return -1;
    }
    t0 = now_us ();
    if (pin_load_job (&msg, job, SHOW_ALL | SHOW_LOCAL | SHOW_DETAIL) != 0 || !msg) {
        int e = errno;
        id->job_info_us = now_us () - t0;
        snprintf (id->job_info_error,
                  sizeof (id->job_info_error),
                  "slurmctld did not answer slurm_load_job(%u): %s",
                  job,
                  slurm_strerror ? slurm_strerror (e) : strerror (e));
        return -1;
    }
    id->job_info_us = now_us () - t0;
    for (uint32_t i = 0; i < msg->record_count; i++) {
        const slurm_job_info_t *j = &msg->job_array[i];
        if (j->job_id != job)
            continue;
        copy (id->partition, sizeof (id->partition), j->partition);
        copy (id->job_name, sizeof (id->job_name), j->name);
        set_array (id, j->array_job_id, j->array_task_id);
        id->have_job_info = true;
        copy (id->account, sizeof (id->account), j->account);
        copy (id->qos, sizeof (id->qos), j->qos);
        id->submit_us = (int64_t)j->submit_time * 1000000;
        id->has_timelimit = true;
        id->timelimit = j->time_limit;
        id->req_mem = tres_mem_mb (j->tres_req_str);
        /* a policy experiment's arm: only administrators and job_submit
         * plugins can set AdminComment (doc/experiments.md) */
        if (!acct_exp_token_parse (j->admin_comment,
                                   id->experiment,
                                   sizeof (id->experiment),
                                   id->arm,
                                   sizeof (id->arm),
                                   id->block,
                                   sizeof (id->block)))
            id->experiment[0] = id->arm[0] = id->block[0] = '\0';
        /* the job's GRES on this node (GPU indexes: doc/policies.md);
         * slurmctld fills gres_detail_str only for SHOW_DETAIL */
        int k = node_index (j->nodes, id->node);
        if (k >= 0 && (uint32_t)k < j->gres_detail_cnt && j->gres_detail_str) {
            copy (id->gres_detail,
                  sizeof (id->gres_detail),
                  j->gres_detail_str[k]);
            id->have_gres = true;
        } else if (k >= 0 && j->gres_detail_cnt == 0)
            id->have_gres = true; /* a job without GRES */
        break;
    }
    if (!id->have_job_info)
        snprintf (id->job_info_error,
                  sizeof (id->job_info_error),
                  "slurmctld does not know job %u",
                  job);
    slurm_free_job_info_msg (msg);
    return id->have_job_info ? 0 : -1;
}

/* sacct's spelling of a base job state (job_state_string, 22.05 to
 * 26.05, in enum job_states order); NULL for one slurmdbd would not end a
 * job in */
static const char *ended_state (uint32_t state)
{
    static const char *const names[] = {
        NULL,
        NULL,
        NULL,
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

    return base < sizeof (names) / sizeof (names[0]) ? names[base] : NULL;
}

static int job_end_query (uint32_t job,
                          const char *node,
                          struct ident_job_end *out)
{
    job_info_msg_t *msg = NULL;
    const char *st;

    memset (out, 0, sizeof (*out));
    if (!slurm_load_job || !slurm_free_job_info_msg)
        return -1;
    if (pin_load_job (&msg, job, SHOW_ALL | SHOW_LOCAL | SHOW_DETAIL) != 0
        || !msg)
        return -1;
    for (uint32_t i = 0; i < msg->record_count; i++) {
        const slurm_job_info_t *j = &msg->job_array[i];
        if (j->job_id != job || !(st = ended_state (j->job_state))
            || j->start_time <= 0 || j->end_time < j->start_time)
            continue;
        copy (out->state, sizeof (out->state), st);
        /* slurmdbd's job ExitCode is the one slurmctld logged when the
         * job ended; a job Slurm ended (time limit, scancel, preemption,
         * node failure, deadline) is logged before its batch script's
         * status arrives: 0:0 there, as sacct prints it */
        switch (j->job_state & JOB_STATE_BASE) {
            case JOB_TIMEOUT:
            case JOB_CANCELLED:
            case JOB_PREEMPTED:
            case JOB_NODE_FAIL:
            case JOB_DEADLINE:
            case JOB_BOOT_FAIL:
                out->exit_status = 0;
                break;
            default:
                out->exit_status = (int32_t)j->exit_code;
        }
        out->start_us = (int64_t)j->start_time * 1000000;
        out->end_us = (int64_t)j->end_time * 1000000;
        out->submit_us = (int64_t)j->submit_time * 1000000;
        /* a job on one node: its CPUs are this node's (slurmdbd's job
         * AllocCPUS, whole cores on an SMT node) */
        if (j->num_nodes == 1 && node_index (j->nodes, node) == 0)
            out->node_cpus = j->num_cpus;
        out->have = true;
        break;
    }
    slurm_free_job_info_msg (msg);
    return out->have ? 0 : -1;
}

/* In a child process: the epilog's process is not slurmstepd's own from
 * Slurm 24.11 (no hash or auth plugin loaded: libslurm's API calls
 * fatal() there, and a failing epilog drains the node).  The child loads
 * them with slurm_init(); whatever happens to it, the epilog goes on. */
int ident_job_end (uint32_t job, const char *node, struct ident_job_end *out)
{
    int pfd[2], st = 0;
    pid_t pid;
    ssize_t n = 0, got = 0;

    memset (out, 0, sizeof (*out));
    if (!slurm_load_job || !slurm_free_job_info_msg || pipe (pfd) < 0)
        return -1;
    if ((pid = fork ()) < 0) {
        close (pfd[0]);
        close (pfd[1]);
        return -1;
    }
    if (pid == 0) {
        struct ident_job_end r;
        close (pfd[0]);
        if (slurm_init)
            slurm_init (NULL);
        if (job_end_query (job, node, &r) == 0
            && write (pfd[1], &r, sizeof (r)) != (ssize_t)sizeof (r))
            _exit (1);
        _exit (0);
    }
    close (pfd[1]);
    while (got < (ssize_t)sizeof (*out)
           && ((n = read (pfd[0], (char *)out + got, sizeof (*out) - (size_t)got)) > 0
               || (n < 0 && errno == EINTR)))
        if (n > 0)
            got += n;
    close (pfd[0]);
    while (waitpid (pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (got != (ssize_t)sizeof (*out) || !out->have) {
        memset (out, 0, sizeof (*out));
        return -1;
    }
    return 0;
}

void ident_step (spank_t sp,
                 uint32_t job,
                 uint32_t step,
                 struct step_ident *id)
{
    uid_t uid = (uid_t)-1;
    uint32_t array_job = 0, array_task = NO_VAL;

    memset (id, 0, sizeof (*id));
    id->array_job_id = id->array_task_id = ACCT_NO_VAL;
    step_ident_node (job, step, id->node, sizeof (id->node));
    if (&slurm_conf && slurm_conf.cluster_name)
        copy (id->cluster, sizeof (id->cluster), slurm_conf.cluster_name);
    if (spank_get_item (sp, S_JOB_UID, &uid) == ESPANK_SUCCESS) {
        struct passwd pw, *res = NULL;
        char buf[4096];
        id->uid = (uint32_t)uid;
        if (getpwuid_r (uid, &pw, buf, sizeof (buf), &res) == 0 && res)
            copy (id->user, sizeof (id->user), res->pw_name);
    }
    /* S_JOB_ARRAY_ID and S_JOB_ARRAY_TASK_ID are slurmctld's in the batch
     * step only (its launch message); for a step srun started, Slurm 22.05's
     * slurmstepd reads them from SLURM_ARRAY_JOB_ID and SLURM_ARRAY_TASK_ID
     * of the environment srun sent, which the user sets.  So: slurmctld's
     * answer (ident_job_info), or the batch step's items, or none. */
    if (step == SLURM_BATCH_SCRIPT
        && spank_get_item (sp, S_JOB_ARRAY_ID, &array_job) == ESPANK_SUCCESS
        && spank_get_item (sp, S_JOB_ARRAY_TASK_ID, &array_task)
               == ESPANK_SUCCESS)
        set_array (id, array_job, array_task);
}
