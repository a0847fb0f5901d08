/* test/taskstats.c - taskstats exit records: parsing and pairing */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libprof/taskstats.h"
#include "libtest/tap.h"

#define FAMILY 27

/* The largest stats payload build_v() writes, and the room one message
 * with it takes (a per-pid and a per-tgid record): sized from these
 * headers' struct, which grows with the kernel (416 bytes on 6.1, 688 on
 * 7.2), never a fixed number that a newer kernel outgrows. */
#define STATS_MAX (sizeof (struct taskstats) + 512)
#define MSG_MAX                 \
    (NLMSG_HDRLEN + GENL_HDRLEN \
     + 2 * NLA_ALIGN (3 * NLA_HDRLEN + 4 + STATS_MAX))

static size_t put_attr (unsigned char *b,
                        size_t off,
                        uint16_t type,
                        const void *data,
                        size_t len)
{
    struct nlattr a = {.nla_len = (uint16_t)(NLA_HDRLEN + len),
                       .nla_type = type};
    memcpy (b + off, &a, sizeof (a));
    if (len)
        memcpy (b + off + NLA_HDRLEN, data, len);
    return off + NLA_ALIGN (NLA_HDRLEN + len);
}

/* A TASKSTATS_CMD_NEW message in b[0..cap) with a per-pid record (stats
 * of `slen` bytes: what struct taskstats of these headers holds, zeros
 * or `tail` after it, as a newer kernel's longer struct) and, if
 * tgid_too, a per-tgid one; returns its length.  Never writes past cap. */
static size_t build_v (unsigned char *b,
                       size_t cap,
                       uint32_t pid,
                       size_t slen,
                       bool tgid_too,
                       uint16_t version,
                       unsigned char tail)
{
    struct nlmsghdr nh = {.nlmsg_type = FAMILY};
    struct genlmsghdr g = {.cmd = TASKSTATS_CMD_NEW, .version = 1};
    struct taskstats ts;
    unsigned char stats[STATS_MAX], nest[2 * NLA_HDRLEN + 4 + STATS_MAX];
    size_t off = NLMSG_HDRLEN + GENL_HDRLEN, n;

    ck_assert_uint_le (slen, sizeof (stats));
    ck_assert_uint_le (off
                           + (tgid_too ? 2 : 1)
                                 * NLA_ALIGN (NLA_HDRLEN + 2 * NLA_HDRLEN
                                              + sizeof (pid) + slen),
                       cap);
    memset (&ts, 0, sizeof (ts));
    ts.version = version;
    ts.ac_pid = pid;
    ts.ac_ppid = 1;
    ts.ac_tgid = 77;
    strcpy (ts.ac_comm, "short-lived");
    ts.ac_btime = 1700000000;
    ts.ac_btime64 = 1700000000;
    ts.ac_etime = 1500;
    ts.ac_utime = 300;
    ts.ac_stime = 700;
    ts.nvcsw = 5;
    ts.nivcsw = 2;
    ts.hiwater_rss = 1024;
    memset (stats, tail, sizeof (stats));
    memcpy (stats, &ts, slen < sizeof (ts) ? slen : sizeof (ts));
    n = put_attr (nest, 0, TASKSTATS_TYPE_PID, &pid, sizeof (pid));
    n = put_attr (nest, n, TASKSTATS_TYPE_STATS, stats, slen);
    off = put_attr (b, off, TASKSTATS_TYPE_AGGR_PID, nest, n);
    if (tgid_too) {
        uint32_t tgid = 77;
        n = put_attr (nest, 0, TASKSTATS_TYPE_TGID, &tgid, sizeof (tgid));
        n = put_attr (nest, n, TASKSTATS_TYPE_STATS, stats, slen);
        off = put_attr (b, off, TASKSTATS_TYPE_AGGR_TGID, nest, n);
    }
    nh.nlmsg_len = (uint32_t)off;
    memcpy (b, &nh, sizeof (nh));
    memcpy (b + NLMSG_HDRLEN, &g, sizeof (g));
    return off;
}

static size_t build (unsigned char *b,
                     uint32_t pid,
                     size_t slen,
                     bool tgid_too)
{
    return build_v (b, MSG_MAX, pid, slen, tgid_too, TASKSTATS_VERSION, 0);
}

