/* dynamic.c - the step watcher in slurmstepd: policy dynamic and the
 * step's profile recorder, one thread (dynamic.h; decisions in libwatch,
 * recording in libprof, choices in doc/admin-guide.md and
 * doc/profiling.md). */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "libaffinity/affinity.h"
#include "libcgroup2/cg2.h"
#include "libprof/record.h"
#include "libtopo/topo.h"
#include "dynamic.h"

#define MAX_TASKS 64            /* pids remembered for the stderr line */
#define MAX_PASSES 50           /* sweep passes before giving up a round */
#define QUOTA_PERIOD 100000     /* cpu.max period, us */

#define MAX_PROF_FDS 8

static struct {
    pthread_mutex_t lock;
    int stop_fd;                /* eventfd: written once to stop */
    pthread_t thread;
    bool started, joined;
    int prof_status;            /* for the profile's end line */
    struct dynamic_config cfg;
    char stepname[32];
    char node[64];
    char root[PATH_MAX];
    char watch_rel[PATH_MAX];
    pid_t tasks[MAX_TASKS];
    unsigned ntasks;
    struct dynamic_event ev;
    int64_t cpu_us, wall_us;
} d = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .stop_fd = -1,
    .prof_status = -1,
};

const char *dynamic_how_name (enum dynamic_how how)
{
    switch (how) {
        case DYNAMIC_CPUSET:
            return "cpuset";
        case DYNAMIC_AFFINITY:
            return "affinity";
        case DYNAMIC_QUOTA:
            return "quota";
    }
    return "?";
}

void dynamic_add_task (pid_t pid)
{
    pthread_mutex_lock (&d.lock);
    if (d.ntasks < MAX_TASKS && pid > 0)
        d.tasks[d.ntasks++] = pid;
    pthread_mutex_unlock (&d.lock);
}

static int64_t clock_us (clockid_t id)
{
    struct timespec ts;

    if (clock_gettime (id, &ts) < 0)
        return 0;
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
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

/* ---- affinity sweep ------------------------------------------------------ */

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
        pin_error_t err = { "" };

        if (*end || tid <= 0 || tid > INT_MAX)
            continue;
        s->seen++;
        if (affinity_get ((pid_t)tid, s->cur) < 0)
            continue;   /* exited */
        /* a thread already inside (the user's own finer binding) stays */
        if (hwloc_bitmap_isincluded (s->cur, s->cpus))
            continue;
        if (affinity_set ((pid_t)tid, s->cpus, &err) == 0)
            s->changed++;
        else if (errno != ESRCH) {
            if (!s->failed++)
                snprintf (s->first_error, sizeof (s->first_error), "%s",
                          err.text);
        }
    }
    free (text);
}

static enum cg2_busy_verdict sweep_cb (const char *path, const char *sub,
                                       const char *name, void *arg)
{
    (void)sub;
    (void)name;
    sweep_dir (arg, path);
    return CG2_BUSY_DESCEND;
}

/* Passes over every cgroup of the step until one changes nothing.
 * Returns the threads changed; *passes the passes made. */
static unsigned sweep (cg2_t *cg, hwloc_const_bitmap_t cpus,
                       unsigned *passes)
{
    struct sweep s = { .cg = cg, .cpus = cpus };
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
        sweep_dir (&s, d.watch_rel);
        (void)cg2_busy_cpus_filter (cg, d.watch_rel, sweep_cb, &s, unused,
                                    NULL);
        total += s.changed;
        if (s.changed == 0)
            break;
    }
    if (p > MAX_PASSES)
        slurm_error ("pin: step %s: threads still appear outside cpus after "
                     "%d passes (a fork storm?); the next interval sweeps "
                     "again", d.stepname, MAX_PASSES);
    if (s.failed)
        slurm_error ("pin: step %s: %u thread(s) could not be confined: %s",
                     d.stepname, s.failed, s.first_error);
    *passes = p > MAX_PASSES ? MAX_PASSES : p;
    hwloc_bitmap_free (s.cur);
    hwloc_bitmap_free (unused);
    return total;
}

/* ---- cpuset --------------------------------------------------------------- */

struct cpuset_walk {
    cg2_t *cg;
    hwloc_const_bitmap_t cpus, mems;
    unsigned failed;
    char first_error[200];
};

/* Below the step's cgroup: rewrite the directories that have a cpuset
 * of their own (Slurm's task cgroups with ConstrainCores); empty ones
 * inherit. */
