/* fuzz_series.c - what slurm-pin plot reads from a profile
 *
 * Input: the bytes of a profile file (JSON Lines), written to a memfd
 * and read by path (/proc/self/fd/N), as slurm-pin plot reads a file
 * anyone may have written.  Reader: prof_chart_read() for every kind
 * (src/common/libprof/series.c, through prof_read()).
 * Invariants:
 *   - success: at most PROF_SERIES_MAX series of at most PROF_POINTS_MAX
 *     points of finite time and a finite value or a gap (NaN), and as
 *     many finite marks, each colour a palette index, a panel below
 *     npanels; a heat map of at most PROF_HEAT_CELLS_MAX cells, finite
 *     or NaN (no sample), its labels terminated; at most PROF_NOTES_MAX
 *     notes;
 *     the Gantt chart: 1 to PROF_BARS_MAX bars sorted by start, each
 *     command index at most ncmds, within PROF_CMDS_COLOURED; at most
 *     PROF_CONFINE_MAX marks; the header texts NUL-terminated;
 *   - failure: errno EINVAL, ENODATA, E2BIG or ENOMEM and one line of
 *     text; prof_chart_free() after either.
 */
#include <errno.h>
#include <math.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "libprof/series.h"

static int fd = -1;

static void check (const struct prof_chart_data *d, enum prof_chart k)
{
    if (d->nseries > PROF_SERIES_MAX || d->nconfine > PROF_CONFINE_MAX
        || d->nbars > PROF_BARS_MAX || d->ncmds > PROF_CMDS_COLOURED)
        fuzz_fail ("%s: counts out of bounds", prof_chart_name (k));
    for (size_t i = 0; i < d->nseries; i++) {
        const struct prof_series *s = &d->series[i];
        if (s->n > PROF_POINTS_MAX || s->colour >= PROF_SERIES_MAX
            || s->panel >= (d->npanels ? d->npanels : 1)
            || !memchr (s->label, '\0', sizeof (s->label)))
            fuzz_fail ("%s: series %zu malformed", prof_chart_name (k), i);
        for (size_t j = 0; j < s->n; j++)
            if (!isfinite (s->x[j])
                || (!isfinite (s->y[j]) && !isnan (s->y[j])))
                fuzz_fail ("%s: series %zu point %zu not finite",
                           prof_chart_name (k),
                           i,
                           j);
        if (s->nmarks > PROF_POINTS_MAX)
            fuzz_fail ("%s: series %zu: too many marks",
                       prof_chart_name (k),
                       i);
        for (size_t j = 0; j < s->nmarks; j++)
            if (!isfinite (s->mx[j]) || !isfinite (s->my[j]))
                fuzz_fail ("%s: series %zu mark %zu not finite",
                           prof_chart_name (k),
                           i,
                           j);
    }
    if (d->nnotes > PROF_NOTES_MAX)
        fuzz_fail ("%s: too many notes", prof_chart_name (k));
    if (d->heat.rows) {
        if (d->heat.cols == 0
            || d->heat.rows * d->heat.cols > PROF_HEAT_CELLS_MAX
            || !isfinite (d->heat.x0) || !(d->heat.dx > 0))
            fuzz_fail ("%s: heat map malformed", prof_chart_name (k));
        for (size_t j = 0; j < d->heat.rows * d->heat.cols; j++)
            if (!isfinite (d->heat.v[j]) && !isnan (d->heat.v[j]))
                fuzz_fail ("%s: heat cell %zu infinite",
                           prof_chart_name (k),
                           j);
        for (size_t r = 0; r < d->heat.rows; r++)
            if (!memchr (d->heat.label[r], '\0', sizeof (d->heat.label[r])))
                fuzz_fail ("%s: heat label %zu not terminated",
                           prof_chart_name (k),
                           r);
    }
    if (k == PROF_CHART_GANTT && d->nbars == 0)
        fuzz_fail ("gantt: success without a bar");
    for (size_t i = 0; i < d->nbars; i++) {
        if (d->bars[i].cmd > d->ncmds
            || (i && d->bars[i].start < d->bars[i - 1].start)
            || !memchr (d->bars[i].comm, '\0', sizeof (d->bars[i].comm)))
            fuzz_fail ("gantt: bar %zu malformed", i);
    }
    if (!memchr (d->job, '\0', sizeof (d->job))
        || !memchr (d->cpus, '\0', sizeof (d->cpus)))
        fuzz_fail ("%s: header text not terminated", prof_chart_name (k));
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char path[64];

    if (fd < 0 && (fd = memfd_create ("profile", 0)) < 0)
        fuzz_fail ("memfd_create: %s", strerror (errno));
    if (ftruncate (fd, 0) < 0
        || (size && pwrite (fd, data, size, 0) != (ssize_t)size))
        fuzz_fail ("memfd write: %s", strerror (errno));
    snprintf (path, sizeof (path), "/proc/self/fd/%d", fd);
    for (int k = 0; k < PROF_CHART_COUNT; k++) {
        struct prof_chart_data d;
        pin_error_t e = {""};
        if (prof_chart_read (path, (enum prof_chart)k, &d, &e) == 0) {
            check (&d, (enum prof_chart)k);
        } else {
            if (errno != EINVAL && errno != ENODATA && errno != E2BIG
                && errno != ENOMEM)
                fuzz_fail ("%s: failed with errno %d: %s",
                           prof_chart_name (k),
                           errno,
                           e.text);
            if (!e.text[0] || strchr (e.text, '\n'))
                fuzz_fail ("%s: not one line of error: '%s'",
                           prof_chart_name (k),
                           e.text);
        }
        prof_chart_free (&d);
    }
    return 0;
}
