/* topo.c - load a topology with hwloc and flatten it (see topo.h) */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libutil/safeio.h"
#include "topo_private.h"

/* The model uses Core, L2, L3, NUMA and Package objects and the I/O
 * objects hwloc deems important (GPUs, NICs and the PCI devices and
 * bridges above them: devices.c): everything else that hwloc can leave
 * out (other I/O, instruction and L1 caches, Misc) is left out, which
 * makes loads and the cached XML faster and smaller. */
int topo_hw_init (hwloc_topology_t *hwp, int flags)
{
    hwloc_topology_t hw;
    unsigned long hwflags = 0;

    if ((flags & ~TOPO_WHOLE_SYSTEM)) {
        errno = EINVAL;
        return -1;
    }
    if (hwloc_topology_init (&hw) < 0)
        return -1;
    if ((flags & TOPO_WHOLE_SYSTEM))
        hwflags |= HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED;
    if (hwloc_topology_set_flags (hw, hwflags) < 0
        || hwloc_topology_set_io_types_filter (hw,
                                              HWLOC_TYPE_FILTER_KEEP_IMPORTANT)
               < 0
        || hwloc_topology_set_icache_types_filter (hw,
                                                   HWLOC_TYPE_FILTER_KEEP_NONE)
               < 0
        || hwloc_topology_set_type_filter (hw,
                                           HWLOC_OBJ_L1CACHE,
                                           HWLOC_TYPE_FILTER_KEEP_NONE)
               < 0
        || hwloc_topology_set_type_filter (hw,
                                           HWLOC_OBJ_MISC,
                                           HWLOC_TYPE_FILTER_KEEP_NONE)
               < 0) {
        int saved_errno = errno;
        hwloc_topology_destroy (hw);
        errno = saved_errno;
        return -1;
    }
    /* PCI devices come from Linux's sysfs (hwloc's linux component): the
     * pci plugin (libpciaccess) adds nothing we use and leaks
     * (LeakSanitizer, trixie); gl opens X displays and opencl loads
     * vendors' ICDs: neither belongs in a root process, and the GPUs stay,
     * numbered by PCI order (doc/topology.md).  A hwloc without one of
     * them has nothing to leave out: not an error. */
    (void)hwloc_topology_set_components (hw,
                                         HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST,
                                         "pci");
    (void)hwloc_topology_set_components (hw,
                                         HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST,
                                         "gl");
    (void)hwloc_topology_set_components (hw,
                                         HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST,
                                         "opencl");
    *hwp = hw;
    return 0;
}

void topo_destroy (topo_t *t)
{
    if (t) {
        int saved_errno = errno;
        for (int lvl = 0; lvl < TOPO_NLEVELS; lvl++) {
            if (t->domsets[lvl]) {
                for (unsigned i = 0; i < t->ndom[lvl]; i++)
                    hwloc_bitmap_free (t->domsets[lvl][i]);
                free (t->domsets[lvl]);
            }
        }
        if (t->numa_nodesets) {
            for (unsigned i = 0; i < t->ndom[TOPO_NUMA]; i++)
                hwloc_bitmap_free (t->numa_nodesets[i]);
            free (t->numa_nodesets);
        }
        free (t->numa_local);
        topo_free_devices (t);
        free (t->pus);
        free (t->os_to_index);
        hwloc_bitmap_free (t->cpuset);
        hwloc_bitmap_free (t->nodeset);
        if (t->hw)
            hwloc_topology_destroy (t->hw);
        free (t);
        errno = saved_errno;
    }
}

/* ---- building the model -------------------------------------------------
 *
 * Each level is numbered densely in the order the PU table (hwloc logical
 * order) first meets a domain.  A domain is identified by a key object
 * (Core, L2, L3, Package); the object's userdata temporarily holds its
 * index + 1 while a level is numbered.  Domains that are not objects (the
 * NUMA groups, the L3 fallback to a NUMA domain, pseudo NUMA domains per
 * package) are numbered through small integer maps.
 */

struct build {
    topo_t *t;
    hwloc_obj_t *pu_obj; /* npus entries */
    hwloc_obj_t *keys;   /* scratch: key objects of one level */
};

static unsigned number_by_obj (struct build *b,
                               unsigned *count,
                               hwloc_obj_t key)
{
    if (!key->userdata) {
        b->keys[*count] = key;
        (*count)++;
        key->userdata = (void *)(uintptr_t)*count;
    }
    return (unsigned)(uintptr_t)key->userdata - 1;
}

static void clear_keys (struct build *b, unsigned count)
{
    for (unsigned i = 0; i < count; i++)
        b->keys[i]->userdata = NULL;
}

static unsigned number_by_int (int *map, unsigned *count, unsigned key)
{
    if (map[key] < 0)
        map[key] = (int)(*count)++;
    return (unsigned)map[key];
}

static hwloc_obj_t core_key (hwloc_topology_t hw, hwloc_obj_t pu)
{
    hwloc_obj_t core = hwloc_get_ancestor_obj_by_type (hw, HWLOC_OBJ_CORE, pu);
    return core ? core : pu;
}

/* The L2 above the core (so that a core never straddles two L2 domains);
 * the core itself where there is none. */
static hwloc_obj_t l2_key (hwloc_topology_t hw, hwloc_obj_t core)
{
    hwloc_obj_t l2 =
        hwloc_get_ancestor_obj_by_type (hw, HWLOC_OBJ_L2CACHE, core);
    return l2 ? l2 : core;
}

static hwloc_obj_t l3_obj (hwloc_topology_t hw, hwloc_obj_t l2)
{
    return hwloc_get_ancestor_obj_by_type (hw, HWLOC_OBJ_L3CACHE, l2);
}

static int number_objects (struct build *b)
{
    topo_t *t = b->t;
    hwloc_topology_t hw = t->hw;
    unsigned n;

    /* core */
    n = 0;
    for (unsigned i = 0; i < t->npus; i++)
        t->pus[i].dom[TOPO_CORE] =
            number_by_obj (b, &n, core_key (hw, b->pu_obj[i]));
    clear_keys (b, n);
    t->ndom[TOPO_CORE] = n;

    /* l2 */
    n = 0;
    for (unsigned i = 0; i < t->npus; i++) {
        hwloc_obj_t key = l2_key (hw, core_key (hw, b->pu_obj[i]));
        t->pus[i].dom[TOPO_L2] = number_by_obj (b, &n, key);
    }
    clear_keys (b, n);
    t->ndom[TOPO_L2] = n;

    /* package */
    n = 0;
    for (unsigned i = 0; i < t->npus; i++) {
        hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type (hw,
                                                          HWLOC_OBJ_PACKAGE,
                                                          b->pu_obj[i]);
        if (!pkg)
            pkg = hwloc_get_root_obj (hw);
        t->pus[i].dom[TOPO_PKG] = number_by_obj (b, &n, pkg);
    }
    clear_keys (b, n);
    t->ndom[TOPO_PKG] = n;
    return 0;
}

