/* report.c - slurm-pin report: compare policies (users, partitions)
 *
 * Seed 000 compares pinning configurations by their jobs' user and system
 * time; none of sacct, seff, reportseff or jobstats groups by placement.
 * This groups the step rows of a time window (libacct/report.h) and prints
 * per group: steps, CPU hours, efficiency, system share and the quartiles
 * of the steps' efficiencies.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acctsrc.h"
#include "libacct/report.h"
#include "subcmd.h"

#define NAME "report"

enum { OPT_JSON = CMDOPT_LONG, OPT_EXTERN, OPT_BY };

static const struct cmdopt options[] = {
    /* no short letter: sacct's -b is --brief, and no letter of sacct's
     * means something else here */
    {"by",
     OPT_BY,
     CMDOPT_REQUIRED,
     "KEY",
     "policy (default), user or partition",
     0},
    CMDOPT_END,
};

static const struct cmdopt more_options[] = {
    {"with-extern",
     OPT_EXTERN,
     CMDOPT_NONE,
     NULL,
     "count extern steps too (left out: they hold\n"
     "the allocation, not the work)",
     0},
    {"json", OPT_JSON, CMDOPT_NONE, NULL, "one JSON object", 0},
    CMDOPT_END,
};

static const struct cmdopt_spec spec = {
    .name = NAME,
    .usage =
        "Usage: slurm-pin report [--by=policy|user|partition] [OPTIONS]\n"
        "\n"
        "Per policy (user, partition): the steps that ran in the window, "
        "their CPU\n"
        "hours, overall CPU efficiency, the share of system time, and the "
        "first\n"
        "quartile, median and third quartile of the steps' efficiencies.\n",
    .usage_status = 2,
    .tables =
        {options, acct_opts_window, more_options, acct_opts_source, NULL},
};

static const char *by_name (enum acct_by by)
{
    return by == ACCT_BY_POLICY ? "policy"
           : by == ACCT_BY_USER ? "user"
                                : "partition";
}

static void pct (double v, char *buf, size_t n)
{
    if (v < 0)
        snprintf (buf, n, "-");
    else
        snprintf (buf, n, "%.2f%%", v * 100);
}

static json_object *num_or_null (double v)
{
    return v < 0 ? NULL : json_object_new_double (v);
}

static int print_json (enum acct_by by,
                       const struct acct_query *q,
                       const struct acct_report *rep)
{
    json_object *root = json_object_new_object (), *groups;

    if (!root)
        return cmd_print_json (NAME, NULL, stdout);
    cmd_json_add (root, "by", json_object_new_string (by_name (by)), false);
    cmd_json_add (root,
                  "start",
                  json_object_new_int64 (q->start_us / 1000000),
                  false);
    cmd_json_add (root,
                  "end",
                  q->end_us ? json_object_new_int64 (q->end_us / 1000000)
                            : NULL,
                  true);
    groups = json_object_new_array ();
    for (size_t i = 0; i < rep->ngroups; i++) {
        const struct acct_group *g = &rep->groups[i];
        json_object *o = json_object_new_object ();
        cmd_json_add (o, by_name (by), json_object_new_string (g->key), false);
        cmd_json_add (o,
                      "steps",
                      json_object_new_int64 ((int64_t)g->nsteps),
                      false);
        cmd_json_add (o,
                      "cpu_hours",
                      json_object_new_double ((g->user_usec + g->system_usec)
                                              / 3.6e9),
                      false);
        cmd_json_add (o,
                      "alloc_cpu_hours",
                      json_object_new_double (g->alloc_usec / 3.6e9),
                      false);
        cmd_json_add (o,
                      "user_usec",
                      json_object_new_double (g->user_usec),
                      false);
        cmd_json_add (o,
                      "system_usec",
                      json_object_new_double (g->system_usec),
                      false);
        cmd_json_add (o, "efficiency", num_or_null (acct_group_eff (g)), true);
        cmd_json_add (o,
                      "system_share",
                      num_or_null (acct_group_sys_share (g)),
                      true);
        cmd_json_add (o, "efficiency_q1", num_or_null (g->q1), true);
        cmd_json_add (o, "efficiency_median", num_or_null (g->median), true);
        cmd_json_add (o, "efficiency_q3", num_or_null (g->q3), true);
        json_object_array_add (groups, o);
    }
    cmd_json_add (root, "groups", groups, false);
    return cmd_print_json (NAME, root, stdout);
}

