/* mode.h - which mode the plugin runs a step in: one decision for the
 * plugin (in slurmstepd) and slurm-pin check (predicting it)
 *
 *   none        no cgroup v2 hierarchy: sched_setaffinity only;
 *   nested      the step is in Slurm's own cgroup/v2 tree
 *               (.../job_<id>/step_<id>): cpusets go below it;
 *   standalone  Slurm makes no v2 step cgroup: our own tree
 *               <root>/<CgroupBase>/job_<id>/step_<id>;
 *   undecided   (check only) Slurm's configuration does not tell.
 * In nested and standalone mode `cpuset` says whether cpusets can be
 * written there; without it tasks are bound with sched_setaffinity only
 * (the affinity fallback).  Nothing here logs.
 */
#ifndef PIN_CG2_MODE_H
#define PIN_CG2_MODE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cg2.h"

enum cg2_mode {
    CG2_MODE_NONE = 0,
    CG2_MODE_NESTED,
    CG2_MODE_STANDALONE,
    CG2_MODE_UNDECIDED,
};

/* What Slurm's configuration says about the step cgroups. */
#define CG2_SLURM_CONF_DEFAULT "/etc/slurm/slurm.conf"

enum cg2_slurm_cgroups {
    CG2_SLURM_UNKNOWN = 0, /* no cgroup.conf: it depends */
    CG2_SLURM_NONE,        /* no v2 step cgroups (no cgroup plugins, v1) */
    CG2_SLURM_V2,          /* cgroup/v2 makes step_<id> cgroups */
};

struct cg2_mode_input {
    const char *cgroup_root; /* pin.conf CgroupRoot ("auto") */
    const char *cgroup_base; /* pin.conf CgroupBase */
    uint32_t job, step;
    /* slurmstepd: its own cgroup (cg2_pid_path); NULL in slurm-pin check,
     * which decides by `slurm` instead */
    const char *self_cgroup;
    enum cg2_slurm_cgroups slurm;
};

struct cg2_mode_result {
    enum cg2_mode mode;
    bool cpuset;             /* cpusets can be written */
    char step_rel[PATH_MAX]; /* nested: Slurm's step cgroup; standalone:
                                <base>/job_<id>/step_<id> */
    char job_rel[PATH_MAX];  /* standalone: <base>/job_<id> */
    char why[384];           /* none, or no cpuset: in words */
};

/* Decide the mode.  Returns the opened hierarchy (caller closes), or
 * NULL in mode none (then res->why says why; not an error).  Never
 * fails otherwise. */
cg2_t *cg2_mode_detect (const struct cg2_mode_input *in,
                        struct cg2_mode_result *res);

/* "affinity", "nested", "standalone", "undecided" */
const char *cg2_mode_name (enum cg2_mode mode);

/* ---- Slurm's configuration, as slurmd 22.05 reads it ------------------ */

struct cg2_slurm_conf {
    char slurm_conf[PATH_MAX];
    bool slurm_conf_found;
    int slurm_conf_errno;  /* why it was not read */
    char task_plugin[256]; /* "" if not set */
    char proctrack[256];
    char cgroup_conf[PATH_MAX]; /* beside slurm.conf */
    bool cgroup_conf_found;
    int cgroup_conf_errno;
    char cgroup_plugin[64];      /* as written; "" if not set */
    const char *cgroup_resolved; /* "cgroup/v1", "cgroup/v2" or NULL */
};

/* Read TaskPlugin, ProctrackType of `slurm_conf` (NULL: $SLURM_CONF if
 * absolute, else /etc/slurm/slurm.conf) and CgroupPlugin of the
 * cgroup.conf beside it; autodetect resolved as slurmd does. */
void cg2_slurm_conf_read (const char *slurm_conf, struct cg2_slurm_conf *sc);

/* Does Slurm put steps in cgroups of its own (task/cgroup or
 * proctrack/cgroup; Slurm also takes names without the prefix)? */
bool cg2_slurm_uses_cgroups (const struct cg2_slurm_conf *sc);

/* The verdict for cg2_mode_input.slurm. */
enum cg2_slurm_cgroups cg2_slurm_cgroups (const struct cg2_slurm_conf *sc);

/* Read the value of `key` (case-insensitive) from a slurm.conf-style
 * file; see mode.c.  1 found, 0 not, -1 unreadable (errno). */
int cg2_slurm_conf_get (const char *path,
                        const char *key,
                        char *val,
                        size_t n);

#endif /* !PIN_CG2_MODE_H */
