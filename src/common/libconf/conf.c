/* conf.c - one parser for pin.conf and plugstack.conf arguments
 *
 * The file is read byte by byte into a bounded line buffer: a line that
 * does not fit, a NUL byte or a control character is an error naming the
 * line, never a silent truncation.  Loads work on a copy of the caller's
 * struct, so a failed load leaves it untouched.
 *
 * Every key is one descriptor of keys[] (conf.h, struct pin_conf_key):
 * its parser and the field it fills in pin.conf's global struct, on a
 * PartitionName= line and in a partition's rules.  The lines, the
 * plugstack arguments, the partition lines, pin_conf_defaults(),
 * pin_conf_rules_for() and the lists of known keys in messages all read
 * the table; test/test_keys.c holds pin.conf(5) to it.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"
#include "libplace/place.h"
#include "libutil/safefile.h"
#include "libutil/safeio.h"

/* Shown in messages instead of a long value, so that "what is valid"
 * still fits the 256-byte error buffer. */
#define SHOW_MAX 48

#define ORIGIN_MAX 160

/* More than the keys of the table (a load records each key it sets). */
#define SEEN_MAX 32

/* State of one load (a file, or plugstack arguments and their file). */
struct ctx {
    struct pin_conf *conf;
    const struct pin_conf_key
        *seen_key[SEEN_MAX];                /* keys set by this source */
    char seen_origin[SEEN_MAX][ORIGIN_MAX]; /* where each was set */
    int nseen;
    char dp_origin[ORIGIN_MAX]; /* where DefaultPolicy was set */
    char ap_origin[ORIGIN_MAX]; /* where AllowedPolicies was set */
    char ap_text[SHOW_MAX + 4]; /* its value as written */
    int last_set;               /* 1 DefaultPolicy, 2 Allowed... */
    char part_origin[PIN_CONF_PARTITIONS_MAX][ORIGIN_MAX]; /* "FILE:LINE" */
};

static void show (char *dst, size_t n, const char *value)
{
    size_t len = strlen (value);
    if (len <= SHOW_MAX)
        snprintf (dst, n, "%s", value);
    else
        snprintf (dst, n, "%.*s...", SHOW_MAX, value);
}

/* ---- value checks ------------------------------------------------------ */

static int check_abs_path (const char *value, size_t max, char *why, size_t n)
{
    const char *p;

    if (value[0] != '/') {
        snprintf (why,
                  n,
                  "not an absolute path; give a path starting "
                  "with '/'");
        return -1;
    }
    if (strlen (value) >= max) {
        snprintf (why,
                  n,
                  "path longer than %zu characters; give a shorter "
                  "path",
                  max - 1);
        return -1;
    }
    for (p = value; *p; p++) {
        if (p[0] == '/' && p[1] == '.' && p[2] == '.'
            && (p[3] == '/' || p[3] == '\0')) {
            snprintf (why,
                      n,
                      "'..' components are not allowed; give the "
                      "path without them");
            return -1;
        }
        if (iscntrl ((unsigned char)*p)) {
            snprintf (why,
                      n,
                      "control character in path; give a plain "
                      "path");
            return -1;
        }
    }
    return 0;
}

/* ---- value parsers ------------------------------------------------------
 *
 * One per kind of value, pin_conf_parse_f: `value` (not empty) into the
 * field `dst` of `size` bytes, or -1 with `why` (size n) saying what is
 * wrong and what is valid; the field is only written on success.  The key
 * table below says which field of which struct each key's parser fills. */

static int parse_policy (const char *value,
                         void *dst,
                         size_t size,
                         char *why,
                         size_t n)
{
    enum place_policy p;
    pin_error_t perr;

    (void)size;
    if (place_policy_parse (value, &p, &perr) < 0) {
        char s[SHOW_MAX + 4];
        show (s, sizeof (s), value);
        snprintf (why,
                  n,
                  "unknown policy '%s'; known: %s",
                  s,
                  place_policy_list ());
        return -1;
    }
    *(int *)dst = (int)p;
    return 0;
}

/* "all" or a comma list of policies, into an unsigned mask. */
static int parse_policy_mask (const char *value,
                              void *dst,
                              size_t size,
                              char *why,
                              size_t n)
{
    char buf[PIN_CONF_LINE_MAX];
    char *item, *save = NULL;
    unsigned mask = 0;
    size_t len = strlen (value);

    (void)size;
    if (strcasecmp (value, "all") == 0) {
        *(unsigned *)dst = PIN_CONF_ALLOW_ALL;
        return 0;
    }
    if (len >= sizeof (buf)) {
        snprintf (why, n, "list too long");
        return -1;
    }
    if (value[0] == ',' || value[len - 1] == ',' || strstr (value, ",,")) {
        snprintf (why,
                  n,
                  "empty item in the list; give 'all' or a comma "
                  "list of: %s",
                  place_policy_list ());
        return -1;
    }
    memcpy (buf, value, len + 1);
    for (item = strtok_r (buf, ",", &save); item;
         item = strtok_r (NULL, ",", &save)) {
        char *end;
        int p;

        while (isspace ((unsigned char)*item))
            item++;
        end = item + strlen (item);
        while (end > item && isspace ((unsigned char)end[-1]))
            *--end = '\0';
        if (*item == '\0') {
            snprintf (why,
                      n,
                      "empty item in the list; give 'all' or a "
                      "comma list of: %s",
                      place_policy_list ());
            return -1;
        }
        if (parse_policy (item, &p, sizeof (p), why, n) < 0)
            return -1;
        if (p < 0 || p >= 32) {
            snprintf (why, n, "policy number %d out of range", p);
            return -1;
        }
        mask |= 1u << p;
    }
    *(unsigned *)dst = mask;
    return 0;
}

/* A comma list of user or account names (no empty item, no blanks). */
static int parse_names (const char *value,
                        void *dst,
                        size_t size,
                        char *why,
                        size_t n)
{
    size_t len = strlen (value);
    const char *p;

    if (len >= size) {
        snprintf (why, n, "list longer than %zu characters", size - 1);
        return -1;
    }
    if (value[0] == ',' || value[len - 1] == ',' || strstr (value, ",,")) {
        snprintf (why,
                  n,
                  "empty item in the list; give a comma list of "
                  "names");
        return -1;
    }
    for (p = value; *p; p++) {
        if (!isalnum ((unsigned char)*p) && !strchr (",._@-", *p)) {
            snprintf (why,
                      n,
                      "not a comma list of names; use only "
                      "[A-Za-z0-9._@-] and ','");
            return -1;
        }
    }
    memcpy (dst, value, len + 1);
    return 0;
}

static int parse_path (const char *value,
                       void *dst,
                       size_t size,
                       char *why,
                       size_t n)
{
    if (check_abs_path (value, size, why, n) < 0)
        return -1;
    snprintf (dst, size, "%s", value);
    return 0;
}

/* CgroupRoot=auto|PATH */
static int parse_cgroup_root (const char *value,
                              void *dst,
                              size_t size,
                              char *why,
                              size_t n)
{
    if (strcasecmp (value, "auto") == 0) {
        snprintf (dst, size, "auto");
        return 0;
    }
    if (parse_path (value, dst, size, why, n) < 0) {
        size_t len = strlen (why);
        snprintf (why + len, n - len, " (or 'auto')");
        return -1;
    }
    return 0;
}

/* DeliverCommand=PATH|none ("" = none) */
static int parse_path_or_none (const char *value,
                               void *dst,
                               size_t size,
                               char *why,
                               size_t n)
{
    if (strcasecmp (value, "none") == 0) {
        *(char *)dst = '\0';
        return 0;
    }
    return parse_path (value, dst, size, why, n);
}

/* One directory name of [A-Za-z0-9._-], not . or .. */
static int parse_dir_name (const char *value,
                           void *dst,
                           size_t size,
                           char *why,
                           size_t n)
{
    const char *p;

    if (strcmp (value, ".") == 0 || strcmp (value, "..") == 0) {
        snprintf (why,
                  n,
                  "'.' and '..' are not names; give one directory "
                  "name of [A-Za-z0-9._-]");
        return -1;
    }
    if (strlen (value) >= size) {
        snprintf (why,
                  n,
                  "longer than %zu characters; give a shorter name",
                  size - 1);
        return -1;
    }
    for (p = value; *p; p++) {
        if (!isalnum ((unsigned char)*p) && *p != '.' && *p != '_'
            && *p != '-') {
            snprintf (why,
                      n,
                      "not a single directory name; use only "
                      "[A-Za-z0-9._-]");
            return -1;
        }
    }
    snprintf (dst, size, "%s", value);
    return 0;
}

