/* devices.c - GPUs, NICs and NUMA distances of the model (see topo.h)
 *
 * hwloc reports I/O as PCI device objects (with their class, vendor and
 * bus id) and OS device objects below them: "cuda0", "nvml0", "rsmi0",
 * "opencl0d1", "card0"/"renderD128" (DRM), "ze0" for GPUs; "eth0", "ib0"
 * (network) and "mlx5_0" (OpenFabrics) for NICs.  The table keeps one
 * entry per PCI device: a GPU is a PCI device of class 0x03xx or one that
 * holds a GPU or co-processor OS device (but see gpu_rank()), a NIC one
 * that holds a network or
 * OpenFabrics OS device (an InfiniBand HCA's "ib0" and "mlx5_0" are one
 * NIC).  A machine's GPUs are its PCI devices of the highest gpu_rank():
 * with compute GPUs present, a BMC's VGA or a DRM-only display is none.  Network OS devices without a PCI parent are NICs of their own.
 *
 * Numbering (doc/topology.md, "I/O devices"): GPUs in PCI bus order; their
 * index is the N of cudaN, nvmlN, rsmiN or openclXdN, from the first of
 * these families that every GPU of the machine has, else their position
 * in PCI bus order.  NICs are numbered in hwloc's order.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <ctype.h>
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "topo_private.h"

/* Most devices kept (a machine with more is described by the first). */
#define TOPO_MAX_DEVS 256

/* GPU numbering families, in order of preference */
static const char *const families[] = {"cuda", "nvml", "rsmi", "opencl"};
#define NFAMILIES (sizeof (families) / sizeof (families[0]))

/* The N of an OS device name of family f ("cuda3": 3, "opencl0d2": 2),
 * -1 if the name is not of that family. */
static int family_index (const char *name, unsigned f)
{
    size_t n = strlen (families[f]);
    const char *p;
    char *end;
    long v;

    if (strncmp (name, families[f], n) != 0)
        return -1;
    p = name + n;
    if (f == 3) { /* openclXdN */
        if (!isdigit ((unsigned char)*p))
            return -1;
        strtol (p, &end, 10);
        if (*end != 'd')
            return -1;
        p = end + 1;
    }
    if (!isdigit ((unsigned char)*p))
        return -1;
    v = strtol (p, &end, 10);
    if (*end != '\0' || v < 0 || v > 65535)
        return -1;
    return (int)v;
}

static bool osdev_is_gpu (hwloc_obj_t o)
{
    return o->type == HWLOC_OBJ_OS_DEVICE
           && (o->attr->osdev.type == HWLOC_OBJ_OSDEV_GPU
               || o->attr->osdev.type == HWLOC_OBJ_OSDEV_COPROC);
}

static bool osdev_is_nic (hwloc_obj_t o, bool *fabric)
{
    if (o->type != HWLOC_OBJ_OS_DEVICE)
        return false;
    if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS) {
        *fabric = true;
        return true;
    }
    return o->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK;
}

/* Append name to the ',' joined list `names` (whole names only). */
static void names_add (char *names, const char *name)
{
    size_t len = strlen (names);
    size_t need = strlen (name) + (len ? 1 : 0);

    if (!name || !*name || len + need >= TOPO_DEV_NAMES)
        return;
    if (len)
        names[len++] = ',';
    strcpy (names + len, name);
}

/* The NUMA domain whose cpuset holds most of `cpus`; -1 if none does, or
 * if `cpus` is the whole table on a machine of several domains (a device
 * hwloc attaches to the machine as a whole: no locality). */
static int numa_of (const topo_t *t, hwloc_const_bitmap_t cpus)
{
    int best = -1, bestw = 0;

    if (t->ndom[TOPO_NUMA] > 1 && hwloc_bitmap_isequal (cpus, t->cpuset))
        return -1;
    hwloc_bitmap_t x = hwloc_bitmap_alloc ();
    if (!x)
        return -1;
    for (unsigned d = 0; d < t->ndom[TOPO_NUMA]; d++) {
        int w;
        hwloc_bitmap_and (x, t->domsets[TOPO_NUMA][d], cpus);
        w = hwloc_bitmap_weight (x);
        if (w > bestw) {
            best = (int)d;
            bestw = w;
        }
    }
    hwloc_bitmap_free (x);
    return best;
}

