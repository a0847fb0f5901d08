/* model.c - the flattened model as a cache of its own
 *
 * A step start needs the PU table, not hwloc's topology: loading the
 * cached XML costs an hwloc init (which dlopens hwloc's plugins), an XML
 * parse and the flattening, 1-5 ms per step on every node.  The model
 * cache holds the flattened model itself and the fingerprint of the
 * machine it was made on, as JSON (json-c):
 *
 *   {"format": "slurm-pin topology model", "version": 5,
 *    "fingerprint": "...", "xml": [size, mtime_ns],
 *    "flags": 1, "slurm_cores": 192,
 *    "nodeset": "0x00ffffff",             hwloc's bitmap string
 *    "numa": [["0x00000001", true], ...], one per NUMA domain
 *    "npus": 384, "hexwidth": 3,
 *    "pus": {"os": COLUMN, "core": COLUMN, "l2": ..., "l3": ..., "numa": ...,
 *            "pkg": ..., "kind": ..., "slurm_core": ...},
 *    "devices": [[kind, index, fabric, "cuda0", "cuda0,nvml0",
 *                 "0000:3b:00.0", "0x000000ff", "0x1", numa], ...],
 *    "distances": [10, 21, 21, 10] or null}     NUMA domains, row-major
 *
 * A COLUMN is a string of npus values, "hexwidth" hexadecimal digits each
 * (1 to 8: as many as the largest value of the table needs), in PU table
 * order; "kind" and "slurm_core" hold value + 1 (so -1 is 0).  One
 * string per column instead of one JSON number per cell: json-c makes an
 * object per value, and for a 384-PU machine that was 3,000 objects and
 * 70 % of the load (callgrind); a column string decodes in microseconds.
 *
 * The XML cache stays the machine's description (lstopo -i reads it); the
 * model is derived from it and records the XML file's size and mtime, so a
 * model whose XML was replaced, damaged or removed is not used.  Domain
 * cpusets are rebuilt from the PU table.  The file is root's and
 * is read with the same care as the XML cache; everything in it is still
 * checked (types, ranges, dense domain indexes, topo_from_table) and a
 * file that fails any check is ignored and rewritten.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "libutil/atomicfile.h"
#include "topo_private.h"

#define MODEL_FORMAT "slurm-pin topology model"
#define MODEL_VERSION 5 /* 5: "devices" and "distances" */
#define MODEL_MAX (16u << 20)
#define PU_FIELDS (3 + TOPO_NLEVELS) /* os, 5 domains, kind, slurm */
#define HEX_MAX 8                    /* digits of a 32-bit value */

/* The columns, in struct topo_pu's order; `bias` is added when written. */
static const struct {
    const char *name;
    int bias;
} columns[PU_FIELDS] = {
    {"os", 0},
    {"core", 0},
    {"l2", 0},
    {"l3", 0},
    {"numa", 0},
    {"pkg", 0},
    {"kind", 1},
    {"slurm_core", 1},
};

/* Field f of PU p as written (bias added). */
static unsigned long field (const struct topo_pu *p, int f)
{
    if (f == 0)
        return p->os;
    if (f <= TOPO_NLEVELS)
        return p->dom[f - 1];
    return (unsigned long)((f == 1 + TOPO_NLEVELS ? p->kind : p->slurm_core)
                           + 1);
}

/* The hexadecimal digits every value of the table fits in (1 to 8). */
static int hex_width (const topo_t *t)
{
    unsigned long mx = 0;
    int w = 1;

    for (unsigned i = 0; i < t->npus; i++)
        for (int f = 0; f < PU_FIELDS; f++)
            if ((field (&t->pus[i], f) & 0xffffffffUL) > mx)
                mx = field (&t->pus[i], f) & 0xffffffffUL;
    while (w < HEX_MAX && (mx >> (4 * w)) != 0)
        w++;
    return w;
}

static json_object *column_string (const topo_t *t, int f, int w)
{
    size_t len = (size_t)t->npus * (size_t)w;
    char *buf = malloc (len + 1);
    json_object *o;

    if (!buf)
        return NULL;
    for (unsigned i = 0; i < t->npus; i++)
        snprintf (buf + (size_t)i * (size_t)w,
                  (size_t)w + 1,
                  "%0*lx",
                  w,
                  field (&t->pus[i], f) & 0xffffffffUL);
    o = json_object_new_string_len (buf, (int)len);
    free (buf);
    return o;
}

