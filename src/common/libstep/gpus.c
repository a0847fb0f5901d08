/* gpus.c - which GPUs a step holds, and which PCI devices they are
 * (see gpus.h)
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "gpus.h"
#include "libtopo/topo.h"

/* ---- gres.conf ------------------------------------------------------------ */

/* Expand "/dev/nvidia[0-3]" (one bracket group of N and N-M items) into
 * out, appending to out->dev with `cores`. */
static int expand_file (const char *file,
                        const char *cores,
                        struct gpus_conf *out,
                        const char *fname,
                        unsigned line,
                        pin_error_t *errp)
{
    const char *lb = strchr (file, '['), *rb;
    char pre[256], post[256], list[256];

    if (!lb) {
        if (out->n >= GPUS_MAX)
            return errprintf (errp,
                              "%s line %u: more than %d GPUs",
                              fname,
                              line,
                              GPUS_MAX);
        snprintf (out->dev[out->n].file, sizeof (out->dev[0].file), "%s", file);
        snprintf (out->dev[out->n].cores, sizeof (out->dev[0].cores), "%s", cores);
        out->n++;
        return 0;
    }
    if (!(rb = strchr (lb, ']')) || strchr (rb + 1, '[')
        || (size_t)(lb - file) >= sizeof (pre)
        || (size_t)(rb - lb - 1) >= sizeof (list)
        || strlen (rb + 1) >= sizeof (post))
        return errprintf (errp,
                          "%s line %u: File=%.64s: expected one "
                          "bracket range such as /dev/nvidia[0-3]",
                          fname,
                          line,
                          file);
    snprintf (pre, sizeof (pre), "%.*s", (int)(lb - file), file);
    snprintf (list, sizeof (list), "%.*s", (int)(rb - lb - 1), lb + 1);
    snprintf (post, sizeof (post), "%s", rb + 1);
    char *save = NULL;
    for (char *it = strtok_r (list, ",", &save); it;
         it = strtok_r (NULL, ",", &save)) {
        char *end;
        unsigned long a, b;
        size_t width = strcspn (it, "-");
        if (!isdigit ((unsigned char)it[0]))
            goto bad;
        a = strtoul (it, &end, 10);
        b = a;
        if (*end == '-') {
            if (!isdigit ((unsigned char)end[1]))
                goto bad;
            b = strtoul (end + 1, &end, 10);
        }
        if (*end || b < a || b - a >= GPUS_MAX || b > 99999)
            goto bad;
        for (unsigned long v = a; v <= b; v++) {
            if (out->n >= GPUS_MAX)
                return errprintf (errp,
                                  "%s line %u: more than %d GPUs",
                                  fname,
                                  line,
                                  GPUS_MAX);
            /* a leading zero keeps the width ("[00-03]") */
            int w = it[0] == '0' && width > 1 ? (int)width : 1;
            if ((size_t)snprintf (out->dev[out->n].file,
                                  sizeof (out->dev[0].file),
                                  "%s%0*lu%s",
                                  pre,
                                  w,
                                  v,
                                  post)
                >= sizeof (out->dev[0].file))
                goto bad;
            snprintf (out->dev[out->n].cores,
                      sizeof (out->dev[0].cores),
                      "%s",
                      cores);
            out->n++;
        }
    }
    return 0;
bad:
    return errprintf (errp,
                      "%s line %u: File=%.64s: bad range; expected "
                      "N or N-M items such as /dev/nvidia[0-1,3]",
                      fname,
                      line,
                      file);
}

