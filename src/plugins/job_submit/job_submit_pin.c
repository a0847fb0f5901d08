/* job_submit_pin.c - job_submit/pin: validate and default --pin-policy
 *
 * Thin glue between slurmctld and libsubmit (the decisions) and libconf
 * (pin.conf).  slurmctld loads it as job_submit_pin.so
 * (JobSubmitPlugins=pin); see job_submit_pin(8) and doc/job-submit.md.
 *
 * pin.conf is the file beside slurm.conf (pin.conf in the directory of
 * the slurm.conf slurmctld read).  `scontrol reconfigure` does not call a
 * job_submit plugin's fini/init in Slurm 22.05 (job_submit.c re-creates
 * the plugins only when JobSubmitPlugins changes), so the plugin stats the
 * file before each decision and reloads it when it changed: a good file
 * replaces the rules, a broken or vanished one keeps the last good rules
 * and is logged once per change.  From 23.11 reconfigure restarts
 * slurmctld, which forgets them: each good pin.conf is therefore copied
 * to StateSaveLocation/pin.conf.last-good (libconf/lastgood.h), and a
 * start with a broken or vanished pin.conf uses that copy.  Without
 * either, jobs giving --pin-policy are refused with one line until
 * pin.conf is fixed; a restart never widens what is allowed.
 *
 * Memory handed to slurmctld (err_msg, spank_job_env, environment,
 * comment) comes from Slurm's allocator (slurm_xcalloc & co.), which
 * slurmctld frees with xfree.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/spank.h> /* slurm_info, slurm_error, slurm_debug */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "libconf/conf.h"
#include "libconf/lastgood.h"
#include "libplace/place.h"
#include "libsubmit/submit.h"

const char plugin_name[] = "pin: validate and default --pin-policy";
const char plugin_type[] = "job_submit/pin";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/* Slurm's allocator and configuration (libslurmfull, in slurmctld). */
extern void *slurm_xcalloc (size_t,
                            size_t,
                            bool,
                            bool,
                            const char *,
                            int,
                            const char *);
extern void slurm_xfree (void **);
extern void *slurm_xrecalloc (void **,
                              size_t,
                              size_t,
                              bool,
                              bool,
                              const char *,
                              int,
                              const char *);
extern char *slurm_xstrdup (const char *);
extern slurm_conf_t slurm_conf __attribute__ ((weak));

int init (void);
int fini (void);
int job_submit (job_desc_msg_t *job_desc, uint32_t submit_uid, char **err_msg);
/* job_modify's arguments are those of the Slurm built against (configure:
 * PIN_JOB_MODIFY_ERR_MSG): 22.05 calls modify(job_desc, job_ptr, uid)
 * with three, and a fourth parameter would be whatever the caller left in
 * that register, written through on a refusal. */
#if PIN_JOB_MODIFY_ERR_MSG
int job_modify (job_desc_msg_t *job_desc,
                void *job_ptr,
                uint32_t submit_uid,
                char **err_msg);
#else
int job_modify (job_desc_msg_t *job_desc, void *job_ptr, uint32_t submit_uid);
#endif

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* The rules in force: pin.conf's, the last good ones (in memory or, after
 * a restart, the copy in StateSaveLocation), or the defaults when there
 * has never been a pin.conf.  NULL: pin.conf is broken and there are no
 * last good rules; then a job giving --pin-policy is refused (`problem`
 * says why) and one without runs as Slurm alone would run it. */
static struct pin_conf *rules;
static bool rules_good;          /* from a good pin.conf or its copy */
static char problem[sizeof (((pin_error_t *)0)->text)];
static char conf_path[PATH_MAX];
static char saved_path[PATH_MAX]; /* the copy; "" if no StateSaveLocation */
static struct stat seen;          /* the file last looked at */
static bool seen_valid;           /* seen describes it (or ENOENT) */
static bool seen_missing;
/* policy experiments: the positions of the blocks (libsubmit/experiment.h)
 * kept while slurmctld runs; NULL if it could not be had (then no job is
 * enrolled) */
static struct submit_exp_book *book;