START_TEST (test_record)
{
    unsigned char b[2 * MSG_MAX]; /* two messages */
    size_t len = build (b, 1234, sizeof (struct taskstats), true);
    struct ts_record r[2];
    pin_error_t e = {""};

    ck_assert_int_eq (taskstats_parse (b, len, FAMILY, r, 2, &e), 1);
    ck_assert_int_eq (r[0].pid, 1234);
    ck_assert_int_eq (r[0].tgid, 77);
    ck_assert_int_eq (r[0].ppid, 1);
    ck_assert_str_eq (r[0].comm, "short-lived");
    ck_assert_uint_eq (r[0].utime_us, 300);
    ck_assert_uint_eq (r[0].stime_us, 700);
    ck_assert_uint_eq (r[0].nvcsw, 5);
    ck_assert_uint_eq (r[0].nivcsw, 2);
    ck_assert_uint_eq (r[0].etime_us, 1500);
    ck_assert_uint_eq (r[0].btime, 1700000000);
    ck_assert_uint_eq (r[0].hiwater_rss_kb, 1024);
    /* another family's message: nothing */
    ck_assert_int_eq (taskstats_parse (b, len, FAMILY + 1, r, 2, &e), 0);
    /* two messages, room for one */
    memcpy (b + NLMSG_ALIGN (len), b, len);
    errno = 0;
    ck_assert_int_eq (taskstats_parse (b,
                                       NLMSG_ALIGN (len) + len,
                                       FAMILY,
                                       r,
                                       1,
                                       &e),
                      -1);
    ck_assert_int_eq (errno, E2BIG);
    ck_assert_int_eq (taskstats_parse (b,
                                       NLMSG_ALIGN (len) + len,
                                       FAMILY,
                                       r,
                                       2,
                                       &e),
                      2);
}
END_TEST

/* An older kernel's shorter struct: read without ac_tgid; too short: no. */
START_TEST (test_old_struct)
{
    unsigned char b[2 * MSG_MAX]; /* two messages */
    size_t len;
    struct ts_record r[1];
    pin_error_t e = {""};

    len = build (b, 9, offsetof (struct taskstats, ac_utimescaled), false);
    ck_assert_int_eq (taskstats_parse (b, len, FAMILY, r, 1, &e), 1);
    ck_assert_int_eq (r[0].tgid, 0);
    ck_assert_uint_eq (r[0].nivcsw, 2);
    len = build (b, 9, offsetof (struct taskstats, ac_utimescaled) - 8, false);
    errno = 0;
    ck_assert_int_eq (taskstats_parse (b, len, FAMILY, r, 1, &e), -1);
    ck_assert_int_eq (errno, EINVAL);
    ck_assert_msg (!strncmp (e.text, "taskstats: ", 11), "'%s'", e.text);
}
END_TEST

START_TEST (test_truncated_and_noise)
{
    unsigned char b[2 * MSG_MAX]; /* two messages */
    size_t len = build (b, 1234, sizeof (struct taskstats), true);
    struct ts_record r[4];

    for (size_t n = 1; n < len; n++) {
        unsigned char *cut = malloc (n);
        int rc;
        memcpy (cut, b, n);
        rc = taskstats_parse (cut, n, FAMILY, r, 4, NULL);
        ck_assert_msg (rc == -1, "%zu of %zu bytes: %d", n, len, rc);
        free (cut);
    }
    srand (7);
    for (int round = 0; round < 20000; round++) {
        size_t n = (size_t)(rand () % (int)(len + 1));
        unsigned char *x = malloc (n ? n : 1);
        int rc;
        memcpy (x, b, n);
        for (int k = 0; k < 4 && n; k++)
            x[rand () % (int)n] = (unsigned char)rand ();
        rc = taskstats_parse (x, n, FAMILY, r, 4, NULL);
        ck_assert (rc >= -1 && rc <= 4);
        free (x);
    }
}
END_TEST

