/* profile.c - the profile file: JSON Lines, bounded in size */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/acl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "libutil/safeio.h"
#include "libutil/text.h"
#include "profile.h"

/* One entry of an ACL being built; -1 with errno. */
static int acl_entry (acl_t acl, acl_tag_t tag, uid_t uid, acl_perm_t perms)
{
    acl_entry_t e;
    acl_permset_t ps;

    if (acl_create_entry (&acl, &e) < 0 || acl_set_tag_type (e, tag) < 0
        || (tag == ACL_USER && acl_set_qualifier (e, &uid) < 0)
        || acl_get_permset (e, &ps) < 0 || acl_clear_perms (ps) < 0
        || ((perms & ACL_READ) && acl_add_perm (ps, ACL_READ) < 0)
        || ((perms & ACL_WRITE) && acl_add_perm (ps, ACL_WRITE) < 0)
        || acl_set_permset (e, ps) < 0)
        return -1;
    return 0;
}

struct prof_writer {
    FILE *f;
    char *path;
    uint64_t max, bytes, dropped;
    bool full, failed;
    uint64_t keep_free;  /* bytes left free on the file system */
    uint64_t checked_at; /* w->bytes at the last fstatvfs */
    bool out_of_room;    /* stopped by keep_free, not by max */
};

/* Free-space checks: every this many bytes written, with this margin. */
#define ROOM_CHECK_BYTES (64 * 1024)

/* Would writing n more bytes leave less than keep_free bytes free? */
static bool short_of_room (struct prof_writer *w, size_t n)
{
    struct statvfs sv;

    if (!w->keep_free
        || (w->bytes - w->checked_at < ROOM_CHECK_BYTES && w->checked_at))
        return false;
    w->checked_at = w->bytes ? w->bytes : 1;
    if (fstatvfs (fileno (w->f), &sv) < 0)
        return false; /* the writes say what is wrong */
    return (uint64_t)sv.f_bavail * sv.f_frsize
           < w->keep_free + ROOM_CHECK_BYTES + n + PROF_RESERVE;
}

static const int json_flags =
    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE;

/* Write one formatted line s of n bytes (no newline) and its newline. */
static int write_text (struct prof_writer *w,
                       const char *s,
                       size_t n,
                       pin_error_t *errp)
{
    if (fwrite (s, 1, n, w->f) != n || fputc ('\n', w->f) == EOF) {
        int e = errno;
        w->failed = true;
        return errprintf (errp, "%s: write: %s", w->path, strerror (e));
    }
    w->bytes += n + 1;
    return 0;
}

/* The line of o, ASCII only (text.h), malloc'd; NULL: out of memory. */
static char *format_line (json_object *o)
{
    const char *t = json_object_to_json_string_ext (o, json_flags);

    return t ? text_json_ascii (t) : NULL;
}

static int write_line (struct prof_writer *w,
                       json_object *o,
                       pin_error_t *errp)
{
    char *s = format_line (o);
    int rc;

    if (!s) {
        errno = ENOMEM;
        return errprintf (errp,
                          "%s: cannot format a line: out of memory",
                          w->path);
    }
    rc = write_text (w, s, strlen (s), errp);
    free (s);
    return rc;
}

/* The bytes write_line() writes for O (0: out of memory). */
static size_t line_size (json_object *o)
{
    char *s = format_line (o);
    size_t n = s ? strlen (s) + 1 : 0;

    free (s);
    return n;
}

struct prof_writer *prof_writer_open (const char *path,
                                      uint64_t max_bytes,
                                      json_object *header,
                                      pin_error_t *errp)
{
    struct prof_writer *w;
    int fd;

    if (max_bytes < PROF_MIN_BYTES) {
        errno = EINVAL;
        errprintf (errp,
                   "profile size bound %llu bytes is too small; at "
                   "least %d",
                   (unsigned long long)max_bytes,
                   PROF_MIN_BYTES);
        return NULL;
    }
    if (!(w = calloc (1, sizeof (*w))) || !(w->path = strdup (path))) {
        free (w);
        errno = ENOMEM;
        errprintf (errp, "%s: out of memory", path);
        return NULL;
    }
    w->max = max_bytes;
    /* a new inode, never the old one: whoever kept a descriptor of a
     * profile of the same name (a job id used again) reads the old file,
     * not this one; and nothing planted under the name is written to,
     * nor through another user's link above it (libutil/safeio.h) */
    fd = safeout_create (path, SAFEOUT_NEW_INODE, 0600, errp);
    if (fd < 0 || !(w->f = fdopen (fd, "w"))) {
        int e = errno;
        if (fd >= 0)
            errprintf (errp, "%s: cannot create: %s", path, strerror (e));
        if (fd >= 0)
            close (fd);
        free (w->path);
        free (w);
        errno = e;
        return NULL;
    }
    json_object_object_add (header, "type", json_object_new_string ("header"));
    json_object_object_add (header,
                            "format",
                            json_object_new_string (PROF_FORMAT));
    json_object_object_add (header,
                            "version",
                            json_object_new_int (PROF_VERSION));
    json_object_object_add (header,
                            "max_bytes",
                            json_object_new_int64 ((int64_t)max_bytes));
    if (line_size (header) + PROF_RESERVE > max_bytes
        || write_line (w, header, errp) < 0) {
        if (!w->failed)
            errprintf (errp,
                       "%s: the header does not fit in %llu bytes",
                       path,
                       (unsigned long long)max_bytes);
        fclose (w->f);
        safeout_unlink (path, NULL);
        free (w->path);
        free (w);
        errno = EINVAL;
        return NULL;
    }
    return w;
}

