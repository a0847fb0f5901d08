#!/bin/sh
# check-symbols.sh - job_submit_pin.so exports only the job_submit entry
# points, leaves only Slurm, hwloc and libc symbols to slurmctld, and links
# neither libslurm nor anything missing (config/check-plugin-symbols.sh).
exec sh "$(dirname "$0")/../../../../config/check-plugin-symbols.sh" \
    "${1:-.libs/job_submit_pin.so}" job_submit \
    "fini init job_modify job_submit plugin_name plugin_type plugin_version" \
    'slurm_(error|info|debug|xcalloc|xfree|xrecalloc|xstrdup|conf)|hwloc_[a-z0-9_]+'
