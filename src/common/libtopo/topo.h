/* topo.h - machine topology for slurm-pin
 *
 * Every hwloc *topology* call of the project lives in libtopo.  Other
 * layers see a flattened, read-only model of the machine: a table of PUs
 * (hardware threads) in hwloc logical order, each tagged with the index of
 * its core, L2 domain, L3 domain, NUMA domain and package, plus one cpuset
 * per domain.  Sets of CPUs and memory nodes are hwloc bitmaps of OS
 * (physical) indexes everywhere, as the kernel and Slurm's cgroups use them.
 *
 * Domains are derived once at load time:
 *   core  - hwloc Core objects (a PU with no Core parent is its own core);
 *   l2    - the L2 cache above the core; where there is none, the core;
 *   l3    - the L3 cache above the L2; where there is none, the NUMA domain;
 *   numa  - NUMA nodes grouped by identical cpuset (DDR + MCDRAM on KNL are
 *           one domain whose nodeset holds both nodes).  CPU-less nodes are
 *           not domains.  PUs not covered by any NUMA node (they occur in
 *           real dumps) form pseudo domains, one per package, with
 *           `local == false`; their nodeset is every node of the machine.
 *   pkg   - hwloc Package objects (a PU with none: package 0).
 * Domain indexes are dense, 0..n-1, in hwloc logical order of their first PU.
 *
 * Only PUs that are present, online and allowed are in the table (hwloc's
 * default load hides disallowed PUs), unless TOPO_WHOLE_SYSTEM is given.
 */
#ifndef PIN_TOPO_H
#define PIN_TOPO_H

#include <hwloc.h>
#include <stdbool.h>

#include "libutil/errprintf.h"

typedef struct topo topo_t;

enum topo_level {
    TOPO_CORE = 0,
    TOPO_L2,
    TOPO_L3,
    TOPO_NUMA,
    TOPO_PKG,
    TOPO_NLEVELS,
};

struct topo_pu {
    unsigned os;                /* OS index (P#) */
    unsigned dom[TOPO_NLEVELS]; /* domain index at each level */
    int kind;                   /* hwloc cpukind index, -1 if unknown */
    int slurm_core;             /* Slurm's abstract core id, -1: none */
};

enum {
    /* Keep PUs that are not in the allowed cpuset (for a machine-wide
     * cache that a later job with a different cgroup will use). */
    TOPO_WHOLE_SYSTEM = 1,
};

/* Load a topology.  `src` is "system" (live discovery of this machine), a
 * path to an hwloc XML file (any string containing '/' or ending in
 * ".xml"), or an hwloc synthetic description ("pack:2 core:4 pu:2").
 * Returns NULL with errp filled (the source and hwloc's complaint) on
 * failure.  Caller destroys with topo_destroy().
 */
topo_t *topo_load (const char *src, int flags, pin_error_t *errp);

/* hwloc has two XML readers: its built-in one, which reads only what
 * hwloc's own exporter writes, and a libxml2 one in the plugin of Debian's
 * libhwloc-plugins, which reads any well-formed hwloc XML.  Which one
 * topo_load() uses: TOPO_XML_READER_LIBXML2 or TOPO_XML_READER_BUILTIN
 * (NULL if hwloc cannot be initialized).  A refused file's error names
 * the reader. */
#define TOPO_XML_READER_LIBXML2 "libxml2"
#define TOPO_XML_READER_BUILTIN "built-in"
#define TOPO_LIBXML_PLUGIN "hwloc_xml_libxml.so"
const char *topo_xml_reader (void);

/* Load this machine's topology through a cached XML file at `cache_path`.
 * If the cache exists and its fingerprint (recorded inside the XML) matches
 * the running machine, it is loaded from the file; otherwise the machine is
 * discovered live (with TOPO_WHOLE_SYSTEM) and the cache is rewritten
 * atomically (temporary file + rename, mode 0644).  `*refreshed`, if
 * non-NULL, tells whether the cache was (re)written.  A cache that cannot
 * be written is not an error: the live topology is returned.  A cache
 * that does not parse is rediscovered.  The result always includes
 * disallowed PUs (as with TOPO_WHOLE_SYSTEM): intersect with the job's
 * CPUs.  Caller destroys with topo_destroy().
 */
