/* sacct.c - sacct-compatible rows and formatting of accounting records
 *
 * The formatting rules follow Slurm 22.05's sacct (read, not copied):
 * print_fields.c decides padding, the '+' cut of too long strings (dates
 * are cut without it, numbers and times are never cut), the parsable
 * delimiters; parse_time.c's secs2time_str gives Elapsed and CPUTime;
 * print.c's _elapsed_time gives TotalCPU, UserCPU and SystemCPU.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>

#include "libacct/sacct.h"
#include "libutil/text.h"

/* snprintf (dst, n, "%s", src) and "%" PRIu64 without printf's parsing of
 * the format: a listing makes tens of millions of these (perf: a tenth of
 * its time in vfprintf). */
static size_t copy_str (char *dst, size_t n, const char *src)
{
    size_t len;

    if (n == 0)
        return 0;
    len = strnlen (src, n - 1);
    memcpy (dst, src, len);
    dst[len] = '\0';
    return len;
}

static size_t copy_u64 (char *dst, size_t n, uint64_t v)
{
    char tmp[24], *p = tmp + sizeof (tmp);

    *--p = '\0';
    do
        *--p = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    return copy_str (dst, n, p);
}

/* How print_fields.c prints a kind of value in fixed width. */
enum kind {
    K_STR,  /* print_fields_str: cut with a trailing '+' */
    K_NUM,  /* print_fields_uint: never cut */
    K_TIME, /* print_fields_time_from_secs: never cut */
    K_DATE, /* print_fields_date: cut, no '+' */
};

static const struct {
    const char *name;
    int width;
    enum kind kind;
} fields[ACCT_F_COUNT] = {
    [ACCT_F_JOBID] = {"JobID", -12, K_STR},
    [ACCT_F_JOBIDRAW] = {"JobIDRaw", -12, K_STR},
    [ACCT_F_JOBNAME] = {"JobName", 10, K_STR},
    [ACCT_F_USER] = {"User", 9, K_STR},
    [ACCT_F_PARTITION] = {"Partition", 10, K_STR},
    [ACCT_F_NODELIST] = {"NodeList", 15, K_STR},
    [ACCT_F_ALLOCCPUS] = {"AllocCPUS", 10, K_NUM},
    [ACCT_F_ELAPSED] = {"Elapsed", 10, K_TIME},
    [ACCT_F_TOTALCPU] = {"TotalCPU", 10, K_STR},
    [ACCT_F_USERCPU] = {"UserCPU", 10, K_STR},
    [ACCT_F_SYSTEMCPU] = {"SystemCPU", 10, K_STR},
    [ACCT_F_CPUTIME] = {"CPUTime", 10, K_TIME},
    [ACCT_F_START] = {"Start", 19, K_DATE},
    [ACCT_F_END] = {"End", 19, K_DATE},
    [ACCT_F_STATE] = {"State", 10, K_STR},
    [ACCT_F_EXITCODE] = {"ExitCode", 8, K_STR},
    [ACCT_F_ACCOUNT] = {"Account", 10, K_STR},
    [ACCT_F_MAXRSS] = {"MaxRSS", 10, K_STR},
    [ACCT_F_SUBMIT] = {"Submit", 19, K_DATE},
    [ACCT_F_TIMELIMIT] = {"Timelimit", 10, K_STR},
    [ACCT_F_REQMEM] = {"ReqMem", 10, K_STR},
    [ACCT_F_NNODES] = {"NNodes", 8, K_NUM},
    [ACCT_F_QOS] = {"QOS", 10, K_STR},
    [ACCT_F_REASON] = {"Reason", 22, K_STR},
    [ACCT_F_CLUSTER] = {"Cluster", 10, K_STR},
    [ACCT_F_CPUEFF] = {"CPUEff", 7, K_STR},
    [ACCT_F_PINPOLICY] = {"PinPolicy", 12, K_STR},
    [ACCT_F_FALLBACK] = {"Fallback", 10, K_STR},
    [ACCT_F_GPUS] = {"Gpus", 14, K_STR},
    [ACCT_F_NIC] = {"Nic", 10, K_STR},
    [ACCT_F_CPUSET] = {"Cpuset", 15, K_STR},
    [ACCT_F_MEMS] = {"Mems", 6, K_STR},
    [ACCT_F_THROTTLED] = {"Throttled", 10, K_STR},
    [ACCT_F_MEMPEAK] = {"MemPeak", 10, K_STR},
    [ACCT_F_CONFINED] = {"Confined", 10, K_TIME},
    [ACCT_F_EXPERIMENT] = {"Experiment", 12, K_STR},
    [ACCT_F_ARM] = {"Arm", 12, K_STR},
};

const char *acct_field_name (int id)
{
    return (id >= 0 && id < ACCT_F_COUNT) ? fields[id].name : NULL;
}

int acct_field_width (int id)
{
    return (id >= 0 && id < ACCT_F_COUNT) ? fields[id].width : 0;
}

/* Field ids in case-insensitive alphabetical order, the order sacct's own
 * table has and so the order its prefix match tries them in. */
static int by_name (const void *a, const void *b)
{
    return strcasecmp (fields[*(const int *)a].name,
                       fields[*(const int *)b].name);
}

static void sorted_ids (int ids[ACCT_F_COUNT])
{
    for (int i = 0; i < ACCT_F_COUNT; i++)
        ids[i] = i;
    qsort (ids, ACCT_F_COUNT, sizeof (ids[0]), by_name);
}

const char *acct_field_list (void)
{
    static char list[512];
    int ids[ACCT_F_COUNT];
    size_t len = 0;

    if (list[0])
        return list;
    sorted_ids (ids);
    for (int i = 0; i < ACCT_F_COUNT && len < sizeof (list); i++)
        len += snprintf (list + len,
                         sizeof (list) - len,
                         "%s%s",
                         i ? "," : "",
                         fields[ids[i]].name);
    return list;
}

#define WIDTH_MAX 1000

