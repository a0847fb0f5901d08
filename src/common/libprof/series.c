/* series.c - what `slurm-pin plot` draws, read from a profile */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <hwloc.h>
#include <json-c/json.h>
#include <math.h>
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
    "io",
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

/* Append a point; beyond PROF_POINTS_MAX points, halve the series (each
 * two neighbours merged: mean time, mean or max value) and merge the
 * points to come `stride` at a time.  -1 on ENOMEM. */
static int series_push (struct prof_series *s, double x, double y)
{
    if (s->stride > 1) {
        s->acc_x += x;
        s->acc_y = s->acc_n == 0 ? y
                   : s->max      ? fmax (s->acc_y, y)
                                 : s->acc_y + y;
        if (++s->acc_n < s->stride)
            return 0;
        x = s->acc_x / (double)s->acc_n;
        y = s->max ? s->acc_y : s->acc_y / (double)s->acc_n;
        s->acc_n = 0;
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
            s->y[i] = s->max ? fmax (s->y[2 * i], s->y[2 * i + 1])
                             : (s->y[2 * i] + s->y[2 * i + 1]) / 2;
        }
        s->n /= 2;
        s->stride *= 2;
    }
    s->x[s->n] = x;
    s->y[s->n] = y;
    s->n++;
    return 0;
}

/* ---- reading ---------------------------------------------------------- */

struct cpu_slot {
    unsigned cpu;
    bool step; /* in the header's "cpus" */
    bool have_prev;
    int64_t prev[8]; /* user nice system idle iowait irq softirq
                      * steal */
    size_t series;   /* index in d->series */
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
    size_t per_group;
    struct prof_series *cg;
    int64_t cg_prev_usec;
    double cg_prev_x;
    bool cg_have_prev;
    unsigned nstep;
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
    /* io: read, write bytes and operations of the step cgroup */
    bool io_have_prev;
    int64_t io_prev[4];
    double io_prev_x;
    size_t io_samples;
    /* states, memory */
    size_t samples;
    bool mem_seen[6];
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
        if (json_object_object_get_ex (o, "unix_t0", &v)
            && (json_object_is_type (v, json_type_double)
                || json_object_is_type (v, json_type_int)))
            d->unix_t0 = json_object_get_double (v);
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

static int cpu_second_pass (json_object *o, int lineno, void *arg)
{
    struct rd *r = arg;
    struct prof_chart_data *d = r->d;
    const char *type = prof_get_str (o, "type");
    json_object *cpus, *cg;
    int64_t t;
    double x;
    double sum[PROF_CPU_SERIES_MAX] = {0};
    unsigned cnt[PROF_CPU_SERIES_MAX] = {0};

    (void)lineno;
    if (strcmp (type, "sample") || !get_t (o, &t))
        return 0;
    x = xsec (r, t);
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
        || !json_object_is_type (cpus, json_type_array))
        return 0;
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
                size_t g = s->series;
                sum[g] += 100.0 * (double)busy / (double)total;
                cnt[g]++;
            }
        }
        memcpy (s->prev, v, sizeof (s->prev));
        s->have_prev = true;
    }
    for (size_t g = 0; g < PROF_CPU_SERIES_MAX && g < d->nseries; g++)
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
        r->per_group =
            (r->nslots + PROF_CPU_SERIES_MAX - 1) / PROF_CPU_SERIES_MAX;
        for (size_t first = 0; first < r->nslots; first += r->per_group) {
            size_t last = first + r->per_group - 1;
            char label[PROF_LABEL];
            if (last >= r->nslots)
                last = r->nslots - 1;
            cpu_label (r, first, last, label, sizeof (label));
            for (size_t k = first; k <= last; k++)
                r->slots[k].series = d->nseries;
            series_add (d, label, (unsigned)d->nseries, 0, false);
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
    d->ylabel = "CPU use (%)";
    if (prof_read (r->path, cpu_second_pass, r, errp) < 0)
        return r->nomem ? (errno = ENOMEM, errprintf (errp, "out of memory"))
                        : -1;
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

/* The commands with the most processes get colours 0..; the others
 * share PROF_CMDS_COLOURED ("other"). */
static int gantt_colours (struct prof_chart_data *d)
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
    qsort (d->bars, d->nbars, sizeof (*d->bars), by_start);
    if (gantt_colours (d) < 0)
        goto nomem;
    d->ylabel = "processes, in order of start";
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
    return 0;
nomem:
    errno = ENOMEM;
    return errprintf (errp, "out of memory");
}