static void find_conf_path (void)
{
    const char *sc = (&slurm_conf && slurm_conf.slurm_conf)
                         ? slurm_conf.slurm_conf
                         : getenv ("SLURM_CONF");
    const char *slash = sc ? strrchr (sc, '/') : NULL;

    if (slash && sc[0] == '/'
        && (size_t)(slash - sc) + sizeof ("/pin.conf") < sizeof (conf_path))
        snprintf (conf_path,
                  sizeof (conf_path),
                  "%.*s/pin.conf",
                  (int)(slash - sc),
                  sc);
    else
        snprintf (conf_path, sizeof (conf_path), "%s", PIN_CONF_DEFAULT_PATH);
    saved_path[0] = '\0';
    if (!(&slurm_conf && slurm_conf.state_save_location)
        || pin_lastgood_path (saved_path,
                              sizeof (saved_path),
                              slurm_conf.state_save_location)
               < 0) {
        saved_path[0] = '\0';
        slurm_error (
            "pin: no usable StateSaveLocation: the last good rules of "
            "%s are not kept over a restart",
            conf_path);
    }
}

static bool same_file (const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino
           && a->st_size == b->st_size
           && a->st_mtim.tv_sec == b->st_mtim.tv_sec
           && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec
           && a->st_ctim.tv_sec == b->st_ctim.tv_sec
           && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* pin.conf cannot be used (`why`, one line naming it): keep the last good
 * rules in memory, else those kept on disk, else `missing` ? the
 * defaults : none (lock held). */
static void conf_unusable (const char *why, bool missing)
{
    struct pin_conf *tmp;
    pin_error_t e = {""};

    snprintf (problem, sizeof (problem), "%s", why);
    if (rules && rules_good) {
        slurm_error ("pin: %s; keeping the last good rules (%s)",
                     why,
                     rules->path);
        return;
    }
    if (saved_path[0] && (tmp = malloc (sizeof (*tmp)))) {
        pin_conf_defaults (tmp);
        if (pin_lastgood_load (tmp, saved_path, &e) == 0) {
            free (rules);
            rules = tmp;
            rules_good = true;
            slurm_error ("pin: %s; using the last good rules, kept in %s",
                         why,
                         saved_path);
            return;
        }
        free (tmp);
        if (errno != ENOENT)
            slurm_error ("pin: last good rules not used: %s", e.text);
    }
    if (missing) {
        if (!rules && (rules = malloc (sizeof (*rules))))
            pin_conf_defaults (rules);
        rules_good = false;
        problem[0] = '\0';
        slurm_info ("pin: %s: no such file; every policy allowed, "
                    "DefaultPolicy=none",
                    conf_path);
        return;
    }
    free (rules);
    rules = NULL;
    rules_good = false;
    slurm_error ("pin: %s; no last good rules%s%s: jobs giving "
                 "--pin-policy are refused until it is fixed, jobs "
                 "without run as Slurm alone would run them",
                 why,
                 saved_path[0] ? " in " : "",
                 saved_path);
}

/* Reload pin.conf if it changed since last time (lock held). */
static void refresh (void)
{
    struct pin_conf *tmp;
    struct stat st;
    pin_error_t e = {""};
    char why[sizeof (problem)];
    bool missing = false;

    if (stat (conf_path, &st) < 0) {
        if (errno != ENOENT) {
            if (seen_valid && seen_missing)
                return;
            snprintf (why,
                      sizeof (why),
                      "%.400s: %s",
                      conf_path,
                      strerror (errno));
            seen_valid = true;
            seen_missing = true;
            conf_unusable (why, false);
            return;
        }
        missing = true;
    }
    if (seen_valid && missing == seen_missing
        && (missing || same_file (&st, &seen)))
        return;
    seen_valid = true;
    seen_missing = missing;
    if (!missing)
        seen = st;
    if (missing) {
        snprintf (why, sizeof (why), "%.400s: no such file", conf_path);
        conf_unusable (why, true);
        return;
    }
    if (!(tmp = malloc (sizeof (*tmp)))) {
        slurm_error (
            "pin: out of memory reading %s; keeping the rules in force",
            conf_path);
        seen_valid = false;
        return;
    }
    pin_conf_defaults (tmp);
    if (pin_conf_load_file (tmp, conf_path, true, &e) < 0) {
        free (tmp);
        snprintf (why, sizeof (why), "bad configuration: %.1000s", e.text);
        conf_unusable (why, false);
        return;
    }
    free (rules);
    rules = tmp;
    rules_good = true;
    problem[0] = '\0';
    slurm_info ("pin: loaded %s (%d partition lines)",
                conf_path,
                rules->npartitions);
    if (saved_path[0] && pin_lastgood_save (conf_path, saved_path, &e) < 0)
        slurm_error ("pin: the last good rules are not kept over a "
                     "restart: %s",
                     e.text);
}

int init (void)
{
    pthread_mutex_lock (&lock);
    find_conf_path ();
    seen_valid = false;
    refresh ();
    if (!book && !(book = submit_exp_book_create ()))
        slurm_error ("pin: out of memory: no job is enrolled in a policy "
                     "experiment");
    pthread_mutex_unlock (&lock);
    return SLURM_SUCCESS;
}

int fini (void)
{
    pthread_mutex_lock (&lock);
    free (rules);
    rules = NULL;
    rules_good = false;
    submit_exp_book_destroy (book);
    book = NULL;
    pthread_mutex_unlock (&lock);
    return SLURM_SUCCESS;
}

static char *xdup (const char *s)
{
    return slurm_xstrdup (s);
}

static void xfree_str (char **p)
{
    slurm_xfree ((void **)p);
}

/* Set NAME=value in an xmalloc'd string array (replace or append). */
static int env_set (char ***env,
                    uint32_t *size,
                    const char *name,
                    const char *value)
{
    size_t len = strlen (name) + strlen (value) + 2;
    char *entry =
        slurm_xcalloc (1, len, true, false, __FILE__, __LINE__, __func__);
    int i;

    if (!entry)
        return -1;
    snprintf (entry, len, "%s=%s", name, value);
    if ((i = submit_env_find (*env, *size, name)) >= 0) {
        xfree_str (&(*env)[i]);
        (*env)[i] = entry;
        return 0;
    }
    /* one more entry and a NULL terminator, as Slurm keeps them */
    slurm_xrecalloc ((void **)env,
                     *size + 2,
                     sizeof (char *),
                     true,
                     false,
                     __FILE__,
                     __LINE__,
                     __func__);
    (*env)[*size] = entry;
    (*env)[*size + 1] = NULL;
    (*size)++;
    return 0;
}

static void append_comment (job_desc_msg_t *job, const char *note)
{
    size_t len;
    char *c;

    if (!note[0])
        return;
    if (job->comment && strstr (job->comment, note))
        return; /* job_modify of a job we noted already */
    len = (job->comment ? strlen (job->comment) + 2 : 0) + strlen (note) + 1;
    c = slurm_xcalloc (1, len, true, false, __FILE__, __LINE__, __func__);
    snprintf (c,
              len,
              "%s%s%s",
              job->comment ? job->comment : "",
              job->comment ? "; " : "",
              note);
    xfree_str (&job->comment);
    job->comment = c;
}

/* The user's name for NoneUsers= (NULL if unknown). */
static const char *user_name (uint32_t uid, char *buf, size_t n)
{
    struct passwd pw, *res = NULL;
    char tmp[4096];

    if (uid == NO_VAL
        || getpwuid_r ((uid_t)uid, &pw, tmp, sizeof (tmp), &res) != 0 || !res)
        return NULL;
    snprintf (buf, n, "%s", res->pw_name);
    return buf;
}

/* Add the experiment's token to the job's AdminComment (after an
 * administrator's own text, with a blank). */
static void append_admin_comment (job_desc_msg_t *job, const char *token)
{
    size_t len;
    char *c;

    if (!token[0])
        return;
    len = (job->admin_comment ? strlen (job->admin_comment) + 1 : 0)
          + strlen (token) + 1;
    c = slurm_xcalloc (1, len, true, false, __FILE__, __LINE__, __func__);
    snprintf (c,
              len,
              "%s%s%s",
              job->admin_comment ? job->admin_comment : "",
              job->admin_comment && job->admin_comment[0] ? " " : "",
              token);
    xfree_str (&job->admin_comment);
    job->admin_comment = c;
}

static int decide_and_apply (job_desc_msg_t *job,
                             uint32_t submit_uid,
                             char **err_msg,
                             const char *what)
{
    struct submit_decision d;
    pin_error_t e = {""};
    char name[256];
    uint32_t uid = job->user_id != NO_VAL ? job->user_id : submit_uid;
    /* the name service may be slow: not under the lock */
    const char *user = user_name (uid, name, sizeof (name));
    int rc;

    /* submissions may be enrolled in an experiment, updates never */
    struct submit_ctx ctx = {.now = time (NULL), .uid = uid, .book = book};
    bool submission = strcmp (what, "submission") == 0;

    pthread_mutex_lock (&lock);
    refresh ();
    ctx.book = book;
    if (rules)
        rc = submit_decide_at (rules,
                               job,
                               user,
                               submission && book ? &ctx : NULL,
                               &d,
                               &e);
    else
        rc = submit_decide_unruled (job, problem, &d, &e);
    pthread_mutex_unlock (&lock);
    if (rc < 0) {
        slurm_info ("pin: %s of uid %u refused: %s", what, uid, e.text);
        if (err_msg) {
            char *m = xdup (e.text);
            if (m) {
                xfree_str (err_msg);
                *err_msg = m;
            }
        }
        return SLURM_ERROR;
    }
    if (d.exp_why[0])
        slurm_debug ("pin: %s of uid %u: %s", what, uid, d.exp_why);
    if (d.source == SUBMIT_NONE)
        return SLURM_SUCCESS;
    submit_apply_fields (job, &d);
    if (job->tres_per_task && !job->tres_per_task[0])
        xfree_str (&job->tres_per_task); /* its only entry was cpu= */
    if (d.write_value[0]) {
        env_set (&job->spank_job_env,
                 &job->spank_job_env_size,
                 SUBMIT_SPANK_ENV_NAME,
                 d.write_value);
        /* A batch job: its batch step reads the option from its
         * environment (as sbatch's own spank_init_post_opt() puts it
         * there), the sruns in the script from the SLURM_SPANK_ form. */
        if (job->script && job->environment) {
            env_set (&job->environment,
                     &job->env_size,
                     SUBMIT_SPANK_ENV_NAME,
                     d.write_value);
            env_set (&job->environment,
                     &job->env_size,
                     SUBMIT_JOB_ENV_NAME,
                     d.write_value);
        }
    }
    append_comment (job, d.note);
    append_admin_comment (job, d.admin_token);
    if (d.admin_token[0])
        slurm_info ("pin: %s of uid %u enrolled: %s", what, uid, d.admin_token);
    if (d.gres_enforce_binding)
        slurm_info ("pin: %s of uid %u asks for GPUs with policy %s: "
                    "added --gres-flags=enforce-binding (GpuBinding=enforce)",
                    what,
                    uid,
                    place_policy_name ((enum place_policy)d.policy));
    slurm_debug ("pin: %s of uid %u: %s", what, uid, d.note);
    return SLURM_SUCCESS;
}

int job_submit (job_desc_msg_t *job_desc, uint32_t submit_uid, char **err_msg)
{
    if (!job_desc)
        return SLURM_SUCCESS;
    return decide_and_apply (job_desc, submit_uid, err_msg, "submission");
}

/* An update carries only the fields it changes: check a policy it
 * carries; a job without one is left alone (doc/job-submit.md).
 * A refusal is the return code ESPANK_BAD_ARG ("Bad argument") on every
 * release: it is all that scontrol and slurm_update_job() report (22.05
 * gives modify() no err_msg; from 23.02 the err_msg reaches only
 * slurm_update_job2()'s per-job answer, which scontrol does not print,
 * and SLURM_ERROR would read "Unspecified error").  The reason is in
 * err_msg where there is one and in slurmctld's log. */
#if PIN_JOB_MODIFY_ERR_MSG
int job_modify (job_desc_msg_t *job_desc,
                void *job_ptr,
                uint32_t submit_uid,
                char **err_msg)
#else
int job_modify (job_desc_msg_t *job_desc, void *job_ptr, uint32_t submit_uid)
#endif
{
    if (!job_desc || !job_desc->spank_job_env
        || submit_env_find (job_desc->spank_job_env,
                            job_desc->spank_job_env_size,
                            SUBMIT_SPANK_ENV_NAME)
               < 0)
        return SLURM_SUCCESS;
#if PIN_JOB_MODIFY_ERR_MSG
    return decide_and_apply (job_desc, submit_uid, err_msg, "update")
#else
    return decide_and_apply (job_desc, submit_uid, NULL, "update")
#endif
                   == SLURM_SUCCESS
               ? SLURM_SUCCESS
               : ESPANK_BAD_ARG;
}

/* vi: ts=4 sw=4 expandtab
 */
