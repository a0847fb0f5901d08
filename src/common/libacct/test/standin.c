/* standin.c - STAND-IN for acct-core's record.c and journal.c
 *
 * NOT the implementation: the acct-report branch was written while
 * acct-core wrote record.c and journal.c, so this file gives the few
 * functions of acct.h that sacct.c, slurm-pin acct and the tests call
 * (acct_record_init, acct_efficiency, acct_record_from_json,
 * acct_journal_read), reading the key names of acct.h's comments.  At the
 * merge, src/common/libacct/Makefile.am must list record.c and journal.c
 * instead of this file, and this file must be deleted.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "libacct/acct.h"

void acct_record_init (struct acct_record *r)
{
    memset (r, 0, sizeof (*r));
    r->job_id = r->step_id = ACCT_NO_VAL;
    r->array_job_id = r->array_task_id = ACCT_NO_VAL;
    r->exit_status = -1;
}

double acct_efficiency (const struct acct_record *r)
{
    if (r->elapsed_us <= 0 || r->alloc_cpus == 0)
        return -1;
    return (double)(r->user_usec + r->system_usec)
           / ((double)r->elapsed_us * r->alloc_cpus);
}

static void get_str (json_object *o, const char *k, char *dst, size_t n)
{
    json_object *v;
    if (json_object_object_get_ex (o, k, &v))
        snprintf (dst, n, "%s", json_object_get_string (v));
}

static bool get_i64 (json_object *o, const char *k, int64_t *dst)
{
    json_object *v;
    if (!json_object_object_get_ex (o, k, &v))
        return false;
    *dst = json_object_get_int64 (v);
    return true;
}

int acct_record_from_json (const char *line, struct acct_record *r,
                           pin_error_t *errp)
{
    json_object *o = json_tokener_parse (line);
    static const char *const req[] = { "kind", "job_id", "node", "start_us",
                                       "end_us" };
    char kind[16] = "";
    int64_t v;

    acct_record_init (r);
    if (!o || !json_object_is_type (o, json_type_object)) {
        json_object_put (o);
        return errprintf (errp, "not a JSON object");
    }
    for (size_t i = 0; i < sizeof (req) / sizeof (req[0]); i++) {
        if (!json_object_object_get_ex (o, req[i], NULL)) {
            json_object_put (o);
            return errprintf (errp, "missing key \"%s\"", req[i]);
        }
    }
    get_str (o, "kind", kind, sizeof (kind));
    r->kind = strcmp (kind, "job") == 0 ? ACCT_KIND_JOB : ACCT_KIND_STEP;
    get_str (o, "cluster", r->cluster, sizeof (r->cluster));
    if (get_i64 (o, "job_id", &v)) r->job_id = (uint32_t)v;
    if (get_i64 (o, "step_id", &v)) r->step_id = (uint32_t)v;
    if (get_i64 (o, "array_job_id", &v)) r->array_job_id = (uint32_t)v;
    if (get_i64 (o, "array_task_id", &v)) r->array_task_id = (uint32_t)v;
    get_str (o, "node", r->node, sizeof (r->node));
    if (get_i64 (o, "uid", &v)) r->uid = (uint32_t)v;
    get_str (o, "user", r->user, sizeof (r->user));
    get_str (o, "partition", r->partition, sizeof (r->partition));
    get_str (o, "job_name", r->job_name, sizeof (r->job_name));
    get_str (o, "policy", r->policy, sizeof (r->policy));
    get_str (o, "fallback", r->fallback, sizeof (r->fallback));
    get_str (o, "cpus", r->cpus, sizeof (r->cpus));
    get_str (o, "mems", r->mems, sizeof (r->mems));
    if (get_i64 (o, "alloc_cpus", &v)) r->alloc_cpus = (uint32_t)v;
    get_i64 (o, "start_us", &r->start_us);
    get_i64 (o, "end_us", &r->end_us);
    get_i64 (o, "elapsed_us", &r->elapsed_us);
    if (get_i64 (o, "user_usec", &v)) r->user_usec = (uint64_t)v;
    if (get_i64 (o, "system_usec", &v)) r->system_usec = (uint64_t)v;
    if (get_i64 (o, "usage_usec", &v)) r->usage_usec = (uint64_t)v;
    if (get_i64 (o, "nr_periods", &v)) {
        r->has_throttle = true;
        r->nr_periods = (uint64_t)v;
    }
    if (get_i64 (o, "nr_throttled", &v)) r->nr_throttled = (uint64_t)v;
    if (get_i64 (o, "throttled_usec", &v)) r->throttled_usec = (uint64_t)v;
    if (get_i64 (o, "mem_peak", &v)) {
        r->has_mem_peak = true;
        r->mem_peak = (uint64_t)v;
    }
    if (get_i64 (o, "seed", &v)) {
        r->has_seed = true;
        r->seed = (uint64_t)v;
    }
    if (get_i64 (o, "exit_status", &v)) r->exit_status = (int32_t)v;
    get_str (o, "state", r->state, sizeof (r->state));
    get_i64 (o, "confined_us", &r->confined_us);
    json_object_put (o);
    return 0;
}

static int read_file (const char *path, acct_record_cb cb, void *arg,
                      unsigned *skipped)
{
    FILE *f = fopen (path, "r");
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int rc = 0;

    if (!f)
        return errno == ENOENT ? 0 : -1;
    while (rc == 0 && (len = getline (&line, &cap, f)) >= 0) {
        struct acct_record r;
        if (len > 0 && line[len - 1] == '\n')
            line[len - 1] = '\0';
        if (line[0] == '\0')
            continue;
        if (acct_record_from_json (line, &r, NULL) < 0) {
            (*skipped)++;
            continue;
        }
        rc = cb (&r, arg);
    }
    free (line);
    fclose (f);
    return rc ? 1 : 0;
}

int acct_journal_read (const char *dir, acct_record_cb cb, void *arg,
                       unsigned *skipped, pin_error_t *errp)
{
    char path[4096];
    DIR *d = opendir (dir);
    int maxn = 0;
    struct dirent *e;

    *skipped = 0;
    if (!d)
        return errprintf (errp, "%s: %s", dir, strerror (errno));
    while ((e = readdir (d))) {
        int n;
        if (sscanf (e->d_name, "journal.%d", &n) == 1 && n > maxn)
            maxn = n;
    }
    closedir (d);
    /* oldest first: journal.1, journal.2, ... (a larger N is newer),
     * then journal */
    for (int n = 1; n <= maxn + 1; n++) {
        int rc;
        if (n <= maxn)
            snprintf (path, sizeof (path), "%s/journal.%d", dir, n);
        else
            snprintf (path, sizeof (path), "%s/journal", dir);
        rc = read_file (path, cb, arg, skipped);
        if (rc < 0)
            return errprintf (errp, "%s: %s", path, strerror (errno));
        if (rc > 0)
            return 0;
    }
    return 0;
}
