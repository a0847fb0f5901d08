/* journal.c - the node journal: JSON Lines files in a root-only directory
 *
 * DIR/journal      the current file, appended to
 * DIR/journal.N    rotated files; a larger N is newer; never deleted here
 * DIR/lock         flock(2): appenders hold it exclusively (so that a
 *                  rotation never races an append), readers shared (so
 *                  that they never see a file twice or miss one)
 *
 * An append, under the lock: open `journal` (O_APPEND|O_NOFOLLOW, owner
 * checked on the fd), rotate if this line would pass the size limit, make
 * sure the file ends in a newline (a crash may have left a torn line: the
 * next record must not be glued to it), then one write(2) of the whole
 * line and fsync(2).  A failed or short write (ENOSPC) is cut off again
 * with ftruncate(2), so the file holds exactly what it held before.
 *
 * Room (with a size limit): `journal` is preallocated up to the limit
 * (fallocate(2), FALLOC_FL_KEEP_SIZE: its size stays what it holds), and
 * DIR/journal.spare, always empty, holds the room of the next file, which
 * a rotation renames to `journal`.  So an append never needs a new block
 * of the file system, and another user filling it (a world-writable
 * directory on the same file system) costs no record: the room was taken
 * while there was room.  Where fallocate is not supported, nothing is
 * preallocated.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/falloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "acct.h"
#include "libutil/mkdirp.h"
#include "libutil/safefile.h"
#include "libutil/safeio.h"

#define LOCK_TIMEOUT_MS 10000
#define LINE_MAX_READ (1 << 20) /* longer lines are garbage */
#define ROTATED_MAX 100000      /* journal.N with N up to this */

static void close_keep_errno (int fd)
{
    int saved = errno;
    if (fd >= 0)
        close (fd);
    errno = saved;
}

static int path_in (char *buf,
                    size_t n,
                    const char *dir,
                    const char *name,
                    pin_error_t *errp)
{
    int len = snprintf (buf, n, "%s/%s", dir, name);
    if (len < 0 || (size_t)len >= n) {
        errno = ENAMETOOLONG;
        return errprintf (errp,
                          "journal directory %.64s...: path too long",
                          dir);
    }
    return 0;
}

/* A regular file of ours, not linked elsewhere, not writable by others. */
static int check_fd (int fd, const char *path, pin_error_t *errp)
{
    struct stat st;

    if (fstat (fd, &st) < 0)
        return errprintf (errp, "%s: %s", path, strerror (errno));
    if (!S_ISREG (st.st_mode)) {
        errno = EPERM;
        return errprintf (errp,
                          "%s: %s, not a regular file; remove it",
                          path,
                          safein_kind (st.st_mode));
    }
    if (st.st_uid != geteuid ()) {
        errno = EPERM;
        return errprintf (errp,
                          "%s: owned by uid %u, not %u; remove it",
                          path,
                          (unsigned)st.st_uid,
                          (unsigned)geteuid ());
    }
    if (st.st_mode & 077) {
        errno = EPERM;
        return errprintf (errp,
                          "%s: mode %03o; must be 0600 (chmod 600)",
                          path,
                          (unsigned)(st.st_mode & 0777));
    }
    return 0;
}

/* The directory: made 0700 if missing; refused when unsafe or readable by
 * others (records name users and jobs). */
static int dir_ready (const char *dir, bool create, pin_error_t *errp)
{
    pin_error_t err = {""};
    struct stat st;

    if (!dir || dir[0] != '/') {
        errno = EINVAL;
        return errprintf (errp,
                          "journal directory '%.64s': not an absolute "
                          "path",
                          dir ? dir : "(null)");
    }
    if (create && mkdir_p (dir, 0755, 0700, &err) < 0)
        return errprintf (errp, "journal directory %s", err.text);
    if (safefile_check (dir, geteuid (), &err) < 0)
        return errprintf (errp, "journal directory %s", err.text);
    if (stat (dir, &st) < 0)
        return errprintf (errp,
                          "journal directory %s: %s",
                          dir,
                          strerror (errno));
    if (create && (st.st_mode & 077)) {
        errno = EPERM;
        return errprintf (errp,
                          "journal directory %s: mode %03o; must be "
                          "0700 (chmod 700)",
                          dir,
                          (unsigned)(st.st_mode & 0777));
    }
    return 0;
}

static int64_t now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* flock with a deadline; -1 ETIMEDOUT */
static int lock_fd (int fd, int op, const char *path, pin_error_t *errp)
{
    int64_t deadline = now_ms () + LOCK_TIMEOUT_MS;
    long sleep_us = 200;

    for (;;) {
        if (flock (fd, op | LOCK_NB) == 0)
            return 0;
        if (errno == EINTR)
            continue;
        if (errno != EWOULDBLOCK)
            return errprintf (errp, "%s: flock: %s", path, strerror (errno));
        if (now_ms () >= deadline) {
            errno = ETIMEDOUT;
            return errprintf (errp,
                              "%s: still locked by another process "
                              "after %d s",
                              path,
                              LOCK_TIMEOUT_MS / 1000);
        }
        usleep ((useconds_t)sleep_us);
        if (sleep_us < 10000)
            sleep_us *= 2;
    }
}

/* Open DIR/lock and take it; the fd, or -1. */
static int journal_lock (const char *dir, bool exclusive, pin_error_t *errp)
{
    char path[PATH_MAX];
    int fd;

    if (path_in (path, sizeof (path), dir, "lock", errp) < 0)
        return -1;
    fd = open (path,
               (exclusive ? O_RDWR | O_CREAT : O_RDONLY) | O_CLOEXEC
                   | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK,
               0600);
    if (fd < 0) {
        if (!exclusive && errno == ENOENT)
            return -2; /* nothing was ever appended: no lock needed */
        if (errno == ELOOP)
            return errprintf (errp,
                              "%s: a symlink; refusing to use it "
                              "(remove it)",
                              path);
        return errprintf (errp, "%s: %s", path, strerror (errno));
    }
    if (check_fd (fd, path, errp) < 0
        || lock_fd (fd, exclusive ? LOCK_EX : LOCK_SH, path, errp) < 0) {
        close_keep_errno (fd);
        return -1;
    }
    return fd;
}

/* Is `name` "journal.N"?  N in *n. */
static bool rotated_name (const char *name, unsigned long *n)
{
    char *end;

    if (strncmp (name, "journal.", 8) != 0 || name[8] < '1' || name[8] > '9')
        return false;
    errno = 0;
    *n = strtoul (name + 8, &end, 10);
    return !errno && !*end && *n <= ROTATED_MAX;
}

static int cmp_ul (const void *a, const void *b)
{
    unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;
    return x < y ? -1 : x > y;
}

/* The numbers of the rotated files, ascending (caller frees *list). */
static int rotated_list (const char *dir,
                         unsigned long **list,
                         size_t *count,
                         pin_error_t *errp)
{
    DIR *d = opendir (dir);
    struct dirent *e;
    unsigned long *v = NULL, n;
    size_t cnt = 0, cap = 0;

    *list = NULL;
    *count = 0;
    if (!d)
        return errprintf (errp,
                          "journal directory %s: %s",
                          dir,
                          strerror (errno));
    while ((e = readdir (d))) {
        if (!rotated_name (e->d_name, &n))
            continue;
        if (cnt == cap) {
            unsigned long *nv =
                realloc (v, (cap = cap ? 2 * cap : 16) * sizeof (*v));
            if (!nv) {
                free (v);
                closedir (d);
                errno = ENOMEM;
                return errprintf (errp, "out of memory");
            }
            v = nv;
        }
        v[cnt++] = n;
    }
    closedir (d);
    if (cnt)
        qsort (v, cnt, sizeof (*v), cmp_ul);
    *list = v;
    *count = cnt;
    return 0;
}

