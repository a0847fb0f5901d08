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
    cp /bin/sleep stepchild &&
    cp /bin/sleep pidthief
'

# The command of an exec is read from /proc/PID/comm when the recorder
# reads the exec event: a recorder that reads late (a loaded machine)
# may find the pid already another program's.  Made certain here: the
# step stops its recorder (its parent: slurm-pin, or slurmstepd), runs
# a child that ends at once, and a process outside the step, named
# pidthief, takes the child's pid (ns_last_pid) before the recorder is
# let go on.  The recorder must not say pidthief for the child.
#
# pid_thief DIR: the outside half (run in the background)
pid_thief () {
    pid_thief_ "$@" && return 0
    # failed: let the step's busy waits end (they wait for these two
    # files), so that the test fails instead of hanging
    test -s "$1/stopped" && kill -CONT "$(cat "$1/stopped")" 2>/dev/null
    echo 0 >>"$1/stopped"
    touch "$1/taken"
    return 1
}
pid_thief_ () {
    n=0
    while ! test -s "$1/rec.pid"; do
        n=$((n + 1)) && test $n -lt 3000 || return 1
        sleep 0.01
    done
    rec=$(cat "$1/rec.pid") &&
    kill -STOP "$rec" &&
    echo "$rec" >"$1/stopped" &&
    n=0 &&
    while ! test -s "$1/child.pid"; do
        n=$((n + 1)) && test $n -lt 3000 || return 1
        sleep 0.01
    done
    c=$(cat "$1/child.pid") &&
    n=0 &&
    while :; do
        echo $((c - 1)) >/proc/sys/kernel/ns_last_pid || return 1
        ./pidthief 120 &
        t=$!
        test "$t" = "$c" && break
        kill "$t"
        n=$((n + 1)) && test $n -lt 200 || return 1
    done
    echo "$t" >"$1/thief.pid" &&
    echo "$n" >"$1/tries" &&
    n=0 &&
    while test "$(cat /proc/$t/comm)" != pidthief; do
        n=$((n + 1)) && test $n -lt 3000 || return 1
        sleep 0.01
    done &&
    kill -CONT "$rec" &&
    touch "$1/taken"
}

# the step's half: no process but the child (busy waits, builtins only)
THIEF_STEP='echo $PPID >T/rec.pid
    while ! test -e T/stopped; do :; done
    ./stepchild 0 & c=$!
    wait $c
    echo $c >T/child.pid
    while ! test -e T/taken; do :; done'

# check_thief PROFILE DIR: nothing says pidthief; the child has its exec
# and exit, each with its command or its parent's (sh), and its record
# (if any) says stepchild
check_thief () {
    cat "$2/tries" &&
    c=$(cat "$2/child.pid") &&
    grep "\"pid\":$c," "$1" &&
    ! grep pidthief "$1" &&
    slurm-pin profile "$1" >"$1.txt" &&
    ! grep pidthief "$1.txt" &&
    "$PY" - "$1" "$c" <<-\EOF
	import json, sys
	lines = [json.loads(l) for l in open(sys.argv[1])]
	c = int(sys.argv[2])
	mine = [l for l in lines if l.get("pid") == c]
	kinds = sorted(l["type"] for l in mine)
	assert kinds in (["exec", "exit", "fork"], ["exec", "exit", "fork", "task"]), mine
	# a recorder stopped before it read the root'"'"'s exec reads it after the
	# child'"'"'s fork: the child then has the root'"'"'s command before its
	# exec (doc/profiling.md, "Commands"), slurm-pin or slurmstepd
	before = [l["comm"] for l in lines if l["type"] == "root"][0]
	for l in mine:
	    ok = ("stepchild",) if l["type"] == "task" else ("sh", "stepchild", before)
	    assert l["comm"] in ok, l
	print("the child", c, [(l["type"], l["comm"]) for l in mine])
	EOF
}

test_expect_success $ALL 'a late recorder: the command of a child whose pid was taken at once' '
    rm -rf T && mkdir T &&
    test_when_finished "kill -CONT \$(cat T/stopped) 2>/dev/null; kill \$(cat T/thief.pid) 2>/dev/null; :" &&
    { pid_thief T & } &&
    helper=$! &&
    slurm-pin profile --record thief.jsonl --interval 0 -- sh -c "$THIEF_STEP" &&
    wait $helper &&
    check_thief thief.jsonl T
'

