/* step_private.h - the step object, shared by libstep's own files
 * (step.c, profile.c); callers see only step.h. */
#ifndef PIN_STEP_PRIVATE_H
#define PIN_STEP_PRIVATE_H

#include <limits.h>

#include "libtopo/topo.h"
#include "profclient.h"
#include "step.h"
#include "stepwatch.h"

#define MAX_PIDS 64            /* pids remembered for the stderr line */
#define LOCK_TIMEOUT_MS 10000  /* wait for other steps' plan-and-apply */
#define RMDIR_TIMEOUT_MS 10000 /* EBUSY retries when removing our tree */
#define CONTROLLERS "+cpuset +cpu"

/* What pin_step_apply_task did for each task, in memory shared with the
 * task processes, which read it in task_init (they were forked before
 * task_post_fork ran, and released only after it). */
struct task_status {
    int state;
    char msg[sizeof (((pin_error_t *)0)->text)];
};

struct pin_step {
    const struct pin_conf *conf;
    uint32_t job, step;
    char stepname[32];
    int policy;
    bool batch;
    uint32_t ntasks, cpus_per_task;
    uint64_t seed;
    struct phases *ph;
    struct steplog log;

    topo_t *topo;
    hwloc_bitmap_t allowed;   /* PUs the step is placed in (moved onto
                                 the job's by --overlap) */
    hwloc_bitmap_t job_cpus;  /* PUs of the job on this node */
    hwloc_bitmap_t plan_cpus; /* union of the tasks' PUs */
    bool moved;               /* placed outside the step's own cores */
    bool widened;             /* nested: Slurm's step cpuset widened */
    struct place_plan *plan;  /* NULL for policy none and dynamic */
    enum cg2_mode mode;
    bool cpuset; /* cpuset controller usable */
    char warning[384];
    cg2_t *cg;
    char job_rel[PATH_MAX];  /* standalone: <base>/job_<id> */
    char step_rel[PATH_MAX]; /* the step's cgroup (ours or Slurm's) */
    char acct_rel[PATH_MAX + 8];
    bool tree_created;          /* standalone tree exists: remove at exit */
    bool *task_dir_created;     /* nested: task dirs we made (ntasks) */
    struct task_status *status; /* shared mapping, ntasks entries */
    size_t status_size;
    char claims_dir[PATH_MAX];
    char lock_path[PATH_MAX];
    bool claimed;

    /* the watcher (stepwatch.h) and its clients */
    stepwatch_t *sw;
    confine_t *confine;
    profclient_t *prof;
    pid_t pids[MAX_PIDS]; /* tasks, until the confinement exists */
    unsigned npids;

    struct stepacct *acct; /* NULL: not accounted */

    /* GPUs and NIC (devices.c): where the tasks go, and the record's
     * text */
    unsigned nnear;
    struct place_near near[PLACE_MAX_NEAR];
    hwloc_bitmap_t near_own[PLACE_MAX_NEAR]; /* sets we made (Cores=) */
    unsigned near_fallback;                  /* PLACE_FB_GPU/NIC_REMOTE */
    hwloc_const_bitmap_t nic_cpus;           /* the NIC beside GPUs */
    char near_label[PLACE_MAX_NEAR][32]; /* bus id, gres:N or NIC name */
    bool near_is_nic;                    /* near[0] is the NIC */
    char rec_gpus[256];
    char rec_nic[64];
    char dev_note[512]; /* GPUs by Cores= or not located (verbose) */

    /* the profile (profile.c), until the watcher takes it */
    struct prof_rec *prof_rec;
    char prof_path[PATH_MAX];
};

/* snprintf for paths: -1 (ENAMETOOLONG) instead of a truncated path. */
/* The job directory of the step's cgroup path into buf (paths.c). */
void step_job_dir_of_step (const pin_step_t *s, char *buf, size_t n);

int step_fmt_path (char *buf, size_t n, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* Remove our cgroups of the step (cleanup.c); errors go to the sink. */
void step_remove_tree (pin_step_t *s);

#endif /* !PIN_STEP_PRIVATE_H */
