/* test/series.c - what slurm-pin plot draws, from small profiles */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libprof/series.h"
#include "libtest/tap.h"
#include "libtest/tmptree.h"

#define HDR                                                  \
    "{\"type\":\"header\",\"format\":\"slurm-pin-profile\"," \
    "\"version\":1,\"t0\":1000000000,\"interval_ms\":1000"
#define S 1000000000ll /* ns per s */

/* Write `text` as a profile and read it for `kind`. */
static int chart (const char *text,
                  enum prof_chart kind,
                  struct prof_chart_data *d,
                  pin_error_t *e)
{
    char path[4096];
    int rc, err;

    tmptree_setup ("test_series");
    tmptree_put ("p.jsonl", text);
    tmptree_path (path, sizeof (path), "p.jsonl");
    rc = prof_chart_read (path, kind, d, e);
    err = errno;
    tmptree_teardown ();
    errno = err;
    return rc;
}

START_TEST (test_names)
{
    enum prof_chart k;

    for (int i = 0; i < PROF_CHART_COUNT; i++) {
        ck_assert_int_eq (prof_chart_parse (prof_chart_name (i), &k), 0);
        ck_assert_int_eq (k, i);
        ck_assert_ptr_nonnull (strstr (PROF_CHART_NAMES, prof_chart_name (i)));
    }
    ck_assert_int_eq (prof_chart_parse ("pie", &k), -1);
    ck_assert_int_eq (errno, EINVAL);
    ck_assert_int_eq (prof_chart_parse (NULL, &k), -1);
    ck_assert_ptr_null (prof_chart_name (PROF_CHART_COUNT));
}
END_TEST

/* Two CPUs: 25% and 100% busy over the second second; the header owns
 * CPU 1 only; a cgroup used 1.25 s of CPU in that second. */
START_TEST (test_cpu)
{
    const char *p = HDR
        ",\"cpus\":\"1\"}\n"
        "{\"type\":\"sample\",\"t\":2000000000,"
        "\"cpus\":[[0,0,0,0,0,0,0,0,0],[1,10,0,0,0,0,0,0,0]],"
        "\"cg\":{\"usage_usec\":1000000}}\n"
        "{\"type\":\"confine\",\"t\":2500000000,\"how\":\"cpuset\","
        "\"cpus\":\"1\"}\n"
        "{\"type\":\"sample\",\"t\":3000000000,"
        "\"cpus\":[[0,20,0,5,75,0,0,0,0],[1,60,10,20,0,0,5,5,0]],"
        "\"cg\":{\"usage_usec\":2250000}}\n";
    struct prof_chart_data d;
    pin_error_t e = {""};

    ck_assert_msg (chart (p, PROF_CHART_CPU, &d, &e) == 0, "%s", e.text);
    ck_assert_int_eq (d.nseries, 3);
    ck_assert_str_eq (d.series[0].label, "CPU 0");
    ck_assert_str_eq (d.series[1].label, "CPU 1 (step)");
    ck_assert_int_eq (d.series[0].n, 1);
    ck_assert_double_eq_tol (d.series[0].x[0], 2.0, 1e-9);
    ck_assert_double_eq_tol (d.series[0].y[0], 25.0, 1e-9);
    ck_assert_double_eq_tol (d.series[1].y[0], 100.0, 1e-9);
    ck_assert_double_eq_tol (d.series[2].y[0], 125.0, 1e-9);
    ck_assert_str_eq (d.series[2].label, "step cgroup, % of 1 CPU");
    ck_assert_int_eq (d.nconfine, 1);
    ck_assert_double_eq_tol (d.confine[0].t, 1.5, 1e-9);
    ck_assert_str_eq (d.confine[0].how, "cpuset");
    for (unsigned i = 0; i < d.nseries; i++)
        ck_assert_int_eq (d.series[i].colour, i);
    prof_chart_free (&d);
}
END_TEST

