/* task.c - pin.so for each task: apply the plan as root
 * (task_post_fork), OMP_* and the verbose line in the task (task_init),
 * its exit (task_exit), and the step's record (step_account, called from
 * slurm_spank_exit).
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "glue.h"
#include "libstep/ompenv.h"
#include "libtopo/topo.h"

/* ---- slurmstepd: each task, as root, before it may exec ---------------- */

/* Returns 0 even when the task could not be placed: a failing
 * task_post_fork makes Slurm abort the launch with a generic message (and
 * srun exit 0).  The task itself reads the outcome from the shared status
 * page in task_init and fails with the reason on its stderr. */
int slurm_spank_task_post_fork (spank_t sp, int ac, char **av)
{
    pin_error_t err = {""};
    int id = -1;
    pid_t pid = 0;

    if (spank_context () != S_CTX_REMOTE || !g.active || !g.ready || g.error[0]
        || !pin_step_has_status (g.st))
        return 0;
    if (spank_get_item (sp, S_TASK_ID, &id) != ESPANK_SUCCESS
        || spank_get_item (sp, S_TASK_PID, &pid) != ESPANK_SUCCESS || id < 0
        || (uint32_t)id >= g.ntasks || pid <= 0) {
        slurm_error ("pin: step %s: task id %d / pid %d out of range",
                     g.stepname,
                     id,
                     (int)pid);
        return 0;
    }
    struct phases ph;
    phase_start (&ph);
    /* the outcome goes to the shared page, which the task reads */
    if (pin_step_apply_task (g.st, id, pid, &err) < 0)
        slurm_error ("pin: step %s task %d: %s", g.stepname, id, err.text);
    pin_step_account_task (g.st, pid);
    if (pin_step_profile_add_task (g.st, pid, &err) < 0)
        slurm_error ("pin: step %s task %d: profile: %s",
                     g.stepname,
                     id,
                     err.text);
    pin_step_add_task (g.st, pid); /* policy dynamic's stderr line */
    if (++g.tasks_forked == g.ntasks)
        watcher_begin (sp);
    phase_mark (&ph, "apply");
    slurm_debug ("pin: step %s task %d: applied in %ld us CPU, %ld us wall",
                 g.stepname,
                 id,
                 phase_total_cpu_us (&ph),
                 phase_total_wall_us (&ph));
    return 0;
}

/* ---- the task itself, as the user, just before exec ------------------- */

/* Write one line to the task's stderr, in one write(2). */
static void task_say (const char *fmt, ...)
    __attribute__ ((format (printf, 1, 2)));
static void task_say (const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    int len;

    va_start (ap, fmt);
    len = vsnprintf (line, sizeof (line) - 1, fmt, ap);
    va_end (ap);
    if (len < 0)
        return;
    if ((size_t)len > sizeof (line) - 2)
        len = (int)sizeof (line) - 2;
    line[len++] = '\n';
    (void)!write (STDERR_FILENO, line, (size_t)len);
}

/* Read a variable of the task's environment; NULL if unset.  Caller
 * frees. */
static char *task_getenv (spank_t sp, const char *name)
{
    for (int size = 256; size <= (1 << 20); size *= 4) {
        char *buf = malloc ((size_t)size);
        spank_err_t rc;
        if (!buf)
            return NULL;
        rc = spank_getenv (sp, name, buf, size);
        if (rc == ESPANK_SUCCESS)
            return buf;
        free (buf);
        if (rc != ESPANK_NOSPACE)
            return NULL;
    }
    return NULL;
}

/* OMP_PLACES or OMP_PROC_BIND: set, keep or unset, see ompenv.h. */
static void task_omp (spank_t sp, const char *name, const char *ours)
{
    char record[64];
    char *current = task_getenv (sp, name);
    char *recorded;

    snprintf (record, sizeof (record), "%s%s", OMPENV_RECORD_PREFIX, name);
    recorded = task_getenv (sp, record);
    switch (ompenv_decide (current, recorded, ours)) {
        case OMPENV_SET:
            spank_setenv (sp, name, ours, 1);
            spank_setenv (sp, record, ours, 1);
            break;
        case OMPENV_UNSET:
            spank_unsetenv (sp, name);
            spank_unsetenv (sp, record);
            break;
        case OMPENV_KEEP:
            if (recorded) /* the user's own value: forget ours */
                spank_unsetenv (sp, record);
            break;
    }
    free (current);
    free (recorded);
}

