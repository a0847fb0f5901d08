/* text.c - text from users made safe to print on a terminal (text.h) */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

/* The length of the well-formed UTF-8 character at s (2..4) and its code
 * point, or 0 if s does not start one (RFC 3629, Unicode Table 3-7). */
static size_t utf8_char (const unsigned char *s, uint32_t *cp)
{
    unsigned char c = s[0];
    size_t len;
    uint32_t v, min;

    if (c >= 0xc2 && c <= 0xdf) {
        len = 2, v = c & 0x1f, min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3, v = c & 0x0f, min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) /* also stops at the NUL */
            return 0;
        v = (v << 6) | (s[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return len;
}

static int unsafe_cp (uint32_t cp)
{
    return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x061c
           || cp == 0x200e || cp == 0x200f || cp == 0x2028 || cp == 0x2029
           || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

/* How many bytes of s the next unit takes, and whether it is kept. */
static size_t next_unit (const unsigned char *s, int flags, int *keep)
{
    uint32_t cp;
    size_t len;

    if (*s < 0x80) {
        *keep = !unsafe_cp (*s);
        return 1;
    }
    if ((flags & TEXT_ASCII) || !(len = utf8_char (s, &cp))) {
        *keep = 0;
        return 1;
    }
    *keep = !unsafe_cp (cp);
    return len;
}

char *text_sanitize (char *dst, size_t n, const char *src, int flags)
{
    const unsigned char *s = (const unsigned char *)(src ? src : "");
    size_t j = 0;

    if (n == 0)
        return dst;
    while (*s) {
        int keep;
        size_t len = next_unit (s, flags, &keep);
        size_t out = keep ? len : 1;

        if (j + out >= n)
            break;
        if (keep)
            memmove (dst + j, s, len); /* dst may be src: j never passes s */
        else
            dst[j] = '?';
        j += out;
        s += len;
    }
    dst[j] = '\0';
    return dst;
}

int text_is_safe (const char *s, int flags)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");

    while (*p) {
        int keep;
        p += next_unit (p, flags, &keep);
        if (!keep)
            return 0;
    }
    return 1;
}

char *text_json_ascii (const char *json)
{
    const unsigned char *s = (const unsigned char *)json;
    size_t n = 0;
    char *out, *o;

    /* at most 12 bytes ("\\ud83d\\ude00") for each byte >= 0x80: a 4-byte
     * character is two escapes of 6, an invalid byte one of 6 */
    for (const unsigned char *p = s; *p; p++)
        n += *p < 0x80 ? 1 : 6;
    if (!(out = malloc (n + 1)))
        return NULL;
    o = out;
    while (*s) {
        uint32_t cp;
        size_t len;

        if (*s < 0x80) {
            *o++ = (char)*s++;
            continue;
        }
        if (!(len = utf8_char (s, &cp))) {
            cp = 0xfffd; /* one invalid byte: U+FFFD, as acct_utf8_copy */
            len = 1;
        }
        if (cp >= 0x10000) {
            cp -= 0x10000;
            o += sprintf (o,
                          "\\u%04x\\u%04x",
                          (unsigned)(0xd800 + (cp >> 10)),
                          (unsigned)(0xdc00 + (cp & 0x3ff)));
        } else
            o += sprintf (o, "\\u%04x", (unsigned)cp);
        s += len;
    }
    *o = '\0';
    return out;
}
