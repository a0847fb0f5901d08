#!/bin/sh
# vm-slurm-modes: cgroup affinity
# shellcheck disable=SC2016,SC2034,SC1091  # sharness: test bodies are single-quoted

test_description='pin.so in the guest: one task, placed by each policy, seen by the kernel

Runs inside the qemu guest (t/vm/run-tests.sh) in both Slurm modes: cgroup
(task/cgroup: pin.so narrows Slurm'"'"'s task cgroups) and affinity
(proctrack/linuxproc, task/affinity: pin.so makes its own cgroups under
/sys/fs/cgroup/slurm-pin).  For each request the kernel'"'"'s view of the
task (/proc/PID/status, its cgroup'"'"'s cpuset.*.effective) must be the
placement doc/policies.md prescribes: exact CPUs written here by hand from
the rules, the same as slurm-pin plan on this machine, and the rule-level
properties checked independently with hwloc-calc.  A task run as an
ordinary user tries to widen its CPUs and cannot.'

SHARNESS_TEST_SRCDIR=${PIN_SRCDIR:-/nonexistent}/t
SHARNESS_TEST_EXTENSION="sh"
export SHARNESS_TEST_SRCDIR SHARNESS_TEST_EXTENSION
if ! test -r "$SHARNESS_TEST_SRCDIR/sharness.sh"; then
    echo "1..0 # SKIP PIN_SRCDIR is not set: run this with t/vm/run-tests.sh"
    exit 0
fi
. "$SHARNESS_TEST_SRCDIR/sharness.sh"
. "$PIN_SRCDIR/t/vm/guest-lib.sh"

mode=${PIN_VM_SLURM_MODE:-cgroup}

# check_task FILE TASK EXPECT_CPUS EXPECT_MEMS: the probe of TASK in FILE
# shows the expected CPUs and mems in /proc and in its cgroup's effective
# cpuset, and the cgroup is the one the mode puts tasks in.
check_task ()
{
    _cpus=$(vm_probe_field "$1" "$2" cpus) &&
    _mems=$(vm_probe_field "$1" "$2" mems) &&
    _cgc=$(vm_probe_field "$1" "$2" cg_cpus) &&
    _cgm=$(vm_probe_field "$1" "$2" cg_mems) &&
    _cg=$(vm_probe_field "$1" "$2" cg) &&
    echo "task $2: cpus=$_cpus mems=$_mems cgroup cpus=$_cgc mems=$_cgm" >actual &&
    echo "task $2: cpus=$3 mems=$4 cgroup cpus=$3 mems=$4" >expect &&
    test_cmp expect actual &&
    case $mode in
        cgroup) echo "$_cg" | grep -E "^/system\.slice/node1_slurmstepd\.scope/$VM_JOBDIR_RE/step_[0-9]+/user/task_$2\$" ;;
        affinity) echo "$_cg" | grep -E "^/$VM_PIN_BASE/job_[0-9]+/step_[0-9]+/task_$2\$" ;;
    esac
}

test_expect_success "start Slurm ($mode mode) with pin.so" '
    start=$(vm_now) &&
    vm_pin_require "$mode" &&
    vm_record_time "t10: slurm + pin.so ($mode)" "$start" &&
    grep "^required .*/pin.so conf=" "$(dirname "$SLURM_CONF")/plugstack.conf"
'

# --- numa-local --hint=nomultithread -c 4, as an ordinary user -----------

test_expect_success 'numa-local --hint=nomultithread -c 4 runs as nobody and tries to escape' '
    start=$(vm_now) &&
    runuser -u nobody -- srun --chdir=/ --pin-policy=numa-local,verbose \
        --hint=nomultithread -n 1 -c 4 sh -c "$VM_PROBE
$VM_ESCAPE
$VM_PROBE" >nl.out 2>nl.err &&
    vm_record_time "t10: srun numa-local -c 4 ($mode)" "$start" &&
    cat nl.out nl.err &&
    test "$(grep -c "^task=0 " nl.out)" = 2
'

test_expect_success 'numa-local: 0,2,4,6 and mems 0, in /proc and in its cgroup' '
    check_task nl.out 0 0,2,4,6 0
'

test_expect_success 'numa-local: slurm-pin plan on this machine agrees' '
    vm_plan numa-local 1 4 0-7 >plan &&
    echo "task 0: cpus=0,2,4,6 mems=0" >expect &&
    test_cmp expect plan &&
    vm_probe_tasks nl.out | head -n 1 >kernel &&
    test_cmp plan kernel &&
    vm_verbose_tasks nl.err >verbose &&
    test_cmp plan verbose
'

test_expect_success 'numa-local (hwloc-calc): 4 PUs on 4 cores of one NUMA node = mems' '
    cpus=$(vm_probe_field nl.out 0 cpus) &&
    test "$(vm_hw_count pu "$cpus")" = 4 &&
    test "$(vm_hw_count core "$cpus")" = 4 &&
    test "$(vm_hw_count numa "$cpus")" = 1 &&
    test "$(vm_hw_numa "$cpus")" = "$(vm_hw_nodes "$(vm_probe_field nl.out 0 mems)")"
