/* stepcg.c - where a step's cgroups are, and what other steps hold
 *
 * Slurm's names on top of cg2.c: everything here goes through cg2's
 * calls, which walk from the root fd with O_NOFOLLOW (cg2.h). */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <slurm/slurm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

bool stepcg_is_sluid (const char *name, size_t len)
{
    /* Slurm's print_sluid(): 's' and 13 characters of Crockford's
     * base 32, upper case (no I, L, O, U) */
    static const char cb32[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

    if (len != STEPCG_SLUID_LEN || name[0] != 's')
        return false;
    for (size_t i = 1; i < len; i++) {
        if (name[i] == '\0' || !strchr (cb32, name[i]))
            return false;
    }
    return true;
}

/* Is the component that ends just before `end` (at a '/') in `path`
 * Slurm's directory of job `job`: "job_<job>", or a SLUID? */
static bool job_component (const char *path, const char *end, uint32_t job)
{
    char want[24];
    const char *start = end;
    size_t len;

    while (start > path && start[-1] != '/')
        start--;
    if (start == path) /* a component must follow a '/' */
        return false;
    len = (size_t)(end - start);
    snprintf (want, sizeof (want), "job_%u", job);
    if (len == strlen (want) && memcmp (start, want, len) == 0)
        return true;
    return stepcg_is_sluid (start, len);
}

int stepcg_find_slurm_step (const char *pid_path,
                            uint32_t job,
                            uint32_t step,
                            char *out,
                            size_t n)
{
    char pat[40], stepdir[32];
    const char *p;
    size_t len;

    if (!pid_path)
        return -1;
    snprintf (pat,
              sizeof (pat),
              "/%s",
              stepcg_step_dir (step, stepdir, sizeof (stepdir)));
    len = strlen (pat);
    for (p = strstr (pid_path, pat); p; p = strstr (p + 1, pat)) {
        if ((p[len] == '/' || p[len] == '\0')
            && job_component (pid_path, p, job)) {
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

bool stepcg_has_controller (cg2_t *cg,
                            const char *relpath,
                            const char *controller)
{
    char *s = cg2_read (cg, relpath, "cgroup.controllers", NULL);
    size_t len = strlen (controller);
    bool found = false;

    if (!s)
        return false;
    for (char *p = s; (p = strstr (p, controller)); p += len) {
        if ((p == s || p[-1] == ' ')
            && (p[len] == ' ' || p[len] == '\0' || p[len] == '\n')) {
            found = true;
            break;
        }
    }
    free (s);
    return found;
}

/* The plugin's rules below a job's directory: step_<id>/task_<n>
 * (standalone) and step_<id>/user/task_<n> (Slurm's tree) hold; the
 * caller's own step and the batch, extern and interactive steps, Slurm's
 * step cgroups themselves and anything else do not. */
static enum cg2_busy_verdict step_tasks (const char *path,
                                         const char *sub,
                                         const char *name,
                                         void *arg)
{
    const char *self = arg;
    const char *slash1 = strchr (sub, '/');
    const char *slash2 = slash1 ? strchr (slash1 + 1, '/') : NULL;
    bool task = strncmp (name, "task_", 5) == 0;

    (void)path;
    if (!slash1) { /* the step directories */
        if (strncmp (name, "step_", 5) != 0
            || (self && strcmp (name, self) == 0)
            || strcmp (name, "step_batch") == 0
            || strcmp (name, "step_extern") == 0
            || strcmp (name, "step_interactive") == 0)
            return CG2_BUSY_SKIP;
        return CG2_BUSY_DESCEND;
    }
    if (!slash2) { /* step_<id>/x */
        if (task)
            return CG2_BUSY_HOLDER;
        return strcmp (name, "user") == 0 ? CG2_BUSY_DESCEND : CG2_BUSY_SKIP;
    }
    if (!strchr (slash2 + 1, '/') && task
        && strncmp (slash1, "/user/", 6) == 0)
        return CG2_BUSY_HOLDER; /* step_<id>/user/task_<n> */
    return CG2_BUSY_SKIP;
}

int stepcg_busy (cg2_t *cg,
                 const char *job_rel,
                 const char *self,
                 hwloc_bitmap_t busy,
                 pin_error_t *errp)
{
    return cg2_busy_cpus_filter (cg,
                                 job_rel,
                                 step_tasks,
                                 (void *)self,
                                 busy,
                                 errp);
}

/* vi: ts=4 sw=4 expandtab
 */