/* yes|true|1 or no|false|0, into a bool */
static int parse_bool (const char *value,
                       void *dst,
                       size_t size,
                       char *why,
                       size_t n)
{
    static const char *yes[] = {"yes", "true", "1", NULL};
    static const char *no[] = {"no", "false", "0", NULL};
    int i;

    (void)size;
    for (i = 0; yes[i]; i++) {
        if (strcasecmp (value, yes[i]) == 0) {
            *(bool *)dst = true;
            return 0;
        }
    }
    for (i = 0; no[i]; i++) {
        if (strcasecmp (value, no[i]) == 0) {
            *(bool *)dst = false;
            return 0;
        }
    }
    snprintf (why, n, "not a boolean; use yes, no, true, false, 1 or 0");
    return -1;
}

/* allow|refuse, into a bool */
static int parse_allow (const char *value,
                        void *dst,
                        size_t size,
                        char *why,
                        size_t n)
{
    (void)size;
    if (strcasecmp (value, "allow") == 0) {
        *(bool *)dst = true;
        return 0;
    }
    if (strcasecmp (value, "refuse") == 0) {
        *(bool *)dst = false;
        return 0;
    }
    snprintf (why, n, "expected allow or refuse");
    return -1;
}

/* A size: bytes, or a number with K, M or G (powers of 1024), at most
 * 2^50 bytes, into *bytes.  0, or SIZE_NAN (not a number), SIZE_UNIT (an
 * unknown unit) or SIZE_BIG; the callers word the message. */
enum { SIZE_NAN = 1, SIZE_UNIT, SIZE_BIG };
static int parse_size (const char *value, unsigned long long *bytes)
{
    unsigned long long v, mult = 1;
    char *end;

    errno = 0;
    if (!isdigit ((unsigned char)value[0])
        || ((v = strtoull (value, &end, 10)), errno))
        return SIZE_NAN;
    if (*end) {
        switch (toupper ((unsigned char)*end)) {
            case 'K':
                mult = 1ull << 10;
                break;
            case 'M':
                mult = 1ull << 20;
                break;
            case 'G':
                mult = 1ull << 30;
                break;
            default:
                return SIZE_UNIT;
        }
        if (end[1])
            return SIZE_UNIT;
    }
    if (v > (1ull << 50) / mult)
        return SIZE_BIG;
    *bytes = v * mult;
    return 0;
}

/* ProfileMaxSize: 8K (the smallest profile) to 64G */
static int parse_profile_size (const char *value,
                               void *dst,
                               size_t size,
                               char *why,
                               size_t n)
{
    unsigned long long v = 0;
    int rc = parse_size (value, &v);

    (void)size;
    if (rc == SIZE_NAN || rc == SIZE_UNIT) {
        snprintf (why,
                  n,
                  "not a size; give bytes or a number with K, M or "
                  "G (e.g. 256M)");
        return -1;
    }
    if (rc == SIZE_BIG || v > (64ull << 30) || v < 8192) {
        snprintf (why, n, "out of range; give 8K to 64G");
        return -1;
    }
    *(unsigned long long *)dst = v;
    return 0;
}

/* JournalMaxSize: 0 (never rotate) or at least 4K */
static int parse_journal_size (const char *value,
                               void *dst,
                               size_t size,
                               char *why,
                               size_t n)
{
    unsigned long long v = 0;

    (void)size;
    switch (parse_size (value, &v)) {
        case SIZE_NAN:
            snprintf (why,
                      n,
                      "not a size; give bytes or a number with K, M "
                      "or G (e.g. 64M), 0 for no rotation");
            return -1;
        case SIZE_UNIT:
            snprintf (why,
                      n,
                      "unknown unit; give bytes or a number with K, "
                      "M or G (e.g. 64M), 0 for no rotation");
            return -1;
        case SIZE_BIG:
            snprintf (why, n, "too large; at most 1048576G");
            return -1;
    }
    if (v && v < 4096) {
        snprintf (why,
                  n,
                  "smaller than 4K; give at least 4K (0: no "
                  "rotation)");
        return -1;
    }
    *(unsigned long long *)dst = v;
    return 0;
}

/* "90", "1.5s", "500ms", "2m": a duration into us, within [min, max]. */
static int parse_duration (const char *value,
                           long long min_us,
                           long long max_us,
                           long long *out,
                           char *why,
                           size_t n)
{
    char *end = NULL;
    double v, scale = 1e6;

    errno = 0;
    v = strtod (value, &end);
    if (end == value || errno || !(v >= 0) || v > 1e9
        || !isdigit ((unsigned char)value[0]))
        goto bad;
    if (strcmp (end, "ms") == 0)
        scale = 1e3;
    else if (strcmp (end, "m") == 0 || strcmp (end, "min") == 0)
        scale = 60e6;
    else if (*end && strcmp (end, "s") != 0)
        goto bad;
    if (v * scale < (double)min_us || v * scale > (double)max_us) {
        snprintf (why,
                  n,
                  "out of range; give %lldms to %llds",
                  min_us / 1000,
                  max_us / 1000000);
        return -1;
    }
    *out = (long long)(v * scale + 0.5);
    return 0;
bad:
    snprintf (why,
              n,
              "not a duration; give seconds, e.g. 60, 60s, 500ms "
              "or 2m");
    return -1;
}

/* DynamicGrace: 0 to 1 day, into long long us */
static int parse_grace (const char *value,
                        void *dst,
                        size_t size,
                        char *why,
                        size_t n)
{
    (void)size;
    return parse_duration (value, 0, 86400LL * 1000000, dst, why, n);
}

/* DynamicInterval: 100 ms to 1 hour, into long long us */
static int parse_interval (const char *value,
                           void *dst,
                           size_t size,
                           char *why,
                           size_t n)
{
    (void)size;
    return parse_duration (value, 100000, 3600LL * 1000000, dst, why, n);
}

int pin_conf_parse_profile (const char *value,
                            long long *interval_us,
                            char *why,
                            size_t n)
{
    if (!value || !*value || strcasecmp (value, "yes") == 0
        || strcasecmp (value, "on") == 0) {
        *interval_us = PIN_CONF_PROFILE_DEFAULT_US;
        return 0;
    }
    if (strcasecmp (value, "no") == 0 || strcasecmp (value, "off") == 0) {
        *interval_us = 0;
        return 0;
    }
    if (parse_duration (value,
                        PIN_CONF_PROFILE_MIN_US,
                        PIN_CONF_PROFILE_MAX_US,
                        interval_us,
                        why,
                        n)
        < 0) {
        /* parse_duration says what a duration is; add the words */
        size_t len = strlen (why);
        snprintf (why + len, n > len ? n - len : 0, " (or yes, no)");
        return -1;
    }
    return 0;
}

/* Profile=no|yes|INTERVAL, into long long us (the --pin-profile parser) */
static int parse_profile (const char *value,
                          void *dst,
                          size_t size,
                          char *why,
                          size_t n)
{
    (void)size;
    return pin_conf_parse_profile (value, dst, why, n);
}

/* DynamicOveruse: a factor above 1, at most 1000, into a double */
static int parse_overuse (const char *value,
                          void *dst,
                          size_t size,
                          char *why,
                          size_t n)
{
    char *end = NULL;
    double v;

    (void)size;
    errno = 0;
    v = strtod (value, &end);
    if (end == value || *end || errno || !isdigit ((unsigned char)value[0])
        || !(v > 1.0) || v > 1000) {
        snprintf (why,
                  n,
                  "not a factor above 1; give e.g. 1.2 (20%% over "
                  "the allocated CPUs), at most 1000");
        return -1;
    }
    *(double *)dst = v;
    return 0;
}

/* DynamicConfine=cpuset|quota, into an int PIN_CONFINE_* */
static int parse_confine (const char *value,
                          void *dst,
                          size_t size,
                          char *why,
                          size_t n)
{
    (void)size;
    if (strcasecmp (value, "cpuset") == 0)
        *(int *)dst = PIN_CONFINE_CPUSET;
    else if (strcasecmp (value, "quota") == 0)
        *(int *)dst = PIN_CONFINE_QUOTA;
    else {
        snprintf (why, n, "expected cpuset or quota");
        return -1;
    }
    return 0;
}

