/* acct.h - slurm-pin's accounting records (issue: accounting)
 *
 * CONTRACT shared by the parts of the accounting work; the implementation
 * files are record.c (records <-> JSON), journal.c (the node journal),
 * sacct.c (sacct-compatible field formatting) and summary.c (the job
 * summary kept in slurmdbd's AdminComment).  Pure where it can be: no
 * logging, errors through pin_error_t (libutil/errprintf.h).  JSON through
 * json-c.
 *
 * A record is one JSON object on one line of the journal (JSON Lines).
 * Field names below are the JSON keys; every record carries
 * "v": ACCT_RECORD_VERSION.  Strings from users (job name, partition,
 * user name) are stored as valid UTF-8 (invalid bytes become U+FFFD) and
 * json-c escapes control characters, so a record is always one line.
 *
 * Times are microseconds: wall-clock times since the epoch (CLOCK_REALTIME),
 * CPU times as cgroup cpu.stat counts them.  Never clock ticks.
 */
#ifndef PIN_ACCT_H
#define PIN_ACCT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "libutil/errprintf.h"

#define ACCT_RECORD_VERSION 1

/* Slurm's special step ids (slurm.h: SLURM_BATCH_SCRIPT, ...), repeated
 * here so the pure library needs no Slurm header. */
#define ACCT_STEP_BATCH 0xfffffffbu       /* "batch" */
#define ACCT_STEP_EXTERN 0xfffffffcu      /* "extern" */
#define ACCT_STEP_INTERACTIVE 0xfffffffau /* "interactive" */
#define ACCT_NO_VAL 0xfffffffeu           /* NO_VAL: no array id etc. */

enum acct_kind {
    ACCT_KIND_STEP = 0, /* "kind":"step" - one step on one node */
    ACCT_KIND_JOB = 1,  /* "kind":"job"  - the job on one node */
};

/* Where the CPU numbers came from ("source"). */
enum acct_source {
    ACCT_SRC_STEP_CGROUP =
        0,                   /* "step-cgroup": cpu.stat of the step's cgroup */
    ACCT_SRC_JOB_CGROUP = 1, /* "job-cgroup": the job's cgroup at job end */
    ACCT_SRC_STEP_SUM =
        2, /* "step-records": sum of this node's step records */
};

#define ACCT_STR 256 /* bound of the short strings below, NUL included */

/* Slurm's own values of a job or step, as slurmdbd holds them (sacct's
 * and seff's numbers).  valid false: not read from slurmdbd. */
struct acct_dbd {
    bool valid;
    bool alone;              /* slurmdbd's record alone: slurm-pin had
                                no summary of the job (no placement, no
                                measurement of its own) */
    int64_t start, end;      /* seconds since the epoch, 0 unknown */
    int64_t elapsed;         /* seconds (sacct's Elapsed) */
    int32_t exit_code;       /* sacct's ExitCode, a wait(2) status */
    uint32_t gid;            /* job: the job's group */
    uint32_t nnodes;         /* job: AllocNodes, 0 unknown */
    uint32_t ntasks;         /* step: NTasks */
    uint64_t req_mem;        /* job: ReqMem in MB (22.05's req_mem, the
                                MEM_PER_CPU bit cleared) */
    bool mem_per_cpu;        /* job: ReqMem is per CPU */
    uint64_t req_tres_mem;   /* job: memory in ReqTRES, MB (0 none) */
    uint64_t alloc_tres_mem; /* job: memory in AllocTRES, MB (0 none) */
    bool has_rss;            /* step: the three below were recorded */
    uint64_t max_rss;        /* step: TRESUsageInMax mem (MaxRSS), bytes */
    uint64_t ave_rss;        /* step: TRESUsageInAve mem, bytes */
    uint64_t tot_rss;        /* step: TRESUsageInTot mem, bytes */
    /* job: seff's memory over all of slurmdbd's steps of the job: the
     * step with the largest MaxRSS (its MaxRSS and NTasks), and the one
     * with the largest TRESUsageInTot mem (that, its Max and Ave) */
    uint64_t rss_max;
    uint32_t rss_ntasks;
    uint64_t rss_tot, rss_tot_max, rss_tot_ave;
};