static enum cg2_busy_verdict cpuset_cb (const char *path, const char *sub,
                                        const char *name, void *arg)
{
    struct cpuset_walk *w = arg;
    pin_error_t err = { "" };
    char *cur = cg2_read (w->cg, path, "cpuset.cpus", NULL);

    (void)sub;
    (void)name;
    if (cur && *cur
        && cg2_set_cpuset (w->cg, path, w->cpus, w->mems, &err) < 0
        && !w->failed++)
        snprintf (w->first_error, sizeof (w->first_error), "%s", err.text);
    free (cur);
    return CG2_BUSY_DESCEND;
}

static int confine_cpuset (cg2_t *cg, hwloc_const_bitmap_t cpus,
                           hwloc_const_bitmap_t mems, pin_error_t *errp)
{
    struct cpuset_walk w = { .cg = cg, .cpus = cpus, .mems = mems };
    hwloc_bitmap_t unused = hwloc_bitmap_alloc ();
    pin_error_t err = { "" };
    int rc;

    if (!unused)
        return errprintf (errp, "out of memory");
    rc = cg2_set_cpuset (cg, d.watch_rel, cpus, mems, &err);
    if (rc == 0) {
        (void)cg2_busy_cpus_filter (cg, d.watch_rel, cpuset_cb, &w, unused,
                                    NULL);
        if (w.failed)
            rc = errprintf (errp, "%s", w.first_error);
    }
    else
        errprintf (errp, "%s", err.text);
    hwloc_bitmap_free (unused);
    return rc;
}

/* ---- telling the job's owner ---------------------------------------------- */

/* One line on the stderr of the step's first task that still has one we
 * may write as root: an anonymous pipe (slurmstepd's own I/O pipe) or a
 * regular file owned by the job's user; anything else (a device, a FIFO
 * or file of someone else the user opened and put on fd 2) is left
 * alone.  The file is checked again after the open (the task may swap its
 * fd 2 in between); opened O_NONBLOCK so a full pipe never blocks us. */
static bool stderr_ok (const struct stat *st, const char *link)
{
    if (S_ISFIFO (st->st_mode))
        return strncmp (link, "pipe:[", 6) == 0 || st->st_uid == d.cfg.uid;
    if (S_ISREG (st->st_mode))
        return st->st_uid == d.cfg.uid;
    return false;
}

static bool tell_owner (const char *line)
{
    pid_t tasks[MAX_TASKS];
    unsigned n;

    pthread_mutex_lock (&d.lock);
    n = d.ntasks;
    memcpy (tasks, d.tasks, n * sizeof (pid_t));
    pthread_mutex_unlock (&d.lock);
    for (unsigned i = 0; i < n; i++) {
        char path[64], link[128];
        struct stat before, after;
        ssize_t len;
        int fd;

        snprintf (path, sizeof (path), "/proc/%d/fd/2", (int)tasks[i]);
        if ((len = readlink (path, link, sizeof (link) - 1)) < 0)
            continue;
        link[len] = '\0';
        if (stat (path, &before) < 0 || !stderr_ok (&before, link))
            continue;
        fd = open (path, O_WRONLY | O_APPEND | O_NONBLOCK | O_NOCTTY
                         | O_CLOEXEC);
        if (fd < 0)
            continue;
        if (fstat (fd, &after) == 0 && after.st_dev == before.st_dev
            && after.st_ino == before.st_ino && stderr_ok (&after, link)) {
            bool ok = write (fd, line, strlen (line))
                      == (ssize_t)strlen (line);
            close (fd);
            if (ok)
                return true;
            continue;
        }
        close (fd);
    }
    return false;
}

/* ---- the thread ------------------------------------------------------------ */

