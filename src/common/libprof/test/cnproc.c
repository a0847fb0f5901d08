/* test/cnproc.c - proc connector parsing, loss counting, step tracking
 *
 * Datagrams are built here byte by byte the way the kernel lays them out
 * (netlink header, cn_msg, proc_event), then cut, bent and filled with
 * noise: the parser must take what is well-formed and refuse the rest
 * without reading outside the buffer (run under ASan by
 * --enable-sanitizers).
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <errno.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <stdlib.h>
#include <string.h>

#include "libprof/cnproc.h"
#include "libprof/tracker.h"
#include "libtest/tap.h"

/* Append one proc event message to buf at *len; returns its size. */
static size_t put_msg (unsigned char *buf,
                       size_t *len,
                       uint32_t what,
                       uint32_t cpu,
                       uint32_t seq,
                       uint64_t ts,
                       const int32_t ids[4],
                       uint32_t code)
{
    struct nlmsghdr nh = {0};
    struct cn_msg cn = {0};
    struct proc_event ev;
    size_t evlen = sizeof (ev), total;

    memset (&ev, 0, sizeof (ev));
    ev.what = what;
    ev.cpu = cpu;
    ev.timestamp_ns = ts;
    switch (what) {
        case PROC_EVENT_FORK:
            ev.event_data.fork.parent_pid = ids[0];
            ev.event_data.fork.parent_tgid = ids[1];
            ev.event_data.fork.child_pid = ids[2];
            ev.event_data.fork.child_tgid = ids[3];
            break;
        case PROC_EVENT_EXEC:
            ev.event_data.exec.process_pid = ids[0];
            ev.event_data.exec.process_tgid = ids[1];
            break;
        case PROC_EVENT_EXIT:
            ev.event_data.exit.process_pid = ids[0];
            ev.event_data.exit.process_tgid = ids[1];
            ev.event_data.exit.exit_code = code;
            ev.event_data.exit.exit_signal = 17;
            break;
        case PROC_EVENT_COMM:
            ev.event_data.comm.process_pid = ids[0];
            ev.event_data.comm.process_tgid = ids[1];
            memcpy (ev.event_data.comm.comm, "0123456789abcdef", 16);
            break;
    }
    cn.id.idx = CN_IDX_PROC;
    cn.id.val = CN_VAL_PROC;
    cn.seq = seq;
    cn.len = (uint16_t)evlen;
    total = NLMSG_HDRLEN + sizeof (cn) + evlen;
    nh.nlmsg_len = (uint32_t)total;
    nh.nlmsg_type = NLMSG_DONE;
    memcpy (buf + *len, &nh, sizeof (nh));
    memcpy (buf + *len + NLMSG_HDRLEN, &cn, sizeof (cn));
    memcpy (buf + *len + NLMSG_HDRLEN + sizeof (cn), &ev, evlen);
    *len += NLMSG_ALIGN (total);
    return total;
}

static const struct {
    uint32_t what;
    enum cnproc_type type;
    int32_t ids[4];
    int32_t pid, tgid, ppid, ptgid;
} kinds[] = {
    {PROC_EVENT_FORK, CNPROC_FORK, {10, 10, 11, 11}, 11, 11, 10, 10},
    {PROC_EVENT_FORK, CNPROC_FORK, {1, 1, 12, 11}, 12, 11, 1, 1},
    {PROC_EVENT_EXEC, CNPROC_EXEC, {11, 11}, 11, 11, 0, 0},
    {PROC_EVENT_EXIT, CNPROC_EXIT, {12, 11}, 12, 11, 0, 0},
    {PROC_EVENT_COMM, CNPROC_COMM, {11, 11}, 11, 11, 0, 0},
    {PROC_EVENT_UID, CNPROC_OTHER, {0}, 0, 0, 0, 0},
    {PROC_EVENT_NONE, CNPROC_NONE, {0}, 0, 0, 0, 0},
};