static int dev_init (topo_t *t, struct topo_dev *d, hwloc_obj_t at)
{
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj (t->hw, at);

    if (!(d->cpuset = hwloc_bitmap_alloc ())
        || !(d->nodeset = hwloc_bitmap_alloc ()))
        return -1;
    if (anc && anc->cpuset
        && hwloc_bitmap_and (d->cpuset, anc->cpuset, t->cpuset) < 0)
        return -1;
    if (anc && anc->nodeset
        && hwloc_bitmap_and (d->nodeset, anc->nodeset, t->nodeset) < 0)
        return -1;
    d->numa = numa_of (t, d->cpuset);
    return 0;
}

static int gpu_cmp (const void *a, const void *b)
{
    const struct topo_dev *x = a, *y = b;
    return strcmp (x->busid, y->busid);
}

/* A GPU OS device that computes (CUDA, NVML, RSMI, OpenCL, LevelZero),
 * not a display (DRM's card0/renderD128, GL's ":0.0"). */
static bool osdev_computes (hwloc_obj_t o)
{
    return osdev_is_gpu (o) && o->name && strncmp (o->name, "card", 4) != 0
           && strncmp (o->name, "renderD", 7) != 0 && o->name[0] != ':';
}

/* How sure we are that a PCI device is a GPU: 2 = it has a computing OS
 * device, or is a 3D controller (0x0302) or other display controller
 * (0x0380), as compute GPUs are; 1 = another display device (0x03xx, or a
 * display OS device: a VGA card, a server's BMC, a virtual GPU); 0 = not
 * one.  The machine's GPUs are its devices of the highest rank present,
 * so that a BMC's VGA is no GPU beside real ones. */
static int gpu_rank (hwloc_obj_t pci)
{
    unsigned cls = pci->attr->pcidev.class_id;
    int rank = (cls >> 8) == 0x03 ? 1 : 0;

    if (cls == 0x0302 || cls == 0x0380)
        rank = 2;
    for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling) {
        if (osdev_computes (c))
            rank = 2;
        else if (osdev_is_gpu (c) && rank < 1)
            rank = 1;
    }
    return rank;
}

static int build_gpus (topo_t *t)
{
    hwloc_obj_t pci = NULL;
    int idx[TOPO_MAX_DEVS][NFAMILIES];
    int top = 0;

    while ((pci = hwloc_get_next_pcidev (t->hw, pci)))
        if (gpu_rank (pci) > top)
            top = gpu_rank (pci);
    while (top > 0 && (pci = hwloc_get_next_pcidev (t->hw, pci))
           && t->ndevs < TOPO_MAX_DEVS) {
        struct topo_dev *d = &t->devs[t->ndevs];

        if (gpu_rank (pci) != top)
            continue;
        memset (d, 0, sizeof (*d));
        d->kind = TOPO_DEV_GPU;
        snprintf (d->busid,
                  sizeof (d->busid),
                  "%04x:%02x:%02x.%01x",
                  (unsigned)pci->attr->pcidev.domain & 0xffff,
                  (unsigned)pci->attr->pcidev.bus,
                  (unsigned)pci->attr->pcidev.dev & 0x1f,
                  (unsigned)pci->attr->pcidev.func & 0x7);
        for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling)
            if (c->type == HWLOC_OBJ_OS_DEVICE && c->name)
                names_add (d->names, c->name);
        if (dev_init (t, d, pci) < 0)
            return -1;
        t->ndevs++;
    }
    qsort (t->devs, t->ndevs, sizeof (*t->devs), gpu_cmp);

    /* the first family every GPU has numbers them */
    for (unsigned i = 0; i < t->ndevs; i++) {
        for (unsigned f = 0; f < NFAMILIES; f++) {
            char names[TOPO_DEV_NAMES], *save = NULL;
            idx[i][f] = -1;
            strcpy (names, t->devs[i].names);
            for (char *n = strtok_r (names, ",", &save); n;
                 n = strtok_r (NULL, ",", &save)) {
                int v = family_index (n, f);
                if (v >= 0 && (idx[i][f] < 0 || v < idx[i][f]))
                    idx[i][f] = v;
            }
        }
    }
    for (unsigned f = 0; f <= NFAMILIES; f++) {
        bool all = f < NFAMILIES;
        for (unsigned i = 0; all && i < t->ndevs; i++) {
            if (idx[i][f] < 0)
                all = false;
            for (unsigned j = 0; all && j < i; j++)
                if (idx[j][f] == idx[i][f])
                    all = false;
        }
        if (!all && f < NFAMILIES)
            continue;
        for (unsigned i = 0; i < t->ndevs; i++) {
            struct topo_dev *d = &t->devs[i];
            d->index = f < NFAMILIES ? (unsigned)idx[i][f] : i;
            if (f < NFAMILIES) {
                char names[TOPO_DEV_NAMES], *save = NULL;
                strcpy (names, d->names);
                for (char *n = strtok_r (names, ",", &save); n;
                     n = strtok_r (NULL, ",", &save))
                    if (family_index (n, f) == (int)d->index) {
                        snprintf (d->name, sizeof (d->name), "%s", n);
                        break;
                    }
            } else if (d->names[0]) {
                /* a DRM "card" name rather than its render node */
                const char *p = d->names, *pick = d->names;
                while (*p) {
                    if (!strncmp (p, "card", 4) && (p == d->names || p[-1] == ',')) {
                        pick = p;
                        break;
                    }
                    p++;
                }
                size_t l = strcspn (pick, ",");
                snprintf (d->name, sizeof (d->name), "%.*s", (int)l, pick);
            } else
                snprintf (d->name, sizeof (d->name), "%s", d->busid);
        }
        break;
    }
    /* sort by index (the PCI order already, unless a family renumbers) */
    for (unsigned i = 1; i < t->ndevs; i++)
        for (unsigned j = i; j > 0 && t->devs[j].index < t->devs[j - 1].index;
             j--) {
            struct topo_dev tmp = t->devs[j];
            t->devs[j] = t->devs[j - 1];
            t->devs[j - 1] = tmp;
        }
    return 0;
}

