/* phase.h - CPU and wall time per phase of a code path
 *
 * For the plugin's debug log: where a step start spends its time.  CPU
 * time is the calling thread's (CLOCK_THREAD_CPUTIME_ID), which in
 * slurmstepd is the thread that runs the SPANK callbacks; wall time is
 * CLOCK_MONOTONIC.  No allocation, no logging.
 */
#ifndef PIN_PHASE_H
#define PIN_PHASE_H

#include <stddef.h>
#include <time.h>

#define PHASE_MAX 12

struct phases {
    struct timespec cpu0, wall0; /* at phase_start */
    struct timespec cpu, wall;   /* at the last mark */
    unsigned n;
    const char *name[PHASE_MAX]; /* static strings */
    long cpu_us[PHASE_MAX];
    long wall_us[PHASE_MAX];
};

/* Start timing (forgets earlier marks). */
void phase_start (struct phases *p);

/* End the current phase, naming it (a string that outlives p).  Marks
 * beyond PHASE_MAX are added to the last one. */
void phase_mark (struct phases *p, const char *name);

/* Totals since phase_start, in microseconds. */
long phase_total_cpu_us (const struct phases *p);
long phase_total_wall_us (const struct phases *p);

/* "topology 31, plan 12, ...; total 95 us CPU, 140 us wall" into buf
 * (truncated to size); returns buf. */
char *phase_format (const struct phases *p, char *buf, size_t size);

#endif /* !PIN_PHASE_H */
