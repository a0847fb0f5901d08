/* cgview.h - where each cgroup controller is bound, v1 and v2 alike
 *
 * libcgroup knows cgroup v1 and v2 mounts; the plugin's own cgroup layer
 * (libcgroup2) sees only the v2 hierarchy.  On a hybrid host the cpuset
 * controller is bound to v1, which is why pin.so falls back to
 * sched_setaffinity there; `slurm-pin check` shows that with this view.
 * Only slurm-pin links it (pin.so does not link libcgroup).
 *
 * cgroup_init() installs a logger that prints on stdout (and follows
 * CGROUP_LOGLEVEL) unless one is set first, and a NULL logger does not
 * prevent that: a callback of ours keeps libcgroup's last message instead
 * (in a static buffer: one view at a time, as libcgroup itself is).
 */
#ifndef PIN_CGVIEW_H
#define PIN_CGVIEW_H

#include <limits.h>
#include <stddef.h>

enum cgview_state {
    CGVIEW_UNAVAILABLE = 0, /* cgroup_init() failed */
    CGVIEW_MOUNTED,         /* mount and version below */
    CGVIEW_NOT_MOUNTED,     /* in no hierarchy */
    CGVIEW_ERROR,           /* the lookup failed: see note */
};

struct cgview_ctl {
    enum cgview_state state;
    char mount[PATH_MAX]; /* CGVIEW_MOUNTED: where */
    int version;          /* CGVIEW_MOUNTED: 1, 2, or 0 (not cgroup) */
    char note[256];       /* CGVIEW_ERROR: libcgroup's message */
};

/* Look up controllers names[0..n-1] into ctl[0..n-1].  0, or -1 when
 * libcgroup cannot be initialized (`error` then says why; every ctl is
 * CGVIEW_UNAVAILABLE). */
int cgview_read (const char *const *names,
                 struct cgview_ctl *ctl,
                 size_t n,
                 char *error,
                 size_t errsize);

/* 2 for a cgroup2 mount, 1 for cgroup v1, 0 for anything else (statfs). */
int cgview_fs_version (const char *path);

#endif /* !PIN_CGVIEW_H */