START_TEST (test_kinds)
{
    unsigned char buf[512];
    size_t len = 0;
    struct cnproc_event ev[2];
    pin_error_t e = {""};

    put_msg (buf,
             &len,
             kinds[_i].what,
             1,
             42,
             123456789ull,
             kinds[_i].ids,
             256);
    ck_assert_int_eq (cnproc_parse (buf, len, ev, 2, &e), 1);
    ck_assert_int_eq (ev[0].type, kinds[_i].type);
    ck_assert_uint_eq (ev[0].what, kinds[_i].what);
    ck_assert_uint_eq (ev[0].cpu, 1);
    ck_assert_uint_eq (ev[0].seq, 42);
    ck_assert_uint_eq (ev[0].ts_ns, 123456789ull);
    ck_assert_int_eq (ev[0].pid, kinds[_i].pid);
    ck_assert_int_eq (ev[0].tgid, kinds[_i].tgid);
    ck_assert_int_eq (ev[0].ppid, kinds[_i].ppid);
    ck_assert_int_eq (ev[0].ptgid, kinds[_i].ptgid);
    if (kinds[_i].type == CNPROC_EXIT) {
        ck_assert_uint_eq (ev[0].exit_code, 256);
        ck_assert_uint_eq (ev[0].exit_signal, 17);
    }
    if (kinds[_i].type == CNPROC_COMM)
        ck_assert_str_eq (ev[0].comm, "0123456789abcdef");
}
END_TEST

START_TEST (test_several_and_limits)
{
    unsigned char buf[1024];
    size_t len = 0;
    struct cnproc_event ev[3];
    pin_error_t e = {""};
    int32_t ids[4] = {5, 5, 6, 6};

    put_msg (buf, &len, PROC_EVENT_FORK, 0, 1, 1, ids, 0);
    put_msg (buf, &len, PROC_EVENT_EXEC, 1, 2, 2, ids, 0);
    put_msg (buf, &len, PROC_EVENT_EXIT, 0, 3, 3, ids, 0);
    ck_assert_int_eq (cnproc_parse (buf, len, ev, 3, &e), 3);
    ck_assert_int_eq (ev[2].type, CNPROC_EXIT);
    ck_assert_uint_eq (ev[2].seq, 3);
    errno = 0;
    ck_assert_int_eq (cnproc_parse (buf, len, ev, 2, &e), -1);
    ck_assert_int_eq (errno, E2BIG);
    ck_assert_int_eq (cnproc_parse (buf, 0, ev, 3, &e), 0);
    ck_assert_int_eq (cnproc_parse (NULL, 0, ev, 3, &e), 0);
}
END_TEST

/* Every cut of a valid datagram short of the whole is refused. */
START_TEST (test_truncated)
{
    unsigned char buf[512];
    size_t len = 0, full;
    struct cnproc_event ev[2];
    int32_t ids[4] = {5, 5, 6, 6};

    full = put_msg (buf, &len, PROC_EVENT_FORK, 0, 1, 1, ids, 0);
    for (size_t n = 1; n < full; n++) {
        unsigned char *cut = malloc (n); /* exact size: ASan sees overreads */
        pin_error_t e = {""};
        memcpy (cut, buf, n);
        errno = 0;
        ck_assert_msg (cnproc_parse (cut, n, ev, 2, &e) == -1,
                       "%zu bytes accepted",
                       n);
        ck_assert_int_eq (errno, EINVAL);
        ck_assert_msg (strncmp (e.text, "proc connector: ", 16) == 0
                           && !strchr (e.text, '\n'),
                       "'%s'",
                       e.text);
        free (cut);
    }
}
END_TEST

enum bend {
    BIG_NLLEN,
    SMALL_NLLEN,
    OTHER_IDX,
    BIG_CNLEN,
    SHORT_EVENT,
    ERROR_MSG,
    NOOP_MSG
};

static const struct {
    enum bend how;
    int rc, err;
} bends[] = {
    {BIG_NLLEN, -1, EINVAL},
    {SMALL_NLLEN, -1, EINVAL},
    {OTHER_IDX, -1, EINVAL},
    {BIG_CNLEN, -1, EINVAL},
    {SHORT_EVENT, -1, EINVAL},
    {ERROR_MSG, -1, EPROTO},
    {NOOP_MSG, 0, 0},
};

