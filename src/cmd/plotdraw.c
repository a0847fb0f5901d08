/* plotdraw.c - draw a chart of a profile with PLplot
 *
 * PLplot draws into a memory stream (open_memstream) that plot.c then
 * writes to the output file, so that a failed drawing never leaves half
 * a file.  PLplot is asked never to prompt and never to print: the
 * device is checked first (plgDevs: an unknown device would make
 * plinit ask for one on stdin), the file is given as a stream (plsfile:
 * no file name prompt), errors go to a buffer (plsError), and a fatal
 * one (plexit) ends the command with one line.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <plplot.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libutil/text.h"
#include "plotdraw.h"
#include "subcmd.h"

/* cmap0: 0 background, 1 frame and text, 2 grid, 3 confinement mark,
 * then the palette. */
enum { C_BG, C_FG, C_GRID, C_MARK, C_SERIES };

const unsigned char plot_palette[PLOT_PALETTE_SIZE][3] = {
    {0x1F, 0x77, 0xB4}, /* blue */
    {0xD6, 0x27, 0x28}, /* red */
    {0x2C, 0xA0, 0x2C}, /* green */
    {0xFF, 0x7F, 0x0E}, /* orange */
    {0x94, 0x67, 0xBD}, /* purple */
    {0x8C, 0x56, 0x4B}, /* brown */
    {0xE3, 0x77, 0xC2}, /* pink */
    {0x17, 0xBE, 0xCF}, /* cyan */
    {0xBC, 0xBD, 0x22}, /* olive */
    {0x00, 0x00, 0x80}, /* navy */
    {0x80, 0x00, 0x00}, /* maroon */
    {0x00, 0x80, 0x80}, /* teal */
    {0xFF, 0x00, 0xFF}, /* magenta */
    {0xFF, 0xD7, 0x00}, /* gold */
    {0x7F, 0xFF, 0x00}, /* chartreuse */
    {0x4B, 0x00, 0x82}, /* indigo */
    {0xF4, 0xA4, 0x60}, /* sandy brown */
    {0xA0, 0xA0, 0xA0}, /* grey: the Gantt chart's other commands */
};
#define C_OTHER (C_SERIES + PROF_SERIES_MAX)
#define C_HEAT (C_SERIES + PLOT_PALETTE_SIZE)
#define C_COUNT (C_HEAT + PROF_HEAT_LEVELS)

const unsigned char plot_heat[PROF_HEAT_LEVELS][3] = {
    {0xFF, 0xFF, 0xB2},
    {0xFE, 0xD9, 0x76},
    {0xFE, 0xB2, 0x4C},
    {0xFD, 0x8D, 0x3C},
    {0xF0, 0x3B, 0x20},
    {0xBD, 0x00, 0x26},
};

#define LINE_WIDTH                                 \
    2.0 /* series; PNG lines are not anti-aliased: \
         * every pixel of a series has exactly its \
         * colour (the text is smoothed) */

bool plot_have_device (const char *name)
{
    const char *menu[128], *dev[128];
    const char **pm = menu, **pd = dev;
    int n = 128;

    plgDevs (&pm, &pd, &n);
    for (int i = 0; i < n && i < 128; i++)
        if (dev[i] && !strcmp (dev[i], name))
            return true;
    return false;
}

static int on_plexit (const char *msg)
{
    cmd_error ("plot", "PLplot: %s", msg ? msg : "fatal error");
    _exit (1);
}

/* Text for PLplot: printable ASCII (anything else '?': text_sanitize
 * with TEXT_ASCII), and '#', its escape character, doubled; at most
 * n - 1 bytes. */
static void safe_text (char *dst, size_t n, const char *src)
{
    char ascii[1024];
    size_t j = 0;

    text_sanitize (ascii, sizeof (ascii), src, TEXT_ASCII);
    for (const char *p = ascii; *p && j + 2 < n; p++) {
        if (*p == '#')
            dst[j++] = '#';
        dst[j++] = *p;
    }
    if (n)
        dst[j] = '\0';
}

