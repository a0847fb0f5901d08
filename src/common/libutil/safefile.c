/* safefile.c - may a process running as root trust this path? */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safefile.h"

static void close_keep_errno (int fd)
{
    int saved = errno;
    if (fd >= 0)
        close (fd);
    errno = saved;
}

/* Owner and mode of one component (`shown`: the path up to it). */
int safefile_check_stat (const struct stat *st,
                         const char *shown,
                         bool last,
                         uid_t owner,
                         pin_error_t *errp)
{
    if (st->st_uid != 0 && st->st_uid != owner) {
        errno = EPERM;
        if (owner == 0)
            return errprintf (errp,
                              "%s: owned by uid %ld, not uid 0; "
                              "refusing to trust it (chown root)",
                              shown,
                              (long)st->st_uid);
        return errprintf (errp,
                          "%s: owned by uid %ld, not uid 0 or %ld; "
                          "refusing to trust it (chown root)",
                          shown,
                          (long)st->st_uid,
                          (long)owner);
    }
    if (st->st_mode & (S_IWGRP | S_IWOTH)) {
        if (!last && S_ISDIR (st->st_mode) && (st->st_mode & S_ISVTX)
            && st->st_uid == 0)
            return 0; /* /tmp: entries stay their owners' */
        errno = EPERM;
        return errprintf (errp,
                          "%s: writable by group or others (mode "
                          "%04o); refusing to trust it (chmod go-w)",
                          shown,
                          (unsigned)(st->st_mode & 07777));
    }
    return 0;
}

