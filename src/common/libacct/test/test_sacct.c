/* test_sacct.c - sacct's format rules, field parsing, and the merging of
 * records into rows (libacct/sacct.h) */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libacct/sacct.h"
#include "libtest/tap.h"

/* ---- time and value formats ------------------------------------------ */

static const struct {
    int64_t secs;
    const char *want;
} secs_cases[] = {
    {0, "00:00:00"},
    {59, "00:00:59"},
    {61, "00:01:01"},
    {3661, "01:01:01"},
    {86399, "23:59:59"},
    {86400, "1-00:00:00"},
    {90061, "1-01:01:01"},
    {10 * 86400 + 5, "10-00:00:05"},
    {-1, "INVALID"},
};

START_TEST (test_secs)
{
    char buf[64];
    acct_fmt_secs (secs_cases[_i].secs, buf, sizeof (buf));
    ck_assert_str_eq (buf, secs_cases[_i].want);
}
END_TEST

static const struct {
    uint64_t usec;
    const char *want;
} cpu_cases[] = {
    {0, "00:00:00"},   /* no milliseconds: 00:MM:SS */
    {999, "00:00:00"}, /* under a millisecond */
    {1500, "00:00.001"},
    {1234567, "00:01.234"},
    {59999999, "00:59.999"},
    {60000000, "00:01:00"},
    {61500000, "01:01.500"},
    {3599999000ull, "59:59.999"},
    {3600000000ull, "01:00:00"},
    {3600500000ull, "01:00:00"}, /* an hour or more: no ms */
    {86400000000ull, "1-00:00:00"},
    {2 * 86400000000ull + 3723000000ull, "2-01:02:03"},
};

START_TEST (test_cputime)
{
    char buf[64];
    acct_fmt_cputime (cpu_cases[_i].usec, buf, sizeof (buf));
    ck_assert_str_eq (buf, cpu_cases[_i].want);
}
END_TEST

static const struct {
    int64_t us;
    const char *want;
} date_cases[] = {
    {0, "Unknown"},
    {-5, "Unknown"},
    {1700000000LL * 1000000, "2023-11-14T22:13:20"},
    {1700000000LL * 1000000 + 999999, "2023-11-14T22:13:20"},
};

START_TEST (test_date)
{
    char buf[64];
    setenv ("TZ", "UTC", 1);
    tzset ();
    acct_fmt_date (date_cases[_i].us, buf, sizeof (buf));
    ck_assert_str_eq (buf, date_cases[_i].want);
}
END_TEST

static const struct {
    const char *env, *want;
} tfmt_cases[] = {
    {NULL, NULL},
    {"", NULL},
    {"standard", NULL},
    {"relative", NULL}, /* not supported: standard */
    {"nopercent", NULL},
    {"%d/%m %H:%M:%S and a very long tail", NULL}, /* >= 32 bytes */
    {"%d/%m %H:%M", "14/11 22:13"},
};

START_TEST (test_time_format)
{
    const char *f = acct_time_format (tfmt_cases[_i].env);
    char buf[64];

    setenv ("TZ", "UTC", 1);
    tzset ();
    if (!tfmt_cases[_i].want) {
        ck_assert_ptr_null (f);
        return;
    }
    ck_assert_ptr_nonnull (f);
    acct_fmt_date_fmt (1700000000LL * 1000000, f, buf, sizeof (buf));
    ck_assert_str_eq (buf, tfmt_cases[_i].want);
    acct_fmt_date_fmt (0, f, buf, sizeof (buf));
    ck_assert_str_eq (buf, "Unknown");
}
END_TEST

static const struct {
    int32_t st;
    const char *want;
} exit_cases[] = {
    {-1, ""},
    {0, "0:0"},
    {1 << 8, "1:0"},
    {2 << 8, "2:0"},
    {9, "0:9"}, /* killed by SIGKILL */
    {15, "0:15"},
#if ACCT_EXIT_TAKES_128
    {130 << 8, "2:0"}, /* sacct takes 128 off (up to 24.11) */
#else
    {130 << 8, "130:0"}, /* 26.05's sacct: the code whole */
#endif
};

START_TEST (test_exitcode)
{
    char buf[64];
    acct_fmt_exitcode (exit_cases[_i].st, buf, sizeof (buf));
    ck_assert_str_eq (buf, exit_cases[_i].want);
}
END_TEST

static const struct {
    double eff;
    const char *want;
} eff_cases[] = {
    {0.9741, "97.41%"},
    {1.0, "100.00%"},
    {0.0, "0.00%"},
    {1.234, "123.40%"},
    {0.00004, "0.00%"},
    {-1, ""},
};

START_TEST (test_eff)
{
    char buf[64];
    acct_fmt_eff (eff_cases[_i].eff, buf, sizeof (buf));
    ck_assert_str_eq (buf, eff_cases[_i].want);
}
END_TEST

static const struct {
    uint64_t b;
    const char *want;
} bytes_cases[] = {
    {0, "0"},
    {1023, "1023"},
    {1024, "1K"},
    {1536, "1.50K"},
    {1048576, "1M"},
    {1073741824ull * 3 / 2, "1.50G"},
};

