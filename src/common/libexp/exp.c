/* exp.c - the statistics of a policy experiment (exp.h) */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "libexp/exp.h"

/* ---- gathering ------------------------------------------------------- */

struct stepnode {
    uint32_t step_id;
    uint64_t node; /* hash of the node name */
};

struct ejob {
    char *cluster;
    uint32_t job_id;
    char arm[64];
    char block[32];
    bool inconsistent; /* its records disagree */
    bool opted_out;    /* a step ran another policy than the arm */
    double cpu_us, system_us, alloc_us;
    int64_t start_us, end_us; /* earliest start (0: none), latest end */
    struct stepnode *sn;      /* records taken: (step, node) */
    size_t nsn, capsn;
};

struct exp {
    char name[64];
    size_t nrecords;
    struct ejob *jobs;
    size_t njobs, capjobs;
    size_t *hash; /* (cluster, job) -> index + 1, open addressing */
    size_t hashcap;
    /* jobs with a step record of another experiment (or none): keys */
    uint64_t *foreign; /* open addressing, 0 = free */
    size_t nforeign, capforeign;
};

static uint64_t fnv1a (const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;

    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* splitmix64's finaliser: spreads a key over 64 bits */
static uint64_t mix (uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t job_key (const char *cluster, uint32_t job_id)
{
    uint64_t k = mix (fnv1a (cluster) ^ ((uint64_t)job_id << 1));
    return k ? k : 1; /* 0 marks a free slot */
}

struct exp *exp_create (const char *name)
{
    struct exp *e;

    if (!name || !name[0] || strlen (name) >= sizeof (e->name)) {
        errno = EINVAL;
        return NULL;
    }
    if (!(e = calloc (1, sizeof (*e))))
        return NULL;
    snprintf (e->name, sizeof (e->name), "%s", name);
    return e;
}

void exp_destroy (struct exp *e)
{
    int saved = errno;

    if (e) {
        for (size_t i = 0; i < e->njobs; i++) {
            free (e->jobs[i].cluster);
            free (e->jobs[i].sn);
        }
        free (e->jobs);
        free (e->hash);
        free (e->foreign);
        free (e);
    }
    errno = saved;
}

size_t exp_nrecords (const struct exp *e)
{
    return e ? e->nrecords : 0;
}

static int hash_rebuild (struct exp *e, size_t cap)
{
    size_t *h = calloc (cap, sizeof (*h));

    if (!h)
        return -1;
    for (size_t i = 0; i < e->njobs; i++) {
        size_t s = job_key (e->jobs[i].cluster, e->jobs[i].job_id) & (cap - 1);
        while (h[s])
            s = (s + 1) & (cap - 1);
        h[s] = i + 1;
    }
    free (e->hash);
    e->hash = h;
    e->hashcap = cap;
    return 0;
}

static struct ejob *find_job (const struct exp *e,
                              const char *cluster,
                              uint32_t job_id)
{
    if (!e->hashcap)
        return NULL;
    for (size_t s = job_key (cluster, job_id) & (e->hashcap - 1); e->hash[s];
         s = (s + 1) & (e->hashcap - 1)) {
        struct ejob *j = &e->jobs[e->hash[s] - 1];
        if (j->job_id == job_id && strcmp (j->cluster, cluster) == 0)
            return j;
    }
    return NULL;
}

static bool foreign_has (const struct exp *e, uint64_t key)
{
    if (!e->capforeign)
        return false;
    for (size_t s = key & (e->capforeign - 1); e->foreign[s];
         s = (s + 1) & (e->capforeign - 1))
        if (e->foreign[s] == key)
            return true;
    return false;
}

static int foreign_add (struct exp *e, uint64_t key)
{
    if (foreign_has (e, key))
        return 0;
    if (2 * (e->nforeign + 1) > e->capforeign) {
        size_t cap = e->capforeign ? 2 * e->capforeign : 64;
        uint64_t *n = calloc (cap, sizeof (*n));
        if (!n)
            return -1;
        for (size_t i = 0; i < e->capforeign; i++) {
            if (!e->foreign[i])
                continue;
            size_t s = e->foreign[i] & (cap - 1);
            while (n[s])
                s = (s + 1) & (cap - 1);
            n[s] = e->foreign[i];
        }
        free (e->foreign);
        e->foreign = n;
        e->capforeign = cap;
    }
    {
        size_t s = key & (e->capforeign - 1);
        while (e->foreign[s])
            s = (s + 1) & (e->capforeign - 1);
        e->foreign[s] = key;
        e->nforeign++;
    }
    return 0;
}

static const char *policy_of (const struct acct_record *r)
{
    return r->policy[0] ? r->policy : "none";
}

int exp_add (struct exp *e, const struct acct_record *r)
{
    struct ejob *j;
    uint64_t node;
    double elapsed;

    if (!e || !r || r->kind != ACCT_KIND_STEP
        || r->step_id == ACCT_STEP_EXTERN)
        return 0;
    if (strcmp (r->experiment, e->name) != 0) {
        /* a step of a job that may be enrolled, recorded without it (or
         * with another experiment): the job's records disagree */
        return foreign_add (e, job_key (r->cluster, r->job_id)) < 0 ? -1 : 0;
    }
    node = fnv1a (r->node);
    if (!(j = find_job (e, r->cluster, r->job_id))) {
        char *cl;
        if (2 * (e->njobs + 1) > e->hashcap
            && hash_rebuild (e, e->hashcap ? 2 * e->hashcap : 64) < 0)
            return -1;
        if (e->njobs == e->capjobs) {
            size_t cap = e->capjobs ? 2 * e->capjobs : 64;
            struct ejob *n = realloc (e->jobs, cap * sizeof (*n));
            if (!n)
                return -1;
            e->jobs = n;
            e->capjobs = cap;
        }
        if (!(cl = strdup (r->cluster)))
            return -1;
        j = &e->jobs[e->njobs];
        memset (j, 0, sizeof (*j));
        j->cluster = cl;
        j->job_id = r->job_id;
        snprintf (j->arm, sizeof (j->arm), "%s", r->arm);
        snprintf (j->block, sizeof (j->block), "%s", r->block);
        {
            size_t s = job_key (cl, r->job_id) & (e->hashcap - 1);
            while (e->hash[s])
                s = (s + 1) & (e->hashcap - 1);
            e->hash[s] = ++e->njobs;
        }
    }
    for (size_t i = 0; i < j->nsn; i++)
        if (j->sn[i].step_id == r->step_id && j->sn[i].node == node)
            return 0; /* the same step on the same node: the first wins */
    if (j->nsn == j->capsn) {
        size_t cap = j->capsn ? 2 * j->capsn : 4;
        struct stepnode *n = realloc (j->sn, cap * sizeof (*n));
        if (!n)
            return -1;
        j->sn = n;
        j->capsn = cap;
    }
    j->sn[j->nsn].step_id = r->step_id;
    j->sn[j->nsn].node = node;
    j->nsn++;
    e->nrecords++;
    if (strcmp (j->arm, r->arm) != 0 || strcmp (j->block, r->block) != 0)
        j->inconsistent = true;
    if (strcmp (policy_of (r), r->arm) != 0)
        j->opted_out = true;
    j->cpu_us += (double)r->user_usec + (double)r->system_usec;
    j->system_us += (double)r->system_usec;
    elapsed = r->elapsed_us > 0 ? (double)r->elapsed_us
              : (r->start_us > 0 && r->end_us > r->start_us)
                  ? (double)(r->end_us - r->start_us)
                  : 0;
    j->alloc_us += elapsed * r->alloc_cpus;
    if (r->start_us > 0 && (j->start_us <= 0 || r->start_us < j->start_us))
        j->start_us = r->start_us;
    if (r->end_us > j->end_us)
        j->end_us = r->end_us;
    return 1;
}

/* ---- per arm ----------------------------------------------------------- */

static double ratio (double a, double b)
{
    return b > 0 ? a / b : -1;
}

double exp_arm_cpu_hours (const struct exp_arm *a)
{
    return a->cpu_us / 3.6e9;
}

double exp_arm_eff (const struct exp_arm *a)
{
    return ratio (a->cpu_us, a->alloc_us);
}

double exp_arm_sys_share (const struct exp_arm *a)
{
    return ratio (a->system_us, a->cpu_us);
}

double exp_arm_wall_s (const struct exp_arm *a)
{
    return a->jobs ? a->wall_us / 1e6 / (double)a->jobs : -1;
}

double exp_arm_cpu_s (const struct exp_arm *a)
{
    return a->jobs ? a->cpu_us / 1e6 / (double)a->jobs : -1;
}

static const char *const metric_keys[EXP_NMETRICS] = {
    "system_share",
    "wall_time",
    "cpu_time",
    "efficiency",
};
static const char *const metric_labels[EXP_NMETRICS] = {
    "system time share",
    "wall time",
    "CPU time",
    "efficiency",
};

const char *exp_metric_key (int m)
{
    return m >= 0 && m < EXP_NMETRICS ? metric_keys[m] : NULL;
}

const char *exp_metric_label (int m)
{
    return m >= 0 && m < EXP_NMETRICS ? metric_labels[m] : NULL;
}

/* ---- Student's t ------------------------------------------------------- */

/* The continued fraction of the regularized incomplete beta function
 * (modified Lentz's method). */
static double betacf (double a, double b, double x)
{
    const double tiny = 1e-300;
    double qab = a + b, qap = a + 1, qam = a - 1;
    double c = 1, d = 1 - qab * x / qap, h;

    if (fabs (d) < tiny)
        d = tiny;
    d = 1 / d;
    h = d;
    for (int m = 1; m <= 300; m++) {
        int m2 = 2 * m;
        double aa = m * (b - m) * x / ((qam + m2) * (a + m2)), del;
        d = 1 + aa * d;
        if (fabs (d) < tiny)
            d = tiny;
        c = 1 + aa / c;
        if (fabs (c) < tiny)
            c = tiny;
        d = 1 / d;
        h *= d * c;
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1 + aa * d;
        if (fabs (d) < tiny)
            d = tiny;
        c = 1 + aa / c;
        if (fabs (c) < tiny)
            c = tiny;
        d = 1 / d;
        del = d * c;
        h *= del;
        if (fabs (del - 1) < 1e-15)
            break;
    }
    return h;
}

/* I_x(a, b) */
static double betai (double a, double b, double x)
{
    double bt;

    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    bt = exp (lgamma (a + b) - lgamma (a) - lgamma (b) + a * log (x)
              + b * log (1 - x));
    if (x < (a + 1) / (a + b + 2))
        return bt * betacf (a, b, x) / a;
    return 1 - bt * betacf (b, a, 1 - x) / b;
}

/* P(T <= t) for t >= 0 */
static double t_cdf (double t, double df)
{
    return 1 - 0.5 * betai (df / 2, 0.5, df / (df + t * t));
}

double exp_t_quantile (double p, unsigned df)
{
    double lo = 0, hi = 1, q;

    if (df == 0 || !(p > 0 && p < 1))
        return NAN;
    if (p < 0.5)
        return -exp_t_quantile (1 - p, df);
    if (p == 0.5)
        return 0;
    while (t_cdf (hi, df) < p && hi < 1e12)
        hi *= 2;
    for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
        q = (lo + hi) / 2;
        if (t_cdf (q, df) < p)
            lo = q;
        else
            hi = q;
    }
    return (lo + hi) / 2;
}

void exp_paired_interval (const double *d, size_t n, struct exp_diff *out)
{
    double mean = 0, ss = 0, half;

    memset (out, 0, sizeof (*out));
    out->nblocks = n;
    if (n == 0) {
        out->estimate = out->low = out->high = NAN;
        return;
    }
    for (size_t i = 0; i < n; i++)
        mean += d[i];
    mean /= (double)n;
    out->estimate = expm1 (mean);
    if (n < 2) {
        out->low = out->high = NAN;
        return;
    }
    for (size_t i = 0; i < n; i++)
        ss += (d[i] - mean) * (d[i] - mean);
    half = exp_t_quantile (0.5 + EXP_LEVEL / 2, (unsigned)(n - 1))
           * sqrt (ss / (double)(n - 1)) / sqrt ((double)n);
    out->low = expm1 (mean - half);
    out->high = expm1 (mean + half);
    out->valid = true;
}

/* ---- words ------------------------------------------------------------- */

void exp_fmt_count (size_t n, char *buf, size_t len)
{
    char digits[32], out[48];
    int nd = snprintf (digits, sizeof (digits), "%zu", n), k = 0;

    for (int i = 0; i < nd; i++) {
        if (i && (nd - i) % 3 == 0)
            out[k++] = ',';
        out[k++] = digits[i];
    }
    out[k] = '\0';
    snprintf (buf, len, "%s", out);
}

#define MINUS "\xe2\x88\x92" /* U+2212 */

static double round_to (double v, int dec)
{
    double f = dec == 0 ? 1 : dec == 1 ? 10 : 100;
    return round (v * f) / f;
}

/* x (a fraction) as a signed percentage: "+4", "−27", "0", "−0.4" */
static void pct (double x, int dec, char *buf, size_t n)
{
    double v = round_to (x * 100, dec);

    if (v == 0)
        snprintf (buf, n, "0");
    else
        snprintf (buf, n, "%s%.*f", v < 0 ? MINUS : "+", dec, fabs (v));
}

/* decimals enough that none of the figures reads as 0 when it is not */
static int decimals (const struct exp_diff *d)
{
    int dec = 0;

    while (dec < 2
           && ((d->stated && round_to (d->estimate * 100, dec) == 0)
               || (d->low != 0 && round_to (d->low * 100, dec) == 0)
               || (d->high != 0 && round_to (d->high * 100, dec) == 0)))
        dec++;
    return dec;
}

static size_t cat (char *buf, size_t n, size_t len, const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));
static size_t cat (char *buf, size_t n, size_t len, const char *fmt, ...)
{
    va_list ap;
    int rc;

    if (len >= n)
        return len;
    va_start (ap, fmt);
    rc = vsnprintf (buf + len, n - len, fmt, ap);
    va_end (ap);
    return rc < 0 ? len : len + (size_t)rc;
}

