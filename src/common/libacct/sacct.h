/* sacct.h - sacct-compatible rows and formatting of accounting records
 *
 * Three stages, each pure (no logging, no global state):
 *   records (acct.h, from the journal or slurmdbd)
 *     -> a table: one job line per job and one line per step, the records
 *        of several nodes merged (acct_table_add / acct_table_sort)
 *     -> text in sacct's conventions (acct_fmt_*, acct_print_*).
 *
 * The rules are sacct's own (Slurm 22.05 src/sacct/print.c,
 * src/common/print_fields.c, parse_time.c); doc/accounting-reports.md
 * lists them and where slurm-pin differs.
 */
#ifndef PIN_ACCT_SACCT_H
#define PIN_ACCT_SACCT_H

#include <slurm/slurm_version.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "libacct/acct.h"
#include "libutil/errprintf.h"

/* ---- fields ---------------------------------------------------------- */
enum acct_fid {
    /* sacct's own */
    ACCT_F_JOBID,
    ACCT_F_JOBIDRAW,
    ACCT_F_JOBNAME,
    ACCT_F_USER,
    ACCT_F_PARTITION,
    ACCT_F_NODELIST,
    ACCT_F_ALLOCCPUS,
    ACCT_F_ELAPSED,
    ACCT_F_TOTALCPU,
    ACCT_F_USERCPU,
    ACCT_F_SYSTEMCPU,
    ACCT_F_CPUTIME,
    ACCT_F_START,
    ACCT_F_END,
    ACCT_F_STATE,
    ACCT_F_EXITCODE,
    ACCT_F_ACCOUNT,
    ACCT_F_MAXRSS,
    ACCT_F_SUBMIT,
    ACCT_F_TIMELIMIT,
    ACCT_F_REQMEM,
    ACCT_F_NNODES,
    ACCT_F_QOS,
    ACCT_F_REASON,
    ACCT_F_CLUSTER,
    /* slurm-pin's */
    ACCT_F_CPUEFF,
    ACCT_F_PINPOLICY,
    ACCT_F_FALLBACK,
    ACCT_F_GPUS,
    ACCT_F_NIC,
    ACCT_F_CPUSET,
    ACCT_F_MEMS,
    ACCT_F_THROTTLED,
    ACCT_F_MEMPEAK,
    ACCT_F_CONFINED,
    ACCT_F_EXPERIMENT, /* policy experiments (doc/experiments.md) */
    ACCT_F_ARM,
    ACCT_F_COUNT
};

/* Canonical name ("JobID") and default width (negative: left-justified)
 * of a field; NULL / 0 for an id out of range. */
const char *acct_field_name (int id);
int acct_field_width (int id);

#define ACCT_FMT_MAX 64

struct acct_fmt {
    int n;
    struct {
        int id;    /* enum acct_fid */
        int width; /* sacct's field->len: negative = left-justified */
    } f[ACCT_FMT_MAX];
};

/* sacct's default columns, plus the two of slurm-pin's a reader wants
 * first. */
#define ACCT_FMT_DEFAULT                                               \
    "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode,CPUEff," \
    "PinPolicy"

/* Append the fields of `spec` ("JobID,jobn%20,Cpuset%-30") to `fmt`.
 * Names match case-insensitively by prefix, the first field of the table
 * order winning (sacct's rule: "j" is JobID); "%N" sets the width, a
 * negative one left-justifies.  On error `fmt` may hold part of the spec
 * and errp names the bad field and lists the valid ones. */
int acct_fmt_parse (struct acct_fmt *fmt, const char *spec, pin_error_t *errp);

/* All field names, comma-separated, in the table's order (for errors and
 * --helpformat).  A static string. */
const char *acct_field_list (void);

/* ---- time and value formats ----------------------------------------- */

/* Elapsed, CPUTime: "[D-]HH:MM:SS" (secs2time_str); negative: "INVALID". */
void acct_fmt_secs (int64_t secs, char *buf, size_t n);
/* TotalCPU, UserCPU, SystemCPU (sacct's _elapsed_time): "D-HH:MM:SS",
 * "HH:MM:SS" at an hour or more, "MM:SS.mmm" below, "00:MM:SS" when the
 * milliseconds are 0. */
void acct_fmt_cputime (uint64_t usec, char *buf, size_t n);
/* Start, End: "%FT%T" local time; 0 or less: "Unknown". */
void acct_fmt_date (int64_t us, char *buf, size_t n);
/* The same in strftime format `fmt` (NULL: "%FT%T"), as sacct does with
 * SLURM_TIME_FORMAT. */
void acct_fmt_date_fmt (int64_t us, const char *fmt, char *buf, size_t n);
/* SLURM_TIME_FORMAT's value as sacct takes it: a strftime format with a
 * '%', shorter than 32 bytes; NULL for unset, "standard", "relative"
 * (not supported: the standard format) or an invalid value. */