START_TEST (test_bytes)
{
    char buf[64];
    acct_fmt_bytes (bytes_cases[_i].b, buf, sizeof (buf));
    ck_assert_str_eq (buf, bytes_cases[_i].want);
}
END_TEST

/* MaxRSS (bytes, orig 0) and ReqMem (MB, orig 2) as sacct's
 * convert_num_unit2 prints them (CONVERT_NUM_UNIT_EXACT, --units,
 * --noconvert) */
static const struct {
    double num;
    int orig, units;
    bool noconvert;
    const char *want;
} units_cases[] = {
    {0, 0, 0, false, "0"},
    {1000, 0, 0, false, "1000"},
    {41943040, 0, 0, false, "40M"},
    {43290624, 0, 0, false, "42276K"},
    {1610612736, 0, 3, false, "1.50G"},
    {1610612736, 0, 0, true, "1610612736"},
    {4000, 2, 0, false, "4000M"},
    {4096, 2, 0, false, "4G"},
    {4096, 2, 0, true, "4096M"},
    {4096, 2, 1, false, "4194304K"},
    {4000, 2, 3, false, "3.91G"},
    {100, 2, 3, true, "0.10G"},
};

START_TEST (test_units)
{
    char buf[64];
    acct_fmt_units (units_cases[_i].num,
                    units_cases[_i].orig,
                    units_cases[_i].units,
                    units_cases[_i].noconvert,
                    buf,
                    sizeof (buf));
    ck_assert_str_eq (buf, units_cases[_i].want);
}
END_TEST

START_TEST (test_units_timelimit)
{
    char buf[64];
    ck_assert_int_eq (acct_units_parse ("k"), 1);
    ck_assert_int_eq (acct_units_parse ("P"), 5);
    ck_assert_int_eq (acct_units_parse ("KB"), -1);
    ck_assert_int_eq (acct_units_parse (""), -1);
    acct_fmt_timelimit (90, buf, sizeof (buf));
    ck_assert_str_eq (buf, "01:30:00");
    acct_fmt_timelimit (2 * 1440 + 61, buf, sizeof (buf));
    ck_assert_str_eq (buf, "2-01:01:00");
    acct_fmt_timelimit (0xffffffffu, buf, sizeof (buf));
    ck_assert_str_eq (buf, "UNLIMITED");
    acct_fmt_timelimit (ACCT_NO_VAL, buf, sizeof (buf));
    ck_assert_str_eq (buf, "Partition_Limit");
}
END_TEST

/* ---- -o parsing ------------------------------------------------------ */

static const struct {
    const char *spec;
    int n;
    int id[4];
    int width[4];
} fmt_cases[] = {
    {"JobID,AllocCPUS,CPUEff,PinPolicy",
     4,
     {ACCT_F_JOBID, ACCT_F_ALLOCCPUS, ACCT_F_CPUEFF, ACCT_F_PINPOLICY},
     {-12, 10, 7, 12}},
    {"j", 1, {ACCT_F_JOBID}, {-12}},
    {"jobidr", 1, {ACCT_F_JOBIDRAW}, {-12}},
    {"JOBN%20", 1, {ACCT_F_JOBNAME}, {20}},
    {"cpus%-30", 1, {ACCT_F_CPUSET}, {-30}},
    {"cpu", 1, {ACCT_F_CPUEFF}, {7}}, /* alphabetical first */
    {"cput", 1, {ACCT_F_CPUTIME}, {10}},
    {"e", 1, {ACCT_F_ELAPSED}, {10}},
    {"en,st", 2, {ACCT_F_END, ACCT_F_START}, {19, 19}},
    {"u,userc", 2, {ACCT_F_USER, ACCT_F_USERCPU}, {9, 10}},
    {"mems,mem", 2, {ACCT_F_MEMS, ACCT_F_MEMPEAK}, {6, 10}},
    {"state%0", 1, {ACCT_F_STATE}, {0}}, /* %0: zero width, as sacct */
    {"state%-0", 1, {ACCT_F_STATE}, {0}},
    /* sacct: a field named twice takes its last %N in both places */
    {"jobid%3,user,jobid", 3, {ACCT_F_JOBID, ACCT_F_USER, ACCT_F_JOBID}, {3, 9, 3}},
    {"jobid,user,jobid%-0", 3, {ACCT_F_JOBID, ACCT_F_USER, ACCT_F_JOBID}, {0, 9, 0}},
    {"jobid,,exitcode,", 2, {ACCT_F_JOBID, ACCT_F_EXITCODE}, {-12, 8}},
};

START_TEST (test_fmt_parse)
{
    struct acct_fmt fmt = {0};
    pin_error_t e = {""};
    ck_assert_msg (acct_fmt_parse (&fmt, fmt_cases[_i].spec, &e) == 0,
                   "%s",
                   e.text);
    ck_assert_int_eq (fmt.n, fmt_cases[_i].n);
    for (int i = 0; i < fmt.n; i++) {
        ck_assert_int_eq (fmt.f[i].id, fmt_cases[_i].id[i]);
        ck_assert_int_eq (fmt.f[i].width, fmt_cases[_i].width[i]);
    }
}
END_TEST

