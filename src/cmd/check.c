/* check.c - slurm-pin check: is this node ready for pin.so, in which mode
 *
 * Looks at what pin.so will look at in slurmstepd (pin.conf through
 * libconf, the topology cache through libtopo, the cgroup v2 hierarchy
 * through libcgroup2) and at what it cannot see: where the cpuset and
 * cpu controllers are bound, through libcgroup, which knows cgroup v1 and
 * v2 mounts alike (the reason the plugin falls back to sched_setaffinity
 * on hybrid hosts), and what Slurm's slurm.conf and cgroup.conf say about
 * Slurm's own step cgroups.  Prints a short aligned report or one JSON
 * object, and exits 0 when the plugin can run on this node (in any mode),
 * 1 with one line on stderr saying why not.
 *
 * libcgroup is used only through libcgview, by slurm-pin alone: the
 * plugin's cgroup layer does its own file I/O (doc/cgroup.md).  What is
 * decided here is decided in the libraries; this file gathers and prints.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmdopt.h"
#include "libcgroup2/cg2.h"
#include "libcgroup2/mode.h"
#include "libcgview/cgview.h"
#include "libconf/conf.h"
#include "libplace/place.h"
#include "libtopo/topo.h"
#include "libutil/errprintf.h"
#include "libutil/safefile.h"
#include "subcmd.h"

#define NAME "check"

static const struct cmdopt options[] = {
    {"conf",
     'c',
     CMDOPT_REQUIRED,
     "FILE",
     "pin.conf to check (must exist); default\n" PIN_CONF_DEFAULT_PATH " if "
     "it "
     "exists"
     ", "
     "else "
     "the\n"
     "built-in defaults",
     0},
    {"json",
     'j',
     CMDOPT_NONE,
     NULL,
     "print one JSON object instead of text",
     0},
    CMDOPT_END,
};

static const struct cmdopt_spec spec = {
    .name = NAME,
    .usage =
        "Usage: slurm-pin check [--conf FILE] [--json]\n"
        "\n"
        "Tell whether pin.so can run on this node and in which mode: reads\n"
        "pin.conf, loads the topology (through TopologyCache when run as "
        "root),\n"
        "looks at the cgroup v2 hierarchy, asks libcgroup where the cpuset "
        "and cpu\n"
        "controllers are bound (cgroup v1 or v2), reads CgroupPlugin from\n"
        "cgroup.conf beside $SLURM_CONF (default " CG2_SLURM_CONF_DEFAULT
        "), and "
        "checks StateDir.\n",
    .footer =
        "Exit status 0 when the plugin can run (nested, standalone or "
        "affinity\n"
        "fallback), 1 with one line on stderr when it cannot (bad pin.conf,\n"
        "topology not loadable, no cgroup v2 hierarchy, unsafe StateDir).\n"
        "See slurm-pin(1).\n",
    .usage_status = 1,
    .tables = {options, NULL},
};

/* Where libcgroup says a controller is (libcgview/cgview.h). */
enum lcg_state {
    LCG_UNAVAILABLE = CGVIEW_UNAVAILABLE, /* see lcg_error */
    LCG_MOUNTED = CGVIEW_MOUNTED,         /* mount and version below */
    LCG_NOT_MOUNTED = CGVIEW_NOT_MOUNTED, /* in no hierarchy */
    LCG_ERROR = CGVIEW_ERROR,             /* lookup failed: see note */
};

struct ctl_view {
    const char *name; /* "cpuset", "cpu" */
    bool v2;          /* cg2_has_controller() at the root */
    enum lcg_state state;
    char mount[PATH_MAX]; /* LCG_MOUNTED: where */
    int version;          /* LCG_MOUNTED: 1, 2, or 0 (unknown) */
    char note[256];       /* LCG_ERROR: libcgroup's message */
};

struct report {
    bool ok;          /* pin.so can run here */
    char reason[512]; /* why not (one line) */

    /* pin.conf */
    struct pin_conf conf;
    char conf_path[PATH_MAX]; /* the file looked at */
    bool conf_found;
    bool conf_ok;
    pin_error_t conf_err;

    /* topology */
    bool topo_ok;
    bool topo_cached; /* loaded through the cache */
    bool topo_refreshed;
    char topo_note[PATH_MAX + 128]; /* source, in words */
    unsigned npus, ncores, nnuma;
    pin_error_t topo_err;

    /* cgroup v2 (libcgroup2) */
    bool cg_ok;
    char cg_root[PATH_MAX];
    char *cg_controllers; /* cgroup.controllers of the root */
    pin_error_t cg_err;

    /* the cross-version view (libcgroup) */
    bool lcg_ok;
    char lcg_error[256];
    struct ctl_view ctl[2];

    /* Slurm's configuration (libcgroup2/mode.h) */
    struct cg2_slurm_conf sc;

    /* StateDir */
    bool state_ok;
    char state_note[PATH_MAX + 128];

    /* JournalDir: shares its file system with a world-writable dir? */
    char journal_shared[16]; /* "/tmp", ...; "" if none */
    char journal_note[PATH_MAX + 256];

    /* the verdict */
    const char *mode;
    char mode_detail[3 * PATH_MAX + 1024];
};

/* Returns 0 to go on, or -1 with the exit status in *status (--help
 * printed, or a usage error). */
