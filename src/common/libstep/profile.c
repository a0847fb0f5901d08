/* profile.c - the step's profile file (step.h, doc/profiling.md) */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <ctype.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libprof/profdir.h"
#include "libprof/record.h"
#include "libutil/mkdirp.h"
#include "libutil/safefile.h"
#include "step_private.h"

int pin_step_profile_open (pin_step_t *s,
                           const struct pin_step_profile *p,
                           pin_error_t *errp)
{
    const struct pin_conf *conf = s->conf;
    char node[ACCT_STR], dir_cg[2 * PATH_MAX], *list = NULL;
    const char *rel = pin_step_acct_rel (s, NULL, 0);
    struct prof_rec_opts o = {
        .max_bytes = conf->profile_max_size,
        .interval_ms = (unsigned)(p->interval_us / 1000),
        .cpus = s->plan_cpus ? s->plan_cpus : s->allowed,
        .pss = true,
        .taskstats = conf->profile_taskstats != PIN_PROFILE_TS_OFF,
        .ts_pause_rate = conf->profile_taskstats == PIN_PROFILE_TS_AUTO
                             ? PROF_TS_PAUSE_RATE
                             : 0,
        .rcvbuf = 64 << 20,
        .share = true,
        .keep_free = conf->accounting
                         ? profdir_journal_reserve (conf->profile_dir,
                                                    conf->journal_dir,
                                                    conf->journal_max_size)
                         : 0,
    };
    json_object *h = NULL;
    pin_error_t err = {""};
    int rc = -1;

    if (s->prof_rec || s->sw) {
        errno = EBUSY;
        return errprintf (errp, "profile already open");
    }
    snprintf (node,
              sizeof (node),
              "%s",
              p->node && p->node[0] ? p->node : "node");
    for (char *c = node; *c; c++)
        if (!isalnum ((unsigned char)*c) && !strchr ("._-", *c))
            *c = '_';
    if (mkdir_p (conf->profile_dir, 0755, 0755, &err) < 0)
        return errprintf (errp, "ProfileDir %s", err.text);
    if (safefile_check (conf->profile_dir, geteuid (), &err) < 0)
        return errprintf (errp, "ProfileDir %s", err.text);
    if (snprintf (s->prof_path,
                  sizeof (s->prof_path),
                  "%s/%s.%s.jsonl",
                  conf->profile_dir,
                  s->stepname,
                  node)
        >= (int)sizeof (s->prof_path)) {
        s->prof_path[0] = '\0';
        errno = ENAMETOOLONG;
        return errprintf (errp, "profile path too long");
    }
    /* Slurm's step_rel begins with '/' in nested mode: one slash, as in
     * the accounting record, so the two name the same directory alike */
    if (rel[0] && s->cg
        && snprintf (dir_cg,
                     sizeof (dir_cg),
                     "%s%s%s",
                     cg2_root (s->cg),
                     rel[0] == '/' ? "" : "/",
                     rel)
               < (int)sizeof (dir_cg))
        o.cgroup_dir = dir_cg;
    o.path = s->prof_path;
    o.reader_uid = p->uid;
    if (!(h = json_object_new_object ()))
        return errprintf (errp, "out of memory");
    json_object_object_add (h, "job", json_object_new_int64 (s->job));
    json_object_object_add (h,
                            "step",
                            json_object_new_string (
                                strchr (s->stepname, '.')
                                    ? strchr (s->stepname, '.') + 1
                                    : ""));
    json_object_object_add (h, "node", json_object_new_string (node));
    json_object_object_add (h, "uid", json_object_new_int64 (p->uid));
    json_object_object_add (h,
                            "policy",
                            json_object_new_string (p->policy ? p->policy
                                                              : "none"));
    json_object_object_add (h,
                            "recorder",
                            json_object_new_string (p->recorder ? p->recorder
                                                                : "libstep"));
    if (o.cpus && (list = topo_list_format (o.cpus)))
        json_object_object_add (h, "step_cpus", json_object_new_string (list));
    free (list);
    o.header = h;
    if (!(s->prof_rec = prof_rec_start (&o, &err)))
        errprintf (errp, "%s", err.text);
    else
        rc = 0;
    json_object_put (h);
    return rc;
}

const char *pin_step_profile_warning (const pin_step_t *s)
{
    return s && s->prof_rec ? prof_rec_warning (s->prof_rec) : NULL;
}

const char *pin_step_profile_path (const pin_step_t *s)
{
    return s ? s->prof_path : "";
}

int pin_step_profile_add_task (pin_step_t *s, pid_t pid, pin_error_t *errp)
{
    if (!s || !s->prof_rec)
        return 0;
    return prof_rec_add_root (s->prof_rec, pid, errp);
}

int pin_step_profile_close (pin_step_t *s, pin_error_t *errp)
{
    struct prof_rec *r;

    if (!s || !(r = s->prof_rec))
        return 0;
    s->prof_rec = NULL;
    return prof_rec_finish (r, -1, errp);
}
