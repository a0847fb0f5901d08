/* atomicfile.c - replace a file's contents all at once */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomicfile.h"

int write_file_atomic (const char *path,
                       const void *buf,
                       size_t len,
                       mode_t mode)
{
    char tmp[PATH_MAX];
    const char *p = buf;
    int fd;
    size_t off = 0;

    if (!path || !*path || (!buf && len > 0)) {
        errno = EINVAL;
        return -1;
    }
    if (snprintf (tmp, sizeof (tmp), "%s.XXXXXX", path) >= (int)sizeof (tmp)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if ((fd = mkstemp (tmp)) < 0)
        return -1;
    while (off < len) {
        ssize_t n = write (fd, p + off, len - off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            goto error;
        }
        off += (size_t)n;
    }
    if (fchmod (fd, mode) < 0 || fsync (fd) < 0)
        goto error;
    if (close (fd) < 0) {
        fd = -1;
        goto error;
    }
    fd = -1;
    if (rename (tmp, path) < 0)
        goto error;
    return 0;
error : {
    int saved_errno = errno;
    if (fd >= 0)
        close (fd);
    unlink (tmp);
    errno = saved_errno;
    return -1;
}
}