/* ---- ctxsw, states, memory: from the samples ---- */

static const char *const mem_labels[6] = {
    "summed RSS",
    "PSS",
    "cgroup memory.current",
    "cgroup anon",
    "cgroup file",
    "cgroup shmem",
};

/* io: rates between samples of the step cgroup's io.stat sums; a sample
 * without them (no io controller) is no point, not a zero. */
static int io_sample (struct rd *r, json_object *o, double x)
{
    static const char *const k[4] = {"io_rbytes",
                                      "io_wbytes",
                                      "io_rios",
                                      "io_wios"};
    int64_t v[4];

    for (int i = 0; i < 4; i++)
        if ((v[i] = get_sub (o, "cg", k[i], -1)) < 0) {
            r->io_have_prev = false;
            return 0;
        }
    r->io_samples++;
    if (r->io_have_prev && x > r->io_prev_x)
        for (int i = 0; i < 4; i++) {
            /* a counter that went back (another cgroup of the same
             * name) is no negative rate */
            double dv = v[i] > r->io_prev[i]
                            ? (double)(v[i] - r->io_prev[i])
                            : 0.0;
            if (i < 2)
                dv /= 1048576.0;
            if (series_push (&r->d->series[i], x, dv / (x - r->io_prev_x))
                < 0) {
                r->nomem = true;
                return -1;
            }
        }
    memcpy (r->io_prev, v, sizeof (v));
    r->io_prev_x = x;
    r->io_have_prev = true;
    return 0;
}

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
    if (d->kind == PROF_CHART_IO)
        return io_sample (r, o, x);
    if (d->kind == PROF_CHART_CTXSW) {
        int64_t v[2] = {prof_get_int (o, "nvcsw", -1),
                        prof_get_int (o, "nivcsw", -1)};
        if (v[0] < 0 || v[1] < 0)
            return 0;
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
                || !json_object_is_type (v, json_type_object))
                continue;
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
        static const char *const cgk[4] = {"memory_current",
                                           "anon",
                                           "file",
                                           "shmem"};
        int64_t v[6];
        v[0] = prof_get_int (o, "rss_kb", -1);
        v[1] = prof_get_int (o, "pss_kb", -1);
        for (int k = 0; k < 4; k++)
            v[2 + k] = get_sub (o, "cg", cgk[k], -1);
        for (int k = 0; k < 6; k++) {
            double mib;
            if (v[k] < 0)
                continue;
            mib = k < 2 ? (double)v[k] / 1024 : (double)v[k] / 1048576;
            r->mem_seen[k] = true;
            if (series_push (&d->series[k], x, mib) < 0)
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

    if (d->kind == PROF_CHART_IO) {
        series_add (d, "cgroup read (io.stat rbytes)", 0, 0, false);
        series_add (d, "cgroup write (io.stat wbytes)", 1, 0, false);
        series_add (d, "cgroup read operations (rios)", 2, 1, false);
        series_add (d, "cgroup write operations (wios)", 3, 1, false);
        d->npanels = 2;
        d->panel_label[0] = "MiB per second";
        d->panel_label[1] = "operations per second";
        d->ylabel = "I/O of the step's cgroup";
    } else if (d->kind == PROF_CHART_CTXSW) {
        series_add (d, "voluntary", 0, 0, false);
        series_add (d, "involuntary", 1, 0, false);
        d->ylabel = "context switches per second";
    } else if (d->kind == PROF_CHART_STATES) {
        for (unsigned p = 0; p < 2; p++)
            for (unsigned k = 0; k < 5; k++)
                series_add (d, st_labels[k], k, p, false);
        d->npanels = 2;
        d->panel_label[0] = "processes";
        d->panel_label[1] = "threads";
        d->ylabel = "tasks by state";
    } else {
        for (unsigned k = 0; k < 6; k++)
            series_add (d, mem_labels[k], k, 0, true);
        d->ylabel = "memory (MiB)";
    }
    if (prof_read (r->path, sample_line, r, errp) < 0)
        return r->nomem ? (errno = ENOMEM, errprintf (errp, "out of memory"))
                        : -1;
    if (d->kind == PROF_CHART_IO && r->io_samples < 2) {
        errno = ENODATA;
        return errprintf (errp,
                          "%s: %s: nothing to draw for --kind io",
                          r->path,
                          r->io_samples
                              ? "fewer than 2 samples of the step "
                                "cgroup's io.stat"
                              : "no samples of the step cgroup's io.stat "
                                "(no io controller delegated to it, or "
                                "no cgroup recorded)");
    }
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
        for (size_t k = 0; k < 6; k++) {
            if (!r->mem_seen[k]) {
                free (d->series[k].x);
                free (d->series[k].y);
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
    }
    return 0;
}

int prof_chart_read (const char *path,
                     enum prof_chart kind,
                     struct prof_chart_data *d,
                     pin_error_t *errp)
{
    struct rd r = {.d = d, .path = path, .errp = errp};
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
        for (size_t i = 0; i < d->nseries; i++) {
            free (d->series[i].x);
            free (d->series[i].y);
        }
        d->nseries = 0;
        free (d->bars);
        d->bars = NULL;
        d->nbars = 0;
    }
    errno = saved;
}

