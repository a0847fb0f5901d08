/* ident.h - who and where a step runs, as Slurm says it
 *
 * The record of a step, its profile's file name and the paths root
 * builds are made from these fields, which the SPANK plugin fills from
 * Slurm (SPANK items, libslurm's slurm_conf, slurm_load_job) and never
 * from the job's environment, which the user sets (SLURMD_NODENAME,
 * SLURM_JOB_PARTITION, ...).  The node name is the one part read here:
 * from slurmstepd's own listening socket.  doc/security.md lists each
 * source.
 */
#ifndef PIN_STEP_IDENT_H
#define PIN_STEP_IDENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libacct/acct.h"

struct step_ident {
    char node[ACCT_STR];    /* slurmd's node name */
    char cluster[ACCT_STR]; /* ClusterName of slurm.conf */
    uint32_t uid;
    char user[ACCT_STR];   /* the uid's name ("" if none) */
    uint32_t array_job_id; /* ACCT_NO_VAL: not an array task */
    uint32_t array_task_id;
    bool have_job_info;       /* partition and job_name from slurmctld */
    char partition[ACCT_STR]; /* "" unless have_job_info */
    char job_name[ACCT_STR];
    long long job_info_us;    /* wall time of slurm_load_job() */
    bool have_gres;           /* gres_detail for this node was found */
    char gres_detail[ACCT_STR]; /* slurmctld's GRES of the job on this
                                   node: "gpu:2(IDX:0-1)" ("" none) */
    char job_info_error[256]; /* why not have_job_info, if asked */
    /* the job's policy experiment, from the token job_submit_pin.so put
     * into its AdminComment (acct.h); "" when not enrolled */
    char experiment[64];
    char arm[64];
    char block[32];
    /* sacct's Account, QOS, Submit, Timelimit, ReqMem of the job (acct.h),
     * from slurmctld with the partition */
    char account[64];
    char qos[64];
    int64_t submit_us;
    bool has_timelimit;
    uint32_t timelimit;
    uint64_t req_mem; /* MB, 0 unknown */
};

/* The node name of this slurmstepd: the name part of its own listening
 * socket "SlurmdSpoolDir/NODE_JOB.STEP" (slurmstepd creates it from
 * slurmd's node name, before any plugin runs: /proc/self/net/unix, the
 * socket's inode among /proc/self/fd); with job 0, or when it is not
 * found, the process' own SLURMD_NODENAME (set by slurmd in the
 * environment of the prolog and epilog, which no user controls), then the
 * short host name.  Never the job's environment.  Always fills buf. */
void step_ident_node (uint32_t job, uint32_t step, char *buf, size_t n);

/* The NODE of a socket path ".../NODE_JOB.STEP[.COMP]" into buf, or
 * false (exposed for the unit test). */
bool step_ident_node_of_socket (const char *path,
                                uint32_t job,
                                uint32_t step,
                                char *buf,
                                size_t n);

#endif /* !PIN_STEP_IDENT_H */