int acct_fmt_parse (struct acct_fmt *fmt, const char *spec, pin_error_t *errp)
{
    int ids[ACCT_F_COUNT], last_w[ACCT_F_COUNT];
    const char *p = spec;

    for (int i = 0; i < ACCT_F_COUNT; i++)
        last_w[i] = INT_MIN;
    if (!spec)
        return errprintf (errp,
                          "no format given; valid fields: %s",
                          acct_field_list ());
    sorted_ids (ids);
    while (*p) {
        char tok[128];
        size_t len = strcspn (p, ",");
        char *pct;
        int id = -1, width;

        if (len == 0) { /* ",," or a trailing ',' */
            p++;
            continue;
        }
        if (len >= sizeof (tok))
            return errprintf (errp,
                              "invalid field requested: \"%.40s...\"; "
                              "valid fields: %s",
                              p,
                              acct_field_list ());
        memcpy (tok, p, len);
        tok[len] = '\0';
        p += len;
        if (*p == ',')
            p++;
        width = INT_MIN; /* no %N: the default */
        if ((pct = strchr (tok, '%'))) {
            char *end;
            long w;

            *pct = '\0';
            errno = 0;
            w = strtol (pct + 1, &end, 10);
            if (pct[1] == '\0' || *end != '\0' || errno || w < -WIDTH_MAX
                || w > WIDTH_MAX)
                return errprintf (errp,
                                  "invalid width \"%s\" of field "
                                  "\"%s\": an integer from -%d to %d",
                                  pct + 1,
                                  tok,
                                  WIDTH_MAX,
                                  WIDTH_MAX);
            width = (int)w;
        }
        if (tok[0] != '\0') {
            size_t tl = strlen (tok);
            for (int i = 0; i < ACCT_F_COUNT; i++) {
                if (strncasecmp (fields[ids[i]].name, tok, tl) == 0) {
                    id = ids[i];
                    break;
                }
            }
        }
        if (id < 0)
            return errprintf (errp,
                              "invalid field requested: \"%s\"; "
                              "valid fields: %s",
                              tok,
                              acct_field_list ());
        if (fmt->n >= ACCT_FMT_MAX)
            return errprintf (errp,
                              "too many fields (at most %d)",
                              ACCT_FMT_MAX);
        fmt->f[fmt->n].id = id;
        /* sacct: %0 (atoi's 0) is a width of 0, not the default: an
         * empty column (strings, dates), numbers and times whole */
        fmt->f[fmt->n].width = width != INT_MIN ? width : fields[id].width;
        if (width != INT_MIN)
            last_w[id] = width;
        fmt->n++;
    }
    /* sacct keeps the width in its one entry of the field table: a field
     * named twice takes the last %N given to it, in every place */
    for (int i = 0; i < fmt->n; i++)
        if (last_w[fmt->f[i].id] != INT_MIN)
            fmt->f[i].width = last_w[fmt->f[i].id];
    if (fmt->n == 0)
        return errprintf (errp,
                          "no field requested; valid fields: %s",
                          acct_field_list ());
    return 0;
}

/* ---- values ------------------------------------------------------------ */

void acct_fmt_secs (int64_t secs, char *buf, size_t n)
{
    if (secs < 0) {
        snprintf (buf, n, "INVALID");
        return;
    }
    int64_t s = secs % 60, m = (secs / 60) % 60, h = (secs / 3600) % 24,
            d = secs / 86400;
    if (d)
        snprintf (buf,
                  n,
                  "%" PRId64 "-%02" PRId64 ":%02" PRId64 ":%02" PRId64,
                  d,
                  h,
                  m,
                  s);
    else
        snprintf (buf, n, "%02" PRId64 ":%02" PRId64 ":%02" PRId64, h, m, s);
}

void acct_fmt_cputime (uint64_t usec, char *buf, size_t n)
{
    uint64_t secs = usec / 1000000, ms = (usec % 1000000) / 1000;
    uint64_t s = secs % 60, m = (secs / 60) % 60, h = (secs / 3600) % 24,
             d = secs / 86400;

    if (d)
        snprintf (buf,
                  n,
                  "%" PRIu64 "-%02" PRIu64 ":%02" PRIu64 ":%02" PRIu64,
                  d,
                  h,
                  m,
                  s);
    else if (h)
        snprintf (buf, n, "%02" PRIu64 ":%02" PRIu64 ":%02" PRIu64, h, m, s);
    else if (ms)
        snprintf (buf, n, "%02" PRIu64 ":%02" PRIu64 ".%03" PRIu64, m, s, ms);
    else
        snprintf (buf, n, "00:%02" PRIu64 ":%02" PRIu64, m, s);
}

void acct_fmt_date_fmt (int64_t us, const char *fmt, char *buf, size_t n)
{
    time_t t = (time_t)(us / 1000000);
    struct tm tm;

    size_t len = 0;

    /* slurm_make_time_str: NO_VAL is slurmdbd's start of a job that never
     * started (sacct prints "None"), INFINITE an unknown time */
    if (t == (time_t)ACCT_NO_VAL) {
        snprintf (buf, n, "None");
        return;
    }
    if (us > 0 && t != (time_t)0xffffffffu && localtime_r (&t, &tm)) {
        /* the user's SLURM_TIME_FORMAT, as sacct takes it */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
        len = strftime (buf, n, fmt ? fmt : "%FT%T", &tm);
#pragma GCC diagnostic pop
    }
    if (len == 0)
        snprintf (buf, n, "Unknown");
}

void acct_fmt_date (int64_t us, char *buf, size_t n)
{
    acct_fmt_date_fmt (us, NULL, buf, n);
}

const char *acct_time_format (const char *env)
{
    if (!env || !*env || strcmp (env, "standard") == 0
        || strcmp (env, "relative") == 0 || !strchr (env, '%')
        || strlen (env) >= 32)
        return NULL;
    return env;
}

void acct_fmt_exitcode (int32_t status, char *buf, size_t n)
{
    int code = 0, sig = 0;

    if (status < 0) {
        if (n)
            buf[0] = '\0';
        return;
    }
    if (WIFSIGNALED (status))
        sig = WTERMSIG (status);
    else if (WIFEXITED (status))
        code = WEXITSTATUS (status);
    if (ACCT_EXIT_TAKES_128 && code >= 128)
        code -= 128;
    {   /* "%d:%d", both 0-255 */
        char t[16];
        size_t l = copy_u64 (t, sizeof (t), (uint64_t)code);
        t[l++] = ':';
        copy_u64 (t + l, sizeof (t) - l, (uint64_t)sig);
        copy_str (buf, n, t);
    }
}

void acct_fmt_eff (double eff, char *buf, size_t n)
{
    if (eff < 0) {
        if (n)
            buf[0] = '\0';
        return;
    }
    snprintf (buf, n, "%.2f%%", eff * 100.0);
}

void acct_fmt_bytes (uint64_t bytes, char *buf, size_t n)
{
    static const char units[] = "KMGTPE";
    double v = (double)bytes / 1024.0;
    int u = 0;

    if (bytes < 1024) {
        snprintf (buf, n, "%" PRIu64, bytes);
        return;
    }
    while (v >= 1024.0 && units[u + 1]) {
        v /= 1024.0;
        u++;
    }
    if (v == (double)(uint64_t)v)
        snprintf (buf, n, "%" PRIu64 "%c", (uint64_t)v, units[u]);
    else
        snprintf (buf, n, "%.2f%c", v, units[u]);
}

void acct_fmt_units (double num,
                     int orig,
                     int units,
                     bool noconvert,
                     char *buf,
                     size_t n)
{
    static const char unit[] = "\0KMGTP?";
    uint64_t i;

    /* Slurm's convert_num_unit2 with sacct's CONVERT_NUM_UNIT_EXACT */
    if ((int64_t)num == 0) {
        snprintf (buf, n, "0");
        return;
    }
    if (units > 0) {
        while (units < orig) {
            num *= 1024;
            orig--;
        }
        while (units > orig) {
            num /= 1024;
            orig++;
        }
    } else if (!noconvert) {
        while (num >= 1024 && ((uint64_t)num % 512) == 0) {
            num /= 1024;
            orig++;
        }
    }
    if (orig < 0 || orig > 5)
        orig = 6;
    i = (uint64_t)num;
    if ((double)i == num) {
        if (unit[orig])
            snprintf (buf, n, "%" PRIu64 "%c", i, unit[orig]);
        else
            snprintf (buf, n, "%" PRIu64, i);
    } else if (unit[orig])
        snprintf (buf, n, "%.2f%c", num, unit[orig]);
    else
        snprintf (buf, n, "%.2f", num);
}

int acct_units_parse (const char *s)
{
    static const char letters[] = "KMGTP";
    const char *c;

    if (!s || !s[0] || s[1])
        return -1;
    c = strchr (letters, s[0] >= 'a' && s[0] <= 'z' ? s[0] - 32 : s[0]);
    return c ? (int)(c - letters) + 1 : -1;
}