START_TEST (test_error_message)
{
    unsigned char b[64] = {0};
    struct nlmsghdr nh = {.nlmsg_len = NLMSG_HDRLEN + sizeof (struct nlmsgerr),
                          .nlmsg_type = NLMSG_ERROR};
    struct nlmsgerr err = {.error = -EINVAL};
    struct ts_record r[1];

    memcpy (b, &nh, sizeof (nh));
    memcpy (b + NLMSG_HDRLEN, &err, sizeof (err));
    errno = 0;
    ck_assert_int_eq (taskstats_parse (b, nh.nlmsg_len, FAMILY, r, 1, NULL),
                      -1);
    ck_assert_int_eq (errno, EPROTO);
    err.error = 0; /* an acknowledgement */
    memcpy (b + NLMSG_HDRLEN, &err, sizeof (err));
    ck_assert_int_eq (taskstats_parse (b, nh.nlmsg_len, FAMILY, r, 1, NULL),
                      0);
}
END_TEST

/* A newer kernel's longer struct (688 bytes on 7.x), an older version's
 * fields that are not there (bytes past them are not read as them). */
START_TEST (test_sizes_versions)
{
    unsigned char b[2 * MSG_MAX]; /* two messages */
    struct ts_record r[2];
    pin_error_t e = {""};
    size_t len;

    /* longer than these headers' struct (688 bytes on 7.2 against 416 on
     * 6.1: a kernel newer than the headers), a newer version, everything
     * we do not know set to 0xee */
    len = build_v (b,
                   sizeof (b),
                   4321,
                   sizeof (struct taskstats) + 272,
                   true,
                   TASKSTATS_VERSION + 3,
                   0xee);
    ck_assert_int_eq (taskstats_parse (b, len, FAMILY, r, 2, &e), 1);
    ck_assert_int_eq (r[0].pid, 4321);
    ck_assert_int_eq (r[0].tgid, 77);
    ck_assert_uint_eq (r[0].version, TASKSTATS_VERSION + 3);
    ck_assert_uint_eq (r[0].nivcsw, 2);
    ck_assert_str_eq (r[0].comm, "short-lived");
    /* the largest an attribute can say (nla_len is 16 bits) is refused
     * by the length checks, not read past */
    len = build_v (b, sizeof (b), 4321, STATS_MAX, false, 99, 0xee);
    ck_assert_int_eq (taskstats_parse (b, len, FAMILY, r, 2, &e), 1);
    ck_assert_int_eq (taskstats_parse (b, len - 8, FAMILY, r, 2, &e), -1);
    /* version 11: ac_btime64 yes, ac_tgid not yet (its bytes are junk) */
    len = build_v (b, sizeof (b), 9, sizeof (struct taskstats), false, 11, 0);
    {
        struct taskstats ts;
        size_t at = NLMSG_HDRLEN + GENL_HDRLEN + NLA_HDRLEN
                    + NLA_ALIGN (NLA_HDRLEN + 4) + NLA_HDRLEN;
        memcpy (&ts, b + at, sizeof (ts));
        ts.ac_tgid = 555;
        ts.ac_btime64 = 1700000005;
        memcpy (b + at, &ts, sizeof (ts));
    }
    ck_assert_int_eq (taskstats_parse (b, len, FAMILY, r, 2, &e), 1);
    ck_assert_int_eq (r[0].tgid, 0);
    ck_assert_uint_eq (r[0].btime, 1700000005);
    /* version 9: no ac_btime64 either */
    len = build_v (b, sizeof (b), 9, sizeof (struct taskstats), false, 9, 0);
    ck_assert_int_eq (taskstats_parse (b, len, FAMILY, r, 2, &e), 1);
    ck_assert_uint_eq (r[0].btime, 1700000000);
    /* version 0 is not a record */
    len = build_v (b, sizeof (b), 9, sizeof (struct taskstats), false, 0, 0);
    errno = 0;
    ck_assert_int_eq (taskstats_parse (b, len, FAMILY, r, 2, &e), -1);
    ck_assert_int_eq (errno, EINVAL);
}
END_TEST

/* ---- pairing ------------------------------------------------------------ */

#define MS 1000000ull

struct got {
    int n;
    struct ts_exit x[16];
    struct ts_record r[16];
    bool has[16];
};

