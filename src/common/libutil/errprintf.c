#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "errprintf.h"

int errprintf (pin_error_t *errp, const char *fmt, ...)
{
    if (errp) {
        int saved_errno = errno;
        va_list ap;
        va_start (ap, fmt);
        vsnprintf (errp->text, sizeof (errp->text), fmt, ap);
        va_end (ap);
        errno = saved_errno;
    }
    return -1;
}
