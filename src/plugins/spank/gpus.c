/* gpus.c - the step's GPUs and NIC, from Slurm (doc/policies.md, "GPUs
 * and NICs"; doc/admin-guide.md, "GPUs and NICs")
 *
 * Which GPUs: slurmctld's record of the job (gres_detail_str for this
 * node, ident.c) and the step's SLURM_STEP_GPUS (the batch step's
 * SLURM_JOB_GPUS), which slurmstepd's gres/gpu plugin sets, or unsets, in
 * every step's environment before any SPANK callback, wherever slurm.conf's
 * GresTypes names gpu.  An index the job does not hold is ignored, and
 * without slurmctld's answer no GPU is used: the user's environment never
 * decides alone.  Which device each index is: gres.conf's File= of this
 * node (libstep/gpus.c), then its PCI bus id; else its Cores=.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "glue.h"
#include "libcgroup2/mode.h"
#include "libstep/gpus.h"
#include "libtopo/topo.h"

extern slurm_conf_t slurm_conf __attribute__ ((weak));

/* Does slurm.conf's GresTypes name gpu? */
static bool gres_gpu_configured (void)
{
    const char *p = &slurm_conf ? slurm_conf.gres_plugins : NULL;

    while (p && *p) {
        size_t n = strcspn (p, ",");
        if (n == 3 && !strncmp (p, "gpu", 3))
            return true;
        p += n + (p[n] == ',');
    }
    return false;
}

/* slurm.conf's directory into dir: the path the Slurm process read
 * (slurm_conf.slurm_conf; slurmstepd of Slurm 24.11 and 26.05 leaves it
 * NULL), else this process's own SLURM_CONF (slurmd sets it in its own
 * environment and slurmstepd inherits it: not the job's, not the
 * user's), else Slurm's default.  -1 with why. */
static int conf_dir (char *dir, size_t n, char *why, size_t wn)
{
    const char *conf = &slurm_conf ? slurm_conf.slurm_conf : NULL;
    const char *env = getenv ("SLURM_CONF");

    if (!conf || conf[0] != '/')
        conf = env && env[0] == '/' ? env : CG2_SLURM_CONF_DEFAULT;
    if (strlen (conf) >= n) {
        snprintf (why, wn, "slurm.conf's path is too long");
        return -1;
    }
    snprintf (dir, n, "%s", conf);
    const char *d = dirname (dir); /* dir itself, or a static "." or "/" */
    memmove (dir, d, strlen (d) + 1);
    return 0;
}

/* A configuration file: root's (or SlurmUser's), not writable by
 * others, a regular file of at most GPUS_CONF_MAX bytes.  NULL with why. */
static char *read_conf_file (const char *path, char *why, size_t wn)
{
    struct stat st;
    char *buf = NULL;
    ssize_t len = 0, r;
    int fd;

    if ((fd = open (path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0) {
        snprintf (why, wn, "%s: %s", path, strerror (errno));
        return NULL;
    }
    if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode)
        || (st.st_uid != 0 && st.st_uid != slurm_conf.slurm_user_id)
        || (st.st_mode & S_IWOTH) || st.st_size > (off_t)GPUS_CONF_MAX) {
        snprintf (why,
                  wn,
                  "%s: not a regular file of root's or SlurmUser's, "
                  "writable by them only, of at most %u bytes",
                  path,
                  GPUS_CONF_MAX);
        close (fd);
        return NULL;
    }
    if (!(buf = malloc ((size_t)st.st_size + 1))) {
        snprintf (why, wn, "out of memory");
        close (fd);
        return NULL;
    }
    while (len < st.st_size
           && (r = read (fd, buf + len, (size_t)(st.st_size - len))) > 0)
        len += r;
    close (fd);
    buf[len] = '\0';
    return buf;
}

/* gres.conf beside slurm.conf (read_conf_file's rules); its path in path */
static char *read_gres_conf (char *path, size_t n, char *why, size_t wn)
{
    char dir[PATH_MAX];

    if (conf_dir (dir, sizeof (dir), why, wn) < 0)
        return NULL;
    if ((size_t)snprintf (path, n, "%s/gres.conf", dir) >= n) {
        snprintf (why, wn, "gres.conf's path is too long");
        return NULL;
    }
    return read_conf_file (path, why, wn);
}

/* gres.conf's "Include PATH": a relative PATH is in slurm.conf's
 * directory, as Slurm's parser takes it; the same rules as gres.conf. */
static char *read_include (const char *file, void *arg, pin_error_t *errp)
{
    char dir[PATH_MAX], path[PATH_MAX], why[PATH_MAX + 128];
    char *text;

    (void)arg;
    if (file[0] == '/')
        snprintf (path, sizeof (path), "%s", file);
    else if (conf_dir (dir, sizeof (dir), why, sizeof (why)) < 0) {
        errprintf (errp, "Include %.200s: %s", file, why);
        return NULL;
    } else if ((size_t)snprintf (path, sizeof (path), "%s/%s", dir, file)
               >= sizeof (path)) {
        errprintf (errp, "Include %.200s: path too long", file);
        return NULL;
    }
    if (!(text = read_conf_file (path, why, sizeof (why))))
        errprintf (errp, "Include: %s", why);
    return text;
}

