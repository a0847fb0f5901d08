/* profile.c - slurm-pin profile: record a command's processes, summarise
 *
 *   slurm-pin profile --record FILE [OPTIONS] -- CMD [ARGS...]
 *   slurm-pin profile [--json] [--top N] [--dir DIR] FILE|JOB[.STEP]
 *
 * Recording needs root (proc connector, taskstats).  JOB[.STEP] names the
 * profiles pin.so recorded (--pin-profile) in ProfileDir.
 * doc/profiling.md describes the file; slurm-pin-profile(1) the command.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <fcntl.h>
#include <hwloc.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmdopt.h"
#include "libconf/conf.h"
#include "libprof/profile.h"
#include "libprof/record.h"
#include "libprof/summary.h"
#include "profsrc.h"
#include "subcmd.h"

#define NAME "profile"

struct opts {
    const char *record;
    uint64_t interval_ms, max_bytes, rcvbuf, top;
    const char *cpus, *dir;
    bool pss, taskstats, json;
    unsigned ts_pause_rate; /* --taskstats=auto: PROF_TS_PAUSE_RATE */
};

static const struct cmdopt options[] = {
    CMDOPT_HEADING ("Recording options:"),
    {"record",
     'r',
     CMDOPT_REQUIRED,
     "FILE",
     "write the profile to FILE (replaced); the first\n"
     "operand after it starts CMD",
     CMDOPT_CMD},
    {"interval",
     'i',
     CMDOPT_REQUIRED,
     "MS",
     "sampling interval in ms, 0 for none (default 1000)",
     0},
    {"max-size",
     'm',
     CMDOPT_REQUIRED,
     "BYTES",
     "bound of the file (default 268435456)",
     0},
    {"cpus",
     'c',
     CMDOPT_REQUIRED,
     "LIST",
     "CPUs whose /proc/stat lines are sampled\n"
     "(default: the CPUs this command may run on)",
     0},
    {"rcvbuf",
     'b',
     CMDOPT_REQUIRED,
     "BYTES",
     "netlink receive buffer (default 67108864)",
     0},
    {"no-pss",
     'P',
     CMDOPT_NONE,
     NULL,
     "do not read smaps_rollup (PSS, RSS)",
     0},
    {"no-taskstats",
     'T',
     CMDOPT_NONE,
     NULL,
     "do not ask taskstats for exit records\n"
     "(the same as --taskstats=off)",
     0},
    {"taskstats",
     't',
     CMDOPT_REQUIRED,
     "auto|on|off",
     "taskstats exit records: auto pauses them while\n"
     "the processes end faster than 2000/s (default auto)",
     0},
    CMDOPT_HEADING ("Summary options:"),
    {"json",
     'j',
     CMDOPT_NONE,
     NULL,
     "print the summary as one JSON object",
     0},
    {"top",
     'n',
     CMDOPT_REQUIRED,
     "N",
     "commands in each top list (default 10)",
     0},
    {"dir",
     'd',
     CMDOPT_REQUIRED,
     "DIR",
     "where JOB[.STEP]'s profiles are (default:\n"
     "pin.conf's ProfileDir, " PIN_CONF_DEFAULT_PROFILE_DIR ")",
     0},
    CMDOPT_END,
};

static const struct cmdopt_spec spec = {
    .name = NAME,
    .usage =
        "Usage: slurm-pin profile --record FILE [OPTIONS] -- CMD [ARGS...]\n"
        "       slurm-pin profile [--json] [--top N] [--dir DIR] "
        "FILE|JOB[.STEP]\n"
        "\n"
        "Record every fork, exec and exit of CMD and its descendants (proc\n"
        "connector, taskstats; root only) with samples of their states, "
        "context\n"
        "switches, PSS and RSS and per-CPU usage; or summarise a recorded "
        "file,\n"
        "or the profiles of a job step run with srun/sbatch --pin-profile.\n",
    .footer =
        "The exit status of --record is CMD's (128+N if killed by signal N).\n"
        "See slurm-pin-profile(1) and doc/profiling.md.\n",
    .usage_status = 1,
    .tables = {options, NULL},
};

