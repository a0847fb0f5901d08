/* record.c - record a profile of a set of processes and their descendants */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cnproc.h"
#include "procfs.h"
#include "profile.h"
#include "record.h"
#include "taskstats.h"
#include "tracker.h"

#define RECV_SIZE 65536
/* a proc connector datagram is under 128 bytes: 64 read per recvmmsg */
#define RECV_SLOT 1024
#define MAX_EVENTS (RECV_SIZE / 16)
#define MAX_CPUS 4096
/* /proc/stat of a large machine: its intr line alone can be long */
#define STAT_SIZE (1 << 20)
/* datagrams read per call, so that a fork storm cannot starve sampling */
#define MAX_BATCH 4096
/* how long a taskstats record waits for its exit (the exit's record
 * is in hand when the exit is settled: see taskstats.h) */
#define TS_MATCH_AGE_NS (10ull * 1000000000ull)
/* Busy: reading at least HOLD_BUSY events of the step within HOLD_NS
 * (the step's fork storm, from about 800 forks a second; not a storm of
 * other processes beside it), and no exec of the step among them, makes
 * the recorder leave its sockets alone for
 * HOLD_NS (prof_rec_pollfds gives none, prof_rec_timeout_ms says when to
 * come back), so that the next call reads a batch instead of being woken
 * for every event: the wake-ups, not the events, were most of the cost.
 * Not after an exec: the command of an exec is read from /proc when its
 * event is read, and proven by the task's later events (tracker.h); read
 * late, it is proven less often, and the children forked before the read
 * get the command before the exec.  The kernel queues the events
 * meanwhile; only with a receive buffer of at
 * least HOLD_RCVBUF bytes (a datagram takes about 1 KiB of it: 10 ms of
 * 100,000 events/s fit many times), and a loss would still be counted
 * (sequence gaps, ENOBUFS, the socket's drop counter). */
#define HOLD_BUSY 16
#define HOLD_NS (10ull * 1000000ull)
#define HOLD_RCVBUF (4 << 20)
/* taskstats auto: see ts_adapt() */
#define TS_RESUME_MARGIN_NS (10ull * 1000000ull)
/* roots remembered, to tell a root's exit from its reused pid's */
#define MAX_ROOTS 4096

struct root {
    int32_t pid;
    uint64_t t; /* when added: the tracker's start of it */
};

struct prof_rec {
    struct prof_writer *w;
    char warning[PATH_MAX + 128];
    struct tracker *tr;
    struct cnproc_seq *seq;
    struct tsmatch *tsm;
    int cn_fd, ts_fd, ncpus;
    uint16_t ts_family;
    unsigned interval_ms;
    uint64_t next_sample_ns;
    hwloc_bitmap_t cpus;
    bool pss;
    unsigned char *buf;
    struct cnproc_event *ev;
    struct ts_record *tsr;
    struct procfs_cpu *cpu;
    char *statbuf;
    int flushed_cpus;
    struct prof_rec_stats st;
    long clk_tck;
    bool failed;
    int cg_fd;              /* the step's cgroup directory, or -1 */
    uint64_t pss_budget_ns; /* smaps_rollup time per sample; 0: none */
    char cgbuf[16384];
    struct root *roots;
    size_t nroots;
    uint64_t hold_ns;      /* HOLD_NS, or 0 with a small receive buffer */
    uint64_t hold_until;   /* sockets left alone until then */
    uint64_t datagrams;    /* read in this prof_rec_process() */
    bool saw_exec;         /* an exec of the step read in it */
    uint64_t win_start;    /* the current window of HOLD_NS: its start, */
    uint64_t win_events;   /* the events of the step read in it, */
    bool win_exec;         /* and whether one was an exec */
    uint64_t start_cpu_ns; /* CPU time prof_rec_start took */
    pid_t cpu_tid;         /* the thread of the first process() call */
    uint64_t cpu0_ns;      /* its CPU time then */
    /* taskstats auto (record.h): the step's exits in the current
     * window, whether paused, and the pauses' bounds: an exit is flagged
     * paused when its time falls in the current pause or the one before
     * (from before deregistering to after registering again) */
    unsigned ts_pause_rate;
    uint64_t tsw_start, tsw_exits;
    bool ts_paused;
    uint64_t ts_pause_ns;       /* the current pause began; 0: none */
    uint64_t ts_prev_pause_ns;  /* the last pause ended: its bounds */
    uint64_t ts_prev_resume_ns; /* (its end with TS_RESUME_MARGIN_NS) */
    size_t lens[RECV_SIZE / RECV_SLOT];
};

static void on_exec (const struct tracker_exec *x, void *arg);

static pid_t this_tid (void)
{
    return (pid_t)syscall (SYS_gettid);
}