void acct_fmt_timelimit (uint32_t minutes, char *buf, size_t n)
{
    if (minutes == 0xffffffffu)
        snprintf (buf, n, "UNLIMITED");
    else if (minutes == ACCT_NO_VAL)
        snprintf (buf, n, "Partition_Limit");
    else if (minutes / 1440)
        snprintf (buf,
                  n,
                  "%" PRIu32 "-%02" PRIu32 ":%02" PRIu32 ":00",
                  minutes / 1440,
                  minutes / 60 % 24,
                  minutes % 60);
    else
        snprintf (buf,
                  n,
                  "%02" PRIu32 ":%02" PRIu32 ":00",
                  minutes / 60 % 24,
                  minutes % 60);
}

/* ---- rows -------------------------------------------------------------- */

void acct_fmt_stepname (uint32_t step_id, char *buf, size_t n)
{
    switch (step_id) {
        case ACCT_STEP_BATCH:
            copy_str (buf, n, "batch");
            break;
        case ACCT_STEP_EXTERN:
            copy_str (buf, n, "extern");
            break;
        case ACCT_STEP_INTERACTIVE:
            copy_str (buf, n, "interactive");
            break;
        default:
            copy_u64 (buf, n, step_id);
    }
}

void acct_row_jobid (const struct acct_row *row, bool raw, char *buf, size_t n)
{
    char id[96];
    size_t l;

    /* "%u_%u" or "%u", then ".STEP" */
    if (!raw && row->array_task_id != ACCT_NO_VAL
        && row->array_job_id != ACCT_NO_VAL) {
        l = copy_u64 (id, sizeof (id), row->array_job_id);
        id[l++] = '_';
        l += copy_u64 (id + l, sizeof (id) - l, row->array_task_id);
    } else {
        l = copy_u64 (id, sizeof (id), row->job_id);
    }
    if (row->is_step) {
        id[l++] = '.';
        acct_fmt_stepname (row->step_id, id + l, sizeof (id) - l);
    }
    copy_str (buf, n, id);
}

int64_t acct_row_elapsed_s (const struct acct_row *row)
{
    if (row->dbd.valid) /* slurmdbd's, as sacct prints it */
        return row->dbd.elapsed > 0 ? row->dbd.elapsed : 0;
    if (row->start_us <= 0 || row->end_us < row->start_us)
        return 0;
    return (row->end_us - row->start_us) / 1000000;
}

double acct_row_eff (const struct acct_row *row)
{
    double el;

    if (row->start_us <= 0 || row->end_us <= row->start_us
        || row->alloc_cpus == 0)
        return -1;
    el = (double)(row->end_us - row->start_us);
    return (double)(row->user_usec + row->system_usec)
           / (el * row->alloc_cpus);
}

static bool put (char *buf, size_t n, const char *s)
{
    copy_str (buf, n, s ? s : "");
    return s != NULL;
}

static bool row_field (const struct acct_row *row,
                       int id,
                       char *buf,
                       size_t n);

/* Text from records is the users' (job names): a control character
 * (newline, escape sequence, C1, bidi control, bad UTF-8) becomes '?'
 * (text_sanitize), so that a row stays one line and a terminal shows
 * what is there. */
/* The time Start, End or Submit prints: slurmdbd's (whole seconds) when
 * the row was read from it, as sacct prints them, else the record's; a
 * step's Submit is its start, as in sacct. */
static int64_t shown_date_us (const struct acct_row *row, int id)
{
    if (id == ACCT_F_SUBMIT && !row->is_step)
        return row->submit_us;
    if (id == ACCT_F_END)
        return row->dbd.valid ? row->dbd.end * 1000000 : row->end_us;
    return row->dbd.valid ? row->dbd.start * 1000000 : row->start_us;
}

bool acct_row_field (const struct acct_row *row, int id, char *buf, size_t n)
{
    bool has = row_field (row, id, buf, n);

    text_sanitize (buf, n, buf, 0);
    return has;
}

static bool row_field (const struct acct_row *row, int id, char *buf, size_t n)
{
    if (n)
        buf[0] = '\0';
    switch (id) {
        case ACCT_F_JOBID:
            acct_row_jobid (row, false, buf, n);
            return true;
        case ACCT_F_JOBIDRAW:
            acct_row_jobid (row, true, buf, n);
            return true;
        case ACCT_F_JOBNAME:
            /* sacct prints the step name; records carry the job's name, so
             * numbered steps show it and the special steps their own name */
            if (row->is_step
                && (row->step_id == ACCT_STEP_BATCH
                    || row->step_id == ACCT_STEP_EXTERN
                    || row->step_id == ACCT_STEP_INTERACTIVE)) {
                acct_fmt_stepname (row->step_id, buf, n);
                return true;
            }
            return put (buf, n, row->job_name);
        case ACCT_F_USER: /* sacct leaves both blank on step lines */
            return row->is_step ? false : put (buf, n, row->user);
        case ACCT_F_PARTITION:
            return row->is_step ? false : put (buf, n, row->partition);
        case ACCT_F_NODELIST:
            return put (buf, n, row->nodelist ? row->nodelist : row->nodes);
        case ACCT_F_ALLOCCPUS:
            copy_u64 (buf, n, row->alloc_cpus);
            return true;
        case ACCT_F_ELAPSED:
            acct_fmt_secs (acct_row_elapsed_s (row), buf, n);
            return true;
        case ACCT_F_TOTALCPU:
            acct_fmt_cputime (row->user_usec + row->system_usec, buf, n);
            return true;
        case ACCT_F_USERCPU:
            acct_fmt_cputime (row->user_usec, buf, n);
            return true;
        case ACCT_F_SYSTEMCPU:
            acct_fmt_cputime (row->system_usec, buf, n);
            return true;
        case ACCT_F_CPUTIME:
            acct_fmt_secs (acct_row_elapsed_s (row) * (int64_t)row->alloc_cpus,
                           buf,
                           n);
            return true;
        case ACCT_F_START: /* slurmdbd's when read from it, as sacct */
            acct_fmt_date (shown_date_us (row, ACCT_F_START), buf, n);
            return true;
        case ACCT_F_END:
            acct_fmt_date (shown_date_us (row, ACCT_F_END), buf, n);
            return true;
        case ACCT_F_STATE:
            return put (buf, n, row->state[0] ? row->state : NULL);
        case ACCT_F_EXITCODE:
            acct_fmt_exitcode (row->exit_status, buf, n);
            return row->exit_status >= 0;
        case ACCT_F_CPUEFF: {
            double eff = acct_row_eff (row);
            acct_fmt_eff (eff, buf, n);
            return eff >= 0;
        }
        case ACCT_F_CLUSTER:
            return put (buf, n, row->cluster[0] ? row->cluster : NULL);
        case ACCT_F_ACCOUNT: /* sacct: the job's, on its steps too */
            return put (buf, n, row->account[0] ? row->account : NULL);
        case ACCT_F_QOS: /* sacct: job lines only */
            return put (buf,
                        n,
                        !row->is_step && row->qos[0] ? row->qos : NULL);
        case ACCT_F_REASON:
            return put (buf,
                        n,
                        !row->is_step && row->reason[0] ? row->reason : NULL);
        case ACCT_F_SUBMIT: /* sacct: a step's is its start */
            acct_fmt_date (shown_date_us (row, ACCT_F_SUBMIT), buf, n);
            return true;
        case ACCT_F_TIMELIMIT: /* job lines; 0: blank */
            if (row->is_step || !row->has_timelimit || !row->timelimit)
                return false;
            acct_fmt_timelimit (row->timelimit, buf, n);
            return true;
        case ACCT_F_REQMEM: /* job lines */
            if (row->is_step || !row->req_mem)
                return false;
            acct_fmt_units ((double)row->req_mem, 2, 0, false, buf, n);
            return true;
        case ACCT_F_MAXRSS: /* sacct: steps only */
            if (!row->is_step || !row->has_max_rss)
                return false;
            acct_fmt_units ((double)row->max_rss, 0, 0, false, buf, n);
            return true;
        case ACCT_F_NNODES:
            snprintf (buf, n, "%" PRIu32, acct_row_nnodes (row));
            return true;
        case ACCT_F_PINPOLICY:
            return put (buf, n, row->policy);
        case ACCT_F_FALLBACK:
            return put (buf, n, row->fallback);
        case ACCT_F_GPUS: /* "-": placed near no GPU (doc/policies.md) */
            return put (buf, n, row->gpus && *row->gpus ? row->gpus : "-");
        case ACCT_F_NIC:
            return put (buf, n, row->nic && *row->nic ? row->nic : "-");
        case ACCT_F_EXPERIMENT: /* not enrolled: blank, as sacct */
            return put (buf, n, row->experiment);
        case ACCT_F_ARM:
            return put (buf, n, row->arm);
        case ACCT_F_CPUSET:
            return put (buf, n, acct_row_cpus (row));
        case ACCT_F_MEMS:
            return put (buf, n, acct_row_mems (row));
        case ACCT_F_THROTTLED:
            if (!row->has_throttle)
                return false;
            acct_fmt_cputime (row->throttled_usec, buf, n);
            return true;
        case ACCT_F_MEMPEAK:
            if (!row->has_mem_peak)
                return false;
            acct_fmt_bytes (row->mem_peak, buf, n);
            return true;
        case ACCT_F_CONFINED:
            /* time into the step when the dynamic policy confined it */
            if (row->confined_us <= 0 || row->confined_us < row->start_us)
                return false;
            acct_fmt_secs ((row->confined_us - row->start_us) / 1000000,
                           buf,
                           n);
            return true;
    }
    return false;
}

