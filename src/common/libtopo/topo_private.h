/* topo_private.h - internals shared by the files of libtopo (not a
 * contract: nothing outside src/common/libtopo/ includes this).
 */
#ifndef PIN_TOPO_PRIVATE_H
#define PIN_TOPO_PRIVATE_H

#include <hwloc.h>

#include "topo.h"

/* OS indexes of PUs are below this (the kernel list parser's limit). */
#define TOPO_MAX_OS 100000

/* Name of the root info attribute that carries the cache fingerprint. */
#define TOPO_FINGERPRINT_INFO "SlurmPinFingerprint"

struct topo {
    hwloc_topology_t hw;
    int flags;

    unsigned npus;
    struct topo_pu *pus;
    int *os_to_index; /* indexed by OS index, -1 if absent */
    unsigned os_to_index_len;

    unsigned ndom[TOPO_NLEVELS];
    hwloc_bitmap_t *domsets[TOPO_NLEVELS];
    hwloc_bitmap_t *numa_nodesets; /* ndom[TOPO_NUMA] entries */
    bool *numa_local;              /* ndom[TOPO_NUMA] entries */

    hwloc_bitmap_t cpuset;
    hwloc_bitmap_t nodeset;

    /* Slurm's core ids 0..nslurm_cores-1 (topo_pu.slurm_core): hwloc Core
     * objects in logical order, or PUs on a machine without cores.
     * Cores whose PUs are all outside the table still count. */
    unsigned nslurm_cores;

    /* I/O devices (devices.c): GPUs first, then NICs */
    unsigned ndevs;
    struct topo_dev *devs;
    /* NUMA domain distances, ndom[TOPO_NUMA]^2 entries, row-major; NULL:
     * hwloc had no matrix (topo_numa_distance's fallback rule) */
    unsigned *numa_dist;
};

/* Fill t->devs and t->numa_dist from t->hw (devices.c), once the domains
 * are built.  -1 with errno ENOMEM only: a device hwloc describes oddly is
 * left out, never an error. */
int topo_build_devices (topo_t *t);

/* Free t->devs and t->numa_dist (topo_destroy). */
void topo_free_devices (topo_t *t);

/* The model cache's "devices" and "distances" members (model.c), and
 * reading them back into t (checked: bitmaps, ranges, sizes); -1 with
 * errno EINVAL on anything inconsistent. */
struct json_object;
struct json_object *topo_devices_to_json (const topo_t *t);
int topo_devices_from_json (topo_t *t, struct json_object *o);

/* Build the model from its parts (the model cache, model.c): `pus` (npus
 * entries, taken over: freed on failure too) with dense domain indexes,
 * the NUMA domains' nodesets and locality (ndom[TOPO_NUMA] entries,
 * copied), the machine's nodeset.  Checks every index; NULL with errno
 * EINVAL (and errp filled) on an inconsistent model. */
topo_t *topo_from_table (struct topo_pu *pus,
                         unsigned npus,
                         int flags,
                         hwloc_bitmap_t const *numa_nodesets,
                         const bool *numa_local,
                         unsigned nnuma,
                         hwloc_const_bitmap_t nodeset,
                         unsigned nslurm_cores,
                         const char *src,
                         pin_error_t *errp);

/* Read a whole file of at most `max` bytes into a NUL-terminated buffer,
 * refusing anything but a regular file (and a symlink with `nofollow`).
 * *lenp: its length.  NULL with errno set and errp filled ("topology
 * 'PATH': cannot load XML: ..." with `what` = "XML"). */
char *topo_read_file (const char *path,
                      const char *what,
                      bool nofollow,
                      size_t max,
                      size_t *lenp,
                      pin_error_t *errp);

/* The model cache beside an XML cache (model.c): the flattened model, the
 * fingerprint and the XML cache's size and mtime as JSON, loaded without
 * hwloc's topology.  topo_export_model writes it atomically, recording
 * `xml_path` as it is; topo_load_model returns NULL (errno set, errp
 * filled) unless the file is a complete, consistent model recorded with
 * fingerprint `fp` from the XML cache `xml_path` as it is now. */
int topo_export_model (const topo_t *t,
                       const char *fp,
                       const char *xml_path,
                       const char *path,
                       pin_error_t *errp);
topo_t *topo_load_model (const char *path,
                         const char *fp,
                         const char *xml_path,
                         pin_error_t *errp);

/* Create an hwloc topology handle with the project's filters and flags
 * (no I/O objects, no instruction caches, TOPO_WHOLE_SYSTEM honoured).
 * Returns -1 with errno set; caller destroys *hw on success. */
int topo_hw_init (hwloc_topology_t *hw, int flags);

/* Build the flattened model from a loaded hwloc topology.  Takes
 * ownership of `hw` in every case (destroyed on failure).  `src` names
 * the source in error messages. */
topo_t *topo_from_hw (hwloc_topology_t hw,
                      int flags,
                      const char *src,
                      pin_error_t *errp);

/* Read the hwloc XML file `path` whole into a NUL-terminated buffer
 * (*lenp: its length without the NUL) and check that it is complete: a
 * document that ends before its closing </topology> is refused here, since
 * hwloc 2.9's hwloc__xml_import_object() (topology-xml.c) loses an object
 * it allocated when its built-in reader meets the end of such a file
 * (LeakSanitizer sees 640 bytes, unreachable once hwloc_topology_load()
 * failed).  An object with a cpuset but without complete_cpuset, nodeset
 * or complete_nodeset, and a PU or NUMA node without an os_index below
 * 100000, are refused too: hwloc 2.9 crashes on the former and allocates
 * 512 MiB bitmaps for the latter (topo.c, xml_object_check()).  `nofollow`
 * opens with O_NOFOLLOW.  At most TOPO_XML_MAX bytes.  Returns NULL with errno
 * set and errp filled
 * ("topology 'PATH': ..."). */
#define TOPO_XML_MAX (64u << 20)
char *topo_read_xml (const char *path,
                     bool nofollow,
                     size_t *lenp,
                     pin_error_t *errp);

/* topo_list_parse() with `what` ("CPU list", "Slurm core list") naming
 * the kind of list in the error message. */
int topo_list_parse_what (const char *s,
                          hwloc_bitmap_t set,
                          const char *what,
                          pin_error_t *errp);

#endif /* !PIN_TOPO_PRIVATE_H */
