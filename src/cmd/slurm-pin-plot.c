/* slurm-pin-plot.c - the program behind `slurm-pin plot`
 *
 *   slurm-pin-plot (FILE | JOB[.STEP]) --kind KIND -o OUT [...]
 *
 * The same arguments as `slurm-pin plot` (plot.c; slurm-pin-plot(1)),
 * in a program of its own so that only it links PLplot (plotexec.c says
 * why).
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <string.h>

#include "subcmd.h"

int main (int argc, char **argv)
{
    if (argc == 2
        && (!strcmp (argv[1], "-V") || !strcmp (argv[1], "--version"))) {
        printf ("slurm-pin-plot %s\n", PACKAGE_VERSION);
        return cmd_flush_stdout (NULL) < 0 ? 1 : 0;
    }
    argv[0] = (char *) "plot";
    return cmd_plot (argc, argv);
}
