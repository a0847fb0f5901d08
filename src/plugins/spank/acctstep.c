/* acctstep.c - the plugin's accounting glue (see acctstep.h)
 *
 * The step's identity (node, cluster, user, array ids, partition, job
 * name) comes from Slurm (ident.h), never from the job's environment,
 * which the user sets; strings are stored as valid UTF-8 by libacct.
 * Nothing here may fail a step.
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

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "libacct/acct.h"
#include "libaffinity/affinity.h"
#include "libtopo/topo.h"
#include "acctstep.h"

static struct {
    bool on;                    /* this step is accounted */
    const struct pin_conf *conf;
    char stepname[40];          /* "step 12.0" */
    struct acct_record rec;
    hwloc_bitmap_t cpus;        /* union of the tasks' affinity */
    char mems[ACCT_STR];        /* Mems_allowed_list of the first task */
    int worst_rank;
    int32_t worst;
    bool have_snap;             /* cpu.stat at the last task's exit */
    struct cg2_cpu_stat snap;
    int64_t last_exit_us;
} a;

static int64_t now_us (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void acctstep_begin (spank_t sp, const struct pin_conf *conf, uint32_t job,
                     uint32_t step, const char *stepname)
{
    struct acct_record *r = &a.rec;

    (void)sp;
    a.on = conf->accounting;
    if (!a.on)
        return;
    a.conf = conf;
    snprintf (a.stepname, sizeof (a.stepname), "step %s", stepname);
    acct_record_init (r);
    r->start_us = now_us ();
    r->kind = ACCT_KIND_STEP;
    r->job_id = job;
    r->step_id = step;
    a.cpus = hwloc_bitmap_alloc ();
    a.mems[0] = '\0';
    a.worst_rank = -1;
    a.worst = -1;
    a.have_snap = false;
    a.last_exit_us = 0;
}

void acctstep_task (pid_t pid)
{
    hwloc_bitmap_t set;
    char path[64], line[512];
    FILE *f;

    if (!a.on || pid <= 0)
        return;
    if (a.cpus && (set = hwloc_bitmap_alloc ())) {
        if (affinity_get (pid, set) == 0)
            hwloc_bitmap_or (a.cpus, a.cpus, set);
        hwloc_bitmap_free (set);
    }
    if (a.mems[0])
        return;
    snprintf (path, sizeof (path), "/proc/%d/status", (int)pid);
    if (!(f = fopen (path, "re")))
        return;
    while (fgets (line, sizeof (line), f)) {
        if (strncmp (line, "Mems_allowed_list:", 18) == 0) {
            char *v = line + 18;
            v += strspn (v, " \t");
            v[strcspn (v, "\n")] = '\0';
            acct_utf8_copy (a.mems, sizeof (a.mems), v, strlen (v));
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

void acctstep_task_exit (spank_t sp, bool last, cg2_t *cg, const char *rel)
{
    int st = 0;

    if (!a.on)
        return;
    if (spank_get_item (sp, S_TASK_EXIT_STATUS, &st) == ESPANK_SUCCESS
        && status_rank (st) > a.worst_rank) {
        a.worst_rank = status_rank (st);
        a.worst = st;
    }
    if (!last)
        return;
    a.last_exit_us = now_us ();
    if (cg && rel && rel[0]
        && cg2_read_cpu_stat (cg, rel, &a.snap, NULL) == 0)
        a.have_snap = true;
}

static bool read_u64 (cg2_t *cg, const char *rel, const char *file,
                      const char *key, uint64_t *v)
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
static int measure (struct acct_record *r, cg2_t *cg, const char *rel,
                    bool use_snap, pin_error_t *errp)
{
    struct cg2_cpu_stat st;
    uint64_t v;

    if (cg2_read_cpu_stat (cg, rel, &st, errp) < 0) {
        if (!use_snap || !a.have_snap)
            return -1;
        st = a.snap;    /* Slurm removed it already: the last task's */
    }
    else if (use_snap && a.have_snap && st.usage_usec < a.snap.usage_usec)
        st = a.snap;
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
    snprintf (r->cgroup, sizeof (r->cgroup), "%s%s%s", cg2_root (cg),
              rel[0] == '/' ? "" : "/", rel);
    return 0;
}

static void append (const struct acct_record *r, const char *what)
{
    pin_error_t err = { "" };

    if (acct_journal_append_max (a.conf->journal_dir, r,
                                 a.conf->journal_max_size, &err) < 0)
        slurm_error ("pin: %s: accounting: %s", what, err.text);
}

void acctstep_end (spank_t sp, const struct acctstep_info *in)
{
    struct acct_record *r = &a.rec;
    pin_error_t err = { "" };
    uint64_t oom = 0;
    char *c;

    if (!a.on)
        return;
    a.on = false;
    if (in->ident) {
        const struct step_ident *id = in->ident;
        r->uid = id->uid;
        snprintf (r->node, sizeof (r->node), "%s", id->node);
        snprintf (r->cluster, sizeof (r->cluster), "%s", id->cluster);
        snprintf (r->user, sizeof (r->user), "%s", id->user);
        snprintf (r->partition, sizeof (r->partition), "%s", id->partition);
        snprintf (r->job_name, sizeof (r->job_name), "%s", id->job_name);
        r->array_job_id = id->array_job_id;
        r->array_task_id = id->array_task_id;
    }
    r->end_us = a.last_exit_us ? a.last_exit_us : now_us ();
    r->elapsed_us = r->end_us - r->start_us;
    snprintf (r->mode, sizeof (r->mode), "%s", in->mode ? in->mode : "");
    snprintf (r->policy, sizeof (r->policy), "%s",
              in->policy ? in->policy : "none");
    snprintf (r->fallback, sizeof (r->fallback), "%s",
              in->fallback ? in->fallback : "");
    r->has_seed = in->has_seed;
    r->seed = in->seed;
    r->confined_us = in->confined_us;
    r->confine_use = in->confine_use;
    snprintf (r->confine_cpus, sizeof (r->confine_cpus), "%s",
              in->confine_cpus ? in->confine_cpus : "");
    snprintf (r->confine_mems, sizeof (r->confine_mems), "%s",
              in->confine_mems ? in->confine_mems : "");
    if (in->cpus)
        snprintf (r->cpus, sizeof (r->cpus), "%s", in->cpus);
    else if (a.cpus && !hwloc_bitmap_iszero (a.cpus)
             && (c = topo_list_format (a.cpus))) {
        snprintf (r->cpus, sizeof (r->cpus), "%s", c);
        free (c);
    }
    snprintf (r->mems, sizeof (r->mems), "%s", in->mems ? in->mems : a.mems);
    r->alloc_cpus = in->alloc_cpus;
    if (!r->alloc_cpus) {
        uint16_t n = 0;
        if (spank_get_item (sp, S_JOB_NCPUS, &n) == ESPANK_SUCCESS)
            r->alloc_cpus = n;
    }
    r->source = ACCT_SRC_STEP_CGROUP;
    if (in->cg && in->rel && in->rel[0]) {
        if (measure (r, in->cg, in->rel, true, &err) < 0) {
            if (r->step_id != ACCT_STEP_EXTERN)
                slurm_error ("pin: %s: accounting: %s (CPU times "
                             "recorded as 0)", a.stepname, err.text);
            r->cgroup[0] = '\0';
        }
        (void)read_u64 (in->cg, in->rel, "memory.events", "oom_kill", &oom);
    }
    if (r->step_id == ACCT_STEP_EXTERN) {
        r->exit_status = 0;     /* Slurm ends it with the job */
        snprintf (r->state, sizeof (r->state), "COMPLETED");
    }
    else {
        r->exit_status = a.worst;
        snprintf (r->state, sizeof (r->state), "%s",
                  acct_state_of_status (a.worst, oom > 0));
    }
    append (r, a.stepname);

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
            if (measure (j, in->cg, in->job_rel, false, &err) == 0)
                append (j, a.stepname);
            else
                slurm_debug ("pin: %s: no job cgroup at the end: %s; "
                             "the job record comes from step records",
                             a.stepname, err.text);
            free (j);
        }
    }
    hwloc_bitmap_free (a.cpus);
    a.cpus = NULL;
}

/* The epilog's own environment is slurmd's (prep_script_slurmd.c's
 * _build_env: what a user adds there arrives prefixed with SPANK_). */
static void epilog_env (const char *name, char *dst, size_t n)
{
    const char *v = getenv (name);

    dst[0] = '\0';
    if (v)
        acct_utf8_copy (dst, n, v, strnlen (v, 1024));
}

/* Job record J holds nothing of the job (no step of it wrote a record on
 * this node: its slurmstepd was killed or crashed, or no step ran here):
 * complete it with what the epilog knows, so that the job keeps a line. */
static void job_known (spank_t sp, struct acct_record *j, const char *what)
{
    uid_t uid;

    if (spank_get_item (sp, S_JOB_UID, &uid) == ESPANK_SUCCESS)
        j->uid = (uint32_t)uid;
    epilog_env ("SLURM_CLUSTER_NAME", j->cluster, sizeof (j->cluster));
    epilog_env ("SLURM_JOB_USER", j->user, sizeof (j->user));
    epilog_env ("SLURM_JOB_PARTITION", j->partition, sizeof (j->partition));
    j->start_us = 0;    /* unknown */
    j->end_us = now_us ();
    j->elapsed_us = 0;
    slurm_info ("pin: %s: no step of it left a record on this node (a "
                "slurmstepd killed, or no step ran here): its job record "
                "holds only what the epilog knows", what);
}

void acctstep_job_epilog (spank_t sp, const struct pin_conf *conf)
{
    struct acct_record *j;
    pin_error_t err = { "" };
    char node[ACCT_STR], what[64];
    uint32_t job = 0;
    int rc;

    if (!conf->accounting)
        return;
    if (spank_get_item (sp, S_JOB_ID, &job) != ESPANK_SUCCESS)
        return;
    if (!(j = malloc (sizeof (*j))))
        return;
    ident_node (0, 0, node, sizeof (node));  /* slurmd's, for the epilog */
    snprintf (what, sizeof (what), "job %" PRIu32, job);
    rc = acct_job_from_steps (conf->journal_dir, job, node, j, &err);
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
        slurm_error ("pin: %s: accounting: %s", what, err.text);
    if (rc == 2)
        job_known (sp, j, what);
    if (rc > 0) {
        a.conf = conf;
        append (j, what);
    }
    free (j);
}