test_expect_success $ALL "record $N short children beside the pid storm" '
    rm -f stop-storm &&
    { ./pidstorm stop-storm storm-pids.txt 300 >storm.out & } &&
    storm=$! &&
    test_when_finished "touch stop-storm; wait $storm || :" &&
    sleep 1 &&
    slurm-pin profile --record reuse.jsonl --interval 200 -- sh -c "
        i=0
        while test \$i -lt $N; do ./stepchild 0.005 || exit 1; i=\$((i + 1)); done" &&
    touch stop-storm && wait $storm &&
    cat storm.out &&
    grep "ns_last_pid yes" storm.out
'

# check_profile PROFILE STORMPIDS ROOTCMD: the checks of a profile
# recorded beside the storm (into PROFILE.*): the storm took the
# children's pids again; nothing of it is in the profile; exactly the N
# children (stepchild) and the root (ROOTCMD) by command, or bounds when
# the recorder says it lost events; every record paired with an exit of
# the step (the same pid, time and start) and with a life that fits.
check_profile () {
    slurm-pin profile --json "$1" >"$1.json" &&
    slurm-pin profile "$1" >"$1.txt" &&
    cat "$1.txt" &&
    tail -n 1 "$1" >"$1.end" &&
    cat "$1.end" &&
    ! grep pidstorm "$1" &&
    ! grep pidstorm "$1.txt" &&
    "$PY" - "$1" "$2" "$3" $N <<-\EOF
	import json, sys
	path, stormfile, rootcmd, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
	lines = [json.loads(l) for l in open(path)]
	end = lines[-1]
	summary = json.load(open(path + ".json"))
	if isinstance(summary, list):
	    summary = summary[0]
	lost = (end["lost_seq"] + end["enobufs"] + end["taskstats_enobufs"]
	        + max(end["socket_drops"], 0) + end["untracked"])
	# the storm took the pids of the children again
	children = [l["pid"] for l in lines if l["type"] == "fork"]
	storm = {int(x) for x in open(stormfile)}
	reused = [p for p in children if p in storm]
	print(len(children), "children on", len(set(children)), "pids;",
	      len(reused), "of them on a pid the storm also had; lost", lost)
	assert len(reused) >= n // 2, "the storm did not reuse the pids"
	# exactly the step's processes, by command
	cmds = sorted((c["command"], c["processes"]) for c in summary["top_by_count"])
	print("processes", summary["processes_created"], "exits",
	      summary["process_exits"], "records", summary["taskstats"]["records"],
	      "commands", cmds)
	assert {c for c, _ in cmds} <= {rootcmd, "stepchild"}, cmds
	if lost == 0:
	    assert summary["processes_created"] == n
	    assert summary["process_exits"] == n + 1
	    assert summary["taskstats"]["records"] == n + 1
	    assert cmds == sorted([(rootcmd, 1), ("stepchild", n)]), cmds
	    assert end["taskstats_missing"] == 0
	else:
	    print("events lost under load: counts checked as bounds")
	    assert summary["processes_created"] <= n
	    assert summary["taskstats"]["records"] <= n + 1
	# every record is paired with an exit of the step
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
	    assert r["tgid"] == r["pid"] and r["comm"] in (rootcmd, "stepchild"), r
	    # its elapsed time fits in the life of the task (not a root)
	    assert r["pid"] == root or r["etime_us"] * 1000 <= e["t"] - e["start"] + 10**9, (e, r)
	assert len({(r["pid"], r["t"]) for r in tasks}) == len(tasks), "an exit paired twice"
	print(len(tasks), "records,", len(exits), "exits, all of the step")
	# every other count of the summary: the step is one shell starting
	# its children one after another (no threads, at most 2 processes
	# alive, one child each 5 ms at most); the storm beside it made
	# threads and processes on the same pids thousands of times a second
	execs = [l for l in lines if l["type"] == "exec"]
	for x in execs:
	    assert x["pid"] in known and x["comm"] in (rootcmd, "stepchild", "sh"), x
	ts = summary["taskstats"]
	print("threads", summary["threads_created"], "thread exits",
	      summary["thread_exits"], "execs", summary["execs"], "peak",
	      summary["peak_processes"], summary["peak_tasks"], "fork rate",
	      summary["fork_rate_peak_per_s"], "ctxsw", ts["voluntary_ctxsw"],
	      ts["involuntary_ctxsw"], "cpu", ts["user_s"], ts["system_s"],
	      "duration", summary["duration_s"])
	assert summary["threads_created"] == 0 and summary["thread_exits"] == 0
	assert summary["execs"] == len(execs)
	assert summary["peak_processes"] <= 2 and summary["peak_tasks"] <= 2
	assert summary["fork_rate_peak_per_s"] <= 200
	assert summary["alive_at_end_processes"] == 0
	assert summary["alive_at_end_threads"] == 0
	# context switches and CPU time: the sums of the step's records
	assert ts["voluntary_ctxsw"] == sum(r["nvcsw"] for r in tasks)
	assert ts["involuntary_ctxsw"] == sum(r["nivcsw"] for r in tasks)
	cpu = sum(r["utime_us"] + r["stime_us"] for r in tasks)
	assert abs(ts["user_s"] + ts["system_s"] - cpu / 1e6) < 1e-6
	assert cpu / 1e6 <= summary["duration_s"] * 0.6, "more CPU than the step had"
	bycpu = {c["command"] for c in summary["top_by_cpu"]}
	assert bycpu <= {rootcmd, "stepchild"}, bycpu
	if lost == 0:
	    assert summary["execs"] in (n, n + 1), summary["execs"]
	# the samples: the tasks followed at each one
	for l in lines:
	    if l["type"] == "sample":
	        assert l["tracked_processes"] <= 2 and l["tracked_threads"] == 0, l
	        assert sum(l["procs"].values()) <= 2, l
	        assert sum(l["threads"].values()) <= 2, l
	print("threads, execs, peaks, fork rate, context switches, CPU time, samples: the step's only")
	EOF
}

