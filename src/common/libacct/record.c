/* record.c - accounting records <-> one JSON line (see acct.h)
 *
 * Every string goes through acct_utf8_copy() on the way out, so a record
 * is valid UTF-8 whatever bytes a user put in a job name; json-c escapes
 * the control characters (a newline becomes \n), so it is one line, and
 * the line is ASCII (text_json_ascii(): every other character a \u
 * escape), which every JSON reader takes, strict or not.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "acct.h"
#include "libutil/text.h"

void acct_record_init (struct acct_record *r)
{
    memset (r, 0, sizeof (*r));
    r->kind = ACCT_KIND_STEP;
    r->job_id = ACCT_NO_VAL;
    r->step_id = ACCT_NO_VAL;
    r->array_job_id = ACCT_NO_VAL;
    r->array_task_id = ACCT_NO_VAL;
    r->uid = ACCT_NO_VAL;
    r->exit_status = -1;
    r->source = ACCT_SRC_STEP_CGROUP;
}

double acct_efficiency (const struct acct_record *r)
{
    if (r->elapsed_us <= 0 || r->alloc_cpus == 0)
        return -1;
    return (double)(r->user_usec + r->system_usec)
           / ((double)r->elapsed_us * (double)r->alloc_cpus);
}

/* Length of the valid UTF-8 sequence at s (at most `left` bytes), 0 if
 * the byte at s does not start one (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF). */
static size_t utf8_len (const unsigned char *s, size_t left)
{
    unsigned char c = s[0];
    size_t len;
    unsigned char lo = 0x80, hi = 0xbf;

    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        len = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0)
            lo = 0xa0;
        else if (c == 0xed)
            hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0)
            lo = 0x90;
        else if (c == 0xf4)
            hi = 0x8f;
    } else
        return 0;
    if (len > left)
        return 0;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return len;
}

char *acct_utf8_copy (char *dst, size_t n, const char *src, size_t srclen)
{
    const unsigned char *s = (const unsigned char *)src;
    size_t in = 0, out = 0;

    if (n == 0)
        return dst;
    while (src && in < srclen && s[in]) {
        size_t len = utf8_len (s + in, srclen - in);
        const char *put = len ? (const char *)s + in : "\xef\xbf\xbd";
        size_t plen = len ? len : 3;

        if (out + plen >= n)
            break;
        memcpy (dst + out, put, plen);
        out += plen;
        in += len ? len : 1;
    }
    dst[out] = '\0';
    return dst;
}

const char *acct_step_name (uint32_t step_id, char *buf, size_t n)
{
    switch (step_id) {
        case ACCT_STEP_BATCH:
            return "batch";
        case ACCT_STEP_EXTERN:
            return "extern";
        case ACCT_STEP_INTERACTIVE:
            return "interactive";
        default:
            snprintf (buf, n, "%" PRIu32, step_id);
            return buf;
    }
}

static const char *source_names[] = {"step-cgroup",
                                     "job-cgroup",
                                     "step-records"};
static const char *kind_names[] = {"step", "job"};

const char *acct_source_name (enum acct_source s)
{
    return (unsigned)s < 3 ? source_names[s] : "unknown";
}

const char *acct_kind_name (enum acct_kind k)
{
    return (unsigned)k < 2 ? kind_names[k] : "unknown";
}

const char *acct_state_of_status (int32_t status, bool oom)
{
    if (oom)
        return "OUT_OF_MEMORY";
    if (status < 0)
        return "UNKNOWN";
    if (WIFSIGNALED (status))
        return "CANCELLED";
    if (WIFEXITED (status) && WEXITSTATUS (status) != 0)
        return "FAILED";
    return "COMPLETED";
}

/* ---- to JSON ------------------------------------------------------------ */

static int add (json_object *o, const char *key, json_object *v)
{
    if (!v)
        return -1;
    if (json_object_object_add (o, key, v) < 0) {
        json_object_put (v);
        return -1;
    }
    return 0;
}

static int add_str (json_object *o,
                    const char *key,
                    const char *s,
                    size_t size)
{
    char clean[4096];
    size_t n = sizeof (clean) < size ? sizeof (clean) : size;

    acct_utf8_copy (clean, n, s, strnlen (s, size));
    return add (o, key, json_object_new_string (clean));
}