/* 40 CPUs: more than 16, a heat map of one row per CPU, no line. */
START_TEST (test_cpu_heat)
{
    char *p = malloc (1 << 16);
    size_t n = 0;
    struct prof_chart_data d;
    pin_error_t e = {""};

    n += (size_t)sprintf (p + n, HDR ",\"cpus\":\"0-39\"}\n");
    for (int s = 1; s <= 2; s++) {
        n += (size_t)sprintf (p + n,
                              "{\"type\":\"sample\",\"t\":%lld,"
                              "\"cpus\":[",
                              s * S);
        for (int c = 0; c < 40; c++)
            n += (size_t)sprintf (p + n,
                                  "%s[%d,%d,0,0,%d,0,0,0,0]",
                                  c ? "," : "",
                                  c,
                                  s * c,
                                  s * (40 - c));
        n += (size_t)sprintf (p + n, "]}\n");
    }
    ck_assert_msg (chart (p, PROF_CHART_CPU, &d, &e) == 0, "%s", e.text);
    ck_assert_int_eq (d.nseries, 0);
    ck_assert_int_eq (d.heat.rows, 40);
    ck_assert_int_eq (d.heat.cols, 1);
    ck_assert_str_eq (d.heat.label[39], "39");
    /* CPU 2: 2 ticks busy of 40 */
    ck_assert_double_eq_tol (d.heat.v[2 * d.heat.cols], 5.0, 1e-9);
    ck_assert_double_eq_tol (d.heat.v[39 * d.heat.cols], 97.5, 1e-9);
    prof_chart_free (&d);
    free (p);
}
END_TEST

/* Samples drawn honestly: a sample whose smaps reads were skipped is a
 * mark and a gap in RSS and PSS; samples missed (5 s after 2 s, every
 * second) are a gap in every line; both are said in the notes. */
START_TEST (test_honest)
{
    const char *p = HDR
        "}\n"
        "{\"type\":\"sample\",\"t\":1000000000,\"rss_kb\":2048,"
        "\"pss_kb\":1024,\"smaps_skipped\":0,\"nvcsw\":1,\"nivcsw\":1}\n"
        "{\"type\":\"sample\",\"t\":2000000000,\"rss_kb\":1024,"
        "\"pss_kb\":512,\"smaps_skipped\":3,\"nvcsw\":2,\"nivcsw\":1}\n"
        "{\"type\":\"sample\",\"t\":5000000000,\"rss_kb\":3072,"
        "\"pss_kb\":1024,\"smaps_skipped\":0,\"nvcsw\":3,\"nivcsw\":1,"
        "\"cg\":{\"memory_current\":10485760,\"memory_max\":20971520}}\n";
    struct prof_chart_data d;
    pin_error_t e = {""};

    ck_assert_msg (chart (p, PROF_CHART_MEMORY, &d, &e) == 0, "%s", e.text);
    ck_assert_int_eq (d.nseries, 4);
    ck_assert_str_eq (d.series[3].label, "cgroup memory.max (limit)");
    ck_assert (d.series[3].limit);
    ck_assert (d.series[0].total && d.series[2].total);
    ck_assert_int_eq (d.series[0].n, 4); /* 2, mark, gap, 3 */
    ck_assert_double_eq_tol (d.series[0].y[0], 2.0, 1e-9);
    ck_assert (isnan (d.series[0].y[1]) && isnan (d.series[0].y[2]));
    ck_assert_double_eq_tol (d.series[0].y[3], 3.0, 1e-9);
    ck_assert_int_eq (d.series[0].nmarks, 1);
    ck_assert_double_eq_tol (d.series[0].mx[0], 1.0, 1e-9);
    ck_assert_double_eq_tol (d.series[0].my[0], 1.0, 1e-9);
    ck_assert_int_eq (d.series[1].nmarks, 1);
    ck_assert_int_eq (d.series[2].nmarks, 0);
    ck_assert_int_eq (d.incomplete, 1);
    ck_assert_int_eq (d.gaps, 2);
    ck_assert_int_eq (d.nnotes, 2);
    ck_assert_str_eq (d.note[0], "x: RSS, PSS incomplete (1 sample)");
    ck_assert_str_eq (d.note[1], "gaps: 2 samples missed");
    prof_chart_free (&d);

    ck_assert_msg (chart (p, PROF_CHART_CTXSW, &d, &e) == 0, "%s", e.text);
    ck_assert_int_eq (d.series[0].n, 3); /* 1/s, gap, 1/3 s */
    ck_assert (isnan (d.series[0].y[1]));
    ck_assert_double_eq_tol (d.series[0].y[2], 1.0 / 3, 1e-9);
    prof_chart_free (&d);
}
END_TEST

/* More than 200 processes: lanes by command, the processes running in
 * each interval; --filter keeps one command. */
