/* deliver.c - slurm-pin deliver: send this node's job records to slurmdbd
 *
 * Reads the node journal (acct.h: DIR/journal and DIR/journal.N, one JSON
 * record a line), groups the records by (cluster, job, node), and for each
 * job that ended on this node (its "job" record is there) and is not yet
 * delivered: reads the job's AdminComment from slurmdbd, merges this node's
 * records into it (summary.h), writes it back with slurmdb_job_modify()
 * (slurmdbd accepts that once the job has ended), and reads it again until
 * a read after its last write holds this node's part and every other
 * node's (deliver_one: why that loses no node's part when all write at
 * once), then appends a line to DIR/delivered.  A job whose line is there
 * is not sent again; with slurmdbd down nothing is marked and a later run
 * sends it.  With --job the run waits for that job up to --timeout; a
 * backlog run (no --job) never waits on one job: it sends every part,
 * then reads again the jobs still missing a part until one deadline and
 * leaves those unmarked for a later run.
 *
 * Records are taken as the journal has them (JSON objects, unknown keys
 * included), so a newer writer's fields reach slurmdbd unchanged.
 *
 * DIR/delivered: "CLUSTER JOBID NODE DIGEST" lines, DIGEST = FNV-1a 64 of
 * the node's sorted record lines (for a person comparing; a job of a node
 * is sent once, whatever its digest).  DIR/delivered.lock serializes
 * runs.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <slurm/slurm.h>
#include <slurm/slurmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "acctsrc.h"
#include "cmdopt.h"
#include "libacct/acct.h"
#include "libacct/summary.h"
#include "libutil/safeio.h"
#include "slurm_compat.h"
#include "subcmd.h"

#define DEFAULT_JOURNAL "/var/lib/slurm-pin/journal"
#define LINE_MAX_BYTES (1 << 20)

static const char *prog = "deliver";
static int verbose;

struct group {
    char cluster[ACCT_STR];
    char node[ACCT_STR];
    uint32_t job_id;
    uint32_t array_job_id; /* 0: not an array task */
    uint32_t array_task_id;
    bool ended;             /* a "job" record is there */
    char missing[ACCT_STR]; /* deliver_one's 2: the node whose part is not
                               there ("" if slurmdbd has not the job's end) */
    char **lines;
    size_t n, cap;
    uint64_t digest;
};

struct groups {
    struct group *g;
    size_t n, cap;
};

static struct group *group_get (struct groups *gs,
                                const char *cluster,
                                const char *node,
                                uint32_t job)
{
    for (size_t i = 0; i < gs->n; i++) {
        struct group *g = &gs->g[i];
        if (g->job_id == job && !strcmp (g->cluster, cluster)
            && !strcmp (g->node, node))
            return g;
    }
    if (gs->n == gs->cap) {
        size_t cap = gs->cap ? gs->cap * 2 : 16;
        struct group *p = realloc (gs->g, cap * sizeof (*p));
        if (!p)
            return NULL;
        gs->g = p;
        gs->cap = cap;
    }
    struct group *g = &gs->g[gs->n++];
    memset (g, 0, sizeof (*g));
    snprintf (g->cluster, sizeof (g->cluster), "%s", cluster);
    snprintf (g->node, sizeof (g->node), "%s", node);
    g->job_id = job;
    return g;
}

static void groups_free (struct groups *gs)
{
    for (size_t i = 0; i < gs->n; i++) {
        for (size_t j = 0; j < gs->g[i].n; j++)
            free (gs->g[i].lines[j]);
        free (gs->g[i].lines);
    }
    free (gs->g);
}

static const char *jstr (json_object *o, const char *key)
{
    json_object *v;
    if (json_object_object_get_ex (o, key, &v)
        && json_object_is_type (v, json_type_string))
        return json_object_get_string (v);
    return NULL;
}

/* One journal line: keep it if it is a record of acct.h (kind, job_id,
 * node, cluster). */
