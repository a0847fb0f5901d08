/* acctjson.c - slurm-pin acct --json in the installed sacct's shape
 * (acctjson.h)
 *
 * The shapes, as the installed sacct --json prints them (t4130 compares
 * every path and type with the real sacct of each release):
 *   38  Slurm 22.05's openapi/dbv0.0.38: unknown values null, a step's
 *       "state" a string, "step.id" a number ("batch" for the special
 *       steps), "exit_code" {status, return_code, signal{signal_id, name
 *       (strsignal)}}, integers plain; top level jobs, meta, errors.
 *   40+ data_parser/v0.0.N (23.02 on): unknown strings "", states lists
 *       of flags, "step.id" "JOB.STEP", numbers that may be unset
 *       {set, infinite, number}, "exit_code" {status [..], return_code
 *       {..}, signal{id {..}, name (SIGABBREV)}}; top level jobs, meta,
 *       errors, warnings.
 * Values slurm-pin does not have (a job's script, flags, priority, ...)
 * are the type's empty value: doc/accounting-reports.md lists them. */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <json-c/json.h>
#include <pwd.h>
#include <signal.h>
#include <slurm/slurm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acctjson.h"
#include "libutil/text.h"
#include "subcmd.h"

extern slurm_conf_t slurm_conf;

/* the data_parser versions whose shape slurm-pin prints (38: dbv0.0.38) */
/* the shapes compared with the real sacct (t4130): 38 (22.05), 42
 * (24.11's default), 45 (26.05's); 43 and 44 from Slurm's parsers.c */
static const int known[] = {38, 42, 43, 44, 45};
#define NKNOWN (int)(sizeof (known) / sizeof (known[0]))

static bool is_known (int v)
{
    for (int i = 0; i < NKNOWN; i++)
        if (known[i] == v)
            return true;
    return false;
}

/* ---- which shape: the installed Slurm's plugins ----------------------- */

/* The serializers the installed Slurm has, as sacct finds them: the
 * data_parser_v0_0_N.so (23.02 on) and openapi_dbv0_0_38.so (22.05) in
 * its PluginDir.  Bit N of the mask. */
static unsigned long long installed_parsers (void)
{
    unsigned long long mask = 0;
    char *dirs, *save = NULL;
    const char *path = getenv ("SLURM_CONF");

    /* libslurm exits when it cannot read its configuration: PluginDir of
     * a readable slurm.conf, else the plugin directory found at build
     * time */
    if (!path || !path[0])
        path = "/etc/slurm/slurm.conf";
    if (access (path, R_OK) == 0)
        slurm_init (NULL);
    dirs = strdup (access (path, R_OK) == 0 && slurm_conf.plugindir
                           && slurm_conf.plugindir[0]
                       ? slurm_conf.plugindir
                       : PIN_SLURM_PLUGINDIR);
    for (char *d = dirs ? strtok_r (dirs, ":", &save) : NULL; d;
         d = strtok_r (NULL, ":", &save)) {
        DIR *dir = opendir (d);
        struct dirent *e;
        if (!dir)
            continue;
        while ((e = readdir (dir))) {
            unsigned n;
            char tail[8];
            if (sscanf (e->d_name, "data_parser_v0_0_%u%7s", &n, tail) == 2
                && strcmp (tail, ".so") == 0 && n < 64)
                mask |= 1ULL << n;
            else if (strcmp (e->d_name, "openapi_dbv0_0_38.so") == 0)
                mask |= 1ULL << 38;
        }
        closedir (dir);
    }
    free (dirs);
    return mask;
}

/* "v0.0.42", "data_parser/v0.0.42", "0.0.42" -> 42; -1 otherwise */
static int parse_version (const char *s)
{
    unsigned n;
    char c;

    if (strncmp (s, "data_parser/", 12) == 0)
        s += 12;
    if (*s == 'v')
        s++;
    if (sscanf (s, "0.0.%u%c", &n, &c) != 1 || n > 63)
        return -1;
    return (int)n;
}

int acct_json_shape (const char *subcmd, const char *want, int *ver)
{
    unsigned long long mask = installed_parsers ();
    int best = -1;
    char list[256] = "";

    for (int i = 0; i < NKNOWN; i++)
        if (mask & (1ULL << known[i])) {
            size_t l = strlen (list);
            snprintf (list + l,
                      sizeof (list) - l,
                      "%sv0.0.%d",
                      l ? ", " : "",
                      known[i]);
            best = known[i];
        }
    if (want && strcmp (want, "list") == 0) {
        for (int i = 0; i < NKNOWN; i++)
            if (mask & (1ULL << known[i]))
                printf (known[i] == 38 ? "openapi/dbv0.0.%d\n"
                                       : "data_parser/v0.0.%d\n",
                        known[i]);
        *ver = 0;
        return cmd_flush_stdout (subcmd);
    }
    if (!want) {
        /* sacct's default: the newest serializer installed; none found
         * (PluginDir unreadable): the newest slurm-pin knows */
        *ver = best > 0 ? best : known[NKNOWN - 1];
        return 0;
    }
    *ver = parse_version (want);
    if (*ver < 0 || !is_known (*ver) || !(mask & (1ULL << *ver))) {
        cmd_error (subcmd,
                   "--json=%s: not an installed serializer slurm-pin "
                   "prints: one of %s",
                   want,
                   list[0] ? list : "(none found in Slurm's PluginDir)");
        return -1;
    }
    return 0;
}