/* The lines of one file (`fname` in errors); depth: Include nesting. */
static int parse_text (const char *text,
                       const char *fname,
                       unsigned depth,
                       const struct gpus_include *inc,
                       gpus_node_match_f match,
                       void *arg,
                       struct gpus_conf *out,
                       pin_error_t *errp)
{
    unsigned line = 0;
    const char *p = text ? text : "";

    while (*p) {
        size_t len = strcspn (p, "\n");
        char buf[1024], *save = NULL;
        char node[512] = "", name[64] = "", file[256] = "", cores[256] = "";
        char count[32] = "";
        bool has_node = false;

        line++;
        if (len >= sizeof (buf))
            return errprintf (errp,
                              "%s line %u: longer than %zu bytes",
                              fname,
                              line,
                              sizeof (buf) - 1);
        memcpy (buf, p, len);
        buf[len] = '\0';
        p += len + (p[len] == '\n');
        buf[strcspn (buf, "#")] = '\0';
        if (!strncasecmp (buf + strspn (buf, " \t"), "include", 7)
            && (buf[strspn (buf, " \t") + 7] == ' '
                || buf[strspn (buf, " \t") + 7] == '\t')) {
            /* "Include PATH": Slurm's parser reads PATH in its place */
            char *f = buf + strspn (buf, " \t") + 7, *sub = NULL;
            f += strspn (f, " \t");
            f[strcspn (f, " \t\r")] = '\0';
            int rc;
            if (!inc || !inc->read)
                return errprintf (errp,
                                  "%s line %u: Include is not read here",
                                  fname,
                                  line);
            if (depth >= GPUS_INCLUDE_DEPTH)
                return errprintf (errp,
                                  "%s line %u: Include nested deeper than %d",
                                  fname,
                                  line,
                                  GPUS_INCLUDE_DEPTH);
            if (!*f || !(sub = inc->read (f, inc->arg, errp)))
                return *f ? -1
                          : errprintf (errp,
                                       "%s line %u: Include without a file",
                                       fname,
                                       line);
            rc = parse_text (sub, f, depth + 1, inc, match, arg, out, errp);
            free (sub);
            if (rc < 0)
                return -1;
            continue;
        }
        for (char *tok = strtok_r (buf, " \t\r", &save); tok;
             tok = strtok_r (NULL, " \t\r", &save)) {
            char *eq = strchr (tok, '=');
            const char *v;
            if (!eq)
                continue;
            *eq = '\0';
            v = eq + 1;
            if (!strcasecmp (tok, "NodeName")) {
                has_node = true;
                snprintf (node, sizeof (node), "%s", v);
            } else if (!strcasecmp (tok, "Name"))
                snprintf (name, sizeof (name), "%s", v);
            else if (!strcasecmp (tok, "File")) {
                if (strlen (v) >= sizeof (file))
                    return errprintf (errp,
                                      "%s line %u: File= longer "
                                      "than %zu bytes",
                                      fname,
                                      line,
                                      sizeof (file) - 1);
                snprintf (file, sizeof (file), "%s", v);
            } else if (!strcasecmp (tok, "Cores"))
                snprintf (cores, sizeof (cores), "%s", v);
            else if (!strcasecmp (tok, "Count"))
                snprintf (count, sizeof (count), "%s", v);
            else if (!strcasecmp (tok, "AutoDetect") && strcasecmp (v, "off"))
                out->autodetect = true;
        }
        if (strcasecmp (name, "gpu") != 0)
            continue;
        if (has_node && (!match || !match (node, arg)))
            continue;
        if (!file[0]) {
            /* a count without devices: Count= indexes without a file
             * (Slurm's default count is 1) */
            unsigned long k = 1;
            if (count[0]) {
                char *end;
                errno = 0;
                k = strtoul (count, &end, 10);
                if (!isdigit ((unsigned char)count[0]) || *end || errno
                    || k > GPUS_MAX)
                    return errprintf (errp,
                                      "%s line %u: Count=%.20s: "
                                      "expected a GPU count of 0 to %d",
                                      fname,
                                      line,
                                      count,
                                      GPUS_MAX);
            }
            for (; k > 0; k--) {
                if (out->n >= GPUS_MAX)
                    return errprintf (errp,
                                      "%s line %u: more than %d GPUs",
                                      fname,
                                      line,
                                      GPUS_MAX);
                out->dev[out->n].file[0] = '\0';
                snprintf (out->dev[out->n].cores,
                          sizeof (out->dev[0].cores),
                          "%s",
                          cores);
                out->n++;
            }
            continue;
        }
        if (expand_file (file, cores, out, fname, line, errp) < 0)
            return -1;
    }
    return 0;
}

int gpus_conf_parse_inc (const char *text,
                         const struct gpus_include *inc,
                         gpus_node_match_f match,
                         void *arg,
                         struct gpus_conf *out,
                         pin_error_t *errp)
{
    memset (out, 0, sizeof (*out));
    return parse_text (text, "gres.conf", 0, inc, match, arg, out, errp);
}

int gpus_conf_parse (const char *text,
                     gpus_node_match_f match,
                     void *arg,
                     struct gpus_conf *out,
                     pin_error_t *errp)
{
    return gpus_conf_parse_inc (text, NULL, match, arg, out, errp);
}

/* ---- slurmctld's gres_detail_str ---------------------------------------- */

