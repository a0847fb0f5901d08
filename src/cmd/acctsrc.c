/* acctsrc.c - records for slurm-pin acct, eff and report */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <slurm/slurm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "acctdbd.h"
#include "acctsrc.h"
#include "libconf/conf.h"
#include "slurm_compat.h"
#include "subcmd.h"

const struct cmdopt acct_opts_jobs[] = {
    {"jobs",
     'j',
     CMDOPT_REQUIRED,
     "LIST",
     "jobs or steps: 123, 123_4 (array task), 123.0,\n"
     "123.batch; default: every job in the window",
     0},
    CMDOPT_END,
};

const struct cmdopt acct_opts_window[] = {
    {"starttime",
     'S',
     CMDOPT_REQUIRED,
     "TIME",
     "jobs running at or after TIME (default: 00:00\n"
     "today; now with acct -s; none when acct -j\n"
     "selects jobs)",
     0},
    {"endtime",
     'E',
     CMDOPT_REQUIRED,
     "TIME",
     "jobs running at or before TIME (default: now)\n"
     "TIME: YYYY-MM-DD[THH:MM[:SS]], HH:MM[:SS],\n"
     "now[{+|-}N[seconds|minutes|hours|days|weeks]],\n"
     "today, midnight, noon, tomorrow",
     0},
    {"user",
     'u',
     CMDOPT_REQUIRED,
     "LIST",
     "users (names or uids); only root sees others'",
     0},
    {"uid", 'u', CMDOPT_REQUIRED, "LIST", NULL, 0}, /* sacct's alias */
    {"allusers",
     'a',
     CMDOPT_NONE,
     NULL,
     "every user's jobs (root; the default for root)",
     0},
    CMDOPT_END,
};

const struct cmdopt acct_opts_source[] = {
    {"journal",
     ACCT_OPT_JOURNAL,
     CMDOPT_REQUIRED,
     "DIR",
     "read this node journal (default: slurmdbd when\n"
     "slurm.conf has AccountingStorageType=\n"
     "accounting_storage/slurmdbd, else pin.conf's\n"
     "JournalDir=, else " ACCT_JOURNAL_DEFAULT ")",
     0},
    {"verbose",
     'v',
     CMDOPT_NONE,
     NULL,
     "say on stderr where the records were read",
     0},
    CMDOPT_END,
};

const struct cmdopt acct_opts_select[] = {
    {"state",
     's',
     CMDOPT_REQUIRED,
     "LIST",
     "jobs that ended in these states in the window\n"
     "(CD, CA, F, TO, NF, OOM, ... or the names; without\n"
     "-S: none, as sacct: give -S and -E)",
     0},
    {"name", ACCT_OPT_NAME, CMDOPT_REQUIRED, "LIST", "jobs of these names", 0},
    {"partition", 'r', CMDOPT_REQUIRED, "LIST", "jobs of these partitions", 0},
    {"nodelist",
     'N',
     CMDOPT_REQUIRED,
     "NODES",
     "jobs that ran on any of these nodes (n[1-4])",
     0},
    {"accounts", 'A', CMDOPT_REQUIRED, "LIST", "jobs of these accounts", 0},
    {"clusters",
     'M',
     CMDOPT_REQUIRED,
     "LIST",
     "jobs of these clusters, \"all\": every cluster\n"
     "(default: slurm.conf's ClusterName)",
     0},
    {"allclusters", 'L', CMDOPT_NONE, NULL, "jobs of every cluster", 0},
    {"duplicates",
     'D',
     CMDOPT_NONE,
     NULL,
     "every job of a reused job id (default: the\n"
     "most recently submitted)",
     0},
    CMDOPT_END,
};

/* sacct's base job states: names and short forms (squeue's) */
const char *const acct_state_names[] = {
    "PENDING",
    "RUNNING",
    "SUSPENDED",
    "COMPLETED",
    "CANCELLED",
    "FAILED",
    "TIMEOUT",
    "NODE_FAIL",
    "PREEMPTED",
    "BOOT_FAIL",
    "DEADLINE",
    "OUT_OF_MEMORY",
    "REQUEUED",
    "RESIZING",
    "REVOKED",
    NULL,
};
static const char *const state_short[] = {
    "PD",
    "R",
    "S",
    "CD",
    "CA",
    "F",
    "TO",
    "NF",
    "PR",
    "BF",
    "DL",
    "OOM",
    "RQ",
    "RS",
    "RV",
    NULL,
};

