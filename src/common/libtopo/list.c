/* list.c - the kernel's CPU list format ("0-3,8") with hwloc bitmaps
 *
 * hwloc_bitmap_list_sscanf() is lenient: it takes "0-" as an infinite
 * set, "3-1" as empty, stops silently at garbage and skips empty
 * elements.  Input comes from users and from Slurm, so the syntax is
 * checked strictly first (a POSIX regex), ranges must not be reversed, and
 * only then does hwloc parse it.
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

/* Up to 5 digits per number: a CPU id below 100000. */
#define LIST_ELEM "[0-9]{1,5}(-[0-9]{1,5})?"
#define LIST_RE "^" LIST_ELEM "(," LIST_ELEM ")*$"

/* Longest accepted list: every id < 100000 listed once takes less. */
#define LIST_MAX_LEN 600000

static regex_t list_re;
static int list_re_rc = -1;
static pthread_once_t list_re_once = PTHREAD_ONCE_INIT;

static void list_re_compile (void)
{
    list_re_rc = regcomp (&list_re, LIST_RE, REG_EXTENDED | REG_NOSUB);
}

/* Copy at most 40 characters of hostile text for an error message,
 * replacing anything unprintable. */
static void quote (char *buf, size_t size, const char *s)
{
    size_t i = 0;
    for (; s[i] && i + 4 < size && i < 40; i++)
        buf[i] = isprint ((unsigned char)s[i]) ? s[i] : '?';
    if (s[i] && i + 4 <= size) {
        memcpy (buf + i, "...", 3);
        i += 3;
    }
    buf[i] = '\0';
}

static int malformed (pin_error_t *errp, const char *what, const char *s)
{
    char q[48];
    quote (q, sizeof (q), s);
    errprintf (errp, "'%s': malformed %s; expected the kernel list "
                     "format, e.g. 0-3,8", q, what);
    errno = EINVAL;
    return -1;
}

int topo_list_parse_what (const char *s, hwloc_bitmap_t set,
                          const char *what, pin_error_t *errp)
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
    /* the syntax is checked; a reversed range ("3-1") is the one thing
     * left that hwloc would take (as an empty set) */
    for (char *tok = strtok_r (copy, ",", &saveptr); tok;
         tok = strtok_r (NULL, ",", &saveptr)) {
        char *dash = strchr (tok, '-');
        if (dash && strtoul (tok, NULL, 10) > strtoul (dash + 1, NULL, 10)) {
            malformed (errp, what, s);
            goto out;
        }
    }
    /* strtok_r cut the copy: parse the original (minus the newline) */
    memcpy (copy, s, len + 1);
    if (copy[len - 1] == '\n')
        copy[len - 1] = '\0';
    if (hwloc_bitmap_list_sscanf (result, copy) < 0
        || hwloc_bitmap_weight (result) < 0) {
        malformed (errp, what, s);
        goto out;
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
