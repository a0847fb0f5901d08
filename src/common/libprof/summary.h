/* summary.h - what `slurm-pin profile FILE` reports, from a profile */
#ifndef PIN_SUMMARY_H
#define PIN_SUMMARY_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "libutil/errprintf.h"

struct prof_cmd_stat {
    char comm[17];
    uint64_t processes; /* processes that ended with this command */
    uint64_t cpu_us;    /* user + system of its tasks (taskstats) */
};

struct prof_summary {
    double duration_s; /* first to last time stamp */
    uint64_t roots;
    uint64_t processes; /* created (forks), roots not counted */
    uint64_t threads;   /* created */
    uint64_t execs, process_exits, thread_exits;
    uint64_t peak_processes; /* alive at once, roots included */
    uint64_t peak_tasks;     /* processes + threads alive at once */
    uint64_t fork_peak;      /* most process forks in any 1 s */
    double fork_mean;        /* process forks per second */
    uint64_t thread_peak;    /* most thread creations in any 1 s */
    bool have_taskstats;
    uint64_t task_records;       /* taskstats exit records */
    uint64_t task_missing;       /* step exits without their record */
    uint64_t task_paused;        /* ... because taskstats was paused in a
                                    fork storm (--taskstats=auto) */
    uint64_t task_pauses;        /* times it was paused */
    uint64_t nvcsw, nivcsw;      /* taskstats: exact over ended tasks */
    uint64_t utime_us, stime_us; /* taskstats */
    uint64_t samples;
    double d_state_s; /* thread-seconds in D (sampled) */
    uint64_t peak_d_threads;
    uint64_t peak_rss_kb, pss_at_peak_rss_kb; /* summed over processes */
    uint64_t peak_pss_kb;
    uint64_t smaps_reads;   /* smaps_rollup files read */
    uint64_t smaps_ns;      /* time spent reading them */
    uint64_t smaps_skipped; /* not read: over the time budget */
    /* I/O: the step cgroup's io.stat sums (rbytes, wbytes, rios, wios),
     * last sample less the first; io_samples 0 with cg_samples > 0: the
     * cgroup had no io.stat (no io controller) */
    uint64_t cg_samples, io_samples;
    uint64_t io[4], io_first[4];
    /* the ended tasks' read_bytes, write_bytes, rchar, wchar (taskstats) */
    bool have_task_io;
    uint64_t task_io[4];
    uint64_t lost_seq, enobufs, untracked, reordered, foreign;
    uint64_t socket_drops; /* the kernel's drop count of the socket */
    uint64_t dropped_lines;
    bool bound_reached, have_end;
    int64_t exit_status; /* wait status of the root, -1 unknown */
    uint64_t alive_processes, alive_threads; /* at the end */
    struct prof_cmd_stat *by_count;          /* sorted, most processes first */
    struct prof_cmd_stat *by_cpu;            /* sorted, most CPU first */
    size_t ncmds;
};

/* Read the profile at `path` and summarise it into *s (free with
 * prof_summary_free).  -1 with errp if the file cannot be read (see
 * prof_read) or a line of a known type lacks a field it must have. */
int prof_summary_read (const char *path,
                       struct prof_summary *s,
                       pin_error_t *errp);
void prof_summary_free (struct prof_summary *s);

/* The summary as a JSON object (caller puts it); `top` commands in each
 * list.  NULL on ENOMEM. */
json_object *prof_summary_json (const struct prof_summary *s, size_t top);

#endif /* !PIN_SUMMARY_H */
