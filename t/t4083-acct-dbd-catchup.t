#!/bin/sh

test_description='accounting: catch-up deliveries (slurm-pin deliver without --job) of two nodes (issue 18)

A private Slurm with slurmdbd, MariaDB and two slurmd (local-slurm.sh
--accounting --nodes 2), pin.so with DeliverCommand=none: nothing is
sent at the jobs'"'"' ends. Each node'"'"'s records go to a journal of its own
(the two slurmd share one JournalDir on this machine), then:

- both nodes run a backlog delivery at the same instant: every job'"'"'s
  AdminComment holds both nodes'"'"' parts, each with every record of the
  node'"'"'s journal;
- one node alone runs a backlog delivery while the other has sent nothing:
  it does not wait --timeout a job (one deadline for the run), leaves
  those jobs unmarked (exit 1), and once the other node has delivered a
  later run of the first completes them (exit 0).
'

. "$(dirname "$0")/sharness.sh"

cpu_heavy_exclusive || exit 1

slurm_require_accounting
pin_so_prereq
PY=/usr/bin/python3
test -x $PY && test_set_prereq PYTHON3

NJOBS=${PIN_CATCHUP_JOBS:-40}
NLATE=10
SP="$PIN_BIN/slurm-pin"
STATE=$(mktemp -d /tmp/pin-t4083.XXXXXX) || exit 1
cleanup "rm -rf '$STATE'"
BASE=slurm-pin-t4083-$$
CGROOT=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
test -n "$CGROOT" && cleanup "find '$CGROOT/$BASE' -depth -type d -exec rmdir {} + 2>/dev/null"

# run_array N: N two-node jobs (an array); prints the array job id once
# every job ended and both nodes wrote each job's job record
run_array () {
    _a=$(timeout 60 sbatch --parsable -N2 -n2 -o /dev/null --array=1-$1 \
         --wrap "srun -N2 -n2 true") || return 1
    _end=$(($(date +%s) + 120 + $1 * 3))
    while test -n "$(timeout 10 squeue -h -o %i)"; do
        test "$(date +%s)" -lt $_end || return 1
        sleep 1
    done
    # slurmdbd learns of the ends a moment later
    until timeout 60 sacct -j $_a -X -n -P -o JobIDRaw,State >"st.$_a" &&
          test "$(grep -c -E "\|(COMPLETED|FAILED|CANCELLED)" "st.$_a")" -eq "$1"; do
        test "$(date +%s)" -lt $_end || return 1
        sleep 1
    done
    cut -d"|" -f1 "st.$_a" >"jobs.$_a"
    for _j in $(cat "jobs.$_a"); do
        acct_wait_records "$STATE/journal" kind=job job_id=$_j -- node >"n.$_j" &&
        test "$(sort -u "n.$_j" | wc -l)" -eq 2 || return 1
    done
    echo $_a
}

# split_journal JOBSFILE: each node's records of those jobs into
# $STATE/nj/NODE/journal (appended)
split_journal () {
    for _n in $(cat nodes); do
        mkdir -p -m 700 "$STATE/nj/$_n" &&
        for _j in $(cat "$1"); do
            grep -h -F --exclude="*.idx" "\"job_id\":$_j," "$STATE/journal"/journal* |
                grep -F "\"node\":\"$_n\"" >>"$STATE/nj/$_n/journal" || return 1
        done
    done
}