#define ADD_STR(o, key, field) add_str (o, key, field, sizeof (field))

char *acct_record_to_json (const struct acct_record *r, pin_error_t *errp)
{
    json_object *o = json_object_new_object ();
    double eff = acct_efficiency (r);
    const char *s;
    char *line = NULL;
    int rc = 0;

    if (!o)
        goto nomem;
    rc |= add (o, "v", json_object_new_int (ACCT_RECORD_VERSION));
    rc |= add (o, "kind", json_object_new_string (acct_kind_name (r->kind)));
    rc |= ADD_STR (o, "cluster", r->cluster);
    rc |= add (o, "job_id", json_object_new_int64 (r->job_id));
    rc |= add (o, "step_id", json_object_new_int64 (r->step_id));
    rc |= add (o, "array_job_id", json_object_new_int64 (r->array_job_id));
    rc |= add (o, "array_task_id", json_object_new_int64 (r->array_task_id));
    rc |= ADD_STR (o, "node", r->node);
    rc |= add (o, "uid", json_object_new_int64 (r->uid));
    rc |= ADD_STR (o, "user", r->user);
    rc |= ADD_STR (o, "partition", r->partition);
    rc |= ADD_STR (o, "job_name", r->job_name);
    if (r->account[0])
        rc |= ADD_STR (o, "account", r->account);
    if (r->qos[0])
        rc |= ADD_STR (o, "qos", r->qos);
    if (r->submit_us > 0)
        rc |= add (o, "submit_us", json_object_new_int64 (r->submit_us));
    if (r->has_timelimit)
        rc |= add (o, "timelimit", json_object_new_int64 (r->timelimit));
    if (r->req_mem)
        rc |= add (o, "req_mem", json_object_new_uint64 (r->req_mem));
    rc |= ADD_STR (o, "policy", r->policy);
    rc |= ADD_STR (o, "fallback", r->fallback);
    if (r->gpus[0])
        rc |= ADD_STR (o, "gpus", r->gpus);
    if (r->nic[0])
        rc |= ADD_STR (o, "nic", r->nic);
    if (r->experiment[0]) {
        rc |= ADD_STR (o, "experiment", r->experiment);
        rc |= ADD_STR (o, "arm", r->arm);
        rc |= ADD_STR (o, "block", r->block);
    }
    if (r->has_seed)
        rc |= add (o, "seed", json_object_new_uint64 (r->seed));
    rc |= ADD_STR (o, "cpus", r->cpus);
    rc |= ADD_STR (o, "mems", r->mems);
    rc |= add (o, "alloc_cpus", json_object_new_int64 (r->alloc_cpus));
    rc |= add (o, "start_us", json_object_new_int64 (r->start_us));
    rc |= add (o, "end_us", json_object_new_int64 (r->end_us));
    rc |= add (o, "elapsed_us", json_object_new_int64 (r->elapsed_us));
    rc |= add (o, "user_usec", json_object_new_uint64 (r->user_usec));
    rc |= add (o, "system_usec", json_object_new_uint64 (r->system_usec));
    rc |= add (o, "usage_usec", json_object_new_uint64 (r->usage_usec));
    /* derived, for readers with jq; ignored when parsed */
    if (eff >= 0) {
        char ds[32];
        snprintf (ds, sizeof (ds), "%.4f", eff);
        rc |= add (o, "efficiency", json_object_new_double_s (eff, ds));
    }
    if (r->has_throttle) {
        rc |= add (o, "nr_periods", json_object_new_uint64 (r->nr_periods));
        rc |=
            add (o, "nr_throttled", json_object_new_uint64 (r->nr_throttled));
        rc |= add (o,
                   "throttled_usec",
                   json_object_new_uint64 (r->throttled_usec));
    }
    if (r->has_mem_peak)
        rc |= add (o, "mem_peak", json_object_new_uint64 (r->mem_peak));
    rc |= add (o, "exit_status", json_object_new_int (r->exit_status));
    rc |= ADD_STR (o, "state", r->state);
    rc |= add (o,
               "source",
               json_object_new_string (acct_source_name (r->source)));
    rc |= ADD_STR (o, "cgroup", r->cgroup);
    rc |= ADD_STR (o, "mode", r->mode);
    rc |= add (o, "confined_us", json_object_new_int64 (r->confined_us));
    if (r->confined_us) {
        rc |= add (o, "confine_use", json_object_new_double (r->confine_use));
        rc |= ADD_STR (o, "confine_cpus", r->confine_cpus);
        rc |= ADD_STR (o, "confine_mems", r->confine_mems);
    }
    if (r->kind == ACCT_KIND_JOB)
        rc |= add (o, "steps", json_object_new_int64 (r->nsteps));
    if (rc)
        goto nomem;
    s = json_object_to_json_string_ext (o,
                                        JSON_C_TO_STRING_PLAIN
                                            | JSON_C_TO_STRING_NOSLASHESCAPE);
    /* ASCII only (text.h): every JSON reader, strict or not */
    if (!s || !(line = text_json_ascii (s)))
        goto nomem;
    json_object_put (o);
    return line;
nomem:
    json_object_put (o);
    errno = ENOMEM;
    errprintf (errp,
               "cannot format the record of job %" PRIu32 ": out of memory",
               r->job_id);
    return NULL;
}

