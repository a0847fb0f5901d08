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

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "libutil/errprintf.h"

struct ts_record {
    int32_t pid;            /* the task (thread id) */
    int32_t tgid;           /* 0 if the kernel's struct is too old */
    int32_t ppid;
    uint32_t exitcode;
    uint16_t version;       /* struct taskstats version */
    char comm[33];
    uint64_t btime;         /* start, seconds since 1970 */
    uint64_t etime_us;      /* elapsed */
    uint64_t utime_us, stime_us;
    uint64_t nvcsw, nivcsw;
    uint64_t hiwater_rss_kb;
    uint64_t cpu_delay_ns;  /* run-queue wait (delay accounting) */
    uint64_t blkio_delay_ns;
};

/* Parse one datagram from a taskstats socket of family `family`.
 * Stores the per-task records (TASKSTATS_TYPE_AGGR_PID; the per-process
 * AGGR_TGID ones are skipped) in out[0..max) and returns their number.
 * -1 with errno EINVAL and errp ("taskstats: ...") for a malformed
 * datagram, EPROTO for a netlink error message, E2BIG for more than
 * `max` records. */
int taskstats_parse (const void *buf, size_t len, uint16_t family,
                     struct ts_record *out, size_t max, pin_error_t *errp);

/* Open a generic netlink socket, find the TASKSTATS family and register
 * for exits on CPUs 0..ncpus-1.  Returns the fd (non-blocking,
 * close-on-exec) and sets *family, or -1 with errp (ENOENT: the kernel
 * has no taskstats). */
int taskstats_open (int ncpus, int rcvbuf, uint16_t *family,
                    pin_error_t *errp);
/* Deregister and close (fd < 0: no-op; keeps errno). */
void taskstats_close (int fd, int ncpus, uint16_t family);

/* Pairing of records with exits. */
struct tsmatch;
struct tsmatch *tsmatch_create (void);
void tsmatch_destroy (struct tsmatch *m);

/* A record arrived at `now_ns`: 1 if its task's exit was seen (*out is
 * the record, the pair is forgotten), 0 if kept waiting for an exit,
 * -1 ENOMEM. */
int tsmatch_record (struct tsmatch *m, const struct ts_record *r,
                    uint64_t now_ns, struct ts_record *out);
/* A task of the step exited at `now_ns`: 1 if its record had come (*out
 * is it), 0 if it is now awaited, -1 ENOMEM. */
int tsmatch_exit (struct tsmatch *m, int32_t pid, uint64_t now_ns,
                  struct ts_record *out);
/* Exits still waiting for their record. */
size_t tsmatch_awaiting (const struct tsmatch *m);

/* Forget entries older than `age_ns` (all with age_ns 0): adds the
 * records never claimed (other tasks') to *unclaimed and the exits whose
 * record never came to *missing. */
void tsmatch_expire (struct tsmatch *m, uint64_t now_ns, uint64_t age_ns,
                     uint64_t *unclaimed, uint64_t *missing);

#endif /* !PIN_TASKSTATS_H */