static int parse_num (const char *opt,
                      const char *s,
                      uint64_t min,
                      uint64_t max,
                      uint64_t *out)
{
    if (cmd_parse_u64 (s, min, max, out) < 0) {
        cmd_error (NAME,
                   "%s=%s: expected an integer from %" PRIu64 " to %" PRIu64,
                   opt,
                   s,
                   min,
                   max);
        return -1;
    }
    return 0;
}

/* Options anywhere on the line, as sacct and GNU tools take them, except
 * after --record's CMD (CMDOPT_CMD): the first operand after --record
 * starts CMD, whose options are its own; --record after an operand is an
 * error (it would make the operand a command).  0 with the operands in
 * p; -1 with the exit status in *status. */
static int parse_opts (struct cmdopt_parser *p,
                       int argc,
                       char **argv,
                       struct opts *o,
                       int *status)
{
    const char *arg;
    int c;

    memset (o, 0, sizeof (*o));
    o->interval_ms = 1000;
    o->max_bytes = 256ull << 20;
    o->rcvbuf = 64ull << 20;
    o->top = 10;
    o->pss = o->taskstats = true;
    o->ts_pause_rate = PROF_TS_PAUSE_RATE;
    *status = 1;
    if (cmdopt_init (p, &spec, argc, argv) < 0) {
        cmd_error (NAME, "out of memory");
        return -1;
    }
    while ((c = cmdopt_next (p, &arg)) > 0) {
        switch (c) {
            case 'r':
                o->record = arg;
                break;
            case 'i':
                if (parse_num ("--interval", arg, 0, 3600000, &o->interval_ms)
                    < 0)
                    return -1;
                break;
            case 'm':
                if (parse_num ("--max-size",
                               arg,
                               PROF_MIN_BYTES,
                               UINT64_MAX / 2,
                               &o->max_bytes)
                    < 0)
                    return -1;
                break;
            case 'b':
                if (parse_num ("--rcvbuf", arg, 65536, 1u << 30, &o->rcvbuf)
                    < 0)
                    return -1;
                break;
            case 'c':
                o->cpus = arg;
                break;
            case 'P':
                o->pss = false;
                break;
            case 'T':
                o->taskstats = false;
                break;
            case 't':
                if (!strcmp (arg, "auto") || !strcmp (arg, "on")) {
                    o->taskstats = true;
                    o->ts_pause_rate =
                        arg[0] == 'a' ? PROF_TS_PAUSE_RATE : 0;
                } else if (!strcmp (arg, "off"))
                    o->taskstats = false;
                else {
                    cmd_error (NAME,
                               "--taskstats=%s: expected auto, on or off",
                               arg);
                    return -1;
                }
                break;
            case 'j':
                o->json = true;
                break;
            case 'n':
                if (parse_num ("--top", arg, 1, 1000, &o->top) < 0)
                    return -1;
                break;
            case 'd':
                o->dir = arg;
                break;
        }
    }
    if (c < 0) {
        *status = p->status;
        return -1;
    }
    return 0;
}

/* ---- recording --------------------------------------------------------- */

/* SIGTERM and SIGHUP go on to CMD, so that the recorder sees it end and
 * still writes the end of the profile. */
static volatile sig_atomic_t child_pid;

static void forward_signal (int sig)
{
    if (child_pid > 0)
        kill ((pid_t)child_pid, sig);
}

static hwloc_bitmap_t own_cpus (void)
{
    hwloc_bitmap_t b = hwloc_bitmap_alloc ();
    cpu_set_t set;

    if (b && sched_getaffinity (0, sizeof (set), &set) == 0)
        for (int i = 0; i < CPU_SETSIZE; i++)
            if (CPU_ISSET (i, &set))
                hwloc_bitmap_set (b, (unsigned)i);
    return b;
}

