/* cache.c - this machine's topology through a fingerprinted XML cache
 *
 * A slurmstepd runs per job step; live hwloc discovery costs tens to
 * hundreds of milliseconds on big nodes, loading an XML export a few.
 * The export records a fingerprint of the machine it describes as an
 * info attribute of the root object; a cache whose fingerprint differs
 * from the running machine, or that cannot be parsed, is rediscovered
 * and rewritten.  A cache that cannot be written costs speed, never
 * correctness: the live topology is returned.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "libutil/atomicfile.h"
#include "libutil/mkdirp.h"
#include "libutil/safefile.h"
#include "topo_private.h"

/* Bump when the cache's meaning changes (filters, flags, model). */
#define TOPO_CACHE_FORMAT 3 /* 2: CPU kinds that differ in speed only are
                              one; 3: GPUs and NICs kept (devices.c) */

/* Read the first line of a small file into buf (newline stripped);
 * "-" if it cannot be read. */
static void read_line (const char *path, char *buf, size_t size)
{
    FILE *f = fopen (path, "re");
    size_t len;

    snprintf (buf, size, "-");
    if (!f)
        return;
    if (fgets (buf, (int)size, f)) {
        len = strlen (buf);
        if (len > 0 && buf[len - 1] == '\n')
            buf[len - 1] = '\0';
        if (buf[0] == '\0')
            snprintf (buf, size, "-");
    } else
        snprintf (buf, size, "-");
    fclose (f);
}

char *topo_system_fingerprint (void)
{
    struct utsname u;
    char cpus[4096];
    char nodes[1024];
    char boot[64];
    unsigned v = hwloc_get_api_version ();
    char *s = NULL;

    if (uname (&u) < 0)
        return NULL;
    read_line ("/sys/devices/system/cpu/online", cpus, sizeof (cpus));
    read_line ("/sys/devices/system/node/online", nodes, sizeof (nodes));
    read_line ("/proc/sys/kernel/random/boot_id", boot, sizeof (boot));
    /* hwloc exposes its API version at run time, not its release */
    if (asprintf (&s,
                  "format=%d;host=%s;kernel=%s;cpus=%s;nodes=%s;"
                  "boot=%s;hwloc-api=0x%x",
                  TOPO_CACHE_FORMAT,
                  u.nodename,
                  u.release,
                  cpus,
                  nodes,
                  boot,
                  v)
        < 0)
        return NULL;
    return s;
}

/* Move root info i to the front, so that it is the one
 * hwloc_obj_get_info_by_name() finds after the export is read back. */
static void info_to_front (hwloc_obj_t root, unsigned i)
{
    struct hwloc_info_s info = root->infos[i];

    memmove (&root->infos[1], &root->infos[0], i * sizeof (info));
    root->infos[0] = info;
}

/* Set (or replace) the fingerprint info of the root object, first of the
 * root's infos: a name that differs from it only by bytes the XML export
 * and import do not keep (seen with a non-ASCII byte and hwloc's built-in
 * reader) comes back as a second SlurmPinFingerprint, and the first one
 * is the one read. */
static int set_fingerprint (hwloc_topology_t hw, const char *fp)
{
    hwloc_obj_t root = hwloc_get_root_obj (hw);

    for (unsigned i = 0; i < root->infos_count; i++) {
        if (root->infos[i].name
            && strcmp (root->infos[i].name, TOPO_FINGERPRINT_INFO) == 0) {
            char *value = strdup (fp);
            if (!value)
                return -1;
            free (root->infos[i].value);
            root->infos[i].value = value;
            info_to_front (root, i);
            return 0;
        }
    }
    if (hwloc_obj_add_info (root, TOPO_FINGERPRINT_INFO, fp) < 0)
        return -1;
    info_to_front (root, root->infos_count - 1);
    return 0;
}

