/* stepcg.c - where a step's cgroups are, and what other steps hold */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <slurm/slurm.h>

#include "libtopo/topo.h"
#include "stepcg.h"

const char *stepcg_step_dir (uint32_t step, char *buf, size_t n)
{
    switch (step) {
        case SLURM_BATCH_SCRIPT:
            snprintf (buf, n, "step_batch");
            break;
        case SLURM_EXTERN_CONT:
            snprintf (buf, n, "step_extern");
            break;
        case SLURM_INTERACTIVE_STEP:
            snprintf (buf, n, "step_interactive");
            break;
        default:
            snprintf (buf, n, "step_%u", step);
            break;
    }
    return buf;
}

int stepcg_find_slurm_step (const char *pid_path, uint32_t job,
                            uint32_t step, char *out, size_t n)
{
    char pat[64], stepdir[32];
    const char *p;
    size_t len;

    if (!pid_path)
        return -1;
    snprintf (pat, sizeof (pat), "/job_%u/%s", job,
              stepcg_step_dir (step, stepdir, sizeof (stepdir)));
    len = strlen (pat);
    for (p = strstr (pid_path, pat); p; p = strstr (p + 1, pat)) {
        if (p[len] == '/' || p[len] == '\0') {
            size_t keep = (size_t)(p - pid_path) + len;
            if (keep >= n)
                return -1;
            memcpy (out, pid_path, keep);
            out[keep] = '\0';
            return 0;
        }
    }
    return -1;
}

/* root/relpath[/name] into buf; -1 (ENAMETOOLONG) if it does not fit. */
static int join (cg2_t *cg, const char *relpath, const char *name,
                 char *buf, size_t n)
{
    int len;

    while (*relpath == '/')
        relpath++;
    len = snprintf (buf, n, "%s%s%s%s%s", cg2_root (cg),
                    *relpath ? "/" : "", relpath,
                    name ? "/" : "", name ? name : "");
    if (len < 0 || (size_t)len >= n) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

static int relpath_join (const char *a, const char *b, char *buf, size_t n)
{
    int len = snprintf (buf, n, "%s/%s", a, b);

    if (len < 0 || (size_t)len >= n) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

bool stepcg_has_controller (cg2_t *cg, const char *relpath,
                            const char *controller)
{
    char *s = cg2_read (cg, relpath, "cgroup.controllers", NULL);
    size_t len = strlen (controller);
    bool found = false;

    if (!s)
        return false;
    for (char *p = s; (p = strstr (p, controller)); p += len) {
        if ((p == s || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0'
                                          || p[len] == '\n')) {
            found = true;
            break;
        }
    }
    free (s);
    return found;
}

static bool is_dir (const char *dirpath, const struct dirent *d)
{
    char path[PATH_MAX];
    struct stat st;

    if (d->d_type == DT_DIR)
        return true;
    if (d->d_type != DT_UNKNOWN)
        return false;
    if (snprintf (path, sizeof (path), "%s/%s", dirpath, d->d_name)
        >= (int)sizeof (path))
        return false;
    return stat (path, &st) == 0 && S_ISDIR (st.st_mode);
}

/* Add the cpuset.cpus of populated task_* directories right below relpath
 * to busy. */
static int tasks_busy (cg2_t *cg, const char *relpath, hwloc_bitmap_t busy,
                       pin_error_t *errp)
{
    char dirpath[PATH_MAX], task_rel[PATH_MAX];
    struct dirent *d;
    DIR *dir;
    int rc = 0;

    if (join (cg, relpath, NULL, dirpath, sizeof (dirpath)) < 0)
        return errprintf (errp, "%s: cgroup path too long", relpath);
    if (!(dir = opendir (dirpath)))
        return 0;   /* no such level: nothing held there */
    while ((d = readdir (dir))) {
        hwloc_bitmap_t set;
        char *cpus;

        if (strncmp (d->d_name, "task_", 5) != 0 || !is_dir (dirpath, d))
            continue;
        if (relpath_join (relpath, d->d_name, task_rel, sizeof (task_rel)) < 0)
            continue;
        if (!cg2_populated (cg, task_rel))
            continue;
        if (!(cpus = cg2_read (cg, task_rel, "cpuset.cpus", NULL)))
            continue;   /* no cpuset here: holds nothing we can see */
        if (!(set = hwloc_bitmap_alloc ())) {
            free (cpus);
            rc = errprintf (errp, "out of memory");
            break;
        }
        if (*cpus && topo_list_parse (cpus, set, NULL) == 0)
            hwloc_bitmap_or (busy, busy, set);
        hwloc_bitmap_free (set);
        free (cpus);
    }
    closedir (dir);
    return rc;
}

int stepcg_busy (cg2_t *cg, const char *job_rel, const char *self,
                 hwloc_bitmap_t busy, pin_error_t *errp)
{
    char dirpath[PATH_MAX], step_rel[PATH_MAX], user_rel[PATH_MAX];
    struct dirent *d;
    DIR *dir;
    int rc = 0;

    if (join (cg, job_rel, NULL, dirpath, sizeof (dirpath)) < 0)
        return errprintf (errp, "%s: cgroup path too long", job_rel);
    if (!(dir = opendir (dirpath))) {
        if (errno == ENOENT)
            return 0;
        return errprintf (errp, "%s: %s", dirpath, strerror (errno));
    }
    while ((d = readdir (dir))) {
        if (strncmp (d->d_name, "step_", 5) != 0 || !is_dir (dirpath, d))
            continue;
        if ((self && strcmp (d->d_name, self) == 0)
            || strcmp (d->d_name, "step_batch") == 0
            || strcmp (d->d_name, "step_extern") == 0
            || strcmp (d->d_name, "step_interactive") == 0)
            continue;
        if (relpath_join (job_rel, d->d_name, step_rel, sizeof (step_rel)) < 0
            || relpath_join (step_rel, "user", user_rel,
                             sizeof (user_rel)) < 0)
            continue;
        if (tasks_busy (cg, step_rel, busy, errp) < 0
            || tasks_busy (cg, user_rel, busy, errp) < 0) {
            rc = -1;
            break;
        }
    }
    closedir (dir);
    return rc;
}

int stepcg_has_children (cg2_t *cg, const char *relpath, bool *any,
                         pin_error_t *errp)
{
    char dirpath[PATH_MAX];
    struct dirent *d;
    DIR *dir;

    *any = false;
    if (join (cg, relpath, NULL, dirpath, sizeof (dirpath)) < 0)
        return errprintf (errp, "%s: cgroup path too long", relpath);
    if (!(dir = opendir (dirpath))) {
        if (errno == ENOENT)
            return 0;
        return errprintf (errp, "%s: %s", dirpath, strerror (errno));
    }
    while ((d = readdir (dir))) {
        if (strcmp (d->d_name, ".") == 0 || strcmp (d->d_name, "..") == 0)
            continue;
        if (is_dir (dirpath, d)) {
            *any = true;
            break;
        }
    }
    closedir (dir);
    return 0;
}
