/* cg2.c - the cgroup v2 layer: direct file I/O below one root directory
 *
 * Every path is resolved component by component from a directory fd of the
 * root with O_NOFOLLOW, so no symlink is followed and no path leaves the
 * root; relative paths are checked first ('.', '..', control characters,
 * length, depth).  Writes are one write(2) on an fd opened O_WRONLY without
 * O_CREAT; reads are bounded.  See doc/cgroup.md for the layout and the
 * order of writes.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "cg2.h"
#include "cg2_private.h"
#include "libtopo/topo.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

struct cg2 {
    char root[PATH_MAX];
    int rootfd;
    bool cgroup2fs;         /* the root is a real cgroup2 mount */
    char controllers[1024]; /* cgroup.controllers of the root */
};

/* ---- small helpers --------------------------------------------------------
 */

static int64_t now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms (int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep (&ts, NULL); /* EINTR: the caller loops on the clock */
}

static void close_keep_errno (int fd)
{
    int saved = errno;
    if (fd >= 0)
        close (fd);
    errno = saved;
}

/* Normalize a path relative to the root into `out`: leading, trailing and
 * repeated '/' dropped ("" is the root itself).  Refuses '.', '..', control
 * characters, more than CG2_MAX_DEPTH components or PATH_MAX bytes. */
int cg2_relpath_normalize (const char *rel,
                           char *out,
                           size_t size,
                           pin_error_t *errp)
{
    const char *p = rel ? rel : "";
    size_t len = 0;
    int depth = 0;

    while (*p) {
        const char *start;
        size_t n;

        while (*p == '/')
            p++;
        if (!*p)
            break;
        start = p;
        while (*p && *p != '/') {
            if (iscntrl ((unsigned char)*p)) {
                errno = EINVAL;
                return errprintf (errp,
                                  "cgroup path has a control "
                                  "character; give a plain relative path");
            }
            p++;
        }
        n = p - start;
        if ((n == 1 && start[0] == '.')
            || (n == 2 && start[0] == '.' && start[1] == '.')) {
            errno = EINVAL;
            return errprintf (errp,
                              "cgroup path '%.64s': '.' and '..' "
                              "components are not allowed",
                              rel);
        }
        if (++depth > CG2_MAX_DEPTH) {
            errno = EINVAL;
            return errprintf (errp,
                              "cgroup path '%.64s...': deeper than %d "
                              "levels",
                              rel,
                              CG2_MAX_DEPTH);
        }
        if (len + n + 2 > size) {
            errno = ENAMETOOLONG;
            return errprintf (errp, "cgroup path '%.64s...': too long", rel);
        }
        if (len > 0)
            out[len++] = '/';
        memcpy (out + len, start, n);
        len += n;
    }
    out[len] = '\0';
    return 0;
}

/* A file name inside a cgroup: one component of [A-Za-z0-9._-]. */
static int check_file_name (const char *file, pin_error_t *errp)
{
    const char *p;

    if (!file || !*file || strcmp (file, ".") == 0 || strcmp (file, "..") == 0
        || strlen (file) > NAME_MAX)
        goto bad;
    for (p = file; *p; p++)
        if (!isalnum ((unsigned char)*p) && *p != '.' && *p != '_'
            && *p != '-')
            goto bad;
    return 0;
bad:
    errno = EINVAL;
    return errprintf (errp,
                      "cgroup file name '%.64s': not a single name of "
                      "[A-Za-z0-9._-]",
                      file ? file : "(null)");
}

/* Open directory `norm` (normalized) below the root, no symlinks
 * followed.  Returns an fd or -1 with errno (ENOENT: it does not exist). */