struct layout {
    double text_px;        /* height of the text */
    double ylabel_off;     /* of the y axis label, in lines */
    double xl, xr, yb, yt; /* the plot area, normalised */
    double x0, x1;         /* time range drawn */
    double unit;           /* seconds per unit of the x axis */
    const char *unit_name;
};

/* The x axis: seconds, minutes or hours, whatever reads best. */
static void time_unit (struct layout *l, const struct prof_chart_data *d)
{
    double span;

    l->x0 = d->t_first < 0 ? d->t_first : 0;
    l->x1 = d->t_last;
    span = l->x1 - l->x0;
    if (span > 3 * 3600) {
        l->unit = 3600;
        l->unit_name = "h";
    } else if (span > 20 * 60) {
        l->unit = 60;
        l->unit_name = "min";
    } else {
        l->unit = 1;
        l->unit_name = "s";
    }
    l->x0 /= l->unit;
    l->x1 /= l->unit;
    if (!(l->x1 - l->x0 > 1e-9))
        l->x1 = l->x0 + 1;
}

/* ---- legend ------------------------------------------------------------ */

#define LEGEND_MAX                                                          \
    (PROF_SERIES_MAX + PROF_CONFINE_MAX + PROF_HEAT_LEVELS + PROF_NOTES_MAX \
     + 2)

struct legend {
    int n;
    PLINT opt[LEGEND_MAX], colour[LEGEND_MAX], style[LEGEND_MAX];
    PLFLT width[LEGEND_MAX];
    char text[LEGEND_MAX][PROF_LABEL * 2];
};

static void legend_add (struct legend *g,
                        PLINT opt,
                        PLINT colour,
                        PLINT style,
                        PLFLT width,
                        const char *text)
{
    if (g->n >= LEGEND_MAX)
        return;
    g->opt[g->n] = opt;
    g->colour[g->n] = colour;
    g->style[g->n] = style;
    g->width[g->n] = width;
    safe_text (g->text[g->n], sizeof (g->text[0]), text);
    g->n++;
}

static size_t legend_chars (const struct legend *g)
{
    size_t m = 0;

    for (int i = 0; i < g->n; i++)
        if (strlen (g->text[i]) > m)
            m = strlen (g->text[i]);
    return m;
}

static void legend_draw (const struct legend *g)
{
    const char *text[LEGEND_MAX];
    PLINT tcol[LEGEND_MAX], ncol[LEGEND_MAX], pat[LEGEND_MAX];
    PLFLT scale[LEGEND_MAX], bw[LEGEND_MAX];
    PLFLT w, h;

    for (int i = 0; i < g->n; i++) {
        text[i] = g->text[i];
        tcol[i] = C_FG;
        ncol[i] = 0;
        pat[i] = 0;
        scale[i] = 1;
        bw[i] = 1;
    }
    pllegend (&w,
              &h,
              PL_LEGEND_NONE,
              PL_POSITION_RIGHT | PL_POSITION_OUTSIDE | PL_POSITION_VIEWPORT,
              0.015,
              0.0,
              0.05,
              C_BG,
              C_FG,
              1,
              0,
              0,
              g->n,
              g->opt,
              0.8,
              0.85,
              2.0,
              0.0,
              tcol,
              text,
              g->colour,
              pat,
              scale,
              bw,
              g->colour,
              g->style,
              g->width,
              ncol,
              scale,
              ncol,
              NULL);
}

/* ---- drawing ------------------------------------------------------------ */

/* The axes of a panel: y0 at the bottom, y1 at the top (the Gantt chart
 * counts its processes from the top: y0 > y1). */
static void frame (const struct layout *l,
                   double y0,
                   double y1,
                   double yb,
                   double yt,
                   bool xlabels,
                   bool ygrid)
{
    plvpor (l->xl, l->xr, yb, yt);
    plwind (l->x0, l->x1, y0, y1);
    plcol0 (C_GRID);
    plwidth (1);
    plbox ("g", 0, 0, ygrid ? "g" : "", 0, 0);
    plcol0 (C_FG);
    plbox (xlabels ? "bcnst" : "bcst", 0, 0, "bcnstv", 0, 0);
}