static void fsync_dir (const char *dir)
{
    int fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync (fd);
        close (fd);
    }
}

static int open_current (const char *dir, pin_error_t *errp)
{
    char path[PATH_MAX];
    int fd;

    if (path_in (path, sizeof (path), dir, "journal", errp) < 0)
        return -1;
    /* an existing journal is appended to; a new one is a new inode of
     * ours (O_EXCL: never one that appeared between the two opens) */
    fd = open (path,
               O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY
                   | O_NONBLOCK);
    if (fd < 0 && errno == ENOENT)
        fd = open (path,
                   O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC
                       | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK,
                   0600);
    if (fd < 0) {
        if (errno == ELOOP)
            return errprintf (errp,
                              "%s: a symlink; refusing to use it "
                              "(remove it)",
                              path);
        return errprintf (errp, "cannot open %s: %s", path, strerror (errno));
    }
    if (check_fd (fd, path, errp) < 0) {
        close_keep_errno (fd);
        return -1;
    }
    { /* appended to by root: its only name is ours */
        struct stat st;
        if (fstat (fd, &st) == 0 && st.st_nlink != 1) {
            close (fd);
            errno = EPERM;
            return errprintf (errp,
                              "%s: %lu hard links; must have exactly "
                              "one (remove the others)",
                              path,
                              (unsigned long)st.st_nlink);
        }
    }
    return fd;
}

/* Preallocate FD (whose stat is ST) up to MAX bytes, its size unchanged.
 * Best effort: -1 (errno) when the room is not all there. */
static int reserve (int fd, const struct stat *st, uint64_t max)
{
    if (!max || max > (uint64_t)INT64_MAX
        || (uint64_t)st->st_blocks * 512 >= max)
        return 0;
    return fallocate (fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)max);
}

/* DIR/journal.spare: an empty file of root's holding MAX bytes of room,
 * for the next `journal`.  Best effort, as reserve(). */
static int spare_ready (const char *dir, uint64_t max)
{
    char path[PATH_MAX];
    struct stat st;
    int fd, rc = -1;

    if (!max || path_in (path, sizeof (path), dir, "journal.spare", NULL) < 0)
        return 0;
    fd = open (path,
               O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY
                   | O_NONBLOCK,
               0600);
    if (fd < 0)
        return -1;
    if (check_fd (fd, path, NULL) == 0 && fstat (fd, &st) == 0
        && st.st_nlink == 1 && (st.st_size == 0 || ftruncate (fd, 0) == 0))
        rc = reserve (fd, &st, max);
    close_keep_errno (fd);
    return rc;
}

static int jidx_rebuild (const char *dir, const char *name, bool final);

/* Rename `journal` to journal.<highest + 1>, and journal.spare (its room
 * preallocated) to `journal`. */
static int rotate (const char *dir, pin_error_t *errp)
{
    char from[PATH_MAX], to[PATH_MAX], name[32];
    unsigned long *list, next = 1;
    size_t count;

    if (rotated_list (dir, &list, &count, errp) < 0)
        return -1;
    if (count)
        next = list[count - 1] + 1;
    free (list);
    if (next > ROTATED_MAX) {
        errno = ENOSPC;
        return errprintf (errp,
                          "journal directory %s holds journal.%d: "
                          "move old journal.N files away",
                          dir,
                          ROTATED_MAX);
    }
    snprintf (name, sizeof (name), "journal.%lu", next);
    if (path_in (from, sizeof (from), dir, "journal", errp) < 0
        || path_in (to, sizeof (to), dir, name, errp) < 0)
        return -1;
    /* the file's index, whole and final, goes with it (best effort) */
    {
        char ifrom[PATH_MAX];
        if (jidx_rebuild (dir, "journal", true) < 0
            && path_in (ifrom, sizeof (ifrom), dir, "journal.idx", NULL) == 0)
            (void)unlink (ifrom);
    }
    if (rename (from, to) < 0)
        return errprintf (errp,
                          "cannot rotate %s to %s: %s",
                          from,
                          name,
                          strerror (errno));
    {
        char ifrom[PATH_MAX], ito[PATH_MAX];
        if (snprintf (ifrom, sizeof (ifrom), "%s.idx", from)
                < (int)sizeof (ifrom)
            && snprintf (ito, sizeof (ito), "%s.idx", to) < (int)sizeof (ito))
            (void)rename (ifrom, ito);
    }
    /* the spare, if there: open_current checks it as any journal */
    if (path_in (to, sizeof (to), dir, "journal.spare", NULL) == 0)
        (void)!rename (to, from);
    fsync_dir (dir);
    return 0;
}

/* Does the file (size > 0) end in a newline? */
static int ends_in_newline (const char *dir,
                            off_t size,
                            bool *yes,
                            pin_error_t *errp)
{
    char path[PATH_MAX], c;
    int fd;

    *yes = true;
    if (size == 0)
        return 0;
    if (path_in (path, sizeof (path), dir, "journal", errp) < 0)
        return -1;
    if ((fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)) < 0)
        return errprintf (errp, "cannot read %s: %s", path, strerror (errno));
    if (pread (fd, &c, 1, size - 1) != 1) {
        close_keep_errno (fd);
        return errprintf (errp, "cannot read %s: %s", path, strerror (errno));
    }
    close (fd);
    *yes = c == '\n';
    return 0;
}

/* ---- the sidecar index -----------------------------------------------------
 *
 * DIR/journal.idx, and DIR/journal.N.idx after a rotation: where each line
 * of the journal file of that name starts, how long it is, and the job (and
 * array job) of its record, so that the records of one job are found
 * without reading the others.  Written by the appender only (root, under
 * DIR/lock); a reader never writes it.  Never trusted over the journal:
 *   - the header pins it to its journal file (inode); another file's
 *     index, or none, or a torn one: the journal is scanned;
 *   - the entries must follow each other line after line from offset 0,
 *     each inside the file; where one does not, the rest is scanned;
 *   - every line reached through it is read and parsed, and must end
 *     where the entry says and be a record of the job the entry names;
 *     if not (a forged or stale entry), the rest of the file is scanned;
 *   - what the index does not cover (lines appended by an older
 *     slurm-pin, a crash between the two writes) is scanned.
 * A rotated file's index is rebuilt from the file when it is rotated
 * ("final": it covers the whole file, with the smallest and largest job
 * ids, so that a reader passes over a file that holds none of its jobs).
 */
#define JIDX_MAGIC "PINJIX2\n"

struct jidx_head {
    char magic[8];
    uint64_t ino;     /* the journal file's inode */
    uint64_t covered; /* final: the file's size */
    uint32_t final;   /* 1: a rotated file's, min/max valid */
    uint32_t min_job; /* smallest job id or array job id */
    uint32_t max_job; /* largest */
    uint32_t pad0;
    int64_t mtime_sec; /* final: the file's mtime when indexed */
    int64_t mtime_nsec;
    uint64_t pad;
};

struct jidx_ent {
    uint32_t job, ajob; /* job_id, array_job_id (0, 0: not a record) */
    uint64_t off;       /* the line's first byte */
    uint32_t len;       /* its length, without the newline */
    uint32_t task;      /* array_task_id (ACCT_NO_VAL: not an array's) */
};