/* ---- printing ------------------------------------------------------ */

static const char *delim_of (const struct acct_out *out)
{
    return out->delim ? out->delim : "|";
}

void acct_print_header (FILE *f,
                        const struct acct_fmt *fmt,
                        const struct acct_out *out)
{
    if (out->noheader)
        return;
    for (int i = 0; i < fmt->n; i++) {
        const char *name = fields[fmt->f[i].id].name;
        int w = fmt->f[i].width, aw = abs (w);
        bool last = (i == fmt->n - 1);

        if (out->mode == ACCT_OUT_PARSABLE2 && last)
            fputs (name, f);
        else if (out->mode != ACCT_OUT_FIXED)
            fprintf (f, "%s%s", name, delim_of (out));
        else
            fprintf (f, "%*.*s ", w, aw, name);
    }
    fputc ('\n', f);
    if (out->mode != ACCT_OUT_FIXED)
        return;
    for (int i = 0; i < fmt->n; i++) {
        for (int k = abs (fmt->f[i].width); k > 0; k--)
            fputc ('-', f);
        fputc (' ', f);
    }
    fputc ('\n', f);
}

/* The time a date column of the row prints (0: Unknown or None). */
static int64_t date_of (const struct acct_row *row, int id)
{
    return id == ACCT_F_START ? row->start_us
         : id == ACCT_F_END   ? row->end_us
         : row->is_step       ? row->start_us
                              : row->submit_us;
}

/* A date cut to a column of `aw` characters as slurm_make_time_str()
 * cuts it: the first aw characters, or (Slurm >= 23.11, `hash`) aw '#'s
 * for a date that does not fit; "Unknown" and "None" are cut. */
static void cut_date (char *buf, int aw, bool hash)
{
    if ((int)strlen (buf) <= aw)
        return;
    if (hash)
        memset (buf, '#', (size_t)aw);
    buf[aw] = '\0';
}

/* `n` spaces */
static void put_spaces (FILE *f, size_t n)
{
    static const char sp[] = "                                ";

    while (n > 0) {
        size_t k = n < sizeof (sp) - 1 ? n : sizeof (sp) - 1;
        fwrite (sp, 1, k, f);
        n -= k;
    }
}

/* s in a column of aw characters and a blank, as printf's "%*.*s " (cut
 * to aw characters) or "%*s " (never cut), "%-..." when `left` (a row has
 * a million of these: printf's parsing of the format was a tenth of a
 * listing's time). */
static void put_col (FILE *f, const char *s, int aw, bool left, bool cut)
{
    size_t len = strlen (s), w = aw > 0 ? (size_t)aw : 0;

    if (cut && len > w)
        len = w;
    if (!left && len < w)
        put_spaces (f, w - len);
    fwrite (s, 1, len, f);
    if (left && len < w)
        put_spaces (f, w - len);
    fputc (' ', f);
}

void acct_print_row (FILE *f,
                     const struct acct_fmt *fmt,
                     const struct acct_out *out,
                     const struct acct_row *row)
{
    char buf[8192];

    for (int i = 0; i < fmt->n; i++) {
        int id = fmt->f[i].id, w = fmt->f[i].width, aw = abs (w);
        bool last = (i == fmt->n - 1);
        bool has = acct_row_field (row, id, buf, sizeof (buf));

        if (out->date_fmt
            && (id == ACCT_F_START || id == ACCT_F_END || id == ACCT_F_SUBMIT))
            acct_fmt_date_fmt (shown_date_us (row, id),
                               out->date_fmt,
                               buf,
                               sizeof (buf));
        if (has && (out->units || out->noconvert)
            && (id == ACCT_F_MAXRSS || id == ACCT_F_REQMEM))
            acct_fmt_units (id == ACCT_F_MAXRSS ? (double)row->max_rss
                                                : (double)row->req_mem,
                            id == ACCT_F_MAXRSS ? 0 : 2,
                            out->units,
                            out->noconvert,
                            buf,
                            sizeof (buf));

        /* print_fields_date: slurm_make_time_str() into a buffer of the
         * column's width; in -p and -P too before Slurm 23.02 (from
         * 23.02.1 a 256-byte one there: no cut).  Told apart by the '#'
         * fill of slurm_make_time_str (23.02.5): out->date_hash */
        if (has && fields[id].kind == K_DATE
            && (out->mode == ACCT_OUT_FIXED || !out->date_hash))
            cut_date (buf, aw, out->date_hash && date_of (row, id) > 0);
        if (out->mode == ACCT_OUT_PARSABLE2 && last) {
            fputs (has ? buf : "", f);
            continue;
        }
        if (out->mode != ACCT_OUT_FIXED) {
            if (has)
                fputs (buf, f);
            fputs (delim_of (out), f);
            continue;
        }
        if (!has) {
            put_col (f, "", aw, false, false);
            continue;
        }
        switch (fields[id].kind) {
            case K_STR:
                if ((int)strlen (buf) > aw && aw > 0)
                    buf[aw - 1] = '+';
                /* fall through */
            case K_DATE:
                put_col (f, buf, aw, w < 0, true);
                break;
            case K_NUM:
            case K_TIME:
                put_col (f, buf, aw, w < 0, false);
                break;
        }
    }
    fputc ('\n', f);
}

