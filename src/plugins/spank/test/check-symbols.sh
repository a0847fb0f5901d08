#!/bin/sh
# check-symbols.sh - pin.so exports only the SPANK entry points, leaves only
# Slurm, hwloc and libc symbols to the process that loads it (slurm_init
# weak: ident.c calls it where the process has it), and links
# neither libslurm nor anything missing (config/check-plugin-symbols.sh).
# From Slurm 25.05 (configure found ESPANK_JOB_FAILURE and the symbol in
# the headers) it also exports slurm_spank_init_failure_mode.
mode=""
config=${PIN_CONFIG_H:-../../../config.h}
if grep -q "^#define HAVE_DECL_ESPANK_JOB_FAILURE 1" "$config" &&
    grep -q "^#define HAVE_DECL_SLURM_SPANK_INIT_FAILURE_MODE 1" "$config"; then
    mode=" slurm_spank_init_failure_mode"
fi
exec sh "$(dirname "$0")/../../../../config/check-plugin-symbols.sh" \
    "${1:-.libs/pin.so}" SPANK \
    "plugin_name plugin_type plugin_version slurm_spank_exit slurm_spank_init$mode slurm_spank_init_post_opt slurm_spank_job_epilog slurm_spank_task_exit slurm_spank_task_init slurm_spank_task_post_fork" \
    'slurm_(error|info|debug|verbose|conf|load_job|free_job_info_msg|strerror|init|hostlist_(create|find|destroy))|spank_[a-z_]+|hwloc_[a-z0-9_]+'
