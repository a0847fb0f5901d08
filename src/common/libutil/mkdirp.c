/* mkdirp.c - mkdir -p */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "mkdirp.h"

static int make_one (const char *path, mode_t mode)
{
    struct stat st;

    if (mkdir (path, mode) == 0)
        return 0;
    if (errno != EEXIST)
        return -1;
    if (stat (path, &st) < 0)
        return -1;
    if (!S_ISDIR (st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

int mkdir_p (const char *path, mode_t parent_mode, mode_t mode)
{
    char buf[PATH_MAX];
    size_t len;

    if (!path || path[0] != '/') {
        errno = EINVAL;
        return -1;
    }
    if ((len = strlen (path)) >= sizeof (buf)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy (buf, path, len + 1);
    while (len > 1 && buf[len - 1] == '/')
        buf[--len] = '\0';
    for (char *p = buf + 1; *p; p++) {
        if (*p == '/' && p[-1] != '/') {
            *p = '\0';
            if (make_one (buf, parent_mode) < 0)
                return -1;
            *p = '/';
        }
    }
    return make_one (buf, mode);
}

/* vi: ts=4 sw=4 expandtab
 */
