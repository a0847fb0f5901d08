#!/bin/sh
# check-symbols.sh - pin.so exports only the SPANK entry points, leaves only
# Slurm, hwloc and libc symbols to the process that loads it, and links
# neither libslurm nor anything missing (config/check-plugin-symbols.sh).
exec sh "$(dirname "$0")/../../../../config/check-plugin-symbols.sh" \
    "${1:-.libs/pin.so}" SPANK \
    "plugin_name plugin_type plugin_version slurm_spank_exit slurm_spank_init slurm_spank_init_post_opt slurm_spank_job_epilog slurm_spank_task_exit slurm_spank_task_init slurm_spank_task_post_fork" \
    'slurm_(error|info|debug|verbose|conf)|spank_[a-z_]+|hwloc_[a-z0-9_]+'
