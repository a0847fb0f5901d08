#!/bin/sh

test_description='slurm-pin profile: a reused pid brings no other program into the profile

A pid storm (t/profile/pidstorm.c: processes and threads created and
ended one after another, each new one given the lowest free pid of one
region through /proc/sys/kernel/ns_last_pid) runs beside a recorded
command that starts a known number of short children: every pid the
children get is taken by the storm again within microseconds, in the
same second.  The taskstats exit records of the storm must not be
paired with the children'"'"'s exits: the profile has exactly the
children (count, commands), no record of the storm, and every record
paired with an exit of the step.  Needs root and a C compiler; no Slurm.
'

. "$(dirname "$0")/sharness.sh"

# CPU-heavy: not beside t4000, t5000 or t6000 (t/sharness.d/20-cpus.sh)
cpu_heavy_exclusive || exit 1

if ! test_have_prereq ROOT; then
    skip_all='recording a profile needs root (proc connector)'
    test_done
fi

PY=/usr/bin/python3
test -x "$PY" && test_set_prereq PY
command -v "${CC:-cc}" >/dev/null 2>&1 && test_set_prereq CC
test -w /proc/sys/kernel/ns_last_pid && test_set_prereq NS_LAST_PID

# jget FILE EXPR: evaluate a Python expression on the JSON object in FILE
jget () {
    "$PY" -c 'import json, sys; j = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

slurm-pin profile --record probe.jsonl --interval 0 -- /bin/true 2>probe.err
if grep -q '"taskstats":true' probe.jsonl 2>/dev/null; then
    test_set_prereq TASKSTATS
elif test -n "${CI:-}"; then
    test_expect_success 'the proc connector and taskstats deliver events' '
        cat probe.err; false
    '
else
    say "no taskstats records here ($(cat probe.err)): skipped"
fi

N=200
ALL=TASKSTATS,PY,CC,NS_LAST_PID

test_expect_success $ALL 'build the storm; the step child is sleep under another name' '
    ${CC:-cc} -O2 -pthread -o pidstorm "$PIN_SRCDIR/t/profile/pidstorm.c" &&
    cp /bin/sleep stepchild
'

test_expect_success $ALL "record $N short children beside the pid storm" '
    rm -f stop-storm &&
    ./pidstorm stop-storm storm-pids.txt 300 >storm.out &
    storm=$! &&
    test_when_finished "touch stop-storm; wait $storm || :" &&
    sleep 1 &&
    slurm-pin profile --record reuse.jsonl --interval 200 -- sh -c "
        i=0
        while test \$i -lt $N; do ./stepchild 0.005 || exit 1; i=\$((i + 1)); done" &&
    touch stop-storm && wait $storm &&
    cat storm.out &&
    grep "ns_last_pid yes" storm.out &&
    slurm-pin profile --json reuse.jsonl >reuse.json &&
    slurm-pin profile reuse.jsonl >reuse.txt &&
    cat reuse.txt &&
    tail -n 1 reuse.jsonl >end.json &&
    cat end.json
'

# lost: what the recorder says it lost (proc connector and taskstats)
lost () {
    "$PY" -c 'import json, sys
j = json.load(open("end.json"))
print(j["lost_seq"] + j["enobufs"] + j["taskstats_enobufs"] + max(j["socket_drops"], 0) + j["untracked"])'
}

test_expect_success $ALL 'the storm took the children'"'"'s pids again' '
    "$PY" - reuse.jsonl storm-pids.txt <<-\EOF
	import json, sys
	lines = [json.loads(l) for l in open(sys.argv[1])]
	children = [l["pid"] for l in lines if l["type"] == "fork"]
	storm = {int(x) for x in open(sys.argv[2])}
	reused = [p for p in children if p in storm]
	print(len(children), "children on", len(set(children)), "pids;",
	      len(reused), "of them on a pid the storm also had")
	assert len(reused) >= len(children) // 2, "the storm did not reuse the pids"
	EOF
'

test_expect_success $ALL 'nothing of the storm in the profile' '
    ! grep pidstorm reuse.jsonl &&
    ! grep pidstorm reuse.txt
'

test_expect_success $ALL "exactly the step's processes: $N children and the root, by command" '
    echo "lost: $(lost)" &&
    got_p=$(jget reuse.json "j[\"processes_created\"]") &&
    got_x=$(jget reuse.json "j[\"process_exits\"]") &&
    got_r=$(jget reuse.json "j[\"taskstats\"][\"records\"]") &&
    cmds=$(jget reuse.json "sorted((c[\"command\"], c[\"processes\"]) for c in j[\"top_by_count\"])") &&
    echo "processes $got_p exits $got_x records $got_r commands $cmds" &&
    if test "$(lost)" -eq 0; then
        test "$got_p" -eq $N &&
        test "$got_x" -eq $((N + 1)) &&
        test "$got_r" -eq $((N + 1)) &&
        test "$cmds" = "[('"'"'sh'"'"', 1), ('"'"'stepchild'"'"', $N)]" &&
        test "$(jget end.json "j[\"taskstats_missing\"]")" -eq 0
    else
        say "events lost under load: $(lost); counts checked as bounds" &&
        test "$got_p" -le $N && test "$got_r" -le $((N + 1)) &&
        jget reuse.json "[c[\"command\"] for c in j[\"top_by_count\"]]" >cmds.out &&
        "$PY" -c "import ast, sys; assert set(ast.literal_eval(open(sys.argv[1]).read())) <= {\"sh\", \"stepchild\"}" cmds.out
    fi
'

test_expect_success $ALL 'every record is paired with an exit of the step: same pid, time and start' '
    "$PY" - reuse.jsonl <<-\EOF
	import json, sys
	lines = [json.loads(l) for l in open(sys.argv[1])]
	root = [l["pid"] for l in lines if l["type"] == "root"][0]
	known = {root}
	for l in lines:
	    if l["type"] == "fork":
	        assert l["ptgid"] in known, l
	        known.add(l["pid"])
	exits = {(l["pid"], l["t"]): l for l in lines if l["type"] == "exit"}
	for e in exits.values():
	    assert e["pid"] in known, e
	tasks = [l for l in lines if l["type"] == "task"]
	for r in tasks:
	    e = exits.get((r["pid"], r["t"]))
	    assert e, ("a record without its exit", r)
	    assert e["start"] == r["start"], (e, r)
	    assert r["tgid"] == r["pid"] and r["comm"] in ("sh", "stepchild"), r
	    # its elapsed time fits in the life of the task
	    assert r["etime_us"] * 1000 <= e["t"] - e["start"] + 10**9 or r["pid"] == root, (e, r)
	assert len({(r["pid"], r["t"]) for r in tasks}) == len(tasks), "an exit paired twice"
	print(len(tasks), "records,", len(exits), "exits, all of the step")
	EOF
'

test_done