/* ---- from JSON ---------------------------------------------------------- */

struct parse {
    json_object *o;
    pin_error_t *errp;
    int rc;
};

/* Integer member `key` in [min, max]; absent: -1 if required, else 0 and
 * *v untouched; returns 1 when set. */
static int get_int (struct parse *p,
                    const char *key,
                    bool required,
                    int64_t min,
                    int64_t max,
                    int64_t *v)
{
    json_object *m;

    if (p->rc < 0)
        return -1;
    if (!json_object_object_get_ex (p->o, key, &m) || !m) {
        if (!required)
            return 0;
        p->rc =
            errprintf (p->errp, "record: required key \"%s\" missing", key);
        return -1;
    }
    if (!json_object_is_type (m, json_type_int)) {
        p->rc = errprintf (p->errp, "record: \"%s\" is not an integer", key);
        return -1;
    }
    errno = 0;
    int64_t x = json_object_get_int64 (m);
    if (errno || x < min || x > max) {
        p->rc = errprintf (p->errp,
                           "record: \"%s\" out of range "
                           "(%" PRId64 "..%" PRId64 ")",
                           key,
                           min,
                           max);
        return -1;
    }
    *v = x;
    return 1;
}

static int get_u64 (struct parse *p, const char *key, uint64_t *v)
{
    json_object *m;

    if (p->rc < 0)
        return -1;
    if (!json_object_object_get_ex (p->o, key, &m) || !m)
        return 0;
    if (!json_object_is_type (m, json_type_int)) {
        p->rc = errprintf (p->errp, "record: \"%s\" is not an integer", key);
        return -1;
    }
    /* json-c keeps values above INT64_MAX unsigned; negative ones are
     * refused */
    if (json_object_get_int64 (m) < 0
        && json_object_get_uint64 (m) <= (uint64_t)INT64_MAX) {
        p->rc = errprintf (p->errp, "record: \"%s\" is negative", key);
        return -1;
    }
    *v = json_object_get_uint64 (m);
    return 1;
}

static void get_u32 (struct parse *p,
                     const char *key,
                     bool required,
                     uint32_t *v)
{
    int64_t x;
    if (get_int (p, key, required, 0, UINT32_MAX, &x) > 0)
        *v = (uint32_t)x;
}

static void get_str (struct parse *p,
                     const char *key,
                     bool required,
                     char *buf,
                     size_t size)
{
    json_object *m;
    const char *s;

    if (p->rc < 0)
        return;
    if (!json_object_object_get_ex (p->o, key, &m) || !m) {
        if (required)
            p->rc = errprintf (p->errp,
                               "record: required key \"%s\" "
                               "missing",
                               key);
        return;
    }
    if (!json_object_is_type (m, json_type_string)) {
        p->rc = errprintf (p->errp, "record: \"%s\" is not a string", key);
        return;
    }
    s = json_object_get_string (m);
    acct_utf8_copy (buf, size, s, (size_t)json_object_get_string_len (m));
}

