#!/bin/sh

test_description='pin.so records the steps of a job killed at its time limit (issue 7)

A job with --time=1 whose step would run 5 minutes: Slurm kills it at
its time limit (slurmctld checks limits every 30 s or so, so this takes
one to two minutes; it is a file of its own so that make -j runs it
beside the others).  Its batch step and its numbered step still have
their records in the node journal, ended by Slurm'"'"'s signal (CANCELLED,
or FAILED with exit 143 when the shell saw its child die first: see
below), with the CPU time they used, and
slurm-pin acct lists them.
'

. "$(dirname "$0")/sharness.sh"

# not beside the other heavy files (t/sharness.d/20-cpus.sh): MariaDB and
# slurmdbd starting, or steps timed, starve under t5000's busy threads
cpu_heavy_exclusive || exit 1

slurm_require
pin_so_prereq

STATE=$(mktemp -d /tmp/pin-t4001.XXXXXX) || exit 1
cleanup "rm -rf '$STATE'"
J=$STATE/journal
PY=/usr/bin/python3
test -x $PY && test_set_prereq PYTHON3
R="$PY $PIN_SRCDIR/t/acct/records.py"
BATCH=4294967291

test_expect_success PIN_SO,PYTHON3 'start a cluster with pin.so' '
    {
        echo "CgroupBase=slurm-pin-t4001-$$"
        echo "StateDir=$STATE/state"
        echo "TopologyCache=$STATE/topology.xml"
        echo "JournalDir=$J"
    } >pin.conf &&
    echo "required $PIN_SO conf=@PIN_CONF@" >plugstack.conf &&
    slurm_start --plugstack plugstack.conf --pin-conf pin.conf
'

# the step: 6 s of CPU, then sleeps past the limit
cat >"$STATE/busy-then-sleep.sh" <<-\EOF
	#!/bin/sh
	timeout 6 sh -c "while :; do :; done"
	sleep 300
	EOF
chmod 755 "$STATE/busy-then-sleep.sh"

test_expect_success SLURM,PIN_SO,PYTHON3 'a job killed at its time limit ends as TIMEOUT' '
    job=$(sbatch --parsable -J limit -n1 -c1 --time=1 -o limit.out \
          --wrap "srun --pin-policy=numa-local $STATE/busy-then-sleep.sh") &&
    echo $job >jobid &&
    test_expect_code 1 slurm_wait_job $job 240 >state &&
    cat state &&
    grep TIMEOUT state
'

test_expect_success SLURM,PIN_SO,PYTHON3 'its numbered and batch steps have records, with the CPU they used' '
    job=$(cat jobid) &&
    acct_wait_records "$J" job_id=$job kind=job -- steps &&
    $R "$J" job_id=$job kind=step -- step_id policy state exit_status user_usec >recs &&
    cat recs &&
    acct_killed_record "$(grep "^0|" recs)" numa-local &&
    acct_killed_record "$(grep "^$BATCH|" recs)" none &&
    # the step burnt about 6 s of CPU before it slept
    awk -F"|" "\$1 == 0 { exit !(\$5 > 2000000) }" recs
'

test_expect_success SLURM,PIN_SO,PYTHON3 'slurm-pin acct lists the job and its steps' '
    job=$(cat jobid) &&
    slurm-pin acct --journal "$J" -j $job -n -P -o JobID,PinPolicy,State >acct.out &&
    cat acct.out &&
    grep -E "^$job\.batch\|none\|(CANCELLED|FAILED)\$" acct.out &&
    grep -E "^$job\.0\|numa-local\|(CANCELLED|FAILED)\$" acct.out
'

test_expect_success SLURM 'stop the cluster' '
    slurm_stop
'

test_done
