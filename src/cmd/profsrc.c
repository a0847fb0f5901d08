/* profsrc.c - the profiles a command-line argument names (profsrc.h) */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libconf/conf.h"
#include "profsrc.h"
#include "subcmd.h"

static int one_file (const char *subcmd,
                     const char *arg,
                     struct profdir_entry **v,
                     size_t *n)
{
    struct profdir_entry *e = calloc (1, sizeof (*e));

    if (!e || !(e->path = strdup (arg))) {
        free (e);
        cmd_error (subcmd, "out of memory");
        return -1;
    }
    *v = e;
    *n = 1;
    return 0;
}

int profsrc_resolve (const char *subcmd,
                     const char *arg,
                     const char *dir,
                     struct profdir_entry **v,
                     size_t *n,
                     bool *is_job)
{
    struct pin_conf conf;
    pin_error_t e = {""};
    uint32_t job;
    char step[16];
    struct stat st;
    size_t denied = 0;

    *v = NULL;
    *n = 0;
    *is_job = false;
    /* a file that exists is a file, whatever its name; so is anything
     * that is not JOB[.STEP] (reading it says what is wrong) */
    if (strchr (arg, '/') || stat (arg, &st) == 0
        || profdir_spec_parse (arg, &job, step, sizeof (step), &e) < 0)
        return one_file (subcmd, arg, v, n);
    *is_job = true;
    if (!dir) {
        pin_conf_defaults (&conf);
        if (pin_conf_load_file (&conf, PIN_CONF_DEFAULT_PATH, false, &e) < 0) {
            cmd_error (subcmd, "%s (or give --dir=DIR)", e.text);
            return -1;
        }
        dir = conf.profile_dir;
    }
    if (profdir_find (dir, arg, v, n, &e) < 0) {
        cmd_error (subcmd,
                   "%s (profiles are kept on each node in pin.conf's "
                   "ProfileDir; give --dir=DIR)",
                   e.text);
        return -1;
    }
    if (*n == 0) {
        cmd_error (subcmd,
                   "no profile of %s %s in %s (a step is profiled "
                   "with --pin-profile or pin.conf's Profile=; profiles "
                   "are kept on the node that ran it)",
                   step[0] ? "step" : "job",
                   arg,
                   dir);
        return -1;
    }
    for (size_t i = 0; i < *n; i++)
        if (access ((*v)[i].path, R_OK) < 0 && errno == EACCES)
            denied++;
    if (denied) {
        cmd_error (subcmd,
                   "%s: permission denied: a profile is readable by "
                   "the job's owner (and root) only",
                   denied == *n ? (*v)[0].path : "some profiles of this job");
        profdir_free (*v, *n);
        *v = NULL;
        *n = 0;
        return -1;
    }
    return 0;
}