START_TEST (test_bent)
{
    unsigned char buf[512];
    size_t len = 0;
    struct cnproc_event ev[2];
    pin_error_t e = {""};
    int32_t ids[4] = {5, 5, 6, 6};
    struct nlmsghdr *nh = (struct nlmsghdr *)buf;
    struct cn_msg *cn = (struct cn_msg *)(buf + NLMSG_HDRLEN);

    memset (buf, 0, sizeof (buf));
    put_msg (buf, &len, PROC_EVENT_FORK, 0, 1, 1, ids, 0);
    switch (bends[_i].how) {
        case BIG_NLLEN:
            nh->nlmsg_len = (uint32_t)len + 8;
            break;
        case SMALL_NLLEN:
            nh->nlmsg_len = 4;
            break;
        case OTHER_IDX:
            cn->id.idx = CN_IDX_PROC + 1;
            break;
        case BIG_CNLEN:
            cn->len = 0xffff;
            break;
        case SHORT_EVENT:
            cn->len = 12; /* what + cpu + half a time stamp */
            break;
        case ERROR_MSG:
            nh->nlmsg_type = NLMSG_ERROR;
            break;
        case NOOP_MSG:
            nh->nlmsg_type = NLMSG_NOOP;
            break;
    }
    errno = 0;
    ck_assert_int_eq (cnproc_parse (buf, len, ev, 2, &e), bends[_i].rc);
    if (bends[_i].rc < 0) {
        ck_assert_int_eq (errno, bends[_i].err);
        ck_assert_msg (*e.text && !strchr (e.text, '\n'), "'%s'", e.text);
    }
}
END_TEST

/* Noise: random bytes, and valid datagrams with random bytes flipped. */
START_TEST (test_noise)
{
    unsigned char good[512];
    size_t glen = 0;
    int32_t ids[4] = {5, 5, 6, 6};
    struct cnproc_event ev[8];

    srand (12345);
    put_msg (good, &glen, PROC_EVENT_FORK, 0, 1, 1, ids, 0);
    put_msg (good, &glen, PROC_EVENT_EXIT, 0, 2, 2, ids, 0);
    for (int round = 0; round < 20000; round++) {
        size_t n = (size_t)(rand () % (int)(glen + 1));
        unsigned char *b = malloc (n ? n : 1);
        int rc;
        if (round % 2) {
            for (size_t i = 0; i < n; i++)
                b[i] = (unsigned char)rand ();
        } else {
            memcpy (b, good, n);
            for (int k = 0; k < 3 && n; k++)
                b[rand () % (int)n] = (unsigned char)rand ();
        }
        rc = cnproc_parse (b, n, ev, 8, NULL);
        ck_assert (rc >= -1 && rc <= 8);
        free (b);
    }
}
END_TEST

/* ---- loss counting ---- */

static const struct {
    const char *name;
    uint32_t cpu[8], seq[8];
    int n;
    uint64_t lost, reordered;
} seqs[] = {
    {"in order", {0, 0, 0}, {5, 6, 7}, 3, 0, 0},
    {"gap of 2", {0, 0}, {5, 8}, 2, 2, 0},
    {"two cpus", {0, 1, 0, 1}, {5, 100, 6, 103}, 4, 2, 0},
    {"reordered", {0, 0, 0}, {5, 7, 6}, 3, 1, 1},
    {"duplicate", {0, 0}, {5, 5}, 2, 0, 1},
    {"wraps", {3, 3}, {0xffffffff, 0}, 2, 0, 0},
    {"wrap gap", {3, 3}, {0xfffffffe, 1}, 2, 2, 0},
};

START_TEST (test_seq)
{
    struct cnproc_seq *s = cnproc_seq_create ();
    struct cnproc_seq_stats st;
    uint64_t sum = 0;

    ck_assert_ptr_nonnull (s);
    for (int i = 0; i < seqs[_i].n; i++) {
        struct cnproc_event e = {.type = CNPROC_FORK,
                                 .cpu = seqs[_i].cpu[i],
                                 .seq = seqs[_i].seq[i]};
        sum += cnproc_seq_note (s, &e);
    }
    cnproc_seq_stats (s, &st);
    ck_assert_msg (st.lost == seqs[_i].lost && sum == st.lost,
                   "%s: lost %ju (sum %ju), want %ju",
                   seqs[_i].name,
                   (uintmax_t)st.lost,
                   (uintmax_t)sum,
                   (uintmax_t)seqs[_i].lost);
    ck_assert_uint_eq (st.reordered, seqs[_i].reordered);
    ck_assert_uint_eq (st.events, (uint64_t)seqs[_i].n);
    cnproc_seq_destroy (s);
}
END_TEST

