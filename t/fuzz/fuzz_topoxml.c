/* fuzz_topoxml.c - hwloc XML topologies and the topology cache
 *
 * Input: the bytes of an XML topology file, as found at TopologyCache or
 * given to `slurm-pin plan --topology FILE.xml`.  The harness writes it
 * to a file and loads it with topo_load(): libtopo reads the file itself
 * (topo_read_xml(): size limit, refusal of a document that ends before
 * </topology>) and hands the buffer to hwloc's XML import (the libxml2
 * reader of libhwloc-plugins, or the built-in one when run with
 * HWLOC_LIBXML_IMPORT=0, as run.sh's fuzz_topoxml_builtin does), then
 * flattens it (topo_from_hw()).  The cache's fingerprint
 * (SlurmPinFingerprint info of the root object) is read and compared as
 * the cache load does.
 * Invariants, on every topology that loads (TOPO_WHOLE_SYSTEM, as the
 * cache; then without it):
 *   - the model is consistent: at least one PU; topo_pu_index() inverts
 *     the table; at each level every PU's domain exists and holds it,
 *     the domains partition the PUs, a core's PUs share their L2, L3,
 *     NUMA and package domains and an L2's its L3;
 *   - without TOPO_WHOLE_SYSTEM the PUs are a subset;
 *   - the cache round trip: topo_export_xml() writes it with this
 *     machine's fingerprint, and that file loads to the same PUs grouped
 *     in the same domains at every level;
 *   - failure: one line starting with "topology '<file>': ".
 * hwloc itself is not instrumented: coverage guidance comes from
 * libtopo; AddressSanitizer still sees hwloc's heap misuse and leaks,
 * except the leak of hwloc 2.9 on files it refuses (hwloc_refuses()).
 */
#include <errno.h>
#include <limits.h>
#include <sanitizer/lsan_interface.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "libtopo/topo_private.h"

static char dir[PATH_MAX];
static char in_path[PATH_MAX + 16];
static char out_path[PATH_MAX + 16];
static char *fingerprint;
/* Keeps hwloc's plugins loaded: the last topology destroyed unloads
 * them, and loading them again for every input would dominate. */
static topo_t *keep;

