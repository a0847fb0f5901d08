/* fuzz_cpustat.c - the text of a cgroup's cpu.stat
 *
 * Input: the content of cpu.stat (up to its first NUL byte, as
 * cg2_read_cpu_stat() hands it on).  Parser: cg2_parse_cpu_stat().
 * Invariants:
 *   - success: a "usage_usec N" line was there, and every field equals
 *     the last value its key was given on a line of its own;
 *     written back as "key value" lines the result parses to itself;
 *   - failure: errno EINVAL, `st` untouched, one printable line starting
 *     with "cpu.stat: ".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "libcgroup2/cg2_private.h"

static const char *keys[] = {
    "usage_usec",
    "user_usec",
    "system_usec",
    "nr_periods",
    "nr_throttled",
    "throttled_usec",
};
#define NKEYS (sizeof (keys) / sizeof (keys[0]))

static uint64_t *field (struct cg2_cpu_stat *st, size_t i)
{
    uint64_t *f[NKEYS] = {
        &st->usage_usec,
        &st->user_usec,
        &st->system_usec,
        &st->nr_periods,
        &st->nr_throttled,
        &st->throttled_usec,
    };
    return f[i];
}

/* The value the last "key value" line of `text` gives key i, parsed
 * again here without strtoull; false if the key has no line. */
static bool last_value (const char *text, size_t i, uint64_t *v)
{
    size_t klen = strlen (keys[i]);
    const char *p = text;
    bool found = false;

    while (*p) {
        const char *eol = strchrnul (p, '\n');
        if ((size_t)(eol - p) > klen + 1 && strncmp (p, keys[i], klen) == 0
            && p[klen] == ' ') {
            uint64_t x = 0;
            for (const char *d = p + klen + 1; d < eol; d++)
                x = x * 10 + (uint64_t)(*d - '0'); /* success: digits */
            *v = x;
            found = true;
        }
        p = *eol ? eol + 1 : eol;
    }
    return found;
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char *s = fuzz_strndup (data, size);
    struct cg2_cpu_stat st, again;
    pin_error_t e;
    int rc;

    memset (&st, 0xa5, sizeof (st));
    fuzz_error_reset (&e);
    errno = 0;
    rc = cg2_parse_cpu_stat (s, &st, &e);
    FUZZ_LOG ("cg2_parse_cpu_stat: %d %s", rc, rc < 0 ? e.text : "");
    FUZZ_ASSERT (rc == 0 || rc == -1, "rc %d", rc);
    if (rc < 0) {
        struct cg2_cpu_stat marker;
        memset (&marker, 0xa5, sizeof (marker));
        FUZZ_ASSERT (errno == EINVAL, "errno %d", errno);
        FUZZ_ASSERT (memcmp (&st, &marker, sizeof (st)) == 0,
                     "st written on failure");
        fuzz_check_error (&e, false);
        fuzz_check_prefix (&e, "cpu.stat: ");
        goto out;
    }
    for (size_t i = 0; i < NKEYS; i++) {
        uint64_t v = 0;
        bool found = last_value (s, i, &v);
        FUZZ_ASSERT (i != 0 || found, "success without a usage_usec line");
        FUZZ_ASSERT (*field (&st, i) == v,
                     "%s is %" PRIu64
                     ", the text "
                     "says %" PRIu64,
                     keys[i],
                     *field (&st, i),
                     v);
    }
    {
        char text[NKEYS * 48];
        size_t off = 0;
        for (size_t i = 0; i < NKEYS; i++)
            off += (size_t)snprintf (text + off,
                                     sizeof (text) - off,
                                     "%s %" PRIu64 "\n",
                                     keys[i],
                                     *field (&st, i));
        memset (&again, 0, sizeof (again));
        FUZZ_ASSERT (cg2_parse_cpu_stat (text, &again, &e) == 0,
                     "'%s' refused: %s",
                     text,
                     e.text);
        FUZZ_ASSERT (memcmp (&st, &again, sizeof (st)) == 0,
                     "written back, the values differ");
    }
out:
    free (s);
    return 0;
}
