/* list.c - the kernel's CPU list format ("0-3,8") with hwloc bitmaps
 *
 * hwloc_bitmap_list_sscanf() is lenient: it takes "0-" as an infinite
 * set, "3-1" as empty, stops silently at garbage and skips empty
 * elements, and it reads numbers with strtoul (..., 0), so "010" is CPU 8
 * (octal) and "08" stops at the 8.  The kernel reads lists in decimal.
 * Input comes from users and from Slurm, so the syntax is checked strictly
 * first (a POSIX regex), then every number (no leading zero, below
 * 100000) and every range (not reversed); the set is then built with
 * hwloc_bitmap_set_range() from the decimal values.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "topo_private.h"

/* Any number of digits here: numbers are checked one by one after, so
 * that "123456" is named as out of range rather than malformed. */
#define LIST_ELEM "[0-9]+(-[0-9]+)?"
#define LIST_RE "^" LIST_ELEM "(," LIST_ELEM ")*$"

/* CPU numbers have at most 5 digits: below 100000. */
#define LIST_MAX_DIGITS 5
#define LIST_LIMIT "100000"

/* Longest accepted list: every id < 100000 listed once takes less. */
#define LIST_MAX_LEN 600000

static regex_t list_re;
static int list_re_rc = -1;
static pthread_once_t list_re_once = PTHREAD_ONCE_INIT;

static void list_re_compile (void)
{
    list_re_rc = regcomp (&list_re, LIST_RE, REG_EXTENDED | REG_NOSUB);
}

/* Copy at most 40 characters (and at most n) of hostile text for an
 * error message, replacing anything unprintable. */
static void quote_n (char *buf, size_t size, const char *s, size_t n)
{
    size_t i = 0;
    for (; i < n && s[i] && i + 4 < size && i < 40; i++)
        buf[i] = isprint ((unsigned char)s[i]) ? s[i] : '?';
    if (i < n && s[i] && i + 4 <= size) {
        memcpy (buf + i, "...", 3);
        i += 3;
    }
    buf[i] = '\0';
}

static void quote (char *buf, size_t size, const char *s)
{
    quote_n (buf, size, s, (size_t)-1);
}

static int malformed (pin_error_t *errp, const char *what, const char *s)
{
    char q[48];
    quote (q, sizeof (q), s);
    errprintf (errp,
               "'%s': malformed %s; expected the kernel list "
               "format, e.g. 0-3,8",
               q,
               what);
    errno = EINVAL;
    return -1;
}

/* The kind of number in a `what` list: "CPU list" -> "CPU". */
static int noun_len (const char *what)
{
    size_t n = strlen (what);
    if (n > 5 && strcmp (what + n - 5, " list") == 0)
        n -= 5;
    return n > 64 ? 64 : (int)n;
}

/* Check the number of `len` digits at `p` (the syntax is checked: only
 * digits) and store its value.  The kernel reads it as decimal; hwloc's
 * parser would read a leading zero as octal, so one is refused. */
static int number (const char *p,
                   size_t len,
                   unsigned *val,
                   const char *what,
                   const char *s,
                   pin_error_t *errp)
{
    char q[48], qn[48];

    if (len > 1 && p[0] == '0') {
        quote (q, sizeof (q), s);
        quote_n (qn, sizeof (qn), p, len);
        errprintf (errp,
                   "'%s': %.*s number %s has a leading zero; expected "
                   "the kernel list format, e.g. 0-3,8",
                   q,
                   noun_len (what),
                   what,
                   qn);
        errno = EINVAL;
        return -1;
    }
    if (len > LIST_MAX_DIGITS) {
        quote (q, sizeof (q), s);
        quote_n (qn, sizeof (qn), p, len);
        errprintf (errp,
                   "'%s': %.*s number %s is out of range; %.*s "
                   "numbers are below " LIST_LIMIT,
                   q,
                   noun_len (what),
                   what,
                   qn,
                   noun_len (what),
                   what);
        errno = EINVAL;
        return -1;
    }
    *val = (unsigned)strtoul (p, NULL, 10);
    return 0;
}

int topo_list_parse_what (const char *s,
                          hwloc_bitmap_t set,
                          const char *what,
                          pin_error_t *errp)
{
    hwloc_bitmap_t result = NULL;
    char *copy = NULL;
    char *saveptr = NULL;
    int rc = -1;

    if (!s || !set) {
        errno = EINVAL;
        return errprintf (errp, "%s: missing argument", what);
    }
    if (*s == '\0' || (s[0] == '\n' && s[1] == '\0')) {
        hwloc_bitmap_zero (set);
        return 0;
    }
    size_t len = strlen (s);
    if (len > LIST_MAX_LEN)
        return malformed (errp, what, s);
    pthread_once (&list_re_once, list_re_compile);
    if (list_re_rc != 0) {
        errno = ENOMEM;
        return errprintf (errp, "%s: cannot compile the list syntax", what);
    }
    if (!(copy = strdup (s))) {
        errno = ENOMEM;
        return errprintf (errp, "%s: out of memory", what);
    }
    /* one trailing newline, as the kernel writes its list files */
    if (s[len - 1] == '\n')
        copy[len - 1] = '\0';
    if (regexec (&list_re, copy, 0, NULL, 0) != 0) {
        free (copy);
        return malformed (errp, what, s);
    }

    if (!(result = hwloc_bitmap_alloc ())) {
        errno = ENOMEM;
        errprintf (errp, "%s: out of memory", what);
        goto out;
    }
    /* the syntax is checked: each element is digits, or digits '-'
     * digits.  Check the numbers and the order of a range, and build the
     * set from the decimal values: hwloc never reads the text. */
    for (char *tok = strtok_r (copy, ",", &saveptr); tok;
         tok = strtok_r (NULL, ",", &saveptr)) {
        char *dash = strchr (tok, '-');
        size_t lolen = dash ? (size_t)(dash - tok) : strlen (tok);
        unsigned lo, hi;
        if (number (tok, lolen, &lo, what, s, errp) < 0)
            goto out;
        hi = lo;
        if (dash
            && number (dash + 1, strlen (dash + 1), &hi, what, s, errp) < 0)
            goto out;
        if (lo > hi) {
            malformed (errp, what, s);
            goto out;
        }
        if (hwloc_bitmap_set_range (result, lo, (int)hi) < 0) {
            errno = ENOMEM;
            errprintf (errp, "%s: out of memory", what);
            goto out;
        }
    }
    if (hwloc_bitmap_copy (set, result) < 0) {
        errno = ENOMEM;
        errprintf (errp, "%s: out of memory", what);
        goto out;
    }
    rc = 0;
out:
    hwloc_bitmap_free (result);
    free (copy);
    return rc;
}

int topo_list_parse (const char *s, hwloc_bitmap_t set, pin_error_t *errp)
{
    return topo_list_parse_what (s, set, "CPU list", errp);
}

char *topo_list_format (hwloc_const_bitmap_t set)
{
    char *s = NULL;

    if (!set || hwloc_bitmap_weight (set) < 0) {
        /* NULL or infinite: the kernel format cannot express it */
        errno = EINVAL;
        return NULL;
    }
    if (hwloc_bitmap_iszero (set))
        return strdup ("");
    if (hwloc_bitmap_list_asprintf (&s, set) < 0) {
        errno = ENOMEM;
        return NULL;
    }
    return s;
}