static void confine_marks (const struct prof_chart_data *d,
                           const struct layout *l,
                           double y0,
                           double y1)
{
    plcol0 (C_MARK);
    plwidth (1.5);
    pllsty (2);
    for (size_t i = 0; i < d->nconfine; i++) {
        double x = d->confine[i].t / l->unit;
        if (x >= l->x0 && x <= l->x1)
            pljoin (x, y0, x, y1);
    }
    pllsty (1);
}

static void legend_confine (const struct prof_chart_data *d, struct legend *g)
{
    for (size_t i = 0; i < d->nconfine; i++) {
        char t[96];
        snprintf (t,
                  sizeof (t),
                  "confined (%s%s%s)",
                  d->confine[i].how[0] ? d->confine[i].how : "?",
                  d->confine[i].cpus[0] ? ": " : "",
                  d->confine[i].cpus);
        legend_add (g, PL_LEGEND_LINE, C_MARK, 2, 1.5, t);
    }
}

static double panel_max (const struct prof_chart_data *d, unsigned panel)
{
    double m = 0;

    for (size_t i = 0; i < d->nseries; i++) {
        const struct prof_series *s = &d->series[i];
        if (s->panel != panel)
            continue;
        for (size_t k = 0; k < s->n; k++)
            if (s->y[k] > m)
                m = s->y[k];
        for (size_t k = 0; k < s->nmarks; k++)
            if (s->my[k] > m)
                m = s->my[k];
    }
    return m;
}

/* Series are drawn in the order of draw_order[], each one 2 pixels
 * wider than the next, so that where two series are equal (forks and
 * exits of short processes, idle states at 0, two saturated CPUs) both
 * colours show: the series drawn later lies inside the one drawn
 * before.  A panel of more than LAYERS_MAX series (the per-CPU chart of
 * many CPUs) draws them all LINE_WIDTH wide. */
#define LAYERS_MAX 6
static size_t draw_order (const struct prof_chart_data *d,
                          unsigned panel,
                          size_t *order)
{
    size_t n = 0;

    /* totals first: the widest, under their parts */
    for (size_t i = 0; i < d->nseries; i++)
        if (d->series[i].panel == panel && d->series[i].total)
            order[n++] = i;
    for (size_t i = 0; i < d->nseries; i++) {
        bool done = false;
        if (d->series[i].panel != panel)
            continue;
        for (size_t k = 0; k < n; k++)
            done = done || order[k] == i;
        if (!done)
            order[n++] = i;
    }
    return n;
}

/* The width series i is drawn with. */
static double series_width (const struct prof_chart_data *d, size_t i)
{
    size_t order[PROF_SERIES_MAX];
    size_t n = draw_order (d, d->series[i].panel, order);

    if (n > LAYERS_MAX)
        return LINE_WIDTH;
    for (size_t j = 0; j < n; j++)
        if (order[j] == i)
            return LINE_WIDTH + 2.0 * (double)(n - 1 - j);
    return LINE_WIDTH;
}

/* One run of points of a series, between gaps. */
static void draw_run (const struct layout *l, PLFLT *x, PLFLT *y, size_t m)
{
    if (m == 1) /* one point: a short flat line shows it */
        pljoin (x[0], y[0], x[0] + (l->x1 - l->x0) / 200, y[0]);
    else if (m > 1)
        plline ((PLINT)m, x, y);
}

/* Steps for binned series: each bin drawn flat over its width.  A gap
 * (NaN) breaks the line; the marks (incomplete values) are crosses. */
