/* cg2.h - the cgroup v2 layer of slurm-pin
 *
 * Every path below is relative to a root directory given to cg2_open():
 * the cgroup2 mount in production (/sys/fs/cgroup on pure v2,
 * /sys/fs/cgroup/unified on a hybrid host), or a temporary directory of
 * plain files in unit tests (the seam: no root, no kernel needed).
 * Functions return -1 (NULL, false) with errno set and errp filled, and
 * never log.  Direct file I/O, no libcgroup: doc/cgroup.md says why.
 *
 * Relative paths ("relpath"): a leading '/' is allowed (cg2_pid_path()
 * returns one), "" and "/" are the root, repeated '/' are ignored; '.',
 * '..', control characters, more than 32 components are refused.  Paths
 * are walked component by component from the root with O_NOFOLLOW: no
 * symlink is followed, nothing outside the root is reached.  `file`
 * arguments are one name of [A-Za-z0-9._-] ("cpuset.cpus").
 * Writes open the existing file O_WRONLY|O_TRUNC (never O_CREAT) and
 * write once; reads are bounded (1 MiB).
 */
#ifndef PIN_CG2_H
#define PIN_CG2_H

#include <hwloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "libutil/errprintf.h"

typedef struct cg2 cg2_t;

/* Open the hierarchy at `root` (an absolute path); "auto" (or NULL) finds
 * the first cgroup2 mount in /proc/self/mountinfo.  Records which
 * controllers the root offers (cgroup.controllers, which must exist: a
 * directory without it is not a cgroup v2 hierarchy).  Caller closes with
 * cg2_close(). */
cg2_t *cg2_open (const char *root, pin_error_t *errp);
void cg2_close (cg2_t *cg); /* accepts NULL, keeps errno */
const char *cg2_root (const cg2_t *cg);

/* Is `controller` ("cpuset", "cpu") available at the root? */
bool cg2_has_controller (const cg2_t *cg, const char *controller);

/* The cgroup of a pid, relative to the root ("/system.slice/x"), from
 * /proc/PID/cgroup's "0::" line (ESRCH if no such pid, ENOENT if no such
 * line).  Caller frees. */
char *cg2_pid_path (pid_t pid, pin_error_t *errp);

/* mkdir -p of relpath; enables `controllers` ("+cpuset +cpu", may be NULL)
 * in cgroup.subtree_control of every ancestor below the root, top-down, and
 * of the root itself, skipping controllers the root lacks and files that
 * already list them all.  relpath itself stays a leaf (it may hold
 * processes).  Existing directories are fine; on failure the directories
 * this call made are removed again. */
int cg2_create (cg2_t *cg,
                const char *relpath,
                const char *controllers,
                pin_error_t *errp);

/* Write `value` to relpath/file (which must exist) in one write(2). */
int cg2_write (cg2_t *cg,
               const char *relpath,
               const char *file,
               const char *value,
               pin_error_t *errp);
/* Read a file (at most 1 MiB, else EFBIG), trailing newline removed;
 * caller frees. */
char *cg2_read (cg2_t *cg,
                const char *relpath,
                const char *file,
                pin_error_t *errp);

/* Write cpuset.cpus then cpuset.mems (either may be NULL to leave it;
 * empty sets are refused with EINVAL), then verify cpuset.cpus.effective
 * equals cpus (-1, EIO, errp naming both sets, on mismatch).  The sets are
 * the caller's. */
int cg2_set_cpuset (cg2_t *cg,
                    const char *relpath,
                    hwloc_const_bitmap_t cpus,
                    hwloc_const_bitmap_t mems,
                    pin_error_t *errp);

/* Move a process into relpath (cgroup.procs). */
int cg2_attach (cg2_t *cg, const char *relpath, pid_t pid, pin_error_t *errp);

/* Does relpath hold any process?  "populated 1" in its cgroup.events when
 * that file exists (every non-root cgroup), else a non-empty cgroup.procs
 * of it or a descendant.  false on any error. */