/* ---- the table --------------------------------------------------------- */

void acct_table_init (struct acct_table *t)
{
    memset (t, 0, sizeof (*t));
}

static void row_free (struct acct_row *row)
{
    free (row->nodes);
    free (row->nodelist);
    free (row->policy);
    free (row->fallback);
    free (row->gpus);
    free (row->nic);
    free (row->experiment);
    free (row->arm);
    free (row->block);
    free (row->cpus);
    free (row->mems);
}

void acct_table_free (struct acct_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->njobs; i++) {
        row_free (&t->jobs[i].job);
        for (size_t k = 0; k < t->jobs[i].nsteps; k++)
            row_free (&t->jobs[i].steps[k]);
        free (t->jobs[i].steps);
    }
    free (t->jobs);
    free (t->hash);
    acct_table_init (t);
}

/* Is `tok` one of the `sep`-separated items of `list`? */
static bool has_item (const char *list, const char *tok, char sep)
{
    size_t tl = strlen (tok);

    for (const char *p = list; p && *p;) {
        const char *e = strchr (p, sep);
        size_t len = e ? (size_t)(e - p) : strlen (p);
        if (len == tl && strncmp (p, tok, tl) == 0)
            return true;
        p = e ? e + 1 : NULL;
    }
    return false;
}

/* Append `item` to the `sep` list *s unless there already (or empty when
 * !keep_empty).  -1 on ENOMEM. */
static int add_item (char **s, const char *item, char sep, bool uniq)
{
    size_t old, il = strlen (item);
    char *n;

    if (uniq && *s && has_item (*s, item, sep))
        return 0;
    if (!*s)
        return (*s = strdup (item)) ? 0 : -1;
    old = strlen (*s);
    if (!(n = realloc (*s, old + il + 2)))
        return -1;
    n[old] = sep;
    memcpy (n + old + 1, item, il + 1);
    *s = n;
    return 0;
}

/* Append "node:value" for a per-node value (cpus, mems). */
static int add_node_value (char **s, const char *node, const char *value)
{
    char item[2 * ACCT_STR + 2];

    size_t l = copy_str (item, sizeof (item), node);

    if (l + 1 < sizeof (item)) { /* "%s:%s" */
        item[l++] = ':';
        copy_str (item + l, sizeof (item) - l, value);
    }
    return add_item (s, item, ';', false);
}

static bool worse_status (int32_t a, int32_t b) /* is a worse than b? */
{
    if (b < 0)
        return a >= 0;
    if (a < 0)
        return false;
    if (WIFSIGNALED (a) != WIFSIGNALED (b))
        return WIFSIGNALED (a);
    return a > b;
}

static void row_job_values (struct acct_row *row, const struct acct_record *r);

static void row_start (struct acct_row *row,
                       const struct acct_record *r,
                       bool is_step)
{
    memset (row, 0, sizeof (*row));
    row->is_step = is_step;
    copy_str (row->cluster, sizeof (row->cluster), r->cluster);
    row->job_id = r->job_id;
    row->step_id = is_step ? r->step_id : ACCT_NO_VAL;
    row->array_job_id = r->array_job_id;
    row->array_task_id = r->array_task_id;
    row->uid = r->uid;
    copy_str (row->user, sizeof (row->user), r->user);
    copy_str (row->partition, sizeof (row->partition), r->partition);
    copy_str (row->job_name, sizeof (row->job_name), r->job_name);
    row->exit_status = -1;
    row_job_values (row, r);
}

/* The job's values (acct.h) from the first record that has them. */
static void row_job_values (struct acct_row *row, const struct acct_record *r)
{
    if (!row->account[0])
        copy_str (row->account, sizeof (row->account), r->account);
    if (!row->qos[0])
        copy_str (row->qos, sizeof (row->qos), r->qos);
    if (!row->reason[0])
        copy_str (row->reason, sizeof (row->reason), r->reason);
    if (!row->submit_us)
        row->submit_us = r->submit_us;
    if (!row->has_timelimit && r->has_timelimit) {
        row->has_timelimit = true;
        row->timelimit = r->timelimit;
    }
    if (!row->req_mem)
        row->req_mem = r->req_mem;
    if (r->has_max_rss && (!row->has_max_rss || r->max_rss > row->max_rss)) {
        row->has_max_rss = true;
        row->max_rss = r->max_rss;
    }
    if (!row->dbd_nnodes)
        row->dbd_nnodes = r->nnodes;
}

uint32_t acct_row_nnodes (const struct acct_row *row)
{
    uint32_t n = 0;

    if (row->dbd_nnodes)
        return row->dbd_nnodes;
    for (const char *p = row->nodes; p && *p;
         p = strchr (p, ','), p = p ? p + 1 : NULL)
        n++;
    return n;
}

/* Merge one node's record (or one step row, for a job line built from
 * steps: node "" then) into `row`. */
static int row_merge (struct acct_row *row, const struct acct_record *r)
{
    if (add_item (&row->nodes, r->node, ',', true) < 0
        || add_item (&row->policy,
                     r->policy[0] ? r->policy : "none",
                     ',',
                     true)
               < 0
        || (r->fallback[0]
            && add_item (&row->fallback, r->fallback, ',', true) < 0)
        || (r->gpus[0] && add_item (&row->gpus, r->gpus, ',', true) < 0)
        || (r->nic[0] && add_item (&row->nic, r->nic, ',', true) < 0)
        || (r->experiment[0]
            && add_item (&row->experiment, r->experiment, ',', true) < 0)
        || (r->arm[0] && add_item (&row->arm, r->arm, ',', true) < 0)
        || (r->block[0] && add_item (&row->block, r->block, ',', true) < 0)
        || (r->cpus[0] && add_node_value (&row->cpus, r->node, r->cpus) < 0)
        || (r->mems[0] && add_node_value (&row->mems, r->node, r->mems) < 0))
        return -1;
    row_job_values (row, r);
    if (r->dbd.valid && !row->dbd.valid)
        row->dbd = r->dbd;
    row->nnodes++;
    row->nrecords++;
    row->alloc_cpus += r->alloc_cpus;
    if (r->start_us > 0 && (row->start_us <= 0 || r->start_us < row->start_us))
        row->start_us = r->start_us;
    if (r->end_us > row->end_us)
        row->end_us = r->end_us;
    row->user_usec += r->user_usec;
    row->system_usec += r->system_usec;
    if (r->has_throttle) {
        row->has_throttle = true;
        row->throttled_usec += r->throttled_usec;
        row->nr_throttled += r->nr_throttled;
        row->nr_periods += r->nr_periods;
    }
    if (r->has_mem_peak) {
        if (!row->has_mem_peak || r->mem_peak > row->mem_peak)
            row->mem_peak = r->mem_peak;
        row->has_mem_peak = true;
    }
    if (worse_status (r->exit_status, row->exit_status))
        row->exit_status = r->exit_status;
    /* the first state that is not COMPLETED; UNKNOWN (a node that knew
     * nothing of the job: acct_job_from_steps) only when no node knew */
    if (r->state[0]
        && (!row->state[0]
            || (strcmp (r->state, "UNKNOWN")
                && (!strcmp (row->state, "UNKNOWN")
                    || (!strcmp (row->state, "COMPLETED")
                        && strcmp (r->state, "COMPLETED"))))))
        copy_str (row->state, sizeof (row->state), r->state);
    if (r->confined_us > 0
        && (row->confined_us <= 0 || r->confined_us < row->confined_us)) {
        row->confined_us = r->confined_us;
        row->confine_use = r->confine_use;
        snprintf (row->confine_cpus,
                  sizeof (row->confine_cpus),
                  "%s",
                  r->confine_cpus);
    }
    if (r->has_seed && !row->has_seed) {
        row->has_seed = true;
        row->seed = r->seed;
    }
    return 0;
}

