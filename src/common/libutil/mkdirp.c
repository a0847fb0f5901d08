/* mkdirp.c - mkdir -p, walking down from "/" and checking as it goes */
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

#include "mkdirp.h"
#include "safefile.h"

static void close_keep_errno (int fd)
{
    int saved = errno;
    if (fd >= 0)
        close (fd);
    errno = saved;
}

/* Open the directory `name` in dfd without following a symlink, and check
 * it; the new fd (O_PATH) or -1. */
static int open_checked (int dfd,
                         const char *name,
                         const char *shown,
                         bool last,
                         uid_t owner,
                         pin_error_t *errp)
{
    struct stat st;
    int fd;

    if (fstatat (dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return errprintf (errp, "%s: %s", shown, strerror (errno));
    if (S_ISLNK (st.st_mode)) {
        errno = ELOOP;
        return errprintf (errp,
                          "%s: a symbolic link; refusing to follow "
                          "it (make it a real directory owned by root)",
                          shown);
    }
    if (!S_ISDIR (st.st_mode)) {
        errno = ENOTDIR;
        return errprintf (errp, "%s: not a directory", shown);
    }
    fd = openat (dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errprintf (errp, "%s: %s", shown, strerror (errno));
    /* what was opened is what is checked (an entry replaced since the
     * fstatat is seen here) */
    if (fstat (fd, &st) < 0) {
        close_keep_errno (fd);
        return errprintf (errp, "%s: %s", shown, strerror (errno));
    }
    if (safefile_check_stat (&st, shown, last, owner, errp) < 0) {
        close_keep_errno (fd);
        return -1;
    }
    return fd;
}

static int walk (const char *path,
                 mode_t parent_mode,
                 mode_t mode,
                 bool *above,
                 pin_error_t *errp);

int mkdir_p (const char *path,
             mode_t parent_mode,
             mode_t mode,
             pin_error_t *errp)
{
    pin_error_t err = {""};
    bool above = false;

    if (walk (path, parent_mode, mode, &above, &err) == 0)
        return 0;
    if (above) /* name the path asked for, then the component at fault */
        return errprintf (errp, "%s: above it, %s", path, err.text);
    return errprintf (errp, "%s", err.text);
}

static int walk (const char *path,
                 mode_t parent_mode,
                 mode_t mode,
                 bool *above,
                 pin_error_t *errp)
{
    char shown[PATH_MAX];
    uid_t owner = geteuid ();
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
    p = path;
    while (*p == '/')
        p++;
    if (safefile_check_stat (&st, "/", !*p, owner, errp) < 0) {
        close_keep_errno (dfd);
        return -1;
    }
    shown[0] = '\0';
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
        *above = !last;
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
        /* dfd passed the checks: only root or we can put or change an
         * entry in it (or, sticky, only the entry's owner, checked next) */
        if (fstatat (dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0
            && errno == ENOENT
            && mkdirat (dfd, name, last ? mode : parent_mode) < 0
            && errno != EEXIST) {
            close_keep_errno (dfd);
            return errprintf (errp,
                              "%s: cannot create: %s",
                              shown,
                              strerror (errno));
        }
        nfd = open_checked (dfd, name, shown, last, owner, errp);
        close_keep_errno (dfd);
        if (nfd < 0)
            return -1;
        dfd = nfd;
    }
    close (dfd);
    return 0;
}

/* vi: ts=4 sw=4 expandtab
 */