/* ---- building blocks -------------------------------------------------- */

struct sh {
    int ver;
    bool dp; /* data_parser (40+) rather than dbv0.0.38 */
};

/* Put `v` (NULL: JSON null) at "a/b/c" in `o`, making the objects on
 * the way, as data_parser's paths do. */
static void put (json_object *o, const char *path, json_object *v)
{
    char key[128];
    const char *slash;

    while ((slash = strchr (path, '/'))) {
        json_object *sub;
        size_t n = (size_t)(slash - path);
        if (n >= sizeof (key))
            n = sizeof (key) - 1;
        memcpy (key, path, n);
        key[n] = '\0';
        if (!json_object_object_get_ex (o, key, &sub)
            || !json_object_is_type (sub, json_type_object)) {
            sub = json_object_new_object ();
            if (cmd_json_add (o, key, sub, false) < 0)
                return;
        }
        o = sub;
        path = slash + 1;
    }
    cmd_json_add (o, path, v, true);
}

static json_object *jint (int64_t v)
{
    return json_object_new_int64 (v);
}

/* a string; unknown ("" or NULL): null in dbv0.0.38, "" in data_parser */
static json_object *jstr (const struct sh *s, const char *v)
{
    if (!v || !*v)
        return s->dp ? json_object_new_string ("") : NULL;
    return json_object_new_string (v);
}

/* a string that dbv0.0.38 prints "" when empty (not null) */
static json_object *jstr0 (const char *v)
{
    return json_object_new_string (v ? v : "");
}

/* a number that may be unset or infinite: data_parser's {set, infinite,
 * number}; dbv0.0.38's plain number, null when unset */
static json_object *jnum (const struct sh *s, bool set, bool inf, int64_t v)
{
    json_object *o;

    if (!s->dp)
        return set && !inf ? jint (v) : NULL;
    /* data_parser: infinite is {set false, infinite true, number 0} */
    o = json_object_new_object ();
    cmd_json_add (o, "set", json_object_new_boolean (set && !inf), false);
    cmd_json_add (o, "infinite", json_object_new_boolean (inf), false);
    cmd_json_add (o, "number", jint (set && !inf ? v : 0), false);
    return o;
}

/* one flag: a list of flags in data_parser, the string in dbv0.0.38 */
static json_object *jflag (const struct sh *s, const char *v)
{
    json_object *a;

    if (!s->dp)
        return json_object_new_string (v);
    a = json_object_new_array ();
    json_object_array_add (a, json_object_new_string (v));
    return a;
}

static void put_cpu (json_object *o, const char *base, uint64_t usec)
{
    char p[64];

    snprintf (p, sizeof (p), "%s/seconds", base);
    put (o, p, jint ((int64_t)(usec / 1000000)));
    snprintf (p, sizeof (p), "%s/microseconds", base);
    put (o, p, jint ((int64_t)(usec % 1000000)));
}

static const char *user_name (uint32_t uid, char *buf, size_t n)
{
    struct passwd *pw = getpwuid ((uid_t)uid);
    if (pw)
        snprintf (buf, n, "%s", pw->pw_name);
    else
        snprintf (buf, n, "%u", uid);
    return buf;
}

/* a TRES list entry {type, name, id, count} (node and task for the
 * requested max and min) */
static json_object *tres (const struct sh *s,
                          const char *type,
                          int id,
                          int64_t count,
                          const char *node)
{
    json_object *o = json_object_new_object ();
    cmd_json_add (o, "type", json_object_new_string (type), false);
    cmd_json_add (o, "name", jstr (s, NULL), true);
    cmd_json_add (o, "id", jint (id), false);
    cmd_json_add (o, "count", jint (count), false);
    if (node) {
        cmd_json_add (o, "task", jint (0), false);
        cmd_json_add (o, "node", json_object_new_string (node), false);
    }
    return o;
}

/* The row's ExitCode as the text column prints it ("rc:sig"): one rule
 * for the text and the JSON. */
/* The row's exit code and signal, from its wait status as Slurm keeps
 * it: the code whole (143 for a shell that ended on SIGTERM's 128 + 15,
 * as data_parser's return_code; ExitCode's text takes 128 off) */
