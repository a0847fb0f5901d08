#!/bin/sh
# vm-slurm-modes: cgroup
# shellcheck disable=SC2016,SC2034,SC1091  # sharness: test bodies are single-quoted

test_description='accounting in nested mode: records from Slurm'"'"'s cgroup/v2 tree

Runs inside the qemu guest (t/vm/run-tests.sh) with Slurm'"'"'s cgroup/v2
(task/cgroup, proctrack/cgroup) and PrologFlags=Contain: a step keeping 2
CPUs busy under -c 2 has a record whose CPU numbers come from
.../job_<id>/step_<id>/user (mode nested, source step-cgroup) and agree
with the workload'"'"'s own count; the job'"'"'s node record comes from
Slurm'"'"'s job cgroup, read in the extern step (source job-cgroup).'

SHARNESS_TEST_SRCDIR=${PIN_SRCDIR:-/nonexistent}/t
SHARNESS_TEST_EXTENSION="sh"
export SHARNESS_TEST_SRCDIR SHARNESS_TEST_EXTENSION
if ! test -r "$SHARNESS_TEST_SRCDIR/sharness.sh"; then
    echo "1..0 # SKIP PIN_SRCDIR is not set: run this with t/vm/run-tests.sh"
    exit 0
fi
. "$SHARNESS_TEST_SRCDIR/sharness.sh"
. "$PIN_SRCDIR/t/vm/guest-lib.sh"

PY=/usr/bin/python3
W="$PY $PIN_SRCDIR/t/acct/workload.py"
R="$PY $PIN_SRCDIR/t/acct/records.py"
SCOPE='/sys/fs/cgroup/system\.slice/node1_slurmstepd\.scope'

test_expect_success 'start Slurm (cgroup mode, PrologFlags=Contain) with pin.so' '
    vm_pin_require cgroup --conf-extra PrologFlags=Contain &&
    test -n "$LOCAL_SLURM_JOURNAL"
'

# the cluster's journal: pin.conf's JournalDir (vm_pin_require)
J=${LOCAL_SLURM_JOURNAL:-/nonexistent}

test_expect_success 'a busy step under -c 2: record from step_<id>/user, nested, agrees with the workload' '
    job=$(sbatch --parsable -J vmbusy -n1 -c2 -o vmbusy.out --wrap \
          "srun --pin-policy=numa-local $W busy 2 5") &&
    slurm_wait_job $job &&
    cat vmbusy.out &&
    truth=$(sed -n "s/^cpu_usec=\([0-9]*\) .*/\1/p" vmbusy.out) &&
    acct_wait_records "$J" job_id=$job step_id=0 -- mode source cgroup user_usec system_usec eff >rec &&
    cat rec &&
    test "$(wc -l <rec)" -eq 1 &&
    IFS="|" read mode src cg u s eff <rec &&
    test "$mode" = nested && test "$src" = step-cgroup &&
    echo "$cg" | grep -E "^$SCOPE/$(vm_job_cgdir $job)/step_0/user\$" &&
    echo "$job" >busy.job &&
    diff=$(awk -v a=$((u + s)) -v b="$truth" "BEGIN { printf \"%.2f\", 100 * (a - b) / b }") &&
    vm_note "t30: busy step -c 2: record $((u + s)) us, workload $truth us ($diff %), efficiency $eff" &&
    awk -v d="$diff" "BEGIN { exit !(d <= 2 && d >= -2) }"
'

test_expect_success 'the job record comes from Slurm'"'"'s job cgroup, read in the extern step' '
    job=$(cat busy.job) &&
    $R "$J" job_id=$job -- kind step_id source cgroup user_usec &&
    acct_wait_records "$J" job_id=$job kind=job -- source cgroup user_usec >recj &&
    test "$(wc -l <recj)" -eq 1 &&
    IFS="|" read src cg u <recj &&
    test "$src" = job-cgroup &&
    echo "$cg" | grep -E "^$SCOPE/$(vm_job_cgdir $job)\$" &&
    step0=$($R "$J" job_id=$job step_id=0 -- user_usec) &&
    test "$u" -ge "$step0"
'

test_done
