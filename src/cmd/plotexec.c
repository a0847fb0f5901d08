/* plotexec.c - `slurm-pin plot` runs the separate slurm-pin-plot program
 *
 * Drawing needs PLplot, and PLplot's drivers pull cairo, Qt or GTK; the
 * command every compute node needs (the job epilog runs `slurm-pin
 * deliver`) must not.  So `slurm-pin plot` lives in its own program,
 * slurm-pin-plot (its own package on Debian and RPM systems: login
 * nodes), installed beside slurm-pin, and `slurm-pin plot ARGS` executes
 * it with ARGS.
 *
 * "Beside" is the directory of the running executable as the kernel
 * names it (/proc/self/exe): never PATH, never a variable the user can
 * set, so root running `slurm-pin plot` runs root's own slurm-pin-plot.
 * In the build tree both programs are in src/cmd/, installed both are in
 * BINDIR.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "subcmd.h"

#define PLOT_PROG "slurm-pin-plot"

int cmd_plot_exec (int argc, char **argv)
{
    char self[PATH_MAX], prog[PATH_MAX + sizeof (PLOT_PROG) + 1];
    char *slash;
    ssize_t n = readlink ("/proc/self/exe", self, sizeof (self) - 1);
    char **args;

    if (n <= 0 || (size_t) n >= sizeof (self) - 1) {
        cmd_error ("plot",
                   "cannot find this program's directory "
                   "(/proc/self/exe: %s); run %s directly",
                   n < 0 ? strerror (errno) : "too long",
                   PLOT_PROG);
        return 1;
    }
    self[n] = '\0';
    slash = strrchr (self, '/');
    if (!slash) {
        cmd_error ("plot", "/proc/self/exe: '%s': not a path", cmd_text (self));
        return 1;
    }
    *slash = '\0';
    snprintf (prog, sizeof (prog), "%s/%s", self, PLOT_PROG);

    /* argv[0] is "plot": slurm-pin-plot takes the same arguments. */
    args = calloc ((size_t) argc + 1, sizeof (*args));
    if (!args) {
        cmd_error ("plot", "out of memory");
        return 1;
    }
    args[0] = (char *) PLOT_PROG;
    for (int i = 1; i < argc; i++)
        args[i] = argv[i];
    execv (prog, args);
    if (errno == ENOENT)
        cmd_error ("plot",
                   "%s is not installed on this node: install the package "
                   "slurm-pin-plot (login nodes; it brings PLplot), "
                   "see slurm-pin-plot(1)",
                   cmd_text (prog));
    else
        cmd_error ("plot", "cannot run %s: %s", cmd_text (prog), strerror (errno));
    free (args);
    return 1;
}