static const struct {
    const char *spec, *want;
} fmt_bad[] = {
    {"bogus", "\"bogus\""},
    {"JobID,nosuch%5", "\"nosuch\""},
    {"jobid%x", "invalid width \"x\""},
    {"jobid%", "invalid width \"\""},
    {"jobid%5000", "invalid width"},
    {"", "no field"},
    {",", "no field"},
    {"%5", "invalid field requested: \"\""},
};

START_TEST (test_fmt_bad)
{
    struct acct_fmt fmt = {0};
    pin_error_t e = {""};
    ck_assert_int_eq (acct_fmt_parse (&fmt, fmt_bad[_i].spec, &e), -1);
    ck_assert_msg (strstr (e.text, fmt_bad[_i].want), "%s", e.text);
    if (strstr (fmt_bad[_i].want, "field"))
        ck_assert_msg (strstr (e.text, "valid fields: Account,AllocCPUS,"),
                       "%s",
                       e.text);
}
END_TEST

/* ---- printing -------------------------------------------------------- */

static char *print_to_string (const char *spec,
                              enum acct_out_mode mode,
                              const char *delim,
                              bool noheader,
                              const struct acct_row *row)
{
    struct acct_fmt fmt = {0};
    struct acct_out out = {.mode = mode, .delim = delim, .noheader = noheader};
    char *s = NULL;
    size_t len;
    FILE *f = open_memstream (&s, &len);
    pin_error_t e;

    ck_assert_ptr_nonnull (f);
    ck_assert_msg (acct_fmt_parse (&fmt, spec, &e) == 0, "%s", e.text);
    acct_print_header (f, &fmt, &out);
    if (row)
        acct_print_row (f, &fmt, &out, row);
    fclose (f);
    return s;
}

static struct acct_row sample_row (void)
{
    struct acct_row r;
    memset (&r, 0, sizeof (r));
    r.job_id = 123;
    r.step_id = ACCT_NO_VAL;
    r.array_job_id = r.array_task_id = ACCT_NO_VAL;
    snprintf (r.job_name, sizeof (r.job_name), "averyverylongname");
    snprintf (r.user, sizeof (r.user), "alice");
    snprintf (r.partition, sizeof (r.partition), "debug");
    snprintf (r.state, sizeof (r.state), "COMPLETED");
    r.policy = (char *)"numa-local";
    r.alloc_cpus = 128;
    r.start_us = 1700000000LL * 1000000;
    r.end_us = r.start_us + 3600LL * 1000000; /* one hour */
    r.user_usec = 3600ull * 1000000 * 64;     /* 50% of 128 CPUs */
    r.exit_status = 0;
    return r;
}

static const struct {
    const char *spec;
    enum acct_out_mode mode;
    const char *delim;
    bool noheader;
    bool row;
    const char *want;
} print_cases[] = {
    /* the exact header */
    {"JobID,AllocCPUS,CPUEff,PinPolicy",
     ACCT_OUT_PARSABLE2,
     NULL,
     false,
     false,
     "JobID|AllocCPUS|CPUEff|PinPolicy\n"},
    {"JobID,AllocCPUS,CPUEff,PinPolicy",
     ACCT_OUT_PARSABLE,
     NULL,
     false,
     false,
     "JobID|AllocCPUS|CPUEff|PinPolicy|\n"},
    {"JobID,AllocCPUS",
     ACCT_OUT_PARSABLE2,
     ",",
     false,
     true,
     "JobID,AllocCPUS\n123,128\n"},
    {"JobID,AllocCPUS",
     ACCT_OUT_PARSABLE,
     "::",
     false,
     true,
     "JobID::AllocCPUS::\n123::128::\n"},
    {"JobID,AllocCPUS,CPUEff",
     ACCT_OUT_PARSABLE2,
     NULL,
     true,
     true,
     "123|128|50.00%\n"},
    /* fixed: JobID is left-justified (-12), the rest right */
    {"JobID,AllocCPUS,CPUEff,PinPolicy",
     ACCT_OUT_FIXED,
     NULL,
     false,
     true,
     "JobID         AllocCPUS  CPUEff    PinPolicy \n"
     "------------ ---------- ------- ------------ \n"
     "123                 128  50.00%   numa-local \n"},
    {"JobID,AllocCPUS",
     ACCT_OUT_FIXED,
     NULL,
     true,
     true,
     "123                 128 \n"},
    /* strings are cut with '+' */
    {"JobName", ACCT_OUT_FIXED, NULL, true, true, "averyvery+ \n"},
    {"JobName%-5",
     ACCT_OUT_FIXED,
     NULL,
     false,
     true,
     "JobNa \n----- \naver+ \n"},
    {"JobName%1", ACCT_OUT_FIXED, NULL, true, true, "+ \n"},
    {"User%-8,Partition%3",
     ACCT_OUT_FIXED,
     NULL,
     true,
     true,
     "alice    de+ \n"},
    /* parsable never cuts */
    {"JobName%3", ACCT_OUT_PARSABLE2, NULL, true, true, "averyverylongname\n"},
    /* dates are cut without '+', numbers and times never */
    {"Start%10", ACCT_OUT_FIXED, NULL, true, true, "2023-11-14 \n"},
    {"AllocCPUS%2", ACCT_OUT_FIXED, NULL, true, true, "128 \n"},
    {"Elapsed%5,CPUTime",
     ACCT_OUT_FIXED,
     NULL,
     true,
     true,
     "01:00:00 5-08:00:00 \n"},
    {"TotalCPU%5", ACCT_OUT_FIXED, NULL, true, true, "2-16+ \n"},
    /* no value: blanks, or nothing between the delimiters */
    {"JobID,Fallback%4,State",
     ACCT_OUT_FIXED,
     NULL,
     true,
     true,
     "123                COMPLETED \n"},
    {"Fallback,JobID,Throttled",
     ACCT_OUT_PARSABLE2,
     NULL,
     true,
     true,
     "|123|\n"},
    {"Start,End",
     ACCT_OUT_PARSABLE2,
     NULL,
     true,
     true,
     "2023-11-14T22:13:20|2023-11-14T23:13:20\n"},
};

