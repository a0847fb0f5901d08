/* profdir.c - finding the profiles of a job (profdir.h) */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "profdir.h"

#define SUFFIX ".jsonl"

static bool special_step (const char *s)
{
    return strcmp (s, "batch") == 0 || strcmp (s, "interactive") == 0
           || strcmp (s, "extern") == 0;
}

static bool all_digits (const char *s, size_t len)
{
    if (len == 0 || len > 10)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!isdigit ((unsigned char)s[i]))
            return false;
    return true;
}

static int to_u32 (const char *s, size_t len, uint32_t *out)
{
    unsigned long long v = 0;

    if (!all_digits (s, len))
        return -1;
    for (size_t i = 0; i < len; i++)
        v = v * 10 + (unsigned)(s[i] - '0');
    if (v == 0 || v > UINT32_MAX - 16)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

int profdir_spec_parse (const char *spec,
                        uint32_t *job,
                        char *step,
                        size_t n,
                        pin_error_t *errp)
{
    const char *dot;
    size_t jlen;
    char shown[48];

    if (!spec || !*spec)
        goto bad;
    dot = strchr (spec, '.');
    jlen = dot ? (size_t)(dot - spec) : strlen (spec);
    if (to_u32 (spec, jlen, job) < 0)
        goto bad;
    if (!dot) {
        if (n)
            step[0] = '\0';
        return 0;
    }
    if (!(all_digits (dot + 1, strlen (dot + 1)) || special_step (dot + 1))
        || strlen (dot + 1) >= n)
        goto bad;
    snprintf (step, n, "%s", dot + 1);
    return 0;
bad:
    snprintf (shown, sizeof (shown), "%.40s", spec ? spec : "");
    for (char *c = shown; *c; c++)
        if (!isprint ((unsigned char)*c))
            *c = '?';
    errno = EINVAL;
    return errprintf (errp,
                      "'%s': not a job or step; give JOB or JOB.STEP "
                      "(e.g. 4242, 4242.0, 4242.batch) or a profile file",
                      shown);
}

/* Steps in order: numbers ascending, then the named ones. */
static int step_cmp (const char *a, const char *b)
{
    bool na = all_digits (a, strlen (a)), nb = all_digits (b, strlen (b));

    if (na && nb)
        return strtoul (a, NULL, 10) < strtoul (b, NULL, 10)
                   ? -1
                   : strtoul (a, NULL, 10) > strtoul (b, NULL, 10);
    if (na != nb)
        return na ? -1 : 1;
    return strcmp (a, b);
}

static int entry_cmp (const void *x, const void *y)
{
    const struct profdir_entry *a = x, *b = y;
    int c = step_cmp (a->step, b->step);

    return c ? c : strcmp (a->node, b->node);
}

/* st_dev of path or of the nearest directory above it that exists. */
static int dev_of (const char *path, dev_t *dev)
{
    char buf[PATH_MAX];
    struct stat st;
    char *slash;

    if (snprintf (buf, sizeof (buf), "%s", path) >= (int)sizeof (buf))
        return -1;
    while (stat (buf, &st) < 0) {
        if (errno != ENOENT || !(slash = strrchr (buf, '/')))
            return -1;
        if (slash == buf) {
            buf[1] = '\0';
            if (stat (buf, &st) < 0)
                return -1;
            break;
        }
        *slash = '\0';
    }
    *dev = st.st_dev;
    return 0;
}

uint64_t profdir_journal_reserve (const char *profile_dir,
                                  const char *journal_dir,
                                  uint64_t journal_max)
{
    dev_t a, b;

    if (!profile_dir || !journal_dir || dev_of (profile_dir, &a) < 0
        || dev_of (journal_dir, &b) < 0)
        return journal_max ? journal_max : PROFDIR_JOURNAL_RESERVE;
    if (a != b)
        return 0;
    return journal_max ? journal_max : PROFDIR_JOURNAL_RESERVE;
}

void profdir_free (struct profdir_entry *v, size_t count)
{
    for (size_t i = 0; v && i < count; i++)
        free (v[i].path);
    free (v);
}

int profdir_find (const char *dir,
                  const char *spec,
                  struct profdir_entry **out,
                  size_t *count,
                  pin_error_t *errp)
{
    struct profdir_entry *v = NULL;
    size_t nv = 0, cap = 0;
    char want_step[16], prefix[32];
    uint32_t job;
    struct dirent *de;
    DIR *d;

    *out = NULL;
    *count = 0;
    if (profdir_spec_parse (spec, &job, want_step, sizeof (want_step), errp)
        < 0)
        return -1;
    if (!(d = opendir (dir)))
        return errprintf (errp, "%s: %s", dir, strerror (errno));
    snprintf (prefix, sizeof (prefix), "%u.", job);
    while ((de = readdir (d))) {
        const char *name = de->d_name, *step, *node, *sdot;
        size_t len = strlen (name), plen = strlen (prefix);
        struct profdir_entry e;

        if (len <= plen + strlen (SUFFIX) || strncmp (name, prefix, plen) != 0
            || strcmp (name + len - strlen (SUFFIX), SUFFIX) != 0)
            continue;
        step = name + plen;
        if (!(sdot = strchr (step, '.')) || (size_t)(sdot - step) == 0
            || (size_t)(sdot - step) >= sizeof (e.step))
            continue;
        memset (&e, 0, sizeof (e));
        memcpy (e.step, step, (size_t)(sdot - step));
        if (!all_digits (e.step, strlen (e.step)) && !special_step (e.step))
            continue;
        if (want_step[0] && strcmp (want_step, e.step) != 0)
            continue;
        node = sdot + 1;
        len = strlen (node) - strlen (SUFFIX);
        if (len == 0 || len >= sizeof (e.node))
            continue;
        memcpy (e.node, node, len);
        e.job = job;
        if (nv == cap) {
            size_t ncap = cap ? 2 * cap : 8;
            struct profdir_entry *nw = realloc (v, ncap * sizeof (*v));
            if (!nw)
                goto nomem;
            v = nw;
            cap = ncap;
        }
        if (asprintf (&e.path, "%s/%s", dir, name) < 0)
            goto nomem;
        v[nv++] = e;
    }
    closedir (d);
    if (nv)
        qsort (v, nv, sizeof (*v), entry_cmp);
    *out = v;
    *count = nv;
    return 0;
nomem:
    closedir (d);
    profdir_free (v, nv);
    errno = ENOMEM;
    return errprintf (errp, "out of memory");
}