static void interval_text (const struct exp_diff *d, char *buf, size_t n)
{
    char lo[32], hi[32];
    int dec = decimals (d);

    pct (d->low, dec, lo, sizeof (lo));
    pct (d->high, dec, hi, sizeof (hi));
    snprintf (buf, n, "95 %% CI %s to %s %%", lo, hi);
}

static void verdict (struct exp_comparison *c, const char *control)
{
    char *v = c->verdict, count[32], iv[96], est[32];
    size_t n = sizeof (c->verdict), len = 0;
    bool any = false;

    len = cat (v, n, len, "%s: ", c->arm);
    if (!c->enough) {
        cat (v,
             n,
             len,
             "too few matched jobs to conclude (%zu matched block%s, %zu "
             "job%s of %s and %zu of %s; need at least %d blocks and %d "
             "jobs per arm)",
             c->matched_blocks,
             c->matched_blocks == 1 ? "" : "s",
             c->arm_jobs,
             c->arm_jobs == 1 ? "" : "s",
             c->arm,
             c->control_jobs,
             control,
             EXP_MIN_BLOCKS,
             EXP_MIN_JOBS);
        return;
    }
    for (int m = 0; m < EXP_NMETRICS; m++) {
        const struct exp_diff *d = &c->diff[m];
        if (!d->stated)
            continue;
        pct (d->estimate, decimals (d), est, sizeof (est));
        interval_text (d, iv, sizeof (iv));
        len = cat (v,
                   n,
                   len,
                   "%s%s %% %s (%s)",
                   any ? ", " : "",
                   est,
                   metric_labels[m],
                   iv);
        any = true;
    }
    if (!any)
        len = cat (v, n, len, "no difference from %s", control);
    exp_fmt_count (c->arm_jobs + c->control_jobs, count, sizeof (count));
    len = cat (v, n, len, ", %s matched jobs", count);
    for (int m = 0; m < EXP_NMETRICS; m++) {
        const struct exp_diff *d = &c->diff[m];
        if (d->stated)
            continue;
        if (!d->valid) {
            len = cat (v,
                       n,
                       len,
                       "; %s: not measured (defined in %zu matched "
                       "block%s)",
                       metric_labels[m],
                       d->nblocks,
                       d->nblocks == 1 ? "" : "s");
            continue;
        }
        interval_text (d, iv, sizeof (iv));
        len =
            cat (v, n, len, "; %s: no difference (%s)", metric_labels[m], iv);
    }
}

