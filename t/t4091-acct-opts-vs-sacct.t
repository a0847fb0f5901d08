#!/bin/sh

test_description='slurm-pin acct: sacct'"'"'s selection options and fields, side by side with sacct

Issue 22 item 5.  Real jobs on a private Slurm with slurmdbd and pin.so
(a batch job with steps, memory and a time limit; a failing job; a job
cancelled while it runs), the records delivered to slurmdbd: sacct and
slurm-pin acct must print the same text for -s, -b, --name, -r, -N, -A,
-M, -L, -D, -T, --units and the fields Account, MaxRSS, Submit,
Timelimit, ReqMem, NNodes, NodeList (steps too), QOS, Reason, read from
slurmdbd through libslurmdb; and the journal pin.so wrote must give the
job values (Account, QOS, Submit, Timelimit, ReqMem) sacct gives.
'

. "$(dirname "$0")/sharness.sh"

cpu_heavy_exclusive || exit 1

if ! slurm-pin acct --help >/dev/null 2>&1; then
    echo "Bail out! slurm-pin acct --help fails: the slurm-pin under test has no acct"
    EXIT_OK=t
    exit 1
fi

slurm_require_accounting
pin_so_prereq

STATE=$(mktemp -d /tmp/pin-t4091.XXXXXX) || exit 1
cleanup "rm -rf '$STATE'"
JOURNAL=$STATE/journal
cat >pin.conf <<EOF
StateDir=$STATE/state
TopologyCache=$STATE/topology.xml
CgroupBase=slurm-pin-t4091-$$
JournalDir=$JOURNAL
DeliverCommand=none
EOF
echo "required $PIN_SO conf=@PIN_CONF@" >plugstack.conf

test_expect_success PIN_SO 'start Slurm with slurmdbd and pin.so' '
    slurm_start --accounting --plugstack plugstack.conf --pin-conf pin.conf
'

test_expect_success SLURM,PIN_SO 'run a batch job with steps, a failing job, a cancelled job' '
    b=$(sbatch --parsable --wait -c 1 --mem=100 -t 7 -J optsjob \
        --wrap "srun -n1 true; srun -n1 sleep 1; srun -n1 python3 -c \"import time; x = bytearray(40 << 20); time.sleep(3)\"") &&
    f=$(sbatch --parsable -c 1 -t 2-00:00:00 -J failjob --wrap "sleep 1; exit 3") &&
    c=$(sbatch --parsable -c 1 -J canceljob --wrap "sleep 300") &&
    n=$((PIN_SLURM_TIMEOUT * 2)) &&
    until test "$(sacct -j $c -X -n -P -o State)" = RUNNING; do
        n=$((n - 1)) && test $n -gt 0 && sleep 0.5 || return 1
    done &&
    sleep 1 &&
    scancel $c &&
    echo "$b" >job.batch && echo "$f" >job.fail && echo "$c" >job.cancel &&
    n=$((PIN_SLURM_TIMEOUT * 2)) &&
    until test "$(sacct -j $b,$f,$c -X -n -P -o State | grep -vc -e COMPLETED -e FAILED -e CANCELLED)" = 0 \
        && test "$(sacct -j $b,$f,$c -X -n -P -o State | wc -l)" = 3; do
        n=$((n - 1)) && test $n -gt 0 && sleep 0.5 || return 1
    done &&
    # the epilogs write the job records (a job line is made from its
    # steps before that): wait for those of all three, which --deliver
    # needs
    n=$((PIN_SLURM_TIMEOUT * 2)) &&
    for j in $b $f $c; do
        until grep -q "\"kind\":\"job\",\"cluster\":\"[^\"]*\",\"job_id\":$j," "$JOURNAL"/journal*; do
            n=$((n - 1)) && test $n -gt 0 && sleep 0.5 || return 1
        done
    done &&
    slurm-pin acct --deliver --journal "$JOURNAL" -v >deliver.out &&
    cat deliver.out &&
    # slurmctld passes the summaries on to slurmdbd in its own time: wait
    # until slurmdbd has all three
    n=$((PIN_SLURM_TIMEOUT * 2)) &&
    until test "$(slurm-pin acct -j $b,$f,$c -X -n -P -o JobID 2>/dev/null | wc -l)" = 3; do
        n=$((n - 1)) && test $n -gt 0 && sleep 0.5 || return 1
    done
'