topo_t *topo_load_cached (const char *cache_path,
                          bool *refreshed,
                          pin_error_t *errp);

/* Export the topology as hwloc XML to `path` (written atomically, mode
 * 0644; the directory must exist), with this machine's fingerprint
 * recorded so topo_load_cached() can validate it.  `t` is not modified.
 * Returns -1 with errp filled on failure. */
int topo_export_xml (const topo_t *t, const char *path, pin_error_t *errp);

/* Fingerprint of the running machine (hostname, kernel release, online
 * CPUs and NUMA nodes, boot id, hwloc API version; see doc/topology.md).
 * Caller frees.  NULL on ENOMEM. */
char *topo_system_fingerprint (void);

/* Destroy; accepts NULL, preserves errno. */
void topo_destroy (topo_t *t);

/* ---- the flattened model ---------------------------------------------- */

/* Number of PUs in the table, and PU i (0 <= i < npus), hwloc logical
 * order.  Returned pointers live as long as t. */
unsigned topo_npus (const topo_t *t);
const struct topo_pu *topo_pu (const topo_t *t, unsigned i);

/* Index into the PU table of OS index `os`, or -1 if not in the table. */
int topo_pu_index (const topo_t *t, unsigned os);

/* Number of domains at a level, and the cpuset (OS indexes) of one. */
unsigned topo_ndomains (const topo_t *t, enum topo_level level);
hwloc_const_bitmap_t topo_domain_cpuset (const topo_t *t,
                                         enum topo_level level,
                                         unsigned i);

/* NUMA domain i: its nodeset (OS indexes of memory nodes) and whether it
 * is a real NUMA node (false for a pseudo domain of PUs without one). */
hwloc_const_bitmap_t topo_numa_nodeset (const topo_t *t, unsigned i);
bool topo_numa_is_local (const topo_t *t, unsigned i);

/* All PUs in the table, and all memory nodes of the machine. */
hwloc_const_bitmap_t topo_cpuset (const topo_t *t);
hwloc_const_bitmap_t topo_nodeset (const topo_t *t);

/* ---- Slurm's abstract core ids ------------------------------------------ */

/* Map a Slurm abstract core list (S_STEP_ALLOC_CORES / S_JOB_ALLOC_CORES:
 * "0-3,8", cores numbered socket after socket, by logical index) to the
 * OS indexes of all PUs of those cores, written into `cpus` (allocated by
 * the caller).  Fails with errp naming the id when a core id is out of
 * range or the list is malformed; `cpus` is then unchanged.
 * Core id N is the N-th hwloc Core object in logical order, as slurmd
 * 22.05 numbers them (doc/topology.md).  slurmd counts disallowed PUs'
 * cores too, so the ids only match Slurm's on a topology loaded with
 * TOPO_WHOLE_SYSTEM (topo_load_cached() is); otherwise PUs that are not
 * in the table are left out of the result.
 */
int topo_slurm_cores_to_cpuset (const topo_t *t,
                                const char *cores,
                                hwloc_bitmap_t cpus,
                                pin_error_t *errp);

/* ---- kernel list format ------------------------------------------------ */

/* Parse a kernel list ("0-3,8") into `set` with hwloc; a malformed list
 * fails with errp naming it (EINVAL) and leaves `set` unchanged.  The
 * syntax is strict: decimal ids below 100000 without a leading zero
 * (hwloc's own parser would read "010" as octal; the kernel reads
 * decimal), ranges low-high with low <= high, no spaces, no empty
 * elements; one trailing newline (as in the kernel's files) is accepted.
 * A number of 6 or more digits is "out of range", a leading zero is
 * named as such.  The empty string is the empty set. */
int topo_list_parse (const char *s, hwloc_bitmap_t set, pin_error_t *errp);

