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
#include <stdlib.h>
#include <string.h>

#include "libprof/taskstats.h"
#include "libtest/tap.h"

#define FAMILY 27

static size_t put_attr (unsigned char *b, size_t off, uint16_t type,
                        const void *data, size_t len)
{
    struct nlattr a = { .nla_len = (uint16_t)(NLA_HDRLEN + len),
                        .nla_type = type };
    memcpy (b + off, &a, sizeof (a));
    if (len)
        memcpy (b + off + NLA_HDRLEN, data, len);
    return off + NLA_ALIGN (NLA_HDRLEN + len);
}

/* A TASKSTATS_CMD_NEW message with a per-pid record (stats of `slen`
 * bytes) and, if tgid_too, a per-tgid one; returns its length. */
static size_t build (unsigned char *b, uint32_t pid, size_t slen,
                     bool tgid_too)
{
    struct nlmsghdr nh = { .nlmsg_type = FAMILY };
    struct genlmsghdr g = { .cmd = TASKSTATS_CMD_NEW, .version = 1 };
    struct taskstats ts;
    unsigned char nest[1024];
    size_t off = NLMSG_HDRLEN + GENL_HDRLEN, n;

    memset (&ts, 0, sizeof (ts));
    ts.version = TASKSTATS_VERSION;
    ts.ac_pid = pid;
    ts.ac_ppid = 1;
    ts.ac_tgid = 77;
    strcpy (ts.ac_comm, "short-lived");
    ts.ac_btime = 1700000000;
    ts.ac_etime = 1500;
    ts.ac_utime = 300;
    ts.ac_stime = 700;
    ts.nvcsw = 5;
    ts.nivcsw = 2;
    ts.hiwater_rss = 1024;
    n = put_attr (nest, 0, TASKSTATS_TYPE_PID, &pid, sizeof (pid));
    n = put_attr (nest, n, TASKSTATS_TYPE_STATS, &ts, slen);
    off = put_attr (b, off, TASKSTATS_TYPE_AGGR_PID, nest, n);
    if (tgid_too) {
        uint32_t tgid = 77;
        n = put_attr (nest, 0, TASKSTATS_TYPE_TGID, &tgid, sizeof (tgid));
        n = put_attr (nest, n, TASKSTATS_TYPE_STATS, &ts, slen);
        off = put_attr (b, off, TASKSTATS_TYPE_AGGR_TGID, nest, n);
    }
    nh.nlmsg_len = (uint32_t)off;
    memcpy (b, &nh, sizeof (nh));
    memcpy (b + NLMSG_HDRLEN, &g, sizeof (g));
    return off;
}

START_TEST (test_record)
{
    unsigned char b[2048];
    size_t len = build (b, 1234, sizeof (struct taskstats), true);
    struct ts_record r[2];
    pin_error_t e = { "" };

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
    ck_assert_int_eq (taskstats_parse (b, NLMSG_ALIGN (len) + len, FAMILY,
                                       r, 1, &e), -1);
    ck_assert_int_eq (errno, E2BIG);
    ck_assert_int_eq (taskstats_parse (b, NLMSG_ALIGN (len) + len, FAMILY,
                                       r, 2, &e), 2);
}
END_TEST

/* An older kernel's shorter struct: read without ac_tgid; too short: no. */
START_TEST (test_old_struct)
{
    unsigned char b[2048];
    size_t len;
    struct ts_record r[1];
    pin_error_t e = { "" };

    len = build (b, 9, offsetof (struct taskstats, ac_utimescaled), false);
    ck_assert_int_eq (taskstats_parse (b, len, FAMILY, r, 1, &e), 1);
    ck_assert_int_eq (r[0].tgid, 0);
    ck_assert_uint_eq (r[0].nivcsw, 2);
    len = build (b, 9, offsetof (struct taskstats, ac_utimescaled) - 8,
                 false);
    errno = 0;
    ck_assert_int_eq (taskstats_parse (b, len, FAMILY, r, 1, &e), -1);
    ck_assert_int_eq (errno, EINVAL);
    ck_assert_msg (!strncmp (e.text, "taskstats: ", 11), "'%s'", e.text);
}
END_TEST

START_TEST (test_truncated_and_noise)
{
    unsigned char b[2048];
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
    unsigned char b[64] = { 0 };
    struct nlmsghdr nh = { .nlmsg_len = NLMSG_HDRLEN + sizeof (struct nlmsgerr),
                           .nlmsg_type = NLMSG_ERROR };
    struct nlmsgerr err = { .error = -EINVAL };
    struct ts_record r[1];

    memcpy (b, &nh, sizeof (nh));
    memcpy (b + NLMSG_HDRLEN, &err, sizeof (err));
    errno = 0;
    ck_assert_int_eq (taskstats_parse (b, nh.nlmsg_len, FAMILY, r, 1, NULL),
                      -1);
    ck_assert_int_eq (errno, EPROTO);
    err.error = 0;      /* an acknowledgement */
    memcpy (b + NLMSG_HDRLEN, &err, sizeof (err));
    ck_assert_int_eq (taskstats_parse (b, nh.nlmsg_len, FAMILY, r, 1, NULL),
                      0);
}
END_TEST

START_TEST (test_match)
{
    struct tsmatch *m = tsmatch_create ();
    struct ts_record r = { .pid = 10, .utime_us = 1 }, out;
    uint64_t unclaimed = 0, missing = 0;

    /* record first, then the exit */
    ck_assert_int_eq (tsmatch_record (m, &r, 100, &out), 0);
    ck_assert_int_eq (tsmatch_exit (m, 10, 101, &out), 1);
    ck_assert_int_eq (out.pid, 10);
    /* exit first, then the record */
    ck_assert_int_eq (tsmatch_exit (m, 11, 102, &out), 0);
    r.pid = 11;
    ck_assert_int_eq (tsmatch_record (m, &r, 103, &out), 1);
    ck_assert_int_eq (out.pid, 11);
    /* an outsider's record and an exit whose record never comes */
    r.pid = 12;
    ck_assert_int_eq (tsmatch_record (m, &r, 104, &out), 0);
    ck_assert_int_eq (tsmatch_exit (m, 13, 105, &out), 0);
    ck_assert_uint_eq (tsmatch_awaiting (m), 1);
    tsmatch_expire (m, 106, 1000, &unclaimed, &missing);
    ck_assert_uint_eq (unclaimed + missing, 0);     /* not old yet */
    tsmatch_expire (m, 2000, 1000, &unclaimed, &missing);
    ck_assert_uint_eq (unclaimed, 1);
    ck_assert_uint_eq (missing, 1);
    ck_assert_uint_eq (tsmatch_awaiting (m), 0);
    /* many: growth and deletion */
    for (int32_t p = 1; p < 5000; p++) {
        r.pid = p;
        ck_assert_int_eq (tsmatch_record (m, &r, 3000, &out), 0);
    }
    for (int32_t p = 1; p < 5000; p += 2)
        ck_assert_int_eq (tsmatch_exit (m, p, 3001, &out), 1);
    unclaimed = missing = 0;
    tsmatch_expire (m, 3002, 0, &unclaimed, &missing);
    ck_assert_uint_eq (unclaimed, 2499);
    ck_assert_uint_eq (missing, 0);
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
    tcase_add_test (tc, test_match);
    suite_add_tcase (s, tc);
    return tap_run (s, NULL, 0);
}
