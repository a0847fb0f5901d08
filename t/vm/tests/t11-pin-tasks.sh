#!/bin/sh
# vm-slurm-modes: cgroup affinity
# shellcheck disable=SC2016,SC2034,SC1091  # sharness: test bodies are single-quoted

test_description='pin.so in the guest: two tasks of a step, each placed by the rules

srun -n 2 -c 4 with numa-local and numa-spread (--hint=nomultithread: Slurm
gives 8 whole cores, the whole node) and cache-shared (Slurm gives 4 whole
cores, 0-7), in both Slurm modes (random: t12).  Each task'"'"'s
CPUs and mems, as /proc and its cgroup report them, are the ones
doc/policies.md prescribes (block order: task 1 is placed on what task 0
left), slurm-pin plan agrees, the tasks are disjoint, and hwloc-calc
confirms each policy'"'"'s properties.'

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

test_expect_success "Slurm ($mode mode) with pin.so" '
    vm_pin_require "$mode"
'

# The placements the rules give on this machine (2 nodes x 4 cores x 2
# threads, siblings adjacent) for -n 2 -c 4 on what Slurm allocates:
#  numa-local: task 0 takes one PU of each core of node 0 (level 1, lowest
#    node on a tie); task 1 prefers node 1, whose units are all clean
#    (tier 0), over the free siblings in node 0.
#  numa-spread: each task 2 + 2 over the nodes, one PU per core; task 1 on
#    the next free cores.
#  cache-shared (on 0-7): task 0 fills cores 0 and 1, task 1 cores 2 and 3.
cat >expect.numa-local <<EOF
task 0: cpus=0,2,4,6 mems=0
task 1: cpus=8,10,12,14 mems=1
EOF
cat >expect.numa-spread <<EOF
task 0: cpus=0,2,8,10 mems=0-1
task 1: cpus=4,6,12,14 mems=0-1
EOF
cat >expect.cache-shared <<EOF
task 0: cpus=0-3 mems=0
task 1: cpus=4-7 mems=0
EOF

# check_props POLICY CPUS MEMS: the policy's rule, checked with hwloc-calc.
check_props ()
{
    test "$(vm_hw_count pu "$2")" = 4 || return 1
    case $1 in
        numa-local)
            test "$(vm_hw_count core "$2")" = 4 &&
            test "$(vm_hw_count numa "$2")" = 1 &&
            test "$(vm_hw_numa "$2")" = "$(vm_hw_nodes "$3")" ;;
        numa-spread)
            test "$(vm_hw_count core "$2")" = 4 &&
            test "$(vm_hw_in numa 0 "$2")" = 2 &&
            test "$(vm_hw_in numa 1 "$2")" = 2 &&
            test "$(vm_hw_nodes "$3")" = 0,1 ;;
        cache-shared)
            test "$(vm_hw_count core "$2")" = 2 &&
            vm_hw_whole_cores "$2" &&
            test "$(vm_hw_count numa "$2")" = 1 &&
            test "$(vm_hw_numa "$2")" = "$(vm_hw_nodes "$3")" ;;
    esac
}

# POLICY:SRUN-OPTION:WHAT-SLURM-ALLOCATES
for request in numa-local:--hint=nomultithread:0-15 \
               numa-spread:--hint=nomultithread:0-15 \
               cache-shared::0-7; do
    policy=${request%%:*}
    hint=${request#*:}
    hint=${hint%:*}
    alloc=${request##*:}
    test_expect_success "$policy -n 2 -c 4 $hint: run" '
        start=$(vm_now) &&
        srun --pin-policy=$policy,verbose $hint -n 2 -c 4 \
            sh -c "$VM_PROBE" >$policy.out 2>$policy.err &&
        vm_record_time "t11: srun $policy -n 2 -c 4 ($mode)" "$start" &&
        cat $policy.out $policy.err
    '

    test_expect_success "$policy -n 2 -c 4: /proc of each task as the rules say" '
        vm_probe_tasks $policy.out >kernel &&
        test_cmp expect.$policy kernel
    '

    test_expect_success "$policy -n 2 -c 4: each task's cgroup effective cpuset the same" '
        vm_probe_tasks $policy.out cg_cpus cg_mems >cgroup &&
        test_cmp expect.$policy cgroup &&
        for t in 0 1; do
            case $mode in
                cgroup) vm_probe_field $policy.out $t cg | grep -E "^/system\.slice/node1_slurmstepd\.scope/$VM_JOBDIR_RE/step_0/user/task_$t\$" ;;
                affinity) vm_probe_field $policy.out $t cg | grep -E "^/$VM_PIN_BASE/job_[0-9]+/step_0/task_$t\$" ;;
            esac || return 1
        done
    '

    test_expect_success "$policy -n 2 -c 4: slurm-pin plan and the verbose lines agree" '
        vm_plan $policy 2 4 $alloc >plan &&
        test_cmp expect.$policy plan &&
        vm_verbose_tasks $policy.err >verbose &&
        test_cmp expect.$policy verbose
    '

    test_expect_success "$policy -n 2 -c 4 (hwloc-calc): the rule holds, tasks disjoint" '
        t0=$(vm_probe_field $policy.out 0 cpus) &&
        t1=$(vm_probe_field $policy.out 1 cpus) &&
        check_props $policy "$t0" "$(vm_probe_field $policy.out 0 mems)" &&
        check_props $policy "$t1" "$(vm_probe_field $policy.out 1 mems)" &&
        test "$(vm_hw_count pu "$t0,$t1")" = 8
    '

    if test "$mode" = cgroup; then
        test_expect_success "$policy -n 2 -c 4 $hint: Slurm gave the step $alloc" '
            echo $alloc >expect &&
            vm_probe_field $policy.out 0 step_cpus >actual &&
            test_cmp expect actual
        '
    fi
done

test_done