/* NUMA domains: the NUMA nodes with CPUs in the table, grouped by
 * identical cpuset; a PU belongs to the smallest group that covers it.
 * PUs covered by none go to a pseudo domain of their package. */
static int number_numa (struct build *b)
{
    topo_t *t = b->t;
    hwloc_topology_t hw = t->hw;
    int nnodes = hwloc_get_nbobjs_by_type (hw, HWLOC_OBJ_NUMANODE);
    unsigned ngroups = 0;
    hwloc_bitmap_t *gcpus = NULL;
    hwloc_bitmap_t *gnodes = NULL;
    int *gweight = NULL;
    int *group_dom = NULL;
    int *pkg_dom = NULL;
    unsigned n = 0;
    int rc = -1;

    if (nnodes < 0)
        nnodes = 0;
    if (!(gcpus = calloc (nnodes + 1, sizeof (*gcpus)))
        || !(gnodes = calloc (nnodes + 1, sizeof (*gnodes)))
        || !(gweight = calloc (nnodes + 1, sizeof (*gweight)))
        || !(group_dom = malloc ((nnodes + 1) * sizeof (*group_dom)))
        || !(pkg_dom = malloc ((t->ndom[TOPO_PKG] + 1) * sizeof (*pkg_dom))))
        goto out;
    for (int i = 0; i < nnodes; i++)
        group_dom[i] = -1;
    for (unsigned i = 0; i < t->ndom[TOPO_PKG]; i++)
        pkg_dom[i] = -1;

    for (int i = 0; i < nnodes; i++) {
        hwloc_obj_t node = hwloc_get_obj_by_type (hw, HWLOC_OBJ_NUMANODE, i);
        unsigned g;
        if (!node->cpuset
            || !hwloc_bitmap_intersects (node->cpuset, t->cpuset))
            continue;
        for (g = 0; g < ngroups; g++)
            if (hwloc_bitmap_isequal (gcpus[g], node->cpuset))
                break;
        if (g == ngroups) {
            if (!(gcpus[g] = hwloc_bitmap_dup (node->cpuset))
                || !(gnodes[g] = hwloc_bitmap_alloc ()))
                goto out;
            gweight[g] = hwloc_bitmap_weight (gcpus[g]);
            ngroups++;
        }
        if (hwloc_bitmap_set (gnodes[g], node->os_index) < 0)
            goto out;
    }

    /* at most one domain per group plus one per package */
    if (!(t->numa_nodesets =
              calloc (ngroups + t->ndom[TOPO_PKG], sizeof (*t->numa_nodesets)))
        || !(t->numa_local = calloc (ngroups + t->ndom[TOPO_PKG],
                                     sizeof (*t->numa_local))))
        goto out;

    for (unsigned i = 0; i < t->npus; i++) {
        unsigned os = t->pus[i].os;
        int best = -1;
        unsigned dom;
        for (unsigned g = 0; g < ngroups; g++) {
            if (hwloc_bitmap_isset (gcpus[g], os)
                && (best < 0 || gweight[g] < gweight[best]))
                best = (int)g;
        }
        if (best >= 0) {
            unsigned before = n;
            dom = number_by_int (group_dom, &n, (unsigned)best);
            if (n != before) {
                if (!(t->numa_nodesets[dom] = hwloc_bitmap_dup (gnodes[best])))
                    goto out_partial;
                t->numa_local[dom] = true;
            }
        } else {
            unsigned before = n;
            dom = number_by_int (pkg_dom, &n, t->pus[i].dom[TOPO_PKG]);
            if (n != before) {
                if (!(t->numa_nodesets[dom] = hwloc_bitmap_dup (t->nodeset)))
                    goto out_partial;
                t->numa_local[dom] = false;
            }
        }
        t->pus[i].dom[TOPO_NUMA] = dom;
    }
    t->ndom[TOPO_NUMA] = n;
    rc = 0;
    goto out;
out_partial:
    t->ndom[TOPO_NUMA] = n; /* so that topo_destroy frees what exists */
out:
    if (gcpus) {
        for (unsigned g = 0; g < ngroups; g++) {
            hwloc_bitmap_free (gcpus[g]);
            hwloc_bitmap_free (gnodes[g]);
        }
    }
    free (gcpus);
    free (gnodes);
    free (gweight);
    free (group_dom);
    free (pkg_dom);
    if (rc < 0 && errno == 0)
        errno = ENOMEM;
    return rc;
}

/* L3: the L3 above the L2 domain; where there is none, the NUMA domain
 * of the PU (its own index space, numbered in the same dense order). */
static int number_l3 (struct build *b)
{
    topo_t *t = b->t;
    hwloc_topology_t hw = t->hw;
    int *numa_dom;
    unsigned n = 0;

    if (!(numa_dom = malloc ((t->ndom[TOPO_NUMA] + 1) * sizeof (*numa_dom))))
        return -1;
    for (unsigned i = 0; i < t->ndom[TOPO_NUMA]; i++)
        numa_dom[i] = -1;
    for (unsigned i = 0; i < t->npus; i++) {
        hwloc_obj_t l3 = l3_obj (hw, l2_key (hw, core_key (hw, b->pu_obj[i])));
        if (l3) {
            if (!l3->userdata) {
                b->keys[n] = l3;
                l3->userdata = (void *)(uintptr_t)(n + 1);
                n++;
            }
            t->pus[i].dom[TOPO_L3] = (unsigned)(uintptr_t)l3->userdata - 1;
        } else {
            unsigned d = t->pus[i].dom[TOPO_NUMA];
            if (numa_dom[d] < 0) {
                b->keys[n] = NULL; /* not an object: nothing to clear */
                numa_dom[d] = (int)n++;
            }
            t->pus[i].dom[TOPO_L3] = (unsigned)numa_dom[d];
        }
    }
    for (unsigned i = 0; i < n; i++)
        if (b->keys[i])
            b->keys[i]->userdata = NULL;
    t->ndom[TOPO_L3] = n;
    free (numa_dom);
    return 0;
}

static int build_domsets (topo_t *t)
{
    for (int lvl = 0; lvl < TOPO_NLEVELS; lvl++) {
        if (!(t->domsets[lvl] =
                  calloc (t->ndom[lvl] + 1, sizeof (*t->domsets[lvl]))))
            return -1;
        for (unsigned i = 0; i < t->ndom[lvl]; i++)
            if (!(t->domsets[lvl][i] = hwloc_bitmap_alloc ()))
                return -1;
        for (unsigned i = 0; i < t->npus; i++)
            if (hwloc_bitmap_set (t->domsets[lvl][t->pus[i].dom[lvl]],
                                  t->pus[i].os)
                < 0)
                return -1;
    }
    return 0;
}

/* ---- CPU kinds (doc/topology.md, "CPU kinds") ------------------------ */

/* Whether hwloc's kind info NAME says only how fast a core may run or how
 * the kernel ranks it, not what the core is: hwloc 2.10 to 2.12 make a
 * kind of every boost limit of a homogeneous AMD part (hwloc #690), and
 * a Grace of every small capacity difference (hwloc #634). */
