#!/bin/sh

test_description='slurm-pin acct side by side with the real sacct

Runs real jobs (a batch job with steps, an array job) on a private Slurm
with slurmdbd (local-slurm.sh --accounting) and pin.so, sends the nodes'"'"'
records to slurmdbd (slurm-pin acct --deliver), and compares what sacct
and slurm-pin acct print for the same options: -P, -p, -n, the
fixed-width default, %N widths, and the top-level keys of --json.  The
job'"'"'s own fields (JobID, JobName, User, AllocCPUS, Elapsed, State) must
be equal.  slurm-pin acct reads slurmdbd here (the cluster'"'"'s slurm.conf
has AccountingStorageType=accounting_storage/slurmdbd), the journal with
--journal.
'

. "$(dirname "$0")/sharness.sh"

# not beside the other heavy files (t/sharness.d/20-cpus.sh): MariaDB and
# slurmdbd starting, or steps timed, starve under t5000's busy threads
cpu_heavy_exclusive || exit 1

# slurm-pin acct is part of slurm-pin: its absence is a failure, not a skip
if ! slurm-pin acct --help >/dev/null 2>&1; then
    echo "Bail out! slurm-pin acct --help fails: the slurm-pin under test has no acct"
    EXIT_OK=t
    exit 1
fi

slurm_require_accounting
pin_so_prereq
test -x /usr/bin/python3 && test_set_prereq PYTHON3

STATE=$(mktemp -d /tmp/pin-t4090.XXXXXX) || exit 1
cleanup "rm -rf '$STATE'"
JOURNAL=$STATE/journal
cat >pin.conf <<EOF
StateDir=$STATE/state
TopologyCache=$STATE/topology.xml
CgroupBase=slurm-pin-t4090-$$
JournalDir=$JOURNAL
DeliverCommand=none
EOF
echo "required $PIN_SO conf=@PIN_CONF@" >plugstack.conf

FIELDS=JobID,JobName,User,AllocCPUS,Elapsed,State

test_expect_success PIN_SO 'start Slurm with slurmdbd and pin.so' '
    slurm_start --accounting --plugstack plugstack.conf --pin-conf pin.conf
'

test_expect_success SLURM,PIN_SO 'run a batch job with steps and an array job' '
    b=$(sbatch --parsable --wait -c 1 --wrap "srun -n1 true; srun -n1 sleep 1") &&
    a=$(sbatch --parsable --wait -c 1 --array=1-3 --wrap "sleep 1") &&
    echo "$b" >job.batch &&
    echo "$a" >job.array &&
    n=$((PIN_SLURM_TIMEOUT * 2)) &&
    until test "$(sacct -j $b,$a -X -n -P -o State | grep -vc COMPLETED)" = 0; do
        n=$((n - 1)) && test $n -gt 0 && sleep 0.5 || return 1
    done &&
    slurm-pin acct --deliver --journal "$JOURNAL" --job "$b" &&
    slurm-pin acct --deliver --journal "$JOURNAL" -v >deliver.out &&
    cat deliver.out
'

test_expect_success SLURM,PIN_SO 'acct reads slurmdbd when slurm.conf says so, the journal with --journal' '
    slurm-pin acct -v -j $(cat job.batch) -n -P -o JobID >/dev/null 2>src.dbd &&
    cat src.dbd &&
    grep "records from slurmdbd (AccountingStorageType=accounting_storage/slurmdbd" src.dbd &&
    slurm-pin acct -v --journal "$JOURNAL" -j $(cat job.batch) -n -P -o JobID \
        >/dev/null 2>src.journal &&
    cat src.journal &&
    grep "records from journal $JOURNAL (--journal given)" src.journal &&
    slurm-pin acct -j $(cat job.batch) --json >src.json &&
    grep "\"source\": *\"slurmdbd\"" src.json
'

test_expect_success SLURM,PIN_SO 'eff reads slurmdbd too' '
    slurm-pin eff -v $(cat job.batch) >eff.out 2>eff.err &&
    cat eff.out eff.err &&
    grep "records from slurmdbd" eff.err &&
    grep "$(cat job.batch)" eff.out
'

# compare -j ID ARGS...: sacct and slurm-pin acct print the same, and
# not nothing: job ID is in it
compare () {
    sacct "$@" >sacct.out &&
    slurm-pin acct "$@" >pin.out &&
    test_cmp sacct.out pin.out &&
    grep -q "$2" pin.out
}

for opts in "-P" "-p" "-n -P" "-p --delimiter=;" "" "-n"; do
    test_expect_success SLURM,PIN_SO "same output: -o $FIELDS $opts (batch job)" "
        compare -j \$(cat job.batch) -o $FIELDS $opts
    "
    test_expect_success SLURM,PIN_SO "same output: -o $FIELDS $opts (array job)" "
        compare -j \$(cat job.array) -o $FIELDS $opts
    "
done

test_expect_success SLURM,PIN_SO 'same output with %N widths' '
    compare -j $(cat job.batch) -o JobID%-15,JobName%5,User%4,AllocCPUS%3,Elapsed%12,State%-4
'

test_expect_success SLURM,PIN_SO 'numbered steps are named by their command (from slurmdbd), as in sacct' '
    b=$(cat job.batch) &&
    slurm-pin acct -j $b -n -P -o JobID,JobName >names.out &&
    cat names.out &&
    grep -x "$b.0|true" names.out &&
    grep -x "$b.1|sleep" names.out &&
    grep -x "$b.batch|batch" names.out
'

test_expect_success SLURM,PIN_SO,PYTHON3 'same top-level --json keys' '
    sacct -j $(cat job.batch) --json >sacct.json &&
    slurm-pin acct -j $(cat job.batch) --json >pin.json &&
    /usr/bin/python3 -c "import json,sys; print(sorted(json.load(open(sys.argv[1]))))" sacct.json >keys.sacct &&
    /usr/bin/python3 -c "import json,sys; print(sorted(json.load(open(sys.argv[1]))))" pin.json >keys.pin &&
    test_cmp keys.sacct keys.pin
'

test_done