/* The bit of a state name ("ca", "CANCELLED", "CANCELLED by 0"), -1 when
 * it is none. */
static int state_bit (const char *s, size_t len)
{
    for (int i = 0; acct_state_names[i]; i++)
        if ((strlen (acct_state_names[i]) == len
             && strncasecmp (acct_state_names[i], s, len) == 0)
            || (strlen (state_short[i]) == len
                && strncasecmp (state_short[i], s, len) == 0))
            return i;
    return -1;
}

/* Append the ',' list `arg` to *list (sacct: several -A add up). */
static int add_list (const char *subcmd, char **list, const char *arg)
{
    size_t old = *list ? strlen (*list) : 0;
    char *n = realloc (*list, old + strlen (arg) + 2);

    if (!n) {
        cmd_error (subcmd, "out of memory");
        return -1;
    }
    if (old)
        n[old++] = ',';
    strcpy (n + old, arg);
    *list = n;
    return 1;
}

/* Is `value` one of the items of the ',' list (case-insensitive, as
 * sacct's lists are)? */
static bool in_list (const char *list, const char *value)
{
    size_t vl = strlen (value);

    for (const char *p = list; p && *p;) {
        const char *e = strchr (p, ',');
        size_t len = e ? (size_t)(e - p) : strlen (p);
        if (len == vl && strncasecmp (p, value, len) == 0)
            return true;
        p = e ? e + 1 : NULL;
    }
    return false;
}

static int states_parse (const char *subcmd,
                         struct acct_query *q,
                         const char *arg)
{
    for (const char *p = arg; *p;) {
        size_t len = strcspn (p, ",");
        int b;
        if (len && (b = state_bit (p, len)) < 0) {
            char valid[512] = "";
            size_t vl = 0;
            for (int i = 0; acct_state_names[i] && vl < sizeof (valid); i++)
                vl += (size_t)snprintf (valid + vl,
                                        sizeof (valid) - vl,
                                        "%s%s (%s)",
                                        i ? ", " : "",
                                        acct_state_names[i],
                                        state_short[i]);
            cmd_error (subcmd,
                       "-s: unrecognized job state value \"%.*s\"; "
                       "valid: %s",
                       (int)(len > 64 ? 64 : len),
                       p,
                       valid);
            return -1;
        }
        if (len)
            q->states |= 1u << b;
        p += len;
        if (*p == ',')
            p++;
    }
    return 1;
}

void acct_query_fini (struct acct_query *q)
{
    free (q->sel);
    free (q->uids);
    free (q->names);
    free (q->partitions);
    free (q->accounts);
    free (q->clusters);
    free (q->nodes);
    if (q->nodes_hl)
        slurm_hostlist_destroy ((pin_hostlist_t *)q->nodes_hl);
    q->sel = NULL;
    q->uids = NULL;
    q->names = q->partitions = q->accounts = q->clusters = q->nodes = NULL;
    q->nodes_hl = NULL;
}

