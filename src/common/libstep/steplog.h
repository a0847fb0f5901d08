/* steplog.h - where libstep's messages go
 *
 * libstep returns its errors like every library (-1 and an error buffer),
 * but two kinds of text have no caller to return to: what the watcher
 * thread does while the step runs (a confinement, a sweep that failed),
 * and notes of a call that succeeded (a step placed with a fallback).
 * They go to a sink the caller gives at creation: pin.so passes Slurm's
 * log.  The library never prints; without a sink the text is dropped.
 */
#ifndef PIN_STEPLOG_H
#define PIN_STEPLOG_H

enum steplog_level {
    STEPLOG_ERROR = 0,
    STEPLOG_INFO,
    STEPLOG_DEBUG,
};

/* One line, without a newline.  May be called from the watcher thread:
 * the function must be thread-safe (Slurm's log functions are). */
typedef void (*steplog_f) (void *arg,
                           enum steplog_level level,
                           const char *line);

struct steplog {
    steplog_f fn; /* NULL: drop */
    void *arg;
};

/* Format and hand one line to the sink. */
void steplog (const struct steplog *log,
              enum steplog_level level,
              const char *fmt,
              ...) __attribute__ ((format (printf, 3, 4)));

#endif /* !PIN_STEPLOG_H */
