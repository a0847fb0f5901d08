/* lastgood.c - the last good pin.conf of slurmctld, kept on disk */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lastgood.h"
#include "libutil/atomicfile.h"
#include "libutil/safefile.h"
#include "libutil/safeio.h"

#define LASTGOOD_MAX (1024 * 1024)

int pin_lastgood_path (char *buf, size_t n, const char *state_dir)
{
    int len;

    if (!buf || !state_dir || state_dir[0] != '/') {
        errno = EINVAL;
        return -1;
    }
    len = snprintf (buf, n, "%s/%s", state_dir, PIN_LASTGOOD_NAME);
    if (len < 0 || (size_t)len >= n) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

/* The directory of `saved` must pass safefile's rule for this process. */
static int check_dir (const char *saved, pin_error_t *errp)
{
    char dir[PATH_MAX];
    const char *slash = strrchr (saved, '/');
    pin_error_t e = {""};

    if (saved[0] != '/' || !slash) {
        errno = EINVAL;
        return errprintf (errp, "%s: not an absolute path", saved);
    }
    if ((size_t)(slash - saved) >= sizeof (dir)) {
        errno = ENAMETOOLONG;
        return errprintf (errp, "%s: path too long", saved);
    }
    if (slash == saved)
        snprintf (dir, sizeof (dir), "/");
    else
        snprintf (dir, sizeof (dir), "%.*s", (int)(slash - saved), saved);
    if (safefile_check_follow (dir, geteuid (), NULL, &e) < 0)
        return errprintf (errp, "%s: directory not trusted: %s", saved, e.text);
    return 0;
}

int pin_lastgood_load (struct pin_conf *conf,
                       const char *saved,
                       pin_error_t *errp)
{
    struct stat lst, st;
    pin_error_t e = {""};
    uid_t me = geteuid ();
    int fd;

    if (!conf || !saved) {
        errno = EINVAL;
        return errprintf (errp, "pin_lastgood_load: invalid arguments");
    }
    if (check_dir (saved, errp) < 0)
        return -1;
    if (lstat (saved, &lst) < 0)
        return errprintf (errp, "%s: %s", saved, strerror (errno));
    if (S_ISLNK (lst.st_mode)) {
        errno = ELOOP;
        return errprintf (errp,
                          "%s: a symbolic link; the last good rules "
                          "must be a plain file (remove it)",
                          saved);
    }
    if ((fd = safein_open (saved, O_NOFOLLOW, &e)) < 0)
        return errprintf (errp, "%s", e.text);
    if (fstat (fd, &st) < 0) {
        int saved_errno = errno;
        close (fd);
        errno = saved_errno;
        return errprintf (errp, "%s: %s", saved, strerror (errno));
    }
    close (fd);
    if (st.st_dev != lst.st_dev || st.st_ino != lst.st_ino) {
        errno = EAGAIN;
        return errprintf (errp, "%s: changed while opened; try again", saved);
    }
    if ((st.st_uid != 0 && st.st_uid != me)
        || (st.st_mode & (S_IWGRP | S_IWOTH))) {
        errno = EPERM;
        return errprintf (errp,
                          "%s: owner uid %ld, mode %04o; the last good "
                          "rules must be owned by root (or uid %ld, who "
                          "wrote them) and writable by nobody else; "
                          "remove the file",
                          saved,
                          (long)st.st_uid,
                          (unsigned)(st.st_mode & 07777),
                          (long)me);
    }
    /* the parser checks the file once more as it opens it */
    return pin_conf_load_file (conf, saved, true, errp);
}

int pin_lastgood_save (const char *conf_path,
                       const char *saved,
                       pin_error_t *errp)
{
    char tmp[PATH_MAX];
    pin_error_t e = {""};
    struct pin_conf *check = NULL;
    char *buf = NULL;
    size_t len = 0;
    ssize_t got;
    int fd = -1, rc = -1;

    if (!conf_path || !saved) {
        errno = EINVAL;
        return errprintf (errp, "pin_lastgood_save: invalid arguments");
    }
    if (check_dir (saved, errp) < 0)
        return -1;
    if (snprintf (tmp, sizeof (tmp), "%s.new", saved) >= (int)sizeof (tmp)) {
        errno = ENAMETOOLONG;
        return errprintf (errp, "%s: path too long", saved);
    }
    if ((fd = safein_open (conf_path, 0, &e)) < 0)
        return errprintf (errp, "%s: cannot copy: %s", saved, e.text);
    if (!(buf = malloc (LASTGOOD_MAX + 1))) {
        errprintf (errp, "%s: out of memory", saved);
        goto out;
    }
    while (len <= LASTGOOD_MAX
           && (got = read (fd, buf + len, LASTGOOD_MAX + 1 - len)) != 0) {
        if (got < 0) {
            if (errno == EINTR)
                continue;
            errprintf (errp,
                       "%s: cannot read %s: %s",
                       saved,
                       conf_path,
                       strerror (errno));
            goto out;
        }
        len += (size_t)got;
    }
    if (len > LASTGOOD_MAX) {
        errno = EFBIG;
        errprintf (errp,
                   "%s: %s is larger than %d bytes; not copied",
                   saved,
                   conf_path,
                   LASTGOOD_MAX);
        goto out;
    }
    if (write_file_atomic (tmp, buf, len, 0600) < 0) {
        errprintf (errp, "%s: cannot write: %s", tmp, strerror (errno));
        goto out;
    }
    /* what is kept must be what a restart can load */
    if (!(check = malloc (sizeof (*check)))) {
        errprintf (errp, "%s: out of memory", saved);
        unlink (tmp);
        goto out;
    }
    pin_conf_defaults (check);
    if (pin_lastgood_load (check, tmp, &e) < 0) {
        int saved_errno = errno;
        unlink (tmp);
        errno = saved_errno;
        errprintf (errp, "%s: the copy does not load: %s", saved, e.text);
        goto out;
    }
    if (rename (tmp, saved) < 0) {
        int saved_errno = errno;
        unlink (tmp);
        errno = saved_errno;
        errprintf (errp, "%s: cannot rename: %s", saved, strerror (errno));
        goto out;
    }
    rc = 0;
out : {
    int saved_errno = errno;
    if (fd >= 0)
        close (fd);
    free (buf);
    free (check);
    errno = saved_errno;
}
    return rc;
}
