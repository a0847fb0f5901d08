/* phase.c - CPU and wall time per phase (see phase.h) */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <string.h>

#include "phase.h"

static long diff_us (const struct timespec *a, const struct timespec *b)
{
    return (long)(b->tv_sec - a->tv_sec) * 1000000L
           + (b->tv_nsec - a->tv_nsec) / 1000L;
}

static void now (struct timespec *cpu, struct timespec *wall)
{
    if (clock_gettime (CLOCK_THREAD_CPUTIME_ID, cpu) < 0)
        memset (cpu, 0, sizeof (*cpu));
    if (clock_gettime (CLOCK_MONOTONIC, wall) < 0)
        memset (wall, 0, sizeof (*wall));
}

void phase_start (struct phases *p)
{
    memset (p, 0, sizeof (*p));
    now (&p->cpu0, &p->wall0);
    p->cpu = p->cpu0;
    p->wall = p->wall0;
}

void phase_mark (struct phases *p, const char *name)
{
    struct timespec cpu, wall;
    unsigned i;

    now (&cpu, &wall);
    if (p->n < PHASE_MAX)
        i = p->n++;
    else
        i = PHASE_MAX - 1;
    if (!p->name[i])
        p->name[i] = name;
    /* from the totals since the start, so that the phases add up to the
     * total exactly (no rounding per phase) */
    p->cpu_us[i] += diff_us (&p->cpu0, &cpu) - diff_us (&p->cpu0, &p->cpu);
    p->wall_us[i] +=
        diff_us (&p->wall0, &wall) - diff_us (&p->wall0, &p->wall);
    p->cpu = cpu;
    p->wall = wall;
}

long phase_total_cpu_us (const struct phases *p)
{
    return diff_us (&p->cpu0, &p->cpu);
}

long phase_total_wall_us (const struct phases *p)
{
    return diff_us (&p->wall0, &p->wall);
}

char *phase_format (const struct phases *p, char *buf, size_t size)
{
    size_t off = 0;
    int n;

    if (size == 0)
        return buf;
    buf[0] = '\0';
    for (unsigned i = 0; i < p->n && off < size; i++) {
        n = snprintf (buf + off,
                      size - off,
                      "%s%s %ld",
                      i ? ", " : "",
                      p->name[i] ? p->name[i] : "?",
                      p->cpu_us[i]);
        if (n < 0)
            return buf;
        off += (size_t)n;
    }
    if (off < size)
        snprintf (buf + off,
                  size - off,
                  "%stotal %ld us CPU, %ld us wall",
                  p->n ? "; " : "",
                  phase_total_cpu_us (p),
                  phase_total_wall_us (p));
    return buf;
}
