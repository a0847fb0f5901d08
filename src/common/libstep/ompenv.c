/* ompenv.c - OMP_PLACES / OMP_PROC_BIND consistent with a task's mask */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libplace/place.h"
#include "ompenv.h"

char *ompenv_places (hwloc_const_bitmap_t cpus)
{
    int n = cpus ? hwloc_bitmap_weight (cpus) : 0;
    size_t size, off = 0;
    char *s;
    unsigned id;

    if (n <= 0) { /* empty, or infinite (-1) */
        errno = EINVAL;
        return NULL;
    }
    /* "{" + up to 10 digits + "}" + "," per place, and the NUL. */
    size = (size_t)n * 13 + 1;
    if (!(s = malloc (size)))
        return NULL;
    hwloc_bitmap_foreach_begin (id, cpus)
    {
        int len = snprintf (s + off, size - off, "%s{%u}", off ? "," : "", id);
        if (len < 0 || (size_t)len >= size - off) {
            free (s);
            errno = EOVERFLOW;
            return NULL;
        }
        off += (size_t)len;
    }
    hwloc_bitmap_foreach_end ();
    return s;
}

const char *ompenv_proc_bind (int policy)
{
    switch (policy) {
        case PLACE_NUMA_SPREAD:
            return "spread";
        case PLACE_NUMA_LOCAL:
        case PLACE_CACHE_SHARED:
        case PLACE_RANDOM:
            return "close";
        default:
            return NULL;
    }
}

enum ompenv_action ompenv_decide (const char *current,
                                  const char *recorded,
                                  const char *ours)
{
    if (!current)
        return ours ? OMPENV_SET : OMPENV_KEEP;
    if (recorded && strcmp (current, recorded) == 0)
        return ours ? OMPENV_SET : OMPENV_UNSET;
    return OMPENV_KEEP;
}
