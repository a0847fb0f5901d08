/* procfs.c - what the profiler samples from /proc */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"

/* Parse a decimal unsigned at *p (no sign), advancing *p. */
static bool get_u64 (const char **p, uint64_t *v)
{
    const char *s = *p;
    uint64_t x = 0;

    if (!isdigit ((unsigned char)*s))
        return false;
    while (isdigit ((unsigned char)*s)) {
        unsigned d = (unsigned)(*s - '0');
        if (x > (UINT64_MAX - d) / 10)
            return false;
        x = x * 10 + d;
        s++;
    }
    *p = s;
    *v = x;
    return true;
}

static bool get_i64 (const char **p, int64_t *v)
{
    bool neg = **p == '-';
    const char *s = *p + neg;
    uint64_t u;

    if (!get_u64 (&s, &u) || u > (uint64_t)INT64_MAX)
        return false;
    *v = neg ? -(int64_t)u : (int64_t)u;
    *p = s;
    return true;
}

int procfs_parse_stat (const char *text,
                       struct procfs_stat *out,
                       pin_error_t *errp)
{
    struct procfs_stat st = {.processor = -1};
    const char *open, *close, *p;
    int64_t pid, v;
    size_t n;
    int field;

    if (!text || !(open = strchr (text, '(')) || !(close = strrchr (text, ')'))
        || close < open) {
        errno = EINVAL;
        return errprintf (errp, "stat: no '(comm)' field");
    }
    p = text;
    if (!get_i64 (&p, &pid) || *p != ' ' || p + 1 != open || pid <= 0
        || pid > INT32_MAX) {
        errno = EINVAL;
        return errprintf (errp,
                          "stat: the pid before '(' is not a "
                          "positive number");
    }
    st.pid = (int32_t)pid;
    n = (size_t)(close - open - 1);
    if (n > 16)
        n = 16;
    memcpy (st.comm, open + 1, n);
    st.comm[n] = '\0';
    p = close + 1;
    if (p[0] != ' ' || !p[1] || isspace ((unsigned char)p[1])) {
        errno = EINVAL;
        return errprintf (errp, "stat: no state after the command");
    }
    st.state = p[1];
    p += 2;
    /* fields 4.. (1-based, as in proc(5)) */
    for (field = 4; *p == ' '; field++) {
        p++;
        if (*p != '-') {
            uint64_t u;
            if (!get_u64 (&p, &u))
                goto bad_field;
            v = u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u;
        } else if (!get_i64 (&p, &v)) {
        bad_field:
            errno = EINVAL;
            return errprintf (errp, "stat: field %d is not a number", field);
        }
        switch (field) {
            case 4:
                st.ppid = (int32_t)v;
                break;
            case 14:
                st.utime = (uint64_t)v;
                break;
            case 15:
                st.stime = (uint64_t)v;
                break;
            case 20:
                st.num_threads = v;
                break;
            case 22:
                st.starttime = (uint64_t)v;
                break;
            case 39:
                st.processor = (int32_t)v;
                break;
        }
    }
    if (*p != '\0' && *p != '\n') {
        errno = EINVAL;
        return errprintf (errp,
                          "stat: unexpected character after field %d",
                          field - 1);
    }
    if (field <= 22) {
        errno = EINVAL;
        return errprintf (errp,
                          "stat: %d fields, need at least 22",
                          field - 1);
    }
    *out = st;
    return 0;
}

/* The value of "Key:\t  N [kB]" lines; returns the number of keys found. */
static int keyed (const char *text,
                  const char *const *keys,
                  uint64_t **vals,
                  int nkeys,
                  const char *file,
                  pin_error_t *errp)
{
    const char *p = text;
    int found = 0;

    while (p && *p) {
        const char *eol = strchrnul (p, '\n');
        for (int i = 0; i < nkeys; i++) {
            size_t kl = strlen (keys[i]);
            if ((size_t)(eol - p) > kl && strncmp (p, keys[i], kl) == 0
                && p[kl] == ':') {
                const char *q = p + kl + 1;
                uint64_t v;
                while (*q == ' ' || *q == '\t')
                    q++;
                if (!get_u64 (&q, &v)
                    || !(q == eol || strncmp (q, " kB", 3) == 0)) {
                    errno = EINVAL;
                    return errprintf (errp,
                                      "%s: the value of %s is not "
                                      "a number",
                                      file,
                                      keys[i]);
                }
                *vals[i] = v;
                found |= 1 << i;
            }
        }
        p = *eol ? eol + 1 : NULL;
    }
    return found;
}

