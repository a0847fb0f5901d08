/* fuzz.h - shared helpers of the libFuzzer harnesses in t/fuzz/
 *
 * Each harness defines LLVMFuzzerTestOneInput(), hands the input to one
 * parser of untrusted or semi-trusted text and checks what the parser
 * promises; a broken promise is reported on stderr and abort()s, which
 * libFuzzer records as a crash with the input that caused it.  Built and
 * run by t/fuzz/run.sh (doc/fuzzing.md).
 */
#ifndef PIN_FUZZ_H
#define PIN_FUZZ_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libutil/errprintf.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* Report a broken invariant on one line of stderr (control characters
 * and bytes above 0x7e as \xNN, so that run.sh can quote the line) and
 * abort. */
static inline void __attribute__ ((noreturn, format (printf, 1, 2)))
fuzz_fail (const char *fmt, ...)
{
    char buf[2048];
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    fprintf (stderr, "fuzz: invariant broken: ");
    for (const char *p = buf; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20 || c > 0x7e || c == '\\')
            fprintf (stderr, "\\x%02x", c);
        else
            fputc (c, stderr);
    }
    fputc ('\n', stderr);
    abort ();
}

#define FUZZ_ASSERT(cond, ...)           \
    do {                                 \
        if (!(cond))                     \
            fuzz_fail (                  \
                "%s:%d: %s: "            \
                "%s",                    \
                __FILE__,                \
                __LINE__,                \
                #cond,                   \
                fuzz_msg (__VA_ARGS__)); \
    } while (0)

/* Format the detail of a failed FUZZ_ASSERT (a static buffer: the
 * process aborts right after). */
static inline const char *__attribute__ ((format (printf, 1, 2)))
fuzz_msg (const char *fmt, ...)
{
    static char buf[1024];
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    return buf;
}

/* With FUZZ_VERBOSE=1 in the environment a harness says on stderr what
 * the parser made of each input: for running it by hand on one file. */
static inline bool fuzz_verbose (void)
{
    static int verbose = -1;

    if (verbose < 0) {
        const char *v = getenv ("FUZZ_VERBOSE");
        verbose = v && *v && strcmp (v, "0") != 0;
    }
    return verbose;
}

#define FUZZ_LOG(...)                      \
    do {                                   \
        if (fuzz_verbose ()) {             \
            fprintf (stderr, "fuzz: ");    \
            fprintf (stderr, __VA_ARGS__); \
            fputc ('\n', stderr);          \
        }                                  \
    } while (0)

/* The input as a NUL-terminated string (it ends at its first NUL byte, as
 * a C string handed to the parser would).  Caller frees; aborts on ENOMEM,
 * which is not what is being tested. */
static inline char *fuzz_strndup (const uint8_t *data, size_t size)
{
    char *s = malloc (size + 1);

    if (!s)
        abort ();
    memcpy (s, data, size);
    s[size] = '\0';
    return s;
}

/* Is the error text one line a person can read: non-empty, NUL-terminated
 * inside the buffer, no newline and no other control character (TAB is
 * allowed where the input may hold one)?  Aborts naming the text if not. */
static inline void fuzz_check_error (const pin_error_t *e, bool tab_ok)
{
    size_t len = strnlen (e->text, sizeof (e->text));

    FUZZ_ASSERT (len < sizeof (e->text), "error text not NUL-terminated");
    FUZZ_ASSERT (len > 0, "failure without an error text");
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)e->text[i];
        bool plain = (c >= 0x20 && c != 0x7f) || (tab_ok && c == '\t');
        FUZZ_ASSERT (plain,
                     "control character 0x%02x at %zu in error "
                     "text '%s'",
                     c,
                     i,
                     e->text);
    }
}

/* Is the error text's start `prefix`? */
static inline void fuzz_check_prefix (const pin_error_t *e, const char *prefix)
{
    FUZZ_ASSERT (strncmp (e->text, prefix, strlen (prefix)) == 0,
                 "error text '%s' does not start with '%s'",
                 e->text,
                 prefix);
}

/* Fill an error buffer with a marker, so that a failure that does not
 * write it is seen. */
static inline void fuzz_error_reset (pin_error_t *e)
{
    memset (e->text, 0, sizeof (e->text));
}

#endif /* !PIN_FUZZ_H */