static int add_line (struct groups *gs, const char *line, unsigned *skipped)
{
    json_object *o = json_tokener_parse (line), *v;
    const char *kind, *node, *cluster;
    int64_t job;
    struct group *g;
    int rc = 0;

    if (!o || !json_object_is_type (o, json_type_object)
        || !(kind = jstr (o, "kind")) || !(node = jstr (o, "node")) || !*node
        || !json_object_object_get_ex (o, "job_id", &v)
        || !json_object_is_type (v, json_type_int)
        || (job = json_object_get_int64 (v)) <= 0 || job > UINT32_MAX
        || strlen (node) >= ACCT_STR
        || (strcmp (kind, "step") && strcmp (kind, "job"))) {
        (*skipped)++;
        goto out;
    }
    cluster = jstr (o, "cluster");
    if (!cluster || strlen (cluster) >= ACCT_STR)
        cluster = "";
    if (!(g = group_get (gs, cluster, node, (uint32_t)job))) {
        rc = -1;
        goto out;
    }
    if (!g->array_job_id) {
        int64_t aj = -1, at = -1;
        if (json_object_object_get_ex (o, "array_job_id", &v)
            && json_object_is_type (v, json_type_int))
            aj = json_object_get_int64 (v);
        if (json_object_object_get_ex (o, "array_task_id", &v)
            && json_object_is_type (v, json_type_int))
            at = json_object_get_int64 (v);
        if (aj > 0 && aj < NO_VAL && at >= 0 && at < NO_VAL) {
            g->array_job_id = (uint32_t)aj;
            g->array_task_id = (uint32_t)at;
        }
    }
    /* the same line twice (a replayed write) counts once */
    for (size_t i = 0; i < g->n; i++) {
        if (!strcmp (g->lines[i], line))
            goto out;
    }
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 8;
        char **p = realloc (g->lines, cap * sizeof (*p));
        if (!p) {
            rc = -1;
            goto out;
        }
        g->lines = p;
        g->cap = cap;
    }
    if (!(g->lines[g->n] = strdup (line))) {
        rc = -1;
        goto out;
    }
    g->n++;
    if (!strcmp (kind, "job"))
        g->ended = true;
out:
    json_object_put (o);
    return rc;
}

static int read_journal_file (struct groups *gs,
                              const char *path,
                              unsigned *skipped)
{
    FILE *f = safein_fopen (path, NULL); /* not a FIFO, not a device */
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int rc = 0;

    if (!f)
        return errno == ENOENT ? 0 : -1;
    while ((len = getline (&line, &cap, f)) >= 0) {
        if (len > 0 && line[len - 1] == '\n')
            line[--len] = '\0';
        else if (len > 0) {
            (*skipped)++; /* a torn last line */
            continue;
        }
        if (len == 0)
            continue;
        if (len > LINE_MAX_BYTES) {
            (*skipped)++;
            continue;
        }
        if (add_line (gs, line, skipped) < 0) {
            rc = -1;
            break;
        }
    }
    free (line);
    fclose (f);
    return rc;
}

/* journal.N (any N), then journal. */
static int read_journal (struct groups *gs, const char *dir, unsigned *skipped)
{
    DIR *d = opendir (dir);
    struct dirent *e;
    char path[4096];

    if (!d)
        return -1;
    while ((e = readdir (d))) {
        const char *s = e->d_name;
        if (strncmp (s, "journal.", 8) || !s[8]
            || strspn (s + 8, "0123456789") != strlen (s + 8))
            continue;
        snprintf (path, sizeof (path), "%s/%s", dir, s);
        if (read_journal_file (gs, path, skipped) < 0) {
            closedir (d);
            return -1;
        }
    }
    closedir (d);
    snprintf (path, sizeof (path), "%s/journal", dir);
    return read_journal_file (gs, path, skipped);
}

static int cmp_line (const void *a, const void *b)
{
    return strcmp (*(char *const *)a, *(char *const *)b);
}

static void group_digest (struct group *g)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    qsort (g->lines, g->n, sizeof (*g->lines), cmp_line);
    for (size_t i = 0; i < g->n; i++) {
        for (const unsigned char *p = (const unsigned char *)g->lines[i]; *p;
             p++)
            h = (h ^ *p) * 0x100000001b3ULL;
        h = (h ^ '\n') * 0x100000001b3ULL;
    }
    g->digest = h;
}

