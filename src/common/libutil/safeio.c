/* safeio.c - open a file named by a user: never block on a FIFO, never
 * write through another user's symbolic link */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safeio.h"

#define MAX_LINKS 40

static void close_keep_errno (int fd)
{
    int saved = errno;
    if (fd >= 0)
        close (fd);
    errno = saved;
}

const char *safein_kind (mode_t mode)
{
    switch (mode & S_IFMT) {
        case S_IFREG:
            return "a regular file";
        case S_IFDIR:
            return "a directory";
        case S_IFIFO:
            return "a FIFO";
        case S_IFCHR:
            return "a character device";
        case S_IFBLK:
            return "a block device";
        case S_IFSOCK:
            return "a socket";
        case S_IFLNK:
            return "a symbolic link";
        default:
            return "an unknown file type";
    }
}

int safein_open (const char *path, int flags, pin_error_t *errp)
{
    struct stat st;
    int fd, fl;

    if (!path || !*path) {
        errno = ENOENT;
        return errprintf (errp, "'': cannot open: %s", strerror (errno));
    }
    /* O_NONBLOCK: open() of a FIFO with no writer returns at once */
    fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | flags);
    if (fd < 0)
        return errprintf (errp, "%s: cannot open: %s", path, strerror (errno));
    if (fstat (fd, &st) < 0) {
        close_keep_errno (fd);
        return errprintf (errp, "%s: cannot open: %s", path, strerror (errno));
    }
    if (!S_ISREG (st.st_mode)) {
        close (fd);
        errno = EINVAL;
        return errprintf (errp,
                          "%s: %s, not a regular file",
                          path,
                          safein_kind (st.st_mode));
    }
    if ((fl = fcntl (fd, F_GETFL)) < 0
        || fcntl (fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
        close_keep_errno (fd);
        return errprintf (errp, "%s: cannot open: %s", path, strerror (errno));
    }
    return fd;
}

FILE *safein_fopen (const char *path, pin_error_t *errp)
{
    int fd = safein_open (path, 0, errp);
    FILE *f;

    if (fd < 0)
        return NULL;
    if (!(f = fdopen (fd, "r"))) {
        close_keep_errno (fd);
        errprintf (errp, "%s: cannot open: %s", path, strerror (errno));
    }
    return f;
}

/* ---- the walk ----------------------------------------------------------- */

static bool trusted (uid_t uid)
{
    return uid == 0 || uid == geteuid ();
}

/* Whose is the link `lst` in the directory `dst`?  0 if root's or the
 * caller's alone; else -1, with *who the one other user who controls it
 * (EPERM, and errp, if nobody or several could have put it there). */
static int link_owner (const struct stat *lst,
                       const struct stat *dst,
                       const char *shown,
                       uid_t *who,
                       bool *other,
                       pin_error_t *errp)
{
    uid_t u[2];
    int n = 0, i;

    if (!(dst->st_mode & S_ISVTX) && (dst->st_mode & 022)) {
        errno = EPERM;
        return errprintf (errp,
                          "%s: a symbolic link in a directory that "
                          "group or others can write; not followed (give "
                          "the real path)",
                          shown);
    }
    if (!trusted (lst->st_uid))
        u[n++] = lst->st_uid;
    if (!trusted (dst->st_uid)) /* it can rename any link into it */
        u[n++] = dst->st_uid;
    for (i = 0; i < n; i++) {
        if (*other && *who != u[i]) {
            errno = EPERM;
            return errprintf (errp,
                              "%s: a symbolic link of uid %u on a "
                              "path through a link of uid %u; not followed "
                              "(give the real path)",
                              shown,
                              (unsigned)u[i],
                              (unsigned)*who);
        }
        *who = u[i];
        *other = true;
    }
    return 0;
}

/* Walk `dir` (a path, may be relative, may be "") down to the directory
 * it names, by the rule in safeio.h; an O_PATH fd, or -1. */