START_TEST (test_seq_odd)
{
    struct cnproc_seq *s = cnproc_seq_create ();
    struct cnproc_seq_stats st;
    struct cnproc_event none = {.type = CNPROC_NONE, .cpu = 0xffffffff};
    struct cnproc_event far = {.type = CNPROC_EXIT, .cpu = 1u << 20};
    struct cnproc_event big = {.type = CNPROC_EXIT, .cpu = 5000, .seq = 1};

    ck_assert_uint_eq (cnproc_seq_note (s, &none), 0);
    ck_assert_uint_eq (cnproc_seq_note (s, &far), 0);
    ck_assert_uint_eq (cnproc_seq_note (s, &big), 0);
    big.seq = 4;
    ck_assert_uint_eq (cnproc_seq_note (s, &big), 2);
    cnproc_seq_stats (s, &st);
    ck_assert_uint_eq (st.events, 3);
    ck_assert_uint_eq (st.bad_cpu, 1);
    ck_assert_uint_eq (st.lost, 2);
    cnproc_seq_destroy (s);
    cnproc_seq_destroy (NULL);
}
END_TEST

/* ---- tracking the step ---- */

static struct cnproc_event fork_ev (int32_t ptgid, int32_t pid, int32_t tgid)
{
    return (struct cnproc_event){.type = CNPROC_FORK,
                                 .ppid = ptgid,
                                 .ptgid = ptgid,
                                 .pid = pid,
                                 .tgid = tgid,
                                 .ts_ns = 1000 + (uint64_t)pid};
}

