/* series.c - what `slurm-pin plot` draws, read from a profile */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <hwloc.h>
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "series.h"

static const char *const chart_names[PROF_CHART_COUNT] = {
    "cpu",
    "gantt",
    "forks",
    "ctxsw",
    "states",
    "memory",
};

const char *prof_chart_name (enum prof_chart kind)
{
    if ((unsigned)kind >= PROF_CHART_COUNT)
        return NULL;
    return chart_names[kind];
}

int prof_chart_parse (const char *name, enum prof_chart *kind)
{
    for (unsigned i = 0; name && i < PROF_CHART_COUNT; i++) {
        if (!strcmp (name, chart_names[i])) {
            *kind = (enum prof_chart)i;
            return 0;
        }
    }
    errno = EINVAL;
    return -1;
}

/* ---- series ----------------------------------------------------------- */

static struct prof_series *series_add (struct prof_chart_data *d,
                                       const char *label,
                                       unsigned colour,
                                       unsigned panel,
                                       bool max)
{
    struct prof_series *s;

    if (d->nseries >= PROF_SERIES_MAX)
        return NULL;
    s = &d->series[d->nseries++];
    memset (s, 0, sizeof (*s));
    snprintf (s->label, sizeof (s->label), "%s", label);
    s->colour = colour;
    s->panel = panel;
    s->max = max;
    s->stride = 1;
    return s;
}

/* Merge two values of a series: the mean, or the maximum for memory;
 * a gap (NaN) only where both are. */
static double merge2 (const struct prof_series *s, double a, double b)
{
    if (isnan (a))
        return b;
    if (isnan (b))
        return a;
    return s->max ? fmax (a, b) : (a + b) / 2;
}

/* Append a point (y NaN: a gap); beyond PROF_POINTS_MAX points, halve
 * the series (each two neighbours merged: mean time, merge2) and merge
 * the points to come `stride` at a time.  -1 on ENOMEM. */
static int series_push (struct prof_series *s, double x, double y)
{
    if (s->stride > 1) {
        s->acc_x += x;
        if (s->acc_n == 0)
            s->acc_y = y;
        else if (isnan (s->acc_y) || isnan (y))
            s->acc_y = isnan (s->acc_y) ? y : s->acc_y;
        else
            s->acc_y = s->max ? fmax (s->acc_y, y) : s->acc_y + y;
        if (!isnan (y))
            s->acc_valid++;
        if (++s->acc_n < s->stride)
            return 0;
        x = s->acc_x / (double)s->acc_n;
        y = s->max || isnan (s->acc_y) || !s->acc_valid
                ? s->acc_y
                : s->acc_y / (double)s->acc_valid;
        s->acc_n = s->acc_valid = 0;
        s->acc_x = s->acc_y = 0;
    }
    if (!s->x) {
        s->x = malloc (PROF_POINTS_MAX * sizeof (*s->x));
        s->y = malloc (PROF_POINTS_MAX * sizeof (*s->y));
        if (!s->x || !s->y) {
            errno = ENOMEM;
            return -1;
        }
    }
    if (s->n == PROF_POINTS_MAX) {
        for (size_t i = 0; i < s->n / 2; i++) {
            s->x[i] = (s->x[2 * i] + s->x[2 * i + 1]) / 2;
            s->y[i] = merge2 (s, s->y[2 * i], s->y[2 * i + 1]);
        }
        s->n /= 2;
        s->stride *= 2;
    }
    s->x[s->n] = x;
    s->y[s->n] = y;
    s->n++;
    return 0;
}

/* A mark: an incomplete value at x (a lower bound).  Beyond
 * PROF_POINTS_MAX marks, every other one is dropped.  -1 on ENOMEM. */
static int series_mark (struct prof_series *s, double x, double y)
{
    if (!s->mx) {
        s->mx = malloc (PROF_POINTS_MAX * sizeof (*s->mx));
        s->my = malloc (PROF_POINTS_MAX * sizeof (*s->my));
        if (!s->mx || !s->my) {
            errno = ENOMEM;
            return -1;
        }
    }
    if (s->nmarks == PROF_POINTS_MAX) {
        for (size_t i = 0; i < s->nmarks / 2; i++) {
            s->mx[i] = s->mx[2 * i];
            s->my[i] = fmax (s->my[2 * i], s->my[2 * i + 1]);
        }
        s->nmarks /= 2;
    }
    s->mx[s->nmarks] = x;
    s->my[s->nmarks] = y;
    s->nmarks++;
    return 0;
}

static void series_release (struct prof_series *s)
{
    free (s->x);
    free (s->y);
    free (s->mx);
    free (s->my);
    s->x = s->y = s->mx = s->my = NULL;
    s->n = s->nmarks = 0;
}

