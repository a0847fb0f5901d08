#!/bin/sh
# vm-slurm-modes: cgroup
# shellcheck disable=SC2016,SC2034,SC1091  # sharness: test bodies are single-quoted

test_description='qemu test bed: the guest machine, cgroup v2 cpusets and Slurm in cgroup mode

Runs inside the guest (t/vm/run-guest.sh or t/vm/run-tests.sh): checks that
the guest is the machine the later tests rely on (2 packages, 8 cores, 16
PUs, 2 NUMA nodes, SMT siblings adjacent), that the kernel enforces a
cgroup v2 cpuset, and that Slurm in cgroup mode runs a step in
job_<id>/step_<id>/user/task_<n> with the CPUs it reports.'

# run-guest.sh sets PIN_BUILDDIR, empty when it was given no build
# directory; t/sharness.d/00-pin.sh would replace an empty one with a guess.
vm_builddir=${PIN_BUILDDIR:-}
SHARNESS_TEST_SRCDIR=${PIN_SRCDIR:-/nonexistent}/t
SHARNESS_TEST_EXTENSION="sh"
export SHARNESS_TEST_SRCDIR SHARNESS_TEST_EXTENSION
if ! test -r "$SHARNESS_TEST_SRCDIR/sharness.sh"; then
    echo "1..0 # SKIP PIN_SRCDIR is not set: run this with t/vm/run-guest.sh"
    exit 0
fi
. "$SHARNESS_TEST_SRCDIR/sharness.sh"
. "$PIN_SRCDIR/t/vm/guest-lib.sh"

# --- the machine -----------------------------------------------------------

test_expect_success 'hwloc sees 2 packages, 8 cores, 16 PUs, 2 NUMA nodes' '
    for t in package core pu numa; do
        echo "$t $(hwloc-calc -N $t all)" || return 1
    done >counts &&
    cat >expect <<-EOF &&
	package 2
	core 8
	pu 16
	numa 2
	EOF
    test_cmp expect counts
'

test_expect_success 'NUMA node 0 holds PUs 0-7, node 1 PUs 8-15' '
    hwloc-calc --physical -I pu numa:0 >numa0 &&
    hwloc-calc --physical -I pu numa:1 >numa1 &&
    echo 0,1,2,3,4,5,6,7 >expect0 &&
    echo 8,9,10,11,12,13,14,15 >expect1 &&
    test_cmp expect0 numa0 &&
    test_cmp expect1 numa1
'

test_expect_success 'the kernel agrees: node0/cpulist 0-7, node1/cpulist 8-15' '
    cat /sys/devices/system/node/node0/cpulist \
        /sys/devices/system/node/node1/cpulist >kernel &&
    printf "0-7\n8-15\n" >expect &&
    test_cmp expect kernel
'

test_expect_success 'SMT siblings are adjacent and share a core and an L2' '
    i=0 &&
    while test $i -lt 8; do
        echo "core $i: $(hwloc-calc --physical-output -I pu core:$i)" &&
        echo "l2 $i: $(hwloc-calc --physical-output -I pu l2:$i)" || return 1
        i=$((i + 1))
    done >siblings &&
    i=0 &&
    while test $i -lt 8; do
        echo "core $i: $((2 * i)),$((2 * i + 1))" &&
        echo "l2 $i: $((2 * i)),$((2 * i + 1))"
        i=$((i + 1))
    done >expect &&
    test_cmp expect siblings &&
    echo 0-1 >expect &&
    test_cmp expect /sys/devices/system/cpu/cpu0/topology/thread_siblings_list
'

test_expect_success 'every PU is online and allowed to the test' '
    echo 0-15 >expect &&
    test_cmp expect /sys/devices/system/cpu/online &&
    sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status >allowed &&
    test_cmp expect allowed
'

# --- the test bed itself ---------------------------------------------------

test_expect_success 'root is the tmpfs overlay, /share is a 9p mount' '
    findmnt -n -o FSTYPE / >fs &&
    findmnt -n -o FSTYPE /share >>fs &&
    printf "overlay\n9p\n" >expect &&
    test_cmp expect fs
'

test_expect_success 'the build directory is visible, when one was given' '
    if test -n "$vm_builddir"; then
        test -f "$vm_builddir/config.status"
    else
        say "no build directory was given (run-guest.sh --builddir)"
    fi
'

test_expect_success 'loopback carries 127.0.0.2 and the host name resolves' '
    ip -4 -o addr show dev lo >lo &&
    grep -q "inet 127.0.0.2/8" lo &&
    getent ahosts "$(hostname)" >host &&
    test -s host
