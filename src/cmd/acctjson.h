/* acctjson.h - slurm-pin acct --json in the installed sacct's shape
 *
 * sacct --json's shape is that of the Slurm release's serializer: 22.05
 * the openapi plugin dbv0.0.38, 23.02 on the data_parser plugin named by
 * --json=VERSION, by default the newest installed.  The shape slurm-pin
 * prints is chosen the same way: asked of the installed Slurm (the
 * plugins in its PluginDir), never of its version number.
 * doc/accounting-reports.md lists the shapes and the intended
 * differences. */
#ifndef PIN_ACCTJSON_H
#define PIN_ACCTJSON_H

#include <stdbool.h>

#include "acctsrc.h"
#include "libacct/sacct.h"

/* The shape to print: `want` is --json's argument (NULL: the installed
 * sacct's default; "list": print the shapes and return 0 with *ver 0).
 * *ver: 38 for dbv0.0.38, else the data_parser v0.0.N's N.  -1 with a
 * message for `subcmd` on a version neither installed nor known. */
int acct_json_shape (const char *subcmd, const char *want, int *ver);

/* Print the jobs of `t` that `q` selects in shape `ver`, slurm-pin's own
 * numbers under "slurm_pin"; -1 after a message when it cannot. */
int acct_json_print (const char *subcmd,
                     int ver,
                     const struct acct_query *q,
                     const struct acct_table *t,
                     bool allocations,
                     unsigned skipped,
                     int argc,
                     char **argv);

#endif
