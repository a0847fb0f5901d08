/* test/profile.c - the profile file: writer, bound, reader, summary */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libprof/profile.h"
#include "libprof/summary.h"
#include "libtest/tap.h"
#include "libtest/tmptree.h"

static json_object *line (const char *text)
{
    json_object *o = json_tokener_parse (text);
    ck_assert_ptr_nonnull (o);
    return o;
}

static int count_cb (json_object *o, int lineno, void *arg)
{
    int *n = arg;
    (void)o;
    ck_assert_int_eq (lineno, n[0] + 1);
    n[0]++;
    if (!strcmp (prof_get_str (o, "type"), "note"))
        n[1]++;
    if (!strcmp (prof_get_str (o, "type"), "end"))
        n[2] = (int)prof_get_int (o, "dropped_lines", -1);
    return 0;
}

START_TEST (test_roundtrip)
{
    char path[4096];
    json_object *h = json_object_new_object (), *l, *end;
    struct prof_writer *w;
    pin_error_t e = {""};
    int n[3] = {0, 0, -1};
    struct stat st;

    tmptree_setup ("test_profile");
    tmptree_path (path, sizeof (path), "p.jsonl");
    w = prof_writer_open (path, 1 << 20, h, &e);
    ck_assert_msg (w != NULL, "%s", e.text);
    l = line ("{\"type\":\"fork\",\"t\":5,\"thread\":false}");
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq (prof_writer_put (w, l, &e), 1);
    end = json_object_new_object ();
    ck_assert_int_eq (prof_writer_close (w, end, &e), 0);
    ck_assert_int_eq (prof_read (path, count_cb, n, &e), 0);
    ck_assert_int_eq (n[0], 12);
    ck_assert_int_eq (n[1], 0);
    ck_assert_int_eq (n[2], 0);
    ck_assert_int_eq (stat (path, &st), 0);
    ck_assert_int_eq (st.st_mode & 0777, 0600);
    json_object_put (l);
    json_object_put (end);
    json_object_put (h);
    tmptree_teardown ();
}
END_TEST

/* A command name as the system has it (any bytes): the file is ASCII
 * (\u escapes; an invalid byte U+FFFD), which every JSON reader takes
 * (json-c 0.17 and 0.18 in strict mode refuse raw UTF-8), and it reads
 * back as the same characters. */
static int comm_cb (json_object *o, int lineno, void *arg)
{
    if (lineno == 2)
        snprintf (arg, 64, "%s", prof_get_str (o, "comm"));
    return 0;
}

START_TEST (test_non_ascii)
{
    char path[4096], got[64] = "", buf[4096];
    json_object *h = json_object_new_object (), *l = json_object_new_object ();
    struct prof_writer *w;
    pin_error_t e = {""};
    FILE *f;
    size_t n;

    tmptree_setup ("test_profile");
    tmptree_path (path, sizeof (path), "p.jsonl");
    ck_assert_ptr_nonnull (w = prof_writer_open (path, 1 << 20, h, &e));
    json_object_object_add (l, "type", json_object_new_string ("exit"));
    json_object_object_add (l,
                            "comm",
                            json_object_new_string ("caf\xc3\xa9 "
                                                    "\xf0\x9f\x98\x80"
                                                    " \xe2\x80\xa8 \xff"));
    ck_assert_int_eq (prof_writer_put (w, l, &e), 1);
    ck_assert_int_eq (prof_writer_close (w, NULL, &e), 0);
    ck_assert_ptr_nonnull (f = fopen (path, "r"));
    n = fread (buf, 1, sizeof (buf) - 1, f);
    fclose (f);
    buf[n] = '\0';
    for (size_t i = 0; i < n; i++)
        ck_assert_msg ((unsigned char)buf[i] < 0x80, "not ASCII: %s", buf);
    ck_assert_msg (strstr (buf, "caf\\u00e9 \\ud83d\\ude00 \\u2028 \\ufffd"),
                   "%s",
                   buf);
    ck_assert_int_eq (prof_read (path, comm_cb, got, &e), 0);
    ck_assert_str_eq (got,
                      "caf\xc3\xa9 \xf0\x9f\x98\x80 \xe2\x80\xa8 "
                      "\xef\xbf\xbd");
    json_object_put (l);
    json_object_put (h);
    tmptree_teardown ();
}
END_TEST