static bool kind_info_is_speed (const char *name)
{
    return !strcmp (name, "FrequencyMaxMHz")
           || !strcmp (name, "FrequencyBaseMHz")
           || !strcmp (name, "LinuxCapacity");
}

static int cmp_str (const void *a, const void *b)
{
    return strcmp (*(char *const *)a, *(char *const *)b);
}

/* Append to *s (malloc'd, *len used) the text t. */
static int sig_add (char **s, size_t *len, const char *t)
{
    size_t n = strlen (t);
    char *p = realloc (*s, *len + n + 1);

    if (!p)
        return -1;
    memcpy (p + *len, t, n + 1);
    *s = p;
    *len += n;
    return 0;
}

/* What the cores of PU are: the PUs of its core and the type and size of
 * every cache above it. */
static int pu_shape (hwloc_topology_t hw, hwloc_obj_t pu, char *buf, size_t n)
{
    hwloc_obj_t core = hwloc_get_ancestor_obj_by_type (hw, HWLOC_OBJ_CORE, pu);
    size_t used;

    used = (size_t)snprintf (buf,
                             n,
                             "core:%d",
                             core ? hwloc_bitmap_weight (core->cpuset) : 1);
    for (hwloc_obj_t o = pu->parent; o && used < n; o = o->parent)
        if (hwloc_obj_type_is_cache (o->type) && o->attr)
            used += (size_t)snprintf (buf + used,
                                      n - used,
                                      ";%d:%u:%llu",
                                      (int)o->type,
                                      o->attr->cache.depth,
                                      (unsigned long long)o->attr->cache.size);
    return used < n ? 0 : -1;
}

/* The signature of hwloc's kind K: its infos but the speed ones, sorted,
 * and the one shape of its PUs (or a text no other kind has, when its PUs
 * differ).  Malloc'd; NULL ENOMEM. */
static char *kind_signature (hwloc_topology_t hw, unsigned k)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc ();
    struct hwloc_info_s *infos = NULL;
    unsigned ninfos = 0;
    char **names = NULL, *sig = NULL, shape[512], first[512] = "";
    size_t len = 0, nn = 0;
    bool mixed = false;
    int os, rc = -1;

    if (!set
        || hwloc_cpukinds_get_info (hw, k, set, NULL, &ninfos, &infos, 0) < 0)
        goto out;
    if (ninfos && !(names = calloc (ninfos, sizeof (*names))))
        goto out;
    for (unsigned i = 0; i < ninfos; i++) {
        if (kind_info_is_speed (infos[i].name))
            continue;
        if (asprintf (&names[nn], "%s=%s\n", infos[i].name, infos[i].value)
            < 0) {
            names[nn] = NULL;
            goto out;
        }
        nn++;
    }
    if (nn) /* names is NULL for a kind with no info: qsort wants non-NULL */
        qsort (names, nn, sizeof (*names), cmp_str);
    if (sig_add (&sig, &len, "") < 0)
        goto out;
    for (size_t i = 0; i < nn; i++)
        if (sig_add (&sig, &len, names[i]) < 0)
            goto out;
    hwloc_bitmap_foreach_begin (os, set)
    {
        hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index (hw, (unsigned)os);
        if (!pu || pu_shape (hw, pu, shape, sizeof (shape)) < 0)
            mixed = true;
        else if (!first[0])
            snprintf (first, sizeof (first), "%s", shape);
        else if (strcmp (first, shape) != 0)
            mixed = true;
    }
    hwloc_bitmap_foreach_end ();
    if (mixed)
        snprintf (first, sizeof (first), "mixed:%u", k);
    if (sig_add (&sig, &len, first) < 0)
        goto out;
    rc = 0;
out:
    for (size_t i = 0; i < nn; i++)
        free (names[i]);
    free (names);
    hwloc_bitmap_free (set);
    if (rc < 0) {
        free (sig);
        errno = ENOMEM;
        return NULL;
    }
    return sig;
}

/* slurm-pin's kind of each of hwloc's NK kinds (map[NK], malloc'd): kinds
 * whose cores are the same (the same infos but speed, the same core and
 * caches) are one kind; the kinds are numbered in hwloc's order of their
 * first member.  NULL with errno ENOMEM. */
static int *kind_map (hwloc_topology_t hw, unsigned nk)
{
    char **sig = calloc (nk, sizeof (*sig));
    int *map = malloc (nk * sizeof (*map));
    int next = 0;

    if (!sig || !map)
        goto fail;
    for (unsigned k = 0; k < nk; k++)
        if (!(sig[k] = kind_signature (hw, k)))
            goto fail;
    for (unsigned k = 0; k < nk; k++) {
        map[k] = -1;
        for (unsigned j = 0; j < k && map[k] < 0; j++)
            if (!strcmp (sig[j], sig[k]))
                map[k] = map[j];
        if (map[k] < 0)
            map[k] = next++;
    }
    for (unsigned k = 0; k < nk; k++)
        free (sig[k]);
    free (sig);
    return map;
fail:
    if (sig)
        for (unsigned k = 0; k < nk; k++)
            free (sig[k]);
    free (sig);
    free (map);
    errno = ENOMEM;
    return NULL;
}

static int build_pus (struct build *b)
{
    topo_t *t = b->t;
    hwloc_topology_t hw = t->hw;
    hwloc_const_bitmap_t allowed = hwloc_topology_get_allowed_cpuset (hw);
    int nobjs = hwloc_get_nbobjs_by_type (hw, HWLOC_OBJ_PU);
    hwloc_obj_t pu = NULL;
    unsigned n = 0;
    int nk = hwloc_cpukinds_get_nr (hw, 0);
    int *kmap = NULL;

    if (nobjs <= 0)
        return 0;
    if (nk > 1 && !(kmap = kind_map (hw, (unsigned)nk)))
        return -1;
    if (!(t->pus = calloc (nobjs, sizeof (*t->pus)))
        || !(b->pu_obj = calloc (nobjs, sizeof (*b->pu_obj)))
        || !(b->keys = calloc (nobjs, sizeof (*b->keys)))) {
        free (kmap);
        return -1;
    }
    while ((pu = hwloc_get_next_obj_by_type (hw, HWLOC_OBJ_PU, pu))
           && n < (unsigned)nobjs) {
        if (!(t->flags & TOPO_WHOLE_SYSTEM)
            && !hwloc_bitmap_isset (allowed, pu->os_index))
            continue;
        b->pu_obj[n] = pu;
        t->pus[n].os = pu->os_index;
        t->pus[n].kind = hwloc_cpukinds_get_by_cpuset (hw, pu->cpuset, 0);
        if (kmap && t->pus[n].kind >= 0 && t->pus[n].kind < nk)
            t->pus[n].kind = kmap[t->pus[n].kind];
        if (hwloc_bitmap_set (t->cpuset, pu->os_index) < 0) {
            free (kmap);
            return -1;
        }
        n++;
    }
    free (kmap);
    t->npus = n;
    if (n == 0)
        return 0;

    int last = hwloc_bitmap_last (t->cpuset);
    t->os_to_index_len = (unsigned)last + 1;
    if (!(t->os_to_index =
              malloc (t->os_to_index_len * sizeof (*t->os_to_index))))
        return -1;
    for (unsigned i = 0; i < t->os_to_index_len; i++)
        t->os_to_index[i] = -1;
    for (unsigned i = 0; i < n; i++)
        t->os_to_index[t->pus[i].os] = (int)i;
    return 0;
}