START_TEST (test_gantt_lanes)
{
    char *p = malloc (1 << 20);
    size_t n = 0;
    struct prof_chart_data d;
    pin_error_t e = {""};

    n += (size_t)sprintf (p + n, HDR "}\n");
    for (int i = 0; i < 300; i++)
        n += (size_t)sprintf (p + n,
                              "{\"type\":\"exit\",\"t\":%lld,\"pid\":%d,"
                              "\"tgid\":%d,\"start\":%lld,\"comm\":\"%s\"}\n",
                              2 * S + i * 1000ll,
                              100 + i,
                              100 + i,
                              1 * S + i * 1000ll,
                              i % 3 ? "sim" : "reco");
    ck_assert_msg (chart (p, PROF_CHART_GANTT, &d, &e) == 0, "%s", e.text);
    ck_assert_int_eq (d.nbars, 300);
    ck_assert_int_eq (d.heat.rows, 2);
    ck_assert_str_eq (d.heat.label[0], "sim (200)");
    ck_assert_str_eq (d.heat.label[1], "reco (100)");
    /* all 200 sim processes run in the middle of the recording */
    ck_assert_double_eq_tol (d.heat.v[d.heat.cols / 2], 200, 1e-9);
    prof_chart_free (&d);
    {
        char path[4096];
        int rc;
        tmptree_setup ("test_series");
        tmptree_put ("p.jsonl", p);
        tmptree_path (path, sizeof (path), "p.jsonl");
        rc = prof_chart_read_filter (path, PROF_CHART_GANTT, "reco", &d, &e);
        ck_assert_msg (rc == 0, "%s", e.text);
        ck_assert_int_eq (d.nbars, 100);
        ck_assert_int_eq (d.heat.rows, 0); /* 100: bars */
        prof_chart_free (&d);
        rc = prof_chart_read_filter (path, PROF_CHART_GANTT, "none", &d, &e);
        ck_assert_int_eq (rc, -1);
        ck_assert_int_eq (errno, ENODATA);
        ck_assert_msg (strstr (e.text, "sim (200), reco (100)"), "%s", e.text);
        prof_chart_free (&d);
        tmptree_teardown ();
    }
    free (p);
}
END_TEST

/* Bars: the root, a process whose pid is reused (its exit lost), one
 * whose fork was lost (the exit's start), a thread (no bar), the command
 * of taskstats over the exit's. */
START_TEST (test_gantt)
{
    const char *p = HDR
        "}\n"
        "{\"type\":\"root\",\"t\":1000000000,\"pid\":10,\"comm\":\"sh\"}\n"
        "{\"type\":\"fork\",\"t\":2000000000,\"pid\":11,\"tgid\":11,"
        "\"thread\":false,\"comm\":\"sh\"}\n"
        "{\"type\":\"exec\",\"t\":2000001000,\"pid\":11,\"tgid\":11,"
        "\"comm\":\"sim\"}\n"
        "{\"type\":\"fork\",\"t\":2500000000,\"pid\":12,\"tgid\":10,"
        "\"thread\":true,\"comm\":\"sh\"}\n"
        "{\"type\":\"task\",\"pid\":11,\"tgid\":11,\"comm\":\"simulate\"}\n"
        "{\"type\":\"exit\",\"t\":3000000000,\"pid\":11,\"tgid\":11,"
        "\"thread\":false,\"comm\":\"sim\"}\n"
        "{\"type\":\"fork\",\"t\":4000000000,\"pid\":13,\"tgid\":13,"
        "\"thread\":false,\"comm\":\"sh\"}\n"
        "{\"type\":\"fork\",\"t\":5000000000,\"pid\":13,\"tgid\":13,"
        "\"thread\":false,\"comm\":\"sh\"}\n"
        /* the record of the first 13, after the second began */
        "{\"type\":\"task\",\"t\":4000000000,\"start\":4000000000,"
        "\"pid\":13,\"tgid\":13,\"comm\":\"first13\"}\n"
        "{\"type\":\"exit\",\"t\":6000000000,\"pid\":14,\"tgid\":14,"
        "\"thread\":false,\"start\":3500000000,\"comm\":\"cat\"}\n"
        "{\"type\":\"end\",\"t\":7000000000}\n";
    struct prof_chart_data d;
    pin_error_t e = {""};
    static const struct {
        double start, end;
        int64_t pid;
    } want[] = {
        {0, 6, 10},
        {1, 2, 11},
        {2.5, 5, 14},
        {3, 4, 13},
        {4, 6, 13},
    };

    ck_assert_msg (chart (p, PROF_CHART_GANTT, &d, &e) == 0, "%s", e.text);
    ck_assert_int_eq (d.nbars, 5);
    for (size_t i = 0; i < d.nbars; i++) {
        ck_assert_double_eq_tol (d.bars[i].start, want[i].start, 1e-9);
        ck_assert_double_eq_tol (d.bars[i].end, want[i].end, 1e-9);
        ck_assert_int_eq (d.bars[i].pid, want[i].pid);
    }
    ck_assert_str_eq (d.bars[1].comm, "simulate");
    ck_assert_str_eq (d.bars[2].comm, "cat");
    ck_assert_str_eq (d.bars[3].comm, "first13");
    ck_assert_str_eq (d.bars[4].comm, "sh");
    /* sh: 2 processes, then cat, first13 and simulate, 1 each */
    ck_assert_int_eq (d.ncmds, 4);
    ck_assert_str_eq (d.cmds[0], "sh");
    ck_assert_int_eq (d.cmd_procs[0], 2);
    ck_assert_int_eq (d.bars[0].cmd, 0);
    ck_assert_int_eq (d.other_cmds, 0);
    prof_chart_free (&d);
}
END_TEST

