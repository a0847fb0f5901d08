/* experiment.c - slurm-pin experiment report NAME: the verdict of a policy
 * experiment
 *
 * job_submit_pin.so enrols jobs in an experiment (pin.conf Experiment=)
 * and gives each an arm; every step record carries the experiment, the arm
 * and the block of like jobs.  This reads the records (the journal or
 * slurmdbd, as acct and report do: acctsrc.h), hands those of experiment
 * NAME to libexp (exp.h), and prints per arm what its jobs cost, then for
 * each arm against the control the differences with their 95 % intervals
 * on matched blocks, and one verdict line per arm.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "acctsrc.h"
#include "libconf/conf.h"
#include "libexp/exp.h"
#include "libplace/place.h"
#include "subcmd.h"

#define NAME "experiment"
#define REPORT "experiment report"

enum { OPT_JSON = CMDOPT_LONG, OPT_CONTROL, OPT_CONF };

static const struct cmdopt options[] = {
    {"control",
     OPT_CONTROL,
     CMDOPT_REQUIRED,
     "ARM",
     "compare each arm with this one (default: the\n"
     "first of the experiment's ExperimentPolicies= in\n"
     "pin.conf, else the arm none, else the first by\n"
     "name)",
     0},
    {"conf",
     OPT_CONF,
     CMDOPT_REQUIRED,
     "FILE",
     "the pin.conf that names the control (default\n" PIN_CONF_DEFAULT_PATH
     " if it exists)",
     0},
    {"json", OPT_JSON, CMDOPT_NONE, NULL, "one JSON object", 0},
    CMDOPT_END,
};

static const struct cmdopt_spec spec = {
    .name = REPORT,
    .usage =
        "Usage: slurm-pin experiment report NAME [OPTIONS]\n"
        "\n"
        "The verdict of policy experiment NAME (pin.conf Experiment=NAME): "
        "per arm\n"
        "its jobs, steps, jobs that opted out, CPU hours, CPU efficiency, "
        "system\n"
        "time share, wall time and CPU time per job; then each arm against "
        "the\n"
        "control arm on matched blocks (blocks of like jobs holding both "
        "arms),\n"
        "with 95 % confidence intervals, and a verdict per arm in plain "
        "words.\n"
        "Without -S, every record of the experiment is read.\n",
    .footer = "See slurm-pin-experiment(1) and doc/experiments.md.\n",
    .usage_status = 2,
    .tables = {options, acct_opts_window, acct_opts_source, NULL},
};

/* pin.conf's rule for Experiment= (the lead's libconf): a name, never a
 * path or text with spaces. */
static bool valid_name (const char *s)
{
    size_t n = strlen (s);

    if (n == 0 || n > 32)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
                     || (c >= '0' && c <= '9');
        if (!alnum && (i == 0 || (c != '_' && c != '.' && c != '-')))
            return false;
    }
    return true;
}

/* The control pin.conf gives experiment `name`: the first policy of its
 * ExperimentPolicies= (the partition's line, else the global one), in
 * buf.  1 found, 0 not named there (or the default file is absent or
 * bad: the report works anywhere and falls back on exp.h's rule), -1
 * after printing the error of a file given with --conf. */
static int conf_control (const char *path,
                         bool given,
                         const char *name,
                         char *buf,
                         size_t n)
{
    struct pin_conf *conf = malloc (sizeof (*conf));
    const struct pin_conf_arms *arms = NULL;
    pin_error_t e = {""};
    const char *pol;

    if (!conf) {
        cmd_error (REPORT, "out of memory");
        return -1;
    }
    pin_conf_defaults (conf);
    if (pin_conf_load_file (conf, path, given, &e) < 0) {
        free (conf);
        if (!given)
            return 0;
        cmd_error (REPORT, "--conf: %s", e.text);
        return -1;
    }
    for (int i = 0; i < conf->npartitions && !arms; i++) {
        const struct pin_conf_partition *p = &conf->partitions[i];
        if ((p->set & PIN_CONF_PART_EXPERIMENT)
            && strcmp (p->experiment, name) == 0)
            arms = (p->set & PIN_CONF_PART_EXP_POLICIES)
                       ? &p->experiment_policies
                       : &conf->experiment_policies;
    }
    if (!arms && strcmp (conf->experiment, name) == 0)
        arms = &conf->experiment_policies;
    pol = arms && arms->n > 0 ? place_policy_name (arms->policy[0]) : NULL;
    if (pol)
        snprintf (buf, n, "%s", pol);
    free (conf);
    return pol ? 1 : 0;
}

static int on_record (const struct acct_record *r, void *arg)
{
    return exp_add (arg, r) < 0 ? -1 : 0;
}

static json_object *num_or_null (double v)
{
    return (v < 0 || !isfinite (v)) ? NULL : json_object_new_double (v);
}