static void confine (cg2_t *cg, const struct watch_state *w)
{
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc ();
    hwloc_bitmap_t mems = hwloc_bitmap_alloc ();
    pin_error_t err = { "" };
    struct dynamic_event ev = { 0 };
    char line[1024], *c = NULL, *m = NULL;

    ev.confined = true;
    ev.confined_us = clock_us (CLOCK_REALTIME);
    ev.use = w->confine_use;
    ev.how = d.cfg.how;
    if (!cpus || !mems)
        goto out;
    if (ev.how == DYNAMIC_QUOTA) {
        char max[64];
        long long quota = (long long)(d.cfg.params.alloc_cpus
                                      * QUOTA_PERIOD + 0.5);
        snprintf (max, sizeof (max), "%lld %d", quota, QUOTA_PERIOD);
        if (cg2_write (cg, d.watch_rel, "cpu.max", max, &err) == 0)
            goto done;
        slurm_error ("pin: step %s: DynamicConfine=quota: %s; confining "
                     "its CPUs instead", d.stepname, err.text);
        ev.how = DYNAMIC_CPUSET;
    }
    if (d.cfg.plan (d.cfg.plan_arg, cpus, mems, &err) < 0) {
        slurm_error ("pin: step %s: used %.2f CPUs for longer than its "
                     "grace but cannot be placed: %s; it keeps running "
                     "unconfined", d.stepname, ev.use, err.text);
        ev.confined = false;
        goto out;
    }
    if (ev.how == DYNAMIC_CPUSET
        && confine_cpuset (cg, cpus, mems, &err) < 0) {
        slurm_error ("pin: step %s: cannot write its cpuset (%s): confining "
                     "its threads with sched_setaffinity instead",
                     d.stepname, err.text);
        ev.how = DYNAMIC_AFFINITY;
    }
    c = topo_list_format (cpus);
    snprintf (ev.cpus, sizeof (ev.cpus), "%s", c ? c : "?");
    if (ev.how == DYNAMIC_CPUSET) {
        m = topo_list_format (mems);
        snprintf (ev.mems, sizeof (ev.mems), "%s", m ? m : "?");
    }
    /* cpuset: the kernel moved every thread; sweep anyway where the
     * cpuset is not enforced for a thread that set its own affinity */
    if (ev.how == DYNAMIC_AFFINITY)
        ev.threads = sweep (cg, cpus, &ev.passes);
done:
    if (ev.how == DYNAMIC_QUOTA)
        snprintf (line, sizeof (line), "pin: step %s on %s: used %.2f CPUs "
                  "of %g allocated for longer than %.0f s (DynamicOveruse="
                  "%g): limited to %g CPUs (cpu.max)\n", d.stepname, d.node,
                  ev.use, d.cfg.params.alloc_cpus,
                  (double)d.cfg.params.grace_us / 1e6, d.cfg.params.overuse,
                  d.cfg.params.alloc_cpus);
    else
        snprintf (line, sizeof (line), "pin: step %s on %s: used %.2f CPUs "
                  "of %g allocated for longer than %.0f s (DynamicOveruse="
                  "%g): confined to cpus %s%s%s (%s)\n", d.stepname, d.node,
                  ev.use, d.cfg.params.alloc_cpus,
                  (double)d.cfg.params.grace_us / 1e6, d.cfg.params.overuse,
                  ev.cpus, ev.mems[0] ? " mems " : "", ev.mems,
                  dynamic_how_name (ev.how));
    /* slurmd's log: the same line, plus the sweep's numbers */
    slurm_info ("%.*s", (int)strlen (line) - 1, line);
    if (ev.how == DYNAMIC_AFFINITY)
        slurm_info ("pin: step %s: affinity sweep moved %u thread(s) in %u "
                    "pass(es)", d.stepname, ev.threads, ev.passes);
    if (!tell_owner (line))
        slurm_debug ("pin: step %s: no task stderr to tell the user on",
                     d.stepname);
out:
    free (c);
    free (m);
    pthread_mutex_lock (&d.lock);
    d.ev = ev;
    pthread_mutex_unlock (&d.lock);
    hwloc_bitmap_free (cpus);
    hwloc_bitmap_free (mems);
}

/* Write the confinement into the profile, if one is recorded. */
static void mark_confine (void)
{
    json_object *o;
    pin_error_t err = { "" };
    struct dynamic_event ev;

    if (!d.cfg.prof)
        return;
    pthread_mutex_lock (&d.lock);
    ev = d.ev;
    pthread_mutex_unlock (&d.lock);
    if (!ev.confined || !(o = json_object_new_object ()))
        return;
    json_object_object_add (o, "type", json_object_new_string ("confine"));
    json_object_object_add (o, "how",
                            json_object_new_string (dynamic_how_name (ev.how)));
    json_object_object_add (o, "cpus", json_object_new_string (ev.cpus));
    json_object_object_add (o, "mems", json_object_new_string (ev.mems));
    json_object_object_add (o, "use", json_object_new_double (ev.use));
    if (prof_rec_mark (d.cfg.prof, o, &err) < 0)
        slurm_error ("pin: step %s: profile: %s", d.stepname, err.text);
    json_object_put (o);
}