struct jidx {
    FILE *f;
    struct jidx_head head;
    uint64_t size;     /* the journal file's */
    uint64_t good_end; /* end of the last entry that followed on */
    bool bad;
};

_Static_assert(sizeof (struct jidx_head) == 64, "index header");
_Static_assert(sizeof (struct jidx_ent) == 24, "index entry");

/* The job id and array job id of a line, without parsing it: the members
 * "job_id" and "array_job_id" (a key's quote is never preceded by a
 * backslash, a quote inside a string always is).  false when the line
 * does not say (then it must be parsed). */
static bool num_after (const char *line, const char *key, uint32_t *v)
{
    const char *p = line;
    size_t kl = strlen (key);
    bool found = false;

    /* the last one, as json-c takes a key given twice */
    while ((p = strstr (p, key))) {
        if (p > line && (p[-1] == ',' || p[-1] == '{')) {
            const char *q = p + kl;
            char *end;
            unsigned long long x;
            if (*q < '0' || *q > '9')
                return false;
            errno = 0;
            x = strtoull (q, &end, 10);
            if (errno || x > UINT32_MAX || (*end != ',' && *end != '}'))
                return false;
            *v = (uint32_t)x;
            found = true;
        }
        p += kl;
    }
    return found;
}

static bool jidx_quick_ids (const char *line, uint32_t *job, uint32_t *ajob)
{
    if (!num_after (line, "\"job_id\":", job))
        return false;
    if (!num_after (line, "\"array_job_id\":", ajob)) {
        if (strstr (line, "\"array_job_id\""))
            return false;
        *ajob = ACCT_NO_VAL;
    }
    return true;
}

static int jidx_open (const char *path, const struct stat *st, struct jidx *ix)
{
    char ipath[PATH_MAX];
    struct stat ist;
    int fd;

    memset (ix, 0, sizeof (*ix));
    if (snprintf (ipath, sizeof (ipath), "%s.idx", path)
        >= (int)sizeof (ipath))
        return -1;
    fd = open (ipath,
               O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return -1;
    if (check_fd (fd, ipath, NULL) < 0 || fstat (fd, &ist) < 0
        || ist.st_size < (off_t)sizeof (struct jidx_head)
        || !(ix->f = fdopen (fd, "r"))) {
        close_keep_errno (fd);
        return -1;
    }
    if (fread (&ix->head, sizeof (ix->head), 1, ix->f) != 1
        || memcmp (ix->head.magic, JIDX_MAGIC, 8) != 0
        || ix->head.ino != (uint64_t)st->st_ino) {
        fclose (ix->f);
        ix->f = NULL;
        return -1;
    }
    ix->size = (uint64_t)st->st_size;
    return 0;
}

/* 1: the next entry, in *e; 0: no more; -1: one that does not follow on
 * (ix->bad). */
static int jidx_next (struct jidx *ix, struct jidx_ent *e)
{
    if (ix->bad || fread (e, sizeof (*e), 1, ix->f) != 1)
        return ix->bad ? -1 : 0;
    if (e->off != ix->good_end || e->off + e->len + 1 > ix->size) {
        ix->bad = true;
        return -1;
    }
    ix->good_end = e->off + e->len + 1;
    return 1;
}

static void jidx_close (struct jidx *ix)
{
    if (ix->f)
        fclose (ix->f);
    ix->f = NULL;
}

/* Write DIR/NAME.idx anew from the journal file DIR/NAME (its whole
 * lines), through NAME.idx.tmp (O_EXCL) and rename(2).  Best effort: the
 * index is only a help; -1 leaves none (readers scan). */
static int jidx_rebuild (const char *dir, const char *name, bool final)
{
    char path[PATH_MAX], ipath[PATH_MAX], tmp[PATH_MAX], *line = NULL;
    struct jidx_head h;
    struct stat st;
    size_t cap = 0;
    ssize_t n;
    uint64_t off = 0;
    FILE *in = NULL, *out = NULL;
    int fd, rc = -1;

    if (snprintf (path, sizeof (path), "%s/%s", dir, name)
            >= (int)sizeof (path)
        || snprintf (ipath, sizeof (ipath), "%s.idx", path)
               >= (int)sizeof (ipath)
        || snprintf (tmp, sizeof (tmp), "%s.idx.tmp", path)
               >= (int)sizeof (tmp))
        return -1;
    fd =
        open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd < 0 || check_fd (fd, path, NULL) < 0 || fstat (fd, &st) < 0
        || !(in = fdopen (fd, "r"))) {
        close_keep_errno (fd);
        goto fail;
    }
    if (unlink (tmp) < 0 && errno != ENOENT)
        goto fail;
    fd = open (tmp,
               O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY,
               0600);
    if (fd < 0 || !(out = fdopen (fd, "w"))) {
        close_keep_errno (fd);
        goto fail;
    }
    memset (&h, 0, sizeof (h));
    memcpy (h.magic, JIDX_MAGIC, 8);
    h.ino = (uint64_t)st.st_ino;
    h.min_job = UINT32_MAX;
    if (fwrite (&h, sizeof (h), 1, out) != 1)
        goto fail;
    while ((n = getline (&line, &cap, in)) > 0) {
        struct jidx_ent e = {.off = off, .len = (uint32_t)(n - 1)};
        if (line[n - 1] != '\n' || n - 1 > LINE_MAX_READ)
            break; /* a torn last line, or garbage: not covered */
        line[n - 1] = '\0';
        e.task = ACCT_NO_VAL;
        if (!jidx_quick_ids (line, &e.job, &e.ajob)
            || (e.ajob != ACCT_NO_VAL
                && !num_after (line, "\"array_task_id\":", &e.task))) {
            struct acct_record r;
            if (n > 1 && acct_record_from_json (line, &r, NULL) == 0) {
                e.job = r.job_id;
                e.ajob = r.array_job_id;
                e.task = r.array_job_id != ACCT_NO_VAL ? r.array_task_id
                                                       : ACCT_NO_VAL;
            } else {
                e.job = e.ajob = 0; /* not a record */
                e.task = ACCT_NO_VAL;
            }
        }
        if (e.job) {
            uint32_t lo =
                e.ajob != ACCT_NO_VAL && e.ajob < e.job ? e.ajob : e.job;
            if (lo < h.min_job)
                h.min_job = lo;
            if (e.job > h.max_job)
                h.max_job = e.job;
            if (e.ajob != ACCT_NO_VAL && e.ajob > h.max_job)
                h.max_job = e.ajob;
        }
        if (fwrite (&e, sizeof (e), 1, out) != 1)
            goto fail;
        off += (uint64_t)n;
    }
    h.final = final && off == (uint64_t)st.st_size;
    h.covered = off;
    if (h.final) {
        h.mtime_sec = (int64_t)st.st_mtim.tv_sec;
        h.mtime_nsec = (int64_t)st.st_mtim.tv_nsec;
    }
    if (fseek (out, 0, SEEK_SET) < 0 || fwrite (&h, sizeof (h), 1, out) != 1
        || fflush (out) != 0)
        goto fail;
    if (rename (tmp, ipath) < 0)
        goto fail;
    rc = 0;
fail:
    if (rc < 0)
        (void)unlink (tmp);
    if (in)
        fclose (in);
    if (out)
        fclose (out);
    free (line);
    return rc;
}

/* After record r was appended at `lineoff` (len bytes and a
 * newline) to DIR/journal (jfd): its entry at the end of journal.idx, or
 * journal.idx rebuilt when it does not end where this line starts. */
