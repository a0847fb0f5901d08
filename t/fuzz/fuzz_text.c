/* fuzz_text.c - text_sanitize(): what slurm-pin prints of user text
 *
 * Input: any bytes (up to the first NUL), as a process, job or user name
 * can hold.  Invariants (src/common/libutil/text.h):
 *   - the output is well-formed UTF-8 with no C0 control, DEL, C1
 *     control, Bidi_Control, U+2028 or U+2029; never longer than the input;
 *   - text_is_safe() is true of it, and sanitising it again changes
 *     nothing; text_is_safe() of the input is true exactly when the output
 *     equals the input;
 *   - an input that a reference UTF-8 decoder finds well-formed and free
 *     of those characters comes back unchanged;
 *   - in place gives the same as a copy; a smaller buffer gives a prefix
 *     of the full output, cut at a character boundary, NUL-terminated;
 *   - TEXT_ASCII: printable ASCII only, one byte out per byte in.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "libutil/text.h"

/* Reference decoder: the code point at s (len bytes), or -1. */
static long ref_decode (const unsigned char *s, size_t n, size_t *len)
{
    unsigned c = s[0];
    size_t k;
    long v;

    if (c < 0x80) {
        *len = 1;
        return c;
    }
    if (c >= 0xc0 && c < 0xe0)
        k = 2, v = c & 0x1f;
    else if (c >= 0xe0 && c < 0xf0)
        k = 3, v = c & 0x0f;
    else if (c >= 0xf0 && c < 0xf8)
        k = 4, v = c & 0x07;
    else
        return -1;
    if (k > n)
        return -1;
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return -1;
        v = (v << 6) | (s[i] & 0x3f);
    }
    if ((k == 2 && v < 0x80) || (k == 3 && v < 0x800)
        || (k == 4 && v < 0x10000) || v > 0x10ffff
        || (v >= 0xd800 && v <= 0xdfff))
        return -1;
    *len = k;
    return v;
}

static bool ref_bad (long v)
{
    return v < 0x20 || (v >= 0x7f && v <= 0x9f) || v == 0x61c || v == 0x200e
           || v == 0x200f || v == 0x2028 || v == 0x2029
           || (v >= 0x202a && v <= 0x202e) || (v >= 0x2066 && v <= 0x2069);
}

/* True when s is well-formed UTF-8 without a replaced character. */
static bool ref_safe (const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen (s), len;

    while (n) {
        long v = ref_decode (p, n, &len);
        if (v < 0 || ref_bad (v))
            return false;
        p += len;
        n -= len;
    }
    return true;
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char *in = malloc (size + 1), *out = malloc (size + 1),
         *again = malloc (size + 1), *inplace = malloc (size + 1),
         *small = malloc (size + 1);
    size_t n;

    if (!in || !out || !again || !inplace || !small)
        abort ();
    memcpy (in, data, size);
    in[size] = '\0';
    n = strlen (in);

    text_sanitize (out, n + 1, in, 0);
    if (strlen (out) > n)
        fuzz_fail ("output longer than the input: '%s'", in);
    if (!ref_safe (out))
        fuzz_fail ("output not safe: '%s' -> '%s'", in, out);
    if (!text_is_safe (out, 0))
        fuzz_fail ("text_is_safe false of the output '%s'", out);
    text_sanitize (again, n + 1, out, 0);
    if (strcmp (again, out) != 0)
        fuzz_fail ("not idempotent: '%s' -> '%s'", out, again);
    if (!!text_is_safe (in, 0) != !strcmp (in, out))
        fuzz_fail ("text_is_safe of '%s' disagrees with the output", in);
    if (ref_safe (in) && strcmp (in, out) != 0)
        fuzz_fail ("safe input changed: '%s' -> '%s'", in, out);
    memcpy (inplace, in, n + 1);
    text_sanitize (inplace, n + 1, inplace, 0);
    if (strcmp (inplace, out) != 0)
        fuzz_fail ("in place differs: '%s' vs '%s'", inplace, out);
    /* a buffer of size[0] % (n + 1) + 1 bytes: a prefix of out */
    {
        size_t m = (size ? data[0] % (n + 1) : 0) + 1, k;
        text_sanitize (small, m, in, 0);
        k = strlen (small);
        if (k >= m || strncmp (small, out, k) != 0)
            fuzz_fail ("cut output '%s' (buffer %zu) not a prefix of '%s'",
                       small,
                       m,
                       out);
        if (!ref_safe (small))
            fuzz_fail ("cut output '%s' splits a character", small);
    }
    text_sanitize (out, n + 1, in, TEXT_ASCII);
    if (strlen (out) != n)
        fuzz_fail ("TEXT_ASCII: %zu bytes out for %zu in", strlen (out), n);
    for (const char *p = out; *p; p++)
        if (*p < 0x20 || *p > 0x7e)
            fuzz_fail ("TEXT_ASCII kept byte 0x%02x", (unsigned char)*p);
    free (in);
    free (out);
    free (again);
    free (inplace);
    free (small);
    return 0;
}