static size_t hash_slot (const struct acct_table *t, uint32_t job_id)
{
    return ((size_t)job_id * 2654435761u) & (t->hashcap - 1);
}

/* The hash of job ids: journals hold months of jobs, so no linear search.
 * Rebuilt when it would be more than half full or after a sort. */
static int hash_rebuild (struct acct_table *t)
{
    size_t cap = t->hashcap ? t->hashcap : 64;
    size_t *h;

    while (cap < 2 * (t->njobs + 1))
        cap *= 2;
    if (!(h = calloc (cap, sizeof (*h))))
        return -1;
    free (t->hash);
    t->hash = h;
    t->hashcap = cap;
    for (size_t i = 0; i < t->njobs; i++) {
        size_t s = hash_slot (t, t->jobs[i].job.job_id);
        while (t->hash[s])
            s = (s + 1) & (cap - 1);
        t->hash[s] = i + 1;
    }
    return 0;
}

static struct acct_job *find_job (struct acct_table *t,
                                  const struct acct_record *r)
{
    if (!t->hashcap)
        return NULL;
    for (size_t s = hash_slot (t, r->job_id); t->hash[s];
         s = (s + 1) & (t->hashcap - 1)) {
        struct acct_job *j = &t->jobs[t->hash[s] - 1];
        /* a reused job id: another job, told by its Submit */
        if (j->job.job_id == r->job_id
            && strcmp (j->job.cluster, r->cluster) == 0
            && (!j->job.submit_us || !r->submit_us
                || j->job.submit_us == r->submit_us))
            return j;
    }
    return NULL;
}

int acct_table_add (struct acct_table *t, const struct acct_record *r)
{
    struct acct_job *j = find_job (t, r);
    struct acct_row *row = NULL;

    if (!j) {
        if (2 * (t->njobs + 1) > t->hashcap && hash_rebuild (t) < 0)
            return -1;
        if (t->njobs == t->capjobs) {
            size_t cap = t->capjobs ? 2 * t->capjobs : 16;
            struct acct_job *n = realloc (t->jobs, cap * sizeof (*n));
            if (!n)
                return -1;
            t->jobs = n;
            t->capjobs = cap;
        }
        j = &t->jobs[t->njobs++];
        memset (j, 0, sizeof (*j));
        row_start (&j->job, r, false);
        {
            size_t s = hash_slot (t, r->job_id);
            while (t->hash[s])
                s = (s + 1) & (t->hashcap - 1);
            t->hash[s] = t->njobs;
        }
    }
    if (r->kind == ACCT_KIND_JOB) {
        if (j->has_job_record && has_item (j->job.nodes, r->node, ','))
            return 0;             /* the same node twice */
        if (!j->has_job_record) { /* drop a line built earlier */
            row_free (&j->job);
            row_start (&j->job, r, false);
            j->has_job_record = true;
        }
        return row_merge (&j->job, r);
    }
    for (size_t k = 0; k < j->nsteps; k++) {
        if (j->steps[k].step_id == r->step_id) {
            row = &j->steps[k];
            break;
        }
    }
    if (row && has_item (row->nodes, r->node, ','))
        return 0;
    if (!row) {
        if (j->nsteps == j->capsteps) {
            size_t cap = j->capsteps ? 2 * j->capsteps : 4;
            struct acct_row *n = realloc (j->steps, cap * sizeof (*n));
            if (!n)
                return -1;
            j->steps = n;
            j->capsteps = cap;
        }
        row = &j->steps[j->nsteps++];
        row_start (row, r, true);
    }
    /* the job's identity from any record (a job record may be missing) */
    if (!j->job.user[0])
        copy_str (j->job.user, sizeof (j->job.user), r->user);
    return row_merge (row, r);
}

static int step_rank (uint32_t id)
{
    switch (id) {
        case ACCT_STEP_BATCH:
            return 0;
        case ACCT_STEP_EXTERN:
            return 1;
        case ACCT_STEP_INTERACTIVE:
            return 2;
    }
    return 3;
}

static int cmp_steps (const void *a, const void *b)
{
    const struct acct_row *x = a, *y = b;

    if (x->start_us != y->start_us)
        return x->start_us < y->start_us ? -1 : 1;
    if (step_rank (x->step_id) != step_rank (y->step_id))
        return step_rank (x->step_id) - step_rank (y->step_id);
    return x->step_id < y->step_id ? -1 : x->step_id > y->step_id;
}

static uint32_t sort_key (const struct acct_row *r)
{
    return r->array_job_id != ACCT_NO_VAL ? r->array_job_id : r->job_id;
}

static int cmp_jobs (const void *a, const void *b)
{
    const struct acct_row *x = &((const struct acct_job *)a)->job;
    const struct acct_row *y = &((const struct acct_job *)b)->job;
    uint32_t kx = sort_key (x), ky = sort_key (y);

    if (kx != ky)
        return kx < ky ? -1 : 1;
    if (x->array_task_id != y->array_task_id)
        return x->array_task_id < y->array_task_id ? -1 : 1;
    if (x->job_id != y->job_id)
        return x->job_id < y->job_id ? -1 : 1;
    if (strcmp (x->cluster, y->cluster))
        return strcmp (x->cluster, y->cluster);
    return x->submit_us < y->submit_us ? -1 : x->submit_us > y->submit_us;
}

/* sacct's own order (src/sacct/options.c _sort_desc_submit_time, 22.05
 * to 26.05): Submit in seconds, then the array job id (0: none), the task
 * id, the job id; jobs of several clusters last by cluster. */
static int cmp_sacct (const void *a, const void *b)
{
    const struct acct_row *x = &((const struct acct_job *)a)->job;
    const struct acct_row *y = &((const struct acct_job *)b)->job;
    int64_t sx = x->submit_us / 1000000, sy = y->submit_us / 1000000;
    uint32_t ax = x->array_job_id != ACCT_NO_VAL ? x->array_job_id : 0;
    uint32_t ay = y->array_job_id != ACCT_NO_VAL ? y->array_job_id : 0;

    if (sx != sy)
        return sx < sy ? -1 : 1;
    if (ax != ay)
        return ax < ay ? -1 : 1;
    if (x->array_task_id != y->array_task_id)
        return x->array_task_id < y->array_task_id ? -1 : 1;
    if (x->job_id != y->job_id)
        return x->job_id < y->job_id ? -1 : 1;
    return strcmp (x->cluster, y->cluster);
}

int acct_table_order (struct acct_table *t)
{
    /* a job without a Submit (records written before it was recorded)
     * has no place in that order: then acct_table_sort's stays */
    for (size_t i = 0; i < t->njobs; i++)
        if (t->jobs[i].job.submit_us <= 0)
            return 0;
    if (t->njobs > 1)
        qsort (t->jobs, t->njobs, sizeof (t->jobs[0]), cmp_sacct);
    return t->hashcap ? hash_rebuild (t) : 0;
}