static json_object *real_or_null (double v)
{
    return isfinite (v) ? json_object_new_double (v) : NULL;
}

static int print_json (const struct acct_query *q, const struct exp_result *r)
{
    json_object *root = json_object_new_object (), *arms, *cmps;

    if (!root)
        return cmd_print_json (REPORT, NULL, stdout);
    cmd_json_add (root,
                  "experiment",
                  json_object_new_string (r->experiment),
                  false);
    cmd_json_add (root,
                  "control",
                  r->control[0] ? json_object_new_string (r->control) : NULL,
                  true);
    cmd_json_add (root, "source", json_object_new_string (q->source), false);
    cmd_json_add (root,
                  "start",
                  q->starttime ? json_object_new_int64 (q->start_us / 1000000)
                               : NULL,
                  true);
    cmd_json_add (root,
                  "end",
                  q->end_us ? json_object_new_int64 (q->end_us / 1000000)
                            : NULL,
                  true);
    cmd_json_add (root,
                  "records",
                  json_object_new_int64 ((int64_t)r->records),
                  false);
    cmd_json_add (root,
                  "jobs",
                  json_object_new_int64 ((int64_t)r->jobs),
                  false);
    cmd_json_add (root,
                  "inconsistent",
                  json_object_new_int64 ((int64_t)r->inconsistent),
                  false);
    cmd_json_add (root,
                  "blocks",
                  json_object_new_int64 ((int64_t)r->blocks),
                  false);
    arms = json_object_new_array ();
    for (size_t i = 0; i < r->narms; i++) {
        const struct exp_arm *a = &r->arms[i];
        json_object *o = json_object_new_object ();
        cmd_json_add (o, "arm", json_object_new_string (a->name), false);
        cmd_json_add (o,
                      "jobs",
                      json_object_new_int64 ((int64_t)a->jobs),
                      false);
        cmd_json_add (o,
                      "steps",
                      json_object_new_int64 ((int64_t)a->steps),
                      false);
        cmd_json_add (o,
                      "opted_out",
                      json_object_new_int64 ((int64_t)a->opted_out),
                      false);
        cmd_json_add (o,
                      "cpu_hours",
                      json_object_new_double (exp_arm_cpu_hours (a)),
                      false);
        cmd_json_add (o, "efficiency", num_or_null (exp_arm_eff (a)), true);
        cmd_json_add (o,
                      "system_share",
                      num_or_null (exp_arm_sys_share (a)),
                      true);
        cmd_json_add (o,
                      "wall_time_per_job",
                      num_or_null (exp_arm_wall_s (a)),
                      true);
        cmd_json_add (o,
                      "cpu_time_per_job",
                      num_or_null (exp_arm_cpu_s (a)),
                      true);
        json_object_array_add (arms, o);
    }
    cmd_json_add (root, "arms", arms, false);
    cmps = json_object_new_array ();
    for (size_t i = 0; i < r->ncmps; i++) {
        const struct exp_comparison *c = &r->cmps[i];
        json_object *o = json_object_new_object (), *diffs;
        cmd_json_add (o, "arm", json_object_new_string (c->arm), false);
        cmd_json_add (o,
                      "control",
                      json_object_new_string (r->control),
                      false);
        cmd_json_add (o,
                      "matched_blocks",
                      json_object_new_int64 ((int64_t)c->matched_blocks),
                      false);
        cmd_json_add (o,
                      "matched_jobs",
                      json_object_new_int64 (
                          (int64_t)(c->arm_jobs + c->control_jobs)),
                      false);
        cmd_json_add (o,
                      "arm_jobs",
                      json_object_new_int64 ((int64_t)c->arm_jobs),
                      false);
        cmd_json_add (o,
                      "control_jobs",
                      json_object_new_int64 ((int64_t)c->control_jobs),
                      false);
        cmd_json_add (o, "enough", json_object_new_boolean (c->enough), false);
        diffs = json_object_new_object ();
        for (int m = 0; m < EXP_NMETRICS; m++) {
            const struct exp_diff *d = &c->diff[m];
            json_object *x = json_object_new_object ();
            cmd_json_add (x, "estimate", real_or_null (d->estimate), true);
            cmd_json_add (x,
                          "low",
                          d->valid ? real_or_null (d->low) : NULL,
                          true);
            cmd_json_add (x,
                          "high",
                          d->valid ? real_or_null (d->high) : NULL,
                          true);
            cmd_json_add (x,
                          "blocks",
                          json_object_new_int64 ((int64_t)d->nblocks),
                          false);
            cmd_json_add (x,
                          "stated",
                          json_object_new_boolean (d->stated),
                          false);
            cmd_json_add (diffs, exp_metric_key (m), x, false);
        }
        cmd_json_add (o, "differences", diffs, false);
        cmd_json_add (o,
                      "verdict",
                      json_object_new_string (c->verdict),
                      false);
        json_object_array_add (cmps, o);
    }
    cmd_json_add (root, "comparisons", cmps, false);
    return cmd_print_json (REPORT, root, stdout);
}

