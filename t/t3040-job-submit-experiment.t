#!/bin/sh

test_description='a policy experiment: enrolment at submission, arms in every step record

A private Slurm with slurmdbd (local-slurm.sh --accounting),
JobSubmitPlugins=pin and pin.so, and a pin.conf experiment with the arms
none and numa-local.  A batch of real jobs of two kinds (two job names,
two CPU counts) is submitted: every job is enrolled, each kind'"'"'s jobs
are split evenly over the arms (permuted blocks), the arm is in the
job'"'"'s AdminComment and Comment, each step ran its arm'"'"'s policy and
its record carries the experiment, the arm and the block.  A job giving
--pin-policy is not enrolled; a step giving it runs its own policy (the
report counts it as opted out).  slurm-pin experiment report reads the
same numbers from the journal and from slurmdbd.
'

. "$(dirname "$0")/sharness.sh"

cpu_heavy_exclusive || exit 1

slurm_require_accounting
pin_so_prereq
JS_DIR="$PIN_JS_DIR"
test -r "$JS_DIR/job_submit_pin.so" && test_set_prereq JS_SO
SLURM_PLUGINDIR=$(dirname "$(find /usr/lib -name job_submit_lua.so -path '*slurm*' 2>/dev/null | head -1)")
test -x /usr/bin/python3 && test_set_prereq PYTHON3

STATE=$(mktemp -d /tmp/pin-t3040.XXXXXX) || exit 1
cleanup "rm -rf '$STATE'"
JOURNAL=$STATE/journal
cat >pin.conf <<EOF
StateDir=$STATE/state
TopologyCache=$STATE/topology.xml
CgroupBase=slurm-pin-t3040-$$
JournalDir=$JOURNAL
DeliverCommand=none
AllowedPolicies=all
Experiment=t3040
ExperimentPolicies=none,numa-local
ExperimentSeed=3040
EOF
echo "required $PIN_SO conf=@PIN_CONF@" >plugstack.conf

test_expect_success JS_SO,PIN_SO 'start Slurm with slurmdbd, JobSubmitPlugins=pin and pin.so' '
    test -n "$SLURM_PLUGINDIR" &&
    slurm_start --accounting --plugstack plugstack.conf --pin-conf pin.conf \
        --conf-extra "PluginDir=$SLURM_PLUGINDIR:$JS_DIR" \
        --conf-extra JobSubmitPlugins=pin
'

# 8 jobs of each kind, interleaved; one job with its own policy; one
# enrolled job whose second step gives its own policy
test_expect_success JS_SO,PIN_SO 'submit a batch of jobs of two kinds' '
    : >jobs.a && : >jobs.b &&
    for i in 1 2 3 4 5 6 7 8; do
        sbatch --parsable -J kind-a -c 1 --wrap "srun -n1 true; srun -n1 true" >>jobs.a &&
        sbatch --parsable -J kind-b -c 2 --wrap "srun -n1 -c2 true" >>jobs.b ||
        return 1
    done &&
    sbatch --parsable -J own -c 1 --pin-policy=cache-shared --wrap "srun -n1 true" >job.own &&
    sbatch --parsable -J kind-c -c 1 --wrap "srun -n1 true; srun -n1 --pin-policy=cache-shared true" >job.optout &&
    cat jobs.a jobs.b job.own job.optout | paste -sd, >jobs.all &&
    n=$((PIN_SLURM_TIMEOUT * 6)) &&
    until test -z "$(squeue -h -j "$(cat jobs.all)" -o %i 2>/dev/null)"; do
        n=$((n - 1)) && test $n -gt 0 && sleep 0.5 || return 1
    done &&
    n=$((PIN_SLURM_TIMEOUT * 2)) &&
    until test "$(sacct -j "$(cat jobs.all)" -X -n -P -o State | grep -vc COMPLETED)" = 0; do
        n=$((n - 1)) && test $n -gt 0 && sleep 0.5 || return 1
    done
'

test_expect_success JS_SO,PIN_SO 'each kind is split evenly over the arms; the arm is in AdminComment and Comment' '
    for k in a b; do
        for j in $(cat jobs.$k); do
            sacct -j $j -X -n -P -o AdminComment >ac.out &&
            sed -n "s/.*pin-experiment=t3040\/\([a-z-]*\)\/[0-9a-f]\{16\}.*/\1/p" ac.out >>arms.$k &&
            scontrol show job $j >job.out 2>/dev/null || true
        done &&
        sort arms.$k | uniq -c >count.$k &&
        cat count.$k &&
        test "$(wc -l <arms.$k)" = 8 &&
        grep -x " *4 none" count.$k &&
        grep -x " *4 numa-local" count.$k || return 1
    done &&
    sacct -j "$(cat job.own)" -X -n -P -o AdminComment >own.ac &&
    ! grep pin-experiment own.ac &&
    h=$(sbatch --parsable --hold -J held -c 1 --wrap true) &&
    test_when_finished "scancel $h" &&
    scontrol show job $h >held.out &&
    cat held.out &&
    grep "Comment=pin: [a-z-]* (experiment t3040, arm [12] of 2; opt out with --pin-policy)" held.out &&
    grep "AdminComment=pin-experiment=t3040/[a-z-]*/[0-9a-f]\{16\}" held.out
