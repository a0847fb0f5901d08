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
#include <grp.h>
#include <math.h>
#include <pwd.h>
#include <slurm/slurm.h>
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

/* Does the job have steps of its own (srun) beside the batch script? */
static bool has_numbered_steps (const struct acct_job *j)
{
    for (size_t k = 0; k < j->nsteps; k++)
        if (j->steps[k].step_id < ACCT_STEP_INTERACTIVE)
            return true;
    return false;
}

static int hints (const struct acct_job *j,
                  const struct acct_row *s,
                  const char *id,
                  bool header)
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

    /* not the extern step (nothing of the user's runs there), nor a
     * batch script that starts steps: it waits for them on the CPUs they
     * use, its own efficiency is low whatever the user does */
    if (eff >= 0 && eff < EFF_POOR && s->step_id != ACCT_STEP_EXTERN
        && !(s->step_id == ACCT_STEP_BATCH && has_numbered_steps (j))
        /* one CPU cannot be fewer; under a second says nothing */
        && s->alloc_cpus > 1 && s->end_us - s->start_us >= 1000000)
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

/* seff's own lines, in the form of the seff of the Slurm release built
 * against (contribs/seff/seff; no API tells them apart, so the release
 * number does): up to 22.05 memory is MaxRSS x NTasks of the step with
 * the largest MaxRSS, of ReqMem; 23.02 takes AllocTRES's memory; from
 * 24.05.5 memory is TRESUsageInTot's of the step with the largest, with
 * "(per node)" always and a line when one task's peak stood out. */
#define SEFF_ALLOC_MEM (SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM (23, 2, 0))
#define SEFF_TOT_MEM (SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM (24, 5, 5))

/* seff's time2str: [D-]HH:MM:SS */
static void seff_time (int64_t t, char *buf, size_t n)
{
    acct_fmt_secs (t < 0 ? 0 : t, buf, n);
}

/* seff's kbytes2str: "0.00 MB", "812.00 KB", "1.50 GB" */
static void seff_kb (double kb, char *buf, size_t n)
{
    static const char *const pre[] = {"K", "M", "G", "T", "P", "E"};
    int e;

    if (kb == 0) {
        snprintf (buf, n, "0.00 MB");
        return;
    }
    e = (int)(log (kb) / log (1024.0));
    snprintf (buf,
              n,
              "%.2f %sB",
              kb / pow (1024.0, e),
              e >= 0 && e < 6 ? pre[e] : "");
}