#define GET_STR(p, key, req, field) \
    get_str (p, key, req, field, sizeof (field))

/* ---- the fast path ------------------------------------------------------
 *
 * A listing parses every line of the journal; json-c's parse (a hash table
 * and a malloc'd object per member) is most of its time.  The lines
 * record.c writes are a flat object of plain members: keys of [a-z0-9_],
 * strings of printable ASCII without escapes, integers up to INT64_MAX
 * in magnitude (19 digits at most), and the two
 * decimals "efficiency" and "confine_use".  fast_parse() takes exactly
 * such a line and fills the record as json-c's path would; anything else
 * (an escape, non-ASCII, blanks, another type, a key twice, a value out
 * of range, an error of any kind) and it gives up, and the json-c path
 * below parses the line (and says what is wrong with it).  The unit
 * tests compare both paths on every kind of line. */
struct fmember {
    const char *k;
    size_t kl;
    uint32_t h; /* the key's hash (fhash) */
    char type;  /* 's' string, 'i' integer, 'd' decimal */
    const char *v;
    size_t vl;
    int64_t i;
};

#define FAST_MAX 80
#define FSLOTS 128 /* a power of two above FAST_MAX */

/* The members of a line, and an open-addressing table of them by key
 * (slot: index + 1, 0 empty): a key given twice is found as it is added,
 * and each lookup is one probe or a few, present or not. */
struct ftab {
    struct fmember m[FAST_MAX];
    size_t n;
    size_t hint; /* the member after the last one found */
    uint8_t slot[FSLOTS];
};

_Static_assert (FAST_MAX < FSLOTS && FSLOTS <= 256, "ftab slots");

/* FNV-1a of the kl bytes at k */
static uint32_t fhash (const char *k, size_t kl)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < kl; i++)
        h = (h ^ (unsigned char)k[i]) * 16777619u;
    return h;
}

/* The slot of the member with key k (kl bytes, hash h), or of the empty
 * slot where it would go. */
static size_t fslot (const struct ftab *t, const char *k, size_t kl, uint32_t h)
{
    size_t i = h & (FSLOTS - 1);

    while (t->slot[i]) {
        const struct fmember *f = &t->m[t->slot[i] - 1];
        if (f->h == h && f->kl == kl && memcmp (f->k, k, kl) == 0)
            break;
        i = (i + 1) & (FSLOTS - 1);
    }
    return i;
}

/* The members are looked up in about the order record.c writes them:
 * the one after the last found is tried first, then the table. */
static const struct fmember *fget (struct ftab *t, const char *key)
{
    size_t kl = strlen (key), i;

    if (t->hint < t->n && t->m[t->hint].kl == kl
        && memcmp (t->m[t->hint].k, key, kl) == 0)
        return &t->m[t->hint++];
    i = fslot (t, key, kl, fhash (key, kl));
    if (!t->slot[i])
        return NULL;
    t->hint = t->slot[i];
    return &t->m[t->slot[i] - 1];
}

/* 1 set, 0 absent, -1 give up */
static int fint (struct ftab *t,
                 const char *key,
                 int64_t min,
                 int64_t max,
                 int64_t *v)
{
    const struct fmember *f = fget (t, key);
    if (!f)
        return 0;
    if (f->type != 'i' || f->i < min || f->i > max)
        return -1;
    *v = f->i;
    return 1;
}

static int fstr (struct ftab *t,
                 const char *key,
                 char *buf,
                 size_t size)
{
    const struct fmember *f = fget (t, key);
    if (!f)
        return 0;
    if (f->type != 's')
        return -1;
    acct_utf8_copy (buf, size, f->v, f->vl);
    return 1;
}

/* A record without elapsed_us: end - start, or 0 (unknown) where the
 * difference of two hostile times does not fit (the same in both
 * parsers: never a signed overflow). */
static int64_t elapsed_of (int64_t start, int64_t end)
{
    int64_t d;

    if (__builtin_sub_overflow (end, start, &d))
        return 0;
    return d;
}