/* The bound (or the room kept free) reached by a line of n bytes:
 * write the note line once, count the line.  1 if the line may be
 * written, 0 if dropped, -1 with errp. */
static int room_for (struct prof_writer *w, size_t n, pin_error_t *errp)
{
    json_object *note;
    char text[200];
    int rc;

    if (w->failed) {
        errno = EIO;
        return errprintf (errp, "%s: an earlier write failed", w->path);
    }
    if (w->full) {
        w->dropped++;
        return 0;
    }
    if (w->bytes + n + PROF_RESERVE <= w->max && !short_of_room (w, n))
        return 1;
    note = json_object_new_object ();
    if (w->bytes + n + PROF_RESERVE > w->max)
        snprintf (text,
                  sizeof (text),
                  "size bound of %llu bytes "
                  "reached: later lines are not recorded (counted in "
                  "the end line)",
                  (unsigned long long)w->max);
    else {
        w->out_of_room = true;
        snprintf (text,
                  sizeof (text),
                  "the file system keeps %llu "
                  "bytes free for the accounting journal: later lines "
                  "are not recorded (counted in the end line)",
                  (unsigned long long)w->keep_free);
    }
    json_object_object_add (note, "type", json_object_new_string ("note"));
    json_object_object_add (note, "text", json_object_new_string (text));
    json_object_object_add (note,
                            "bound_reached",
                            json_object_new_boolean (1));
    rc = write_line (w, note, errp);
    json_object_put (note);
    w->full = true;
    w->dropped++;
    return rc < 0 ? -1 : 0;
}

int prof_writer_put (struct prof_writer *w,
                     json_object *line,
                     pin_error_t *errp)
{
    char *s;
    size_t n;
    int rc;

    if (w->failed || w->full) /* said or counted by room_for */
        return room_for (w, 0, errp);
    if (!(s = format_line (line))) {
        errno = ENOMEM;
        return errprintf (errp,
                          "%s: cannot format a line: out of memory",
                          w->path);
    }
    n = strlen (s);
    if ((rc = room_for (w, n + 1, errp)) == 1
        && write_text (w, s, n, errp) < 0)
        rc = -1;
    free (s);
    return rc;
}

int prof_writer_put_text (struct prof_writer *w,
                          const char *line,
                          size_t n,
                          pin_error_t *errp)
{
    int rc = room_for (w, n + 1, errp);

    if (rc == 1 && write_text (w, line, n, errp) < 0)
        return -1;
    return rc;
}

uint64_t prof_writer_dropped (const struct prof_writer *w)
{
    return w->dropped;
}

int prof_writer_share (struct prof_writer *w, uid_t uid, pin_error_t *errp)
{
    int fd = fileno (w->f);
    acl_t acl;
    int rc;

    /* owner rw, the job's user r, nobody else anything: the mask is r so
     * that the named entry is r, and the group entry is none */
    if (!(acl = acl_init (5))) {
        errno = ENOMEM;
        return errprintf (errp, "%s: out of memory", w->path);
    }
    rc = acl_entry (acl, ACL_USER_OBJ, 0, ACL_READ | ACL_WRITE) < 0
                 || acl_entry (acl, ACL_USER, uid, ACL_READ) < 0
                 || acl_entry (acl, ACL_GROUP_OBJ, 0, 0) < 0
                 || acl_entry (acl, ACL_MASK, 0, ACL_READ) < 0
                 || acl_entry (acl, ACL_OTHER, 0, 0) < 0
             ? -1
             : 0;
    if (rc == 0 && acl_valid (acl) < 0) {
        errno = EINVAL;
        rc = -1;
    }
    if (rc == 0)
        rc = acl_set_fd (fd, acl);
    acl_free (acl);
    if (rc == 0)
        return 0;
    if (errno == EOPNOTSUPP || errno == ENOTSUP) {
        /* the file system has no POSIX ACLs: the profile stays root's
         * (0600), never widened to a group or to everyone */
        errprintf (errp,
                   "%s: the file system has no POSIX ACLs: readable "
                   "by root only (see doc/profiling.md)",
                   w->path);
        return 1;
    }
    return errprintf (errp,
                      "%s: cannot let uid %ld read it: %s",
                      w->path,
                      (long)uid,
                      strerror (errno));
}

void prof_writer_keep_free (struct prof_writer *w, uint64_t bytes)
{
    w->keep_free = bytes;
    w->checked_at = 0;
}