static uint64_t thread_cpu_ns (void)
{
    struct timespec ts;

    if (clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns (void)
{
    struct timespec ts;

    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#define ADD(o, k, v) json_object_object_add ((o), (k), (v))
#define I64(x) json_object_new_int64 ((int64_t)(x))

static int put (struct prof_rec *r, json_object *o, pin_error_t *errp)
{
    int rc = 0;

    if (!o) {
        errno = ENOMEM;
        return errprintf (errp, "profile: out of memory");
    }
    if (prof_writer_put (r->w, o, errp) < 0) {
        r->failed = true;
        rc = -1;
    }
    json_object_put (o);
    return rc;
}

static int put_lost (struct prof_rec *r,
                     const char *kind,
                     uint64_t n,
                     pin_error_t *errp)
{
    json_object *o = json_object_new_object ();

    ADD (o, "type", json_object_new_string ("lost"));
    ADD (o, "t", I64 (now_ns ()));
    ADD (o, "kind", json_object_new_string (kind));
    ADD (o, "count", I64 (n));
    return put (r, o, errp);
}

/* Close and free everything of a recorder (the writer is the caller's). */
static void rec_free (struct prof_rec *r)
{
    cnproc_close (r->cn_fd);
    taskstats_close (r->ts_fd, r->ncpus, r->ts_family);
    tracker_destroy (r->tr);
    cnproc_seq_destroy (r->seq);
    tsmatch_destroy (r->tsm);
    hwloc_bitmap_free (r->cpus);
    free (r->buf);
    free (r->ev);
    free (r->tsr);
    free (r->cpu);
    free (r->statbuf);
    free (r->roots);
    if (r->cg_fd >= 0)
        close (r->cg_fd);
    free (r);
}

struct prof_rec *prof_rec_start (const struct prof_rec_opts *o,
                                 pin_error_t *errp)
{
    struct prof_rec *r = calloc (1, sizeof (*r));
    json_object *h = NULL;
    int got = 0;

    if (!r) {
        errno = ENOMEM;
        errprintf (errp, "profile: out of memory");
        return NULL;
    }
    r->cn_fd = r->ts_fd = r->cg_fd = -1;
    r->cpu0_ns = thread_cpu_ns ();
    r->interval_ms = o->interval_ms;
    r->pss = o->pss;
    /* reading smaps_rollup walks a process's page tables: at most a
     * tenth of the interval per sample, the rest of the processes are
     * skipped (counted) until the next one */
    r->pss_budget_ns = (uint64_t)o->interval_ms * 100000ull;
    r->clk_tck = sysconf (_SC_CLK_TCK);
    r->ncpus = (int)sysconf (_SC_NPROCESSORS_CONF);
    if (!(r->tr = tracker_create ()) || !(r->seq = cnproc_seq_create ())
        || !(r->tsm = tsmatch_create ()) || !(r->buf = malloc (RECV_SIZE))
        || !(r->ev = calloc (MAX_EVENTS, sizeof (*r->ev)))
        || !(r->tsr = calloc (MAX_EVENTS, sizeof (*r->tsr)))
        || !(r->cpu = calloc (MAX_CPUS, sizeof (*r->cpu)))
        || !(r->statbuf = malloc (STAT_SIZE))
        || !(r->roots = calloc (MAX_ROOTS, sizeof (*r->roots)))
        || !(r->cpus = o->cpus ? hwloc_bitmap_dup (o->cpus)
                               : hwloc_bitmap_alloc ())) {
        errno = ENOMEM;
        errprintf (errp, "profile: out of memory");
        goto fail;
    }
    tracker_on_exec (r->tr, on_exec, r);
    if ((r->cn_fd = cnproc_open (o->rcvbuf, &got, errp)) < 0)
        goto fail;
    r->hold_ns = got >= HOLD_RCVBUF ? HOLD_NS : 0;
    r->ts_pause_rate = o->ts_pause_rate;
    if (o->taskstats
        && (r->ts_fd =
                taskstats_open (r->ncpus, o->rcvbuf, &r->ts_family, NULL))
               < 0)
        r->ts_fd = -1; /* said in the header ("taskstats": false) */
    h = o->header ? json_object_get (o->header) : json_object_new_object ();
    if (!h) {
        errno = ENOMEM;
        errprintf (errp, "profile: out of memory");
        goto fail;
    }
    {
        struct timespec rt;
        char *list = NULL;
        uint64_t t0 = now_ns ();
        clock_gettime (CLOCK_REALTIME, &rt);
        ADD (h, "clock", json_object_new_string ("CLOCK_MONOTONIC"));
        ADD (h, "t0", I64 (t0));
        ADD (h,
             "unix_t0",
             json_object_new_double ((double)rt.tv_sec
                                     + (double)rt.tv_nsec / 1e9));
        ADD (h, "interval_ms", I64 (o->interval_ms));
        if (hwloc_bitmap_list_asprintf (&list, r->cpus) >= 0 && list)
            ADD (h, "cpus", json_object_new_string (list));
        free (list);
        ADD (h, "clk_tck", I64 (r->clk_tck));
        ADD (h, "rcvbuf", I64 (got));
        ADD (h, "pss", json_object_new_boolean (o->pss));
        ADD (h, "pss_budget_ns", I64 (r->pss_budget_ns));
        ADD (h, "taskstats", json_object_new_boolean (r->ts_fd >= 0));
        if (r->ts_fd >= 0)
            ADD (h,
                 "taskstats_mode",
                 json_object_new_string (r->ts_pause_rate ? "auto" : "on"));
        if (r->ts_fd >= 0 && r->ts_pause_rate)
            ADD (h, "taskstats_pause_rate", I64 (r->ts_pause_rate));
        if (o->cgroup_dir) {
            r->cg_fd = open (o->cgroup_dir,
                             O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (r->cg_fd < 0) {
                char why[PATH_MAX + 64];
                snprintf (why,
                          sizeof (why),
                          "%s: %s",
                          o->cgroup_dir,
                          strerror (errno));
                ADD (h, "cgroup_error", json_object_new_string (why));
            } else
                ADD (h, "cgroup", json_object_new_string (o->cgroup_dir));
        }
    }
    r->next_sample_ns = now_ns ();
    if (!(r->w = prof_writer_open (o->path, o->max_bytes, h, errp)))
        goto fail;
    if (o->share) {
        pin_error_t e = {""};
        int rc = prof_writer_share (r->w, o->reader_uid, &e);
        if (rc < 0) {
            errprintf (errp, "%s", e.text);
            prof_writer_close (r->w, NULL, NULL);
            unlink (o->path);
            goto fail;
        }
        if (rc > 0)
            snprintf (r->warning, sizeof (r->warning), "%s", e.text);
    }
    prof_writer_keep_free (r->w, o->keep_free);
    json_object_put (h);
    r->start_cpu_ns = thread_cpu_ns () - r->cpu0_ns;
    r->cpu_tid = 0; /* the first prof_rec_process() says which thread */
    return r;
fail:
    json_object_put (h);
    rec_free (r);
    return NULL;
}

static void read_comm (pid_t pid, char *comm, size_t n)
{
    char path[64], buf[64];
    ssize_t len;

    snprintf (path, sizeof (path), "/proc/%d/comm", (int)pid);
    if ((len = procfs_read (path, buf, sizeof (buf))) <= 0)
        return;
    if (buf[len - 1] == '\n')
        buf[--len] = '\0';
    if ((size_t)len >= n)
        len = (ssize_t)n - 1;
    memcpy (comm, buf, (size_t)len);
    comm[len] = '\0';
}

const char *prof_rec_warning (const struct prof_rec *r)
{
    return r->warning[0] ? r->warning : NULL;
}

int prof_rec_add_root (struct prof_rec *r, pid_t pid, pin_error_t *errp)
{
    char comm[17] = "";
    uint64_t t = now_ns ();
    json_object *o;

    read_comm (pid, comm, sizeof (comm));
    if (tracker_add_root (r->tr, pid, comm, t) < 0)
        return errprintf (errp,
                          "profile: cannot follow pid %d: %s",
                          (int)pid,
                          strerror (errno));
    if (r->nroots < MAX_ROOTS)
        r->roots[r->nroots++] = (struct root){.pid = pid, .t = t};
    o = json_object_new_object ();
    ADD (o, "type", json_object_new_string ("root"));
    ADD (o, "t", I64 (t));
    ADD (o, "pid", I64 (pid));
    ADD (o, "comm", json_object_new_string (comm));
    return put (r, o, errp);
}

int prof_rec_pollfds (struct prof_rec *r, struct pollfd *fds, int max)
{
    int n = 0;

    if (r->hold_until && now_ns () < r->hold_until)
        return 0; /* a storm: read in batches (HOLD_NS) */
    if (n < max)
        fds[n++] = (struct pollfd){.fd = r->cn_fd, .events = POLLIN};
    if (r->ts_fd >= 0 && n < max)
        fds[n++] = (struct pollfd){.fd = r->ts_fd, .events = POLLIN};
    return n;
}

int prof_rec_timeout_ms (struct prof_rec *r)
{
    uint64_t now = now_ns (), until = 0;

    if (r->interval_ms)
        until = r->next_sample_ns;
    if (r->hold_until > now && (!until || r->hold_until < until))
        until = r->hold_until;
    if (!until)
        return -1;
    if (now >= until)
        return 0;
    return (int)((until - now + 999999) / 1000000);
}

/* ---- event lines, formatted here -------------------------------------
 *
 * A fork storm writes two or three lines per process: building each as
 * a json-c object, printing it and escaping it to ASCII cost most of the
 * recorder's CPU time.  These lines are formatted directly, byte for
 * byte what json-c prints for them (the keys in the same order, no
 * spaces); a command holding anything but printable ASCII goes the
 * json-c way (its escapes). */
struct line {
    char b[768];
    size_t n;
    bool bad; /* a string to escape, or no room: use json-c */
};

static void l_raw (struct line *l, const char *s, size_t n)
{
    if (l->n + n >= sizeof (l->b)) {
        l->bad = true;
        return;
    }
    memcpy (l->b + l->n, s, n);
    l->n += n;
}

#define L_LIT(l, s) l_raw ((l), (s), sizeof (s) - 1)

static void l_key (struct line *l, const char *key)
{
    l_raw (l, l->n > 1 ? ",\"" : "\"", l->n > 1 ? 2 : 1);
    l_raw (l, key, strlen (key));
    L_LIT (l, "\":");
}

static void l_int (struct line *l, const char *key, int64_t v)
{
    char d[24], *p = d + sizeof (d);
    uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;

    l_key (l, key);
    do
        *--p = (char)('0' + u % 10);
    while ((u /= 10));
    if (v < 0)
        *--p = '-';
    l_raw (l, p, (size_t)(d + sizeof (d) - p));
}

static void l_bool (struct line *l, const char *key, bool v)
{
    l_key (l, key);
    if (v)
        L_LIT (l, "true");
    else
        L_LIT (l, "false");
}

static void l_str (struct line *l, const char *key, const char *v)
{
    l_key (l, key);
    L_LIT (l, "\"");
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
        if (*p < 0x20 || *p >= 0x7f) {
            l->bad = true;
            return;
        }
        if (*p == '"' || *p == '\\')
            L_LIT (l, "\\");
        l_raw (l, (const char *)p, 1);
    }
    L_LIT (l, "\"");
}

/* Write l, or o (the same line as a json-c object, built only when l
 * could not be formatted) through json-c. */
static int put_line (struct prof_rec *r,
                     struct line *l,
                     json_object *(*build) (const void *a, const void *b),
                     const void *a,
                     const void *b,
                     pin_error_t *errp)
{
    L_LIT (l, "}");
    if (!l->bad) {
        if (prof_writer_put_text (r->w, l->b, l->n, errp) < 0) {
            r->failed = true;
            return -1;
        }
        return 0;
    }
    return put (r, build (a, b), errp);
}

static json_object *task_object (const void *a, const void *b)
{
    const struct ts_exit *x = a;
    const struct ts_record *t = b;
    json_object *o = json_object_new_object ();

    ADD (o, "type", json_object_new_string ("task"));
    /* the exit it is paired with: its time and the task's start */
    ADD (o, "t", I64 (x->exit_ns));
    ADD (o, "start", I64 (x->fork_ns));
    ADD (o, "pid", I64 (t->pid));
    ADD (o, "tgid", I64 (t->tgid));
    ADD (o, "ppid", I64 (t->ppid));
    ADD (o, "comm", json_object_new_string (t->comm));
    ADD (o, "exitcode", I64 (t->exitcode));
    ADD (o, "btime", I64 (t->btime));
    ADD (o, "etime_us", I64 (t->etime_us));
    ADD (o, "utime_us", I64 (t->utime_us));
    ADD (o, "stime_us", I64 (t->stime_us));
    ADD (o, "nvcsw", I64 (t->nvcsw));
    ADD (o, "nivcsw", I64 (t->nivcsw));
    ADD (o, "hiwater_rss_kb", I64 (t->hiwater_rss_kb));
    ADD (o, "cpu_delay_ns", I64 (t->cpu_delay_ns));
    ADD (o, "blkio_delay_ns", I64 (t->blkio_delay_ns));
    ADD (o, "read_bytes", I64 (t->read_bytes));
    ADD (o, "write_bytes", I64 (t->write_bytes));
    ADD (o, "rchar", I64 (t->rchar));
    ADD (o, "wchar", I64 (t->wchar));
    return o;
}

static int put_task (struct prof_rec *r,
                     const struct ts_exit *x,
                     const struct ts_record *t,
                     pin_error_t *errp)
{
    struct line l = {.n = 1, .b = "{"};

    r->st.ts_records++;
    l_str (&l, "type", "task");
    l_int (&l, "t", (int64_t)x->exit_ns);
    l_int (&l, "start", (int64_t)x->fork_ns);
    l_int (&l, "pid", t->pid);
    l_int (&l, "tgid", t->tgid);
    l_int (&l, "ppid", t->ppid);
    l_str (&l, "comm", t->comm);
    l_int (&l, "exitcode", t->exitcode);
    l_int (&l, "btime", (int64_t)t->btime);
    l_int (&l, "etime_us", (int64_t)t->etime_us);
    l_int (&l, "utime_us", (int64_t)t->utime_us);
    l_int (&l, "stime_us", (int64_t)t->stime_us);
    l_int (&l, "nvcsw", (int64_t)t->nvcsw);
    l_int (&l, "nivcsw", (int64_t)t->nivcsw);
    l_int (&l, "hiwater_rss_kb", (int64_t)t->hiwater_rss_kb);
    l_int (&l, "cpu_delay_ns", (int64_t)t->cpu_delay_ns);
    l_int (&l, "blkio_delay_ns", (int64_t)t->blkio_delay_ns);
    l_int (&l, "read_bytes", (int64_t)t->read_bytes);
    l_int (&l, "write_bytes", (int64_t)t->write_bytes);
    l_int (&l, "rchar", (int64_t)t->rchar);
    l_int (&l, "wchar", (int64_t)t->wchar);
    return put_line (r, &l, task_object, x, t, errp);
}

static const char *event_type (const struct cnproc_event *e)
{
    switch (e->type) {
        case CNPROC_FORK:
            return "fork";
        case CNPROC_EXEC:
            return "exec";
        case CNPROC_EXIT:
            return "exit";
        case CNPROC_COMM:
            return "comm";
        default:
            return "other";
    }
}

static json_object *event_object (const void *a, const void *b)
{
    const struct cnproc_event *e = a;
    uint64_t start = *(const uint64_t *)b;
    json_object *o = json_object_new_object ();

    ADD (o, "type", json_object_new_string (event_type (e)));
    ADD (o, "t", I64 (e->ts_ns));
    ADD (o, "cpu", I64 (e->cpu));
    ADD (o, "pid", I64 (e->pid));
    ADD (o, "tgid", I64 (e->tgid));
    if (e->type == CNPROC_FORK || e->type == CNPROC_EXIT)
        ADD (o, "thread", json_object_new_boolean (e->pid != e->tgid));
    if (e->type == CNPROC_FORK) {
        ADD (o, "ppid", I64 (e->ppid));
        ADD (o, "ptgid", I64 (e->ptgid));
    }
    if (e->type == CNPROC_EXIT) {
        ADD (o, "status", I64 (e->exit_code));
        ADD (o, "start", I64 (start));
    }
    if (e->type == CNPROC_OTHER)
        ADD (o, "what", I64 (e->what));
    ADD (o, "comm", json_object_new_string (e->comm));
    return o;
}

static int put_event (struct prof_rec *r,
                      struct cnproc_event *e,
                      uint64_t start,
                      pin_error_t *errp)
{
    struct line l = {.n = 1, .b = "{"};

    l_str (&l, "type", event_type (e));
    l_int (&l, "t", (int64_t)e->ts_ns);
    l_int (&l, "cpu", e->cpu);
    l_int (&l, "pid", e->pid);
    l_int (&l, "tgid", e->tgid);
    if (e->type == CNPROC_FORK || e->type == CNPROC_EXIT)
        l_bool (&l, "thread", e->pid != e->tgid);
    if (e->type == CNPROC_FORK) {
        l_int (&l, "ppid", e->ppid);
        l_int (&l, "ptgid", e->ptgid);
    }
    if (e->type == CNPROC_EXIT) {
        l_int (&l, "status", e->exit_code);
        l_int (&l, "start", (int64_t)start);
    }
    if (e->type == CNPROC_OTHER)
        l_int (&l, "what", e->what);
    l_str (&l, "comm", e->comm);
    return put_line (r, &l, event_object, e, &start, errp);
}

struct settle {
    struct prof_rec *r;
    pin_error_t *errp;
};

static int on_settled (const struct ts_exit *x,
                       const struct ts_record *t,
                       void *arg)
{
    struct settle *s = arg;

    if (!t) {
        if (x->paused) /* tsmatch counts it missing: not a loss */
            s->r->st.ts_paused++;
        return 0;
    }
    return put_task (s->r, x, t, s->errp) < 0 ? -1 : 0;
}

/* An exec settled by the tracker: its line, with the command proven
 * the task's or the one known before (tracker.h).  A write error is
 * said by the next prof_rec_process (r->failed). */
static void on_exec (const struct tracker_exec *x, void *arg)
{
    struct prof_rec *r = arg;
    pin_error_t e = {""};
    struct cnproc_event ev = {.type = CNPROC_EXEC,
                              .cpu = x->cpu,
                              .ts_ns = x->ts_ns,
                              .pid = x->pid,
                              .tgid = x->tgid};

    memcpy (ev.comm, x->comm, sizeof (ev.comm));
    (void)put_event (r, &ev, 0, &e);
}

/* Settle the exits whose record must be in hand (taskstats.h). */
static int settle (struct prof_rec *r, bool all, pin_error_t *errp)
{
    struct settle s = {.r = r, .errp = errp};

    if (r->ts_fd < 0)
        return 0;
    return tsmatch_resolve (r->tsm, all, on_settled, &s) ? -1 : 0;
}

static bool is_root (const struct prof_rec *r, int32_t pid, uint64_t start)
{
    for (size_t i = 0; i < r->nroots; i++)
        if (r->roots[i].pid == pid && r->roots[i].t == start)
            return true;
    return false;
}

/* Whether an exit at t (CLOCK_MONOTONIC, the event's) fell in a pause
 * of taskstats: such an exit may have no record. */
static bool ts_in_pause (const struct prof_rec *r, uint64_t t)
{
    if (r->ts_pause_ns && t >= r->ts_pause_ns)
        return true; /* the current pause */
    return r->ts_prev_pause_ns && t >= r->ts_prev_pause_ns
           && t <= r->ts_prev_resume_ns;
}

static int put_ts_state (struct prof_rec *r,
                         const char *state,
                         uint64_t t,
                         uint64_t rate,
                         int err,
                         pin_error_t *errp)
{
    json_object *o = json_object_new_object ();
    char why[160];

    if (err)
        snprintf (why,
                  sizeof (why),
                  "%" PRIu64 " exits/s; not sent to the kernel: %s",
                  rate,
                  strerror (err));
    else
        snprintf (why, sizeof (why), "%" PRIu64 " exits/s", rate);
    ADD (o, "type", json_object_new_string ("taskstats"));
    ADD (o, "t", I64 (t));
    ADD (o, "state", json_object_new_string (state));
    ADD (o, "why", json_object_new_string (why));
    return put (r, o, errp);
}

/* taskstats auto: at the end of each window of PROF_TS_WINDOW_MS, pause
 * taskstats when the step's exits came faster than ts_pause_rate, resume
 * when they came slower than half of it and the pause is old enough. */
static int ts_adapt (struct prof_rec *r, pin_error_t *errp)
{
    uint64_t now = now_ns (), span, rate;

    if (r->ts_fd < 0 || !r->ts_pause_rate)
        return 0;
    if (!r->tsw_start) {
        r->tsw_start = now;
        return 0;
    }
    span = now - r->tsw_start;
    if (span < PROF_TS_WINDOW_MS * 1000000ull)
        return 0;
    rate = r->tsw_exits * 1000000000ull / span;
    r->tsw_start = now;
    r->tsw_exits = 0;
    if (!r->ts_paused && rate > r->ts_pause_rate) {
        /* exits from now on may have no record */
        uint64_t t = now_ns ();
        if (taskstats_listen (r->ts_fd, r->ncpus, r->ts_family, false) < 0) {
            /* still registered: records keep coming, nothing paused */
            int e = errno;
            return put_ts_state (r, "pause-failed", t, rate, e, errp);
        }
        r->ts_pause_ns = t; /* the last ended one stays in ts_prev_* */
        r->ts_paused = true;
        r->st.ts_pauses++;
        return put_ts_state (r, "paused", t, rate, 0, errp);
    }
    if (r->ts_paused && rate < r->ts_pause_rate / 2
        && now - r->ts_pause_ns >= PROF_TS_MIN_PAUSE_MS * 1000000ull) {
        uint64_t t;
        if (taskstats_listen (r->ts_fd, r->ncpus, r->ts_family, true) < 0) {
            /* still paused (its exits count as paused), said in the
             * profile; tried again at the end of the next window */
            int e = errno;
            return put_ts_state (r, "resume-failed", now_ns (), rate, e, errp);
        }
        t = now_ns (); /* exits after this have their record again */
        r->ts_paused = false;
        r->ts_prev_pause_ns = r->ts_pause_ns;
        /* an exit's record is decided a moment before its exit event's
         * time is taken: a margin, so that an exit without a record just
         * after the resume is not taken for a loss */
        r->ts_prev_resume_ns = t + TS_RESUME_MARGIN_NS;
        r->ts_pause_ns = 0;
        return put_ts_state (r, "resumed", t, rate, 0, errp);
    }
    return 0;
}

/* The events of one datagram of the proc connector.  0, or -1 with
 * errp (a write error). */
static int feed_datagram (struct prof_rec *r,
                          const unsigned char *buf,
                          size_t len,
                          pin_error_t *errp)
{
    int nev;

    if ((nev = cnproc_parse (buf, len, r->ev, MAX_EVENTS, NULL)) < 0) {
        r->st.parse_errors++;
        return 0;
    }
    for (int i = 0; i < nev; i++) {
        struct cnproc_event *e = &r->ev[i];
        uint64_t gap = cnproc_seq_note (r->seq, e), start = 0;
        int in;

        if (e->type == CNPROC_NONE)
            continue;
        r->st.events++;
        if (gap) {
            r->st.lost_seq += gap;
            if (put_lost (r, "sequence", gap, errp) < 0)
                return -1;
        }
        if ((in = tracker_feed (r->tr, e, &start)) < 0) {
            r->st.untracked++;
            continue;
        }
        if (in > 0 && e->type == CNPROC_EXEC) {
            /* its command: read now, said once proven (tracker.h) */
            r->saw_exec = true;
            char comm[17] = "";
            read_comm (e->pid, comm, sizeof (comm));
            if (*comm && tracker_exec_read (r->tr, e, comm, now_ns ()) == 0) {
                r->st.step_events++;
                continue;
            }
        }
        if (r->ts_fd >= 0 && e->type == CNPROC_FORK)
            tsmatch_fork (r->tsm, e->pid);
        if (r->ts_fd >= 0 && e->type == CNPROC_EXIT) {
            /* every exit of the machine claims its own record, so
             * that none is left for a later holder of the pid */
            struct ts_exit x = {.pid = e->pid,
                                .tgid = e->tgid,
                                .step = in > 0,
                                .exit_ns = e->ts_ns,
                                .fork_ns = in > 0 ? start : 0};
            x.root = in > 0 && is_root (r, e->pid, start);
            x.paused = in > 0 && ts_in_pause (r, e->ts_ns);
            if (in > 0)
                r->tsw_exits++;
            (void)tsmatch_exit (r->tsm, &x); /* ENOMEM: counted */
        }
        if (!in)
            continue;
        r->st.step_events++;
        if (put_event (r, e, start, errp) < 0)
            return -1;
    }
    return 0;
}

/* Read what is waiting, at most MAX_BATCH datagrams: 0 when the socket
 * is empty, 1 when more may be waiting, -1 with errp. */
static int drain_cn (struct prof_rec *r, pin_error_t *errp)
{
    for (int batch = 0; batch < MAX_BATCH;) {
        int got = cnproc_recv_batch (r->cn_fd,
                                     r->buf,
                                     RECV_SLOT,
                                     RECV_SIZE / RECV_SLOT,
                                     r->lens,
                                     &r->st.foreign);

        if (got == 0) { /* read empty: the records of the exits read
                         * before the last taskstats drain are in hand,
                         * and the commands read at execs are proven */
            tracker_exec_settle (r->tr, true);
            return settle (r, false, errp);
        }
        if (got < 0) {
            batch++;
            if (errno == ENOBUFS) {
                r->st.enobufs++;
                if (put_lost (r, "enobufs", 1, errp) < 0)
                    return -1;
                continue;
            }
            return errprintf (errp,
                              "proc connector: recv: %s",
                              strerror (errno));
        }
        batch += got;
        r->datagrams += (uint64_t)got;
        for (int d = 0; d < got; d++)
            if (feed_datagram (r,
                               r->buf + (size_t)d * RECV_SLOT,
                               r->lens[d],
                               errp)
                < 0)
                return -1;
    }
    return 1; /* more may be waiting */
}

static int drain_ts (struct prof_rec *r, pin_error_t *errp)
{
    if (r->ts_fd < 0)
        return 0;
    for (int batch = 0; batch < MAX_BATCH; batch++) {
        ssize_t n = recv (r->ts_fd, r->buf, RECV_SIZE, 0);
        int nrec;

        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                tsmatch_drained (r->tsm);
                return 0;
            }
            if (errno == EINTR)
                continue;
            if (errno == ENOBUFS) {
                r->st.ts_enobufs++;
                tsmatch_lost (r->tsm, now_ns ());
                if (put_lost (r, "taskstats_enobufs", 1, errp) < 0)
                    return -1;
                continue;
            }
            return errprintf (errp, "taskstats: recv: %s", strerror (errno));
        }
        if ((nrec = taskstats_parse (r->buf,
                                     (size_t)n,
                                     r->ts_family,
                                     r->tsr,
                                     MAX_EVENTS,
                                     NULL))
            < 0) {
            r->st.parse_errors++;
            continue;
        }
        {
            uint64_t t = now_ns (); /* after the recv(): the records
                                     * were sent before it */
            for (int i = 0; i < nrec; i++)
                (void)tsmatch_record (r->tsm, &r->tsr[i], t);
        }
    }
    return 1; /* more may be waiting */
}

/* ---- sampling ---------------------------------------------------------- */

struct sample {
    struct prof_rec *r;
    uint64_t procs[5], threads[5]; /* R S D Z other */
    uint64_t nvcsw, nivcsw, utime, stime;
    uint64_t rss_kb, pss_kb, smaps_reads, smaps_ns, smaps_fail;
    uint64_t smaps_skipped; /* over the time budget */
    uint64_t nprocs, nthreads;
    char buf[8192];
};

static int state_index (char c)
{
    switch (c) {
        case 'R':
            return 0;
        case 'S':
            return 1;
        case 'D':
            return 2;
        case 'Z':
            return 3;
        default:
            return 4;
    }
}

static int sample_process (int32_t tgid, void *arg)
{
    struct sample *s = arg;
    char path[96];
    struct procfs_stat st;
    DIR *d;
    struct dirent *de;

    snprintf (path, sizeof (path), "/proc/%d/stat", (int)tgid);
    if (procfs_read (path, s->buf, sizeof (s->buf)) < 0
        || procfs_parse_stat (s->buf, &st, NULL) < 0)
        return 0; /* gone meanwhile */
    s->nprocs++;
    s->procs[state_index (st.state)]++;
    snprintf (path, sizeof (path), "/proc/%d/task", (int)tgid);
    if ((d = opendir (path))) {
        while ((de = readdir (d))) {
            struct procfs_status ps;
            struct procfs_stat ts;
            if (de->d_name[0] < '1' || de->d_name[0] > '9')
                continue;
            snprintf (path,
                      sizeof (path),
                      "/proc/%d/task/%.16s/stat",
                      (int)tgid,
                      de->d_name);
            if (procfs_read (path, s->buf, sizeof (s->buf)) < 0
                || procfs_parse_stat (s->buf, &ts, NULL) < 0)
                continue;
            s->nthreads++;
            s->threads[state_index (ts.state)]++;
            s->utime += ts.utime;
            s->stime += ts.stime;
            snprintf (path,
                      sizeof (path),
                      "/proc/%d/task/%.16s/status",
                      (int)tgid,
                      de->d_name);
            if (procfs_read (path, s->buf, sizeof (s->buf)) >= 0
                && procfs_parse_status (s->buf, &ps, NULL) == 0) {
                s->nvcsw += ps.voluntary_ctxt_switches;
                s->nivcsw += ps.nonvoluntary_ctxt_switches;
            }
        }
        closedir (d);
    }
    if (s->r->pss && st.state != 'Z' && s->r->pss_budget_ns
        && s->smaps_ns >= s->r->pss_budget_ns)
        s->smaps_skipped++;
    else if (s->r->pss && st.state != 'Z') {
        struct procfs_rollup ro;
        uint64_t t0 = now_ns ();
        snprintf (path, sizeof (path), "/proc/%d/smaps_rollup", (int)tgid);
        if (procfs_read (path, s->buf, sizeof (s->buf)) >= 0
            && procfs_parse_rollup (s->buf, &ro, NULL) == 0) {
            s->rss_kb += ro.rss_kb;
            s->pss_kb += ro.pss_kb;
            s->smaps_reads++;
        } else {
            s->smaps_fail++;
        }
        s->smaps_ns += now_ns () - t0;
    }
    return 0;
}

static json_object *states (const uint64_t *v)
{
    json_object *o = json_object_new_object ();
    static const char *names[] = {"R", "S", "D", "Z", "other"};

    for (int i = 0; i < 5; i++)
        ADD (o, names[i], I64 (v[i]));
    return o;
}

/* The memory limit the step's processes live under: the lowest
 * memory.max of the step cgroup and its ancestors (Slurm writes it in
 * the job's cgroup and the step's), at most 8 levels up; 0: none ("max"
 * everywhere, or no memory controller). */
static uint64_t memory_limit (struct prof_rec *r)
{
    uint64_t lim = 0;
    int fd = r->cg_fd;

    for (int depth = 0; depth < 8 && fd >= 0; depth++) {
        int up;
        if (procfs_read_at (fd, "memory.max", r->cgbuf, sizeof (r->cgbuf)) < 0)
            break; /* above the root, or no memory controller */
        if (strncmp (r->cgbuf, "max", 3) != 0) {
            char *end = NULL;
            unsigned long long v;
            errno = 0;
            v = strtoull (r->cgbuf, &end, 10);
            if (end != r->cgbuf && !errno && (*end == '\n' || !*end) && v
                && (!lim || v < lim))
                lim = v;
        }
        up = openat (fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd != r->cg_fd)
            close (fd);
        fd = up;
    }
    if (fd >= 0 && fd != r->cg_fd)
        close (fd);
    return lim;
}

/* The step cgroup's CPU and memory: what exists of them (a cgroup
 * without the memory controller has no memory files). */
static json_object *cgroup_sample (struct prof_rec *r)
{
    static const char *const cpu_keys[] = {"usage_usec",
                                           "user_usec",
                                           "system_usec"};
    static const char *const mem_keys[] = {"anon", "file", "shmem"};
    uint64_t v[3];
    json_object *o = json_object_new_object ();
    pin_error_t e = {""};
    int found;

    if (procfs_read_at (r->cg_fd, "cpu.stat", r->cgbuf, sizeof (r->cgbuf)) >= 0
        && (found =
                procfs_parse_flat (r->cgbuf, cpu_keys, v, 3, "cpu.stat", &e))
               > 0) {
        for (int i = 0; i < 3; i++)
            if (found & (1 << i))
                ADD (o, cpu_keys[i], I64 (v[i]));
    }
    if (procfs_read_at (r->cg_fd,
                        "memory.current",
                        r->cgbuf,
                        sizeof (r->cgbuf))
        >= 0) {
        const char *p = r->cgbuf;
        char *end = NULL;
        errno = 0;
        unsigned long long cur = strtoull (p, &end, 10);
        if (end != p && !errno && (*end == '\n' || !*end))
            ADD (o, "memory_current", I64 (cur));
        {
            uint64_t lim = memory_limit (r);
            if (lim)
                ADD (o, "memory_max", I64 (lim));
        }
    }
    if (procfs_read_at (r->cg_fd, "memory.stat", r->cgbuf, sizeof (r->cgbuf))
            >= 0
        && (found = procfs_parse_flat (r->cgbuf,
                                       mem_keys,
                                       v,
                                       3,
                                       "memory.stat",
                                       &e))
               > 0) {
        for (int i = 0; i < 3; i++)
            if (found & (1 << i))
                ADD (o, mem_keys[i], I64 (v[i]));
    }
    /* io.stat summed over the devices; none without the io controller
     * (the summary and the chart say so: not zeros) */
    if (procfs_read_at (r->cg_fd, "io.stat", r->cgbuf, sizeof (r->cgbuf))
        >= 0) {
        static const char *const io_keys[4] = {"io_rbytes",
                                               "io_wbytes",
                                               "io_rios",
                                               "io_wios"};
        pin_error_t ie = {""};
        uint64_t io[4];
        if (procfs_parse_iostat (r->cgbuf, io, &ie) == 0)
            for (int i = 0; i < 4; i++)
                ADD (o, io_keys[i], I64 (io[i]));
        else
            ADD (o, "io_error", json_object_new_string (ie.text));
    } else if (errno != ENOENT) {
        char t[96];
        snprintf (t, sizeof (t), "io.stat: %s", strerror (errno));
        ADD (o, "io_error", json_object_new_string (t));
    }
    if (e.text[0])
        ADD (o, "error", json_object_new_string (e.text));
    return o;
}

int prof_rec_mark (struct prof_rec *r, json_object *line, pin_error_t *errp)
{
    int rc;

    if (!json_object_object_get_ex (line, "t", NULL))
        ADD (line, "t", I64 (now_ns ()));
    rc = prof_writer_put (r->w, line, errp);
    if (rc < 0)
        r->failed = true;
    return rc;
}

static int take_sample (struct prof_rec *r, pin_error_t *errp)
{
    struct sample *s = calloc (1, sizeof (*s));
    json_object *o, *cpus;
    struct tracker_counts c;
    int rc;

    if (!s) {
        errno = ENOMEM;
        return errprintf (errp, "profile: out of memory");
    }
    s->r = r;
    o = json_object_new_object ();
    ADD (o, "type", json_object_new_string ("sample"));
    ADD (o, "t", I64 (now_ns ()));
    tracker_foreach_process (r->tr, sample_process, s);
    tracker_counts (r->tr, &c);
    ADD (o, "tracked_processes", I64 (c.processes));
    ADD (o, "tracked_threads", I64 (c.threads));
    ADD (o, "procs", states (s->procs));
    ADD (o, "threads", states (s->threads));
    ADD (o, "nvcsw", I64 (s->nvcsw));
    ADD (o, "nivcsw", I64 (s->nivcsw));
    ADD (o, "utime_ticks", I64 (s->utime));
    ADD (o, "stime_ticks", I64 (s->stime));
    if (r->pss) {
        ADD (o, "rss_kb", I64 (s->rss_kb));
        ADD (o, "pss_kb", I64 (s->pss_kb));
        ADD (o, "smaps_reads", I64 (s->smaps_reads));
        ADD (o, "smaps_failed", I64 (s->smaps_fail));
        ADD (o, "smaps_ns", I64 (s->smaps_ns));
        ADD (o, "smaps_skipped", I64 (s->smaps_skipped));
    }
    if (!hwloc_bitmap_iszero (r->cpus)) {
        pin_error_t e = {""};
        int n = -1;
        if (procfs_read ("/proc/stat", r->statbuf, STAT_SIZE) < 0)
            snprintf (e.text,
                      sizeof (e.text),
                      "/proc/stat: %s",
                      strerror (errno));
        else
            n = procfs_parse_cpustat (r->statbuf,
                                      r->cpus,
                                      r->cpu,
                                      MAX_CPUS,
                                      &e);
        if (n < 0) /* said, not hidden */
            ADD (o, "cpus_error", json_object_new_string (e.text));
        cpus = json_object_new_array ();
        for (int i = 0; i < n; i++) {
            json_object *a = json_object_new_array ();
            const struct procfs_cpu *p = &r->cpu[i];
            uint64_t v[] = {(uint64_t)p->cpu,
                            p->user,
                            p->nice,
                            p->system,
                            p->idle,
                            p->iowait,
                            p->irq,
                            p->softirq,
                            p->steal};
            for (size_t k = 0; k < sizeof (v) / sizeof (v[0]); k++)
                json_object_array_add (a, I64 (v[k]));
            json_object_array_add (cpus, a);
        }
        ADD (o, "cpus", cpus);
    }
    if (r->cg_fd >= 0)
        ADD (o, "cg", cgroup_sample (r));
    free (s);
    r->st.samples++;
    rc = put (r, o, errp);
    tsmatch_expire (r->tsm, now_ns (), TS_MATCH_AGE_NS);
    return rc;
}

int prof_rec_process (struct prof_rec *r, pin_error_t *errp)
{
    uint64_t steps;

    if (!r->cpu_tid) { /* the thread that records from now on */
        r->cpu_tid = this_tid ();
        r->cpu0_ns = thread_cpu_ns ();
    }

    if (r->failed) {
        errno = EIO;
        return errprintf (errp, "profile: an earlier write failed");
    }
    if (r->hold_until && now_ns () < r->hold_until
        && !(r->interval_ms && now_ns () >= r->next_sample_ns))
        return 0; /* woken by another descriptor of the caller's */
    r->datagrams = 0;
    r->saw_exec = false;
    steps = r->st.step_events;
    if (drain_cn (r, errp) < 0 || drain_ts (r, errp) < 0)
        return -1;
    if (ts_adapt (r, errp) < 0)
        return -1;
    {
        uint64_t now = now_ns ();
        if (now - r->win_start > HOLD_NS) {
            r->win_start = now;
            r->win_events = 0;
            r->win_exec = false;
        }
        r->win_events += r->st.step_events - steps;
        r->win_exec = r->win_exec || r->saw_exec;
        r->hold_until = 0;
        if (r->hold_ns && r->win_events >= HOLD_BUSY && !r->win_exec) {
            r->hold_until = now + r->hold_ns;
            r->win_start = now; /* the next window starts after it */
            r->win_events = 0;
        }
    }
    if (r->interval_ms && now_ns () >= r->next_sample_ns) {
        uint64_t step = (uint64_t)r->interval_ms * 1000000ull;
        if (take_sample (r, errp) < 0)
            return -1;
        while (r->next_sample_ns <= now_ns ())
            r->next_sample_ns += step;
    }
    return 0;
}

void prof_rec_stats (const struct prof_rec *r, struct prof_rec_stats *s)
{
    struct tracker_counts c;
    struct cnproc_seq_stats q;

    *s = r->st;
    if (r->ts_fd >= 0) {
        struct tsmatch_stats m;
        tsmatch_stats (r->tsm, &m);
        s->ts_missing = m.missing - r->st.ts_paused;
        s->ts_stale = m.stale;
        s->ts_ambiguous = m.ambiguous;
    }
    tracker_counts (r->tr, &c);
    cnproc_seq_stats (r->seq, &q);
    s->reordered = q.reordered;
    s->bad_cpu = q.bad_cpu;
    s->alive_processes = c.processes;
    s->alive_threads = c.threads;
}

/* Make every CPU this process may run on send one more event: a child
 * bound to it exits there.  A loss at the very end of a CPU's events is
 * only seen as a sequence gap when a later event of that CPU arrives;
 * these are those later events.  The children are not in the step.
 * Returns how many CPUs were reached. */
static int flush_cpus (void)
{
    cpu_set_t set;
    int n = 0;

    if (sched_getaffinity (0, sizeof (set), &set) < 0)
        return 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        pid_t pid;
        if (!CPU_ISSET (cpu, &set))
            continue;
        if ((pid = fork ()) < 0)
            break;
        if (pid == 0) {
            cpu_set_t one;
            CPU_ZERO (&one);
            CPU_SET (cpu, &one);
            /* async-signal-safe only: the caller may have threads */
            if (sched_setaffinity (0, sizeof (one), &one) == 0)
                sched_yield ();
            _exit (0);
        }
        while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
            ;
        n++;
    }
    return n;
}