static int build_nodeset (topo_t *t)
{
    hwloc_obj_t node = NULL;
    while (
        (node = hwloc_get_next_obj_by_type (t->hw, HWLOC_OBJ_NUMANODE, node)))
        if (hwloc_bitmap_set (t->nodeset, node->os_index) < 0)
            return -1;
    return 0;
}

/* hwloc 2.9 takes a PU's number (os_index) and cpuset from an XML file as
 * written.  The model needs every PU's number once, below
 * TOPO_MAX_OS (it sizes a table by the largest), and its cpuset to be
 * that number alone (Slurm's core ids map through cpusets).  -1 with
 * errno EINVAL and errp filled if not. */
static int check_pus (hwloc_topology_t hw, const char *src, pin_error_t *errp)
{
    hwloc_bitmap_t seen = hwloc_bitmap_alloc ();
    hwloc_obj_t pu = NULL;
    int rc = -1;

    if (!seen) {
        errno = ENOMEM;
        return errprintf (errp, "topology '%s': out of memory", src);
    }
    errno = EINVAL;
    while ((pu = hwloc_get_next_obj_by_type (hw, HWLOC_OBJ_PU, pu))) {
        if (pu->os_index >= TOPO_MAX_OS) {
            errprintf (errp,
                       "topology '%s': PU P#%u out of range; CPU "
                       "numbers are below %d",
                       src,
                       pu->os_index,
                       TOPO_MAX_OS);
            goto out;
        }
        if (hwloc_bitmap_isset (seen, pu->os_index)) {
            errprintf (errp,
                       "topology '%s': PU P#%u appears twice",
                       src,
                       pu->os_index);
            goto out;
        }
        if (!pu->cpuset || hwloc_bitmap_weight (pu->cpuset) != 1
            || !hwloc_bitmap_isset (pu->cpuset, pu->os_index)) {
            errprintf (errp,
                       "topology '%s': PU P#%u has a cpuset other "
                       "than its own number",
                       src,
                       pu->os_index);
            goto out;
        }
        if (hwloc_bitmap_set (seen, pu->os_index) < 0) {
            errno = ENOMEM;
            errprintf (errp, "topology '%s': out of memory", src);
            goto out;
        }
    }
    rc = 0;
out:
    hwloc_bitmap_free (seen);
    return rc;
}

/* The domains nest: the PUs of a core share their L2, L3, NUMA domain and
 * package, those of an L2 domain their L3.  hwloc's discovery guarantees
 * it; an XML file whose NUMA nodes split a core does not, and the
 * policies would then split cores.  -1 with errno EINVAL and errp filled
 * if they do not. */
static int check_nesting (const topo_t *t, const char *src, pin_error_t *errp)
{
    static const struct {
        int inner, outer;
        const char *inner_name, *outer_name;
    } rules[] = {
        {TOPO_CORE, TOPO_L2, "a core", "L2"},
        {TOPO_CORE, TOPO_NUMA, "a core", "NUMA domain"},
        {TOPO_CORE, TOPO_PKG, "a core", "package"},
        {TOPO_CORE, TOPO_L3, "a core", "L3"},
        {TOPO_L2, TOPO_L3, "an L2", "L3"},
    };
    unsigned *first = NULL;
    int rc = -1;

    for (size_t r = 0; r < sizeof (rules) / sizeof (rules[0]); r++) {
        unsigned n = t->ndom[rules[r].inner];

        free (first);
        if (!(first = malloc ((n + 1) * sizeof (*first)))) {
            errno = ENOMEM;
            errprintf (errp, "topology '%s': out of memory", src);
            goto out;
        }
        for (unsigned d = 0; d < n; d++)
            first[d] = UINT32_MAX;
        for (unsigned i = 0; i < t->npus; i++) {
            const struct topo_pu *pu = &t->pus[i];
            int outer = rules[r].outer;
            unsigned *f = &first[pu->dom[rules[r].inner]];
            if (*f == UINT32_MAX)
                *f = i;
            else if (t->pus[*f].dom[outer] != pu->dom[outer]) {
                errno = EINVAL;
                errprintf (errp,
                           "topology '%s': P#%u and P#%u share %s "
                           "but not their %s; not a topology hwloc "
                           "discovers",
                           src,
                           t->pus[*f].os,
                           pu->os,
                           rules[r].inner_name,
                           rules[r].outer_name);
                goto out;
            }
        }
    }
    rc = 0;
out:
    free (first);
    return rc;
}

/* Slurm 22.05's slurmd numbers cores densely: the N-th Core object of
 * its hwloc topology in logical order (sockets in logical order, cores
 * below each), loaded with disallowed PUs included; on a machine without
 * Core objects every PU is a core (doc/topology.md). */
static void number_slurm_cores (struct build *b)
{
    topo_t *t = b->t;
    int ncores = hwloc_get_nbobjs_by_type (t->hw, HWLOC_OBJ_CORE);
    bool pus_are_cores = ncores <= 0;

    if (pus_are_cores)
        ncores = hwloc_get_nbobjs_by_type (t->hw, HWLOC_OBJ_PU);
    t->nslurm_cores = ncores > 0 ? (unsigned)ncores : 0;
    for (unsigned i = 0; i < t->npus; i++) {
        hwloc_obj_t o = pus_are_cores
                            ? b->pu_obj[i]
                            : hwloc_get_ancestor_obj_by_type (t->hw,
                                                              HWLOC_OBJ_CORE,
                                                              b->pu_obj[i]);
        t->pus[i].slurm_core = o ? (int)o->logical_index : -1;
    }
}

topo_t *topo_from_hw (hwloc_topology_t hw,
                      int flags,
                      const char *src,
                      pin_error_t *errp)
{
    struct build b = {0};
    topo_t *t;

    if (!(t = calloc (1, sizeof (*t)))) {
        hwloc_topology_destroy (hw);
        errprintf (errp, "topology '%s': out of memory", src);
        return NULL;
    }
    t->hw = hw;
    t->flags = flags;
    b.t = t;
    if (check_pus (hw, src, errp) < 0)
        goto error;
    errno = 0;
    if (!(t->cpuset = hwloc_bitmap_alloc ())
        || !(t->nodeset = hwloc_bitmap_alloc ()) || build_nodeset (t) < 0
        || build_pus (&b) < 0)
        goto nomem;
    if (t->npus == 0) {
        errprintf (errp,
                   "topology '%s': no usable CPU (none is allowed)",
                   src);
        errno = ENOENT;
        goto error;
    }
    if (number_objects (&b) < 0 || number_numa (&b) < 0 || number_l3 (&b) < 0
        || build_domsets (t) < 0)
        goto nomem;
    if (check_nesting (t, src, errp) < 0)
        goto error;
    number_slurm_cores (&b);
    if (topo_build_devices (t) < 0)
        goto nomem;
    free (b.pu_obj);
    free (b.keys);
    return t;
nomem:
    if (errno == 0)
        errno = ENOMEM;
    errprintf (errp, "topology '%s': %s", src, strerror (errno));
error:
    free (b.pu_obj);
    free (b.keys);
    topo_destroy (t);
    return NULL;
}