static int fast_parse (const char *line, struct acct_record *r)
{
    struct ftab tab, *t = &tab;
    struct fmember *m = tab.m;
    size_t n = 0;
    const char *p = line;
    int64_t x;
    char name[32];
    int rc = 0;

    memset (tab.slot, 0, sizeof (tab.slot));
    if (*p++ != '{')
        return 0;
    if (*p == '}')
        return 0;
    for (;;) {
        struct fmember *f;
        if (n == FAST_MAX || *p++ != '"')
            return 0;
        f = &m[n];
        f->k = p;
        while ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')
               || *p == '_')
            p++;
        f->kl = (size_t)(p - f->k);
        if (!f->kl || *p++ != '"' || *p++ != ':')
            return 0;
        if (*p == '"') {
            f->type = 's';
            f->v = ++p;
            while (*p >= 0x20 && *p <= 0x7e && *p != '"' && *p != '\\')
                p++;
            if (*p != '"')
                return 0;
            f->vl = (size_t)(p - f->v);
            p++;
        } else {
            const char *d = p;
            bool neg = *p == '-';
            uint64_t u = 0;
            if (neg)
                d = ++p;
            if (*p < '0' || *p > '9'
                || (*p == '0' && p[1] >= '0' && p[1] <= '9'))
                return 0;
            while (*p >= '0' && *p <= '9') {
                if (p - d >= 19)
                    return 0; /* json-c's range rules: its own path */
                u = u * 10 + (uint64_t)(*p - '0');
                p++;
            }
            if (u > (uint64_t)INT64_MAX)
                return 0;
            if (*p == '.') {
                const char *fr = ++p;
                while (*p >= '0' && *p <= '9')
                    p++;
                if (p == fr || *p == 'e' || *p == 'E')
                    return 0;
                f->type = 'd';
            } else {
                if (*p == 'e' || *p == 'E')
                    return 0;
                f->type = 'i';
                f->i = neg ? -(int64_t)u : (int64_t)u;
            }
            f->v = neg ? d - 1 : d;
            f->vl = (size_t)(p - f->v);
        }
        {
            size_t i;
            f->h = fhash (f->k, f->kl);
            i = fslot (t, f->k, f->kl, f->h);
            if (t->slot[i])
                return 0; /* a key twice: json-c's path */
            t->slot[i] = (uint8_t)(n + 1);
        }
        n++;
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p++ != '}')
            return 0;
        break;
    }
    for (; *p; p++)
        if (*p != ' ' && *p != '\t' && *p != '\r' && *p != '\n')
            return 0;
    /* a decimal is read only where json-c's path takes one */
    for (size_t i = 0; i < n; i++)
        if (m[i].type == 'd'
            && !(m[i].kl == 10 && memcmp (m[i].k, "efficiency", 10) == 0)
            && !(m[i].kl == 11 && memcmp (m[i].k, "confine_use", 11) == 0))
            return 0;

    tab.n = n;
    tab.hint = 0;
    if (fint (t, "v", 1, INT32_MAX, &x) <= 0 || x > ACCT_RECORD_VERSION)
        return 0;
    acct_record_init (r);
    name[0] = '\0';
    if (fstr (t, "kind", name, sizeof (name)) <= 0)
        return 0;
    if (strcmp (name, "step") == 0)
        r->kind = ACCT_KIND_STEP;
    else if (strcmp (name, "job") == 0)
        r->kind = ACCT_KIND_JOB;
    else
        return 0;
#define FSTR(key, field, req)                             \
    do {                                                  \
        int k_ = fstr (t, key, field, sizeof (field)); \
        if (k_ < 0 || (req && k_ == 0))                   \
            return 0;                                     \
    } while (0)
#define FU32(key, field, req)                         \
    do {                                              \
        int k_ = fint (t, key, 0, UINT32_MAX, &x); \
        if (k_ < 0 || (req && k_ == 0))               \
            return 0;                                 \
        if (k_ > 0)                                   \
            field = (uint32_t)x;                      \
    } while (0)