int acct_query_opt (const char *subcmd,
                    struct acct_query *q,
                    int key,
                    const char *arg)
{
    pin_error_t e = {""};

    switch (key) {
        case 'j':
            if (acct_jobsel_parse (arg, &q->sel, &q->nsel, &e) < 0) {
                cmd_error (subcmd, "-j: %s", e.text);
                return -1;
            }
            return 1;
        case 'S':
            q->starttime = arg;
            return 1;
        case 'E':
            q->endtime = arg;
            return 1;
        case 'u':
            return acct_query_users (subcmd, q, arg) < 0 ? -1 : 1;
        case 'a':
            q->all_users = true;
            return 1;
        case ACCT_OPT_JOURNAL:
            q->journal = arg;
            return 1;
        case 'v':
            q->verbose = true;
            return 1;
        case 's':
            return states_parse (subcmd, q, arg);
        case ACCT_OPT_NAME:
            return add_list (subcmd, &q->names, arg);
        case 'r':
            return add_list (subcmd, &q->partitions, arg);
        case 'A':
            return add_list (subcmd, &q->accounts, arg);
        case 'M':
            if (strcasecmp (arg, "all") == 0 || strcmp (arg, "-1") == 0) {
                q->all_clusters = true;
                return 1;
            }
            q->all_clusters = false;
            return add_list (subcmd, &q->clusters, arg);
        case 'L':
            q->all_clusters = true;
            return 1;
        case 'N':
            if (q->nodes) {
                cmd_error (subcmd,
                           "-N: already asked for nodes '%s'",
                           q->nodes);
                return -1;
            }
            if (!(q->nodes = strdup (arg))) {
                cmd_error (subcmd, "out of memory");
                return -1;
            }
            return 1;
        case 'D':
            q->duplicates = true;
            return 1;
    }
    return 0;
}

int acct_query_window (const char *subcmd, struct acct_query *q, time_t now)
{
    const char *start = q->starttime;
    pin_error_t e = {""};

    /* sacct's defaults (slurmdb_job_cond_def_start_end): with -s, -S is
     * now unless -j, and -E is -S; else -S is midnight unless -j */
    if (!start && !q->sel)
        start = q->states ? "now" : "midnight";
    if (start && acct_parse_time (start, now, &q->start_us, &e) < 0) {
        cmd_error (subcmd, "-S: %s", e.text);
        return -1;
    }
    if (q->endtime && acct_parse_time (q->endtime, now, &q->end_us, &e) < 0) {
        cmd_error (subcmd, "-E: %s", e.text);
        return -1;
    }
    if (q->states && start && !q->endtime)
        q->end_us = q->start_us;
    if (q->nodes && !(q->nodes_hl = slurm_hostlist_create (q->nodes))) {
        cmd_error (subcmd,
                   "-N: invalid node list \"%s\" (names or ranges: "
                   "n1,n[3-5])",
                   q->nodes);
        return -1;
    }
    return 0;
}

int acct_query_users (const char *subcmd,
                      struct acct_query *q,
                      const char *list)
{
    const char *p = list;

    while (*p) {
        char name[256];
        size_t len = strcspn (p, ",");
        uint64_t uid;
        struct passwd *pw;
        uid_t *n;

        if (len == 0) {
            p++;
            continue;
        }
        if (len >= sizeof (name)) {
            cmd_error (subcmd, "-u: user name too long: %.40s...", p);
            return -1;
        }
        memcpy (name, p, len);
        name[len] = '\0';
        p += len;
        if (cmd_parse_u64 (name, 0, UINT32_MAX - 1, &uid) == 0)
            ;
        else if ((pw = getpwnam (name)))
            uid = pw->pw_uid;
        else {
            cmd_error (subcmd, "-u: unknown user \"%s\"", name);
            return -1;
        }
        if (!(n = realloc (q->uids, (q->nuids + 1) * sizeof (*n)))) {
            cmd_error (subcmd, "out of memory");
            return -1;
        }
        q->uids = n;
        q->uids[q->nuids++] = (uid_t)uid;
    }
    return 0;
}

struct load_ctx {
    const struct acct_query *q;
    struct acct_table *t;
    uid_t me;
    bool nomem;
    /* progress (item 8 of issue 22): records seen, when it started, when
     * it last said so; show: stderr is a terminal */
    bool show;
    bool shown;
    uint64_t seen;
    int64_t t0_ms, last_ms;
    int64_t after_ms; /* first shown after (1 s; PIN_PROGRESS_AFTER_MS) */
    const char *subcmd;
};

static int64_t mono_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* "slurm-pin acct: 123456 records read, 98765/s" on one line of stderr,
 * redrawn at most twice a second, after the first second. */
