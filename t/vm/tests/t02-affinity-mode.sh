#!/bin/sh
# vm-slurm-modes: affinity
# shellcheck disable=SC2016,SC2034,SC1091  # sharness: test bodies are single-quoted

test_description='qemu test bed: Slurm in affinity mode (no Slurm cgroups)

The standalone mode of DESIGN.md: proctrack/linuxproc and task/affinity.
guest-run.sh starts it after the cgroup-mode tests, in the same boot, so
this also checks that the guest cluster switches modes.  Slurm binds the
tasks itself but makes no job or step cgroup.'

SHARNESS_TEST_SRCDIR=${PIN_SRCDIR:-/nonexistent}/t
SHARNESS_TEST_EXTENSION="sh"
export SHARNESS_TEST_SRCDIR SHARNESS_TEST_EXTENSION
if ! test -r "$SHARNESS_TEST_SRCDIR/sharness.sh"; then
    echo "1..0 # SKIP PIN_SRCDIR is not set: run this with t/vm/run-guest.sh"
    exit 0
fi
. "$SHARNESS_TEST_SRCDIR/sharness.sh"
. "$PIN_SRCDIR/t/vm/guest-lib.sh"

test_expect_success 'Slurm starts in affinity mode and the node is idle' '
    vm_slurm_require affinity &&
    scontrol show config >config &&
    grep -E "^ProctrackType += proctrack/linuxproc" config &&
    grep -E "^TaskPlugin += task/affinity\$" config &&
    sinfo -h -o "%t %c %z" >node &&
    echo "idle 16 2:4:2" >expect &&
    test_cmp expect node
'

test_expect_success 'srun -n 2 -c 4: tasks bound to 4 PUs each, disjoint' '
    start=$(vm_now) &&
    srun -n 2 -c 4 -l sh -c "grep -E \"^(Cpus|Mems)_allowed_list\" /proc/self/status; \
        echo cgroup \$(cut -d: -f3 /proc/self/cgroup)" >out &&
    vm_record_time "srun -n 2 -c 4 (affinity)" "$start" &&
    sort out >tasks &&
    vm_note "Slurm affinity mode, srun -n 2 -c 4: $(tr "\n\t" "; " <tasks)" &&
    sed -n "s/^0: Cpus_allowed_list:[[:space:]]*//p" tasks >t0 &&
    sed -n "s/^1: Cpus_allowed_list:[[:space:]]*//p" tasks >t1 &&
    test "$(vm_pus "$(cat t0)")" = 4 &&
    test "$(vm_pus "$(cat t1)")" = 4 &&
    test "$(vm_pus "$(cat t0),$(cat t1)")" = 8
'

test_expect_success 'no job or step cgroup holds the tasks' '
    sed -n "s/^[01]: cgroup //p" tasks >cgroups &&
    test "$(wc -l <cgroups)" = 2 &&
    test_must_fail grep -E "/job_[0-9]+" cgroups
'

test_done
