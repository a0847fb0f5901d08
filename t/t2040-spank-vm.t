#!/bin/sh

test_description='pin.so nested in Slurm cgroup/v2, enforced by a real kernel

Boots the qemu test bed (t/vm/run-guest.sh: 2 packages x 4 cores x 2
threads, 2 NUMA nodes, pure cgroup v2 with cpuset) and runs, inside it, a
Slurm cluster in cgroup mode (cgroup/v2, task/cgroup) with the build'"'"'s
pin.so: each step'"'"'s tasks must get the policy'"'"'s CPUs and memory node
as the kernel enforces them (cpuset.cpus.effective, Cpus_allowed_list,
Mems_allowed_list), concurrent --overlap steps of a whole-node job must get
disjoint CPUs, and nothing of ours may be left.  Opt-in, because the guest
is slow (software emulation, ~10 min): PIN_TEST_VM=1.
'

. "$(dirname "$0")/sharness.sh"

if test -z "${PIN_TEST_VM:-}"; then
    skip_all="the qemu tier of pin.so is opt-in: set PIN_TEST_VM=1 (about 10 minutes)"
    test_done
fi
PIN_SO=$PIN_BUILDDIR/src/plugins/spank/.libs/pin.so
if ! test -r "$PIN_SO"; then
    skip_all="pin.so not built at $PIN_SO"
    test_done
fi
RUN_GUEST=$PIN_SRCDIR/t/vm/run-guest.sh
if ! test -x "$RUN_GUEST"; then
    skip_all="$RUN_GUEST not found"
    test_done
fi

# The share directory goes to qemu's -virtfs: no space in its path.
SHARE=$(mktemp -d /tmp/pin-t2040.XXXXXX) || exit 1
cleanup "rm -rf '$SHARE'"

# The guest side: sharness inside the guest, TAP on stdout.  (Not named
# guest.sh: run-guest.sh writes its own wrapper under that name.)
cat >pin-spank-guest.sh <<'GUEST'
#!/bin/sh
# vm-slurm-modes: cgroup
test_description='pin.so inside the guest'
SHARNESS_TEST_SRCDIR=${PIN_SRCDIR:-/nonexistent}/t
SHARNESS_TEST_EXTENSION=sh
export SHARNESS_TEST_SRCDIR SHARNESS_TEST_EXTENSION
. "$SHARNESS_TEST_SRCDIR/sharness.sh"
. "$PIN_SRCDIR/t/vm/guest-lib.sh"

PIN_SO=$PIN_BUILDDIR/src/plugins/spank/.libs/pin.so
STATE=/run/pin-vm/pin-state

# check_task NAME: the task's view (NAME.status, NAME.cgroup) agrees with
# the kernel's cgroup (NAME.effective) and with the verbose line (NAME.err).
check_task () {
    vm_status_field $1.status Cpus_allowed_list >$1.cpus &&
    vm_status_field $1.status Mems_allowed_list >$1.mems &&
    test_cmp $1.cpus $1.effective &&
    grep "^pin: task 0 on $(hostname): policy=.* cpus=$(cat $1.cpus) mems=$(cat $1.mems)" $1.err
}

# run_task NAME SRUN-ARGS...: run one task that records its view.
run_task () {
    name=$1
    shift
    srun "$@" sh -c "cat /proc/self/status >$name.status; \
        cut -d: -f3 /proc/self/cgroup >$name.cgroup; \
        cat /sys/fs/cgroup\$(cat $name.cgroup)/cpuset.cpus.effective >$name.effective" \
        2>$name.err
}

test_expect_success 'Slurm in cgroup mode with pin.so' '
    vm_slurm_require cgroup &&
    mkdir -p $STATE &&
    cat >$STATE/pin.conf <<-EOF &&
	StateDir=$STATE/state
	TopologyCache=$STATE/topology.xml
	EOF
    echo "required $PIN_SO conf=$STATE/pin.conf" >$VM_SLURM_DIR/etc/plugstack.conf &&
    srun --pin-policy=none true
'

test_expect_success 'numa-local -c 4, one thread per core: 4 cores of one NUMA node, its memory' '
    run_task nl --pin-policy=numa-local,verbose -n1 -c4 --hint=nomultithread &&
    cat nl.err &&
    check_task nl &&
    test "$(vm_pus "$(cat nl.cpus)")" = 4 &&
    test "$(vm_cores "$(cat nl.cpus)")" = 4 &&
    grep -E "^/system\.slice/.*_slurmstepd\.scope/job_[0-9]+/step_0/user/task_0$" nl.cgroup &&
    case $(cat nl.mems) in
        0) grep -E "^[0-7](,[0-7])*$" nl.cpus ;;
        1) grep -E "^([89]|1[0-5])(,([89]|1[0-5]))*$" nl.cpus ;;
        *) false ;;
    esac
