/* pinopt.c - the value of --pin-policy and other untrusted strings */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "libplace/place.h"
#include "pinopt.h"

#define QUOTE_MAX PINOPT_VALUE_MAX

const char *pinopt_quote (const char *s, size_t max, char *buf, size_t n)
{
    size_t i = 0, o = 0;

    if (n == 0)
        return buf;
    if (!s)
        s = "(null)";
    while (s[i] && i < max && o + 1 < n) {
        unsigned char c = (unsigned char)s[i++];
        buf[o++] = (isprint (c) && c < 0x7f) ? (char)c : '?';
    }
    if (s[i] && o + 4 < n) {
        memcpy (buf + o, "...", 3);
        o += 3;
    }
    buf[o] = '\0';
    return buf;
}

const char *pinopt_slurm_optarg (const char *value)
{
    return value && strcmp (value, "(null)") == 0 ? NULL : value;
}

/* The next ','-separated token of s starting at *pos, into tok (size n).
 * Returns its length, or -1 if longer than n - 1. */
static int next_token (const char *s, size_t *pos, char *tok, size_t n)
{
    size_t start = *pos, len = strcspn (s + start, ",");

    *pos = start + len + (s[start + len] == ',' ? 1 : 0);
    if (len >= n)
        return -1;
    memcpy (tok, s + start, len);
    tok[len] = '\0';
    return (int)len;
}

int pinopt_parse (const char *value, struct pin_option *opt, pin_error_t *errp)
{
    char shown[QUOTE_MAX + 8];
    char tok[PINOPT_VALUE_MAX + 1];
    enum place_policy policy;
    bool verbose = false, nic = false;
    char nic_name[PINOPT_NIC_MAX + 1] = "";
    size_t pos = 0, len;

    pinopt_quote (value, QUOTE_MAX, shown, sizeof (shown));
    if (!value || !*value) {
        errno = EINVAL;
        return errprintf (errp,
                          "--pin-policy=%s: empty value; "
                          "use POLICY[,verbose][,nic[=NAME]] with POLICY one of: %s",
                          shown,
                          place_policy_list ());
    }
    len = strnlen (value, PINOPT_VALUE_MAX + 1);
    if (len > PINOPT_VALUE_MAX) {
        errno = EINVAL;
        return errprintf (errp,
                          "--pin-policy=%s: value longer than %d "
                          "characters; known policies: %s",
                          shown,
                          PINOPT_VALUE_MAX,
                          place_policy_list ());
    }
    if (next_token (value, &pos, tok, sizeof (tok)) < 0
        || place_policy_parse (tok, &policy, NULL) < 0) {
        char t[QUOTE_MAX + 8];
        errno = EINVAL;
        return errprintf (errp,
                          "--pin-policy=%s: unknown policy '%s'; "
                          "known: %s",
                          shown,
                          pinopt_quote (tok, QUOTE_MAX, t, sizeof (t)),
                          place_policy_list ());
    }
    while (pos < len) {
        char t[QUOTE_MAX + 8];
        int tl = next_token (value, &pos, tok, sizeof (tok));
        if (tl >= 0 && (!strcmp (tok, "nic") || !strncmp (tok, "nic=", 4))) {
            const char *n = tok[3] ? tok + 4 : "";
            size_t nl = strlen (n);
            bool ok = tok[3] ? nl > 0 && nl <= PINOPT_NIC_MAX : true;
            for (size_t i = 0; ok && i < nl; i++)
                ok = isalnum ((unsigned char)n[i]) || strchr ("._:-", n[i]);
            if (!ok) {
                errno = EINVAL;
                return errprintf (errp,
                                  "--pin-policy=%s: bad NIC name '%s'; use "
                                  "nic or nic=NAME with NAME a device name "
                                  "(mlx5_0, eth0), index or PCI bus id of "
                                  "at most %d characters [A-Za-z0-9._:-]",
                                  shown,
                                  pinopt_quote (n, QUOTE_MAX, t, sizeof (t)),
                                  PINOPT_NIC_MAX);
            }
            nic = true;
            snprintf (nic_name, sizeof (nic_name), "%s", n);
            continue;
        }
        if (tl < 0 || strcmp (tok, "verbose") != 0) {
            errno = EINVAL;
            return errprintf (errp,
                              "--pin-policy=%s: unknown flag '%s'; "
                              "use POLICY[,verbose][,nic[=NAME]] with POLICY one of: %s",
                              shown,
                              pinopt_quote (tok, QUOTE_MAX, t, sizeof (t)),
                              place_policy_list ());
        }
        verbose = true;
    }
    /* A trailing ',' leaves an empty flag. */
    if (value[len - 1] == ',') {
        errno = EINVAL;
        return errprintf (errp,
                          "--pin-policy=%s: empty flag after ','; "
                          "use POLICY[,verbose][,nic[=NAME]] with POLICY one of: %s",
                          shown,
                          place_policy_list ());
    }
    opt->policy = (int)policy;
    opt->verbose = verbose;
    opt->nic = nic;
    memcpy (opt->nic_name, nic_name, sizeof (opt->nic_name));
    return 0;
}

bool pinopt_cpu_bind_conflicts (const char *type)
{
    static const char *explicit[] = {
        "map_cpu",
        "mask_cpu",
        "map_ldom",
        "mask_ldom",
        NULL,
    };

    if (!type)
        return false;
    for (int i = 0; explicit[i]; i++) {
        if (strstr (type, explicit[i]))
            return true;
    }
    return false;
}

/* The next item of a SLURM_CPU_BIND value at *p, normalised: no case, no
 * "0x", no leading zeros (one digit kept).  Returns its length in s (the
 * item, still in place), advancing *p past its separator. */
static size_t bind_item (const char **p, const char **s)
{
    const char *q = *p;
    size_t len = strcspn (q, ",:");

    *p = q + len + (q[len] ? 1 : 0);
    if (len > 2 && q[0] == '0' && (q[1] == 'x' || q[1] == 'X')) {
        q += 2;
        len -= 2;
    }
    while (len > 1 && q[0] == '0') {
        q++;
        len--;
    }
    *s = q;
    return len;
}

bool pinopt_cpu_bind_same (const char *a, const char *b)
{
    if (!a || !b)
        return false;
    while (*a && *b) {
        const char *x, *y;
        char sa = 0, sb = 0;
        size_t lx = bind_item (&a, &x), ly = bind_item (&b, &y);
        if (lx != ly || strncasecmp (x, y, lx) != 0)
            return false;
        sa = x[lx];
        sb = y[ly];
        if (sa != sb) /* ',' against ':' */
            return false;
    }
    return !*a && !*b;
}

/* splitmix64 finaliser: a fixed, well-mixed function of its input. */
uint64_t pinopt_seed (uint32_t job, uint32_t step)
{
    uint64_t z = ((uint64_t)job << 32 | step) + 0x9e3779b97f4a7c15ULL;

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
