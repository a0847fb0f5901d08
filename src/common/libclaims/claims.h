/* claims.h - PU claims of running steps and the node lock
 *
 * When the cgroup v2 hierarchy has no cpuset controller, the PUs a step
 * holds are recorded as claim files "job_<job>.step_<step>" in a root-only
 * directory, each holding the owner's pid, the owner's start time (field
 * 22 of /proc/PID/stat, clock ticks since boot) and its cpus in list
 * format: "1234 987654 0-3,8\n".  A claim is alive while a process with
 * that pid exists, is not a zombie and started at that time; a recycled
 * pid (after a slurmstepd crash) does not keep the PUs.  Claims in the
 * format of version 1 ("1234 0-3,8\n", no start time) are still read: they
 * are alive while the pid exists and is not a zombie (see doc/cgroup.md).
 *
 * Every directory and file used here must pass safefile_check() for the
 * caller's euid (libutil/safefile.h): root's (or the caller's), not
 * writable by group or others, no symlink anywhere in the path.
 * Functions return -1 with errno set and errp filled, and never log.
 * Callers hold pin_lock_acquire() around claims_busy + claims_add.
 */
#ifndef PIN_CLAIMS_H
#define PIN_CLAIMS_H

#include <hwloc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "libutil/errprintf.h"

/* `dir` is an absolute path; claims_add creates it (and missing parents)
 * with mode 0700.  A claim is written to a temporary file and renamed
 * into place (replacing an older one).  claims_busy adds to `busy` (not
 * cleared first) the cpus of every live claim other than (job, step), and
 * removes stale and malformed claims.  A missing directory holds no
 * claims; removing an absent claim is success. */
int claims_add (const char *dir,
                uint32_t job,
                uint32_t step,
                pid_t owner,
                hwloc_const_bitmap_t cpus,
                pin_error_t *errp);
int claims_busy (const char *dir,
                 uint32_t job,
                 uint32_t step,
                 hwloc_bitmap_t busy,
                 pin_error_t *errp);
int claims_remove (const char *dir,
                   uint32_t job,
                   uint32_t step,
                   pin_error_t *errp);

/* claims_busy, and the holders per PU: for every live claim other than
 * (job, step), load[os] += 1 for each of its cpus os < nload (so load[os]
 * is how many other steps hold PU os; not cleared first; load may be
 * NULL).  This is libplace's place_request.load. */
int claims_load (const char *dir,
                 uint32_t job,
                 uint32_t step,
                 hwloc_bitmap_t busy,
                 unsigned *load,
                 unsigned nload,
                 pin_error_t *errp);

/* Remove every claim of `job` (whatever its pid), calling removed(step,
 * arg) (may be NULL) for each one removed.  A missing directory is
 * success. */
int claims_remove_job (const char *dir,
                       uint32_t job,
                       void (*removed) (uint32_t step, void *arg),
                       void *arg,
                       pin_error_t *errp);

/* ---- parsers (pure; also the entry points of the fuzz harnesses) ------ */

/* Strictly parse a claim's file name "job_<u32>.step_<u32>". */
bool claims_parse_name (const char *name, uint32_t *job, uint32_t *step);

/* Parse a claim's content (NUL-terminated, modified in place): "pid start
 * cpus\n" (start > 0) or the older "pid cpus\n" (start set to 0).  Returns
 * 1 and fills pid, start and set (cleared first) on success, 0 if it is
 * not a well-formed claim. */
int claims_parse_content (char *buf,
                          pid_t *pid,
                          uint64_t *start,
                          hwloc_bitmap_t set);

/* From the text of /proc/PID/stat, the state letter (field 3) and the
 * start time (field 22).  The command name (field 2) may hold spaces and
 * ')': fields are counted from the last ')'.  0 or -1 (EINVAL). */
int claims_parse_proc_stat (const char *text, char *state, uint64_t *start);

/* The state letter and start time of a process (reads /proc/PID/stat):
 * 0, or -1 with errno (ESRCH: no such process). */
int claims_proc_start (pid_t pid, char *state, uint64_t *start);

/* ---- the node lock ---------------------------------------------------- */

/* An exclusive flock on `path` (absolute; created 0600 with O_NOFOLLOW,
 * refused unless a regular file that passes safefile_check()), polled
 * every 10 ms for at most timeout_ms (0: one try); never blocks forever.
 * Returns an fd to pass to pin_lock_release(), or -1 (ETIMEDOUT when
 * another holder kept it). */
int pin_lock_acquire (const char *path, int timeout_ms, pin_error_t *errp);
void pin_lock_release (int fd); /* accepts -1, keeps errno */

#endif /* !PIN_CLAIMS_H */