static bool node_match (const char *expr, void *arg)
{
    return ident_node_in (expr, (const char *)arg);
}

void step_devices (spank_t sp)
{
    static struct gpus_conf conf; /* 32 KB: not on slurmstepd's stack */
    struct pin_step_gpu gpus[GPUS_MAX];
    char busid[GPUS_MAX][16];
    struct pin_step_devices d = {
        .ngpus = 0,
        .gpus = gpus,
        .nic = g.opt_given && g.opt.nic,
        .nic_name = g.opt.nic_name,
    };
    hwloc_bitmap_t held = NULL, job = NULL;
    char env[1024], path[PATH_MAX], why[PATH_MAX + 128];
    const char *var = g.batch ? "SLURM_JOB_GPUS" : "SLURM_STEP_GPUS";
    pin_error_t err = {""};
    char *text = NULL;

    if (!gres_gpu_configured ())
        goto apply; /* no GPU in this cluster's slurm.conf */
    if (spank_getenv (sp, var, env, sizeof (env)) != ESPANK_SUCCESS
        || !env[0])
        goto apply; /* Slurm gave the step no GPU here */
    if (!(held = hwloc_bitmap_alloc ()) || !(job = hwloc_bitmap_alloc ()))
        goto apply;
    if (topo_list_parse (env, held, &err) < 0) {
        slurm_error ("pin: step %s: %s: %s; its GPUs are not used for "
                     "placement",
                     g.stepname,
                     var,
                     err.text);
        goto apply;
    }
    job_info ("its GPUs are not used for placement");
    if (!g.ident.have_gres) {
        slurm_error ("pin: step %s: slurmctld did not say which GPUs job %u "
                     "holds on %s; its GPUs are not used for placement",
                     g.stepname,
                     g.job,
                     g.ident.node);
        goto apply;
    }
    if (gpus_detail_parse (g.ident.gres_detail, job, &err) < 0) {
        slurm_error ("pin: step %s: %s", g.stepname, err.text);
        goto apply;
    }
    if (!hwloc_bitmap_isincluded (held, job)) {
        char *h = topo_list_format (held), *j = topo_list_format (job);
        slurm_error ("pin: step %s: %s=%s names GPUs outside the job's %s on "
                     "%s; only those are used",
                     g.stepname,
                     var,
                     h ? h : "?",
                     j && *j ? j : "none",
                     g.ident.node);
        free (h);
        free (j);
        hwloc_bitmap_and (held, held, job);
    }
    if (hwloc_bitmap_iszero (held))
        goto apply;
    if (!(text = read_gres_conf (path, sizeof (path), why, sizeof (why)))) {
        slurm_error ("pin: step %s: %s; its GPUs are not used for placement",
                     g.stepname,
                     why);
        goto apply;
    }
    const struct gpus_include inc = {read_include, NULL};
    if (gpus_conf_parse_inc (text, &inc, node_match, g.ident.node, &conf, &err)
        < 0) {
        slurm_error ("pin: step %s: %s: %s; its GPUs are not used for "
                     "placement",
                     g.stepname,
                     path,
                     err.text);
        goto apply;
    }
    int i;
    hwloc_bitmap_foreach_begin (i, held)
    {
        struct pin_step_gpu *gp;
        const char *via = "";
        if (d.ngpus >= GPUS_MAX)
            break;
        gp = &gpus[d.ngpus];
        gp->index = (unsigned)i;
        gp->busid = NULL;
        gp->cores = NULL;
        if ((unsigned)i >= conf.n) {
            slurm_error ("pin: step %s: GPU %d is not in %s for %s%s",
                         g.stepname,
                         i,
                         path,
                         g.ident.node,
                         conf.autodetect
                             ? " (AutoDetect: slurm-pin needs its File= "
                               "lines, doc/admin-guide.md)"
                             : "");
            continue;
        }
        gp->cores = conf.dev[i].cores;
        if (conf.dev[i].file[0]) {
            if (gpus_device_busid (g.conf.test_device_root,
                                   conf.dev[i].file,
                                   busid[d.ngpus],
                                   sizeof (busid[0]),
                                   &via,
                                   &err)
                == 0) {
                gp->busid = busid[d.ngpus];
                slurm_debug ("pin: step %s: GPU %d: %s is %s (%s)",
                             g.stepname,
                             i,
                             conf.dev[i].file,
                             gp->busid,
                             via);
            } else
                slurm_info ("pin: step %s: GPU %d: %s", g.stepname, i, err.text);
        }
        d.ngpus++;
    }
    hwloc_bitmap_foreach_end ();
apply:
    if ((d.ngpus || d.nic) && pin_step_set_devices (g.st, &d, &err) < 0)
        slurm_error ("pin: step %s: %s", g.stepname, err.text);
    free (text);
    hwloc_bitmap_free (held);
    hwloc_bitmap_free (job);
}