static void progress (struct load_ctx *c)
{
    int64_t now;

    if (!c->show || (++c->seen & 1023) != 0)
        return;
    now = mono_ms ();
    if (now - c->t0_ms < c->after_ms || now - c->last_ms < 500)
        return;
    c->last_ms = now;
    c->shown = true;
    fprintf (stderr,
             "\rslurm-pin %s: %" PRIu64 " records read, %.0f/s\033[K",
             c->subcmd,
             c->seen,
             (double)c->seen * 1000.0 / (double)(now - c->t0_ms));
    fflush (stderr);
}

static void progress_end (struct load_ctx *c)
{
    if (c->shown) {
        fputs ("\r\033[K", stderr); /* the line goes away */
        fflush (stderr);
    }
    c->shown = false;
}

/* Progress only on a terminal, never when stdout is a pipe (the output
 * of a script) nor for -p, -P, --json (q->progress false). */
static void set_nodelist (struct acct_row *row);

/* The end of a job id's records (acct_journal_read_sorted): its table
 * handed to q->each, then emptied. */
static int job_end (void *arg)
{
    struct load_ctx *c = arg;
    const struct acct_query *q = c->q;
    int rc;

    if (c->nomem)
        return 1;
    if (c->t->njobs == 0)
        return 0;
    if (acct_table_sort (c->t) < 0
        || (!q->duplicates && acct_table_latest (c->t) < 0)) {
        c->nomem = true;
        return 1;
    }
    for (size_t i = 0; i < c->t->njobs; i++) {
        set_nodelist (&c->t->jobs[i].job);
        for (size_t k = 0; k < c->t->jobs[i].nsteps; k++)
            set_nodelist (&c->t->jobs[i].steps[k]);
    }
    progress_end (c);
    rc = q->each (c->t, q->each_arg);
    acct_table_free (c->t);
    acct_table_init (c->t);
    return rc;
}

static bool progress_wanted (const struct acct_query *q)
{
    struct stat st;

    if (!q->progress || !isatty (STDERR_FILENO))
        return false;
    if (fstat (STDOUT_FILENO, &st) == 0
        && (S_ISFIFO (st.st_mode) || S_ISSOCK (st.st_mode)))
        return false;
    return true;
}

static bool job_selected (const struct acct_query *q,
                          const struct acct_record *r)
{
    struct acct_row row;

    if (!q->sel)
        return true;
    memset (&row, 0, sizeof (row));
    row.job_id = r->job_id;
    row.array_job_id = r->array_job_id;
    row.array_task_id = r->array_task_id;
    for (size_t i = 0; i < q->nsel; i++)
        if (acct_jobsel_job (&q->sel[i], &row))
            return true;
    return false;
}

static int on_record (const struct acct_record *r, void *arg)
{
    struct load_ctx *c = arg;
    const struct acct_query *q = c->q;

    progress (c);
    /* sacct's rule: a user other than root sees only their own jobs */
    if (c->me != 0 && r->uid != c->me)
        return 0;
    /* -M, -L; by default the local cluster's (records without a cluster
     * name are kept) */
    if (r->cluster[0] && !q->all_clusters
        && (q->clusters ? !in_list (q->clusters, r->cluster)
                        : (q->cluster[0] && strcmp (q->cluster, r->cluster))))
        return 0;
    if (q->uids) {
        bool found = false;
        for (size_t i = 0; i < q->nuids && !found; i++)
            found = (q->uids[i] == r->uid);
        if (!found)
            return 0;
    }
    if (!job_selected (q, r))
        return 0;
    if (q->tap && q->tap (r, q->tap_arg) != 0) {
        c->nomem = true;
        return 1;
    }
    if (q->tap_only)
        return 0;
    if (acct_table_add (c->t, r) < 0) {
        c->nomem = true;
        return 1;
    }
    return 0;
}

/* NodeList as Slurm writes it ("n[1-2]"), through libslurm. */
static void set_nodelist (struct acct_row *row)
{
    pin_hostlist_t *hl;
    char *s;

    if (!row->nodes || !row->nodes[0])
        return;
    if (!(hl = slurm_hostlist_create (row->nodes)))
        return;
    slurm_hostlist_uniq (hl);
    s = pin_hostlist_ranged (hl);
    slurm_hostlist_destroy (hl);
    if (s) {
        free (row->nodelist);
        row->nodelist = s;
    }
}