/* GpuBinding=no|enforce */
static int parse_gpu_binding (const char *value,
                              void *dst,
                              size_t size,
                              char *why,
                              size_t n)
{
    (void)size;
    if (strcasecmp (value, "no") == 0)
        *(int *)dst = PIN_GPU_BINDING_NO;
    else if (strcasecmp (value, "enforce") == 0)
        *(int *)dst = PIN_GPU_BINDING_ENFORCE;
    else {
        snprintf (why, n, "expected no or enforce");
        return -1;
    }
    return 0;
}

/* ProfileTaskstats={auto|on|off} */
static int parse_profile_taskstats (const char *value,
                                    void *dst,
                                    size_t size,
                                    char *why,
                                    size_t n)
{
    (void)size;
    if (strcasecmp (value, "auto") == 0)
        *(int *)dst = PIN_PROFILE_TS_AUTO;
    else if (strcasecmp (value, "on") == 0)
        *(int *)dst = PIN_PROFILE_TS_ON;
    else if (strcasecmp (value, "off") == 0)
        *(int *)dst = PIN_PROFILE_TS_OFF;
    else {
        snprintf (why, n, "expected auto, on or off");
        return -1;
    }
    return 0;
}

/* ---- policy experiments (doc/experiments.md) ---- */

/* Experiment={none|NAME}: NAME of [A-Za-z0-9][A-Za-z0-9_.-]{0,31};
 * none: no experiment (a partition's line turns a global one off). */
static int parse_exp_name (const char *value,
                           void *dst,
                           size_t size,
                           char *why,
                           size_t n)
{
    size_t len = strlen (value), i;
    bool ok = len > 0 && len < size && len < PIN_CONF_EXP_NAME_MAX
              && isalnum ((unsigned char)value[0]);

    for (i = 0; ok && i < len; i++)
        ok = isalnum ((unsigned char)value[i]) || strchr ("_.-", value[i]);
    if (!ok) {
        char v[SHOW_MAX + 4];
        show (v, sizeof (v), value);
        snprintf (why,
                  n,
                  "'%s' is not an experiment name; give none or up to "
                  "%d characters of [A-Za-z0-9_.-], starting with a "
                  "letter or digit",
                  v,
                  PIN_CONF_EXP_NAME_MAX - 1);
        return -1;
    }
    if (strcasecmp (value, "none") == 0)
        ((char *)dst)[0] = '\0';
    else
        memcpy (dst, value, len + 1);
    return 0;
}

/* ExperimentPolicies=P1,P2[,...]: 2 to PIN_CONF_ARMS_MAX distinct
 * policies, in order (the first is the control arm). */
static int parse_exp_arms (const char *value,
                           void *dst,
                           size_t size,
                           char *why,
                           size_t n)
{
    struct pin_conf_arms a = {0};
    char buf[256];
    char *item, *save = NULL;
    size_t len = strlen (value);

    (void)size;
    if (len >= sizeof (buf) || value[0] == ',' || value[len - 1] == ','
        || strstr (value, ",,")) {
        snprintf (why,
                  n,
                  "give a comma list of 2 to %d distinct policies of: %s",
                  PIN_CONF_ARMS_MAX,
                  place_policy_list ());
        return -1;
    }
    memcpy (buf, value, len + 1);
    for (item = strtok_r (buf, ",", &save); item;
         item = strtok_r (NULL, ",", &save)) {
        int p, i;
        char *e;
        while (isspace ((unsigned char)*item))
            item++;
        e = item + strlen (item);
        while (e > item && isspace ((unsigned char)e[-1]))
            *--e = '\0';
        if (parse_policy (item, &p, sizeof (p), why, n) < 0)
            return -1;
        for (i = 0; i < a.n; i++)
            if (a.policy[i] == p) {
                snprintf (why,
                          n,
                          "%s is listed twice; each arm is a different "
                          "policy",
                          place_policy_name ((enum place_policy)p));
                return -1;
            }
        if (a.n == PIN_CONF_ARMS_MAX) {
            snprintf (why, n, "more than %d arms", PIN_CONF_ARMS_MAX);
            return -1;
        }
        a.policy[a.n++] = p;
    }
    if (a.n < 2) {
        snprintf (why,
                  n,
                  "an experiment needs at least 2 arms; give e.g. "
                  "none,numa-local");
        return -1;
    }
    memcpy (dst, &a, sizeof (a));
    return 0;
}

/* ExperimentShare=F: 0 < F <= 1 (also "20%") */
static int parse_exp_share (const char *value,
                            void *dst,
                            size_t size,
                            char *why,
                            size_t n)
{
    char *end = NULL;
    double v;

    (void)size;
    errno = 0;
    v = strtod (value, &end);
    if (end != value && *end == '%' && end[1] == '\0') {
        v /= 100;
        end++;
    }
    if (end == value || *end || errno || !isdigit ((unsigned char)value[0])
        || !(v > 0) || v > 1) {
        snprintf (why,
                  n,
                  "not a share; give a fraction above 0 and at most 1 "
                  "(0.2) or a percentage (20%%)");
        return -1;
    }
    *(double *)dst = v;
    return 0;
}

/* ExperimentUntil={none|YYYY-MM-DD[THH:MM[:SS]]}: local time, as Slurm
 * writes times; into epoch seconds (0: none). */
static int parse_exp_until (const char *value,
                            void *dst,
                            size_t size,
                            char *why,
                            size_t n)
{
    struct tm tm;
    const char *end;
    time_t t;

    (void)size;
    if (strcasecmp (value, "none") == 0) {
        *(long long *)dst = 0;
        return 0;
    }
    memset (&tm, 0, sizeof (tm));
    end = strptime (value, "%Y-%m-%d", &tm);
    if (end && *end == 'T') {
        const char *e2 = strptime (end + 1, "%H:%M:%S", &tm);
        if (!e2)
            e2 = strptime (end + 1, "%H:%M", &tm);
        end = e2;
    }
    tm.tm_isdst = -1;
    if (!end || *end || strlen (value) < 10 || !isdigit ((unsigned char)value[0])
        || (t = mktime (&tm)) == (time_t)-1 || t <= 0) {
        char v[SHOW_MAX + 4];
        show (v, sizeof (v), value);
        snprintf (why,
                  n,
                  "'%s' is not a date; give none, YYYY-MM-DD or "
                  "YYYY-MM-DDTHH:MM[:SS] (local time)",
                  v);
        return -1;
    }
    *(long long *)dst = (long long)t;
    return 0;
}

/* ExperimentSeed={auto|N}: auto (-1) is a hash of the name */
static int parse_exp_seed (const char *value,
                           void *dst,
                           size_t size,
                           char *why,
                           size_t n)
{
    char *end = NULL;
    unsigned long long v;

    (void)size;
    if (strcasecmp (value, "auto") == 0) {
        *(long long *)dst = -1;
        return 0;
    }
    errno = 0;
    v = strtoull (value, &end, 10);
    if (end == value || *end || errno || !isdigit ((unsigned char)value[0])
        || v > (unsigned long long)LLONG_MAX) {
        snprintf (why,
                  n,
                  "not a seed; give auto or a number from 0 to %lld",
                  LLONG_MAX);
        return -1;
    }
    *(long long *)dst = (long long)v;
    return 0;
}

/* ExperimentJobNames=GLOB,...: job name patterns (fnmatch(3): * ? [...]),
 * no empty item, no blanks or ',' inside a pattern. */
static int parse_exp_globs (const char *value,
                            void *dst,
                            size_t size,
                            char *why,
                            size_t n)
{
    size_t len = strlen (value);
    const char *p;

    if (len >= size) {
        snprintf (why, n, "list longer than %zu characters", size - 1);
        return -1;
    }
    if (value[0] == ',' || value[len - 1] == ',' || strstr (value, ",,")) {
        snprintf (why,
                  n,
                  "empty item in the list; give a comma list of job "
                  "name patterns");
        return -1;
    }
    for (p = value; *p; p++) {
        if (!isalnum ((unsigned char)*p) && !strchr (",._@+:=-*?[]!", *p)) {
            snprintf (why,
                      n,
                      "not a comma list of job name patterns; use only "
                      "[A-Za-z0-9._@+:=-], the wildcards * ? [] and ','");
            return -1;
        }
    }
    memcpy (dst, value, len + 1);
    return 0;
}

/* SpreadSockets=N: 0 (off) or 2..64 sockets per node, into an int */
static int parse_spread_sockets (const char *value,
                                 void *dst,
                                 size_t size,
                                 char *why,
                                 size_t n)
{
    char *end = NULL;
    unsigned long v;

    (void)size;
    errno = 0;
    v = strtoul (value, &end, 10);
    if (end == value || *end || errno || !isdigit ((unsigned char)value[0])
        || v == 1 || v > 64) {
        snprintf (why,
                  n,
                  "expected 0 (off) or the sockets per node of the "
                  "partition's nodes, 2 to 64");
        return -1;
    }
    *(int *)dst = (int)v;
    return 0;
}