static int parse_args (int argc,
                       char **argv,
                       const char **conf,
                       bool *json,
                       int *status)
{
    struct cmdopt_parser p;
    const char *arg;
    int c, rc = -1;

    *conf = NULL;
    *json = false;
    *status = 1;
    if (cmdopt_init (&p, &spec, argc, argv) < 0) {
        cmd_error (NAME, "out of memory");
        return -1;
    }
    while ((c = cmdopt_next (&p, &arg)) > 0) {
        switch (c) {
            case 'c':
                if (!*arg) {
                    cmd_error (NAME,
                               "--conf='': empty; give the path of a "
                               "pin.conf file");
                    goto out;
                }
                *conf = arg;
                break;
            case 'j':
                *json = true;
                break;
        }
    }
    if (c < 0)
        *status = p.status;
    else if (cmdopt_no_operands (&p) == 0)
        rc = 0;
out:
    cmdopt_fini (&p);
    return rc;
}

/* The first failure is the reason; later ones only show in the report. */
static void fail (struct report *r, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
static void fail (struct report *r, const char *fmt, ...)
{
    va_list ap;

    if (!r->ok)
        return;
    r->ok = false;
    va_start (ap, fmt);
    vsnprintf (r->reason, sizeof (r->reason), fmt, ap);
    va_end (ap);
}

/* ---- pin.conf --------------------------------------------------------- */

/* "all" or "numa-local,none" for a mask of allowed policies */
static void mask_string (unsigned mask, char *buf, size_t n)
{
    size_t len = 0;

    if (mask == PIN_CONF_ALLOW_ALL) {
        snprintf (buf, n, "all");
        return;
    }
    buf[0] = '\0';
    for (int p = PLACE_NONE; p <= PLACE_DYNAMIC && len < n; p++) {
        if (!(mask & (1u << p)))
            continue;
        int rc = snprintf (buf + len,
                           n - len,
                           "%s%s",
                           len ? "," : "",
                           place_policy_name (p));
        if (rc < 0)
            break;
        len += rc;
    }
}

static void allowed_string (const struct pin_conf *conf, char *buf, size_t n)
{
    mask_string (conf->allowed_policies, buf, n);
}

/* What a step of partition i gets when it asks for nothing: the
 * resolver pin.so and job_submit_pin.so use (libconf). */
static void partition_effective (const struct report *r,
                                 int i,
                                 struct pin_conf_effective *eff)
{
    struct pin_conf_request req = {.partitions = r->conf.partitions[i].name};

    (void)pin_conf_resolve (&r->conf, &req, eff, NULL); /* one name */
}

/* "no", or an interval in seconds ("0.5s", "60s") */
static const char *us_string (long long us,
                              bool zero_is_no,
                              char *buf,
                              size_t n)
{
    if (us == 0 && zero_is_no)
        snprintf (buf, n, "no");
    else
        snprintf (buf, n, "%gs", (double)us / 1e6);
    return buf;
}

/* "numa-spread (forced by the partition), profile no, dynamic overuse
 * 1.2 grace 60s interval 5s confine cpuset" */
static void partition_words (const struct report *r,
                             int i,
                             char *buf,
                             size_t n)
{
    struct pin_conf_effective eff;
    char allowed[128], prof[32], grace[32], interval[32], spread[48] = "";

    partition_effective (r, i, &eff);
    mask_string (eff.rules.allowed_policies, allowed, sizeof (allowed));
    if (eff.rules.spread_sockets)
        snprintf (spread,
                  sizeof (spread),
                  ", spread over %d sockets",
                  eff.rules.spread_sockets);
    snprintf (buf,
              n,
              "%s: %s (%s)%s%s, profile %s, dynamic overuse %g grace "
              "%s interval %s confine %s%s",
              r->conf.partitions[i].name,
              place_policy_name (eff.policy),
              pin_conf_source_name (eff.source),
              eff.rules.forced_policy >= 0 ? "" : ", allowed ",
              eff.rules.forced_policy >= 0 ? "" : allowed,
              us_string (eff.profile_us, true, prof, sizeof (prof)),
              eff.rules.dynamic_overuse,
              us_string (eff.rules.dynamic_grace_us,
                         false,
                         grace,
                         sizeof (grace)),
              us_string (eff.rules.dynamic_interval_us,
                         false,
                         interval,
                         sizeof (interval)),
              eff.rules.dynamic_confine == PIN_CONFINE_QUOTA ? "quota"
                                                             : "cpuset",
              spread);
}

/* "t3040: arms none (control), numa-local; share 20%; until 2026-12-31
 * 00:00:00; job names sim-*; accounts all; seed auto" for rules that name
 * an experiment; "" otherwise. */
static void experiment_words (const struct pin_conf_rules *r,
                              char *buf,
                              size_t n)
{
    char arms[160] = "", until[40] = "none", seed[32] = "auto";
    size_t o = 0;

    buf[0] = '\0';
    if (!r->experiment[0])
        return;
    for (int i = 0; i < r->experiment_policies.n && o < sizeof (arms); i++) {
        int len = snprintf (arms + o,
                            sizeof (arms) - o,
                            "%s%s%s",
                            i ? ", " : "",
                            place_policy_name (
                                (enum place_policy)r->experiment_policies.policy[i]),
                            i ? "" : " (control)");
        if (len < 0)
            break;
        o += (size_t)len;
    }
    if (r->experiment_until) {
        time_t t = (time_t)r->experiment_until;
        struct tm tm;
        if (localtime_r (&t, &tm))
            strftime (until, sizeof (until), "%Y-%m-%dT%H:%M:%S", &tm);
    }
    if (r->experiment_seed >= 0)
        snprintf (seed, sizeof (seed), "%lld", r->experiment_seed);
    snprintf (buf,
              n,
              "%s: arms %s; share %g%%; until %s; job names %s; accounts %s; "
              "seed %s%s",
              r->experiment,
              arms,
              r->experiment_share * 100,
              until,
              r->experiment_job_names[0] ? r->experiment_job_names : "all",
              r->experiment_accounts[0] ? r->experiment_accounts : "all",
              seed,
              r->forced_policy >= 0 ? "; not enrolled here (forced policy)"
                                    : "");
}

static void check_conf (struct report *r, const char *path)
{
    struct stat st;

    pin_conf_defaults (&r->conf);
    snprintf (r->conf_path,
              sizeof (r->conf_path),
              "%s",
              path ? path : PIN_CONF_DEFAULT_PATH);
    if (pin_conf_load_file (&r->conf, r->conf_path, path != NULL, &r->conf_err)
        < 0) {
        r->conf_found = stat (r->conf_path, &st) == 0;
        /* what follows is checked with the built-in defaults */
        pin_conf_defaults (&r->conf);
        fail (r, "%s", r->conf_err.text);
        return;
    }
    r->conf_ok = true;
    r->conf_found = r->conf.path[0] != '\0';
}

/* ---- topology --------------------------------------------------------- */

static bool dir_writable (const char *file)
{
    char dir[PATH_MAX];
    char *slash;

    snprintf (dir, sizeof (dir), "%s", file);
    if (!(slash = strrchr (dir, '/')))
        return false;
    if (slash == dir)
        slash[1] = '\0';
    else
        *slash = '\0';
    return access (dir, W_OK) == 0;
}

static void check_topology (struct report *r)
{
    const char *cache = r->conf.topology_cache;
    topo_t *t;

    if (!r->conf_ok) {
        snprintf (r->topo_note,
                  sizeof (r->topo_note),
                  "live (pin.conf not usable: cache not checked)");
        t = topo_load ("system", TOPO_WHOLE_SYSTEM, &r->topo_err);
    } else if (geteuid () != 0) {
        snprintf (r->topo_note,
                  sizeof (r->topo_note),
                  "live (not root: cache %s not checked)",
                  cache);
        t = topo_load ("system", TOPO_WHOLE_SYSTEM, &r->topo_err);
    } else {
        t = topo_load_cached (cache, &r->topo_refreshed, &r->topo_err);
        r->topo_cached = t != NULL;
        if (r->topo_refreshed)
            snprintf (r->topo_note,
                      sizeof (r->topo_note),
                      "cached %s (refreshed)",
                      cache);
        else if (access (cache, F_OK) < 0)
            snprintf (r->topo_note,
                      sizeof (r->topo_note),
                      "live (cache %s cannot be written: every step "
                      "discovers the machine)",
                      cache);
        else if (!dir_writable (cache))
            snprintf (r->topo_note,
                      sizeof (r->topo_note),
                      "cached %s (directory not writable: used while "
                      "current, never refreshed)",
                      cache);
        else
            snprintf (r->topo_note,
                      sizeof (r->topo_note),
                      "cached %s (up to date)",
                      cache);
    }
    if (!t) {
        fail (r, "topology: %s", r->topo_err.text);
        return;
    }
    r->topo_ok = true;
    r->npus = topo_npus (t);
    r->ncores = topo_ndomains (t, TOPO_CORE);
    for (unsigned i = 0; i < topo_ndomains (t, TOPO_NUMA); i++) {
        if (topo_numa_is_local (t, i))
            r->nnuma++;
    }
    topo_destroy (t);
}

/* ---- cgroup v2 (libcgroup2) ------------------------------------------- */

static void check_cgroup2 (struct report *r)
{
    cg2_t *cg;

    if (!(cg = cg2_open (r->conf.cgroup_root, &r->cg_err))) {
        fail (r,
              "no cgroup v2 hierarchy: %s (pin.so would bind tasks with "
              "sched_setaffinity only and account nothing)",
              r->cg_err.text);
        return;
    }
    r->cg_ok = true;
    snprintf (r->cg_root, sizeof (r->cg_root), "%s", cg2_root (cg));
    r->cg_controllers = cg2_read (cg, "", "cgroup.controllers", NULL);
    for (int i = 0; i < 2; i++)
        r->ctl[i].v2 = cg2_has_controller (cg, r->ctl[i].name);
    cg2_close (cg);
}

/* ---- the cross-version view (libcgroup) ------------------------------- */

static void check_libcgroup (struct report *r)
{
    const char *names[2] = {r->ctl[0].name, r->ctl[1].name};
    struct cgview_ctl c[2];

    r->lcg_ok =
        cgview_read (names, c, 2, r->lcg_error, sizeof (r->lcg_error)) == 0;
    for (int i = 0; i < 2 && r->lcg_ok; i++) {
        r->ctl[i].state = (enum lcg_state)c[i].state;
        snprintf (r->ctl[i].mount, sizeof (r->ctl[i].mount), "%s", c[i].mount);
        r->ctl[i].version = c[i].version;
        snprintf (r->ctl[i].note, sizeof (r->ctl[i].note), "%s", c[i].note);
    }
}

/* "bound to cgroup v1 at /sys/fs/cgroup/cpuset (libcgroup)" */
static void lcg_words (const struct report *r,
                       const struct ctl_view *v,
                       char *buf,
                       size_t n)
{
    if (!r->lcg_ok)
        snprintf (buf, n, "unknown (libcgroup: %s)", r->lcg_error);
    else if (v->state == LCG_NOT_MOUNTED)
        snprintf (buf, n, "not mounted in any hierarchy (libcgroup)");
    else if (v->state == LCG_ERROR)
        snprintf (buf, n, "unknown (libcgroup: %s)", v->note);
    else if (v->version == 1)
        snprintf (buf, n, "bound to cgroup v1 at %s (libcgroup)", v->mount);
    else if (v->version == 2)
        snprintf (buf, n, "in cgroup v2 at %s (libcgroup)", v->mount);
    else
        snprintf (buf,
                  n,
                  "at %s, not a cgroup file system (libcgroup)",
                  v->mount);
}

/* ---- slurm.conf and cgroup.conf ---------------------------------------- */

static void check_slurm_conf (struct report *r)
{
    cg2_slurm_conf_read (NULL, &r->sc);
}

/* ---- StateDir ---------------------------------------------------------- */

/* A directory pin.so keeps claims and its lock in: missing is fine (the
 * first step makes it); otherwise a directory that passes the plugin's
 * own check for root (libutil/safefile.h: root's, not writable by group
 * or others, no symlink, and the same for every directory above it).
 * Returns 0 or -1 with `why` filled. */
static int safe_dir (const char *path,
                     char *why,
                     size_t n,
                     bool *exists,
                     mode_t *mode)
{
    pin_error_t err = {""};
    struct stat st;

    *exists = false;
    if (lstat (path, &st) < 0 && errno == ENOENT)
        return 0;
    if (safefile_check (path, 0, &err) < 0) {
        snprintf (why, n, "%s", err.text);
        return -1;
    }
    *exists = true;
    if (!S_ISDIR (st.st_mode)) {
        snprintf (why,
                  n,
                  "%s: not a directory; remove it or set StateDir "
                  "to a directory owned by root, mode 0700",
                  path);
        return -1;
    }
    *mode = st.st_mode & 07777;
    return 0;
}

static void check_state_dir (struct report *r)
{
    char claims[PATH_MAX], why[PATH_MAX + 96];
    bool exists;
    mode_t mode = 0, cmode;

    if (safe_dir (r->conf.state_dir, why, sizeof (why), &exists, &mode) < 0) {
        snprintf (r->state_note, sizeof (r->state_note), "%s", why);
        fail (r, "StateDir %s", why);
        return;
    }
    if (!exists) {
        r->state_ok = true;
        snprintf (r->state_note,
                  sizeof (r->state_note),
                  "%s: not there yet (the first step makes it, mode 0700)",
                  r->conf.state_dir);
        return;
    }
    if (snprintf (claims, sizeof (claims), "%s/claims", r->conf.state_dir)
            < (int)sizeof (claims)
        && safe_dir (claims, why, sizeof (why), &exists, &cmode) < 0) {
        snprintf (r->state_note, sizeof (r->state_note), "%s", why);
        fail (r, "StateDir %s", why);
        return;
    }
    r->state_ok = true;
    snprintf (r->state_note,
              sizeof (r->state_note),
              "%s: ok (root, mode "
              "%04o)",
              r->conf.state_dir,
              (unsigned)mode);
}

/* JournalDir (or its nearest existing parent) on the file system of a
 * directory every user can write (the usual ones): a user can fill it.
 * A note, never a failure: JournalMaxSize reserves the journal's room
 * (doc/accounting.md). */
static void check_journal_dir (struct report *r)
{
    static const char *const open_dirs[] = {"/tmp", "/var/tmp", "/dev/shm"};
    const char *dir = r->conf.journal_dir;
    char path[PATH_MAX];
    struct stat st, o;
    char *slash;

    snprintf (path, sizeof (path), "%s", dir);
    while (stat (path, &st) < 0) {
        if (!(slash = strrchr (path, '/')) || slash == path) {
            snprintf (path, sizeof (path), "/");
            if (stat (path, &st) < 0)
                return;
            break;
        }
        *slash = '\0';
    }
    for (size_t i = 0; i < sizeof (open_dirs) / sizeof (open_dirs[0]); i++) {
        if (stat (open_dirs[i], &o) == 0 && S_ISDIR (o.st_mode)
            && o.st_dev == st.st_dev && (o.st_mode & S_IWOTH)) {
            snprintf (r->journal_shared,
                      sizeof (r->journal_shared),
                      "%s",
                      open_dirs[i]);
            break;
        }
    }
    if (!*r->journal_shared)
        snprintf (r->journal_note,
                  sizeof (r->journal_note),
                  "%s: ok (not on the file system of /tmp, /var/tmp or "
                  "/dev/shm)",
                  dir);
    else if (r->conf.journal_max_size)
        snprintf (r->journal_note,
                  sizeof (r->journal_note),
                  "%s: warning: on the file system of %s, which every user "
                  "can write; JournalMaxSize reserves the journal's room, "
                  "a file system of its own is safer",
                  dir,
                  r->journal_shared);
    else
        snprintf (r->journal_note,
                  sizeof (r->journal_note),
                  "%s: warning: on the file system of %s, which every user "
                  "can write, and JournalMaxSize=0 reserves no room: a user "
                  "who fills it loses records (set JournalMaxSize, or give "
                  "JournalDir a file system of its own)",
                  dir,
                  r->journal_shared);
}

/* ---- the verdict ------------------------------------------------------ */

/* The mode comes from libcgroup2's cg2_mode_detect(), the plugin's own
 * decision, fed with what Slurm's configuration says (the plugin looks at
 * its step's cgroup instead); here only the words. */
static void decide_mode (struct report *r)
{
    const struct ctl_view *cpuset = &r->ctl[0];
    char where[2 * PATH_MAX + 256];
    struct cg2_mode_input in = {
        .cgroup_root = r->conf.cgroup_root,
        .cgroup_base = r->conf.cgroup_base,
        .self_cgroup = NULL,
        .slurm = cg2_slurm_cgroups (&r->sc),
    };
    struct cg2_mode_result *res;
    cg2_t *cg;

    if (!r->conf_ok) {
        r->mode = "disabled";
        snprintf (r->mode_detail,
                  sizeof (r->mode_detail),
                  "pin.conf cannot be used: every step would fail (or run "
                  "unpinned if pin.so is optional)");
        return;
    }
    if (!(res = calloc (1, sizeof (*res)))) {
        r->mode = "unknown";
        snprintf (r->mode_detail, sizeof (r->mode_detail), "out of memory");
        return;
    }
    cg = cg2_mode_detect (&in, res);
    cg2_close (cg);
    if (res->mode == CG2_MODE_NONE) {
        r->mode = "affinity only";
        snprintf (r->mode_detail,
                  sizeof (r->mode_detail),
                  "no cgroup v2 hierarchy: tasks bound with "
                  "sched_setaffinity, steps not accounted");
    } else if (!res->cpuset) {
        if (!r->lcg_ok)
            snprintf (where,
                      sizeof (where),
                      "where cpuset is bound is "
                      "unknown: libcgroup: %s",
                      r->lcg_error);
        else if (cpuset->state == LCG_MOUNTED && cpuset->version == 1)
            snprintf (where,
                      sizeof (where),
                      "cpuset is bound to cgroup v1 "
                      "at %s",
                      cpuset->mount);
        else if (cpuset->state == LCG_MOUNTED && cpuset->version == 2)
            snprintf (where,
                      sizeof (where),
                      "cpuset is in the cgroup2 "
                      "mount at %s but not enabled at %s",
                      cpuset->mount,
                      r->cg_root);
        else if (cpuset->state == LCG_NOT_MOUNTED)
            snprintf (where,
                      sizeof (where),
                      "cpuset is not mounted in "
                      "any hierarchy");
        else
            snprintf (where,
                      sizeof (where),
                      "where cpuset is bound is "
                      "unknown");
        r->mode = "affinity fallback";
        snprintf (r->mode_detail,
                  sizeof (r->mode_detail),
                  "no cpuset controller in the cgroup v2 hierarchy at %s "
                  "(%s): tasks bound with sched_setaffinity, memory not "
                  "fenced",
                  r->cg_root,
                  where);
    } else if (res->mode == CG2_MODE_STANDALONE
               && !cg2_slurm_uses_cgroups (&r->sc)) {
        r->mode = "standalone";
        snprintf (r->mode_detail,
                  sizeof (r->mode_detail),
                  "cpuset available at %s; Slurm makes no step cgroups "
                  "(TaskPlugin=%s, ProctrackType=%s): pin.so makes "
                  "%s/%s/job_<id>/step_<id>",
                  r->cg_root,
                  *r->sc.task_plugin ? r->sc.task_plugin : "(default)",
                  *r->sc.proctrack ? r->sc.proctrack : "(default)",
                  r->cg_root,
                  r->conf.cgroup_base);
    } else if (res->mode == CG2_MODE_UNDECIDED) {
        r->mode = "standalone or nested";
        snprintf (r->mode_detail,
                  sizeof (r->mode_detail),
                  "depends on cgroup.conf (none at %s): nested with "
                  "CgroupPlugin=cgroup/v2, else standalone; cpuset "
                  "available at %s",
                  r->sc.cgroup_conf,
                  r->cg_root);
    } else if (res->mode == CG2_MODE_NESTED) {
        r->mode = "nested";
        snprintf (r->mode_detail,
                  sizeof (r->mode_detail),
                  "Slurm's cgroup/v2 makes the step cgroups (CgroupPlugin=%s"
                  "%s); pin.so narrows the cpusets inside them",
                  *r->sc.cgroup_plugin ? r->sc.cgroup_plugin : "autodetect",
                  r->sc.slurm_conf_found ? "" : "; slurm.conf not read");
    } else {
        r->mode = "standalone";
        snprintf (r->mode_detail,
                  sizeof (r->mode_detail),
                  "cpuset available at %s; Slurm's steps are not in cgroup "
                  "v2 (CgroupPlugin=%s%s%s): pin.so makes "
                  "%s/%s/job_<id>/step_<id>",
                  r->cg_root,
                  *r->sc.cgroup_plugin ? r->sc.cgroup_plugin : "autodetect",
                  r->sc.cgroup_resolved ? " = " : ", undetected",
                  r->sc.cgroup_resolved ? r->sc.cgroup_resolved : "",
                  r->cg_root,
                  r->conf.cgroup_base);
    }
    free (res);
}

/* ---- output ----------------------------------------------------------- */

static const char *plural (unsigned n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

static void print_line (const char *label, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
static void print_line (const char *label, const char *fmt, ...)
{
    char buf[PATH_MAX + 512];
    va_list ap;

    /* the values come from files (pin.conf, slurm.conf, cgroup files):
     * one line, nothing a terminal obeys */
    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    printf ("%-16s%s\n", label, cmd_text (buf));
}

static void print_text (const struct report *r)
{
    char allowed[128], buf[PATH_MAX + 128];

    allowed_string (&r->conf, allowed, sizeof (allowed));
    if (!r->conf_ok)
        print_line ("pin.conf", "%s", r->conf_err.text);
    else if (r->conf_found)
        print_line ("pin.conf",
                    "%s: ok (DefaultPolicy=%s, "
                    "AllowedPolicies=%s)",
                    r->conf_path,
                    place_policy_name (r->conf.default_policy),
                    allowed);
    else
        print_line ("pin.conf",
                    "%s: not found, built-in defaults "
                    "(DefaultPolicy=%s, AllowedPolicies=%s)",
                    r->conf_path,
                    place_policy_name (r->conf.default_policy),
                    allowed);

    for (int i = 0; r->conf_ok && i < r->conf.npartitions; i++) {
        partition_words (r, i, buf, sizeof (buf));
        print_line ("partition", "%s", buf);
    }
    /* policy experiments (doc/experiments.md): the global one, then each
     * partition's, as job_submit_pin.so enrols jobs */
    for (int i = -1; r->conf_ok && i < r->conf.npartitions; i++) {
        struct pin_conf_rules pr;
        char words[1024];

        pin_conf_rules_for (&r->conf,
                            i < 0 ? NULL : r->conf.partitions[i].name,
                            &pr);
        experiment_words (&pr, words, sizeof (words));
        if (words[0])
            print_line ("experiment",
                        "%s%s%s",
                        i < 0 ? "global" : r->conf.partitions[i].name,
                        i < 0 ? " rules, " : ", ",
                        words);
    }

    if (r->topo_ok)
        print_line ("topology",
                    "%s: %u %s, %u %s, %u NUMA %s",
                    r->topo_note,
                    r->npus,
                    plural (r->npus, "PU", "PUs"),
                    r->ncores,
                    plural (r->ncores, "core", "cores"),
                    r->nnuma,
                    plural (r->nnuma, "domain", "domains"));
    else
        print_line ("topology", "%s: %s", r->topo_note, r->topo_err.text);

    if (r->cg_ok)
        print_line ("cgroup2",
                    "%s: controllers: %s",
                    r->cg_root,
                    r->cg_controllers && *r->cg_controllers ? r->cg_controllers
                                                            : "(none)");
    else
        print_line ("cgroup2", "%s", r->cg_err.text);

    for (int i = 0; i < 2; i++) {
        const struct ctl_view *v = &r->ctl[i];

        lcg_words (r, v, buf, sizeof (buf));
        if (r->cg_ok)
            print_line (v->name,
                        "%s; %s cgroup2 at %s",
                        buf,
                        v->v2 ? "available in" : "not in",
                        r->cg_root);
        else
            print_line (v->name, "%s", buf);
    }

    if (!r->sc.slurm_conf_found)
        print_line ("slurm.conf",
                    "%s: not read (%s)",
                    r->sc.slurm_conf,
                    strerror (r->sc.slurm_conf_errno));
    else
        print_line ("slurm.conf",
                    "%s: TaskPlugin=%s, ProctrackType=%s",
                    r->sc.slurm_conf,
                    *r->sc.task_plugin ? r->sc.task_plugin : "(default)",
                    *r->sc.proctrack ? r->sc.proctrack : "(default)");
    if (!r->sc.cgroup_conf_found)
        print_line ("cgroup.conf",
                    "%s: not read (%s)",
                    r->sc.cgroup_conf,
                    strerror (r->sc.cgroup_conf_errno));
    else if (!*r->sc.cgroup_plugin
             || !strcasecmp (r->sc.cgroup_plugin, "autodetect"))
        print_line ("cgroup.conf",
                    "%s: CgroupPlugin=autodetect (%s on this "
                    "node)",
                    r->sc.cgroup_conf,
                    r->sc.cgroup_resolved ? r->sc.cgroup_resolved
                                          : "undetected");
    else
        print_line ("cgroup.conf",
                    "%s: CgroupPlugin=%s",
                    r->sc.cgroup_conf,
                    r->sc.cgroup_plugin);

    print_line ("statedir", "%s", r->state_note);
    if (r->conf_ok)
        print_line ("journaldir", "%s", r->journal_note);
    print_line ("mode", "%s: %s", r->mode, r->mode_detail);
}

/* Add `val` (taken over; NULL is a JSON null) under `key`. */
static int jadd (json_object *o, const char *key, json_object *val)
{
    return cmd_json_add (o, key, val, true);
}

static json_object *jstr (const char *s)
{
    return s ? json_object_new_string (s) : NULL;
}

/* A string, or null when empty. */
static json_object *jstr0 (const char *s)
{
    return s && *s ? json_object_new_string (s) : NULL;
}

static json_object *ctl_to_json (const struct report *r,
                                 const struct ctl_view *v)
{
    json_object *o = json_object_new_object ();
    json_object *l = json_object_new_object ();
    const char *err = !r->lcg_ok              ? r->lcg_error
                      : v->state == LCG_ERROR ? v->note
                                              : NULL;

    if (!o || !l
        || jadd (l,
                 "mounted",
                 json_object_new_boolean (v->state == LCG_MOUNTED))
               < 0
        || jadd (l, "mount", v->state == LCG_MOUNTED ? jstr (v->mount) : NULL)
               < 0
        || jadd (l,
                 "version",
                 v->state == LCG_MOUNTED && v->version
                     ? json_object_new_int (v->version)
                     : NULL)
               < 0
        || jadd (l, "error", jstr (err)) < 0
        || jadd (o, "cgroup2", json_object_new_boolean (v->v2)) < 0) {
        json_object_put (o);
        json_object_put (l);
        return NULL;
    }
    if (jadd (o, "libcgroup", l) < 0) {
        json_object_put (o);
        return NULL;
    }
    return o;
}

/* Each PartitionName= line: what a step that asks for nothing gets. */
static json_object *partitions_to_json (const struct report *r)
{
    json_object *list = json_object_new_array ();

    for (int i = 0; list && r->conf_ok && i < r->conf.npartitions; i++) {
        struct pin_conf_effective eff;
        json_object *o = json_object_new_object ();
        char allowed[128];
        int bad = 0;

        partition_effective (r, i, &eff);
        mask_string (eff.rules.allowed_policies, allowed, sizeof (allowed));
        if (!o)
            goto nomem;
        bad |= jadd (o, "name", jstr (r->conf.partitions[i].name));
        bad |= jadd (o, "policy", jstr (place_policy_name (eff.policy)));
        bad |= jadd (o, "from", jstr (pin_conf_source_name (eff.source)));
        bad |= jadd (o,
                     "forced",
                     json_object_new_boolean (eff.rules.forced_policy >= 0));
        bad |= jadd (o, "allowed_policies", jstr (allowed));
        bad |= jadd (o, "profile_us", json_object_new_int64 (eff.profile_us));
        bad |= jadd (o,
                     "dynamic_overuse",
                     json_object_new_double (eff.rules.dynamic_overuse));
        bad |= jadd (o,
                     "dynamic_grace_us",
                     json_object_new_int64 (eff.rules.dynamic_grace_us));
        bad |= jadd (o,
                     "dynamic_interval_us",
                     json_object_new_int64 (eff.rules.dynamic_interval_us));
        bad |= jadd (o,
                     "dynamic_confine",
                     jstr (eff.rules.dynamic_confine == PIN_CONFINE_QUOTA
                               ? "quota"
                               : "cpuset"));
        bad |= jadd (o,
                     "spread_sockets",
                     json_object_new_int (eff.rules.spread_sockets));
        bad |= jadd (o,
                     "experiment",
                     eff.rules.experiment[0] && eff.rules.forced_policy < 0
                         ? jstr (eff.rules.experiment)
                         : NULL);
        if (bad || json_object_array_add (list, o) < 0) {
            json_object_put (o);
            goto nomem;
        }
    }
    return list;
nomem:
    json_object_put (list);
    return NULL;
}

static json_object *report_to_json (const struct report *r)
{
    json_object *root = json_object_new_object ();
    json_object *pc = json_object_new_object ();
    json_object *tp = json_object_new_object ();
    json_object *cg = json_object_new_object ();
    json_object *ctl = json_object_new_object ();
    json_object *sc = json_object_new_object ();
    json_object *gc = json_object_new_object ();
    json_object *sd = json_object_new_object ();
    json_object *list = json_object_new_array ();
    char allowed[128];
    int bad = 0;

    if (!root || !pc || !tp || !cg || !ctl || !sc || !gc || !sd || !list)
        goto nomem;
    allowed_string (&r->conf, allowed, sizeof (allowed));

    bad |= jadd (pc, "path", jstr (r->conf_path));
    bad |= jadd (pc, "found", json_object_new_boolean (r->conf_found));
    bad |= jadd (pc, "ok", json_object_new_boolean (r->conf_ok));
    bad |= jadd (pc, "error", r->conf_ok ? NULL : jstr (r->conf_err.text));
    bad |= jadd (pc,
                 "default_policy",
                 jstr (place_policy_name (r->conf.default_policy)));
    bad |= jadd (pc, "allowed_policies", jstr (allowed));
    bad |= cmd_json_add (pc, "partitions", partitions_to_json (r), false);

    bad |= jadd (tp, "ok", json_object_new_boolean (r->topo_ok));
    bad |= jadd (tp, "source", jstr (r->topo_cached ? "cache" : "live"));
    bad |= jadd (tp, "cache", jstr (r->conf.topology_cache));
    bad |= jadd (tp,
                 "cache_checked",
                 json_object_new_boolean (r->conf_ok && geteuid () == 0));
    bad |= jadd (tp, "refreshed", json_object_new_boolean (r->topo_refreshed));
    bad |= jadd (tp, "note", jstr (r->topo_note));
    bad |= jadd (tp, "pus", json_object_new_int64 (r->npus));
    bad |= jadd (tp, "cores", json_object_new_int64 (r->ncores));
    bad |= jadd (tp, "numa_domains", json_object_new_int64 (r->nnuma));
    bad |= jadd (tp, "error", r->topo_ok ? NULL : jstr (r->topo_err.text));

    if (r->cg_controllers) {
        char *copy = strdup (r->cg_controllers), *save = NULL;

        if (!copy)
            goto nomem;
        for (char *w = strtok_r (copy, " \t\n", &save); w;
             w = strtok_r (NULL, " \t\n", &save))
            bad |= json_object_array_add (list, json_object_new_string (w));
        free (copy);
    }
    bad |= jadd (cg, "ok", json_object_new_boolean (r->cg_ok));
    bad |= jadd (cg, "root", r->cg_ok ? jstr (r->cg_root) : NULL);
    bad |= jadd (cg, "controllers", list);
    list = NULL;
    bad |= jadd (cg, "error", r->cg_ok ? NULL : jstr (r->cg_err.text));

    for (int i = 0; i < 2; i++) {
        json_object *v = ctl_to_json (r, &r->ctl[i]);

        bad |= v ? jadd (ctl, r->ctl[i].name, v) : -1;
    }

    bad |= jadd (sc, "path", jstr (r->sc.slurm_conf));
    bad |=
        jadd (sc, "found", json_object_new_boolean (r->sc.slurm_conf_found));
    bad |= jadd (sc, "TaskPlugin", jstr0 (r->sc.task_plugin));
    bad |= jadd (sc, "ProctrackType", jstr0 (r->sc.proctrack));

    bad |= jadd (gc, "path", jstr (r->sc.cgroup_conf));
    bad |=
        jadd (gc, "found", json_object_new_boolean (r->sc.cgroup_conf_found));
    bad |= jadd (gc, "CgroupPlugin", jstr0 (r->sc.cgroup_plugin));
    bad |= jadd (gc, "resolved", jstr (r->sc.cgroup_resolved));

    bad |= jadd (sd, "path", jstr (r->conf.state_dir));
    bad |= jadd (sd, "ok", json_object_new_boolean (r->state_ok));
    bad |= jadd (sd, "note", jstr (r->state_note));

    bad |= jadd (root, "ok", json_object_new_boolean (r->ok));
    bad |= jadd (root, "reason", r->ok ? NULL : jstr (r->reason));
    bad |= jadd (root, "pin_conf", pc);
    pc = NULL;
    bad |= jadd (root, "topology", tp);
    tp = NULL;
    bad |= jadd (root, "cgroup2", cg);
    cg = NULL;
    bad |= jadd (root, "controllers", ctl);
    ctl = NULL;
    bad |= jadd (root, "slurm_conf", sc);
    sc = NULL;
    bad |= jadd (root, "cgroup_conf", gc);
    gc = NULL;
    bad |= jadd (root, "state_dir", sd);
    sd = NULL;
    if (r->conf_ok) {
        json_object *jd = json_object_new_object ();
        if (!jd)
            goto nomem;
        bad |= jadd (jd, "path", jstr (r->conf.journal_dir));
        bad |= jadd (jd,
                     "shared_with",
                     *r->journal_shared ? jstr (r->journal_shared) : NULL);
        bad |= jadd (jd, "note", jstr (r->journal_note));
        bad |= jadd (root, "journal_dir", jd);
    }
    bad |= jadd (root, "mode", jstr (r->mode));
    bad |= jadd (root, "mode_detail", jstr (r->mode_detail));
    if (bad)
        goto nomem;
    return root;
nomem:
    json_object_put (list);
    json_object_put (sd);
    json_object_put (gc);
    json_object_put (sc);
    json_object_put (ctl);
    json_object_put (cg);
    json_object_put (tp);
    json_object_put (pc);
    json_object_put (root);
    errno = ENOMEM;
    return NULL;
}

int cmd_check (int argc, char **argv)
{
    struct report *r;
    const char *conf;
    bool json;
    int rc = 1;

    if (parse_args (argc, argv, &conf, &json, &rc) < 0)
        return rc;
    if (!(r = calloc (1, sizeof (*r)))) {
        cmd_error (NAME, "out of memory");
        return 1;
    }
    r->ok = true;
    r->ctl[0].name = "cpuset";
    r->ctl[1].name = "cpu";
    check_conf (r, conf);
    check_topology (r);
    check_cgroup2 (r);
    check_libcgroup (r);
    check_slurm_conf (r);
    check_state_dir (r);
    if (r->conf_ok)
        check_journal_dir (r);
    decide_mode (r);

    if (!json)
        print_text (r);
    else if (cmd_print_json (NAME, report_to_json (r), stdout) < 0)
        goto out;
    if (cmd_flush_stdout (NAME) < 0)
        goto out;
    if (!r->ok) {
        cmd_error (NAME, "%s", r->reason);
        goto out;
    }
    rc = 0;
out:
    free (r->cg_controllers);
    free (r);
    return rc;
}