static int build_nics (topo_t *t)
{
    hwloc_obj_t os = NULL;
    unsigned first = t->ndevs;
    hwloc_obj_t parent[TOPO_MAX_DEVS];

    while ((os = hwloc_get_next_osdev (t->hw, os))
           && t->ndevs < TOPO_MAX_DEVS) {
        bool fabric = false;
        hwloc_obj_t p = os->parent;
        struct topo_dev *d = NULL;

        if (!osdev_is_nic (os, &fabric) || !os->name)
            continue;
        if (p && p->type != HWLOC_OBJ_PCI_DEVICE)
            p = NULL;
        for (unsigned i = first; p && i < t->ndevs; i++)
            if (parent[i] == p)
                d = &t->devs[i];
        if (!d) {
            d = &t->devs[t->ndevs];
            memset (d, 0, sizeof (*d));
            d->kind = TOPO_DEV_NIC;
            d->index = t->ndevs - first;
            parent[t->ndevs] = p;
            if (p)
                snprintf (d->busid,
                          sizeof (d->busid),
                          "%04x:%02x:%02x.%01x",
                          (unsigned)p->attr->pcidev.domain & 0xffff,
                          (unsigned)p->attr->pcidev.bus,
                          (unsigned)p->attr->pcidev.dev & 0x1f,
                          (unsigned)p->attr->pcidev.func & 0x7);
            if (dev_init (t, d, os) < 0)
                return -1;
            t->ndevs++;
        }
        names_add (d->names, os->name);
        /* the OpenFabrics name names an HCA; else the first */
        if (!d->name[0] || (fabric && !d->fabric))
            snprintf (d->name, sizeof (d->name), "%s", os->name);
        if (fabric)
            d->fabric = true;
    }
    return 0;
}

/* hwloc's NUMA latency matrix mapped onto the model's NUMA domains (the
 * least distance between their nodes). */
