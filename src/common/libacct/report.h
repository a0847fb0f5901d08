/* report.h - per-group statistics of step rows (slurm-pin report)
 *
 * Seed 000 compares pinning configurations by the user and system time
 * of their jobs; this groups the step rows of a table (sacct.h) by
 * policy, user or partition and gives, per group: steps, CPU hours, the
 * overall efficiency, the share of system time, and the spread of the
 * steps' efficiencies (quartiles by linear interpolation, numpy's
 * default "linear" method).  Pure: no output.
 */
#ifndef PIN_ACCT_REPORT_H
#define PIN_ACCT_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "libacct/sacct.h"
#include "libutil/errprintf.h"

enum acct_by {
    ACCT_BY_POLICY,
    ACCT_BY_USER,
    ACCT_BY_PARTITION,
};

/* "policy", "user", "partition" -> *by; errp lists the valid ones. */
int acct_by_parse (const char *s, enum acct_by *by, pin_error_t *errp);

struct acct_group {
    char key[ACCT_STR];
    size_t nsteps; /* step rows in the group */
    double user_usec, system_usec;
    double alloc_usec;     /* sum of elapsed * allocated CPUs */
    size_t neff;           /* steps with an efficiency (elapsed > 0) */
    double *eff;           /* their efficiencies, sorted ascending */
    double q1, median, q3; /* -1 when neff == 0 */
};

struct acct_report {
    struct acct_group *groups; /* sorted by key */
    size_t ngroups;
    size_t capgroups;
};

/* q-quantile (0..1) of sorted values, linear interpolation between the
 * closest ranks; -1 for n == 0. */
double acct_quantile (const double *sorted, size_t n, double q);

/* Group the step rows of `t` (sorted or not).  Extern steps are left out
 * unless `with_extern`: they hold the allocation, not the work.  Returns
 * 0, or -1 with errno ENOMEM. */
int acct_report_build (const struct acct_table *t,
                       enum acct_by by,
                       bool with_extern,
                       struct acct_report *rep);
void acct_report_free (struct acct_report *rep); /* rep may be NULL */

/* acct_report_build() a table at a time (the journal read job by job):
 * acct_report_add() for each table into a zeroed `rep`, then
 * acct_report_finish() once.  -1 with errno ENOMEM (rep freed). */
int acct_report_add (const struct acct_table *t,
                     enum acct_by by,
                     bool with_extern,
                     struct acct_report *rep);
void acct_report_finish (struct acct_report *rep);

/* Efficiency (cpu / alloc) and system share (system / cpu) of a group;
 * -1 when undefined. */
double acct_group_eff (const struct acct_group *g);
double acct_group_sys_share (const struct acct_group *g);

#endif /* !PIN_ACCT_REPORT_H */
