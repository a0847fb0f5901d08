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

/* The jobs are printed as they are read, one job at a time, so that
 * memory does not grow with the journal: acct_json_init(), then
 * acct_json_jobs() as acct_query's each() (with its acct_json as the
 * argument), then acct_json_print() for the rest of the document, in
 * shape `ver`, slurm-pin's own numbers under "slurm_pin".  Nothing is
 * printed before the first job; -1 (or non-zero from acct_json_jobs)
 * after a message when it cannot. */
struct acct_json {
    const char *subcmd;
    int ver;
    const struct acct_query *q;
    bool allocations;
    bool failed;
    size_t njobs;      /* printed so far */
    char cluster[256]; /* the first job's: meta's slurm.cluster */
};
void acct_json_init (struct acct_json *js,
                     const char *subcmd,
                     int ver,
                     const struct acct_query *q,
                     bool allocations);
int acct_json_jobs (struct acct_table *t, void *arg);
int acct_json_print (const struct acct_json *js,
                     unsigned skipped,
                     int argc,
                     char **argv);

#endif
