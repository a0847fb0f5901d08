/* acctdbd.h - records of jobs from slurmdbd (the summaries in AdminComment)
 *
 * For 'slurm-pin acct' when accounting is configured: the records of the
 * selected jobs come from the job summary every node delivered to slurmdbd
 * (doc/accounting-slurmdbd.md), and the job's own sacct fields (JobName,
 * User, State, Elapsed, AllocCPUS, Start, End) are taken from slurmdbd's
 * job and step records, so that they print as sacct prints them.
 * Needs acct_record_from_json (record.c) at link time.
 */
#ifndef PIN_ACCTDBD_H
#define PIN_ACCTDBD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "libacct/acct.h"

/* Call cb for every record of JOBS[0..njobs-1] (when njobs is 0: all jobs
 * of the cluster that ran in [start, end], 0 meaning a day ago and now), jobs
 * in slurmdbd's order, each job's records node by node.  A job without a
 * summary yields nothing; a summary that does not decode, or a record that
 * does not parse, is counted in *bad (may be NULL).  Returns 0, the non-zero
 * value of cb, or -1 with errp (slurmdbd not reachable). */
int acct_source_dbd (const uint32_t *jobs,
                     size_t njobs,
                     time_t start,
                     time_t end,
                     acct_record_cb cb,
                     void *arg,
                     unsigned *bad,
                     pin_error_t *errp);

/* The same, with `raw`: the records exactly as the nodes wrote them
 * (times in microseconds, each node's CPUs), without slurmdbd's values
 * put over the fields sacct prints: what statistics over the records
 * want (slurm-pin experiment report), so that they come out the same as
 * from the journals. */
int acct_source_dbd_records (const uint32_t *jobs,
                             size_t njobs,
                             time_t start,
                             time_t end,
                             bool raw,
                             acct_record_cb cb,
                             void *arg,
                             unsigned *bad,
                             pin_error_t *errp);

/* sacct's -D for the queries above: every job of a reused job id, not
 * only the most recent (JOBCOND_FLAG_DUP). */
void acct_source_dbd_duplicates (bool on);

#endif /* !PIN_ACCTDBD_H */