static bool is_delivered (const char *dir, const struct group *g)
{
    char path[4096], want[1024], *line = NULL;
    size_t cap = 0;
    bool found = false;
    FILE *f;

    snprintf (path, sizeof (path), "%s/delivered", dir);
    if (!(f = safein_fopen (path, NULL)))
        return false;
    /* any digest: once a node's part of a job is delivered it is not
     * sent again, even if a journal file holding some of its records was
     * rotated away since (that would shrink the part in slurmdbd) */
    snprintf (want,
              sizeof (want),
              "%s %" PRIu32 " %s ",
              *g->cluster ? g->cluster : "-",
              g->job_id,
              g->node);
    while (!found && getline (&line, &cap, f) >= 0)
        found = strncmp (line, want, strlen (want)) == 0;
    free (line);
    fclose (f);
    return found;
}

static int mark_delivered (const char *dir, const struct group *g)
{
    char path[4096], line[1024];
    int fd, n, rc = 0;

    snprintf (path, sizeof (path), "%s/delivered", dir);
    n = snprintf (line,
                  sizeof (line),
                  "%s %" PRIu32 " %s %016" PRIx64 "\n",
                  *g->cluster ? g->cluster : "-",
                  g->job_id,
                  g->node,
                  g->digest);
    if ((fd = safeout_create (path, SAFEOUT_APPEND, 0600, NULL)) < 0)
        return -1;
    if (write (fd, line, n) != n || fsync (fd) < 0)
        rc = -1;
    close (fd);
    return rc;
}

/* ---- slurmdbd ----------------------------------------------------- */

static void job_cond_init (slurmdb_job_cond_t *c, const struct group *g)
{
    slurm_selected_step_t *sel = calloc (1, sizeof (*sel));

    memset (c, 0, sizeof (*c));
    /* our own calloc: freed with free (slurm_destroy_selected_step would
     * xfree) */
    c->step_list = slurm_list_create (free);
    if (sel) {
        /* slurmdbd takes a bare job id as "that job or every task of that
         * array job" (sacct -j's rule), in queries and in
         * slurmdb_job_modify alike: an array task is named by its array
         * job and task id, or its AdminComment would go to every task */
        sel->array_task_id = g->array_job_id ? g->array_task_id : NO_VAL;
        sel->het_job_offset = NO_VAL;
        sel->step_id.job_id = g->array_job_id ? g->array_job_id : g->job_id;
        sel->step_id.step_id = NO_VAL;
        sel->step_id.step_het_comp = NO_VAL;
        slurm_list_append (c->step_list, sel);
    }
    if (*g->cluster) {
        c->cluster_list = slurm_list_create (free);
        slurm_list_append (c->cluster_list, strdup (g->cluster));
    }
    c->flags = JOBCOND_FLAG_NO_STEP;
    c->db_flags = SLURMDB_JOB_FLAG_NOTSET;
}

static void job_cond_free (slurmdb_job_cond_t *c)
{
    if (c->step_list)
        slurm_list_destroy (c->step_list);
    if (c->cluster_list)
        slurm_list_destroy (c->cluster_list);
}

enum { DB_OK = 0, DB_DOWN = -1, DB_NOJOB = -2, DB_RUNNING = -3 };

/* Node names (malloc'd each), no duplicates. */
struct nodeset {
    char **v;
    size_t n, cap;
};

static void nodeset_clear (struct nodeset *s)
{
    for (size_t i = 0; i < s->n; i++)
        free (s->v[i]);
    free (s->v);
    memset (s, 0, sizeof (*s));
}

/* Add every host of the Slurm hostlist HL ("node[1-2],x"). */
static int nodeset_add_hostlist (struct nodeset *s, const char *hl)
{
    pin_hostlist_t *h;
    char *host;
    int rc = 0;

    if (!hl || !*hl || !strcmp (hl, "None")
        || !(h = slurm_hostlist_create (hl)))
        return 0;
    while (rc == 0 && (host = slurm_hostlist_shift (h))) {
        bool seen = false;
        for (size_t i = 0; i < s->n && !seen; i++)
            seen = !strcmp (s->v[i], host);
        if (seen) {
            free (host);
            continue;
        }
        if (s->n == s->cap) {
            size_t cap = s->cap ? s->cap * 2 : 8;
            char **p = realloc (s->v, cap * sizeof (*p));
            if (!p) {
                free (host);
                rc = -1;
                break;
            }
            s->v = p;
            s->cap = cap;
        }
        s->v[s->n++] = host;
    }
    slurm_hostlist_destroy (h);
    return rc;
}