int procfs_parse_status (const char *text,
                         struct procfs_status *out,
                         pin_error_t *errp)
{
    static const char *const keys[] = {
        "voluntary_ctxt_switches",
        "nonvoluntary_ctxt_switches",
        "Threads",
        "VmRSS",
    };
    struct procfs_status st = {0};
    uint64_t *vals[] = {
        &st.voluntary_ctxt_switches,
        &st.nonvoluntary_ctxt_switches,
        &st.threads,
        &st.vmrss_kb,
    };
    int found;

    if (!text) {
        errno = EINVAL;
        return errprintf (errp, "status: no text");
    }
    if ((found = keyed (text, keys, vals, 4, "status", errp)) < 0)
        return -1;
    if ((found & 3) != 3) {
        errno = EINVAL;
        return errprintf (errp,
                          "status: no voluntary_ctxt_switches and "
                          "nonvoluntary_ctxt_switches lines");
    }
    *out = st;
    return 0;
}

int procfs_parse_rollup (const char *text,
                         struct procfs_rollup *out,
                         pin_error_t *errp)
{
    static const char *const keys[] = {"Rss", "Pss"};
    struct procfs_rollup r = {0};
    uint64_t *vals[] = {&r.rss_kb, &r.pss_kb};
    int found;

    if (!text) {
        errno = EINVAL;
        return errprintf (errp, "smaps_rollup: no text");
    }
    if ((found = keyed (text, keys, vals, 2, "smaps_rollup", errp)) < 0)
        return -1;
    if (found != 3) {
        errno = EINVAL;
        return errprintf (errp, "smaps_rollup: no Rss and Pss lines");
    }
    *out = r;
    return 0;
}

int procfs_parse_flat (const char *text,
                       const char *const *keys,
                       uint64_t *vals,
                       int nkeys,
                       const char *file,
                       pin_error_t *errp)
{
    const char *p = text;
    int found = 0;

    if (!text || nkeys > 31) {
        errno = EINVAL;
        return errprintf (errp, "%s: no text", file);
    }
    while (p && *p) {
        const char *eol = strchrnul (p, '\n');
        for (int i = 0; i < nkeys; i++) {
            size_t kl = strlen (keys[i]);
            if ((size_t)(eol - p) > kl && strncmp (p, keys[i], kl) == 0
                && p[kl] == ' ') {
                const char *q = p + kl + 1;
                uint64_t v;
                if (!get_u64 (&q, &v) || q != eol) {
                    errno = EINVAL;
                    return errprintf (errp,
                                      "%s: the value of %s is not "
                                      "a number",
                                      file,
                                      keys[i]);
                }
                vals[i] = v;
                found |= 1 << i;
            }
        }
        p = *eol ? eol + 1 : NULL;
    }
    return found;
}

