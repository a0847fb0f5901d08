/* taskstats.h - per-task exit records from the kernel's taskstats
 *
 * Generic netlink family "TASKSTATS": a listener registered for a CPU
 * mask (TASKSTATS_CMD_ATTR_REGISTER_CPUMASK) gets one record per task
 * (thread) that exits on those CPUs, with its command, CPU times and
 * context switches: exact even for a 1 ms process.  The kernel sends the
 * record just before the task's proc connector exit event.
 *   - taskstats_parse: pure parser of one datagram (hostile bytes safe);
 *   - tsmatch: pairs records with the exits of the step's tasks seen on
 *     the proc connector (records of other tasks are discarded, the
 *     exits whose record never came are counted);
 *   - the socket.  Needs root.
 */
#ifndef PIN_TASKSTATS_H
#define PIN_TASKSTATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "libutil/errprintf.h"

struct ts_record {
    int32_t pid;  /* the task (thread id) */
    int32_t tgid; /* 0 if the kernel's struct is too old */
    int32_t ppid;
    uint32_t exitcode;
    uint16_t version; /* struct taskstats version */
    char comm[33];
    uint64_t btime;    /* start, seconds since 1970 */
    uint64_t etime_us; /* elapsed */
    uint64_t utime_us, stime_us;
    uint64_t nvcsw, nivcsw;
    uint64_t hiwater_rss_kb;
    uint64_t cpu_delay_ns; /* run-queue wait (delay accounting) */
    uint64_t blkio_delay_ns;
    /* I/O accounting (0 without CONFIG_TASK_IO_ACCOUNTING): bytes the
     * task made the storage read and write, bytes of read/write calls */
    uint64_t read_bytes, write_bytes, rchar, wchar;
};

/* Parse one datagram from a taskstats socket of family `family`.
 * Stores the per-task records (TASKSTATS_TYPE_AGGR_PID; the per-process
 * AGGR_TGID ones are skipped) in out[0..max) and returns their number.
 * -1 with errno EINVAL and errp ("taskstats: ...") for a malformed
 * datagram, EPROTO for a netlink error message, E2BIG for more than
 * `max` records. */
int taskstats_parse (const void *buf,
                     size_t len,
                     uint16_t family,
                     struct ts_record *out,
                     size_t max,
                     pin_error_t *errp);

/* Open a generic netlink socket, find the TASKSTATS family and register
 * for exits on CPUs 0..ncpus-1.  Returns the fd (non-blocking,
 * close-on-exec) and sets *family, or -1 with errp (ENOENT: the kernel
 * has no taskstats). */
int taskstats_open (int ncpus,
                    int rcvbuf,
                    uint16_t *family,
                    pin_error_t *errp);
/* Deregister and close (fd < 0: no-op; keeps errno). */
void taskstats_close (int fd, int ncpus, uint16_t family);
/* Register (on) or deregister (off) the socket's CPUs 0..ncpus-1 again,
 * without closing it: the adaptive pause of a fork storm (record.h).
 * The kernel does no taskstats work at an exit on a CPU without a
 * listener.  Not acknowledged (a refusal would come as an error message
 * on the socket, counted as a parse error).  0 or -1 with errno. */
int taskstats_listen (int fd, int ncpus, uint16_t family, bool on);

/* Pairing of records with exits: which task a record is of.
 *
 * A record carries the pid and a start time in whole seconds (and an
 * elapsed time measured from an instant it does not carry), so neither
 * (pid) nor (pid, start) names a task: a pid reused within the same
 * second gives two records that differ in nothing that identifies them.
 * What is exact is the kernel's order (doc/profiling.md, "Which task a
 * record is of"):
 *   - the tasks that ever hold one pid follow each other; each one's
 *     record, and its proc connector exit event, come in that order;
 *   - a task's record is queued before its exit event is sent, so once
 *     the taskstats socket has been read empty after the exit event was
 *     read, the record is in hand (or was lost: ENOBUFS);
 *   - a record in hand belongs to a task whose fork event has been read
 *     once the proc connector socket has been read empty after it.
 * So every exit of the machine (not only the step's) claims the oldest
 * unclaimed record of its pid, in the order the exits came, and only
 * after both barriers.  A record read before the task's own fork (or
 * before a root was added) is an earlier task's; so is one whose
 * elapsed time is longer than the task lived; a record whose tgid is
 * not the task's is not claimed; and when a loss was reported after a
 * step task's fork, the task, if its pid was taken again before its exit
 * was settled, gets no record rather than perhaps the next holder's.  Pure
 * bookkeeping: no I/O. */
struct tsmatch;
struct tsmatch *tsmatch_create (void);
void tsmatch_destroy (struct tsmatch *m);

/* An exit event of any task of the machine. */
struct ts_exit {
    int32_t pid, tgid;
    bool step;        /* a task of the step */
    bool root;        /* a root: it started before fork_ns */
    uint64_t fork_ns; /* step: its fork event (root: when added) */
    uint64_t exit_ns; /* the exit event's time */
    bool paused;      /* taskstats was (perhaps) deregistered when it
                         exited: no record is not a loss (record.h) */
};

struct tsmatch_stats {
    uint64_t claimed;   /* records given to step exits */
    uint64_t missing;   /* step exits settled without a record */
    uint64_t foreign;   /* records claimed by other tasks' exits */
    uint64_t stale;     /* records found to be of an earlier task */
    uint64_t ambiguous; /* records refused after a loss (see above) */
    uint64_t unclaimed; /* records no exit claimed (expired) */
};

/* A record was read from the socket at `read_ns` (CLOCK_MONOTONIC,
 * taken after the recv()).  0, or -1 ENOMEM (the record is dropped). */
int tsmatch_record (struct tsmatch *m,
                    const struct ts_record *r,
                    uint64_t read_ns);
/* An exit event was read.  0, or -1 ENOMEM (a step exit is then
 * counted as missing). */
int tsmatch_exit (struct tsmatch *m, const struct ts_exit *x);
/* A fork (process or thread) of any task, creating `pid`, was read. */
void tsmatch_fork (struct tsmatch *m, int32_t pid);
/* The taskstats socket reported a loss (ENOBUFS) when read at now_ns. */
void tsmatch_lost (struct tsmatch *m, uint64_t now_ns);
/* The taskstats socket was just read empty (EAGAIN). */
void tsmatch_drained (struct tsmatch *m);

/* Settle the exits read before the last tsmatch_drained(); call it when
 * the proc connector socket was just read empty, after that drained().
 * all: settle every exit (at the end, when both sockets were read empty
 * last).  fn(exit, record or NULL, arg) is called for each step exit in
 * the order the exits came; a non-zero result stops and is returned. */
typedef int (*tsmatch_fn) (const struct ts_exit *x,
                           const struct ts_record *r,
                           void *arg);
int tsmatch_resolve (struct tsmatch *m, bool all, tsmatch_fn fn, void *arg);

/* Step exits not settled yet. */
size_t tsmatch_awaiting (const struct tsmatch *m);

/* Forget the records read more than `age_ns` ago (all with age_ns 0);
 * they count as unclaimed. */
void tsmatch_expire (struct tsmatch *m, uint64_t now_ns, uint64_t age_ns);

void tsmatch_stats (const struct tsmatch *m, struct tsmatch_stats *s);

#endif /* !PIN_TASKSTATS_H */
