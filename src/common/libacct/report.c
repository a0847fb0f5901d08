/* report.c - per-group statistics of step rows (slurm-pin report) */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libacct/report.h"

int acct_by_parse (const char *s, enum acct_by *by, pin_error_t *errp)
{
    static const char *const names[] = {"policy", "user", "partition"};

    for (int i = 0; i < 3; i++) {
        if (s && strcmp (s, names[i]) == 0) {
            *by = (enum acct_by)i;
            return 0;
        }
    }
    return errprintf (errp,
                      "--by=%s: unknown grouping; known: policy, user, "
                      "partition",
                      s ? s : "(null)");
}

double acct_quantile (const double *v, size_t n, double q)
{
    double pos, frac;
    size_t lo;

    if (n == 0)
        return -1;
    if (q <= 0)
        return v[0];
    if (q >= 1)
        return v[n - 1];
    pos = q * (double)(n - 1);
    lo = (size_t)pos;
    frac = pos - (double)lo;
    if (lo + 1 >= n)
        return v[n - 1];
    return v[lo] + frac * (v[lo + 1] - v[lo]);
}

static int cmp_double (const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_group (const void *a, const void *b)
{
    return strcmp (((const struct acct_group *)a)->key,
                   ((const struct acct_group *)b)->key);
}

static struct acct_group *group_get (struct acct_report *rep,
                                     size_t *cap,
                                     const char *key)
{
    struct acct_group *g;

    for (size_t i = 0; i < rep->ngroups; i++)
        if (strcmp (rep->groups[i].key, key) == 0)
            return &rep->groups[i];
    if (rep->ngroups == *cap) {
        size_t ncap = *cap ? 2 * *cap : 8;
        struct acct_group *n = realloc (rep->groups, ncap * sizeof (*n));
        if (!n)
            return NULL;
        rep->groups = n;
        *cap = ncap;
    }
    g = &rep->groups[rep->ngroups++];
    memset (g, 0, sizeof (*g));
    snprintf (g->key, sizeof (g->key), "%s", key);
    return g;
}

int acct_report_add (const struct acct_table *t,
                     enum acct_by by,
                     bool with_extern,
                     struct acct_report *rep)
{
    size_t *cap = &rep->capgroups;

    for (size_t i = 0; i < t->njobs; i++) {
        const struct acct_job *j = &t->jobs[i];
        for (size_t k = 0; k < j->nsteps; k++) {
            const struct acct_row *s = &j->steps[k];
            const char *key;
            struct acct_group *g;
            double eff, *n;

            if (s->step_id == ACCT_STEP_EXTERN && !with_extern)
                continue;
            /* a job slurm-pin never placed (slurmdbd's record alone)
             * compares no policy */
            if (s->dbd.alone)
                continue;
            key = by == ACCT_BY_POLICY ? (s->policy ? s->policy : "none")
                  : by == ACCT_BY_USER ? j->job.user
                                       : j->job.partition;
            if (!(g = group_get (rep, cap, key[0] ? key : "(unknown)")))
                goto nomem;
            g->nsteps++;
            g->user_usec += (double)s->user_usec;
            g->system_usec += (double)s->system_usec;
            eff = acct_row_eff (s);
            if (eff < 0)
                continue;
            g->alloc_usec +=
                (double)(s->end_us - s->start_us) * (double)s->alloc_cpus;
            /* room doubled when neff is 0 or a power of two */
            if (!(g->neff & (g->neff - 1))) {
                if (!(n = realloc (g->eff,
                                   (g->neff ? 2 * g->neff : 1) * sizeof (*n))))
                    goto nomem;
                g->eff = n;
            }
            g->eff[g->neff++] = eff;
        }
    }
    return 0;
nomem:
    acct_report_free (rep);
    errno = ENOMEM;
    return -1;
}

void acct_report_finish (struct acct_report *rep)
{
    for (size_t i = 0; i < rep->ngroups; i++) {
        struct acct_group *g = &rep->groups[i];
        if (g->neff)
            qsort (g->eff, g->neff, sizeof (double), cmp_double);
        g->q1 = acct_quantile (g->eff, g->neff, 0.25);
        g->median = acct_quantile (g->eff, g->neff, 0.5);
        g->q3 = acct_quantile (g->eff, g->neff, 0.75);
    }
    if (rep->ngroups > 1)
        qsort (rep->groups, rep->ngroups, sizeof (rep->groups[0]), cmp_group);
}

int acct_report_build (const struct acct_table *t,
                       enum acct_by by,
                       bool with_extern,
                       struct acct_report *rep)
{
    memset (rep, 0, sizeof (*rep));
    if (acct_report_add (t, by, with_extern, rep) < 0)
        return -1;
    acct_report_finish (rep);
    return 0;
}

void acct_report_free (struct acct_report *rep)
{
    if (!rep)
        return;
    for (size_t i = 0; i < rep->ngroups; i++)
        free (rep->groups[i].eff);
    free (rep->groups);
    rep->groups = NULL;
    rep->ngroups = 0;
    rep->capgroups = 0;
}

double acct_group_eff (const struct acct_group *g)
{
    if (g->alloc_usec <= 0)
        return -1;
    return (g->user_usec + g->system_usec) / g->alloc_usec;
}

double acct_group_sys_share (const struct acct_group *g)
{
    double cpu = g->user_usec + g->system_usec;
    return cpu > 0 ? g->system_usec / cpu : -1;
}