START_TEST (test_print)
{
    struct acct_row row = sample_row ();
    char *s;

    setenv ("TZ", "UTC", 1);
    tzset ();
    s = print_to_string (print_cases[_i].spec,
                         print_cases[_i].mode,
                         print_cases[_i].delim,
                         print_cases[_i].noheader,
                         print_cases[_i].row ? &row : NULL);
    ck_assert_str_eq (s, print_cases[_i].want);
    free (s);
}
END_TEST

/* ---- rows from records ----------------------------------------------- */

static struct acct_record rec (enum acct_kind kind,
                               uint32_t job,
                               uint32_t step,
                               const char *node,
                               int64_t start,
                               int64_t end,
                               uint32_t cpus,
                               uint64_t user,
                               uint64_t sys)
{
    struct acct_record r;
    acct_record_init (&r);
    r.kind = kind;
    r.job_id = job;
    r.step_id = step;
    snprintf (r.node, sizeof (r.node), "%s", node);
    snprintf (r.user, sizeof (r.user), "alice");
    snprintf (r.partition, sizeof (r.partition), "debug");
    snprintf (r.job_name, sizeof (r.job_name), "sim");
    snprintf (r.policy, sizeof (r.policy), "numa-local");
    snprintf (r.cpus, sizeof (r.cpus), "0-%u", cpus - 1);
    snprintf (r.mems, sizeof (r.mems), "0");
    snprintf (r.state, sizeof (r.state), "COMPLETED");
    r.uid = 1000;
    r.start_us = start * 1000000;
    r.end_us = end * 1000000;
    r.elapsed_us = r.end_us - r.start_us;
    r.alloc_cpus = cpus;
    r.user_usec = user;
    r.system_usec = sys;
    r.exit_status = 0;
    return r;
}

#define T0 1700000000

