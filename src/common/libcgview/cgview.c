/* cgview.c - where each cgroup controller is bound (see cgview.h) */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <libcgroup.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>

#include "cgview.h"

/* libcgroup's last message (its logger's userdata) */
static char logged[256];

static void logger (void *userdata, int level, const char *fmt, va_list ap)
{
    char *buf = userdata;
    size_t len;

    (void)level;
    vsnprintf (buf, sizeof (logged), fmt, ap);
    len = strlen (buf);
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
        buf[--len] = '\0';
}

int cgview_fs_version (const char *path)
{
    struct statfs sfs;

    if (statfs (path, &sfs) < 0)
        return 0;
    if ((unsigned long)sfs.f_type == (unsigned long)CGROUP2_SUPER_MAGIC)
        return 2;
    if ((unsigned long)sfs.f_type == (unsigned long)CGROUP_SUPER_MAGIC)
        return 1;
    return 0;
}

int cgview_read (const char *const *names,
                 struct cgview_ctl *ctl,
                 size_t n,
                 char *error,
                 size_t errsize)
{
    int rc;

    memset (ctl, 0, n * sizeof (*ctl));
    logged[0] = '\0';
    /* before cgroup_init(): otherwise it installs its stdout logger */
    cgroup_set_logger (logger, CGROUP_LOG_ERROR, logged);
    if ((rc = cgroup_init ()) != 0) {
        snprintf (error,
                  errsize,
                  "%s%s%s",
                  cgroup_strerror (rc),
                  *logged ? ": " : "",
                  logged);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        char *mp = NULL;

        logged[0] = '\0';
        rc = cgroup_get_subsys_mount_point (names[i], &mp);
        if (rc == 0 && mp) {
            ctl[i].state = CGVIEW_MOUNTED;
            snprintf (ctl[i].mount, sizeof (ctl[i].mount), "%s", mp);
            /* libcgroup 2.0.2 has no public call for the version of a
             * controller: the file system type of its mount tells. */
            ctl[i].version = cgview_fs_version (mp);
        } else if (rc == ECGROUPNOTEXIST)
            ctl[i].state = CGVIEW_NOT_MOUNTED;
        else {
            ctl[i].state = CGVIEW_ERROR;
            snprintf (ctl[i].note,
                      sizeof (ctl[i].note),
                      "%s%s%s",
                      cgroup_strerror (rc),
                      *logged ? ": " : "",
                      logged);
        }
        free (mp);
    }
    return 0;
}
