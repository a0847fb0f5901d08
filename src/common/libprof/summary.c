/* summary.c - what `slurm-pin profile FILE` reports, from a profile */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "summary.h"

struct acc {
    struct prof_summary *s;
    json_object *cmds;     /* comm -> [exits, cpu_us, ts exits] */
    json_object *unpaired; /* "pid:t" of process exits -> comm,
                              until their task line comes */
    bool old_tasks;        /* task lines without the exit's t */
    uint64_t t_first, t_last;
    bool have_t;
    int64_t alive_p, alive_t;
    uint64_t *fork_t, *thread_t; /* creation times, for the rates */
    size_t nfork, nthread, capfork, capthread;
    bool nomem;
    uint64_t interval_ns;
    pin_error_t *errp;
    const char *path;
};

static void cmd_add (struct acc *a,
                     const char *comm,
                     uint64_t procs,
                     uint64_t cpu_us,
                     uint64_t ts_procs)
{
    json_object *v;
    char key[17];

    snprintf (key, sizeof (key), "%s", comm && *comm ? comm : "?");
    if (!json_object_object_get_ex (a->cmds, key, &v)) {
        v = json_object_new_array ();
        for (int i = 0; i < 3; i++)
            json_object_array_add (v, json_object_new_int64 (0));
        json_object_object_add (a->cmds, key, v);
    }
    json_object_array_put_idx (v,
                               0,
                               json_object_new_int64 (
                                   json_object_get_int64 (
                                       json_object_array_get_idx (v, 0))
                                   + (int64_t)procs));
    json_object_array_put_idx (v,
                               1,
                               json_object_new_int64 (
                                   json_object_get_int64 (
                                       json_object_array_get_idx (v, 1))
                                   + (int64_t)cpu_us));
    json_object_array_put_idx (v,
                               2,
                               json_object_new_int64 (
                                   json_object_get_int64 (
                                       json_object_array_get_idx (v, 2))
                                   + (int64_t)ts_procs));
}

static void push (struct acc *a,
                  uint64_t **v,
                  size_t *n,
                  size_t *cap,
                  uint64_t t)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 1024;
        uint64_t *p = realloc (*v, c * sizeof (*p));
        if (!p) {
            a->nomem = true;
            return;
        }
        *v = p;
        *cap = c;
    }
    (*v)[(*n)++] = t;
}

