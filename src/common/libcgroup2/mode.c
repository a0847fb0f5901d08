/* mode.c - which mode the plugin runs a step in (see mode.h) */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "mode.h"
#include "stepcg.h"

#define SLURM_CONF_DEFAULT CG2_SLURM_CONF_DEFAULT
/* slurm.conf and cgroup.conf lines longer than this are skipped. */
#define SLURM_LINE_MAX 4096

static const char *mode_names[] = {"affinity",
                                   "nested",
                                   "standalone",
                                   "undecided"};

const char *cg2_mode_name (enum cg2_mode mode)
{
    return (unsigned)mode < 4 ? mode_names[mode] : "?";
}

/* a b c into buf; -1 if it does not fit. */
static int fmt (char *buf,
                size_t n,
                const char *a,
                const char *b,
                const char *c)
{
    int len = snprintf (buf, n, "%s%s%s", a, b, c);
    return len < 0 || (size_t)len >= n ? -1 : 0;
}

cg2_t *cg2_mode_detect (const struct cg2_mode_input *in,
                        struct cg2_mode_result *res)
{
    pin_error_t err = {""};
    char job[32], stepdir[32], user_rel[PATH_MAX + 8];
    cg2_t *cg;

    memset (res, 0, sizeof (*res));
    if (!(cg = cg2_open (in->cgroup_root, &err))) {
        res->mode = CG2_MODE_NONE;
        snprintf (res->why,
                  sizeof (res->why),
                  "no cgroup v2 hierarchy (%s)",
                  err.text);
        return NULL;
    }
    snprintf (job, sizeof (job), "/job_%u/", in->job);
    stepcg_step_dir (in->step, stepdir, sizeof (stepdir));
    if (in->self_cgroup
        && stepcg_find_slurm_step (in->self_cgroup,
                                   in->job,
                                   in->step,
                                   res->step_rel,
                                   sizeof (res->step_rel))
               == 0) {
        res->mode = CG2_MODE_NESTED;
        res->cpuset =
            fmt (user_rel, sizeof (user_rel), res->step_rel, "/user", "") == 0
            && stepcg_has_controller (cg, user_rel, "cpuset");
    } else if (!in->self_cgroup && in->slurm == CG2_SLURM_V2) {
        res->mode = CG2_MODE_NESTED; /* predicted: no step to look at */
        res->cpuset = cg2_has_controller (cg, "cpuset");
    } else if (!in->self_cgroup && in->slurm == CG2_SLURM_UNKNOWN) {
        res->mode = CG2_MODE_UNDECIDED;
        res->cpuset = cg2_has_controller (cg, "cpuset");
    } else if (fmt (res->job_rel,
                    sizeof (res->job_rel),
                    in->cgroup_base,
                    job,
                    "")
                   == 0
               && fmt (res->step_rel,
                       sizeof (res->step_rel),
                       res->job_rel,
                       stepdir,
                       "")
                      == 0) {
        res->job_rel[strlen (res->job_rel) - 1] = '\0'; /* the '/' */
        res->mode = CG2_MODE_STANDALONE;
        res->cpuset = cg2_has_controller (cg, "cpuset");
    } else {
        cg2_close (cg);
        memset (res, 0, sizeof (*res));
        res->mode = CG2_MODE_NONE;
        snprintf (res->why,
                  sizeof (res->why),
                  "CgroupBase %.64s...: path "
                  "too long",
                  in->cgroup_base);
        return NULL;
    }
    if (!res->cpuset)
        snprintf (res->why,
                  sizeof (res->why),
                  "cpuset controller not "
                  "available in the cgroup v2 hierarchy at %s",
                  cg2_root (cg));
    return cg;
}

/* ---- slurm.conf and cgroup.conf ---------------------------------------- */

/* Read the value of `key` (case-insensitive) from a slurm.conf-style file:
 * the last line that starts with "Key=", the value up to the first blank
 * or '#', one pair of double quotes removed, control characters shown as
 * '?'.  Include lines are not
 * followed; over-long lines are skipped.  Returns 1 if found, 0 if not,
 * -1 if the file cannot be read (errno set). */
int cg2_slurm_conf_get (const char *path, const char *key, char *val, size_t n)
{
    char line[SLURM_LINE_MAX];
    size_t klen = strlen (key);
    struct stat st;
    bool skipping = false;
    int found = 0;
    FILE *f;
    int fd;

    if ((fd = open (path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)) < 0)
        return -1;
    if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode)) {
        close (fd);
        errno = EINVAL;
        return -1;
    }
    if (!(f = fdopen (fd, "r"))) {
        close (fd);
        return -1;
    }
    while (fgets (line, sizeof (line), f)) {
        size_t len = strlen (line);
        bool eol = len > 0 && line[len - 1] == '\n';
        char *p = line, *end;

        if (skipping) { /* the rest of an over-long line */
            skipping = !eol;
            continue;
        }
        if (!eol && !feof (f)) { /* an over-long line: skip it */
            skipping = true;
            continue;
        }
        while (*p == ' ' || *p == '\t')
            p++;
        if (strncasecmp (p, key, klen) != 0)
            continue;
        p += klen;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p++ != '=')
            continue;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '"') {
            p++;
            end = strchr (p, '"');
        } else
            end = p + strcspn (p, " \t#\r\n");
        if (!end)
            continue;
        *end = '\0';
        for (char *c = p; *c; c++) {
            if (iscntrl ((unsigned char)*c))
                *c = '?';
        }
        snprintf (val, n, "%s", p);
        found = 1;
    }
    fclose (f);
    return found;
}