bool prof_writer_out_of_room (const struct prof_writer *w)
{
    return w->out_of_room;
}

int prof_writer_close (struct prof_writer *w,
                       json_object *end,
                       pin_error_t *errp)
{
    int rc = 0;

    if (!w)
        return 0;
    if (end && !w->failed) {
        json_object_object_add (end, "type", json_object_new_string ("end"));
        json_object_object_add (end,
                                "dropped_lines",
                                json_object_new_int64 ((int64_t)w->dropped));
        if (write_line (w, end, errp) < 0)
            rc = -1;
    }
    if (fflush (w->f) != 0 || ferror (w->f)) {
        if (rc == 0)
            errprintf (errp, "%s: write: %s", w->path, strerror (errno));
        rc = -1;
    }
    if (fclose (w->f) != 0 && rc == 0) {
        errprintf (errp, "%s: close: %s", w->path, strerror (errno));
        rc = -1;
    }
    if (w->failed && rc == 0)
        rc = errprintf (errp, "%s: an earlier write failed", w->path);
    free (w->path);
    free (w);
    return rc;
}

int64_t prof_get_int (json_object *o, const char *key, int64_t dflt)
{
    json_object *v;

    if (!o || !json_object_object_get_ex (o, key, &v)
        || !json_object_is_type (v, json_type_int))
        return dflt;
    return json_object_get_int64 (v);
}

const char *prof_get_str (json_object *o, const char *key)
{
    json_object *v;

    if (!o || !json_object_object_get_ex (o, key, &v)
        || !json_object_is_type (v, json_type_string))
        return NULL;
    return json_object_get_string (v);
}

int prof_read (const char *path,
               int (*fn) (json_object *line, int lineno, void *arg),
               void *arg,
               pin_error_t *errp)
{
    FILE *f = safein_fopen (path, errp); /* not a FIFO, not a device */
    /* a bounded buffer: a file of one endless line (/dev/zero) is an
     * error after PROF_MAX_LINE bytes, not all of memory */
    size_t cap = PROF_MAX_LINE + 2;
    char *buf = malloc (cap);
    size_t n;
    int lineno = 0, rc = 0;

    if (!f || !buf) {
        int e = errno;
        free (buf);
        if (f)
            fclose (f);
        errno = e;
        if (!f)
            return -1; /* errp says why */
        return errprintf (errp, "%s: cannot open: %s", path, strerror (e));
    }
    while (fgets (buf, (int)cap, f)) {
        json_tokener *tok;
        json_object *o;
        const char *type;
        bool cut;

        lineno++;
        n = strlen (buf); /* a NUL inside a line ends it: the JSON
                             parser then fails on what is left */
        cut = n == 0 || buf[n - 1] != '\n';
        if (cut && n >= cap - 1) {
            errno = EINVAL;
            rc = errprintf (errp,
                            "%s:%d: line longer than %d bytes",
                            path,
                            lineno,
                            PROF_MAX_LINE);
            break;
        }
        if (!cut)
            buf[--n] = '\0';
        if (!(tok = json_tokener_new ())) {
            errno = ENOMEM;
            rc = errprintf (errp, "%s: out of memory", path);
            break;
        }
        o = json_tokener_parse_ex (tok, buf, (int)n);
        if (o && json_tokener_get_parse_end (tok) != (size_t)n) {
            json_object_put (o);
            o = NULL;
        }
        json_tokener_free (tok);
        if (!o && cut && lineno > 1 && feof (f))
            break; /* the last line, cut short (a recorder killed while
                      writing): the file is read up to the line before */
        if (!o || !json_object_is_type (o, json_type_object)
            || !(type = prof_get_str (o, "type"))) {
            json_object_put (o);
            errno = EINVAL;
            rc = errprintf (errp,
                            "%s:%d: not a JSON object with a \"type\"",
                            path,
                            lineno);
            break;
        }
        if (lineno == 1) {
            const char *fmt = prof_get_str (o, "format");
            int64_t v = prof_get_int (o, "version", -1);
            if (strcmp (type, "header") || !fmt || strcmp (fmt, PROF_FORMAT)) {
                json_object_put (o);
                errno = EINVAL;
                rc = errprintf (errp,
                                "%s: not a %s file (no header line)",
                                path,
                                PROF_FORMAT);
                break;
            }
            if (v < 1 || v > PROF_VERSION) {
                json_object_put (o);
                errno = EINVAL;
                rc = errprintf (errp,
                                "%s: format version %lld; this "
                                "slurm-pin reads version 1 to %d",
                                path,
                                (long long)v,
                                PROF_VERSION);
                break;
            }
        }
        rc = fn (o, lineno, arg);
        json_object_put (o);
        if (rc)
            break;
    }
    if (rc == 0 && ferror (f))
        rc = errprintf (errp, "%s: read: %s", path, strerror (errno));
    if (rc == 0 && lineno == 0) {
        errno = EINVAL;
        rc = errprintf (errp, "%s: empty, not a %s file", path, PROF_FORMAT);
    }
    free (buf);
    fclose (f);
    return rc;
}
