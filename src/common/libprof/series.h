/* series.h - what `slurm-pin plot` draws, read from a profile
 *
 * One chart per kind: time series (per-CPU use, event rates, context
 * switch rates, processes by state, memory) or, for the Gantt chart, one
 * bar per process.  This file only computes; the drawing is PLplot glue
 * in src/cmd/plotdraw.c.  doc/profiling.md describes the lines read;
 * doc/profiling-guide.md what each chart shows.
 *
 * Everything is bounded, whatever the file holds: at most
 * PROF_SERIES_MAX series of at most PROF_POINTS_MAX points (longer ones
 * are merged two by two: the mean, or the maximum for memory, so that a
 * spike stays), PROF_BARS_MAX bars, PROF_CONFINE_MAX confinement marks.
 */
#ifndef PIN_SERIES_H
#define PIN_SERIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libutil/errprintf.h"

enum prof_chart {
    PROF_CHART_CPU,    /* per-CPU use (%), the step's cgroup */
    PROF_CHART_GANTT,  /* one bar per process, start to end */
    PROF_CHART_FORKS,  /* forks, threads, execs, exits per second */
    PROF_CHART_CTXSW,  /* context switches per second */
    PROF_CHART_STATES, /* processes and threads by state */
    PROF_CHART_MEMORY, /* summed RSS, PSS, the cgroup's memory */
    PROF_CHART_COUNT,
};

/* "cpu, gantt, forks, ctxsw, states, memory" */
#define PROF_CHART_NAMES "cpu, gantt, forks, ctxsw, states, memory"

#define PROF_SERIES_MAX 17     /* 16 CPU series + the step's cgroup */
#define PROF_CPU_SERIES_MAX 16 /* more CPUs than this are grouped */
#define PROF_CPUS_MAX 4096     /* distinct CPU numbers read; more ignored */
#define PROF_POINTS_MAX 65536
#define PROF_BARS_MAX 1000000
#define PROF_CMDS_COLOURED 8 /* commands with a colour of their own */
#define PROF_CONFINE_MAX 16
#define PROF_BINS_MAX 2000 /* forks: bins are widened to stay below */
#define PROF_LABEL 64
/* more CPUs than PROF_CPU_SERIES_MAX: a heat map (CPU x time), one row
 * per CPU, of at most PROF_HEAT_COLS_MAX columns and PROF_HEAT_CELLS_MAX
 * cells */
#define PROF_HEAT_COLS_MAX 600
#define PROF_HEAT_CELLS_MAX (1 << 21)
#define PROF_HEAT_LEVELS 6 /* shades of a heat map */
/* a Gantt chart of more processes than this: one lane per command */
#define PROF_GANTT_GROUP_MIN 200
#define PROF_LANES_MAX 24 /* lanes; more commands share the last one */
#define PROF_NOTES_MAX 4

/* The name of a kind ("cpu"), or NULL. */
const char *prof_chart_name (enum prof_chart kind);

/* The kind named `name`; -1 (errno EINVAL) if none is. */
int prof_chart_parse (const char *name, enum prof_chart *kind);

struct prof_series {
    char label[PROF_LABEL]; /* for the legend */
    unsigned colour;        /* index in the palette: series that share
                             * one (states: the same state in both
                             * panels) are one entry of the legend */
    unsigned panel;         /* 0, or 1 for the lower panel (states) */
    bool total;             /* a sum of others: drawn first, widest */
    bool limit;             /* a limit (memory.max): drawn dashed */
    size_t n;
    double *x, *y; /* seconds since t0, value; y NaN: a gap (no sample,
                    * or an incomplete one: the line breaks there) */
    /* incomplete values, drawn as marks: a lower bound (the memory
     * chart's RSS and PSS of a sample whose smaps reads were skipped) */
    size_t nmarks;
    double *mx, *my;
    /* merging beyond PROF_POINTS_MAX points (private) */
    bool max;
    size_t stride, acc_n, acc_valid;
    double acc_x, acc_y;
};

struct prof_bar {
    double start, end; /* seconds since t0 */
    int64_t pid;
    unsigned cmd; /* index in cmds[]; ncmds: another one */
    char comm[17];
    bool open, comm_final; /* (private) */
};

struct prof_confine {
    double t;
    char how[16], cpus[48];
};

/* A heat map: rows x cols cells of a value, each column dx seconds from
 * x0; v[row * cols + col] NaN where no sample covers the cell.  The
 * shade of a value is the level whose (bound[k], bound[k+1]] holds it
 * (level 0 from bound[0] on, included). */
struct prof_heat {
    size_t rows, cols;
    double x0, dx;
    double *v;
    char (*label)[PROF_LABEL]; /* of each row */
    double bound[PROF_HEAT_LEVELS + 1];
    char level[PROF_HEAT_LEVELS][PROF_LABEL]; /* the legend of a shade */
    const char *what;                         /* "CPU use", "processes" */
};

struct prof_chart_data {
    enum prof_chart kind;
    const char *ylabel;         /* static text */
    const char *panel_label[2]; /* states: "processes", "threads" */
    unsigned npanels;
    bool steps; /* series are bins of width bin_s */
    double bin_s;
    struct prof_series series[PROF_SERIES_MAX];
    size_t nseries;
    /* Gantt: bars sorted by start (then pid) */
    struct prof_bar *bars;
    size_t nbars;
    char cmds[PROF_CMDS_COLOURED][17]; /* most processes first */
    uint64_t cmd_procs[PROF_CMDS_COLOURED];
    size_t ncmds;
    uint64_t other_procs; /* processes of the other commands */
    size_t other_cmds;    /* how many other commands */
    /* cpu of many CPUs, Gantt of many processes: panel 0 is a heat
     * map (rows 0), the series go to panel 1 */
    struct prof_heat heat;
    /* legend lines without a series: what is missing or marked */
    char note[PROF_NOTES_MAX][PROF_LABEL * 2];
    size_t nnotes;
    size_t gaps;       /* samples missing (line breaks) */
    size_t incomplete; /* samples drawn as marks */
    /* the whole recording */
    double t_first, t_last; /* seconds since t0 */
    struct prof_confine confine[PROF_CONFINE_MAX];
    size_t nconfine;
    /* from the header, when present ("" otherwise; not sanitised) */
    char job[32], step[32], node[64], policy[32], cpus[128];
    uint64_t skipped; /* malformed values ignored */
};

/* Read the profile at `path` into *d for chart `kind` (free with
 * prof_chart_free, also after a failure).  -1 with errp: a file that
 * cannot be read or is not a profile (see prof_read), ENOMEM, E2BIG
 * (more than PROF_BARS_MAX processes), or ENODATA: the profile has
 * nothing for this kind (no samples of per-CPU use, no process events,
 * ...), said so that a person knows why. */
int prof_chart_read (const char *path,
                     enum prof_chart kind,
                     struct prof_chart_data *d,
                     pin_error_t *errp);

/* The same, the Gantt chart of the processes of command `filter` only
 * (their last comm, exactly; NULL: all); ENODATA when none ran it. */
int prof_chart_read_filter (const char *path,
                            enum prof_chart kind,
                            const char *filter,
                            struct prof_chart_data *d,
                            pin_error_t *errp);

/* Free what *d holds (d itself is the caller's); keeps errno. */
void prof_chart_free (struct prof_chart_data *d);

#endif /* !PIN_SERIES_H */