/* The f_type of the file system at `path`, 0 on error. */
static unsigned long fs_type (const char *path)
{
    struct statfs sfs;

    return statfs (path, &sfs) == 0 ? (unsigned long)sfs.f_type : 0;
}

/* What Slurm 22.05 does for CgroupPlugin=autodetect
 * (src/common/cgroup.c): a cgroup2 /sys/fs/cgroup is v2; on a tmpfs
 * there, the type of /sys/fs/cgroup/systemd decides; anything else is
 * an error (NULL). */
static const char *slurm_autodetect (void)
{
    unsigned long t = fs_type ("/sys/fs/cgroup/");

    if (t == (unsigned long)CGROUP2_SUPER_MAGIC)
        return "cgroup/v2";
    if (t != (unsigned long)TMPFS_MAGIC)
        return NULL;
    t = fs_type ("/sys/fs/cgroup/systemd/");
    if (t == (unsigned long)CGROUP2_SUPER_MAGIC)
        return "cgroup/v2";
    if (t == (unsigned long)CGROUP_SUPER_MAGIC)
        return "cgroup/v1";
    return NULL;
}

void cg2_slurm_conf_read (const char *slurm_conf, struct cg2_slurm_conf *r)
{
    const char *env = getenv ("SLURM_CONF");
    char *slash;
    int rc;

    memset (r, 0, sizeof (*r));
    if (!slurm_conf)
        slurm_conf = env && env[0] == '/' ? env : SLURM_CONF_DEFAULT;
    snprintf (r->slurm_conf, sizeof (r->slurm_conf), "%s", slurm_conf);
    if (cg2_slurm_conf_get (r->slurm_conf,
                            "TaskPlugin",
                            r->task_plugin,
                            sizeof (r->task_plugin))
            >= 0
        && cg2_slurm_conf_get (r->slurm_conf,
                               "ProctrackType",
                               r->proctrack,
                               sizeof (r->proctrack))
               >= 0)
        r->slurm_conf_found = true;
    else
        r->slurm_conf_errno = errno;

    /* Slurm reads cgroup.conf beside slurm.conf */
    snprintf (r->cgroup_conf, sizeof (r->cgroup_conf), "%s", r->slurm_conf);
    slash = strrchr (r->cgroup_conf, '/');
    if (slash
        && (size_t)(slash - r->cgroup_conf) + sizeof ("/cgroup.conf")
               <= sizeof (r->cgroup_conf))
        strcpy (slash, "/cgroup.conf");
    rc = cg2_slurm_conf_get (r->cgroup_conf,
                             "CgroupPlugin",
                             r->cgroup_plugin,
                             sizeof (r->cgroup_plugin));
    if (rc < 0) {
        r->cgroup_conf_errno = errno;
        return;
    }
    r->cgroup_conf_found = true;
    if (rc == 0 || strcasecmp (r->cgroup_plugin, "autodetect") == 0)
        r->cgroup_resolved = slurm_autodetect ();
    else if (strcmp (r->cgroup_plugin, "cgroup/v2") == 0)
        r->cgroup_resolved = "cgroup/v2";
    else if (strcmp (r->cgroup_plugin, "cgroup/v1") == 0)
        r->cgroup_resolved = "cgroup/v1";
}

bool cg2_slurm_uses_cgroups (const struct cg2_slurm_conf *r)
{
    char list[sizeof (r->task_plugin)];
    char *save = NULL;

    if (!strcmp (r->proctrack, "proctrack/cgroup")
        || !strcmp (r->proctrack, "cgroup"))
        return true;
    snprintf (list, sizeof (list), "%s", r->task_plugin);
    for (char *w = strtok_r (list, ",", &save); w;
         w = strtok_r (NULL, ",", &save)) {
        if (!strcmp (w, "task/cgroup") || !strcmp (w, "cgroup"))
            return true;
    }
    return false;
}

enum cg2_slurm_cgroups cg2_slurm_cgroups (const struct cg2_slurm_conf *r)
{
    if (r->slurm_conf_found && !cg2_slurm_uses_cgroups (r))
        return CG2_SLURM_NONE;
    if (!r->cgroup_conf_found)
        return CG2_SLURM_UNKNOWN;
    if (r->cgroup_resolved && !strcmp (r->cgroup_resolved, "cgroup/v2"))
        return CG2_SLURM_V2;
    return CG2_SLURM_NONE;
}

/* vi: ts=4 sw=4 expandtab
 */
