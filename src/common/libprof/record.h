/* record.h - record a profile of a set of processes and their descendants
 *
 * The engine behind `slurm-pin profile --record` (and, later, the step
 * watcher of pin.so): listens on the proc connector (and taskstats when
 * the kernel has it), follows the descendants of the roots it is given
 * (tracker.h), samples /proc at an interval (procfs.h) and writes every
 * event of those processes and every sample to a bounded profile file
 * (profile.h).  Single-threaded: the caller polls the descriptors of
 * prof_rec_pollfds() and calls prof_rec_process() when one is readable
 * or the timeout of prof_rec_timeout_ms() has passed.  Needs root.
 */
#ifndef PIN_RECORD_H
#define PIN_RECORD_H

#include <hwloc.h>
#include <json-c/json.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "libutil/errprintf.h"

struct prof_rec_opts {
    const char *path;          /* the profile file */
    uint64_t max_bytes;        /* its bound (>= PROF_MIN_BYTES) */
    unsigned interval_ms;      /* sampling interval; 0: no samples */
    hwloc_const_bitmap_t cpus; /* CPUs whose /proc/stat lines are
                                  sampled; NULL: none */
    bool pss;                  /* read smaps_rollup at each sample */
    bool taskstats;            /* also taskstats exit records */
    unsigned ts_pause_rate;    /* taskstats auto: the step's exits per
                                  second (over PROF_TS_WINDOW_MS) above
                                  which taskstats is deregistered until
                                  the rate falls under half of it; those
                                  exits get no record (counted, said in
                                  "taskstats" lines).  0: never (on) */
    int rcvbuf;                /* socket receive buffer, bytes */
    json_object *header;       /* extra header fields (borrowed), or NULL */
    const char *cgroup_dir;    /* the step's cgroup v2 directory: its
                                  cpu.stat, memory.current and memory.stat
                                  go into each sample ("cg"); NULL: none */
    bool share;                /* let reader_uid read the file (an ACL;
                                  profile.h prof_writer_share) */
    uid_t reader_uid;
    uint64_t keep_free; /* bytes the file system keeps free (the
                           journal's room); 0: no check */
};

struct prof_rec_stats {
    uint64_t events;      /* proc connector events received */
    uint64_t step_events; /* ... of the tracked processes */
    uint64_t lost_seq;    /* sequence gaps (all processes) */
    uint64_t enobufs;     /* receive buffer overflows */
    uint64_t reordered, foreign, untracked, bad_cpu;
    uint64_t parse_errors; /* datagrams that could not be parsed */
    uint64_t ts_records;   /* taskstats records written */
    uint64_t ts_missing;   /* step exits whose record never came */
    uint64_t ts_stale;     /* records of an earlier holder of a pid */
    uint64_t ts_ambiguous; /* records given to no one after a loss */
    uint64_t ts_enobufs;
    uint64_t ts_paused; /* step exits without a record: taskstats was
                           paused (ts_pause_rate) when they ended */
    uint64_t ts_pauses; /* times taskstats was paused */
    uint64_t samples;
    uint64_t alive_processes, alive_threads;
};

/* taskstats auto (`--taskstats=auto`, ProfileTaskstats=auto): the
 * default pause rate, the window it is measured over, and the least
 * time a pause lasts (hysteresis: a storm that comes and goes does not
 * flap the registration) */
#define PROF_TS_PAUSE_RATE 2000
#define PROF_TS_WINDOW_MS 100
#define PROF_TS_MIN_PAUSE_MS 1000

struct prof_rec;

/* What the recorder could not do as asked but records anyway (the file
 * system has no ACLs: the profile is root's only), or NULL.  Valid until
 * prof_rec_finish. */
const char *prof_rec_warning (const struct prof_rec *r);

/* Open the sockets (subscribed from now on) and the file, write the
 * header.  NULL with errp. */
struct prof_rec *prof_rec_start (const struct prof_rec_opts *o,
                                 pin_error_t *errp);

/* Follow `pid` (a process that has not forked or made threads yet, e.g.
 * one held before exec) and its descendants from now on. */
int prof_rec_add_root (struct prof_rec *r, pid_t pid, pin_error_t *errp);

/* The descriptors to poll for POLLIN (fills at most `max`, returns how
 * many) and the time until the next sample (-1: none due). */
int prof_rec_pollfds (struct prof_rec *r, struct pollfd *fds, int max);
int prof_rec_timeout_ms (struct prof_rec *r);

/* Read everything waiting, write the events of the tracked processes,
 * take a sample if due.  0, or -1 with errp if the file cannot be
 * written (a malformed datagram is counted, not an error). */
int prof_rec_process (struct prof_rec *r, pin_error_t *errp);

/* Write one line of the caller's (borrowed; its "type" is the caller's,
 * "t" is added when absent), e.g. the "confine" line of policy dynamic.
 * 1 written, 0 dropped (bound reached), -1 with errp. */
int prof_rec_mark (struct prof_rec *r, json_object *line, pin_error_t *errp);

/* Counters so far. */
void prof_rec_stats (const struct prof_rec *r, struct prof_rec_stats *s);

/* Drain the sockets once more, take a last sample, write the end line
 * (with `status`, the root's wait status or -1) and close; frees r.
 * 0 or -1 with errp.  NULL r: no-op. */
int prof_rec_finish (struct prof_rec *r, int status, pin_error_t *errp);

#endif /* !PIN_RECORD_H */