static void jidx_append (const char *dir,
                         int jfd,
                         uint64_t lineoff,
                         size_t len,
                         const struct acct_record *r)
{
    char ipath[PATH_MAX];
    struct jidx_head h;
    struct jidx_ent last, e = {.job = r->job_id,
                               .ajob = r->array_job_id,
                               .off = lineoff,
                               .len = (uint32_t)len,
                               .task = r->array_job_id != ACCT_NO_VAL
                                           ? r->array_task_id
                                           : ACCT_NO_VAL};
    struct stat jst, ist;
    uint64_t nent, end = 0;
    int fd;

    if (fstat (jfd, &jst) < 0
        || path_in (ipath, sizeof (ipath), dir, "journal.idx", NULL) < 0)
        return;
    fd = open (ipath,
               O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY
                   | O_NONBLOCK,
               0600);
    if (fd < 0)
        return;
    if (check_fd (fd, ipath, NULL) < 0 || fstat (fd, &ist) < 0
        || ist.st_nlink != 1) {
        close (fd);
        return; /* not ours to fix: readers scan */
    }
    if (ist.st_size < (off_t)sizeof (h)
        || pread (fd, &h, sizeof (h), 0) != (ssize_t)sizeof (h)
        || memcmp (h.magic, JIDX_MAGIC, 8) != 0 || h.ino != jst.st_ino
        || h.final)
        goto rebuild;
    nent = ((uint64_t)ist.st_size - sizeof (h)) / sizeof (e);
    if (nent) {
        if (pread (fd,
                   &last,
                   sizeof (last),
                   (off_t)(sizeof (h) + (nent - 1) * sizeof (e)))
            != (ssize_t)sizeof (last))
            goto rebuild;
        end = last.off + last.len + 1;
    }
    if (end != lineoff)
        goto rebuild;
    if (pwrite (fd, &e, sizeof (e), (off_t)(sizeof (h) + nent * sizeof (e)))
        != (ssize_t)sizeof (e))
        goto rebuild;
    close (fd);
    return;
rebuild:
    close (fd);
    (void)jidx_rebuild (dir, "journal", false);
}

int acct_journal_append_max (const char *dir,
                             const struct acct_record *r,
                             uint64_t max_size,
                             pin_error_t *errp)
{
    char *json = NULL, *buf = NULL;
    int lock = -1, fd = -1, rc = -1;
    struct stat st;
    size_t len, off = 0;
    bool nl;

    if (dir_ready (dir, true, errp) < 0)
        return -1;
    if (!(json = acct_record_to_json (r, errp)))
        return -1;
    len = strlen (json);
    if (!(buf = malloc (len + 2))) {
        free (json);
        errno = ENOMEM;
        return errprintf (errp, "out of memory");
    }
    if ((lock = journal_lock (dir, true, errp)) < 0)
        goto out;
    if ((fd = open_current (dir, errp)) < 0)
        goto out;
    if (fstat (fd, &st) < 0) {
        errprintf (errp, "%s/journal: %s", dir, strerror (errno));
        goto out;
    }
    if (max_size && st.st_size > 0
        && (uint64_t)st.st_size + len + 2 > max_size) {
        close (fd);
        fd = -1;
        if (rotate (dir, errp) < 0 || (fd = open_current (dir, errp)) < 0
            || fstat (fd, &st) < 0)
            goto out;
        fsync_dir (dir);
    }
    (void)reserve (fd, &st, max_size);
    if (ends_in_newline (dir, st.st_size, &nl, errp) < 0)
        goto out;
    if (!nl)
        buf[off++] = '\n'; /* end the torn line: it stays one bad line */
    memcpy (buf + off, json, len);
    off += len;
    buf[off++] = '\n';
    ssize_t n = write (fd, buf, off);
    if (n != (ssize_t)off || fsync (fd) < 0) {
        int saved = n < 0 ? errno : n != (ssize_t)off ? ENOSPC : errno;
        /* take back a partial line: the file holds what it held */
        (void)!ftruncate (fd, st.st_size);
        (void)fsync (fd);
        errno = saved;
        errprintf (errp,
                   "cannot write to journal directory %s: %s; the "
                   "record of job %" PRIu32
                   " is lost, earlier records are "
                   "kept",
                   dir,
                   strerror (saved),
                   r->job_id);
        goto out;
    }
    if (st.st_size == 0)
        fsync_dir (dir); /* a new file: make its name durable too */
    jidx_append (dir,
                 fd,
                 (uint64_t)st.st_size + (nl ? 0 : 1),
                 len,
                 r);
    (void)spare_ready (dir, max_size);
    rc = 0;
out:
    close_keep_errno (fd);
    close_keep_errno (lock);
    free (json);
    free (buf);
    return rc;
}

int acct_journal_append (const char *dir,
                         const struct acct_record *r,
                         pin_error_t *errp)
{
    return acct_journal_append_max (dir, r, ACCT_JOURNAL_MAX_DEFAULT, errp);
}

/* ---- reading --------------------------------------------------------------
 */

struct reader {
    acct_record_cb cb;
    void *arg;
    unsigned skipped;
    bool filter;
    char needle[48];
    /* a set of jobs (acct_journal_read_jobs): sorted, records whose
     * job_id, or array_job_id when `arrays`, is in it */
    const uint32_t *ids;
    size_t nids;
    bool arrays;
    struct acct_journal_stats st;
};

static __thread struct acct_journal_stats last_stats;

void acct_journal_last_stats (struct acct_journal_stats *out)
{
    *out = last_stats;
}