'

# the journal, one line per record: job kind step policy experiment arm block
test_expect_success JS_SO,PIN_SO,PYTHON3 'every step record carries the experiment, its arm and block; steps ran the arm' '
    /usr/bin/python3 - "$JOURNAL" >records.out <<-\EOF &&
	import glob, json, sys
	for f in sorted(glob.glob(sys.argv[1] + "/journal*")):
	    if f.endswith(".idx"):  # the sidecar indexes: binary, not records
	        continue
	    for line in open(f):
	        r = json.loads(line)
	        if r["kind"] != "step" or r["step_id"] == 4294967292:
	            continue
	        print(r["job_id"], r["job_name"], r["step_id"], r["policy"],
	              r.get("experiment", "-"), r.get("arm", "-"), r.get("block", "-"))
	EOF
    cat records.out &&
    for j in $(cat jobs.a jobs.b); do
        arm=$(sacct -j $j -X -n -P -o AdminComment | sed -n "s/.*pin-experiment=t3040\/\([a-z-]*\)\/.*/\1/p") &&
        test -n "$arm" &&
        grep "^$j " records.out >mine.out &&
        test "$(wc -l <mine.out)" -ge 2 &&
        ! awk -v arm="$arm" "\$5 != \"t3040\" || \$6 != arm || \$4 != arm || \$7 !~ /^[0-9a-f]{16}\$/" mine.out | grep . ||
        return 1
    done &&
    blocks=$(for j in $(cat jobs.a); do grep "^$j " records.out; done | awk "{print \$7}" | sort -u | wc -l) &&
    test "$blocks" = 1 &&
    ba=$(grep "^$(head -1 jobs.a) " records.out | awk "{print \$7; exit}") &&
    bb=$(grep "^$(head -1 jobs.b) " records.out | awk "{print \$7; exit}") &&
    test "$ba" != "$bb" &&
    own=$(cat job.own) &&
    grep "^$own " records.out >own.out &&
    awk "\$4 != \"cache-shared\" || \$5 != \"-\"" own.out >bad.out &&
    test_must_be_empty bad.out &&
    o=$(cat job.optout) &&
    grep "^$o kind-c 1 cache-shared t3040 " records.out &&
    arm=$(grep "^$o kind-c 0 " records.out | awk "{print \$6}") &&
    grep "^$o kind-c 0 $arm t3040 $arm " records.out
'

test_expect_success JS_SO,PIN_SO 'acct -o Experiment,Arm shows them' '
    j=$(head -1 jobs.a) &&
    slurm-pin acct --journal "$JOURNAL" -j $j -n -P -o JobID,PinPolicy,Experiment,Arm >acct.out &&
    cat acct.out &&
    grep "^$j\.0|[a-z-]*|t3040|[a-z-]*$" acct.out
'

test_expect_success JS_SO,PIN_SO,PYTHON3 'experiment report: the same from the journal and from slurmdbd' '
    slurm-pin acct --deliver --journal "$JOURNAL" >deliver.out &&
    slurm-pin experiment report t3040 --journal "$JOURNAL" -S 2020-01-01 --json >rep.journal &&
    slurm-pin experiment report t3040 -S 2020-01-01 --json >rep.dbd &&
    slurm-pin experiment report t3040 -S 2020-01-01 >rep.txt &&
    cat rep.txt &&
    grep none rep.txt && grep numa-local rep.txt &&
    grep -i "too few" rep.txt &&
    for f in journal dbd; do
        /usr/bin/python3 -c "import json,sys
d = json.load(open(sys.argv[1]))
assert d[\"arms\"], \"no arms\"
for k in (\"source\", \"journal\", \"why\"):
    d.pop(k, None)
print(json.dumps(d, indent=1, sort_keys=True))" rep.$f >$f.json || return 1
    done &&
    test_cmp journal.json dbd.json
'

test_expect_success JS_SO,PIN_SO 'slurmctld and slurmd are alive' '
    scontrol ping | grep "is UP"
'

test_done
