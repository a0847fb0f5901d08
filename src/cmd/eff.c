/* eff.c - slurm-pin eff JOBID: a seff-like efficiency summary
 *
 * seff (Slurm's contribs/seff) prints a job's CPU and memory efficiency
 * from sacct's numbers; this prints the same head for slurm-pin's
 * records, then one line per step with its placement (policy, CPUs,
 * mems), user and system time and efficiency, then hints in plain words
 * when a step's efficiency is poor or above its allocation, a placement
 * fell back, or the cgroup's CPU quota throttled it.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acctsrc.h"
#include "libacct/sacct.h"
#include "subcmd.h"

#define NAME "eff"

/* Below this a step wastes most of its CPUs; above the second it used
 * more CPU time than it was given (not confined). */
#define EFF_POOR 0.50
#define EFF_OVER 1.05

static const struct cmdopt_spec spec = {
    .name = NAME,
    .usage =
        "Usage: slurm-pin eff [--journal=DIR] [-v] JOBID\n"
        "\n"
        "Summarise a job's CPU efficiency as seff does, with each step's "
        "placement\n"
        "(policy, CPUs, memory nodes), user and system time, efficiency, and "
        "hints\n"
        "when a step used its CPUs poorly, fell back, or was throttled.  "
        "JOBID may\n"
        "be 123 or 123_4 (array task).\n",
    .usage_status = 2,
    .tables = {acct_opts_source, NULL},
};

static const char *orval (const char *s, const char *dflt)
{
    return s && s[0] ? s : dflt;
}

static int hints (const struct acct_row *s, const char *id, bool header)
{
    double eff = acct_row_eff (s);
    char buf[64];
    int n = 0;

#define HINT(...)                                  \
    do {                                           \
        if (header && n == 0 && !(header = false)) \
            printf ("\nHints:\n");                 \
        printf ("  - step %s: ", id);              \
        printf (__VA_ARGS__);                      \
        printf ("\n");                             \
        n++;                                       \
    } while (0)

    if (eff >= 0 && eff < EFF_POOR && s->step_id != ACCT_STEP_EXTERN)
        HINT (
            "CPU efficiency %.2f%% is low: it kept about %.1f of its %u "
            "CPUs busy. Ask for fewer CPUs, or check that the program "
            "runs its threads or processes in parallel.",
            eff * 100,
            eff * s->alloc_cpus,
            s->alloc_cpus);
    if (eff > EFF_OVER)
        HINT (
            "CPU efficiency %.2f%% is above 100%%: it used more CPU time "
            "than its %u CPUs give, so it ran outside its allocation "
            "(policy %s does not confine it). A confining policy keeps "
            "it on its own CPUs.",
            eff * 100,
            s->alloc_cpus,
            orval (s->policy, "none"));
    if (s->fallback && s->fallback[0])
        HINT (
            "placement fell back (%s): it did not get the CPUs policy %s "
            "asked for; see the node's log for why.",
            s->fallback,
            orval (s->policy, "none"));
    if (s->confined_us > 0 && s->confined_us >= s->start_us) {
        acct_fmt_secs ((s->confined_us - s->start_us) / 1000000,
                       buf,
                       sizeof (buf));
        HINT (
            "policy dynamic confined it %s after its start, when it used "
            "%.2f CPUs of its %u: from then on it ran on CPUs %s only. "
            "Ask for as many CPUs as it uses, or cap its threads.",
            buf,
            s->confine_use,
            s->alloc_cpus,
            orval (s->confine_cpus, "?"));
    }
    if (s->has_throttle && s->nr_throttled > 0) {
        acct_fmt_cputime (s->throttled_usec, buf, sizeof (buf));
        HINT (
            "throttled for %s in %llu of %llu periods: the cgroup's CPU "
            "quota (cpu.max) held it back; more CPUs or a higher quota "
            "would let it run.",
            buf,
            (unsigned long long)s->nr_throttled,
            (unsigned long long)s->nr_periods);
    }
    return n;
#undef HINT
}