static int record (const struct opts *o, int argc, char **argv)
{
    struct prof_rec_opts ro = {0};
    struct prof_rec *r;
    struct prof_rec_stats st;
    json_object *hdr, *cmd;
    hwloc_bitmap_t cpus = NULL;
    pin_error_t e = {""};
    int go[2], status = -1, rc, pidfd;
    pid_t pid;
    char c = 'x';

    if (geteuid () != 0) {
        cmd_error (NAME, "--record needs root (proc connector, taskstats)");
        return 1;
    }
    if (o->cpus) {
        cpus = hwloc_bitmap_alloc ();
        if (!cpus || hwloc_bitmap_list_sscanf (cpus, o->cpus) < 0
            || hwloc_bitmap_weight (cpus) < 0) {
            cmd_error (NAME,
                       "--cpus=%s: expected a finite CPU list such "
                       "as 0-3,8",
                       o->cpus);
            hwloc_bitmap_free (cpus);
            return 1;
        }
    } else if (!(cpus = own_cpus ())) {
        cmd_error (NAME, "out of memory");
        return 1;
    }
    if (pipe2 (go, O_CLOEXEC) < 0) {
        cmd_error (NAME, "pipe: %s", strerror (errno));
        hwloc_bitmap_free (cpus);
        return 1;
    }
    /* the child waits until the collector listens, so that not one of
     * its forks is missed */
    if ((pid = fork ()) < 0) {
        cmd_error (NAME, "fork: %s", strerror (errno));
        hwloc_bitmap_free (cpus);
        return 1;
    }
    if (pid == 0) {
        close (go[1]);
        if (read (go[0], &c, 1) != 1)
            _exit (127);
        close (go[0]);
        execvp (argv[0], argv);
        cmd_error (NAME, "%s: cannot run: %s", argv[0], strerror (errno));
        _exit (127);
    }
    close (go[0]);
    hdr = json_object_new_object ();
    cmd = json_object_new_array ();
    for (int i = 0; i < argc; i++)
        json_object_array_add (cmd, json_object_new_string (argv[i]));
    json_object_object_add (hdr, "command", cmd);
    json_object_object_add (hdr,
                            "recorder",
                            json_object_new_string ("slurm-pin "
                                                    "profile"
                                                    " " PACKAGE_VERSION));
    ro.path = o->record;
    ro.max_bytes = o->max_bytes;
    ro.interval_ms = (unsigned)o->interval_ms;
    ro.cpus = cpus;
    ro.pss = o->pss;
    ro.taskstats = o->taskstats;
    ro.ts_pause_rate = o->ts_pause_rate;
    ro.rcvbuf = (int)o->rcvbuf;
    ro.header = hdr;
    r = prof_rec_start (&ro, &e);
    json_object_put (hdr);
    hwloc_bitmap_free (cpus);
    if (!r || prof_rec_add_root (r, pid, &e) < 0) {
        cmd_error (NAME, "%s", e.text);
        close (go[1]); /* the child exits without running CMD */
        waitpid (pid, NULL, 0);
        prof_rec_finish (r, -1, NULL);
        return 1;
    }
    signal (SIGINT, SIG_IGN);  /* the terminal's ^C goes to CMD too: */
    signal (SIGQUIT, SIG_IGN); /* stay to write the end of the profile */
    {
        struct sigaction sa;
        memset (&sa, 0, sizeof (sa));
        sa.sa_handler = forward_signal;
        sa.sa_flags = SA_RESTART;
        sigemptyset (&sa.sa_mask);
        child_pid = pid;
        sigaction (SIGTERM, &sa, NULL);
        sigaction (SIGHUP, &sa, NULL);
    }
    if (write (go[1], &c, 1) != 1) {
        cmd_error (NAME, "cannot start %s: %s", argv[0], strerror (errno));
        kill (pid, SIGKILL);
    }
    close (go[1]);
    /* CMD's end wakes the loop through a pidfd (Linux >= 5.3); without
     * one, the loop looks every 50 ms */
    pidfd = (int)syscall (SYS_pidfd_open, pid, 0);
    rc = 0;
    for (;;) {
        struct pollfd fds[5];
        int n = prof_rec_pollfds (r, fds, 4);
        int t = prof_rec_timeout_ms (r);
        pid_t w;

        if (pidfd >= 0)
            fds[n++] = (struct pollfd){.fd = pidfd, .events = POLLIN};
        else if (t < 0 || t > 50)
            t = 50;
        if (poll (fds, (nfds_t)n, t) < 0 && errno != EINTR) {
            cmd_error (NAME, "poll: %s", strerror (errno));
            rc = -1;
        }
        if (rc == 0 && prof_rec_process (r, &e) < 0) {
            cmd_error (NAME, "%s", e.text);
            rc = -1;
        }
        w = waitpid (pid, &status, WNOHANG);
        if (w == pid || (w < 0 && errno != EINTR))
            break;
    }
    if (pidfd >= 0)
        close (pidfd);
    prof_rec_stats (r, &st);
    if (prof_rec_finish (r, status, &e) < 0) {
        cmd_error (NAME, "%s", e.text);
        rc = -1;
    }
    if (st.lost_seq || st.enobufs || st.untracked)
        cmd_error (NAME,
                   "%s: events were lost (%" PRIu64
                   " sequence gaps, "
                   "%" PRIu64 " buffer overflows, %" PRIu64
                   " untracked); "
                   "the summary reports them",
                   o->record,
                   st.lost_seq,
                   st.enobufs,
                   st.untracked);
    if (rc < 0)
        return 1;
    if (WIFEXITED (status))
        return WEXITSTATUS (status);
    if (WIFSIGNALED (status))
        return 128 + WTERMSIG (status);
    return 1;
}