static int collect (const struct ts_exit *x,
                    const struct ts_record *r,
                    void *arg)
{
    struct got *g = arg;

    ck_assert_int_lt (g->n, 16);
    g->x[g->n] = *x;
    g->has[g->n] = r != NULL;
    if (r)
        g->r[g->n] = *r;
    g->n++;
    return 0;
}

static struct ts_record rec (int32_t pid,
                             int32_t tgid,
                             const char *comm,
                             uint64_t etime_us)
{
    struct ts_record r = {.pid = pid,
                          .tgid = tgid,
                          .version = 13,
                          .btime = 1700000000,
                          .etime_us = etime_us};
    snprintf (r.comm, sizeof (r.comm), "%s", comm);
    return r;
}

static struct ts_exit ex (int32_t pid,
                          int32_t tgid,
                          bool step,
                          uint64_t fork_ns,
                          uint64_t exit_ns)
{
    return (struct ts_exit){.pid = pid,
                            .tgid = tgid,
                            .step = step,
                            .fork_ns = fork_ns,
                            .exit_ns = exit_ns};
}

static void addrec (struct tsmatch *m,
                    int32_t pid,
                    int32_t tgid,
                    const char *comm,
                    uint64_t etime_us,
                    uint64_t read_ns)
{
    struct ts_record r = rec (pid, tgid, comm, etime_us);
    ck_assert_int_eq (tsmatch_record (m, &r, read_ns), 0);
}

static void addexit (struct tsmatch *m,
                     int32_t pid,
                     int32_t tgid,
                     bool step,
                     uint64_t fork_ns,
                     uint64_t exit_ns)
{
    struct ts_exit x = ex (pid, tgid, step, fork_ns, exit_ns);
    ck_assert_int_eq (tsmatch_exit (m, &x), 0);
}

/* Settle as the recorder does: taskstats read empty, then the proc
 * connector. */
static void settle (struct tsmatch *m, struct got *g)
{
    tsmatch_drained (m);
    ck_assert_int_eq (tsmatch_resolve (m, false, collect, g), 0);
}

/* The defect: an outsider's record of a pid, then the step's task with
 * that pid (the same second), whose exit is read before its record. */
START_TEST (test_reused_pid_same_second)
{
    struct tsmatch *m = tsmatch_create ();
    struct ts_record r;
    struct tsmatch_stats st;
    struct got g = {0};

    r = rec (100, 100, "debootstrap", 300);
    ck_assert_int_eq (tsmatch_record (m, &r, 10 * MS), 0);
    ck_assert_int_eq (tsmatch_exit (m,
                                    &(struct ts_exit){.pid = 100,
                                                      .tgid = 100,
                                                      .exit_ns = 9 * MS}),
                      0);
    tsmatch_fork (m, 100); /* the step's task */
    addexit (m, 100, 100, true, 11 * MS, 12 * MS);
    r = rec (100, 100, "mine", 900);
    ck_assert_int_eq (tsmatch_record (m, &r, 13 * MS), 0);
    ck_assert_uint_eq (tsmatch_awaiting (m), 1);
    settle (m, &g);
    ck_assert_int_eq (g.n, 1);
    ck_assert (g.has[0]);
    ck_assert_str_eq (g.r[0].comm, "mine");
    ck_assert_uint_eq (g.x[0].fork_ns, 11 * MS);
    tsmatch_stats (m, &st);
    ck_assert_uint_eq (st.claimed, 1);
    ck_assert_uint_eq (st.foreign, 1);
    ck_assert_uint_eq (st.missing, 0);
    ck_assert_uint_eq (tsmatch_awaiting (m), 0);
    tsmatch_destroy (m);
}
END_TEST

/* The outsider's exit was not seen (proc connector loss): its record,
 * read before the step's task existed, is not the task's. */