int cmd_eff (int argc, char **argv)
{
    struct acct_query q = {0};
    struct acct_table t;
    unsigned skipped;
    pin_error_t e = {""};
    struct cmdopt_parser p;
    const char *arg, *jobid;
    int c, rc = 1, nhints = 0;
    char buf[256], buf2[64];

    acct_table_init (&t);
    if (cmdopt_init (&p, &spec, argc, argv) < 0) {
        cmd_error (NAME, "out of memory");
        return 1;
    }
    while ((c = cmdopt_next (&p, &arg)) > 0)
        acct_query_opt (NAME, &q, c, arg); /* --journal, -v: no error */
    if (c < 0 || cmdopt_one_operand (&p, "JOBID") < 0) {
        rc = p.status;
        goto done;
    }
    jobid = p.operands[0];
    if (acct_jobsel_parse (jobid, &q.sel, &q.nsel, &e) < 0 || q.nsel != 1
        || q.sel[0].has_step) {
        cmd_error (NAME,
                   "%s",
                   e.text[0] ? e.text
                             : "give a job (123 or 123_4), not a step");
        rc = 2;
        goto done;
    }
    if (acct_query_load (NAME, &q, &t, &skipped) < 0)
        goto done;
    if (t.njobs == 0) {
        cmd_error (NAME,
                   "job %s: no record%s in %s",
                   jobid,
                   getuid () ? " of yours" : "",
                   q.dir[0] ? q.dir : q.source);
        goto done;
    }
    for (size_t i = 0; i < t.njobs; i++) {
        const struct acct_job *j = &t.jobs[i];
        const struct acct_row *r = &j->job;
        double eff = acct_row_eff (r);
        int64_t el = acct_row_elapsed_s (r);

        if (i)
            printf ("\n");
        acct_row_jobid (r, false, buf, sizeof (buf));
        printf ("Job ID: %s\n", buf);
        if (r->cluster[0])
            printf ("Cluster: %s\n", cmd_text (r->cluster));
        printf ("User: %s (uid %u)\n",
                cmd_text (orval (r->user, "?")),
                r->uid);
        acct_row_field (r, ACCT_F_JOBNAME, buf, sizeof (buf));
        printf ("Job name: %s\n", buf);
        if (r->exit_status < 0)
            printf ("State: %s\n", cmd_text (orval (r->state, "UNKNOWN")));
        else if (WIFSIGNALED (r->exit_status))
            printf ("State: %s (signal %d)\n",
                    cmd_text (orval (r->state, "UNKNOWN")),
                    WTERMSIG (r->exit_status));
        else
            printf ("State: %s (exit code %d)\n",
                    cmd_text (orval (r->state, "UNKNOWN")),
                    WEXITSTATUS (r->exit_status));
        printf ("Nodes: %u (%s)\n",
                r->nnodes,
                cmd_text (orval (r->nodelist ? r->nodelist : r->nodes, "?")));
        printf ("CPUs: %u\n", r->alloc_cpus);
        printf ("Pin policy: %s\n", cmd_text (orval (r->policy, "none")));
        /* enrolled in a policy experiment (doc/experiments.md): the arm
         * is the job's default policy, a step's own --pin-policy wins */
        if (r->experiment && r->experiment[0])
            printf ("Experiment: %s, arm %s (opt out with --pin-policy)\n",
                    cmd_text (r->experiment),
                    cmd_text (orval (r->arm, "?")));
        acct_fmt_secs ((int64_t)((r->user_usec + r->system_usec) / 1000000),
                       buf,
                       sizeof (buf));
        printf ("CPU Utilized: %s\n", buf);
        acct_fmt_secs (el * (int64_t)r->alloc_cpus, buf, sizeof (buf));
        acct_fmt_eff (eff, buf2, sizeof (buf2));
        printf ("CPU Efficiency: %s of %s core-walltime\n",
                orval (buf2, "unknown"),
                buf);
        acct_fmt_secs (el, buf, sizeof (buf));
        printf ("Job Wall-clock time: %s\n", buf);
        if (r->has_mem_peak) {
            acct_fmt_bytes (r->mem_peak, buf, sizeof (buf));
            printf ("Memory peak: %s\n", buf);
        }
        if (r->from_steps)
            printf ("(no job record: the job line is the sum of its steps)\n");
        printf ("\n%-14s %-12s %5s %-15s %-6s %10s %10s %8s\n",
                "Step",
                "Policy",
                "CPUs",
                "Cpuset",
                "Mems",
                "UserCPU",
                "SystemCPU",
                "CPUEff");
        for (size_t k = 0; k < j->nsteps; k++) {
            const struct acct_row *s = &j->steps[k];
            char id[64], u[32], sy[32], ef[32];
            acct_row_jobid (s, false, id, sizeof (id));
            acct_fmt_cputime (s->user_usec, u, sizeof (u));
            acct_fmt_cputime (s->system_usec, sy, sizeof (sy));
            acct_fmt_eff (acct_row_eff (s), ef, sizeof (ef));
            printf ("%-14s %-12s %5u %-15s %-6s %10s %10s %8s\n",
                    id,
                    cmd_text (orval (s->policy, "none")),
                    s->alloc_cpus,
                    cmd_text (orval (acct_row_cpus (s), "-")),
                    cmd_text (orval (acct_row_mems (s), "-")),
                    u,
                    sy,
                    orval (ef, "-"));
        }
        for (size_t k = 0; k < j->nsteps; k++) {
            char id[64];
            acct_row_jobid (&j->steps[k], false, id, sizeof (id));
            nhints += hints (&j->steps[k], id, nhints == 0);
        }
    }
    rc = cmd_flush_stdout (NAME) < 0;
done:
    cmdopt_fini (&p);
    acct_table_free (&t);
    free (q.sel);
    return rc;
}
