/* plotdraw.h - draw a chart of a profile with PLplot
 *
 * The only file of slurm-pin that calls PLplot.  The data comes from
 * libprof/series.h; the colours are the fixed palette below, documented
 * in slurm-pin-plot(1) so that a test can count the series in an image.
 */
#ifndef PIN_PLOTDRAW_H
#define PIN_PLOTDRAW_H

#include <stdbool.h>
#include <stddef.h>

#include "libprof/series.h"
#include "libutil/errprintf.h"

/* The series colours, in order (series i has colour i; the Gantt chart's
 * commands 0..7 too), then the colour of the Gantt chart's "other
 * commands".  Frame and text are black, the grid light grey (#DDDDDD),
 * the confinement mark dark grey (#555555), none of them a series
 * colour. */
#define PLOT_PALETTE_SIZE (PROF_SERIES_MAX + 1)
extern const unsigned char plot_palette[PLOT_PALETTE_SIZE][3];

/* The shades of a heat map (many CPUs, the Gantt chart of many
 * processes), lightest first: none of them a series colour. */
extern const unsigned char plot_heat[PROF_HEAT_LEVELS][3];

struct plot_opts {
    const char *device;   /* a PLplot device: "pngcairo", "svg" */
    int width, height;    /* of the image: pixels (PNG), points (SVG) */
    const char *title;    /* as given; made safe here */
    const char *subtitle; /* second line under the title, or NULL */
};

/* Whether PLplot on this machine has the device `name` (its drivers are
 * separate packages). */
bool plot_have_device (const char *name);

/* Draw chart `d` into a new buffer *buf of *len bytes (the whole file;
 * caller frees).  -1 with errp when PLplot reports an error. */
int plot_render (const struct prof_chart_data *d,
                 const struct plot_opts *o,
                 char **buf,
                 size_t *len,
                 pin_error_t *errp);

#endif /* !PIN_PLOTDRAW_H */