struct acct_record {
    enum acct_kind kind;      /* "kind" */
    char cluster[ACCT_STR];   /* "cluster" */
    uint32_t job_id;          /* "job_id" */
    uint32_t step_id;         /* "step_id" (step records; ACCT_STEP_*) */
    uint32_t array_job_id;    /* "array_job_id" (ACCT_NO_VAL: none) */
    uint32_t array_task_id;   /* "array_task_id" (ACCT_NO_VAL: none) */
    char node[ACCT_STR];      /* "node" */
    uint32_t uid;             /* "uid" */
    char user[ACCT_STR];      /* "user" */
    char partition[ACCT_STR]; /* "partition" */
    char job_name[ACCT_STR];  /* "job_name" */
    char policy[64];          /* "policy": none numa-local ... dynamic */
    char fallback[ACCT_STR];  /* "fallback": "" or comma list */
    char gpus[ACCT_STR];      /* "gpus": PCI bus ids of the GPUs the
                                 tasks were placed near, ',' joined
                                 ("gres:N": known by gres.conf Cores=);
                                 "" none (doc/policies.md) */
    char nic[64];             /* "nic": the NIC's name, "" none */
    /* policy experiments (doc/experiments.md): the job's enrolment as
     * job_submit_pin.so wrote it into the job's AdminComment, read from
     * slurmctld, never from the job's environment; "" when not enrolled */
    char experiment[64]; /* "experiment": its name */
    char arm[64];        /* "arm": the policy assigned */
    char block[32];      /* "block": the block of like jobs (hex) */
    bool has_seed;            /* "seed" present (policy random) */
    uint64_t seed;            /* "seed" */
    char cpus[ACCT_STR];      /* "cpus": OS CPU list, hwloc list format */
    char mems[ACCT_STR];      /* "mems": NUMA node list */
    uint32_t alloc_cpus;      /* "alloc_cpus": CPUs Slurm allocated to
                                 the step (job record: the job) on
                                 this node */
    int64_t start_us;         /* "start_us" */
    int64_t end_us;           /* "end_us" */
    int64_t elapsed_us;       /* "elapsed_us" = end - start */
    uint64_t user_usec;       /* "user_usec" */
    uint64_t system_usec;     /* "system_usec" */
    uint64_t usage_usec;      /* "usage_usec" */
    bool has_throttle;        /* "nr_periods" etc. present */
    uint64_t nr_periods;      /* "nr_periods" */
    uint64_t nr_throttled;    /* "nr_throttled" */
    uint64_t throttled_usec;  /* "throttled_usec" */
    bool has_mem_peak;        /* "mem_peak" present */
    uint64_t mem_peak;        /* "mem_peak" bytes (memory.peak) */
    int32_t exit_status;      /* "exit_status": wait(2) status of the
                                 step (worst task), -1 unknown */
    char state[32];           /* "state": COMPLETED FAILED CANCELLED
                                 TIMEOUT OUT_OF_MEMORY NODE_FAIL ... as
                                 sacct spells it */
    enum acct_source source;  /* "source" */
    char cgroup[4096];        /* "cgroup": path the numbers came from */
    char mode[32];            /* "mode": nested standalone affinity */
    /* dynamic confinement (policy "dynamic"); confined_us == 0: never */
    int64_t confined_us; /* "confined_us" */
    double confine_use;  /* "confine_use": CPUs in use that triggered it */
    char confine_cpus[ACCT_STR]; /* "confine_cpus" */
    char confine_mems[64];       /* "confine_mems" */
    /* job records only: the steps they were built from ("steps") */
    uint32_t nsteps; /* "steps": number of step records */
    /* the job's, from slurmctld's job info (or slurmdbd); written only
     * when known, absent from older records (sacct's unknown value) */
    char account[64];   /* "account" */
    char qos[64];       /* "qos" */
    char reason[64];    /* "reason": slurmdbd's only (job lines) */
    int64_t submit_us;  /* "submit_us", 0 unknown */
    bool has_timelimit; /* "timelimit" present */
    uint32_t timelimit; /* "timelimit": minutes, 0xffffffff UNLIMITED,
                           ACCT_NO_VAL + 0 (0xfffffffe) Partition_Limit */
    uint64_t req_mem;   /* "req_mem": ReqMem in MB (the job's memory
                           of ReqTRES), 0 unknown */
    bool has_max_rss;   /* slurmdbd's only: MaxRSS of a step */
    uint64_t max_rss;   /* bytes */
    uint32_t nnodes;    /* slurmdbd's only: the job's AllocNodes or the
                           step's node count, 0 unknown */
    /* what only slurmdbd holds: the slurmdbd source (acctdbd.c) fills it
     * from the job's and the step's own rows; never in the journal nor
     * in the JSON */
    struct acct_dbd dbd;
};

