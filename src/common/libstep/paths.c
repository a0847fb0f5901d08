/* paths.c - the step's path helpers (step_private.h): the leaves every
 * other file of libstep calls, calling none of them back */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "step_private.h"

int step_fmt_path (char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    int len;

    va_start (ap, fmt);
    len = vsnprintf (buf, n, fmt, ap);
    va_end (ap);
    if (len < 0 || (size_t)len >= n) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

/* The job directory of the step's cgroup path: step_rel less its last
 * component. */
void step_job_dir_of_step (const pin_step_t *s, char *buf, size_t n)
{
    const char *slash = strrchr (s->step_rel, '/');

    snprintf (buf,
              n,
              "%.*s",
              (int)(slash ? slash - s->step_rel : 0),
              s->step_rel);
}

const char *pin_step_acct_rel (pin_step_t *s, char *job_rel, size_t n)
{
    if (job_rel && n)
        job_rel[0] = '\0';
    if (!s || !s->cg || s->mode == CG2_MODE_NONE || !s->step_rel[0])
        return "";
    if (s->mode == CG2_MODE_NESTED) {
        if (job_rel)
            step_job_dir_of_step (s, job_rel, n);
        snprintf (s->acct_rel, sizeof (s->acct_rel), "%s/user", s->step_rel);
        return s->acct_rel;
    }
    return s->step_rel;
}
