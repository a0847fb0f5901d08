/* acct.c - slurm-pin acct: sacct-compatible listing of slurm-pin's records
 *
 * Options, rows and formats follow sacct (doc/accounting-reports.md lists
 * every rule and the few differences); the records come from the node
 * journals (acctsrc.c), the rows and text from libacct/sacct.h.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <slurm/slurm.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "acctjson.h"
#include "acctsrc.h"
#include "libacct/sacct.h"
#include "subcmd.h"

#define NAME "acct"

enum {
    OPT_DELIM = CMDOPT_LONG,
    OPT_JSON,
    OPT_DELIVER,
    OPT_JOB,
    OPT_UNITS,
    OPT_NOCONVERT
};

/* sacct's -b and -l: -l's fields slurm-pin has, in sacct's order */
#define ACCT_FMT_BRIEF "JobID,State,ExitCode"
#define ACCT_FMT_LONG                                                  \
    "JobID,JobIDRaw,JobName,Partition,MaxRSS,AllocCPUS,Elapsed,State," \
    "ExitCode,ReqMem"

static const struct cmdopt options[] = {
    {"format",
     'o',
     CMDOPT_REQUIRED,
     "LIST",
     "fields, e.g. JobID,CPUEff%8,Cpuset%-20\n"
     "(default: sacct's JobID,JobName,Partition,\n"
     "Account,AllocCPUS,State,ExitCode, and\n"
     "CPUEff,PinPolicy)",
     0},
    {"brief", 'b', CMDOPT_NONE, NULL, "-o " ACCT_FMT_BRIEF, 0},
    {"long",
     'l',
     CMDOPT_NONE,
     NULL,
     "sacct's long listing, the fields slurm-pin has:\n"
     "JobID,JobIDRaw,JobName,Partition,MaxRSS,\n"
     "AllocCPUS,Elapsed,State,ExitCode,ReqMem",
     0},
    {"helpformat", 'e', CMDOPT_NONE, NULL, "list the fields", 0},
    {"parsable", 'p', CMDOPT_NONE, NULL, "'|' after every field", 0},
    {"parsable2", 'P', CMDOPT_NONE, NULL, "'|' between fields", 0},
    {"delimiter",
     OPT_DELIM,
     CMDOPT_REQUIRED,
     "S",
     "S instead of '|' with -p or -P",
     0},
    {"noheader", 'n', CMDOPT_NONE, NULL, "no header", 0},
    {"allocations", 'X', CMDOPT_NONE, NULL, "job lines only", 0},
    {"truncate",
     'T',
     CMDOPT_NONE,
     NULL,
     "Start and End (and Elapsed) cut to -S and -E",
     0},
    {"units",
     OPT_UNITS,
     CMDOPT_REQUIRED,
     "[KMGTP]",
     "MaxRSS and ReqMem in this unit",
     0},
    {"noconvert",
     OPT_NOCONVERT,
     CMDOPT_NONE,
     NULL,
     "MaxRSS and ReqMem in their own unit",
     0},
    {"json",
     OPT_JSON,
     CMDOPT_OPTIONAL,
     "VERSION",
     "sacct --json's shape (data_parser VERSION,\n"
     "default the installed sacct's; \"list\": the\n"
     "installed ones), with slurm_pin objects",
     0},
    CMDOPT_END,
};

static const struct cmdopt deliver_options[] = {
    {"deliver",
     OPT_DELIVER,
     CMDOPT_NONE,
     NULL,
     "send this node's records of ended jobs to\n"
     "slurmdbd instead ('slurm-pin deliver')",
     0},
    {"job", OPT_JOB, CMDOPT_REQUIRED, "N", "with --deliver: only job N", 0},
    CMDOPT_END,
};

static const struct cmdopt_spec spec = {
    .name = NAME,
    .usage =
        "Usage: slurm-pin acct [OPTIONS]\n"
        "       slurm-pin acct --deliver [--job N] [--journal DIR] [-v]\n"
        "\n"
        "List slurm-pin's accounting records the way sacct lists Slurm's: a "
        "job\n"
        "line, then its steps (batch, extern, 0, ...) in start order.\n",
    .usage_status = 2,
    .tables = {acct_opts_jobs,
               acct_opts_window,
               acct_opts_select,
               options,
               acct_opts_source,
               deliver_options,
               NULL},
};

/* ---- --deliver -------------------------------------------------------- */

/* 'slurm-pin acct --deliver': 'slurm-pin deliver' with the journal this
 * command would read (pin.conf's JournalDir= unless --journal). */