const char *acct_time_format (const char *env);
/* Whether sacct's ExitCode takes 128 off a code of 128 and more (a shell
 * that ended on SIGTERM returns 143): Slurm 22.05 and 24.11 do (24.11.5
 * prints 143 as "15:0"), 26.05 does not (26.05.5 prints "143:0"); 25.05
 * and 25.11 were not seen and are taken as 26.05.  The JSON's
 * return_code is the whole code on every release. */
#if defined(SLURM_VERSION_NUMBER) && SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM (25, 5, 0)
#define ACCT_EXIT_TAKES_128 0
#else
#define ACCT_EXIT_TAKES_128 1
#endif

/* ExitCode "N:S" from a wait(2) status; -1: "" (unknown). */
void acct_fmt_exitcode (int32_t status, char *buf, size_t n);
/* CPUEff: "97.41%"; eff < 0: "" (no elapsed time or no CPUs). */
void acct_fmt_eff (double eff, char *buf, size_t n);
/* MemPeak: bytes in sacct's MaxRSS style, 1024-based: "812K", "1.50G". */
void acct_fmt_bytes (uint64_t bytes, char *buf, size_t n);
/* sacct's convert_num_unit (MaxRSS from bytes: orig 0; ReqMem from MB:
 * orig 2): `units` 1..5 for --units=[KMGTP] (1 K ... 5 P), 0 for none;
 * without it, --noconvert keeps the original unit, else the value is
 * divided by 1024 while it stays exact ("4000M", "4G", "1.50G"). */
void acct_fmt_units (double num,
                     int orig,
                     int units,
                     bool noconvert,
                     char *buf,
                     size_t n);
/* --units's letter (K M G T P, either case) -> 1..5; -1 if not one. */
int acct_units_parse (const char *s);
/* Timelimit: "HH:MM:SS", "D-HH:MM:SS", "UNLIMITED", "Partition_Limit". */
void acct_fmt_timelimit (uint32_t minutes, char *buf, size_t n);

/* ---- rows ------------------------------------------------------------ */

/* One line of output: a job or one step, merged over its nodes. */
struct acct_row {
    bool is_step;
    char cluster[ACCT_STR];
    uint32_t job_id;
    uint32_t step_id;      /* steps */
    uint32_t array_job_id; /* ACCT_NO_VAL: not an array task */
    uint32_t array_task_id;
    uint32_t uid;
    char user[ACCT_STR];
    char partition[ACCT_STR];
    char job_name[ACCT_STR];
    char *nodes;    /* "n1,n2": distinct, in record order */
    char *nodelist; /* hostlist ("n[1-2]") set by the caller,
                       NULL: `nodes` is printed */
    char *policy;   /* distinct values, ',' joined */
    char *fallback; /* distinct non-empty values, ',' joined */
    char *gpus;     /* distinct non-empty values, ',' joined */
    char *nic;      /* likewise */
    /* a policy experiment's enrolment (acct.h), distinct non-empty
     * values ',' joined; NULL when not enrolled.  A job line built from
     * job records takes them from its steps. */
    char *experiment;
    char *arm;
    char *block;
    char *cpus; /* "n1:0-3;n2:4-7" (acct_row_cpus) */
    char *mems; /* likewise (acct_row_mems) */
    unsigned nnodes;
    uint32_t alloc_cpus;      /* sum over nodes */
    int64_t start_us, end_us; /* min start, max end */
    uint64_t user_usec, system_usec;
    bool has_throttle;
    uint64_t throttled_usec, nr_throttled, nr_periods;
    bool has_mem_peak;
    uint64_t mem_peak;      /* max over nodes */
    int32_t exit_status;    /* the worst: a signal, else the highest */
    char state[32];         /* the first not COMPLETED, else COMPLETED */
    int64_t confined_us;    /* earliest confinement, 0: never */
    double confine_use;     /* CPUs in use that triggered it */
    char confine_cpus[256]; /* the CPUs it was confined to (that node) */
    bool has_seed;          /* policy random: the first node's seed */
    uint64_t seed;
    bool from_steps;     /* job line built from step records */
    struct acct_dbd dbd; /* slurmdbd's own values (the first record's) */
    unsigned nrecords;
    /* the job's (acct.h), the first record that has them */
    char account[64];
    char qos[64];
    char reason[64];
    int64_t submit_us;
    bool has_timelimit;
    uint32_t timelimit;
    uint64_t req_mem;
    bool has_max_rss; /* the largest over the records */
    uint64_t max_rss;
    uint32_t dbd_nnodes; /* slurmdbd's node count, 0: count `nodes` */
};

struct acct_job {
    struct acct_row job; /* job line */
    bool has_job_record; /* job line from "kind":"job" records */
    struct acct_row *steps;
    size_t nsteps, capsteps;
};

struct acct_table {
    struct acct_job *jobs;
    size_t njobs, capjobs;
    size_t *hash;   /* job id -> index + 1 (0: free) */
    size_t hashcap; /* a power of two, or 0 */
};

void acct_table_init (struct acct_table *t);
void acct_table_free (struct acct_table *t); /* t may be NULL */

/* Merge one record in.  A record of the same job, step and node as one
 * already merged replaces nothing and is counted once (the first wins:
 * journals are read oldest first, and a record is final when written).
 * Returns 0, or -1 with errno ENOMEM. */