static void row_exit (const struct acct_row *r, int *rc, int *sig)
{
    *rc = 0;
    *sig = 0;
    if (r->exit_status < 0)
        return;
    if (WIFSIGNALED (r->exit_status))
        *sig = WTERMSIG (r->exit_status);
    else if (WIFEXITED (r->exit_status))
        *rc = WEXITSTATUS (r->exit_status);
}

/* The row's State, and the uid of "CANCELLED by UID" (-1 none) */
static void row_state (const struct acct_row *r,
                       char *buf,
                       size_t n,
                       long *requid)
{
    char *by;

    *requid = -1;
    if (!acct_row_field (r, ACCT_F_STATE, buf, n))
        snprintf (buf, n, "%s", r->state[0] ? r->state : "UNKNOWN");
    if ((by = strstr (buf, " by "))) {
        *requid = strtol (by + 4, NULL, 10);
        *by = '\0';
    }
}

static const char *sig_abbrev (int sig)
{
    static const struct {
        int n;
        const char *s;
    } t[] = {{SIGHUP, "HUP"},       {SIGINT, "INT"},   {SIGQUIT, "QUIT"},
             {SIGILL, "ILL"},       {SIGTRAP, "TRAP"}, {SIGABRT, "ABRT"},
             {SIGBUS, "BUS"},       {SIGFPE, "FPE"},   {SIGKILL, "KILL"},
             {SIGUSR1, "USR1"},     {SIGSEGV, "SEGV"}, {SIGUSR2, "USR2"},
             {SIGPIPE, "PIPE"},     {SIGALRM, "ALRM"}, {SIGTERM, "TERM"},
             {SIGCHLD, "CHLD"},     {SIGCONT, "CONT"}, {SIGSTOP, "STOP"},
             {SIGTSTP, "TSTP"},     {SIGTTIN, "TTIN"}, {SIGTTOU, "TTOU"},
             {SIGURG, "URG"},       {SIGXCPU, "XCPU"}, {SIGXFSZ, "XFSZ"},
             {SIGVTALRM, "VTALRM"}, {SIGPROF, "PROF"}, {SIGWINCH, "WINCH"},
             {SIGIO, "IO"},         {SIGSYS, "SYS"}};
    for (size_t i = 0; i < sizeof (t) / sizeof (t[0]); i++)
        if (t[i].n == sig)
            return t[i].s;
    return "";
}

/* exit_code, derived_exit_code: rc and sig as the text ExitCode; pending
 * (no status yet): rc < 0 */
static json_object *exit_json (const struct sh *s, int rc, int sig)
{
    json_object *o = json_object_new_object ();
    const char *status = rc < 0    ? "PENDING"
                         : sig     ? "SIGNALED"
                         : rc == 0 ? "SUCCESS"
                                   : "ERROR";

    if (!s->dp) {
        /* dbv0.0.38: return_code for an exit (22.05 printed 0 for every
         * one: slurm-pin prints ExitCode's code, 128 taken off,
         * doc/accounting-reports.md), null for a signal;
         * signal{signal_id, name} */
        cmd_json_add (o, "status", json_object_new_string (status), false);
        cmd_json_add (o,
                      "return_code",
                      sig || rc < 0 ? NULL
                                    : jint (ACCT_EXIT_TAKES_128 && rc >= 128
                                                ? rc - 128
                                                : rc),
                      true);
        if (sig) {
            json_object *g = json_object_new_object ();
            cmd_json_add (g, "signal_id", jint (sig), false);
            cmd_json_add (g,
                          "name",
                          json_object_new_string (strsignal (sig)),
                          false);
            cmd_json_add (o, "signal", g, false);
        }
        return o;
    }
    cmd_json_add (o, "status", jflag (s, status), false);
    put (o, "return_code", jnum (s, !sig && rc >= 0, false, rc < 0 ? 0 : rc));
    put (o, "signal/id", jnum (s, sig != 0, false, sig));
    put (o,
         "signal/name",
         json_object_new_string (sig ? sig_abbrev (sig) : ""));
    return o;
}

/* nodes "n1,n2" as a list */
static json_object *node_list (const char *nodes)
{
    json_object *a = json_object_new_array ();
    char *dup = strdup (nodes ? nodes : ""), *save = NULL;

    for (char *n = dup ? strtok_r (dup, ",", &save) : NULL; n;
         n = strtok_r (NULL, ",", &save))
        json_object_array_add (a, json_object_new_string (n));
    free (dup);
    return a;
}

static const char *row_nodes (const struct acct_row *r)
{
    return r->nodelist ? r->nodelist : r->nodes ? r->nodes : "";
}