START_TEST (test_tracker)
{
    struct tracker *t = tracker_create ();
    struct tracker_counts c;
    struct cnproc_event e;
    uint64_t start = 0;

    ck_assert_ptr_nonnull (t);
    ck_assert_int_eq (tracker_add_root (t, 100, "job", 5), 0);
    ck_assert_int_eq (tracker_add_root (t, 0, "x", 5), -1);
    /* a child of the root is in; its fork inherits the command */
    e = fork_ev (100, 101, 101);
    ck_assert_int_eq (tracker_feed (t, &e, NULL), 1);
    ck_assert_str_eq (e.comm, "job");
    /* another job's process and its child are out */
    e = fork_ev (1, 200, 200);
    ck_assert_int_eq (tracker_feed (t, &e, NULL), 0);
    e = fork_ev (200, 201, 201);
    ck_assert_int_eq (tracker_feed (t, &e, NULL), 0);
    /* a thread of 101 (the event names the process's parent) */
    e = fork_ev (100, 102, 101);
    ck_assert_int_eq (tracker_feed (t, &e, NULL), 1);
    /* a thread of an outside process is out */
    e = fork_ev (1, 202, 200);
    ck_assert_int_eq (tracker_feed (t, &e, NULL), 0);
    /* a process forked by the thread 102: parent tgid 101 */
    e = (struct cnproc_event){.type = CNPROC_FORK,
                              .ppid = 102,
                              .ptgid = 101,
                              .pid = 103,
                              .tgid = 103};
    ck_assert_int_eq (tracker_feed (t, &e, NULL), 1);
    tracker_counts (t, &c);
    ck_assert_uint_eq (c.processes, 3);
    ck_assert_uint_eq (c.threads, 1);
    /* exec and comm */
    ck_assert_int_eq (tracker_set_comm (t, 103, "worker"), 0);
    ck_assert_int_eq (tracker_set_comm (t, 999, "x"), -1);
    ck_assert_int_eq (errno, ENOENT);
    e = (struct cnproc_event){.type = CNPROC_COMM, .pid = 101, .tgid = 101};
    strcpy (e.comm, "renamed");
    ck_assert_int_eq (tracker_feed (t, &e, NULL), 1);
    e = (struct cnproc_event){.type = CNPROC_EXEC, .pid = 200, .tgid = 200};
    ck_assert_int_eq (tracker_feed (t, &e, NULL), 0);
    /* exits carry the command and the start; then the pid is free */
    e = (struct cnproc_event){.type = CNPROC_EXIT, .pid = 103, .tgid = 103};
    ck_assert_int_eq (tracker_feed (t, &e, &start), 1);
    ck_assert_str_eq (e.comm, "worker");
    e = (struct cnproc_event){.type = CNPROC_EXIT, .pid = 101, .tgid = 101};
    ck_assert_int_eq (tracker_feed (t, &e, &start), 1);
    ck_assert_str_eq (e.comm, "renamed");
    ck_assert_uint_eq (start, 1101);
    e = (struct cnproc_event){.type = CNPROC_EXIT, .pid = 200, .tgid = 200};
    ck_assert_int_eq (tracker_feed (t, &e, NULL), 0);
    /* a root added after the previous holder of its pid ended: that
     * holder's exit (and exec), read after the root was added, are not
     * the root's */
    ck_assert_int_eq (tracker_add_root (t, 300, "task", 5000), 0);
    e = (struct cnproc_event){.type = CNPROC_EXEC,
                              .pid = 300,
                              .tgid = 300,
                              .ts_ns = 3900};
    ck_assert_int_eq (tracker_feed (t, &e, NULL), 0);
    e = (struct cnproc_event){.type = CNPROC_EXIT,
                              .pid = 300,
                              .tgid = 300,
                              .ts_ns = 4000};
    ck_assert_int_eq (tracker_feed (t, &e, &start), 0);
    tracker_counts (t, &c);
    ck_assert_uint_eq (c.processes, 2);
    e = (struct cnproc_event){.type = CNPROC_EXIT,
                              .pid = 300,
                              .tgid = 300,
                              .ts_ns = 6000};
    ck_assert_int_eq (tracker_feed (t, &e, &start), 1);
    ck_assert_uint_eq (start, 5000);
    /* pid 103 reused by an outsider: out, not a stale "in" */
    e = fork_ev (1, 103, 103);
    ck_assert_int_eq (tracker_feed (t, &e, NULL), 0);
    tracker_counts (t, &c);
    ck_assert_uint_eq (c.processes, 1);
    ck_assert_uint_eq (c.threads, 1);
    tracker_destroy (t);
    tracker_destroy (NULL);

    /* pin.so adds a task as root after slurmstepd forked it: the fork
     * event, read later, is older than the root and keeps it */
    t = tracker_create ();
    ck_assert_int_eq (tracker_add_root (t, 150, "slurmstepd", 5000), 0);
    e = fork_ev (50, 150, 150); /* ts 1150 < 5000 */
    ck_assert_int_eq (tracker_feed (t, &e, NULL), 0);
    tracker_counts (t, &c);
    ck_assert_uint_eq (c.processes, 1);
    e = fork_ev (150, 151, 151); /* its child is in */
    e.ts_ns = 6000;
    ck_assert_int_eq (tracker_feed (t, &e, NULL), 1);
    /* a later fork of pid 150 by an outsider: the root's exit was lost */
    e = fork_ev (50, 150, 150);
    e.ts_ns = 7000;
    ck_assert_int_eq (tracker_feed (t, &e, NULL), 0);
    tracker_counts (t, &c);
    ck_assert_uint_eq (c.processes, 1);
    tracker_destroy (t);
}
END_TEST

/* ---- the command of an exec: read from /proc, proven by later events ---- */

struct execs {
    struct tracker_exec x[8];
    int n;
};

static void exec_cb (const struct tracker_exec *x, void *arg)
{
    struct execs *l = arg;

    ck_assert_int_lt (l->n, 8);
    l->x[l->n++] = *x;
}

static struct cnproc_event ev_at (enum cnproc_type type,
                                  int32_t pid,
                                  uint64_t ts)
{
    return (struct cnproc_event){.type = type,
                                 .pid = pid,
                                 .tgid = pid,
                                 .cpu = 1,
                                 .ts_ns = ts};
}