/* Ten commands: eight coloured, two "other". */
START_TEST (test_gantt_other)
{
    char p[8192];
    size_t n = 0;
    struct prof_chart_data d;
    pin_error_t e = {""};

    n += (size_t)sprintf (p + n, HDR "}\n");
    for (int c = 0; c < 10; c++)
        for (int k = 0; k <= 10 - c; k++)
            n += (size_t)sprintf (p + n,
                                  "{\"type\":\"fork\",\"t\":%lld,"
                                  "\"pid\":%d,\"thread\":false,"
                                  "\"comm\":\"c%d\"}\n",
                                  2 * S + c * 100 + k,
                                  100 * c + k,
                                  c);
    ck_assert_msg (chart (p, PROF_CHART_GANTT, &d, &e) == 0, "%s", e.text);
    ck_assert_int_eq (d.ncmds, PROF_CMDS_COLOURED);
    ck_assert_int_eq (d.other_cmds, 2);
    ck_assert_int_eq (d.other_procs, 3 + 2); /* c8, c9 */
    ck_assert_str_eq (d.cmds[0], "c0");
    for (size_t i = 0; i < d.nbars; i++)
        ck_assert_int_eq (d.bars[i].cmd,
                          d.bars[i].comm[1] - '0' < 8
                              ? (unsigned)(d.bars[i].comm[1] - '0')
                              : 8);
    prof_chart_free (&d);
}
END_TEST

START_TEST (test_forks)
{
    const char *p = HDR
        ",\"interval_ms\":500}\n"
        "{\"type\":\"fork\",\"t\":1100000000,\"pid\":2,\"thread\":false}\n"
        "{\"type\":\"fork\",\"t\":1200000000,\"pid\":3,\"thread\":false}\n"
        "{\"type\":\"fork\",\"t\":1300000000,\"pid\":4,\"thread\":true}\n"
        "{\"type\":\"exec\",\"t\":1700000000,\"pid\":2}\n"
        "{\"type\":\"exit\",\"t\":2200000000,\"pid\":2,\"thread\":false}\n"
        "{\"type\":\"exit\",\"t\":2300000000,\"pid\":4,\"thread\":true}\n";
    struct prof_chart_data d;
    pin_error_t e = {""};

    ck_assert_msg (chart (p, PROF_CHART_FORKS, &d, &e) == 0, "%s", e.text);
    ck_assert_int_eq (d.nseries, 4);
    ck_assert (d.steps);
    ck_assert_double_eq_tol (d.bin_s, 0.5, 1e-9);
    ck_assert_int_eq (d.series[0].n, 3); /* bins 0-0.5-1-1.5 s */
    ck_assert_double_eq_tol (d.series[0].y[0], 4.0, 1e-9); /* 2 in 0.5 s */
    ck_assert_double_eq_tol (d.series[1].y[0], 2.0, 1e-9);
    ck_assert_double_eq_tol (d.series[2].y[1], 2.0, 1e-9);
    ck_assert_double_eq_tol (d.series[3].y[2], 2.0, 1e-9); /* no thread */
    prof_chart_free (&d);
}
END_TEST