static int64_t row_start (const struct acct_row *r)
{
    return r->dbd.valid ? r->dbd.start : r->start_us / 1000000;
}

static int64_t row_end (const struct acct_row *r)
{
    return r->dbd.valid ? r->dbd.end : r->end_us / 1000000;
}

/* ---- slurm-pin's own numbers ------------------------------------------ */

static json_object *jstr_or_null (const char *s)
{
    return s ? json_object_new_string (s) : NULL;
}

static json_object *pin_json (const struct acct_row *row)
{
    json_object *sp = json_object_new_object ();
    char buf[256];
    double eff = acct_row_eff (row);

    cmd_json_add (sp, "policy", jstr_or_null (row->policy), true);
    cmd_json_add (sp, "fallback", jstr_or_null (row->fallback), true);
    cmd_json_add (sp, "cpus", jstr_or_null (acct_row_cpus (row)), true);
    cmd_json_add (sp, "mems", jstr_or_null (acct_row_mems (row)), true);
    /* the GPUs (PCI bus ids, "gres:N") and NIC the tasks were placed
     * near: null when none */
    cmd_json_add (sp,
                  "gpus",
                  jstr_or_null (row->gpus && *row->gpus ? row->gpus : NULL),
                  true);
    cmd_json_add (sp,
                  "nic",
                  jstr_or_null (row->nic && *row->nic ? row->nic : NULL),
                  true);
    /* a policy experiment's enrolment: null when not enrolled */
    cmd_json_add (sp, "experiment", jstr_or_null (row->experiment), true);
    cmd_json_add (sp, "arm", jstr_or_null (row->arm), true);
    cmd_json_add (sp, "block", jstr_or_null (row->block), true);
    cmd_json_add (sp,
                  "efficiency",
                  eff >= 0 ? json_object_new_double (eff) : NULL,
                  true);
    acct_fmt_eff (eff, buf, sizeof (buf));
    cmd_json_add (sp, "cpu_eff", json_object_new_string (buf), false);
    cmd_json_add (sp, "user_usec", jint ((int64_t)row->user_usec), false);
    cmd_json_add (sp, "system_usec", jint ((int64_t)row->system_usec), false);
    if (row->has_throttle) {
        cmd_json_add (sp,
                      "throttled_usec",
                      jint ((int64_t)row->throttled_usec),
                      false);
        cmd_json_add (sp,
                      "nr_throttled",
                      jint ((int64_t)row->nr_throttled),
                      false);
        cmd_json_add (sp,
                      "nr_periods",
                      jint ((int64_t)row->nr_periods),
                      false);
    }
    if (row->has_mem_peak)
        cmd_json_add (sp, "mem_peak", jint ((int64_t)row->mem_peak), false);
    if (row->confined_us > 0)
        cmd_json_add (sp, "confined_us", jint (row->confined_us), false);
    if (row->has_seed)
        cmd_json_add (sp, "seed", json_object_new_uint64 (row->seed), false);
    cmd_json_add (sp, "records", jint (row->nrecords), false);
    if (!row->is_step)
        cmd_json_add (sp,
                      "job_line_from_steps",
                      json_object_new_boolean (row->from_steps),
                      false);
    return sp;
}

/* ---- a step ----------------------------------------------------------- */

