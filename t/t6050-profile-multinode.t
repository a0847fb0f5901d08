#!/bin/sh

test_description='a step on two nodes: its profiles read and drawn from one place

A local cluster of two slurmd (local-slurm.sh --nodes 2) whose pin.conf
name one ProfileDir, as a shared file system would be on a real cluster
(doc/profiling.md, "A shared ProfileDir").  srun -N2 --pin-profile runs a
task on each node; each makes a known number of processes (node 1 two
more than node 0).  Each node must have written its own file
JOB.STEP.NODE.jsonl (root'"'"'s, a new inode, nothing else left in the
directory), and slurm-pin profile JOB and slurm-pin plot JOB, run from
anywhere that sees the directory, must merge them: a section per node
and their total; a panel per node, one time axis, a legend line per
series.  The io kind draws the step cgroup'"'"'s io.stat where the io
controller reaches the step, and says so where it does not.
'

. "$(dirname "$0")/sharness.sh"

slurm_require

pin_so_prereq
PY=/usr/bin/python3
if test -x "$PY"; then
    test_set_prereq PY
elif test -n "${CI:-}"; then
    test_expect_success '/usr/bin/python3 is installed' 'false'
fi
"$PY" -c "import PIL" 2>/dev/null && test_set_prereq PIL
ALL=PIN_SO,PY

