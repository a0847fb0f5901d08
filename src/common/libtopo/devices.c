/* devices.c - GPUs, NICs and NUMA distances of the model (see topo.h)
 *
 * Interim: the device table is not read from hwloc yet (topo_ndevs() is
 * 0) and distances follow the no-matrix rule of topo.h.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <limits.h>

#include "topo_private.h"

unsigned topo_ndevs (const topo_t *t)
{
    (void)t;
    return 0;
}

const struct topo_dev *topo_dev (const topo_t *t, unsigned i)
{
    (void)t;
    (void)i;
    return NULL;
}

int topo_dev_find (const topo_t *t,
                   enum topo_dev_kind kind,
                   const char *spec,
                   pin_error_t *errp)
{
    (void)t;
    errno = ENOENT;
    return errprintf (errp,
                      "%s '%s': no such %s; this topology has none",
                      kind == TOPO_DEV_GPU ? "GPU" : "NIC",
                      spec ? spec : "",
                      kind == TOPO_DEV_GPU ? "GPU" : "NIC");
}

/* The package of NUMA domain d: that of its first PU. */
static int numa_pkg (const topo_t *t, unsigned d)
{
    for (unsigned i = 0; i < t->npus; i++)
        if (t->pus[i].dom[TOPO_NUMA] == d)
            return (int)t->pus[i].dom[TOPO_PKG];
    return -1;
}

unsigned topo_numa_distance (const topo_t *t, unsigned a, unsigned b)
{
    unsigned n = t->ndom[TOPO_NUMA];

    if (a >= n || b >= n)
        return UINT_MAX;
    if (a == b)
        return 10;
    return numa_pkg (t, a) == numa_pkg (t, b) ? 20 : 30;
}