static void print_text (enum acct_by by, const struct acct_report *rep)
{
    char h[16];

    snprintf (h, sizeof (h), "%s", by_name (by));
    h[0] = (char)(h[0] - 'a' + 'A');
    printf ("%-16s %6s %10s %8s %9s %8s %8s %8s\n",
            h,
            "Steps",
            "CPUHours",
            "CPUEff",
            "SysShare",
            "EffQ1",
            "EffMed",
            "EffQ3");
    for (size_t i = 0; i < rep->ngroups; i++) {
        const struct acct_group *g = &rep->groups[i];
        char e[16], s[16], q1[16], md[16], q3[16];
        pct (acct_group_eff (g), e, sizeof (e));
        pct (acct_group_sys_share (g), s, sizeof (s));
        pct (g->q1, q1, sizeof (q1));
        pct (g->median, md, sizeof (md));
        pct (g->q3, q3, sizeof (q3));
        printf ("%-16s %6zu %10.2f %8s %9s %8s %8s %8s\n",
                cmd_text (g->key),
                g->nsteps,
                (g->user_usec + g->system_usec) / 3.6e9,
                e,
                s,
                q1,
                md,
                q3);
    }
}

struct adding {
    const struct acct_query *q;
    struct acct_report *rep;
    enum acct_by by;
    bool with_extern, nomem;
};

/* The jobs of `t` in the window into the report (acct_query's each). */
static int add_jobs (struct acct_table *t, void *arg)
{
    struct adding *a = arg;
    struct acct_table win;

    acct_table_init (&win);
    if (!(win.jobs =
              malloc ((t->njobs ? t->njobs : 1) * sizeof (*win.jobs)))) {
        a->nomem = true;
        return 1;
    }
    for (size_t i = 0; i < t->njobs; i++)
        if (acct_query_in_window (a->q, &t->jobs[i]))
            win.jobs[win.njobs++] = t->jobs[i];
    if (acct_report_add (&win, a->by, a->with_extern, a->rep) < 0)
        a->nomem = true;
    free (win.jobs); /* the rows are t's */
    return a->nomem ? 1 : 0;
}

int cmd_report (int argc, char **argv)
{
    struct acct_query q = {0};
    struct acct_table t;
    struct acct_report rep = {0};
    enum acct_by by = ACCT_BY_POLICY;
    struct cmdopt_parser p;
    const char *arg;
    bool json = false, with_extern = false;
    unsigned skipped;
    pin_error_t e = {""};
    int c, rc = 1;

    acct_table_init (&t);
    if (cmdopt_init (&p, &spec, argc, argv) < 0) {
        cmd_error (NAME, "out of memory");
        return 1;
    }
    while ((c = cmdopt_next (&p, &arg)) > 0) {
        int taken = acct_query_opt (NAME, &q, c, arg);
        if (taken < 0)
            goto done;
        if (taken)
            continue;
        switch (c) {
            case OPT_BY:
                if (acct_by_parse (arg, &by, &e) < 0) {
                    cmd_error (NAME, "%s", e.text);
                    rc = 2;
                    goto done;
                }
                break;
            case OPT_JSON:
                json = true;
                break;
            case OPT_EXTERN:
                with_extern = true;
                break;
        }
    }
    if (c < 0 || cmdopt_no_operands (&p) < 0) {
        rc = p.status;
        goto done;
    }
    if (acct_query_window (NAME, &q, time (NULL)) < 0) {
        rc = 2;
        goto done;
    }
    q.progress = !json;
    /* job by job: the window's steps into the groups, nothing kept but
     * the groups and their efficiencies */
    struct adding add = {&q, &rep, by, with_extern, false};
    q.each = add_jobs;
    q.each_arg = &add;
    if (acct_query_load (NAME, &q, &t, &skipped) < 0)
        goto done;
    if (add.nomem) {
        cmd_error (NAME, "out of memory");
        goto done;
    }
    acct_report_finish (&rep);
    if (json)
        rc = print_json (by, &q, &rep) < 0;
    else {
        print_text (by, &rep);
        rc = cmd_flush_stdout (NAME) < 0;
    }
done:
    cmdopt_fini (&p);
    acct_report_free (&rep);
    acct_table_free (&t);
    free (q.uids);
    return rc;
}