static int cmp_u64 (const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

/* Most of the times v[0..n) in any window of one second. */
static uint64_t window_peak (uint64_t *v, size_t n)
{
    uint64_t peak = 0;
    size_t lo = 0;

    if (n == 0)
        return 0; /* v may be NULL */
    qsort (v, n, sizeof (*v), cmp_u64);
    for (size_t hi = 0; hi < n; hi++) {
        while (v[hi] - v[lo] >= 1000000000ull)
            lo++;
        if (hi - lo + 1 > peak)
            peak = hi - lo + 1;
    }
    return peak;
}

static void note_time (struct acc *a, int64_t t)
{
    if (t < 0)
        return;
    if (!a->have_t) {
        a->t_first = a->t_last = (uint64_t)t;
        a->have_t = true;
    }
    if ((uint64_t)t < a->t_first)
        a->t_first = (uint64_t)t;
    if ((uint64_t)t > a->t_last)
        a->t_last = (uint64_t)t;
}

static void alive (struct acc *a, int dp, int dt)
{
    struct prof_summary *s = a->s;

    a->alive_p += dp;
    a->alive_t += dt;
    if (a->alive_p > 0 && (uint64_t)a->alive_p > s->peak_processes)
        s->peak_processes = (uint64_t)a->alive_p;
    if (a->alive_p + a->alive_t > 0
        && (uint64_t)(a->alive_p + a->alive_t) > s->peak_tasks)
        s->peak_tasks = (uint64_t)(a->alive_p + a->alive_t);
}

static int64_t get_sub (json_object *o, const char *obj, const char *key)
{
    json_object *v;

    if (!json_object_object_get_ex (o, obj, &v))
        return 0;
    return prof_get_int (v, key, 0);
}

/* The step cgroup's io.stat sums of a sample, when it has them. */
static void io_sample (struct prof_summary *s, json_object *o)
{
    static const char *const k[4] = {"io_rbytes",
                                     "io_wbytes",
                                     "io_rios",
                                     "io_wios"};
    json_object *cg;
    int64_t v[4];

    if (!json_object_object_get_ex (o, "cg", &cg)
        || !json_object_is_type (cg, json_type_object))
        return;
    s->cg_samples++;
    for (int i = 0; i < 4; i++)
        if ((v[i] = prof_get_int (cg, k[i], -1)) < 0)
            return;
    for (int i = 0; i < 4; i++) {
        if (s->io_samples == 0)
            s->io_first[i] = (uint64_t)v[i];
        s->io[i] = (uint64_t)v[i] > s->io_first[i]
                       ? (uint64_t)v[i] - s->io_first[i]
                       : 0;
    }
    s->io_samples++;
}

static int on_line (json_object *o, int lineno, void *arg)
{
    struct acc *a = arg;
    struct prof_summary *s = a->s;
    const char *type = prof_get_str (o, "type");
    int64_t t = prof_get_int (o, "t", -1);

    if (!strcmp (type, "header")) {
        int64_t iv = prof_get_int (o, "interval_ms", 0);
        a->interval_ns = iv > 0 ? (uint64_t)iv * 1000000 : 0;
        json_object *v;
        if (json_object_object_get_ex (o, "taskstats", &v))
            s->have_taskstats = json_object_get_boolean (v);
        return 0;
    }
    if (!strcmp (type, "note")) {
        json_object *v;
        if (json_object_object_get_ex (o, "bound_reached", &v)
            && json_object_get_boolean (v))
            s->bound_reached = true;
        return 0;
    }
    if (!strcmp (type, "end")) {
        s->have_end = true;
        s->exit_status = prof_get_int (o, "status", -1);
        s->lost_seq = (uint64_t)prof_get_int (o, "lost_seq", 0);
        s->enobufs = (uint64_t)prof_get_int (o, "enobufs", 0);
        s->untracked = (uint64_t)prof_get_int (o, "untracked", 0);
        s->reordered = (uint64_t)prof_get_int (o, "reordered", 0);
        s->foreign = (uint64_t)prof_get_int (o, "foreign", 0);
        {
            int64_t d = prof_get_int (o, "socket_drops", 0);
            s->socket_drops = d > 0 ? (uint64_t)d : 0;
        }
        s->dropped_lines = (uint64_t)prof_get_int (o, "dropped_lines", 0);
        s->task_missing = (uint64_t)prof_get_int (o, "taskstats_missing", 0);
        s->task_paused = (uint64_t)prof_get_int (o, "taskstats_paused", 0);
        s->task_pauses = (uint64_t)prof_get_int (o, "taskstats_pauses", 0);
        s->alive_processes = (uint64_t)get_sub (o, "alive", "processes");
        s->alive_threads = (uint64_t)get_sub (o, "alive", "threads");
        note_time (a, t);
        return 0;
    }
    if (t < 0 && strcmp (type, "task") != 0)
        goto unknown; /* other types without a time are not ours */
    note_time (a, t);
    if (!strcmp (type, "root")) {
        s->roots++;
        alive (a, 1, 0);
        return 0;
    }
    if (!strcmp (type, "fork") || !strcmp (type, "exit")) {
        json_object *th;
        bool thread;
        if (!json_object_object_get_ex (o, "thread", &th)) {
            errno = EINVAL;
            return errprintf (a->errp,
                              "%s:%d: %s line without \"thread\"",
                              a->path,
                              lineno,
                              type);
        }
        thread = json_object_get_boolean (th);
        if (type[1] == 'o') { /* fork */
            if (thread) {
                s->threads++;
                push (a,
                      &a->thread_t,
                      &a->nthread,
                      &a->capthread,
                      (uint64_t)t);
                alive (a, 0, 1);
            } else {
                s->processes++;
                push (a, &a->fork_t, &a->nfork, &a->capfork, (uint64_t)t);
                alive (a, 1, 0);
            }
        } else {
            if (thread) {
                s->thread_exits++;
                alive (a, 0, -1);
            } else {
                s->process_exits++;
                alive (a, -1, 0);
                cmd_add (a, prof_get_str (o, "comm"), 1, 0, 0);
                if (s->have_taskstats) {
                    char key[48];
                    json_object *c =
                        json_object_new_string (prof_get_str (o, "comm"));
                    snprintf (key,
                              sizeof (key),
                              "%lld:%lld",
                              (long long)prof_get_int (o, "pid", -1),
                              (long long)t);
                    if (!c || json_object_object_add (a->unpaired, key, c))
                        a->nomem = true;
                }
            }
        }
        return 0;
    }
    if (!strcmp (type, "exec")) {
        s->execs++;
        return 0;
    }
    if (!strcmp (type, "task")) {
        int64_t ut = prof_get_int (o, "utime_us", 0);
        int64_t st = prof_get_int (o, "stime_us", 0);
        int64_t pid = prof_get_int (o, "pid", 0);
        if (t < 0)
            a->old_tasks = true;
        else if (pid == prof_get_int (o, "tgid", -1)) {
            char key[48];
            snprintf (key,
                      sizeof (key),
                      "%lld:%lld",
                      (long long)pid,
                      (long long)t);
            json_object_object_del (a->unpaired, key);
        }
        s->task_records++;
        {
            static const char *const k[4] = {"read_bytes",
                                             "write_bytes",
                                             "rchar",
                                             "wchar"};
            for (int i = 0; i < 4; i++) {
                int64_t v = prof_get_int (o, k[i], -1);
                if (v >= 0) {
                    s->have_task_io = true;
                    s->task_io[i] += (uint64_t)v;
                }
            }
        }
        s->nvcsw += (uint64_t)prof_get_int (o, "nvcsw", 0);
        s->nivcsw += (uint64_t)prof_get_int (o, "nivcsw", 0);
        s->utime_us += (uint64_t)(ut > 0 ? ut : 0);
        s->stime_us += (uint64_t)(st > 0 ? st : 0);
        cmd_add (a,
                 prof_get_str (o, "comm"),
                 0,
                 (uint64_t)(ut > 0 ? ut : 0) + (uint64_t)(st > 0 ? st : 0),
                 prof_get_int (o, "pid", 0) == prof_get_int (o, "tgid", -1));
        return 0;
    }
    if (!strcmp (type, "sample")) {
        int64_t d = get_sub (o, "threads", "D");
        int64_t rss = prof_get_int (o, "rss_kb", -1);
        int64_t pss = prof_get_int (o, "pss_kb", -1);
        s->samples++;
        io_sample (s, o);
        if (d > 0) {
            s->d_state_s += (double)d * (double)a->interval_ns / 1e9;
            if ((uint64_t)d > s->peak_d_threads)
                s->peak_d_threads = (uint64_t)d;
        }
        if (rss >= 0 && pss >= 0) {
            if ((uint64_t)rss > s->peak_rss_kb) {
                s->peak_rss_kb = (uint64_t)rss;
                s->pss_at_peak_rss_kb = (uint64_t)pss;
            }
            if ((uint64_t)pss > s->peak_pss_kb)
                s->peak_pss_kb = (uint64_t)pss;
        }
        s->smaps_reads += (uint64_t)prof_get_int (o, "smaps_reads", 0);
        s->smaps_ns += (uint64_t)prof_get_int (o, "smaps_ns", 0);
        s->smaps_skipped += (uint64_t)prof_get_int (o, "smaps_skipped", 0);
        return 0;
    }
unknown:
    return 0; /* comm, lost, unknown types: nothing to add */
}

static int by_count (const void *x, const void *y)
{
    const struct prof_cmd_stat *a = x, *b = y;
    if (a->processes != b->processes)
        return a->processes < b->processes ? 1 : -1;
    return strcmp (a->comm, b->comm);
}

static int by_cpu (const void *x, const void *y)
{
    const struct prof_cmd_stat *a = x, *b = y;
    if (a->cpu_us != b->cpu_us)
        return a->cpu_us < b->cpu_us ? 1 : -1;
    return strcmp (a->comm, b->comm);
}

int prof_summary_read (const char *path,
                       struct prof_summary *s,
                       pin_error_t *errp)
{
    struct acc a = {.s = s, .errp = errp, .path = path};
    size_t i = 0, n;

    memset (s, 0, sizeof (*s));
    s->exit_status = -1;
    if (!(a.cmds = json_object_new_object ())
        || !(a.unpaired = json_object_new_object ())) {
        json_object_put (a.cmds);
        errno = ENOMEM;
        return errprintf (errp, "out of memory");
    }
    if (prof_read (path, on_line, &a, errp) != 0 || a.nomem) {
        if (a.nomem) {
            errno = ENOMEM;
            errprintf (errp, "%s: out of memory", path);
        }
        json_object_put (a.cmds);
        json_object_put (a.unpaired);
        free (a.fork_t);
        free (a.thread_t);
        return -1;
    }
    /* a process whose record never came still counts, by the command
     * its exit line has: the counts by command add up to the exits */
    if (!a.old_tasks) {
        json_object_object_foreach (a.unpaired, ukey, uval)
        {
            (void)ukey;
            cmd_add (&a, json_object_get_string (uval), 0, 0, 1);
        }
    }
    json_object_put (a.unpaired);
    s->fork_peak = window_peak (a.fork_t, a.nfork);
    s->thread_peak = window_peak (a.thread_t, a.nthread);
    free (a.fork_t);
    free (a.thread_t);
    if (a.have_t)
        s->duration_s = (double)(a.t_last - a.t_first) / 1e9;
    if (s->duration_s > 0)
        s->fork_mean = (double)s->processes / s->duration_s;
    n = (size_t)json_object_object_length (a.cmds);
    s->by_count = calloc (n ? n : 1, sizeof (*s->by_count));
    s->by_cpu = calloc (n ? n : 1, sizeof (*s->by_cpu));
    if (!s->by_count || !s->by_cpu) {
        json_object_put (a.cmds);
        prof_summary_free (s);
        errno = ENOMEM;
        return errprintf (errp, "out of memory");
    }
    json_object_object_foreach (a.cmds, key, val)
    {
        struct prof_cmd_stat *c = &s->by_count[i++];
        snprintf (c->comm, sizeof (c->comm), "%s", key);
        /* taskstats has the command of even a 1 ms process; an exit
         * line has what could be read from /proc at its exec */
        c->processes = (uint64_t)json_object_get_int64 (
            json_object_array_get_idx (val, s->have_taskstats ? 2 : 0));
        c->cpu_us = (uint64_t)json_object_get_int64 (
            json_object_array_get_idx (val, 1));
    }
    s->ncmds = n;
    memcpy (s->by_cpu, s->by_count, n * sizeof (*s->by_cpu));
    qsort (s->by_count, n, sizeof (*s->by_count), by_count);
    qsort (s->by_cpu, n, sizeof (*s->by_cpu), by_cpu);
    json_object_put (a.cmds);
    return 0;
}

void prof_summary_free (struct prof_summary *s)
{
    int saved = errno;

    if (s) {
        free (s->by_count);
        free (s->by_cpu);
        s->by_count = s->by_cpu = NULL;
        s->ncmds = 0;
    }
    errno = saved;
}

static json_object *cmd_list (const struct prof_cmd_stat *c,
                              size_t n,
                              size_t top,
                              bool cpu)
{
    json_object *arr = json_object_new_array ();

    for (size_t i = 0; arr && i < n && i < top; i++) {
        json_object *o;
        if (cpu ? c[i].cpu_us == 0 : c[i].processes == 0)
            break;
        o = json_object_new_object ();
        json_object_object_add (o,
                                "command",
                                json_object_new_string (c[i].comm));
        json_object_object_add (o,
                                "processes",
                                json_object_new_int64 (
                                    (int64_t)c[i].processes));
        json_object_object_add (o,
                                "cpu_s",
                                json_object_new_double ((double)c[i].cpu_us
                                                        / 1e6));
        json_object_array_add (arr, o);
    }
    return arr;
}

#define I64(x) json_object_new_int64 ((int64_t)(x))

json_object *prof_summary_json (const struct prof_summary *s, size_t top)
{
    json_object *o = json_object_new_object (), *lost, *ts, *mem;

    if (!o)
        return NULL;
    json_object_object_add (o,
                            "duration_s",
                            json_object_new_double (s->duration_s));
    json_object_object_add (o,
                            "exit_status",
                            s->exit_status >= 0 ? I64 (s->exit_status) : NULL);
    json_object_object_add (o, "roots", I64 (s->roots));
    json_object_object_add (o, "processes_created", I64 (s->processes));
    json_object_object_add (o, "threads_created", I64 (s->threads));
    json_object_object_add (o, "execs", I64 (s->execs));
    json_object_object_add (o, "process_exits", I64 (s->process_exits));
    json_object_object_add (o, "thread_exits", I64 (s->thread_exits));
    json_object_object_add (o, "peak_processes", I64 (s->peak_processes));
    json_object_object_add (o, "peak_tasks", I64 (s->peak_tasks));
    json_object_object_add (o, "fork_rate_peak_per_s", I64 (s->fork_peak));
    json_object_object_add (o,
                            "fork_rate_mean_per_s",
                            json_object_new_double (s->fork_mean));
    json_object_object_add (o, "thread_rate_peak_per_s", I64 (s->thread_peak));
    ts = json_object_new_object ();
    json_object_object_add (ts,
                            "available",
                            json_object_new_boolean (s->have_taskstats));
    json_object_object_add (ts, "records", I64 (s->task_records));
    json_object_object_add (ts, "missing", I64 (s->task_missing));
    json_object_object_add (ts, "paused", I64 (s->task_paused));
    json_object_object_add (ts, "pauses", I64 (s->task_pauses));
    json_object_object_add (ts, "voluntary_ctxsw", I64 (s->nvcsw));
    json_object_object_add (ts, "involuntary_ctxsw", I64 (s->nivcsw));
    json_object_object_add (ts,
                            "user_s",
                            json_object_new_double ((double)s->utime_us
                                                    / 1e6));
    json_object_object_add (ts,
                            "system_s",
                            json_object_new_double ((double)s->stime_us
                                                    / 1e6));
    json_object_object_add (o, "taskstats", ts);
    json_object_object_add (o, "samples", I64 (s->samples));
    json_object_object_add (o,
                            "d_state_thread_s",
                            json_object_new_double (s->d_state_s));
    json_object_object_add (o, "peak_d_threads", I64 (s->peak_d_threads));
    mem = json_object_new_object ();
    json_object_object_add (mem, "peak_rss_sum_kb", I64 (s->peak_rss_kb));
    json_object_object_add (mem,
                            "pss_at_peak_rss_kb",
                            I64 (s->pss_at_peak_rss_kb));
    json_object_object_add (mem, "peak_pss_kb", I64 (s->peak_pss_kb));
    json_object_object_add (mem, "smaps_reads", I64 (s->smaps_reads));
    json_object_object_add (mem, "smaps_skipped", I64 (s->smaps_skipped));
    json_object_object_add (mem,
                            "smaps_us_per_read",
                            json_object_new_double (
                                s->smaps_reads ? (double)s->smaps_ns / 1e3
                                                     / (double)s->smaps_reads
                                               : 0.0));
    json_object_object_add (o, "memory", mem);
    {
        json_object *io = json_object_new_object ();
        static const char *const ck[4] = {"cgroup_read_bytes",
                                          "cgroup_write_bytes",
                                          "cgroup_read_ios",
                                          "cgroup_write_ios"};
        static const char *const tk[4] = {"read_bytes",
                                          "write_bytes",
                                          "rchar",
                                          "wchar"};
        json_object_object_add (io, "cgroup_samples", I64 (s->cg_samples));
        json_object_object_add (io, "io_stat_samples", I64 (s->io_samples));
        for (int i = 0; i < 4 && s->io_samples; i++)
            json_object_object_add (io, ck[i], I64 (s->io[i]));
        json_object_object_add (io,
                                "taskstats_io",
                                json_object_new_boolean (s->have_task_io));
        for (int i = 0; i < 4 && s->have_task_io; i++)
            json_object_object_add (io, tk[i], I64 (s->task_io[i]));
        json_object_object_add (o, "io", io);
    }
    json_object_object_add (o,
                            "top_by_count",
                            cmd_list (s->by_count, s->ncmds, top, false));
    json_object_object_add (o,
                            "top_by_cpu",
                            cmd_list (s->by_cpu, s->ncmds, top, true));
    lost = json_object_new_object ();
    json_object_object_add (lost, "sequence_gaps", I64 (s->lost_seq));
    json_object_object_add (lost, "enobufs", I64 (s->enobufs));
    json_object_object_add (lost, "socket_drops", I64 (s->socket_drops));
    json_object_object_add (lost, "untracked", I64 (s->untracked));
    json_object_object_add (lost, "dropped_lines", I64 (s->dropped_lines));
    json_object_object_add (lost,
                            "bound_reached",
                            json_object_new_boolean (s->bound_reached));
    json_object_object_add (lost,
                            "end_line",
                            json_object_new_boolean (s->have_end));
    json_object_object_add (o, "lost", lost);
    json_object_object_add (o,
                            "alive_at_end_processes",
                            I64 (s->alive_processes));
    json_object_object_add (o, "alive_at_end_threads", I64 (s->alive_threads));
    return o;
}