/* The bound: a note, the end line still there, the file within it. */
START_TEST (test_bound)
{
    char path[4096];
    json_object *h = json_object_new_object (), *l, *end;
    struct prof_writer *w;
    pin_error_t e = {""};
    int n[3] = {0, 0, -1}, written = 0, dropped = 0;
    struct stat st;

    tmptree_setup ("test_profile");
    tmptree_path (path, sizeof (path), "p.jsonl");
    ck_assert_ptr_null (prof_writer_open (path, PROF_MIN_BYTES - 1, h, &e));
    ck_assert_int_eq (errno, EINVAL);
    w = prof_writer_open (path, PROF_MIN_BYTES, h, &e);
    ck_assert_ptr_nonnull (w);
    l = line (
        "{\"type\":\"exec\",\"t\":123456789,\"pid\":1234,"
        "\"comm\":\"0123456789abcdef\"}");
    for (int i = 0; i < 1000; i++) {
        int rc = prof_writer_put (w, l, &e);
        ck_assert_int_ge (rc, 0);
        rc ? written++ : dropped++;
    }
    ck_assert_int_gt (written, 10);
    ck_assert_int_gt (dropped, 0);
    ck_assert_uint_eq (prof_writer_dropped (w), (uint64_t)dropped);
    end = json_object_new_object ();
    json_object_object_add (end, "t", json_object_new_int64 (99));
    ck_assert_int_eq (prof_writer_close (w, end, &e), 0);
    ck_assert_int_eq (stat (path, &st), 0);
    ck_assert_int_le (st.st_size, PROF_MIN_BYTES);
    ck_assert_int_eq (prof_read (path, count_cb, n, &e), 0);
    ck_assert_int_eq (n[1], 1);
    ck_assert_int_eq (n[2], dropped);
    ck_assert_int_eq (n[0], 1 + written + 1 + 1);
    json_object_put (l);
    json_object_put (end);
    json_object_put (h);
    tmptree_teardown ();
}
END_TEST

/* prof_writer_put_text: the same bytes as prof_writer_put, the same
 * bound (one note, the drops counted), mixed with prof_writer_put */
START_TEST (test_put_text)
{
    char path[4096], buf[256];
    static const char text[] =
        "{\"type\":\"exec\",\"t\":123456789,"
        "\"pid\":1234,\"comm\":\"0123456789abcdef\"}";
    json_object *h = json_object_new_object (), *l = line (text);
    struct prof_writer *w;
    pin_error_t e = {""};
    int n[3] = {0, 0, -1}, written = 0, dropped = 0;
    FILE *f;

    tmptree_setup ("test_profile");
    tmptree_path (path, sizeof (path), "p.jsonl");
    w = prof_writer_open (path, PROF_MIN_BYTES, h, &e);
    ck_assert_ptr_nonnull (w);
    for (int i = 0; i < 1000; i++) {
        int rc = i % 2 ? prof_writer_put (w, l, &e)
                       : prof_writer_put_text (w, text, strlen (text), &e);
        ck_assert_int_ge (rc, 0);
        rc ? written++ : dropped++;
    }
    ck_assert_int_gt (written, 10);
    ck_assert_int_gt (dropped, 0);
    ck_assert_uint_eq (prof_writer_dropped (w), (uint64_t)dropped);
    ck_assert_int_eq (prof_writer_close (w, NULL, &e), 0);
    ck_assert_int_eq (prof_read (path, count_cb, n, &e), 0);
    ck_assert_int_eq (n[1], 1);
    ck_assert_int_eq (n[0], 1 + written + 1);
    /* every line of the pair is the same bytes */
    ck_assert_ptr_nonnull (f = fopen (path, "r"));
    ck_assert_ptr_nonnull (fgets (buf, sizeof (buf), f)); /* header */
    for (int i = 0; i < written; i++) {
        ck_assert_ptr_nonnull (fgets (buf, sizeof (buf), f));
        buf[strcspn (buf, "\n")] = '\0';
        ck_assert_str_eq (buf, text);
    }
    fclose (f);
    json_object_put (l);
    json_object_put (h);
    tmptree_teardown ();
}
END_TEST

static int none_cb (json_object *o, int lineno, void *arg)
{
    (void)o;
    (void)lineno;
    (void)arg;
    return 0;
}