static json_object *step_json (const struct sh *s, const struct acct_row *r)
{
    json_object *o = json_object_new_object (), *a;
    char buf[128], name[64];
    int rc, sig;
    long requid;
    bool special = r->step_id >= ACCT_STEP_INTERACTIVE;
    const char *nodes = row_nodes (r);
    const char *first = r->nodes ? r->nodes : "";
    char node1[64];

    snprintf (node1, sizeof (node1), "%.*s", (int)strcspn (first, ","), first);
    put (o, "time/elapsed", jint (acct_row_elapsed_s (r)));
    put (o, "time/end", jnum (s, row_end (r) > 0, false, row_end (r)));
    put (o, "time/start", jnum (s, row_start (r) > 0, false, row_start (r)));
    put (o, "time/suspended", jint (0));
    put_cpu (o, "time/system", r->system_usec);
    put_cpu (o, "time/total", r->user_usec + r->system_usec);
    put_cpu (o, "time/user", r->user_usec);
    row_exit (r, &rc, &sig);
    put (o,
         "exit_code",
         exit_json (s, r->exit_status < 0 && !r->dbd.valid ? -1 : rc, sig));
    put (o, "nodes/count", jint (acct_row_nnodes (r)));
    put (o, "nodes/range", json_object_new_string (nodes));
    put (o, "nodes/list", node_list (r->nodes));
    put (o, "tasks/count", jint (r->dbd.valid ? r->dbd.ntasks : 0));
    if (s->ver < 45) /* gone in v0.0.45 */
        put (o, "pid", jstr (s, NULL));
    if (s->ver >= 45)
        put (o, "submit_line", jstr (s, NULL));
    if (s->ver >= 43) {
        put (o, "time/limit", jnum (s, false, true, 0));
        put (o, "step/stderr", jstr (s, NULL));
        put (o, "step/stdin", jstr (s, NULL));
        put (o, "step/stdout", jstr (s, NULL));
        put (o, "step/stderr_expanded", jstr (s, NULL));
        put (o, "step/stdin_expanded", jstr (s, NULL));
        put (o, "step/stdout_expanded", jstr (s, NULL));
    }
    put (o, "CPU/requested_frequency/min", jnum (s, !special, false, 0));
    put (o, "CPU/requested_frequency/max", jnum (s, !special, false, 0));
    put (o,
         "CPU/governor",
         s->dp ? json_object_new_string ("") : json_object_new_array ());
    row_state (r, buf, sizeof (buf), &requid);
    put (o, "kill_request_user", jstr (s, NULL));
    put (o, "state", jflag (s, buf));
    put (o, "statistics/CPU/actual_frequency", jint (0));
    put (o,
         "statistics/energy/consumed",
         s->dp ? jnum (s, true, false, 0) : jint (0));
    acct_fmt_stepname (r->step_id, name, sizeof (name));
    if (s->dp) {
        acct_row_jobid (r, true, buf, sizeof (buf));
        put (o, "step/id", json_object_new_string (buf));
    } else {
        put (o, "step/job_id", jint (r->job_id));
        put (o, "step/het/component", NULL);
        put (o,
             "step/id",
             special ? json_object_new_string (name) : jint (r->step_id));
    }
    acct_row_field (r, ACCT_F_JOBNAME, buf, sizeof (buf));
    put (o, "step/name", json_object_new_string (buf));
    put (o,
         "task/distribution",
         json_object_new_string (special ? "Unknown" : "Cyclic"));
    /* TRES: slurmdbd's memory usage (MaxRSS etc.) where it has it */
    {
        static const char *const kinds[] = {"max", "min", "average", "total"};
        for (int k = 0; k < 4; k++) {
            char p[64];
            json_object *l = json_object_new_array ();
            if (r->dbd.valid && r->dbd.has_rss) {
                uint64_t v = k == 0   ? r->dbd.max_rss
                             : k == 1 ? r->dbd.max_rss
                             : k == 2 ? r->dbd.ave_rss
                                      : r->dbd.tot_rss;
                if (v != (uint64_t)INFINITE64)
                    json_object_array_add (l,
                                           tres (s,
                                                 "mem",
                                                 2,
                                                 (int64_t)v,
                                                 k < 2 ? node1 : NULL));
            }
            snprintf (p, sizeof (p), "tres/requested/%s", kinds[k]);
            put (o, p, l);
            snprintf (p, sizeof (p), "tres/consumed/%s", kinds[k]);
            put (o, p, json_object_new_array ());
        }
    }
    a = json_object_new_array ();
    json_object_array_add (a, tres (s, "cpu", 1, r->alloc_cpus, NULL));
    json_object_array_add (a, tres (s, "node", 4, acct_row_nnodes (r), NULL));
    put (o, "tres/allocated", a);
    put (o, "slurm_pin", pin_json (r));
    return o;
}

/* ---- a job ------------------------------------------------------------ */

