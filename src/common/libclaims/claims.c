/* claims.c - PU claims of running steps and the node lock
 *
 * When the cgroup v2 hierarchy has no cpuset controller, the PUs a step
 * holds are recorded as files "job_<job>.step_<step>" in a root-only
 * directory, each "pid starttime cpulist\n", written to a temporary file
 * and renamed into place.  Claims whose process is gone (no such pid, a
 * zombie, or a pid recycled by a process that started at another time)
 * are stale: claims_busy() ignores and removes them.  Callers serialize
 * "read busy, plan, add claim" with pin_lock_acquire().  See claims.h and
 * doc/cgroup.md.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "claims.h"
#include "libtopo/topo.h"
#include "libutil/mkdirp.h"
#include "libutil/safefile.h"

#define CLAIM_MAX (64 * 1024) /* largest claim file read */
#define PROC_STAT_MAX 4096    /* /proc/PID/stat is shorter */

static void close_keep_errno (int fd)
{
    int saved = errno;
    if (fd >= 0)
        close (fd);
    errno = saved;
}

static int check_path (const char *path, const char *what, pin_error_t *errp)
{
    const char *p;

    if (!path || path[0] != '/') {
        errno = EINVAL;
        return errprintf (errp,
                          "%s '%.64s': not an absolute path",
                          what,
                          path ? path : "(null)");
    }
    if (strlen (path) >= PATH_MAX) {
        errno = ENAMETOOLONG;
        return errprintf (errp, "%s '%.64s...': too long", what, path);
    }
    for (p = path; *p; p++) {
        if (iscntrl ((unsigned char)*p)) {
            errno = EINVAL;
            return errprintf (errp, "%s: control character in path", what);
        }
        if (p[0] == '/' && p[1] == '.' && p[2] == '.'
            && (p[3] == '/' || p[3] == '\0')) {
            errno = EINVAL;
            return errprintf (errp,
                              "%s '%.64s': '..' components are not "
                              "allowed",
                              what,
                              path);
        }
    }
    return 0;
}

/* Is the open file `fd` of the expected type, and its path (checked
 * after opening: a chain that passes can only be changed by root or us)
 * safe to trust?  See libutil/safefile.h. */
static int check_owner (int fd, const char *path, bool dir, pin_error_t *errp)
{
    struct stat st;

    if (fstat (fd, &st) < 0)
        return errprintf (errp, "%s: %s", path, strerror (errno));
    if (dir ? !S_ISDIR (st.st_mode) : !S_ISREG (st.st_mode)) {
        errno = dir ? ENOTDIR : EINVAL;
        return errprintf (errp,
                          "%s: not a %s; remove it",
                          path,
                          dir ? "directory" : "regular file");
    }
    return safefile_check (path, geteuid (), errp);
}

/* Open the claims directory, creating it (and missing parents) with mode
 * 0700 if `create`.  Refuses a symlink, a directory not owned by us or
 * writable by others.  -1 with errno ENOENT if absent and !create. */
static int open_claims_dir (const char *dir, bool create, pin_error_t *errp)
{
    int fd;

    if (check_path (dir, "claims directory", errp) < 0)
        return -1;
    if (create && mkdir_p (dir, 0700, 0700, errp) < 0)
        return -1;
    fd = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT && !create)
            return -1;
        if (errno == ELOOP || errno == ENOTDIR)
            return errprintf (errp,
                              "%s: a symlink or not a directory; "
                              "refusing to use it (remove it)",
                              dir);
        return errprintf (errp, "%s: %s", dir, strerror (errno));
    }
    if (check_owner (fd, dir, true, errp) < 0) {
        close_keep_errno (fd);
        return -1;
    }
    return fd;
}

static void claim_name (char *buf, size_t size, uint32_t job, uint32_t step)
{
    snprintf (buf, size, "job_%" PRIu32 ".step_%" PRIu32, job, step);
}

/* Strictly parse "job_<u32>.step_<u32>" as claim_name() prints it: no
 * leading zero, so that a file claims_add() did not write is not a
 * claim. */
bool claims_parse_name (const char *name, uint32_t *job, uint32_t *step)
{
    const char *p = name;
    unsigned long long v[2];
    int i;

    for (i = 0; i < 2; i++) {
        const char *prefix = i == 0 ? "job_" : ".step_";
        size_t plen = strlen (prefix);
        int digits = 0;

        if (strncmp (p, prefix, plen) != 0)
            return false;
        p += plen;
        v[i] = 0;
        while (isdigit ((unsigned char)*p) && digits < 11) {
            v[i] = v[i] * 10 + (unsigned)(*p - '0');
            p++;
            digits++;
        }
        if (digits == 0 || v[i] > UINT32_MAX
            || (digits > 1 && p[-digits] == '0'))
            return false;
    }
    if (*p != '\0')
        return false;
    *job = (uint32_t)v[0];
    *step = (uint32_t)v[1];
    return true;
}

