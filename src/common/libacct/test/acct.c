/* test/acct.c - records, their JSON line, the journal
 *
 * Runs in a private temporary directory, without root.  The full disk is
 * simulated with RLIMIT_FSIZE (write(2) then stops short with EFBIG,
 * exactly like a full file system stops it short with ENOSPC); the real
 * tmpfs case is in t/t4000-acct-record.t.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <linux/falloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libacct/acct.h"
#include "libtest/tap.h"
#include "libtest/tmptree.h"

#define NELEM(a) (sizeof (a) / sizeof ((a)[0]))

static char dir[4096];

static void setup (void)
{
    tmptree_setup ("test_acct");
    tmptree_path (dir, sizeof (dir), "journal.d");
}

static void teardown (void)
{
    tmptree_teardown ();
}

/* Is s valid UTF-8 (checked with json-c's own tokener, strict mode)? */
static bool valid_utf8_json (const char *line)
{
    struct json_tokener *tok = json_tokener_new ();
    json_object *o;
    bool ok;

    json_tokener_set_flags (tok,
                            JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    o = json_tokener_parse_ex (tok, line, (int)strlen (line));
    ok = o && json_tokener_get_error (tok) == json_tokener_success;
    json_object_put (o);
    json_tokener_free (tok);
    return ok;
}

static void fill (struct acct_record *r, uint32_t job, uint32_t step)
{
    acct_record_init (r);
    r->job_id = job;
    r->step_id = step;
    snprintf (r->cluster, sizeof (r->cluster), "c1");
    snprintf (r->job_name, sizeof (r->job_name), "jn");
    snprintf (r->node, sizeof (r->node), "n1");
    snprintf (r->policy, sizeof (r->policy), "numa-local");
    snprintf (r->state, sizeof (r->state), "COMPLETED");
    snprintf (r->cgroup, sizeof (r->cgroup), "/sys/fs/cgroup/x/job_%u", job);
    r->uid = 1000;
    r->alloc_cpus = 2;
    r->start_us = 1700000000000000 + job;
    r->end_us = r->start_us + 4000000;
    r->elapsed_us = 4000000;
    r->user_usec = 7000000;
    r->system_usec = 500000;
    r->usage_usec = 7500000;
    r->exit_status = 0;
}

/* ---- efficiency --------------------------------------------------------- */

static const struct {
    int64_t elapsed;
    uint32_t alloc;
    uint64_t user, sys;
    double want;
} eff_cases[] = {
    {4000000, 2, 7800000, 100000, 0.9875},
    {4000000, 2, 0, 0, 0.0},
    {1000000, 1, 1500000, 500000, 2.0}, /* more than allocated */
    {0, 2, 100, 100, -1},
    {1000000, 0, 100, 100, -1},
    {-5, 2, 100, 100, -1},
};

START_TEST (test_efficiency)
{
    struct acct_record r;
    acct_record_init (&r);
    r.elapsed_us = eff_cases[_i].elapsed;
    r.alloc_cpus = eff_cases[_i].alloc;
    r.user_usec = eff_cases[_i].user;
    r.system_usec = eff_cases[_i].sys;
    ck_assert_double_eq_tol (acct_efficiency (&r), eff_cases[_i].want, 1e-9);
}
END_TEST

/* ---- UTF-8 ----------------------------------------------------------------
 */

static const struct {
    const char *in;
    size_t inlen; /* 0: strlen */
    size_t n;
    const char *want;
} utf8_cases[] = {
    {"plain", 0, 64, "plain"},
    {"caf\xc3\xa9", 0, 64, "caf\xc3\xa9"},
    {"\xff", 0, 64, "\xef\xbf\xbd"},
    {"a\xc3", 0, 64, "a\xef\xbf\xbd"},               /* cut sequence */
    {"\xc0\xaf", 0, 64, "\xef\xbf\xbd\xef\xbf\xbd"}, /* overlong */
    {"\xed\xa0\x80",
     0,
     64, /* surrogate */
     "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
    {"\xf4\x90\x80\x80",
     0,
     64, /* > U+10FFFF */
     "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
    {"\xf0\x9f\x98\x80!", 0, 64, "\xf0\x9f\x98\x80!"},
    {"abcdef", 0, 4, "abc"},    /* bound */
    {"ab\xc3\xa9", 0, 4, "ab"}, /* never half a character */
    {"a\0b", 3, 64, "a"},       /* NUL ends */
    {"abcdef", 2, 64, "ab"},    /* srclen */
};

START_TEST (test_utf8_copy)
{
    char out[64];
    const char *in = utf8_cases[_i].in;
    size_t len = utf8_cases[_i].inlen ? utf8_cases[_i].inlen : strlen (in);

    acct_utf8_copy (out, utf8_cases[_i].n, in, len);
    ck_assert_str_eq (out, utf8_cases[_i].want);
}
END_TEST

/* ---- round trip and hostile strings ----------------------------------------
 */

static const char *hostile[] = {
    "plain-name",
    "two\nlines",
    "\"quoted\" and \\backslash\\",
    "bad \xff\xfe bytes \xc3",
    "ctl \x01\x02\x1b[31m\r\t",
    "\xe2\x80\xa8 line separator \xe2\x80\xa9",
    "}\n{\"v\":1,\"kind\":\"job\",\"job_id\":1,\"node\":\"x\"}",
    "",
};

START_TEST (test_hostile_round_trip)
{
    struct acct_record r, back;
    pin_error_t err = {""};
    char *line, want[ACCT_STR];

    fill (&r, 42, ACCT_STEP_BATCH);
    snprintf (r.job_name, sizeof (r.job_name), "%s", hostile[_i]);
    snprintf (r.partition, sizeof (r.partition), "p%s", hostile[_i]);
    snprintf (r.user, sizeof (r.user), "%s", hostile[_i]);
    line = acct_record_to_json (&r, &err);
    ck_assert_msg (line != NULL, "%s", err.text);
    ck_assert_ptr_null (strchr (line, '\n'));
    ck_assert_ptr_null (strchr (line, '\r'));
    ck_assert_msg (valid_utf8_json (line), "not valid UTF-8 JSON: %s", line);
    /* ASCII only, whatever the json-c (text.h: text_json_ascii) */
    for (const char *c = line; *c; c++)
        ck_assert_msg ((unsigned char)*c < 0x80, "not ASCII: %s", line);
    ck_assert_msg (acct_record_from_json (line, &back, &err) == 0,
                   "%s: %s",
                   err.text,
                   line);
    acct_utf8_copy (want, sizeof (want), hostile[_i], strlen (hostile[_i]));
    ck_assert_str_eq (back.job_name, want);
    ck_assert_str_eq (back.user, want);
    ck_assert_int_eq (back.kind, ACCT_KIND_STEP);
    ck_assert_uint_eq (back.job_id, 42);
    free (line);
}
END_TEST

/* A job name of 255 bytes of which every one is invalid: 255 x U+FFFD
 * does not fit, and the record is still one valid line. */
START_TEST (test_hostile_long)
{
    struct acct_record r, back;
    pin_error_t err = {""};
    char *line;

    fill (&r, 43, 0);
    memset (r.job_name, 0xff, sizeof (r.job_name) - 1);
    r.job_name[sizeof (r.job_name) - 1] = '\0';
    memset (r.cgroup, 'a', sizeof (r.cgroup) - 1);
    r.cgroup[sizeof (r.cgroup) - 1] = '\0';
    ck_assert_ptr_nonnull (line = acct_record_to_json (&r, &err));
    ck_assert (valid_utf8_json (line));
    ck_assert_int_eq (acct_record_from_json (line, &back, &err), 0);
    ck_assert_uint_eq (strlen (back.job_name), 85 * 3);
    ck_assert_uint_eq (strlen (back.cgroup), sizeof (r.cgroup) - 1);
    free (line);
}
END_TEST

START_TEST (test_round_trip_all_fields)
{
    struct acct_record r, b;
    pin_error_t err = {""};
    char *line;

    fill (&r, 7, 3);
    r.kind = ACCT_KIND_JOB;
    r.array_job_id = 6;
    r.array_task_id = 1;
    snprintf (r.user, sizeof (r.user), "alice");
    snprintf (r.partition, sizeof (r.partition), "debug");
    snprintf (r.job_name, sizeof (r.job_name), "name");
    snprintf (r.fallback, sizeof (r.fallback), "oversubscribed");
    snprintf (r.gpus, sizeof (r.gpus), "0000:3b:00.0,gres:1");
    snprintf (r.nic, sizeof (r.nic), "mlx5_0");
    r.has_seed = true;
    r.seed = UINT64_MAX;
    snprintf (r.cpus, sizeof (r.cpus), "0-3");
    snprintf (r.mems, sizeof (r.mems), "0");
    r.has_throttle = true;
    r.nr_periods = 10;
    r.nr_throttled = 2;
    r.throttled_usec = 3000;
    r.has_mem_peak = true;
    r.mem_peak = (uint64_t)1 << 40;
    r.exit_status = 9;
    r.source = ACCT_SRC_STEP_SUM;
    snprintf (r.mode, sizeof (r.mode), "standalone");
    r.confined_us = 5;
    r.confine_use = 1.5;
    snprintf (r.confine_cpus, sizeof (r.confine_cpus), "0-1");
    snprintf (r.confine_mems, sizeof (r.confine_mems), "0");
    r.nsteps = 4;
    snprintf (r.account, sizeof (r.account), "physics");
    snprintf (r.qos, sizeof (r.qos), "normal");
    r.submit_us = 1700000000000000;
    r.has_timelimit = true;
    r.timelimit = 0xffffffffu;
    r.req_mem = 4096;
    ck_assert_ptr_nonnull (line = acct_record_to_json (&r, &err));
    ck_assert_msg (acct_record_from_json (line, &b, &err) == 0,
                   "%s",
                   err.text);
    /* the job values sacct has (issue 22 item 5) */
    ck_assert_str_eq (b.account, "physics");
    ck_assert_str_eq (b.qos, "normal");
    ck_assert_int_eq (b.submit_us, 1700000000000000);
    ck_assert (b.has_timelimit && b.timelimit == 0xffffffffu);
    ck_assert_int_eq (b.req_mem, 4096);
    ck_assert_msg ((b.kind == r.kind && b.array_job_id == 6 && b.seed == r.seed
                    && b.mem_peak == r.mem_peak && b.nsteps == 4
                    && b.source == r.source && b.exit_status == 9
                    && b.throttled_usec == 3000 && b.confine_use == 1.5
                    && strcmp (b.confine_cpus, "0-1") == 0
                    && strcmp (b.fallback, "oversubscribed") == 0
                    && strcmp (b.gpus, "0000:3b:00.0,gres:1") == 0
                    && strcmp (b.nic, "mlx5_0") == 0),
                   "fields differ after the round trip: %s",
                   line);
    ck_assert_ptr_nonnull (strstr (line, "\"gpus\":\"0000:3b:00.0,gres:1\""));
    ck_assert_ptr_nonnull (strstr (line, "\"nic\":\"mlx5_0\""));
    ck_assert_ptr_nonnull (strstr (line, "\"efficiency\":0.9375"));
    ck_assert_ptr_nonnull (strstr (line, "\"kind\":\"job\""));
    ck_assert_ptr_nonnull (strstr (line, "\"source\":\"step-records\""));
    free (line);
}
END_TEST

/* ---- parse errors ----------------------------------------------------------
 */

static const struct {
    const char *line;
    const char *err; /* a part of the message */
} bad_cases[] = {
    {"", "not JSON"},
    {"{\"v\":1,\"kind\":\"step\",\"job_id\":1,\"node\":\"n\",\"start_us\":1",
     "not JSON"},
    {"[1,2]", "not a JSON object"},
    {"{\"kind\":\"step\",\"job_id\":1,\"node\":\"n\",\"start_us\":1,"
     "\"end_us\":2}",
     "\"v\""},
    {"{\"v\":2,\"kind\":\"step\",\"job_id\":1,\"node\":\"n\",\"start_us\":1,"
     "\"end_us\":2}",
     "newer"},
    {"{\"v\":1,\"job_id\":1,\"node\":\"n\",\"start_us\":1,\"end_us\":2}",
     "\"kind\""},
    {"{\"v\":1,\"kind\":\"task\",\"job_id\":1,\"node\":\"n\",\"start_us\":1,"
     "\"end_us\":2}",
     "\"kind\""},
    {"{\"v\":1,\"kind\":\"step\",\"job_id\":\"1\",\"node\":\"n\","
     "\"start_us\":1,\"end_us\":2}",
     "\"job_id\""},
    {"{\"v\":1,\"kind\":\"step\",\"job_id\":-1,\"node\":\"n\","
     "\"start_us\":1,\"end_us\":2}",
     "\"job_id\""},
    {"{\"v\":1,\"kind\":\"step\",\"job_id\":4294967296,\"node\":\"n\","
     "\"start_us\":1,\"end_us\":2}",
     "\"job_id\""},
    {"{\"v\":1,\"kind\":\"step\",\"job_id\":1,\"start_us\":1,"
     "\"end_us\":2}",
     "\"node\""},
    {"{\"v\":1,\"kind\":\"step\",\"job_id\":1,\"node\":\"n\","
     "\"end_us\":2}",
     "\"start_us\""},
    {"{\"v\":1,\"kind\":\"step\",\"job_id\":1,\"node\":\"n\","
     "\"start_us\":1}",
     "\"end_us\""},
    {"{\"v\":1,\"kind\":\"step\",\"job_id\":1,\"node\":\"n\","
     "\"start_us\":1,\"end_us\":2,\"user_usec\":-5}",
     "\"user_usec\""},
    {"{\"v\":1,\"kind\":\"step\",\"job_id\":1,\"node\":\"n\","
     "\"start_us\":1,\"end_us\":2,\"source\":\"guess\"}",
     "\"source\""},
    {"{\"v\":1,\"kind\":\"step\",\"job_id\":1,\"node\":7,"
     "\"start_us\":1,\"end_us\":2}",
     "\"node\""},
    {"{\"v\":1,\"kind\":\"step\",\"job_id\":1,\"node\":\"n\","
     "\"start_us\":1,\"end_us\":2} x",
     "after"},
    {"{\"v\":1,\"kind\":\"step\",\"job_id\":1,\"node\":\"n\","
     "\"start_us\":1,\"end_us\":2,\"gpus\":[1]}",
     "\"gpus\""},
    {"{\"v\":1,\"kind\":\"step\",\"job_id\":1,\"node\":\"n\","
     "\"start_us\":1,\"end_us\":2,\"nic\":3}",
     "\"nic\""},
};

START_TEST (test_parse_errors)
{
    struct acct_record r;
    pin_error_t err = {""};

    ck_assert_int_eq (acct_record_from_json (bad_cases[_i].line, &r, &err),
                      -1);
    ck_assert_msg (strstr (err.text, bad_cases[_i].err) != NULL,
                   "error '%s' does not name '%s'",
                   err.text,
                   bad_cases[_i].err);
}
END_TEST

START_TEST (test_parse_minimal_and_unknown_keys)
{
    struct acct_record r;
    pin_error_t err = {""};

    ck_assert_msg (acct_record_from_json ("{\"v\":1,\"kind\":\"step\",\"job_"
                                          "id\":5,\"node\":\"n\","
                                          "\"start_us\":10,\"end_us\":30,"
                                          "\"future_key\":[1,{}]}",
                                          &r,
                                          &err)
                       == 0,
                   "%s",
                   err.text);
    ck_assert_uint_eq (r.job_id, 5);
    ck_assert_int_eq (r.elapsed_us, 20);
    ck_assert_uint_eq (r.step_id, ACCT_NO_VAL);
    ck_assert_int_eq (r.exit_status, -1);
    ck_assert (!r.has_seed && !r.has_throttle && !r.has_mem_peak);
    /* a record written before gpus/nic existed reads with both empty,
     * and an empty pair is not written */
    ck_assert_str_eq (r.gpus, "");
    ck_assert_str_eq (r.nic, "");
    char *line = acct_record_to_json (&r, &err);
    ck_assert_ptr_nonnull (line);
    ck_assert_ptr_null (strstr (line, "\"gpus\""));
    ck_assert_ptr_null (strstr (line, "\"nic\""));
    free (line);
}
END_TEST

/* ---- the journal -------------------------------------------------------- */

struct collect {
    unsigned n;
    uint32_t jobs[4096];
};

static int collect_cb (const struct acct_record *r, void *arg)
{
    struct collect *c = arg;
    if (c->n < NELEM (c->jobs))
        c->jobs[c->n] = r->job_id;
    c->n++;
    return 0;
}

static void append_ok (uint32_t job, uint64_t max)
{
    struct acct_record r;
    pin_error_t err = {""};

    fill (&r, job, 0);
    ck_assert_msg (acct_journal_append_max (dir, &r, max, &err) == 0,
                   "%s",
                   err.text);
}

START_TEST (test_journal_modes)
{
    char path[4200];
    struct stat st;
    struct collect c = {0};
    unsigned skipped = 9;
    pin_error_t err = {""};

    append_ok (1, 0);
    append_ok (2, 0);
    ck_assert_int_eq (stat (dir, &st), 0);
    ck_assert_uint_eq (st.st_mode & 0777, 0700);
    snprintf (path, sizeof (path), "%s/journal", dir);
    ck_assert_int_eq (stat (path, &st), 0);
    ck_assert_uint_eq (st.st_mode & 0777, 0600);
    ck_assert_int_eq (acct_journal_read (dir, collect_cb, &c, &skipped, &err),
                      0);
    ck_assert_uint_eq (c.n, 2);
    ck_assert_uint_eq (skipped, 0);
    ck_assert_uint_eq (c.jobs[0], 1);
    ck_assert_uint_eq (c.jobs[1], 2);
}
END_TEST

START_TEST (test_journal_unsafe)
{
    char path[4200], target[4200];
    struct acct_record r;
    pin_error_t err = {""};

    fill (&r, 1, 0);
    /* a symlink in place of the journal */
    ck_assert_int_eq (mkdir (dir, 0700), 0);
    snprintf (path, sizeof (path), "%s/journal", dir);
    tmptree_path (target, sizeof (target), "elsewhere");
    ck_assert_int_eq (symlink (target, path), 0);
    ck_assert_int_eq (acct_journal_append (dir, &r, &err), -1);
    ck_assert_msg (strstr (err.text, "symlink"), "%s", err.text);
    ck_assert (!tmptree_exists ("elsewhere"));
    ck_assert_int_eq (unlink (path), 0);
    /* a directory others may read */
    ck_assert_int_eq (chmod (dir, 0755), 0);
    ck_assert_int_eq (acct_journal_append (dir, &r, &err), -1);
    ck_assert_msg (strstr (err.text, "0700"), "%s", err.text);
    /* a directory others may write */
    ck_assert_int_eq (chmod (dir, 0777), 0);
    ck_assert_int_eq (acct_journal_append (dir, &r, &err), -1);
    ck_assert_int_eq (chmod (dir, 0700), 0);
    /* a relative path */
    ck_assert_int_eq (acct_journal_append ("rel/dir", &r, &err), -1);
    ck_assert_msg (strstr (err.text, "absolute"), "%s", err.text);
    /* a journal with a second name (a hard link): refused */
    ck_assert_int_eq (acct_journal_append (dir, &r, &err), 0);
    tmptree_path (target, sizeof (target), "second-name");
    ck_assert_int_eq (link (path, target), 0);
    ck_assert_int_eq (acct_journal_append (dir, &r, &err), -1);
    ck_assert_msg (strstr (err.text, "2 hard links"), "%s", err.text);
    ck_assert_int_eq (unlink (target), 0);
    ck_assert_int_eq (acct_journal_append (dir, &r, &err), 0);
}
END_TEST

/* The journal cut at every byte: the records whose line is whole before
 * the cut are read, a partial line is skipped and counted, and a record
 * appended after the cut is read too. */
START_TEST (test_journal_cut_every_byte)
{
    char path[4200], cutdir[4200], cutpath[4300];
    static char content[16384];
    size_t size, ends[3];
    FILE *f;

    for (uint32_t j = 1; j <= 3; j++)
        append_ok (j, 0);
    snprintf (path, sizeof (path), "%s/journal", dir);
    ck_assert_ptr_nonnull (f = fopen (path, "r"));
    size = fread (content, 1, sizeof (content), f);
    fclose (f);
    for (size_t i = 0, k = 0; i < size; i++)
        if (content[i] == '\n')
            ends[k++] = i; /* the newline of record k */
    tmptree_path (cutdir, sizeof (cutdir), "cut");
    snprintf (cutpath, sizeof (cutpath), "%s/journal", cutdir);
    for (size_t cut = 0; cut <= size; cut++) {
        struct collect c = {0};
        unsigned skipped = 0, whole = 0, partial;
        pin_error_t err = {""};
        int fd;

        tmptree_rm_rf (cutdir);
        ck_assert_int_eq (mkdir (cutdir, 0700), 0);
        fd = open (cutpath, O_WRONLY | O_CREAT | O_EXCL, 0600);
        ck_assert_int_ge (fd, 0);
        ck_assert_int_eq (write (fd, content, cut), (ssize_t)cut);
        close (fd);
        /* a record is whole when its '}' is before the cut */
        for (int k = 0; k < 3; k++)
            whole += cut >= ends[k];
        partial =
            (cut > 0
             && (whole == 3 ? false : cut > (whole ? ends[whole - 1] + 1 : 0)))
                ? 1
                : 0;
        ck_assert_int_eq (acct_journal_read (cutdir,
                                             collect_cb,
                                             &c,
                                             &skipped,
                                             &err),
                          0);
        ck_assert_msg (c.n == whole && skipped == partial,
                       "cut at %zu: read %u records, %u skipped; want %u, %u",
                       cut,
                       c.n,
                       skipped,
                       whole,
                       partial);
        /* appending after the cut loses nothing */
        struct acct_record r;
        fill (&r, 99, 0);
        ck_assert_msg (acct_journal_append_max (cutdir, &r, 0, &err) == 0,
                       "%s",
                       err.text);
        memset (&c, 0, sizeof (c));
        ck_assert_int_eq (acct_journal_read (cutdir,
                                             collect_cb,
                                             &c,
                                             &skipped,
                                             &err),
                          0);
        ck_assert_msg (c.n == whole + 1 && c.jobs[whole] == 99
                           && skipped == partial,
                       "cut at %zu then append: %u records, %u skipped",
                       cut,
                       c.n,
                       skipped);
    }
}
END_TEST

START_TEST (test_journal_garbage_lines)
{
    char path[4200];
    struct collect c = {0};
    unsigned skipped = 0;
    pin_error_t err = {""};
    FILE *f;

    append_ok (1, 0);
    snprintf (path, sizeof (path), "%s/journal", dir);
    ck_assert_ptr_nonnull (f = fopen (path, "a"));
    fputs ("garbage\n{\"v\":1}\n\n", f);
    fwrite ("nul\0inside\n", 1, 11, f);
    fclose (f);
    append_ok (2, 0);
    ck_assert_int_eq (acct_journal_read (dir, collect_cb, &c, &skipped, &err),
                      0);
    ck_assert_uint_eq (c.n, 2);
    ck_assert_uint_eq (skipped, 3);
}
END_TEST

/* Several processes append at once with a tiny rotation size: every
 * record is read back exactly once, from journal.1 ... and journal. */
START_TEST (test_journal_rotation_concurrent)
{
    enum { WRITERS = 4, EACH = 150 };
    const uint64_t max = 4096;
    struct collect *c = calloc (1, sizeof (*c));
    static unsigned seen[WRITERS * 1000];
    unsigned skipped = 0, files = 0;
    pin_error_t err = {""};
    pid_t pids[WRITERS];

    ck_assert_ptr_nonnull (c);
    append_ok (999999, max); /* the directory exists before the race */
    for (int w = 0; w < WRITERS; w++) {
        ck_assert_int_ge (pids[w] = fork (), 0);
        if (pids[w] == 0) {
            for (int i = 0; i < EACH; i++) {
                struct acct_record r;
                fill (&r, (uint32_t)(w * 1000 + i), 0);
                if (acct_journal_append_max (dir, &r, max, &err) < 0) {
                    fprintf (stderr, "writer %d: %s\n", w, err.text);
                    _exit (1);
                }
            }
            _exit (0);
        }
    }
    for (int w = 0; w < WRITERS; w++) {
        int st;
        ck_assert_int_eq (waitpid (pids[w], &st, 0), pids[w]);
        ck_assert_msg (WIFEXITED (st) && WEXITSTATUS (st) == 0,
                       "writer %d failed",
                       w);
    }
    ck_assert_int_eq (acct_journal_read (dir, collect_cb, c, &skipped, &err),
                      0);
    ck_assert_uint_eq (skipped, 0);
    ck_assert_uint_eq (c->n, WRITERS * EACH + 1);
    memset (seen, 0, sizeof (seen));
    for (unsigned i = 0; i < c->n; i++)
        if (c->jobs[i] != 999999)
            seen[c->jobs[i]]++;
    for (int w = 0; w < WRITERS; w++)
        for (int i = 0; i < EACH; i++)
            ck_assert_msg (seen[w * 1000 + i] == 1,
                           "record %d seen %u times",
                           w * 1000 + i,
                           seen[w * 1000 + i]);
    /* it did rotate, and no file grew past the limit */
    for (unsigned n = 1;; n++) {
        char path[4200];
        struct stat st;
        snprintf (path, sizeof (path), "%s/journal.%u", dir, n);
        if (stat (path, &st) < 0)
            break;
        ck_assert_int_le (st.st_size, (off_t)max);
        files++;
    }
    ck_assert_uint_ge (files, 10);
    /* per writer, records stay in the order written */
    for (int w = 0; w < WRITERS; w++) {
        int last = -1;
        for (unsigned i = 0; i < c->n; i++)
            if (c->jobs[i] / 1000 == (unsigned)w && c->jobs[i] != 999999) {
                ck_assert_int_gt ((int)c->jobs[i], last);
                last = (int)c->jobs[i];
            }
    }
    free (c);
}
END_TEST

/* A write stopped short (the file system full; here RLIMIT_FSIZE) is an
 * error naming the directory, and the journal holds what it held. */
START_TEST (test_journal_full)
{
    char path[4200];
    struct stat st;
    pid_t pid;
    int status;

    append_ok (1, 0);
    append_ok (2, 0);
    snprintf (path, sizeof (path), "%s/journal", dir);
    ck_assert_int_eq (stat (path, &st), 0);
    ck_assert_int_ge (pid = fork (), 0);
    if (pid == 0) {
        struct rlimit rl = {(rlim_t)st.st_size + 20, (rlim_t)st.st_size + 20};
        struct acct_record r;
        pin_error_t err = {""};
        signal (SIGXFSZ, SIG_IGN);
        if (setrlimit (RLIMIT_FSIZE, &rl) < 0)
            _exit (2);
        fill (&r, 3, 0);
        if (acct_journal_append_max (dir, &r, 0, &err) == 0)
            _exit (3);
        if (!strstr (err.text, dir) || !strstr (err.text, "job 3"))
            _exit (4);
        _exit (0);
    }
    ck_assert_int_eq (waitpid (pid, &status, 0), pid);
    ck_assert_msg (WIFEXITED (status) && WEXITSTATUS (status) == 0,
                   "child status %d",
                   status);
    struct stat after;
    ck_assert_int_eq (stat (path, &after), 0);
    ck_assert_int_eq (after.st_size, st.st_size);
    append_ok (4, 0);
    struct collect c = {0};
    unsigned skipped = 7;
    pin_error_t err = {""};
    ck_assert_int_eq (acct_journal_read (dir, collect_cb, &c, &skipped, &err),
                      0);
    ck_assert_uint_eq (c.n, 3);
    ck_assert_uint_eq (skipped, 0);
    ck_assert_uint_eq (c.jobs[2], 4);
}
END_TEST

/* Does the test directories' file system (TMPDIR, else /tmp) support
 * fallocate(FALLOC_FL_KEEP_SIZE)? */
static bool can_preallocate (void)
{
    const char *tmp = getenv ("TMPDIR");
    char path[4200];
    int fd, rc;

    snprintf (path,
              sizeof (path),
              "%s/test_acct_falloc.XXXXXX",
              tmp && *tmp ? tmp : "/tmp");
    if ((fd = mkstemp (path)) < 0)
        return false;
    rc = fallocate (fd, FALLOC_FL_KEEP_SIZE, 0, 4096);
    close (fd);
    unlink (path);
    return rc == 0;
}

static off_t room_of (const char *name, off_t *size, ino_t *ino)
{
    char path[4200];
    struct stat st;

    snprintf (path, sizeof (path), "%s/%s", dir, name);
    ck_assert_msg (stat (path, &st) == 0, "%s: %s", path, strerror (errno));
    *size = st.st_size;
    if (ino)
        *ino = st.st_ino;
    return (off_t)st.st_blocks * 512;
}

/* The journal's room is taken beforehand (fallocate, KEEP_SIZE): the
 * current file up to the limit, and an empty journal.spare that a
 * rotation makes the next current file; readers ignore the spare. */
START_TEST (test_journal_preallocated)
{
    const uint64_t max = 64 * 1024;
    off_t size, room;
    ino_t spare_ino, ino;
    unsigned n = 0, skipped = 0;
    char path[4200];
    struct stat st;

    append_ok (1, 0); /* the directory, a file without room taken */
    append_ok (2, max);
    room = room_of ("journal", &size, NULL);
    ck_assert_int_gt (size, 0);
    ck_assert_int_lt (size, 4096);
    ck_assert_int_ge (room, (off_t)max);
    room = room_of ("journal.spare", &size, &spare_ino);
    ck_assert_int_eq (size, 0);
    ck_assert_int_ge (room, (off_t)max);
    /* until the first rotation: the spare becomes the journal */
    snprintf (path, sizeof (path), "%s/journal.1", dir);
    for (n = 3; stat (path, &st) < 0; n++) {
        ck_assert_uint_lt (n, 10000);
        append_ok (n, max);
    }
    ck_assert_int_le (st.st_size, (off_t)max);
    room = room_of ("journal", &size, &ino);
    ck_assert_uint_eq (ino, spare_ino);
    ck_assert_int_gt (size, 0);
    ck_assert_int_ge (room, (off_t)max);
    room = room_of ("journal.spare", &size, &ino);
    ck_assert_uint_ne (ino, spare_ino);
    ck_assert_int_eq (size, 0);
    ck_assert_int_ge (room, (off_t)max);
    /* every record once, the spare read as nothing */
    struct collect *c = calloc (1, sizeof (*c));
    pin_error_t err = {""};
    ck_assert_ptr_nonnull (c);
    ck_assert_int_eq (acct_journal_read (dir, collect_cb, c, &skipped, &err),
                      0);
    ck_assert_uint_eq (skipped, 0);
    ck_assert_uint_eq (c->n, n - 1);
    free (c);
}
END_TEST

START_TEST (test_journal_missing_dir_read)
{
    struct collect c = {0};
    unsigned skipped = 0;
    pin_error_t err = {""};

    ck_assert_int_eq (acct_journal_read (dir, collect_cb, &c, &skipped, &err),
                      -1);
    ck_assert_msg (strstr (err.text, "journal directory"), "%s", err.text);
}
END_TEST

/* ---- job records from step records -------------------------------------- */

START_TEST (test_job_from_steps)
{
    struct acct_record r, j;
    pin_error_t err = {""};

    /* job 10 on n1: batch + two numbered steps + extern; job 10 on n2 and
     * job 11: not counted */
    fill (&r, 10, ACCT_STEP_BATCH);
    r.alloc_cpus = 4;
    r.start_us = 1000;
    r.end_us = 9000;
    r.user_usec = 100;
    r.system_usec = 10;
    r.usage_usec = 110;
    r.has_mem_peak = true;
    r.mem_peak = 500;
    ck_assert_int_eq (acct_journal_append (dir, &r, &err), 0);
    fill (&r, 10, 0);
    r.start_us = 2000;
    r.end_us = 5000;
    r.user_usec = 1000;
    r.system_usec = 100;
    r.usage_usec = 1100;
    r.exit_status = 256;
    snprintf (r.state, sizeof (r.state), "FAILED");
    r.has_mem_peak = true;
    r.mem_peak = 900;
    r.has_throttle = true;
    r.throttled_usec = 7;
    ck_assert_int_eq (acct_journal_append (dir, &r, &err), 0);
    fill (&r, 10, 1);
    r.start_us = 5000;
    r.end_us = 8000;
    r.user_usec = 2000;
    r.system_usec = 200;
    r.usage_usec = 2200;
    ck_assert_int_eq (acct_journal_append (dir, &r, &err), 0);
    fill (&r, 10, ACCT_STEP_EXTERN);
    r.job_name[0] = r.user[0] = '\0'; /* Slurm gives it no job env */
    r.start_us = 900;
    r.end_us = 9100;
    r.user_usec = r.system_usec = r.usage_usec = 0;
    snprintf (r.policy, sizeof (r.policy), "none");
    ck_assert_int_eq (acct_journal_append (dir, &r, &err), 0);
    fill (&r, 10, 0);
    snprintf (r.node, sizeof (r.node), "n2");
    ck_assert_int_eq (acct_journal_append (dir, &r, &err), 0);
    fill (&r, 11, 0);
    ck_assert_int_eq (acct_journal_append (dir, &r, &err), 0);

    ck_assert_int_eq (acct_job_from_steps (dir, 10, "n1", &j, &err), 1);
    ck_assert_int_eq (j.kind, ACCT_KIND_JOB);
    ck_assert_int_eq (j.source, ACCT_SRC_STEP_SUM);
    ck_assert_uint_eq (j.nsteps, 4);
    ck_assert_uint_eq (j.user_usec, 3100);
    ck_assert_uint_eq (j.system_usec, 310);
    ck_assert_uint_eq (j.usage_usec, 3410);
    ck_assert_int_eq (j.start_us, 900);
    ck_assert_int_eq (j.end_us, 9100);
    ck_assert_int_eq (j.elapsed_us, 8200);
    ck_assert_uint_eq (j.alloc_cpus, 4);
    ck_assert (j.has_mem_peak && j.mem_peak == 900);
    ck_assert (j.has_throttle && j.throttled_usec == 7);
    ck_assert_str_eq (j.state, "COMPLETED"); /* the batch step's */
    ck_assert_str_eq (j.policy, "numa-local");
    ck_assert_str_eq (j.node, "n1");
    ck_assert_str_eq (j.job_name, "jn");
    ck_assert_uint_eq (j.step_id, ACCT_NO_VAL);

    /* no record of job 12 at all: a record of nothing measured */
    struct acct_record none;
    ck_assert_int_eq (acct_job_from_steps (dir, 12, "n1", &none, &err), 2);
    ck_assert_int_eq (none.kind, ACCT_KIND_JOB);
    ck_assert_uint_eq (none.job_id, 12);
    ck_assert_uint_eq (none.step_id, ACCT_NO_VAL);
    ck_assert_str_eq (none.node, "n1");
    ck_assert_uint_eq (none.nsteps, 0);
    ck_assert_int_eq (none.start_us, 0);
    ck_assert_int_eq (none.exit_status, -1);
    ck_assert_str_eq (none.state, "UNKNOWN");
    ck_assert_uint_eq (none.user_usec + none.system_usec, 0);
    /* job 13: the extern step's record alone (the job's other steps lost
     * their slurmstepd): nothing is known of the outcome */
    struct acct_record ext;
    fill (&r, 13, ACCT_STEP_EXTERN);
    r.exit_status = 0;
    snprintf (r.state, sizeof (r.state), "COMPLETED");
    ck_assert_int_eq (acct_journal_append (dir, &r, &err), 0);
    ck_assert_int_eq (acct_job_from_steps (dir, 13, "n1", &ext, &err), 1);
    ck_assert_uint_eq (ext.nsteps, 1);
    ck_assert_int_eq (ext.exit_status, -1);
    ck_assert_str_eq (ext.state, "UNKNOWN");
    /* once a job record is there, no second one */
    j.source = ACCT_SRC_JOB_CGROUP;
    ck_assert_int_eq (acct_journal_append (dir, &j, &err), 0);
    ck_assert_int_eq (acct_job_from_steps (dir, 10, "n1", &j, &err), 0);
    ck_assert_int_eq (acct_job_from_steps (dir, 10, "n2", &j, &err), 1);
    ck_assert_uint_eq (j.nsteps, 1);
    /* job id 10 reused (slurmctld lost its state): the new job's records
     * carry another Submit; its job record is made from them alone, the
     * earlier job's record and steps left out (job 14 here) */
    fill (&r, 14, ACCT_STEP_BATCH);
    r.submit_us = 1000000;
    ck_assert_int_eq (acct_journal_append (dir, &r, &err), 0);
    ck_assert_int_eq (acct_job_from_steps (dir, 14, "n1", &j, &err), 1);
    ck_assert_int_eq (acct_journal_append (dir, &j, &err), 0);
    fill (&r, 14, ACCT_STEP_BATCH);
    r.submit_us = 5000000;
    r.start_us = 20000;
    r.end_us = 30000;
    r.user_usec = 40;
    ck_assert_int_eq (acct_journal_append (dir, &r, &err), 0);
    ck_assert_int_eq (acct_job_from_steps (dir, 14, "n1", &j, &err), 0);
    ck_assert_int_eq (acct_job_from_steps_at (dir, 14, 5000000, "n1", &j, &err),
                      1);
    ck_assert_uint_eq (j.nsteps, 1);
    ck_assert_uint_eq (j.user_usec, 40);
    ck_assert_int_eq (j.start_us, 20000);
    ck_assert_int_eq (j.submit_us, 5000000);
}
END_TEST

static const struct {
    int32_t status;
    bool oom;
    const char *want;
} state_cases[] = {
    {0, false, "COMPLETED"},
    {1 << 8, false, "FAILED"},
    {9, false, "CANCELLED"}, /* SIGKILL */
    {15, false, "CANCELLED"},
    {0, true, "OUT_OF_MEMORY"},
    {-1, false, "UNKNOWN"},
};

/* ---- the sidecar index (journal.c) ------------------------------------- */

/* 10 jobs of 3 records each (job 5 an array task of array 3), rotated
 * every few records: several files with their index */
static void index_journal (void)
{
    for (uint32_t j = 1; j <= 10; j++)
        for (uint32_t s = 0; s < 3; s++) {
            struct acct_record r;
            pin_error_t err = {""};
            fill (&r, j, s);
            if (j == 5) {
                r.array_job_id = 3;
                r.array_task_id = 7;
            }
            ck_assert_msg (acct_journal_append_max (dir, &r, 2500, &err) == 0,
                           "%s",
                           err.text);
        }
}

/* job's records through acct_journal_read_job: count, all of job */
static unsigned read_one (uint32_t job, struct acct_journal_stats *st)
{
    struct collect c = {0};
    unsigned skipped = 0;
    pin_error_t err = {""};

    ck_assert_msg (acct_journal_read_job (dir,
                                          job,
                                          collect_cb,
                                          &c,
                                          &skipped,
                                          &err)
                       == 0,
                   "%s",
                   err.text);
    acct_journal_last_stats (st);
    for (unsigned i = 0; i < c.n; i++)
        ck_assert_uint_eq (c.jobs[i], job);
    return c.n;
}

static void path_of (char *buf, size_t n, const char *name)
{
    snprintf (buf, n, "%s/%s", dir, name);
}

START_TEST (test_index_used)
{
    struct acct_journal_stats st;
    struct collect c = {0};
    uint32_t ids[] = {3};
    unsigned skipped;
    pin_error_t err = {""};
    char p[4200];
    struct stat sb;

    index_journal ();
    path_of (p, sizeof (p), "journal.idx");
    ck_assert_int_eq (stat (p, &sb), 0);
    ck_assert_int_eq (sb.st_mode & 0777, 0600);
    path_of (p, sizeof (p), "journal.1.idx");
    ck_assert_int_eq (stat (p, &sb), 0);
    for (uint32_t j = 1; j <= 10; j++) {
        ck_assert_uint_eq (read_one (j, &st), 3);
        ck_assert_uint_eq (st.lines_rejected, 0);
        ck_assert_uint_eq (st.lines_verified, 3);
        /* only the job's lines were parsed */
        ck_assert_uint_eq (st.records, 3);
        ck_assert_uint_ge (st.files_skipped, 1);
    }
    /* the array job: its tasks' records (job 5) and its own (job 3) */
    ck_assert_int_eq (acct_journal_read_jobs (dir,
                                              ids,
                                              1,
                                              collect_cb,
                                              &c,
                                              &skipped,
                                              &err),
                      0);
    ck_assert_uint_eq (c.n, 6);
}
END_TEST

/* Break the index in `how`, then every job must read as without one. */
static void index_broken (int how)
{
    struct acct_journal_stats st;
    char p[4200], q[4200];
    int fd;

    index_journal ();
    path_of (p, sizeof (p), "journal.1.idx");
    path_of (q, sizeof (q), "journal.2.idx");
    switch (how) {
        case 0: /* missing */
            ck_assert_int_eq (unlink (p), 0);
            ck_assert_int_eq (unlink (q), 0);
            path_of (p, sizeof (p), "journal.idx");
            ck_assert_int_eq (unlink (p), 0);
            break;
        case 1: /* another file's (stale: its inode) */
            ck_assert_int_eq (rename (p, q), 0);
            break;
        case 2: /* truncated: half an entry */
            ck_assert_int_eq (truncate (p, 64 + 24 + 12), 0);
            break;
        case 3: { /* forged: job 2's entry points at job 1's line */
            uint64_t off0;
            fd = open (p, O_RDWR);
            ck_assert_int_ge (fd, 0);
            /* entries 0..2 are job 1's, 3.. job 2's: entry 3 gets the
             * offset of entry 0 */
            ck_assert_int_eq (pread (fd, &off0, 8, 64 + 8), 8);
            ck_assert_int_eq (pwrite (fd, &off0, 8, 64 + 3 * 24 + 8), 8);
            close (fd);
            break;
        }
        case 4: { /* forged: job 1's first line said to be job 2's */
            uint32_t two = 2;
            fd = open (p, O_RDWR);
            ck_assert_int_ge (fd, 0);
            ck_assert_int_eq (pwrite (fd, &two, 4, 64), 4);
            close (fd);
            break;
        }
        case 5: /* a symlink in its place */
            ck_assert_int_eq (unlink (p), 0);
            ck_assert_int_eq (symlink (q, p), 0);
            break;
        case 6: /* a line of the journal changed after the index */
            path_of (q, sizeof (q), "journal.1");
            fd = open (q, O_RDWR);
            ck_assert_int_ge (fd, 0);
            ck_assert_int_eq (pwrite (fd, "\n", 1, 10), 1);
            close (fd);
            break;
    }
    for (uint32_t j = 1; j <= 10; j++) {
        unsigned want = 3;
        if (how == 6 && j == 1)
            want = 2; /* that line is garbage now: it is not a record */
        if (how == 4 && j == 1)
            /* the one case an index can hide a line: an entry that
             * names another job (only root writes it; doc/accounting.md)
             * until a reader of the job it names finds it out */
            continue;
        ck_assert_uint_eq (read_one (j, &st), want);
        if (how == 5 && geteuid () == 0)
            /* never followed, never replaced */
            ck_assert_int_eq (lstat (p, &(struct stat){0}), 0);
    }
    if (how == 3) { /* does not follow on: the rest scanned */
        ck_assert_uint_eq (read_one (2, &st), 3);
        ck_assert_uint_ge (st.files_scanned, 1);
        ck_assert_uint_lt (st.lines_verified, 3); /* not all of them */
    }
    if (how == 4) { /* job 2's reader reaches job 1's line: no index */
        ck_assert_uint_eq (read_one (2, &st), 3);
        ck_assert_uint_ge (st.lines_rejected, 1);
        ck_assert_uint_lt (st.lines_verified, 3); /* not all of them */
    }
    if (how == 6) {
        read_one (1, &st);
        ck_assert_uint_ge (st.lines_rejected, 1);
    }
}

START_TEST (test_index_broken)
{
    index_broken (_i);
}
END_TEST

/* Records appended after the index (an older slurm-pin, a crash between
 * the two writes) are found by the scan of the rest. */
START_TEST (test_index_behind)
{
    struct acct_journal_stats st;
    struct acct_record r;
    char line[65536], p[4200];
    char *json;
    FILE *f;

    append_ok (1, 0);
    append_ok (2, 0);
    fill (&r, 1, 1);
    json = acct_record_to_json (&r, NULL);
    ck_assert_ptr_nonnull (json);
    path_of (p, sizeof (p), "journal");
    f = fopen (p, "a");
    ck_assert_ptr_nonnull (f);
    fprintf (f, "%s\n", json);
    fclose (f);
    free (json);
    ck_assert_uint_eq (read_one (1, &st), 2);
    ck_assert_uint_eq (st.lines_verified, 1);
    /* the next append rebuilds it: then both through the index */
    append_ok (3, 0);
    ck_assert_uint_eq (read_one (1, &st), 2);
    ck_assert_uint_eq (st.lines_verified, 2);
    (void)line;
}
END_TEST

/* acct_journal_read_sorted: every record once, job by job in listing
 * order, job_end after each job */
struct sorted {
    unsigned n, ends;
    uint32_t last, jobs[64];
};

static int sorted_cb (const struct acct_record *r, void *arg)
{
    struct sorted *s = arg;
    if (s->n < 64)
        s->jobs[s->n] = r->job_id;
    s->n++;
    return 0;
}

static int sorted_end (void *arg)
{
    ((struct sorted *)arg)->ends++;
    return 0;
}

START_TEST (test_read_sorted)
{
    struct sorted s = {0};
    unsigned skipped = 0;
    pin_error_t err = {""};
    uint32_t order[] = {9, 2, 7, 2, 9, 1};
    char p[4200];
    FILE *f;

    for (size_t i = 0; i < NELEM (order); i++)
        append_ok (order[i], 300);
    path_of (p, sizeof (p), "journal");
    f = fopen (p, "a");
    fputs ("garbage\n", f);
    fclose (f);
    ck_assert_int_eq (acct_journal_read_sorted (dir,
                                                sorted_cb,
                                                sorted_end,
                                                &s,
                                                &skipped,
                                                &err),
                      0);
    ck_assert_uint_eq (s.n, 6);
    ck_assert_uint_eq (s.ends, 4);
    ck_assert_uint_eq (skipped, 1);
    ck_assert_uint_eq (s.jobs[0], 1);
    ck_assert_uint_eq (s.jobs[1], 2);
    ck_assert_uint_eq (s.jobs[2], 2);
    ck_assert_uint_eq (s.jobs[3], 7);
    ck_assert_uint_eq (s.jobs[4], 9);
    ck_assert_uint_eq (s.jobs[5], 9);
}
END_TEST

/* The sorted listing takes a rotated file's lines from its index: the
 * same order as a scan, arrays by task; an index that no longer matches
 * its file (touched) is not used; one that lies stops the listing with an
 * error naming the file and is removed, and the next run scans. */
struct sorted3 {
    unsigned n;
    uint32_t v[64][3]; /* job, array job, task */
};

static int sorted3_cb (const struct acct_record *r, void *arg)
{
    struct sorted3 *s = arg;
    if (s->n < 64) {
        s->v[s->n][0] = r->job_id;
        s->v[s->n][1] = r->array_job_id;
        s->v[s->n][2] = r->array_task_id;
    }
    s->n++;
    return 0;
}

static int read_sorted3 (struct sorted3 *s, pin_error_t *err)
{
    unsigned skipped = 0;
    memset (s, 0, sizeof (*s));
    return acct_journal_read_sorted (dir, sorted3_cb, NULL, s, &skipped, err);
}

/* jobs 9, 4 and the array 5 (tasks 2, 0, 1 as jobs 8, 6, 7), rotated at
 * every record or two */
static void append_arrays (void)
{
    struct {
        uint32_t job, ajob, task;
    } in[] = {{9, 0, 0}, {8, 5, 2}, {4, 0, 0}, {6, 5, 0}, {7, 5, 1}, {9, 0, 0}};
    for (size_t i = 0; i < NELEM (in); i++) {
        struct acct_record r;
        pin_error_t err = {""};
        fill (&r, in[i].job, 0);
        if (in[i].ajob) {
            r.array_job_id = in[i].ajob;
            r.array_task_id = in[i].task;
        }
        ck_assert_msg (acct_journal_append_max (dir, &r, 300, &err) == 0,
                       "%s",
                       err.text);
    }
}

static void check_arrays (const struct sorted3 *s)
{
    uint32_t want[][2] = {{4, 0}, {6, 5}, {7, 5}, {8, 5}, {9, 0}, {9, 0}};
    ck_assert_uint_eq (s->n, NELEM (want));
    for (size_t i = 0; i < NELEM (want); i++) {
        ck_assert_uint_eq (s->v[i][0], want[i][0]);
        if (want[i][1])
            ck_assert_uint_eq (s->v[i][1], want[i][1]);
    }
}

START_TEST (test_read_sorted_index)
{
    struct sorted3 s;
    pin_error_t err = {""};
    char p[4200];
    struct timespec ts[2] = {{0, UTIME_OMIT}, {1, 0}};
    FILE *f;
    char magic[8];

    append_arrays ();
    path_of (p, sizeof (p), "journal.1.idx");
    ck_assert_int_eq (access (p, F_OK), 0);
    f = fopen (p, "r");
    ck_assert_ptr_nonnull (f);
    ck_assert_uint_eq (fread (magic, 1, 8, f), 8);
    fclose (f);
    ck_assert_int_eq (memcmp (magic, "PINJIX2\n", 8), 0);
    ck_assert_msg (read_sorted3 (&s, &err) == 0, "%s", err.text);
    check_arrays (&s);
    /* journal.1 touched: its index is not used, the same listing */
    path_of (p, sizeof (p), "journal.1");
    ck_assert_int_eq (utimensat (AT_FDCWD, p, ts, 0), 0);
    ck_assert_msg (read_sorted3 (&s, &err) == 0, "%s", err.text);
    check_arrays (&s);
}
END_TEST

START_TEST (test_read_sorted_index_lies)
{
    struct sorted3 s;
    pin_error_t err = {""};
    char p[4200], j[4200];
    struct stat before, after;
    struct timespec ts[2];
    uint32_t job;
    int fd;

    append_arrays ();
    /* journal.1's first entry says job 3 (its line is job 9's); the
     * entries still follow each other, and the file is as it was */
    path_of (p, sizeof (p), "journal.1.idx");
    path_of (j, sizeof (j), "journal.1");
    ck_assert_int_eq (stat (j, &before), 0);
    fd = open (p, O_RDWR);
    ck_assert_int_ge (fd, 0);
    ck_assert_int_eq (pread (fd, &job, 4, 64), 4);
    ck_assert_uint_eq (job, 9);
    job = 3;
    ck_assert_int_eq (pwrite (fd, &job, 4, 64), 4);
    close (fd);
    ts[0] = before.st_atim;
    ts[1] = before.st_mtim;
    ck_assert_int_eq (utimensat (AT_FDCWD, j, ts, 0), 0);
    ck_assert_int_eq (stat (j, &after), 0);
    ck_assert_int_eq (after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
    ck_assert_int_eq (read_sorted3 (&s, &err), -1);
    ck_assert_msg (strstr (err.text, "journal.1 changed after its index was written"),
                   "%s",
                   err.text);
    ck_assert_msg (strstr (err.text, "run the command again"), "%s", err.text);
    ck_assert_int_eq (access (p, F_OK), -1);
    /* the next run scans journal.1 (and, as root, indexes it anew) */
    ck_assert_msg (read_sorted3 (&s, &err) == 0, "%s", err.text);
    check_arrays (&s);
    ck_assert_int_eq (access (p, F_OK), 0);
}
END_TEST

/* An index of the format before (PINJIX1, no task ids) is not used: root
 * writes it anew. */
START_TEST (test_read_sorted_index_old)
{
    struct sorted3 s;
    pin_error_t err = {""};
    char p[4200], magic[8];
    FILE *f;
    int fd;

    append_arrays ();
    path_of (p, sizeof (p), "journal.1.idx");
    fd = open (p, O_RDWR);
    ck_assert_int_ge (fd, 0);
    ck_assert_int_eq (pwrite (fd, "PINJIX1\n", 8, 0), 8);
    close (fd);
    ck_assert_msg (read_sorted3 (&s, &err) == 0, "%s", err.text);
    check_arrays (&s);
    f = fopen (p, "r");
    ck_assert_ptr_nonnull (f);
    ck_assert_uint_eq (fread (magic, 1, 8, f), 8);
    fclose (f);
    ck_assert_int_eq (memcmp (magic, "PINJIX2\n", 8), 0);
}
END_TEST

/* ---- the fast path of acct_record_from_json against json-c's --------------
 */

/* Both paths on `line`: the same verdict, the same record. */
static void same_both_ways (const char *line)
{
    struct acct_record *a = malloc (sizeof (*a)), *b = malloc (sizeof (*b));
    int ra, rb;

    ck_assert_ptr_nonnull (a);
    ck_assert_ptr_nonnull (b);
    memset (a, 0xa5, sizeof (*a));
    memset (b, 0xa5, sizeof (*b));
    ra = acct_record_from_json (line, a, NULL);
    rb = acct_record_from_json_slow (line, b, NULL);
    ck_assert_msg (ra == rb, "verdicts differ (%d, %d) on %s", ra, rb, line);
    if (ra == 0)
        ck_assert_msg (memcmp (a, b, sizeof (*a)) == 0,
                       "records differ on %s",
                       line);
    free (a);
    free (b);
}

#define L0 "{\"v\":1,\"kind\":\"step\",\"job_id\":1,\"node\":\"n\","
static const char *const fast_lines[] = {
    L0 "\"start_us\":1,\"end_us\":5}",
    L0 "\"start_us\":-1,\"end_us\":5,\"elapsed_us\":-7}",
    L0
    "\"start_us\":1,\"end_us\":5,\"efficiency\":0.5000,\"confine_use\":2.25}",
    L0 "\"start_us\":1,\"end_us\":5,\"confine_use\":3}",
    L0 "\"start_us\":1,\"end_us\":5,\"confine_use\":\"x\"}",
    L0 "\"start_us\":1,\"end_us\":5,\"user_usec\":1.5}",
    L0 "\"start_us\":1,\"end_us\":5,\"user_usec\":-3}",
    L0 "\"start_us\":1,\"end_us\":5,\"user_usec\":18446744073709551615}",
    L0 "\"start_us\":1,\"end_us\":5,\"seed\":9223372036854775807}",
    L0 "\"start_us\":1,\"end_us\":5,\"seed\":922337203685477580}",
    L0 "\"start_us\":1,\"end_us\":5,\"seed\":9223372036854775808}",
    L0 "\"start_us\":1,\"end_us\":5,\"start_us\":-9223372036854775807}",
    L0 "\"start_us\":-9223372036854775808,\"end_us\":5}",
    L0 "\"end_us\":5,\"start_us\":-9223372036854775807}",
    L0 "\"start_us\":1,\"end_us\":5,\"seed\":12345678901234567890123}",
    L0 "\"start_us\":1,\"end_us\":5,\"uid\":4294967296}",
    L0 "\"start_us\":1,\"end_us\":5,\"uid\":4294967295}",
    L0 "\"start_us\":1,\"end_us\":5,\"uid\":-0}",
    L0 "\"start_us\":1,\"end_us\":5,\"uid\":007}",
    L0 "\"start_us\":1,\"end_us\":5,\"job_id\":2}",
    L0 "\"start_us\":1,\"end_us\":5,\"user\":\"a\\\"b\"}",
    L0 "\"start_us\":1,\"end_us\":5,\"user\":\"\\u00e9t\\u00e9\"}",
    L0 "\"start_us\":1,\"end_us\":5,\"user\":\"\xc3\xa9\"}",
    L0 "\"start_us\":1,\"end_us\":5,\"user\":\"\xff\"}",
    L0 "\"start_us\":1,\"end_us\":5,\"user\":7}",
    L0 "\"start_us\":1,\"end_us\":5,\"user\":null}",
    L0 "\"start_us\":1,\"end_us\":5,\"x\":true,\"y\":[1,{\"z\":2}]}",
    L0 "\"start_us\":1,\"end_us\":5,\"Unknown-Key\":1}",
    L0 "\"start_us\":1,\"end_us\":5} \t\r\n",
    L0 "\"start_us\":1,\"end_us\":5} x",
    L0 "\"start_us\": 1,\"end_us\":5}",
    L0 "\"start_us\":1,\"end_us\":5,\"source\":\"job-cgroup\"}",
    L0 "\"start_us\":1,\"end_us\":5,\"source\":\"nope\"}",
    L0
    "\"start_us\":1,\"end_us\":5,\"timelimit\":4294967295,\"exit_status\":-1}",
    L0 "\"start_us\":1,\"end_us\":5,\"exit_status\":2147483648}",
    L0 "\"start_us\":1,\"end_us\":5,\"steps\":3,\"kind\":\"job\"}",
    L0 "\"start_us\":1,\"end_us\":5,\"confine_use\":1e3}",
    L0 "\"start_us\":1,\"end_us\":5,\"confine_use\":1.}",
    L0 "\"start_us\":1}",
    "{\"v\":2,\"kind\":\"step\",\"job_id\":1,\"node\":\"n\",\"start_us\":1,"
    "\"end_us\":5}",
    "{\"v\":1,\"kind\":\"task\",\"job_id\":1,\"node\":\"n\",\"start_us\":1,"
    "\"end_us\":5}",
    "{\"v\":1,\"kind\":\"step\",\"node\":\"n\",\"start_us\":1,\"end_us\":5}",
    "{}",
    "{\"v\":1}",
    "",
    "[]",
};

START_TEST (test_fast_path_same)
{
    struct acct_record r;
    char *line;

    for (size_t i = 0; i < NELEM (fast_lines); i++)
        same_both_ways (fast_lines[i]);
    /* records as record.c writes them, every field, hostile strings */
    for (size_t i = 0; i < NELEM (hostile); i++) {
        fill (&r, 40 + (uint32_t)i, (uint32_t)i);
        r.kind = i % 2 ? ACCT_KIND_JOB : ACCT_KIND_STEP;
        r.array_job_id = 39;
        r.array_task_id = (uint32_t)i;
        acct_utf8_copy (r.job_name,
                        sizeof (r.job_name),
                        hostile[i],
                        strlen (hostile[i]));
        snprintf (r.user, sizeof (r.user), "u%zu", i);
        r.has_seed = true;
        /* a seed over 18 digits is json-c's path's alone */
        r.seed = i % 3 ? 12345678901ull * i : UINT64_MAX - i;
        r.has_throttle = true;
        r.nr_periods = 10 + i;
        r.has_mem_peak = true;
        r.mem_peak = 1ull << 40;
        r.confined_us = 5;
        r.confine_use = 1.0 / 3.0 + (double)i;
        snprintf (r.confine_cpus, sizeof (r.confine_cpus), "0-1");
        r.has_timelimit = true;
        r.timelimit = 0xffffffffu;
        r.submit_us = 1700000000000000 + i;
        r.req_mem = 4000;
        r.exit_status = (int32_t)(i * 256);
        snprintf (r.experiment, sizeof (r.experiment), "e");
        snprintf (r.arm, sizeof (r.arm), "none");
        snprintf (r.block, sizeof (r.block), "0123456789abcdef");
        line = acct_record_to_json (&r, NULL);
        ck_assert_ptr_nonnull (line);
        same_both_ways (line);
        free (line);
        /* and plain names, which the fast path takes */
        snprintf (r.job_name, sizeof (r.job_name), "plain-%zu", i);
        line = acct_record_to_json (&r, NULL);
        ck_assert_ptr_nonnull (line);
        same_both_ways (line);
        free (line);
    }
}
END_TEST

START_TEST (test_state)
{
    ck_assert_str_eq (acct_state_of_status (state_cases[_i].status,
                                            state_cases[_i].oom),
                      state_cases[_i].want);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("acct");
    TCase *tc = tcase_create ("acct");
    const char *skips[1];
    int nskips = 0;

    tcase_set_timeout (tc, 120);
    tcase_add_checked_fixture (tc, setup, teardown);
    tcase_add_loop_test (tc, test_efficiency, 0, NELEM (eff_cases));
    tcase_add_loop_test (tc, test_utf8_copy, 0, NELEM (utf8_cases));
    tcase_add_loop_test (tc, test_hostile_round_trip, 0, NELEM (hostile));
    tcase_add_test (tc, test_hostile_long);
    tcase_add_test (tc, test_round_trip_all_fields);
    tcase_add_loop_test (tc, test_parse_errors, 0, NELEM (bad_cases));
    tcase_add_test (tc, test_parse_minimal_and_unknown_keys);
    tcase_add_test (tc, test_journal_modes);
    tcase_add_test (tc, test_journal_unsafe);
    tcase_add_test (tc, test_journal_cut_every_byte);
    tcase_add_test (tc, test_journal_garbage_lines);
    tcase_add_test (tc, test_journal_rotation_concurrent);
    tcase_add_test (tc, test_journal_full);
    if (can_preallocate ())
        tcase_add_test (tc, test_journal_preallocated);
    else
        skips[nskips++] =
            "test_journal_preallocated: no fallocate(KEEP_SIZE) on TMPDIR's "
            "file system";
    tcase_add_test (tc, test_journal_missing_dir_read);
    tcase_add_test (tc, test_job_from_steps);
    tcase_add_test (tc, test_index_used);
    tcase_add_loop_test (tc, test_index_broken, 0, 7);
    tcase_add_test (tc, test_index_behind);
    tcase_add_test (tc, test_read_sorted);
    tcase_add_test (tc, test_read_sorted_index);
    tcase_add_test (tc, test_read_sorted_index_lies);
    tcase_add_test (tc, test_read_sorted_index_old);
    tcase_add_test (tc, test_fast_path_same);
    tcase_add_loop_test (tc, test_state, 0, NELEM (state_cases));
    suite_add_tcase (s, tc);
    return tap_run (s, skips, nskips);
}