/* ---- summary ----------------------------------------------------------- */

static void print_summary (const char *path,
                           const struct prof_summary *s,
                           size_t top)
{
    printf ("profile            %s\n", cmd_text (path));
    printf ("duration           %.3f s", s->duration_s);
    if (s->exit_status >= 0)
        printf (" (wait status %" PRId64 ")", s->exit_status);
    printf ("\n");
    printf ("processes created  %" PRIu64 " (+%" PRIu64 " root), peak %" PRIu64
            " alive at once\n",
            s->processes,
            s->roots,
            s->peak_processes);
    printf ("threads created    %" PRIu64 ", peak %" PRIu64
            " tasks (processes + threads) alive at once\n",
            s->threads,
            s->peak_tasks);
    printf ("execs              %" PRIu64 "\n", s->execs);
    printf ("fork rate          peak %" PRIu64
            "/s, mean %.1f/s "
            "(threads: peak %" PRIu64 "/s)\n",
            s->fork_peak,
            s->fork_mean,
            s->thread_peak);
    if (s->have_taskstats) {
        printf ("context switches   %" PRIu64 " voluntary, %" PRIu64
                " involuntary (taskstats, %" PRIu64 " ended tasks",
                s->nvcsw,
                s->nivcsw,
                s->task_records);
        if (s->task_missing)
            printf ("; %" PRIu64 " more without a record", s->task_missing);
        printf (")\n");
        printf ("CPU time           user %.3f s, system %.3f s (taskstats)\n",
                (double)s->utime_us / 1e6,
                (double)s->stime_us / 1e6);
        if (s->task_paused || s->task_pauses)
            printf ("                   taskstats paused %" PRIu64
                    " times in fork storms: %" PRIu64
                    " ended tasks have no CPU time or\n"
                    "                   context switches of their own; "
                    "%s\n",
                    s->task_pauses,
                    s->task_paused,
                    s->cg_samples ? "the step cgroup's cpu.stat still "
                                    "holds their CPU time"
                                  : "no step cgroup was sampled to hold "
                                    "their CPU time");
    } else {
        printf ("context switches   not recorded (no taskstats)\n");
    }
    printf ("D state            %.3f thread-seconds, peak %" PRIu64
            " threads (%" PRIu64 " samples)\n",
            s->d_state_s,
            s->peak_d_threads,
            s->samples);
    if (s->smaps_reads)
        printf ("memory             summed RSS peak %" PRIu64
                " KiB, PSS "
                "then %" PRIu64 " KiB (%.0f%%); PSS peak %" PRIu64
                " KiB; smaps_rollup %.0f us per read\n",
                s->peak_rss_kb,
                s->pss_at_peak_rss_kb,
                s->peak_rss_kb ? 100.0 * (double)s->pss_at_peak_rss_kb
                                     / (double)s->peak_rss_kb
                               : 0.0,
                s->peak_pss_kb,
                (double)s->smaps_ns / 1e3 / (double)s->smaps_reads);
    else
        printf ("memory             not sampled\n");
    if (s->smaps_skipped)
        printf ("                   %" PRIu64
                " process reads skipped over "
                "the time budget (a tenth of the interval per sample)\n",
                s->smaps_skipped);
    if (s->io_samples)
        printf ("I/O (cgroup)       read %.1f MiB in %" PRIu64
                " operations, written %.1f MiB in %" PRIu64
                " (io.stat, %" PRIu64 " samples)\n",
                (double)s->io[0] / 1048576,
                s->io[2],
                (double)s->io[1] / 1048576,
                s->io[3],
                s->io_samples);
    else if (s->cg_samples)
        printf (
            "I/O (cgroup)       not recorded: the step's cgroup has no "
            "io.stat (no io controller delegated to it)\n");
    else
        printf ("I/O (cgroup)       not recorded: no step cgroup sampled\n");
    if (s->have_task_io)
        printf (
            "I/O (processes)    storage read %.1f MiB, written %.1f MiB; "
            "read() %.1f MiB, write() %.1f MiB (taskstats, ended "
            "tasks)\n",
            (double)s->task_io[0] / 1048576,
            (double)s->task_io[1] / 1048576,
            (double)s->task_io[2] / 1048576,
            (double)s->task_io[3] / 1048576);
    printf ("top commands by processes:\n");
    for (size_t i = 0; i < s->ncmds && i < top; i++)
        if (s->by_count[i].processes)
            printf ("  %8" PRIu64 "  %s\n",
                    s->by_count[i].processes,
                    cmd_text (s->by_count[i].comm));
    if (s->have_taskstats) {
        printf ("top commands by CPU time:\n");
        for (size_t i = 0; i < s->ncmds && i < top; i++)
            if (s->by_cpu[i].cpu_us)
                printf ("  %8.3f s  %s\n",
                        (double)s->by_cpu[i].cpu_us / 1e6,
                        cmd_text (s->by_cpu[i].comm));
    }
    if (!s->have_end)
        printf (
            "lost events        UNKNOWN: the file has no end line "
            "(recording cut short)\n");
    else if (s->lost_seq || s->enobufs || s->socket_drops || s->untracked
             || s->dropped_lines || s->bound_reached)
        printf ("lost events        %" PRIu64 " sequence gaps, %" PRIu64
                " buffer overflows (%" PRIu64 " messages dropped), %" PRIu64
                " untracked, %" PRIu64 " lines over the size bound\n",
                s->lost_seq,
                s->enobufs,
                s->socket_drops,
                s->untracked,
                s->dropped_lines);
    else
        printf ("lost events        none\n");
    if (s->alive_processes || s->alive_threads)
        printf ("still running      %" PRIu64 " processes, %" PRIu64
                " threads when the recording ended\n",
                s->alive_processes,
                s->alive_threads);
}

