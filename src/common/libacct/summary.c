/* summary.c - the job summary kept in slurmdbd's AdminComment (summary.h) */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "libutil/text.h"
#include "summary.h"

/* A decoded summary larger than this is refused (a hostile field must not
 * make a reader inflate gigabytes). */
#define SUMMARY_INFLATE_MAX (16u << 20)

struct acct_summary {
    json_object *nodes;     /* {"NODE": [record objects], ...} */
    json_object *truncated; /* {"NODE": count} */
};

struct acct_summary *acct_summary_create (void)
{
    struct acct_summary *s = calloc (1, sizeof (*s));

    if (!s)
        return NULL;
    s->nodes = json_object_new_object ();
    s->truncated = json_object_new_object ();
    if (!s->nodes || !s->truncated) {
        acct_summary_destroy (s);
        errno = ENOMEM;
        return NULL;
    }
    return s;
}

void acct_summary_destroy (struct acct_summary *s)
{
    int saved = errno;

    if (s) {
        json_object_put (s->nodes);
        json_object_put (s->truncated);
        free (s);
    }
    errno = saved;
}

/* ---- base64 (RFC 4648, standard alphabet, padded) ------------------- */

static const char b64chars[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static char *b64_encode (const unsigned char *in, size_t len)
{
    size_t outlen = 4 * ((len + 2) / 3);
    char *out = malloc (outlen + 1);
    size_t i, o = 0;

    if (!out)
        return NULL;
    for (i = 0; i + 2 < len; i += 3) {
        uint32_t v =
            (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        out[o++] = b64chars[v >> 18 & 63];
        out[o++] = b64chars[v >> 12 & 63];
        out[o++] = b64chars[v >> 6 & 63];
        out[o++] = b64chars[v & 63];
    }
    if (i < len) {
        uint32_t v = (uint32_t)in[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t)in[i + 1] << 8;
        out[o++] = b64chars[v >> 18 & 63];
        out[o++] = b64chars[v >> 12 & 63];
        out[o++] = i + 1 < len ? b64chars[v >> 6 & 63] : '=';
        out[o++] = '=';
    }
    out[o] = '\0';
    return out;
}

static int b64_value (char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

/* Strict: length a multiple of 4, padding only at the end.  -1 (EINVAL)
 * on anything else. */
static int b64_decode (const char *in,
                       size_t len,
                       unsigned char **outp,
                       size_t *outlen)
{
    unsigned char *out;
    size_t i, o = 0, pad = 0;

    if (len == 0 || len % 4 != 0) {
        errno = EINVAL;
        return -1;
    }
    if (in[len - 1] == '=')
        pad++;
    if (in[len - 2] == '=')
        pad++;
    if (!(out = malloc (len / 4 * 3))) {
        errno = ENOMEM;
        return -1;
    }
    for (i = 0; i < len; i += 4) {
        int v[4];
        for (int k = 0; k < 4; k++) {
            if (i + k >= len - pad && in[i + k] == '=')
                v[k] = 0;
            else if ((v[k] = b64_value (in[i + k])) < 0)
                goto bad;
        }
        uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12
                     | (uint32_t)v[2] << 6 | (uint32_t)v[3];
        out[o++] = w >> 16 & 0xff;
        out[o++] = w >> 8 & 0xff;
        out[o++] = w & 0xff;
    }
    *outp = out;
    *outlen = o - pad;
    return 0;
bad:
    free (out);
    errno = EINVAL;
    return -1;
}

/* ---- base 16 over punctuation (summary.h) ------------------------------ */

static const char b16chars[] = ACCT_SUMMARY_B16_DIGITS;

static char *b16_encode (const unsigned char *in, size_t len)
{
    char *out = malloc (2 * len + 1);

    if (!out)
        return NULL;
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = b16chars[in[i] >> 4];
        out[2 * i + 1] = b16chars[in[i] & 15];
    }
    out[2 * len] = '\0';
    return out;
}

static int b16_value (char c)
{
    const char *p = c ? strchr (b16chars, c) : NULL;

    return p ? (int)(p - b16chars) : -1;
}

/* Strict: an even, non-zero length of digits only.  -1 (EINVAL) on
 * anything else. */
static int b16_decode (const char *in,
                       size_t len,
                       unsigned char **outp,
                       size_t *outlen)
{
    unsigned char *out;

    if (len == 0 || len % 2 != 0) {
        errno = EINVAL;
        return -1;
    }
    if (!(out = malloc (len / 2))) {
        errno = ENOMEM;
        return -1;
    }
    for (size_t i = 0; i < len; i += 2) {
        int hi = b16_value (in[i]), lo = b16_value (in[i + 1]);
        if (hi < 0 || lo < 0) {
            free (out);
            errno = EINVAL;
            return -1;
        }
        out[i / 2] = (unsigned char)(hi << 4 | lo);
    }
    *outp = out;
    *outlen = len / 2;
    return 0;
}

/* ---- gzip ------------------------------------------------------------ */

/* gzip with an all-zero header time and no name: the same input always
 * gives the same bytes. */
static int gz_compress (const char *in,
                        size_t len,
                        unsigned char **outp,
                        size_t *outlen)
{
    z_stream zs;
    unsigned char *out;
    uLong bound;
    int rc;

    memset (&zs, 0, sizeof (zs));
    if (deflateInit2 (&zs, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY)
        != Z_OK) {
        errno = ENOMEM;
        return -1;
    }
    bound = deflateBound (&zs, len) + 32;
    if (!(out = malloc (bound))) {
        deflateEnd (&zs);
        errno = ENOMEM;
        return -1;
    }
    zs.next_in = (Bytef *)in;
    zs.avail_in = len;
    zs.next_out = out;
    zs.avail_out = bound;
    rc = deflate (&zs, Z_FINISH);
    *outlen = zs.total_out;
    deflateEnd (&zs);
    if (rc != Z_STREAM_END) {
        free (out);
        errno = ENOMEM;
        return -1;
    }
    *outp = out;
    return 0;
}

/* Inflate a gzip stream into a NUL-terminated string of at most
 * SUMMARY_INFLATE_MAX bytes; -1 EINVAL (not gzip, truncated, too big). */
static int gz_decompress (const unsigned char *in, size_t len, char **outp)
{
    z_stream zs;
    size_t cap = 4096, used = 0;
    char *out = malloc (cap + 1), *p;
    int rc;

    if (!out) {
        errno = ENOMEM;
        return -1;
    }
    memset (&zs, 0, sizeof (zs));
    if (inflateInit2 (&zs, 15 + 16) != Z_OK) {
        free (out);
        errno = ENOMEM;
        return -1;
    }
    zs.next_in = (Bytef *)in;
    zs.avail_in = len;
    for (;;) {
        zs.next_out = (Bytef *)out + used;
        zs.avail_out = cap - used;
        rc = inflate (&zs, Z_NO_FLUSH);
        used = cap - zs.avail_out;
        if (rc == Z_STREAM_END)
            break;
        if (rc != Z_OK && rc != Z_BUF_ERROR)
            goto bad;
        if (zs.avail_out == 0) {
            if (cap >= SUMMARY_INFLATE_MAX)
                goto bad;
            cap *= 2;
            if (!(p = realloc (out, cap + 1)))
                goto nomem;
            out = p;
        } else if (zs.avail_in == 0) {
            goto bad; /* truncated */
        }
    }
    inflateEnd (&zs);
    if (memchr (out, '\0', used))
        goto bad_ended;
    out[used] = '\0';
    *outp = out;
    return 0;
nomem:
    inflateEnd (&zs);
    free (out);
    errno = ENOMEM;
    return -1;
bad:
    inflateEnd (&zs);
bad_ended:
    free (out);
    errno = EINVAL;
    return -1;
}

/* ---- tokens ----------------------------------------------------------- */

/* Decode one token payload (after the prefix) into S (union: a node of
 * the token replaces the same node in S). */
static int decode_payload (struct acct_summary *s,
                           const char *prefix,
                           const char *enc,
                           size_t len,
                           pin_error_t *errp)
{
    const bool b16 = strcmp (prefix, ACCT_SUMMARY_PREFIX_B16) == 0;
    unsigned char *gz = NULL;
    size_t gzlen;
    char *text = NULL;
    json_object *root = NULL, *nodes, *trunc, *v;
    int rc = -1;

    if ((b16 ? b16_decode (enc, len, &gz, &gzlen)
             : b64_decode (enc, len, &gz, &gzlen))
        < 0) {
        if (errno == ENOMEM)
            return -1;
        errprintf (errp,
                   "AdminComment: %s token is not valid %s",
                   prefix,
                   b16 ? "base 16 over \"" ACCT_SUMMARY_B16_DIGITS "\""
                       : "base64");
        errno = EINVAL;
        return -1;
    }
    if (gz_decompress (gz, gzlen, &text) < 0) {
        if (errno != ENOMEM)
            errprintf (errp,
                       "AdminComment: %s token is not gzip data (or inflates "
                       "beyond %u bytes)",
                       prefix,
                       SUMMARY_INFLATE_MAX);
        goto out;
    }
    root = json_tokener_parse (text);
    if (!root || !json_object_is_type (root, json_type_object)
        || !json_object_object_get_ex (root, "v", &v)
        || !json_object_is_type (v, json_type_int)
        || json_object_get_int64 (v) != ACCT_SUMMARY_VERSION
        || !json_object_object_get_ex (root, "nodes", &nodes)
        || !json_object_is_type (nodes, json_type_object)) {
        errprintf (errp,
                   "AdminComment: %s token does not hold a version %d summary "
                   "object",
                   prefix,
                   ACCT_SUMMARY_VERSION);
        errno = EINVAL;
        goto out;
    }
    json_object_object_foreach (nodes, name, recs)
    {
        if (!json_object_is_type (recs, json_type_array)) {
            errprintf (errp,
                       "AdminComment: node '%.64s' of the summary is not an "
                       "array",
                       name);
            errno = EINVAL;
            goto out;
        }
    }
    json_object_object_foreach (nodes, name2, recs2)
    {
        if (json_object_object_add (s->nodes, name2, json_object_get (recs2))
            < 0) {
            errno = ENOMEM;
            goto out;
        }
        json_object_object_del (s->truncated, name2);
    }
    if (json_object_object_get_ex (root, "truncated", &trunc)
        && json_object_is_type (trunc, json_type_object)) {
        json_object_object_foreach (trunc, tname, tv)
        {
            if (json_object_is_type (tv, json_type_int)
                && json_object_object_get_ex (s->nodes, tname, NULL))
                json_object_object_add (s->truncated,
                                        tname,
                                        json_object_get (tv));
        }
    }
    rc = 0;
out:
    json_object_put (root);
    free (text);
    free (gz);
    return rc;
}

/* The prefixes of our token, either form (summary.h). */
static const char *const prefixes[] = {
    ACCT_SUMMARY_PREFIX,
    ACCT_SUMMARY_PREFIX_B16,
};

/* Find the next token of ours at or after FROM: a prefix that starts the
 * field or follows a space; its end is the next space or the end.  The
 * prefix found is *prefix. */
static const char *find_token (const char *from,
                               const char *field,
                               const char **prefix,
                               const char **end)
{
    const char *best = NULL;

    for (size_t k = 0; k < sizeof (prefixes) / sizeof (prefixes[0]); k++) {
        const size_t plen = strlen (prefixes[k]);
        const char *p = from;
        while ((p = strstr (p, prefixes[k]))) {
            if (p == field || p[-1] == ' ')
                break;
            p += plen;
        }
        if (p && (!best || p < best)) {
            best = p;
            *prefix = prefixes[k];
            *end = p + plen + strcspn (p + plen, " ");
        }
    }
    return best;
}

bool acct_summary_present (const char *field)
{
    const char *prefix, *end;

    return field && find_token (field, field, &prefix, &end) != NULL;
}

int acct_summary_parse (const char *field,
                        char **other,
                        struct acct_summary **sp,
                        pin_error_t *errp)
{
    const size_t glen = strlen (ACCT_SUMMARY_GUARD);
    struct acct_summary *s;
    const char *p, *tok, *end, *prefix;
    char *out;
    size_t o = 0;
    int rc = 0;

    if (!field)
        field = "";
    if (!(s = acct_summary_create ()))
        return -1;
    if (!(out = malloc (strlen (field) + 1))) {
        acct_summary_destroy (s);
        errno = ENOMEM;
        return -1;
    }
    p = field;
    while ((tok = find_token (p, field, &prefix, &end))) {
        size_t keep = tok - p, plen = strlen (prefix);
        /* the separator this module puts before its token: one space, or
         * " AA== " before a base64 token (written up to version 1 of this
         * file's format, still read) */
        if (prefix == prefixes[0] && tok - glen >= p
            && memcmp (tok - glen, ACCT_SUMMARY_GUARD, glen) == 0)
            keep -= glen;
        else if (tok > p && tok[-1] == ' ')
            keep -= 1;
        memcpy (out + o, p, keep);
        o += keep;
        if (decode_payload (s, prefix, tok + plen, end - tok - plen, errp)
            < 0) {
            if (errno == ENOMEM) {
                free (out);
                acct_summary_destroy (s);
                return -1;
            }
            rc = 1;
        }
        p = end;
    }
    memcpy (out + o, p, strlen (p) + 1);
    *other = out;
    *sp = s;
    return rc;
}

/* ---- records ------------------------------------------------------- */

static int64_t rec_int (json_object *r, const char *key, int64_t dflt)
{
    json_object *v;

    if (json_object_object_get_ex (r, key, &v)
        && json_object_is_type (v, json_type_int))
        return json_object_get_int64 (v);
    return dflt;
}

static bool rec_is_job (json_object *r)
{
    json_object *v;

    return json_object_object_get_ex (r, "kind", &v)
           && json_object_is_type (v, json_type_string)
           && strcmp (json_object_get_string (v), "job") == 0;
}

/* Canonical order: job records first, then steps by start time, step id;
 * ties by the JSON text. */
static int rec_cmp (const void *a, const void *b)
{
    json_object *ra = *(json_object *const *)a, *rb = *(json_object *const *)b;
    bool ja = rec_is_job (ra), jb = rec_is_job (rb);
    int64_t x, y;

    if (ja != jb)
        return ja ? -1 : 1;
    x = rec_int (ra, "start_us", 0);
    y = rec_int (rb, "start_us", 0);
    if (x != y)
        return x < y ? -1 : 1;
    x = rec_int (ra, "step_id", 0);
    y = rec_int (rb, "step_id", 0);
    if (x != y)
        return x < y ? -1 : 1;
    return strcmp (json_object_to_json_string_ext (ra, JSON_C_TO_STRING_PLAIN),
                   json_object_to_json_string_ext (rb,
                                                   JSON_C_TO_STRING_PLAIN));
}

/* RECORDS parsed into a sorted array; NULL with errp. */
static json_object *records_array (const char *const *records,
                                   size_t n,
                                   pin_error_t *errp)
{
    json_object *arr = json_object_new_array_ext (n ? n : 1);

    if (!arr) {
        errno = ENOMEM;
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        json_object *r = records[i] ? json_tokener_parse (records[i]) : NULL;
        if (!r || !json_object_is_type (r, json_type_object)) {
            json_object_put (r);
            json_object_put (arr);
            errprintf (errp,
                       "record %zu: not a JSON object (a journal line of "
                       "acct.h)",
                       i);
            errno = EINVAL;
            return NULL;
        }
        json_object_array_add (arr, r);
    }
    json_object_array_sort (arr, rec_cmp);
    return arr;
}

int acct_summary_set_node (struct acct_summary *s,
                           const char *node,
                           const char *const *records,
                           size_t n,
                           pin_error_t *errp)
{
    json_object *arr;

    if (!s || !node || !*node || (n && !records)) {
        errno = EINVAL;
        return errprintf (errp, "summary: no node name or no records given");
    }
    json_object_object_del (s->truncated, node);
    if (n == 0) {
        json_object_object_del (s->nodes, node);
        return 0;
    }
    if (!(arr = records_array (records, n, errp)))
        return -1;
    if (json_object_object_add (s->nodes, node, arr) < 0) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

size_t acct_summary_node_count (const struct acct_summary *s)
{
    return s ? (size_t)json_object_object_length (s->nodes) : 0;
}

unsigned acct_summary_truncated (const struct acct_summary *s,
                                 const char *node)
{
    json_object *v;

    if (s && node && json_object_object_get_ex (s->truncated, node, &v))
        return (unsigned)json_object_get_int64 (v);
    return 0;
}

static int cmp_str (const void *a, const void *b)
{
    return strcmp (*(const char *const *)a, *(const char *const *)b);
}

/* Node names of S in order; malloc'd array (the strings belong to S). */
static const char **sorted_nodes (const struct acct_summary *s, size_t *np)
{
    size_t n = acct_summary_node_count (s), i = 0;
    const char **names = malloc ((n ? n : 1) * sizeof (*names));

    if (!names)
        return NULL;
    json_object_object_foreach (s->nodes, name, recs)
    {
        (void)recs;
        names[i++] = name;
    }
    qsort (names, n, sizeof (*names), cmp_str);
    *np = n;
    return names;
}

int acct_summary_foreach (const struct acct_summary *s,
                          acct_summary_cb cb,
                          void *arg)
{
    const char **names;
    size_t n;
    int rc = 0;

    if (!s || !cb)
        return 0;
    if (!(names = sorted_nodes (s, &n)))
        return -1;
    for (size_t i = 0; i < n && rc == 0; i++) {
        json_object *recs;
        json_object_object_get_ex (s->nodes, names[i], &recs);
        for (size_t j = 0; j < json_object_array_length (recs) && rc == 0; j++)
            rc = cb (names[i], json_object_array_get_idx (recs, j), arg);
    }
    free (names);
    return rc;
}

/* ---- format ---------------------------------------------------------- */

/* The field for OTHER and the JSON ROOT; NULL ENOMEM.  Alone in the
 * field, our token is PREFIX base64; after other tools' text, one space
 * then PREFIX_B16 base 16, so that no base64 decoder reading the other
 * text sees a character of ours (summary.h). */
static char *field_text (const char *other, json_object *root)
{
    const char *text =
        json_object_to_json_string_ext (root,
                                        JSON_C_TO_STRING_PLAIN
                                            | JSON_C_TO_STRING_NOSLASHESCAPE);
    /* ASCII only (text.h), as the journal's records */
    char *json = text ? text_json_ascii (text) : NULL;
    unsigned char *gz = NULL;
    size_t gzlen, olen = other ? strlen (other) : 0;
    char *enc = NULL, *out = NULL;
    const char *prefix = olen ? ACCT_SUMMARY_PREFIX_B16 : ACCT_SUMMARY_PREFIX;

    if (!json || gz_compress (json, strlen (json), &gz, &gzlen) < 0)
        goto out;
    if (!(enc = olen ? b16_encode (gz, gzlen) : b64_encode (gz, gzlen)))
        goto out;
    if (!(out = malloc (olen + 1 + strlen (prefix) + strlen (enc) + 1)))
        goto out;
    out[0] = '\0';
    if (olen) {
        memcpy (out, other, olen);
        out[olen] = ' ';
        out[olen + 1] = '\0';
    }
    strcat (out, prefix);
    strcat (out, enc);
out:
    free (json);
    free (gz);
    free (enc);
    if (!out)
        errno = ENOMEM;
    return out;
}

/* Build {"v":1,"nodes":{...sorted...},"truncated":{...}} from S, leaving
 * out DROP[node] step records at the end of each node's list. */
static json_object *build_root (const struct acct_summary *s,
                                const char **names,
                                size_t n,
                                const size_t *drop)
{
    json_object *root = json_object_new_object ();
    json_object *nodes = json_object_new_object ();
    json_object *trunc = json_object_new_object ();
    bool any_trunc = false;

    if (!root || !nodes || !trunc)
        goto nomem;
    json_object_object_add (root,
                            "v",
                            json_object_new_int (ACCT_SUMMARY_VERSION));
    for (size_t i = 0; i < n; i++) {
        json_object *recs, *arr;
        size_t len, steps = 0, skipped = 0;
        json_object_object_get_ex (s->nodes, names[i], &recs);
        len = json_object_array_length (recs);
        for (size_t j = 0; j < len; j++)
            steps += !rec_is_job (json_object_array_get_idx (recs, j));
        if (!(arr = json_object_new_array ()))
            goto nomem;
        for (size_t j = 0; j < len; j++) {
            json_object *r = json_object_array_get_idx (recs, j);
            /* the last drop[i] steps (records are sorted: steps last) */
            if (!rec_is_job (r) && drop[i]
                && j >= len - (drop[i] < steps ? drop[i] : steps)) {
                skipped++;
                continue;
            }
            json_object_array_add (arr, json_object_get (r));
        }
        json_object_object_add (nodes, names[i], arr);
        skipped += acct_summary_truncated (s, names[i]);
        if (skipped) {
            json_object_object_add (trunc,
                                    names[i],
                                    json_object_new_int64 (skipped));
            any_trunc = true;
        }
    }
    json_object_object_add (root, "nodes", nodes);
    if (any_trunc)
        json_object_object_add (root, "truncated", trunc);
    else
        json_object_put (trunc);
    return root;
nomem:
    json_object_put (root);
    json_object_put (nodes);
    json_object_put (trunc);
    errno = ENOMEM;
    return NULL;
}

char *acct_summary_format (const char *other,
                           const struct acct_summary *s,
                           size_t max,
                           pin_error_t *errp)
{
    const char **names = NULL;
    size_t n = 0, *drop = NULL, olen = other ? strlen (other) : 0;
    char *out = NULL;

    if (!s) {
        errno = EINVAL;
        errprintf (errp, "summary: none given");
        return NULL;
    }
    if (n = acct_summary_node_count (s), n == 0) {
        /* nothing of ours: the other text alone */
        if (olen > max) {
            errno = ERANGE;
            errprintf (errp,
                       "AdminComment: other tools' text alone is %zu bytes, "
                       "over the bound of %zu",
                       olen,
                       max);
            return NULL;
        }
        if (!(out = strdup (other ? other : "")))
            errno = ENOMEM;
        return out;
    }
    if (!(names = sorted_nodes (s, &n))
        || !(drop = calloc (n, sizeof (*drop)))) {
        free (names);
        errno = ENOMEM;
        return NULL;
    }
    /* Too long: leave out step records, half of the remaining steps of
     * every node at a time, until it fits or only job records are left. */
    for (;;) {
        json_object *root = build_root (s, names, n, drop);
        bool more = false;
        if (!root)
            break;
        out = field_text (other, root);
        json_object_put (root);
        if (!out || strlen (out) <= max)
            break;
        free (out);
        out = NULL;
        for (size_t i = 0; i < n; i++) {
            json_object *recs;
            size_t steps = 0;
            json_object_object_get_ex (s->nodes, names[i], &recs);
            for (size_t j = 0; j < json_object_array_length (recs); j++)
                steps += !rec_is_job (json_object_array_get_idx (recs, j));
            if (drop[i] < steps) {
                drop[i] += (steps - drop[i] + 1) / 2;
                more = true;
            }
        }
        if (!more) {
            errno = ERANGE;
            errprintf (errp,
                       "AdminComment: the summary does not fit in %zu bytes "
                       "even with job records only",
                       max);
            break;
        }
    }
    free (names);
    free (drop);
    return out;
}

char *acct_summary_merge (const char *field,
                          const char *node,
                          const char *const *records,
                          size_t n,
                          size_t max,
                          pin_error_t *errp)
{
    struct acct_summary *s = NULL;
    char *other = NULL, *out = NULL;

    if (acct_summary_parse (field, &other, &s, NULL) < 0)
        return NULL;
    if (acct_summary_set_node (s, node, records, n, errp) == 0)
        out = acct_summary_format (other, s, max, errp);
    free (other);
    acct_summary_destroy (s);
    return out;
}

bool acct_summary_has_node (const char *field,
                            const char *node,
                            const char *const *records,
                            size_t n)
{
    struct acct_summary *s = NULL;
    char *other = NULL;
    json_object *want = NULL, *have;
    bool ok = false;

    if (acct_summary_parse (field, &other, &s, NULL) < 0)
        return false;
    if (!(want = records_array (records, n, NULL)))
        goto out;
    if (!json_object_object_get_ex (s->nodes, node, &have))
        goto out;
    if (acct_summary_truncated (s, node) == 0) {
        ok = json_object_equal (have, want);
    } else {
        /* every record present must be one of ours, and every job record
         * of ours must be there */
        size_t found = 0, jobs = 0;
        for (size_t i = 0; i < json_object_array_length (want); i++) {
            json_object *w = json_object_array_get_idx (want, i);
            bool in = false;
            for (size_t j = 0; j < json_object_array_length (have) && !in; j++)
                in =
                    json_object_equal (w, json_object_array_get_idx (have, j));
            found += in;
            if (rec_is_job (w)) {
                jobs++;
                if (!in)
                    goto out;
            }
        }
        ok = found == json_object_array_length (have)
             && found + acct_summary_truncated (s, node)
                    == json_object_array_length (want);
        (void)jobs;
    }
out:
    json_object_put (want);
    free (other);
    acct_summary_destroy (s);
    return ok;
}