START_TEST (test_stale_record)
{
    struct tsmatch *m = tsmatch_create ();
    struct ts_record r;
    struct tsmatch_stats st;
    struct got g = {0};

    r = rec (200, 200, "slurmctld", 50);
    tsmatch_record (m, &r, 5 * MS);
    tsmatch_fork (m, 200);
    addexit (m, 200, 200, true, 6 * MS, 7 * MS);
    settle (m, &g);
    ck_assert_int_eq (g.n, 1);
    ck_assert (!g.has[0]); /* none rather than a wrong one */
    /* the same with the task's own record after it */
    addrec (m, 200, 200, "slurmctld", 50, 8 * MS);
    tsmatch_fork (m, 200);
    addexit (m, 200, 200, true, 9 * MS, 10 * MS);
    r = rec (200, 200, "mine", 700);
    tsmatch_record (m, &r, 11 * MS);
    settle (m, &g);
    ck_assert_int_eq (g.n, 2);
    ck_assert (g.has[1]);
    ck_assert_str_eq (g.r[1].comm, "mine");
    /* read after the fork but begun long before it (its exit not seen,
     * read late): its elapsed time says it is older than the task */
    r = rec (201, 201, "old", 5000000);
    tsmatch_record (m, &r, 21 * MS);
    addexit (m, 201, 201, true, 20 * MS, 22 * MS);
    settle (m, &g);
    ck_assert_int_eq (g.n, 3);
    ck_assert (!g.has[2]);
    tsmatch_stats (m, &st);
    ck_assert_uint_eq (st.stale, 3);
    ck_assert_uint_eq (st.claimed, 1);
    ck_assert_uint_eq (st.missing, 2);
    tsmatch_destroy (m);
}
END_TEST

/* A short task: its record read before its fork and exit events. */
START_TEST (test_exit_before_fork)
{
    struct tsmatch *m = tsmatch_create ();
    struct got g = {0};

    addrec (m, 300, 300, "true", 200, 31 * MS);
    tsmatch_drained (m);
    tsmatch_fork (m, 300);
    addexit (m, 300, 300, true, 30 * MS, 30 * MS + 300000);
    /* read after the last drain: not settled yet */
    ck_assert_int_eq (tsmatch_resolve (m, false, collect, &g), 0);
    ck_assert_int_eq (g.n, 0);
    ck_assert_uint_eq (tsmatch_awaiting (m), 1);
    settle (m, &g);
    ck_assert_int_eq (g.n, 1);
    ck_assert (g.has[0]);
    ck_assert_str_eq (g.r[0].comm, "true");
    tsmatch_destroy (m);
}
END_TEST

/* Several holders of one pid in one batch, outsiders and the step's
 * alternating, threads among them: each exit gets its own record. */
START_TEST (test_order_threads)
{
    struct tsmatch *m = tsmatch_create ();
    struct got g = {0};
    struct tsmatch_stats st;

    /* pid 400: outsider, step process, outsider thread, step thread */
    addrec (m, 400, 400, "a", 10, 50 * MS);
    addrec (m, 400, 400, "b", 10, 50 * MS);
    addrec (m, 400, 399, "c", 10, 50 * MS);
    addrec (m, 400, 398, "d", 10, 50 * MS);
    addexit (m, 400, 400, false, 0, 41 * MS);
    tsmatch_fork (m, 400);
    addexit (m, 400, 400, true, 42 * MS, 43 * MS);
    tsmatch_fork (m, 400);
    addexit (m, 400, 399, false, 0, 45 * MS);
    tsmatch_fork (m, 400);
    addexit (m, 400, 398, true, 46 * MS, 47 * MS);
    settle (m, &g);
    ck_assert_int_eq (g.n, 2);
    ck_assert_str_eq (g.r[0].comm, "b");
    ck_assert_str_eq (g.r[1].comm, "d");
    /* a record of another thread group is not claimed */
    addrec (m, 401, 7, "other", 10, 60 * MS);
    addexit (m, 401, 401, true, 55 * MS, 58 * MS);
    settle (m, &g);
    ck_assert_int_eq (g.n, 3);
    ck_assert (!g.has[2]);
    tsmatch_expire (m, 61 * MS, 0);
    tsmatch_stats (m, &st);
    ck_assert_uint_eq (st.claimed, 2);
    ck_assert_uint_eq (st.foreign, 2);
    ck_assert_uint_eq (st.missing, 1);
    ck_assert_uint_eq (st.unclaimed, 1);
    tsmatch_destroy (m);
}
END_TEST

/* After a loss, a step task whose pid was taken again before its exit
 * was settled gets no record (the one in hand may be the next one's). */
