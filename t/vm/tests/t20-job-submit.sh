#!/bin/sh
# vm-slurm-modes: cgroup
# shellcheck disable=SC2016,SC2034,SC1091  # sharness: test bodies are single-quoted

test_description='job_submit_pin.so in the guest: the allocation each policy asks for

Runs inside the qemu guest (t/vm/run-tests.sh; 2 NUMA nodes, SMT) with
JobSubmitPlugins=pin and pin.so.  Without any hint from the user,
srun --pin-policy=numa-local -c 4 must land on 4 different cores of one
NUMA node with mems = that node, and srun --pin-policy=numa-spread -c 4 on
2 + 2 different cores of both NUMA nodes with mems = both
(doc/job-submit.md).'

SHARNESS_TEST_SRCDIR=${PIN_SRCDIR:-/nonexistent}/t
SHARNESS_TEST_EXTENSION="sh"
export SHARNESS_TEST_SRCDIR SHARNESS_TEST_EXTENSION
if ! test -r "$SHARNESS_TEST_SRCDIR/sharness.sh"; then
    echo "1..0 # SKIP PIN_SRCDIR is not set: run this with t/vm/run-tests.sh"
    exit 0
fi
. "$SHARNESS_TEST_SRCDIR/sharness.sh"
. "$PIN_SRCDIR/t/vm/guest-lib.sh"

JS_DIR=${PIN_BUILDDIR:-/nonexistent}/src/plugins/job_submit/.libs
SLURM_PLUGINDIR=$(dirname "$(find /usr/lib -name job_submit_lua.so -path '*slurm*' 2>/dev/null | head -1)")

test_expect_success 'start Slurm (cgroup mode) with pin.so and JobSubmitPlugins=pin' '
    start=$(vm_now) &&
    test -r "$JS_DIR/job_submit_pin.so" &&
    vm_pin_require cgroup --conf-extra "PluginDir=$SLURM_PLUGINDIR:$JS_DIR" \
        --conf-extra JobSubmitPlugins=pin &&
    vm_record_time "t20: slurm + pin.so + job_submit" "$start" &&
    grep "^JobSubmitPlugins=pin" "$SLURM_CONF" &&
    # the site says its nodes have 2 sockets: job_submit_pin.so (which
    # reads the pin.conf beside slurm.conf, anew when it changes) may then
    # reshape a one-task numa-spread job srun creates (doc/job-submit.md)
    echo "SpreadSockets=2" >>"$(dirname "$SLURM_CONF")/pin.conf"
'

# distinct_cores LIST N: LIST holds N PUs on N different cores.
distinct_cores () {
    test "$(vm_hw_count pu "$1")" = "$2" &&
    test "$(vm_hw_count core "$1")" = "$2"
}

test_expect_success 'numa-local -c 4, no hint: submitted' '
    srun --chdir=/ --pin-policy=numa-local,verbose -n 1 -c 4 \
        sh -c "$VM_PROBE" >nl.out 2>nl.err ; rc=$? &&
    cat nl.out nl.err && test $rc = 0
'

test_expect_success 'numa-local -c 4: 4 different cores of one NUMA node, mems = that node' '
    cpus=$(vm_probe_field nl.out 0 cpus) &&
    mems=$(vm_probe_field nl.out 0 mems) &&
    echo "cpus=$cpus mems=$mems step=$(vm_probe_field nl.out 0 step_cpus)" &&
    distinct_cores "$cpus" 4 &&
    test "$(vm_hw_numa "$cpus")" = "$mems" &&
    test "$(vm_hw_count numa "$cpus")" = 1
'

test_expect_success 'numa-local: the job carries what the plugin added' '
    vm_note "t20: numa-local -c 4: $(vm_probe_field nl.out 0 cpus) mems $(vm_probe_field nl.out 0 mems)" &&
    grep "policy=numa-local" nl.err
'