static const struct {
    const char *content, *error;
} bad[] = {
    {"", "empty"},
    {"{\"type\":\"fork\"}\n", "no header"},
    {"{\"type\":\"header\",\"format\":\"other\",\"version\":1}\n",
     "no header"},
    {"{\"type\":\"header\",\"format\":\"slurm-pin-profile\",\"version\":2}\n",
     "version 2"},
    {"{\"type\":\"header\",\"format\":\"slurm-pin-profile\"}\n", "version -1"},
    {"{\"type\":\"header\",\"format\":\"slurm-pin-profile\",\"version\":1}\n"
     "not json\n",
     ":2: not a JSON object"},
    {"{\"type\":\"header\",\"format\":\"slurm-pin-profile\",\"version\":1}\n"
     "[1,2]\n",
     ":2: not a JSON object"},
    {"{\"type\":\"header\",\"format\":\"slurm-pin-profile\",\"version\":1}\n"
     "{\"t\":1}\n",
     ":2: not a JSON object with a \"type\""},
    {"{\"type\":\"header\",\"format\":\"slurm-pin-profile\",\"version\":1}\n"
     "{\"type\":\"fork\"} {}\n",
     ":2: not a JSON object"},
    {"{\"type\":\"header\",\"format\":\"slurm-pin-profile\",\"version\":1}\n"
     "{\"type\":\"fork\",\"t\":1}\n",
     ":2: fork line without \"thread\""},
};

START_TEST (test_bad_files)
{
    char path[4096];
    pin_error_t e = {""};
    struct prof_summary s;

    tmptree_setup ("test_profile");
    tmptree_put ("bad.jsonl", bad[_i].content);
    tmptree_path (path, sizeof (path), "bad.jsonl");
    ck_assert_int_eq (prof_summary_read (path, &s, &e), -1);
    ck_assert_msg (strstr (e.text, bad[_i].error) && !strchr (e.text, '\n'),
                   "'%s' lacks '%s'",
                   e.text,
                   bad[_i].error);
    if (_i == 0) {
        ck_assert_int_eq (prof_read ("/nonexistent/x", none_cb, NULL, &e), -1);
        ck_assert_msg (strstr (e.text, "cannot open"), "%s", e.text);
    }
    tmptree_teardown ();
}
END_TEST

#define HDR                                                  \
    "{\"type\":\"header\",\"format\":\"slurm-pin-profile\"," \
    "\"version\":1}\n"

/* A recording killed while writing leaves its last line cut: the file
 * is read up to the line before.  A cut line that is not the last, or a
 * line beyond PROF_MAX_LINE (with or without its newline: a file of one
 * endless line), is an error, read with bounded memory. */
START_TEST (test_cut_and_long)
{
    char path[4096];
    pin_error_t e = {""};
    int n[3] = {0, 0, -1};
    FILE *f;

    tmptree_setup ("test_profile");
    tmptree_put ("cut.jsonl",
                 HDR
                 "{\"type\":\"root\",\"t\":1,\"pid\":2}\n"
                 "{\"type\":\"fork\",\"t\":2,\"pi");
    tmptree_path (path, sizeof (path), "cut.jsonl");
    ck_assert_int_eq (prof_read (path, count_cb, n, &e), 0);
    ck_assert_int_eq (n[0], 2);
    /* a complete last line without its newline is read */
    tmptree_put ("nonl.jsonl", HDR "{\"type\":\"root\",\"t\":1,\"pid\":2}");
    tmptree_path (path, sizeof (path), "nonl.jsonl");
    n[0] = 0;
    ck_assert_int_eq (prof_read (path, count_cb, n, &e), 0);
    ck_assert_int_eq (n[0], 2);
    /* a header cut short is not a profile */
    tmptree_put ("hdr.jsonl", "{\"type\":\"head");
    tmptree_path (path, sizeof (path), "hdr.jsonl");
    ck_assert_int_eq (prof_read (path, none_cb, NULL, &e), -1);
    for (int nl = 0; nl < 2; nl++) {
        tmptree_path (path, sizeof (path), "long.jsonl");
        ck_assert_ptr_nonnull (f = fopen (path, "w"));
        fputs (HDR "{\"type\":\"note\",\"text\":\"", f);
        for (int i = 0; i < PROF_MAX_LINE; i++)
            fputc ('x', f);
        fputs (nl ? "\"}\n" : "\"}", f);
        fclose (f);
        ck_assert_int_eq (prof_read (path, none_cb, NULL, &e), -1);
        ck_assert_msg (strstr (e.text, ":2: line longer than 1048576 bytes"),
                       "%s",
                       e.text);
    }
    tmptree_teardown ();
}
END_TEST

