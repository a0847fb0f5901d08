/* acctsrc.h - where slurm-pin acct, eff and report get their records
 *
 * Source -> records filtered by who may see them and by the options -> a
 * table (libacct/sacct.h) -> NodeList through libslurm's hostlist.
 *
 * The source (doc/accounting.md, "Where the commands read records"):
 * --journal DIR: that node journal; else, when the slurm.conf libslurm
 * reads says AccountingStorageType=accounting_storage/slurmdbd, the job
 * summaries in slurmdbd (acctdbd.h); else pin.conf's JournalDir=.
 */
#ifndef PIN_CMD_ACCTSRC_H
#define PIN_CMD_ACCTSRC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "cmdopt.h"
#include "libacct/sacct.h"

/* The journal when neither --journal nor pin.conf's JournalDir= says
 * (acctsrc.c reads JournalDir= through libconf when libconf has it, that
 * is once acct-core's branch is merged). */
#define ACCT_JOURNAL_DEFAULT "/var/lib/slurm-pin/journal"

struct acct_query {
    const char *journal;     /* NULL: the default */
    struct acct_jobsel *sel; /* -j, NULL: all */
    size_t nsel;
    uid_t *uids; /* -u, NULL: see all_users */
    size_t nuids;
    bool all_users;           /* -a */
    const char *starttime;    /* -S as given, NULL: the default */
    const char *endtime;      /* -E as given, NULL: now */
    int64_t start_us, end_us; /* window (0: open), from acct_query_window */
    bool verbose;             /* -v: say on stderr which source */
    /* set by the caller, may be NULL: the journal is read job by job in
     * listing order and each(t) called with a table of one job id at a
     * time (sorted, NodeList set; freed after), so that no more than one
     * job is held; non-zero from it stops.  The table acct_query_load()
     * returns is then empty.  With slurmdbd, or -j, each() is called once
     * with the whole table, which acct_query_load() then returns empty. */
    int (*each) (struct acct_table *t, void *arg);
    void *each_arg;
    bool progress;   /* may show progress on stderr (not -p, -P,
                        --json): acct_query_load shows it when
                        stderr is a terminal and stdout not a
                        pipe */
    char dir[4096];  /* set by acct_query_load: the journal read
                        ("" when slurmdbd was read) */
    char source[16]; /* set by acct_query_load: "journal" or
                        "slurmdbd" */
    char why[512];   /* set by acct_query_load: why that source */
    /* set by the caller, may be NULL: called with every record kept (as
     * the table would have it); non-zero from it is out of memory.  With
     * tap_only the records are not merged into the table. */
    acct_record_cb tap;
    void *tap_arg;
    bool tap_only;
    /* slurmdbd: the records as the nodes wrote them, without slurmdbd's
     * sacct fields over them (acct_source_dbd_records) */
    bool raw;
    /* acct_opts_select (sacct's): NULL or 0 when not given */
    uint32_t states;   /* -s: bits of acct_state_names[] */
    char *names;       /* --name: ',' list */
    char *partitions;  /* -r */
    char *accounts;    /* -A */
    char *clusters;    /* -M ("all": every cluster, as -L) */
    char *nodes;       /* -N: a hostlist */
    void *nodes_hl;    /* its hostlist_t, made by acct_query_window */
    bool all_clusters; /* -L */
    bool duplicates;   /* -D */
    char cluster[256]; /* set by acct_query_load: the cluster shown by
                          default (slurm.conf's ClusterName), "" every
                          cluster */
};

/* The options that select jobs and where their records are read, one
 * table fragment each, shared by acct, eff and report (cmdopt.h):
 *   acct_opts_jobs:    -j, --jobs=LIST
 *   acct_opts_window:  -S, --starttime; -E, --endtime; -u, --user (--uid);
 *                      -a, --allusers
 *   acct_opts_source:  --journal=DIR; -v, --verbose
 * A subcommand lists those it takes in its cmdopt_spec and hands every
 * key to acct_query_opt() first. */
#define ACCT_OPT_JOURNAL (CMDOPT_LONG + 100)
extern const struct cmdopt acct_opts_jobs[];
extern const struct cmdopt acct_opts_window[];
extern const struct cmdopt acct_opts_source[];
/* acct's own selection, sacct's options: -s, --state; --name; -r,
 * --partition; -N, --nodelist; -A, --accounts; -M, --clusters; -L,
 * --allclusters; -D, --duplicates */
extern const struct cmdopt acct_opts_select[];
#define ACCT_OPT_NAME (CMDOPT_LONG + 101)

/* sacct's job state names, in acct_query's `states` bit order */
extern const char *const acct_state_names[];

/* Free what acct_query_opt() and acct_query_window() allocated. */
void acct_query_fini (struct acct_query *q);

/* Take option `key` (with `arg`) into q: 1 when it is one of the tables
 * above, 0 when it is not (the caller's own), -1 after printing the
 * error of a bad value (-j, -u). */
int acct_query_opt (const char *subcmd,
                    struct acct_query *q,
                    int key,
                    const char *arg);

/* After the options: the window from -S and -E (sacct: without -j, from
 * 00:00 today; without -E, to now).  0, or -1 after printing
 * "-S: invalid time ..." (or -E). */
int acct_query_window (const char *subcmd, struct acct_query *q, time_t now);

/* -u LIST: names or uids -> q->uids.  -1 after printing the error. */
int acct_query_users (const char *subcmd,
                      struct acct_query *q,
                      const char *list);

/* The journal directory: `opt` (--journal) if not NULL, else pin.conf's
 * JournalDir= (in buf), else the default.  NULL after printing the error. */
const char *acct_query_journal_dir (const char *subcmd,
                                    const char *opt,
                                    char *buf,
                                    size_t n);

/* Read the records, keep those the caller may see and the query selects,
 * merge them into `t` (sorted), set NodeList.  Unparsable lines are
 * reported on stderr ("skipped N lines") and counted in *skipped.
 * -1 after printing the error. */
int acct_query_load (const char *subcmd,
                     struct acct_query *q,
                     struct acct_table *t,
                     unsigned *skipped);

/* Should a row of job `j` be printed?  The job line when no -j was given
 * or a -j item names the job (not one step of it); a step when its job is
 * selected whole or a -j item names the step. */
bool acct_query_job_line (const struct acct_query *q,
                          const struct acct_job *j);
bool acct_query_step_line (const struct acct_query *q,
                           const struct acct_job *j,
                           const struct acct_row *step);

/* Does the job fall in the -S/-E window? */
bool acct_query_in_window (const struct acct_query *q,
                           const struct acct_job *j);

#endif /* !PIN_CMD_ACCTSRC_H */