START_TEST (test_tracker_exec)
{
    struct tracker *t = tracker_create ();
    struct execs l = {.n = 0};
    struct cnproc_event e;
    uint64_t start = 0;

    ck_assert_ptr_nonnull (t);
    tracker_on_exec (t, exec_cb, &l);
    ck_assert_int_eq (tracker_add_root (t, 100, "sh", 5), 0);

    /* t6040 under load: the step's child 101 execs, lives 5 ms and
     * exits; the recorder reads the exec event late, after the pid was
     * freed and retaken by another program, and reads that program's
     * command.  Its exit, sent before the read, says the read was not
     * the child's: the exec and the exit keep the command before it. */
    e = fork_ev (100, 101, 101); /* ts 1101 */
    ck_assert_int_eq (tracker_feed (t, &e, NULL), 1);
    e = ev_at (CNPROC_EXEC, 101, 1200);
    ck_assert_int_eq (tracker_feed (t, &e, NULL), 1);
    ck_assert_int_eq (tracker_exec_read (t, &e, "pidstorm", 9000), 0);
    ck_assert_int_eq (l.n, 0); /* not said yet */
    e = ev_at (CNPROC_EXIT, 101, 6200);
    ck_assert_int_eq (tracker_feed (t, &e, &start), 1);
    ck_assert_int_eq (l.n, 1);
    ck_assert_int_eq (l.x[0].pid, 101);
    ck_assert_uint_eq (l.x[0].ts_ns, 1200);
    ck_assert_uint_eq (l.x[0].cpu, 1);
    ck_assert (!l.x[0].read);
    ck_assert_str_eq (l.x[0].comm, "sh");
    ck_assert_str_eq (e.comm, "sh");
    ck_assert_uint_eq (start, 1101);

    /* the same, read while the child still ran: its exit, sent after
     * the read, proves it */
    e = fork_ev (100, 102, 102);
    ck_assert_int_eq (tracker_feed (t, &e, NULL), 1);
    e = ev_at (CNPROC_EXEC, 102, 1300);
    ck_assert_int_eq (tracker_feed (t, &e, NULL), 1);
    ck_assert_int_eq (tracker_exec_read (t, &e, "stepchild", 1400), 0);
    e = ev_at (CNPROC_EXIT, 102, 1500);
    ck_assert_int_eq (tracker_feed (t, &e, NULL), 1);
    ck_assert_int_eq (l.n, 2);
    ck_assert (l.x[1].read);
    ck_assert_str_eq (l.x[1].comm, "stepchild");
    ck_assert_str_eq (e.comm, "stepchild");

    /* a fork by the task after the read proves it, before the child
     * takes its command; a rename before the read is in the read */
    e = fork_ev (100, 103, 103);
    ck_assert_int_eq (tracker_feed (t, &e, NULL), 1);
    e = ev_at (CNPROC_EXEC, 103, 2000);
    ck_assert_int_eq (tracker_feed (t, &e, NULL), 1);
    ck_assert_int_eq (tracker_exec_read (t, &e, "worker", 2500), 0);
    e = ev_at (CNPROC_COMM, 103, 2100);
    strcpy (e.comm, "early");
    ck_assert_int_eq (tracker_feed (t, &e, NULL), 1);
    ck_assert_int_eq (l.n, 2);
    e = fork_ev (103, 104, 104);
    e.ts_ns = 2600;
    ck_assert_int_eq (tracker_feed (t, &e, NULL), 1);
    ck_assert_int_eq (l.n, 3);
    ck_assert (l.x[2].read);
    ck_assert_str_eq (l.x[2].comm, "worker");
    ck_assert_str_eq (e.comm, "worker");

    /* the socket read empty after the read: proven; a second settle
     * says nothing more */
    e = ev_at (CNPROC_EXEC, 104, 2700);
    ck_assert_int_eq (tracker_feed (t, &e, NULL), 1);
    ck_assert_int_eq (tracker_exec_read (t, &e, "child", 2800), 0);
    tracker_exec_settle (t, true);
    ck_assert_int_eq (l.n, 4);
    ck_assert (l.x[3].read);
    ck_assert_str_eq (l.x[3].comm, "child");
    tracker_exec_settle (t, true);
    ck_assert_int_eq (l.n, 4);

    /* a new fork of the pid (the exit was lost): not proven */
    e = ev_at (CNPROC_EXEC, 104, 3000);
    ck_assert_int_eq (tracker_feed (t, &e, NULL), 1);
    ck_assert_int_eq (tracker_exec_read (t, &e, "other", 3100), 0);
    e = fork_ev (100, 104, 104);
    e.ts_ns = 3200;
    ck_assert_int_eq (tracker_feed (t, &e, NULL), 1);
    ck_assert_int_eq (l.n, 5);
    ck_assert (!l.x[4].read);
    ck_assert_str_eq (l.x[4].comm, "child");
    ck_assert_str_eq (e.comm, "sh");

    /* a second exec sent before the read: the first keeps the command
     * before it; at the end, without proof, the second too */
    e = ev_at (CNPROC_EXEC, 104, 3300);
    ck_assert_int_eq (tracker_feed (t, &e, NULL), 1);
    ck_assert_int_eq (tracker_exec_read (t, &e, "two", 3500), 0);
    e = ev_at (CNPROC_EXEC, 104, 3400);
    ck_assert_int_eq (tracker_feed (t, &e, NULL), 1);
    ck_assert_int_eq (l.n, 6);
    ck_assert (!l.x[5].read);
    ck_assert_uint_eq (l.x[5].ts_ns, 3300);
    ck_assert_int_eq (tracker_exec_read (t, &e, "two", 3500), 0);
    tracker_exec_settle (t, false);
    ck_assert_int_eq (l.n, 7);
    ck_assert (!l.x[6].read);
    ck_assert_uint_eq (l.x[6].ts_ns, 3400);
    ck_assert_str_eq (l.x[6].comm, "sh");
    /* many execs settled by their exits, the socket never read empty:
     * the list of pending ones does not grow with them */
    l.n = 0;
    for (int32_t p = 400; p < 1400; p++) {
        e = fork_ev (100, p, p);
        e.ts_ns = 10000 + (uint64_t)p * 10;
        ck_assert_int_eq (tracker_feed (t, &e, NULL), 1);
        e = ev_at (CNPROC_EXEC, p, e.ts_ns + 1);
        ck_assert_int_eq (tracker_feed (t, &e, NULL), 1);
        ck_assert_int_eq (tracker_exec_read (t, &e, "many", e.ts_ns + 2), 0);
        e = ev_at (CNPROC_EXIT, p, e.ts_ns + 5);
        ck_assert_int_eq (tracker_feed (t, &e, NULL), 1);
        ck_assert_str_eq (e.comm, "many");
        l.n = 0;
    }
    /* not in the step */
    e = ev_at (CNPROC_EXEC, 999, 4000);
    ck_assert_int_eq (tracker_exec_read (t, &e, "x", 4100), -1);
    ck_assert_int_eq (errno, ENOENT);
    tracker_destroy (t);
}
END_TEST