START_TEST (test_table_merge)
{
    struct acct_table t;
    struct acct_record r;
    char buf[256];

    acct_table_init (&t);
    /* step 0 on two nodes, batch on n1, extern on both, job records on
     * both; records arrive out of order, one twice */
    r = rec (ACCT_KIND_STEP,
             7,
             0,
             "n2",
             T0 + 10,
             T0 + 110,
             2,
             150000000,
             10000000);
    snprintf (r.cpus, sizeof (r.cpus), "4-5");
    r.exit_status = 9; /* SIGKILL on n2 */
    snprintf (r.state, sizeof (r.state), "CANCELLED");
    ck_assert_int_eq (acct_table_add (&t, &r), 0);
    r = rec (ACCT_KIND_STEP,
             7,
             0,
             "n1",
             T0 + 5,
             T0 + 100,
             2,
             170000000,
             5000000);
    snprintf (r.fallback, sizeof (r.fallback), "no-l3");
    ck_assert_int_eq (acct_table_add (&t, &r), 0);
    ck_assert_int_eq (acct_table_add (&t, &r), 0); /* duplicate */
    r = rec (ACCT_KIND_STEP,
             7,
             ACCT_STEP_BATCH,
             "n1",
             T0 + 1,
             T0 + 120,
             4,
             1000,
             2000);
    ck_assert_int_eq (acct_table_add (&t, &r), 0);
    r = rec (ACCT_KIND_STEP, 7, ACCT_STEP_EXTERN, "n1", T0, T0 + 121, 4, 0, 0);
    ck_assert_int_eq (acct_table_add (&t, &r), 0);
    r = rec (ACCT_KIND_JOB,
             7,
             ACCT_NO_VAL,
             "n1",
             T0,
             T0 + 121,
             4,
             171001000,
             5002000);
    ck_assert_int_eq (acct_table_add (&t, &r), 0);
    r = rec (ACCT_KIND_JOB,
             7,
             ACCT_NO_VAL,
             "n2",
             T0,
             T0 + 121,
             4,
             150000000,
             10000000);
    ck_assert_int_eq (acct_table_add (&t, &r), 0);
    ck_assert_int_eq (acct_table_sort (&t), 0);

    ck_assert_uint_eq (t.njobs, 1);
    struct acct_job *j = &t.jobs[0];
    ck_assert (j->has_job_record);
    ck_assert_uint_eq (j->job.alloc_cpus, 8);
    ck_assert_str_eq (j->job.nodes, "n1,n2");
    ck_assert_uint_eq (j->job.user_usec, 321001000);
    ck_assert_uint_eq (j->nsteps, 3);
    /* start order: extern (T0), batch (T0+1), 0 (T0+5) */
    ck_assert_uint_eq (j->steps[0].step_id, ACCT_STEP_EXTERN);
    ck_assert_uint_eq (j->steps[1].step_id, ACCT_STEP_BATCH);
    ck_assert_uint_eq (j->steps[2].step_id, 0);
    struct acct_row *s0 = &j->steps[2];
    ck_assert_uint_eq (s0->nnodes, 2);
    ck_assert_uint_eq (s0->alloc_cpus, 4);
    ck_assert_uint_eq (s0->user_usec, 320000000);
    ck_assert_uint_eq (s0->system_usec, 15000000);
    ck_assert_int_eq (s0->start_us, (int64_t)(T0 + 5) * 1000000);
    ck_assert_int_eq (s0->end_us, (int64_t)(T0 + 110) * 1000000);
    ck_assert_str_eq (s0->cpus, "n2:4-5;n1:0-1");
    ck_assert_str_eq (s0->fallback, "no-l3");
    ck_assert_str_eq (s0->state, "CANCELLED");
    ck_assert_int_eq (s0->exit_status, 9);
    ck_assert_str_eq (acct_row_cpus (&j->steps[1]), "0-3"); /* one node */
    ck_assert_str_eq (acct_row_cpus (s0), "n2:4-5;n1:0-1");
    acct_row_jobid (s0, false, buf, sizeof (buf));
    ck_assert_str_eq (buf, "7.0");
    acct_row_jobid (&j->steps[1], false, buf, sizeof (buf));
    ck_assert_str_eq (buf, "7.batch");
    acct_row_jobid (&j->steps[0], true, buf, sizeof (buf));
    ck_assert_str_eq (buf, "7.extern");
    /* (320 + 15) s over 105 s x 4 CPUs */
    ck_assert_double_eq_tol (acct_row_eff (s0), 335.0 / 420.0, 1e-9);
    /* sacct leaves User and Partition blank on steps */
    ck_assert (!acct_row_field (s0, ACCT_F_USER, buf, sizeof (buf)));
    ck_assert (!acct_row_field (s0, ACCT_F_PARTITION, buf, sizeof (buf)));
    ck_assert (acct_row_field (&j->job, ACCT_F_USER, buf, sizeof (buf)));
    ck_assert_str_eq (buf, "alice");
    ck_assert (
        acct_row_field (&j->steps[1], ACCT_F_JOBNAME, buf, sizeof (buf)));
    ck_assert_str_eq (buf, "batch");
    /* a hostile job name stays on its line */
    snprintf (s0->job_name, sizeof (s0->job_name), "a\nb\033[2Jc\x7f\xc3\xa9");
    ck_assert (acct_row_field (s0, ACCT_F_JOBNAME, buf, sizeof (buf)));
    ck_assert_str_eq (buf, "a?b?[2Jc?\xc3\xa9");
    acct_table_free (&t);
}
END_TEST

/* A node that knew nothing of the job (its epilog's record: UNKNOWN, no
 * start) never hides what another node knew, in either order. */
START_TEST (test_table_merge_unknown)
{
    for (int order = 0; order < 2; order++) {
        struct acct_table t;
        struct acct_record k, u;

        acct_table_init (&t);
        k = rec (ACCT_KIND_JOB, 9, ACCT_NO_VAL, "n1", T0, T0 + 60, 2, 1000, 0);
        snprintf (k.state, sizeof (k.state), "FAILED");
        k.exit_status = 256;
        u = rec (ACCT_KIND_JOB, 9, ACCT_NO_VAL, "n2", 0, T0 + 61, 0, 0, 0);
        u.start_us = 0;
        u.cpus[0] = '\0';
        u.exit_status = -1;
        snprintf (u.state, sizeof (u.state), "UNKNOWN");
        ck_assert_int_eq (acct_table_add (&t, order ? &u : &k), 0);
        ck_assert_int_eq (acct_table_add (&t, order ? &k : &u), 0);
        ck_assert_int_eq (acct_table_sort (&t), 0);
        ck_assert_uint_eq (t.njobs, 1);
        ck_assert_str_eq (t.jobs[0].job.state, "FAILED");
        ck_assert_int_eq (t.jobs[0].job.exit_status, 256);
        ck_assert_int_eq (t.jobs[0].job.start_us, (int64_t)T0 * 1000000);
        ck_assert_str_eq (t.jobs[0].job.nodes, order ? "n2,n1" : "n1,n2");
        acct_table_free (&t);
    }
    /* alone, it says so */
    struct acct_table t;
    struct acct_record u =
        rec (ACCT_KIND_JOB, 9, ACCT_NO_VAL, "n2", 0, T0 + 61, 0, 0, 0);
    acct_table_init (&t);
    u.start_us = 0;
    u.exit_status = -1;
    snprintf (u.state, sizeof (u.state), "UNKNOWN");
    ck_assert_int_eq (acct_table_add (&t, &u), 0);
    ck_assert_int_eq (acct_table_sort (&t), 0);
    ck_assert_str_eq (t.jobs[0].job.state, "UNKNOWN");
    acct_table_free (&t);
}
END_TEST