/* --journal, else pin.conf's JournalDir=, else the default.  libconf has
 * JournalDir= once acct-core's branch is in (it defines
 * PIN_CONF_DEFAULT_JOURNAL_DIR); before that, the default. */
const char *acct_query_journal_dir (const char *subcmd,
                                    const char *opt,
                                    char *buf,
                                    size_t n)
{
#ifdef PIN_CONF_DEFAULT_JOURNAL_DIR
    struct pin_conf conf;
    pin_error_t e = {""};

    if (opt)
        return opt;
    pin_conf_defaults (&conf);
    if (pin_conf_load_file (&conf, PIN_CONF_DEFAULT_PATH, false, &e) < 0) {
        cmd_error (subcmd, "%s (or give --journal=DIR)", e.text);
        return NULL;
    }
    snprintf (buf, n, "%s", conf.journal_dir);
    return buf;
#else
    (void)subcmd;
    (void)buf;
    (void)n;
    return opt ? opt : ACCT_JOURNAL_DEFAULT;
#endif
}

/* libslurm's parsed slurm.conf.  The type is public (slurm.h); the
 * variable is exported by libslurm but declared only in Slurm's private
 * read_config.h. */
extern slurm_conf_t slurm_conf;

#define DBD_STORAGE "accounting_storage/slurmdbd"

/* The local cluster, as sacct takes it: ClusterName of the slurm.conf
 * libslurm reads; "" when there is none to read (every cluster shown). */
static void local_cluster (struct acct_query *q)
{
    const char *path = getenv ("SLURM_CONF");

    q->cluster[0] = '\0';
    if (q->all_clusters || q->clusters)
        return;
    if (!path || !path[0])
        path = "/etc/slurm/slurm.conf";
    if (access (path, R_OK) != 0)
        return;
    slurm_init (NULL);
    if (slurm_conf.cluster_name)
        snprintf (q->cluster,
                  sizeof (q->cluster),
                  "%s",
                  slurm_conf.cluster_name);
}

/* Does the slurm.conf libslurm reads send accounting to slurmdbd?  `why`
 * says what was found.  libslurm exits when it cannot read its
 * configuration, so an unreadable file is checked first. */
static bool dbd_configured (char *why, size_t n)
{
    const char *path = getenv ("SLURM_CONF");
    const char *type;

    if (!path || !path[0])
        path = "/etc/slurm/slurm.conf";
    if (access (path, R_OK) != 0) {
        snprintf (why,
                  n,
                  "no readable slurm.conf (%s): %s",
                  path,
                  strerror (errno));
        return false;
    }
    slurm_init (NULL);
    type = slurm_conf.accounting_storage_type;
    snprintf (why,
              n,
              "AccountingStorageType=%s in %s",
              type && type[0] ? type : "(none)",
              path);
    return type && strcmp (type, DBD_STORAGE) == 0;
}

/* The job ids of -j for slurmdbd's query (a task's array job id). */
static uint32_t *sel_job_ids (const struct acct_query *q, size_t *n)
{
    uint32_t *ids;

    *n = 0;
    if (!q->sel || !q->nsel)
        return NULL;
    if (!(ids = calloc (q->nsel, sizeof (*ids))))
        return NULL;
    for (size_t i = 0; i < q->nsel; i++)
        ids[(*n)++] = q->sel[i].id;
    return ids;
}

/* Read slurmdbd.  0, -1 after printing an error (out of memory), 1 when
 * slurmdbd cannot be read (the caller falls back to the journal). */
static int load_dbd (const char *subcmd,
                     struct acct_query *q,
                     struct load_ctx *c,
                     unsigned *skipped)
{
    pin_error_t e = {""};
    size_t nids = 0;
    uint32_t *ids = sel_job_ids (q, &nids);
    int rc;

    if (q->sel && q->nsel && !ids) {
        cmd_error (subcmd, "out of memory");
        return -1;
    }
    acct_source_dbd_duplicates (q->duplicates);
    rc = acct_source_dbd_records (ids,
                                  nids,
                                  (time_t)(q->start_us / 1000000),
                                  (time_t)(q->end_us / 1000000),
                                  q->raw,
                                  on_record,
                                  c,
                                  skipped,
                                  &e);
    free (ids);
    if (rc < 0) {
        cmd_error (subcmd,
                   "slurmdbd: %s; reading the node journal instead",
                   e.text);
        return 1;
    }
    if (*skipped)
        cmd_error (subcmd,
                   "slurmdbd: skipped %u job summar%s or record%s "
                   "that do not parse",
                   *skipped,
                   *skipped == 1 ? "y" : "ies",
                   *skipped == 1 ? "" : "s");
    return 0;
}