/* mkdir -p the directory part of path, new directories mode 0755. */
static int make_parent_dirs (const char *path)
{
    char dir[PATH_MAX];
    char *p;

    if (snprintf (dir, sizeof (dir), "%s", path) >= (int)sizeof (dir)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (!(p = strrchr (dir, '/')) || p == dir)
        return 0;
    *p = '\0';
    return mkdir_p (dir, 0755, 0755, NULL);
}

int topo_export_xml (const topo_t *t, const char *path, pin_error_t *errp)
{
    hwloc_topology_t dup = NULL;
    char *fp = NULL;
    char *buf = NULL;
    int len = 0;
    int rc = -1;

    if (!t || !path || !*path) {
        errno = EINVAL;
        return errprintf (errp, "topology export: missing argument");
    }
    if (!t->hw) {
        errno = ENOTSUP;
        return errprintf (errp,
                          "topology export to '%s': a model loaded "
                          "from the model cache has no hwloc "
                          "topology to export",
                          path);
    }
    /* export a copy: the caller's topology stays untouched */
    if (!(fp = topo_system_fingerprint ())
        || hwloc_topology_dup (&dup, t->hw) < 0
        || set_fingerprint (dup, fp) < 0) {
        errprintf (errp,
                   "topology export to '%s': %s",
                   path,
                   strerror (errno));
        goto out;
    }
    if (hwloc_topology_export_xmlbuffer (dup, &buf, &len, 0) < 0 || len < 1) {
        errprintf (errp,
                   "topology export to '%s': hwloc cannot export: %s",
                   path,
                   strerror (errno));
        goto out;
    }
    /* hwloc counts the terminating NUL in len */
    if (write_file_atomic (path, buf, strlen (buf), 0644) < 0) {
        errprintf (errp,
                   "topology export to '%s': %s",
                   path,
                   strerror (errno));
        goto out;
    }
    rc = 0;
out:
    if (buf)
        hwloc_free_xmlbuffer (dup, buf);
    if (dup)
        hwloc_topology_destroy (dup);
    free (fp);
    return rc;
}

/* Would the directory of path pass safefile_check()? */
static bool parent_safe (const char *path)
{
    char dir[PATH_MAX];
    char *slash;

    if (snprintf (dir, sizeof (dir), "%s", path) >= (int)sizeof (dir)
        || !(slash = strrchr (dir, '/')))
        return false;
    if (slash == dir)
        slash++;
    *slash = '\0';
    return safefile_check (dir, geteuid (), NULL) == 0;
}

/* Load the cache if it is a readable hwloc XML file recorded on this
 * very machine; NULL (quietly) otherwise. */
static topo_t *load_cache (const char *path, const char *fp)
{
    hwloc_topology_t hw;
    const char *recorded;
    size_t len;
    char *buf;

    /* only a file that nobody but root (or the caller) can have written
     * is trusted: its fingerprint proves nothing, anyone can compute it
     * (libutil/safefile.h); a symlink is not followed; an incomplete file
     * is not handed to hwloc (topo_read_xml) */
    if (!fp || safefile_check (path, geteuid (), NULL) < 0
        || !(buf = topo_read_xml (path, true, &len, NULL)))
        return NULL;
    if (topo_hw_init (&hw, TOPO_WHOLE_SYSTEM) < 0) {
        free (buf);
        return NULL;
    }
    if (hwloc_topology_set_xmlbuffer (hw, buf, (int)len + 1) < 0
        || hwloc_topology_load (hw) < 0
        || !(recorded = hwloc_obj_get_info_by_name (hwloc_get_root_obj (hw),
                                                    TOPO_FINGERPRINT_INFO))
        || strcmp (recorded, fp) != 0) {
        free (buf);
        hwloc_topology_destroy (hw);
        return NULL;
    }
    free (buf);
    return topo_from_hw (hw, TOPO_WHOLE_SYSTEM, path, NULL);
}

/* The model cache's path: the XML cache's with ".model" appended. */
static char *model_path (const char *cache_path)
{
    char *p = NULL;
    return asprintf (&p, "%s.model", cache_path) < 0 ? NULL : p;
}

topo_t *topo_load_cached (const char *cache_path,
                          bool *refreshed,
                          pin_error_t *errp)
{
    topo_t *t;
    char *fp = NULL;
    char *mpath = NULL;

    if (refreshed)
        *refreshed = false;
    if (!cache_path || !*cache_path) {
        errno = EINVAL;
        errprintf (errp, "topology cache: empty path");
        return NULL;
    }
    fp = topo_system_fingerprint ();
    mpath = model_path (cache_path);
    /* the step-start path: the model alone, no hwloc topology; used only
     * when both it and the XML it was derived from are trusted
     * (libutil/safefile.h) */
    if (fp && mpath && safefile_check (mpath, geteuid (), NULL) == 0
        && safefile_check (cache_path, geteuid (), NULL) == 0
        && (t = topo_load_model (mpath, fp, cache_path, NULL)))
        goto out;
    if ((t = load_cache (cache_path, fp))) {
        /* the XML is current (and trusted), its model is not: rewrite
         * the model */
        if (mpath && parent_safe (cache_path))
            (void)topo_export_model (t, fp, cache_path, mpath, NULL);
        goto out;
    }
    if (!(t = topo_load ("system", TOPO_WHOLE_SYSTEM, errp)))
        goto out;
    /* not being able to write the cache is not an error; a directory the
     * next reader would not trust is not written to */
    if (make_parent_dirs (cache_path) == 0 && parent_safe (cache_path)
        && topo_export_xml (t, cache_path, NULL) == 0) {
        if (refreshed)
            *refreshed = true;
        if (fp && mpath)
            (void)topo_export_model (t, fp, cache_path, mpath, NULL);
    }
out:
    free (fp);
    free (mpath);
    return t;
}