/* Format a set in kernel list format ("" for the empty set); caller
 * frees.  NULL on ENOMEM, or EINVAL for an infinite set. */
char *topo_list_format (hwloc_const_bitmap_t set);

/* ---- I/O devices: GPUs and NICs (devices.c) ------------------------------ */

/* hwloc's I/O objects, flattened: one entry per GPU (a PCI device of
 * class 0x03xx display/3D, or any PCI device holding a GPU or co-processor
 * OS device: CUDA, NVML, RSMI, OpenCL, LevelZero, DRM) and one per NIC
 * (a network or OpenFabrics OS device).  GPUs come first, sorted by
 * `index`; NICs after them in hwloc logical order.  They are kept in the
 * XML and model caches, so a step never loads hwloc's topology to see them.
 * Rules and examples: doc/topology.md ("I/O devices"). */
enum topo_dev_kind {
    TOPO_DEV_GPU = 0,
    TOPO_DEV_NIC,
};

#define TOPO_DEV_NAME 32   /* "cuda0", "mlx5_0", "enp59s0f0" */
#define TOPO_DEV_NAMES 128 /* all OS device names, ',' separated */
#define TOPO_DEV_BUSID 16  /* "0000:3b:00.0" */

struct topo_dev {
    enum topo_dev_kind kind;
    /* GPU: the N of its first OS device in this order of preference:
     * cudaN, nvmlN, rsmiN, openclXdN (N = d), else its position among the
     * machine's GPUs in PCI bus order.  NIC: its position among NICs. */
    unsigned index;
    bool fabric;                  /* NIC: an OpenFabrics device */
    char name[TOPO_DEV_NAME];     /* the OS device named by `index`
                                     ("cuda0"); for a GPU without OS
                                     devices "pci" + busid */
    char names[TOPO_DEV_NAMES];   /* every OS device name of it, ',' joined
                                     (truncated at a whole name) */
    char busid[TOPO_DEV_BUSID];   /* PCI domain:bus:dev.fn, "" if none */
    /* Locality: the cpuset and nodeset of the first non-I/O ancestor, as
     * hwloc_get_non_io_ancestor_obj() gives it, restricted to the PUs of
     * the table (may be empty: a device under CPUs that are all absent)
     * and the machine's NUMA nodes.  `numa` is the NUMA domain index
     * (topo_ndomains (t, TOPO_NUMA)) whose cpuset holds most of `cpuset`,
     * -1 if none. */
    hwloc_bitmap_t cpuset;
    hwloc_bitmap_t nodeset;
    int numa;
};

/* Number of devices and device i (0 <= i < n).  Pointers live as long as
 * t. */
unsigned topo_ndevs (const topo_t *t);
const struct topo_dev *topo_dev (const topo_t *t, unsigned i);

/* Find a device of `kind` by `spec`: a decimal index ("0": the device of
 * that `index`), a PCI bus id ("0000:3b:00.0", also "3b:00.0" for domain
 * 0, case-insensitive), or an OS device name ("cuda1", "mlx5_0").  For
 * TOPO_DEV_NIC a NULL or empty spec picks the default NIC: the first
 * OpenFabrics device, else the first network device.  Returns the device
 * position (for topo_dev), or -1 with errp naming the spec and what this
 * machine has ("GPU '7': no such GPU; this topology has GPUs 0-3"). */
int topo_dev_find (const topo_t *t,
                   enum topo_dev_kind kind,
                   const char *spec,
                   pin_error_t *errp);

/* Distance between NUMA domains a and b, from hwloc's latency matrix
 * (HWLOC_DISTANCES_KIND_FROM_OS|MEANS_LATENCY, the ACPI SLIT: 10 local, larger
 * is farther); where hwloc has no matrix: 10 for a == b, 20 within a
 * package, 30 otherwise.  The model cache carries it.  a, b <
 * topo_ndomains (t, TOPO_NUMA), else UINT_MAX. */
unsigned topo_numa_distance (const topo_t *t, unsigned a, unsigned b);

#endif /* !PIN_TOPO_H */