static int summary (const struct opts *o, const char *path)
{
    struct prof_summary s;
    pin_error_t e = {""};

    if (prof_summary_read (path, &s, &e) < 0) {
        cmd_error (NAME, "%s", e.text);
        return 1;
    }
    if (o->json) {
        if (cmd_print_json (NAME, prof_summary_json (&s, o->top), stdout)
            < 0) {
            prof_summary_free (&s);
            return 1;
        }
    } else {
        print_summary (path, &s, o->top);
    }
    prof_summary_free (&s);
    return cmd_flush_stdout (NAME) < 0 ? 1 : 0;
}

/* The sums over the nodes of one step. */
struct total {
    size_t nodes;
    double duration_s;
    uint64_t processes, roots, threads, execs, task_records, task_missing;
    uint64_t task_paused;
    uint64_t nvcsw, nivcsw, utime_us, stime_us, samples;
    uint64_t io_nodes, io[4], task_io[4];
    uint64_t lost, no_end;
    bool taskstats, task_io_seen;
};

static void total_add (struct total *t, const struct prof_summary *s)
{
    uint64_t lost = s->lost_seq + s->enobufs + s->untracked + s->dropped_lines;

    t->nodes++;
    if (s->duration_s > t->duration_s)
        t->duration_s = s->duration_s;
    t->processes += s->processes;
    t->roots += s->roots;
    t->threads += s->threads;
    t->execs += s->execs;
    t->task_records += s->task_records;
    t->task_missing += s->task_missing;
    t->task_paused += s->task_paused;
    t->nvcsw += s->nvcsw;
    t->nivcsw += s->nivcsw;
    t->utime_us += s->utime_us;
    t->stime_us += s->stime_us;
    t->samples += s->samples;
    t->taskstats = t->taskstats || s->have_taskstats;
    if (s->io_samples) {
        t->io_nodes++;
        for (int i = 0; i < 4; i++)
            t->io[i] += s->io[i];
    }
    if (s->have_task_io) {
        t->task_io_seen = true;
        for (int i = 0; i < 4; i++)
            t->task_io[i] += s->task_io[i];
    }
    t->lost += lost;
    t->no_end += !s->have_end;
}