/* A hand-made profile with known answers. */
static const char *synthetic[] = {
    "{\"type\":\"header\",\"format\":\"slurm-pin-profile\",\"version\":1,"
    "\"interval_ms\":500,\"taskstats\":true}",
    "{\"type\":\"root\",\"t\":1000000000,\"pid\":10,\"comm\":\"sh\"}",
    /* 3 forks within 0.5 s, a 4th 2 s later; one thread */
    "{\"type\":\"fork\",\"t\":1100000000,\"pid\":11,\"tgid\":11,\"thread\":"
    "false}",
    "{\"type\":\"fork\",\"t\":1200000000,\"pid\":12,\"tgid\":12,\"thread\":"
    "false}",
    "{\"type\":\"fork\",\"t\":1300000000,\"pid\":13,\"tgid\":13,\"thread\":"
    "false}",
    "{\"type\":\"fork\",\"t\":1400000000,\"pid\":14,\"tgid\":13,\"thread\":"
    "true}",
    "{\"type\":\"exec\",\"t\":1400000001,\"pid\":11,\"tgid\":11,\"comm\":"
    "\"cc1\"}",
    "{\"type\":\"sample\",\"t\":1500000000,\"threads\":{\"D\":2},"
    "\"rss_kb\":3000,\"pss_kb\":1000,\"smaps_reads\":3,\"smaps_ns\":3000}",
    "{\"type\":\"exit\",\"t\":1600000000,\"pid\":14,\"tgid\":13,\"thread\":"
    "true,"
    "\"comm\":\"w\"}",
    "{\"type\":\"task\",\"pid\":14,\"tgid\":13,\"comm\":\"w\",\"utime_us\":5,"
    "\"stime_us\":5,\"nvcsw\":1,\"nivcsw\":0}",
    "{\"type\":\"exit\",\"t\":1700000000,\"pid\":11,\"tgid\":11,"
    "\"thread\":false,\"comm\":\"cc1\"}",
    "{\"type\":\"task\",\"pid\":11,\"tgid\":11,\"comm\":\"cc1\","
    "\"utime_us\":2000000,\"stime_us\":500000,\"nvcsw\":10,\"nivcsw\":4}",
    "{\"type\":\"sample\",\"t\":2000000000,\"threads\":{\"D\":1},"
    "\"rss_kb\":2000,\"pss_kb\":1500}",
    "{\"type\":\"exit\",\"t\":2100000000,\"pid\":12,\"tgid\":12,"
    "\"thread\":false,\"comm\":\"sh\"}",
    "{\"type\":\"task\",\"pid\":12,\"tgid\":12,\"comm\":\"sh\",\"utime_us\":1,"
    "\"stime_us\":0,\"nvcsw\":1,\"nivcsw\":1}",
    "{\"type\":\"fork\",\"t\":3300000000,\"pid\":15,\"tgid\":15,\"thread\":"
    "false}",
    "{\"type\":\"future-type\",\"t\":3400000000,\"whatever\":[1]}",
    "{\"type\":\"lost\",\"t\":3500000000,\"kind\":\"sequence\",\"count\":2}",
    "{\"type\":\"end\",\"t\":4000000000,\"status\":0,\"lost_seq\":2,"
    "\"socket_drops\":3,"
    "\"enobufs\":1,\"dropped_lines\":0,\"alive\":{\"processes\":2,"
    "\"threads\":0}}",
};