/* ---- several nodes of one step ---- */

/* The colour of `label` in `into`: that of a series of the same label,
 * else the next free one; PROF_SERIES_MAX when none is left. */
static unsigned merged_colour (const struct prof_chart_data *into,
                               size_t before,
                               const char *label)
{
    unsigned next = 0;

    for (size_t i = 0; i < before; i++) {
        if (!strcmp (into->series[i].label, label))
            return into->series[i].colour;
        if (into->series[i].colour + 1 > next)
            next = into->series[i].colour + 1;
    }
    return next < PROF_SERIES_MAX ? next : PROF_SERIES_MAX;
}

/* The panel labels of one node: "NODE: LABEL" ("NODE" without one). */
static void node_panels (struct prof_chart_data *d,
                         unsigned first,
                         unsigned np,
                         const char *const *labels,
                         const char *node)
{
    for (unsigned p = 0; p < np && first + p < PROF_PANELS_MAX; p++) {
        if (labels[p])
            snprintf (d->panel_text[first + p],
                      PROF_LABEL,
                      "%.24s: %s",
                      node[0] ? node : "?",
                      labels[p]);
        else
            snprintf (d->panel_text[first + p],
                      PROF_LABEL,
                      "%s",
                      node[0] ? node : "?");
        d->panel_label[first + p] = d->panel_text[first + p];
    }
}

/* The confinements of one node, marked with it ("0-1 on n2"): the marks
 * of all nodes are drawn over every panel. */
static void confine_add (struct prof_chart_data *d,
                         const struct prof_confine *c,
                         double shift,
                         const char *node)
{
    struct prof_confine *t;
    char cpus[sizeof (c->cpus)];

    if (d->nconfine >= PROF_CONFINE_MAX)
        return;
    t = &d->confine[d->nconfine++];
    snprintf (t->how, sizeof (t->how), "%s", c->how);
    snprintf (cpus,
              sizeof (cpus),
              "%.23s%son %.20s",
              c->cpus,
              c->cpus[0] ? " " : "",
              node[0] ? node : "?");
    memcpy (t->cpus, cpus, sizeof (t->cpus));
    t->t = c->t + shift;
}