/* The dynamic part: one sample of cpu.stat, a verdict, maybe confine.
 * Returns false when there is nothing more to watch for it. */
static bool dynamic_tick (cg2_t *cg, struct watch_state *w, int dirfd,
                          const char *path, hwloc_bitmap_t *cpus,
                          unsigned *fails, unsigned *resweeps)
{
    struct watch_sample s;
    enum watch_verdict v;

    s.time_us = clock_us (CLOCK_MONOTONIC);
    if (read_usage (dirfd, &s.usage_usec) < 0) {
        if ((*fails)++ == 0)
            slurm_error ("pin: step %s: cannot read %s/cpu.stat: %s",
                         d.stepname, path, strerror (errno));
    }
    else if (!w->confined) {
        struct watch_report r;
        bool was_in_run = w->in_run;
        int64_t was_run_us = w->run_us;

        v = watch_feed (w, &s, &r);
        if (was_in_run && !w->in_run && v == WATCH_KEEP)
            slurm_info ("pin: step %s: over-use forgiven after %.1f s "
                        "counted (grace %.1f s)", d.stepname,
                        (double)was_run_us / 1e6,
                        (double)d.cfg.params.grace_us / 1e6);
        if (v == WATCH_CONFINE) {
            confine (cg, w);
            mark_confine ();
            pthread_mutex_lock (&d.lock);
            bool again = d.ev.confined && d.ev.how == DYNAMIC_AFFINITY;
            if (again && !*cpus)
                *cpus = hwloc_bitmap_alloc ();
            if (*cpus && again)
                (void)topo_list_parse (d.ev.cpus, *cpus, NULL);
            pthread_mutex_unlock (&d.lock);
            if (!again)
                return false;   /* the kernel keeps the cpuset / quota */
        }
    }
    else if (*cpus) {
        /* affinity mode: nothing enforces it, so sweep again (new
         * threads inherit it; a thread may widen its own) */
        unsigned passes;
        unsigned n = sweep (cg, *cpus, &passes);
        if (n && (*resweeps)++ == 0)
            slurm_info ("pin: step %s: %u thread(s) had left cpus %s; "
                        "confined again (reported once)", d.stepname, n,
                        d.ev.cpus);
    }
    return true;
}

static void *watcher (void *arg)
{
    struct watch_state w;
    cg2_t *cg = NULL;
    pin_error_t err = { "" };
    hwloc_bitmap_t cpus = NULL;
    int64_t wall0 = clock_us (CLOCK_MONOTONIC), next;
    unsigned fails = 0, resweeps = 0;
    char path[PATH_MAX * 2];
    int dirfd = -1;
    bool watching = d.cfg.watch;
    struct prof_rec *prof = d.cfg.prof;

    (void)arg;
    if (watching) {
        watch_init (&w, &d.cfg.params);
        /* The step's directory: made by slurmstepd or by us from the job
         * and step ids, in a tree users cannot write; opened once. */
        snprintf (path, sizeof (path), "%s/%s", d.root, d.watch_rel);
        if (!(cg = cg2_open (d.root, &err))) {
            slurm_error ("pin: step %s: policy dynamic: %s; not watched",
                         d.stepname, err.text);
            watching = false;
        }
        else if ((dirfd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW
                                      | O_CLOEXEC)) < 0) {
            slurm_error ("pin: step %s: policy dynamic: %s: %s; not "
                         "watched", d.stepname, path, strerror (errno));
            watching = false;
        }
    }
    for (next = clock_us (CLOCK_MONOTONIC);; ) {
        struct pollfd fds[1 + MAX_PROF_FDS];
        int nfds = 1, timeout = -1;
        int64_t now = clock_us (CLOCK_MONOTONIC);

        if (watching && now >= next) {
            watching = dynamic_tick (cg, &w, dirfd, path, &cpus, &fails,
                                     &resweeps);
            next += d.cfg.params.interval_us;
            now = clock_us (CLOCK_MONOTONIC);
            if (next < now)
                next = now + d.cfg.params.interval_us;
        }
        if (!watching && !prof)
            break;
        if (watching)
            timeout = (int)((next - now + 999) / 1000);
        fds[0].fd = d.stop_fd;
        fds[0].events = POLLIN;
        if (prof) {
            int t = prof_rec_timeout_ms (prof);
            nfds += prof_rec_pollfds (prof, fds + 1, MAX_PROF_FDS);
            if (t >= 0 && (timeout < 0 || t < timeout))
                timeout = t;
        }
        for (int i = 0; i < nfds; i++)
            fds[i].revents = 0;
        if (poll (fds, (nfds_t)nfds, timeout) < 0 && errno != EINTR)
            break;
        if (fds[0].revents)
            break;
        if (prof && prof_rec_process (prof, &err) < 0) {
            slurm_error ("pin: step %s: profile: %s; recording stops",
                         d.stepname, err.text);
            (void)prof_rec_finish (prof, -1, NULL);
            prof = NULL;
        }
    }
    if (prof) {
        pin_error_t e = { "" };
        int status;
        pthread_mutex_lock (&d.lock);
        status = d.prof_status;
        pthread_mutex_unlock (&d.lock);
        if (prof_rec_finish (prof, status, &e) < 0)
            slurm_error ("pin: step %s: profile: %s", d.stepname, e.text);
    }
    if (dirfd >= 0)
        close (dirfd);
    hwloc_bitmap_free (cpus);
    cg2_close (cg);
    pthread_mutex_lock (&d.lock);
    d.cpu_us = clock_us (CLOCK_THREAD_CPUTIME_ID);
    d.wall_us = clock_us (CLOCK_MONOTONIC) - wall0;
    pthread_mutex_unlock (&d.lock);
    return NULL;
}