static int build_distances (topo_t *t)
{
    unsigned nd = t->ndom[TOPO_NUMA];
    struct hwloc_distances_s *dist[4];
    unsigned nr = 4;
    struct hwloc_distances_s *m = NULL;
    int *dom = NULL;
    int rc = -1;

    if (nd == 0)
        return 0;
    if (hwloc_distances_get_by_type (t->hw,
                                     HWLOC_OBJ_NUMANODE,
                                     &nr,
                                     dist,
                                     HWLOC_DISTANCES_KIND_MEANS_LATENCY,
                                     0)
            < 0
        || nr == 0)
        return 0;
    if (nr > 4)
        nr = 4;
    for (unsigned i = 0; i < nr && !m; i++)
        if (dist[i]->kind & HWLOC_DISTANCES_KIND_FROM_OS)
            m = dist[i];
    if (!m)
        m = dist[0];
    if (!(dom = malloc (m->nbobjs * sizeof (*dom)))
        || !(t->numa_dist = malloc ((size_t)nd * nd * sizeof (*t->numa_dist))))
        goto out;
    for (unsigned i = 0; i < m->nbobjs; i++) {
        dom[i] = -1;
        for (unsigned d = 0; d < nd && m->objs[i]; d++)
            if (hwloc_bitmap_isset (t->numa_nodesets[d], m->objs[i]->os_index)
                && t->numa_local[d])
                dom[i] = (int)d;
    }
    for (unsigned i = 0; i < nd * nd; i++)
        t->numa_dist[i] = UINT_MAX;
    for (unsigned i = 0; i < m->nbobjs; i++)
        for (unsigned j = 0; j < m->nbobjs; j++) {
            uint64_t v = m->values[i * m->nbobjs + j];
            unsigned *cell;
            if (dom[i] < 0 || dom[j] < 0 || v == 0 || v >= UINT_MAX)
                continue;
            cell = &t->numa_dist[(unsigned)dom[i] * nd + (unsigned)dom[j]];
            if (v < *cell)
                *cell = (unsigned)v;
        }
    /* a domain the matrix misses: no matrix at all */
    for (unsigned i = 0; i < nd * nd; i++)
        if (t->numa_dist[i] == UINT_MAX) {
            free (t->numa_dist);
            t->numa_dist = NULL;
            break;
        }
    rc = 0;
out:
    if (rc < 0) {
        free (t->numa_dist);
        t->numa_dist = NULL;
    }
    free (dom);
    for (unsigned i = 0; i < nr; i++)
        hwloc_distances_release (t->hw, dist[i]);
    return rc;
}

int topo_build_devices (topo_t *t)
{
    if (!(t->devs = calloc (TOPO_MAX_DEVS, sizeof (*t->devs))))
        return -1;
    t->ndevs = 0;
    if (build_gpus (t) < 0 || build_nics (t) < 0 || build_distances (t) < 0) {
        int saved = errno;
        topo_free_devices (t);
        errno = saved ? saved : ENOMEM;
        return -1;
    }
    return 0;
}

void topo_free_devices (topo_t *t)
{
    if (t->devs) {
        for (unsigned i = 0; i < TOPO_MAX_DEVS; i++) {
            hwloc_bitmap_free (t->devs[i].cpuset);
            hwloc_bitmap_free (t->devs[i].nodeset);
        }
        free (t->devs);
    }
    t->devs = NULL;
    t->ndevs = 0;
    free (t->numa_dist);
    t->numa_dist = NULL;
}

unsigned topo_ndevs (const topo_t *t)
{
    return t ? t->ndevs : 0;
}

const struct topo_dev *topo_dev (const topo_t *t, unsigned i)
{
    return t && i < t->ndevs ? &t->devs[i] : NULL;
}

/* "3b:00.0" -> "0000:3b:00.0", lower case; false if not a bus id. */
static bool busid_normalize (const char *s, char *out, size_t n)
{
    unsigned dom = 0, bus, dev, fn;
    char tail;

    if (strlen (s) > 16)
        return false;
    if (sscanf (s, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) == 4) {
        if (strchr (s, ':') == strrchr (s, ':'))
            return false;
    } else if (sscanf (s, "%x:%x.%x%c", &bus, &dev, &fn, &tail) == 3)
        dom = 0;
    else
        return false;
    for (const char *p = s; *p; p++)
        if (!isxdigit ((unsigned char)*p) && *p != ':' && *p != '.')
            return false;
    if (dom > 0xffff || bus > 0xff || dev > 0x1f || fn > 7)
        return false;
    snprintf (out, n, "%04x:%02x:%02x.%01x", dom, bus, dev, fn);
    return true;
}

/* "0-3", "0,2" or "none" for the error message */
static void have_list (const topo_t *t,
                       enum topo_dev_kind kind,
                       char *buf,
                       size_t n)
{
    size_t len = 0;

    buf[0] = '\0';
    for (unsigned i = 0; i < t->ndevs && len + 24 < n; i++) {
        const struct topo_dev *d = &t->devs[i];
        if (d->kind != kind)
            continue;
        len += (size_t)snprintf (buf + len,
                                 n - len,
                                 "%s%u (%s)",
                                 len ? ", " : "",
                                 d->index,
                                 kind == TOPO_DEV_GPU ? d->busid : d->name);
    }
    if (!buf[0])
        snprintf (buf, n, "none");
}