int prof_chart_merge (struct prof_chart_data *into,
                      struct prof_chart_data *from,
                      pin_error_t *errp)
{
    unsigned np = from->npanels ? from->npanels : 1;
    double shift = 0;

    if (into->kind != from->kind) {
        errno = EINVAL;
        return errprintf (errp, "merging charts of different kinds");
    }
    if (into->unix_t0 > 0 && from->unix_t0 > 0)
        shift = from->unix_t0 - into->unix_t0;
    if (into->nnodes == 0) { /* into becomes node 0 of the merge */
        const char *labels[PROF_PANELS_MAX] = {NULL};
        for (unsigned p = 0; p < np && p < PROF_PANELS_MAX; p++)
            labels[p] = np > 1 ? into->panel_label[p] : into->ylabel;
        node_panels (into, 0, np, labels, into->node);
        {
            struct prof_confine c[PROF_CONFINE_MAX];
            size_t n = into->nconfine;
            memcpy (c, into->confine, n * sizeof (c[0]));
            into->nconfine = 0;
            for (size_t i = 0; i < n; i++)
                confine_add (into, &c[i], 0, into->node);
        }
        into->nnodes = 1;
    }
    if (into->nnodes >= PROF_NODES_MAX
        || (into->nnodes + 1) * np > PROF_PANELS_MAX) {
        errno = E2BIG;
        return errprintf (errp,
                          "more than %d nodes to draw in one chart: "
                          "give --node",
                          PROF_NODES_MAX);
    }
    if (into->kind == PROF_CHART_GANTT) {
        struct prof_bar *b;
        if (into->nbars + from->nbars > PROF_BARS_MAX) {
            errno = E2BIG;
            return errprintf (errp,
                              "more than %d processes: too many for "
                              "one Gantt chart",
                              PROF_BARS_MAX);
        }
        if (!(b = realloc (into->bars,
                           (into->nbars + from->nbars + 1) * sizeof (*b)))) {
            errno = ENOMEM;
            return errprintf (errp, "out of memory");
        }
        into->bars = b;
        for (size_t i = 0; i < from->nbars; i++) {
            b[into->nbars + i] = from->bars[i];
            b[into->nbars + i].start += shift;
            b[into->nbars + i].end += shift;
        }
        into->nbars += from->nbars;
        free (from->bars);
        from->bars = NULL;
        from->nbars = 0;
        /* node after node: the colours of the commands over all */
        into->other_procs = 0;
        if (gantt_colours (into) < 0) {
            errno = ENOMEM;
            return errprintf (errp, "out of memory");
        }
    } else {
        size_t before = into->nseries;
        const char *labels[PROF_PANELS_MAX] = {NULL};
        if (into->nseries + from->nseries
            > sizeof (into->series) / sizeof (into->series[0])) {
            errno = E2BIG;
            return errprintf (errp, "too many series for one chart");
        }
        for (size_t i = 0; i < from->nseries; i++) {
            struct prof_series *s = &into->series[into->nseries];
            *s = from->series[i];
            s->colour = merged_colour (into, before, s->label);
            if (s->colour >= PROF_SERIES_MAX) {
                errno = E2BIG;
                return errprintf (errp,
                                  "more than %d different series over "
                                  "the nodes (CPUs of each node?): give "
                                  "--node",
                                  PROF_SERIES_MAX);
            }
            s->panel = (unsigned)into->nnodes * np + from->series[i].panel;
            for (size_t k = 0; k < s->n; k++)
                s->x[k] += shift;
            into->nseries++;
            from->series[i].x = from->series[i].y = NULL;
            from->series[i].n = 0;
        }
        from->nseries = 0;
        for (unsigned p = 0; p < np && p < PROF_PANELS_MAX; p++)
            labels[p] = np > 1 ? from->panel_label[p] : from->ylabel;
        node_panels (into, (unsigned)into->nnodes * np, np, labels, from->node);
    }
    if (from->t_first + shift < into->t_first)
        into->t_first = from->t_first + shift;
    if (from->t_last + shift > into->t_last)
        into->t_last = from->t_last + shift;
    for (size_t i = 0; i < from->nconfine; i++)
        confine_add (into, &from->confine[i], shift, from->node);
    into->skipped += from->skipped;
    into->nnodes++;
    into->npanels = into->kind == PROF_CHART_GANTT
                        ? 1
                        : (unsigned)into->nnodes * np;
    return 0;
}