START_TEST (test_summary)
{
    char path[4096], text[8192] = "";
    struct prof_summary s;
    pin_error_t e = {""};
    json_object *j;

    for (size_t i = 0; i < sizeof (synthetic) / sizeof (synthetic[0]); i++) {
        strcat (text, synthetic[i]);
        strcat (text, "\n");
    }
    tmptree_setup ("test_profile");
    tmptree_put ("s.jsonl", text);
    tmptree_path (path, sizeof (path), "s.jsonl");
    ck_assert_msg (prof_summary_read (path, &s, &e) == 0, "%s", e.text);
    ck_assert_uint_eq (s.roots, 1);
    ck_assert_uint_eq (s.processes, 4);
    ck_assert_uint_eq (s.threads, 1);
    ck_assert_uint_eq (s.execs, 1);
    ck_assert_uint_eq (s.peak_processes, 4); /* root + 11, 12, 13 */
    ck_assert_uint_eq (s.peak_tasks, 5);
    ck_assert_uint_eq (s.fork_peak, 3);
    ck_assert (s.duration_s > 2.999 && s.duration_s < 3.001);
    ck_assert (s.fork_mean > 1.33 && s.fork_mean < 1.34);
    ck_assert_uint_eq (s.task_records, 3);
    ck_assert_uint_eq (s.nvcsw, 12);
    ck_assert_uint_eq (s.nivcsw, 5);
    ck_assert_uint_eq (s.utime_us, 2000006);
    ck_assert (s.d_state_s > 1.499 && s.d_state_s < 1.501);
    ck_assert_uint_eq (s.peak_d_threads, 2);
    ck_assert_uint_eq (s.peak_rss_kb, 3000);
    ck_assert_uint_eq (s.pss_at_peak_rss_kb, 1000);
    ck_assert_uint_eq (s.peak_pss_kb, 1500);
    ck_assert_uint_eq (s.lost_seq, 2);
    ck_assert_uint_eq (s.socket_drops, 3);
    ck_assert_uint_eq (s.enobufs, 1);
    ck_assert_uint_eq (s.alive_processes, 2);
    ck_assert (s.have_end && s.have_taskstats);
    ck_assert_int_eq (s.exit_status, 0);
    /* by CPU: cc1 first; by count (taskstats leaders): cc1 and sh, 1 each */
    ck_assert_str_eq (s.by_cpu[0].comm, "cc1");
    ck_assert_uint_eq (s.by_cpu[0].cpu_us, 2500000);
    ck_assert_uint_eq (s.by_count[0].processes, 1);
    ck_assert_uint_eq (s.by_count[1].processes, 1);
    ck_assert_uint_eq (s.by_count[2].processes, 0); /* w: a thread */
    j = prof_summary_json (&s, 10);
    ck_assert_ptr_nonnull (j);
    ck_assert_int_eq (prof_get_int (j, "processes_created", -1), 4);
    json_object_put (j);
    prof_summary_free (&s);
    prof_summary_free (&s);
    tmptree_teardown ();
}
END_TEST

/* A profile is a new inode each time: a reader that kept a descriptor of
 * an older profile of the same name (a job id used again) still reads
 * the older one; a symbolic link planted at the name is not followed. */
START_TEST (test_new_inode)
{
    char path[4096], target[4096], buf[256];
    json_object *h = json_object_new_object ();
    struct prof_writer *w;
    pin_error_t e = {""};
    struct stat old, now;
    ssize_t n;
    int fd;

    tmptree_setup ("test_profile");
    tmptree_path (path, sizeof (path), "1.0.node.jsonl");
    json_object_object_add (h, "job", json_object_new_string ("first"));
    ck_assert_ptr_nonnull (w = prof_writer_open (path, 1 << 20, h, &e));
    ck_assert_int_eq (prof_writer_close (w, NULL, &e), 0);
    ck_assert_int_ge (fd = open (path, O_RDONLY), 0);
    ck_assert_int_eq (fstat (fd, &old), 0);
    json_object_object_add (h, "job", json_object_new_string ("second"));
    ck_assert_ptr_nonnull (w = prof_writer_open (path, 1 << 20, h, &e));
    ck_assert_int_eq (prof_writer_close (w, NULL, &e), 0);
    ck_assert_int_eq (stat (path, &now), 0);
    ck_assert (now.st_ino != old.st_ino);
    n = pread (fd, buf, sizeof (buf) - 1, 0);
    ck_assert_int_gt (n, 0);
    buf[n] = '\0';
    ck_assert_msg (strstr (buf, "\"first\"") && !strstr (buf, "\"second\""),
                   "%s",
                   buf);
    close (fd);
    /* a symlink at the name: removed, its target untouched */
    tmptree_put ("precious", "keep\n");
    tmptree_path (target, sizeof (target), "precious");
    ck_assert_int_eq (unlink (path), 0);
    ck_assert_int_eq (symlink (target, path), 0);
    ck_assert_ptr_nonnull (w = prof_writer_open (path, 1 << 20, h, &e));
    ck_assert_int_eq (prof_writer_close (w, NULL, &e), 0);
    ck_assert_str_eq (tmptree_get ("precious"), "keep\n");
    ck_assert_int_eq (lstat (path, &now), 0);
    ck_assert (S_ISREG (now.st_mode));
    json_object_put (h);
    tmptree_teardown ();
}
END_TEST