# check_parts JOBSFILE: every job's AdminComment holds each node's part,
# each with exactly the records that node's journal has of the job
check_parts () {
    timeout 60 sacct -j "$(paste -sd, "$1")" -X -n -P -o JobIDRaw,AdminComment >ac &&
    $PY - "$STATE/nj" ac "$1" <<-\EOF
	import base64, collections, gzip, json, os, sys
	nj, acfile, jobsfile = sys.argv[1:4]
	jobs = set(open(jobsfile).read().split())
	want = collections.defaultdict(dict)
	for node in os.listdir(nj):
	    for l in open(os.path.join(nj, node, "journal")):
	        r = json.loads(l)
	        if str(r["job_id"]) in jobs:
	            want[str(r["job_id"])].setdefault(node, []).append(json.dumps(r, sort_keys=True))
	bad = 0
	seen = set()
	for line in open(acfile):
	    job, ac = line.rstrip("\n").split("|", 1)
	    seen.add(job)
	    nodes = {}
	    if "slurm-pin/1:" in ac:
	        tok = ac[ac.index("slurm-pin/1:") + 12:].split(" ")[0]
	        nodes = json.loads(gzip.decompress(base64.b64decode(tok)))["nodes"]
	    if len(want[job]) != 2:
	        bad += 1
	        print("job %s: %d nodes in the journals" % (job, len(want[job])))
	    for node, recs in want[job].items():
	        if node not in nodes:
	            bad += 1
	            print("job %s: node %s part LOST" % (job, node))
	        elif sorted(json.dumps(r, sort_keys=True) for r in nodes[node]) != sorted(recs):
	            bad += 1
	            print("job %s: node %s: other records" % (job, node))
	if seen != jobs:
	    bad += 1
	    print("jobs not in sacct: %s" % sorted(jobs - seen))
	print("%d jobs, %d faults" % (len(seen), bad))
	sys.exit(1 if bad else 0)
	EOF
}

test_expect_success PIN_SO,PYTHON3 'start Slurm with slurmdbd, two nodes, pin.so, DeliverCommand=none' '
    {
        echo "CgroupBase=$BASE"
        echo "StateDir=$STATE/state"
        echo "TopologyCache=$STATE/topology.xml"
        echo "JournalDir=$STATE/journal"
        echo "DeliverCommand=none"
    } >pin.conf &&
    echo "required $PIN_SO conf=@PIN_CONF@" >plugstack.conf &&
    slurm_start --accounting --nodes 2 --plugstack plugstack.conf --pin-conf pin.conf &&
    timeout 30 sinfo -h -N -o "%N %t" >nodes.st &&
    test "$(grep -c " idle$" nodes.st)" -eq 2 &&
    cut -d" " -f1 nodes.st >nodes
'

test_expect_success SLURM,PIN_SO,PYTHON3 "$NJOBS two-node jobs, then both nodes catch up at the same instant" '
    a=$(run_array $NJOBS) &&
    split_journal jobs.$a &&
    n1=$(sed -n 1p nodes) && n2=$(sed -n 2p nodes) &&
    (
        "$SP" deliver -v --journal "$STATE/nj/$n1" --timeout 120 >out.1 2>err.1 &
        p1=$! &&
        "$SP" deliver -v --journal "$STATE/nj/$n2" --timeout 120 >out.2 2>err.2 &
        p2=$! &&
        { wait $p1; echo $? >rc.1; } && { wait $p2; echo $? >rc.2; }
    ) &&
    cat err.1 err.2 &&
    echo 0 >expect && test_cmp expect rc.1 && test_cmp expect rc.2 &&
    test "$(grep -c "delivered$" out.1)" -eq $NJOBS &&
    test "$(grep -c "delivered$" out.2)" -eq $NJOBS &&
    check_parts jobs.$a
'

test_expect_success SLURM,PIN_SO,PYTHON3 "one node catches up alone: no wait of --timeout a job, nothing marked, a later run completes" '
    b=$(run_array $NLATE) &&
    split_journal jobs.$b &&
    n1=$(sed -n 1p nodes) && n2=$(sed -n 2p nodes) &&
    t0=$(date +%s) &&
    test_expect_code 1 "$SP" deliver --journal "$STATE/nj/$n1" --timeout 5 >out 2>err &&
    t1=$(date +%s) &&
    cat err &&
    echo "$((t1 - t0))s for $NLATE jobs" &&
    test $((t1 - t0)) -lt $((NLATE * 5 - 10)) &&
    test "$(grep -c "node $n2.s part is not yet: kept for a later run" err)" -eq $NLATE &&
    for j in $(cat jobs.$b); do
        ! grep -q " $j $n1 " "$STATE/nj/$n1/delivered" || return 1
    done &&
    "$SP" deliver --journal "$STATE/nj/$n2" --timeout 60 &&
    "$SP" deliver -v --journal "$STATE/nj/$n1" --timeout 60 >out.again &&
    test "$(grep -c "delivered$" out.again)" -eq $NLATE &&
    check_parts jobs.$b
'

test_done
