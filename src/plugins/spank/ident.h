/* ident.h - who and where a step runs, from Slurm itself
 *
 * Everything a record, a file name or a path of root's is built from
 * (node, cluster, user, array ids, partition, job name) comes from
 * Slurm: SPANK items, slurmstepd's own listening socket, libslurm's
 * slurm_conf and, for what no trustworthy SPANK item carries (partition,
 * job name; array ids, which Slurm 22.05's slurmstepd takes from the
 * environment srun sends), slurmctld's answer to slurm_load_job().  Never from the job's environment (spank_getenv),
 * which srun, sbatch and salloc copy from the user's: SLURMD_NODENAME,
 * SLURM_ARRAY_JOB_ID, SLURM_JOB_PARTITION, ... are the user's to set.
 * doc/security.md lists each source.  Nothing here fails a step.
 */
#ifndef PIN_SPANK_IDENT_H
#define PIN_SPANK_IDENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <slurm/spank.h>

#include "libacct/acct.h"

struct step_ident {
    char node[ACCT_STR];        /* slurmd's node name */
    char cluster[ACCT_STR];     /* ClusterName of slurm.conf */
    uint32_t uid;
    char user[ACCT_STR];        /* the uid's name ("" if none) */
    uint32_t array_job_id;      /* ACCT_NO_VAL: not an array task */
    uint32_t array_task_id;
    bool have_job_info;         /* partition and job_name from slurmctld */
    char partition[ACCT_STR];   /* "" unless have_job_info */
    char job_name[ACCT_STR];
    long long job_info_us;      /* wall time of slurm_load_job() */
    char job_info_error[256];   /* why not have_job_info, if asked */
};

/* Fill `id` for step `step` of job `job` in slurmstepd (remote context):
 * node, cluster, uid and user; the array ids only for the batch step
 * (S_JOB_ARRAY_ID/S_JOB_ARRAY_TASK_ID, from slurmctld's launch message).
 * No RPC. */
void ident_step (spank_t sp, uint32_t job, uint32_t step,
                 struct step_ident *id);

/* Ask slurmctld for the job's partition, name and array ids (one
 * REQUEST_JOB_INFO_SINGLE RPC, as root; job_info_us says how long it
 * took).  0 with have_job_info set, or -1 with job_info_error saying why
 * (id otherwise unchanged).  Blocks as long as libslurm waits for
 * slurmctld (MessageTimeout). */
int ident_job_info (uint32_t job, struct step_ident *id);

/* The node name of this slurmstepd: the name part of its own listening
 * socket "SlurmdSpoolDir/NODE_JOB.STEP" (slurmstepd creates it from
 * slurmd's node name, before any plugin runs); elsewhere, or when it is
 * not found, the process' own SLURMD_NODENAME (set by slurmd in the
 * environment of the prolog and epilog, which no user controls), then the
 * short host name.  Never the job's environment. */
void ident_node (uint32_t job, uint32_t step, char *buf, size_t n);

#endif /* !PIN_SPANK_IDENT_H */