test_expect_success 'numa-spread -c 4, no hint: submitted' '
    srun --chdir=/ --pin-policy=numa-spread,verbose -n 1 -c 4 \
        sh -c "echo job=\$SLURM_JOB_ID ntasks=\$SLURM_NTASKS; $VM_PROBE" \
        >ns.out 2>ns.err ; rc=$? &&
    cat ns.out ns.err && test $rc = 0 &&
    vm_note "t20: numa-spread -c 4: $(vm_probe_field ns.out 0 cpus) mems $(vm_probe_field ns.out 0 mems) step $(vm_probe_field ns.out 0 step_cpus); $(grep "^pin: task 0" ns.err)"
'

test_expect_success 'numa-spread -c 4: 4 different cores' '
    distinct_cores "$(vm_probe_field ns.out 0 cpus)" 4
'

test_expect_success 'numa-spread -c 4: one task ran; the job was reshaped, and says so' '
    grep -c "^task=" ns.out >ntasks &&
    test "$(cat ntasks)" = 1 &&
    grep "ntasks=1\$" ns.out &&
    job=$(sed -n "s/^job=\([0-9]*\) .*/\1/p" ns.out) &&
    scontrol show job "$job" >ns.job &&
    cat ns.job &&
    grep -E "NumTasks=2 " ns.job &&
    grep -E "CPUs/Task=2 " ns.job &&
    grep -E "Comment=pin: numa-spread \(asked\); added ntasks=2,cpus_per_task=2,ntasks_per_socket=1" ns.job
'

# Slurm 22.05 cons_tres packs the CPUs of one task on one socket
# (dist_tasks.c, _cyclic_sync_core_bitmap, whatever -m says); the job is
# reshaped into one task per socket (SpreadSockets=2), and srun's own
# step then gets 2 cores of each: doc/job-submit.md.
test_expect_success 'numa-spread -c 4: 2 + 2 different cores of both NUMA nodes, mems = both' '
    cpus=$(vm_probe_field ns.out 0 cpus) &&
    mems=$(vm_probe_field ns.out 0 mems) &&
    distinct_cores "$cpus" 4 &&
    test "$(vm_hw_in numa 0 "$cpus")" = 2 &&
    test "$(vm_hw_in numa 1 "$cpus")" = 2 &&
    test "$mems" = 0-1
'

test_expect_success 'numa-spread confined to one NUMA node says so (alloc-one-numa)' '
    step=$(vm_probe_field ns.out 0 step_cpus) &&
    if test "$(vm_hw_count numa "$step")" = 1; then
        grep "^pin: task 0 on .*: policy=numa-spread .*fallback=.*alloc-one-numa" ns.err
    else
        ! grep "alloc-one-numa" ns.err
    fi
'

# A batch job is never reshaped (its script's steps would see the task
# count): its one-task step stays on one NUMA node and says so.
test_expect_success 'numa-spread in a batch job: not reshaped, the step says alloc-one-numa' '
    job=$(sbatch --parsable --chdir=/tmp --pin-policy=numa-spread -n 1 -c 4 \
          -o /tmp/nb.out --wrap "srun -n 1 -c 4 --pin-policy=numa-spread,verbose true") &&
    slurm_wait_job "$job" &&
    scontrol show job "$job" >nb.job &&
    cat nb.job /tmp/nb.out &&
    grep "NumTasks=1 " nb.job &&
    ! grep "ntasks_per_socket" nb.job &&
    grep "^pin: task 0 on .*: policy=numa-spread .*fallback=.*alloc-one-numa" /tmp/nb.out
'

# Measured, not asserted: what the user can add to get the spread.
test_expect_success 'numa-spread -c 4 --exclusive: measured' '
    srun --chdir=/ --pin-policy=numa-spread,verbose --exclusive -n 1 -c 4 \
        sh -c "$VM_PROBE" >nx.out 2>nx.err &&
    vm_note "t20: numa-spread -c 4 --exclusive: $(vm_probe_field nx.out 0 cpus) mems $(vm_probe_field nx.out 0 mems) step $(vm_probe_field nx.out 0 step_cpus)" &&
    srun --chdir=/ --pin-policy=numa-spread,verbose -n 2 -c 2 \
        sh -c "$VM_PROBE" >n2.out 2>n2.err &&
    vm_note "t20: numa-spread -n 2 -c 2: $(vm_probe_tasks n2.out | tr "\n" " ")"
'

test_done