int acct_query_load (const char *subcmd,
                     struct acct_query *q,
                     struct acct_table *t,
                     unsigned *skipped)
{
    struct load_ctx c = {.q = q, .t = t, .me = getuid ()};
    int rrc;
    uint32_t *ids = NULL;
    size_t nids = 0;
    char buf[4096];
    const char *dir;
    pin_error_t e = {""};
    char abs[PATH_MAX];

    *skipped = 0;
    q->dir[0] = '\0';
    local_cluster (q);
    if (q->journal)
        snprintf (q->why, sizeof (q->why), "--journal given");
    else if (dbd_configured (q->why, sizeof (q->why))) {
        int rc = load_dbd (subcmd, q, &c, skipped);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            snprintf (q->source, sizeof (q->source), "slurmdbd");
            goto loaded;
        }
        /* slurmdbd did not answer: the journal, saying so */
        acct_table_free (t);
        acct_table_init (t);
        *skipped = 0;
        c.nomem = false;
        snprintf (q->why + strlen (q->why),
                  sizeof (q->why) - strlen (q->why),
                  ", but slurmdbd did not answer");
    }
    snprintf (q->source, sizeof (q->source), "journal");
    if (!(dir =
              acct_query_journal_dir (subcmd, q->journal, buf, sizeof (buf))))
        return -1;
    /* the journal reader takes absolute paths only: make --journal=./j one */
    if (dir[0] != '/' && realpath (dir, abs))
        dir = abs;
    snprintf (q->dir, sizeof (q->dir), "%s", dir);

    c.show = progress_wanted (q);
    c.subcmd = subcmd;
    c.t0_ms = mono_ms ();
    c.last_ms = 0;
    c.after_ms = 1000;
    {
        const char *a = getenv ("PIN_PROGRESS_AFTER_MS");
        if (a && *a >= '0' && *a <= '9')
            c.after_ms = strtol (a, NULL, 10);
    }
    /* -j: only the records of those jobs (and array jobs), through the
     * journal's index */
    if (q->sel && q->nsel && !(ids = sel_job_ids (q, &nids))) {
        cmd_error (subcmd, "out of memory");
        return -1;
    }
    if (!ids && q->each)
        rrc = acct_journal_read_sorted (dir,
                                        on_record,
                                        job_end,
                                        &c,
                                        skipped,
                                        &e);
    else if (ids)
        rrc = acct_journal_read_jobs (dir,
                                      ids,
                                      nids,
                                      on_record,
                                      &c,
                                      skipped,
                                      &e);
    else
        rrc = acct_journal_read (dir, on_record, &c, skipped, &e);
    free (ids);
    progress_end (&c);
    if (q->verbose) {
        struct acct_journal_stats js;
        acct_journal_last_stats (&js);
        fprintf (stderr,
                 "slurm-pin %s: journal: %u file%s through the index, %u "
                 "passed over, %u scanned; %lu lines checked against "
                 "the index, %lu rejected\n",
                 subcmd,
                 js.files_indexed,
                 js.files_indexed == 1 ? "" : "s",
                 js.files_skipped,
                 js.files_scanned,
                 js.lines_verified,
                 js.lines_rejected);
    }
    if (rrc < 0) {
        cmd_error (subcmd,
                   "cannot read the journal: %s%s",
                   e.text,
                   c.me != 0 ? " (the journal is root's; run as root, or "
                               "use the slurmdbd records)"
                             : "");
        return -1;
    }
    if (*skipped)
        cmd_error (subcmd,
                   "%s: skipped %u line%s that %s not parse (a line "
                   "torn by a crash, or not a record)",
                   dir,
                   *skipped,
                   *skipped == 1 ? "" : "s",
                   *skipped == 1 ? "does" : "do");