START_TEST (test_samples)
{
    const char *p = HDR
        "}\n"
        "{\"type\":\"sample\",\"t\":1000000000,\"nvcsw\":100,\"nivcsw\":10,"
        "\"procs\":{\"R\":1,\"S\":2,\"D\":0,\"Z\":0,\"other\":1},"
        "\"threads\":{\"R\":3,\"S\":4,\"D\":1,\"Z\":0,\"other\":0},"
        "\"rss_kb\":2048,\"pss_kb\":1024}\n"
        "{\"type\":\"sample\",\"t\":3000000000,\"nvcsw\":500,\"nivcsw\":4,"
        "\"procs\":{\"R\":0,\"S\":1,\"D\":1,\"Z\":1},"
        "\"threads\":{\"R\":0,\"S\":1,\"D\":1,\"Z\":1},"
        "\"rss_kb\":4096,\"pss_kb\":1024,"
        "\"cg\":{\"memory_current\":10485760,\"anon\":5242880}}\n";
    struct prof_chart_data d;
    pin_error_t e = {""};

    ck_assert_msg (chart (p, PROF_CHART_CTXSW, &d, &e) == 0, "%s", e.text);
    ck_assert_int_eq (d.nseries, 2);
    ck_assert_int_eq (d.series[0].n, 1);
    ck_assert_double_eq_tol (d.series[0].y[0], 200.0, 1e-9);
    ck_assert_double_eq_tol (d.series[1].y[0], 0.0, 1e-9); /* a task ended */
    prof_chart_free (&d);

    ck_assert_msg (chart (p, PROF_CHART_STATES, &d, &e) == 0, "%s", e.text);
    ck_assert_int_eq (d.nseries, 10);
    ck_assert_int_eq (d.npanels, 2);
    ck_assert_double_eq_tol (d.series[4].y[0], 4.0, 1e-9); /* + other */
    ck_assert_double_eq_tol (d.series[5 + 2].y[0], 1.0, 1e-9);
    ck_assert_int_eq (d.series[5 + 2].colour, 2);
    ck_assert_int_eq (d.series[5 + 2].panel, 1);
    prof_chart_free (&d);

    ck_assert_msg (chart (p, PROF_CHART_MEMORY, &d, &e) == 0, "%s", e.text);
    ck_assert_int_eq (d.nseries, 4); /* no file, no shmem */
    ck_assert_str_eq (d.series[2].label, "cgroup memory.current");
    ck_assert_double_eq_tol (d.series[0].y[1], 4.0, 1e-9);
    /* the first sample has no cgroup memory: a gap, then 5 MiB */
    ck_assert (isnan (d.series[3].y[0]));
    ck_assert_double_eq_tol (d.series[3].y[1], 5.0, 1e-9);
    ck_assert_int_eq (d.series[3].colour, 3);
    prof_chart_free (&d);
}
END_TEST

/* Nothing to draw: ENODATA and a reason. */
static const struct {
    enum prof_chart kind;
    const char *text;
} empty[] = {
    {PROF_CHART_CPU, HDR "}\n{\"type\":\"sample\",\"t\":5}\n"},
    {PROF_CHART_GANTT, HDR "}\n{\"type\":\"end\",\"t\":5}\n"},
    {PROF_CHART_FORKS, HDR "}\n{\"type\":\"root\",\"t\":5,\"pid\":1}\n"},
    {PROF_CHART_CTXSW,
     HDR "}\n{\"type\":\"sample\",\"t\":5,\"nvcsw\":1,"
         "\"nivcsw\":1}\n"},
    {PROF_CHART_STATES, HDR "}\n{\"type\":\"fork\",\"t\":5,\"pid\":1}\n"},
    {PROF_CHART_MEMORY, HDR "}\n{\"type\":\"sample\",\"t\":5}\n"},
};

START_TEST (test_empty)
{
    struct prof_chart_data d;
    pin_error_t e = {""};

    ck_assert_int_eq (chart (empty[_i].text, empty[_i].kind, &d, &e), -1);
    ck_assert_int_eq (errno, ENODATA);
    ck_assert_ptr_nonnull (strstr (e.text, "nothing to draw for --kind"));
    ck_assert_ptr_nonnull (strstr (e.text, prof_chart_name (empty[_i].kind)));
    prof_chart_free (&d);
}
END_TEST