static int draw_series (const struct prof_chart_data *d,
                        const struct layout *l,
                        unsigned panel)
{
    size_t order[PROF_SERIES_MAX];
    size_t n = draw_order (d, panel, order);

    for (size_t j = 0; j < n; j++) {
        const struct prof_series *s = &d->series[order[j]];
        size_t m = d->steps ? 2 * s->n : s->n, run = 0;
        size_t nx = m > s->nmarks ? m : s->nmarks;
        PLFLT *x, *y;

        if (nx == 0)
            continue;
        x = malloc (nx * sizeof (*x));
        y = malloc (nx * sizeof (*y));
        if (!x || !y) {
            free (x);
            free (y);
            return -1;
        }
        plcol0 (C_SERIES + (PLINT)s->colour);
        plwidth (series_width (d, order[j]));
        pllsty (s->limit ? 2 : 1);
        for (size_t k = 0; k < s->n; k++) {
            if (isnan (s->y[k])) {
                draw_run (l, x, y, run);
                run = 0;
            } else if (d->steps) {
                x[run] = (s->x[k] - d->bin_s / 2) / l->unit;
                x[run + 1] = (s->x[k] + d->bin_s / 2) / l->unit;
                y[run] = y[run + 1] = s->y[k];
                run += 2;
            } else {
                x[run] = s->x[k] / l->unit;
                y[run++] = s->y[k];
            }
        }
        draw_run (l, x, y, run);
        pllsty (1);
        if (s->nmarks) {
            for (size_t k = 0; k < s->nmarks; k++) {
                x[k] = s->mx[k] / l->unit;
                y[k] = s->my[k];
            }
            plwidth (LINE_WIDTH);
            plssym (0, 1.2);
            plpoin ((PLINT)s->nmarks, x, y, 5); /* x */
        }
        free (x);
        free (y);
    }
    return 0;
}

/* The shade of value v of heat map h: a level, or -1 (not drawn). */
static int heat_level (const struct prof_heat *h, double v)
{
    if (isnan (v) || v < h->bound[0])
        return -1;
    for (int k = 0; k < PROF_HEAT_LEVELS; k++)
        if (v <= h->bound[k + 1])
            return k;
    return PROF_HEAT_LEVELS - 1;
}

/* The highest level a cell of h has, or -1. */
static int heat_top (const struct prof_heat *h)
{
    int top = -1;

    for (size_t i = 0; i < h->rows * h->cols; i++) {
        int k = heat_level (h, h->v[i]);
        if (k > top)
            top = k;
    }
    return top;
}

/* The heat map: row r from r - 0.5 to r + 0.5 (the window runs from
 * rows - 0.5 at the bottom to -0.5 at the top); cells of one shade in a
 * row are one rectangle. */
static void draw_heat (const struct prof_heat *h,
                       const struct layout *l,
                       double half)
{
    plwidth (0);
    for (size_t r = 0; r < h->rows; r++) {
        size_t c = 0;
        while (c < h->cols) {
            int k = heat_level (h, h->v[r * h->cols + c]);
            size_t e = c + 1;
            PLFLT x[4], y[4];
            while (e < h->cols && heat_level (h, h->v[r * h->cols + e]) == k)
                e++;
            if (k >= 0) {
                x[0] = x[3] = (h->x0 + (double)c * h->dx) / l->unit;
                x[1] = x[2] = (h->x0 + (double)e * h->dx) / l->unit;
                y[0] = y[1] = (double)r + half;
                y[2] = y[3] = (double)r - half;
                plcol0 (C_HEAT + k);
                plfill (4, x, y);
            }
            c = e;
        }
    }
}

/* The y axis of a heat map: row labels (PLplot's custom labels). */
static void heat_label (PLINT axis, PLFLT v, char *buf, PLINT n, PLPointer p)
{
    const struct prof_heat *h = p;
    double r = floor (v + 0.5);

    buf[0] = '\0';
    if (axis == PL_Y_AXIS && fabs (v - r) < 1e-6 && r >= 0
        && r < (double)h->rows)
        safe_text (buf, (size_t)n, h->label[(size_t)r]);
}

/* The longest row label of a heat map. */
static size_t heat_label_chars (const struct prof_heat *h)
{
    size_t m = 0;

    for (size_t r = 0; r < h->rows; r++)
        if (strlen (h->label[r]) > m)
            m = strlen (h->label[r]);
    return m;
}

