/* affinity.c - CPU affinity as hwloc bitmaps (see affinity.h) */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "libtopo/topo.h"

/* The kernel mask of `cpus`: *size bytes, freed with CPU_FREE. */
static cpu_set_t *mask_from_bitmap (hwloc_const_bitmap_t cpus, size_t *size)
{
    int last = hwloc_bitmap_last (cpus);
    cpu_set_t *mask;
    unsigned id;

    if (last < 0) {
        errno = EINVAL;
        return NULL;
    }
    if (!(mask = CPU_ALLOC ((size_t)last + 1)))
        return NULL;
    *size = CPU_ALLOC_SIZE ((size_t)last + 1);
    CPU_ZERO_S (*size, mask);
    hwloc_bitmap_foreach_begin (id, cpus)
    {
        CPU_SET_S (id, *size, mask);
    }
    hwloc_bitmap_foreach_end ();
    return mask;
}

int affinity_get (pid_t pid, hwloc_bitmap_t out)
{
    int ncpus = 1024;

    for (;;) {
        size_t size = CPU_ALLOC_SIZE ((size_t)ncpus);
        cpu_set_t *mask = CPU_ALLOC ((size_t)ncpus);
        if (!mask)
            return -1;
        if (sched_getaffinity (pid, size, mask) == 0) {
            hwloc_bitmap_zero (out);
            for (int i = 0; i < ncpus; i++) {
                if (CPU_ISSET_S ((size_t)i, size, mask)
                    && hwloc_bitmap_set (out, (unsigned)i) < 0) {
                    CPU_FREE (mask);
                    errno = ENOMEM;
                    return -1;
                }
            }
            CPU_FREE (mask);
            return 0;
        }
        CPU_FREE (mask);
        /* EINVAL: the kernel's mask is larger than ours */
        if (errno != EINVAL || ncpus >= (1 << 20))
            return -1;
        ncpus *= 2;
    }
}

int affinity_set (pid_t pid, hwloc_const_bitmap_t cpus, pin_error_t *errp)
{
    hwloc_bitmap_t now = hwloc_bitmap_alloc ();
    cpu_set_t *mask = NULL;
    size_t size = 0;
    int rc = -1;

    if (!now) {
        errno = ENOMEM;
        return errprintf (errp, "out of memory");
    }
    if (!(mask = mask_from_bitmap (cpus, &size))) {
        errprintf (errp,
                   "cannot build an affinity mask: %s",
                   errno == EINVAL ? "empty CPU set" : strerror (errno));
        goto out;
    }
    if (sched_setaffinity (pid, size, mask) < 0) {
        errprintf (errp,
                   "sched_setaffinity(pid %d): %s",
                   (int)pid,
                   strerror (errno));
        goto out;
    }
    if (affinity_get (pid, now) < 0) {
        errprintf (errp,
                   "sched_getaffinity(pid %d): %s",
                   (int)pid,
                   strerror (errno));
        goto out;
    }
    if (!hwloc_bitmap_isequal (now, cpus)) {
        char *want = topo_list_format (cpus), *got = topo_list_format (now);
        errprintf (errp,
                   "pid %d: affinity is %s after binding to %s",
                   (int)pid,
                   got ? got : "?",
                   want ? want : "?");
        free (want);
        free (got);
        errno = EIO;
        goto out;
    }
    rc = 0;
out:
    if (mask)
        CPU_FREE (mask);
    hwloc_bitmap_free (now);
    return rc;
}
