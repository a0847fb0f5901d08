/* procfs.h - what the profiler samples from /proc
 *
 * Pure parsers of the text of /proc/PID/stat, /proc/PID/status,
 * /proc/PID/smaps_rollup and /proc/stat (unit-tested on fixed text), and
 * thin readers that open the files.  Parsers return 0, or -1 with errno
 * EINVAL and errp ("FILE: ..." naming the bad value) and leave the
 * output untouched.
 */
#ifndef PIN_PROCFS_H
#define PIN_PROCFS_H

#include <hwloc.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "libutil/errprintf.h"

/* /proc/PID/stat and /proc/PID/task/TID/stat */
struct procfs_stat {
    int32_t pid;
    char comm[17]; /* between the first '(' and the last ')' */
    char state;    /* R S D Z T t X I P ... */
    int32_t ppid;
    uint64_t utime, stime; /* clock ticks */
    int64_t num_threads;
    uint64_t starttime; /* clock ticks since boot */
    int32_t processor;  /* last CPU, -1 if absent */
};
int procfs_parse_stat (const char *text,
                       struct procfs_stat *out,
                       pin_error_t *errp);

/* /proc/PID/status: the fields the profiler uses (absent ones are 0). */
struct procfs_status {
    uint64_t voluntary_ctxt_switches;
    uint64_t nonvoluntary_ctxt_switches;
    uint64_t threads;
    uint64_t vmrss_kb;
};
/* Needs both ctxt_switches lines (else EINVAL). */
int procfs_parse_status (const char *text,
                         struct procfs_status *out,
                         pin_error_t *errp);

/* /proc/PID/smaps_rollup */
struct procfs_rollup {
    uint64_t rss_kb, pss_kb;
};
/* Needs "Rss:" and "Pss:" lines in kB. */
int procfs_parse_rollup (const char *text,
                         struct procfs_rollup *out,
                         pin_error_t *errp);

/* cgroup v2 flat keyed files (cpu.stat, memory.stat): "key N" lines.
 * vals[i] gets the value of keys[i] (untouched when absent); returns the
 * bit mask of the keys found (at most 31 keys), or -1 with errp for a
 * value that is not a number. */
int procfs_parse_flat (const char *text,
                       const char *const *keys,
                       uint64_t *vals,
                       int nkeys,
                       const char *file,
                       pin_error_t *errp);

/* A cgroup's io.stat ("MAJ:MIN rbytes=N wbytes=N rios=N wios=N ..." a
 * line per device): the sums over the devices of rbytes, wbytes, rios,
 * wios into sums[0..3] (other keys ignored; a file of no line, no I/O
 * yet, is all 0).  -1 with errno EINVAL and errp ("io.stat line N: ...")
 * for a line that is not of that form, sums untouched. */
int procfs_parse_iostat (const char *text,
                         uint64_t sums[4],
                         pin_error_t *errp);

/* /proc/stat: per-CPU cumulative ticks of the CPUs in `cpus`. */
struct procfs_cpu {
    int cpu;
    uint64_t user, nice, system, idle, iowait, irq, softirq, steal;
};
/* Fills out[0..] (at most `max`) with the "cpuN" lines whose N is in
 * `cpus`, in the file's order; returns how many.  A cpuN line with fewer
 * than 4 numbers, a non-number or N out of range is EINVAL; a CPU of
 * `cpus` without a line is ENOENT ("/proc/stat: no line for CPU N"). */
int procfs_parse_cpustat (const char *text,
                          hwloc_const_bitmap_t cpus,
                          struct procfs_cpu *out,
                          size_t max,
                          pin_error_t *errp);

/* Read a whole small /proc file into buf (NUL-terminated); returns its
 * length or -1 with errno (ENOENT: the process is gone; EFBIG: larger
 * than size - 1). */
ssize_t procfs_read (const char *path, char *buf, size_t size);
/* The same for `path` relative to the directory dirfd (never following a
 * symbolic link at its last component). */
ssize_t procfs_read_at (int dirfd, const char *path, char *buf, size_t size);

#endif /* !PIN_PROCFS_H */