START_TEST (test_table_from_steps)
{
    struct acct_table t;
    struct acct_record r;
    char buf[64];

    acct_table_init (&t);
    /* array task 125 = 123_4 and plain job 124, no job records */
    r = rec (ACCT_KIND_STEP,
             125,
             ACCT_STEP_BATCH,
             "n1",
             T0,
             T0 + 60,
             2,
             30000000,
             0);
    r.array_job_id = 123;
    r.array_task_id = 4;
    r.exit_status = 1 << 8;
    snprintf (r.state, sizeof (r.state), "FAILED");
    ck_assert_int_eq (acct_table_add (&t, &r), 0);
    r = rec (ACCT_KIND_STEP, 125, 0, "n1", T0 + 1, T0 + 59, 1, 58000000, 0);
    r.array_job_id = 123;
    r.array_task_id = 4;
    ck_assert_int_eq (acct_table_add (&t, &r), 0);
    r = rec (ACCT_KIND_STEP, 124, 0, "n3", T0, T0 + 10, 1, 1, 0);
    ck_assert_int_eq (acct_table_add (&t, &r), 0);
    ck_assert_int_eq (acct_table_sort (&t), 0);

    ck_assert_uint_eq (t.njobs, 2);
    /* sorted by array job id: 123_4 (key 123) before 124 */
    struct acct_job *j = &t.jobs[0];
    ck_assert (!j->has_job_record);
    ck_assert (j->job.from_steps);
    acct_row_jobid (&j->job, false, buf, sizeof (buf));
    ck_assert_str_eq (buf, "123_4");
    acct_row_jobid (&j->job, true, buf, sizeof (buf));
    ck_assert_str_eq (buf, "125");
    acct_row_jobid (&j->steps[1], false, buf, sizeof (buf));
    ck_assert_str_eq (buf, "123_4.0");
    acct_row_jobid (&j->steps[1], true, buf, sizeof (buf));
    ck_assert_str_eq (buf, "125.0");
    ck_assert_uint_eq (j->job.alloc_cpus, 2);
    ck_assert_uint_eq (j->job.user_usec, 88000000);
    ck_assert_str_eq (j->job.state, "FAILED");
    acct_fmt_exitcode (j->job.exit_status, buf, sizeof (buf));
    ck_assert_str_eq (buf, "1:0");
    /* the batch step's state and exit code, not step 0's */
    r = rec (ACCT_KIND_STEP, 126, ACCT_STEP_BATCH, "n1", T0, T0 + 60, 1, 0, 0);
    ck_assert_int_eq (acct_table_add (&t, &r), 0);
    r = rec (ACCT_KIND_STEP, 126, 0, "n1", T0, T0 + 60, 1, 0, 0);
    r.exit_status = 3 << 8;
    snprintf (r.state, sizeof (r.state), "FAILED");
    ck_assert_int_eq (acct_table_add (&t, &r), 0);
    ck_assert_int_eq (acct_table_sort (&t), 0);
    ck_assert_uint_eq (t.jobs[2].job.job_id, 126);
    ck_assert_str_eq (t.jobs[2].job.state, "COMPLETED");
    ck_assert_int_eq (t.jobs[2].job.exit_status, 0);
    ck_assert_uint_eq (t.jobs[1].job.job_id, 124);
    ck_assert_str_eq (t.jobs[1].job.state, "COMPLETED");
    ck_assert_str_eq (t.jobs[1].job.nodes, "n3");
    /* the extern step's record alone says nothing of the outcome */
    r = rec (ACCT_KIND_STEP,
             127,
             ACCT_STEP_EXTERN,
             "n1",
             T0,
             T0 + 60,
             1,
             0,
             0);
    ck_assert_int_eq (acct_table_add (&t, &r), 0);
    ck_assert_int_eq (acct_table_sort (&t), 0);
    ck_assert_uint_eq (t.jobs[3].job.job_id, 127);
    ck_assert_str_eq (t.jobs[3].job.state, "UNKNOWN");
    ck_assert_int_eq (t.jobs[3].job.exit_status, -1);
    acct_table_free (&t);
    acct_table_free (NULL);
}
END_TEST

/* ---- -j and -S/-E ---------------------------------------------------- */

