/* errprintf.h - caller-supplied error buffer for messages a person reads
 *
 * Libraries never print or log.  A function that can fail takes a
 * `pin_error_t *errp` (may be NULL), fills it with one line of text that
 * names the bad value and what would be valid, and returns -1 or NULL.
 */
#ifndef PIN_ERRPRINTF_H
#define PIN_ERRPRINTF_H

typedef struct {
    char text[1024];
} pin_error_t;

/* Format a message into errp (if non-NULL).  Preserves errno.
 * Always returns -1 so callers can write `return errprintf (errp, ...)`.
 */
int errprintf (pin_error_t *errp, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

#endif /* !PIN_ERRPRINTF_H */
