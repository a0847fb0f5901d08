#!/bin/sh

test_description='pin.so: what root writes comes from Slurm, never from the job environment

The job'"'"'s environment is the user'"'"'s: srun copies it into the step.
On a real local Slurm with two slurmd on this host (two node names),
PrologFlags=Contain, a node journal, ProfileDir and a partition whose
pin.conf line forces a policy, a job run by nobody with forged
SLURMD_NODENAME, SLURM_ARRAY_JOB_ID/SLURM_ARRAY_TASK_ID,
SLURM_CLUSTER_NAME, SLURM_JOB_USER, SLURM_JOB_UID and SLURM_JOB_PARTITION
gets records, a profile and pin.conf rules that name what Slurm knows:
the node it ran on, no array task, cluster pin, user nobody, its real
partition.  Every job is listed once by slurm-pin acct -X, its extern
step record included (issue 18, items 2 and 3).
'

. "$(dirname "$0")/sharness.sh"

slurm_require

pin_so_prereq
PY=/usr/bin/python3
test -x "$PY" && test_set_prereq PY
id nobody >/dev/null 2>&1 && test_set_prereq NOBODY
SLURM_PIN=$PIN_BIN/slurm-pin

# The state directory: nobody must reach ProfileDir to read its profile.
STATE=$(mktemp -d /tmp/pin-t2060.XXXXXX) || exit 1
chmod 755 "$STATE"
cleanup "rm -rf '$STATE'"
BASE=slurm-pin-t2060-$$
CGROOT=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
cleanup "rmdir '$CGROOT/$BASE' 2>/dev/null; true"
J=$STATE/journal
ALL=PIN_SO,PY,NOBODY

# rec JOB STEP EXPR: evaluate a Python expression on the record (r) of
# step STEP (a number, or "job" for the node's job line) of job JOB on
# node NODE (default: the first node), from the journal.
rec () {
    "$PY" - "$J/journal" "$@" <<-\PYEOF
	import json, sys
	path, job, step, expr = sys.argv[1:5]
	node = sys.argv[5] if len(sys.argv) > 5 else None
	found = []
	for line in open(path):
	    r = json.loads(line)
	    if r["job_id"] != int(job) or (node and r["node"] != node):
	        continue
	    if step == "job" and r["kind"] == "job" or \
	       step != "job" and r["kind"] == "step" and r["step_id"] == int(step):
	        found.append(r)
	if len(found) != 1:
	    sys.exit("job %s step %s node %s: %d records" % (job, step, node, len(found)))
	r = found[0]
	print(eval(expr))
	PYEOF
}

EXTERN=4294967292

test_expect_success $ALL 'start two slurmd with pin.so, PrologFlags=Contain, a forced partition' '
    cat >pin.conf <<-EOF &&
	CgroupBase=$BASE
	StateDir=$STATE/state
	TopologyCache=$STATE/topology.xml
	JournalDir=$J
	ProfileDir=$STATE/profile
	DeliverCommand=none
	Verbose=yes
	PartitionName=pilot ForcedPolicy=cache-shared
	EOF
    echo "required $PIN_SO conf=@PIN_CONF@" >plugstack.conf &&
    slurm_start --nodes 2 --plugstack plugstack.conf --pin-conf pin.conf \
        --conf-extra PrologFlags=Contain \
        --conf-extra "PartitionName=pilot Nodes=ALL MaxTime=INFINITE State=UP" &&
    NODE1=$LOCAL_SLURM_NODE && NODE2=$LOCAL_SLURM_NODE-2 &&
    echo "$NODE1 $NODE2" >nodes
'
read NODE1 NODE2 <nodes 2>/dev/null

# forged CMD...: run CMD as nobody in / with every identity variable forged
forged () {
    runuser -u nobody -- env -C / \
        SLURMD_NODENAME=evilnode SLURM_ARRAY_JOB_ID=7 SLURM_ARRAY_TASK_ID=3 \
        SLURM_CLUSTER_NAME=evilcluster SLURM_JOB_USER=root SLURM_JOB_UID=0 \
        SLURM_JOB_PARTITION=pilot "$@"
}

test_expect_success SLURM,$ALL 'forged variables, srun on each node: the records name what Slurm knows' '
    forged srun -N2 -n2 --pin-profile=200ms sh -c "echo \$SLURM_JOB_ID" \
        >srun.out 2>srun.err &&
    cat srun.err &&
    job=$(head -n1 srun.out) &&
    echo "$job" >job1 &&
    sleep 1 &&
    for n in "$NODE1" "$NODE2"; do
        test "$(rec $job 0 "r[\"node\"]" $n)" = "$n" &&
        test "$(rec $job 0 "r[\"cluster\"]" $n)" = pin &&
        test "$(rec $job 0 "r[\"user\"]" $n)" = nobody &&
        test "$(rec $job 0 "r[\"uid\"]" $n)" = "$(id -u nobody)" &&
        test "$(rec $job 0 "r[\"partition\"]" $n)" = debug &&
        test "$(rec $job 0 "r[\"array_job_id\"], r[\"array_task_id\"]" $n)" = "(4294967294, 4294967294)" &&
        test -s "$STATE/profile/$job.0.$n.jsonl" || return 1
    done &&
    ! grep -r evil "$J" "$STATE/profile" &&
    ! ls "$STATE/profile" | grep evil