static int run_deliver (const char *journal, const char *job, bool verbose)
{
    char buf[4096];
    const char *dir =
        acct_query_journal_dir (NAME, journal, buf, sizeof (buf));
    char *argv[8];
    int argc = 0;

    if (!dir)
        return 1;
    argv[argc++] = (char *)"deliver";
    argv[argc++] = (char *)"--journal";
    argv[argc++] = (char *)dir;
    if (job) {
        argv[argc++] = (char *)"--job";
        argv[argc++] = (char *)job;
    }
    if (verbose)
        argv[argc++] = (char *)"-v";
    argv[argc] = NULL;
    return cmd_deliver (argc, argv);
}

/* ---- main ------------------------------------------------------------- */

/* libslurm's own date formatter (exported, not in slurm.h), which sacct
 * prints Start and End with, into a buffer of the column's width + 1. */
extern void slurm_make_time_str (time_t *time, char *string, int size);

/* Does the installed Slurm fill a date too wide for its column with '#'
 * (23.11 on) rather than cut it?  Asked of its libslurm, not of its
 * version: a 1-character buffer is too small for any date. */
static bool slurm_fills_dates (void)
{
    char b[2] = "";
    time_t t = 1700000000;

    slurm_make_time_str (&t, b, (int)sizeof (b));
    return b[0] == '#';
}

/* A row, with -T its Start and End cut to the window (sacct's
 * JOBCOND_FLAG_NO_TRUNC off: slurmdbd cuts them, and Elapsed follows). */
static void print_row (const struct acct_query *q,
                       const struct acct_fmt *fmt,
                       const struct acct_out *out,
                       const struct acct_row *row,
                       bool truncate)
{
    struct acct_row r;

    if (!truncate) {
        acct_print_row (stdout, fmt, out, row);
        return;
    }
    r = *row;
    if (q->start_us && r.start_us > 0 && r.start_us < q->start_us)
        r.start_us = q->start_us;
    if (q->end_us && r.end_us > q->end_us)
        r.end_us = q->end_us;
    if (r.dbd.valid) { /* read from slurmdbd: its seconds print */
        int64_t s0 = q->start_us / 1000000, e0 = q->end_us / 1000000;
        if (s0 && r.dbd.start > 0 && r.dbd.start < s0)
            r.dbd.start = s0;
        if (e0 && r.dbd.end > e0)
            r.dbd.end = e0;
        if (r.dbd.start > 0 && r.dbd.end >= r.dbd.start)
            r.dbd.elapsed = r.dbd.end - r.dbd.start;
    }
    acct_print_row (stdout, fmt, out, &r);
}

struct listing {
    const struct acct_query *q;
    const struct acct_fmt *fmt;
    const struct acct_out *out;
    bool allocations, truncate, header;
};

/* The rows of the jobs of `t` (acct_query's each: a few jobs at a time). */
static int list_jobs (struct acct_table *t, void *arg)
{
    struct listing *l = arg;

    if (!l->header) {
        acct_print_header (stdout, l->fmt, l->out);
        l->header = true;
    }
    for (size_t i = 0; i < t->njobs; i++) {
        const struct acct_job *j = &t->jobs[i];
        if (!acct_query_in_window (l->q, j))
            continue;
        if (acct_query_job_line (l->q, j))
            print_row (l->q, l->fmt, l->out, &j->job, l->truncate);
        for (size_t k = 0; !l->allocations && k < j->nsteps; k++)
            if (acct_query_step_line (l->q, j, &j->steps[k]))
                print_row (l->q, l->fmt, l->out, &j->steps[k], l->truncate);
    }
    return ferror (stdout) ? 1 : 0;
}