static void frame_heat (const struct prof_heat *h,
                        const struct layout *l,
                        double yb,
                        double yt,
                        double panel_px,
                        bool xlabels)
{
    /* a label every `step` rows, as many as fit */
    double fit = panel_px / (1.25 * l->text_px);
    double step = fit >= 1 ? ceil ((double)h->rows / fit) : (double)h->rows;

    plvpor (l->xl, l->xr, yb, yt);
    plwind (l->x0, l->x1, (double)h->rows - 0.5, -0.5);
    plcol0 (C_GRID);
    plwidth (1);
    plbox ("g", 0, 0, "", 0, 0);
    plslabelfunc (heat_label, (PLPointer)h);
    plcol0 (C_FG);
    plbox (xlabels ? "bcnst" : "bcst", 0, 0, "bcnotv", step, 1);
    plslabelfunc (NULL, NULL);
}

static void draw_gantt (const struct prof_chart_data *d,
                        const struct layout *l,
                        double plot_w_px,
                        double plot_h_px)
{
    /* a bar is 70% of its row while rows are 4 pixels or more, so that
     * bars can be told apart; below, rows touch, and a bar is at least
     * one pixel high (in rows), so that none vanishes */
    double row_px = plot_h_px / (double)d->nbars;
    double h = row_px >= 4 ? 0.7 : fmax (1.0, 1.0 / row_px);
    /* a process shorter than 3 pixels is drawn 3 pixels wide */
    double minw = 3 * (l->x1 - l->x0) / plot_w_px;

    plwidth (0);
    for (size_t i = 0; i < d->nbars; i++) {
        const struct prof_bar *b = &d->bars[i];
        /* centred in its row; a bar higher than its row stays inside
         * the frame */
        double top = h <= 1 ? (double)i + (1 - h) / 2
                            : fmin ((double)i, (double)d->nbars - h);
        double bot = top + h;
        double x0 = b->start / l->unit, x1 = b->end / l->unit;
        PLFLT x[4], y[4];

        if (x1 - x0 < minw)
            x1 = x0 + minw;
        x[0] = x[3] = x0;
        x[1] = x[2] = x1;
        y[0] = y[1] = bot;
        y[2] = y[3] = top;
        plcol0 (b->cmd < d->ncmds ? C_SERIES + (PLINT)b->cmd : C_OTHER);
        plfill (4, x, y);
    }
}

static void build_legend (const struct prof_chart_data *d, struct legend *g)
{
    char t[96];

    if (d->kind == PROF_CHART_GANTT) {
        for (size_t i = 0; i < d->ncmds; i++) {
            char comm[40];
            safe_text (comm, sizeof (comm), d->cmds[i]);
            snprintf (t,
                      sizeof (t),
                      "%s (%llu)",
                      comm,
                      (unsigned long long)d->cmd_procs[i]);
            /* a thick line, not a filled box: the bars are the only
             * filled shapes of the chart */
            legend_add (g, PL_LEGEND_LINE, C_SERIES + (PLINT)i, 1, 8, t);
        }
        if (d->other_cmds) {
            snprintf (t,
                      sizeof (t),
                      "%zu other command%s (%llu)",
                      d->other_cmds,
                      d->other_cmds > 1 ? "s" : "",
                      (unsigned long long)d->other_procs);
            legend_add (g, PL_LEGEND_LINE, C_OTHER, 1, 8, t);
        }
    }
    if (d->kind == PROF_CHART_GANTT && d->heat.rows)
        g->n = 0; /* lanes, not bars: the shades below say what is what */
    if (d->kind != PROF_CHART_GANTT) {
        bool seen[PROF_SERIES_MAX] = {false};
        for (size_t i = 0; i < d->nseries; i++) {
            const struct prof_series *s = &d->series[i];
            if (s->colour >= PROF_SERIES_MAX || seen[s->colour])
                continue;
            seen[s->colour] = true;
            legend_add (g,
                        PL_LEGEND_LINE,
                        C_SERIES + (PLINT)s->colour,
                        s->limit ? 2 : 1,
                        series_width (d, i),
                        s->label);
        }
    }
    if (d->heat.rows) {
        int top = heat_top (&d->heat);
        for (int k = 0; k <= top; k++)
            legend_add (g,
                        PL_LEGEND_COLOR_BOX,
                        C_HEAT + k,
                        1,
                        1,
                        d->heat.level[k]);
    }
    for (size_t i = 0; i < d->nnotes; i++)
        legend_add (g, PL_LEGEND_NONE, C_FG, 1, 1, d->note[i]);
    legend_confine (d, g);
}