static int count_cb (int32_t tgid, void *arg)
{
    (void)tgid;
    (*(int *)arg)++;
    return 0;
}

/* Many processes: the table grows and deletion keeps lookups right. */
START_TEST (test_tracker_many)
{
    struct tracker *t = tracker_create ();
    struct tracker_counts c;
    int n = 0;

    tracker_add_root (t, 1, "root", 0);
    for (int32_t p = 2; p < 20000; p++) {
        struct cnproc_event e = fork_ev (p % 2 ? 1 : p - 1, p, p);
        tracker_feed (t, &e, NULL);
    }
    for (int32_t p = 2; p < 20000; p += 3) {
        struct cnproc_event e = {.type = CNPROC_EXIT, .pid = p, .tgid = p};
        ck_assert_int_eq (tracker_feed (t, &e, NULL), 1);
    }
    tracker_counts (t, &c);
    ck_assert_uint_eq (c.processes, 1 + 19998 - 6666);
    tracker_foreach_process (t, count_cb, &n);
    ck_assert_int_eq (n, (int)c.processes);
    for (int32_t p = 2; p < 20000; p++) {
        struct cnproc_event e = {.type = CNPROC_EXEC, .pid = p, .tgid = p};
        ck_assert_int_eq (tracker_feed (t, &e, NULL), (p - 2) % 3 != 0);
    }
    tracker_destroy (t);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("cnproc");
    TCase *tc = tcase_create ("cnproc");

    tcase_add_loop_test (tc,
                         test_kinds,
                         0,
                         sizeof (kinds) / sizeof (kinds[0]));
    tcase_add_test (tc, test_several_and_limits);
    tcase_add_test (tc, test_truncated);
    tcase_add_loop_test (tc, test_bent, 0, sizeof (bends) / sizeof (bends[0]));
    tcase_add_test (tc, test_noise);
    tcase_add_loop_test (tc, test_seq, 0, sizeof (seqs) / sizeof (seqs[0]));
    tcase_add_test (tc, test_seq_odd);
    tcase_add_test (tc, test_tracker);
    tcase_add_test (tc, test_tracker_many);
    tcase_add_test (tc, test_tracker_exec);
    suite_add_tcase (s, tc);
    return tap_run (s, NULL, 0);
}
