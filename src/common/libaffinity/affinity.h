/* affinity.h - a process's or thread's CPU affinity as an hwloc bitmap
 *
 * The kernel's affinity masks (sched_{get,set}affinity) converted to and
 * from hwloc bitmaps of OS indexes, sized for any CPU count.  Used where
 * there is no cgroup cpuset to confine a task (the affinity fallback) and
 * after every cgroup move (older kernels reset affinity on a move).
 * Nothing here logs.
 */
#ifndef PIN_AFFINITY_H
#define PIN_AFFINITY_H

#include <hwloc.h>
#include <sys/types.h>

#include "libutil/errprintf.h"

/* The affinity of `pid` (0: the caller) into `out`; -1 with errno. */
int affinity_get (pid_t pid, hwloc_bitmap_t out);

/* Bind `pid` (0: the caller) to `cpus` and read the affinity back: it must
 * be exactly `cpus`.  -1 with errp (one line naming the pid and both sets)
 * otherwise: EINVAL for an empty set, the kernel's errno, or EIO when the
 * kernel kept another set. */
int affinity_set (pid_t pid, hwloc_const_bitmap_t cpus, pin_error_t *errp);

#endif /* !PIN_AFFINITY_H */