int slurm_spank_task_init (spank_t sp, int ac, char **av)
{
    const struct place_task *t;
    char node[ACCT_STR] = "?";
    char *places = NULL;
    int id = -1;

    if (spank_context () != S_CTX_REMOTE)
        return 0;
    if (spank_get_item (sp, S_TASK_ID, &id) != ESPANK_SUCCESS || id < 0)
        return 0;
    { /* the binding Slurm gave this task, for an srun it may run
       * (check_cpu_bind: an inherited binding is not the user's) */
        char *cb = task_getenv (sp, "SLURM_CPU_BIND");
        if (cb)
            spank_setenv (sp, PINOPT_TASK_CPU_BIND, cb, 1);
        else
            spank_unsetenv (sp, PINOPT_TASK_CPU_BIND);
        free (cb);
    }
    if (g.ident.node[0]) /* slurmd's, found in init_post_opt */
        copy_text (node, sizeof (node), g.ident.node);
    else
        (void)gethostname (node, sizeof (node) - 1);
    if (!g.conf_ok) {
        /* Required: this fails the task.  Optional: Slurm ignores the
         * return code and the task runs unpinned. */
        if (id == 0)
            task_say (
                "pin: step %s on %s: slurm-pin disabled: bad "
                "configuration: %s",
                g.stepname,
                node,
                g.conf_error);
        return -1;
    }
    if (!g.active)
        return 0;
    if (g.error[0]) {
        if (id == 0)
            task_say ("pin: error: step %s on %s: %s",
                      g.stepname,
                      node,
                      g.error);
        return -1;
    }
    if (!g.ready)
        return 0;
    if (id == 0 && g.prof_note[0])
        task_say ("pin: warning: step %s on %s: not profiled: %s",
                  g.stepname,
                  node,
                  g.prof_note);
    if (id == 0 && g.bind_note[0])
        task_say ("pin: step %s on %s: %s", g.stepname, node, g.bind_note);
    if (pin_step_has_status (g.st) && (uint32_t)id < g.ntasks) {
        const char *msg;
        enum pin_step_task_state state = pin_step_task_status (g.st, id, &msg);
        if (state != PIN_STEP_TASK_APPLIED) {
            task_say ("pin: error: task %d of step %s on %s: %s",
                      id,
                      g.stepname,
                      node,
                      state == PIN_STEP_TASK_FAILED ? msg
                                                    : "was not placed (see "
                                                      "the slurmd log)");
            return -1;
        }
    }

    t = pin_step_task (g.st, id);
    if (t && !(places = ompenv_places (t->cpus)))
        slurm_error ("pin: step %s task %d: cannot format OMP_PLACES",
                     g.stepname,
                     id);
    task_omp (sp, "OMP_PLACES", places);
    task_omp (sp,
              "OMP_PROC_BIND",
              places ? ompenv_proc_bind (g.policy) : NULL);
    free (places);

    if (g.verbose && id == 0 && pin_step_devices_note (g.st)[0])
        task_say ("pin: step %s on %s: %s",
                  g.stepname,
                  node,
                  pin_step_devices_note (g.st));
    if (g.verbose) {
        hwloc_const_bitmap_t cpus = t ? t->cpus : pin_step_allowed (g.st);
        hwloc_const_bitmap_t mems = t ? t->mems : pin_step_nodeset (g.st);
        char *c = cpus ? topo_list_format (cpus) : NULL;
        char *m = mems ? topo_list_format (mems) : NULL;
        char fb[128] = "", seed[48] = "";
        if (t && t->fallback) {
            char names[96];
            snprintf (fb,
                      sizeof (fb),
                      " fallback=%s",
                      place_fallback_string (t->fallback,
                                             names,
                                             sizeof (names)));
        }
        if (g.policy == PLACE_RANDOM)
            snprintf (seed,
                      sizeof (seed),
                      " seed=%llu",
                      (unsigned long long)g.seed);
        char dv[320];
        pin_step_task_devices (g.st, id, dv, sizeof (dv));
        task_say ("pin: task %d on %s: policy=%s cpus=%s mems=%s%s%s%s",
                  id,
                  node,
                  policy_name (g.policy),
                  c ? c : "?",
                  m ? m : "?",
                  dv,
                  fb,
                  seed);
        if (id == 0 && pin_step_warning (g.st)[0] && g.policy != PLACE_NONE)
            task_say ("pin: warning: %s: %s", node, pin_step_warning (g.st));
        free (c);
        free (m);
    }
    return 0;
}

/* ---- the end of tasks and of the step ---------------------------------- */

/* Append the step's record (libacct, through libstep) with what the
 * plugin knows from Slurm. */
void step_account (spank_t sp)
{
    struct pin_step_account_in in = {
        .ident = &g.ident,
        .policy = g.active ? policy_name (g.policy) : "none",
        .has_seed = g.active && g.policy == PLACE_RANDOM,
        .seed = g.seed,
    };
    struct phases ph;

    if (!g.conf.accounting)
        return;
    job_info ("the step's record has no partition, job name or array ids");
    /* numbered steps: what they asked on this node; batch, interactive
     * and extern: the job's CPUs on this node (S_JOB_NCPUS) */
    if (g.active && !g.batch)
        in.alloc_cpus = g.ntasks * g.cpus_per_task;
    else {
        uint16_t n = 0;
        if (spank_get_item (sp, S_JOB_NCPUS, &n) == ESPANK_SUCCESS)
            in.alloc_cpus = n;
    }
    phase_start (&ph);
    pin_step_account (g.st, &in);
    phase_mark (&ph, "accounting");
    slurm_debug ("pin: step %s: accounting took %ld us CPU, %ld us wall",
                 g.stepname,
                 phase_total_cpu_us (&ph),
                 phase_total_wall_us (&ph));
}

/* When the last local task has exited, its PUs are free: drop the claim
 * before slurmstepd tells srun (spank_fini runs only after that). */
int slurm_spank_task_exit (spank_t sp, int ac, char **av)
{
    pin_error_t err = {""};

    if (spank_context () != S_CTX_REMOTE || !g.active)
        return 0;
    int status = 0;
    bool got =
        spank_get_item (sp, S_TASK_EXIT_STATUS, &status) == ESPANK_SUCCESS;
    if (got && (g.tasks_exited == 0 || status != 0) && g.exit_status == 0)
        g.exit_status = status;
    ++g.tasks_exited;
    pin_step_account_task_exit (g.st,
                                got ? status : 0,
                                g.tasks_exited >= g.ntasks);
    if (g.tasks_exited < g.ntasks)
        return 0;
    /* joins the watcher: the claim is ours again */
    pin_step_watch_stop (g.st, g.exit_status);
    if (pin_step_release (g.st, &err) < 0)
        slurm_error ("pin: step %s: cannot remove the claim: %s",
                     g.stepname,
                     err.text);
    return 0;
}