static void total_print (const struct profdir_entry *e, const struct total *t)
{
    printf ("\nstep %u.%s, total over %zu nodes\n",
            e->job,
            cmd_text (e->step),
            t->nodes);
    printf ("longest duration   %.3f s\n", t->duration_s);
    printf ("processes created  %" PRIu64 " (+%" PRIu64 " roots)\n",
            t->processes,
            t->roots);
    printf ("threads created    %" PRIu64 "\n", t->threads);
    printf ("execs              %" PRIu64 "\n", t->execs);
    if (t->taskstats) {
        printf ("context switches   %" PRIu64 " voluntary, %" PRIu64
                " involuntary (taskstats, %" PRIu64 " ended tasks)\n",
                t->nvcsw,
                t->nivcsw,
                t->task_records);
        printf ("CPU time           user %.3f s, system %.3f s (taskstats)\n",
                (double)t->utime_us / 1e6,
                (double)t->stime_us / 1e6);
        if (t->task_paused)
            printf ("                   %" PRIu64
                    " ended tasks without a record: taskstats paused "
                    "in fork storms\n",
                    t->task_paused);
    }
    if (t->io_nodes)
        printf ("I/O (cgroup)       read %.1f MiB in %" PRIu64
                " operations, written %.1f MiB in %" PRIu64
                " (io.stat of %" PRIu64 " of %zu nodes)\n",
                (double)t->io[0] / 1048576,
                t->io[2],
                (double)t->io[1] / 1048576,
                t->io[3],
                t->io_nodes,
                t->nodes);
    else
        printf ("I/O (cgroup)       not recorded on any node\n");
    if (t->task_io_seen)
        printf (
            "I/O (processes)    storage read %.1f MiB, written %.1f MiB; "
            "read() %.1f MiB, write() %.1f MiB (taskstats)\n",
            (double)t->task_io[0] / 1048576,
            (double)t->task_io[1] / 1048576,
            (double)t->task_io[2] / 1048576,
            (double)t->task_io[3] / 1048576);
    if (t->no_end)
        printf ("lost events        UNKNOWN on %" PRIu64
                " nodes (no end line); %" PRIu64 " on the others\n",
                t->no_end,
                t->lost);
    else
        printf ("lost events        %" PRIu64 "\n", t->lost);
}

static json_object *total_json (const struct profdir_entry *e,
                                const struct total *t)
{
    json_object *o = json_object_new_object ();
    static const char *const ck[4] = {"cgroup_read_bytes",
                                      "cgroup_write_bytes",
                                      "cgroup_read_ios",
                                      "cgroup_write_ios"};
    static const char *const tk[4] = {"read_bytes",
                                      "write_bytes",
                                      "rchar",
                                      "wchar"};

    if (!o)
        return NULL;
#define I64(v) json_object_new_int64 ((int64_t)(v))
    json_object_object_add (o, "total", json_object_new_boolean (1));
    json_object_object_add (o, "job", I64 (e->job));
    json_object_object_add (o, "step", json_object_new_string (e->step));
    json_object_object_add (o, "nodes", I64 (t->nodes));
    json_object_object_add (o,
                            "duration_s",
                            json_object_new_double (t->duration_s));
    json_object_object_add (o, "roots", I64 (t->roots));
    json_object_object_add (o, "processes_created", I64 (t->processes));
    json_object_object_add (o, "threads_created", I64 (t->threads));
    json_object_object_add (o, "execs", I64 (t->execs));
    json_object_object_add (o, "task_records", I64 (t->task_records));
    json_object_object_add (o, "voluntary_ctxsw", I64 (t->nvcsw));
    json_object_object_add (o, "involuntary_ctxsw", I64 (t->nivcsw));
    json_object_object_add (o, "utime_us", I64 (t->utime_us));
    json_object_object_add (o, "stime_us", I64 (t->stime_us));
    json_object_object_add (o, "io_stat_nodes", I64 (t->io_nodes));
    for (int i = 0; i < 4 && t->io_nodes; i++)
        json_object_object_add (o, ck[i], I64 (t->io[i]));
    for (int i = 0; i < 4 && t->task_io_seen; i++)
        json_object_object_add (o, tk[i], I64 (t->task_io[i]));
    json_object_object_add (o, "lost_events", I64 (t->lost));
    json_object_object_add (o, "nodes_without_end", I64 (t->no_end));
#undef I64
    return o;
}