/* A policy experiment's enrolment in the job's AdminComment, written by
 * job_submit_pin.so (only administrators and job_submit plugins can set
 * that field): "pin-experiment=NAME/ARM/BLOCK", at the start of the field
 * or after a blank.  NAME of [A-Za-z0-9_.-], ARM a policy name, BLOCK 16
 * hex digits. */
#define ACCT_EXP_TOKEN "pin-experiment="

/* Find and check the token in `field` (NULL: none); true with the parts
 * copied into the buffers (each at least 64 bytes; block 32) when one is
 * there and well formed. */
bool acct_exp_token_parse (const char *field,
                           char *name,
                           size_t nn,
                           char *arm,
                           size_t na,
                           char *block,
                           size_t nb);

/* Fill with "unknown" values: ids ACCT_NO_VAL, exit_status -1, strings "". */
void acct_record_init (struct acct_record *r);

/* CPU efficiency = (user + system) / (elapsed * alloc_cpus), 0..1 (can
 * exceed 1 when a step used more CPUs than allocated).  -1 when elapsed or
 * alloc_cpus is 0. */
double acct_efficiency (const struct acct_record *r);

/* Record <-> one JSON line (no trailing newline in `*line`; free() it).
 * Parsing ignores unknown keys (newer writers) and rejects records of a
 * larger "v", wrong types and missing required keys (kind, job_id, node,
 * start_us, end_us) with errp naming the key. */
char *acct_record_to_json (const struct acct_record *r, pin_error_t *errp);
int acct_record_from_json (const char *line,
                           struct acct_record *r,
                           pin_error_t *errp);
/* The same through json-c alone (acct_record_from_json takes a fast path
 * for the plain lines record.c writes; the unit tests compare the two). */
int acct_record_from_json_slow (const char *line,
                                struct acct_record *r,
                                pin_error_t *errp);

/* ---- the node journal (journal.c) ----------------------------------
 * DIR (pin.conf JournalDir=, default /var/lib/slurm-pin/journal) is
 * root-only (0700); files `journal` (current) and `journal.N` (rotated,
 * older), 0600.  One record = one write(2) of a whole line + fsync. */
int acct_journal_append (const char *dir,
                         const struct acct_record *r,
                         pin_error_t *errp);

/* Read every record of every journal file in DIR, oldest first.  A line
 * that does not parse (a torn last line after a crash, or garbage) is
 * skipped and counted in *skipped; `cb` returning non-zero stops. */
typedef int (*acct_record_cb) (const struct acct_record *r, void *arg);
int acct_journal_read (const char *dir,
                       acct_record_cb cb,
                       void *arg,
                       unsigned *skipped,
                       pin_error_t *errp);

/* ---- additions (acct-core) ------------------------------------------ */

/* Default rotation size of `journal` (pin.conf JournalMaxSize=). */
#define ACCT_JOURNAL_MAX_DEFAULT (64ull << 20)

/* acct_journal_append() with rotation: when `journal` holds bytes and
 * this record would make it larger than max_size (0: never rotate), it is
 * renamed to journal.N (N = the highest existing + 1, so a larger N is
 * newer) under DIR/lock first.  Nothing is ever deleted.
 * acct_journal_append() is this with ACCT_JOURNAL_MAX_DEFAULT.
 * Errors name DIR and the cause (ENOSPC: "no space left on device"); on
 * any error the journal holds exactly what it held before. */
int acct_journal_append_max (const char *dir,
                             const struct acct_record *r,
                             uint64_t max_size,
                             pin_error_t *errp);