'

if test "$mode" = cgroup; then
    test_expect_success 'Slurm gave the step 4 whole cores (0-7); pin.so narrowed it' '
        echo 0-7 >expect &&
        vm_probe_field nl.out 0 step_cpus >actual &&
        test_cmp expect actual
    '
fi

test_expect_success 'the task cannot widen its CPUs: taskset, cpuset write, cgroup move' '
    echo "escape: 0,2,4,6" >expect &&
    grep "^escape:" nl.out >actual &&
    test_cmp expect actual &&
    sed -n "/^task=0 /p" nl.out | sort -u >probes &&
    test "$(wc -l <probes)" = 1
'

# --- numa-spread --hint=nomultithread -c 4 over both sockets ----------------
# Slurm gives a 4-CPU step the cores of one socket (0-7 here, even with
# --exclusive) unless the job has the whole node and the distribution
# spreads the step: --exclusive -m block:fcyclic gives 0-3,8-11, and
# numa-spread then takes one PU per core, 2 + 2 over the nodes.

test_expect_success 'numa-spread --exclusive -m block:fcyclic --hint=nomultithread -c 4' '
    start=$(vm_now) &&
    srun --pin-policy=numa-spread,verbose --exclusive -m block:fcyclic --hint=nomultithread \
        -n 1 -c 4 sh -c "$VM_PROBE" >ns.out 2>ns.err &&
    vm_record_time "t10: srun numa-spread -c 4 ($mode)" "$start" &&
    cat ns.out ns.err
'

test_expect_success 'numa-spread: 0,2,8,10 and mems 0-1, in /proc and in its cgroup' '
    check_task ns.out 0 0,2,8,10 0-1
'

test_expect_success 'numa-spread: slurm-pin plan agrees' '
    vm_plan numa-spread 1 4 0-3,8-11 >plan &&
    echo "task 0: cpus=0,2,8,10 mems=0-1" >expect &&
    test_cmp expect plan &&
    vm_probe_tasks ns.out >kernel &&
    test_cmp plan kernel &&
    vm_verbose_tasks ns.err >verbose &&
    test_cmp plan verbose
'

test_expect_success 'numa-spread (hwloc-calc): 4 cores, 2 + 2 over both nodes, mems both' '
    cpus=$(vm_probe_field ns.out 0 cpus) &&
    test "$(vm_hw_count core "$cpus")" = 4 &&
    test "$(vm_hw_in numa 0 "$cpus")" = 2 &&
    test "$(vm_hw_in numa 1 "$cpus")" = 2 &&
    test "$(vm_hw_nodes "$(vm_probe_field ns.out 0 mems)")" = 0,1
'

if test "$mode" = cgroup; then
    test_expect_success 'Slurm gave the step 2 cores of each socket (0-3,8-11)' '
        echo 0-3,8-11 >expect &&
        vm_probe_field ns.out 0 step_cpus >actual &&
        test_cmp expect actual
    '
fi

# --- cache-shared -c 4 -----------------------------------------------------

test_expect_success 'cache-shared -c 4' '
    start=$(vm_now) &&
    srun --pin-policy=cache-shared,verbose -n 1 -c 4 sh -c "$VM_PROBE" >cs.out 2>cs.err &&
    vm_record_time "t10: srun cache-shared -c 4 ($mode)" "$start" &&
    cat cs.out cs.err
'

test_expect_success 'cache-shared: 0-3 and mems 0, in /proc and in its cgroup' '
    check_task cs.out 0 0-3 0
'

test_expect_success 'cache-shared: slurm-pin plan agrees' '
    vm_plan cache-shared 1 4 0-3 >plan &&
    echo "task 0: cpus=0-3 mems=0" >expect &&
    test_cmp expect plan &&
    vm_probe_tasks cs.out >kernel &&
    test_cmp plan kernel &&
    vm_verbose_tasks cs.err >verbose &&
    test_cmp plan verbose
'

test_expect_success 'cache-shared (hwloc-calc): both threads of 2 cores of one node' '
    cpus=$(vm_probe_field cs.out 0 cpus) &&
    test "$(vm_hw_count core "$cpus")" = 2 &&
    vm_hw_whole_cores "$cpus" &&
    test "$(vm_hw_count numa "$cpus")" = 1 &&
    test "$(vm_hw_numa "$cpus")" = "$(vm_hw_nodes "$(vm_probe_field cs.out 0 mems)")"
'

if test "$mode" = cgroup; then
    test_expect_success 'Slurm gave the step 2 whole cores (0-3)' '
        echo 0-3 >expect &&
        vm_probe_field cs.out 0 step_cpus >actual &&
        test_cmp expect actual
    '
fi

test_done