int acct_table_add (struct acct_table *t, const struct acct_record *r);

/* Finish: build the job lines of jobs that have no job record from their
 * steps, sort jobs by job id (array tasks by array job id and task id) and
 * steps by start time (batch, extern, interactive, then numbered steps on
 * ties). */
int acct_table_sort (struct acct_table *t);

/* After acct_table_sort: keep only the most recently submitted job of
 * each cluster and job id (sacct without -D), the jobs of a reused job id
 * told apart by their Submit (records without one are one job). */
int acct_table_latest (struct acct_table *t);

/* Last: the jobs in the order sacct prints them, by Submit (seconds),
 * then array job id, task id and job id: the tasks of an array in task
 * order, whichever job id each got.  When a job has no Submit (records
 * written before it was recorded), acct_table_sort's order stays (by job
 * id, array tasks by array job id and task id). */
int acct_table_order (struct acct_table *t);

/* Efficiency of a row: (user + system) / (elapsed * alloc_cpus), -1 when
 * elapsed or alloc_cpus is 0 (acct_efficiency's rule). */
double acct_row_eff (const struct acct_row *row);
/* Cpuset and Mems as printed: the list on one node ("0-3"), else
 * "n1:0-3;n2:4-7"; NULL when not recorded.  Point into the row. */
const char *acct_row_cpus (const struct acct_row *row);
const char *acct_row_mems (const struct acct_row *row);

/* NNodes: slurmdbd's count, else the nodes the row's records came from. */
uint32_t acct_row_nnodes (const struct acct_row *row);

/* Elapsed seconds of a row (end - start, 0 if unknown or negative). */
int64_t acct_row_elapsed_s (const struct acct_row *row);

/* "123", "123_4", "123.batch", "123_4.0" (raw: "125.batch").  */
void acct_row_jobid (const struct acct_row *row,
                     bool raw,
                     char *buf,
                     size_t n);
/* Step name suffix as sacct prints it: "batch", "extern", "interactive",
 * "0". */
void acct_fmt_stepname (uint32_t step_id, char *buf, size_t n);

/* The text of one field of a row, unpadded, control characters shown as
 * '?'; returns false when the field has no value (sacct prints it
 * blank). */
bool acct_row_field (const struct acct_row *row, int id, char *buf, size_t n);

/* ---- printing ------------------------------------------------------ */
enum acct_out_mode {
    ACCT_OUT_FIXED = 0,     /* columns, dashes line */
    ACCT_OUT_PARSABLE = 1,  /* -p: delimiter after every field */
    ACCT_OUT_PARSABLE2 = 2, /* -P: not after the last */
};

struct acct_out {
    enum acct_out_mode mode;
    const char *delim;    /* NULL: "|" */
    bool noheader;        /* -n */
    const char *date_fmt; /* Start, End: NULL "%FT%T" */
    bool date_hash; /* a date wider than its column: '#'s (Slurm >= 23.11's
                     * sacct), not cut (before) */
    int units;      /* MaxRSS, ReqMem: --units (acct_fmt_units); 0 none */
    bool noconvert; /* --noconvert */
};

/* Header (and, fixed width, the dashes line) unless out->noheader. */
void acct_print_header (FILE *f,
                        const struct acct_fmt *fmt,
                        const struct acct_out *out);
void acct_print_row (FILE *f,
                     const struct acct_fmt *fmt,
                     const struct acct_out *out,
                     const struct acct_row *row);

/* ---- selection (-j, -S, -E) ------------------------------------------ */

/* A -j item: "123" (the job, or every task of array job 123), "123_4"
 * (array task), "123.0", "123.batch", "123_4.extern" (one step). */
struct acct_jobsel {
    uint32_t id;   /* job id, or array job id with a task */
    uint32_t task; /* ACCT_NO_VAL: none given */
    bool has_step;
    uint32_t step; /* ACCT_STEP_* or a number */
};

/* Parse a comma list of -j items, appending to *sel (realloc'ed; free()
 * it).  errp names the bad item. */
int acct_jobsel_parse (const char *s,
                       struct acct_jobsel **sel,
                       size_t *n,
                       pin_error_t *errp);

/* Does a selector take the job of `job` (a job line's row)? */
bool acct_jobsel_job (const struct acct_jobsel *sel,
                      const struct acct_row *job);

/* sacct's time formats (-S, -E): "now", "now-1days", "now+2hours"
 * (units: s[econds], m[inutes], h[ours], d[ays], w[eeks]; none: seconds),
 * "today"/"midnight" (00:00 today), "noon", "tomorrow", "HH:MM[:SS]"
 * (today), "YYYY-MM-DD", "YYYY-MM-DDTHH:MM[:SS]", all in local time.
 * `now` is the current time.  Sets *us (microseconds since the epoch). */
int acct_parse_time (const char *s,
                     time_t now,
                     int64_t *us,
                     pin_error_t *errp);

#endif /* !PIN_ACCT_SACCT_H */