static void pct (double v, char *buf, size_t n)
{
    if (v < 0 || !isfinite (v))
        snprintf (buf, n, "-");
    else
        snprintf (buf, n, "%.2f%%", v * 100);
}

static void secs (double v, char *buf, size_t n)
{
    if (v < 0 || !isfinite (v))
        snprintf (buf, n, "-");
    else
        acct_fmt_secs ((int64_t)(v + 0.5), buf, n);
}

/* a relative difference, ASCII sign, one decimal: "-25.3%", "+1.0%" */
static void rel (double v, char *buf, size_t n)
{
    if (!isfinite (v))
        snprintf (buf, n, "-");
    else
        snprintf (buf, n, "%+.1f%%", v * 100);
}

static void print_text (const struct acct_query *q,
                        const struct exp_result *r,
                        const char *why)
{
    char count[32];

    exp_fmt_count (r->jobs, count, sizeof (count));
    printf ("Experiment %s: %s job%s",
            cmd_text (r->experiment),
            count,
            r->jobs == 1 ? "" : "s");
    if (r->inconsistent)
        printf (", %zu left out (their records disagree)", r->inconsistent);
    printf ("; records from %s%s%s\n",
            q->source,
            q->dir[0] ? " " : "",
            cmd_text (q->dir));
    if (r->control[0])
        printf ("Control arm: %s (%s)\n", cmd_text (r->control), why);
    printf ("\n%-16s %6s %6s %8s %9s %8s %9s %10s %10s\n",
            "Arm",
            "Jobs",
            "Steps",
            "OptedOut",
            "CPUHours",
            "CPUEff",
            "SysShare",
            "WallPerJob",
            "CPUPerJob");
    for (size_t i = 0; i < r->narms; i++) {
        const struct exp_arm *a = &r->arms[i];
        char e[16], s[16], w[32], c[32];
        pct (exp_arm_eff (a), e, sizeof (e));
        pct (exp_arm_sys_share (a), s, sizeof (s));
        secs (exp_arm_wall_s (a), w, sizeof (w));
        secs (exp_arm_cpu_s (a), c, sizeof (c));
        printf ("%-16s %6zu %6zu %8zu %9.2f %8s %9s %10s %10s\n",
                cmd_text (a->name),
                a->jobs,
                a->steps,
                a->opted_out,
                exp_arm_cpu_hours (a),
                e,
                s,
                w,
                c);
    }
    if (r->ncmps == 0) {
        printf ("\nOnly one arm (%s): nothing to compare.\n",
                cmd_text (r->control));
        return;
    }
    for (size_t i = 0; i < r->ncmps; i++) {
        const struct exp_comparison *c = &r->cmps[i];
        printf ("\n%s against %s: %zu matched block%s, %zu + %zu jobs\n",
                cmd_text (c->arm),
                cmd_text (r->control),
                c->matched_blocks,
                c->matched_blocks == 1 ? "" : "s",
                c->arm_jobs,
                c->control_jobs);
        printf ("  %-18s %8s %18s %7s\n",
                "Metric",
                "Change",
                "95% CI",
                "Blocks");
        for (int m = 0; m < EXP_NMETRICS; m++) {
            const struct exp_diff *d = &c->diff[m];
            char est[32], lo[32], hi[32], iv[80];
            rel (d->estimate, est, sizeof (est));
            rel (d->low, lo, sizeof (lo));
            rel (d->high, hi, sizeof (hi));
            if (d->valid)
                snprintf (iv, sizeof (iv), "%s to %s", lo, hi);
            else
                snprintf (iv, sizeof (iv), "-");
            printf ("  %-18s %8s %18s %7zu%s\n",
                    exp_metric_label (m),
                    d->nblocks ? est : "-",
                    iv,
                    d->nblocks,
                    d->stated ? "  *" : "");
        }
    }
    printf (
        "\nVerdict (each arm against %s; * above: the interval "
        "excludes 0):\n",
        cmd_text (r->control));
    for (size_t i = 0; i < r->ncmps; i++)
        printf ("%s\n", cmd_text (r->cmps[i].verdict));
}