int safefile_check (const char *path, uid_t owner, pin_error_t *errp)
{
    char shown[PATH_MAX];
    const char *p, *end;
    struct stat st;
    size_t off = 0;
    int dfd;

    if (!path || path[0] != '/') {
        errno = EINVAL;
        return errprintf (errp,
                          "'%.64s': not an absolute path",
                          path ? path : "(null)");
    }
    if (strlen (path) >= sizeof (shown)) {
        errno = ENAMETOOLONG;
        return errprintf (errp, "'%.64s...': path too long", path);
    }
    for (p = path; *p; p++) {
        if (iscntrl ((unsigned char)*p)) {
            errno = EINVAL;
            return errprintf (errp,
                              "'%.64s': control character in path",
                              path);
        }
    }
    if ((dfd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0
        || fstat (dfd, &st) < 0) {
        close_keep_errno (dfd);
        return errprintf (errp, "/: %s", strerror (errno));
    }
    shown[0] = '\0';
    p = path;
    while (*p == '/')
        p++;
    if (!*p) { /* the path is "/" itself */
        close (dfd);
        return safefile_check_stat (&st, "/", true, owner, errp);
    }
    if (safefile_check_stat (&st, "/", false, owner, errp) < 0) {
        close_keep_errno (dfd);
        return -1;
    }
    while (*p) {
        char name[NAME_MAX + 1];
        size_t len;
        bool last;
        int nfd;

        end = p + strcspn (p, "/");
        len = (size_t)(end - p);
        while (*end == '/')
            end++;
        last = *end == '\0';
        if (len > NAME_MAX) {
            close (dfd);
            errno = ENAMETOOLONG;
            return errprintf (errp, "'%.64s...': component too long", path);
        }
        memcpy (name, p, len);
        name[len] = '\0';
        off +=
            (size_t)snprintf (shown + off, sizeof (shown) - off, "/%s", name);
        p = end;
        if (strcmp (name, ".") == 0)
            continue;
        if (strcmp (name, "..") == 0) {
            close (dfd);
            errno = EINVAL;
            return errprintf (errp,
                              "'%.64s': '..' components are not "
                              "allowed",
                              path);
        }
        if (fstatat (dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            close_keep_errno (dfd);
            return errprintf (errp, "%s: %s", shown, strerror (errno));
        }
        if (S_ISLNK (st.st_mode)) {
            close (dfd);
            errno = ELOOP;
            return errprintf (errp,
                              "%s: a symbolic link; refusing to "
                              "follow it (make it a real %s owned by root)",
                              shown,
                              last ? "file or directory" : "directory");
        }
        if (safefile_check_stat (&st, shown, last, owner, errp) < 0) {
            close_keep_errno (dfd);
            return -1;
        }
        if (last)
            break;
        if (!S_ISDIR (st.st_mode)) {
            close (dfd);
            errno = ENOTDIR;
            return errprintf (errp, "%s: not a directory", shown);
        }
        nfd =
            openat (dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        close_keep_errno (dfd);
        if (nfd < 0)
            return errprintf (errp, "%s: %s", shown, strerror (errno));
        dfd = nfd;
    }
    close (dfd);
    return 0;
}

int safefile_check_follow (const char *path,
                           uid_t owner,
                           struct stat *out,
                           pin_error_t *errp)
{
    char rest[PATH_MAX], shown[PATH_MAX], target[PATH_MAX], tail[PATH_MAX];
    const char *p;
    struct stat st;
    int dfd, hops = 0;

    if (!path || path[0] != '/') {
        errno = EINVAL;
        return errprintf (errp,
                          "'%.64s': not an absolute path",
                          path ? path : "(null)");
    }
    if (strlen (path) >= sizeof (rest)) {
        errno = ENAMETOOLONG;
        return errprintf (errp, "'%.64s...': path too long", path);
    }
    strcpy (rest, path);
    if ((dfd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0
        || fstat (dfd, &st) < 0) {
        close_keep_errno (dfd);
        return errprintf (errp, "/: %s", strerror (errno));
    }
    shown[0] = '\0';
    p = rest;
    while (*p == '/')
        p++;
    if (safefile_check_stat (&st, "/", !*p, owner, errp) < 0) {
        close_keep_errno (dfd);
        return -1;
    }
    while (*p) {
        char name[NAME_MAX + 1];
        const char *end = p + strcspn (p, "/");
        size_t len = (size_t)(end - p), off = strlen (shown);
        bool last;
        int nfd;
        ssize_t n;

        while (*end == '/')
            end++;
        last = *end == '\0';
        if (len > NAME_MAX) {
            close (dfd);
            errno = ENAMETOOLONG;
            return errprintf (errp, "'%.64s...': component too long", path);
        }
        memcpy (name, p, len);
        name[len] = '\0';
        p = end;
        if (strcmp (name, ".") == 0)
            continue;
        if (strcmp (name, "..") == 0) { /* from a link's target */
            char *slash = strrchr (shown, '/');
            if (slash)
                *slash = '\0';
            nfd = openat (dfd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
            if (nfd < 0 || fstat (nfd, &st) < 0) {
                close_keep_errno (nfd);
                close_keep_errno (dfd);
                return errprintf (errp, "%s/..: %s", shown, strerror (errno));
            }
            close (dfd);
            dfd = nfd;
            if (safefile_check_stat (&st,
                                     shown[0] ? shown : "/",
                                     false,
                                     owner,
                                     errp)
                < 0) {
                close_keep_errno (dfd);
                return -1;
            }
            continue;
        }
        snprintf (shown + off, sizeof (shown) - off, "/%s", name);
        if (fstatat (dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            close_keep_errno (dfd);
            return errprintf (errp, "%s: %s", shown, strerror (errno));
        }
        if (S_ISLNK (st.st_mode)) {
            /* its directory passed: the link is root's (or owner's)
             * unless the directory is sticky; a link's mode means
             * nothing, its owner does */
            if (st.st_uid != 0 && st.st_uid != owner) {
                close (dfd);
                errno = EPERM;
                return errprintf (errp,
                                  "%s: a symbolic link owned by uid "
                                  "%ld; refusing to follow it (it must be "
                                  "root's)",
                                  shown,
                                  (long)st.st_uid);
            }
            if (++hops > 40
                || (n = readlinkat (dfd, name, target, sizeof (target) - 1))
                       < 0
                || (size_t)n + 1 + strlen (p) + 1 > sizeof (rest)) {
                close (dfd);
                errno = hops > 40 ? ELOOP : n < 0 ? errno : ENAMETOOLONG;
                return errprintf (errp,
                                  "%s: cannot follow the link: %s",
                                  shown,
                                  strerror (errno));
            }
            target[n] = '\0';
            { /* length checked above */
                size_t tl = strlen (p);
                memcpy (tail, target, (size_t)n);
                tail[n] = '/';
                memcpy (tail + n + 1, p, tl + 1);
                memcpy (rest, tail, (size_t)n + tl + 2);
            }
            shown[off] = '\0';
            p = rest;
            if (target[0] == '/') {
                close (dfd);
                if ((dfd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
                    return errprintf (errp, "/: %s", strerror (errno));
                shown[0] = '\0';
            }
            while (*p == '/')
                p++;
            continue;
        }
        if (safefile_check_stat (&st, shown, last, owner, errp) < 0) {
            close_keep_errno (dfd);
            return -1;
        }
        if (last) {
            close (dfd);
            if (out)
                *out = st;
            return 0;
        }
        if (!S_ISDIR (st.st_mode)) {
            close (dfd);
            errno = ENOTDIR;
            return errprintf (errp, "%s: not a directory", shown);
        }
        nfd =
            openat (dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        close_keep_errno (dfd);
        if (nfd < 0)
            return errprintf (errp, "%s: %s", shown, strerror (errno));
        dfd = nfd;
        if (fstat (dfd, &st) < 0) {
            close_keep_errno (dfd);
            return errprintf (errp, "%s: %s", shown, strerror (errno));
        }
        if (safefile_check_stat (&st, shown, false, owner, errp) < 0) {
            close_keep_errno (dfd);
            return -1;
        }
    }
    /* the path ended in "/" or "/." : the directory reached is the path */
    if (fstat (dfd, &st) < 0) {
        close_keep_errno (dfd);
        return errprintf (errp, "%s: %s", path, strerror (errno));
    }
    close (dfd);
    if (out)
        *out = st;
    return 0;
}

/* vi: ts=4 sw=4 expandtab
 */
