#!/bin/sh

test_description='the job epilog of pin.so: a job line when a slurmstepd was killed, no delivery without slurmdbd (issue 18)

On the real local Slurm without slurmdbd (no PrologFlags=Contain, so a
job run by srun alone has one step): a job whose only step lost its
slurmstepd to SIGKILL still gets its job record in the node journal, with
the state and start time slurmctld gives the ended job (the epilog asks
it, as slurmdbd has them), and slurm-pin acct lists the job; pin.conf names no DeliverCommand (the
default, the slurm-pin of the build'"'"'s bindir), and since slurm.conf has
no AccountingStorageType=accounting_storage/slurmdbd no delivery is
started: slurmd'"'"'s log has no DeliverCommand line after a job.  Then,
with PrologFlags=Contain: a job whose step and batch step lost their
slurmstepd (only the extern step left a record) has slurmctld'"'"'s state
(the extern step says nothing of the outcome: never its COMPLETED).
'

. "$(dirname "$0")/sharness.sh"

slurm_require
pin_so_prereq
PY=/usr/bin/python3
test -x $PY && test_set_prereq PYTHON3

STATE=$(mktemp -d /tmp/pin-t4002.XXXXXX) || exit 1
cleanup "rm -rf '$STATE'"
J=$STATE/journal
SP="$PIN_BIN/slurm-pin"
BASE=slurm-pin-t4002-$$
CGROOT=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
# the step whose slurmstepd is killed leaves its task's cgroup (nobody is
# left to remove it): removed here, after its task was killed
test -n "$CGROOT" && cleanup "find '$CGROOT/$BASE' -depth -type d -exec rmdir {} + 2>/dev/null"

test_expect_success PIN_SO,PYTHON3 'start a cluster without slurmdbd, pin.conf without DeliverCommand' '
    {
        echo "CgroupBase=$BASE"
        echo "StateDir=$STATE/state"
        echo "TopologyCache=$STATE/topology.xml"
        echo "JournalDir=$J"
    } >pin.conf &&
    echo "required $PIN_SO conf=@PIN_CONF@" >plugstack.conf &&
    slurm_start --plugstack plugstack.conf --pin-conf pin.conf &&
    ! grep -i "^DeliverCommand" "$SLURM_TEST_DIR/etc/pin.conf" &&
    ! grep "accounting_storage/slurmdbd" "$SLURM_CONF"
'

test_expect_success SLURM,PIN_SO,PYTHON3 'no slurmdbd: a job end starts no delivery and logs no DeliverCommand line' '
    j=$(timeout 60 sbatch --parsable --wrap "srun true") &&
    slurm_wait_job $j &&
    acct_wait_records "$J" kind=job job_id=$j -- state >rec &&
    test "$(wc -l <rec)" -eq 1 &&
    log="$SLURM_TEST_DIR/log/slurmd.log" &&
    # 26.05 logs "Launching batch JobId=N SLUID=...", before "job N"
    grep -E "Launching batch (job |JobId=)$j " "$log" &&
    ! grep -E "DeliverCommand|accounting not sent" "$log"
'

# stepd_pid JOB.STEP: the pid of that step'"'"'s slurmstepd of this cluster
# (other clusters on this machine have their own job 1, 2, ...: the one
# whose log is this cluster'"'"'s slurmd.log)
stepd_pid () {
    for _p in $(pgrep -f "^slurmstepd: \[$1\]"); do
        if ls -l "/proc/$_p/fd" 2>/dev/null | grep -q "$SLURM_TEST_DIR/log/slurmd"; then
            echo "$_p"
            return 0
        fi
    done
    return 1
}

# ctld_state JOB, ctld_start_us JOB: slurmctld'"'"'s base state and start
# time of an ended job (scontrol, within MinJobAge)
ctld_state () {
    scontrol show job "$1" -o | sed -n "s/.* JobState=\([A-Z_]*\).*/\1/p"
}
ctld_start_us () {
    _t=$(scontrol show job "$1" -o | sed -n "s/.* StartTime=\([0-9T:-]*\).*/\1/p") &&
    echo $(($(date -d "$_t" +%s) * 1000000))
}

test_expect_success SLURM,PIN_SO,PYTHON3 'a job whose only step lost its slurmstepd (SIGKILL) keeps its job line' '
    { timeout 120 srun -J stepd-killed sleep 301 >srun.out 2>&1 & } &&
    n=0 && j= &&
    while test -z "$j"; do
        j=$(timeout 10 squeue -h -n stepd-killed -t R -o %i) &&
        n=$((n + 1)) && test $n -lt 100 || return 1
        test -n "$j" || sleep 0.2
    done &&
    test_when_finished "timeout 10 scancel $j; wait" &&
    n=0 &&
    # the step'"'"'s slurmstepd and its task (forked a moment after it)
    until p=$(stepd_pid "$j.0") && tasks=$(pgrep -P $p | tr "\n" " ") &&
          test -n "$tasks"; do
        n=$((n + 1)) && test $n -lt 150 && sleep 0.2 || return 1
    done &&
    # its task outlives it (nobody is left to kill it): killed at the end
    test_when_finished "kill $tasks" &&
    kill -9 $p &&
    timeout 10 scancel $j &&
    { slurm_wait_job $j || true; } &&
    acct_wait_records "$J" kind=job job_id=$j -- steps state uid user >rec &&
    cat rec &&
    js=$(ctld_state $j) &&
    echo "0|$js|$(id -u)|$(id -un)" >expect &&
    test_cmp expect rec &&
    acct_wait_records "$J" kind=job job_id=$j -- start_us >rec &&
    test "$(cat rec)" -eq "$(ctld_start_us $j)" &&
    "$SP" acct --journal "$J" -j $j -n -P -o JobID,State >acct.out &&
    echo "$j|$js" >expect &&
    test_cmp expect acct.out &&
    grep "pin: job $j: no step of it left a record" "$SLURM_TEST_DIR/log/slurmd.log"
'

# a new journal: the new cluster's job ids start over
J2=$STATE/journal2
test_expect_success SLURM,PIN_SO,PYTHON3 'restart with PrologFlags=Contain (an extern step on every job)' '
    sed "s|^JournalDir=.*|JournalDir=$J2|" pin.conf >pin2.conf &&
    slurm_restart --plugstack plugstack.conf --pin-conf pin2.conf \
        --conf-extra PrologFlags=Contain
'

# The step'"'"'s and the batch step'"'"'s slurmstepd killed, then the job
# cancelled: only the extern step leaves a record, and it ends the same way
# whatever the job did, so the job line says what slurmctld says of the
# job (the epilog asks it: CANCELLED), never the extern step's COMPLETED.
test_expect_success SLURM,PIN_SO,PYTHON3 'a job whose steps but the extern one lost their slurmstepd: slurmctld'"'"'s state' '
    j=$(timeout 60 sbatch --parsable -n1 -o /dev/null --wrap "srun -n1 sleep 120") &&
    test_when_finished "timeout 10 scancel $j" &&
    n=0 &&
    until p=$(stepd_pid "$j.0") && tasks=$(pgrep -P $p | tr "\n" " ") &&
          test -n "$tasks"; do
        n=$((n + 1)) && test $n -lt 150 && sleep 0.2 || return 1
    done &&
    test_when_finished "kill $tasks 2>/dev/null; :" &&
    kill -9 $p &&
    sleep 2 &&
    b=$(stepd_pid "$j.batch") &&
    btasks=$(pgrep -P $b | tr "\n" " ") &&
    test_when_finished "kill $btasks 2>/dev/null; :" &&
    kill -9 $b &&
    sleep 2 &&
    timeout 10 scancel $j &&
    { slurm_wait_job $j || true; } &&
    acct_wait_records "$J2" kind=job job_id=$j -- steps state >rec &&
    cat rec &&
    js=$(ctld_state $j) &&
    test "$js" = CANCELLED &&
    echo "1|$js" >expect &&
    test_cmp expect rec &&
    "$SP" acct --journal "$J2" -j $j -X -n -P -o JobID,State >acct.out &&
    echo "$j|$js" >expect &&
    test_cmp expect acct.out
'

test_done