test_expect_success $ALL 'the profile: the step exactly, nothing of the storm, each record its exit'"'"'s' '
    check_profile reuse.jsonl storm-pids.txt sh
'

# --- the same in a Slurm step (pin.so records in slurmstepd) ------------

_why=$(slurm_missing)
if test -n "${PIN_SKIP_SLURM:-}"; then
    say "local Slurm tests not run here (PIN_SKIP_SLURM: $PIN_SKIP_SLURM): the srun case is skipped"
elif test -z "$_why"; then
    test_set_prereq LOCAL_SLURM
elif test -n "${PIN_REQUIRE_SLURM:-}${CI:-}"; then
    test_expect_success 'a local Slurm can run here' 'echo "$_why"; false'
else
    say "local Slurm unavailable ($_why): the srun case is skipped"
fi
pin_so_prereq
STATE=$(mktemp -d /tmp/pin-t6040.XXXXXX) || exit 1
chmod 755 "$STATE"
cleanup "rm -rf '$STATE'"
PROF=$STATE/profile
SLURM_ALL=$ALL,LOCAL_SLURM,PIN_SO

test_expect_success $SLURM_ALL 'start a cluster with pin.so and ProfileDir' '
    cat >pin.conf <<-EOF &&
	StateDir=$STATE/state
	TopologyCache=$STATE/topology.xml
	JournalDir=$STATE/journal
	DeliverCommand=none
	ProfileDir=$PROF
	EOF
    echo "required $PIN_SO conf=@PIN_CONF@" >plugstack.conf &&
    slurm_start --plugstack plugstack.conf --pin-conf pin.conf &&
    echo "$LOCAL_SLURM_NODE" >node
'

test_expect_success $SLURM_ALL "srun --pin-profile: $N short children beside the pid storm" '
    rm -f stop-storm &&
    { ./pidstorm stop-storm storm-pids-srun.txt 300 >storm-srun.out & } &&
    storm=$! &&
    test_when_finished "touch stop-storm; wait $storm || :" &&
    sleep 1 &&
    srun --pin-profile=200ms -n1 -c1 sh -c "
        echo \$SLURM_JOB_ID >job.id
        i=0
        while test \$i -lt $N; do ./stepchild 0.005 || exit 1; i=\$((i + 1)); done" &&
    touch stop-storm && wait $storm &&
    cat storm-srun.out &&
    grep "ns_last_pid yes" storm-srun.out &&
    cp "$PROF/$(cat job.id).0.$(cat node).jsonl" srun.jsonl
'

test_expect_success $SLURM_ALL 'the step'"'"'s profile: the step exactly, nothing of the storm, each record its exit'"'"'s' '
    check_profile srun.jsonl storm-pids-srun.txt sh
'

test_expect_success $SLURM_ALL 'srun --pin-profile, a late recorder: the command of a child whose pid was taken at once' '
    rm -rf T && mkdir T &&
    test_when_finished "kill -CONT \$(cat T/stopped) 2>/dev/null; kill \$(cat T/thief.pid) 2>/dev/null; :" &&
    { pid_thief T & } &&
    helper=$! &&
    srun --pin-profile=200ms -n1 -c1 sh -c "echo \$SLURM_JOB_ID >T/job.id
        $THIEF_STEP" &&
    wait $helper &&
    cp "$PROF/$(cat T/job.id).0.$(cat node).jsonl" srun-thief.jsonl &&
    check_thief srun-thief.jsonl T
'

test_done
