/* fuzz_pinopt.c - the value of --pin-policy=POLICY[,verbose]
 *
 * Input: the option value as srun/sbatch would pass it (up to its first
 * NUL byte).  Parsers: pinopt_parse(), pinopt_quote() (used on every
 * hostile string that reaches a log line) and pinopt_cpu_bind_conflicts().
 * Invariants:
 *   - success: the value is at most PINOPT_VALUE_MAX characters, a known
 *     policy name followed by nothing or by ",verbose" flags, and verbose
 *     is set exactly when a flag was given;
 *   - failure: errno EINVAL, `opt` untouched, one printable ASCII line
 *     starting with "--pin-policy=";
 *   - pinopt_quote() never writes more than its buffer, always
 *     terminates it, writes only printable ASCII, and keeps the start of
 *     the text (unprintable bytes as '?');
 *   - pinopt_cpu_bind_conflicts() is true exactly when a type naming
 *     explicit CPUs or domains occurs in the text;
 *   - pinopt_cpu_bind_same() (a SLURM_CPU_BIND against the one a task
 *     inherited): every text names the same binding as itself, the
 *     answer does not depend on the order (input "A|B"), and texts equal
 *     without case always name the same binding;
 *   - pinopt_slurm_optarg() is NULL exactly for "(null)".
 */
#include <errno.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "fuzz.h"
#include "libconf/pinopt.h"
#include "libplace/place.h"

static void check_parse (const char *value)
{
    struct pin_option opt = {.policy = -12345, .verbose = true};
    pin_error_t e;
    int rc;

    fuzz_error_reset (&e);
    errno = 0;
    rc = pinopt_parse (value, &opt, &e);
    FUZZ_LOG ("pinopt_parse: %d %s", rc, rc < 0 ? e.text : "");
    FUZZ_ASSERT (rc == 0 || rc == -1, "rc %d", rc);
    if (rc < 0) {
        FUZZ_ASSERT (errno == EINVAL, "errno %d", errno);
        FUZZ_ASSERT (opt.policy == -12345 && opt.verbose,
                     "opt written on failure");
        fuzz_check_error (&e, false);
        fuzz_check_prefix (&e, "--pin-policy=");
        for (const char *p = e.text; *p; p++)
            FUZZ_ASSERT ((unsigned char)*p < 0x7f,
                         "non-ASCII in '%s'",
                         e.text);
        return;
    }
    {
        const char *name = place_policy_name ((enum place_policy)opt.policy);
        size_t nlen = strlen (name);
        const char *rest = value + nlen;

        FUZZ_ASSERT (strlen (value) <= PINOPT_VALUE_MAX,
                     "accepted %zu "
                     "characters",
                     strlen (value));
        FUZZ_ASSERT (place_policy_parse (name, NULL, NULL) == 0,
                     "policy %d has no valid name",
                     opt.policy);
        FUZZ_ASSERT (strncmp (value, name, nlen) == 0,
                     "'%s' parsed as %s",
                     value,
                     name);
        /* the flags: ",verbose", ",nic" or ",nic=NAME" (NAME of
         * [A-Za-z0-9._:-]), in any order; verbose iff one was ",verbose" */
        bool seen_verbose = false;
        while (*rest) {
            if (strncmp (rest, ",verbose", 8) == 0
                && (rest[8] == '\0' || rest[8] == ',')) {
                seen_verbose = true;
                rest += 8;
                continue;
            }
            FUZZ_ASSERT (strncmp (rest, ",nic", 4) == 0
                             && (rest[4] == '\0' || rest[4] == ','
                                 || rest[4] == '='),
                         "'%s' accepted with flags '%s'",
                         value,
                         rest);
            rest += 4;
            if (*rest == '=') {
                size_t n = strspn (rest + 1,
                                   "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
                                   "qrstuvwxyz0123456789._:-");
                FUZZ_ASSERT (n >= 1 && n <= PINOPT_NIC_MAX
                                 && (rest[1 + n] == '\0' || rest[1 + n] == ','),
                             "'%s' accepted a NIC name '%s'",
                             value,
                             rest);
                rest += 1 + n;
            }
        }
        FUZZ_ASSERT (opt.verbose == seen_verbose,
                     "'%s': verbose %d",
                     value,
                     opt.verbose);
    }
}