loaded:
    if (q->verbose)
        fprintf (stderr,
                 "slurm-pin %s: records from %s%s%s (%s)\n",
                 subcmd,
                 q->source,
                 q->dir[0] ? " " : "",
                 cmd_text (q->dir),
                 q->why);
    if (c.nomem || acct_table_sort (t) < 0
        || (!q->duplicates && acct_table_latest (t) < 0)
        || acct_table_order (t) < 0) {
        cmd_error (subcmd, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < t->njobs; i++) {
        set_nodelist (&t->jobs[i].job);
        for (size_t k = 0; k < t->jobs[i].nsteps; k++)
            set_nodelist (&t->jobs[i].steps[k]);
    }
    if (q->each && t->njobs) {
        int rc = q->each (t, q->each_arg);
        acct_table_free (t);
        acct_table_init (t);
        if (rc)
            return rc < 0 ? -1 : 0;
    }
    return 0;
}

static bool sel_names_step (const struct acct_jobsel *s,
                            const struct acct_job *j)
{
    return s->has_step && acct_jobsel_job (s, &j->job);
}

bool acct_query_job_line (const struct acct_query *q, const struct acct_job *j)
{
    if (!q->sel)
        return true;
    for (size_t i = 0; i < q->nsel; i++)
        if (!q->sel[i].has_step && acct_jobsel_job (&q->sel[i], &j->job))
            return true;
    return false;
}

bool acct_query_step_line (const struct acct_query *q,
                           const struct acct_job *j,
                           const struct acct_row *step)
{
    if (acct_query_job_line (q, j))
        return true;
    for (size_t i = 0; i < q->nsel; i++)
        if (sel_names_step (&q->sel[i], j) && q->sel[i].step == step->step_id)
            return true;
    return false;
}

/* -N: did the job run on one of the nodes? */
static bool ran_on (const struct acct_query *q, const struct acct_job *j)
{
    for (const char *p = j->job.nodes; p && *p;) {
        const char *e = strchr (p, ',');
        char node[ACCT_STR];
        size_t len = e ? (size_t)(e - p) : strlen (p);
        snprintf (node, sizeof (node), "%.*s", (int)len, p);
        if (slurm_hostlist_find ((pin_hostlist_t *)q->nodes_hl, node) >= 0)
            return true;
        p = e ? e + 1 : NULL;
    }
    return false;
}

/* -s: sacct's rule (slurmdbd's _state_time_string): a job in an end state
 * ended in [-S, -E]; a running job started before -E and had not ended at
 * -S; without -S and -E (-s with -j), the state alone. */
static bool state_selected (const struct acct_query *q,
                            const struct acct_job *j)
{
    const char *st = j->job.state;
    int b = state_bit (st, strcspn (st, " "));
    int64_t s = q->start_us / 1000000, e = q->end_us / 1000000;
    int64_t start = j->job.start_us / 1000000, end = j->job.end_us / 1000000;

    if (b < 0 || !(q->states & (1u << b)))
        return false;
    if (!q->start_us && !q->end_us)
        return true;
    if (b == 0) /* PENDING: never in records of jobs that ran */
        return false;
    if (b == 1 || b == 2) /* RUNNING, SUSPENDED */
        return start && (s < end || !end) && e > start;
    return end && end >= s && end <= e;
}

bool acct_query_in_window (const struct acct_query *q,
                           const struct acct_job *j)
{
    if ((q->names && !in_list (q->names, j->job.job_name))
        || (q->partitions && !in_list (q->partitions, j->job.partition))
        || (q->accounts && !in_list (q->accounts, j->job.account))
        || (q->nodes_hl && !ran_on (q, j)))
        return false;
    if (q->states)
        return state_selected (q, j);
    /* sacct: jobs that ran at some time in [start, end] */
    if (q->start_us && j->job.end_us > 0 && j->job.end_us < q->start_us)
        return false;
    if (q->end_us && j->job.start_us > q->end_us)
        return false;
    return true;
}