static const struct {
    const char *s;
    int rc;
    size_t n;
    uint32_t id, task, step;
    bool has_step;
} jobsel_cases[] = {
    {"123", 0, 1, 123, ACCT_NO_VAL, 0, false},
    {"123_4", 0, 1, 123, 4, 0, false},
    {"123.0", 0, 1, 123, ACCT_NO_VAL, 0, true},
    {"123.batch", 0, 1, 123, ACCT_NO_VAL, ACCT_STEP_BATCH, true},
    {"123_4.extern", 0, 1, 123, 4, ACCT_STEP_EXTERN, true},
    {"123.interactive", 0, 1, 123, ACCT_NO_VAL, ACCT_STEP_INTERACTIVE, true},
    {"1,2,3", 0, 3, 1, ACCT_NO_VAL, 0, false},
    {"", -1, 0, 0, 0, 0, false},
    {"abc", -1, 0, 0, 0, 0, false},
    {"123.", -1, 0, 0, 0, 0, false},
    {"123_", -1, 0, 0, 0, 0, false},
    {"123.foo", -1, 0, 0, 0, 0, false},
    {"-1", -1, 0, 0, 0, 0, false},
    {"99999999999", -1, 0, 0, 0, 0, false},
    {"4294967291", -1, 0, 0, 0, 0, false}, /* a special value */
};

START_TEST (test_jobsel)
{
    struct acct_jobsel *sel = NULL;
    size_t n = 0;
    pin_error_t e = {""};
    int rc = acct_jobsel_parse (jobsel_cases[_i].s, &sel, &n, &e);

    ck_assert_int_eq (rc, jobsel_cases[_i].rc);
    if (rc == 0) {
        ck_assert_uint_eq (n, jobsel_cases[_i].n);
        ck_assert_uint_eq (sel[0].id, jobsel_cases[_i].id);
        ck_assert_uint_eq (sel[0].task, jobsel_cases[_i].task);
        ck_assert_int_eq (sel[0].has_step, jobsel_cases[_i].has_step);
        if (sel[0].has_step)
            ck_assert_uint_eq (sel[0].step, jobsel_cases[_i].step);
    } else if (jobsel_cases[_i].s[0])
        ck_assert_msg (strstr (e.text, "invalid job id"), "%s", e.text);
    free (sel);
}
END_TEST

START_TEST (test_jobsel_match)
{
    struct acct_jobsel *sel = NULL;
    size_t n = 0;
    struct acct_row plain = {.job_id = 123,
                             .array_job_id = ACCT_NO_VAL,
                             .array_task_id = ACCT_NO_VAL};
    struct acct_row task = {.job_id = 130,
                            .array_job_id = 123,
                            .array_task_id = 4};
    struct acct_row other = {.job_id = 131,
                             .array_job_id = 124,
                             .array_task_id = 4};

    ck_assert_int_eq (acct_jobsel_parse ("123,123_4", &sel, &n, NULL), 0);
    ck_assert (acct_jobsel_job (&sel[0], &plain));
    ck_assert (acct_jobsel_job (&sel[0], &task)); /* every task of 123 */
    ck_assert (!acct_jobsel_job (&sel[0], &other));
    ck_assert (!acct_jobsel_job (&sel[1], &plain));
    ck_assert (acct_jobsel_job (&sel[1], &task));
    ck_assert (!acct_jobsel_job (&sel[1], &other));
    free (sel);
}
END_TEST

/* now = 2023-11-14T22:13:20 UTC */
#define NOW 1700000000
static const struct {
    const char *s;
    int rc;
    int64_t secs;
} time_cases[] = {
    {"now", 0, NOW},
    {"now-1days", 0, NOW - 86400},
    {"now-1day", 0, NOW - 86400},
    {"now-2d", 0, NOW - 2 * 86400},
    {"now+3hours", 0, NOW + 3 * 3600},
    {"now-90", 0, NOW - 90},
    {"now-5minutes", 0, NOW - 300},
    {"now-1weeks", 0, NOW - 604800},
    {"today", 0, 1699920000},
    {"midnight", 0, 1699920000},
    {"noon", 0, 1699963200},
    {"tomorrow", 0, 1700006400},
    {"08:30", 0, 1699950600},
    {"08:30:15", 0, 1699950615},
    {"2023-11-01", 0, 1698796800},
    {"2023-11-01T10:00", 0, 1698832800},
    {"2023-11-01T10:00:05", 0, 1698832805},
    {"now-1fortnight", -1, 0},
    {"now*2", -1, 0},
    {"2023-13-01", -1, 0},
    {"2023-11-01T25:00", -1, 0},
    {"2023-11-01X", -1, 0},
    {"2023-11-01T10", -1, 0},
    {"yesterday-ish", -1, 0},
    {"", -1, 0},
};

START_TEST (test_parse_time)
{
    int64_t us = 0;
    pin_error_t e = {""};

    setenv ("TZ", "UTC", 1);
    tzset ();
    ck_assert_int_eq (acct_parse_time (time_cases[_i].s, NOW, &us, &e),
                      time_cases[_i].rc);
    if (time_cases[_i].rc == 0)
        ck_assert_int_eq (us, time_cases[_i].secs * 1000000);
    else
        ck_assert_msg (strstr (e.text, "invalid time"), "%s", e.text);
}
END_TEST

