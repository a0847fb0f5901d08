/* cg2.h - the cgroup v2 layer of slurm-pin
 *
 * Every path below is relative to a root directory given to cg2_open():
 * the cgroup2 mount in production (/sys/fs/cgroup on pure v2,
 * /sys/fs/cgroup/unified on a hybrid host), or a temporary directory of
 * plain files in unit tests (the seam: no root, no kernel needed).
 * Functions return -1 with errp filled, and never log.
 */
#ifndef PIN_CG2_H
#define PIN_CG2_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <hwloc.h>

#include "libutil/errprintf.h"

typedef struct cg2 cg2_t;

/* Open the hierarchy at `root`; "auto" (or NULL) finds the cgroup2 mount
 * from /proc/self/mountinfo.  Records which controllers the root offers
 * (cgroup.controllers). */
cg2_t *cg2_open (const char *root, pin_error_t *errp);
void cg2_close (cg2_t *cg);                 /* accepts NULL, keeps errno */
const char *cg2_root (const cg2_t *cg);

/* Is `controller` ("cpuset", "cpu") available at the root? */
bool cg2_has_controller (const cg2_t *cg, const char *controller);

/* The cgroup of a pid, relative to the root ("/system.slice/x"), from
 * /proc/PID/cgroup's "0::" line.  Caller frees. */
char *cg2_pid_path (pid_t pid, pin_error_t *errp);

/* mkdir -p of relpath; enables `controllers` ("+cpuset +cpu") in
 * cgroup.subtree_control of every ancestor below the root, top-down, and
 * of the root itself, skipping controllers the root lacks. */
int cg2_create (cg2_t *cg, const char *relpath, const char *controllers,
                pin_error_t *errp);

int cg2_write (cg2_t *cg, const char *relpath, const char *file,
               const char *value, pin_error_t *errp);
/* Read a file, trailing newline removed; caller frees. */
char *cg2_read (cg2_t *cg, const char *relpath, const char *file,
                pin_error_t *errp);

/* Write cpuset.cpus then cpuset.mems (either may be NULL to leave it),
 * then verify cpuset.cpus.effective equals cpus (-1, EIO, errp naming
 * both sets, on mismatch). */
int cg2_set_cpuset (cg2_t *cg, const char *relpath, hwloc_const_bitmap_t cpus,
                    hwloc_const_bitmap_t mems, pin_error_t *errp);

/* Move a process into relpath (cgroup.procs). */
int cg2_attach (cg2_t *cg, const char *relpath, pid_t pid, pin_error_t *errp);

/* Does relpath hold any process (cgroup.procs of it or a descendant, or
 * "populated 1" in cgroup.events)? */
bool cg2_populated (cg2_t *cg, const char *relpath);

struct cg2_cpu_stat {
    uint64_t usage_usec;
    uint64_t user_usec;
    uint64_t system_usec;
    uint64_t nr_periods;
    uint64_t nr_throttled;
    uint64_t throttled_usec;
};
int cg2_read_cpu_stat (cg2_t *cg, const char *relpath,
                       struct cg2_cpu_stat *st, pin_error_t *errp);

/* Remove relpath and everything below it, deepest first; rmdir that fails
 * with EBUSY is retried for up to `timeout_ms`. */
int cg2_remove_tree (cg2_t *cg, const char *relpath, int timeout_ms,
                     pin_error_t *errp);

/* Union of cpuset.cpus of every populated directory named "step_*" or
 * "task_*" below relpath other than `exclude` (may be NULL): the PUs held
 * by other running steps.  Directories without processes are ignored, so
 * a crashed step never holds PUs forever. */
int cg2_busy_cpus (cg2_t *cg, const char *relpath, const char *exclude,
                   hwloc_bitmap_t busy, pin_error_t *errp);

/* ---- affinity fallback: claims of PUs when there is no v2 cpuset ------ */

/* A root-only directory of claim files "job_<job>.step_<step>" holding the
 * owner's pid and its cpus in list format.  Claims whose pid is gone are
 * stale and ignored (and removed). */
int claims_add (const char *dir, uint32_t job, uint32_t step, pid_t owner,
                hwloc_const_bitmap_t cpus, pin_error_t *errp);
int claims_busy (const char *dir, uint32_t job, uint32_t step,
                 hwloc_bitmap_t busy, pin_error_t *errp);
int claims_remove (const char *dir, uint32_t job, uint32_t step,
                   pin_error_t *errp);

/* An exclusive flock on `path` (created 0600), waiting at most
 * timeout_ms.  Returns an fd to pass to pin_lock_release(), or -1. */
int pin_lock_acquire (const char *path, int timeout_ms, pin_error_t *errp);
void pin_lock_release (int fd);

#endif /* !PIN_CG2_H */