/* The job's AdminComment (*comment malloc'd, "" if none) and its nodes
 * (*nodes, cleared first: every node of the allocation, each of which
 * writes a job record in its epilog, pin.so's acctstep_job_epilog, and so
 * delivers a part).  Every read ends its transaction: slurmdbd reads
 * MariaDB in one transaction per connection until a commit, and under
 * REPEATABLE READ a second read would show the first one's snapshot,
 * never another node's write. */
static int db_get_comment (void *db,
                           struct group *g,
                           char **comment,
                           struct nodeset *nodes)
{
    slurmdb_job_cond_t cond;
    list_t *jobs;
    list_itr_t *it;
    slurmdb_job_rec_t *j, *best = NULL;
    int rc;

    nodeset_clear (nodes);
    job_cond_init (&cond, g);
    jobs = slurmdb_jobs_get (db, &cond);
    job_cond_free (&cond);
    slurmdb_connection_commit (db, false);
    if (!jobs)
        return DB_DOWN;
    it = slurm_list_iterator_create (jobs);
    while ((j = slurm_list_next (it))) {
        if (j->jobid != g->job_id)
            continue;
        if (!best || j->submit > best->submit)
            best = j;
    }
    slurm_list_iterator_destroy (it);
    if (best && best->array_job_id && best->array_task_id != NO_VAL) {
        /* an array task, as slurmdbd has it (a node that has only the
         * epilog's record of the job does not know): the write must name
         * it by array job and task, or it would go to every task */
        g->array_job_id = best->array_job_id;
        g->array_task_id = best->array_task_id;
    }
    if (!best)
        rc = DB_NOJOB;
    else if ((best->state & JOB_STATE_BASE) <= JOB_SUSPENDED || best->end == 0)
        rc = DB_RUNNING;
    else {
        *comment = strdup (best->admin_comment ? best->admin_comment : "");
        rc = *comment ? DB_OK : DB_DOWN;
        if (rc == DB_OK && nodeset_add_hostlist (nodes, best->nodes) < 0)
            rc = DB_DOWN;
    }
    slurm_list_destroy (jobs);
    return rc;
}

static int has_node_cb (const char *node, json_object *rec, void *arg)
{
    (void)rec;
    return !strcmp (node, (const char *)arg);
}

/* The first node of NODES whose part FIELD's summary lacks; NULL if none. */
static const char *missing_node (const char *field,
                                 const struct nodeset *nodes)
{
    struct acct_summary *s = NULL;
    char *other = NULL;
    const char *miss = NULL;

    if (acct_summary_parse (field, &other, &s, NULL) < 0)
        return nodes->n ? nodes->v[0] : NULL;
    for (size_t i = 0; i < nodes->n && !miss; i++)
        if (acct_summary_foreach (s, has_node_cb, nodes->v[i]) == 0)
            miss = nodes->v[i];
    acct_summary_destroy (s);
    free (other);
    return miss;
}

static int db_set_comment (void *db, const struct group *g, const char *text)
{
    slurmdb_job_cond_t cond;
    slurmdb_job_rec_t rec;
    list_t *ret;
    int rc = DB_DOWN;

    job_cond_init (&cond, g);
    cond.flags = 0;
    pin_job_rec_init (&rec);
    rec.admin_comment = (char *)text;
    errno = 0;
    ret = slurmdb_job_modify (db, &cond, &rec);
    if (ret) {
        if (slurm_list_count (ret) > 0)
            rc = DB_OK;
        else
            rc = DB_NOJOB;
        slurm_list_destroy (ret);
    }
    slurmdb_connection_commit (db, rc == DB_OK);
    job_cond_free (&cond);
    return rc;
}