'

test_expect_success 'orphaned processes are reaped by the guest init' '
    sh -c "sleep 1 >/dev/null 2>&1 & echo \$!" >orphan &&
    pid=$(cat orphan) &&
    n=0 &&
    while test -e /proc/$pid && test $n -lt 100; do
        sleep 0.1
        n=$((n + 1))
    done &&
    test ! -e /proc/$pid
'

# --- cgroup v2 -------------------------------------------------------------

test_expect_success 'pure cgroup v2: no v1 hierarchy, cpuset controller offered' '
    test_must_fail grep -q " cgroup " /proc/mounts &&
    grep -qw cpuset /sys/fs/cgroup/cgroup.controllers
'

test_expect_success 'a cgroup with cpuset 2-3 / mems 1 confines a shell' '
    cg=/sys/fs/cgroup/pin-vm-smoke &&
    echo +cpuset >/sys/fs/cgroup/cgroup.subtree_control &&
    mkdir $cg &&
    test_when_finished "vm_cg_rmdir $cg" &&
    echo 2-3 >$cg/cpuset.cpus &&
    echo 1 >$cg/cpuset.mems &&
    echo 2-3 >expect &&
    test_cmp expect $cg/cpuset.cpus.effective &&
    sh -c "echo \$\$ >$cg/cgroup.procs && exec cat /proc/self/status" >status &&
    echo 2-3 >expect &&
    vm_status_field status Cpus_allowed_list >cpus &&
    test_cmp expect cpus &&
    echo 1 >expect &&
    vm_status_field status Mems_allowed_list >mems &&
    test_cmp expect mems &&
    vm_note "cgroup cpuset.cpus=2-3 cpuset.mems=1: Cpus_allowed_list $(cat cpus), Mems_allowed_list $(cat mems)"
'

test_expect_success 'the cgroup is removed once empty' '
    test ! -e /sys/fs/cgroup/pin-vm-smoke
'

# --- Slurm in cgroup mode --------------------------------------------------

test_expect_success 'Slurm starts in cgroup mode and the node is idle' '
    vm_slurm_require cgroup &&
    sinfo -h -o "%t %c %z" >node &&
    echo "idle 16 2:4:2" >expect &&
    test_cmp expect node
'

test_expect_success 'srun -c 4: the task gets 4 PUs, as its cgroup says' '
    start=$(vm_now) &&
    srun -c 4 sh -c "cat /proc/self/status >status; \
        cut -d: -f3 /proc/self/cgroup >cgroup; \
        cat /sys/fs/cgroup\$(cat cgroup)/cpuset.cpus.effective >effective" &&
    vm_record_time "srun -c 4" "$start" &&
    vm_status_field status Cpus_allowed_list >cpus &&
    vm_status_field status Mems_allowed_list >mems &&
    vm_note "Slurm cgroup mode, srun -c 4: Cpus_allowed_list $(cat cpus), Mems_allowed_list $(cat mems), cgroup $(cat cgroup)" &&
    test "$(vm_pus "$(cat cpus)")" = 4 &&
    test_cmp effective cpus &&
    test -n "$(cat mems)"
'

test_expect_success 'srun -c 4 gives two whole cores (CR_Core, SMT siblings)' '
    test "$(vm_cores "$(cat cpus)")" = 2
'

test_expect_success 'the task runs in Slurm'"'"'s JOBDIR/step_0/user/task_0 (job_<id> or SLUID)' '
    grep -E "^/system\.slice/$(hostname)_slurmstepd\.scope/$VM_JOBDIR_RE/step_0/user/task_0\$" cgroup
'

test_expect_success 'srun -n 2 -c 4: each task gets 4 PUs of its own' '
    start=$(vm_now) &&
    srun -n 2 -c 4 -l grep -E "^Cpus_allowed_list" /proc/self/status >out &&
    sort out >tasks &&
    vm_record_time "srun -n 2 -c 4" "$start" &&
    vm_note "Slurm cgroup mode, srun -n 2 -c 4: $(tr "\n\t" "; " <tasks)" &&
    sed -n "s/^0: Cpus_allowed_list:[[:space:]]*//p" tasks >t0 &&
    sed -n "s/^1: Cpus_allowed_list:[[:space:]]*//p" tasks >t1 &&
    test "$(vm_pus "$(cat t0)")" = 4 &&
    test "$(vm_pus "$(cat t1)")" = 4 &&
    test "$(vm_pus "$(cat t0),$(cat t1)")" = 8
'

test_done