topo_t *topo_from_table (struct topo_pu *pus,
                         unsigned npus,
                         int flags,
                         hwloc_bitmap_t const *numa_nodesets,
                         const bool *numa_local,
                         unsigned nnuma,
                         hwloc_const_bitmap_t nodeset,
                         unsigned nslurm_cores,
                         const char *src,
                         pin_error_t *errp)
{
    topo_t *t;
    unsigned *seen = NULL;

    if (!(t = calloc (1, sizeof (*t)))) {
        free (pus);
        errprintf (errp, "topology '%s': out of memory", src);
        return NULL;
    }
    t->flags = flags;
    t->pus = pus;
    t->npus = npus;
    t->nslurm_cores = nslurm_cores;
    errno = 0;
    if (npus == 0 || !pus)
        goto invalid;
    if (!(t->cpuset = hwloc_bitmap_alloc ())
        || !(t->nodeset = hwloc_bitmap_dup (nodeset)))
        goto nomem;
    /* OS indexes unique; each level's indexes dense (0..n-1, every one
     * used), the NUMA level matching the NUMA domains given */
    for (unsigned i = 0; i < npus; i++) {
        if (pus[i].os >= TOPO_MAX_OS
            || hwloc_bitmap_isset (t->cpuset, pus[i].os) || pus[i].kind < -1
            || pus[i].slurm_core < -1
            || (pus[i].slurm_core >= 0
                && (unsigned)pus[i].slurm_core >= nslurm_cores))
            goto invalid;
        if (hwloc_bitmap_set (t->cpuset, pus[i].os) < 0)
            goto nomem;
    }
    if (!(seen = calloc (npus + 1, sizeof (*seen))))
        goto nomem;
    for (int lvl = 0; lvl < TOPO_NLEVELS; lvl++) {
        unsigned n = 0;
        memset (seen, 0, (npus + 1) * sizeof (*seen));
        for (unsigned i = 0; i < npus; i++) {
            unsigned d = pus[i].dom[lvl];
            if (d >= npus)
                goto invalid;
            if (!seen[d]++)
                n = d + 1 > n ? d + 1 : n;
        }
        for (unsigned d = 0; d < n; d++)
            if (!seen[d])
                goto invalid;
        t->ndom[lvl] = n;
    }
    if (t->ndom[TOPO_NUMA] != nnuma)
        goto invalid;
    if (!(t->numa_nodesets = calloc (nnuma + 1, sizeof (*t->numa_nodesets)))
        || !(t->numa_local = calloc (nnuma + 1, sizeof (*t->numa_local))))
        goto nomem;
    for (unsigned d = 0; d < nnuma; d++) {
        if (!numa_nodesets[d] || hwloc_bitmap_iszero (numa_nodesets[d])
            || !hwloc_bitmap_isincluded (numa_nodesets[d], nodeset))
            goto invalid;
        if (!(t->numa_nodesets[d] = hwloc_bitmap_dup (numa_nodesets[d])))
            goto nomem;
        t->numa_local[d] = numa_local[d];
    }
    t->os_to_index_len = (unsigned)hwloc_bitmap_last (t->cpuset) + 1;
    if (!(t->os_to_index =
              malloc (t->os_to_index_len * sizeof (*t->os_to_index))))
        goto nomem;
    for (unsigned i = 0; i < t->os_to_index_len; i++)
        t->os_to_index[i] = -1;
    for (unsigned i = 0; i < npus; i++)
        t->os_to_index[pus[i].os] = (int)i;
    if (build_domsets (t) < 0)
        goto nomem;
    free (seen);
    return t;
invalid:
    free (seen);
    errprintf (errp, "topology '%s': inconsistent model", src);
    topo_destroy (t);
    errno = EINVAL;
    return NULL;
nomem:
    free (seen);
    errprintf (errp, "topology '%s': out of memory", src);
    topo_destroy (t);
    errno = ENOMEM;
    return NULL;
}

static bool is_xml_path (const char *src)
{
    size_t len = strlen (src);
    return strchr (src, '/') != NULL
           || (len >= 4 && strcmp (src + len - 4, ".xml") == 0);
}

/* dl_iterate_phdr callback: is hwloc's libxml2 plugin mapped? */
static int find_libxml_plugin (struct dl_phdr_info *info,
                               size_t size,
                               void *arg)
{
    const char *name = info->dlpi_name;
    const char *base;

    (void)size;
    if (!name || !*name)
        return 0;
    base = strrchr (name, '/');
    base = base ? base + 1 : name;
    if (strcmp (base, TOPO_LIBXML_PLUGIN) == 0) {
        *(bool *)arg = true;
        return 1;
    }
    return 0;
}

/* hwloc chooses its XML reader in hwloc_xml_component_instantiate():
 * the libxml2 one when its plugin is loaded (hwloc_topology_init() loads
 * the plugins) unless HWLOC_LIBXML, or else HWLOC_LIBXML_IMPORT, is 0;
 * its built-in one otherwise.  hwloc has no call that says which, so
 * the same rule is applied here.  Call with a topology initialized. */
static const char *xml_reader_loaded (void)
{
    const char *env = getenv ("HWLOC_LIBXML");
    bool plugin = false;

    if (!env)
        env = getenv ("HWLOC_LIBXML_IMPORT");
    if (env && atoi (env) == 0)
        return TOPO_XML_READER_BUILTIN;
    dl_iterate_phdr (find_libxml_plugin, &plugin);
    return plugin ? TOPO_XML_READER_LIBXML2 : TOPO_XML_READER_BUILTIN;
}

const char *topo_xml_reader (void)
{
    hwloc_topology_t hw;
    const char *reader;

    if (hwloc_topology_init (&hw) < 0)
        return NULL;
    reader = xml_reader_loaded ();
    hwloc_topology_destroy (hw);
    return reader;
}

/* One line for an XML file hwloc would not load, naming the reader that
 * refused it and what would read it. */
static void xml_load_error (pin_error_t *errp,
                            const char *src,
                            int errnum,
                            const char *reader)
{
    if (errnum != EINVAL)
        errprintf (errp,
                   "topology '%s': cannot load XML: %s",
                   src,
                   strerror (errnum));
    else if (strcmp (reader, TOPO_XML_READER_BUILTIN) == 0)
        errprintf (errp,
                   "topology '%s': cannot load XML: hwloc's built-in "
                   "XML reader refused it (it reads only what "
                   "hwloc's own exporter writes); install "
                   "libhwloc-plugins for hwloc's libxml2 reader",
                   src);
    else
        errprintf (errp,
                   "topology '%s': cannot load XML: hwloc's libxml2 "
                   "XML reader refused it: not a valid hwloc XML "
                   "topology",
                   src);
}