/* FILE: one summary (an object with --json).  JOB[.STEP]: one per step
 * and node, each headed by its step and node, and after the nodes of a
 * step that ran on several, their total (an array with --json; a total
 * is an element with "total": true). */
/* After the nodes of one step: their total, when more than one. */
static int flush_total (const struct opts *o,
                        const struct profdir_entry *e,
                        const struct total *t,
                        json_object *all)
{
    json_object *j;

    if (t->nodes < 2)
        return 0;
    if (!o->json) {
        total_print (e, t);
        return 0;
    }
    if (!(j = total_json (e, t)) || json_object_array_add (all, j) < 0) {
        json_object_put (j);
        cmd_error (NAME, "out of memory");
        return -1;
    }
    return 0;
}

static int summaries (const struct opts *o, const char *arg)
{
    struct profdir_entry *v;
    size_t n;
    bool is_job;
    json_object *all = NULL;
    struct total tot;
    int rc = 0;

    memset (&tot, 0, sizeof (tot));
    if (profsrc_resolve (NAME, arg, o->dir, &v, &n, &is_job) < 0)
        return 1;
    if (!is_job) {
        rc = summary (o, v[0].path);
        profdir_free (v, n);
        return rc;
    }
    if (o->json && !(all = json_object_new_array ())) {
        cmd_error (NAME, "out of memory");
        profdir_free (v, n);
        return 1;
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        struct prof_summary s;
        pin_error_t e = {""};

        if (i > 0 && strcmp (v[i].step, v[i - 1].step) != 0) {
            if (flush_total (o, &v[i - 1], &tot, all) < 0) {
                rc = 1;
                break;
            }
            memset (&tot, 0, sizeof (tot));
        }
        if (prof_summary_read (v[i].path, &s, &e) < 0) {
            cmd_error (NAME, "%s", e.text);
            rc = 1;
            break;
        }
        if (o->json) {
            json_object *one = prof_summary_json (&s, o->top);
            if (!one
                || cmd_json_add (one,
                                 "job",
                                 json_object_new_int64 (v[i].job),
                                 false)
                       < 0
                || cmd_json_add (one,
                                 "step",
                                 json_object_new_string (v[i].step),
                                 false)
                       < 0
                || cmd_json_add (one,
                                 "node",
                                 json_object_new_string (v[i].node),
                                 false)
                       < 0
                || cmd_json_add (one,
                                 "path",
                                 json_object_new_string (v[i].path),
                                 false)
                       < 0
                || json_object_array_add (all, one) < 0)
                rc = 1;
        } else {
            printf ("%sstep %u.%s on %s\n",
                    i ? "\n" : "",
                    v[i].job,
                    cmd_text (v[i].step),
                    cmd_text (v[i].node));
            print_summary (v[i].path, &s, o->top);
        }
        total_add (&tot, &s);
        prof_summary_free (&s);
    }
    if (rc == 0 && n > 0 && flush_total (o, &v[n - 1], &tot, all) < 0)
        rc = 1;
    if (o->json && rc == 0 && cmd_print_json (NAME, all, stdout) < 0)
        rc = 1;
    else if (o->json && rc != 0)
        json_object_put (all);
    profdir_free (v, n);
    if (rc == 0 && cmd_flush_stdout (NAME) < 0)
        rc = 1;
    return rc;
}

int cmd_profile (int argc, char **argv)
{
    struct cmdopt_parser p;
    struct opts o;
    int rc;

    if (parse_opts (&p, argc, argv, &o, &rc) < 0)
        goto out;
    if (o.record) {
        if (p.noperands == 0) {
            cmdopt_usage_error (&p, "--record: no command given");
            rc = p.status;
            goto out;
        }
        rc = record (&o, p.noperands, p.operands);
        goto out;
    }
    if (cmdopt_one_operand (&p, "profile FILE or JOB[.STEP]") < 0) {
        rc = p.status;
        goto out;
    }
    rc = summaries (&o, p.operands[0]);
out:
    cmdopt_fini (&p);
    return rc;
}