int dynamic_start (const struct dynamic_config *cfg, pin_error_t *errp)
{
    pthread_attr_t attr;
    sigset_t all, old;
    int rc;

    if (d.started)
        return errprintf (errp, "watcher already started");
    if (!cfg->watch && !cfg->prof)
        return errprintf (errp, "watcher: nothing to watch");
    if (cfg->watch) {
        if (watch_params_check (&cfg->params, errp) < 0)
            return -1;
        if (!cfg->plan || !cfg->cgroup_root || !cfg->watch_rel)
            return errprintf (errp, "watcher: missing configuration");
    }
    d.cfg = *cfg;
    snprintf (d.stepname, sizeof (d.stepname), "%s", cfg->stepname);
    snprintf (d.node, sizeof (d.node), "%s", cfg->node ? cfg->node : "?");
    snprintf (d.root, sizeof (d.root), "%s",
              cfg->cgroup_root ? cfg->cgroup_root : "");
    snprintf (d.watch_rel, sizeof (d.watch_rel), "%s",
              !cfg->watch_rel ? ""
              : cfg->watch_rel[0] == '/' ? cfg->watch_rel + 1
                                         : cfg->watch_rel);
    d.cfg.stepname = d.stepname;
    d.cfg.node = d.node;
    d.cfg.cgroup_root = d.root;
    d.cfg.watch_rel = d.watch_rel;
    if ((d.stop_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
        return errprintf (errp, "cannot make the watcher's eventfd: %s",
                          strerror (errno));
    pthread_attr_init (&attr);
    pthread_attr_setstacksize (&attr, 256 * 1024);
    /* slurmstepd handles its signals in its own threads: the watcher
     * takes none */
    sigfillset (&all);
    pthread_sigmask (SIG_SETMASK, &all, &old);
    rc = pthread_create (&d.thread, &attr, watcher, NULL);
    pthread_sigmask (SIG_SETMASK, &old, NULL);
    pthread_attr_destroy (&attr);
    if (rc != 0) {
        close (d.stop_fd);
        d.stop_fd = -1;
        errno = rc;
        return errprintf (errp, "cannot start the watcher thread: %s",
                          strerror (rc));
    }
    d.started = true;
    return 0;
}

void dynamic_set_status (int status)
{
    pthread_mutex_lock (&d.lock);
    d.prof_status = status;
    pthread_mutex_unlock (&d.lock);
}

bool dynamic_running (void)
{
    return d.started && !d.joined;
}

void dynamic_stop (struct dynamic_event *ev, int64_t *cpu_us,
                   int64_t *wall_us)
{
    if (d.started && !d.joined) {
        uint64_t one = 1;
        while (write (d.stop_fd, &one, sizeof (one)) < 0 && errno == EINTR)
            ;
        pthread_join (d.thread, NULL);
        d.joined = true;
        close (d.stop_fd);
        d.stop_fd = -1;
    }
    pthread_mutex_lock (&d.lock);
    if (ev)
        *ev = d.ev;
    if (cpu_us)
        *cpu_us = d.cpu_us;
    if (wall_us)
        *wall_us = d.wall_us;
    pthread_mutex_unlock (&d.lock);
}