# jget FILE EXPR: evaluate a Python expression on the JSON in FILE (j).
jget () {
    "$PY" -c 'import json, sys; j = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
# imgcheck IMAGE: what t/profile/imgcheck.py finds in IMAGE, into
# IMAGE.json (the palette from slurm-pin-plot(1)).
imgcheck () {
    "$PY" "$PIN_SRCDIR/t/profile/imgcheck.py" "$1" \
        "$PIN_SRCDIR/doc/man/slurm-pin-plot.1" >"$1.json"
}

STATE=$(mktemp -d /tmp/pin-t6050.XXXXXX) || exit 1
chmod 755 "$STATE"
cleanup "rm -rf '$STATE'"
PROF=$STATE/profile

test_expect_success PIN_SO 'start two slurmd whose pin.conf share one ProfileDir' '
    cat >pin.conf <<-EOF &&
	StateDir=$STATE/state
	TopologyCache=$STATE/topology.xml
	JournalDir=$STATE/journal
	DeliverCommand=none
	ProfileDir=$PROF
	EOF
    echo "required $PIN_SO conf=@PIN_CONF@" >plugstack.conf &&
    slurm_start --nodes 2 --plugstack plugstack.conf --pin-conf pin.conf &&
    echo "$LOCAL_SLURM_NODE $LOCAL_SLURM_NODE-2" >nodes
'
read NODE1 NODE2 <nodes 2>/dev/null

# Each task forks 3 + 2 * SLURM_NODEID true, a head that reads and writes
# 1 MiB and a sleep: 5 processes on the first node, 7 on the second (the
# exit at the end: no shell runs its last command without a fork).
test_expect_success SLURM,$ALL 'srun -N2 --pin-profile: a task on each node' '
    srun -N2 -n2 --ntasks-per-node=1 --pin-profile=200ms sh -c "
        test \$SLURM_PROCID = 0 && echo \$SLURM_JOB_ID >job.id
        i=0; while test \$i -lt \$((3 + 2 * SLURM_NODEID)); do
            /bin/true; i=\$((i + 1)); done
        head -c 1048576 /dev/zero >$STATE/io.\$SLURM_NODEID
        sleep 1
        exit 0" &&
    test -s job.id
'
job=$(cat job.id 2>/dev/null)

test_expect_success SLURM,$ALL 'each node wrote its own file, root'"'"'s, and nothing else' '
    ls -la "$PROF" &&
    for n in "$NODE1" "$NODE2"; do
        p="$PROF/$job.0.$n.jsonl" &&
        test -f "$p" && test ! -L "$p" &&
        test "$(stat -c %U "$p")" = root &&
        grep "\"type\":\"end\"" "$p" >/dev/null || return 1
    done &&
    ls -A "$PROF" | grep "^$job\.0\." >ours &&
    test "$(wc -l <ours)" -eq 2 &&
    ! ls -A "$PROF" | grep -v "\.jsonl$"
'

test_expect_success SLURM,$ALL 'profile JOB: a section per node, then the total' '
    slurm-pin profile --dir "$PROF" "$job" >sum.txt &&
    cat sum.txt &&
    grep "^step $job.0 on $NODE1\$" sum.txt &&
    grep "^step $job.0 on $NODE2\$" sum.txt &&
    grep "^step $job.0, total over 2 nodes\$" sum.txt &&
    slurm-pin profile --dir "$PROF" --json "$job" >sum.json &&
    test "$(jget sum.json "len(j)")" -eq 3 &&
    test "$(jget sum.json "j[2][\"total\"], j[2][\"nodes\"]")" = "(True, 2)" &&
    lost=$(jget sum.json "j[2][\"lost_events\"]") &&
    a=$(jget sum.json "j[0][\"processes_created\"]") &&
    b=$(jget sum.json "j[1][\"processes_created\"]") &&
    echo "processes: $a + $b, lost $lost" &&
    test "$(jget sum.json "j[2][\"processes_created\"]")" -eq $((a + b)) &&
    test "$(jget sum.json "j[2][\"roots\"]")" -eq 2 &&
    # the nodes are in name order, node 0 first
    if test "$lost" -eq 0; then
        test "$a" -eq 5 && test "$b" -eq 7 &&
        test "$(jget sum.json "[[c[\"processes\"] for c in e[\"top_by_count\"] if c[\"command\"] == \"true\"][0] for e in j[:2]]")" = "[3, 5]"
    else
        # events of the machine were lost (a busy machine): never more
        # than made, and said
        say "events lost under load: $lost; counts checked as bounds" &&
        test "$a" -le 5 && test "$b" -le 7 &&
        grep "^lost events  *[1-9]" sum.txt
    fi
'

test_expect_success SLURM,$ALL 'the total adds what taskstats measured on each node' '
    test "$(jget sum.json "j[2][\"task_records\"] == j[0][\"taskstats\"][\"records\"] + j[1][\"taskstats\"][\"records\"]")" = True &&
    test "$(jget sum.json "j[2][\"voluntary_ctxsw\"] == j[0][\"taskstats\"][\"voluntary_ctxsw\"] + j[1][\"taskstats\"][\"voluntary_ctxsw\"]")" = True &&
    test "$(jget sum.json "j[2][\"wchar\"] >= 2 * 1048576")" = True
'

test_expect_success SLURM,$ALL,PIL 'plot JOB: a panel per node, one legend line per series' '
    slurm-pin plot --dir "$PROF" "$job" --kind forks -o forks.svg &&
    imgcheck forks.svg &&
    cat forks.svg.json &&
    grep "\"$NODE1: events per second\"" forks.svg.json &&
    grep "\"$NODE2: events per second\"" forks.svg.json &&
    grep "job $job.0 on 2 nodes (a panel each)" forks.svg.json &&
    test "$(jget forks.svg.json "j[\"texts\"].count(\"process forks\")")" -eq 1
'

test_expect_success SLURM,$ALL,PIL 'plot JOB --kind gantt: every process of both nodes, node after node' '
    slurm-pin plot --dir "$PROF" "$job" --kind gantt -o gantt.svg &&
    imgcheck gantt.svg &&
    want=$(jget sum.json "j[2][\"processes_created\"] + j[2][\"roots\"]") &&
    echo "bars $(jget gantt.svg.json "j[\"bars\"]"), want $want" &&
    test "$(jget gantt.svg.json "j[\"bars\"]")" -eq "$want" &&
    slurm-pin plot --dir "$PROF" "$job" --node "$NODE2" --kind gantt \
        -o gantt2.svg &&
    imgcheck gantt2.svg &&
    test "$(jget gantt2.svg.json "j[\"bars\"]")" -eq \
        "$(jget sum.json "j[1][\"processes_created\"] + j[1][\"roots\"]")"
'

test_expect_success SLURM,$ALL 'plot JOB --kind io: drawn where io.stat was sampled, said where not' '
    n=$(cat "$PROF/$job".0.*.jsonl | grep -c "\"io_rbytes\":") || : &&
    echo "samples with io.stat: $n" &&
    if test "$n" -gt 0; then
        slurm-pin plot --dir "$PROF" "$job" --kind io -o io.svg &&
        grep "^I/O (cgroup)  *read .* (io.stat, [0-9]* samples)\$" sum.txt
    else
        test_expect_code 1 slurm-pin plot --dir "$PROF" "$job" --kind io \
            -o io.svg 2>io.err &&
        cat io.err &&
        grep "no samples of the step cgroup.s io.stat (no io controller delegated to it" io.err &&
        test ! -e io.svg &&
        test "$(grep -c "^I/O (cgroup)  *not recorded: the step.s cgroup has no io.stat" sum.txt)" -eq 2 &&
        grep "^I/O (cgroup)  *not recorded on any node\$" sum.txt
    fi
'

test_expect_success SLURM 'stop the cluster' '
    slurm_stop --clean
'

test_done