/* Shared with the job's user through an ACL: that user reads it, cannot
 * write it, cannot chmod it; others cannot read it (needs root). */
START_TEST (test_share)
{
    char path[4096];
    json_object *h = json_object_new_object ();
    struct prof_writer *w;
    pin_error_t e = {""};
    const uid_t user = 65534, other = 65533;
    struct stat st;
    int rc, status;
    pid_t pid;

    if (geteuid () != 0)
        return;
    tmptree_setup ("test_profile");
    ck_assert_int_eq (chmod (tmptree_root (), 0755), 0);
    tmptree_path (path, sizeof (path), "2.0.node.jsonl");
    ck_assert_ptr_nonnull (w = prof_writer_open (path, 1 << 20, h, &e));
    rc = prof_writer_share (w, user, &e);
    ck_assert_msg (rc >= 0, "%s", e.text);
    ck_assert_int_eq (prof_writer_close (w, NULL, &e), 0);
    ck_assert_int_eq (stat (path, &st), 0);
    ck_assert_uint_eq (st.st_uid, 0);
    if (rc == 1) { /* no ACLs here: root's only */
        ck_assert_uint_eq (st.st_mode & 0777, 0600);
        json_object_put (h);
        tmptree_teardown ();
        return;
    }
    ck_assert_uint_eq (st.st_mode & 0777, 0640); /* group bits: mask */
    if ((pid = fork ()) == 0) {
        int ok = setgid (user) == 0 && setuid (user) == 0
                 && open (path, O_RDONLY) >= 0 && open (path, O_WRONLY) < 0
                 && errno == EACCES && open (path, O_WRONLY | O_APPEND) < 0
                 && chmod (path, 0600) < 0 && errno == EPERM
                 && truncate (path, 1 << 30) < 0;
        _exit (ok ? 0 : 1);
    }
    ck_assert_int_eq (waitpid (pid, &status, 0), pid);
    ck_assert_msg (WIFEXITED (status) && WEXITSTATUS (status) == 0,
                   "uid %u could write, chmod or not read %s",
                   user,
                   path);
    if ((pid = fork ()) == 0) {
        int ok = setgid (other) == 0 && setuid (other) == 0
                 && open (path, O_RDONLY) < 0 && errno == EACCES;
        _exit (ok ? 0 : 1);
    }
    ck_assert_int_eq (waitpid (pid, &status, 0), pid);
    ck_assert_msg (WIFEXITED (status) && WEXITSTATUS (status) == 0,
                   "uid %u could read %s",
                   other,
                   path);
    json_object_put (h);
    tmptree_teardown ();
}
END_TEST

/* The room kept free for the journal stops the writing like the bound,
 * with a note that says why, and the end line still comes. */
START_TEST (test_keep_free)
{
    char path[4096];
    json_object *h = json_object_new_object (), *l, *end;
    struct prof_writer *w;
    pin_error_t e = {""};

    tmptree_setup ("test_profile");
    tmptree_path (path, sizeof (path), "3.0.node.jsonl");
    ck_assert_ptr_nonnull (w = prof_writer_open (path, 1 << 20, h, &e));
    prof_writer_keep_free (w, 1ULL << 62);
    l = line ("{\"type\":\"fork\",\"t\":5,\"thread\":false}");
    ck_assert_int_eq (prof_writer_put (w, l, &e), 0);
    ck_assert (prof_writer_out_of_room (w));
    end = json_object_new_object ();
    ck_assert_int_eq (prof_writer_close (w, end, &e), 0);
    ck_assert_msg (strstr (tmptree_get ("3.0.node.jsonl"),
                           "keeps 4611686018427387904 bytes free for the "
                           "accounting journal"),
                   "%s",
                   tmptree_get ("3.0.node.jsonl"));
    ck_assert (strstr (tmptree_get ("3.0.node.jsonl"), "\"type\":\"end\""));
    /* 0: no check */
    ck_assert_ptr_nonnull (w = prof_writer_open (path, 1 << 20, h, &e));
    prof_writer_keep_free (w, 0);
    ck_assert_int_eq (prof_writer_put (w, l, &e), 1);
    ck_assert_int_eq (prof_writer_close (w, NULL, &e), 0);
    json_object_put (l);
    json_object_put (end);
    json_object_put (h);
    tmptree_teardown ();
}
END_TEST