int prof_rec_finish (struct prof_rec *r, int status, pin_error_t *errp)
{
    struct prof_rec_stats s;
    json_object *end;
    int rc = 0;

    if (!r)
        return 0;
    if (!r->failed) {
        /* drain (bounded: other processes of the machine never stop
         * sending), so that the buffer has room for the flush events,
         * flush, and drain again */
        for (int pass = 0; pass < 2; pass++) {
            int more = 1;
            for (int k = 0; rc == 0 && more && k < 64; k++) {
                int a = drain_cn (r, errp);
                int b = a < 0 ? 0 : drain_ts (r, errp);
                if (a < 0 || b < 0)
                    rc = -1;
                more = a > 0 || b > 0;
            }
            if (pass == 0)
                r->flushed_cpus = flush_cpus ();
        }
        /* the kernel sends a task's record before its exit event, so
         * an exit is settled once the taskstats socket, then the proc
         * connector's, were read empty after it: a few rounds at most */
        for (int i = 0; rc == 0 && r->ts_fd >= 0 && i < 20
                        && tsmatch_awaiting (r->tsm) > 0;
             i++) {
            if (i > 1)
                usleep (1000);
            if (drain_ts (r, errp) < 0 || drain_cn (r, errp) < 0)
                rc = -1;
        }
        /* what is left (sockets never read empty): settle with what is
         * in hand */
        tracker_exec_settle (r->tr, false);
        if (rc == 0 && settle (r, true, errp) < 0)
            rc = -1;
        if (rc == 0 && r->interval_ms && take_sample (r, errp) < 0)
            rc = -1;
    }
    tsmatch_expire (r->tsm, now_ns (), 0);
    prof_rec_stats (r, &s);
    end = json_object_new_object ();
    ADD (end, "t", I64 (now_ns ()));
    ADD (end, "status", I64 (status));
    ADD (end, "events", I64 (s.events));
    ADD (end, "step_events", I64 (s.step_events));
    ADD (end, "lost_seq", I64 (s.lost_seq));
    ADD (end, "enobufs", I64 (s.enobufs));
    ADD (end, "reordered", I64 (s.reordered));
    ADD (end, "bad_cpu", I64 (s.bad_cpu));
    ADD (end, "foreign", I64 (s.foreign));
    ADD (end, "untracked", I64 (s.untracked));
    ADD (end, "parse_errors", I64 (s.parse_errors));
    ADD (end, "taskstats_records", I64 (s.ts_records));
    ADD (end, "taskstats_missing", I64 (s.ts_missing));
    ADD (end, "taskstats_stale", I64 (s.ts_stale));
    ADD (end, "taskstats_ambiguous", I64 (s.ts_ambiguous));
    ADD (end, "taskstats_enobufs", I64 (s.ts_enobufs));
    ADD (end, "taskstats_paused", I64 (s.ts_paused));
    ADD (end, "taskstats_pauses", I64 (s.ts_pauses));
    ADD (end, "samples", I64 (s.samples));
    ADD (end, "flushed_cpus", I64 (r->flushed_cpus));
    ADD (end, "socket_drops", I64 (cnproc_socket_drops (r->cn_fd)));
    /* what recording cost: the CPU time of prof_rec_start, and of the
     * thread that processed from its first prof_rec_process() to here
     * (all of that thread's time: pin.so's watcher thread also runs
     * policy dynamic's confinement) */
    {
        uint64_t ns = r->start_cpu_ns;
        if (r->cpu_tid == this_tid ()) /* else: the start's only */
            ns += thread_cpu_ns () - r->cpu0_ns;
        ADD (end, "recorder_cpu_us", I64 (ns / 1000));
    }
    {
        json_object *a = json_object_new_object ();
        ADD (a, "processes", I64 (s.alive_processes));
        ADD (a, "threads", I64 (s.alive_threads));
        ADD (end, "alive", a);
    }
    if (prof_writer_close (r->w, r->failed ? NULL : end, rc < 0 ? NULL : errp)
        < 0)
        rc = -1;
    json_object_put (end);
    rec_free (r);
    return rc;
}
