/* steplog.c - format a line for the caller's sink (steplog.h) */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "steplog.h"

void steplog (const struct steplog *log,
              enum steplog_level level,
              const char *fmt,
              ...)
{
    char line[1024];
    int saved = errno;
    va_list ap;

    if (!log || !log->fn)
        return;
    va_start (ap, fmt);
    vsnprintf (line, sizeof (line), fmt, ap);
    va_end (ap);
    log->fn (log->arg, level, line);
    errno = saved;
}