/* acct_journal_read() of the records of one job only: lines without
 * "job_id":JOB are passed over without being parsed (the epilog reads
 * the journal at every job end). */
int acct_journal_read_job (const char *dir,
                           uint32_t job_id,
                           acct_record_cb cb,
                           void *arg,
                           unsigned *skipped,
                           pin_error_t *errp);

/* acct_journal_read() of the records whose job_id, or array_job_id, is
 * one of ids[0..nids-1] (acct -j).  Both this and acct_journal_read_job()
 * go through the sidecar index of each journal file (DIR/journal.idx,
 * DIR/journal.N.idx; journal.c) where there is a valid one: the lines of
 * other jobs are then not read at all; every line reached through the
 * index is checked against the journal, and what it does not cover is
 * scanned. */
int acct_journal_read_jobs (const char *dir,
                            const uint32_t *ids,
                            size_t nids,
                            acct_record_cb cb,
                            void *arg,
                            unsigned *skipped,
                            pin_error_t *errp);

/* Every record of DIR, as acct_journal_read(), but in the order acct
 * lists jobs (array job id or job id, array task id, job id; within a job
 * in journal order), job_end(arg) (may be NULL) after the last record of
 * each job; either returning non-zero stops.  Memory: 24 bytes a line,
 * no record kept. */
int acct_journal_read_sorted (const char *dir,
                              acct_record_cb cb,
                              int (*job_end) (void *arg),
                              void *arg,
                              unsigned *skipped,
                              pin_error_t *errp);

/* What the last read of this thread did (tests, slurm-pin acct -v). */
struct acct_journal_stats {
    unsigned files_indexed; /* files read through their index */
    unsigned files_skipped; /* rotated files whose index says: none */
    unsigned files_scanned; /* files (or their rest) read line by line */
    unsigned long lines_verified; /* lines reached through an index */
    unsigned long lines_rejected; /* index entries the journal belied */
    unsigned long records;        /* records parsed */
};
void acct_journal_last_stats (struct acct_journal_stats *out);

/* Copy at most srclen bytes of src into dst (size n >= 4) as valid UTF-8:
 * each invalid byte becomes U+FFFD, NUL bytes end the text; stops before
 * a character that would not fit.  Returns dst. */
char *acct_utf8_copy (char *dst, size_t n, const char *src, size_t srclen);

/* "batch", "extern", "interactive" or the number, for step_id. */
const char *acct_step_name (uint32_t step_id, char *buf, size_t n);

/* "step-cgroup", "job-cgroup", "step-records"; "step", "job". */
const char *acct_source_name (enum acct_source s);
const char *acct_kind_name (enum acct_kind k);

/* sacct's state for a wait(2) status: COMPLETED (0), FAILED (non-zero
 * exit), CANCELLED (killed by a signal), OUT_OF_MEMORY when oom is true;
 * "UNKNOWN" for -1. */
const char *acct_state_of_status (int32_t status, bool oom);

/* A job record for `node` built from this node's step records of `job`
 * in DIR (source "step-records"): CPU and throttle times summed, memory
 * peak the largest, start the earliest, end the latest, alloc_cpus the
 * batch (else largest) step's, state and exit status of the batch step
 * (else the worst), nsteps counted.  node NULL or "": any node.
 * Returns 1 with *job filled; 2 when DIR holds no record at all of the
 * job for that node, with *job a record of nothing measured (job, node,
 * nsteps 0, start 0 = unknown, end 0, state UNKNOWN, exit status -1) for
 * the caller to complete with what it knows; 0 if DIR already holds a job
 * record of it for that node (*job untouched); -1 with errp. */
int acct_job_from_steps (const char *dir,
                         uint32_t job,
                         const char *node,
                         struct acct_record *out,
                         pin_error_t *errp);

/* The same for the job of one Submit time (submit_us != 0): records that
 * carry another Submit belong to an earlier job of a reused job id and
 * are left out (records without one are taken). */
int acct_job_from_steps_at (const char *dir,
                            uint32_t job,
                            int64_t submit_us,
                            const char *node,
                            struct acct_record *out,
                            pin_error_t *errp);

#endif /* !PIN_ACCT_H */