static int open_dir (cg2_t *cg, const char *norm)
{
    char comp[NAME_MAX + 1];
    const char *p = norm;
    int fd = openat (cg->rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    while (fd >= 0 && *p) {
        const char *slash = strchr (p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen (p);
        int next;

        if (n > NAME_MAX) {
            close (fd);
            errno = ENAMETOOLONG;
            return -1;
        }
        memcpy (comp, p, n);
        comp[n] = '\0';
        next =
            openat (fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        close_keep_errno (fd);
        fd = next;
        p += n;
        if (*p == '/')
            p++;
    }
    return fd;
}

/* Read a whole file at dirfd into a malloc'd NUL-terminated buffer of at
 * most CG2_READ_MAX bytes.  -1 with errno (EFBIG if larger). */
static char *read_at (int dirfd, const char *file, size_t *lenp)
{
    size_t size = 4096, len = 0;
    char *buf = NULL;
    int fd;

    fd = openat (dirfd,
                 file,
                 O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return NULL;
    if (!(buf = malloc (size)))
        goto error;
    for (;;) {
        ssize_t n;

        if (len + 1 >= size) {
            char *nbuf;
            if (size >= CG2_READ_MAX) {
                errno = EFBIG;
                goto error;
            }
            size *= 2;
            if (!(nbuf = realloc (buf, size)))
                goto error;
            buf = nbuf;
        }
        n = read (fd, buf + len, size - len - 1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            goto error;
        }
        if (n == 0)
            break;
        len += n;
    }
    buf[len] = '\0';
    close (fd);
    if (lenp)
        *lenp = len;
    return buf;
error : {
    int saved = errno;
    free (buf);
    close (fd);
    errno = saved;
}
    return NULL;
}

/* One write of `value` to dirfd/file, which must exist (no O_CREAT). */
static int write_at (int dirfd, const char *file, const char *value)
{
    size_t len = strlen (value);
    ssize_t n;
    int fd;

    fd = openat (dirfd,
                 file,
                 O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
    if (fd < 0)
        return -1;
    do {
        n = write (fd, value, len);
    } while (n < 0 && errno == EINTR);
    if (n >= 0 && (size_t)n != len) {
        n = -1;
        errno = EIO;
    }
    if (close (fd) < 0 && n >= 0)
        n = -1;
    return n < 0 ? -1 : 0;
}

static const char *slash (const char *norm)
{
    return *norm ? "/" : "";
}

/* ---- mount discovery -------------------------------------------------------
 */

/* Undo mountinfo's octal escapes (\040 space, \011 tab, \012 newline,
 * \134 backslash) in place. */
static void unescape_octal (char *s)
{
    char *r = s, *w = s;

    while (*r) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0'
            && r[2] <= '7' && r[3] >= '0' && r[3] <= '7') {
            *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
            r += 4;
        } else
            *w++ = *r++;
    }
    *w = '\0';
}

int cg2_mountinfo_find (const char *mountinfo,
                        char *buf,
                        size_t size,
                        pin_error_t *errp)
{
    char *text, *line, *save = NULL;
    int rc = -1;

    if (!(text = read_at (AT_FDCWD, mountinfo, NULL)))
        return errprintf (errp, "%s: %s", mountinfo, strerror (errno));
    for (line = strtok_r (text, "\n", &save); line;
         line = strtok_r (NULL, "\n", &save)) {
        /* id parent maj:min root mountpoint options [opt...] - type src */
        char *sep = strstr (line, " - ");
        char *f[5];
        char *p = line;
        int i;

        if (!sep)
            continue;
        *sep = '\0';
        if (strncmp (sep + 3, "cgroup2 ", 8) != 0)
            continue;
        for (i = 0; i < 5; i++) {
            while (*p == ' ')
                p++;
            f[i] = p;
            while (*p && *p != ' ')
                p++;
            if (*p)
                *p++ = '\0';
        }
        if (f[4][0] != '/')
            continue;
        unescape_octal (f[4]);
        if (strlen (f[4]) >= size) {
            errno = ENAMETOOLONG;
            errprintf (errp, "%s: cgroup2 mount point too long", mountinfo);
            goto out;
        }
        snprintf (buf, size, "%s", f[4]);
        rc = 0;
        goto out;
    }
    errno = ENOENT;
    errprintf (errp,
               "%s: no cgroup2 file system is mounted; mount one or "
               "set CgroupRoot",
               mountinfo);
out : {
    int saved = errno;
    free (text);
    errno = saved;
}
    return rc;
}

/* ---- open / close ----------------------------------------------------------
 */

cg2_t *cg2_open (const char *root, pin_error_t *errp)
{
    cg2_t *cg;
    struct statfs sfs;
    char *ctl;
    size_t len;

    if (!(cg = calloc (1, sizeof (*cg)))) {
        errprintf (errp, "out of memory");
        return NULL;
    }
    cg->rootfd = -1;
    if (!root || strcmp (root, "auto") == 0) {
        if (cg2_mountinfo_find ("/proc/self/mountinfo",
                                cg->root,
                                sizeof (cg->root),
                                errp)
            < 0)
            goto error;
    } else {
        if (root[0] != '/' || strlen (root) >= sizeof (cg->root)) {
            errno = EINVAL;
            errprintf (errp,
                       "cgroup root '%.64s': not an absolute path; "
                       "give the cgroup2 mount or 'auto'",
                       root);
            goto error;
        }
        snprintf (cg->root, sizeof (cg->root), "%s", root);
    }
    cg->rootfd = open (cg->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (cg->rootfd < 0) {
        errprintf (errp, "cgroup root %s: %s", cg->root, strerror (errno));
        goto error;
    }
    if (fstatfs (cg->rootfd, &sfs) == 0
        && (unsigned long)sfs.f_type == (unsigned long)CGROUP2_SUPER_MAGIC)
        cg->cgroup2fs = true;
    if (!(ctl = read_at (cg->rootfd, "cgroup.controllers", &len))) {
        errprintf (errp,
                   "cgroup root %s: cannot read cgroup.controllers "
                   "(%s): not a cgroup v2 hierarchy; set CgroupRoot to the "
                   "cgroup2 mount or 'auto'",
                   cg->root,
                   strerror (errno));
        goto error;
    }
    if (len >= sizeof (cg->controllers)) {
        free (ctl);
        errno = EFBIG;
        errprintf (errp,
                   "cgroup root %s: cgroup.controllers too long",
                   cg->root);
        goto error;
    }
    snprintf (cg->controllers, sizeof (cg->controllers), "%s", ctl);
    free (ctl);
    return cg;
error:
    cg2_close (cg);
    return NULL;
}

void cg2_close (cg2_t *cg)
{
    if (cg) {
        int saved = errno;
        if (cg->rootfd >= 0)
            close (cg->rootfd);
        free (cg);
        errno = saved;
    }
}

const char *cg2_root (const cg2_t *cg)
{
    return cg ? cg->root : NULL;
}

bool cg2_is_cgroup2fs (const cg2_t *cg)
{
    return cg && cg->cgroup2fs;
}

/* Is `name` a whitespace-separated word of `list` (a leading '+' on a
 * word ignored, as written by the seam)? */
static bool word_in (const char *list, const char *name, size_t n)
{
    const char *p = list;

    while (*p) {
        const char *w;
        while (isspace ((unsigned char)*p))
            p++;
        if (*p == '+')
            p++;
        w = p;
        while (*p && !isspace ((unsigned char)*p))
            p++;
        if ((size_t)(p - w) == n && n > 0 && strncmp (w, name, n) == 0)
            return true;
    }
    return false;
}

bool cg2_has_controller (const cg2_t *cg, const char *controller)
{
    if (!cg || !controller)
        return false;
    return word_in (cg->controllers, controller, strlen (controller));
}

/* ---- /proc/PID/cgroup -----------------------------------------------------
 */

char *cg2_pid_path (pid_t pid, pin_error_t *errp)
{
    char dir[64];
    char *text, *line, *save = NULL, *path = NULL;
    int dirfd;

    if (pid <= 0) {
        errno = EINVAL;
        errprintf (errp, "pid %ld: not a process id", (long)pid);
        return NULL;
    }
    snprintf (dir, sizeof (dir), "/proc/%ld", (long)pid);
    if ((dirfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
        errprintf (errp,
                   "pid %ld: %s",
                   (long)pid,
                   errno == ENOENT ? "no such process" : strerror (errno));
        if (errno == ENOENT)
            errno = ESRCH;
        return NULL;
    }
    text = read_at (dirfd, "cgroup", NULL);
    close_keep_errno (dirfd);
    if (!text) {
        errprintf (errp, "%s/cgroup: %s", dir, strerror (errno));
        return NULL;
    }
    for (line = strtok_r (text, "\n", &save); line;
         line = strtok_r (NULL, "\n", &save)) {
        if (strncmp (line, "0::", 3) == 0 && line[3] == '/') {
            if (!(path = strdup (line + 3)))
                errprintf (errp, "out of memory");
            break;
        }
    }
    if (!line) {
        errno = ENOENT;
        errprintf (errp, "%s/cgroup: no cgroup v2 (0::) line", dir);
    }
    {
        int saved = errno;
        free (text);
        errno = saved;
    }
    return path;
}

/* ---- create / write / read ------------------------------------------------
 */

/* Parse "+cpuset +cpu" (or "cpuset cpu") into "+cpuset +cpu" with only
 * controllers the root offers.  "" if none. */
static int enable_string (cg2_t *cg,
                          const char *controllers,
                          char *out,
                          size_t size,
                          pin_error_t *errp)
{
    const char *p = controllers ? controllers : "";
    size_t len = 0;

    out[0] = '\0';
    while (*p) {
        const char *w;
        size_t n, i;

        while (isspace ((unsigned char)*p))
            p++;
        if (!*p)
            break;
        if (*p == '+')
            p++;
        w = p;
        while (*p && !isspace ((unsigned char)*p))
            p++;
        n = p - w;
        for (i = 0; i < n; i++)
            if (!islower ((unsigned char)w[i])
                && !isdigit ((unsigned char)w[i]) && w[i] != '_')
                break;
        if (n == 0 || n > 32 || i < n) {
            errno = EINVAL;
            return errprintf (errp,
                              "controllers '%.64s': give names like "
                              "\"+cpuset +cpu\"",
                              controllers);
        }
        if (!word_in (cg->controllers, w, n))
            continue;
        if (len + n + 3 > size) {
            errno = EINVAL;
            return errprintf (errp,
                              "controllers '%.64s': too many",
                              controllers);
        }
        len += snprintf (out + len,
                         size - len,
                         "%s+%.*s",
                         len ? " " : "",
                         (int)n,
                         w);
    }
    return 0;
}

/* Enable `enable` ("+a +b") in dirfd's cgroup.subtree_control unless every
 * one is already there. */
static int enable_at (cg2_t *cg,
                      int dirfd,
                      const char *norm,
                      const char *enable,
                      pin_error_t *errp)
{
    const char *p = enable;
    char *cur;
    bool all = true;

    if (!*enable)
        return 0;
    if ((cur = read_at (dirfd, "cgroup.subtree_control", NULL))) {
        while (*p && all) {
            const char *w = ++p; /* skip '+' */
            while (*p && *p != ' ')
                p++;
            if (!word_in (cur, w, p - w))
                all = false;
            while (*p == ' ')
                p++;
        }
        free (cur);
        if (all)
            return 0;
    }
    if (write_at (dirfd, "cgroup.subtree_control", enable) < 0) {
        int e = errno;
        return errprintf (errp,
                          "%s%s%s/cgroup.subtree_control: write '%s': "
                          "%s%s",
                          cg->root,
                          slash (norm),
                          norm,
                          enable,
                          strerror (e),
                          e == EBUSY ? "; it holds processes: move them to "
                                       "a leaf first"
                                     : "");
    }
    return 0;
}

int cg2_create (cg2_t *cg,
                const char *relpath,
                const char *controllers,
                pin_error_t *errp)
{
    char norm[PATH_MAX];
    char enable[256];
    char done[PATH_MAX]; /* the path so far */
    bool created[CG2_MAX_DEPTH] = {false};
    size_t dlen[CG2_MAX_DEPTH]; /* strlen (done) after level i */
    const char *p;
    int fd, depth = 0;

    if (!cg) {
        errno = EINVAL;
        return errprintf (errp, "cg2_create: no hierarchy");
    }
    if (cg2_relpath_normalize (relpath, norm, sizeof (norm), errp) < 0)
        return -1;
    if (!*norm) {
        errno = EINVAL;
        return errprintf (errp,
                          "cg2_create: the root itself cannot be "
                          "created; give a path below it");
    }
    if (enable_string (cg, controllers, enable, sizeof (enable), errp) < 0)
        return -1;
    if ((fd = openat (cg->rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC))
        < 0)
        return errprintf (errp, "%s: %s", cg->root, strerror (errno));
    done[0] = '\0';
    for (p = norm; *p; depth++) {
        const char *sl = strchr (p, '/');
        size_t n = sl ? (size_t)(sl - p) : strlen (p);
        size_t len = strlen (done);
        char comp[NAME_MAX + 1];
        int next;

        if (n > NAME_MAX) {
            errno = ENAMETOOLONG;
            errprintf (errp, "cgroup path '%.64s': component too long", norm);
            goto error;
        }
        memcpy (comp, p, n);
        comp[n] = '\0';
        /* top-down: the parent's subtree_control before its child exists */
        if (enable_at (cg, fd, done, enable, errp) < 0)
            goto error;
        snprintf (done + len,
                  sizeof (done) - len,
                  "%s%s",
                  len ? "/" : "",
                  comp);
        dlen[depth] = strlen (done);
        if (mkdirat (fd, comp, 0755) == 0)
            created[depth] = true;
        else if (errno != EEXIST) {
            errprintf (errp,
                       "%s/%s: mkdir: %s",
                       cg->root,
                       done,
                       strerror (errno));
            goto error;
        }
        next =
            openat (fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0) {
            errprintf (errp, "%s/%s: %s", cg->root, done, strerror (errno));
            goto error;
        }
        close (fd);
        fd = next;
        p += n;
        if (*p == '/')
            p++;
    }
    close (fd);
    return 0;
error:
    close_keep_errno (fd);
    /* no side effects: remove the directories this call made, deepest
     * first (subtree_control changes stay: they are harmless) */
    {
        int saved = errno;
        for (; depth >= 0; depth--) {
            if (created[depth]) {
                done[dlen[depth]] = '\0';
                (void)unlinkat (cg->rootfd, done, AT_REMOVEDIR);
            }
        }
        errno = saved;
    }
    return -1;
}

int cg2_write (cg2_t *cg,
               const char *relpath,
               const char *file,
               const char *value,
               pin_error_t *errp)
{
    char norm[PATH_MAX];
    int fd;

    if (!cg || !value) {
        errno = EINVAL;
        return errprintf (errp, "cg2_write: invalid arguments");
    }
    if (cg2_relpath_normalize (relpath, norm, sizeof (norm), errp) < 0
        || check_file_name (file, errp) < 0)
        return -1;
    if ((fd = open_dir (cg, norm)) < 0)
        return errprintf (errp,
                          "%s%s%s: %s",
                          cg->root,
                          slash (norm),
                          norm,
                          strerror (errno));
    if (write_at (fd, file, value) < 0) {
        int e = errno;
        close (fd);
        errno = e;
        return errprintf (errp,
                          "%s%s%s/%s: write '%.40s': %s",
                          cg->root,
                          slash (norm),
                          norm,
                          file,
                          value,
                          strerror (e));
    }
    close (fd);
    return 0;
}

static char *read_file (cg2_t *cg,
                        const char *norm,
                        int fd,
                        const char *file,
                        pin_error_t *errp)
{
    size_t len;
    char *s = read_at (fd, file, &len);

    if (!s) {
        errprintf (errp,
                   "%s%s%s/%s: %s",
                   cg->root,
                   slash (norm),
                   norm,
                   file,
                   strerror (errno));
        return NULL;
    }
    if (len > 0 && s[len - 1] == '\n')
        s[len - 1] = '\0';
    return s;
}

char *cg2_read (cg2_t *cg,
                const char *relpath,
                const char *file,
                pin_error_t *errp)
{
    char norm[PATH_MAX];
    char *s;
    int fd;

    if (!cg) {
        errno = EINVAL;
        errprintf (errp, "cg2_read: no hierarchy");
        return NULL;
    }
    if (cg2_relpath_normalize (relpath, norm, sizeof (norm), errp) < 0
        || check_file_name (file, errp) < 0)
        return NULL;
    if ((fd = open_dir (cg, norm)) < 0) {
        errprintf (errp,
                   "%s%s%s: %s",
                   cg->root,
                   slash (norm),
                   norm,
                   strerror (errno));
        return NULL;
    }
    s = read_file (cg, norm, fd, file, errp);
    close_keep_errno (fd);
    return s;
}

/* ---- cpuset ----------------------------------------------------------------
 */

static int check_set (hwloc_const_bitmap_t set,
                      const char *what,
                      pin_error_t *errp)
{
    if (hwloc_bitmap_iszero (set) || hwloc_bitmap_weight (set) < 0) {
        errno = EINVAL;
        return errprintf (errp,
                          "%s: the set is empty or infinite; give at "
                          "least one and finitely many",
                          what);
    }
    return 0;
}

int cg2_set_cpuset (cg2_t *cg,
                    const char *relpath,
                    hwloc_const_bitmap_t cpus,
                    hwloc_const_bitmap_t mems,
                    pin_error_t *errp)
{
    char norm[PATH_MAX];
    char *cs = NULL, *ms = NULL, *eff = NULL;
    hwloc_bitmap_t effset = NULL;
    int fd = -1, rc = -1;

    if (!cg) {
        errno = EINVAL;
        return errprintf (errp, "cg2_set_cpuset: no hierarchy");
    }
    if (cg2_relpath_normalize (relpath, norm, sizeof (norm), errp) < 0)
        return -1;
    if ((cpus && check_set (cpus, "cpuset.cpus", errp) < 0)
        || (mems && check_set (mems, "cpuset.mems", errp) < 0))
        return -1;
    if ((cpus && !(cs = topo_list_format (cpus)))
        || (mems && !(ms = topo_list_format (mems)))) {
        errprintf (errp, "out of memory");
        goto out;
    }
    if ((fd = open_dir (cg, norm)) < 0) {
        errprintf (errp,
                   "%s%s%s: %s",
                   cg->root,
                   slash (norm),
                   norm,
                   strerror (errno));
        goto out;
    }
    /* cpus before mems (FACTS.md, Slurm's cgroup/v2 does the same) */
    if (cs && write_at (fd, "cpuset.cpus", cs) < 0) {
        errprintf (errp,
                   "%s%s%s/cpuset.cpus: write '%.64s': %s",
                   cg->root,
                   slash (norm),
                   norm,
                   cs,
                   strerror (errno));
        goto out;
    }
    if (ms && write_at (fd, "cpuset.mems", ms) < 0) {
        errprintf (errp,
                   "%s%s%s/cpuset.mems: write '%.64s': %s",
                   cg->root,
                   slash (norm),
                   norm,
                   ms,
                   strerror (errno));
        goto out;
    }
    if (cs) {
        pin_error_t perr;

        if (!(eff = read_file (cg, norm, fd, "cpuset.cpus.effective", errp)))
            goto out;
        if (!(effset = hwloc_bitmap_alloc ())) {
            errprintf (errp, "out of memory");
            goto out;
        }
        if (topo_list_parse (eff, effset, &perr) < 0) {
            errno = EIO;
            errprintf (errp,
                       "%s%s%s/cpuset.cpus.effective: '%.64s': %s",
                       cg->root,
                       slash (norm),
                       norm,
                       eff,
                       perr.text);
            goto out;
        }
        if (!hwloc_bitmap_isequal (effset, cpus)) {
            errno = EIO;
            errprintf (errp,
                       "%s: cpuset.cpus.effective is '%.64s' after "
                       "writing cpuset.cpus=%.64s; the parent cgroup does "
                       "not allow those CPUs",
                       *norm ? norm : cg->root,
                       eff,
                       cs);
            goto out;
        }
    }
    rc = 0;
out : {
    int saved = errno;
    if (fd >= 0)
        close (fd);
    free (cs);
    free (ms);
    free (eff);
    hwloc_bitmap_free (effset);
    errno = saved;
}
    return rc;
}

int cg2_attach (cg2_t *cg, const char *relpath, pid_t pid, pin_error_t *errp)
{
    char value[32];

    if (pid <= 0) {
        errno = EINVAL;
        return errprintf (errp, "pid %ld: not a process id", (long)pid);
    }
    snprintf (value, sizeof (value), "%ld", (long)pid);
    if (cg2_write (cg, relpath, "cgroup.procs", value, errp) < 0) {
        if (errno == EBUSY || errno == EOPNOTSUPP) {
            char norm[PATH_MAX];
            if (cg2_relpath_normalize (relpath, norm, sizeof (norm), NULL)
                == 0)
                errprintf (errp,
                           "%s: cannot hold processes (%s): it has "
                           "controllers in cgroup.subtree_control; attach "
                           "to a leaf",
                           norm,
                           strerror (errno));
        } else if (errno == ESRCH)
            errprintf (errp, "pid %ld: no such process", (long)pid);
        return -1;
    }
    return 0;
}

/* "populated 1" in cgroup.events: 1, "populated 0": 0, no such line or
 * file: -1. */
static int events_populated (int dirfd)
{
    char *s = read_at (dirfd, "cgroup.events", NULL);
    char *line, *save = NULL;
    int rc = -1;

    if (!s)
        return -1;
    for (line = strtok_r (s, "\n", &save); line;
         line = strtok_r (NULL, "\n", &save)) {
        if (strcmp (line, "populated 1") == 0)
            rc = 1;
        else if (strcmp (line, "populated 0") == 0)
            rc = 0;
    }
    free (s);
    return rc;
}

/* Subdirectory names of dirfd (no symlinks), malloc'd NULL-terminated
 * array; NULL with errno on error. */
static char **list_subdirs (int dirfd, bool files_too)
{
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *d;
    DIR *dir;
    int fd = openat (dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    if (fd < 0 || !(dir = fdopendir (fd))) {
        close_keep_errno (fd);
        return NULL;
    }
    errno = 0;
    while ((d = readdir (dir))) {
        unsigned char type = d->d_type;
        if (strcmp (d->d_name, ".") == 0 || strcmp (d->d_name, "..") == 0)
            continue;
        if (type == DT_UNKNOWN) {
            struct stat st;
            if (fstatat (dirfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                continue;
            type = S_ISDIR (st.st_mode) ? DT_DIR : DT_REG;
        }
        if (type != DT_DIR && !files_too)
            continue;
        if (n + 2 > cap) {
            char **nn;
            if (cap >= CG2_MAX_ENTRIES) {
                errno = E2BIG;
                goto error;
            }
            cap = cap ? cap * 2 : 16;
            if (!(nn = realloc (names, cap * sizeof (*names))))
                goto error;
            names = nn;
        }
        /* files_too: mark directories with a trailing '/' */
        if (files_too && type == DT_DIR) {
            size_t len = strlen (d->d_name);
            if (!(names[n] = malloc (len + 2)))
                goto error;
            memcpy (names[n], d->d_name, len);
            strcpy (names[n] + len, "/");
        } else if (!(names[n] = strdup (d->d_name)))
            goto error;
        names[++n] = NULL;
        errno = 0;
    }
    if (errno != 0)
        goto error;
    closedir (dir);
    if (!names)
        names = calloc (1, sizeof (*names));
    return names;
error : {
    int saved = errno;
    size_t i;
    for (i = 0; i < n; i++)
        free (names[i]);
    free (names);
    closedir (dir);
    errno = saved;
}
    return NULL;
}

static void free_names (char **names)
{
    if (names) {
        int saved = errno;
        char **p;
        for (p = names; *p; p++)
            free (*p);
        free (names);
        errno = saved;
    }
}

/* Any process in dirfd's cgroup.procs or a descendant's (bounded). */
static bool procs_populated (int dirfd, int depth)
{
    char **names, **p;
    char *s;
    bool found = false;

    if ((s = read_at (dirfd, "cgroup.procs", NULL))) {
        found = s[strspn (s, " \n")] != '\0';
        free (s);
    }
    if (found || depth >= CG2_MAX_DEPTH
        || !(names = list_subdirs (dirfd, false)))
        return found;
    for (p = names; *p && !found; p++) {
        int fd = openat (dirfd,
                         *p,
                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0) {
            found = procs_populated (fd, depth + 1);
            close (fd);
        }
    }
    free_names (names);
    return found;
}

bool cg2_populated (cg2_t *cg, const char *relpath)
{
    char norm[PATH_MAX];
    bool populated;
    int fd, ev;

    if (!cg || cg2_relpath_normalize (relpath, norm, sizeof (norm), NULL) < 0)
        return false;
    if ((fd = open_dir (cg, norm)) < 0)
        return false;
    ev = events_populated (fd);
    populated = ev >= 0 ? ev == 1 : procs_populated (fd, 0);
    close_keep_errno (fd);
    return populated;
}

/* ---- cpu.stat
 * ---------------------------------------------------------------- */

int cg2_parse_cpu_stat (const char *text,
                        struct cg2_cpu_stat *st,
                        pin_error_t *errp)
{
    static const struct {
        const char *key;
        size_t off;
    } fields[] = {
        {"usage_usec", offsetof (struct cg2_cpu_stat, usage_usec)},
        {"user_usec", offsetof (struct cg2_cpu_stat, user_usec)},
        {"system_usec", offsetof (struct cg2_cpu_stat, system_usec)},
        {"nr_periods", offsetof (struct cg2_cpu_stat, nr_periods)},
        {"nr_throttled", offsetof (struct cg2_cpu_stat, nr_throttled)},
        {"throttled_usec", offsetof (struct cg2_cpu_stat, throttled_usec)},
    };
    struct cg2_cpu_stat tmp;
    const char *p = text ? text : "";
    bool have_usage = false;
    int lineno = 0;
    size_t len = 0;

    memset (&tmp, 0, sizeof (tmp));
    while (*p) {
        const char *eol = strchr (p, '\n');
        const char *sp;
        char num[32];
        unsigned long long v;
        char *end;
        size_t i, klen, nlen;

        len = eol ? (size_t)(eol - p) : strlen (p);
        sp = memchr (p, ' ', len);
        lineno++;
        if (len > 0) {
            if (!sp || sp == p)
                goto bad;
            klen = sp - p;
            nlen = len - klen - 1;
            if (nlen == 0 || nlen >= sizeof (num))
                goto bad;
            memcpy (num, sp + 1, nlen);
            num[nlen] = '\0';
            if (!isdigit ((unsigned char)num[0]))
                goto bad;
            errno = 0;
            v = strtoull (num, &end, 10);
            if (errno != 0 || *end != '\0')
                goto bad;
            for (i = 0; i < sizeof (fields) / sizeof (fields[0]); i++) {
                if (strlen (fields[i].key) == klen
                    && strncmp (fields[i].key, p, klen) == 0) {
                    *(uint64_t *)((char *)&tmp + fields[i].off) = v;
                    if (i == 0)
                        have_usage = true;
                }
            }
        }
        p += len;
        if (*p == '\n')
            p++;
    }
    if (!have_usage) {
        errno = EINVAL;
        return errprintf (errp, "cpu.stat: no usage_usec line");
    }
    *st = tmp;
    return 0;
bad : {
    /* at most 64 bytes of the line, unprintable ones as '?', so that
     * the message stays one printable line */
    char shown[65];
    size_t i, n = len > 64 ? 64 : len;

    for (i = 0; i < n; i++)
        shown[i] = isprint ((unsigned char)p[i]) ? p[i] : '?';
    shown[n] = '\0';
    errno = EINVAL;
    return errprintf (errp,
                      "cpu.stat: line %d is not 'key value': "
                      "'%s'",
                      lineno,
                      shown);
}
}

int cg2_read_cpu_stat (cg2_t *cg,
                       const char *relpath,
                       struct cg2_cpu_stat *st,
                       pin_error_t *errp)
{
    pin_error_t perr;
    char *s;
    int rc;

    if (!st) {
        errno = EINVAL;
        return errprintf (errp, "cg2_read_cpu_stat: no result");
    }
    if (!(s = cg2_read (cg, relpath, "cpu.stat", errp)))
        return -1;
    rc = cg2_parse_cpu_stat (s, st, &perr);
    if (rc < 0) {
        char norm[PATH_MAX];
        if (cg2_relpath_normalize (relpath, norm, sizeof (norm), NULL) < 0)
            norm[0] = '\0';
        errprintf (errp, "%s%s%s/%s", cg->root, slash (norm), norm, perr.text);
    }
    {
        int saved = errno;
        free (s);
        errno = saved;
    }
    return rc;
}

/* ---- remove ----------------------------------------------------------------
 */

/* A cgroup interface file name: "<controller>.<name>" of [a-z0-9_.]. */
static bool interface_file_name (const char *name)
{
    const char *dot = strchr (name, '.');
    const char *p;

    if (!dot || dot == name || dot[1] == '\0')
        return false;
    for (p = name; *p; p++)
        if (!islower ((unsigned char)*p) && !isdigit ((unsigned char)*p)
            && *p != '_' && *p != '.')
            return false;
    return true;
}

static int rmdir_retry (int dirfd, const char *name, int64_t deadline)
{
    for (;;) {
        int64_t left;
        if (unlinkat (dirfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
            return 0;
        if (errno != EBUSY)
            return -1;
        left = deadline - now_ms ();
        if (left <= 0) {
            errno = EBUSY;
            return -1;
        }
        sleep_ms (left < 10 ? (int)left : 10);
    }
}

/* Remove everything below dirfd (whose path is `path`), deepest first. */
static int remove_below (cg2_t *cg,
                         int dirfd,
                         char *path,
                         size_t size,
                         int depth,
                         int64_t deadline,
                         pin_error_t *errp)
{
    char **names, **p;
    size_t plen = strlen (path);
    int rc = 0;

    if (depth > CG2_MAX_DEPTH) {
        errno = ELOOP;
        return errprintf (errp,
                          "%s/%s: deeper than %d levels",
                          cg->root,
                          path,
                          CG2_MAX_DEPTH);
    }
    if (!(names = list_subdirs (dirfd, true)))
        return errprintf (errp, "%s/%s: %s", cg->root, path, strerror (errno));
    for (p = names; *p && rc == 0; p++) {
        size_t len = strlen (*p);
        if (len > 0 && (*p)[len - 1] == '/') {
            int fd;
            (*p)[len - 1] = '\0';
            snprintf (path + plen, size - plen, "/%s", *p);
            fd = openat (dirfd,
                         *p,
                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (fd < 0) {
                if (errno != ENOENT)
                    rc = errprintf (errp,
                                    "%s/%s: %s",
                                    cg->root,
                                    path,
                                    strerror (errno));
            } else {
                rc = remove_below (cg,
                                   fd,
                                   path,
                                   size,
                                   depth + 1,
                                   deadline,
                                   errp);
                close_keep_errno (fd);
                if (rc == 0 && rmdir_retry (dirfd, *p, deadline) < 0)
                    rc = errprintf (errp,
                                    "%s/%s: rmdir: %s",
                                    cg->root,
                                    path,
                                    strerror (errno));
            }
            path[plen] = '\0';
        } else if (!cg->cgroup2fs && interface_file_name (*p)) {
            /* the seam: plain files stand for interface files, which the
             * kernel removes with the directory on a real cgroup2 fs */
            if (unlinkat (dirfd, *p, 0) < 0 && errno != ENOENT)
                rc = errprintf (errp,
                                "%s/%s/%s: unlink: %s",
                                cg->root,
                                path,
                                *p,
                                strerror (errno));
        }
    }
    free_names (names);
    return rc;
}

/* cg2_remove_tree() and cg2_remove_below(): `keep` leaves relpath itself. */
static int remove_tree (cg2_t *cg,
                        const char *relpath,
                        int timeout_ms,
                        bool keep,
                        pin_error_t *errp)
{
    const char *fn = keep ? "cg2_remove_below" : "cg2_remove_tree";
    char norm[PATH_MAX];
    char path[PATH_MAX];
    char *leaf;
    int64_t deadline = now_ms () + (timeout_ms > 0 ? timeout_ms : 0);
    int pfd, fd, rc;

    if (!cg) {
        errno = EINVAL;
        return errprintf (errp, "%s: no hierarchy", fn);
    }
    if (cg2_relpath_normalize (relpath, norm, sizeof (norm), errp) < 0)
        return -1;
    if (!*norm) {
        errno = EINVAL;
        return errprintf (errp,
                          "%s: refusing to remove the root; give a "
                          "path below it",
                          fn);
    }
    /* the parent, then the leaf */
    snprintf (path, sizeof (path), "%s", norm);
    if ((leaf = strrchr (path, '/'))) {
        *leaf++ = '\0';
        pfd = open_dir (cg, path);
    } else {
        leaf = path;
        pfd = open_dir (cg, "");
    }
    if (pfd < 0) {
        if (errno == ENOENT)
            return 0;
        return errprintf (errp, "%s/%s: %s", cg->root, norm, strerror (errno));
    }
    fd = openat (pfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        close (pfd);
        errno = e;
        if (e == ENOENT)
            return 0;
        return errprintf (errp, "%s/%s: %s", cg->root, norm, strerror (e));
    }
    {
        char walk[PATH_MAX];
        snprintf (walk, sizeof (walk), "%s", norm);
        rc = remove_below (cg, fd, walk, sizeof (walk), 1, deadline, errp);
    }
    close_keep_errno (fd);
    if (rc == 0 && !keep && rmdir_retry (pfd, leaf, deadline) < 0)
        rc = errprintf (errp,
                        "%s/%s: rmdir: %s%s",
                        cg->root,
                        norm,
                        strerror (errno),
                        errno == EBUSY ? " (processes still in it?)" : "");
    close_keep_errno (pfd);
    return rc;
}

int cg2_remove_tree (cg2_t *cg,
                     const char *relpath,
                     int timeout_ms,
                     pin_error_t *errp)
{
    return remove_tree (cg, relpath, timeout_ms, false, errp);
}

int cg2_remove_below (cg2_t *cg,
                      const char *relpath,
                      int timeout_ms,
                      pin_error_t *errp)
{
    return remove_tree (cg, relpath, timeout_ms, true, errp);
}

/* ---- children
 * ------------------------------------------------------------------ */

int cg2_has_children (cg2_t *cg,
                      const char *relpath,
                      bool *any,
                      pin_error_t *errp)
{
    char norm[PATH_MAX];
    char **names;
    int fd;

    if (!cg || !any) {
        errno = EINVAL;
        return errprintf (errp, "cg2_has_children: invalid arguments");
    }
    *any = false;
    if (cg2_relpath_normalize (relpath, norm, sizeof (norm), errp) < 0)
        return -1;
    if ((fd = open_dir (cg, norm)) < 0) {
        if (errno == ENOENT)
            return 0;
        return errprintf (errp,
                          "%s%s%s: %s",
                          cg->root,
                          slash (norm),
                          norm,
                          strerror (errno));
    }
    if (!(names = list_subdirs (fd, false))) {
        errprintf (errp,
                   "%s%s%s: %s",
                   cg->root,
                   slash (norm),
                   norm,
                   strerror (errno));
        close_keep_errno (fd);
        return -1;
    }
    *any = names[0] != NULL;
    free_names (names);
    close (fd);
    return 0;
}

/* ---- busy PUs
 * ------------------------------------------------------------------- */

struct busy_walk {
    cg2_t *cg;
    size_t start_len; /* strlen of the normalized start */
    cg2_busy_filter_f filter;
    void *arg;
};

/* Add to `out` the PUs held below dirfd (path `path`).  Returns 1 if
 * something was added, 0 if not, -1 on error. */
static int busy_below (struct busy_walk *w,
                       int dirfd,
                       char *path,
                       size_t size,
                       int depth,
                       hwloc_bitmap_t out,
                       pin_error_t *errp)
{
    cg2_t *cg = w->cg;
    char **names, **p;
    size_t plen = strlen (path);
    int added = 0;

    if (depth > CG2_MAX_DEPTH)
        return 0;
    if (!(names = list_subdirs (dirfd, false)))
        return errprintf (errp, "%s/%s: %s", cg->root, path, strerror (errno));
    for (p = names; *p; p++) {
        enum cg2_busy_verdict v;
        const char *sub;
        int fd, r = 0;

        snprintf (path + plen, size - plen, "%s%s", plen ? "/" : "", *p);
        sub = path + w->start_len + (w->start_len ? 1 : 0);
        v = w->filter (path, sub, *p, w->arg);
        if (v == CG2_BUSY_SKIP)
            goto next;
        fd = openat (dirfd,
                     *p,
                     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            goto next; /* gone meanwhile */
        if (v == CG2_BUSY_DESCEND)
            r = busy_below (w, fd, path, size, depth + 1, out, errp);
        else if (events_populated (fd) == 1) {
            /* the deepest populated holders with a cpuset count; this
             * one only if none below it does */
            hwloc_bitmap_t below = hwloc_bitmap_alloc ();
            if (!below) {
                close (fd);
                r = errprintf (errp, "out of memory");
                goto next_err;
            }
            r = busy_below (w, fd, path, size, depth + 1, below, errp);
            if (r > 0)
                hwloc_bitmap_or (out, out, below);
            else if (r == 0) {
                char *s = read_at (fd, "cpuset.cpus", NULL);
                if (s) {
                    pin_error_t perr;
                    hwloc_bitmap_zero (below);
                    s[strcspn (s, "\n")] = '\0';
                    if (topo_list_parse (s, below, &perr) < 0) {
                        errno = EIO;
                        r = errprintf (errp,
                                       "%s/%s/cpuset.cpus: %s",
                                       cg->root,
                                       path,
                                       perr.text);
                    } else if (!hwloc_bitmap_iszero (below)) {
                        hwloc_bitmap_or (out, out, below);
                        r = 1;
                    }
                    free (s);
                }
            }
            hwloc_bitmap_free (below);
        }
        close_keep_errno (fd);
    next_err:
        if (r < 0) {
            free_names (names);
            return -1;
        }
        if (r > 0)
            added = 1;
    next:
        path[plen] = '\0';
    }
    free_names (names);
    return added;
}

int cg2_busy_cpus_filter (cg2_t *cg,
                          const char *relpath,
                          cg2_busy_filter_f filter,
                          void *arg,
                          hwloc_bitmap_t busy,
                          pin_error_t *errp)
{
    struct busy_walk w = {cg, 0, filter, arg};
    char norm[PATH_MAX];
    char walk[PATH_MAX];
    int fd, rc;

    if (!cg || !busy || !filter) {
        errno = EINVAL;
        return errprintf (errp, "cg2_busy_cpus: invalid arguments");
    }
    if (cg2_relpath_normalize (relpath, norm, sizeof (norm), errp) < 0)
        return -1;
    if ((fd = open_dir (cg, norm)) < 0) {
        if (errno == ENOENT)
            return 0; /* no tree, nothing running */
        return errprintf (errp,
                          "%s%s%s: %s",
                          cg->root,
                          slash (norm),
                          norm,
                          strerror (errno));
    }
    snprintf (walk, sizeof (walk), "%s", norm);
    w.start_len = strlen (norm);
    rc = busy_below (&w, fd, walk, sizeof (walk), 1, busy, errp);
    close_keep_errno (fd);
    return rc < 0 ? -1 : 0;
}

/* The default rules: every step_* or task_* directory holds, except
 * `exclude` (normalized, from the root) and what is below it. */
static enum cg2_busy_verdict step_or_task (const char *path,
                                           const char *sub,
                                           const char *name,
                                           void *arg)
{
    const char *exclude = arg;

    (void)sub;
    if (exclude && strcmp (path, exclude) == 0)
        return CG2_BUSY_SKIP;
    if (strncmp (name, "step_", 5) == 0 || strncmp (name, "task_", 5) == 0)
        return CG2_BUSY_HOLDER;
    return CG2_BUSY_DESCEND;
}

int cg2_busy_cpus (cg2_t *cg,
                   const char *relpath,
                   const char *exclude,
                   hwloc_bitmap_t busy,
                   pin_error_t *errp)
{
    char ex[PATH_MAX];

    if (exclude && cg2_relpath_normalize (exclude, ex, sizeof (ex), errp) < 0)
        return -1;
    return cg2_busy_cpus_filter (cg,
                                 relpath,
                                 step_or_task,
                                 exclude ? ex : NULL,
                                 busy,
                                 errp);
}

/* vi: ts=4 sw=4 expandtab
 */
