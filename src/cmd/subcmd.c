/* subcmd.c - helpers shared by the subcommands of slurm-pin */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libutil/text.h"
#include "subcmd.h"

void cmd_error (const char *subcmd, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    text_sanitize (buf, sizeof (buf), buf, 0);
    if (subcmd)
        fprintf (stderr, "slurm-pin %s: %s\n", subcmd, buf);
    else
        fprintf (stderr, "slurm-pin: %s\n", buf);
}

const char *cmd_text (const char *s)
{
    static char ring[8][4096];
    static unsigned next;
    char *buf = ring[next++ % 8];

    return text_sanitize (buf, sizeof (ring[0]), s, 0);
}

int cmd_parse_u64 (const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    unsigned long long v;
    char *end;

    if (!s || !isdigit ((unsigned char)s[0])) {
        errno = EINVAL;
        return -1;
    }
    errno = 0;
    v = strtoull (s, &end, 10);
    if (*end != '\0') {
        errno = EINVAL;
        return -1;
    }
    if (errno == ERANGE || v < min || v > max) {
        errno = ERANGE;
        return -1;
    }
    *out = v;
    return 0;
}

int cmd_flush_stdout (const char *subcmd)
{
    if (fflush (stdout) != 0 || ferror (stdout)) {
        cmd_error (subcmd, "cannot write the output: %s", strerror (errno));
        return -1;
    }
    return 0;
}

int cmd_json_add (json_object *obj,
                  const char *key,
                  json_object *val,
                  bool null_ok)
{
    if ((!val && !null_ok) || json_object_object_add (obj, key, val) < 0) {
        json_object_put (val);
        return -1;
    }
    return 0;
}

int cmd_print_json (const char *subcmd, json_object *root, FILE *f)
{
    const int flags = JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE;
    const char *s = NULL;

    if (root)
        s = json_object_to_json_string_ext (root, flags);
    if (!s) {
        json_object_put (root);
        cmd_error (subcmd, "cannot build the JSON output: out of memory");
        return -1;
    }
    /* json-c escapes C0 controls but writes DEL, C1 controls, bidi
     * controls and ill-formed UTF-8 (from names users chose) as they are:
     * those become '?', which keeps the JSON valid. */
    if (text_is_safe (s, 0)) {
        fprintf (f, "%s\n", s);
    } else {
        char *safe = strdup (s);
        if (!safe) {
            json_object_put (root);
            cmd_error (subcmd, "cannot build the JSON output: out of memory");
            return -1;
        }
        fprintf (f, "%s\n", text_sanitize (safe, strlen (s) + 1, safe, 0));
        free (safe);
    }
    json_object_put (root);
    return 0;
}