static int report (int argc, char **argv)
{
    struct acct_query q = {0};
    struct acct_table t;
    struct exp_opts o = {NULL, 0, 0};
    struct exp_result res = {0};
    struct exp *e = NULL;
    struct cmdopt_parser p;
    const char *arg, *name, *conf = NULL, *why = NULL;
    char confctl[64];
    bool json = false;
    unsigned skipped;
    pin_error_t err = {""};
    int c, rc = 1, arc = -1;

    acct_table_init (&t);
    if (cmdopt_init (&p, &spec, argc, argv) < 0) {
        cmd_error (REPORT, "out of memory");
        return 1;
    }
    while ((c = cmdopt_next (&p, &arg)) > 0) {
        int taken = acct_query_opt (REPORT, &q, c, arg);
        if (taken < 0)
            goto done;
        if (taken)
            continue;
        switch (c) {
            case OPT_JSON:
                json = true;
                break;
            case OPT_CONTROL:
                o.control = arg;
                why = "--control";
                break;
            case OPT_CONF:
                conf = arg;
                break;
        }
    }
    if (c < 0 || cmdopt_one_operand (&p, "experiment NAME") < 0) {
        rc = p.status;
        goto done;
    }
    name = p.operands[0];
    if (!valid_name (name)) {
        cmd_error (REPORT,
                   "\"%s\": not an experiment name (1 to 32 of A-Z a-z 0-9 "
                   "_ . -, starting with a letter or digit)",
                   cmd_text (name));
        rc = 2;
        goto done;
    }
    if (acct_query_window (REPORT, &q, time (NULL)) < 0) {
        rc = 2;
        goto done;
    }
    /* an experiment runs for weeks: without -S, every record (slurmdbd is
     * asked from the epoch on, not the last day) */
    if (!q.starttime)
        q.start_us = 1000000;
    if (!(e = exp_create (name))) {
        cmd_error (REPORT, "out of memory");
        goto done;
    }
    q.tap = on_record;
    q.tap_arg = e;
    q.tap_only = true;
    q.raw = true; /* slurmdbd: the nodes' own times, as in the journal */
    if (acct_query_load (REPORT, &q, &t, &skipped) < 0)
        goto done;
    o.start_us = q.starttime ? q.start_us : 0;
    o.end_us = q.end_us;
    if (!o.control) {
        int found = conf_control (conf ? conf : PIN_CONF_DEFAULT_PATH,
                                  conf != NULL,
                                  name,
                                  confctl,
                                  sizeof (confctl));
        if (found < 0)
            goto done;
        o.control = found ? confctl : NULL;
    }
    if (o.control && o.control == confctl) {
        why = "the first of pin.conf's ExperimentPolicies=";
        arc = exp_analyze (e, &o, &res, &err);
        if (arc < 0 && errno == EINVAL) { /* an arm without jobs */
            o.control = NULL;
            why = NULL;
        }
    }
    if (o.control != confctl || !o.control)
        arc = exp_analyze (e, &o, &res, &err);
    if (arc < 0) {
        if (errno == ENOENT)
            cmd_error (REPORT,
                       "experiment %s: no step records%s%s in %s%s%s",
                       cmd_text (name),
                       getuid () ? " of yours" : "",
                       exp_nrecords (e) ? " in the time window" : "",
                       q.source,
                       q.dir[0] ? " " : "",
                       cmd_text (q.dir));
        else
            cmd_error (REPORT, "%s", err.text);
        goto done;
    }
    if (!why) /* neither --control nor pin.conf: exp.h's rule */
        why = strcmp (res.control, "none") == 0 ? "the arm none"
                                                : "the first arm by name";
    if (q.verbose)
        fprintf (stderr,
                 "slurm-pin %s: control arm %s (%s)\n",
                 REPORT,
                 cmd_text (res.control),
                 why);
    if (json)
        rc = print_json (&q, &res) < 0;
    else {
        print_text (&q, &res, why);
        rc = cmd_flush_stdout (REPORT) < 0;
    }
done:
    cmdopt_fini (&p);
    exp_result_free (&res);
    exp_destroy (e);
    acct_table_free (&t);
    free (q.uids);
    return rc;
}

static void usage (FILE *f)
{
    fprintf (f,
             "Usage: slurm-pin experiment report NAME [OPTIONS]\n"
             "\n"
             "Policy experiments (pin.conf Experiment=, doc/experiments.md).\n"
             "\n"
             "Actions:\n"
             "  report  per arm figures, differences against the control "
             "arm with\n"
             "          95 %% intervals, and a verdict per arm\n"
             "\n"
             "Run 'slurm-pin experiment report --help' for its options.\n");
}

int cmd_experiment (int argc, char **argv)
{
    const char *action = argc > 1 ? argv[1] : NULL;

    if (!action) {
        cmd_error (NAME,
                   "missing action; known: report (see 'slurm-pin "
                   "experiment --help')");
        return 2;
    }
    if (!strcmp (action, "-h") || !strcmp (action, "--help")) {
        usage (stdout);
        return cmd_flush_stdout (NAME) < 0 ? 1 : 0;
    }
    if (!strcmp (action, "report"))
        return report (argc - 1, argv + 1);
    cmd_error (NAME,
               "%s: unknown action; known: report (see 'slurm-pin "
               "experiment --help')",
               cmd_text (action));
    return 2;
}