/* Does the document end with its root's closing tag (then whitespace)? */
static bool xml_complete (const char *buf, size_t len)
{
    static const char end[] = "</topology>";
    size_t n = sizeof (end) - 1;

    while (len > 0 && isspace ((unsigned char)buf[len - 1]))
        len--;
    return len >= n && memcmp (buf + len - n, end, n) == 0;
}

/* Can `c` be part of an XML name as far as this scanner cares? */
static bool xml_name_char (char c)
{
    return c && !isspace ((unsigned char)c) && !strchr ("=<>/\"'", c);
}

/* Is the name of `len` bytes at `s`, without a namespace prefix, `local`? */
static bool xml_local_name_is (const char *s, size_t len, const char *local)
{
    const char *colon = memrchr (s, ':', len);

    if (colon) {
        len -= (size_t)(colon + 1 - s);
        s = colon + 1;
    }
    return len == strlen (local) && memcmp (s, local, len) == 0;
}

/* One attribute value of a start tag being scanned. */
struct xml_value {
    const char *s;
    size_t len;
};

/* Is the value a decimal number below 100000 without a leading zero? */
static bool xml_small_number (const struct xml_value *v)
{
    if (!v->s || v->len == 0 || v->len > 5 || (v->len > 1 && v->s[0] == '0'))
        return false;
    for (size_t i = 0; i < v->len; i++)
        if (!isdigit ((unsigned char)v->s[i]))
            return false;
    return true;
}

/* Is the value a set as hwloc writes them: "0x" and 1 to 8 hex digits (or
 * "0xf...f" for an infinite set), then ',' and such chunks, which may be
 * empty ("0x000000ff,,0x1")? */
static bool xml_set_syntax (const struct xml_value *v)
{
    const char *p = v->s, *end = v->s + v->len;
    bool first = true;

    if (v->len >= 7 && memcmp (p, "0xf...f", 7) == 0) {
        p += 7;
        first = false;
        if (p == end)
            return true;
        if (*p++ != ',')
            return false;
    }
    for (;;) {
        int digits = 0;

        if (p + 2 <= end && p[0] == '0' && p[1] == 'x') {
            for (p += 2; p < end && isxdigit ((unsigned char)*p); p++)
                digits++;
            if (digits == 0 || digits > 8)
                return false;
        } else if (first)
            return false; /* hwloc 2.9 asserts on a leading ',' */
        first = false;
        if (p == end)
            return true;
        if (*p++ != ',')
            return false;
    }
}

/* Is the type value one hwloc's exporter writes for an object that has no
 * os_index of its own (neither PU nor NUMANode)?  hwloc also reads
 * abbreviations and other case ("NUMA*ode" is a NUMA node to it), so
 * anything else counts as a PU or NUMA node here. */
static bool xml_type_without_index (const struct xml_value *v)
{
    static const char *types[] = {
        "Machine",  "System",   "Package",  "Socket",  "Die",      "Core",
        "Group",    "L1Cache",  "L2Cache",  "L3Cache", "L4Cache",  "L5Cache",
        "L1iCache", "L2iCache", "L3iCache", "Cache",   "MemCache", "Bridge",
        "PCIDev",   "OSDev",    "Misc",     NULL,
    };

    for (int i = 0; types[i]; i++)
        if (v->len == strlen (types[i])
            && memcmp (v->s, types[i], v->len) == 0)
            return true;
    return false;
}

/* Is the set written in `part` (xml_set_syntax() holds) within the one in
 * `whole`?  A value that is missing or does not parse is not within
 * anything. */
static bool xml_set_within (const struct xml_value *part,
                            const struct xml_value *whole)
{
    hwloc_bitmap_t a = NULL, b = NULL;
    char *sa = NULL, *sb = NULL;
    bool within = false;

    if (!part->s || !whole->s)
        return false;
    if (!(sa = strndup (part->s, part->len))
        || !(sb = strndup (whole->s, whole->len))
        || !(a = hwloc_bitmap_alloc ()) || !(b = hwloc_bitmap_alloc ()))
        goto out;
    if (hwloc_bitmap_sscanf (a, sa) < 0 || hwloc_bitmap_sscanf (b, sb) < 0)
        goto out;
    within = hwloc_bitmap_isincluded (a, b);
out:
    hwloc_bitmap_free (a);
    hwloc_bitmap_free (b);
    free (sa);
    free (sb);
    return within;
}

/* hwloc 2.9 (Debian 12) trusts more of an XML file than its exporter
 * guarantees, and crashes or allocates without bound on what it trusts:
 *   - it checks only that a normal or memory object has a cpuset; one
 *     without complete_cpuset, nodeset or complete_nodeset makes it
 *     dereference NULL while loading (SEGV in hwloc_bitmap_compare_first(),
 *     _set() or _or(); refused upstream since hwloc PR #783, 2026);
 *   - it sets bit os_index of a PU's or NUMA node's sets, so a missing
 *     os_index (-1) or a huge one costs a 512 MiB bitmap per set;
 *   - hwloc_bitmap_sscanf() fails an assertion (abort) on a set that
 *     starts with ',';
 *   - a document whose first object is not the Machine, or an object
 *     whose cpuset is not within its complete_cpuset, can leave the
 *     topology empty, after which hwloc reads memory it freed (SEGV);
 *   - its built-in reader stops reading a tag's attributes at one without
 *     a quoted value, leaving sets NULL.
 * Every attribute of an element must be name="value" (as XML requires),
 * and hwloc's exporter writes all four sets, os_index of every PU and NUMA
 * node, and sets as xml_set_syntax() reads them.  So every start tag
 * named "object" that has a cpuset must have the other three sets (a PU
 * or NUMA node all four: without a cpuset, hwloc 2.9 dereferences NULL
 * importing a NUMA node of an hwloc 1.x file), one of
 * type PU or NUMANode (or a type xml_type_without_index() does not know)
 * an os_index below 100000 (the bound of CPU numbers in list.c), any
 * attribute of any tag named like a cpuset or nodeset must be written as
 * a set, and the first object must be of type Machine
 * (System in hwloc 1.x files).  A tag ends at '>' or at the next '<',
 * inside quotes too (hwloc's exporter escapes both in values), so that
 * an unbalanced quote, a processing instruction or a comment cannot hide
 * the tags after it.  Conservatively: a tag or attribute with any
 * namespace prefix, anywhere in the document (comments included), makes
 * a rule apply, but only the exact attribute names with quoted values
 * satisfy it; a false alarm only refuses a file no exporter wrote.
 * Returns what is wrong with the first tag that breaks a rule and sets
 * *linep to its line, or returns NULL. */