static void draw (const struct prof_chart_data *d,
                  const struct plot_opts *o,
                  struct layout *l,
                  const struct legend *g,
                  int *rc)
{
    double W = o->width, H = o->height;
    double lines = o->subtitle ? 4.2 : 3.0;
    double legend_w;
    char title[256], sub[256], xlabel[64];

    time_unit (l, d);
    l->text_px = fmax (9.0, fmin (W / 70, H / 45));
    /* PLplot sizes text in mm: 72 points (cairo: pixels) per inch */
    plschr (l->text_px / (72.0 / 25.4), 1.0);
    /* the legend's text is 0.85 of the others; a character is at most
     * 0.9 of its height wide; then its line and the gaps */
    legend_w = (double)legend_chars (g) * 0.85 * 0.9 * l->text_px + 0.06 * W
               + 4 * l->text_px;
    /* room for the numbers of the y axis, then its label */
    {
        double ymax = d->kind == PROF_CHART_GANTT
                          ? (double)d->nbars
                          : fmax (panel_max (d, 0), panel_max (d, 1)) * 1.06;
        double digits = ymax >= 10 ? floor (log10 (ymax)) + 1 : 3;
        if (d->heat.rows)
            digits = fmax (digits, (double)heat_label_chars (&d->heat));
        l->ylabel_off = fmax (3, digits) * 0.8 + 2.6;
    }
    l->xl = (l->ylabel_off + 1.5) * l->text_px / W;
    l->xr = 1 - legend_w / W;
    if (l->xr - l->xl < 0.35)
        l->xr = l->xl + 0.35;
    l->yb = 4.4 * l->text_px / H;
    l->yt = 1 - (lines + 0.8) * l->text_px / H;
    safe_text (title, sizeof (title), o->title);
    safe_text (sub, sizeof (sub), o->subtitle);
    snprintf (xlabel,
              sizeof (xlabel),
              "time since the recording started "
              "(%s)",
              l->unit_name);

    pladv (0);
    plsxax (9, 0); /* numbers up to 9 digits, not "x10^5" */
    plsyax (9, 0);
    if (d->kind == PROF_CHART_GANTT && !d->heat.rows) {
        double n = (double)d->nbars;
        double m = 0.01 * n + 0.3; /* the first and last bar clear of
                                    * the frame */
        frame (l, n + m, -m, l->yb, l->yt, true, false);
        draw_gantt (d,
                    l,
                    (l->xr - l->xl) * W,
                    (l->yt - l->yb) * H * n / (n + 2 * m));
        confine_marks (d, l, n + m, -m);
        plcol0 (C_FG);
        plwidth (1);
        plbox ("bc", 0, 0, "bc", 0, 0);
        {
            char t[96];
            snprintf (t, sizeof (t), "%s (%zu)", d->ylabel, d->nbars);
            plmtex ("l", l->ylabel_off, 0.5, 0.5, t);
        }
        legend_draw (g);
    } else {
        unsigned np = d->npanels ? d->npanels : 1;
        double gap = np > 1 ? 1.8 * l->text_px / H : 0;
        double ph = (l->yt - l->yb - gap * (np - 1)) / np;
        for (unsigned p = 0; p < np; p++) {
            double yt = l->yt - p * (ph + gap), yb = yt - ph;
            double ymax = panel_max (d, p);
            if (p == 0 && d->heat.rows) {
                frame_heat (&d->heat, l, yb, yt, ph * H, p == np - 1);
                /* lanes of commands apart, rows of CPUs touching */
                draw_heat (&d->heat,
                           l,
                           d->kind == PROF_CHART_GANTT ? 0.42 : 0.5);
                confine_marks (d, l, (double)d->heat.rows - 0.5, -0.5);
                plcol0 (C_FG);
                plwidth (1);
                plbox ("bc", 0, 0, "bc", 0, 0);
                plmtex ("l",
                        l->ylabel_off,
                        0.5,
                        0.5,
                        np > 1 ? d->panel_label[p] : d->ylabel);
                legend_draw (g);
                continue;
            }
            if (d->kind == PROF_CHART_CPU)
                ymax = fmax (ymax, 100);
            ymax = ymax > 0 ? ymax * 1.06 : 1;
            /* a margin below 0: a series at 0 is not hidden by the axis */
            frame (l, -0.03 * ymax, ymax, yb, yt, p == np - 1, true);
            confine_marks (d, l, -0.03 * ymax, ymax);
            if (draw_series (d, l, p) < 0) {
                *rc = -1;
                return;
            }
            plcol0 (C_FG);
            plwidth (1);
            plbox ("bc", 0, 0, "bc", 0, 0); /* the frame over the data */
            if (np > 1)
                plmtex ("l", l->ylabel_off, 0.5, 0.5, d->panel_label[p]);
            else
                plmtex ("l", l->ylabel_off, 0.5, 0.5, d->ylabel);
            if (p == 0)
                legend_draw (g);
        }
    }
    plcol0 (C_FG);
    plvpor (l->xl, l->xr, l->yb, l->yt);
    plmtex ("b", 2.8, 0.5, 0.5, xlabel);
    plmtex ("t", o->subtitle ? 2.6 : 1.2, 0.5, 0.5, title);
    if (o->subtitle) {
        plschr (0, 0.8);
        plmtex ("t", 1.0, 0.5, 0.5, sub);
        plschr (0, 1.0);
    }
}