int gpus_detail_parse (const char *detail,
                       hwloc_bitmap_t idx,
                       pin_error_t *errp)
{
    const char *p = detail ? detail : "";

    while (*p) {
        /* one entry: up to a ',' outside parentheses */
        const char *e = p;
        int depth = 0;
        while (*e && (depth > 0 || *e != ',')) {
            if (*e == '(')
                depth++;
            else if (*e == ')' && depth > 0)
                depth--;
            e++;
        }
        size_t n = (size_t)(e - p);
        const char *colon = memchr (p, ':', n), *paren = memchr (p, '(', n);
        const char *nend = colon && (!paren || colon < paren) ? colon
                           : paren                            ? paren
                                                              : e;
        if ((size_t)(nend - p) == 3 && !strncmp (p, "gpu", 3) && paren) {
            const char *ix = NULL;
            for (const char *q = paren; q + 4 <= e; q++)
                if (!strncmp (q, "IDX:", 4)) {
                    ix = q + 4;
                    break;
                }
            if (ix) {
                const char *end = ix;
                char list[256];
                hwloc_bitmap_t s = hwloc_bitmap_alloc ();
                pin_error_t err = {""};
                while (end < e && *end != ')')
                    end++;
                if (!s)
                    return errprintf (errp, "out of memory");
                if ((size_t)(end - ix) >= sizeof (list)
                    || (snprintf (list, sizeof (list), "%.*s", (int)(end - ix), ix),
                        topo_list_parse (list, s, &err) < 0)) {
                    hwloc_bitmap_free (s);
                    errno = EINVAL;
                    return errprintf (errp,
                                      "slurmctld's GRES detail '%.64s': "
                                      "bad IDX list",
                                      detail);
                }
                hwloc_bitmap_or (idx, idx, s);
                hwloc_bitmap_free (s);
            }
        }
        p = *e ? e + 1 : e;
    }
    return 0;
}

/* ---- device file -> PCI bus id ------------------------------------------ */

/* "0000:3b:00.0", lower case hexadecimal */
static bool is_busid (const char *s)
{
    static const char shape[] = "xxxx:xx:xx.x";
    if (strlen (s) != sizeof (shape) - 1)
        return false;
    for (size_t i = 0; shape[i]; i++)
        if (shape[i] == 'x' ? !isxdigit ((unsigned char)s[i]) : s[i] != shape[i])
            return false;
    return true;
}

static void lower (char *s)
{
    for (; *s; s++)
        *s = (char)tolower ((unsigned char)*s);
}

/* NVIDIA: the gpus/BUSID/information whose "Device Minor:" is minor */
static int nvidia_busid (const char *root,
                         unsigned minor,
                         char *busid,
                         size_t n)
{
    char dir[PATH_MAX];
    DIR *d;
    struct dirent *e;
    int rc = -1;

    snprintf (dir, sizeof (dir), "%s/proc/driver/nvidia/gpus", root);
    if (!(d = opendir (dir)))
        return -1;
    while ((e = readdir (d))) {
        char path[PATH_MAX + 300], buf[4096];
        ssize_t len;
        int fd;
        const char *m;
        if (!is_busid (e->d_name))
            continue;
        snprintf (path, sizeof (path), "%s/%s/information", dir, e->d_name);
        if ((fd = open (path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
            continue;
        len = read (fd, buf, sizeof (buf) - 1);
        close (fd);
        if (len <= 0)
            continue;
        buf[len] = '\0';
        if ((m = strstr (buf, "Device Minor:"))) {
            char *end;
            m += strlen ("Device Minor:");
            while (*m == ' ' || *m == '\t')
                m++;
            unsigned long v = strtoul (m, &end, 10);
            if (end != m && v == minor) {
                snprintf (busid, n, "%s", e->d_name);
                lower (busid);
                rc = 0;
                break;
            }
        }
    }
    closedir (d);
    return rc;
}

int gpus_device_busid (const char *root,
                       const char *file,
                       char *busid,
                       size_t n,
                       const char **via,
                       pin_error_t *errp)
{
    struct stat st;
    char link[PATH_MAX], target[PATH_MAX];
    ssize_t len;
    const char *base;
    unsigned ma, mi;

    if (!root)
        root = "";
    if (via)
        *via = "";
    if (!file || file[0] != '/')
        return errprintf (errp,
                          "GPU device file '%.64s': not an absolute path",
                          file ? file : "");
    if (stat (file, &st) < 0)
        return errprintf (errp,
                          "GPU device file %.200s: %s",
                          file,
                          strerror (errno));
    if (!S_ISCHR (st.st_mode)) {
        errno = EINVAL;
        return errprintf (errp,
                          "GPU device file %.200s: not a character device",
                          file);
    }
    ma = major (st.st_rdev);
    mi = minor (st.st_rdev);
    snprintf (link, sizeof (link), "%s/sys/dev/char/%u:%u/device", root, ma, mi);
    if ((len = readlink (link, target, sizeof (target) - 1)) > 0) {
        target[len] = '\0';
        base = strrchr (target, '/');
        base = base ? base + 1 : target;
        if (is_busid (base)) {
            snprintf (busid, n, "%s", base);
            lower (busid);
            if (via)
                *via = "sysfs";
            return 0;
        }
    }
    if (nvidia_busid (root, mi, busid, n) == 0) {
        if (via)
            *via = "nvidia";
        return 0;
    }
    errno = ENOENT;
    return errprintf (errp,
                      "GPU device file %.200s (%u:%u): no PCI device in "
                      "%s/sys/dev/char or %s/proc/driver/nvidia",
                      file,
                      ma,
                      mi,
                      root,
                      root);
}