int cmd_acct (int argc, char **argv)
{
    struct acct_query q = {0};
    struct acct_fmt fmt = {0};
    struct acct_out out = {ACCT_OUT_FIXED,
                           NULL,
                           false,
                           acct_time_format (getenv ("SLURM_TIME_FORMAT")),
                           false,
                           0,
                           false};
    struct acct_table t;
    struct cmdopt_parser p;
    const char *deliver_job = NULL, *arg, *json_want = NULL;
    int json_ver = 0;
    bool json = false, allocations = false, have_fmt = false, deliver = false;
    bool brief = false, longfmt = false, truncate = false;
    pin_error_t fmt_e = {""};
    char fmt_err[sizeof (fmt_e.text)] = "";
    unsigned skipped = 0;
    pin_error_t e = {""};
    int c, rc = 1;

    acct_table_init (&t);
    out.date_hash = slurm_fills_dates ();
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
            case 'o':
                /* the first bad -o is told after the options, once -l
                 * (sacct's first complaint) has had its say */
                if (acct_fmt_parse (&fmt, arg, fmt_err[0] ? &e : &fmt_e) < 0
                    && !fmt_err[0])
                    snprintf (fmt_err, sizeof (fmt_err), "%s", fmt_e.text);
                have_fmt = true;
                break;
            case 'p':
                out.mode = ACCT_OUT_PARSABLE;
                break;
            case 'P':
                out.mode = ACCT_OUT_PARSABLE2;
                break;
            case OPT_DELIM:
                out.delim = arg;
                break;
            case 'n':
                out.noheader = true;
                break;
            case 'X':
                allocations = true;
                break;
            case 'b':
                brief = true;
                break;
            case 'l':
                longfmt = true;
                break;
            case 'T':
                truncate = true;
                break;
            case OPT_UNITS:
                if ((out.units = acct_units_parse (arg)) < 0) {
                    cmd_error (NAME,
                               "--units: invalid unit type \"%s\": one of "
                               "K, M, G, T, P",
                               arg);
                    rc = 2;
                    goto done;
                }
                break;
            case OPT_NOCONVERT:
                out.noconvert = true;
                break;
            case OPT_JSON:
                json = true;
                json_want = arg;
                break;
            case OPT_DELIVER:
                deliver = true;
                break;
            case OPT_JOB:
                deliver_job = arg;
                break;
            case 'e':
                printf ("%s\n", acct_field_list ());
                rc = cmd_flush_stdout (NAME) < 0;
                goto done;
        }
    }
    if (c < 0 || cmdopt_no_operands (&p) < 0) {
        rc = p.status;
        goto done;
    }
    /* sacct: -o and -l do not go together; -b and -l add their fields
     * after -o's */
    if (longfmt && have_fmt) {
        cmd_error (NAME,
                   "options -o (--format) and -l (--long) are mutually "
                   "exclusive");
        rc = 2;
        goto done;
    }
    if (fmt_err[0]) {
        cmd_error (NAME, "-o: %s", fmt_err);
        goto done;
    }
    if (deliver_job && !deliver) {
        cmd_error (NAME, "--job goes with --deliver (use -j to list jobs)");
        rc = 2;
        goto done;
    }
    if (deliver) {
        rc = run_deliver (q.journal, deliver_job, q.verbose);
        goto done;
    }
    if ((brief && acct_fmt_parse (&fmt, ACCT_FMT_BRIEF, &e) < 0)
        || (longfmt && acct_fmt_parse (&fmt, ACCT_FMT_LONG, &e) < 0)) {
        cmd_error (NAME, "%s", e.text);
        goto done;
    }
    have_fmt = have_fmt || brief || longfmt;
    if (!have_fmt && acct_fmt_parse (&fmt, ACCT_FMT_DEFAULT, &e) < 0) {
        cmd_error (NAME, "%s", e.text);
        goto done;
    }
    if (json && acct_json_shape (NAME, json_want, &json_ver) < 0) {
        rc = 2;
        goto done;
    }
    if (json && json_ver == 0) { /* --json=list */
        rc = 0;
        goto done;
    }
    if (acct_query_window (NAME, &q, time (NULL)) < 0)
        goto done;
    if (getuid () != 0) {
        bool others = q.all_users;
        for (size_t i = 0; i < q.nuids; i++)
            others = others || q.uids[i] != getuid ();
        if (others)
            cmd_error (NAME,
                       "only root sees other users' jobs: showing "
                       "yours");
    }
    /* one thread: stdio need not lock stdout for each of the millions of
     * writes of a listing (perf: 3 % of its time) */
    __fsetlocking (stdout, FSETLOCKING_BYCALLER);
    q.progress = !json && out.mode != ACCT_OUT_PARSABLE
                 && out.mode != ACCT_OUT_PARSABLE2;
    /* text: job by job, never the whole journal in memory */
    struct listing l = {&q, &fmt, &out, allocations, truncate, false};
    struct acct_json js;
    if (json) { /* --json too: job by job (acctjson.h) */
        acct_json_init (&js, NAME, json_ver, &q, allocations);
        q.each = acct_json_jobs;
        q.each_arg = &js;
    } else {
        q.each = list_jobs;
        q.each_arg = &l;
    }
    if (acct_query_load (NAME, &q, &t, &skipped) < 0)
        goto done;
    if (json) {
        rc = acct_json_print (&js, skipped, argc, argv) < 0;
        if (rc == 0)
            rc = cmd_flush_stdout (NAME) < 0;
        goto done;
    }
    if (!l.header)
        acct_print_header (stdout, &fmt, &out);
    rc = cmd_flush_stdout (NAME) < 0;
done:
    cmdopt_fini (&p);
    acct_table_free (&t);
    acct_query_fini (&q);
    return rc;
}