int procfs_parse_cpustat (const char *text,
                          hwloc_const_bitmap_t cpus,
                          struct procfs_cpu *out,
                          size_t max,
                          pin_error_t *errp)
{
    hwloc_bitmap_t seen = hwloc_bitmap_alloc ();
    const char *p = text;
    size_t n = 0;
    int missing, rc = -1;

    if (!seen) {
        errno = ENOMEM;
        return errprintf (errp, "/proc/stat: out of memory");
    }
    if (!text) {
        errno = EINVAL;
        errprintf (errp, "/proc/stat: no text");
        goto out;
    }
    while (p && *p) {
        const char *eol = strchrnul (p, '\n');
        if (strncmp (p, "cpu", 3) == 0 && isdigit ((unsigned char)p[3])) {
            const char *q = p + 3;
            uint64_t cpu, f[8] = {0};
            int k = 0;
            if (!get_u64 (&q, &cpu) || cpu > 1048575) {
                errno = EINVAL;
                errprintf (errp, "/proc/stat: bad CPU number in a cpuN line");
                goto out;
            }
            while (*q == ' ' && q < eol) {
                uint64_t x;
                q++;
                if (*q == ' ')
                    continue; /* "cpu  1 2": two spaces */
                if (!get_u64 (&q, &x)) {
                    errno = EINVAL;
                    errprintf (errp,
                               "/proc/stat: cpu%llu: a value is not "
                               "a number",
                               (unsigned long long)cpu);
                    goto out;
                }
                if (k < 8)
                    f[k] = x;
                k++;
            }
            if (q != eol || k < 4) {
                errno = EINVAL;
                errprintf (errp,
                           "/proc/stat: cpu%llu: %d values, need at "
                           "least 4",
                           (unsigned long long)cpu,
                           k);
                goto out;
            }
            if (hwloc_bitmap_isset (cpus, (unsigned)cpu)
                && !hwloc_bitmap_isset (seen, (unsigned)cpu)) {
                if (n >= max) {
                    errno = E2BIG;
                    errprintf (errp, "/proc/stat: more than %zu CPUs", max);
                    goto out;
                }
                hwloc_bitmap_set (seen, (unsigned)cpu);
                out[n] = (struct procfs_cpu){(int)cpu,
                                             f[0],
                                             f[1],
                                             f[2],
                                             f[3],
                                             f[4],
                                             f[5],
                                             f[6],
                                             f[7]};
                n++;
            }
        }
        p = *eol ? eol + 1 : NULL;
    }
    hwloc_bitmap_andnot (seen, cpus, seen);
    if ((missing = hwloc_bitmap_first (seen)) >= 0) {
        errno = ENOENT;
        errprintf (errp, "/proc/stat: no line for CPU %d", missing);
        goto out;
    }
    rc = (int)n;
out:
    hwloc_bitmap_free (seen);
    return rc;
}

int procfs_parse_iostat (const char *text, uint64_t sums[4], pin_error_t *errp)
{
    static const char *const keys[4] = {"rbytes", "wbytes", "rios", "wios"};
    const char *p = text;
    uint64_t v4[4] = {0, 0, 0, 0};
    int line = 0;

    while (*p) {
        const char *eol = strchr (p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen (p);
        char buf[512], *save = NULL, *tok;
        unsigned maj, min;
        int used = 0;

        line++;
        if (len == 0)
            goto next;
        if (len >= sizeof (buf))
            goto bad;
        memcpy (buf, p, len);
        buf[len] = '\0';
        if (sscanf (buf, "%u:%u%n", &maj, &min, &used) != 2 || used <= 0
            || (buf[used] != ' ' && buf[used] != '\0'))
            goto bad;
        for (tok = strtok_r (buf + used, " ", &save); tok;
             tok = strtok_r (NULL, " ", &save)) {
            char *eq = strchr (tok, '='), *end;
            unsigned long long v;
            if (!eq)
                goto bad;
            *eq = '\0';
            errno = 0;
            v = strtoull (eq + 1, &end, 10);
            if (errno || end == eq + 1 || *end || eq[1] == '-')
                goto bad;
            for (int k = 0; k < 4; k++)
                if (!strcmp (tok, keys[k]))
                    v4[k] += v;
        }
    next:
        if (!eol)
            break;
        p = eol + 1;
    }
    memcpy (sums, v4, sizeof (v4));
    return 0;
bad:
    errno = EINVAL;
    return errprintf (errp,
                      "io.stat line %d: expected MAJ:MIN KEY=NUMBER...",
                      line);
}

ssize_t procfs_read (const char *path, char *buf, size_t size)
{
    return procfs_read_at (AT_FDCWD, path, buf, size);
}

ssize_t procfs_read_at (int dirfd, const char *path, char *buf, size_t size)
{
    int fd = openat (dirfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    size_t len = 0;

    if (fd < 0)
        return -1;
    for (;;) {
        ssize_t n;
        if (len + 1 >= size) {
            char c;
            n = read (fd, &c, 1);
            close (fd);
            if (n == 0)
                break;
            errno = EFBIG;
            return -1;
        }
        n = read (fd, buf + len, size - 1 - len);
        if (n < 0) {
            int e = errno;
            if (e == EINTR)
                continue;
            close (fd);
            errno = e;
            return -1;
        }
        if (n == 0) {
            close (fd);
            break;
        }
        len += (size_t)n;
    }
    buf[len] = '\0';
    return (ssize_t)len;
}
