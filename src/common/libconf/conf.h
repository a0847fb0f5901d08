/* conf.h - one parser for pin.conf and plugstack.conf arguments
 *
 * Every component (SPANK plugin, job_submit plugin, slurm-pin command)
 * reads site settings through this parser.  pin.conf is a slurm.conf-like
 * file: `Key=Value` per line, keys case-insensitive, `#` starts a comment,
 * blank lines ignored.  plugstack.conf arguments use the same keys
 * (`pin.so conf=/etc/slurm/pin.conf default_policy=numa-local`); keys
 * there are matched case-insensitively with '_' ignored, so
 * `default_policy` and `DefaultPolicy` are the same key.  Arguments given
 * in plugstack.conf override pin.conf.
 *
 * Errors are one line with the file and line number:
 *   "/etc/slurm/pin.conf:12: DefaultPolicy=numa-locl: unknown policy; known: ..."
 */
#ifndef PIN_CONF_H
#define PIN_CONF_H

#include <limits.h>
#include <stdbool.h>

#include "libutil/errprintf.h"

#define PIN_CONF_DEFAULT_PATH "/etc/slurm/pin.conf"

struct pin_conf {
    char path[PATH_MAX];          /* pin.conf in use ("" if none) */
    int default_policy;           /* enum place_policy; DefaultPolicy=none */
    unsigned allowed_policies;    /* bit (1 << policy); AllowedPolicies=all */
    char cgroup_root[PATH_MAX];   /* CgroupRoot=auto: the cgroup2 mount */
    char cgroup_base[NAME_MAX];   /* CgroupBase=slurm-pin (standalone tree) */
    char topology_cache[PATH_MAX];/* TopologyCache=/var/cache/slurm-pin/topology.xml */
    char state_dir[PATH_MAX];     /* StateDir=/run/slurm-pin (lock, claims) */
    bool verbose;                 /* Verbose=no: as if every step said ,verbose */
};

/* Fill with the documented defaults (doc/pin.conf.5). */
void pin_conf_defaults (struct pin_conf *conf);

/* Read a pin.conf file over the current values.  A missing file is an
 * error only if `must_exist`.  Returns -1 with errp "FILE:LINE: ..." on the
 * first bad line (unknown key, bad value, missing '=').
 */
int pin_conf_load_file (struct pin_conf *conf, const char *path,
                        bool must_exist, pin_error_t *errp);

/* Apply plugstack.conf arguments (argv as SPANK passes them).  `conf=PATH`
 * loads that file first (it must exist); the other arguments override it.
 * Without conf=, PIN_CONF_DEFAULT_PATH is read if it exists.
 * Errors: "plugstack.conf argument 'foo=1': unknown key; known: ...".
 */
int pin_conf_load_args (struct pin_conf *conf, int ac, char **av,
                        pin_error_t *errp);

/* Is `policy` allowed by the site? */
bool pin_conf_policy_allowed (const struct pin_conf *conf, int policy);

#endif /* !PIN_CONF_H */
