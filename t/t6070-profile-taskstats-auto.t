#!/bin/sh

test_description='slurm-pin profile --taskstats=auto: taskstats paused in a fork storm

A paced fork storm (bench/burst.c --rate) above the pause rate (2,000
exits/s over 100 ms) pauses taskstats (deregisters its CPU mask) and a
quiet second after it resumes it: the profile says so in "taskstats"
lines, and the end line counts the exits whose record was not asked
for, so that records + paused + missing = the exits of the step, and
every record still belongs to the exit it is written with.  A ~10 Hz
workload never pauses.  Needs root (proc connector, taskstats); no
Slurm.
'

. "$(dirname "$0")/sharness.sh"

cpu_heavy_exclusive || exit 1

if ! test_have_prereq ROOT; then
    skip_all='recording a profile needs root (proc connector)'
    test_done
fi

PY=/usr/bin/python3
test -x "$PY" && test_set_prereq PY
command -v "${CC:-cc}" >/dev/null 2>&1 && test_set_prereq CC

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

# check_counts FILE: the end line's taskstats counters add up to the
# exits of the profile, every task line is paired with an exit line of
# its pid at its time, and prints "records paused missing pauses" and the
# "taskstats" lines' states
check_counts () {
    "$PY" - "$1" <<-\PYEOF
	import json, sys
	lines = [json.loads(l) for l in open(sys.argv[1])]
	end = lines[-1]
	assert end["type"] == "end", end
	exits = {(l["pid"], l["t"]) for l in lines if l["type"] == "exit"}
	tasks = [l for l in lines if l["type"] == "task"]
	for t in tasks:
	    assert (t["pid"], t["t"]) in exits, ("record without its exit", t)
	rec, paused, missing = (end["taskstats_records"], end["taskstats_paused"],
	                        end["taskstats_missing"])
	assert rec == len(tasks), (rec, len(tasks))
	assert rec + paused + missing == len(exits), (rec, paused, missing, len(exits))
	lost = end["lost_seq"] + end["enobufs"] + end["socket_drops"] + end["untracked"]
	assert lost == 0, end
	states = [l["state"] for l in lines if l["type"] == "taskstats"]
	for l in lines:
	    if l["type"] == "taskstats":
	        assert l["why"].endswith(" exits/s"), l
	assert end["taskstats_pauses"] == states.count("paused"), (end, states)
	print(rec, paused, missing, end["taskstats_pauses"], " ".join(states))
	PYEOF
}

test_expect_success 'bad --taskstats value: exit 1, one line naming it' '
    test_expect_code 1 slurm-pin profile --record x.jsonl --taskstats=maybe \
        -- /bin/true >u.out 2>u.err &&
    test_must_be_empty u.out &&
    test "$(wc -l <u.err)" -eq 1 &&
    grep "^slurm-pin profile: --taskstats=maybe: expected auto, on or off" u.err
'

test_expect_success CC 'burst builds' '
    ${CC:-cc} -O2 -Wall -o burst "$PIN_SRCDIR/bench/burst.c"
'

ALL=TASKSTATS,PY,CC

test_expect_success $ALL 'a storm pauses taskstats and a quiet second resumes it' '
    slurm-pin profile --record storm.jsonl --interval 100 -- \
        sh -c "./burst --rate 8000 8000 >/dev/null; sleep 2; /bin/true" &&
    grep "\"taskstats_mode\":\"auto\"" storm.jsonl &&
    check_counts storm.jsonl >storm.counts &&
    cat storm.counts &&
    read rec paused missing pauses states <storm.counts &&
    test "$pauses" -ge 1 &&
    test "$paused" -gt 0 &&
    test "$rec" -gt 0 &&
    case "$states" in "paused resumed"*) ;; *) false ;; esac &&
    slurm-pin profile storm.jsonl >storm.sum &&
    grep "taskstats paused $pauses time" storm.sum &&
    grep "$paused ended tasks have no CPU time" storm.sum &&
    slurm-pin profile --json storm.jsonl >storm.json &&
    test "$("$PY" -c "import json,sys; print(json.load(open(sys.argv[1]))[\"taskstats\"][\"paused\"])" storm.json)" = "$paused"
'

test_expect_success $ALL '--taskstats=on: the same storm keeps every record' '
    slurm-pin profile --record on.jsonl --taskstats=on --interval 100 -- \
        ./burst --rate 8000 8000 >/dev/null &&
    grep "\"taskstats_mode\":\"on\"" on.jsonl &&
    check_counts on.jsonl >on.counts &&
    cat on.counts &&
    read rec paused missing pauses states <on.counts &&
    test "$pauses" = 0 && test "$paused" = 0 && test -z "$states" &&
    ! grep "\"type\":\"taskstats\"" on.jsonl
'

test_expect_success TASKSTATS,PY 'a ~10 Hz workload never pauses taskstats' '
    slurm-pin profile --record slow.jsonl --interval 100 -- \
        "$PY" "$PIN_SRCDIR/t/profile/workload.py" forks 20 0 0 >slow.out &&
    check_counts slow.jsonl >slow.counts &&
    cat slow.counts &&
    read rec paused missing pauses states <slow.counts &&
    test "$pauses" = 0 && test "$paused" = 0 && test "$missing" = 0 &&
    test "$rec" -ge 21 &&
    ! grep "\"type\":\"taskstats\"" slow.jsonl
'

test_expect_success PY '--taskstats=off and --no-taskstats: no taskstats at all' '
    slurm-pin profile --record off.jsonl --taskstats=off --interval 0 -- /bin/true &&
    grep "\"taskstats\":false" off.jsonl &&
    slurm-pin profile --record nt.jsonl --no-taskstats --interval 0 -- /bin/true &&
    grep "\"taskstats\":false" nt.jsonl
'

test_done