/* ---- the keys -------------------------------------------------------------
 *
 * One descriptor per key (conf.h, struct pin_conf_key).  The order is that
 * of the lists of known keys in error messages.  A field is named by the
 * macros below, which also check at compile time that a per-partition
 * key's field has one size in struct pin_conf, struct pin_conf_partition
 * and struct pin_conf_rules (the overrides are copied as bytes). */

#define FSIZE(type, field) sizeof (((type *)0)->field)

/* A key of pin.conf's global lines only. */
#define GLOBAL(field)                                                    \
    .conf_off = (long)offsetof (struct pin_conf, field), .part_off = -1, \
    .rules_off = -1, .size = FSIZE (struct pin_conf, field)

/* A key of the global lines that a PartitionName= line may replace:
 * the same field name in the three structs. */
#define SAME_SIZE(field)                                                    \
    (0 * sizeof (struct {                                                   \
         _Static_assert(FSIZE (struct pin_conf, field)                      \
                                == FSIZE (struct pin_conf_partition, field) \
                            && FSIZE (struct pin_conf, field)               \
                                   == FSIZE (struct pin_conf_rules, field), \
                        #field ": one size in every struct");               \
         int unused;                                                        \
     }))
#define OVERRIDABLE(field, bit)                                    \
    .conf_off = (long)offsetof (struct pin_conf, field),           \
    .part_off = (long)offsetof (struct pin_conf_partition, field), \
    .rules_off = (long)offsetof (struct pin_conf_rules, field),    \
    .size = FSIZE (struct pin_conf, field) + SAME_SIZE (field),    \
    .part_bit = bit

/* A key of PartitionName= lines only. */
#define PARTITION_ONLY(field, bit)                                            \
    .conf_off = -1,                                                           \
    .part_off = (long)offsetof (struct pin_conf_partition, field),            \
    .rules_off = (long)offsetof (struct pin_conf_rules, field),               \
    .size = FSIZE (struct pin_conf_partition, field)                          \
            + 0 * sizeof (struct {                                            \
                  _Static_assert(FSIZE (struct pin_conf_partition, field)     \
                                     == FSIZE (struct pin_conf_rules, field), \
                                 #field ": one size in every struct");        \
                  int unused;                                                 \
              }),                                                             \
    .part_bit = bit

#define G PIN_CONF_KEY_GLOBAL
#define P PIN_CONF_KEY_PARTITION

static const struct pin_conf_key keys[] = {
    {"DefaultPolicy",
     "policy",
     G | P,
     parse_policy,
     "none",
     "policy of steps that give no --pin-policy",
     OVERRIDABLE (default_policy, PIN_CONF_PART_DEFAULT)},
    {"AllowedPolicies",
     "list",
     G | P,
     parse_policy_mask,
     "all",
     "policies users may ask for: all or a comma list",
     OVERRIDABLE (allowed_policies, PIN_CONF_PART_ALLOWED)},
    {"ForcedPolicy",
     "policy",
     P,
     parse_policy,
     "(none)",
     "the policy of every job of the partition",
     PARTITION_ONLY (forced_policy, PIN_CONF_PART_FORCED)},
    {"CgroupRoot",
     "path",
     G,
     parse_cgroup_root,
     "auto",
     "the cgroup v2 mount, or auto",
     GLOBAL (cgroup_root)},
    {"CgroupBase",
     "name",
     G,
     parse_dir_name,
     "slurm-pin",
     "directory under CgroupRoot for standalone steps",
     GLOBAL (cgroup_base)},
    {"TopologyCache",
     "path",
     G,
     parse_path,
     PIN_CONF_DEFAULT_TOPOLOGY_CACHE,
     "hwloc XML cache of this node's topology",
     GLOBAL (topology_cache)},
    {"StateDir",
     "path",
     G,
     parse_path,
     PIN_CONF_DEFAULT_STATE_DIR,
     "root-only directory for the lock and the CPU claims",
     GLOBAL (state_dir)},
    {"Verbose",
     "bool",
     G,
     parse_bool,
     "no",
     "every step prints its placement, as with ,verbose",
     GLOBAL (verbose)},
    {"Oversubscribe",
     "{allow|refuse}",
     G,
     parse_allow,
     "allow",
     "a step asking for more CPUs than allocated runs, or fails",
     GLOBAL (oversubscribe)},
    {"ShareWithSteps",
     "{allow|refuse}",
     G,
     parse_allow,
     "allow",
     "a step that does not fit beside the others shares, or fails",
     GLOBAL (share_with_steps)},
    {"NoneUsers",
     "list",
     G | PIN_CONF_KEY_DESCRIBED,
     parse_names,
     "(anyone)",
     "users who may ask for --pin-policy=none",
     GLOBAL (none_users)},
    {"NoneAccounts",
     "list",
     G | PIN_CONF_KEY_DESCRIBED,
     parse_names,
     "(any)",
     "accounts whose jobs may ask for --pin-policy=none",
     GLOBAL (none_accounts)},
    {"PartitionName",
     "name Key=Value ...",
     PIN_CONF_KEY_LINE,
     NULL,
     "",
     "rules for the jobs of one partition",
     .conf_off = -1,
     .part_off = -1,
     .rules_off = -1},
    {"DeliverCommand",
     "{path|none}",
     G,
     parse_path_or_none,
     PIN_CONF_DEFAULT_DELIVER_COMMAND,
     "slurm-pin started at job end to send records to slurmdbd",
     GLOBAL (deliver_command)},
    {"Accounting",
     "{yes|no}",
     G,
     parse_bool,
     "yes",
     "a record of every step in the node journal",
     GLOBAL (accounting)},
    {"JournalDir",
     "path",
     G,
     parse_path,
     PIN_CONF_DEFAULT_JOURNAL_DIR,
     "the node journal's directory",
     GLOBAL (journal_dir)},
    {"JournalMaxSize",
     "size",
     G,
     parse_journal_size,
     "64M",
     "size at which the journal is rotated; 0: never",
     GLOBAL (journal_max_size)},
    {"DynamicOveruse",
     "factor",
     G | P,
     parse_overuse,
     "1.2",
     "policy dynamic: CPU use over allocated that counts as over-use",
     OVERRIDABLE (dynamic_overuse, PIN_CONF_PART_DYN_OVERUSE)},
    {"DynamicGrace",
     "duration",
     G | P,
     parse_grace,
     "60s",
     "policy dynamic: how long over-use lasts before confinement",
     OVERRIDABLE (dynamic_grace_us, PIN_CONF_PART_DYN_GRACE)},
    {"DynamicInterval",
     "duration",
     G | P,
     parse_interval,
     "5s",
     "policy dynamic: how often a step's CPU use is sampled",
     OVERRIDABLE (dynamic_interval_us, PIN_CONF_PART_DYN_INTERVAL)},
    {"DynamicConfine",
     "{cpuset|quota}",
     G | P,
     parse_confine,
     "cpuset",
     "policy dynamic: how an over-using step is confined",
     OVERRIDABLE (dynamic_confine, PIN_CONF_PART_DYN_CONFINE)},
    {"SpreadSockets",
     "N",
     G | P,
     parse_spread_sockets,
     "0",
     "job_submit: sockets a one-task numa-spread srun job is spread over",
     OVERRIDABLE (spread_sockets, PIN_CONF_PART_SPREAD_SOCKETS)},
    {"Profile",
     "{no|yes|interval}",
     G | P,
     parse_profile,
     "no",
     "profile every step that gives no --pin-profile, at this interval",
     OVERRIDABLE (profile_us, PIN_CONF_PART_PROFILE)},
    {"ProfileDir",
     "path",
     G,
     parse_path,
     PIN_CONF_DEFAULT_PROFILE_DIR,
     "where step profiles are written",
     GLOBAL (profile_dir)},
    {"ProfileMaxSize",
     "size",
     G,
     parse_profile_size,
     "256M",
     "the largest profile of one step",
     GLOBAL (profile_max_size)},
    {"ProfileTaskstats",
     "{auto|on|off}",
     G,
     parse_profile_taskstats,
     "auto",
     "taskstats exit records in profiles; auto pauses them in fork storms",
     GLOBAL (profile_taskstats)},
    {"GpuBinding",
     "{no|enforce}",
     G | P,
     parse_gpu_binding,
     "no",
     "job_submit: enforce binding of a GPU job's cores to its GPUs",
     OVERRIDABLE (gpu_binding, PIN_CONF_PART_GPU_BINDING)},
    {"Experiment",
     "{none|name}",
     G | P,
     parse_exp_name,
     "none",
     "job_submit: a policy experiment's name (doc/experiments.md)",
     OVERRIDABLE (experiment, PIN_CONF_PART_EXPERIMENT)},
    {"ExperimentPolicies",
     "list",
     G | P | PIN_CONF_KEY_DESCRIBED,
     parse_exp_arms,
     "(none)",
     "the experiment's arms, the control first",
     OVERRIDABLE (experiment_policies, PIN_CONF_PART_EXP_POLICIES)},
    {"ExperimentShare",
     "fraction",
     G | P,
     parse_exp_share,
     "1",
     "the share of eligible jobs enrolled in the experiment",
     OVERRIDABLE (experiment_share, PIN_CONF_PART_EXP_SHARE)},
    {"ExperimentUntil",
     "{none|date}",
     G | P,
     parse_exp_until,
     "none",
     "no job is enrolled after this time (local)",
     OVERRIDABLE (experiment_until, PIN_CONF_PART_EXP_UNTIL)},
    {"ExperimentSeed",
     "{auto|N}",
     G | P,
     parse_exp_seed,
     "auto",
     "the seed of the assignment; auto: a hash of the name",
     OVERRIDABLE (experiment_seed, PIN_CONF_PART_EXP_SEED)},
    {"ExperimentJobNames",
     "list",
     G | P | PIN_CONF_KEY_DESCRIBED,
     parse_exp_globs,
     "(all)",
     "only jobs whose name matches one of these patterns",
     OVERRIDABLE (experiment_job_names, PIN_CONF_PART_EXP_NAMES)},
    {"ExperimentAccounts",
     "list",
     G | P | PIN_CONF_KEY_DESCRIBED,
     parse_names,
     "(all)",
     "only jobs of these accounts",
     OVERRIDABLE (experiment_accounts, PIN_CONF_PART_EXP_ACCOUNTS)},
    {"TestTopology",
     "path",
     G,
     parse_path_or_none,
     "none",
     "test only: an hwloc XML used instead of the node's topology",
     GLOBAL (test_topology)},
    {"TestDeviceRoot",
     "path",
     G,
     parse_path_or_none,
     "none",
     "test only: where sys/dev/char and proc/driver/nvidia are read",
     GLOBAL (test_device_root)},
};

#undef G
#undef P

#define NKEYS (sizeof (keys) / sizeof (keys[0]))

const struct pin_conf_key *pin_conf_keys (size_t *n)
{
    if (n)
        *n = NKEYS;
    return keys;
}

const char *pin_conf_key_names (unsigned where, char *buf, size_t n)
{
    size_t o = 0, i;

    if (n == 0)
        return buf;
    buf[0] = '\0';
    for (i = 0; i < NKEYS; i++) {
        int len;
        if (!(keys[i].where & where))
            continue;
        len = snprintf (buf + o, n - o, "%s%s", o ? ", " : "", keys[i].name);
        if (len < 0 || (size_t)len >= n - o) {
            buf[o] = '\0'; /* whole names only */
            break;
        }
        o += (size_t)len;
    }
    return buf;
}

/* The lists of known keys in messages: pin.conf lines, PartitionName=
 * lines. */
#define KNOWN_GLOBAL (PIN_CONF_KEY_GLOBAL | PIN_CONF_KEY_LINE)
#define KNOWN_PARTITION PIN_CONF_KEY_PARTITION
#define KNOWN_MAX 1024

/* The field at `off` of the struct at base (conf, partition, rules). */
static void *field (void *base, long off)
{
    return (char *)base + off;
}

static const void *cfield (const void *base, long off)
{
    return (const char *)base + off;
}

/* plugstack: case-insensitive, '_' ignored. */
static bool arg_key_equal (const char *a, const char *b)
{
    for (;;) {
        while (*a == '_')
            a++;
        while (*b == '_')
            b++;
        if (tolower ((unsigned char)*a) != tolower ((unsigned char)*b))
            return false;
        if (*a == '\0')
            return true;
        a++;
        b++;
    }
}

/* The key `name` among those valid `where` (PIN_CONF_KEY_*): matched
 * without case, and in plugstack spelling ('_' ignored) if `arg`. */
static const struct pin_conf_key *key_lookup (const char *name,
                                              unsigned where,
                                              bool arg)
{
    size_t i;

    for (i = 0; i < NKEYS; i++) {
        if (!(keys[i].where & where))
            continue;
        if (arg ? arg_key_equal (keys[i].name, name)
                : strcasecmp (keys[i].name, name) == 0)
            return &keys[i];
    }
    return NULL;
}

/* `rest` is what follows "PartitionName=": NAME, then Key=Value words. */
static int parse_partition_line (struct ctx *ctx,
                                 char *rest,
                                 const char *origin,
                                 pin_error_t *errp)
{
    struct pin_conf *c = ctx->conf;
    struct pin_conf_partition part;
    char sname[SHOW_MAX + 4];
    char *word, *save = NULL;
    const char *p;
    int i;

    memset (&part, 0, sizeof (part));
    part.forced_policy = -1;
    word = strtok_r (rest, " \t", &save);
    if (!word) {
        errno = EINVAL;
        return errprintf (errp,
                          "%s: PartitionName=: empty value; give "
                          "PartitionName=NAME Key=Value ...",
                          origin);
    }
    show (sname, sizeof (sname), word);
    if (strlen (word) >= sizeof (part.name)) {
        errno = EINVAL;
        return errprintf (errp,
                          "%s: PartitionName=%s: name longer than "
                          "%zu characters",
                          origin,
                          sname,
                          sizeof (part.name) - 1);
    }
    for (p = word; *p; p++) {
        if (!isalnum ((unsigned char)*p) && !strchr ("._-", *p)) {
            errno = EINVAL;
            return errprintf (errp,
                              "%s: PartitionName=%s: not a partition "
                              "name; use only [A-Za-z0-9._-]",
                              origin,
                              sname);
        }
    }
    snprintf (part.name, sizeof (part.name), "%s", word);
    for (i = 0; i < c->npartitions; i++) {
        if (strcmp (c->partitions[i].name, part.name) == 0) {
            errno = EINVAL;
            return errprintf (errp,
                              "%s: PartitionName=%s: partition "
                              "already has a line; give one line per "
                              "partition",
                              origin,
                              sname);
        }
    }
    if (c->npartitions >= PIN_CONF_PARTITIONS_MAX) {
        errno = EINVAL;
        return errprintf (errp,
                          "%s: PartitionName=%s: more than %d "
                          "PartitionName lines",
                          origin,
                          sname,
                          PIN_CONF_PARTITIONS_MAX);
    }
    while ((word = strtok_r (NULL, " \t", &save))) {
        char sw[SHOW_MAX + 4], why[200];
        const struct pin_conf_key *k = NULL;
        char *eq = strchr (word, '=');

        show (sw, sizeof (sw), word);
        if (eq) {
            *eq = '\0';
            k = key_lookup (word, PIN_CONF_KEY_PARTITION, false);
            *eq = '=';
        }
        if (!k) {
            char known[KNOWN_MAX];
            errno = EINVAL;
            return errprintf (errp,
                              "%s: PartitionName=%s: '%s': not a "
                              "per-partition Key=Value; valid here: %s",
                              origin,
                              sname,
                              sw,
                              pin_conf_key_names (KNOWN_PARTITION,
                                                  known,
                                                  sizeof (known)));
        }
        if (part.set & k->part_bit) {
            errno = EINVAL;
            return errprintf (errp,
                              "%s: PartitionName=%s: %s: %s already "
                              "set on this line; set each key once",
                              origin,
                              sname,
                              sw,
                              k->name);
        }
        if (eq[1] == '\0') {
            errno = EINVAL;
            return errprintf (errp,
                              "%s: PartitionName=%s: %s: empty value; "
                              "give a value or leave the key out",
                              origin,
                              sname,
                              sw);
        }
        if (k->parse (eq + 1,
                      field (&part, k->part_off),
                      k->size,
                      why,
                      sizeof (why))
            < 0) {
            errno = EINVAL;
            return errprintf (errp,
                              "%s: PartitionName=%s: %s: %s",
                              origin,
                              sname,
                              sw,
                              why);
        }
        part.set |= k->part_bit;
    }
    if (part.set == 0) {
        char known[KNOWN_MAX];
        errno = EINVAL;
        return errprintf (errp,
                          "%s: PartitionName=%s: no keys; give at "
                          "least one of: %s",
                          origin,
                          sname,
                          pin_conf_key_names (KNOWN_PARTITION,
                                              known,
                                              sizeof (known)));
    }
    if ((part.set & PIN_CONF_PART_FORCED)
        && (part.set & (PIN_CONF_PART_DEFAULT | PIN_CONF_PART_ALLOWED))) {
        errno = EINVAL;
        return errprintf (errp,
                          "%s: PartitionName=%s: ForcedPolicy decides "
                          "every job of the partition; drop DefaultPolicy "
                          "and AllowedPolicies from this line",
                          origin,
                          sname);
    }
    snprintf (ctx->part_origin[c->npartitions], ORIGIN_MAX, "%s", origin);
    c->partitions[c->npartitions++] = part;
    return 0;
}

/* ---- applying one Key=Value -------------------------------------------- */

/* Set key k from `value`.  `where` starts every message ("FILE:LINE:
 * Key=Value" or "plugstack.conf argument 'k=v'"); `origin` says where the
 * key was set, for a later duplicate or DefaultPolicy check. */
static int apply (struct ctx *ctx,
                  const struct pin_conf_key *k,
                  const char *value,
                  const char *where,
                  const char *origin,
                  pin_error_t *errp)
{
    char why[200];
    int i;

    for (i = 0; i < ctx->nseen; i++) {
        if (ctx->seen_key[i] == k) {
            errno = EINVAL;
            return errprintf (errp,
                              "%s: %s already set (%s); set each key "
                              "once",
                              where,
                              k->name,
                              ctx->seen_origin[i]);
        }
    }
    if (value[0] == '\0') {
        errno = EINVAL;
        return errprintf (errp,
                          "%s: empty value; give a value or leave the "
                          "key out (default: %s)",
                          where,
                          k->defval);
    }
    if (k->parse (value,
                  field (ctx->conf, k->conf_off),
                  k->size,
                  why,
                  sizeof (why))
        < 0) {
        errno = EINVAL;
        return errprintf (errp, "%s: %s", where, why);
    }
    if (ctx->nseen < SEEN_MAX) {
        ctx->seen_key[ctx->nseen] = k;
        snprintf (ctx->seen_origin[ctx->nseen], ORIGIN_MAX, "%s", origin);
        ctx->nseen++;
    }
    if (k->conf_off == (long)offsetof (struct pin_conf, default_policy)) {
        snprintf (ctx->dp_origin, sizeof (ctx->dp_origin), "%s", origin);
        ctx->last_set = 1;
    } else if (k->conf_off
               == (long)offsetof (struct pin_conf, allowed_policies)) {
        char s[SHOW_MAX + 4];
        show (s, sizeof (s), value);
        snprintf (ctx->ap_origin, sizeof (ctx->ap_origin), "%s", origin);
        snprintf (ctx->ap_text, sizeof (ctx->ap_text), "%s", s);
        ctx->last_set = 2;
    }
    return 0;
}

/* One experiment's rules (global, or a partition's: `pname`) are whole:
 * arms given, each allowed there, no forced policy. */
static int check_experiment (const struct pin_conf_rules *r,
                             const char *origin,
                             const char *pname,
                             bool line_sets,
                             pin_error_t *errp)
{
    char where[PIN_CONF_PARTITION_NAME_MAX + 24] = "";
    int i;

    if (pname)
        snprintf (where, sizeof (where), "PartitionName=%s: ", pname);
    if (!r->experiment[0]) /* the other keys may wait for a partition's
                              Experiment= */
        return 0;
    if (r->experiment_policies.n < 2) {
        errno = EINVAL;
        return errprintf (errp,
                          "%s: %sExperiment=%s has no ExperimentPolicies=; "
                          "give its arms, e.g. ExperimentPolicies=none,"
                          "numa-local",
                          origin,
                          where,
                          r->experiment);
    }
    if (r->forced_policy >= 0 && !line_sets) /* a global experiment does
                                                not reach such jobs */
        return 0;
    if (r->forced_policy >= 0) {
        errno = EINVAL;
        return errprintf (errp,
                          "%s: %sExperiment=%s in a partition with "
                          "ForcedPolicy=%s; an experiment needs a choice "
                          "of policy: remove one of them",
                          origin,
                          where,
                          r->experiment,
                          place_policy_name (
                              (enum place_policy)r->forced_policy));
    }
    for (i = 0; i < r->experiment_policies.n; i++) {
        int p = r->experiment_policies.policy[i];
        if (p >= 0 && p < 32 && (r->allowed_policies & (1u << p)))
            continue;
        errno = EINVAL;
        return errprintf (errp,
                          "%s: %sExperimentPolicies: arm %s is not in "
                          "AllowedPolicies; allow it or leave it out",
                          origin,
                          where,
                          place_policy_name ((enum place_policy)p));
    }
    return 0;
}

/* DefaultPolicy must be one of AllowedPolicies, whatever set them. */
static int check_default_allowed (struct ctx *ctx,
                                  const char *fallback,
                                  pin_error_t *errp)
{
    const struct pin_conf *c = ctx->conf;
    const char *name =
        place_policy_name ((enum place_policy)c->default_policy);
    const char *origin = fallback;
    struct pin_conf_rules gr;
    int i;

    pin_conf_rules_for (c, NULL, &gr);
    if (check_experiment (&gr, fallback, NULL, true, errp) < 0)
        return -1;
    for (i = 0; i < c->npartitions; i++) {
        struct pin_conf_rules r;
        const char *pn;

        pin_conf_rules_for (c, c->partitions[i].name, &r);
        if (check_experiment (&r,
                              ctx->part_origin[i][0] ? ctx->part_origin[i]
                                                     : fallback,
                              c->partitions[i].name,
                              (c->partitions[i].set
                               & (PIN_CONF_PART_EXPERIMENT
                                  | PIN_CONF_PART_EXP_POLICIES))
                                  != 0,
                              errp)
            < 0)
            return -1;
        if (r.forced_policy >= 0 || r.default_policy < 0
            || r.default_policy >= 32
            || (r.allowed_policies & (1u << r.default_policy)))
            continue;
        pn = place_policy_name ((enum place_policy)r.default_policy);
        errno = EINVAL;
        return errprintf (errp,
                          "%s: PartitionName=%s: DefaultPolicy=%s%s "
                          "is not in its AllowedPolicies; set an allowed "
                          "DefaultPolicy on the line or allow %s",
                          ctx->part_origin[i][0] ? ctx->part_origin[i]
                                                 : fallback,
                          c->partitions[i].name,
                          pn,
                          (c->partitions[i].set & PIN_CONF_PART_DEFAULT) ? ""
                                                                         : " ("
                                                                           "gl"
                                                                           "ob"
                                                                           "al"
                                                                           ")",
                          pn);
    }
    if (pin_conf_policy_allowed (c, c->default_policy))
        return 0;
    if (ctx->last_set == 1)
        origin = ctx->dp_origin;
    else if (ctx->last_set == 2)
        origin = ctx->ap_origin;
    errno = EINVAL;
    return errprintf (errp,
                      "%s: DefaultPolicy=%s is not in "
                      "AllowedPolicies=%s; choose an allowed DefaultPolicy "
                      "or allow %s",
                      origin,
                      name ? name : "?",
                      ctx->ap_text[0] ? ctx->ap_text : "(inherited)",
                      name ? name : "it");
}

static void trim (char **start)
{
    char *s = *start, *e;
    while (*s == ' ' || *s == '\t')
        s++;
    e = s + strlen (s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
        *--e = '\0';
    *start = s;
}

/* Parse one line (comment already stripped or not). */
static int parse_line (struct ctx *ctx,
                       char *line,
                       const char *origin,
                       pin_error_t *errp)
{
    char *hash = strchr (line, '#');
    char *eq, *key, *value;
    const struct pin_conf_key *k;
    char s[SHOW_MAX + 4];

    if (hash)
        *hash = '\0';
    trim (&line);
    if (*line == '\0')
        return 0;
    show (s, sizeof (s), line);
    if (!(eq = strchr (line, '=')))
        return errprintf (errp,
                          "%s: '%s': missing '='; lines are Key=Value",
                          origin,
                          s);
    *eq = '\0';
    key = line;
    value = eq + 1;
    trim (&key);
    trim (&value);
    if (*key == '\0')
        return errprintf (errp,
                          "%s: '%s': missing key before '='; lines "
                          "are Key=Value",
                          origin,
                          s);
    if (!(k = key_lookup (key, KNOWN_GLOBAL, false))) {
        char known[KNOWN_MAX];
        show (s, sizeof (s), key);
        errno = EINVAL;
        return errprintf (errp,
                          "%s: %s: unknown key; known: %s",
                          origin,
                          s,
                          pin_conf_key_names (KNOWN_GLOBAL,
                                              known,
                                              sizeof (known)));
    }
    if (k->where & PIN_CONF_KEY_LINE)
        return parse_partition_line (ctx, value, origin, errp);
    {
        char where[ORIGIN_MAX + 2 * SHOW_MAX + 16];
        char sk[SHOW_MAX + 4], sv[SHOW_MAX + 4];
        show (sk, sizeof (sk), key);
        show (sv, sizeof (sv), value);
        snprintf (where, sizeof (where), "%s: %s=%s", origin, sk, sv);
        return apply (ctx, k, value, where, origin, errp);
    }
}

/* ---- files -------------------------------------------------------------- */

/* May the process reading pin.conf trust what it says?  pin.conf(5),
 * "Ownership": the file (`st`, the fstat of the open `fd`) is owned by
 * root, or by the reader's euid (slurmctld as SlurmUser, an admin's
 * `slurm-pin check --conf` of a draft), and writable by nobody else; the
 * path to it, symbolic links included, passes libutil/safefile.h's rule
 * (no directory on it writable by anyone but root or that owner, a
 * sticky root directory such as /tmp excepted), and it still leads to
 * the file opened.  -1 with one line in errp. */
static int check_trusted (int fd,
                          const struct stat *st,
                          const char *path,
                          pin_error_t *errp)
{
    char abs[PATH_MAX], cwd[PATH_MAX];
    uid_t me = geteuid ();
    pin_error_t err = {""};
    struct stat end;

    (void)fd;
    if ((st->st_uid != 0 && st->st_uid != me)
        || (st->st_mode & (S_IWGRP | S_IWOTH))) {
        char who[48] = "";
        if (me != 0)
            snprintf (who,
                      sizeof (who),
                      " (or uid %ld, who reads it)",
                      (long)me);
        return errprintf (errp,
                          "%s: owner uid %ld, mode %04o; pin.conf "
                          "must be owned by root%s and writable by nobody "
                          "else (chown root, chmod go-w)",
                          path,
                          (long)st->st_uid,
                          (unsigned)(st->st_mode & 07777),
                          who);
    }
    if (path[0] == '/')
        snprintf (abs, sizeof (abs), "%s", path);
    else if (!getcwd (cwd, sizeof (cwd))
             || snprintf (abs, sizeof (abs), "%s/%s", cwd, path)
                    >= (int)sizeof (abs))
        return errprintf (errp,
                          "%s: cannot make the path absolute: %s",
                          path,
                          strerror (errno));
    if (safefile_check_follow (abs, me, &end, &err) < 0)
        return errprintf (errp,
                          "%s: not trusted: %s; no directory above "
                          "pin.conf may be writable by others than root",
                          path,
                          err.text);
    if (end.st_dev != st->st_dev || end.st_ino != st->st_ino)
        return errprintf (errp,
                          "%s: the path changed while it was opened; "
                          "try again",
                          path);
    return 0;
}

/* Open `path` for reading without blocking on a FIFO and require a regular
 * file.  Returns a FILE, or NULL with errno (ENOENT for a missing file). */
static FILE *open_regular (const char *path, pin_error_t *errp)
{
    struct stat st;
    int fd, flags;
    FILE *f;

    if ((fd = open (path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)) < 0) {
        if (errno == ENOENT)
            return NULL;
        errprintf (errp,
                   "%s: cannot open: %s; give a readable pin.conf",
                   path,
                   strerror (errno));
        return NULL;
    }
    if (fstat (fd, &st) < 0)
        st.st_mode = 0;
    if (!S_ISREG (st.st_mode)) {
        close (fd);
        errno = EINVAL;
        errprintf (errp,
                   "%s: %s, not a regular file; give a pin.conf file",
                   path,
                   safein_kind (st.st_mode));
        return NULL;
    }
    if (check_trusted (fd, &st, path, errp) < 0) {
        close (fd);
        errno = EPERM;
        return NULL;
    }
    if ((flags = fcntl (fd, F_GETFL)) < 0
        || fcntl (fd, F_SETFL, flags & ~O_NONBLOCK) < 0
        || !(f = fdopen (fd, "r"))) {
        int saved = errno;
        close (fd);
        errno = saved;
        errprintf (errp, "%s: cannot open: %s", path, strerror (errno));
        return NULL;
    }
    return f;
}

#define UTF8_BOM "\xEF\xBB\xBF"

static int load_file (struct ctx *ctx,
                      const char *path,
                      bool must_exist,
                      pin_error_t *errp)
{
    char line[PIN_CONF_LINE_MAX];
    char origin[ORIGIN_MAX];
    size_t len = 0;
    unsigned lineno = 1;
    int rc = -1;
    FILE *f;
    int c;

    if (!path || path[0] == '\0') {
        errno = EINVAL;
        return errprintf (errp, "pin.conf path is empty; give a file name");
    }
    if (strlen (path) >= sizeof (ctx->conf->path)) {
        errno = ENAMETOOLONG;
        return errprintf (errp,
                          "pin.conf path longer than %zu characters",
                          sizeof (ctx->conf->path) - 1);
    }
    if (!(f = open_regular (path, errp))) {
        if (errno == ENOENT) {
            if (!must_exist)
                return 0;
            return errprintf (errp,
                              "%s: no such file; give an existing "
                              "pin.conf (see pin.conf(5))",
                              path);
        }
        return -1;
    }
    for (;;) {
        c = getc (f);
        if (c == EOF) {
            if (ferror (f)) {
                errprintf (errp,
                           "%s:%u: read error: %s",
                           path,
                           lineno,
                           strerror (errno));
                goto out;
            }
            if (len == 0)
                break;
            c = '\n'; /* last line without newline */
        }
        if (c == '\n') {
            char *bom;
            line[len] = '\0';
            /* a UTF-8 byte order mark (editors on Windows write one) is
             * accepted at the start of the file; elsewhere it is named,
             * not shown as an invisible part of a key */
            if (lineno == 1 && !strncmp (line, UTF8_BOM, 3))
                memmove (line, line + 3, len - 2);
            if ((bom = strstr (line, UTF8_BOM))) {
                errno = EINVAL;
                errprintf (errp,
                           "%s:%u: a UTF-8 byte order mark (bytes EF "
                           "BB BF) in column %zu; remove it (it is accepted "
                           "only at the start of the file)",
                           path,
                           lineno,
                           (size_t)(bom - line) + 1);
                goto out;
            }
            snprintf (origin, sizeof (origin), "%s:%u", path, lineno);
            if (parse_line (ctx, line, origin, errp) < 0) {
                errno = EINVAL;
                goto out;
            }
            len = 0;
            lineno++;
            if (feof (f))
                break;
            continue;
        }
        if (c == '\0') {
            errno = EINVAL;
            errprintf (errp,
                       "%s:%u: NUL byte in column %zu; pin.conf must "
                       "be plain text",
                       path,
                       lineno,
                       len + 1);
            goto out;
        }
        if (c != '\t' && iscntrl (c)) {
            errno = EINVAL;
            errprintf (errp,
                       "%s:%u: control character 0x%02x in column "
                       "%zu; pin.conf must be plain text",
                       path,
                       lineno,
                       c,
                       len + 1);
            goto out;
        }
        if (len + 1 >= sizeof (line)) {
            errno = EINVAL;
            errprintf (errp,
                       "%s:%u: line longer than %zu characters; "
                       "shorten it",
                       path,
                       lineno,
                       sizeof (line) - 1);
            goto out;
        }
        line[len++] = (char)c;
    }
    snprintf (ctx->conf->path, sizeof (ctx->conf->path), "%s", path);
    rc = 0;
out : {
    int saved = errno;
    fclose (f);
    errno = saved;
}
    return rc;
}

void pin_conf_defaults (struct pin_conf *conf)
{
    size_t i;

    /* each key's default is parsed as if pin.conf said it (the table's
     * defaults are all valid: test_keys.c); a described default
     * ("(anyone)") is the empty field */
    memset (conf, 0, sizeof (*conf));
    for (i = 0; i < NKEYS; i++) {
        const struct pin_conf_key *k = &keys[i];
        char why[200];

        if (k->conf_off < 0 || (k->where & PIN_CONF_KEY_DESCRIBED))
            continue;
        (void)k->parse (k->defval,
                        field (conf, k->conf_off),
                        k->size,
                        why,
                        sizeof (why));
    }
}

/* What follows from the keys a load set. */
static void finish (struct pin_conf *conf)
{
    conf->none_restricted = conf->none_users[0] || conf->none_accounts[0];
}

int pin_conf_load_file (struct pin_conf *conf,
                        const char *path,
                        bool must_exist,
                        pin_error_t *errp)
{
    struct ctx ctx;
    struct pin_conf *tmp;
    int rc;

    if (!conf) {
        errno = EINVAL;
        return errprintf (errp, "pin_conf_load_file: no conf");
    }
    if (!(tmp = malloc (sizeof (*tmp))))
        return errprintf (errp, "out of memory");
    *tmp = *conf;
    memset (&ctx, 0, sizeof (ctx));
    ctx.conf = tmp;
    rc = load_file (&ctx, path, must_exist, errp);
    if (rc == 0)
        rc = check_default_allowed (&ctx, path, errp);
    if (rc == 0) {
        finish (tmp);
        *conf = *tmp;
    }
    {
        int saved = errno;
        free (tmp);
        errno = saved;
    }
    return rc;
}

static int arg_split (int index,
                      const char *arg,
                      char *key,
                      size_t ksize,
                      const char **value,
                      pin_error_t *errp)
{
    const char *eq = strchr (arg, '=');
    char s[SHOW_MAX + 4];
    const char *p;

    for (p = arg; *p; p++) {
        if (iscntrl ((unsigned char)*p)) {
            errno = EINVAL;
            return errprintf (errp,
                              "plugstack.conf argument %d: control "
                              "character 0x%02x in column %d; use printable "
                              "key=value",
                              index + 1,
                              (unsigned char)*p,
                              (int)(p - arg) + 1);
        }
    }
    show (s, sizeof (s), arg);
    if (!eq) {
        errno = EINVAL;
        return errprintf (errp,
                          "plugstack.conf argument '%s': missing '='; "
                          "use key=value (e.g. default_policy=numa-local)",
                          s);
    }
    if ((size_t)(eq - arg) >= ksize || eq == arg) {
        char known[KNOWN_MAX];
        errno = EINVAL;
        return errprintf (errp,
                          "plugstack.conf argument '%s': unknown key; "
                          "known: conf, %s",
                          s,
                          pin_conf_key_names (KNOWN_GLOBAL,
                                              known,
                                              sizeof (known)));
    }
    memcpy (key, arg, eq - arg);
    key[eq - arg] = '\0';
    *value = eq + 1;
    return 0;
}

int pin_conf_load_args (struct pin_conf *conf,
                        int ac,
                        char **av,
                        pin_error_t *errp)
{
    struct ctx ctx;
    struct pin_conf *tmp;
    const char *conf_path = NULL;
    const char *conf_arg = NULL;
    char key[64];
    const char *value;
    int i, rc = -1;

    if (!conf || ac < 0 || (ac > 0 && !av)) {
        errno = EINVAL;
        return errprintf (errp, "pin_conf_load_args: invalid arguments");
    }
    if (!(tmp = malloc (sizeof (*tmp))))
        return errprintf (errp, "out of memory");
    *tmp = *conf;
    memset (&ctx, 0, sizeof (ctx));
    ctx.conf = tmp;

    /* conf= first */
    for (i = 0; i < ac; i++) {
        char why[200];
        char s[SHOW_MAX + 4];

        if (!av[i]) {
            errno = EINVAL;
            errprintf (errp, "pin_conf_load_args: NULL argument %d", i);
            goto out;
        }
        if (arg_split (i, av[i], key, sizeof (key), &value, errp) < 0)
            goto out;
        if (!arg_key_equal (key, "conf"))
            continue;
        show (s, sizeof (s), av[i]);
        if (conf_path) {
            errno = EINVAL;
            errprintf (errp,
                       "plugstack.conf argument '%s': conf= already "
                       "given ('%s'); give it once",
                       s,
                       conf_arg);
            goto out;
        }
        if (value[0] == '\0') {
            errno = EINVAL;
            errprintf (errp,
                       "plugstack.conf argument '%s': empty value; "
                       "give the path of pin.conf",
                       s);
            goto out;
        }
        if (check_abs_path (value, sizeof (conf->path), why, sizeof (why))
            < 0) {
            errno = EINVAL;
            errprintf (errp, "plugstack.conf argument '%s': %s", s, why);
            goto out;
        }
        conf_path = value;
        conf_arg = av[i];
    }
    if (conf_path) {
        if (load_file (&ctx, conf_path, true, errp) < 0)
            goto out;
    } else if (load_file (&ctx, PIN_CONF_DEFAULT_PATH, false, errp) < 0)
        goto out;

    /* the rest override the file: a fresh duplicate check */
    ctx.nseen = 0;
    for (i = 0; i < ac; i++) {
        const struct pin_conf_key *k;
        char origin[ORIGIN_MAX];
        char s[SHOW_MAX + 4];

        if (arg_split (i, av[i], key, sizeof (key), &value, errp) < 0)
            goto out;
        if (arg_key_equal (key, "conf"))
            continue;
        show (s, sizeof (s), av[i]);
        /* PartitionName= lines belong in pin.conf, not here (the list
         * of known keys names it all the same) */
        if (!(k = key_lookup (key, PIN_CONF_KEY_GLOBAL, true))) {
            char known[KNOWN_MAX];
            errno = EINVAL;
            errprintf (errp,
                       "plugstack.conf argument '%s': unknown key; "
                       "known: conf, %s",
                       s,
                       pin_conf_key_names (KNOWN_GLOBAL,
                                           known,
                                           sizeof (known)));
            goto out;
        }
        snprintf (origin, sizeof (origin), "plugstack.conf argument '%s'", s);
        if (apply (&ctx, k, value, origin, origin, errp) < 0) {
            errno = EINVAL;
            goto out;
        }
    }
    if (check_default_allowed (&ctx,
                               ctx.conf->path[0] ? ctx.conf->path
                                                 : "plugstack.conf",
                               errp)
        < 0)
        goto out;
    finish (tmp);
    *conf = *tmp;
    rc = 0;
out : {
    int saved = errno;
    free (tmp);
    errno = saved;
}
    return rc;
}

bool pin_conf_policy_allowed (const struct pin_conf *conf, int policy)
{
    if (!conf || policy < 0 || policy >= 32)
        return false;
    return (conf->allowed_policies & (1u << policy)) != 0;
}

void pin_conf_rules_for (const struct pin_conf *conf,
                         const char *partition,
                         struct pin_conf_rules *rules)
{
    const struct pin_conf_partition *p = NULL;
    size_t i;
    int j;

    if (partition && *partition) {
        for (j = 0; j < conf->npartitions && j < PIN_CONF_PARTITIONS_MAX;
             j++) {
            if (strcmp (conf->partitions[j].name, partition) == 0) {
                p = &conf->partitions[j];
                break;
            }
        }
    }
    memset (rules, 0, sizeof (*rules));
    rules->forced_policy = -1;
    rules->from_partition = p != NULL;
    /* the global value of each key, replaced by what the line sets */
    for (i = 0; i < NKEYS; i++) {
        const struct pin_conf_key *k = &keys[i];

        if (k->rules_off < 0)
            continue;
        if (p && (p->set & k->part_bit))
            memcpy (field (rules, k->rules_off),
                    cfield (p, k->part_off),
                    k->size);
        else if (k->conf_off >= 0)
            memcpy (field (rules, k->rules_off),
                    cfield (conf, k->conf_off),
                    k->size);
    }
}

/* Is `name` an item of the comma list `list`? */
static bool in_list (const char *list, const char *name)
{
    size_t len;

    if (!name || !*name)
        return false;
    len = strlen (name);
    while (*list) {
        size_t item = strcspn (list, ",");
        if (item == len && strncmp (list, name, len) == 0)
            return true;
        list += item;
        if (*list == ',')
            list++;
    }
    return false;
}

bool pin_conf_none_permitted (const struct pin_conf *conf,
                              const char *user,
                              const char *account)
{
    if (!conf->none_restricted)
        return true;
    return in_list (conf->none_users, user)
           || in_list (conf->none_accounts, account);
}

/* vi: ts=4 sw=4 expandtab
 */