int acct_table_latest (struct acct_table *t)
{
    size_t k = 0;

    /* sorted: the jobs of one cluster and job id are together, the most
     * recently submitted last */
    for (size_t i = 0; i < t->njobs; i++) {
        struct acct_job *j = &t->jobs[i];
        if (i + 1 < t->njobs && t->jobs[i + 1].job.job_id == j->job.job_id
            && strcmp (t->jobs[i + 1].job.cluster, j->job.cluster) == 0) {
            row_free (&j->job);
            for (size_t s = 0; s < j->nsteps; s++)
                row_free (&j->steps[s]);
            free (j->steps);
            continue;
        }
        if (k != i)
            t->jobs[k] = *j;
        k++;
    }
    if (k == t->njobs)
        return 0;
    t->njobs = k;
    return hash_rebuild (t);
}

/* "n1:0-3" alone: "0-3" (one node needs no name). */
static const char *one_node (const char *s, unsigned nnodes)
{
    const char *c;

    if (s && nnodes == 1 && (c = strchr (s, ':')))
        return c + 1;
    return s;
}

const char *acct_row_cpus (const struct acct_row *row)
{
    return one_node (row->cpus, row->nnodes);
}

const char *acct_row_mems (const struct acct_row *row)
{
    return one_node (row->mems, row->nnodes);
}

/* A job line from its step rows, for a job without a job record: the
 * CPUs are the most any step had (steps share the allocation). */
static int job_from_steps (struct acct_job *j)
{
    struct acct_row *job = &j->job;
    struct acct_row id = *job;
    uint32_t alloc = 0;

    /* start over: a table sorted twice builds the line twice */
    row_free (job);
    memset (job, 0, sizeof (*job));
    memcpy (job->cluster, id.cluster, sizeof (job->cluster));
    job->job_id = id.job_id;
    job->step_id = ACCT_NO_VAL;
    job->array_job_id = id.array_job_id;
    job->array_task_id = id.array_task_id;
    job->uid = id.uid;
    memcpy (job->user, id.user, sizeof (job->user));
    memcpy (job->partition, id.partition, sizeof (job->partition));
    memcpy (job->job_name, id.job_name, sizeof (job->job_name));
    memcpy (job->account, id.account, sizeof (job->account));
    memcpy (job->qos, id.qos, sizeof (job->qos));
    memcpy (job->reason, id.reason, sizeof (job->reason));
    job->submit_us = id.submit_us;
    job->has_timelimit = id.has_timelimit;
    job->timelimit = id.timelimit;
    job->req_mem = id.req_mem;
    job->exit_status = -1;
    job->from_steps = true;
    for (size_t k = 0; k < j->nsteps; k++) {
        struct acct_row *s = &j->steps[k];
        const char *save;

        if (s->alloc_cpus > alloc)
            alloc = s->alloc_cpus;
        for (const char *p = s->nodes; p && *p;) {
            const char *e = strchr (p, ',');
            char node[ACCT_STR];
            size_t len = e ? (size_t)(e - p) : strlen (p);
            snprintf (node, sizeof (node), "%.*s", (int)len, p);
            if (add_item (&job->nodes, node, ',', true) < 0)
                return -1;
            p = e ? e + 1 : NULL;
        }
        for (const char *p = s->policy; p && *p;) {
            const char *e = strchr (p, ',');
            char pol[ACCT_STR];
            size_t len = e ? (size_t)(e - p) : strlen (p);
            snprintf (pol, sizeof (pol), "%.*s", (int)len, p);
            if (add_item (&job->policy, pol, ',', true) < 0)
                return -1;
            p = e ? e + 1 : NULL;
        }
        if (s->fallback
            && add_item (&job->fallback, s->fallback, ',', true) < 0)
            return -1;
        if (s->gpus && add_item (&job->gpus, s->gpus, ',', true) < 0)
            return -1;
        if (s->nic && add_item (&job->nic, s->nic, ',', true) < 0)
            return -1;
        if (s->start_us > 0
            && (job->start_us <= 0 || s->start_us < job->start_us))
            job->start_us = s->start_us;
        if (s->end_us > job->end_us)
            job->end_us = s->end_us;
        job->user_usec += s->user_usec;
        job->system_usec += s->system_usec;
        if (s->has_throttle) {
            job->has_throttle = true;
            job->throttled_usec += s->throttled_usec;
            job->nr_throttled += s->nr_throttled;
            job->nr_periods += s->nr_periods;
        }
        if (s->has_mem_peak
            && (!job->has_mem_peak || s->mem_peak > job->mem_peak)) {
            job->has_mem_peak = true;
            job->mem_peak = s->mem_peak;
        }
        if (worse_status (s->exit_status, job->exit_status))
            job->exit_status = s->exit_status;
        save = job->state;
        if (s->state[0]
            && (!save[0]
                || (strcmp (save, "COMPLETED") == 0
                    && strcmp (s->state, "COMPLETED"))))
            copy_str (job->state, sizeof (job->state), s->state);
        if (s->confined_us > 0
            && (job->confined_us <= 0 || s->confined_us < job->confined_us))
            job->confined_us = s->confined_us;
        job->nrecords += s->nrecords;
    }
    /* sacct's job ExitCode and State are the batch script's (acct-core's
     * acct_job_from_steps does the same); without one, the worst step's */
    for (size_t k = 0; k < j->nsteps; k++) {
        if (j->steps[k].step_id == ACCT_STEP_BATCH) {
            job->exit_status = j->steps[k].exit_status;
            if (j->steps[k].state[0])
                memcpy (job->state, j->steps[k].state, sizeof (job->state));
        }
    }
    /* the extern step alone says nothing of the job's outcome (it ends
     * the same way whatever the job did): UNKNOWN, as acct_job_from_steps
     * has it, so that a node or slurmdbd that knows wins the merge */
    {
        bool outcome = false;
        for (size_t k = 0; k < j->nsteps; k++)
            outcome |= j->steps[k].step_id != ACCT_STEP_EXTERN;
        if (!outcome) {
            job->exit_status = -1;
            snprintf (job->state, sizeof (job->state), "UNKNOWN");
        }
    }
    job->alloc_cpus = alloc;
    job->nnodes = 0;
    if (job->nodes && job->nodes[0]) {
        job->nnodes = 1;
        for (const char *p = job->nodes; *p; p++)
            job->nnodes += (*p == ',');
    }
    return 0;
}

/* Append each item of the ',' list `list` to *dst, once. */
static int add_items (char **dst, const char *list)
{
    for (const char *p = list; p && *p;) {
        const char *e = strchr (p, ',');
        char item[ACCT_STR];
        size_t len = e ? (size_t)(e - p) : strlen (p);
        snprintf (item, sizeof (item), "%.*s", (int)len, p);
        if (item[0] && add_item (dst, item, ',', true) < 0)
            return -1;
        p = e ? e + 1 : NULL;
    }
    return 0;
}

/* The job line's experiment, arm and block, when its records (job
 * records, written at the job's end) carry none: its steps'. */
static int job_enrolment (struct acct_job *j)
{
    struct acct_row *job = &j->job;
    bool e = !job->experiment, a = !job->arm, b = !job->block;

    for (size_t k = 0; k < j->nsteps; k++) {
        const struct acct_row *s = &j->steps[k];
        if ((e && add_items (&job->experiment, s->experiment) < 0)
            || (a && add_items (&job->arm, s->arm) < 0)
            || (b && add_items (&job->block, s->block) < 0))
            return -1;
    }
    return 0;
}