static json_object *job_json (const struct sh *s,
                              const struct acct_query *q,
                              const struct acct_job *j,
                              bool allocations)
{
    const struct acct_row *r = &j->job;
    json_object *o = json_object_new_object (), *a, *steps;
    char buf[256];
    int rc, sig, drc = 0, dsig = 0;
    long requid;
    bool array = r->array_job_id != ACCT_NO_VAL && r->array_job_id != 0;
    int64_t submit = r->submit_us > 0 ? r->submit_us / 1000000 : row_start (r);
    int64_t start = row_start (r), end = row_end (r);

    put (o, "account", jstr0 (r->account));
    put (o, "comment/administrator", jstr (s, NULL));
    put (o, "comment/job", jstr (s, NULL));
    put (o, "comment/system", jstr (s, NULL));
    put (o, "allocation_nodes", jint (acct_row_nnodes (r)));
    put (o, "array/job_id", jint (array ? r->array_job_id : 0));
    put (o, "array/limits/max/running/tasks", jint (0));
    put (o, "array/task", jstr (s, NULL));
    put (o,
         "array/task_id",
         jnum (s,
               array && r->array_task_id != ACCT_NO_VAL,
               false,
               r->array_task_id));
    put (o, "association/account", jstr0 (r->account));
    put (o, "association/cluster", jstr0 (r->cluster));
    put (o, "association/partition", jstr (s, NULL));
    put (o, "association/user", jstr0 (r->user));
    if (s->dp) {
        put (o, "association/id", jint (0));
        put (o, "block", jstr (s, NULL));
        put (o, "extra", jstr (s, NULL));
        put (o, "failed_node", jstr (s, NULL));
        put (o, "hold", json_object_new_boolean (false));
        put (o, "licenses", jstr (s, NULL));
        put (o, "qosreq", jstr (s, NULL));
        put (o, "restart_cnt", jint (0));
        put (o, "script", jstr (s, NULL));
        put (o, "stderr", jstr (s, NULL));
        put (o, "stdin", jstr (s, NULL));
        put (o, "stdout", jstr (s, NULL));
        put (o, "stderr_expanded", jstr (s, NULL));
        put (o, "stdin_expanded", jstr (s, NULL));
        put (o, "stdout_expanded", jstr (s, NULL));
        put (o, "submit_line", jstr (s, NULL));
        put (o, "used_gres", jstr (s, NULL));
        put (o,
             "time/planned",
             jnum (s, start > 0, false, start > submit ? start - submit : 0));
    }
    put (o, "cluster", jstr0 (r->cluster));
    put (o, "constraints", jstr0 (NULL));
    put (o, "container", jstr (s, NULL));
    /* derived: the worst of the steps srun ran (not batch, extern);
     * 22.05's slurmdbd keeps only their exit codes (a step killed by a
     * signal leaves it 0), data_parser's releases the signal too */
    for (size_t k = 0; k < j->nsteps; k++) {
        int src, ssig;
        if (j->steps[k].step_id >= ACCT_STEP_INTERACTIVE)
            continue;
        row_exit (&j->steps[k], &src, &ssig);
        if (ssig && !dsig && s->dp)
            dsig = ssig, drc = 0;
        else if (!dsig && !ssig && src > drc)
            drc = src;
    }
    put (o, "derived_exit_code", exit_json (s, drc, dsig));
    put (o, "time/elapsed", jint (acct_row_elapsed_s (r)));
    put (o, "time/eligible", jint (submit));
    put (o, "time/end", jint (end));
    put (o, "time/start", jint (start));
    put (o, "time/submission", jint (submit));
    put (o, "time/suspended", jint (0));
    put_cpu (o, "time/system", r->system_usec);
    put (o,
         "time/limit",
         jnum (s,
               r->has_timelimit && r->timelimit != ACCT_NO_VAL,
               r->has_timelimit && r->timelimit == 0xffffffffu,
               r->timelimit));
    put_cpu (o, "time/total", r->user_usec + r->system_usec);
    put_cpu (o, "time/user", r->user_usec);
    row_exit (r, &rc, &sig);
    put (o,
         "exit_code",
         exit_json (s, r->exit_status < 0 && !r->dbd.valid ? -1 : rc, sig));
    put (o, "flags", json_object_new_array ());
    {
        struct group *g = r->dbd.valid ? getgrgid ((gid_t)r->dbd.gid) : NULL;
        put (o, "group", jstr0 (g ? g->gr_name : ""));
    }
    put (o, "het/job_id", jint (0));
    put (o, "het/job_offset", jnum (s, false, false, 0));
    put (o, "job_id", jint (r->job_id));
    put (o, "name", jstr0 (r->job_name));
    put (o, "mcs/label", jstr0 (NULL));
    put (o, "nodes", jstr0 (row_nodes (r)));
    put (o, "partition", jstr0 (r->partition));
    put (o, "priority", s->dp ? jnum (s, false, false, 0) : jint (0));
    put (o, "qos", jstr0 (r->qos));
    put (o, "required/CPUs", jint (r->alloc_cpus));
    if (s->dp) {
        bool per_cpu = r->dbd.valid && r->dbd.mem_per_cpu;
        put (o,
             "required/memory_per_cpu",
             jnum (s, per_cpu, false, (int64_t)r->req_mem));
        put (o,
             "required/memory_per_node",
             jnum (s, !per_cpu, false, (int64_t)r->req_mem));
    } else {
        put (o, "required/memory", jint ((int64_t)r->req_mem));
    }
    row_state (r, buf, sizeof (buf), &requid);
    {
        char who[64];
        put (o,
             "kill_request_user",
             requid >= 0 ? json_object_new_string (
                 user_name ((uint32_t)requid, who, sizeof (who)))
                         : jstr (s, NULL));
    }
    put (o, "reservation/id", jint (0));
    if (s->ver >= 43) {
        put (o, "reservation/requested", jstr (s, NULL));
        put (o, "segment_size", jint (0));
    }
    if (s->ver >= 45) { /* slurmdbd's, not in slurm-pin's records */
        put (o, "exclusive", jstr (s, NULL));
        put (o, "oversubscribe", jstr (s, NULL));
        put (o, "sluid", jstr (s, NULL));
        put (o, "original_sluid", jstr (s, NULL));
    }
    put (o, "reservation/name", s->dp ? jstr0 (NULL) : jint (0));
    put (o, "state/current", jflag (s, buf));
    put (o, "state/reason", jstr0 (r->reason[0] ? r->reason : "None"));
    steps = json_object_new_array ();
    for (size_t k = 0; !allocations && k < j->nsteps; k++)
        if (acct_query_step_line (q, j, &j->steps[k]))
            json_object_array_add (steps, step_json (s, &j->steps[k]));
    put (o, "steps", steps);
    a = json_object_new_array ();
    json_object_array_add (a, tres (s, "cpu", 1, r->alloc_cpus, NULL));
    if (r->dbd.valid && r->dbd.alloc_tres_mem)
        json_object_array_add (a,
                               tres (s,
                                     "mem",
                                     2,
                                     (int64_t)r->dbd.alloc_tres_mem,
                                     NULL));
    json_object_array_add (a, tres (s, "node", 4, acct_row_nnodes (r), NULL));
    put (o, "tres/allocated", a);
    a = json_object_new_array ();
    json_object_array_add (a, tres (s, "cpu", 1, r->alloc_cpus, NULL));
    if (r->req_mem)
        json_object_array_add (a,
                               tres (s, "mem", 2, (int64_t)r->req_mem, NULL));
    json_object_array_add (a, tres (s, "node", 4, acct_row_nnodes (r), NULL));
    put (o, "tres/requested", a);
    put (o, "user", jstr0 (r->user));
    put (o, "wckey/wckey", jstr0 (NULL));
    put (o, "wckey/flags", json_object_new_array ());
    put (o, "working_directory", jstr0 (NULL));
    put (o, "slurm_pin", pin_json (r));
    return o;
}