static const char *xml_object_check (const char *buf, unsigned *linep)
{
    static const char *sets[] = {
        "cpuset",
        "complete_cpuset",
        "nodeset",
        "complete_nodeset",
    };
    unsigned line = 1;
    const char *p = buf;
    bool first_object = true;

    while (*p) {
        const char *name = p + 1;
        struct xml_value type = {NULL, 0}, os_index = {NULL, 0};
        struct xml_value setval[4] = {{NULL, 0}};
        unsigned tagline = line, have = 0;
        bool pu_or_numa = false, object, bad_set = false, machine = false;
        bool element, bad_attr = false;
        size_t len;

        if (*p != '<') {
            line += *p++ == '\n';
            continue;
        }
        for (len = 0; xml_name_char (name[len]); len++)
            ;
        p = name + len;
        object = xml_local_name_is (name, len, "object");
        /* not </x>, <?x ?> or <!x> */
        element = len > 0 && isalpha ((unsigned char)name[0]);
        /* the attributes, up to the end of the tag */
        while (*p && *p != '>' && *p != '<') {
            if (xml_name_char (*p)) {
                const char *attr = p;
                struct xml_value *want = NULL;
                bool quoted, eq = false;

                while (xml_name_char (*p))
                    p++;
                len = (size_t)(p - attr);
                while (isspace ((unsigned char)*p) || *p == '=') {
                    eq |= *p == '=';
                    line += *p++ == '\n';
                }
                quoted = eq && (*p == '"' || *p == '\'');
                if (element && !quoted)
                    bad_attr = true;
                /* what makes a rule apply matches with any prefix and any
                 * value, what satisfies it only with the exact name and
                 * a quoted value: a reader may keep a prefix as part of
                 * the name, or stop at a value without quotes */
                if (xml_local_name_is (attr, len, sets[0]))
                    have |= 1;
                for (unsigned i = 1; i < 4; i++)
                    if (quoted && len == strlen (sets[i])
                        && memcmp (attr, sets[i], len) == 0)
                        have |= 1u << i;
                for (unsigned i = 0; i < 4; i++)
                    if (quoted && len == strlen (sets[i])
                        && memcmp (attr, sets[i], len) == 0) {
                        setval[i].s = p + 1;
                        setval[i].len =
                            strcspn (setval[i].s, *p == '"' ? "\"<>" : "'<>");
                    }
                if (xml_local_name_is (attr, len, "type"))
                    want = &type;
                else if (len == 8 && memcmp (attr, "os_index", 8) == 0)
                    want = &os_index;
                /* any name ending in cpuset or nodeset */
                if ((len >= 6 && memcmp (attr + len - 6, "cpuset", 6) == 0)
                    || (len >= 7
                        && memcmp (attr + len - 7, "nodeset", 7) == 0)) {
                    struct xml_value v = {NULL, 0};
                    if (quoted) {
                        v.s = p + 1;
                        v.len = strcspn (v.s, *p == '"' ? "\"<>" : "'<>");
                    }
                    if (!quoted || !xml_set_syntax (&v))
                        bad_set = true;
                }
                if (want && quoted) {
                    want->s = p + 1;
                    want->len = strcspn (want->s, *p == '"' ? "\"<>" : "'<>");
                    if (want == &type && !xml_type_without_index (&type))
                        pu_or_numa = true;
                    if (want == &type && xml_local_name_is (attr, len, "type")
                        && len == 4
                        && ((type.len == 7
                             && memcmp (type.s, "Machine", 7) == 0)
                            || (type.len == 6
                                && memcmp (type.s, "System", 6) == 0)))
                        machine = true;
                }
            } else if (*p == '"' || *p == '\'') {
                char quote = *p++;
                while (*p && *p != quote && *p != '<' && *p != '>')
                    line += *p++ == '\n';
                if (*p == quote)
                    p++;
            } else
                line += *p++ == '\n';
        }
        *linep = tagline;
        if (bad_attr)
            return "an attribute without '=' and a quoted value";
        if (bad_set)
            return "a cpuset or nodeset is not written as hwloc writes sets "
                   "(0x0000000f,0x1)";
        if (!object)
            continue;
        if (first_object && !machine)
            return "the first object is not the Machine (or v1 System) "
                   "root";
        first_object = false;
        if (pu_or_numa && !(have & 1))
            return "a PU or NUMANode object has no cpuset (hwloc's exporter "
                   "writes one)";
        if ((have & 1) && have != 0xf)
            return "an object with a cpuset lacks complete_cpuset, nodeset "
                   "or complete_nodeset (hwloc's exporter writes all four)";
        if (pu_or_numa && !xml_small_number (&os_index))
            return "a PU or NUMANode object has no os_index below 100000 "
                   "(hwloc's exporter writes one)";
        if (have == 0xf
            && (!xml_set_within (&setval[0], &setval[1])
                || !xml_set_within (&setval[2], &setval[3])))
            return "an object's cpuset is not within its complete_cpuset, "
                   "or its nodeset not within its complete_nodeset (hwloc's "
                   "exporter writes them so)";
    }
    return NULL;
}

