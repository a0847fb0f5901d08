/* confine.c - policy dynamic's confinement, a client of the step's
 * watcher (confine.h; decisions in libwatch, choices in
 * doc/admin-guide.md). */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "confine.h"
#include "libaffinity/affinity.h"
#include "libcgroup2/cg2.h"
#include "libtopo/topo.h"
#include "profclient.h"

#define MAX_TASKS 64        /* pids remembered for the stderr line */
#define MAX_PASSES 50       /* sweep passes before giving up a round */
#define QUOTA_PERIOD 100000 /* cpu.max period, us */

struct confine {
    pthread_mutex_t lock;
    struct confine_config cfg;
    struct steplog log;
    char stepname[32];
    char node[64];
    char root[PATH_MAX];
    char watch_rel[PATH_MAX];
    pid_t tasks[MAX_TASKS];
    unsigned ntasks;
    struct confine_event ev;

    /* the watcher thread's own */
    bool opened; /* first prepare() ran */
    struct watch_state w;
    cg2_t *cg;
    int dirfd;
    char path[PATH_MAX * 2];
    hwloc_bitmap_t cpus; /* affinity mode, once confined */
    unsigned fails, resweeps;
    int64_t next;
};

const char *confine_how_name (enum confine_how how)
{
    switch (how) {
        case CONFINE_CPUSET:
            return "cpuset";
        case CONFINE_AFFINITY:
            return "affinity";
        case CONFINE_QUOTA:
            return "quota";
    }
    return "?";
}

void confine_add_task (confine_t *c, pid_t pid)
{
    pthread_mutex_lock (&c->lock);
    if (c->ntasks < MAX_TASKS && pid > 0)
        c->tasks[c->ntasks++] = pid;
    pthread_mutex_unlock (&c->lock);
}

