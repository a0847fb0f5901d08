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
    if (rename (from, to) < 0)
        return errprintf (errp,
                          "cannot rotate %s to %s: %s",
                          from,
                          name,
                          strerror (errno));
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
};

/* 1: cb asked to stop; 0: done; -1 error */
static int read_file (const char *path, struct reader *rd, pin_error_t *errp)
{
    int fd =
        open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    FILE *f;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int rc = 0;

    if (fd < 0) {
        if (errno == ENOENT)
            return 0;
        return errprintf (errp, "cannot read %s: %s", path, strerror (errno));
    }
    if (check_fd (fd, path, errp) < 0 || !(f = fdopen (fd, "r"))) {
        if (errno == ENOMEM)
            errprintf (errp, "out of memory");
        close_keep_errno (fd);
        return -1;
    }
    while ((n = getline (&line, &cap, f)) >= 0) {
        struct acct_record r;

        if (n > 0 && line[n - 1] == '\n')
            line[--n] = '\0';
        if (n == 0)
            continue; /* the newline ending a torn line */
        if (n > LINE_MAX_READ || strlen (line) != (size_t)n) {
            rd->skipped++; /* too long, or a NUL inside */
            continue;
        }
        if (rd->filter && !strstr (line, rd->needle))
            continue;
        if (acct_record_from_json (line, &r, NULL) < 0) {
            rd->skipped++;
            continue;
        }
        if (rd->filter && r.job_id != strtoul (rd->needle + 9, NULL, 10))
            continue;
        if (rd->cb (&r, rd->arg) != 0) {
            rc = 1;
            break;
        }
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
        if ((r = read_file (path, rd, errp)) < 0)
            goto out;
        if (r > 0)
            break;
    }
    rc = 0;
out:
    if (skipped)
        *skipped = rd->skipped;
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
    return journal_read (dir, &rd, skipped, errp);
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