int claims_add (const char *dir,
                uint32_t job,
                uint32_t step,
                pid_t owner,
                hwloc_const_bitmap_t cpus,
                pin_error_t *errp)
{
    char name[64], tmp[96];
    char *list = NULL, *content = NULL;
    int dfd = -1, fd = -1, rc = -1;
    uint64_t start;
    char state;
    size_t len;
    ssize_t n;

    if (owner <= 0 || !cpus || hwloc_bitmap_iszero (cpus)
        || hwloc_bitmap_weight (cpus) < 0) {
        errno = EINVAL;
        return errprintf (errp,
                          "claims_add: give a pid > 0 and a finite, "
                          "non-empty set of CPUs");
    }
    if (claims_proc_start (owner, &state, &start) < 0)
        return errprintf (errp,
                          "claims_add: pid %ld: cannot read its start "
                          "time: %s",
                          (long)owner,
                          strerror (errno));
    if ((dfd = open_claims_dir (dir, true, errp)) < 0)
        return -1;
    if (!(list = topo_list_format (cpus))
        || asprintf (&content,
                     "%ld %" PRIu64 " %s\n",
                     (long)owner,
                     start,
                     list)
               < 0) {
        content = NULL;
        errprintf (errp, "out of memory");
        goto out;
    }
    claim_name (name, sizeof (name), job, step);
    snprintf (tmp, sizeof (tmp), ".%s.%ld.tmp", name, (long)getpid ());
    fd = openat (dfd,
                 tmp,
                 O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                 0600);
    if (fd < 0 && errno == EEXIST) {
        /* left by a crashed earlier process with our pid */
        (void)unlinkat (dfd, tmp, 0);
        fd = openat (dfd,
                     tmp,
                     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                     0600);
    }
    if (fd < 0) {
        errprintf (errp, "%s/%s: %s", dir, tmp, strerror (errno));
        goto out;
    }
    len = strlen (content);
    do {
        n = write (fd, content, len);
    } while (n < 0 && errno == EINTR);
    if (n < 0 || (size_t)n != len) {
        if (n >= 0)
            errno = EIO;
        errprintf (errp, "%s/%s: write: %s", dir, tmp, strerror (errno));
        goto out_unlink;
    }
    if (close (fd) < 0) {
        fd = -1;
        errprintf (errp, "%s/%s: close: %s", dir, tmp, strerror (errno));
        goto out_unlink;
    }
    fd = -1;
    if (renameat (dfd, tmp, dfd, name) < 0) {
        errprintf (errp, "%s/%s: rename: %s", dir, name, strerror (errno));
        goto out_unlink;
    }
    rc = 0;
    goto out;
out_unlink : {
    int saved = errno;
    (void)unlinkat (dfd, tmp, 0);
    errno = saved;
}
out:
    close_keep_errno (fd);
    close_keep_errno (dfd);
    {
        int saved = errno;
        free (list);
        free (content);
        errno = saved;
    }
    return rc;
}

/* A decimal number of at most 20 digits, > 0 and <= max, followed by
 * `stop`; *pp moved past stop.  false otherwise. */