/* Task lines with the t of their exit: a process exit whose record
 * never came counts by its exit line's command; the counts by command
 * add up to the process exits; a foreign-looking record of a reused pid
 * paired with the other exit counts once. */
START_TEST (test_summary_paired)
{
    static const char *lines[] = {
        "{\"type\":\"header\",\"format\":\"slurm-pin-profile\","
        "\"version\":1,\"t0\":0,\"interval_ms\":1000,\"taskstats\":true}",
        "{\"type\":\"root\",\"t\":100,\"pid\":10,\"comm\":\"sh\"}",
        "{\"type\":\"fork\",\"t\":200,\"pid\":11,\"tgid\":11,"
        "\"thread\":false,\"ppid\":10,\"ptgid\":10,\"comm\":\"sh\"}",
        "{\"type\":\"exit\",\"t\":300,\"pid\":11,\"tgid\":11,"
        "\"thread\":false,\"status\":0,\"start\":200,\"comm\":\"sh\"}",
        "{\"type\":\"fork\",\"t\":400,\"pid\":11,\"tgid\":11,"
        "\"thread\":false,\"ppid\":10,\"ptgid\":10,\"comm\":\"sh\"}",
        "{\"type\":\"task\",\"t\":300,\"start\":200,\"pid\":11,"
        "\"tgid\":11,\"comm\":\"true\",\"utime_us\":5}",
        "{\"type\":\"exit\",\"t\":500,\"pid\":11,\"tgid\":11,"
        "\"thread\":false,\"status\":0,\"start\":400,\"comm\":\"sh\"}",
        "{\"type\":\"exit\",\"t\":600,\"pid\":10,\"tgid\":10,"
        "\"thread\":false,\"status\":0,\"start\":100,\"comm\":\"sh\"}",
        "{\"type\":\"task\",\"t\":600,\"start\":100,\"pid\":10,"
        "\"tgid\":10,\"comm\":\"sh\",\"utime_us\":7}",
        "{\"type\":\"end\",\"t\":700,\"status\":0,"
        "\"taskstats_missing\":1}",
    };
    char path[4096], text[4096] = "";
    struct prof_summary s;
    pin_error_t e = {""};
    uint64_t sum = 0;
    json_object *j, *ts;

    for (size_t i = 0; i < sizeof (lines) / sizeof (lines[0]); i++) {
        strcat (text, lines[i]);
        strcat (text, "\n");
    }
    tmptree_setup ("test_profile");
    tmptree_put ("p.jsonl", text);
    tmptree_path (path, sizeof (path), "p.jsonl");
    ck_assert_msg (prof_summary_read (path, &s, &e) == 0, "%s", e.text);
    ck_assert_uint_eq (s.process_exits, 3);
    ck_assert_uint_eq (s.task_records, 2);
    ck_assert_uint_eq (s.task_missing, 1);
    ck_assert_uint_eq (s.ncmds, 2);
    for (size_t i = 0; i < s.ncmds; i++)
        sum += s.by_count[i].processes;
    ck_assert_uint_eq (sum, 3);
    /* sh: the root and the second 11 (no record); true: the first 11 */
    ck_assert_str_eq (s.by_count[0].comm, "sh");
    ck_assert_uint_eq (s.by_count[0].processes, 2);
    ck_assert_str_eq (s.by_count[1].comm, "true");
    ck_assert_uint_eq (s.by_count[1].processes, 1);
    j = prof_summary_json (&s, 10);
    ck_assert (json_object_object_get_ex (j, "taskstats", &ts));
    ck_assert_int_eq (prof_get_int (ts, "missing", -1), 1);
    json_object_put (j);
    prof_summary_free (&s);
    tmptree_teardown ();
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("profile");
    TCase *tc = tcase_create ("profile");

    tcase_add_test (tc, test_roundtrip);
    tcase_add_test (tc, test_non_ascii);
    tcase_add_test (tc, test_summary_paired);
    tcase_add_test (tc, test_bound);
    tcase_add_test (tc, test_put_text);
    tcase_add_loop_test (tc,
                         test_bad_files,
                         0,
                         sizeof (bad) / sizeof (bad[0]));
    tcase_add_test (tc, test_summary);
    tcase_add_test (tc, test_cut_and_long);
    tcase_add_test (tc, test_new_inode);
    tcase_add_test (tc, test_share);
    tcase_add_test (tc, test_keep_free);
    suite_add_tcase (s, tc);
    return tap_run (s, NULL, 0);
}