/* Hostile values: read without a crash, nothing absurd kept. */
START_TEST (test_hostile)
{
    const char *p =
        "{\"type\":\"header\",\"format\":\"slurm-pin-profile\","
        "\"version\":1,\"t0\":9223372036854775807,\"cpus\":\"0-1000000000\","
        "\"job\":{\"x\":1},\"node\":\"a\\nb\",\"interval_ms\":-5}\n"
        "{\"type\":\"root\",\"t\":-9223372036854775807,\"pid\":1}\n"
        "{\"type\":\"fork\",\"t\":\"soon\",\"pid\":2,\"thread\":false}\n"
        "{\"type\":\"exit\",\"t\":9223372036854775807,\"pid\":3,"
        "\"thread\":false,\"start\":-1}\n"
        "{\"type\":\"sample\",\"t\":1,\"cpus\":[[70000,1,1,1,1,1,1,1,1],"
        "[1,-1,0,0,0,0,0,0,0],[2],\"x\",[3,1,1,1,1,1,1,1,1]],"
        "\"procs\":[1,2],\"rss_kb\":-4}\n"
        "{\"type\":\"sample\",\"t\":0,\"cpus\":[[3,0,0,0,0,0,0,0,0]]}\n"
        "{\"type\":\"sample\",\"t\":2,\"cpus\":[[3,9223372036854775807,"
        "9223372036854775807,0,0,0,0,0,0]]}\n";
    struct prof_chart_data d;
    pin_error_t e = {""};

    for (int k = 0; k < PROF_CHART_COUNT; k++) {
        int rc = chart (p, (enum prof_chart)k, &d, &e);
        ck_assert_msg (rc == 0 || errno == ENODATA,
                       "%s: %s",
                       prof_chart_name (k),
                       e.text);
        for (size_t i = 0; i < d.nseries; i++)
            for (size_t j = 0; j < d.series[i].n; j++)
                ck_assert (
                    (isfinite (d.series[i].y[j]) || isnan (d.series[i].y[j]))
                    && isfinite (d.series[i].x[j]));
        ck_assert_str_eq (d.job, "");
        ck_assert_str_eq (d.cpus, "0-1000000000");
        prof_chart_free (&d);
    }
}
END_TEST

/* Long series are merged two by two, within PROF_POINTS_MAX. */
START_TEST (test_merge)
{
    size_t n = 3 * PROF_POINTS_MAX;
    FILE *f;
    char path[4096];
    struct prof_chart_data d;
    pin_error_t e = {""};
    double peak = 0;

    tmptree_setup ("test_series");
    tmptree_path (path, sizeof (path), "big.jsonl");
    ck_assert_ptr_nonnull (f = fopen (path, "w"));
    fprintf (f, HDR "}\n");
    for (size_t i = 0; i < n; i++)
        fprintf (f,
                 "{\"type\":\"sample\",\"t\":%zu,\"rss_kb\":%d,"
                 "\"pss_kb\":1}\n",
                 1000000000 + i * 1000000,
                 i == n / 2 + 1 ? 1024000 : 1024);
    fclose (f);
    ck_assert_msg (prof_chart_read (path, PROF_CHART_MEMORY, &d, &e) == 0,
                   "%s",
                   e.text);
    tmptree_teardown ();
    ck_assert_int_le (d.series[0].n, PROF_POINTS_MAX);
    ck_assert_int_gt (d.series[0].n, PROF_POINTS_MAX / 4);
    for (size_t i = 0; i < d.series[0].n; i++)
        peak = fmax (peak, d.series[0].y[i]);
    ck_assert_double_eq_tol (peak, 1000.0, 1e-9); /* max: the spike */
    prof_chart_free (&d);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("series");
    TCase *tc = tcase_create ("series");

    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_names);
    tcase_add_test (tc, test_cpu);
    tcase_add_test (tc, test_cpu_heat);
    tcase_add_test (tc, test_honest);
    tcase_add_test (tc, test_gantt_lanes);
    tcase_add_test (tc, test_gantt);
    tcase_add_test (tc, test_gantt_other);
    tcase_add_test (tc, test_forks);
    tcase_add_test (tc, test_samples);
    tcase_add_loop_test (tc,
                         test_empty,
                         0,
                         sizeof (empty) / sizeof (empty[0]));
    tcase_add_test (tc, test_hostile);
    tcase_add_test (tc, test_merge);
    suite_add_tcase (s, tc);
    return tap_run (s, NULL, 0);
}