/* ---- the analysis ------------------------------------------------------ */

struct cell { /* one arm's kept jobs in one block */
    size_t n;
    double cpu_us, system_us, alloc_us, wall_us;
};

static int cmp_str (const void *a, const void *b)
{
    return strcmp (*(const char *const *)a, *(const char *const *)b);
}

static int find_str (const char *const *v, size_t n, const char *s)
{
    const char *const *p = bsearch (&s, v, n, sizeof (*v), cmp_str);
    return p ? (int)(p - v) : -1;
}

/* The metric's value in a cell; <= 0 or NAN: undefined. */
static double cell_value (const struct cell *c, int m)
{
    if (c->n == 0)
        return -1;
    switch (m) {
        case EXP_M_SYS_SHARE:
            return ratio (c->system_us, c->cpu_us);
        case EXP_M_WALL:
            return c->wall_us / (double)c->n;
        case EXP_M_CPU:
            return c->cpu_us / (double)c->n;
        case EXP_M_EFF:
            return ratio (c->cpu_us, c->alloc_us);
    }
    return -1;
}

static bool in_window (const struct ejob *j, const struct exp_opts *o)
{
    if (o->start_us && j->end_us > 0 && j->end_us < o->start_us)
        return false;
    if (o->end_us && j->start_us > o->end_us)
        return false;
    return true;
}