#define FU64(key, field, has)                        \
    do {                                             \
        int k_ = fint (t, key, 0, INT64_MAX, &x); \
        if (k_ < 0)                                  \
            return 0;                                \
        if (k_ > 0)                                  \
            field = (uint64_t)x;                     \
        has = k_ > 0;                                \
    } while (0)
    FSTR ("cluster", r->cluster, false);
    FU32 ("job_id", r->job_id, true);
    FU32 ("step_id", r->step_id, false);
    FU32 ("array_job_id", r->array_job_id, false);
    FU32 ("array_task_id", r->array_task_id, false);
    FSTR ("node", r->node, true);
    FU32 ("uid", r->uid, false);
    FSTR ("user", r->user, false);
    FSTR ("partition", r->partition, false);
    FSTR ("job_name", r->job_name, false);
    FSTR ("account", r->account, false);
    FSTR ("qos", r->qos, false);
    if (fint (t, "submit_us", 0, INT64_MAX, &r->submit_us) < 0)
        return 0;
    switch (fint (t, "timelimit", 0, UINT32_MAX, &x)) {
        case -1:
            return 0;
        case 1:
            r->has_timelimit = true;
            r->timelimit = (uint32_t)x;
    }
    {
        bool dummy;
        FU64 ("req_mem", r->req_mem, dummy);
        (void)dummy;
    }
    FSTR ("policy", r->policy, false);
    FSTR ("fallback", r->fallback, false);
    FSTR ("gpus", r->gpus, false);
    FSTR ("nic", r->nic, false);
    FSTR ("experiment", r->experiment, false);
    FSTR ("arm", r->arm, false);
    FSTR ("block", r->block, false);
    FU64 ("seed", r->seed, r->has_seed);
    FSTR ("cpus", r->cpus, false);
    FSTR ("mems", r->mems, false);
    FU32 ("alloc_cpus", r->alloc_cpus, false);
    if (fint (t, "start_us", INT64_MIN, INT64_MAX, &r->start_us) <= 0
        || fint (t, "end_us", INT64_MIN, INT64_MAX, &r->end_us) <= 0)
        return 0;
    rc = fint (t, "elapsed_us", INT64_MIN, INT64_MAX, &r->elapsed_us);
    if (rc < 0)
        return 0;
    if (rc == 0)
        r->elapsed_us = elapsed_of (r->start_us, r->end_us);
    {
        bool dummy;
        FU64 ("user_usec", r->user_usec, dummy);
        FU64 ("system_usec", r->system_usec, dummy);
        FU64 ("usage_usec", r->usage_usec, dummy);
        FU64 ("nr_periods", r->nr_periods, r->has_throttle);
        FU64 ("nr_throttled", r->nr_throttled, dummy);
        FU64 ("throttled_usec", r->throttled_usec, dummy);
        FU64 ("mem_peak", r->mem_peak, r->has_mem_peak);
        (void)dummy;
    }
    switch (fint (t, "exit_status", INT32_MIN, INT32_MAX, &x)) {
        case -1:
            return 0;
        case 1:
            r->exit_status = (int32_t)x;
    }
    FSTR ("state", r->state, false);
    name[0] = '\0';
    if (fstr (t, "source", name, sizeof (name)) < 0)
        return 0;
    if (name[0]) {
        int i;
        for (i = 0; i < 3 && strcmp (name, source_names[i]); i++)
            ;
        if (i == 3)
            return 0;
        r->source = (enum acct_source)i;
    }
    FSTR ("cgroup", r->cgroup, false);
    FSTR ("mode", r->mode, false);
    if (fint (t, "confined_us", INT64_MIN, INT64_MAX, &r->confined_us) < 0)
        return 0;
    {
        const struct fmember *f = fget (t, "confine_use");
        if (f) {
            char num[64];
            if (f->type == 'i')
                r->confine_use = (double)f->i;
            else if (f->type == 'd' && f->vl < sizeof (num)) {
                memcpy (num, f->v, f->vl);
                num[f->vl] = '\0';
                r->confine_use = strtod (num, NULL);
            } else
                return 0;
        }
    }
    FSTR ("confine_cpus", r->confine_cpus, false);
    FSTR ("confine_mems", r->confine_mems, false);
    FU32 ("steps", r->nsteps, false);