int topo_dev_find (const topo_t *t,
                   enum topo_dev_kind kind,
                   const char *spec,
                   pin_error_t *errp)
{
    const char *what = kind == TOPO_DEV_GPU ? "GPU" : "NIC";
    char have[512], bus[TOPO_DEV_BUSID];
    bool is_num = spec && *spec;

    if (!t) {
        errno = EINVAL;
        return errprintf (errp, "%s: no topology", what);
    }
    if (kind == TOPO_DEV_NIC && (!spec || !*spec)) {
        int first = -1;
        for (unsigned i = 0; i < t->ndevs; i++) {
            if (t->devs[i].kind != TOPO_DEV_NIC)
                continue;
            if (t->devs[i].fabric)
                return (int)i;
            if (first < 0)
                first = (int)i;
        }
        if (first >= 0)
            return first;
        errno = ENOENT;
        return errprintf (errp, "NIC: this topology has no network device");
    }
    if (!spec || !*spec || strlen (spec) > 64) {
        errno = EINVAL;
        have_list (t, kind, have, sizeof (have));
        return errprintf (errp,
                          "%s '%.64s': expected an index, a PCI bus id or a "
                          "device name; this topology has %s",
                          what,
                          spec ? spec : "",
                          have);
    }
    for (const char *p = spec; *p; p++)
        if (!isdigit ((unsigned char)*p))
            is_num = false;
    if (is_num && (strlen (spec) > 1 && spec[0] == '0'))
        is_num = false;
    for (unsigned i = 0; i < t->ndevs; i++) {
        const struct topo_dev *d = &t->devs[i];
        if (d->kind != kind)
            continue;
        if (is_num && strtoul (spec, NULL, 10) == d->index)
            return (int)i;
        if (busid_normalize (spec, bus, sizeof (bus)) && d->busid[0]
            && strcmp (bus, d->busid) == 0)
            return (int)i;
        if (!strcmp (spec, d->name))
            return (int)i;
        /* any of its OS device names */
        const char *p = d->names;
        size_t l = strlen (spec);
        while (*p) {
            size_t k = strcspn (p, ",");
            if (k == l && !strncmp (p, spec, l))
                return (int)i;
            p += k + (p[k] == ',');
        }
    }
    errno = ENOENT;
    have_list (t, kind, have, sizeof (have));
    return errprintf (errp,
                      "%s '%s': no such %s; this topology has %s",
                      what,
                      spec,
                      what,
                      have);
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
    if (t->numa_dist)
        return t->numa_dist[a * n + b];
    if (a == b)
        return 10;
    return numa_pkg (t, a) == numa_pkg (t, b) ? 20 : 30;
}

/* ---- the model cache ---------------------------------------------------- */

static json_object *set_json (hwloc_const_bitmap_t set)
{
    char *s = NULL;
    json_object *o;

    if (hwloc_bitmap_asprintf (&s, set) < 0)
        return NULL;
    o = json_object_new_string (s);
    free (s);
    return o;
}

static int set_from_json (json_object *o, hwloc_bitmap_t set)
{
    const char *text;
    char *back = NULL;
    int rc = -1;

    if (!o || !json_object_is_type (o, json_type_string))
        return -1;
    text = json_object_get_string (o);
    if (strncmp (text, "0x", 2) != 0 || hwloc_bitmap_sscanf (set, text) < 0
        || hwloc_bitmap_weight (set) < 0
        || hwloc_bitmap_asprintf (&back, set) < 0)
        goto out;
    rc = strcmp (back, text) == 0 ? 0 : -1;
out:
    free (back);
    return rc;
}

/* {"devices": [[kind, index, fabric, name, names, busid, cpuset, nodeset,
 *   numa], ...], "distances": [d00, d01, ...] or null} */
json_object *topo_devices_to_json (const topo_t *t)
{
    json_object *o = json_object_new_object ();
    json_object *devs = json_object_new_array ();
    json_object *dist = NULL;

    if (!o || !devs)
        goto error;
    for (unsigned i = 0; i < t->ndevs; i++) {
        const struct topo_dev *d = &t->devs[i];
        json_object *e = json_object_new_array ();
        if (!e || json_object_array_add (devs, e) < 0) {
            json_object_put (e);
            goto error;
        }
        if (json_object_array_add (e, json_object_new_int (d->kind)) < 0
            || json_object_array_add (e, json_object_new_int ((int)d->index))
                   < 0
            || json_object_array_add (e, json_object_new_boolean (d->fabric))
                   < 0
            || json_object_array_add (e, json_object_new_string (d->name)) < 0
            || json_object_array_add (e, json_object_new_string (d->names))
                   < 0
            || json_object_array_add (e, json_object_new_string (d->busid))
                   < 0
            || json_object_array_add (e, set_json (d->cpuset)) < 0
            || json_object_array_add (e, set_json (d->nodeset)) < 0
            || json_object_array_add (e, json_object_new_int (d->numa)) < 0)
            goto error;
    }
    if (t->numa_dist) {
        unsigned n = t->ndom[TOPO_NUMA];
        if (!(dist = json_object_new_array ()))
            goto error;
        for (unsigned i = 0; i < n * n; i++)
            if (json_object_array_add (dist,
                                       json_object_new_int64 (t->numa_dist[i]))
                < 0)
                goto error;
    }
    json_object_object_add (o, "devices", devs);
    devs = NULL;
    json_object_object_add (o, "distances", dist);
    return o;
error:
    json_object_put (dist);
    json_object_put (devs);
    json_object_put (o);
    return NULL;
}

