/* ident.h - who and where a step runs, from Slurm itself
 *
 * Everything a record, a file name or a path of root's is built from
 * (node, cluster, user, array ids, partition, job name) comes from
 * Slurm: SPANK items, slurmstepd's own listening socket, libslurm's
 * slurm_conf and, for what no trustworthy SPANK item carries (partition,
 * job name; array ids, which Slurm 22.05's slurmstepd takes from the
 * environment srun sends), slurmctld's answer to slurm_load_job().  Never from
 * the job's environment (spank_getenv), which srun, sbatch and salloc copy
 * from the user's: SLURMD_NODENAME, SLURM_ARRAY_JOB_ID, SLURM_JOB_PARTITION,
 * ... are the user's to set. doc/security.md lists each source.  Nothing here
 * fails a step.
 */
#ifndef PIN_SPANK_IDENT_H
#define PIN_SPANK_IDENT_H

#include <slurm/spank.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libstep/ident.h" /* struct step_ident, step_ident_node */

/* Fill `id` for step `step` of job `job` in slurmstepd (remote context):
 * node, cluster, uid and user; the array ids only for the batch step
 * (S_JOB_ARRAY_ID/S_JOB_ARRAY_TASK_ID, from slurmctld's launch message).
 * No RPC. */
void ident_step (spank_t sp,
                 uint32_t job,
                 uint32_t step,
                 struct step_ident *id);

/* Ask slurmctld for the job's partition, name and array ids (one
 * REQUEST_JOB_INFO_SINGLE RPC, as root; job_info_us says how long it
 * took).  0 with have_job_info set, or -1 with job_info_error saying why
 * (id otherwise unchanged).  Blocks as long as libslurm waits for
 * slurmctld (MessageTimeout). */
int ident_job_info (uint32_t job, struct step_ident *id);

/* What slurmctld says of an ended job, for its job record (the epilog):
 * the values slurmdbd keeps for the job line, so that the journal gives
 * the same ones (doc/accounting-reports.md, "One definition of every
 * field").  0 with *have set, or -1 (slurmctld does not answer, or no
 * libslurm in this process): the record keeps what its steps give. */
struct ident_job_end {
    bool have;
    char state[32];       /* base state as sacct spells it: TIMEOUT ... */
    int32_t exit_status;  /* the job's exit code (a wait status) */
    int64_t start_us;     /* slurmctld's start_time */
    int64_t end_us;       /* slurmctld's end_time */
    int64_t submit_us;    /* slurmctld's submit_time */
    uint32_t node_cpus;   /* the job's CPUs on this node, 0 unknown */
};
int ident_job_end (uint32_t job, const char *node, struct ident_job_end *out);

/* Does the hostlist expression expr ("node[01-04],login1") name node?
 * (libslurm's hostlist; false without it). */
bool ident_node_in (const char *expr, const char *node);

#endif /* !PIN_SPANK_IDENT_H */