'

test_expect_success 'cache-shared -c 4: two whole cores, both threads' '
    run_task cs --pin-policy=cache-shared,verbose -n1 -c4 &&
    cat cs.err &&
    check_task cs &&
    test "$(vm_pus "$(cat cs.cpus)")" = 4 &&
    test "$(vm_cores "$(cat cs.cpus)")" = 2
'

test_expect_success 'two tasks of a step: disjoint cpusets' '
    srun --pin-policy=numa-local,verbose -n2 -c2 -l grep Cpus_allowed_list /proc/self/status \
        >two.out 2>two.err &&
    cat two.out two.err &&
    sed -n "s/^0: Cpus_allowed_list:[[:space:]]*//p" two.out >t0 &&
    sed -n "s/^1: Cpus_allowed_list:[[:space:]]*//p" two.out >t1 &&
    test "$(vm_pus "$(cat t0)")" = 2 &&
    test "$(vm_pus "$(cat t1)")" = 2 &&
    test "$(vm_pus "$(cat t0),$(cat t1)")" = 4
'

test_expect_success 'three concurrent --overlap steps of a whole-node job: disjoint, enforced' '
    cat >step.sh <<-\EOF &&
	#!/bin/sh
	cat /proc/self/status >ov$1.status
	cut -d: -f3 /proc/self/cgroup >ov$1.cgroup
	cat /sys/fs/cgroup$(cat ov$1.cgroup)/cpuset.cpus.effective >ov$1.effective
	touch up.$1
	n=0
	while ! test -e release && test $n -lt 1200; do sleep 0.1; n=$((n + 1)); done
	EOF
    cat >pilot.sh <<-\EOF &&
	#!/bin/sh
	for i in 1 2 3; do
	    srun --overlap -n1 -c4 --pin-policy=numa-local,verbose ./step.sh $i 2>ov$i.err &
	done
	n=0
	while { ! test -e up.1 || ! test -e up.2 || ! test -e up.3; } && test $n -lt 2400; do
	    sleep 0.1; n=$((n + 1))
	done
	touch release
	wait
	EOF
    chmod +x step.sh pilot.sh &&
    jobid=$(sbatch --parsable --exclusive -N1 -n1 -c16 -o pilot.out pilot.sh) &&
    n=0 &&
    while test -n "$(squeue -h -j $jobid)" && test $n -lt 3000; do
        sleep 0.2; n=$((n + 1))
    done &&
    cat pilot.out ov1.err ov2.err ov3.err &&
    check_task ov1 && check_task ov2 && check_task ov3 &&
    test "$(vm_pus "$(cat ov1.cpus),$(cat ov2.cpus),$(cat ov3.cpus)")" = 12
'

test_expect_success 'nothing of ours is left: claims, task cgroups' '
    n=0 &&
    while test -n "$(ls $STATE/state/claims)" && test $n -lt 100; do
        sleep 0.2; n=$((n + 1))
    done &&
    ls $STATE/state/claims >claims &&
    test_must_be_empty claims &&
    find /sys/fs/cgroup/system.slice -name "job_*" >left &&
    test_must_be_empty left
'

test_done
GUEST
chmod +x pin-spank-guest.sh

test_expect_success 'boot the guest and run pin.so there' '
    "$RUN_GUEST" --builddir "$PIN_BUILDDIR" --share "$SHARE/out" pin-spank-guest.sh -v \
        >guest.out 2>guest.err;
    echo $? >guest.rc &&
    cat guest.out &&
    grep "^1\.\." guest.out &&
    sed -n "s/^ok [0-9]* - //p" guest.out >guest.ok
'

for title in \
    "Slurm in cgroup mode with pin.so" \
    "numa-local -c 4, one thread per core: 4 cores of one NUMA node, its memory" \
    "cache-shared -c 4: two whole cores, both threads" \
    "two tasks of a step: disjoint cpusets" \
    "three concurrent --overlap steps of a whole-node job: disjoint, enforced" \
    "nothing of ours is left: claims, task cgroups"
do
    test_expect_success "guest: $title" "
        grep -F -x -e '$title' guest.ok
    "
done

test_expect_success 'the guest script passed as a whole' '
    test "$(cat guest.rc)" = 0
'

test_done