static bool parse_number (char **pp, uint64_t max, char stop, uint64_t *out)
{
    char *p = *pp;
    uint64_t v = 0;
    int digits = 0;

    while (isdigit ((unsigned char)*p)) {
        unsigned d = (unsigned)(*p - '0');
        if (++digits > 20 || v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
        p++;
    }
    if (digits == 0 || v == 0 || v > max || *p != stop)
        return false;
    *pp = p + 1;
    *out = v;
    return true;
}

int claims_parse_content (char *buf,
                          pid_t *pid,
                          uint64_t *start,
                          hwloc_bitmap_t set)
{
    char *p = buf, *nl, *sp;
    uint64_t v, t = 0;

    if (!buf || !set || !parse_number (&p, INT32_MAX, ' ', &v))
        return 0;
    if (!(nl = strchr (p, '\n')) || nl[1] != '\0')
        return 0;
    /* "start cpus" or (version 1) "cpus": a start time is followed by a
     * space, a CPU list never holds one */
    if ((sp = strchr (p, ' ')) && sp < nl) {
        if (!parse_number (&p, UINT64_MAX, ' ', &t))
            return 0;
    }
    *nl = '\0';
    hwloc_bitmap_zero (set);
    if (topo_list_parse (p, set, NULL) < 0 || hwloc_bitmap_iszero (set))
        return 0;
    *pid = (pid_t)v;
    *start = t;
    return 1;
}

int claims_parse_proc_stat (const char *text, char *state, uint64_t *start)
{
    const char *p;
    char *end;
    unsigned long long v;
    int field;

    /* "pid (comm) S ppid ...": comm may hold anything, even ") " */
    if (!text || !(p = strrchr (text, ')')) || p[1] != ' ')
        goto bad;
    p += 2;
    if (!isalpha ((unsigned char)*p) || p[1] != ' ')
        goto bad;
    *state = *p;
    /* p is at field 3; step to field 22 */
    for (field = 3; field < 22; field++) {
        if (!(p = strchr (p, ' ')))
            goto bad;
        p++;
    }
    if (!isdigit ((unsigned char)*p))
        goto bad;
    errno = 0;
    v = strtoull (p, &end, 10);
    if (errno != 0 || (*end != ' ' && *end != '\n' && *end != '\0'))
        goto bad;
    *start = (uint64_t)v;
    return 0;
bad:
    errno = EINVAL;
    return -1;
}

int claims_proc_start (pid_t pid, char *state, uint64_t *start)
{
    char path[64], buf[PROC_STAT_MAX];
    ssize_t n;
    size_t len = 0;
    int fd;

    if (pid <= 0) {
        errno = ESRCH;
        return -1;
    }
    snprintf (path, sizeof (path), "/proc/%ld/stat", (long)pid);
    if ((fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0) {
        if (errno == ENOENT)
            errno = ESRCH;
        return -1;
    }
    while (len < sizeof (buf) - 1) {
        n = read (fd, buf + len, sizeof (buf) - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno == ESRCH ? ESRCH : errno;
            close (fd);
            errno = e;
            return -1;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    close (fd);
    buf[len] = '\0';
    return claims_parse_proc_stat (buf, state, start);
}

/* Is the owner of a claim alive: the pid exists, is no zombie and (for a
 * claim with a start time) started then? */
static bool claim_alive (pid_t pid, uint64_t start)
{
    uint64_t now;
    char state;

    if (claims_proc_start (pid, &state, &now) < 0) /* no /proc? */
        return errno != ESRCH && (kill (pid, 0) == 0 || errno == EPERM);
    if (state == 'Z' || state == 'X' || state == 'x')
        return false;
    return start == 0 || start == now;
}

/* Read claim file `name` in dfd: 1 and pid/start/set on success, 0 if it
 * is not a well-formed claim, -1 with errno on a read error. */
static int read_claim (int dfd,
                       const char *name,
                       pid_t *pid,
                       uint64_t *start,
                       hwloc_bitmap_t set)
{
    size_t len = 0;
    char *buf;
    int fd, rc;

    fd = openat (dfd,
                 name,
                 O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return errno == ELOOP ? 0 : -1;
    if (!(buf = malloc (CLAIM_MAX))) {
        close_keep_errno (fd);
        return -1;
    }
    for (;;) {
        ssize_t n = read (fd, buf + len, CLAIM_MAX - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            close_keep_errno (fd);
            free (buf);
            return -1;
        }
        if (n == 0)
            break;
        len += n;
        if (len >= CLAIM_MAX - 1) {
            close (fd);
            free (buf);
            return 0; /* too long: not a claim we wrote */
        }
    }
    close (fd);
    buf[len] = '\0';
    rc = claims_parse_content (buf, pid, start, set);
    free (buf);
    return rc;
}

int claims_busy (const char *dir,
                 uint32_t job,
                 uint32_t step,
                 hwloc_bitmap_t busy,
                 pin_error_t *errp)
{
    return claims_load (dir, job, step, busy, NULL, 0, errp);
}

int claims_load (const char *dir,
                 uint32_t job,
                 uint32_t step,
                 hwloc_bitmap_t busy,
                 unsigned *load,
                 unsigned nload,
                 pin_error_t *errp)
{
    hwloc_bitmap_t set = NULL;
    struct dirent *d;
    DIR *dp = NULL;
    int dfd, fd = -1, rc = -1;

    if (!busy) {
        errno = EINVAL;
        return errprintf (errp, "claims_load: no result set");
    }
    if ((dfd = open_claims_dir (dir, false, errp)) < 0)
        return errno == ENOENT ? 0 : -1;
    if (!(set = hwloc_bitmap_alloc ())) {
        errprintf (errp, "out of memory");
        goto out;
    }
    if ((fd = openat (dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0
        || !(dp = fdopendir (fd))) {
        errprintf (errp, "%s: %s", dir, strerror (errno));
        goto out;
    }
    fd = -1; /* owned by dp */
    errno = 0;
    while ((d = readdir (dp))) {
        uint32_t j, s;
        uint64_t start;
        pid_t pid;
        int r;

        if (!claims_parse_name (d->d_name, &j, &s)
            || (j == job && s == step)) {
            errno = 0;
            continue;
        }
        r = read_claim (dfd, d->d_name, &pid, &start, set);
        if (r < 0) {
            if (errno == ENOENT) { /* removed meanwhile */
                errno = 0;
                continue;
            }
            errprintf (errp, "%s/%s: %s", dir, d->d_name, strerror (errno));
            goto out;
        }
        if (r == 1 && claim_alive (pid, start)) {
            hwloc_bitmap_or (busy, busy, set);
            if (load) {
                int os;
                hwloc_bitmap_foreach_begin (os, set) if ((unsigned)os
                                                         >= nload) break;
                if (load[os] < UINT_MAX)
                    load[os]++;
                hwloc_bitmap_foreach_end ();
            }
        } else
            (void)unlinkat (dfd, d->d_name, 0); /* stale or malformed */
        errno = 0;
    }
    if (errno != 0) {
        errprintf (errp, "%s: readdir: %s", dir, strerror (errno));
        goto out;
    }
    rc = 0;
out : {
    int saved = errno;
    if (dp)
        closedir (dp);
    if (fd >= 0)
        close (fd);
    close (dfd);
    hwloc_bitmap_free (set);
    errno = saved;
}
    return rc;
}

int claims_remove (const char *dir,
                   uint32_t job,
                   uint32_t step,
                   pin_error_t *errp)
{
    char name[64];
    int dfd;

    if ((dfd = open_claims_dir (dir, false, errp)) < 0)
        return errno == ENOENT ? 0 : -1;
    claim_name (name, sizeof (name), job, step);
    if (unlinkat (dfd, name, 0) < 0 && errno != ENOENT) {
        int e = errno;
        close (dfd);
        errno = e;
        return errprintf (errp, "%s/%s: %s", dir, name, strerror (e));
    }
    close (dfd);
    return 0;
}

int claims_remove_job (const char *dir,
                       uint32_t job,
                       void (*removed) (uint32_t step, void *arg),
                       void *arg,
                       pin_error_t *errp)
{
    struct dirent *d;
    DIR *dp;
    int dfd, fd, rc = 0;

    if ((dfd = open_claims_dir (dir, false, errp)) < 0)
        return errno == ENOENT ? 0 : -1;
    if ((fd = openat (dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0
        || !(dp = fdopendir (fd))) {
        errprintf (errp, "%s: %s", dir, strerror (errno));
        close_keep_errno (fd);
        close_keep_errno (dfd);
        return -1;
    }
    while ((d = readdir (dp))) {
        uint32_t j, s;

        if (!claims_parse_name (d->d_name, &j, &s) || j != job)
            continue;
        if (unlinkat (dfd, d->d_name, 0) < 0) {
            if (errno != ENOENT)
                rc = errprintf (errp,
                                "%s/%s: %s",
                                dir,
                                d->d_name,
                                strerror (errno));
            continue;
        }
        if (removed)
            removed (s, arg);
    }
    {
        int saved = errno;
        closedir (dp);
        close (dfd);
        errno = saved;
    }
    return rc;
}

/* ---- lock ------------------------------------------------------------------
 */

static int64_t now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int pin_lock_acquire (const char *path, int timeout_ms, pin_error_t *errp)
{
    int64_t deadline = now_ms () + (timeout_ms > 0 ? timeout_ms : 0);
    int fd;

    if (check_path (path, "lock file", errp) < 0)
        return -1;
    fd = open (path,
               O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK
                   | O_NOCTTY,
               0600);
    if (fd < 0) {
        if (errno == ELOOP)
            return errprintf (errp,
                              "%s: a symlink; refusing to use it "
                              "(remove it)",
                              path);
        return errprintf (errp, "%s: %s", path, strerror (errno));
    }
    if (check_owner (fd, path, false, errp) < 0) {
        close_keep_errno (fd);
        return -1;
    }
    for (;;) {
        int64_t left;

        if (flock (fd, LOCK_EX | LOCK_NB) == 0)
            return fd;
        if (errno == EINTR)
            continue;
        if (errno != EWOULDBLOCK) {
            errprintf (errp, "%s: flock: %s", path, strerror (errno));
            close_keep_errno (fd);
            return -1;
        }
        left = deadline - now_ms ();
        if (left <= 0) {
            close (fd);
            errno = ETIMEDOUT;
            return errprintf (errp,
                              "%s: still locked by another process "
                              "after %d ms; is a step stuck?",
                              path,
                              timeout_ms > 0 ? timeout_ms : 0);
        }
        {
            int ms = left < 10 ? (int)left : 10;
            struct timespec ts = {0, (long)ms * 1000000L};
            nanosleep (&ts, NULL);
        }
    }
}

void pin_lock_release (int fd)
{
    close_keep_errno (fd);
}

/* vi: ts=4 sw=4 expandtab
 */