int plot_render (const struct prof_chart_data *d,
                 const struct plot_opts *o,
                 char **buf,
                 size_t *len,
                 pin_error_t *errp)
{
    PLINT colours[C_COUNT][3] = {
        [C_BG] = {255, 255, 255},
        [C_FG] = {0, 0, 0},
        [C_GRID] = {0xDD, 0xDD, 0xDD},
        [C_MARK] = {0x55, 0x55, 0x55},
    };
    PLINT r[C_COUNT], gr[C_COUNT], b[C_COUNT];
    PLINT plerr = 0;
    char plmsg[1024] = "";
    struct legend g = {0};
    struct layout l = {0};
    FILE *f;
    int rc = 0;

    *buf = NULL;
    *len = 0;
    for (int i = 0; i < PLOT_PALETTE_SIZE; i++)
        for (int k = 0; k < 3; k++)
            colours[C_SERIES + i][k] = plot_palette[i][k];
    for (int i = 0; i < PROF_HEAT_LEVELS; i++)
        for (int k = 0; k < 3; k++)
            colours[C_HEAT + i][k] = plot_heat[i][k];
    for (int i = 0; i < C_COUNT; i++) {
        r[i] = colours[i][0];
        gr[i] = colours[i][1];
        b[i] = colours[i][2];
    }
    if (!(f = open_memstream (buf, len)))
        return errprintf (errp, "out of memory");
    build_legend (d, &g);
    plsexit (on_plexit);
    plsdev (o->device);
    plsfile (f); /* PLplot closes it at plend */
    plspage (0, 0, o->width, o->height, 0, 0);
    plscmap0 (r, gr, b, C_COUNT);
    plsError (&plerr, plmsg);
    if (!strcmp (o->device, "pngcairo")) /* 1: CAIRO_ANTIALIAS_NONE */
        plsetopt ("drvopt", "graphics_anti_aliasing=1");
    plinit ();
    draw (d, o, &l, &g, &rc);
    plend ();
    if (rc < 0 || plerr) {
        char *nl;
        free (*buf);
        *buf = NULL;
        *len = 0;
        if (rc < 0) {
            errno = ENOMEM;
            return errprintf (errp, "out of memory");
        }
        while ((nl = strchr (plmsg, '\n')))
            *nl = ' ';
        errno = EIO;
        return errprintf (errp, "PLplot: %s", plmsg);
    }
    return 0;
}