static void check_quote (const char *s)
{
    static const size_t sizes[] = {0, 1, 2, 4, 5, 16, 72};
    static const size_t maxes[] = {0, 3, 64, (size_t)-1};
    size_t slen = strlen (s);

    for (size_t i = 0; i < sizeof (sizes) / sizeof (sizes[0]); i++) {
        for (size_t j = 0; j < sizeof (maxes) / sizeof (maxes[0]); j++) {
            size_t n = sizes[i], max = maxes[j];
            /* one byte more than n, so that a write past n is seen */
            char *buf = malloc (n + 1);
            const char *r;
            size_t len, keep;

            if (!buf)
                abort ();
            memset (buf, 'Z', n + 1);
            r = pinopt_quote (s, max, buf, n);
            FUZZ_ASSERT (r == buf, "pinopt_quote returned another buffer");
            FUZZ_ASSERT (buf[n] == 'Z', "pinopt_quote wrote past %zu", n);
            if (n == 0) {
                free (buf);
                continue;
            }
            len = strnlen (buf, n);
            FUZZ_ASSERT (len < n, "not terminated within %zu", n);
            keep = slen < max ? slen : max;
            if (keep > n - 1)
                keep = n - 1;
            for (size_t k = 0; k < keep; k++) {
                unsigned char c = (unsigned char)s[k];
                char want = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
                FUZZ_ASSERT (buf[k] == want,
                             "byte %zu quoted as 0x%02x",
                             k,
                             (unsigned char)buf[k]);
            }
            /* "..." when text was left out and it fits */
            if (keep < slen && keep + 4 < n)
                FUZZ_ASSERT (len == keep + 3
                                 && memcmp (buf + keep, "...", 3) == 0,
                             "quoted '%s' to '%s' (n %zu max %zu)",
                             s,
                             buf,
                             n,
                             max);
            else
                FUZZ_ASSERT (len == keep,
                             "quoted '%s' to '%s' (n %zu max "
                             "%zu)",
                             s,
                             buf,
                             n,
                             max);
            free (buf);
        }
    }
}

static void check_cpu_bind (const char *s)
{
    bool want = strstr (s, "map_cpu") || strstr (s, "mask_cpu")
                || strstr (s, "map_ldom") || strstr (s, "mask_ldom");

    FUZZ_ASSERT (pinopt_cpu_bind_conflicts (s) == want, "'%s'", s);
}

static void check_bind_same (const char *s)
{
    const char *bar = strchr (s, '|');

    FUZZ_ASSERT (pinopt_cpu_bind_same (s, s), "'%s' unlike itself", s);
    if (bar) {
        char *a = strndup (s, (size_t)(bar - s));
        const char *b = bar + 1;
        bool ab, ba;

        if (!a)
            abort ();
        ab = pinopt_cpu_bind_same (a, b);
        ba = pinopt_cpu_bind_same (b, a);
        FUZZ_LOG ("pinopt_cpu_bind_same: %d", ab);
        FUZZ_ASSERT (ab == ba, "'%s' vs '%s': %d, reversed %d", a, b, ab, ba);
        if (strcasecmp (a, b) == 0)
            FUZZ_ASSERT (ab, "'%s' and '%s' differ", a, b);
        free (a);
    }
    FUZZ_ASSERT (pinopt_slurm_optarg (s) == (strcmp (s, "(null)") ? s : NULL),
                 "pinopt_slurm_optarg('%s')",
                 s);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char *s = fuzz_strndup (data, size);

    check_parse (s);
    check_quote (s);
    check_cpu_bind (s);
    check_bind_same (s);
    free (s);
    return 0;
}