static void cleanup (void)
{
    unlink (in_path);
    unlink (out_path);
    rmdir (dir);
    topo_destroy (keep);
    free (fingerprint);
}

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerInitialize (int *argc, char ***argv)
{
    const char *tmp = getenv ("FUZZ_TMPDIR");
    pin_error_t e;

    (void)argc;
    (void)argv;
    /* files are written for every input: tmpfs if there is one */
    if (!tmp)
        tmp = access ("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv ("TMPDIR");
    snprintf (dir,
              sizeof (dir),
              "%s/slurm-pin-fuzz.XXXXXX",
              tmp ? tmp : "/tmp");
    if (!mkdtemp (dir)) {
        perror (dir);
        abort ();
    }
    snprintf (in_path, sizeof (in_path), "%s/in.xml", dir);
    snprintf (out_path, sizeof (out_path), "%s/cache.xml", dir);
    if (!(keep = topo_load ("pack:1 core:1 pu:1", 0, &e))) {
        fprintf (stderr, "fuzz_topoxml: %s\n", e.text);
        abort ();
    }
    if (!(fingerprint = topo_system_fingerprint ()))
        abort ();
    atexit (cleanup);
    return 0;
}

static void write_file (const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen (path, "w");

    if (!f || fwrite (data, 1, size, f) != size || fclose (f) != 0) {
        perror (path);
        abort ();
    }
}

/* Does hwloc alone refuse the input (that passed topo_read_xml())?
 * hwloc 2.9 leaks the object it is importing when a child element of it
 * is invalid (hwloc__xml_import_object(); fixed upstream in 2026, hwloc
 * commit 5dbc7b7, "xml: free not-yet-inserted object on invalid child"),
 * so LeakSanitizer ignores the allocations of this probe, and of the
 * topo_load() that fails the same way after it.  The probe keeps
 * disallowed objects, as topo_load() does before any other load
 * (xml_nothing_allowed() in topo.c: hwloc 2.9 crashes without them on a
 * file where nothing is allowed). */
static bool hwloc_refuses (void)
{
    hwloc_topology_t hw;
    bool refused = true;
    size_t len;
    char *buf;

    if (!(buf = topo_read_xml (in_path, false, &len, NULL)))
        return false; /* refused before hwloc */
    __lsan_disable ();
    if (topo_hw_init (&hw, TOPO_WHOLE_SYSTEM) == 0) {
        refused = hwloc_topology_set_xmlbuffer (hw, buf, (int)len + 1) < 0
                  || hwloc_topology_load (hw) < 0;
        hwloc_topology_destroy (hw);
    }
    __lsan_enable ();
    free (buf);
    return refused;
}

/* topo_load() of the input, with LeakSanitizer ignoring its allocations
 * when hwloc refuses the input (see hwloc_refuses()). */
static topo_t *load_input (int flags, pin_error_t *errp)
{
    topo_t *t;

    if (!hwloc_refuses ())
        return topo_load (in_path, flags, errp);
    __lsan_disable ();
    t = topo_load (in_path, flags, errp);
    __lsan_enable ();
    FUZZ_ASSERT (t == NULL, "hwloc refused the input, topo_load() did not");
    return t;
}

static void check_model (const topo_t *t, const char *what)
{
    unsigned npus = topo_npus (t);

    FUZZ_ASSERT (npus >= 1, "%s: no PU", what);
    FUZZ_ASSERT (hwloc_bitmap_weight (topo_cpuset (t)) == (int)npus,
                 "%s: %u PUs, cpuset of %d",
                 what,
                 npus,
                 hwloc_bitmap_weight (topo_cpuset (t)));
    for (unsigned i = 0; i < npus; i++) {
        const struct topo_pu *pu = topo_pu (t, i);
        FUZZ_ASSERT (pu && topo_pu_index (t, pu->os) == (int)i,
                     "%s: PU %u (P#%u) indexed as %d",
                     what,
                     i,
                     pu ? pu->os : 0,
                     pu ? topo_pu_index (t, pu->os) : -1);
        for (int l = 0; l < TOPO_NLEVELS; l++) {
            FUZZ_ASSERT (pu->dom[l] < topo_ndomains (t, l),
                         "%s: PU %u in domain %u of %u at level %d",
                         what,
                         i,
                         pu->dom[l],
                         topo_ndomains (t, l),
                         l);
            FUZZ_ASSERT (hwloc_bitmap_isset (topo_domain_cpuset (t,
                                                                 l,
                                                                 pu->dom[l]),
                                             pu->os),
                         "%s: PU P#%u not in its level %d domain",
                         what,
                         pu->os,
                         l);
        }
    }
    for (int l = 0; l < TOPO_NLEVELS; l++) {
        int sum = 0;
        for (unsigned d = 0; d < topo_ndomains (t, l); d++) {
            int w = hwloc_bitmap_weight (topo_domain_cpuset (t, l, d));
            FUZZ_ASSERT (w > 0, "%s: level %d domain %u is empty", what, l, d);
            sum += w;
        }
        FUZZ_ASSERT (sum == (int)npus,
                     "%s: level %d domains hold %d PUs, "
                     "not %u",
                     what,
                     l,
                     sum,
                     npus);
    }
    /* nesting: the PUs of one core share everything above, those of one
     * L2 their L3 */
    for (unsigned i = 0; i < npus; i++) {
        const struct topo_pu *a = topo_pu (t, i);
        for (unsigned j = i + 1; j < npus; j++) {
            const struct topo_pu *b = topo_pu (t, j);
            if (a->dom[TOPO_CORE] == b->dom[TOPO_CORE])
                FUZZ_ASSERT (a->dom[TOPO_L2] == b->dom[TOPO_L2]
                                 && a->dom[TOPO_L3] == b->dom[TOPO_L3]
                                 && a->dom[TOPO_NUMA] == b->dom[TOPO_NUMA]
                                 && a->dom[TOPO_PKG] == b->dom[TOPO_PKG],
                             "%s: P#%u and P#%u share a core, not all "
                             "domains above",
                             what,
                             a->os,
                             b->os);
            if (a->dom[TOPO_L2] == b->dom[TOPO_L2])
                FUZZ_ASSERT (a->dom[TOPO_L3] == b->dom[TOPO_L3],
                             "%s: P#%u and P#%u share an L2, not the L3",
                             what,
                             a->os,
                             b->os);
        }
    }
    for (unsigned d = 0; d < topo_ndomains (t, TOPO_NUMA); d++)
        FUZZ_ASSERT (topo_numa_nodeset (t, d) != NULL,
                     "%s: NUMA domain %u without nodeset",
                     what,
                     d);
}

/* Is the cpuset of domain d of a at level l one of b's domains there? */
static bool has_domain (const topo_t *a, const topo_t *b, int l, unsigned d)
{
    for (unsigned i = 0; i < topo_ndomains (b, l); i++)
        if (hwloc_bitmap_isequal (topo_domain_cpuset (a, l, d),
                                  topo_domain_cpuset (b, l, i)))
            return true;
    return false;
}

/* Do a and b have the same PUs, grouped into the same domains at every
 * level?  (Not necessarily in the same order: hwloc sorts objects when it
 * exports, and imports a file's objects out of order, with a complaint
 * on stderr, as the file has them.) */
static bool same_model (const topo_t *a, const topo_t *b)
{
    if (!hwloc_bitmap_isequal (topo_cpuset (a), topo_cpuset (b)))
        return false;
    for (int l = 0; l < TOPO_NLEVELS; l++) {
        if (topo_ndomains (a, l) != topo_ndomains (b, l))
            return false;
        for (unsigned d = 0; d < topo_ndomains (a, l); d++)
            if (!has_domain (a, b, l, d))
                return false;
    }
    return true;
}

static void check_failure (const pin_error_t *e, const char *path)
{
    char prefix[PATH_MAX + 32];

    fuzz_check_error (e, false);
    snprintf (prefix, sizeof (prefix), "topology '%s': ", path);
    fuzz_check_prefix (e, prefix);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    topo_t *t, *t0 = NULL, *again = NULL;
    const char *recorded;
    pin_error_t e;

    write_file (in_path, data, size);
    fuzz_error_reset (&e);
    t = load_input (TOPO_WHOLE_SYSTEM, &e);
    FUZZ_LOG ("topo_load: %s %s", t ? "loaded" : "failed", t ? "" : e.text);
    if (!t) {
        check_failure (&e, in_path);
        goto out;
    }
    check_model (t, "whole system");

    /* the cache's check (cache.c, load_cache()) */
    recorded = hwloc_obj_get_info_by_name (hwloc_get_root_obj (t->hw),
                                           TOPO_FINGERPRINT_INFO);
    FUZZ_LOG ("fingerprint: %s",
              recorded ? (strcmp (recorded, fingerprint) == 0 ? "this "
                                                                "machine's"
                                                              : "another "
                                                                "machine's")
                       : "none");

    /* only the allowed PUs: a subset (or none at all) */
    fuzz_error_reset (&e);
    if ((t0 = load_input (0, &e))) {
        check_model (t0, "allowed");
        FUZZ_ASSERT (hwloc_bitmap_isincluded (topo_cpuset (t0),
                                              topo_cpuset (t)),
                     "more PUs allowed than in the whole system");
    } else {
        check_failure (&e, in_path);
    }

    /* the cache round trip */
    fuzz_error_reset (&e);
    FUZZ_ASSERT (topo_export_xml (t, out_path, &e) == 0,
                 "a loaded topology cannot be exported: %s",
                 e.text);
    again = topo_load (out_path, TOPO_WHOLE_SYSTEM, &e);
    FUZZ_ASSERT (again != NULL,
                 "the exported topology does not load: %s",
                 e.text);
    recorded = hwloc_obj_get_info_by_name (hwloc_get_root_obj (again->hw),
                                           TOPO_FINGERPRINT_INFO);
    FUZZ_ASSERT (recorded && strcmp (recorded, fingerprint) == 0,
                 "the exported topology lacks this machine's fingerprint");
    FUZZ_ASSERT (same_model (t, again),
                 "the exported topology loads to "
                 "another model");
out:
    topo_destroy (t);
    topo_destroy (t0);
    topo_destroy (again);
    unlink (out_path);
    return 0;
}