# compare ARGS...: sacct and slurm-pin acct print the same, and something
compare () {
    sacct "$@" >sacct.out 2>sacct.err || { cat sacct.err; return 1; }
    slurm-pin acct "$@" >pin.out 2>pin.err || { cat pin.err; return 1; }
    cat pin.out &&
    test_cmp sacct.out pin.out &&
    test -s pin.out
}

JOBS='$(cat job.batch),$(cat job.fail),$(cat job.cancel)'

test_expect_success SLURM,PIN_SO 'the new fields, from slurmdbd: job lines and steps' '
    compare -j '"$JOBS"' -P -o JobID,Account,QOS,Submit,Timelimit,ReqMem,NNodes,NodeList,Reason,State
'

test_expect_success SLURM,PIN_SO 'MaxRSS of the steps, and --units' '
    # the same text as sacct (blank where this private slurmd gathered
    # no MaxRSS: the conversion itself is in libacct/test/test_sacct.c)
    compare -j $(cat job.batch) -P -o JobID,MaxRSS &&
    compare -j $(cat job.batch) -P -o JobID,MaxRSS --units=K &&
    compare -j $(cat job.batch) -P -o JobID,ReqMem,MaxRSS --units=M &&
    compare -j $(cat job.batch) -P -o JobID,ReqMem --noconvert
'

test_expect_success SLURM,PIN_SO 'fixed width: the new fields'"'"' default widths' '
    compare -j '"$JOBS"' -X -o JobID,Account,QOS,Timelimit,ReqMem,NNodes,Reason
'

# the cancelled job's ExitCode is item 2 of issue 22 (t4110): not here
test_expect_success SLURM,PIN_SO '-b, --brief' '
    compare -j $(cat job.batch),$(cat job.fail) -b &&
    compare -j $(cat job.batch),$(cat job.fail) --brief -P -n
'

test_expect_success SLURM,PIN_SO '-s with -S and -E, with -j, without either' '
    compare -s CD,F -S now-1hours -E now -X -P -o JobID,State &&
    compare -s ca -S now-1hours -E now -X -P -o JobID,State &&
    compare -j '"$JOBS"' -s FAILED -X -P -o JobID,State &&
    sacct -s CD -X -n -P -o JobID >sacct.out &&
    slurm-pin acct -s CD -X -n -P -o JobID >pin.out &&
    test_cmp sacct.out pin.out
'

test_expect_success SLURM,PIN_SO '--name, -r, -A, -N' '
    compare -S now-1hours --name=optsjob,failjob -X -P -o JobID,JobName &&
    compare -S now-1hours -r debug -X -P -o JobID,Partition &&
    compare -S now-1hours -A "$(sacct -j $(cat job.batch) -X -n -P -o Account)" -X -P -o JobID,Account &&
    grep -q "^$(cat job.batch)|" pin.out &&
    compare -S now-1hours -A nosuchaccount,$(sacct -j $(cat job.fail) -X -n -P -o Account) -X -P -o JobID,Account &&
    compare -S now-1hours -N "$(sacct -j $(cat job.batch) -X -n -P -o NodeList)" -X -P -o JobID,NodeList &&
    sacct -S now-1hours -r nosuchpartition -X -n -P -o JobID >sacct.out &&
    slurm-pin acct -S now-1hours -r nosuchpartition -X -n -P -o JobID >pin.out &&
    test_must_be_empty sacct.out &&
    test_cmp sacct.out pin.out
'

test_expect_success SLURM,PIN_SO '-M, -L, -D, -T' '
    cl=$(sacct -j $(cat job.batch) -X -n -P -o Cluster) &&
    compare -j '"$JOBS"' -M "$cl" -X -P -o JobID,Cluster &&
    compare -j '"$JOBS"' -L -X -P -o JobID,Cluster &&
    compare -j '"$JOBS"' -D -X -P -o JobID,State &&
    compare -j $(cat job.batch) -T -S now-1hours -E now -P -o JobID,Start,End,Elapsed
'

test_expect_success SLURM,PIN_SO 'the journal pin.so wrote: the job values sacct has' '
    for j in $(cat job.batch) $(cat job.fail); do
        sacct -j $j -X -n -P -o JobID,Account,QOS,Submit,Timelimit,ReqMem >sacct.out &&
        slurm-pin acct --journal "$JOURNAL" -j $j -X -n -P \
            -o JobID,Account,QOS,Submit,Timelimit,ReqMem >pin.out &&
        cat pin.out &&
        test_cmp sacct.out pin.out || return 1
    done
'

test_done