#undef FSTR
#undef FU32
#undef FU64
    return 1;
}

int acct_record_from_json (const char *line,
                           struct acct_record *r,
                           pin_error_t *errp)
{
    if (fast_parse (line, r) == 1)
        return 0;
    return acct_record_from_json_slow (line, r, errp);
}

int acct_record_from_json_slow (const char *line,
                                struct acct_record *r,
                                pin_error_t *errp)
{
    struct json_tokener *tok = json_tokener_new ();
    struct parse p = {.errp = errp};
    char name[32] = "";
    int64_t x;

    if (!tok) {
        errno = ENOMEM;
        return errprintf (errp, "record: out of memory");
    }
    p.o = json_tokener_parse_ex (tok, line, (int)strlen (line));
    if (!p.o || json_tokener_get_error (tok) != json_tokener_success) {
        errprintf (errp,
                   "record: not JSON: %s",
                   json_tokener_error_desc (json_tokener_get_error (tok)));
        goto bad;
    }
    /* nothing but white space after the object */
    for (const char *t = line + json_tokener_get_parse_end (tok); *t; t++)
        if (*t != ' ' && *t != '\t' && *t != '\r' && *t != '\n') {
            errprintf (errp, "record: text after the JSON object");
            goto bad;
        }
    if (!json_object_is_type (p.o, json_type_object)) {
        errprintf (errp, "record: not a JSON object");
        goto bad;
    }
    if (get_int (&p, "v", true, 1, INT32_MAX, &x) < 0)
        goto bad;
    if (x > ACCT_RECORD_VERSION) {
        errprintf (errp,
                   "record: version %" PRId64
                   " is newer than this "
                   "reader's %d",
                   x,
                   ACCT_RECORD_VERSION);
        goto bad;
    }
    acct_record_init (r);
    get_str (&p, "kind", true, name, sizeof (name));
    if (p.rc == 0) {
        if (strcmp (name, "step") == 0)
            r->kind = ACCT_KIND_STEP;
        else if (strcmp (name, "job") == 0)
            r->kind = ACCT_KIND_JOB;
        else
            p.rc = errprintf (errp,
                              "record: \"kind\" is '%.32s'; known: "
                              "step, job",
                              name);
    }
    GET_STR (&p, "cluster", false, r->cluster);
    get_u32 (&p, "job_id", true, &r->job_id);
    get_u32 (&p, "step_id", false, &r->step_id);
    get_u32 (&p, "array_job_id", false, &r->array_job_id);
    get_u32 (&p, "array_task_id", false, &r->array_task_id);
    GET_STR (&p, "node", true, r->node);
    get_u32 (&p, "uid", false, &r->uid);
    GET_STR (&p, "user", false, r->user);
    GET_STR (&p, "partition", false, r->partition);
    GET_STR (&p, "job_name", false, r->job_name);
    GET_STR (&p, "account", false, r->account);
    GET_STR (&p, "qos", false, r->qos);
    get_int (&p, "submit_us", false, 0, INT64_MAX, &r->submit_us);
    {
        int64_t tl;
        if (get_int (&p, "timelimit", false, 0, UINT32_MAX, &tl) > 0) {
            r->has_timelimit = true;
            r->timelimit = (uint32_t)tl;
        }
    }
    get_u64 (&p, "req_mem", &r->req_mem);
    GET_STR (&p, "policy", false, r->policy);
    GET_STR (&p, "fallback", false, r->fallback);
    GET_STR (&p, "gpus", false, r->gpus);
    GET_STR (&p, "nic", false, r->nic);
    GET_STR (&p, "experiment", false, r->experiment);
    GET_STR (&p, "arm", false, r->arm);
    GET_STR (&p, "block", false, r->block);
    r->has_seed = get_u64 (&p, "seed", &r->seed) > 0;
    GET_STR (&p, "cpus", false, r->cpus);
    GET_STR (&p, "mems", false, r->mems);
    get_u32 (&p, "alloc_cpus", false, &r->alloc_cpus);
    get_int (&p, "start_us", true, INT64_MIN, INT64_MAX, &r->start_us);
    get_int (&p, "end_us", true, INT64_MIN, INT64_MAX, &r->end_us);
    if (get_int (&p, "elapsed_us", false, INT64_MIN, INT64_MAX, &r->elapsed_us)
        == 0)
        r->elapsed_us = elapsed_of (r->start_us, r->end_us);
    get_u64 (&p, "user_usec", &r->user_usec);
    get_u64 (&p, "system_usec", &r->system_usec);
    get_u64 (&p, "usage_usec", &r->usage_usec);
    r->has_throttle = get_u64 (&p, "nr_periods", &r->nr_periods) > 0;
    get_u64 (&p, "nr_throttled", &r->nr_throttled);
    get_u64 (&p, "throttled_usec", &r->throttled_usec);
    r->has_mem_peak = get_u64 (&p, "mem_peak", &r->mem_peak) > 0;
    if (get_int (&p, "exit_status", false, INT32_MIN, INT32_MAX, &x) > 0)
        r->exit_status = (int32_t)x;
    GET_STR (&p, "state", false, r->state);
    name[0] = '\0';
    get_str (&p, "source", false, name, sizeof (name));
    if (p.rc == 0 && name[0]) {
        int i;
        for (i = 0; i < 3 && strcmp (name, source_names[i]); i++)
            ;
        if (i == 3)
            p.rc = errprintf (errp,
                              "record: \"source\" is '%.32s'; known: "
                              "step-cgroup, job-cgroup, step-records",
                              name);
        else
            r->source = (enum acct_source)i;
    }
    GET_STR (&p, "cgroup", false, r->cgroup);
    GET_STR (&p, "mode", false, r->mode);
    get_int (&p, "confined_us", false, INT64_MIN, INT64_MAX, &r->confined_us);
    if (p.rc == 0) {
        json_object *m;
        if (json_object_object_get_ex (p.o, "confine_use", &m) && m) {
            if (json_object_is_type (m, json_type_double)
                || json_object_is_type (m, json_type_int))
                r->confine_use = json_object_get_double (m);
            else
                p.rc = errprintf (errp,
                                  "record: \"confine_use\" is not a "
                                  "number");
        }
    }
    GET_STR (&p, "confine_cpus", false, r->confine_cpus);
    GET_STR (&p, "confine_mems", false, r->confine_mems);
    get_u32 (&p, "steps", false, &r->nsteps);
    if (p.rc < 0)
        goto bad;
    json_object_put (p.o);
    json_tokener_free (tok);
    return 0;
bad:
    json_object_put (p.o);
    json_tokener_free (tok);
    errno = EINVAL;
    return -1;
}