static int cmp_u32 (const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static bool in_ids (const struct reader *rd, uint32_t job, uint32_t ajob)
{
    if (bsearch (&job, rd->ids, rd->nids, sizeof (*rd->ids), cmp_u32))
        return true;
    return rd->arrays && ajob != ACCT_NO_VAL
           && bsearch (&ajob, rd->ids, rd->nids, sizeof (*rd->ids), cmp_u32);
}

/* Does the record belong to what the reader looks for? */
static bool wanted (const struct reader *rd, const struct acct_record *r)
{
    if (rd->ids)
        return in_ids (rd, r->job_id, r->array_job_id);
    if (rd->filter)
        return r->job_id == strtoul (rd->needle + 9, NULL, 10);
    return true;
}

/* The line (n bytes, NUL-terminated) -> cb.  1: cb asked to stop. */
static int one_line (char *line, size_t n, struct reader *rd)
{
    struct acct_record r;

    if (n == 0)
        return 0; /* the newline ending a torn line */
    if (n > LINE_MAX_READ || strlen (line) != n) {
        rd->skipped++; /* too long, or a NUL inside */
        return 0;
    }
    if (rd->filter && !strstr (line, rd->needle))
        return 0;
    if (rd->ids) {
        uint32_t job, ajob;
        if (jidx_quick_ids (line, &job, &ajob) && !in_ids (rd, job, ajob))
            return 0;
    }
    if (acct_record_from_json (line, &r, NULL) < 0) {
        rd->skipped++;
        return 0;
    }
    rd->st.records++;
    if (!wanted (rd, &r))
        return 0;
    return rd->cb (&r, rd->arg) != 0 ? 1 : 0;
}

/* One line through the index: read at e->off, must end where e says and
 * be a record of the job e names.  0 with *r, -1 if not. */
static int indexed_line (int fd,
                         const struct jidx_ent *e,
                         char **line,
                         size_t *cap,
                         struct acct_record *r)
{
    if ((size_t)e->len + 1 > *cap) {
        char *nl = realloc (*line, (size_t)e->len + 1);
        if (!nl)
            return -1;
        *line = nl;
        *cap = (size_t)e->len + 1;
    }
    if (pread (fd, *line, (size_t)e->len + 1, (off_t)e->off)
            != (ssize_t)e->len + 1
        || (*line)[e->len] != '\n')
        return -1;
    (*line)[e->len] = '\0';
    if (strlen (*line) != e->len || acct_record_from_json (*line, r, NULL) < 0
        || r->job_id != e->job || r->array_job_id != e->ajob)
        return -1;
    return 0;
}

/* The records of the jobs asked for that the index of `fd` (the file at
 * `path`, stat st) points at, each checked against the journal line it
 * names first: if one is not what the index says (a forged or stale
 * index), none is taken from the index and the whole file is scanned.
 * *from: where the caller's scan must start (what the index did not
 * cover); 1: cb asked to stop; 0. */
static int read_indexed (const char *path,
                         int fd,
                         const struct stat *st,
                         struct reader *rd,
                         off_t *from)
{
    struct jidx ix;
    struct jidx_ent e, *hit = NULL;
    size_t nhit = 0, caphit = 0, cap = 0;
    char *line = NULL;
    int rc = 0, k;

    *from = 0;
    if (jidx_open (path, st, &ix) < 0) {
        rd->st.files_scanned++;
        return 0;
    }
    if (ix.head.final && ix.head.covered == (uint64_t)st->st_size
        && ix.head.max_job >= ix.head.min_job) {
        /* a rotated file: none of its lines is of these jobs? */
        bool any = false;
        for (size_t i = 0; i < rd->nids && !any; i++)
            any =
                rd->ids[i] >= ix.head.min_job && rd->ids[i] <= ix.head.max_job;
        if (!any) {
            rd->st.files_skipped++;
            *from = st->st_size;
            jidx_close (&ix);
            return 0;
        }
    }
    while ((k = jidx_next (&ix, &e)) > 0) {
        if (!in_ids (rd, e.job, e.ajob))
            continue;
        if (nhit == caphit) {
            size_t nc = caphit ? 2 * caphit : 16;
            struct jidx_ent *n = realloc (hit, nc * sizeof (*n));
            if (!n)
                goto scan_all;
            hit = n;
            caphit = nc;
        }
        hit[nhit++] = e;
    }
    /* every line first: all or nothing */
    for (size_t i = 0; i < nhit; i++) {
        struct acct_record r;
        if (indexed_line (fd, &hit[i], &line, &cap, &r) < 0) {
            rd->st.lines_rejected++;
            goto scan_all;
        }
    }
    rd->st.files_indexed++;
    for (size_t i = 0; i < nhit; i++) {
        struct acct_record r;
        if (indexed_line (fd, &hit[i], &line, &cap, &r) < 0)
            continue; /* changed under us: cannot be (the lock) */
        rd->st.lines_verified++;
        rd->st.records++;
        if (wanted (rd, &r) && rd->cb (&r, rd->arg) != 0) {
            rc = 1;
            break;
        }
    }
    /* what the index does not cover (an entry that does not follow on,
     * lines appended without one) is scanned */
    *from = (off_t)ix.good_end;
    if (ix.bad || ix.good_end < (uint64_t)st->st_size)
        rd->st.files_scanned++;
    goto out;
scan_all:
    *from = 0;
    rd->st.files_scanned++;
out:
    free (hit);
    free (line);
    jidx_close (&ix);
    return rc;
}

/* Is the index of the file at `path` (stat st) missing or not its own? */
static bool jidx_missing (const char *path, const struct stat *st)
{
    struct jidx ix;

    if (jidx_open (path, st, &ix) < 0)
        return true;
    jidx_close (&ix);
    return false;
}

/* 1: cb asked to stop; 0: done; -1 error.  The file is DIR/NAME. */
static int read_file (const char *dir,
                      const char *name,
                      const char *path,
                      struct reader *rd,
                      pin_error_t *errp)
{
    bool reindex;
    int fd =
        open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    FILE *f;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int rc = 0;
    struct stat st;
    off_t from = 0;

    if (fd < 0) {
        if (errno == ENOENT)
            return 0;
        return errprintf (errp, "cannot read %s: %s", path, strerror (errno));
    }
    if (check_fd (fd, path, errp) < 0 || fstat (fd, &st) < 0) {
        close_keep_errno (fd);
        return -1;
    }
    /* root (the journal's owner: check_fd) writes a missing index; under
     * the shared lock no appender runs, and the index is checked anyway */
    reindex = geteuid () == 0 && jidx_missing (path, &st);
    if (reindex) {
        close (fd);
        (void)jidx_rebuild (dir, name, strcmp (name, "journal") != 0);
        fd = open (path,
                   O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
        if (fd < 0 || check_fd (fd, path, errp) < 0 || fstat (fd, &st) < 0) {
            close_keep_errno (fd);
            return errno == ENOENT ? 0 : -1;
        }
    }
    if (rd->ids) {
        if ((rc = read_indexed (path, fd, &st, rd, &from)) != 0) {
            close (fd);
            return rc;
        }
        if (from >= st.st_size) {
            close (fd);
            return 0;
        }
        if (lseek (fd, from, SEEK_SET) < 0) {
            close_keep_errno (fd);
            return errprintf (errp, "%s: %s", path, strerror (errno));
        }
    } else
        rd->st.files_scanned++;
    if (!(f = fdopen (fd, "r"))) {
        if (errno == ENOMEM)
            errprintf (errp, "out of memory");
        close_keep_errno (fd);
        return -1;
    }
    while ((n = getline (&line, &cap, f)) >= 0) {
        if (n > 0 && line[n - 1] == '\n')
            line[--n] = '\0';
        if ((rc = one_line (line, (size_t)n, rd)) != 0)
            break;
    }
    if (rc == 0 && ferror (f))
        rc = errprintf (errp, "cannot read %s: %s", path, strerror (errno));
    free (line);
    fclose (f);
    return rc;
}

static int journal_read (const char *dir,
                         struct reader *rd,
                         unsigned *skipped,
                         pin_error_t *errp)
{
    char path[PATH_MAX], name[32];
    unsigned long *list = NULL;
    size_t count = 0;
    int lock, rc = -1;

    if (dir_ready (dir, false, errp) < 0)
        return -1;
    if ((lock = journal_lock (dir, false, errp)) == -1)
        return -1;
    if (rotated_list (dir, &list, &count, errp) < 0)
        goto out;
    for (size_t i = 0; i <= count; i++) {
        int r;
        if (i < count)
            snprintf (name, sizeof (name), "journal.%lu", list[i]);
        else
            snprintf (name, sizeof (name), "journal");
        if (path_in (path, sizeof (path), dir, name, errp) < 0)
            goto out;
        if ((r = read_file (dir, name, path, rd, errp)) < 0)
            goto out;
        if (r > 0)
            break;
    }
    rc = 0;
out:
    if (skipped)
        *skipped = rd->skipped;
    last_stats = rd->st;
    free (list);
    if (lock >= 0)
        close_keep_errno (lock);
    return rc;
}

int acct_journal_read (const char *dir,
                       acct_record_cb cb,
                       void *arg,
                       unsigned *skipped,
                       pin_error_t *errp)
{
    struct reader rd = {.cb = cb, .arg = arg};
    return journal_read (dir, &rd, skipped, errp);
}

int acct_journal_read_job (const char *dir,
                           uint32_t job_id,
                           acct_record_cb cb,
                           void *arg,
                           unsigned *skipped,
                           pin_error_t *errp)
{
    struct reader rd = {.cb = cb, .arg = arg, .filter = true};
    snprintf (rd.needle,
              sizeof (rd.needle),
              "\"job_id\":%" PRIu32 ",",
              job_id);
    rd.ids = &job_id;
    rd.nids = 1;
    return journal_read (dir, &rd, skipped, errp);
}

int acct_journal_read_jobs (const char *dir,
                            const uint32_t *ids,
                            size_t nids,
                            acct_record_cb cb,
                            void *arg,
                            unsigned *skipped,
                            pin_error_t *errp)
{
    struct reader rd = {.cb = cb, .arg = arg, .arrays = true};
    uint32_t *sorted = malloc ((nids ? nids : 1) * sizeof (*sorted));
    int rc;

    if (!sorted) {
        errno = ENOMEM;
        return errprintf (errp, "out of memory");
    }
    if (nids)
        memcpy (sorted, ids, nids * sizeof (*ids));
    qsort (sorted, nids, sizeof (*sorted), cmp_u32);
    rd.ids = sorted;
    rd.nids = nids;
    rc = journal_read (dir, &rd, skipped, errp);
    free (sorted);
    return rc;
}

/* ---- every record, job by job, in listing order ---------------------------
 *
 * A compact array of where each line is (24 bytes a line), sorted in the
 * order acct lists jobs (array job id or job id, array task id, job id),
 * then each line read again (pread) and parsed: memory stays bounded by
 * the number of lines times 24 bytes, whatever the records hold, and no
 * parsed record is kept. */
struct sref {
    uint32_t key, task, job, len;
    uint64_t pos; /* file number << 40 | offset */
};

static int sref_cmp (const struct sref *a, const struct sref *b)
{
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    if (a->task != b->task)
        return a->task < b->task ? -1 : 1;
    if (a->job != b->job)
        return a->job < b->job ? -1 : 1;
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

static void sref_swap (struct sref *a, struct sref *b)
{
    struct sref t = *a;
    *a = *b;
    *b = t;
}

/* in place (qsort(3) may take a copy of the whole array) */
static void sref_sort (struct sref *v, size_t n)
{
    while (n > 16) {
        size_t i = 0, j = n - 1, m = n / 2;
        struct sref pivot;

        if (sref_cmp (&v[m], &v[0]) < 0)
            sref_swap (&v[m], &v[0]);
        if (sref_cmp (&v[j], &v[0]) < 0)
            sref_swap (&v[j], &v[0]);
        if (sref_cmp (&v[j], &v[m]) < 0)
            sref_swap (&v[j], &v[m]);
        pivot = v[m];
        for (;;) {
            while (sref_cmp (&v[i], &pivot) < 0)
                i++;
            while (sref_cmp (&pivot, &v[j]) < 0)
                j--;
            if (i >= j)
                break;
            sref_swap (&v[i], &v[j]);
            i++;
            j--;
        }
        /* [0, j] and [j + 1, n): recurse into the smaller one */
        if (j + 1 < n - j - 1) {
            sref_sort (v, j + 1);
            v += j + 1;
            n -= j + 1;
        } else {
            sref_sort (v + j + 1, n - j - 1);
            n = j + 1;
        }
    }
    for (size_t i = 1; i < n; i++)
        for (size_t k = i; k > 0 && sref_cmp (&v[k], &v[k - 1]) < 0; k--)
            sref_swap (&v[k], &v[k - 1]);
}

/* Bit 63 of sref.pos: the entry came from an index (its ids are checked
 * against the line when it is read). */
#define SREF_FROM_INDEX (UINT64_C (1) << 63)
#define SREF_OFF_MASK ((UINT64_C (1) << 40) - 1)

/* Is r the record the entry e says (its job, array job and task)? */
static bool sref_is (const struct sref *e, const struct acct_record *r)
{
    if (r->job_id != e->job)
        return false;
    if (r->array_job_id == ACCT_NO_VAL)
        return e->key == r->job_id && e->task == ACCT_NO_VAL;
    return e->key == r->array_job_id && e->task == r->array_task_id;
}

/* A rotated file's index named a line that is not what it says: the file
 * changed after its index was written.  The listing stops with an error
 * (it cannot be put in order any more); root removes the index, so that
 * the next run scans the file and writes a new one. */
static void index_lied (const char *dir,
                        const char *name,
                        const char *path,
                        const struct sref *e,
                        pin_error_t *errp)
{
    char ipath[PATH_MAX];
    bool removed = false;

    if (geteuid () == 0
        && snprintf (ipath, sizeof (ipath), "%s/%s.idx", dir, name)
               < (int)sizeof (ipath))
        removed = unlink (ipath) == 0;
    errno = EIO;
    errprintf (errp,
               "%s changed after its index was written (the line at byte "
               "%" PRIu64 " is not a record of job %" PRIu32 "); %s",
               path,
               e->pos & SREF_OFF_MASK,
               e->job,
               removed ? "its index is removed: run the command again"
                       : "ask root to remove its .idx file and run again");
}

/* Append e to *ref (growing it); -1 when out of memory. */
static int sref_push (struct sref **ref,
                      size_t *nref,
                      size_t *capref,
                      const struct sref *e)
{
    if (*nref == *capref) {
        size_t nc = *capref ? *capref + *capref / 2 : 4096;
        struct sref *nr = realloc (*ref, nc * sizeof (*nr));
        if (!nr) {
            errno = ENOMEM;
            return -1;
        }
        *ref = nr;
        *capref = nc;
    }
    (*ref)[(*nref)++] = *e;
    return 0;
}

/* Where every line of rotated file number `file` (fd, stat st, at path)
 * is, from its index instead of the file: only a final index that covers
 * the file as it is now (inode, size and modification time as when it
 * was written at rotation; a rotated file is never written again), with
 * entries that follow each other to the end.  1: done; 0: not usable
 * (the caller scans the file; nothing was added); -1: out of memory. */
static int sorted_from_index (const char *path,
                              const struct stat *st,
                              size_t file,
                              struct sref **ref,
                              size_t *nref,
                              size_t *capref)
{
    struct jidx ix;
    struct jidx_ent e;
    size_t first = *nref;
    int k;

    if (jidx_open (path, st, &ix) < 0)
        return 0;
    if (!ix.head.final || ix.head.covered != (uint64_t)st->st_size
        || ix.head.mtime_sec != (int64_t)st->st_mtim.tv_sec
        || ix.head.mtime_nsec != (int64_t)st->st_mtim.tv_nsec) {
        jidx_close (&ix);
        return 0;
    }
    while ((k = jidx_next (&ix, &e)) > 0) {
        struct sref r = {.job = e.job,
                         .len = e.len,
                         .pos = SREF_FROM_INDEX | (uint64_t)file << 40
                                | e.off};
        if (e.len == 0)
            continue; /* an empty line */
        if (e.off >= UINT64_C (1) << 40)
            break;
        if (e.ajob == ACCT_NO_VAL) {
            r.key = e.job;
            r.task = ACCT_NO_VAL;
        } else {
            r.key = e.ajob;
            r.task = e.task;
        }
        if (sref_push (ref, nref, capref, &r) < 0) {
            jidx_close (&ix);
            return -1;
        }
    }
    if (k < 0 || ix.good_end != (uint64_t)st->st_size) {
        *nref = first; /* not to the end: scan the file */
        jidx_close (&ix);
        return 0;
    }
    jidx_close (&ix);
    return 1;
}

/* Phase 3 of the sorted listing reads this much of a file at a time. */
#define SORTED_BLOCK ((size_t)256 * 1024)

int acct_journal_read_sorted (const char *dir,
                              acct_record_cb cb,
                              int (*job_end) (void *arg),
                              void *arg,
                              unsigned *skipped,
                              pin_error_t *errp)
{
    char path[PATH_MAX], name[32], *line = NULL;
    unsigned long *list = NULL;
    size_t count = 0, nref = 0, capref = 0, cap = 0;
    struct sref *ref = NULL;
    struct stat st;
    char *blk = NULL; /* the block of the current file last read */
    uint64_t blk_off = 0;
    size_t blk_len = 0, blk_cap = 0;
    int lock, rc = -1, cur = -1;
    size_t curfile = 0;
    unsigned bad = 0;

    if (skipped)
        *skipped = 0;
    if (dir_ready (dir, false, errp) < 0)
        return -1;
    if ((lock = journal_lock (dir, false, errp)) == -1)
        return -1;
    if (rotated_list (dir, &list, &count, errp) < 0)
        goto out;
    /* the files are opened one at a time (no limit on how many) */
    /* 1: where every line is */
    for (size_t i = 0; i <= count; i++) {
        FILE *f;
        ssize_t n;
        uint64_t off = 0;
        int fd;

        if (i < count)
            snprintf (name, sizeof (name), "journal.%lu", list[i]);
        else
            snprintf (name, sizeof (name), "journal");
        if (path_in (path, sizeof (path), dir, name, errp) < 0)
            goto out;
        fd = open (path,
                   O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
        if (fd < 0) {
            if (errno == ENOENT)
                continue;
            errprintf (errp, "cannot read %s: %s", path, strerror (errno));
            goto out;
        }
        if (check_fd (fd, path, errp) < 0) {
            close_keep_errno (fd);
            goto out;
        }
        if (fstat (fd, &st) < 0) {
            errprintf (errp, "%s: %s", path, strerror (errno));
            close_keep_errno (fd);
            goto out;
        }
        /* a rotated file: its lines from its index when it has one that
         * is still its own (root writes a missing one, as read_file) */
        if (i < count) {
            int k;
            if (geteuid () == 0 && jidx_missing (path, &st)) {
                close (fd);
                (void)jidx_rebuild (dir, name, true);
                fd = open (path,
                           O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK
                               | O_NOCTTY);
                if (fd < 0 && errno == ENOENT)
                    continue;
                if (fd < 0) {
                    errprintf (errp,
                               "cannot read %s: %s",
                               path,
                               strerror (errno));
                    goto out;
                }
                if (check_fd (fd, path, errp) < 0) {
                    close_keep_errno (fd);
                    goto out;
                }
                if (fstat (fd, &st) < 0) {
                    errprintf (errp, "%s: %s", path, strerror (errno));
                    close_keep_errno (fd);
                    goto out;
                }
            }
            k = sorted_from_index (path, &st, i, &ref, &nref, &capref);
            if (k < 0) {
                close (fd);
                errprintf (errp, "out of memory");
                goto out;
            }
            if (k > 0) {
                close (fd);
                continue;
            }
        }
        if (!(f = fdopen (fd, "r"))) {
            close_keep_errno (fd);
            errprintf (errp, "%s: %s", path, strerror (errno));
            goto out;
        }
        posix_fadvise (fd, 0, 0, POSIX_FADV_SEQUENTIAL);
        while ((n = getline (&line, &cap, f)) >= 0) {
            struct sref e = {.pos = (uint64_t)i << 40 | off};
            size_t len = (size_t)n;
            uint32_t ajob;

            off += (uint64_t)n;
            if (off >= UINT64_C (1) << 40) {
                fclose (f);
                errno = EFBIG;
                errprintf (errp, "%s: larger than 1 TiB", path);
                goto out;
            }
            if (len > 0 && line[len - 1] == '\n')
                line[--len] = '\0';
            if (len == 0)
                continue;
            if (len > LINE_MAX_READ || strlen (line) != len) {
                bad++;
                continue;
            }
            if (!jidx_quick_ids (line, &e.job, &ajob)
                || (ajob != ACCT_NO_VAL
                    && !num_after (line, "\"array_task_id\":", &e.task))) {
                struct acct_record r;
                if (acct_record_from_json (line, &r, NULL) < 0) {
                    bad++;
                    continue;
                }
                e.job = r.job_id;
                ajob = r.array_job_id;
                e.task = r.array_task_id;
            }
            if (ajob == ACCT_NO_VAL) {
                e.key = e.job;
                e.task = ACCT_NO_VAL;
            } else
                e.key = ajob;
            e.len = (uint32_t)len;
            if (sref_push (&ref, &nref, &capref, &e) < 0) {
                fclose (f);
                errprintf (errp, "out of memory");
                goto out;
            }
        }
        if (ferror (f)) {
            errprintf (errp, "cannot read %s: %s", path, strerror (errno));
            fclose (f);
            goto out;
        }
        fclose (f);
    }
    /* 2: in listing order */
    sref_sort (ref, nref);
    /* 3: each line again, job by job */
    for (size_t i = 0; i < nref; i++) {
        struct sref *e = &ref[i];
        struct acct_record r;
        size_t file = (size_t)((e->pos & ~SREF_FROM_INDEX) >> 40);

        if (cur < 0 || file != curfile) {
            blk_len = 0;
            if (cur >= 0)
                close (cur);
            if (file < count)
                snprintf (name, sizeof (name), "journal.%lu", list[file]);
            else
                snprintf (name, sizeof (name), "journal");
            if (path_in (path, sizeof (path), dir, name, errp) < 0)
                goto out;
            cur = open (path,
                        O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK
                            | O_NOCTTY);
            if (cur < 0 || check_fd (cur, path, errp) < 0) {
                if (cur < 0)
                    errprintf (errp,
                               "cannot read %s: %s",
                               path,
                               strerror (errno));
                goto out;
            }
            curfile = file;
        }

        if ((size_t)e->len + 1 > cap) {
            char *nl = realloc (line, (cap = (size_t)e->len + 1));
            if (!nl) {
                errno = ENOMEM;
                errprintf (errp, "out of memory");
                goto out;
            }
            line = nl;
        }
        /* a job's lines, and the next job's, are mostly near each other:
         * read a block and take the lines inside it from there */
        {
            uint64_t off = e->pos & SREF_OFF_MASK;
            if (blk_len == 0 || off < blk_off
                || off + e->len > blk_off + blk_len) {
                size_t want = e->len > SORTED_BLOCK ? e->len : SORTED_BLOCK;
                ssize_t got;
                if (want > blk_cap) {
                    char *nb = realloc (blk, want);
                    if (!nb) {
                        errno = ENOMEM;
                        errprintf (errp, "out of memory");
                        goto out;
                    }
                    blk = nb;
                    blk_cap = want;
                }
                got = pread (cur, blk, want, (off_t)off);
                if (got < (ssize_t)e->len) {
                    if (got >= 0)
                        errno = EIO; /* the file is shorter than it was */
                    errprintf (errp,
                               "cannot read %s: %s",
                               path,
                               strerror (errno));
                    goto out;
                }
                blk_off = off;
                blk_len = (size_t)got;
            }
            memcpy (line, blk + (off - blk_off), e->len);
        }
        line[e->len] = '\0';
        if (strlen (line) != e->len || acct_record_from_json (line, &r, NULL) < 0) {
            if (e->job != 0 && (e->pos & SREF_FROM_INDEX)) {
                index_lied (dir, name, path, e, errp);
                goto out;
            }
            bad++;
        } else if ((e->pos & SREF_FROM_INDEX) && !sref_is (e, &r)) {
            index_lied (dir, name, path, e, errp);
            goto out;
        } else if (cb (&r, arg) != 0) {
            rc = 0;
            goto out;
        }
        if ((i + 1 == nref || ref[i + 1].job != e->job
             || ref[i + 1].key != e->key || ref[i + 1].task != e->task)
            && job_end && job_end (arg) != 0) {
            rc = 0;
            goto out;
        }
    }
    rc = 0;
out:
    if (skipped)
        *skipped = bad;
    if (cur >= 0)
        close (cur);
    free (ref);
    free (blk);
    free (line);
    free (list);
    if (lock >= 0)
        close_keep_errno (lock);
    return rc;
}

/* ---- a job record from step records ----------------------------------------
 */

struct sum {
    const char *node;
    int64_t submit_us; /* 0: any; else records of another Submit (an
                          earlier job of a reused id) are not this job's */
    struct acct_record *job;
    bool have_job, any, have_batch, have_policy;
    bool have_outcome; /* a step other than the extern step */
    int worst;         /* rank of the worst exit status so far */
};

static int status_rank (int32_t st)
{
    if (st < 0)
        return 0;
    if (WIFSIGNALED (st))
        return 3;
    return WIFEXITED (st) && WEXITSTATUS (st) ? 2 : 1;
}

static int sum_cb (const struct acct_record *r, void *arg)
{
    struct sum *s = arg;
    struct acct_record *j = s->job;

    if (s->node && s->node[0] && strcmp (r->node, s->node) != 0)
        return 0;
    if (s->submit_us && r->submit_us && r->submit_us != s->submit_us)
        return 0;
    if (r->kind == ACCT_KIND_JOB) {
        s->have_job = true;
        return 0;
    }
    if (!s->any) {
        *j = *r;
        j->kind = ACCT_KIND_JOB;
        j->step_id = ACCT_NO_VAL;
        j->source = ACCT_SRC_STEP_SUM;
        j->user_usec = j->system_usec = j->usage_usec = 0;
        j->nr_periods = j->nr_throttled = j->throttled_usec = 0;
        j->has_throttle = j->has_mem_peak = false;
        j->mem_peak = 0;
        j->alloc_cpus = 0;
        j->nsteps = 0;
        j->cgroup[0] = '\0';
        j->confined_us = 0;
        j->confine_use = 0;
        j->confine_cpus[0] = j->confine_mems[0] = '\0';
        j->has_seed = false;
        s->worst = -1;
        s->any = true;
    }
    /* the extern step has no job environment: names from the others */
#define FILL(f)              \
    if (!j->f[0] && r->f[0]) \
    snprintf (j->f, sizeof (j->f), "%s", r->f)
    FILL (cluster);
    FILL (user);
    FILL (partition);
    FILL (job_name);
    FILL (experiment);
    FILL (arm);
    FILL (block);
    FILL (account);
    FILL (qos);
#undef FILL
    if (!j->submit_us)
        j->submit_us = r->submit_us;
    if (!j->has_timelimit && r->has_timelimit) {
        j->has_timelimit = true;
        j->timelimit = r->timelimit;
    }
    if (!j->req_mem)
        j->req_mem = r->req_mem;
    if (j->array_job_id == ACCT_NO_VAL)
        j->array_job_id = r->array_job_id;
    if (j->array_task_id == ACCT_NO_VAL)
        j->array_task_id = r->array_task_id;
    if (j->uid == ACCT_NO_VAL)
        j->uid = r->uid;
    j->nsteps++;
    j->user_usec += r->user_usec;
    j->system_usec += r->system_usec;
    j->usage_usec += r->usage_usec;
    if (r->has_throttle) {
        j->has_throttle = true;
        j->nr_periods += r->nr_periods;
        j->nr_throttled += r->nr_throttled;
        j->throttled_usec += r->throttled_usec;
    }
    if (r->has_mem_peak && (!j->has_mem_peak || r->mem_peak > j->mem_peak)) {
        j->has_mem_peak = true;
        j->mem_peak = r->mem_peak;
    }
    if (r->start_us < j->start_us)
        j->start_us = r->start_us;
    if (r->end_us > j->end_us)
        j->end_us = r->end_us;
    j->elapsed_us = j->end_us - j->start_us;
    if (r->step_id != ACCT_STEP_EXTERN)
        s->have_outcome = true;
    if (r->step_id == ACCT_STEP_BATCH || r->step_id == ACCT_STEP_INTERACTIVE) {
        j->alloc_cpus = r->alloc_cpus;
        j->exit_status = r->exit_status;
        snprintf (j->state, sizeof (j->state), "%s", r->state);
        s->have_batch = true;
    } else {
        if (!s->have_batch && r->alloc_cpus > j->alloc_cpus)
            j->alloc_cpus = r->alloc_cpus;
        if (!s->have_batch && r->step_id != ACCT_STEP_EXTERN
            && status_rank (r->exit_status) > s->worst) {
            s->worst = status_rank (r->exit_status);
            j->exit_status = r->exit_status;
            snprintf (j->state, sizeof (j->state), "%s", r->state);
        }
    }
    /* the policy of the job's steps (the extern step has none of its
     * own); "mixed" when they differ */
    if (r->step_id != ACCT_STEP_EXTERN) {
        if (!s->have_policy)
            snprintf (j->policy, sizeof (j->policy), "%s", r->policy);
        else if (strcmp (j->policy, r->policy) != 0)
            snprintf (j->policy, sizeof (j->policy), "mixed");
        s->have_policy = true;
    }
    return 0;
}

int acct_job_from_steps (const char *dir,
                         uint32_t job,
                         const char *node,
                         struct acct_record *out,
                         pin_error_t *errp)
{
    return acct_job_from_steps_at (dir, job, 0, node, out, errp);
}

int acct_job_from_steps_at (const char *dir,
                            uint32_t job,
                            int64_t submit_us,
                            const char *node,
                            struct acct_record *out,
                            pin_error_t *errp)
{
    struct acct_record *j = malloc (sizeof (*j));
    struct sum s = {.node = node, .submit_us = submit_us, .job = j};
    unsigned skipped = 0;

    if (!j) {
        errno = ENOMEM;
        return errprintf (errp, "out of memory");
    }
    acct_record_init (j);
    if (acct_journal_read_job (dir, job, sum_cb, &s, &skipped, errp) < 0) {
        free (j);
        return -1;
    }
    if (s.have_job) {
        free (j);
        return 0;
    }
    if (!s.any) {
        /* nothing of the job on this node (its slurmstepd died before
         * writing, or no step ran here): a job record all the same, with
         * nothing measured and nothing known but the job and node */
        acct_record_init (j);
        j->kind = ACCT_KIND_JOB;
        j->job_id = job;
        j->step_id = ACCT_NO_VAL;
        j->source = ACCT_SRC_STEP_SUM;
        j->nsteps = 0;
        j->exit_status = -1;
        snprintf (j->state,
                  sizeof (j->state),
                  "%s",
                  acct_state_of_status (-1, false));
        snprintf (j->policy, sizeof (j->policy), "none");
        if (node)
            snprintf (j->node, sizeof (j->node), "%s", node);
        *out = *j;
        free (j);
        return 2;
    }
    if (!s.have_outcome) {
        /* the extern step alone: it lives as long as the allocation and
         * ends the same way whatever the job did, so it says nothing of
         * the job's outcome (the job's steps lost their records: their
         * slurmstepd was killed) */
        j->exit_status = -1;
        snprintf (j->state,
                  sizeof (j->state),
                  "%s",
                  acct_state_of_status (-1, false));
    }
    *out = *j;
    free (j);
    return 1;
}
