/* slurm.c - Slurm's abstract core ids to OS CPU numbers
 *
 * Slurm 22.05's slurmd numbers cores densely: the N-th Core object of
 * its hwloc topology (sockets in logical order, cores below each in
 * logical order, which is the Core objects' own logical order), loaded
 * with disallowed PUs included; task/cgroup gives a core all of its
 * PUs.  See doc/topology.md for the source references and the cases
 * where Slurm's own mapping goes astray.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <string.h>

#include "topo_private.h"

int topo_slurm_cores_to_cpuset (const topo_t *t,
                                const char *cores,
                                hwloc_bitmap_t cpus,
                                pin_error_t *errp)
{
    hwloc_bitmap_t ids = NULL;
    hwloc_bitmap_t result = NULL;
    int id;
    int rc = -1;

    if (!t || !cores || !cpus) {
        errno = EINVAL;
        return errprintf (errp, "Slurm core list: missing argument");
    }
    if (!(ids = hwloc_bitmap_alloc ()) || !(result = hwloc_bitmap_alloc ())) {
        errno = ENOMEM;
        errprintf (errp, "Slurm core list: out of memory");
        goto out;
    }
    if (topo_list_parse_what (cores, ids, "Slurm core list", errp) < 0)
        goto out;
    /* the numbering is in the PU table (topo.c, number_slurm_cores) */
    if ((id = hwloc_bitmap_last (ids)) >= (int)t->nslurm_cores) {
        /* the list parsed: digits, '-' and ',', and perhaps the one
         * trailing newline of a kernel list, which stays out of the
         * one-line message */
        size_t len = strcspn (cores, "\n");
        errno = ERANGE;
        errprintf (errp,
                   "Slurm core id %d (in '%.*s') out of range; "
                   "this node has %u cores, 0-%d",
                   id,
                   len > 40 ? 40 : (int)len,
                   cores,
                   t->nslurm_cores,
                   (int)t->nslurm_cores - 1);
        goto out;
    }
    /* PUs outside the table (disallowed ones without TOPO_WHOLE_SYSTEM)
     * are not returned */
    for (unsigned i = 0; i < t->npus; i++) {
        if (t->pus[i].slurm_core >= 0
            && hwloc_bitmap_isset (ids, (unsigned)t->pus[i].slurm_core)
            && hwloc_bitmap_set (result, t->pus[i].os) < 0) {
            errno = ENOMEM;
            errprintf (errp, "Slurm core list: out of memory");
            goto out;
        }
    }
    if (hwloc_bitmap_copy (cpus, result) < 0) {
        errno = ENOMEM;
        errprintf (errp, "Slurm core list: out of memory");
        goto out;
    }
    rc = 0;
out:
    hwloc_bitmap_free (ids);
    hwloc_bitmap_free (result);
    return rc;
}