/* One part of the token: [A-Za-z0-9_.-]{1,n-1} up to `stop`. */
static const char *token_part (const char *p, char stop, char *buf, size_t n)
{
    size_t len = 0;

    while (p[len] && p[len] != stop && p[len] != ' ') {
        if (!isalnum ((unsigned char)p[len]) && !strchr ("_.-", p[len]))
            return NULL;
        len++;
    }
    if (len == 0 || len >= n || p[len] != stop)
        return NULL;
    memcpy (buf, p, len);
    buf[len] = '\0';
    return p + len + (stop ? 1 : 0);
}

bool acct_exp_token_parse (const char *field,
                           char *name,
                           size_t nn,
                           char *arm,
                           size_t na,
                           char *block,
                           size_t nb)
{
    const char *p = field;
    size_t tl = strlen (ACCT_EXP_TOKEN);

    while (p && (p = strstr (p, ACCT_EXP_TOKEN))) {
        const char *q;
        char bl[17];
        size_t i;

        if (p != field && p[-1] != ' ') {
            p += tl;
            continue;
        }
        q = p + tl;
        if (!(q = token_part (q, '/', name, nn))
            || !(q = token_part (q, '/', arm, na)))
            return false;
        for (i = 0; i < 16 && isxdigit ((unsigned char)q[i]); i++)
            bl[i] = q[i];
        if (i != 16 || (q[16] && q[16] != ' ') || nb < 17)
            return false;
        bl[16] = '\0';
        memcpy (block, bl, 17);
        return true;
    }
    return false;
}
