#!/bin/sh

test_description='job_submit_pin.so: numa-spread reshapes a one-task job srun creates

A private Slurm told the node has 2 sockets (local-slurm.sh --sockets 2,
SlurmdParameters=config_overrides) with JobSubmitPlugins=pin and
SpreadSockets=2 (turned off again for the partition flat).  srun --pin-policy=numa-spread
-n 1 -c 2 creating its own job gets a job of 2 tasks of 1 CPU, one per
socket (scontrol show job and the Comment say so), and still runs one
task on both CPUs; nothing else is reshaped: another policy, a batch job,
salloc, -n 2, --exclusive, a partition without SpreadSockets.  The
placements on real sockets are checked in the qemu guest (t/vm t20).
'

. "$(dirname "$0")/sharness.sh"

slurm_require

pin_so_prereq
JS_DIR="$PIN_JS_DIR"
test -r "$JS_DIR/job_submit_pin.so" && test_set_prereq JS_SO
SLURM_PLUGINDIR=$(dirname "$(find /usr/lib -name job_submit_lua.so -path '*slurm*' 2>/dev/null | head -1)")
test "$(nproc)" -ge 2 && test_set_prereq TWO_CPUS

STATE=$(mktemp -d /tmp/pin-t3010.XXXXXX) || exit 1
cleanup "rm -rf '$STATE'"

{
    echo "StateDir=$STATE/state"
    echo "TopologyCache=$STATE/topology.xml"
    echo "CgroupBase=slurm-pin-t3010-$$"
} >"$STATE/spank-pin.conf"

# the rules of job_submit_pin.so (DIR/etc/pin.conf, beside slurm.conf); a
# job without -p is judged by the global keys (doc/job-submit.md)
printf "AllowedPolicies=all\nSpreadSockets=2\nPartitionName=flat SpreadSockets=0\n" >pin.conf

# job_of FILE: the job id a step printed ("job=N ...")
job_of () {
    sed -n "s/^job=\([0-9]*\).*/\1/p" "$1" | head -n1
}

# not_reshaped JOB: scontrol show job (in job.out) says nothing of a reshape
not_reshaped () {
    test -n "$1" &&
    scontrol show job "$1" >job.out &&
    cat job.out &&
    ! grep "ntasks_per_socket" job.out
}

PRINT='echo job=$SLURM_JOB_ID ntasks=$SLURM_NTASKS cpus=$(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)'

test_expect_success JS_SO,PIN_SO,TWO_CPUS 'start Slurm (2 sockets as Slurm sees it) with JobSubmitPlugins=pin' '
    test -n "$SLURM_PLUGINDIR" &&
    echo "required $PIN_SO conf=$STATE/spank-pin.conf" >plugstack.conf &&
    slurm_start --plugstack plugstack.conf --pin-conf pin.conf --sockets 2 \
        --conf-extra "PluginDir=$SLURM_PLUGINDIR:$JS_DIR" \
        --conf-extra JobSubmitPlugins=pin \
        --conf-extra "PartitionName=flat Nodes=ALL MaxTime=INFINITE State=UP" &&
    scontrol show node >node.out &&
    grep "Sockets=2 " node.out
'

test_expect_success SLURM,JS_SO,TWO_CPUS 'srun numa-spread -n 1 -c 2: reshaped into one task per socket' '
    srun --pin-policy=numa-spread -n 1 -c 2 sh -c "$PRINT" >spread.out &&
    cat spread.out &&
    test "$(wc -l <spread.out)" = 1 &&
    grep " ntasks=1 " spread.out &&
    job=$(job_of spread.out) &&
    scontrol show job "$job" >job.out &&
    cat job.out &&
    grep "NumTasks=2 " job.out &&
    grep "CPUs/Task=1 " job.out &&
    ! grep "TresPerTask=.*cpu" job.out &&
    grep "NtasksPerN:B:S:C=0:0:1:" job.out &&
    grep -F "Comment=pin: numa-spread (asked); added ntasks=2,cpus_per_task=1,ntasks_per_socket=1 (srun -n 1 -c 2 over 2 sockets)" job.out
'

# srun from Slurm 25.05 takes the cpu count per task of a job it created
# from the job'"'"'s TresPerTask (srun_job.c, _set_step_opts); the reshape
# leaves no cpu= there, so the step keeps its own -c 2, as with 22.05.
test_expect_success SLURM,JS_SO,TWO_CPUS 'the one task has both CPUs' '
    cpus=$(sed -n "s/.* cpus=//p" spread.out) &&
    test "$cpus" = 0-1
'

test_expect_success SLURM,JS_SO,TWO_CPUS 'not reshaped: numa-local, -n 2, --exclusive, another partition' '
    srun --pin-policy=numa-local -n 1 -c 2 sh -c "$PRINT" >local.out &&
    not_reshaped "$(job_of local.out)" &&
    srun --pin-policy=numa-spread -n 2 -c 1 sh -c "$PRINT" >two.out &&
    test "$(wc -l <two.out)" = 2 &&
    not_reshaped "$(job_of two.out)" &&
    srun --pin-policy=numa-spread --exclusive -n 1 -c 2 sh -c "$PRINT" >excl.out &&
    not_reshaped "$(job_of excl.out)" &&
    srun -p flat --pin-policy=numa-spread -n 1 -c 2 sh -c "$PRINT" >flat.out &&
    not_reshaped "$(job_of flat.out)"
'

test_expect_success SLURM,JS_SO,TWO_CPUS 'not reshaped: a batch job and salloc (their steps would see it)' '
    job=$(sbatch --parsable --pin-policy=numa-spread -n 1 -c 2 -o batch.out \
          --wrap "srun -n 1 -c 2 true") &&
    slurm_wait_job "$job" &&
    not_reshaped "$job" &&
    grep "NumTasks=1 " job.out &&
    salloc --pin-policy=numa-spread -n 1 -c 2 \
        sh -c "echo job=\$SLURM_JOB_ID" >salloc.out 2>salloc.err &&
    not_reshaped "$(job_of salloc.out)" &&
    grep "NumTasks=1 " job.out
'

test_expect_success SLURM 'stop the cluster' '
    slurm_stop
'

test_done