int acct_table_sort (struct acct_table *t)
{
    for (size_t i = 0; i < t->njobs; i++) {
        struct acct_job *j = &t->jobs[i];

        if (!j->has_job_record && job_from_steps (j) < 0)
            return -1;
        if (job_enrolment (j) < 0)
            return -1;
        if (j->nsteps > 1)
            qsort (j->steps, j->nsteps, sizeof (j->steps[0]), cmp_steps);
    }
    if (t->njobs > 1)
        qsort (t->jobs, t->njobs, sizeof (t->jobs[0]), cmp_jobs);
    /* the indexes moved: a later add rebuilds the hash */
    return t->hashcap ? hash_rebuild (t) : 0;
}

/* ---- selection ------------------------------------------------------- */

static int parse_u32 (const char *s, size_t len, uint32_t *out)
{
    uint64_t v = 0;

    if (len == 0 || len > 10)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (v >= ACCT_STEP_INTERACTIVE) /* Slurm's special values */
        return -1;
    *out = (uint32_t)v;
    return 0;
}

static int jobsel_one (const char *tok, struct acct_jobsel *js)
{
    const char *dot = strchr (tok, '.');
    const char *us = strchr (tok, '_');
    size_t idlen = dot ? (size_t)(dot - tok) : strlen (tok);

    js->task = ACCT_NO_VAL;
    js->has_step = false;
    if (us && (!dot || us < dot)) {
        if (parse_u32 (tok, (size_t)(us - tok), &js->id) < 0
            || parse_u32 (us + 1, idlen - (size_t)(us + 1 - tok), &js->task)
                   < 0)
            return -1;
    } else if (parse_u32 (tok, idlen, &js->id) < 0)
        return -1;
    if (!dot)
        return 0;
    js->has_step = true;
    if (strcmp (dot + 1, "batch") == 0)
        js->step = ACCT_STEP_BATCH;
    else if (strcmp (dot + 1, "extern") == 0)
        js->step = ACCT_STEP_EXTERN;
    else if (strcmp (dot + 1, "interactive") == 0)
        js->step = ACCT_STEP_INTERACTIVE;
    else if (parse_u32 (dot + 1, strlen (dot + 1), &js->step) < 0)
        return -1;
    return 0;
}

int acct_jobsel_parse (const char *s,
                       struct acct_jobsel **sel,
                       size_t *n,
                       pin_error_t *errp)
{
    const char *p = s ? s : "";

    while (*p) {
        char tok[64];
        size_t len = strcspn (p, ",");
        struct acct_jobsel js, *ns;

        if (len == 0) {
            p++;
            continue;
        }
        if (len >= sizeof (tok)
            || (memcpy (tok, p, len),
                tok[len] = '\0',
                jobsel_one (tok, &js) < 0))
            return errprintf (errp,
                              "invalid job id \"%.*s\": use JOBID, "
                              "ARRAYJOBID_TASK, or either with .STEP (a "
                              "number, batch, extern, interactive)",
                              (int)(len > 40 ? 40 : len),
                              p);
        if (!(ns = realloc (*sel, (*n + 1) * sizeof (*ns))))
            return errprintf (errp, "out of memory");
        *sel = ns;
        ns[(*n)++] = js;
        p += len;
    }
    if (*n == 0)
        return errprintf (errp, "no job id given");
    return 0;
}

bool acct_jobsel_job (const struct acct_jobsel *sel,
                      const struct acct_row *job)
{
    if (sel->task != ACCT_NO_VAL)
        return job->array_job_id == sel->id && job->array_task_id == sel->task;
    return job->job_id == sel->id
           || (job->array_job_id == sel->id
               && job->array_task_id != ACCT_NO_VAL);
}

static int parse_delta (const char *s, int64_t *secs)
{
    static const struct {
        const char *name;
        size_t min;
        int64_t mul;
    } u[] = {
        {"seconds", 1, 1},
        {"minutes", 1, 60},
        {"hours", 1, 3600},
        {"days", 1, 86400},
        {"weeks", 1, 604800},
    };
    char *end;
    long long v;
    size_t ul;

    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    v = strtoll (s, &end, 10);
    if (errno || v > 100LL * 365 * 86400)
        return -1;
    if (*end == '\0') {
        *secs = v;
        return 0;
    }
    ul = strlen (end);
    for (size_t i = 0; i < sizeof (u) / sizeof (u[0]); i++) {
        if (ul >= u[i].min && ul <= strlen (u[i].name)
            && strncasecmp (end, u[i].name, ul) == 0) {
            *secs = v * u[i].mul;
            return 0;
        }
    }
    return -1;
}

int acct_parse_time (const char *s, time_t now, int64_t *us, pin_error_t *errp)
{
    struct tm tm;
    time_t t;
    int Y, M, D, h = 0, m = 0, sec = 0, len = 0;

    if (!s || !localtime_r (&now, &tm))
        goto bad;
    if (strncasecmp (s, "now", 3) == 0) {
        int64_t d = 0;
        if (s[3]
            && ((s[3] != '+' && s[3] != '-') || parse_delta (s + 4, &d) < 0))
            goto bad;
        *us = ((int64_t)now + (s[3] == '-' ? -d : d)) * 1000000;
        return 0;
    }
    tm.tm_isdst = -1;
    if (strcasecmp (s, "today") == 0 || strcasecmp (s, "midnight") == 0) {
        tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
    } else if (strcasecmp (s, "noon") == 0) {
        tm.tm_hour = 12;
        tm.tm_min = tm.tm_sec = 0;
    } else if (strcasecmp (s, "tomorrow") == 0) {
        tm.tm_mday++;
        tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
    } else if ((sscanf (s, "%2d:%2d:%2d%n", &h, &m, &sec, &len) == 3
                || (sec = 0, sscanf (s, "%2d:%2d%n", &h, &m, &len) == 2))
               && s[len] == '\0') {
        if (h > 23 || m > 59 || sec > 60)
            goto bad;
        tm.tm_hour = h;
        tm.tm_min = m;
        tm.tm_sec = sec;
    } else if ((h = m = sec = 0,
                sscanf (s, "%4d-%2d-%2d%n", &Y, &M, &D, &len) == 3)
               && len == 10) {
        if (s[10] == 'T') {
            int l2 = 0;
            if (!((sscanf (s + 11, "%2d:%2d:%2d%n", &h, &m, &sec, &l2) == 3
                   && l2 == 8)
                  || (sec = 0,
                      sscanf (s + 11, "%2d:%2d%n", &h, &m, &l2) == 2
                          && l2 == 5))
                || s[11 + l2] != '\0')
                goto bad;
        } else if (s[10] != '\0')
            goto bad;
        if (M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || sec > 60
            || Y < 1970)
            goto bad;
        tm.tm_year = Y - 1900;
        tm.tm_mon = M - 1;
        tm.tm_mday = D;
        tm.tm_hour = h;
        tm.tm_min = m;
        tm.tm_sec = sec;
    } else
        goto bad;
    if ((t = mktime (&tm)) == (time_t)-1)
        goto bad;
    *us = (int64_t)t * 1000000;
    return 0;
bad:
    return errprintf (errp,
                      "invalid time \"%.60s\": use YYYY-MM-DD"
                      "[THH:MM[:SS]], HH:MM[:SS], now[{+|-}N[units]], "
                      "today, midnight, noon or tomorrow",
                      s ? s : "");
}