static void sleep_ms (long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep (&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* Deliver one group.  0 delivered, 1 not now (retry later), 2 (only
 * when !WAIT) this node's part is there but the job's end is not in
 * slurmdbd yet or another node's part is missing (g->missing): call again
 * later, in this run or another, without marking the job.
 *
 * AdminComment is one field that every node of the job rewrites whole,
 * and slurmdbd has no compare-and-set: a node whose read came before our
 * write and whose write comes after it drops our part.  So no node leaves
 * while such a write may still come: each one reads, adds its part when
 * it is missing, and reads again, until a read that follows its own last
 * write holds its part and the part of every node of the job (slurmdbd's
 * node list of the job: every one of them sends a part).  The last write
 * of all is then followed by its writer's read of that same text, which
 * holds every part: none can be lost.  A node whose part
 * never comes (no pin.so there, its records lost) is waited for until the
 * deadline; this node's part is then delivered all the same, and the
 * missing node named. */
static int deliver_one (void *db, struct group *g, time_t deadline, bool wait)
{
    char *cur = NULL, *want = NULL;
    struct nodeset nodes = {0};
    pin_error_t err = {""};
    int writes = 0, rc;
    long pause_ms = 100;
    bool warned = false, waited = false;
    const char *miss;

    for (;;) {
        free (cur);
        cur = NULL;
        rc = db_get_comment (db, g, &cur, &nodes);
        if (rc == DB_RUNNING || rc == DB_NOJOB) {
            /* slurmctld tells slurmdbd of the job's end a moment after
             * the epilog starts: wait for it, bounded */
            if (!wait) {
                g->missing[0] = '\0';
                goto notyet;
            }
            if (time (NULL) >= deadline) {
                cmd_error (prog,
                           "job %" PRIu32
                           ": %s in slurmdbd yet; kept for a later run",
                           g->job_id,
                           rc == DB_NOJOB ? "not known" : "not ended");
                goto later;
            }
            if (verbose && !warned)
                fprintf (stderr,
                         "slurm-pin deliver: job %" PRIu32
                         ": waiting for slurmdbd to see its end\n",
                         g->job_id);
            warned = true;
            sleep_ms (500);
            continue;
        }
        if (rc != DB_OK) {
            cmd_error (prog,
                       "job %" PRIu32
                       ": slurmdbd did not answer; kept for a later run",
                       g->job_id);
            goto later;
        }
        if (!acct_summary_has_node (cur,
                                    g->node,
                                    (const char *const *)g->lines,
                                    g->n)) {
            if (writes >= 50 || time (NULL) >= deadline) {
                cmd_error (prog,
                           "job %" PRIu32
                           ": AdminComment did not keep this node's part "
                           "after %d writes; kept for a later run",
                           g->job_id,
                           writes);
                goto later;
            }
            free (want);
            if (!(want = acct_summary_merge (cur,
                                             g->node,
                                             (const char *const *)g->lines,
                                             g->n,
                                             ACCT_SUMMARY_MAX,
                                             &err))) {
                cmd_error (prog,
                           "job %" PRIu32 ": %s",
                           g->job_id,
                           *err.text ? err.text : strerror (errno));
                goto later;
            }
            rc = db_set_comment (db, g, want);
            if (rc != DB_OK) {
                cmd_error (prog,
                           "job %" PRIu32
                           ": slurmdbd refused the AdminComment change; kept "
                           "for a later run",
                           g->job_id);
                goto later;
            }
            writes++;
            /* read it back at once, after a jitter that keeps two nodes
             * from writing in step */
            sleep_ms ((long)(rand () % 50));
            pause_ms = 100;
            continue;
        }
        /* our part is there, in a read after our last write */
        if (!(miss = missing_node (cur, &nodes)))
            break;
        if (!wait) {
            snprintf (g->missing, sizeof (g->missing), "%s", miss);
            goto notyet;
        }
        if (time (NULL) >= deadline) {
            cmd_error (prog,
                       "job %" PRIu32
                       ": this node's part is in slurmdbd; node %s's part is "
                       "not (no delivery from it in time)",
                       g->job_id,
                       miss);
            break;
        }
        if (verbose && !waited)
            fprintf (stderr,
                     "slurm-pin deliver: job %" PRIu32
                     ": waiting for node %s's part\n",
                     g->job_id,
                     miss);
        waited = true;
        sleep_ms (pause_ms + (long)(rand () % (pause_ms / 2 + 1)));
        if (pause_ms < 2000)
            pause_ms *= 2;
    }
    nodeset_clear (&nodes);
    free (cur);
    free (want);
    return 0;
later:
    nodeset_clear (&nodes);
    free (cur);
    free (want);
    return 1;
notyet:
    nodeset_clear (&nodes);
    free (cur);
    free (want);
    return 2;
}

struct waiting {
    struct group **v;
    size_t n, cap;
};

static int waiting_add (struct waiting *w, struct group *g)
{
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 16;
        struct group **p = realloc (w->v, cap * sizeof (*p));
        if (!p)
            return -1;
        w->v = p;
        w->cap = cap;
    }
    w->v[w->n++] = g;
    return 0;
}

static void done_one (const char *dir, const struct group *g)
{
    if (mark_delivered (dir, g) < 0)
        cmd_error (prog,
                   "%s/delivered: %s (job %" PRIu32
                   " may be sent again; harmless)",
                   dir,
                   strerror (errno),
                   g->job_id);
    if (verbose)
        printf ("job %" PRIu32 ": %zu records of node %s delivered\n",
                g->job_id,
                g->n,
                cmd_text (g->node));
}

static const struct cmdopt options[] = {
    {"job", 'j', CMDOPT_REQUIRED, "N", "only job N", 0},
    {"journal",
     'J',
     CMDOPT_REQUIRED,
     "DIR",
     "the node journal (default: pin.conf's JournalDir,\n"
     "else " DEFAULT_JOURNAL ")",
     0},
    {"timeout",
     't',
     CMDOPT_REQUIRED,
     "SECS",
     "with --job: give up on the job after SECS (default\n"
     "60), waiting for slurmdbd to record its end and\n"
     "for the other nodes' parts included; without:\n"
     "wait SECS in all, after sending, for the jobs\n"
     "whose other nodes' parts are not there yet (they\n"
     "stay for a later run)",
     0},
    {"verbose", 'v', CMDOPT_NONE, NULL, "say what is sent", 0},
    CMDOPT_END,
};

static const struct cmdopt_spec spec = {
    .name = "deliver",
    .usage =
        "Usage: slurm-pin deliver [--job N] [--journal DIR] [--timeout SECS] "
        "[-v]\n"
        "\n"
        "Send this node's accounting records of ended jobs to slurmdbd, into\n"
        "the job's AdminComment (doc/accounting.md); each job once.\n",
    .footer =
        "Exit 0: nothing left to send; 1: some records stay for a later run;\n"
        "2: a usage error.\n",
    .usage_status = 2,
    .tables = {options, NULL},
};

int cmd_deliver (int argc, char **argv)
{
    const char *dir = NULL;
    char dirbuf[4096];
    uint64_t job = 0, timeout = 60;
    struct groups gs = {0};
    struct waiting waiting = {0};
    unsigned skipped = 0;
    char lockpath[4096];
    pin_error_t e = {""};
    struct cmdopt_parser p;
    const char *arg;
    int c, lockfd = -1, rc = 0, pending = 0, sent = 0;
    void *db = NULL;
    time_t deadline;

    if (cmdopt_init (&p, &spec, argc, argv) < 0) {
        cmd_error (prog, "out of memory");
        return 1;
    }
    while ((c = cmdopt_next (&p, &arg)) > 0) {
        switch (c) {
            case 'j':
                if (cmd_parse_u64 (arg, 1, UINT32_MAX - 1, &job) < 0) {
                    cmd_error (prog,
                               "--job=%s: not a job id (1-4294967294)",
                               arg);
                    cmdopt_fini (&p);
                    return 2;
                }
                break;
            case 'J':
                dir = arg;
                break;
            case 't':
                if (cmd_parse_u64 (arg, 0, 86400, &timeout) < 0) {
                    cmd_error (prog,
                               "--timeout=%s: not a number of seconds "
                               "(0-86400)",
                               arg);
                    cmdopt_fini (&p);
                    return 2;
                }
                break;
            case 'v':
                verbose++;
                break;
        }
    }
    if (c < 0 || cmdopt_no_operands (&p) < 0) {
        cmdopt_fini (&p);
        return p.status;
    }
    cmdopt_fini (&p);
    /* --journal, else pin.conf's JournalDir= (what pin.so writes to):
     * the timer's slurm-pin-deliver.service gives no --journal */
    if (!(dir = acct_query_journal_dir (prog, dir, dirbuf, sizeof (dirbuf))))
        return 1;
    deadline = time (NULL) + (time_t)timeout;
    srand ((unsigned)time (NULL) ^ (unsigned)getpid ());

    /* one run at a time per journal: two epilogs ending together must not
     * both send (and mark) the same job */
    snprintf (lockpath, sizeof (lockpath), "%s/delivered.lock", dir);
    if ((lockfd = safeout_create (lockpath, SAFEOUT_APPEND, 0600, &e)) < 0) {
        cmd_error (prog, "%s", e.text);
        return 1;
    }
    while (flock (lockfd, LOCK_EX | LOCK_NB) < 0) {
        if (time (NULL) >= deadline) {
            cmd_error (prog,
                       "%s: another deliver holds it; giving up after %" PRIu64
                       "s",
                       lockpath,
                       timeout);
            close (lockfd);
            return 1;
        }
        sleep_ms (200);
    }
    if (read_journal (&gs, dir, &skipped) < 0) {
        cmd_error (prog,
                   "%s: cannot read the journal: %s",
                   dir,
                   strerror (errno));
        rc = 1;
        goto out;
    }
    if (skipped && verbose)
        fprintf (stderr,
                 "slurm-pin deliver: %u journal lines skipped (torn or not "
                 "records)\n",
                 skipped);
    for (size_t i = 0; i < gs.n; i++) {
        struct group *g = &gs.g[i];
        if (job && g->job_id != job)
            continue;
        if (!g->ended) {
            if (job)
                pending++; /* asked for it, but its job record is not there */
            continue;
        }
        group_digest (g);
        if (is_delivered (dir, g))
            continue;
        if (!db) {
            slurm_init (NULL);
            if (!(db = slurmdb_connection_get (NULL))) {
                cmd_error (prog,
                           "cannot connect to slurmdbd; records kept for a "
                           "later run");
                rc = 1;
                goto out;
            }
        }
        /* a backlog run (no --job) never waits on one job: a job whose
         * end or other nodes' parts are not in slurmdbd yet goes to the
         * waiting list, checked again below */
        switch (deliver_one (db,
                             g,
                             job ? deadline : time (NULL) + (time_t)timeout,
                             job != 0)) {
            case 0:
                done_one (dir, g);
                sent++;
                break;
            case 2:
                if (waiting_add (&waiting, g) < 0) {
                    cmd_error (prog, "out of memory");
                    rc = 1;
                    goto out;
                }
                if (verbose)
                    fprintf (stderr,
                             "slurm-pin deliver: job %" PRIu32
                             ": waiting for %s%s\n",
                             g->job_id,
                             *g->missing ? "node " : "slurmdbd to see its end",
                             *g->missing ? cmd_text (g->missing) : "");
                break;
            default:
                pending++;
        }
    }
    /* the waiting list: one deadline for all of it (--timeout after the
     * pass above), never --timeout a job.  Each job's part is already
     * in slurmdbd; a job is marked only when a read after this node's
     * last write holds every node's part (deliver_one), so one left
     * unmarked is checked by a later run, which writes again only if
     * this node's part went missing */
    {
        time_t wdeadline = time (NULL) + (time_t)timeout;
        long pause_ms = 200;
        while (waiting.n && time (NULL) < wdeadline) {
            size_t k = 0;
            sleep_ms (pause_ms + (long)(rand () % (pause_ms / 2 + 1)));
            if (pause_ms < 2000)
                pause_ms *= 2;
            for (size_t i = 0; i < waiting.n; i++) {
                struct group *g = waiting.v[i];
                switch (deliver_one (db, g, wdeadline, false)) {
                    case 0:
                        done_one (dir, g);
                        sent++;
                        break;
                    case 2:
                        waiting.v[k++] = g;
                        break;
                    default:
                        pending++;
                }
            }
            waiting.n = k;
        }
        for (size_t i = 0; i < waiting.n; i++) {
            struct group *g = waiting.v[i];
            if (*g->missing)
                cmd_error (prog,
                           "job %" PRIu32
                           ": this node's part is in slurmdbd; node %s's part "
                           "is not yet: kept for a later run (slurm-pin "
                           "deliver --job %" PRIu32
                           " stops waiting for it after --timeout)",
                           g->job_id,
                           cmd_text (g->missing),
                           g->job_id);
            else
                cmd_error (prog,
                           "job %" PRIu32
                           ": its end is not in slurmdbd yet; kept for a "
                           "later run",
                           g->job_id);
            pending++;
        }
    }
    if (job && sent == 0 && pending == 0 && verbose)
        printf ("job %" PRIu64 ": nothing to send\n", job);
    if (pending)
        rc = 1;
out:
    if (db)
        slurmdb_connection_close (&db);
    free (waiting.v);
    groups_free (&gs);
    close (lockfd);
    if (cmd_flush_stdout (prog) < 0)
        rc = 1;
    return rc;
}