static void seff_head (const struct acct_job *j)
{
    const struct acct_row *r = &j->job;
    const struct acct_dbd *d = r->dbd.valid ? &r->dbd : NULL;
    char state[32], buf[64], buf2[64];
    struct group *gr;
    uint32_t ncpus = r->alloc_cpus ? r->alloc_cpus : 1;
    uint32_t nnodes = d && d->nnodes ? d->nnodes : r->nnodes ? r->nnodes : 1;
    uint32_t status = r->exit_status < 0 ? 0 : (uint32_t)r->exit_status;
    uint64_t cput = (r->user_usec + r->system_usec + 500000) / 1000000;
    int64_t wall = acct_row_elapsed_s (r);
    double mem = 0, reqmem, eff, maxmem = 0, avemem = 0;
    uint32_t ntasks = d ? 0 : 1;
    bool pernode = !(d && d->mem_per_cpu);

    /* seff's State is the base state ("CANCELLED", not "CANCELLED by 0") */
    snprintf (state, sizeof (state), "%s", orval (r->state, "UNKNOWN"));
    state[strcspn (state, " ")] = '\0';
    printf ("Job ID: %u\n", r->job_id);
    if (r->array_job_id != ACCT_NO_VAL && r->array_job_id)
        printf ("Array Job ID: %u_%d\n",
                r->array_job_id,
                (int32_t)r->array_task_id);
    printf ("Cluster: %s\n", cmd_text (r->cluster));
    if (d && (gr = getgrgid (d->gid)))
        snprintf (buf, sizeof (buf), "%s", gr->gr_name);
    else if (d)
        snprintf (buf, sizeof (buf), "%u", d->gid);
    else { /* the journal has no group: the user's own */
        struct passwd *pw = getpwuid (r->uid);
        if (pw && (gr = getgrgid (pw->pw_gid)))
            snprintf (buf, sizeof (buf), "%s", gr->gr_name);
        else
            snprintf (buf, sizeof (buf), "?");
    }
    printf ("User/Group: %s/%s\n",
            cmd_text (orval (r->user, "?")),
            cmd_text (buf));
    if (!strcmp (state, "PENDING") || !strcmp (state, "RUNNING"))
        printf ("State: %s\n", state);
    else
        printf ("State: %s (exit code %u)\n", state, status >> 8);
    if (ncpus == 1)
        printf ("Cores: %u\n", ncpus);
    else {
        printf ("Nodes: %u\n", nnodes);
        printf ("Cores per node: %u\n", ncpus / nnodes);
    }
    if (!strcmp (state, "PENDING")) {
        printf ("Efficiency not available for jobs in the PENDING state.\n");
        return;
    }
    eff =
        wall * ncpus != 0 ? (double)cput / (double)(wall * ncpus) * 100 : 0.0;
    seff_time ((int64_t)cput, buf, sizeof (buf));
    printf ("CPU Utilized: %s\n", buf);
    seff_time (wall * ncpus, buf, sizeof (buf));
    printf ("CPU Efficiency: %.2f%% of %s core-walltime\n", eff, buf);
    seff_time (wall, buf, sizeof (buf));
    printf ("Job Wall-clock time: %s\n", buf);
    /* memory: slurmdbd's (seff's numbers), else the cgroup's peak */
    if (d) {
        ntasks = d->rss_ntasks;
        if (SEFF_TOT_MEM) {
            mem = (double)d->rss_tot / 1024;
            maxmem = (double)d->rss_tot_max;
            avemem = (double)d->rss_tot_ave;
        } else
            mem = (double)d->rss_max / 1024 * d->rss_ntasks;
        if (SEFF_ALLOC_MEM)
            reqmem = (double)d->alloc_tres_mem * 1024;
        else
            reqmem = (double)d->req_mem * 1024 * (pernode ? nnodes : ncpus);
    } else {
        /* the job's memory.peak, else its largest step's */
        uint64_t peak = r->has_mem_peak ? r->mem_peak : 0;
        for (size_t k = 0; !r->has_mem_peak && k < j->nsteps; k++)
            if (j->steps[k].has_mem_peak && j->steps[k].mem_peak > peak)
                peak = j->steps[k].mem_peak;
        mem = (double)peak / 1024;
        reqmem = 0; /* the journal holds no request */
    }
    seff_kb (mem, buf, sizeof (buf));
    printf ("Memory Utilized: %s%s\n",
            buf,
            SEFF_TOT_MEM || ntasks == 1 ? "" : " (estimated maximum)");
    eff = reqmem != 0 ? mem / reqmem * 100 : 0.0;
    seff_kb (reqmem, buf, sizeof (buf));
    if (!SEFF_TOT_MEM && ntasks == 1)
        printf ("Memory Efficiency: %.2f%% of %s\n", eff, buf);
    else {
        seff_kb (reqmem / (pernode ? nnodes : ncpus), buf2, sizeof (buf2));
        printf ("Memory Efficiency: %.2f%% of %s (%s/%s)\n",
                eff,
                buf,
                buf2,
                pernode ? "node" : "core");
    }
    if (SEFF_TOT_MEM && maxmem != 0 && maxmem > avemem)
        printf (
            "The task which had the largest memory consumption differs "
            "by %.02f%% from the average task max memory consumption\n",
            maxmem / avemem * 100);
    if (!strcmp (state, "RUNNING"))
        printf (SEFF_TOT_MEM ? "WARNING: Efficiency statistics can only be "
                               "obtained "
                               "after the job has ended as seff tool is based "
                               "on the "
                               "accounting database data.\n"
                             : "WARNING: Efficiency statistics may be "
                               "misleading for "
                               "RUNNING jobs.\n");
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
    char buf[256];

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
    q.progress = true;
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

        if (i)
            printf ("\n");
        seff_head (j);
        printf ("\n");
        acct_row_field (r, ACCT_F_JOBNAME, buf, sizeof (buf));
        printf ("Job name: %s\n", buf);
        printf ("Node list: %s\n",
                cmd_text (orval (r->nodelist ? r->nodelist : r->nodes, "?")));
        printf ("Pin policy: %s\n", cmd_text (orval (r->policy, "none")));
        /* enrolled in a policy experiment (doc/experiments.md): the arm
         * is the job's default policy, a step's own --pin-policy wins */
        if (r->experiment && r->experiment[0])
            printf ("Experiment: %s, arm %s (opt out with --pin-policy)\n",
                    cmd_text (r->experiment),
                    cmd_text (orval (r->arm, "?")));
        if (r->has_mem_peak) {
            acct_fmt_bytes (r->mem_peak, buf, sizeof (buf));
            printf ("Memory peak (cgroup): %s\n", buf);
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
            nhints += hints (j, &j->steps[k], id, nhints == 0);
        }
    }
    rc = cmd_flush_stdout (NAME) < 0;
done:
    cmdopt_fini (&p);
    acct_table_free (&t);
    free (q.sel);
    return rc;
}