static int walk (const char *path,
                 const char *verb,
                 const char *dir,
                 pin_error_t *errp)
{
    char rest[PATH_MAX], shown[PATH_MAX], target[PATH_MAX];
    char name[NAME_MAX + 1];
    char via[PATH_MAX] = "";
    uid_t who = 0;
    bool other = false;
    int links = 0, dfd;
    size_t off;
    const char *p;
    struct stat st;

    snprintf (rest, sizeof (rest), "%s", dir);
    snprintf (shown, sizeof (shown), "%s", rest[0] == '/' ? "/" : "");
    dfd = open (rest[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return errprintf (errp,
                          "%s: cannot %s: %s: %s",
                          path,
                          verb,
                          shown[0] ? shown : ".",
                          strerror (errno));
    p = rest;
    while (*p) {
        size_t len;
        int fd;

        while (*p == '/')
            p++;
        if (!*p)
            break;
        len = strcspn (p, "/");
        if (len > NAME_MAX) {
            close (dfd);
            errno = ENAMETOOLONG;
            return errprintf (errp, "%.64s...: component too long", path);
        }
        memcpy (name, p, len);
        name[len] = '\0';
        p += len;
        if (strcmp (name, ".") == 0)
            continue;
        off = strlen (shown);
        snprintf (shown + off,
                  sizeof (shown) - off,
                  "%s%s",
                  !off || shown[off - 1] == '/' ? "" : "/",
                  name);
        fd = openat (dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || fstat (fd, &st) < 0) {
            close_keep_errno (fd);
            close_keep_errno (dfd);
            return errprintf (errp,
                              "%s: cannot %s: %s: %s",
                              path,
                              verb,
                              shown,
                              strerror (errno));
        }
        if (S_ISDIR (st.st_mode)) {
            close (dfd);
            dfd = fd;
            continue;
        }
        if (!S_ISLNK (st.st_mode)) {
            close (fd);
            close (dfd);
            errno = ENOTDIR;
            return errprintf (errp,
                              "%s: cannot %s: %s: not a directory",
                              path,
                              verb,
                              shown);
        }
        /* a link: whose, and where it leads (read from the link opened,
         * so what is checked is what is followed) */
        {
            struct stat dst;
            ssize_t n;
            char tmp[PATH_MAX];
            pin_error_t e = {""};

            if (++links > MAX_LINKS) {
                close (fd);
                close (dfd);
                errno = ELOOP;
                return errprintf (errp,
                                  "%s: cannot %s: more than %d "
                                  "symbolic links",
                                  path,
                                  verb,
                                  MAX_LINKS);
            }
            if (fstat (dfd, &dst) < 0
                || (n = readlinkat (fd, "", target, sizeof (target))) < 0) {
                close_keep_errno (fd);
                close_keep_errno (dfd);
                return errprintf (errp,
                                  "%s: cannot %s: %s: %s",
                                  path,
                                  verb,
                                  shown,
                                  strerror (errno));
            }
            close (fd);
            if (link_owner (&st, &dst, shown, &who, &other, &e) < 0) {
                close_keep_errno (dfd);
                return errprintf (errp,
                                  "%s: cannot %s: %s",
                                  path,
                                  verb,
                                  e.text);
            }
            if (other && !via[0])
                snprintf (via, sizeof (via), "%s", shown);
            if ((size_t)n >= sizeof (target) || n == 0
                || snprintf (tmp, sizeof (tmp), "%.*s/%s", (int)n, target, p)
                       >= (int)sizeof (tmp)) {
                close (dfd);
                errno = n == 0 ? ENOENT : ENAMETOOLONG;
                return errprintf (errp,
                                  "%s: cannot %s: %s: %s",
                                  path,
                                  verb,
                                  shown,
                                  strerror (errno));
            }
            memcpy (rest, tmp, strlen (tmp) + 1);
            p = rest;
            /* where it leads, as shown in messages */
            off = strlen (shown) - strlen (name);
            if (rest[0] == '/')
                off = 0;
            shown[off] = '\0';
            if (off > 1)
                shown[off - 1] = '\0'; /* the '/' before the link's name */
            if (rest[0] == '/') {
                snprintf (shown, sizeof (shown), "/");
                close (dfd);
                if ((dfd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
                    return errprintf (errp,
                                      "%s: cannot %s: /: %s",
                                      path,
                                      verb,
                                      strerror (errno));
            }
        }
    }
    if (other) {
        if (fstat (dfd, &st) < 0) {
            close_keep_errno (dfd);
            return errprintf (errp,
                              "%s: cannot %s: %s: %s",
                              path,
                              verb,
                              shown,
                              strerror (errno));
        }
        if (st.st_uid != who) {
            close (dfd);
            errno = EPERM;
            return errprintf (errp,
                              "%s: cannot %s: the symbolic link %s is "
                              "uid %u's "
                              "and leads to %s, a directory of uid %u; a "
                              "user's link is followed only into that user's "
                              "own directory (give the real path)",
                              path,
                              verb,
                              via,
                              (unsigned)who,
                              shown[0] ? shown : ".",
                              (unsigned)st.st_uid);
        }
    }
    return dfd;
}

static int dir_of (const char *path,
                   const char *verb,
                   char *name,
                   pin_error_t *errp)
{
    char dir[PATH_MAX];
    const char *slash, *p;
    size_t len;

    if (!path || !*path) {
        errno = EINVAL;
        return errprintf (errp, "'': an empty file name");
    }
    for (p = path; *p; p++) {
        if (iscntrl ((unsigned char)*p)) {
            errno = EINVAL;
            return errprintf (errp,
                              "'%.64s': control character in path",
                              path);
        }
    }
    if (strlen (path) >= sizeof (dir)) {
        errno = ENAMETOOLONG;
        return errprintf (errp, "'%.64s...': path too long", path);
    }
    slash = strrchr (path, '/');
    p = slash ? slash + 1 : path;
    if (!*p || strcmp (p, ".") == 0 || strcmp (p, "..") == 0) {
        errno = EISDIR;
        return errprintf (errp, "%s: names a directory, not a file", path);
    }
    if ((len = strlen (p)) > NAME_MAX) {
        errno = ENAMETOOLONG;
        return errprintf (errp, "'%.64s...': file name too long", path);
    }
    memcpy (name, p, len + 1);
    len = (size_t)(p - path);
    memcpy (dir, path, len);
    dir[len] = '\0';
    return walk (path, verb, dir, errp);
}

int safeout_dir (const char *path, char *name, pin_error_t *errp)
{
    return dir_of (path, "open", name, errp);
}

int safeout_create (const char *path,
                    enum safeout_how how,
                    mode_t mode,
                    pin_error_t *errp)
{
    char name[NAME_MAX + 1];
    int dfd, fd;

    if ((dfd = dir_of (path, "create", name, errp)) < 0)
        return -1;
    if (how == SAFEOUT_NEW_INODE && unlinkat (dfd, name, 0) < 0
        && errno != ENOENT) {
        close_keep_errno (dfd);
        return errprintf (errp,
                          "%s: cannot remove the old file: %s",
                          path,
                          strerror (errno));
    }
    fd =
        openat (dfd,
                name,
                O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY
                    | (how == SAFEOUT_APPEND ? O_APPEND | O_NONBLOCK : O_EXCL),
                mode);
    close_keep_errno (dfd);
    if (fd < 0)
        return errprintf (errp,
                          "%s: cannot create: %s",
                          path,
                          strerror (errno));
    if (how == SAFEOUT_APPEND) {
        struct stat st;
        int fl;

        if (fstat (fd, &st) < 0 || (fl = fcntl (fd, F_GETFL)) < 0
            || fcntl (fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
            close_keep_errno (fd);
            return errprintf (errp,
                              "%s: cannot open: %s",
                              path,
                              strerror (errno));
        }
        if (!S_ISREG (st.st_mode)) {
            close (fd);
            errno = EINVAL;
            return errprintf (errp,
                              "%s: %s, not a regular file",
                              path,
                              safein_kind (st.st_mode));
        }
    }
    return fd;
}

int safeout_unlink (const char *path, pin_error_t *errp)
{
    char name[NAME_MAX + 1];
    int dfd, rc = 0;

    if ((dfd = dir_of (path, "remove", name, errp)) < 0)
        return -1;
    if (unlinkat (dfd, name, 0) < 0 && errno != ENOENT)
        rc = errprintf (errp, "%s: cannot remove: %s", path, strerror (errno));
    close_keep_errno (dfd);
    return rc;
}

static int write_all (int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write (fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* A new file NAME.XXXXXX in dfd; the fd, the name in tmp. */
static int create_temp (int dfd, const char *name, char *tmp, size_t size)
{
    static const char set[] =
        "abcdefghijklmnopqrstuvwxyz"
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    int i, fd = -1;

    for (i = 0; i < 100 && fd < 0; i++) {
        unsigned char r[6];
        int j;

        if (getrandom (r, sizeof (r), 0) != (ssize_t)sizeof (r))
            return -1;
        if (snprintf (tmp, size, "%s.XXXXXX", name) >= (int)size) {
            errno = ENAMETOOLONG;
            return -1;
        }
        for (j = 0; j < 6; j++)
            tmp[strlen (tmp) - 6 + (size_t)j] = set[r[j] % (sizeof (set) - 1)];
        fd = openat (dfd,
                     tmp,
                     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC
                         | O_NOCTTY,
                     0666);
        if (fd < 0 && errno != EEXIST)
            return -1;
    }
    return fd;
}

int safeout_write_file (const char *path,
                        const void *buf,
                        size_t len,
                        bool replace,
                        pin_error_t *errp)
{
    char name[NAME_MAX + 1], tmp[NAME_MAX + 1];
    const char *made = name;
    int dfd, fd;

    if ((dfd = dir_of (path, "create", name, errp)) < 0)
        return -1;
    if (!replace)
        fd = openat (dfd,
                     name,
                     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC
                         | O_NOCTTY,
                     0666);
    else {
        fd = create_temp (dfd, name, tmp, sizeof (tmp));
        made = tmp;
    }
    if (fd < 0) {
        int e = errno;
        close (dfd);
        errno = e;
        if (e == EEXIST && !replace)
            return errprintf (errp, "%s: exists", path);
        return errprintf (errp, "%s: cannot create: %s", path, strerror (e));
    }
    if (write_all (fd, buf, len) < 0) {
        close_keep_errno (fd);
        fd = -1;
    }
    if (fd < 0 || close (fd) < 0
        || (replace && renameat (dfd, tmp, dfd, name) < 0)) {
        int e = errno;
        unlinkat (dfd, made, 0);
        close (dfd);
        errno = e;
        return errprintf (errp, "%s: cannot write: %s", path, strerror (e));
    }
    close (dfd);
    return 0;
}

/* vi: ts=4 sw=4 expandtab
 */