/* A legend line without a series. */
static void add_note (struct prof_chart_data *d, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
static void add_note (struct prof_chart_data *d, const char *fmt, ...)
{
    va_list ap;

    if (d->nnotes >= PROF_NOTES_MAX)
        return;
    va_start (ap, fmt);
    vsnprintf (d->note[d->nnotes], sizeof (d->note[0]), fmt, ap);
    va_end (ap);
    d->nnotes++;
}

/* ---- reading ---------------------------------------------------------- */

enum {
    MEM_RSS,
    MEM_PSS,
    MEM_CUR,
    MEM_ANON,
    MEM_FILE,
    MEM_SHMEM,
    MEM_MAX,
    MEM_SERIES
};

struct cpu_slot {
    unsigned cpu;
    bool step; /* in the header's "cpus" */
    bool have_prev;
    int64_t prev[8]; /* user nice system idle iowait irq softirq
                      * steal */
    size_t series;   /* index in d->series */
    double prev_x;   /* of prev */
};

/* pid -> index of the last bar of that pid, open addressing */
struct pidmap {
    int64_t *key;
    size_t *val;
    size_t cap, n;
};

struct rd {
    struct prof_chart_data *d;
    const char *path;
    pin_error_t *errp;
    bool nomem;
    bool have_t0, have_t;
    int64_t t0;
    uint64_t interval_ms;
    hwloc_bitmap_t step_cpus; /* from the header */
    /* cpu, first pass: the CPUs sampled */
    hwloc_bitmap_t seen_cpus;
    size_t cpu_samples, cg_cpu_samples;
    /* cpu, second pass */
    struct cpu_slot *slots;
    size_t nslots;
    struct prof_series *cg;
    int64_t cg_prev_usec;
    double cg_prev_x;
    bool cg_have_prev;
    unsigned nstep;
    bool heat;      /* more than PROF_CPU_SERIES_MAX CPUs */
    double *heat_w; /* the time covered of each cell */
    /* gantt */
    struct pidmap map;
    size_t capbars;
    bool too_many;
    double t_end;
    /* forks: event times by series */
    double *ev[4];
    size_t nev[4], capev[4];
    /* ctxsw */
    bool cs_have_prev;
    int64_t cs_prev[2];
    double cs_prev_x;
    size_t cs_samples;
    /* states, memory */
    size_t samples;
    bool mem_seen[MEM_SERIES];
    /* samples missed (sample_gap) */
    bool have_sample;
    double last_sample_x;
    /* gantt */
    const char *filter;
    uint64_t lost; /* events the recorder lost (its "end" line) */
};

static double xsec (struct rd *r, int64_t t)
{
    return ((double)t - (double)r->t0) / 1e9; /* no overflow */
}

/* The integer time "t" of a line: false if it has none. */
static bool get_t (json_object *o, int64_t *t)
{
    json_object *v;

    if (!json_object_object_get_ex (o, "t", &v)
        || !json_object_is_type (v, json_type_int))
        return false;
    *t = json_object_get_int64 (v);
    return true;
}

/* The time of a line, and the range of the recording. */
static bool line_time (struct rd *r, json_object *o, double *x)
{
    int64_t t;

    if (!get_t (o, &t))
        return false;
    if (!r->have_t0) {
        r->t0 = t;
        r->have_t0 = true;
    }
    *x = xsec (r, t);
    if (!r->have_t) {
        r->d->t_first = r->d->t_last = *x;
        r->have_t = true;
    }
    if (*x < r->d->t_first)
        r->d->t_first = *x;
    if (*x > r->d->t_last)
        r->d->t_last = *x;
    return true;
}

/* Copy a member of any scalar type as text ("" when absent). */
static void copy_text (json_object *o, const char *key, char *buf, size_t n)
{
    json_object *v;

    buf[0] = '\0';
    if (json_object_object_get_ex (o, key, &v) && v
        && !json_object_is_type (v, json_type_object)
        && !json_object_is_type (v, json_type_array))
        snprintf (buf, n, "%s", json_object_get_string (v));
}

/* A CPU list ("0-3,8") of numbers below PROF_CPUS_MAX * 16 only, so
 * that a hostile one ("0-1000000000") makes no huge bitmap. */
static bool small_cpulist (const char *s)
{
    unsigned long v = 0;
    bool digit = false;

    if (!s || strlen (s) > 4096)
        return false;
    for (; *s; s++) {
        if (*s >= '0' && *s <= '9') {
            v = v * 10 + (unsigned long)(*s - '0');
            digit = true;
            if (v >= PROF_CPUS_MAX * 16)
                return false;
        } else if (*s == ',' || *s == '-') {
            if (!digit)
                return false;
            v = 0;
            digit = false;
        } else {
            return false;
        }
    }
    return digit;
}

static void on_header (struct rd *r, json_object *o)
{
    struct prof_chart_data *d = r->d;
    json_object *v;
    int64_t iv = prof_get_int (o, "interval_ms", 0);

    if (json_object_object_get_ex (o, "t0", &v)
        && json_object_is_type (v, json_type_int)) {
        r->t0 = json_object_get_int64 (v);
        r->have_t0 = true;
    }
    r->interval_ms = iv > 0 && iv <= 86400000 ? (uint64_t)iv : 0;
    copy_text (o, "job", d->job, sizeof (d->job));
    copy_text (o, "step", d->step, sizeof (d->step));
    copy_text (o, "node", d->node, sizeof (d->node));
    copy_text (o, "policy", d->policy, sizeof (d->policy));
    copy_text (o, "cpus", d->cpus, sizeof (d->cpus));
    if (r->step_cpus && small_cpulist (prof_get_str (o, "cpus"))
        && hwloc_bitmap_list_sscanf (r->step_cpus, prof_get_str (o, "cpus"))
               == 0
        && hwloc_bitmap_weight (r->step_cpus) > 0)
        r->nstep = (unsigned)hwloc_bitmap_weight (r->step_cpus);
    else if (r->step_cpus)
        hwloc_bitmap_zero (r->step_cpus);
}

static void on_confine (struct rd *r, json_object *o, double x)
{
    struct prof_confine *c;

    if (r->d->nconfine >= PROF_CONFINE_MAX)
        return;
    c = &r->d->confine[r->d->nconfine++];
    c->t = x;
    copy_text (o, "how", c->how, sizeof (c->how));
    copy_text (o, "cpus", c->cpus, sizeof (c->cpus));
}

/* What every reader does first: the header, the time of a line, the
 * confine marks.  true: a line of time *x for the caller to read. */
static bool timed_line (struct rd *r,
                        json_object *o,
                        const char *type,
                        double *x)
{
    if (!strcmp (type, "header")) {
        on_header (r, o);
        return false;
    }
    if (!line_time (r, o, x))
        return false;
    if (!strcmp (type, "confine")) {
        on_confine (r, o, *x);
        return false;
    }
    return true;
}

/* Whether the sample at x follows the one before by more than 2.1
 * sampling intervals: the recorder missed one or more (it was late);
 * they are counted in d->gaps and the lines break there. */
static bool sample_gap (struct rd *r, double x)
{
    double iv = (double)r->interval_ms / 1e3;
    bool gap = false;

    if (r->have_sample && iv > 0 && x - r->last_sample_x > 2.1 * iv) {
        double missed = floor ((x - r->last_sample_x) / iv + 0.5) - 1;
        r->d->gaps += missed > 1 ? (size_t)fmin (missed, 1e9) : 1;
        gap = true;
    }
    r->have_sample = true;
    r->last_sample_x = x;
    return gap;
}

/* The legend's notes of a chart drawn from samples. */
static void sample_notes (struct rd *r)
{
    struct prof_chart_data *d = r->d;

    if (d->incomplete)
        add_note (d,
                  "x: RSS, PSS incomplete (%zu sample%s)",
                  d->incomplete,
                  d->incomplete > 1 ? "s" : "");
    if (d->gaps)
        add_note (d,
                  "gaps: %zu sample%s missed",
                  d->gaps,
                  d->gaps > 1 ? "s" : "");
}

/* Break every series of the chart at x (a gap). */
static int gap_all (struct prof_chart_data *d, double x)
{
    for (size_t i = 0; i < d->nseries; i++)
        if (series_push (&d->series[i], x, NAN) < 0)
            return -1;
    return 0;
}

/* The member `obj`.`key` as an integer, or dflt. */
static int64_t get_sub (json_object *o,
                        const char *obj,
                        const char *key,
                        int64_t dflt)
{
    json_object *v;

    if (!json_object_object_get_ex (o, obj, &v))
        return dflt;
    return prof_get_int (v, key, dflt);
}

/* One entry of a sample's "cpus": [cpu, user, nice, system, idle,
 * iowait, irq, softirq, steal], all non-negative.  false if not. */
static bool cpu_entry (json_object *a, unsigned *cpu, int64_t v[8])
{
    json_object *e;

    if (!json_object_is_type (a, json_type_array)
        || json_object_array_length (a) < 9)
        return false;
    for (size_t k = 0; k < 9; k++) {
        int64_t x;
        e = json_object_array_get_idx (a, k);
        if (!json_object_is_type (e, json_type_int)
            || (x = json_object_get_int64 (e)) < 0)
            return false;
        if (k == 0) {
            if (x >= PROF_CPUS_MAX * 16)
                return false;
            *cpu = (unsigned)x;
        } else {
            v[k - 1] = x;
        }
    }
    return true;
}

/* ---- cpu ---- */

static int cpu_first_pass (json_object *o, int lineno, void *arg)
{
    struct rd *r = arg;
    const char *type = prof_get_str (o, "type");
    json_object *cpus, *cg;
    double x;

    (void)lineno;
    if (!timed_line (r, o, type, &x))
        return 0;
    if (strcmp (type, "sample"))
        return 0;
    if (json_object_object_get_ex (o, "cg", &cg)
        && json_object_is_type (cg, json_type_object)
        && prof_get_int (cg, "usage_usec", -1) >= 0)
        r->cg_cpu_samples++;
    if (!json_object_object_get_ex (o, "cpus", &cpus)
        || !json_object_is_type (cpus, json_type_array))
        return 0;
    r->cpu_samples++;
    for (size_t i = 0; i < json_object_array_length (cpus); i++) {
        unsigned cpu;
        int64_t v[8];
        if (!cpu_entry (json_object_array_get_idx (cpus, i), &cpu, v)) {
            r->d->skipped++;
            continue;
        }
        if (hwloc_bitmap_isset (r->seen_cpus, cpu))
            continue;
        if (hwloc_bitmap_weight (r->seen_cpus) >= PROF_CPUS_MAX) {
            r->d->skipped++;
            continue;
        }
        if (hwloc_bitmap_set (r->seen_cpus, cpu) < 0) {
            r->nomem = true;
            return -1;
        }
    }
    return 0;
}

static struct cpu_slot *find_slot (struct rd *r, unsigned cpu)
{
    size_t lo = 0, hi = r->nslots;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (r->slots[mid].cpu == cpu)
            return &r->slots[mid];
        if (r->slots[mid].cpu < cpu)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Spread the value `val` of the interval (xa, xb] over the cells of
 * heat map row `row` it covers, weighted by the time covered. */
static void heat_add (struct rd *r,
                      size_t row,
                      double xa,
                      double xb,
                      double val)
{
    struct prof_heat *h = &r->d->heat;
    double c0 = (xa - h->x0) / h->dx, c1 = (xb - h->x0) / h->dx;

    if (!(c1 > c0) || c1 <= 0 || c0 >= (double)h->cols)
        return;
    for (size_t c = c0 > 0 ? (size_t)c0 : 0; c < h->cols && (double)c < c1;
         c++) {
        double lo = fmax (c0, (double)c), hi = fmin (c1, (double)c + 1);
        if (hi > lo) {
            h->v[row * h->cols + c] += val * (hi - lo);
            r->heat_w[row * h->cols + c] += hi - lo;
        }
    }
}

static int cpu_second_pass (json_object *o, int lineno, void *arg)
{
    struct rd *r = arg;
    struct prof_chart_data *d = r->d;
    const char *type = prof_get_str (o, "type");
    json_object *cpus, *cg;
    int64_t t;
    double x, iv = (double)r->interval_ms / 1e3;
    double sum[PROF_CPU_SERIES_MAX] = {0};
    unsigned cnt[PROF_CPU_SERIES_MAX] = {0};
    size_t ncpu_series = r->heat ? 0 : d->nseries - (r->cg ? 1 : 0);

    (void)lineno;
    if (strcmp (type, "sample") || !get_t (o, &t))
        return 0;
    x = xsec (r, t);
    if (sample_gap (r, x) && gap_all (d, x) < 0)
        goto nomem;
    if (r->cg && json_object_object_get_ex (o, "cg", &cg)) {
        int64_t u = prof_get_int (cg, "usage_usec", -1);
        if (u >= 0 && r->cg_have_prev && x > r->cg_prev_x
            && u >= r->cg_prev_usec) {
            double pct = (double)(u - r->cg_prev_usec) / 1e6
                         / (x - r->cg_prev_x) * 100.0
                         / (r->nstep ? r->nstep : 1);
            if (series_push (r->cg, x, pct) < 0)
                goto nomem;
        }
        if (u >= 0) {
            r->cg_prev_usec = u;
            r->cg_prev_x = x;
            r->cg_have_prev = true;
        }
    }
    if (!json_object_object_get_ex (o, "cpus", &cpus)
        || !json_object_is_type (cpus, json_type_array)) {
        /* a sample without per-CPU use (cpus_error): a gap */
        for (size_t g = 0; g < ncpu_series; g++)
            if (d->series[g].n && series_push (&d->series[g], x, NAN) < 0)
                goto nomem;
        return 0;
    }
    for (size_t i = 0; i < json_object_array_length (cpus); i++) {
        struct cpu_slot *s;
        unsigned cpu;
        int64_t v[8], total = 0, busy;
        bool ok = true;

        if (!cpu_entry (json_object_array_get_idx (cpus, i), &cpu, v)
            || !(s = find_slot (r, cpu)))
            continue;
        if (s->have_prev) {
            for (int k = 0; k < 8; k++) {
                if (v[k] < s->prev[k] || v[k] - s->prev[k] > INT64_MAX / 16)
                    ok = false;
                else
                    total += v[k] - s->prev[k];
            }
            busy = total - (v[3] - s->prev[3]) - (v[4] - s->prev[4]);
            if (ok && total > 0) {
                double pct = 100.0 * (double)busy / (double)total;
                if (r->heat) {
                    /* an interval over missed samples stays white */
                    if (!(iv > 0 && x - s->prev_x > 2.1 * iv))
                        heat_add (r,
                                  (size_t)(s - r->slots),
                                  s->prev_x,
                                  x,
                                  pct);
                } else {
                    sum[s->series] += pct;
                    cnt[s->series]++;
                }
            }
        }
        memcpy (s->prev, v, sizeof (s->prev));
        s->prev_x = x;
        s->have_prev = true;
    }
    for (size_t g = 0; g < ncpu_series; g++)
        if (cnt[g] && series_push (&d->series[g], x, sum[g] / cnt[g]) < 0)
            goto nomem;
    return 0;
nomem:
    r->nomem = true;
    return -1;
}

/* "CPU 3", "CPUs 0-7"; " (step)" when every one is the step's. */
static void cpu_label (struct rd *r,
                       size_t first,
                       size_t last,
                       char *buf,
                       size_t n)
{
    bool step = r->nstep > 0;

    for (size_t i = first; i <= last; i++)
        step = step && r->slots[i].step;
    if (first == last)
        snprintf (buf,
                  n,
                  "CPU %u%s",
                  r->slots[first].cpu,
                  step ? " (step)" : "");
    else
        snprintf (buf,
                  n,
                  "CPUs %u-%u%s",
                  r->slots[first].cpu,
                  r->slots[last].cpu,
                  step ? " (step)" : "");
}

/* More CPUs than lines can tell apart: a heat map, one row per CPU
 * (lowest number on top), columns of equal time.  -1 on ENOMEM. */
static int cpu_heat_init (struct rd *r)
{
    static const double bound[PROF_HEAT_LEVELS + 1] =
        {0, 10, 30, 50, 70, 90, 100.5};
    struct prof_chart_data *d = r->d;
    struct prof_heat *h = &d->heat;
    size_t cols = r->cpu_samples > 2 ? r->cpu_samples - 1 : 1;

    if (cols > PROF_HEAT_COLS_MAX)
        cols = PROF_HEAT_COLS_MAX;
    if (cols > PROF_HEAT_CELLS_MAX / r->nslots)
        cols = PROF_HEAT_CELLS_MAX / r->nslots;
    if (cols < 1)
        cols = 1;
    r->heat = true;
    h->rows = r->nslots;
    h->cols = cols;
    h->x0 = d->t_first;
    h->dx =
        d->t_last > d->t_first ? (d->t_last - d->t_first) / (double)cols : 1;
    h->what = "CPU use";
    if (!(h->v = calloc (h->rows * cols, sizeof (*h->v)))
        || !(r->heat_w = calloc (h->rows * cols, sizeof (*r->heat_w)))
        || !(h->label = calloc (h->rows, sizeof (*h->label))))
        return -1;
    for (size_t k = 0; k < r->nslots; k++)
        snprintf (h->label[k], sizeof (h->label[k]), "%u", r->slots[k].cpu);
    memcpy (h->bound, bound, sizeof (bound));
    for (int k = 0; k < PROF_HEAT_LEVELS; k++)
        snprintf (h->level[k],
                  sizeof (h->level[k]),
                  "%g-%g %% busy",
                  bound[k],
                  k == PROF_HEAT_LEVELS - 1 ? 100 : bound[k + 1]);
    return 0;
}

static int read_cpu (struct rd *r, pin_error_t *errp)
{
    struct prof_chart_data *d = r->d;
    int id, ncpus;
    size_t i = 0;

    if (!(r->seen_cpus = hwloc_bitmap_alloc ()))
        goto nomem;
    if (prof_read (r->path, cpu_first_pass, r, errp) < 0)
        return r->nomem ? (errno = ENOMEM, errprintf (errp, "out of memory"))
                        : -1;
    ncpus = hwloc_bitmap_weight (r->seen_cpus);
    if ((r->cpu_samples < 2 || ncpus <= 0) && r->cg_cpu_samples < 2) {
        errno = ENODATA;
        return errprintf (errp,
                          "%s: fewer than 2 samples of per-CPU use "
                          "(\"cpus\" in sample lines; recorded with "
                          "--interval 0?): nothing to draw for --kind cpu",
                          r->path);
    }
    if (ncpus > 0) {
        if (!(r->slots = calloc ((size_t)ncpus, sizeof (*r->slots))))
            goto nomem;
        hwloc_bitmap_foreach_begin (id, r->seen_cpus)
        {
            r->slots[i].cpu = (unsigned)id;
            r->slots[i].step =
                r->nstep && hwloc_bitmap_isset (r->step_cpus, (unsigned)id);
            i++;
        }
        hwloc_bitmap_foreach_end ();
        r->nslots = i;
        if (r->nslots > PROF_CPU_SERIES_MAX) {
            if (cpu_heat_init (r) < 0)
                goto nomem;
        } else {
            for (size_t k = 0; k < r->nslots; k++) {
                char label[PROF_LABEL];
                cpu_label (r, k, k, label, sizeof (label));
                r->slots[k].series = d->nseries;
                series_add (d, label, (unsigned)d->nseries, 0, false);
            }
        }
    }
    if (r->cg_cpu_samples >= 2) {
        char label[PROF_LABEL];
        if (r->nstep)
            snprintf (label,
                      sizeof (label),
                      "step cgroup, %% of %u CPU%s",
                      r->nstep,
                      r->nstep > 1 ? "s" : "");
        else
            snprintf (label, sizeof (label), "step cgroup, %% of 1 CPU");
        r->cg = series_add (d, label, (unsigned)d->nseries, 0, false);
    }
    d->ylabel = r->heat ? "CPU" : "CPU use (%)";
    if (r->heat) {
        d->npanels = r->cg ? 2 : 1;
        d->panel_label[0] = "CPU";
        d->panel_label[1] = "step cgroup (%)";
        if (r->cg)
            r->cg->panel = 1;
    }
    if (prof_read (r->path, cpu_second_pass, r, errp) < 0)
        return r->nomem ? (errno = ENOMEM, errprintf (errp, "out of memory"))
                        : -1;
    if (r->heat) {
        struct prof_heat *h = &d->heat;
        for (size_t c = 0; c < h->rows * h->cols; c++)
            h->v[c] = r->heat_w[c] > 1e-9 ? h->v[c] / r->heat_w[c] : NAN;
        add_note (d, "white: no sample");
    }
    sample_notes (r);
    return 0;
nomem:
    errno = ENOMEM;
    return errprintf (errp, "out of memory");
}

/* ---- gantt ---- */

static size_t hash64 (int64_t k, size_t cap)
{
    uint64_t h = (uint64_t)k * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 17) & (cap - 1);
}

static size_t *pidmap_slot (struct pidmap *m, int64_t pid, bool insert)
{
    size_t i;

    if (insert && (m->n + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 1024;
        int64_t *key = malloc (cap * sizeof (*key));
        size_t *val = malloc (cap * sizeof (*val));
        if (!key || !val) {
            free (key);
            free (val);
            return NULL;
        }
        for (size_t j = 0; j < cap; j++)
            val[j] = SIZE_MAX;
        for (size_t j = 0; j < m->cap; j++) {
            if (m->val[j] == SIZE_MAX)
                continue;
            i = hash64 (m->key[j], cap);
            while (val[i] != SIZE_MAX)
                i = (i + 1) & (cap - 1);
            key[i] = m->key[j];
            val[i] = m->val[j];
        }
        free (m->key);
        free (m->val);
        m->key = key;
        m->val = val;
        m->cap = cap;
    }
    if (!m->cap)
        return NULL;
    i = hash64 (pid, m->cap);
    while (m->val[i] != SIZE_MAX) {
        if (m->key[i] == pid)
            return &m->val[i];
        i = (i + 1) & (m->cap - 1);
    }
    if (!insert)
        return NULL;
    m->key[i] = pid;
    m->n++;
    return &m->val[i];
}

static struct prof_bar *bar_of (struct rd *r, int64_t pid)
{
    size_t *v = pidmap_slot (&r->map, pid, false);
    return v ? &r->d->bars[*v] : NULL;
}

static void set_comm (struct prof_bar *b, const char *comm, bool final)
{
    if (!comm || b->comm_final)
        return;
    snprintf (b->comm, sizeof (b->comm), "%s", comm);
    b->comm_final = final;
}

static int bar_new (struct rd *r, int64_t pid, double start, const char *comm)
{
    struct prof_chart_data *d = r->d;
    struct prof_bar *b;
    size_t *v;

    if (d->nbars == PROF_BARS_MAX) {
        r->too_many = true;
        errno = E2BIG;
        return -1;
    }
    if (d->nbars == r->capbars) {
        size_t cap = r->capbars ? r->capbars * 2 : 1024;
        if (cap > PROF_BARS_MAX)
            cap = PROF_BARS_MAX;
        b = realloc (d->bars, cap * sizeof (*b));
        if (!b)
            goto nomem;
        d->bars = b;
        r->capbars = cap;
    }
    if (!(v = pidmap_slot (&r->map, pid, true)))
        goto nomem;
    b = &d->bars[d->nbars];
    memset (b, 0, sizeof (*b));
    b->pid = pid;
    b->start = b->end = start;
    b->open = true;
    set_comm (b, comm ? comm : "?", false);
    *v = d->nbars++;
    return 0;
nomem:
    errno = ENOMEM;
    return -1;
}

/* The recorder's "end" line: the events it lost (doc/profiling.md). */
static void end_line (struct rd *r, json_object *o)
{
    static const char *const keys[] = {"lost_seq", "enobufs", "socket_drops"};

    r->lost = 0;
    for (size_t k = 0; k < sizeof (keys) / sizeof (keys[0]); k++) {
        int64_t v = prof_get_int (o, keys[k], 0);
        if (v > 0 && (uint64_t)v < UINT64_MAX / 4)
            r->lost += (uint64_t)v;
    }
}

static int gantt_line (json_object *o, int lineno, void *arg)
{
    struct rd *r = arg;
    const char *type = prof_get_str (o, "type");
    struct prof_bar *b;
    json_object *th;
    int64_t pid, tgid;
    bool thread;
    double x;

    (void)lineno;
    if (!strcmp (type, "header")) {
        on_header (r, o);
        return 0;
    }
    if (!strcmp (type, "end"))
        end_line (r, o);
    pid = prof_get_int (o, "pid", -1);
    tgid = prof_get_int (o, "tgid", pid);
    if (!strcmp (type, "task")) {
        /* taskstats: the real command, even of a 1 ms process; of the
         * process that started at "start" (the record may come after
         * the pid's next holder in the step began) */
        int64_t st = prof_get_int (o, "start", -1);
        if (pid < 0 || pid != tgid || !(b = bar_of (r, pid)))
            return 0;
        if (st >= 0 && b->start != xsec (r, st)) {
            double xs = xsec (r, st);
            b = NULL;
            for (size_t i = r->d->nbars; i-- > 0;)
                if (r->d->bars[i].pid == pid && r->d->bars[i].start == xs) {
                    b = &r->d->bars[i];
                    break;
                }
        }
        if (b)
            set_comm (b, prof_get_str (o, "comm"), true);
        return 0;
    }
    if (!line_time (r, o, &x))
        return 0;
    if (!strcmp (type, "confine")) {
        on_confine (r, o, x);
        return 0;
    }
    if (pid < 0)
        return 0;
    thread = json_object_object_get_ex (o, "thread", &th)
             && json_object_get_boolean (th);
    if (!strcmp (type, "root") || (!strcmp (type, "fork") && !thread)) {
        if ((b = bar_of (r, pid)) && b->open) {
            b->end = x; /* a reused pid: its exit was lost */
            b->open = false;
        }
        if (bar_new (r, pid, x, prof_get_str (o, "comm")) < 0)
            goto fail;
        return 0;
    }
    if (!strcmp (type, "exec") || !strcmp (type, "comm")) {
        /* an exec makes its thread the leader: the process is tgid */
        if ((type[1] == 'x' || pid == tgid) && (b = bar_of (r, tgid))
            && b->open)
            set_comm (b, prof_get_str (o, "comm"), false);
        return 0;
    }
    if (!strcmp (type, "exit") && !thread) {
        if (!(b = bar_of (r, pid)) || !b->open) {
            /* its fork line was lost: the exit says when it started */
            int64_t start = prof_get_int (o, "start", -1);
            double xs = start >= 0 ? xsec (r, start) : x;
            if (bar_new (r, pid, xs <= x ? xs : x, NULL) < 0)
                goto fail;
            b = &r->d->bars[r->d->nbars - 1];
        }
        b->end = x;
        b->open = false;
        set_comm (b, prof_get_str (o, "comm"), false);
    }
    return 0;
fail:
    if (errno == ENOMEM)
        r->nomem = true;
    return -1;
}

static int by_start (const void *x, const void *y)
{
    const struct prof_bar *a = x, *b = y;

    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return a->pid < b->pid ? -1 : a->pid > b->pid;
}

struct cmd_count {
    const char *comm;
    uint64_t n;
};

static int by_count (const void *x, const void *y)
{
    const struct cmd_count *a = x, *b = y;

    if (a->n != b->n)
        return a->n < b->n ? 1 : -1;
    return strcmp (a->comm, b->comm);
}

static int by_comm (const void *x, const void *y)
{
    return strcmp ((*(const struct prof_bar *const *)x)->comm,
                   (*(const struct prof_bar *const *)y)->comm);
}

/* Many processes: one lane per command (the commands of c[], most
 * processes first; beyond PROF_LANES_MAX, the last lane is the other
 * commands'), shaded by the processes of that command running in each
 * interval of time.  -1 on ENOMEM. */
static int gantt_lanes (struct prof_chart_data *d,
                        const struct cmd_count *c,
                        size_t nc)
{
    struct prof_heat *h = &d->heat;
    size_t rows = nc <= PROF_LANES_MAX ? nc : PROF_LANES_MAX;
    size_t cols = PROF_HEAT_COLS_MAX;
    double lo = d->t_first < 0 ? d->t_first : 0, maxv = 0, step;
    int64_t *diff;

    h->rows = rows;
    h->cols = cols;
    h->x0 = lo;
    h->dx = d->t_last > lo ? (d->t_last - lo) / (double)cols : 1.0 / cols;
    h->what = "processes";
    if (!(h->v = calloc (rows * cols, sizeof (*h->v)))
        || !(h->label = calloc (rows, sizeof (*h->label)))
        || !(diff = calloc (rows * (cols + 1), sizeof (*diff)))) {
        errno = ENOMEM;
        return -1;
    }
    for (size_t k = 0; k < rows; k++) {
        if (k == rows - 1 && nc > rows) {
            uint64_t n = 0;
            for (size_t j = k; j < nc; j++)
                n += c[j].n;
            snprintf (h->label[k],
                      sizeof (h->label[k]),
                      "%zu others (%llu)",
                      nc - k,
                      (unsigned long long)n);
        } else {
            snprintf (h->label[k],
                      sizeof (h->label[k]),
                      "%.16s (%llu)",
                      c[k].comm,
                      (unsigned long long)c[k].n);
        }
    }
    for (size_t i = 0; i < d->nbars; i++) {
        const struct prof_bar *b = &d->bars[i];
        size_t lane = rows - 1, c0, c1;
        double f0 = (b->start - lo) / h->dx, f1 = (b->end - lo) / h->dx;
        for (size_t k = 0; k < rows; k++)
            if (!strcmp (b->comm, c[k].comm)) {
                lane = k;
                break;
            }
        c0 = f0 > 0 ? (size_t)fmin (f0, (double)cols - 1) : 0;
        c1 = f1 > 0 ? (size_t)fmin (f1, (double)cols - 1) : 0;
        if (c1 < c0)
            c1 = c0;
        diff[lane * (cols + 1) + c0]++;
        diff[lane * (cols + 1) + c1 + 1]--;
    }
    for (size_t k = 0; k < rows; k++) {
        int64_t run = 0;
        for (size_t j = 0; j < cols; j++) {
            run += diff[k * (cols + 1) + j];
            h->v[k * cols + j] = (double)run;
            maxv = fmax (maxv, (double)run);
        }
    }
    free (diff);
    /* shades of equal width in processes, the lightest from 1 on; no
     * process: not drawn */
    step = ceil (maxv / PROF_HEAT_LEVELS);
    if (step < 1)
        step = 1;
    for (int k = 0; k <= PROF_HEAT_LEVELS; k++)
        h->bound[k] = (double)k * step + 0.5;
    for (int k = 0; k < PROF_HEAT_LEVELS; k++) {
        if (step == 1)
            snprintf (h->level[k], sizeof (h->level[k]), "%d running", k + 1);
        else
            snprintf (h->level[k],
                      sizeof (h->level[k]),
                      "%.0f-%.0f running",
                      (double)k * step + 1,
                      (double)(k + 1) * step);
    }
    return 0;
}

/* The commands with the most processes get colours 0..; the others
 * share PROF_CMDS_COLOURED ("other").  With `lanes`, the lanes too. */
static int gantt_colours (struct prof_chart_data *d, bool lanes)
{
    struct prof_bar **p = malloc (d->nbars * sizeof (*p));
    struct cmd_count *c = malloc (d->nbars * sizeof (*c));
    size_t nc = 0;

    if (!p || !c) {
        free (p);
        free (c);
        errno = ENOMEM;
        return -1;
    }
    for (size_t i = 0; i < d->nbars; i++)
        p[i] = &d->bars[i];
    qsort (p, d->nbars, sizeof (*p), by_comm);
    for (size_t i = 0; i < d->nbars; i++) {
        if (nc == 0 || strcmp (c[nc - 1].comm, p[i]->comm)) {
            c[nc].comm = p[i]->comm;
            c[nc++].n = 0;
        }
        c[nc - 1].n++;
    }
    qsort (c, nc, sizeof (*c), by_count);
    d->other_procs = 0;
    d->ncmds = nc < PROF_CMDS_COLOURED ? nc : PROF_CMDS_COLOURED;
    for (size_t i = 0; i < d->ncmds; i++) {
        snprintf (d->cmds[i], sizeof (d->cmds[i]), "%s", c[i].comm);
        d->cmd_procs[i] = c[i].n;
    }
    d->other_cmds = nc - d->ncmds;
    for (size_t i = d->ncmds; i < nc; i++)
        d->other_procs += c[i].n;
    for (size_t i = 0; i < d->nbars; i++) {
        struct prof_bar *b = &d->bars[i];
        b->cmd = (unsigned)d->ncmds;
        for (size_t k = 0; k < d->ncmds; k++)
            if (!strcmp (b->comm, d->cmds[k]))
                b->cmd = (unsigned)k;
    }
    if (lanes && gantt_lanes (d, c, nc) < 0) {
        free (p);
        free (c);
        return -1;
    }
    free (p);
    free (c);
    return 0;
}

static int read_gantt (struct rd *r, pin_error_t *errp)
{
    struct prof_chart_data *d = r->d;

    if (prof_read (r->path, gantt_line, r, errp) < 0) {
        if (r->nomem)
            goto nomem;
        if (r->too_many) {
            errno = E2BIG;
            return errprintf (errp,
                              "%s: more than %d processes: too many "
                              "for one Gantt chart",
                              r->path,
                              PROF_BARS_MAX);
        }
        return -1;
    }
    if (d->nbars == 0) {
        errno = ENODATA;
        return errprintf (errp,
                          "%s: no process (no root, fork or exit "
                          "line): nothing to draw for --kind gantt",
                          r->path);
    }
    for (size_t i = 0; i < d->nbars; i++)
        if (d->bars[i].open)
            d->bars[i].end = d->t_last; /* still running at the end */
    if (r->filter) {
        size_t kept = 0;
        for (size_t i = 0; i < d->nbars; i++)
            if (!strcmp (d->bars[i].comm, r->filter))
                d->bars[kept++] = d->bars[i];
        if (kept == 0) {
            char list[256] = "";
            size_t off = 0;
            if (gantt_colours (d, false) < 0)
                goto nomem;
            for (size_t k = 0; k < d->ncmds; k++) {
                int n = snprintf (list + off,
                                  sizeof (list) - off,
                                  "%s%s (%llu)",
                                  k ? ", " : "",
                                  d->cmds[k],
                                  (unsigned long long)d->cmd_procs[k]);
                if (n > 0 && (size_t)n < sizeof (list) - off)
                    off += (size_t)n;
            }
            errno = ENODATA;
            return errprintf (errp,
                              "--filter=%.32s: no process of that command "
                              "in %s; its commands: %s%s",
                              r->filter,
                              r->path,
                              list,
                              d->other_cmds ? ", ..." : "");
        }
        d->nbars = kept;
    }
    qsort (d->bars, d->nbars, sizeof (*d->bars), by_start);
    if (gantt_colours (d, d->nbars > PROF_GANTT_GROUP_MIN) < 0)
        goto nomem;
    if (d->heat.rows) {
        d->ylabel = "processes of each command";
        add_note (d, "white: none running");
    } else {
        d->ylabel = "processes, in order of start";
    }
    if (r->lost)
        add_note (d,
                  "%llu events lost: processes missing",
                  (unsigned long long)r->lost);
    return 0;
nomem:
    errno = ENOMEM;
    return errprintf (errp, "out of memory");
}

/* ---- forks ---- */

enum { EV_FORK, EV_THREAD, EV_EXEC, EV_EXIT };

static int forks_line (json_object *o, int lineno, void *arg)
{
    struct rd *r = arg;
    const char *type = prof_get_str (o, "type");
    json_object *th;
    bool thread;
    int ev;
    double x;

    (void)lineno;
    if (!strcmp (type, "end"))
        end_line (r, o);
    if (!timed_line (r, o, type, &x))
        return 0;
    thread = json_object_object_get_ex (o, "thread", &th)
             && json_object_get_boolean (th);
    if (!strcmp (type, "fork"))
        ev = thread ? EV_THREAD : EV_FORK;
    else if (!strcmp (type, "exec"))
        ev = EV_EXEC;
    else if (!strcmp (type, "exit") && !thread)
        ev = EV_EXIT;
    else
        return 0;
    if (r->nev[ev] == r->capev[ev]) {
        size_t cap = r->capev[ev] ? r->capev[ev] * 2 : 1024;
        double *p = realloc (r->ev[ev], cap * sizeof (*p));
        if (!p) {
            r->nomem = true;
            return -1;
        }
        r->ev[ev] = p;
        r->capev[ev] = cap;
    }
    r->ev[ev][r->nev[ev]++] = x;
    return 0;
}

static int read_forks (struct rd *r, pin_error_t *errp)
{
    static const char *const labels[4] = {
        "process forks",
        "thread creations",
        "execs",
        "process exits",
    };
    struct prof_chart_data *d = r->d;
    double lo, bin, span;
    size_t nbins;

    if (prof_read (r->path, forks_line, r, errp) < 0)
        return r->nomem ? (errno = ENOMEM, errprintf (errp, "out of memory"))
                        : -1;
    if (r->nev[0] + r->nev[1] + r->nev[2] + r->nev[3] == 0) {
        errno = ENODATA;
        return errprintf (errp,
                          "%s: no fork, exec or exit line: nothing "
                          "to draw for --kind forks",
                          r->path);
    }
    /* bins of the sampling interval (1 s without samples), at least
     * 10 ms, widened to stay within PROF_BINS_MAX */
    bin = r->interval_ms ? (double)r->interval_ms / 1e3 : 1.0;
    if (bin < 0.01)
        bin = 0.01;
    lo = d->t_first < 0 ? d->t_first : 0;
    span = d->t_last - lo;
    if (span / bin > PROF_BINS_MAX - 1)
        bin = span / (PROF_BINS_MAX - 1);
    nbins = (size_t)(span / bin) + 1;
    if (nbins > PROF_BINS_MAX)
        nbins = PROF_BINS_MAX;
    d->steps = true;
    d->bin_s = bin;
    d->ylabel = "events per second";
    for (int k = 0; k < 4; k++) {
        struct prof_series *s =
            series_add (d, labels[k], (unsigned)k, 0, false);
        uint64_t *count = calloc (nbins, sizeof (*count));
        if (!count)
            goto nomem;
        for (size_t i = 0; i < r->nev[k]; i++) {
            size_t b = (size_t)((r->ev[k][i] - lo) / bin);
            count[b < nbins ? b : nbins - 1]++;
        }
        for (size_t b = 0; b < nbins; b++) {
            if (series_push (s,
                             lo + ((double)b + 0.5) * bin,
                             (double)count[b] / bin)
                < 0) {
                free (count);
                goto nomem;
            }
        }
        free (count);
    }
    if (r->lost)
        add_note (d,
                  "%llu events lost: rates too low",
                  (unsigned long long)r->lost);
    return 0;
nomem:
    errno = ENOMEM;
    return errprintf (errp, "out of memory");
}

/* ---- ctxsw, states, memory: from the samples ---- */

/* What each line of the memory chart is (doc/profiling-guide.md says
 * more): short, they are the legend. */
static const char *const mem_labels[MEM_SERIES] = {
    "RSS summed over processes",
    "PSS summed over processes",
    "cgroup memory.current",
    "cgroup anon",
    "cgroup file (page cache)",
    "cgroup shmem",
    "cgroup memory.max (limit)",
};

static int sample_line (json_object *o, int lineno, void *arg)
{
    struct rd *r = arg;
    struct prof_chart_data *d = r->d;
    const char *type = prof_get_str (o, "type");
    double x;

    (void)lineno;
    if (!timed_line (r, o, type, &x))
        return 0;
    if (strcmp (type, "sample"))
        return 0;
    r->samples++;
    if (sample_gap (r, x) && gap_all (d, x) < 0)
        goto nomem;
    if (d->kind == PROF_CHART_CTXSW) {
        int64_t v[2] = {prof_get_int (o, "nvcsw", -1),
                        prof_get_int (o, "nivcsw", -1)};
        if (v[0] < 0 || v[1] < 0) {
            /* a sample without the counts: a gap, not a rate of 0 */
            if (r->cs_have_prev && gap_all (d, x) < 0)
                goto nomem;
            r->cs_have_prev = false;
            return 0;
        }
        r->cs_samples++;
        if (r->cs_have_prev && x > r->cs_prev_x) {
            for (int k = 0; k < 2; k++) {
                /* the sums are over live tasks: an ended task's switches
                 * leave them, which is not a negative rate */
                double dv = v[k] > r->cs_prev[k]
                                ? (double)(v[k] - r->cs_prev[k])
                                : 0.0;
                if (series_push (&d->series[k], x, dv / (x - r->cs_prev_x))
                    < 0)
                    goto nomem;
            }
        }
        r->cs_prev[0] = v[0];
        r->cs_prev[1] = v[1];
        r->cs_prev_x = x;
        r->cs_have_prev = true;
        return 0;
    }
    if (d->kind == PROF_CHART_STATES) {
        static const char *const st[4] = {"R", "S", "D", "Z"};
        static const char *const obj[2] = {"procs", "threads"};
        json_object *v;
        for (int p = 0; p < 2; p++) {
            int64_t all = 0, n;
            if (!json_object_object_get_ex (o, obj[p], &v)
                || !json_object_is_type (v, json_type_object)) {
                /* not sampled: a gap in this panel's lines */
                for (int k = 0; k < 5; k++)
                    if (d->series[p * 5 + k].n
                        && series_push (&d->series[p * 5 + k], x, NAN) < 0)
                        goto nomem;
                continue;
            }
            for (int k = 0; k < 4; k++) {
                n = get_sub (o, obj[p], st[k], 0);
                n = n > 0 ? n : 0;
                all += n;
                if (series_push (&d->series[p * 5 + k], x, (double)n) < 0)
                    goto nomem;
            }
            n = get_sub (o, obj[p], "other", 0);
            all += n > 0 ? n : 0;
            if (series_push (&d->series[p * 5 + 4], x, (double)all) < 0)
                goto nomem;
        }
        return 0;
    }
    if (d->kind == PROF_CHART_MEMORY) {
        static const char *const cgk[] = {"memory_current",
                                          "anon",
                                          "file",
                                          "shmem",
                                          "memory_max"};
        int64_t v[MEM_SERIES];
        /* smaps_rollup reads skipped for time: RSS and PSS cover only
         * the processes read, a lower bound, drawn as a mark, not as a
         * point of the line */
        bool partial = prof_get_int (o, "smaps_skipped", 0) > 0
                       || prof_get_int (o, "smaps_failed", 0) > 0;
        v[MEM_RSS] = prof_get_int (o, "rss_kb", -1);
        v[MEM_PSS] = prof_get_int (o, "pss_kb", -1);
        for (int k = 0; k < 5; k++)
            v[MEM_CUR + k] = get_sub (o, "cg", cgk[k], -1);
        if (partial && (v[MEM_RSS] >= 0 || v[MEM_PSS] >= 0))
            d->incomplete++;
        for (int k = 0; k < MEM_SERIES; k++) {
            double mib;
            if (v[k] < 0) {
                /* absent in this sample: a gap */
                if (series_push (&d->series[k], x, NAN) < 0)
                    goto nomem;
                continue;
            }
            mib = k < 2 ? (double)v[k] / 1024 : (double)v[k] / 1048576;
            r->mem_seen[k] = true;
            if (k < 2 && partial) {
                if (series_push (&d->series[k], x, NAN) < 0
                    || series_mark (&d->series[k], x, mib) < 0)
                    goto nomem;
            } else if (series_push (&d->series[k], x, mib) < 0)
                goto nomem;
        }
    }
    return 0;
nomem:
    r->nomem = true;
    return -1;
}

static int read_samples (struct rd *r, pin_error_t *errp)
{
    static const char *const st_labels[5] = {
        "R (running)",
        "S (sleeping)",
        "D (uninterruptible)",
        "Z (zombie)",
        "all",
    };
    struct prof_chart_data *d = r->d;

    if (d->kind == PROF_CHART_CTXSW) {
        series_add (d, "voluntary", 0, 0, false);
        series_add (d, "involuntary", 1, 0, false);
        d->ylabel = "context switches per second";
    } else if (d->kind == PROF_CHART_STATES) {
        for (unsigned p = 0; p < 2; p++)
            for (unsigned k = 0; k < 5; k++)
                series_add (d, st_labels[k], k, p, false)->total = k == 4;
        d->npanels = 2;
        d->panel_label[0] = "processes";
        d->panel_label[1] = "threads";
        d->ylabel = "tasks by state";
    } else {
        for (unsigned k = 0; k < MEM_SERIES; k++) {
            struct prof_series *s = series_add (d, mem_labels[k], k, 0, true);
            s->total = k == MEM_RSS || k == MEM_CUR;
            s->limit = k == MEM_MAX;
        }
        d->ylabel = "memory (MiB)";
    }
    if (prof_read (r->path, sample_line, r, errp) < 0)
        return r->nomem ? (errno = ENOMEM, errprintf (errp, "out of memory"))
                        : -1;
    if (d->kind == PROF_CHART_CTXSW && r->cs_samples < 2) {
        errno = ENODATA;
        return errprintf (errp,
                          "%s: fewer than 2 samples with context "
                          "switch counts (recorded with --interval 0?): "
                          "nothing to draw for --kind ctxsw",
                          r->path);
    }
    if (d->kind == PROF_CHART_STATES && d->series[4].n + d->series[9].n == 0) {
        errno = ENODATA;
        return errprintf (errp,
                          "%s: no samples of process states "
                          "(recorded with --interval 0?): nothing to draw "
                          "for --kind states",
                          r->path);
    }
    if (d->kind == PROF_CHART_MEMORY) {
        size_t kept = 0;
        for (size_t k = 0; k < MEM_SERIES; k++) {
            if (!r->mem_seen[k]) {
                series_release (&d->series[k]);
                continue;
            }
            d->series[kept] = d->series[k];
            d->series[kept].colour = (unsigned)kept;
            kept++;
        }
        d->nseries = kept;
        if (kept == 0) {
            errno = ENODATA;
            return errprintf (errp,
                              "%s: no samples of memory (no rss_kb, "
                              "pss_kb or cgroup memory: recorded with "
                              "--no-pss or --interval 0?): nothing to draw "
                              "for --kind memory",
                              r->path);
        }
        /* the step cgroup's line is missing: say so, and why */
        if (!r->mem_seen[MEM_CUR])
            add_note (d, "no step cgroup memory in this profile");
        else if (!r->mem_seen[MEM_MAX])
            add_note (d, "no memory limit (memory.max)");
    }
    sample_notes (r);
    return 0;
}

int prof_chart_read (const char *path,
                     enum prof_chart kind,
                     struct prof_chart_data *d,
                     pin_error_t *errp)
{
    return prof_chart_read_filter (path, kind, NULL, d, errp);
}

int prof_chart_read_filter (const char *path,
                            enum prof_chart kind,
                            const char *filter,
                            struct prof_chart_data *d,
                            pin_error_t *errp)
{
    struct rd r = {.d = d, .path = path, .errp = errp, .filter = filter};
    int rc;

    memset (d, 0, sizeof (*d));
    d->kind = kind;
    d->npanels = 1;
    if ((unsigned)kind >= PROF_CHART_COUNT) {
        errno = EINVAL;
        return errprintf (errp, "unknown kind of chart %d", (int)kind);
    }
    if (!(r.step_cpus = hwloc_bitmap_alloc ())) {
        errno = ENOMEM;
        return errprintf (errp, "out of memory");
    }
    switch (kind) {
        case PROF_CHART_CPU:
            rc = read_cpu (&r, errp);
            break;
        case PROF_CHART_GANTT:
            rc = read_gantt (&r, errp);
            break;
        case PROF_CHART_FORKS:
            rc = read_forks (&r, errp);
            break;
        default:
            rc = read_samples (&r, errp);
            break;
    }
    {
        int saved = errno;
        hwloc_bitmap_free (r.step_cpus);
        hwloc_bitmap_free (r.seen_cpus);
        free (r.slots);
        free (r.heat_w);
        free (r.map.key);
        free (r.map.val);
        for (int k = 0; k < 4; k++)
            free (r.ev[k]);
        errno = saved;
    }
    return rc;
}

void prof_chart_free (struct prof_chart_data *d)
{
    int saved = errno;

    if (d) {
        for (size_t i = 0; i < d->nseries; i++)
            series_release (&d->series[i]);
        d->nseries = 0;
        free (d->heat.v);
        free (d->heat.label);
        d->heat.v = NULL;
        d->heat.label = NULL;
        d->heat.rows = 0;
        free (d->bars);
        d->bars = NULL;
        d->nbars = 0;
    }
    errno = saved;
}