'

test_expect_success SLURM,$ALL 'the profile header names the real node' '
    job=$(cat job1) &&
    "$PY" -c "import json, sys; print(json.loads(open(sys.argv[1]).readline())[\"node\"])" \
        "$STATE/profile/$job.0.$NODE2.jsonl" >hnode &&
    echo "$NODE2" >expect &&
    test_cmp expect hnode
'

test_expect_success SLURM,$ALL 'forged array ids: slurm-pin acct -j 7 lists no 7_3, the job is not an array task' '
    job=$(cat job1) &&
    "$SLURM_PIN" acct --journal "$J" -j 7 -n -P -o JobID >acct7.out &&
    ! grep "^7_3" acct7.out &&
    "$SLURM_PIN" acct --journal "$J" -j "$job" -X -n -P -o JobID,User,Partition >acctj.out &&
    echo "$job|nobody|debug" >expect &&
    test_cmp expect acctj.out
'

test_expect_success SLURM,$ALL 'a real array task keeps its array ids' '
    arr=$(sbatch --parsable -a 5 -n1 -o /dev/null --wrap "srun -n1 true") &&
    slurm_wait_job "${arr}_5" &&
    sleep 1 &&
    "$SLURM_PIN" acct --journal "$J" -j "${arr}_5" -n -P -o JobID >acctarr.out &&
    cat acctarr.out &&
    grep "^${arr}_5$" acctarr.out &&
    grep "^${arr}_5.0$" acctarr.out
'

test_expect_success SLURM,$ALL 'PrologFlags=Contain: every job once in acct -X, its extern record complete' '
    job=$(cat job1) &&
    "$SLURM_PIN" acct --journal "$J" -X -n -P -o JobID >acctx.out &&
    cat acctx.out &&
    test "$(grep -c "^$job$" acctx.out)" -eq 1 &&
    test -z "$(sort acctx.out | uniq -d)" &&
    for n in "$NODE1" "$NODE2"; do
        test "$(rec $job $EXTERN "r[\"cluster\"], r[\"user\"], r[\"partition\"]" $n)" = \
            "('"'"'pin'"'"', '"'"'nobody'"'"', '"'"'debug'"'"')" &&
        test "$(rec $job $EXTERN "r[\"job_name\"] != \"\"" $n)" = True || return 1
    done
'

test_expect_success SLURM,$ALL 'a forged SLURM_JOB_PARTITION does not choose pin.conf rules' '
    forged srun -p debug -n1 -c1 true 2>part1.err &&
    cat part1.err &&
    grep "^pin: task 0 on .*: policy=none " part1.err &&
    ! grep "policy=cache-shared" part1.err &&
    runuser -u nobody -- env -C / srun -p pilot -n1 -c1 true 2>part2.err &&
    grep "^pin: task 0 on .*: policy=cache-shared " part2.err &&
    job=$(sbatch --parsable -p debug -w "$NODE1" -n1 -c1 -o part3.out \
          --wrap "export SLURM_JOB_PARTITION=pilot; srun -n1 -c1 true") &&
    slurm_wait_job "$job" &&
    cat part3.out &&
    test "$(grep -c "^pin: task 0 on .*: policy=none " part3.out)" -eq 2 &&
    ! grep "policy=cache-shared" part3.out
'

test_expect_success SLURM,$ALL 'inside a batch job: a forged SLURMD_NODENAME and partition change nothing' '
    job=$(runuser -u nobody -- env -C / sbatch --parsable -p debug \
          -w "$NODE2" -n1 -c1 -o /dev/null --wrap "export SLURMD_NODENAME=evilnode SLURM_JOB_PARTITION=pilot SLURM_ARRAY_JOB_ID=7 SLURM_ARRAY_TASK_ID=3; srun -n1 -c1 true") &&
    slurm_wait_job "$job" &&
    sleep 1 &&
    test "$(rec $job 0 "r[\"node\"], r[\"policy\"], r[\"array_job_id\"]" $NODE2)" = \
        "('"'"'$NODE2'"'"', '"'"'none'"'"', 4294967294)" &&
    test "$(rec $job job "r[\"node\"], r[\"user\"]" $NODE2)" = \
        "('"'"'$NODE2'"'"', '"'"'nobody'"'"')"
'

test_done