/* ---- the document ----------------------------------------------------- */

/* Write JSON text as cmd_print_json() does: DEL, C1 and bidi controls
 * and ill-formed UTF-8 that json-c writes as they are become '?'.  Each
 * piece is a whole job or the envelope, so no sequence is split. */
static int put_text (const char *subcmd, const char *s)
{
    if (text_is_safe (s, 0)) {
        fputs (s, stdout);
        return 0;
    }
    char *safe = strdup (s);
    if (!safe) {
        cmd_error (subcmd, "cannot build the JSON output: out of memory");
        return -1;
    }
    fputs (text_sanitize (safe, strlen (s) + 1, safe, 0), stdout);
    free (safe);
    return 0;
}

#define JSON_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
#define JSON_HEAD "{\"jobs\":["

void acct_json_init (struct acct_json *js,
                     const char *subcmd,
                     int ver,
                     const struct acct_query *q,
                     bool allocations)
{
    memset (js, 0, sizeof (*js));
    js->subcmd = subcmd;
    js->ver = ver;
    js->q = q;
    js->allocations = allocations;
}

int acct_json_jobs (struct acct_table *t, void *arg)
{
    struct acct_json *js = arg;
    struct sh s = {js->ver, js->ver >= 40};

    for (size_t i = 0; i < t->njobs; i++) {
        const struct acct_job *j = &t->jobs[i];
        bool any = acct_query_job_line (js->q, j);
        for (size_t k = 0; !any && k < j->nsteps; k++)
            any = acct_query_step_line (js->q, j, &j->steps[k]);
        if (!any || !acct_query_in_window (js->q, j))
            continue;
        json_object *o = job_json (&s, js->q, j, js->allocations);
        const char *text = o ? json_object_to_json_string_ext (o, JSON_FLAGS)
                             : NULL;
        if (!text) {
            json_object_put (o);
            cmd_error (js->subcmd,
                       "cannot build the JSON output: out of memory");
            js->failed = true;
            return 1;
        }
        if (js->njobs == 0) {
            snprintf (js->cluster, sizeof (js->cluster), "%s",
                      j->job.cluster);
            fputs (JSON_HEAD, stdout);
        } else {
            fputc (',', stdout);
        }
        js->njobs++;
        int rc = put_text (js->subcmd, text);
        json_object_put (o);
        if (rc < 0) {
            js->failed = true;
            return 1;
        }
    }
    return ferror (stdout) ? 1 : 0;
}