bool cg2_populated (cg2_t *cg, const char *relpath);

struct cg2_cpu_stat {
    uint64_t usage_usec;
    uint64_t user_usec;
    uint64_t system_usec;
    uint64_t nr_periods;
    uint64_t nr_throttled;
    uint64_t throttled_usec;
};
int cg2_read_cpu_stat (cg2_t *cg,
                       const char *relpath,
                       struct cg2_cpu_stat *st,
                       pin_error_t *errp);

/* Remove relpath and everything below it, deepest first; rmdir that fails
 * with EBUSY is retried (10 ms sleeps) until `timeout_ms` after the call
 * started.  A relpath that does not exist is success; the root itself is
 * refused.  In the seam (the root is not a cgroup2 file system) regular
 * files named like interface files ("x.y" of [a-z0-9_.]) are unlinked
 * first, standing in for the kernel; on cgroup2 nothing is unlinked. */
int cg2_remove_tree (cg2_t *cg,
                     const char *relpath,
                     int timeout_ms,
                     pin_error_t *errp);

/* The same for everything below relpath; relpath itself stays (so that a
 * caller can remove it under a lock of its own, with no retries). */
int cg2_remove_below (cg2_t *cg,
                      const char *relpath,
                      int timeout_ms,
                      pin_error_t *errp);

/* Add to `busy` (not cleared first) the cpuset.cpus of every populated
 * directory named "step_*" or "task_*" below relpath, skipping `exclude`
 * and everything below it (may be NULL; relative to the root, like
 * relpath): the PUs held by other running steps.  Where populated
 * step/task directories are nested (Slurm's step_N/user/task_M, or ours),
 * the deepest ones with a non-empty cpuset.cpus count and their ancestors'
 * wider sets do not, so a step narrowed per task does not hold its whole
 * allocation.  Directories without processes are ignored, so a crashed
 * step never holds PUs forever; an empty or missing cpuset.cpus holds
 * nothing.  A relpath that does not exist adds nothing.  At most 32
 * levels are walked. */
int cg2_busy_cpus (cg2_t *cg,
                   const char *relpath,
                   const char *exclude,
                   hwloc_bitmap_t busy,
                   pin_error_t *errp);

/* The same walk with the caller's rules.  For every directory below
 * relpath (no symlink followed), `filter` gets its path from the root
 * ("job_1/step_0/user", normalized), the same relative to relpath
 * ("step_0/user"), its name and `arg`, and says what it is:
 * CG2_BUSY_SKIP (it and everything below it hold nothing),
 * CG2_BUSY_DESCEND (not a holder itself: look below it) or
 * CG2_BUSY_HOLDER (a step or task cgroup: while populated, its deepest
 * holders below with a non-empty cpuset.cpus count, else its own
 * non-empty cpuset.cpus).  cg2_busy_cpus() is this with "step_*" and
 * "task_*" as holders, `exclude` skipped, everything else descended. */
enum cg2_busy_verdict {
    CG2_BUSY_SKIP = 0,
    CG2_BUSY_DESCEND,
    CG2_BUSY_HOLDER,
};
typedef enum cg2_busy_verdict (*cg2_busy_filter_f) (const char *path,
                                                    const char *sub,
                                                    const char *name,
                                                    void *arg);
int cg2_busy_cpus_filter (cg2_t *cg,
                          const char *relpath,
                          cg2_busy_filter_f filter,
                          void *arg,
                          hwloc_bitmap_t busy,
                          pin_error_t *errp);

/* Does relpath have any subdirectory (child cgroup; symlinks are none)?
 * A missing relpath has none.  -1 with errp if it cannot be read. */
int cg2_has_children (cg2_t *cg,
                      const char *relpath,
                      bool *any,
                      pin_error_t *errp);

#endif /* !PIN_CG2_H */
