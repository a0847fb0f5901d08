/* slurm-pin.c - the slurm-pin command: global options and dispatch
 *
 * Each subcommand lives in its own file (plan.c, ...) and has one entry
 * in the table below.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "subcmd.h"

static const struct subcmd subcmds[] = {
    {"plan",
     "show the CPUs each task of a step would get (dry run)",
     cmd_plan},
    {"check",
     "tell whether pin.so can run on this node, in which mode",
     cmd_check},
    {"acct", "list accounting records as sacct does", cmd_acct},
    {"eff",
     "summarise a job's CPU efficiency, step by step (seff-like)",
     cmd_eff},
    {"report", "compare efficiency by policy, user or partition", cmd_report},
    {"profile",
     "record a command's processes and summarise a profile",
     cmd_profile},
    {"plot",
     "draw a recorded profile as a PNG or SVG chart (slurm-pin-plot)",
     cmd_plot_exec},
    {"deliver",
     "send this node's records of ended jobs to slurmdbd (AdminComment)",
     cmd_deliver},
    {"experiment",
     "report a policy experiment: each arm against the control, a verdict",
     cmd_experiment},
    {NULL, NULL, NULL},
};

static void usage (FILE *f)
{
    fprintf (f,
             "Usage: slurm-pin COMMAND [OPTIONS]\n"
             "       slurm-pin --help | --version\n"
             "\n"
             "CPU placement by policy for Slurm job steps.\n"
             "\n"
             "Commands:\n");
    for (const struct subcmd *c = subcmds; c->name; c++)
        fprintf (f, "  %-10s %s\n", c->name, c->summary);
    fprintf (f,
             "\n"
             "Options:\n"
             "  -h, --help     show this help and exit\n"
             "  -V, --version  show the version and exit\n"
             "\n"
             "Run 'slurm-pin COMMAND --help' for the options of a command;\n"
             "see slurm-pin(1).\n");
}

/* "plan, acct, eff" */
static void known_commands (char *buf, size_t n)
{
    size_t len = 0;

    buf[0] = '\0';
    for (const struct subcmd *c = subcmds; c->name && len < n; c++) {
        int rc = snprintf (buf + len,
                           n - len,
                           "%s%s",
                           c == subcmds ? "" : ", ",
                           c->name);
        if (rc < 0)
            break;
        len += rc;
    }
}

int main (int argc, char **argv)
{
    char known[256];
    const char *arg = argc > 1 ? argv[1] : NULL;

    known_commands (known, sizeof (known));
    if (!arg) {
        cmd_error (NULL,
                   "missing command; known: %s "
                   "(see 'slurm-pin --help')",
                   known);
        return 1;
    }
    if (!strcmp (arg, "-h") || !strcmp (arg, "--help")) {
        usage (stdout);
        return cmd_flush_stdout (NULL) < 0 ? 1 : 0;
    }
    if (!strcmp (arg, "-V") || !strcmp (arg, "--version")) {
        printf ("slurm-pin %s\n", PACKAGE_VERSION);
        return cmd_flush_stdout (NULL) < 0 ? 1 : 0;
    }
    if (arg[0] == '-') {
        cmd_error (NULL,
                   "%s: unknown option; known: --help, --version "
                   "(options of a command go after it)",
                   arg);
        return 1;
    }
    for (const struct subcmd *c = subcmds; c->name; c++) {
        if (!strcmp (arg, c->name))
            return c->fn (argc - 1, argv + 1);
    }
    cmd_error (NULL, "%s: unknown command; known: %s", arg, known);
    return 1;
}