static bool copy_str (json_object *v, char *out, size_t n)
{
    const char *s;
    if (!v || !json_object_is_type (v, json_type_string))
        return false;
    s = json_object_get_string (v);
    if (strlen (s) >= n)
        return false;
    strcpy (out, s);
    return true;
}

static bool get_int_in (json_object *v, long lo, long hi, long *out)
{
    if (!v || !json_object_is_type (v, json_type_int))
        return false;
    *out = (long)json_object_get_int64 (v);
    return *out >= lo && *out <= hi;
}

int topo_devices_from_json (topo_t *t, json_object *o)
{
    json_object *devs, *dist;
    size_t n;
    unsigned nd = t->ndom[TOPO_NUMA];

    if (!json_object_object_get_ex (o, "devices", &devs)
        || !json_object_is_type (devs, json_type_array)
        || (n = json_object_array_length (devs)) > TOPO_MAX_DEVS
        || !json_object_object_get_ex (o, "distances", &dist))
        goto invalid;
    if (!(t->devs = calloc (TOPO_MAX_DEVS, sizeof (*t->devs))))
        return -1;
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx (devs, i);
        struct topo_dev *d = &t->devs[i];
        long kind, index, numa;
        if (!e || !json_object_is_type (e, json_type_array)
            || json_object_array_length (e) != 9
            || !get_int_in (json_object_array_get_idx (e, 0), 0, 1, &kind)
            || !get_int_in (json_object_array_get_idx (e, 1), 0, 65535, &index)
            || !json_object_is_type (json_object_array_get_idx (e, 2),
                                     json_type_boolean)
            || !copy_str (json_object_array_get_idx (e, 3),
                          d->name,
                          sizeof (d->name))
            || !copy_str (json_object_array_get_idx (e, 4),
                          d->names,
                          sizeof (d->names))
            || !copy_str (json_object_array_get_idx (e, 5),
                          d->busid,
                          sizeof (d->busid))
            || !get_int_in (json_object_array_get_idx (e, 8),
                            -1,
                            (long)nd - 1,
                            &numa))
            goto invalid;
        d->kind = (enum topo_dev_kind)kind;
        d->index = (unsigned)index;
        d->fabric = json_object_get_boolean (json_object_array_get_idx (e, 2));
        d->numa = (int)numa;
        t->ndevs = (unsigned)i + 1;
        if (!(d->cpuset = hwloc_bitmap_alloc ())
            || !(d->nodeset = hwloc_bitmap_alloc ()))
            return -1;
        if (set_from_json (json_object_array_get_idx (e, 6), d->cpuset) < 0
            || set_from_json (json_object_array_get_idx (e, 7), d->nodeset) < 0
            || !hwloc_bitmap_isincluded (d->cpuset, t->cpuset)
            || !hwloc_bitmap_isincluded (d->nodeset, t->nodeset))
            goto invalid;
    }
    if (dist && !json_object_is_type (dist, json_type_null)) {
        if (!json_object_is_type (dist, json_type_array)
            || json_object_array_length (dist) != (size_t)nd * nd)
            goto invalid;
        if (!(t->numa_dist = malloc ((size_t)nd * nd * sizeof (*t->numa_dist))))
            return -1;
        for (unsigned i = 0; i < nd * nd; i++) {
            long v;
            if (!get_int_in (json_object_array_get_idx (dist, i),
                             1,
                             UINT_MAX - 1L,
                             &v))
                goto invalid;
            t->numa_dist[i] = (unsigned)v;
        }
    }
    return 0;
invalid:
    topo_free_devices (t);
    errno = EINVAL;
    return -1;
}