char *topo_read_file (const char *path,
                      const char *what,
                      bool nofollow,
                      size_t max,
                      size_t *lenp,
                      pin_error_t *errp)
{
    pin_error_t e = {""};
    struct stat st;
    char *buf = NULL;
    size_t len = 0;
    int fd, saved_errno;

    /* never blocks on a FIFO or device (libutil/safeio.h) */
    if ((fd = safein_open (path, nofollow ? O_NOFOLLOW : 0, &e)) < 0) {
        saved_errno = errno;
        if (saved_errno == EINVAL) /* "PATH: a FIFO, not a regular file" */
            errprintf (errp,
                       "topology '%s': cannot load %s: %s",
                       path,
                       what,
                       e.text + strlen (path) + 2);
        else
            errprintf (errp,
                       "topology '%s': cannot load %s: %s",
                       path,
                       what,
                       strerror (saved_errno));
        errno = saved_errno;
        return NULL;
    }
    if (fstat (fd, &st) < 0)
        goto syserr;
    if (!S_ISREG (st.st_mode)) {
        errno = EINVAL;
        errprintf (errp,
                   "topology '%s': cannot load %s: not a regular file",
                   path,
                   what);
        goto out;
    }
    if ((unsigned long long)st.st_size > max) {
        errno = EFBIG;
        errprintf (errp,
                   "topology '%s': cannot load %s: %lld bytes, more "
                   "than the %zu MiB it may have",
                   path,
                   what,
                   (long long)st.st_size,
                   max >> 20);
        goto out;
    }
    if (!(buf = malloc ((size_t)st.st_size + 1)))
        goto syserr;
    /* the file may change size under us: read what is there, up to the
     * size seen, and no more */
    while (len < (size_t)st.st_size) {
        ssize_t n = read (fd, buf + len, (size_t)st.st_size - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            goto syserr;
        if (n == 0)
            break;
        len += (size_t)n;
    }
    buf[len] = '\0';
    close (fd);
    *lenp = len;
    return buf;
syserr:
    saved_errno = errno;
    errprintf (errp,
               "topology '%s': cannot load %s: %s",
               path,
               what,
               strerror (saved_errno));
    errno = saved_errno;
out:
    saved_errno = errno;
    free (buf);
    close (fd);
    errno = saved_errno;
    return NULL;
}

char *topo_read_xml (const char *path,
                     bool nofollow,
                     size_t *lenp,
                     pin_error_t *errp)
{
    const char *bad;
    unsigned line;
    size_t len;
    char *buf =
        topo_read_file (path, "XML", nofollow, TOPO_XML_MAX, &len, errp);

    if (!buf)
        return NULL;
    if (strlen (buf) != len || !xml_complete (buf, len)) {
        free (buf);
        errprintf (errp,
                   "topology '%s': cannot load XML: the file ends "
                   "before its closing </topology> (truncated?)",
                   path);
        errno = EINVAL;
        return NULL;
    }
    if ((bad = xml_object_check (buf, &line))) {
        free (buf);
        errprintf (errp,
                   "topology '%s': cannot load XML: line %u: %s",
                   path,
                   line,
                   bad);
        errno = EINVAL;
        return NULL;
    }
    *lenp = len;
    return buf;
}

/* hwloc 2.9, loading without HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED an XML
 * topology in which no PU or no NUMA node is allowed, prints "Topology
 * became empty, aborting!" and then reads memory it freed (valgrind; a
 * SEGV under AddressSanitizer).  Load the buffer with its disallowed
 * objects first and name what is missing: "CPU", "memory node", or NULL
 * if both are allowed or it does not load at all (the real load then
 * says why). */
static const char *xml_nothing_allowed (const char *buf, size_t len)
{
    const char *missing = NULL;
    hwloc_topology_t hw;

    if (topo_hw_init (&hw, TOPO_WHOLE_SYSTEM) < 0)
        return NULL;
    if (hwloc_topology_set_xmlbuffer (hw, buf, (int)len + 1) == 0
        && hwloc_topology_load (hw) == 0) {
        hwloc_obj_t root = hwloc_get_root_obj (hw);
        if (!hwloc_bitmap_intersects (hwloc_topology_get_allowed_cpuset (hw),
                                      root->cpuset))
            missing = "CPU";
        else if (!hwloc_bitmap_intersects (hwloc_topology_get_allowed_nodeset (
                                               hw),
                                           root->nodeset))
            missing = "memory node";
    }
    hwloc_topology_destroy (hw);
    return missing;
}

topo_t *topo_load (const char *src, int flags, pin_error_t *errp)
{
    hwloc_topology_t hw;

    if (!src || !*src) {
        errprintf (errp,
                   "topology '': empty source; expected \"system\", "
                   "an XML file or a synthetic description");
        errno = EINVAL;
        return NULL;
    }
    if ((flags & ~TOPO_WHOLE_SYSTEM)) {
        errprintf (errp,
                   "topology '%s': unknown flags 0x%x; expected 0 or "
                   "TOPO_WHOLE_SYSTEM",
                   src,
                   (unsigned)flags);
        errno = EINVAL;
        return NULL;
    }
    if (topo_hw_init (&hw, flags) < 0) {
        errprintf (errp,
                   "topology '%s': cannot initialize hwloc: %s",
                   src,
                   strerror (errno));
        return NULL;
    }
    if (strcmp (src, "system") == 0) {
        if (hwloc_topology_load (hw) < 0)
            goto load_error;
    } else if (is_xml_path (src)) {
        /* read here: hwloc reports a missing file only vaguely, and a
         * truncated one costs it memory (topo_private.h) */
        const char *missing;
        size_t len;
        char *buf = topo_read_xml (src, false, &len, errp);
        if (!buf) {
            int saved_errno = errno;
            hwloc_topology_destroy (hw);
            errno = saved_errno;
            return NULL;
        }
        if (!(flags & TOPO_WHOLE_SYSTEM)
            && (missing = xml_nothing_allowed (buf, len))) {
            free (buf);
            hwloc_topology_destroy (hw);
            errprintf (errp,
                       "topology '%s': no usable %s (none is allowed)",
                       src,
                       missing);
            errno = ENOENT;
            return NULL;
        }
        /* hwloc's buffer size counts the terminating NUL */
        if (hwloc_topology_set_xmlbuffer (hw, buf, (int)len + 1) < 0
            || hwloc_topology_load (hw) < 0) {
            int saved_errno = errno;
            /* before the destroy: the last one unloads the plugins */
            const char *reader = xml_reader_loaded ();
            free (buf);
            hwloc_topology_destroy (hw);
            xml_load_error (errp, src, saved_errno, reader);
            errno = saved_errno;
            return NULL;
        }
        free (buf);
    } else {
        if (hwloc_topology_set_synthetic (hw, src) < 0) {
            hwloc_topology_destroy (hw);
            errprintf (errp,
                       "topology '%s': invalid synthetic description",
                       src);
            errno = EINVAL;
            return NULL;
        }
        if (hwloc_topology_load (hw) < 0)
            goto load_error;
    }
    return topo_from_hw (hw, flags, src, errp);
load_error : {
    int saved_errno = errno;
    hwloc_topology_destroy (hw);
    errprintf (errp,
               "topology '%s': cannot load: %s",
               src,
               strerror (saved_errno));
    errno = saved_errno;
    return NULL;
}
}

/* ---- accessors ---------------------------------------------------------- */

unsigned topo_npus (const topo_t *t)
{
    return t ? t->npus : 0;
}

const struct topo_pu *topo_pu (const topo_t *t, unsigned i)
{
    if (!t || i >= t->npus) {
        errno = EINVAL;
        return NULL;
    }
    return &t->pus[i];
}

int topo_pu_index (const topo_t *t, unsigned os)
{
    if (!t || os >= t->os_to_index_len)
        return -1;
    return t->os_to_index[os];
}

unsigned topo_ndomains (const topo_t *t, enum topo_level level)
{
    if (!t || (int)level < 0 || level >= TOPO_NLEVELS)
        return 0;
    return t->ndom[level];
}

hwloc_const_bitmap_t topo_domain_cpuset (const topo_t *t,
                                         enum topo_level level,
                                         unsigned i)
{
    if (!t || (int)level < 0 || level >= TOPO_NLEVELS || i >= t->ndom[level]) {
        errno = EINVAL;
        return NULL;
    }
    return t->domsets[level][i];
}

hwloc_const_bitmap_t topo_numa_nodeset (const topo_t *t, unsigned i)
{
    if (!t || i >= t->ndom[TOPO_NUMA]) {
        errno = EINVAL;
        return NULL;
    }
    return t->numa_nodesets[i];
}

bool topo_numa_is_local (const topo_t *t, unsigned i)
{
    if (!t || i >= t->ndom[TOPO_NUMA])
        return false;
    return t->numa_local[i];
}

hwloc_const_bitmap_t topo_cpuset (const topo_t *t)
{
    return t ? t->cpuset : NULL;
}

hwloc_const_bitmap_t topo_nodeset (const topo_t *t)
{
    return t ? t->nodeset : NULL;
}
