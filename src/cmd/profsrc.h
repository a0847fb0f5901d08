/* profsrc.h - the profiles a `slurm-pin profile` or `plot` argument names
 *
 * The argument is a profile FILE (any path that exists), or JOB[.STEP]:
 * the profiles pin.so recorded for it in ProfileDir (--dir, else
 * pin.conf's ProfileDir=, doc/profiling.md), one per step and node.
 */
#ifndef PIN_PROFSRC_H
#define PIN_PROFSRC_H

#include <stdbool.h>
#include <stddef.h>

#include "libprof/profdir.h"

/* Fill *v, *n (free with profdir_free) with the readable profiles `arg`
 * names; *is_job tells whether arg was JOB[.STEP].  -1 after printing
 * one line for `subcmd`: no such job's profile, a profile of someone
 * else (profiles are readable by their owner and root only), a bad
 * argument. */
int profsrc_resolve (const char *subcmd,
                     const char *arg,
                     const char *dir,
                     struct profdir_entry **v,
                     size_t *n,
                     bool *is_job);

#endif /* !PIN_PROFSRC_H */