int acct_json_print (const struct acct_json *js,
                     unsigned skipped,
                     int argc,
                     char **argv)
{
    const char *subcmd = js->subcmd;
    const struct acct_query *q = js->q;
    struct sh s = {js->ver, js->ver >= 40};
    json_object *root, *meta, *sp, *warnings;
    long v = slurm_api_version ();
    char msg[512], who[64];

    if (js->failed)
        return -1;
    root = json_object_new_object ();
    if (!root)
        return cmd_print_json (subcmd, NULL, stdout);
    /* the jobs went out as they were read (acct_json_jobs): the
     * envelope's "jobs" is the first key, printed empty and cut */
    put (root, "jobs", json_object_new_array ());
    meta = json_object_new_object ();
    snprintf (msg,
              sizeof (msg),
              "%ld.%02ld.%ld",
              SLURM_VERSION_MAJOR (v),
              SLURM_VERSION_MINOR (v),
              SLURM_VERSION_MICRO (v));
    if (s.dp) {
        char dp[32];
        json_object *cmd = json_object_new_array ();
        snprintf (dp, sizeof (dp), "data_parser/v0.0.%d", js->ver);
        put (meta, "plugin/type", json_object_new_string (""));
        put (meta, "plugin/name", json_object_new_string (""));
        put (meta, "plugin/data_parser", json_object_new_string (dp));
        put (meta,
             "plugin/accounting_storage",
             json_object_new_string (strcmp (q->source, "journal") == 0
                                         ? ""
                                         : "accounting_storage/slurmdbd"));
        put (meta, "client/source", json_object_new_string (""));
        put (meta,
             "client/user",
             json_object_new_string (
                 user_name (getuid (), who, sizeof (who))));
        {
            struct group *g = getgrgid (getgid ());
            put (meta, "client/group", jstr0 (g ? g->gr_name : ""));
        }
        for (int i = 0; i < argc; i++)
            json_object_array_add (cmd, json_object_new_string (argv[i]));
        put (meta, "command", cmd);
        snprintf (dp, sizeof (dp), "%ld", SLURM_VERSION_MAJOR (v));
        put (meta, "slurm/version/major", json_object_new_string (dp));
        snprintf (dp, sizeof (dp), "%ld", SLURM_VERSION_MICRO (v));
        put (meta, "slurm/version/micro", json_object_new_string (dp));
        snprintf (dp, sizeof (dp), "%02ld", SLURM_VERSION_MINOR (v));
        put (meta, "slurm/version/minor", json_object_new_string (dp));
        put (meta, "slurm/release", json_object_new_string (msg));
        put (meta,
             "slurm/cluster",
             jstr0 (js->cluster));
    } else {
        put (meta,
             "plugin/type",
             json_object_new_string ("openapi/dbv0.0.38"));
        put (meta,
             "plugin/name",
             json_object_new_string ("Slurm OpenAPI DB v0.0.38"));
        put (meta, "Slurm/version/major", jint (SLURM_VERSION_MAJOR (v)));
        put (meta, "Slurm/version/micro", jint (SLURM_VERSION_MICRO (v)));
        put (meta, "Slurm/version/minor", jint (SLURM_VERSION_MINOR (v)));
        put (meta, "Slurm/release", json_object_new_string (msg));
    }
    sp = json_object_new_object ();
    cmd_json_add (sp,
                  "version",
                  json_object_new_string (PACKAGE_VERSION),
                  false);
    cmd_json_add (sp, "source", json_object_new_string (q->source), false);
    cmd_json_add (sp,
                  "journal",
                  q->dir[0] ? json_object_new_string (q->dir) : NULL,
                  true);
    cmd_json_add (sp, "skipped_lines", jint (skipped), false);
    warnings = json_object_new_array ();
    if (skipped) {
        json_object *w = json_object_new_object ();
        snprintf (msg,
                  sizeof (msg),
                  "skipped %u %s that do%s not parse",
                  skipped,
                  strcmp (q->source, "journal") == 0
                      ? (skipped == 1 ? "journal line" : "journal lines")
                      : (skipped == 1 ? "summary or record"
                                      : "summaries or records"),
                  skipped == 1 ? "es" : "");
        cmd_json_add (w, "description", json_object_new_string (msg), false);
        cmd_json_add (w, "source", json_object_new_string (q->source), false);
        json_object_array_add (warnings, w);
    }
    /* data_parser's top level has "warnings" beside "errors": the same
     * warnings there too; dbv0.0.38's has only "errors" */
    if (s.dp)
        put (root, "warnings", json_object_get (warnings));
    cmd_json_add (sp, "warnings", warnings, false);
    put (meta, "slurm_pin", sp);
    put (root, "meta", meta);
    put (root, "errors", json_object_new_array ());
    const char *text = json_object_to_json_string_ext (root, JSON_FLAGS);
    int rc = 0;
    if (!text || strncmp (text, JSON_HEAD "]", strlen (JSON_HEAD) + 1) != 0) {
        cmd_error (subcmd, "cannot build the JSON output: out of memory");
        rc = -1;
    } else {
        if (js->njobs == 0)
            fputs (JSON_HEAD, stdout);
        rc = put_text (subcmd, text + strlen (JSON_HEAD));
        fputc ('\n', stdout);
    }
    json_object_put (root);
    return rc;
}
