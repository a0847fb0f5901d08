#!/bin/sh

test_description='job_submit_pin.so: GpuBinding=enforce asks Slurm for cores near the GPUs

A private Slurm with two GPUs (gres.conf AutoDetect=off, File= two
character devices this test makes with mknod) and JobSubmitPlugins=pin.
With pin.conf GpuBinding=enforce, a job asking for a GPU with a policy
that pins (asked or the site default) gets --gres-flags=enforce-binding,
as scontrol show job, the Comment and slurmctld'"'"'s log say; a job
without GPUs, with policy none or dynamic, in a partition with
GpuBinding=no, or with its own --gres-flags does not.  Without the key
(the default) nothing is added.
'

. "$(dirname "$0")/sharness.sh"

slurm_require

pin_so_prereq
JS_DIR="$PIN_JS_DIR"
test -r "$JS_DIR/job_submit_pin.so" && test_set_prereq JS_SO
SLURM_PLUGINDIR=$(dirname "$(find /usr/lib -name job_submit_lua.so -path '*slurm*' 2>/dev/null | head -1)")

# the device nodes and gres.conf: a path without blanks (gres.conf File=)
STATE=$(mktemp -d /tmp/pin-t3030.XXXXXX) || exit 1
cleanup "rm -rf '$STATE'"
mknod "$STATE/gpu0" c 4000 0 && mknod "$STATE/gpu1" c 4000 1 &&
    test_set_prereq MKNOD

cat >"$STATE/spank-pin.conf" <<EOF
StateDir=$STATE/state
TopologyCache=$STATE/topology.xml
CgroupBase=slurm-pin-t3030-$$
EOF

cat >gres.conf <<EOF
AutoDetect=off
Name=gpu File=$STATE/gpu[0-1]
EOF

# the rules of job_submit_pin.so (DIR/etc/pin.conf, beside slurm.conf)
printf "DefaultPolicy=numa-local\nAllowedPolicies=all\n" >pin-default.conf
printf "%s\n" "DefaultPolicy=numa-local" "AllowedPolicies=all" \
    "GpuBinding=enforce" "PartitionName=free GpuBinding=no" >pin.conf

# flags JOB: scontrol show job JOB into job.out; true if it shows
# enforce-binding (22.05: GresEnforceBind=Yes; later: GresFlags=...)
enforced () {
    scontrol show job "$1" >job.out &&
    cat job.out &&
    grep -v "Comment=" job.out >flags.out &&
    grep -E "GresEnforceBind=Yes|GresFlags=[^ ]*enforce-binding" flags.out
}

held () {
    sbatch --parsable --hold -o /dev/null "$@" --wrap true
}

test_expect_success JS_SO,PIN_SO,MKNOD 'start Slurm with 2 GPUs and JobSubmitPlugins=pin, GpuBinding left out' '
    test -n "$SLURM_PLUGINDIR" &&
    echo "required $PIN_SO conf=$STATE/spank-pin.conf" >plugstack.conf &&
    slurm_start --plugstack plugstack.conf --pin-conf pin-default.conf \
        --gres-conf gres.conf --node-gres gpu:2 \
        --conf-extra "PluginDir=$SLURM_PLUGINDIR:$JS_DIR" \
        --conf-extra JobSubmitPlugins=pin \
        --conf-extra "PartitionName=free Nodes=ALL MaxTime=INFINITE State=UP" &&
    scontrol show node >node.out &&
    grep "Gres=gpu:2" node.out
'

test_expect_success SLURM,JS_SO,MKNOD 'the default: a GPU job with a policy gets no gres flag' '
    job=$(held --gres=gpu:1 --pin-policy=numa-local) &&
    ! enforced "$job" &&
    scancel "$job"
'

test_expect_success SLURM,JS_SO,MKNOD 'GpuBinding=enforce' '
    slurm_restart --plugstack plugstack.conf --pin-conf pin.conf \
        --gres-conf gres.conf --node-gres gpu:2 \
        --conf-extra "PluginDir=$SLURM_PLUGINDIR:$JS_DIR" \
        --conf-extra JobSubmitPlugins=pin \
        --conf-extra "PartitionName=free Nodes=ALL MaxTime=INFINITE State=UP"
'

test_expect_success SLURM,JS_SO,MKNOD '--gres=gpu:1 and the site default policy: enforce-binding added' '
    job=$(held --gres=gpu:1) &&
    enforced "$job" &&
    grep -F "Comment=pin: numa-local (site default); added threads_per_core=1,gres_flags=enforce-binding" job.out &&
    grep "pin: submission of uid [0-9]* asks for GPUs with policy numa-local: added --gres-flags=enforce-binding (GpuBinding=enforce)" \
        "$SLURM_TEST_DIR/log/slurmctld.log" &&
    scancel "$job"
'

test_expect_success SLURM,JS_SO,MKNOD '--gpus=1 and an asked numa-spread: added' '
    job=$(held --gpus=1 --pin-policy=numa-spread) &&
    enforced "$job" &&
    scancel "$job"
'

test_expect_success SLURM,JS_SO,MKNOD 'srun --gres=gpu:1: the step runs with its GPU and the flag' '
    srun --gres=gpu:1 sh -c "echo job=\$SLURM_JOB_ID gpus=\$SLURM_STEP_GPUS" >srun.out &&
    cat srun.out &&
    grep "gpus=[01]$" srun.out &&
    enforced "$(sed -n "s/^job=\([0-9]*\).*/\1/p" srun.out)"
'

test_expect_success SLURM,JS_SO,MKNOD 'not added: no GPUs, none, dynamic, GpuBinding=no, own --gres-flags' '
    job=$(held -n 1) && ! enforced "$job" && scancel "$job" &&
    job=$(held --gres=gpu:1 --pin-policy=none) && ! enforced "$job" &&
    scancel "$job" &&
    job=$(held --gres=gpu:1 --pin-policy=dynamic) && ! enforced "$job" &&
    scancel "$job" &&
    job=$(held -p free --gres=gpu:1) && ! enforced "$job" && scancel "$job" &&
    job=$(held --gres=gpu:1 --gres-flags=disable-binding) &&
    ! enforced "$job" &&
    scancel "$job"
'

test_expect_success SLURM 'stop the cluster' '
    slurm_stop
'

test_done