/* Many jobs, their records interleaved (as nodes write them), and an add
 * after a sort: every record lands in its own job. */
/* sacct's order (src/sacct/options.c): Submit in seconds, then the array
 * job id (0: no array), the task id, the job id */
START_TEST (test_table_order)
{
    struct acct_table t;
    struct acct_record r;
    static const struct {
        uint32_t job, array_job, task;
        int64_t submit_s;
    } in[] = {
        {9, ACCT_NO_VAL, ACCT_NO_VAL, T0},     /* plain, same second */
        {7, 7, 2, T0},                         /* task 2 kept the id */
        {8, 7, 1, T0},                         /* task 1 got a new one */
        {5, ACCT_NO_VAL, ACCT_NO_VAL, T0 + 1}, /* a later Submit */
        {6, ACCT_NO_VAL, ACCT_NO_VAL, T0 - 1},
    };
    static const uint32_t want[] = {6, 9, 8, 7, 5};

    acct_table_init (&t);
    for (size_t i = 0; i < sizeof (in) / sizeof (in[0]); i++) {
        r = rec (ACCT_KIND_JOB, in[i].job, ACCT_NO_VAL, "n1", T0, T0 + 9, 1, 0, 0);
        r.array_job_id = in[i].array_job;
        r.array_task_id = in[i].task;
        r.submit_us = in[i].submit_s * 1000000 + 250000;
        ck_assert_int_eq (acct_table_add (&t, &r), 0);
    }
    ck_assert_int_eq (acct_table_sort (&t), 0);
    ck_assert_int_eq (acct_table_order (&t), 0);
    ck_assert_uint_eq (t.njobs, 5);
    for (size_t i = 0; i < 5; i++)
        ck_assert_uint_eq (t.jobs[i].job.job_id, want[i]);
    acct_table_free (&t);
}
END_TEST

START_TEST (test_table_many)
{
    struct acct_table t;
    const uint32_t njobs = 20000;

    acct_table_init (&t);
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < njobs; i++) {
            uint32_t job = 1000 + (i * 7919) % njobs; /* a permutation */
            struct acct_record r = rec (ACCT_KIND_STEP,
                                        job,
                                        (uint32_t)pass,
                                        "n1",
                                        T0,
                                        T0 + 10,
                                        1,
                                        job,
                                        0);
            ck_assert_int_eq (acct_table_add (&t, &r), 0);
        }
        if (pass == 0)
            ck_assert_int_eq (acct_table_sort (&t), 0);
    }
    ck_assert_int_eq (acct_table_sort (&t), 0);
    ck_assert_uint_eq (t.njobs, njobs);
    for (uint32_t i = 0; i < njobs; i++) {
        ck_assert_uint_eq (t.jobs[i].job.job_id, 1000 + i);
        ck_assert_uint_eq (t.jobs[i].nsteps, 2);
        ck_assert_uint_eq (t.jobs[i].job.user_usec, 2 * (1000 + i));
    }
    acct_table_free (&t);
}
END_TEST

static Suite *sacct_suite (void)
{
    Suite *s = suite_create ("sacct");
    TCase *tc = tcase_create ("core");

#define N(a) (int)(sizeof (a) / sizeof ((a)[0]))
    tcase_add_loop_test (tc, test_secs, 0, N (secs_cases));
    tcase_add_loop_test (tc, test_cputime, 0, N (cpu_cases));
    tcase_add_loop_test (tc, test_date, 0, N (date_cases));
    tcase_add_loop_test (tc, test_time_format, 0, N (tfmt_cases));
    tcase_add_loop_test (tc, test_exitcode, 0, N (exit_cases));
    tcase_add_loop_test (tc, test_eff, 0, N (eff_cases));
    tcase_add_loop_test (tc, test_bytes, 0, N (bytes_cases));
    tcase_add_loop_test (tc, test_units, 0, N (units_cases));
    tcase_add_test (tc, test_units_timelimit);
    tcase_add_loop_test (tc, test_fmt_parse, 0, N (fmt_cases));
    tcase_add_loop_test (tc, test_fmt_bad, 0, N (fmt_bad));
    tcase_add_loop_test (tc, test_print, 0, N (print_cases));
    tcase_add_loop_test (tc, test_jobsel, 0, N (jobsel_cases));
    tcase_add_test (tc, test_jobsel_match);
    tcase_add_loop_test (tc, test_parse_time, 0, N (time_cases));
    tcase_add_test (tc, test_table_merge);
    tcase_add_test (tc, test_table_merge_unknown);
    tcase_add_test (tc, test_table_from_steps);
    tcase_add_test (tc, test_table_many);
    tcase_add_test (tc, test_table_order);
    suite_add_tcase (s, tc);
    return s;
}

int main (void)
{
    return tap_run (sacct_suite (), NULL, 0);
}