/* Distinct strings of the kept jobs (arms or blocks), sorted. */
static const char **distinct (const struct ejob *const *jobs,
                              size_t n,
                              bool arms,
                              size_t *out)
{
    const char **v = malloc ((n ? n : 1) * sizeof (*v));
    size_t k = 0;

    if (!v)
        return NULL;
    for (size_t i = 0; i < n; i++)
        v[i] = arms ? jobs[i]->arm : jobs[i]->block;
    qsort (v, n, sizeof (*v), cmp_str);
    for (size_t i = 0; i < n; i++)
        if (k == 0 || strcmp (v[k - 1], v[i]) != 0)
            v[k++] = v[i];
    *out = k;
    return v;
}

static int cmp_u32 (const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Distinct step ids of a job's records; -1 on ENOMEM. */
static ssize_t distinct_steps (const struct ejob *j)
{
    uint32_t *ids = malloc ((j->nsn ? j->nsn : 1) * sizeof (*ids));
    ssize_t n = 0;

    if (!ids)
        return -1;
    for (size_t i = 0; i < j->nsn; i++)
        ids[i] = j->sn[i].step_id;
    qsort (ids, j->nsn, sizeof (*ids), cmp_u32);
    for (size_t i = 0; i < j->nsn; i++)
        n += (i == 0 || ids[i] != ids[i - 1]);
    free (ids);
    return n;
}

static double wall_of (const struct ejob *j)
{
    return (j->start_us > 0 && j->end_us > j->start_us)
               ? (double)(j->end_us - j->start_us)
               : 0;
}

int exp_analyze (const struct exp *e,
                 const struct exp_opts *opts,
                 struct exp_result *res,
                 pin_error_t *errp)
{
    static const struct exp_opts none_opts = {NULL, 0, 0};
    const struct ejob **all = NULL, **kept = NULL;
    const char **arms = NULL, **blocks = NULL;
    struct cell *cells = NULL;
    double *d = NULL;
    size_t nall = 0, nkept = 0, narms = 0, nblocks = 0;
    int ctl = -1, rc = -1;

    memset (res, 0, sizeof (*res));
    if (!opts)
        opts = &none_opts;
    if (!e) {
        errno = EINVAL;
        return errprintf (errp, "no experiment");
    }
    snprintf (res->experiment, sizeof (res->experiment), "%s", e->name);
    res->records = e->nrecords;
    if (!(all = malloc ((e->njobs ? e->njobs : 1) * sizeof (*all)))
        || !(kept = malloc ((e->njobs ? e->njobs : 1) * sizeof (*kept))))
        goto nomem;
    for (size_t i = 0; i < e->njobs; i++) {
        const struct ejob *j = &e->jobs[i];
        if (!in_window (j, opts))
            continue;
        res->jobs++;
        if (j->inconsistent
            || foreign_has (e, job_key (j->cluster, j->job_id))) {
            res->inconsistent++;
            continue;
        }
        all[nall++] = j;
        if (!j->opted_out)
            kept[nkept++] = j;
    }
    if (res->jobs == 0) {
        errno = ENOENT;
        errprintf (errp,
                   "experiment %s: no step records%s",
                   e->name,
                   e->njobs ? " in the time window" : "");
        goto out;
    }
    /* the arms: of every consistent job, opted out or not */
    if (!(arms = distinct (all, nall, true, &narms)))
        goto nomem;
    if (!(res->arms = calloc (narms ? narms : 1, sizeof (*res->arms))))
        goto nomem;
    res->narms = narms;
    for (size_t a = 0; a < narms; a++)
        snprintf (res->arms[a].name,
                  sizeof (res->arms[a].name),
                  "%s",
                  arms[a]);
    for (size_t i = 0; i < nall; i++) {
        struct exp_arm *a = &res->arms[find_str (arms, narms, all[i]->arm)];
        if (all[i]->opted_out) {
            a->opted_out++;
            continue;
        }
        ssize_t nsteps = distinct_steps (all[i]);
        if (nsteps < 0)
            goto nomem;
        a->jobs++;
        a->steps += (size_t)nsteps;
        a->cpu_us += all[i]->cpu_us;
        a->system_us += all[i]->system_us;
        a->alloc_us += all[i]->alloc_us;
        a->wall_us += wall_of (all[i]);
    }
    /* the control */
    if (opts->control) {
        ctl = find_str (arms, narms, opts->control);
        if (ctl < 0) {
            char list[512] = "";
            size_t len = 0;
            for (size_t a = 0; a < narms; a++)
                len = cat (list,
                           sizeof (list),
                           len,
                           "%s%s",
                           a ? ", " : "",
                           arms[a]);
            errno = EINVAL;
            errprintf (errp,
                       "--control=%s: no such arm in experiment %s; its "
                       "arms: %s",
                       opts->control,
                       e->name,
                       narms ? list : "none (every job is inconsistent)");
            goto out;
        }
    } else if (narms) {
        ctl = find_str (arms, narms, "none");
        if (ctl < 0)
            ctl = 0;
    }
    if (ctl >= 0)
        snprintf (res->control, sizeof (res->control), "%s", arms[ctl]);
    /* the blocks: one cell per block and arm */
    if (!(blocks = distinct (kept, nkept, false, &nblocks)))
        goto nomem;
    res->blocks = nblocks;
    if (narms == 0)
        goto done;
    if (!(cells = calloc ((nblocks * narms) > 0 ? nblocks * narms : 1,
                          sizeof (*cells)))
        || !(d = malloc ((nblocks ? nblocks : 1) * sizeof (*d))))
        goto nomem;
    for (size_t i = 0; i < nkept; i++) {
        size_t b = (size_t)find_str (blocks, nblocks, kept[i]->block);
        size_t a = (size_t)find_str (arms, narms, kept[i]->arm);
        struct cell *c = &cells[b * narms + a];
        c->n++;
        c->cpu_us += kept[i]->cpu_us;
        c->system_us += kept[i]->system_us;
        c->alloc_us += kept[i]->alloc_us;
        c->wall_us += wall_of (kept[i]);
    }
    if (!(res->cmps = calloc (narms, sizeof (*res->cmps))))
        goto nomem;
    for (size_t a = 0; a < narms; a++) {
        struct exp_comparison *c;

        if ((int)a == ctl)
            continue;
        c = &res->cmps[res->ncmps++];
        snprintf (c->arm, sizeof (c->arm), "%s", arms[a]);
        for (size_t b = 0; b < nblocks; b++) {
            const struct cell *x = &cells[b * narms + a];
            const struct cell *y = &cells[b * narms + (size_t)ctl];
            if (x->n && y->n) {
                c->matched_blocks++;
                c->arm_jobs += x->n;
                c->control_jobs += y->n;
            }
        }
        c->enough = c->matched_blocks >= EXP_MIN_BLOCKS
                    && c->arm_jobs >= EXP_MIN_JOBS
                    && c->control_jobs >= EXP_MIN_JOBS;
        for (int m = 0; m < EXP_NMETRICS; m++) {
            size_t n = 0;
            for (size_t b = 0; b < nblocks; b++) {
                const struct cell *x = &cells[b * narms + a];
                const struct cell *y = &cells[b * narms + (size_t)ctl];
                double vx = cell_value (x, m), vy = cell_value (y, m);
                if (x->n && y->n && vx > 0 && vy > 0 && isfinite (vx)
                    && isfinite (vy))
                    d[n++] = log (vx / vy);
            }
            exp_paired_interval (d, n, &c->diff[m]);
            c->diff[m].stated = c->enough && c->diff[m].valid
                                && (c->diff[m].low > 0 || c->diff[m].high < 0);
        }
        verdict (c, res->control);
    }
done:
    rc = 0;
    goto out;
nomem:
    errno = ENOMEM;
    errprintf (errp, "out of memory");
out:
    if (rc < 0) {
        int saved = errno;
        exp_result_free (res);
        errno = saved;
    }
    free (all);
    free (kept);
    free (arms);
    free (blocks);
    free (cells);
    free (d);
    return rc;
}

void exp_result_free (struct exp_result *res)
{
    int saved = errno;

    if (res) {
        free (res->arms);
        free (res->cmps);
        res->arms = NULL;
        res->cmps = NULL;
        res->narms = res->ncmps = 0;
    }
    errno = saved;
}
