/* cmdopt.c - the options of slurm-pin's subcommands, from one table each */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdopt.h"
#include "libutil/text.h"

static const struct cmdopt help_row =
    {"help", 'h', CMDOPT_NONE, NULL, "show this help and exit", 0};

/* Widest "  -x, --name=ARG" the help aligns its texts after; a wider one
 * puts its text on the next line. */
#define HELP_COL 27

#define FOREACH_ROW(spec, r)                                         \
    for (const struct cmdopt *const *t_ = (spec)->tables; *t_; t_++) \
        for (const struct cmdopt *r = *t_; r->name || r->usage; r++)

static bool is_short (int key)
{
    return key > 0 && key < CMDOPT_LONG && isalnum (key);
}

void cmdopt_fini (struct cmdopt_parser *p)
{
    int saved = errno;

    if (!p)
        return;
    free (p->longopts);
    free (p->rows);
    free (p->shortopts);
    free (p->operands);
    p->longopts = NULL;
    p->rows = NULL;
    p->shortopts = NULL;
    p->operands = NULL;
    errno = saved;
}

static const struct cmdopt *row_of_key (const struct cmdopt_parser *p, int key)
{
    for (int i = 0; p->longopts[i].name; i++)
        if (p->longopts[i].val == key)
            return p->rows[i];
    return NULL;
}

int cmdopt_init (struct cmdopt_parser *p,
                 const struct cmdopt_spec *spec,
                 int argc,
                 char **argv)
{
    size_t n = 1, len = 0; /* 1: --help */

    memset (p, 0, sizeof (*p));
    p->spec = spec;
    p->argc = argc;
    p->argv = argv;
    p->out = stdout;
    p->err = stderr;
    FOREACH_ROW (spec, r)
    n += r->name != NULL;
    p->longopts = calloc (n + 1, sizeof (*p->longopts));
    p->rows = calloc (n + 1, sizeof (*p->rows));
    /* "-:" + up to 3 characters a row + NUL */
    p->shortopts = calloc (3 * n + 3, 1);
    p->operands =
        calloc ((size_t)(argc > 0 ? argc : 0) + 1, sizeof (*p->operands));
    if (!p->longopts || !p->rows || !p->shortopts || !p->operands) {
        cmdopt_fini (p);
        errno = ENOMEM;
        return -1;
    }
    /* '-': operands come back in order (code 1), so that options go
     * anywhere and a CMDOPT_CMD option can stop at its command (glibc
     * then never permutes argv); ':': a missing value is told apart. */
    p->shortopts[len++] = '-';
    p->shortopts[len++] = ':';
    n = 0;
    for (const struct cmdopt *const *t = spec->tables;; t++) {
        const struct cmdopt *r = *t ? *t : &help_row;
        for (; r->name || r->usage; r++) {
            if (!r->name)
                continue;
            for (size_t i = 0; i < n; i++) {
                if (!strcmp (p->longopts[i].name, r->name)
                    || (p->longopts[i].val == r->key && p->rows[i]->usage
                        && r->usage)) {
                    cmdopt_fini (p);
                    errno = EINVAL;
                    return -1;
                }
            }
            p->longopts[n].name = r->name;
            p->longopts[n].has_arg = r->has_arg;
            p->longopts[n].val = r->key;
            p->rows[n++] = r;
            if (is_short (r->key) && !strchr (p->shortopts, r->key)) {
                p->shortopts[len++] = (char)r->key;
                if (r->has_arg != CMDOPT_NONE)
                    p->shortopts[len++] = ':';
                if (r->has_arg == CMDOPT_OPTIONAL)
                    p->shortopts[len++] = ':';
            }
            if (r == &help_row)
                break;
        }
        if (!*t)
            break;
    }
    p->posix = getenv ("POSIXLY_CORRECT") != NULL;
    optind = 0; /* glibc: full re-initialisation */
    opterr = 0; /* the errors are ours, on one line */
    return 0;
}

static int verror (struct cmdopt_parser *p, const char *fmt, va_list ap)
{
    const char *name = p->spec->name;
    char buf[sizeof (p->error)];
    int len;

    len = vsnprintf (buf, sizeof (buf), fmt, ap);
    if (len >= 0 && (size_t)len < sizeof (buf))
        snprintf (buf + len,
                  sizeof (buf) - len,
                  " (see 'slurm-pin %s --help')",
                  name);
    text_sanitize (p->error, sizeof (p->error), buf, 0);
    fprintf (p->err, "slurm-pin %s: %s\n", name, p->error);
    p->status = p->spec->usage_status;
    return -1;
}

int cmdopt_usage_error (struct cmdopt_parser *p, const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start (ap, fmt);
    rc = verror (p, fmt, ap);
    va_end (ap);
    return rc;
}