START_TEST (test_loss_reuse)
{
    struct tsmatch *m = tsmatch_create ();
    struct got g = {0};
    struct tsmatch_stats st;

    tsmatch_lost (m, 60 * MS); /* before: not its record */
    addexit (m, 499, 499, true, 65 * MS, 66 * MS);
    tsmatch_fork (m, 499);
    addrec (m, 499, 499, "mine", 10, 67 * MS);
    settle (m, &g);
    addexit (m, 500, 500, true, 70 * MS, 71 * MS);
    tsmatch_lost (m, 72 * MS); /* its record was dropped */
    tsmatch_fork (m, 500);     /* an outsider takes 500 */
    addrec (m, 500, 500, "outsider", 10, 73 * MS);
    settle (m, &g);
    ck_assert_int_eq (g.n, 2);
    ck_assert (g.has[0]);
    ck_assert_str_eq (g.r[0].comm, "mine");
    ck_assert (!g.has[1]);
    /* without the reuse, the record in hand is the task's */
    addexit (m, 501, 501, true, 80 * MS, 81 * MS);
    addrec (m, 501, 501, "mine", 10, 82 * MS);
    settle (m, &g);
    ck_assert_int_eq (g.n, 3);
    ck_assert (g.has[2]);
    tsmatch_stats (m, &st);
    ck_assert_uint_eq (st.ambiguous, 1);
    tsmatch_destroy (m);
}
END_TEST

/* A root: it began before it was added (forked before the recorder knew
 * it), so its record's elapsed time is not checked; a record read before
 * it was added is not its. */
START_TEST (test_root)
{
    struct tsmatch *m = tsmatch_create ();
    struct got g = {0};
    struct ts_exit x = ex (600, 600, true, 100 * MS, 200 * MS);

    x.root = true;
    addrec (m, 600, 600, "before", 10, 99 * MS);
    tsmatch_exit (m, &x);
    addrec (m, 600, 600, "root", 3600000000ull, 201 * MS);
    settle (m, &g);
    ck_assert_int_eq (g.n, 1);
    ck_assert (g.has[0]);
    ck_assert_str_eq (g.r[0].comm, "root");
    tsmatch_destroy (m);
}
END_TEST

START_TEST (test_many)
{
    struct tsmatch *m = tsmatch_create ();
    struct tsmatch_stats st;

    for (int round = 0; round < 3; round++) {
        for (int32_t p = 1; p < 5000; p++) {
            struct ts_record r = rec (p, p, "x", 1);
            ck_assert_int_eq (tsmatch_record (m, &r, 1000 * MS), 0);
        }
        for (int32_t p = 1; p < 5000; p++)
            addexit (m, p, p, p % 2, 999 * MS, 999 * MS + 5000);
        tsmatch_drained (m);
        ck_assert_int_eq (tsmatch_resolve (m, false, NULL, NULL), 0);
    }
    addexit (m, 7, 7, true, 1, 2);
    ck_assert_int_eq (tsmatch_resolve (m, true, NULL, NULL), 0);
    tsmatch_expire (m, 2000 * MS, 0);
    tsmatch_stats (m, &st);
    ck_assert_uint_eq (st.claimed, 3 * 2500);
    ck_assert_uint_eq (st.foreign, 3 * 2499);
    ck_assert_uint_eq (st.missing, 1);
    ck_assert_uint_eq (st.unclaimed, 0);
    ck_assert_uint_eq (tsmatch_awaiting (m), 0);
    tsmatch_destroy (m);
    tsmatch_destroy (NULL);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("taskstats");
    TCase *tc = tcase_create ("taskstats");

    tcase_add_test (tc, test_record);
    tcase_add_test (tc, test_old_struct);
    tcase_add_test (tc, test_truncated_and_noise);
    tcase_add_test (tc, test_error_message);
    tcase_add_test (tc, test_sizes_versions);
    tcase_add_test (tc, test_reused_pid_same_second);
    tcase_add_test (tc, test_stale_record);
    tcase_add_test (tc, test_exit_before_fork);
    tcase_add_test (tc, test_order_threads);
    tcase_add_test (tc, test_loss_reuse);
    tcase_add_test (tc, test_root);
    tcase_add_test (tc, test_many);
    suite_add_tcase (s, tc);
    return tap_run (s, NULL, 0);
}