static int hexval (char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* Decode column `name` of `pus` into v (n values of w digits, bias taken
 * off); -1 if it is missing, of the wrong length or not lowercase
 * hexadecimal. */
static int column_decode (json_object *pus,
                          const char *name,
                          int bias,
                          size_t n,
                          int w,
                          long *v)
{
    json_object *c;
    const char *s;

    if (!json_object_object_get_ex (pus, name, &c)
        || !json_object_is_type (c, json_type_string)
        || (size_t)json_object_get_string_len (c) != n * (size_t)w)
        return -1;
    s = json_object_get_string (c);
    for (size_t i = 0; i < n; i++) {
        unsigned long x = 0;
        for (int d = 0; d < w; d++) {
            int h = hexval (s[i * (size_t)w + (size_t)d]);
            if (h < 0)
                return -1;
            x = (x << 4) | (unsigned long)h;
        }
        v[i] = (long)x - bias;
    }
    return 0;
}

static int add (json_object *o, const char *key, json_object *val)
{
    if (!val || json_object_object_add (o, key, val) < 0) {
        json_object_put (val);
        return -1;
    }
    return 0;
}

/* A nodeset as hwloc's own bitmap string ("0x00000003"): read back by
 * hwloc_bitmap_sscanf() without the kernel list parser's regex, which a
 * fresh slurmstepd would compile for two short strings. */
static json_object *set_string (hwloc_const_bitmap_t set)
{
    char *s = NULL;
    json_object *o;

    if (hwloc_bitmap_asprintf (&s, set) < 0)
        return NULL;
    o = json_object_new_string (s);
    free (s);
    return o;
}

/* Parse what set_string() wrote, strictly: the text must be exactly what
 * hwloc prints for the set it reads. */
static int set_parse (const char *text, hwloc_bitmap_t set)
{
    char *back = NULL;
    int rc = -1;

    if (strncmp (text, "0x", 2) != 0 || hwloc_bitmap_sscanf (set, text) < 0
        || hwloc_bitmap_weight (set) < 0
        || hwloc_bitmap_asprintf (&back, set) < 0)
        goto out;
    rc = strcmp (back, text) == 0 ? 0 : -1;
out:
    free (back);
    return rc;
}

/* Size and mtime (ns) of the XML cache, not following a symlink. */
static int xml_identity (const char *xml_path, int64_t id[2])
{
    struct stat st;
    if (fstatat (AT_FDCWD, xml_path, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return -1;
    if (!S_ISREG (st.st_mode)) {
        errno = EINVAL;
        return -1;
    }
    id[0] = (int64_t)st.st_size;
    id[1] = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    return 0;
}

static json_object *model_to_json (const topo_t *t,
                                   const char *fp,
                                   const int64_t xml_id[2])
{
    json_object *o = json_object_new_object ();
    json_object *numa = json_object_new_array ();
    json_object *pus = json_object_new_object ();
    json_object *xml = json_object_new_array ();

    json_object *x;

    if (!o || !numa || !pus || !xml)
        goto error;
    if (json_object_array_add (xml, json_object_new_int64 (xml_id[0])) < 0
        || json_object_array_add (xml, json_object_new_int64 (xml_id[1])) < 0)
        goto error;
    x = xml;
    xml = NULL; /* o's from here, or freed by add() */
    if (add (o, "xml", x) < 0)
        goto error;
    for (unsigned d = 0; d < t->ndom[TOPO_NUMA]; d++) {
        json_object *e = json_object_new_array ();
        if (!e || json_object_array_add (numa, e) < 0) {
            json_object_put (e);
            goto error;
        }
        if (json_object_array_add (e, set_string (t->numa_nodesets[d])) < 0
            || json_object_array_add (e,
                                      json_object_new_boolean (
                                          t->numa_local[d]))
                   < 0)
            goto error;
    }
    int w = hex_width (t);
    for (int f = 0; f < PU_FIELDS; f++)
        if (add (pus, columns[f].name, column_string (t, f, w)) < 0)
            goto error;
    if (add (o, "format", json_object_new_string (MODEL_FORMAT)) < 0
        || add (o, "version", json_object_new_int (MODEL_VERSION)) < 0
        || add (o, "fingerprint", json_object_new_string (fp)) < 0
        || add (o, "flags", json_object_new_int (t->flags)) < 0
        || add (o, "slurm_cores", json_object_new_int ((int)t->nslurm_cores))
               < 0
        || add (o, "nodeset", set_string (t->nodeset)) < 0
        || add (o, "npus", json_object_new_int ((int)t->npus)) < 0
        || add (o, "hexwidth", json_object_new_int (w)) < 0)
        goto error;
    {
        json_object *dv = topo_devices_to_json (t), *v;
        if (!dv)
            goto error;
        json_object_object_get_ex (dv, "devices", &v);
        json_object_object_add (o, "devices", json_object_get (v));
        json_object_object_get_ex (dv, "distances", &v);
        json_object_object_add (o, "distances", json_object_get (v));
        json_object_put (dv);
    }
    json_object_object_add (o, "numa", numa);
    numa = NULL;
    json_object_object_add (o, "pus", pus);
    return o;
error:
    json_object_put (xml);
    json_object_put (numa);
    json_object_put (pus);
    json_object_put (o);
    return NULL;
}

int topo_export_model (const topo_t *t,
                       const char *fp,
                       const char *xml_path,
                       const char *path,
                       pin_error_t *errp)
{
    json_object *o;
    const char *text;
    int64_t id[2];
    int rc = -1;

    if (!t || !fp || !xml_path || !path || !*path) {
        errno = EINVAL;
        return errprintf (errp, "topology model export: missing argument");
    }
    if (xml_identity (xml_path, id) < 0)
        return errprintf (errp,
                          "topology model export: '%s': %s",
                          xml_path,
                          strerror (errno));
    if (!(o = model_to_json (t, fp, id))) {
        errno = ENOMEM;
        return errprintf (errp,
                          "topology model export to '%s': out of "
                          "memory",
                          path);
    }
    if (!(text = json_object_to_json_string_ext (o, JSON_C_TO_STRING_PLAIN))) {
        errno = ENOMEM;
        errprintf (errp, "topology model export to '%s': out of memory", path);
    } else if (write_file_atomic (path, text, strlen (text), 0644) < 0)
        errprintf (errp,
                   "topology model export to '%s': %s",
                   path,
                   strerror (errno));
    else
        rc = 0;
    json_object_put (o);
    return rc;
}

/* An int member of o in [lo, hi], or -1 ... fail. */
static int get_int (json_object *o, const char *key, int lo, int hi, int *val)
{
    json_object *v;
    if (!json_object_object_get_ex (o, key, &v)
        || !json_object_is_type (v, json_type_int))
        return -1;
    return (*val = json_object_get_int (v)) < lo || *val > hi ? -1 : 0;
}

static const char *get_string (json_object *o, const char *key)
{
    json_object *v;
    if (!json_object_object_get_ex (o, key, &v)
        || !json_object_is_type (v, json_type_string))
        return NULL;
    return json_object_get_string (v);
}

static json_object *get_array (json_object *o, const char *key)
{
    json_object *v;
    if (!json_object_object_get_ex (o, key, &v)
        || !json_object_is_type (v, json_type_array))
        return NULL;
    return v;
}

/* The "xml" member matches the XML cache as it is now. */
static bool xml_matches (json_object *o, const char *xml_path)
{
    json_object *a, *v0, *v1;
    int64_t id[2];

    if (!(a = get_array (o, "xml")) || json_object_array_length (a) != 2
        || !(v0 = json_object_array_get_idx (a, 0))
        || !(v1 = json_object_array_get_idx (a, 1))
        || !json_object_is_type (v0, json_type_int)
        || !json_object_is_type (v1, json_type_int)
        || xml_identity (xml_path, id) < 0)
        return false;
    return json_object_get_int64 (v0) == id[0]
           && json_object_get_int64 (v1) == id[1];
}

static topo_t *model_from_json (json_object *o,
                                const char *fp,
                                const char *xml_path,
                                const char *path,
                                pin_error_t *errp)
{
    json_object *numa, *pus;
    hwloc_bitmap_t nodeset = NULL;
    hwloc_bitmap_t *nodesets = NULL;
    bool *local = NULL;
    struct topo_pu *table = NULL;
    size_t nnuma = 0, npus;
    const char *s;
    int version, flags, ncores, n, w;
    long *col = NULL;
    topo_t *t = NULL;

    if (!(s = get_string (o, "format")) || strcmp (s, MODEL_FORMAT) != 0
        || get_int (o, "version", MODEL_VERSION, MODEL_VERSION, &version) < 0
        || !(s = get_string (o, "fingerprint")) || strcmp (s, fp) != 0
        || !xml_matches (o, xml_path)
        || get_int (o, "flags", 0, TOPO_WHOLE_SYSTEM, &flags) < 0
        || get_int (o, "slurm_cores", 0, TOPO_MAX_OS, &ncores) < 0
        || !(s = get_string (o, "nodeset")) || !(numa = get_array (o, "numa"))
        || !json_object_object_get_ex (o, "pus", &pus)
        || !json_object_is_type (pus, json_type_object)
        || get_int (o, "npus", 1, TOPO_MAX_OS, &n) < 0
        || get_int (o, "hexwidth", 1, HEX_MAX, &w) < 0
        || (nnuma = json_object_array_length (numa)) > (size_t)n)
        goto invalid;
    npus = (size_t)n;
    if (!(nodeset = hwloc_bitmap_alloc ()) || set_parse (s, nodeset) < 0)
        goto invalid;
    if (!(nodesets = calloc (nnuma + 1, sizeof (*nodesets)))
        || !(local = calloc (nnuma + 1, sizeof (*local)))
        || !(table = calloc (npus, sizeof (*table)))
        || !(col = calloc (npus, sizeof (*col))))
        goto nomem;
    for (size_t d = 0; d < nnuma; d++) {
        json_object *e = json_object_array_get_idx (numa, d);
        json_object *v0, *v1;
        if (!e || !json_object_is_type (e, json_type_array)
            || json_object_array_length (e) != 2
            || !(v0 = json_object_array_get_idx (e, 0))
            || !(v1 = json_object_array_get_idx (e, 1))
            || !json_object_is_type (v0, json_type_string)
            || !json_object_is_type (v1, json_type_boolean)
            || !(nodesets[d] = hwloc_bitmap_alloc ())
            || set_parse (json_object_get_string (v0), nodesets[d]) < 0)
            goto invalid;
        local[d] = json_object_get_boolean (v1);
    }
    for (int f = 0; f < PU_FIELDS; f++) {
        if (column_decode (pus, columns[f].name, columns[f].bias, npus, w, col)
            < 0)
            goto invalid;
        for (size_t i = 0; i < npus; i++) {
            long v = col[i];
            if (f == 0) {
                if (v < 0 || v >= TOPO_MAX_OS)
                    goto invalid;
                table[i].os = (unsigned)v;
            } else if (f <= TOPO_NLEVELS) {
                if (v < 0 || (size_t)v >= npus)
                    goto invalid;
                table[i].dom[f - 1] = (unsigned)v;
            } else {
                if (v < -1 || v > TOPO_MAX_OS)
                    goto invalid;
                if (f == 1 + TOPO_NLEVELS)
                    table[i].kind = (int)v;
                else
                    table[i].slurm_core = (int)v;
            }
        }
    }
    /* takes the table over; checks the rest */
    t = topo_from_table (table,
                         (unsigned)npus,
                         flags,
                         nodesets,
                         local,
                         (unsigned)nnuma,
                         nodeset,
                         (unsigned)ncores,
                         path,
                         errp);
    table = NULL;
    if (t && topo_devices_from_json (t, o) < 0) {
        topo_destroy (t);
        t = NULL;
        goto invalid;
    }
    goto out;
invalid:
    errprintf (errp, "topology '%s': not a valid model cache", path);
    errno = EINVAL;
    goto out;
nomem:
    errprintf (errp, "topology '%s': out of memory", path);
    errno = ENOMEM;
out:
    if (nodesets) {
        for (size_t d = 0; d < nnuma; d++)
            hwloc_bitmap_free (nodesets[d]);
    }
    free (nodesets);
    free (local);
    free (table);
    free (col);
    hwloc_bitmap_free (nodeset);
    return t;
}

topo_t *topo_load_model (const char *path,
                         const char *fp,
                         const char *xml_path,
                         pin_error_t *errp)
{
    json_tokener *tok = NULL;
    json_object *o = NULL;
    topo_t *t = NULL;
    size_t len;
    char *buf;

    if (!path || !fp || !xml_path) {
        errno = EINVAL;
        errprintf (errp, "topology model: missing argument");
        return NULL;
    }
    if (!(buf = topo_read_file (path, "model", true, MODEL_MAX, &len, errp)))
        return NULL;
    if (!(tok = json_tokener_new ())) {
        errno = ENOMEM;
        errprintf (errp, "topology '%s': out of memory", path);
        goto out;
    }
    /* one complete JSON object and nothing after it */
    o = json_tokener_parse_ex (tok, buf, (int)len);
    if (!o || json_tokener_get_error (tok) != json_tokener_success
        || json_tokener_get_parse_end (tok) != len
        || !json_object_is_type (o, json_type_object)) {
        errno = EINVAL;
        errprintf (errp, "topology '%s': not a valid model cache", path);
        goto out;
    }
    t = model_from_json (o, fp, xml_path, path, errp);
out:
    json_object_put (o);
    if (tok)
        json_tokener_free (tok);
    free (buf);
    return t;
}