static int usage_error (struct cmdopt_parser *p, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
static int usage_error (struct cmdopt_parser *p, const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start (ap, fmt);
    rc = verror (p, fmt, ap);
    va_end (ap);
    return rc;
}

/* The error getopt_long() reported with `c` ('?' or ':') for the element
 * argv[at], worded the one way. */
static int getopt_error (struct cmdopt_parser *p, int c, const char *elem)
{
    if (elem && !strncmp (elem, "--", 2) && elem[2]) {
        int len = (int)strcspn (elem, "=");
        char known[512] = "";
        size_t klen = 0;
        int nmatch = 0;

        if (c == ':')
            return usage_error (p, "%.*s: missing value", len, elem);
        if (optopt) /* glibc: a known long option given a value */
            return usage_error (p, "%s: this option takes no value", elem);
        /* unknown, or a prefix of several (glibc leaves optopt 0) */
        for (int i = 0; p->longopts[i].name; i++) {
            const char *name = p->longopts[i].name;
            if (len - 2 > 0 && !strncmp (name, elem + 2, len - 2)
                && p->rows[i]->usage) {
                int rc = snprintf (known + klen,
                                   sizeof (known) - klen,
                                   "%s--%s",
                                   nmatch ? ", " : "",
                                   name);
                if (rc > 0 && (size_t)rc < sizeof (known) - klen)
                    klen += rc;
                nmatch++;
            }
        }
        if (nmatch > 1)
            return usage_error (p,
                                "%.*s: ambiguous option; could be %s",
                                len,
                                elem,
                                known);
        return usage_error (p, "%.*s: unknown option", len, elem);
    }
    if (c == ':')
        return usage_error (p, "-%c: missing value", optopt);
    if (isprint (optopt))
        return usage_error (p, "-%c: unknown option", optopt);
    return usage_error (p, "-\\x%02x: unknown option", optopt & 0xff);
}

int cmdopt_next (struct cmdopt_parser *p, const char **arg)
{
    *arg = NULL;
    if (p->done)
        return 0;
    for (;;) {
        /* In '-' (in order) mode getopt never permutes: the element it
         * looks at is argv[optind] (argv[1] before the first call). */
        int at = optind > 0 ? optind : 1;
        const char *elem = at < p->argc ? p->argv[at] : NULL;
        const struct cmdopt *r;
        int c;

        c = getopt_long (p->argc, p->argv, p->shortopts, p->longopts, NULL);
        if (c == -1) { /* the end, or "--" */
            for (int i = optind; i < p->argc; i++)
                p->operands[p->noperands++] = p->argv[i];
            p->done = true;
            return 0;
        }
        if (c == 1) { /* an operand */
            /* It starts the command, whose options are its own; or
             * POSIXLY_CORRECT stops the options at the first operand,
             * as in every GNU tool. */
            if (p->cmd || p->posix) {
                for (int i = optind - 1; i < p->argc; i++)
                    p->operands[p->noperands++] = p->argv[i];
                p->done = true;
                return 0;
            }
            p->operands[p->noperands++] = optarg;
            continue;
        }
        if (c == '?' || c == ':') {
            p->done = true;
            return getopt_error (p, c, elem);
        }
        if (!(r = row_of_key (p, c))) { /* cannot happen */
            p->done = true;
            return usage_error (p, "%s: unknown option", elem ? elem : "?");
        }
        if (r == &help_row) {
            p->done = true;
            cmdopt_help (p->spec, p->out);
            p->status = (fflush (p->out) != 0 || ferror (p->out)) ? 1 : 0;
            if (p->status)
                fprintf (p->err,
                         "slurm-pin %s: cannot write the output: "
                         "%s\n",
                         p->spec->name,
                         strerror (errno));
            return -1;
        }
        if (r->flags & CMDOPT_CMD) {
            if (p->noperands > 0) {
                p->done = true;
                return usage_error (p,
                                    "--%s: give it before the command",
                                    r->name);
            }
            p->cmd = r;
        }
        *arg = optarg;
        return c;
    }
}

int cmdopt_no_operands (struct cmdopt_parser *p)
{
    if (p->noperands > 0)
        return usage_error (p, "%s: unexpected argument", p->operands[0]);
    return 0;
}

int cmdopt_one_operand (struct cmdopt_parser *p, const char *what)
{
    if (p->noperands != 1)
        return usage_error (p, "expected one %s", what);
    return 0;
}

/* "  -t, --topology=SRC" */
static int help_left (const struct cmdopt *r, char *buf, size_t n)
{
    const char *a = r->arg ? r->arg : "VALUE";
    int len;

    if (is_short (r->key))
        len = snprintf (buf, n, "  -%c, --%s", r->key, r->name);
    else
        len = snprintf (buf, n, "      --%s", r->name);
    if (len < 0 || (size_t)len >= n)
        return len;
    if (r->has_arg == CMDOPT_REQUIRED)
        len += snprintf (buf + len, n - len, "=%s", a);
    else if (r->has_arg == CMDOPT_OPTIONAL)
        len += snprintf (buf + len, n - len, "[=%s]", a);
    return len;
}

static void help_row_print (const struct cmdopt *r, FILE *f)
{
    char left[256];
    const char *s = r->usage;
    int len = help_left (r, left, sizeof (left));
    bool first = true;

    fputs (left, f);
    if (len + 1 >= HELP_COL) {
        fputc ('\n', f);
        len = 0;
    }
    while (*s || first) {
        size_t n = strcspn (s, "\n");
        fprintf (f, "%*s%.*s\n", HELP_COL - (first ? len : 0), "", (int)n, s);
        s += n;
        if (*s)
            s++;
        first = false;
    }
}

void cmdopt_help (const struct cmdopt_spec *spec, FILE *f)
{
    fputs (spec->usage, f);
    fputc ('\n', f);
    FOREACH_ROW (spec, r)
    {
        if (!r->name)
            fprintf (f, "%s\n", r->usage);
        else if (r->usage)
            help_row_print (r, f);
    }
    help_row_print (&help_row, f);
    if (spec->footer || spec->help_more)
        fputc ('\n', f);
    if (spec->footer)
        fputs (spec->footer, f);
    if (spec->help_more)
        spec->help_more (f);
}