/* usage_usec from cpu.stat, opened relative to the step's directory. */
static int read_usage (int dirfd, uint64_t *usage)
{
    char buf[1024];
    ssize_t n;
    char *p;
    int fd = openat (dirfd, "cpu.stat", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

    if (fd < 0)
        return -1;
    n = read (fd, buf, sizeof (buf) - 1);
    close (fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    for (p = buf; p; p = strchr (p, '\n') ? strchr (p, '\n') + 1 : NULL) {
        if (strncmp (p, "usage_usec ", 11) == 0) {
            char *end;
            errno = 0;
            unsigned long long v = strtoull (p + 11, &end, 10);
            if (errno || end == p + 11)
                return -1;
            *usage = v;
            return 0;
        }
    }
    return -1;
}

/* ---- affinity sweep ------------------------------------------------------
 */

struct sweep {
    cg2_t *cg;
    hwloc_const_bitmap_t cpus;
    hwloc_bitmap_t cur;
    unsigned changed, failed, seen;
    char first_error[160];
};

static void sweep_dir (struct sweep *s, const char *rel)
{
    char *text = cg2_read (s->cg, rel, "cgroup.threads", NULL);
    char *line, *save = NULL;

    if (!text)
        return;
    for (line = strtok_r (text, "\n", &save); line;
         line = strtok_r (NULL, "\n", &save)) {
        char *end;
        long tid = strtol (line, &end, 10);
        pin_error_t err = {""};

        if (*end || tid <= 0 || tid > INT_MAX)
            continue;
        s->seen++;
        if (affinity_get ((pid_t)tid, s->cur) < 0)
            continue; /* exited */
        /* a thread already inside (the user's own finer binding) stays */
        if (hwloc_bitmap_isincluded (s->cur, s->cpus))
            continue;
        if (affinity_set ((pid_t)tid, s->cpus, &err) == 0)
            s->changed++;
        else if (errno != ESRCH) {
            if (!s->failed++)
                snprintf (s->first_error,
                          sizeof (s->first_error),
                          "%s",
                          err.text);
        }
    }
    free (text);
}

static enum cg2_busy_verdict sweep_cb (const char *path,
                                       const char *sub,
                                       const char *name,
                                       void *arg)
{
    (void)sub;
    (void)name;
    sweep_dir (arg, path);
    return CG2_BUSY_DESCEND;
}

/* Passes over every cgroup of the step until one changes nothing.
 * Returns the threads changed; *passes the passes made. */
static unsigned sweep (confine_t *c,
                       cg2_t *cg,
                       hwloc_const_bitmap_t cpus,
                       unsigned *passes)
{
    struct sweep s = {.cg = cg, .cpus = cpus};
    hwloc_bitmap_t unused = hwloc_bitmap_alloc ();
    unsigned total = 0, p;

    if (!(s.cur = hwloc_bitmap_alloc ()) || !unused) {
        hwloc_bitmap_free (s.cur);
        hwloc_bitmap_free (unused);
        return 0;
    }
    for (p = 1; p <= MAX_PASSES; p++) {
        s.changed = 0;
        s.seen = 0;
        sweep_dir (&s, c->watch_rel);
        (void)cg2_busy_cpus_filter (cg,
                                    c->watch_rel,
                                    sweep_cb,
                                    &s,
                                    unused,
                                    NULL);
        total += s.changed;
        if (s.changed == 0)
            break;
    }
    if (p > MAX_PASSES)
        steplog (&c->log,
                 STEPLOG_ERROR,
                 "pin: step %s: threads still appear outside cpus after "
                 "%d passes (a fork storm?); the next interval sweeps "
                 "again",
                 c->stepname,
                 MAX_PASSES);
    if (s.failed)
        steplog (&c->log,
                 STEPLOG_ERROR,
                 "pin: step %s: %u thread(s) could not be confined: %s",
                 c->stepname,
                 s.failed,
                 s.first_error);
    *passes = p > MAX_PASSES ? MAX_PASSES : p;
    hwloc_bitmap_free (s.cur);
    hwloc_bitmap_free (unused);
    return total;
}

/* ---- cpuset ---------------------------------------------------------------
 */

struct cpuset_walk {
    cg2_t *cg;
    hwloc_const_bitmap_t cpus, mems;
    unsigned failed;
    char first_error[200];
};

/* Below the step's cgroup: rewrite the directories that have a cpuset
 * of their own (Slurm's task cgroups with ConstrainCores); empty ones
 * inherit. */
static enum cg2_busy_verdict cpuset_cb (const char *path,
                                        const char *sub,
                                        const char *name,
                                        void *arg)
{
    struct cpuset_walk *w = arg;
    pin_error_t err = {""};
    char *cur = cg2_read (w->cg, path, "cpuset.cpus", NULL);

    (void)sub;
    (void)name;
    if (cur && *cur && cg2_set_cpuset (w->cg, path, w->cpus, w->mems, &err) < 0
        && !w->failed++)
        snprintf (w->first_error, sizeof (w->first_error), "%s", err.text);
    free (cur);
    return CG2_BUSY_DESCEND;
}

static int confine_cpuset (confine_t *c,
                           cg2_t *cg,
                           hwloc_const_bitmap_t cpus,
                           hwloc_const_bitmap_t mems,
                           pin_error_t *errp)
{
    struct cpuset_walk w = {.cg = cg, .cpus = cpus, .mems = mems};
    hwloc_bitmap_t unused = hwloc_bitmap_alloc ();
    pin_error_t err = {""};
    int rc;

    if (!unused)
        return errprintf (errp, "out of memory");
    rc = cg2_set_cpuset (cg, c->watch_rel, cpus, mems, &err);
    if (rc == 0) {
        (void)cg2_busy_cpus_filter (cg,
                                    c->watch_rel,
                                    cpuset_cb,
                                    &w,
                                    unused,
                                    NULL);
        if (w.failed)
            rc = errprintf (errp, "%s", w.first_error);
    } else
        errprintf (errp, "%s", err.text);
    hwloc_bitmap_free (unused);
    return rc;
}

/* ---- telling the job's owner ----------------------------------------------
 */

/* One line on the stderr of the step's first task that still has one we
 * may write as root: an anonymous pipe (slurmstepd's own I/O pipe) or a
 * regular file owned by the job's user; anything else (a device, a FIFO
 * or file of someone else the user opened and put on fd 2) is left
 * alone.  The file is checked again after the open (the task may swap its
 * fd 2 in between); opened O_NONBLOCK so a full pipe never blocks us. */
static bool stderr_ok (const confine_t *c,
                       const struct stat *st,
                       const char *link)
{
    if (S_ISFIFO (st->st_mode))
        return strncmp (link, "pipe:[", 6) == 0 || st->st_uid == c->cfg.uid;
    if (S_ISREG (st->st_mode))
        return st->st_uid == c->cfg.uid;
    return false;
}

static bool tell_owner (confine_t *c, const char *line)
{
    pid_t tasks[MAX_TASKS];
    unsigned n;

    pthread_mutex_lock (&c->lock);
    n = c->ntasks;
    memcpy (tasks, c->tasks, n * sizeof (pid_t));
    pthread_mutex_unlock (&c->lock);
    for (unsigned i = 0; i < n; i++) {
        char path[64], link[128];
        struct stat before, after;
        ssize_t len;
        int fd;

        snprintf (path, sizeof (path), "/proc/%d/fd/2", (int)tasks[i]);
        if ((len = readlink (path, link, sizeof (link) - 1)) < 0)
            continue;
        link[len] = '\0';
        if (stat (path, &before) < 0 || !stderr_ok (c, &before, link))
            continue;
        fd = open (path,
                   O_WRONLY | O_APPEND | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
            continue;
        if (fstat (fd, &after) == 0 && after.st_dev == before.st_dev
            && after.st_ino == before.st_ino && stderr_ok (c, &after, link)) {
            bool ok =
                write (fd, line, strlen (line)) == (ssize_t)strlen (line);
            close (fd);
            if (ok)
                return true;
            continue;
        }
        close (fd);
    }
    return false;
}

/* ---- the thread ------------------------------------------------------------
 */

static void do_confine (confine_t *c, cg2_t *cg, const struct watch_state *w)
{
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc ();
    hwloc_bitmap_t mems = hwloc_bitmap_alloc ();
    pin_error_t err = {""};
    struct confine_event ev = {0};
    char line[1024], *cl = NULL, *m = NULL;

    ev.confined = true;
    ev.confined_us = stepwatch_clock_us (CLOCK_REALTIME);
    ev.use = w->confine_use;
    ev.how = c->cfg.how;
    if (!cpus || !mems)
        goto out;
    if (ev.how == CONFINE_QUOTA) {
        char max[64];
        long long quota =
            (long long)(c->cfg.params.alloc_cpus * QUOTA_PERIOD + 0.5);
        snprintf (max, sizeof (max), "%lld %d", quota, QUOTA_PERIOD);
        if (cg2_write (cg, c->watch_rel, "cpu.max", max, &err) == 0)
            goto done;
        steplog (&c->log,
                 STEPLOG_ERROR,
                 "pin: step %s: DynamicConfine=quota: %s; confining "
                 "its CPUs instead",
                 c->stepname,
                 err.text);
        ev.how = CONFINE_CPUSET;
    }
    if (c->cfg.plan (c->cfg.plan_arg, cpus, mems, &err) < 0) {
        steplog (&c->log,
                 STEPLOG_ERROR,
                 "pin: step %s: used %.2f CPUs for longer than its "
                 "grace but cannot be placed: %s; it keeps running "
                 "unconfined",
                 c->stepname,
                 ev.use,
                 err.text);
        ev.confined = false;
        goto out;
    }
    if (ev.how == CONFINE_CPUSET
        && confine_cpuset (c, cg, cpus, mems, &err) < 0) {
        steplog (&c->log,
                 STEPLOG_ERROR,
                 "pin: step %s: cannot write its cpuset (%s): confining "
                 "its threads with sched_setaffinity instead",
                 c->stepname,
                 err.text);
        ev.how = CONFINE_AFFINITY;
    }
    cl = topo_list_format (cpus);
    snprintf (ev.cpus, sizeof (ev.cpus), "%s", cl ? cl : "?");
    if (ev.how == CONFINE_CPUSET) {
        m = topo_list_format (mems);
        snprintf (ev.mems, sizeof (ev.mems), "%s", m ? m : "?");
    }
    /* cpuset: the kernel moved every thread; sweep anyway where the
     * cpuset is not enforced for a thread that set its own affinity */
    if (ev.how == CONFINE_AFFINITY)
        ev.threads = sweep (c, cg, cpus, &ev.passes);
done:
    if (ev.how == CONFINE_QUOTA)
        snprintf (line,
                  sizeof (line),
                  "pin: step %s on %s: used %.2f CPUs "
                  "of %g allocated for longer than %.0f s (DynamicOveruse="
                  "%g): limited to %g CPUs (cpu.max)\n",
                  c->stepname,
                  c->node,
                  ev.use,
                  c->cfg.params.alloc_cpus,
                  (double)c->cfg.params.grace_us / 1e6,
                  c->cfg.params.overuse,
                  c->cfg.params.alloc_cpus);
    else
        snprintf (line,
                  sizeof (line),
                  "pin: step %s on %s: used %.2f CPUs "
                  "of %g allocated for longer than %.0f s (DynamicOveruse="
                  "%g): confined to cpus %s%s%s (%s)\n",
                  c->stepname,
                  c->node,
                  ev.use,
                  c->cfg.params.alloc_cpus,
                  (double)c->cfg.params.grace_us / 1e6,
                  c->cfg.params.overuse,
                  ev.cpus,
                  ev.mems[0] ? " mems " : "",
                  ev.mems,
                  confine_how_name (ev.how));
    /* slurmd's log: the same line, plus the sweep's numbers */
    steplog (&c->log, STEPLOG_INFO, "%.*s", (int)strlen (line) - 1, line);
    if (ev.how == CONFINE_AFFINITY)
        steplog (&c->log,
                 STEPLOG_INFO,
                 "pin: step %s: affinity sweep moved %u thread(s) in %u "
                 "pass(es)",
                 c->stepname,
                 ev.threads,
                 ev.passes);
    if (!tell_owner (c, line))
        steplog (&c->log,
                 STEPLOG_DEBUG,
                 "pin: step %s: no task stderr to tell the user on",
                 c->stepname);
out:
    free (cl);
    free (m);
    pthread_mutex_lock (&c->lock);
    c->ev = ev;
    pthread_mutex_unlock (&c->lock);
    hwloc_bitmap_free (cpus);
    hwloc_bitmap_free (mems);
}

/* Write the confinement into the profile, if one is recorded. */
static void mark_confine (confine_t *c)
{
    json_object *o;
    pin_error_t err = {""};
    struct confine_event ev;

    if (!c->cfg.prof)
        return;
    pthread_mutex_lock (&c->lock);
    ev = c->ev;
    pthread_mutex_unlock (&c->lock);
    if (!ev.confined || !(o = json_object_new_object ()))
        return;
    json_object_object_add (o, "type", json_object_new_string ("confine"));
    json_object_object_add (o,
                            "how",
                            json_object_new_string (
                                confine_how_name (ev.how)));
    json_object_object_add (o, "cpus", json_object_new_string (ev.cpus));
    json_object_object_add (o, "mems", json_object_new_string (ev.mems));
    json_object_object_add (o, "use", json_object_new_double (ev.use));
    if (profclient_mark (c->cfg.prof, o, &err) < 0)
        steplog (&c->log,
                 STEPLOG_ERROR,
                 "pin: step %s: profile: %s",
                 c->stepname,
                 err.text);
    json_object_put (o);
}

/* The dynamic part: one sample of cpu.stat, a verdict, maybe confine.
 * Returns false when there is nothing more to watch for it. */
static bool dynamic_tick (confine_t *c,
                          cg2_t *cg,
                          struct watch_state *w,
                          int dirfd,
                          const char *path,
                          hwloc_bitmap_t *cpus,
                          unsigned *fails,
                          unsigned *resweeps)
{
    struct watch_sample s;
    enum watch_verdict v;

    s.time_us = stepwatch_clock_us (CLOCK_MONOTONIC);
    if (read_usage (dirfd, &s.usage_usec) < 0) {
        if ((*fails)++ == 0)
            steplog (&c->log,
                     STEPLOG_ERROR,
                     "pin: step %s: cannot read %s/cpu.stat: %s",
                     c->stepname,
                     path,
                     strerror (errno));
    } else if (!w->confined) {
        struct watch_report r;
        bool was_in_run = w->in_run;
        int64_t was_run_us = w->run_us;

        v = watch_feed (w, &s, &r);
        if (was_in_run && !w->in_run && v == WATCH_KEEP)
            steplog (&c->log,
                     STEPLOG_INFO,
                     "pin: step %s: over-use forgiven after %.1f s "
                     "counted (grace %.1f s)",
                     c->stepname,
                     (double)was_run_us / 1e6,
                     (double)c->cfg.params.grace_us / 1e6);
        if (v == WATCH_CONFINE) {
            do_confine (c, cg, w);
            mark_confine (c);
            pthread_mutex_lock (&c->lock);
            bool again = c->ev.confined && c->ev.how == CONFINE_AFFINITY;
            if (again && !*cpus)
                *cpus = hwloc_bitmap_alloc ();
            if (*cpus && again)
                (void)topo_list_parse (c->ev.cpus, *cpus, NULL);
            pthread_mutex_unlock (&c->lock);
            if (!again)
                return false; /* the kernel keeps the cpuset / quota */
        }
    } else if (*cpus) {
        /* affinity mode: nothing enforces it, so sweep again (new
         * threads inherit it; a thread may widen its own) */
        unsigned passes;
        unsigned n = sweep (c, cg, *cpus, &passes);
        if (n && (*resweeps)++ == 0)
            steplog (&c->log,
                     STEPLOG_INFO,
                     "pin: step %s: %u thread(s) had left cpus %s; "
                     "confined again (reported once)",
                     c->stepname,
                     n,
                     c->ev.cpus);
    }
    return true;
}

/* The step's directory: made by slurmstepd or by us from the job and
 * step ids, in a tree users cannot write; opened once. */
static bool confine_open (confine_t *c)
{
    pin_error_t err = {""};

    watch_init (&c->w, &c->cfg.params);
    snprintf (c->path, sizeof (c->path), "%s/%s", c->root, c->watch_rel);
    if (!(c->cg = cg2_open (c->root, &err))) {
        steplog (&c->log,
                 STEPLOG_ERROR,
                 "pin: step %s: policy dynamic: %s; "
                 "not watched",
                 c->stepname,
                 err.text);
        return false;
    }
    if ((c->dirfd =
             open (c->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC))
        < 0) {
        steplog (&c->log,
                 STEPLOG_ERROR,
                 "pin: step %s: policy dynamic: %s: "
                 "%s; not watched",
                 c->stepname,
                 c->path,
                 strerror (errno));
        return false;
    }
    return true;
}

/* Before each poll: one tick when due; no fds of its own. */
static int confine_prepare (void *arg,
                            struct pollfd *fds,
                            int max,
                            int *timeout_ms)
{
    confine_t *c = arg;
    int64_t now = stepwatch_clock_us (CLOCK_MONOTONIC);
    int t;

    (void)fds;
    (void)max;
    if (!c->opened) {
        c->opened = true;
        c->next = now;
        if (!confine_open (c))
            return -1;
    }
    if (now >= c->next) {
        if (!dynamic_tick (c,
                           c->cg,
                           &c->w,
                           c->dirfd,
                           c->path,
                           &c->cpus,
                           &c->fails,
                           &c->resweeps))
            return -1;
        c->next += c->cfg.params.interval_us;
        now = stepwatch_clock_us (CLOCK_MONOTONIC);
        if (c->next < now)
            c->next = now + c->cfg.params.interval_us;
    }
    t = (int)((c->next - now + 999) / 1000);
    if (*timeout_ms < 0 || t < *timeout_ms)
        *timeout_ms = t;
    return 0;
}

static void confine_finish (void *arg, int status)
{
    confine_t *c = arg;

    (void)status;
    if (c->dirfd >= 0)
        close (c->dirfd);
    c->dirfd = -1;
    hwloc_bitmap_free (c->cpus);
    c->cpus = NULL;
    cg2_close (c->cg);
    c->cg = NULL;
}

void confine_client (confine_t *c, struct stepwatch_client *client)
{
    memset (client, 0, sizeof (*client));
    client->arg = c;
    client->prepare = confine_prepare;
    client->finish = confine_finish;
}

confine_t *confine_create (const struct confine_config *cfg, pin_error_t *errp)
{
    confine_t *c;

    if (!cfg || !cfg->plan || !cfg->cgroup_root || !cfg->watch_rel
        || !cfg->stepname) {
        errno = EINVAL;
        errprintf (errp, "watcher: missing configuration");
        return NULL;
    }
    if (watch_params_check (&cfg->params, errp) < 0)
        return NULL;
    if (!(c = calloc (1, sizeof (*c)))) {
        errprintf (errp, "out of memory");
        return NULL;
    }
    pthread_mutex_init (&c->lock, NULL);
    c->cfg = *cfg;
    c->log = cfg->log;
    c->dirfd = -1;
    snprintf (c->stepname, sizeof (c->stepname), "%s", cfg->stepname);
    snprintf (c->node, sizeof (c->node), "%s", cfg->node ? cfg->node : "?");
    snprintf (c->root, sizeof (c->root), "%s", cfg->cgroup_root);
    snprintf (c->watch_rel,
              sizeof (c->watch_rel),
              "%s",
              cfg->watch_rel[0] == '/' ? cfg->watch_rel + 1 : cfg->watch_rel);
    c->cfg.stepname = c->stepname;
    c->cfg.node = c->node;
    c->cfg.cgroup_root = c->root;
    c->cfg.watch_rel = c->watch_rel;
    return c;
}

void confine_get_event (confine_t *c, struct confine_event *ev)
{
    pthread_mutex_lock (&c->lock);
    *ev = c->ev;
    pthread_mutex_unlock (&c->lock);
}

void confine_destroy (confine_t *c)
{
    int saved = errno;

    if (c) {
        confine_finish (c, -1);
        pthread_mutex_destroy (&c->lock);
        free (c);
    }
    errno = saved;
}
