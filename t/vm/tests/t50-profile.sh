#!/bin/sh
# vm-slurm-modes: cgroup
# shellcheck disable=SC2016,SC2034,SC1091  # sharness: test bodies are single-quoted

test_description='pin.so --pin-profile in the guest: the step profile under the real kernel

Runs inside the qemu guest (t/vm/run-tests.sh) in Slurm'"'"'s cgroup mode
(cgroup/v2 nested, cpuset controller).  A numa-local -c 2 step of
nobody runs t/profile/workload.py, which counts the processes, threads
and execs it makes; the profile pin.so records in slurmstepd must show
exactly those counts (or report its losses), name the CPUs the task got,
carry the step cgroup'"'"'s CPU time (growing) and memory in its samples,
and be root'"'"'s, mode 0640 with an ACL that lets nobody (the job'"'"'s
user) read it and nobody else (doc/security.md).  Then, on a cluster that does not
constrain cores (as t40), an over-using step with policy dynamic and
--pin-profile has exactly one confine line in its profile, with the CPUs
its stderr was told, at a time between the first and the last sample.'

SHARNESS_TEST_SRCDIR=${PIN_SRCDIR:-/nonexistent}/t
SHARNESS_TEST_EXTENSION="sh"
export SHARNESS_TEST_SRCDIR SHARNESS_TEST_EXTENSION
if ! test -r "$SHARNESS_TEST_SRCDIR/sharness.sh"; then
    echo "1..0 # SKIP PIN_SRCDIR is not set: run this with t/vm/run-tests.sh"
    exit 0
fi
. "$SHARNESS_TEST_SRCDIR/sharness.sh"
. "$PIN_SRCDIR/t/vm/guest-lib.sh"

PY=/usr/bin/python3
WORKLOAD=$PIN_SRCDIR/t/profile/workload.py
PROF=$VM_PIN_DIR/profile
# for the second cluster: its job ids begin at 1 again, and pin.so
# replaces a profile of the same JOB.STEP.NODE
PROF_DYN=$VM_PIN_DIR/profile-dynamic

# A directory the steps of nobody share with the test.
W=$(mktemp -d /tmp/pin-t50.XXXXXX) && chmod 1777 "$W" || exit 1
export W

# jget FILE EXPR: a Python expression on the JSON in FILE (j).
jget () {
    "$PY" -c 'import json, sys; j = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
# header FILE EXPR: the same on the first line of a profile (h).
header () {
    "$PY" -c 'import json, sys; h = json.loads(open(sys.argv[1]).readline()); print(eval(sys.argv[2]))' "$1" "$2"
}
# profile_of JOB STEP: the step's profile on this node.
profile_of () {
    echo "$PROF/$1.$2.$LOCAL_SLURM_NODE.jsonl"
}

# watcher_note JOB: the watcher's own cost, as slurmstepd logs it when the
# step ends (noted, not asserted: emulation inflates it).
watcher_note () {
    _n=0
    while ! grep -q "pin: step $1\.0: .*watcher CPU time" "$VM_SLURM_DIR/log/slurmd.log" &&
          test $_n -lt 20; do
        sleep 0.5
        _n=$((_n + 1))
    done
    vm_note "t50: $(sed -n "s/.*pin: step \($1\.0: .*watcher CPU time.*\)/\1/p" "$VM_SLURM_DIR/log/slurmd.log")"
}

# The task: no fork of its own before the exec (echo, read and case are
# built into sh), so the profile holds exactly what workload.py makes
# plus two execs (this script, python3).
cat >"$W/task.sh" <<EOF
#!/bin/sh
cd "$W" || exit 1
echo "\$SLURM_JOB_ID" >prof.job
while read -r k v; do
    case \$k in Cpus_allowed_list:) echo "\$v" >prof.cpus ;; esac
done </proc/\$\$/status
# the memory limit the task lives under, as the recorder should see it:
# the lowest memory.max from its cgroup up (builtins only, no fork)
lim=
while read -r l; do
    case \$l in 0::*) d=/sys/fs/cgroup\${l#0::} ;; esac
done </proc/\$\$/cgroup
while test -n "\$d" && test "\$d" != /sys/fs; do
    if read -r v <"\$d/memory.max" 2>/dev/null && test "\$v" != max; then
        if test -z "\$lim" || test "\$v" -lt "\$lim"; then lim=\$v; fi
    fi
    d=\${d%/*}
done
echo "\${lim:-max}" >prof.memmax
exec $PY $WORKLOAD forks 20 500 8
EOF

# An over-using step: 4 busy shells at nice 19 until its CPUs shrink to 2
# (at most 300 s), 2 s more (samples after the confinement), then done.
cat >"$W/overuse.sh" <<'EOF'
#!/bin/sh
cd "$W" || exit 1
echo "$SLURM_JOB_ID" >dyn.job
pids=
for i in 1 2 3 4; do
    nice -n 19 sh -c 'while :; do :; done' &
    pids="$pids $!"
done
i=0
while test "$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)" -gt 2 &&
      test $i -lt 600; do
    sleep 0.5
    i=$((i + 1))
done
sleep 2
kill $pids
wait
EOF
chmod 755 "$W/task.sh" "$W/overuse.sh"

test_expect_success 'Slurm (cgroup mode) with pin.so and ProfileDir' '
    vm_pin_require cgroup &&
    echo "ProfileDir=$PROF" >>"$PIN_CONF" &&
    grep "^ConstrainCores=yes" "$(dirname "$SLURM_CONF")/cgroup.conf"
'

test_expect_success 'numa-local -c 2 --pin-profile=200ms: the fork workload of nobody' '
    start=$(vm_now) &&
    runuser -u nobody -- srun --chdir="$W" --pin-profile=200ms \
        --pin-policy=numa-local -n 1 -c 2 "$W/task.sh" >workload.json &&
    vm_record_time "t50: profiled fork workload" "$start" &&
    job=$(cat "$W/prof.job") &&
    echo "$job" >job.id &&
    p=$(profile_of "$job" 0) &&
    ls -l "$p" &&
    slurm-pin profile --dir "$PROF" --json "$job.0" >summary.json &&
    slurm-pin profile --dir "$PROF" "$job" >summary.txt &&
    cat workload.json summary.txt &&
    watcher_note "$job"
'

# lost: the events the profile says it lost.
lost () {
    jget summary.json "j[0][\"lost\"][\"sequence_gaps\"] + j[0][\"lost\"][\"enobufs\"] + j[0][\"lost\"][\"socket_drops\"] + j[0][\"lost\"][\"untracked\"]"
}

test_expect_success 'processes, threads and execs: exactly what the workload made, or a loss reported' '
    test "$(jget summary.json "len(j)")" -eq 1 &&
    want_p=$(jget workload.json "j[\"processes\"]") &&
    want_t=$(jget workload.json "j[\"threads\"]") &&
    want_x=$(jget workload.json "j[\"execs\"] + 2") &&
    got_p=$(jget summary.json "j[0][\"processes_created\"]") &&
    got_t=$(jget summary.json "j[0][\"threads_created\"]") &&
    got_x=$(jget summary.json "j[0][\"execs\"]") &&
    got_e=$(jget summary.json "j[0][\"process_exits\"]") &&
    echo "processes $got_p/$want_p threads $got_t/$want_t execs $got_x/$want_x exits $got_e lost $(lost)" &&
    vm_note "t50: profile of the fork workload: processes $got_p/$want_p threads $got_t/$want_t execs $got_x/$want_x exits $got_e, lost $(lost), burst $(jget workload.json "round(j[\"burst_s\"], 2)") s" &&
    test "$(jget summary.json "j[0][\"roots\"]")" -eq 1 &&
    if test "$(lost)" -eq 0; then
        test "$got_p" -eq "$want_p" &&
        test "$got_t" -eq "$want_t" &&
        test "$got_x" -eq "$want_x" &&
        test "$got_e" -eq $((want_p + 1))
    else
        say "events lost: $(lost); counts checked as bounds" &&
        test "$got_p" -le "$want_p" && test "$got_t" -le "$want_t" &&
        grep "^lost events .*[1-9]" summary.txt
    fi
'

test_expect_success 'the header: job, step, node, and the CPUs the task got' '
    job=$(cat job.id) &&
    p=$(profile_of "$job" 0) &&
    head -n 1 "$p" &&
    test "$(header "$p" "h[\"job\"]")" = "$job" &&
    test "$(header "$p" "h[\"step\"]")" = 0 &&
    test "$(header "$p" "h[\"node\"]")" = "$LOCAL_SLURM_NODE" &&
    test "$(header "$p" "h[\"policy\"]")" = numa-local &&
    test "$(header "$p" "h[\"uid\"]")" = "$(id -u nobody)" &&
    cpus=$(header "$p" "h[\"cpus\"]") &&
    echo "header cpus $cpus, task Cpus_allowed_list $(cat "$W/prof.cpus")" &&
    test "$cpus" = "$(cat "$W/prof.cpus")" &&
    test "$(vm_hw_count pu "$cpus")" = 2
'

test_expect_success 'samples: the step cgroup, its CPU time growing, its memory' '
    p=$(profile_of "$(cat job.id)" 0) &&
    "$PY" - "$p" "$(vm_job_cgdir "$(cat job.id)")" "$W/prof.memmax" <<-\EOF &&
	import json, re, sys
	lines = [json.loads(l) for l in open(sys.argv[1])]
	h = lines[0]
	assert "cgroup" in h, h.get("cgroup_error", "no cgroup in the header")
	# nested: the step cgroup where Slurm puts its tasks
	assert re.fullmatch(r"/sys/fs/cgroup/system\.slice/node1_slurmstepd\.scope"
	                    r"/%s/step_0/user" % re.escape(sys.argv[2]), h["cgroup"]), h["cgroup"]
	samples = [l for l in lines if l["type"] == "sample"]
	cg = [l["cg"] for l in samples if "cg" in l]
	assert len(cg) == len(samples), (len(cg), len(samples))
	use = [c["usage_usec"] for c in cg]
	print("samples with cg:", len(cg), "usage_usec first", use[0], "last", use[-1])
	print("first cg:", cg[0])
	print("last cg:", cg[-1])
	assert len(use) >= 5, use
	assert use == sorted(use) and use[-1] > use[0], use
	# seen here: Slurm'"'"'s step_<id>/user has the memory controller
	# (local-slurm.sh enables it down to system.slice, Slurm'"'"'s cgroup/v2
	# below it; guest-lib sets ConstrainRAMSpace=yes), so every sample
	# has the step'"'"'s memory
	for k in ("memory_current", "anon", "file", "shmem"):
	    assert all(k in c for c in cg), k
	mem = [c["memory_current"] for c in cg]
	print("memory_current KiB:", [m // 1024 for m in mem])
	# every sample carries the limit the step lives under (issue 23), as
	# the task read it from its cgroup and those above; none when every
	# level says max
	want = open(sys.argv[3]).read().strip()
	lim = [c.get("memory_max") for c in cg]
	print("memory.max above the task:", want, "in the samples:", sorted(set(map(str, lim))))
	if want == "max":
	    assert all(m is None for m in lim), lim
	else:
	    assert all(m == int(want) for m in lim), (want, lim)
	assert max(mem) >= 1 << 20, mem
	open("cg.note", "w").write("%d samples, cg usage_usec %d to %d, memory_current peak %d KiB\n"
	                           % (len(cg), use[0], use[-1], max(mem) // 1024))
	EOF
    vm_note "t50: $(cat cg.note)"
'

test_expect_success 'the profile is root'"'"'s with read for nobody only: nobody reads it, cannot write it, daemon cannot read it' '
    job=$(cat job.id) &&
    p=$(profile_of "$job" 0) &&
    test "$(stat -c %U:%a "$p")" = root:640 &&
    test_must_fail setpriv --reuid=nobody --regid=nogroup --clear-groups \
        sh -c "echo x >>\"\$1\"" sh "$p" &&
    setpriv --reuid=nobody --regid=nogroup --clear-groups \
        slurm-pin profile --dir "$PROF" "$job" >owner.txt &&
    grep "^step $job.0 on $LOCAL_SLURM_NODE\$" owner.txt &&
    test_must_fail setpriv --reuid=daemon --regid=daemon --clear-groups \
        cat "$p" >/dev/null
'

test_expect_success 'the profile ends with its end line' '
    tail -n 1 "$(profile_of "$(cat job.id)" 0)" | grep "\"type\":\"end\""
'

# As t40: a cluster whose cores are not constrained, so that a -c 2 step
# may over-use; stopped at the end of this test.
test_expect_success 'Slurm (cgroup mode, cores not constrained) with pin.so' '
    vm_slurm_stop &&
    vm_slurm_start cgroup --conf-extra TaskPlugin=task/cgroup \
        --cgroup-extra ConstrainCores=no &&
    cgconf=$(dirname "$SLURM_CONF")/cgroup.conf &&
    grep "^ConstrainCores=no" "$cgconf" &&
    echo cgroup >"$VM_SLURM_STATE" &&
    vm_pin_require cgroup &&
    printf "DynamicGrace=10\nDynamicInterval=2\nProfileDir=%s\n" "$PROF_DYN" >>"$PIN_CONF"
'

test_expect_success 'policy dynamic with --pin-profile=500ms: an over-using step' '
    start=$(vm_now) &&
    srun --chdir="$W" --pin-policy=dynamic --pin-profile=500ms -n 1 -c 2 \
        "$W/overuse.sh" 2>dyn.err &&
    vm_record_time "t50: dynamic step, profiled" "$start" &&
    cat dyn.err &&
    cp "$W/dyn.job" dyn.job &&
    watcher_note "$(cat dyn.job)"
'

test_expect_success 'dynamic: one confine line, the CPUs its stderr names, between the first and last sample' '
    job=$(cat dyn.job) &&
    p=$PROF_DYN/$job.0.$LOCAL_SLURM_NODE.jsonl &&
    grep "\"type\":\"confine\"" "$p" &&
    line=$(grep "^pin: step $job\.0 on .*: confined to cpus [^ ]* mems [^ ]* (cpuset)\$" dyn.err) &&
    cpus=$(echo "$line" | sed "s/.*confined to cpus \([^ ]*\) mems \([^ ]*\) .*/\1/") &&
    mems=$(echo "$line" | sed "s/.*confined to cpus \([^ ]*\) mems \([^ ]*\) .*/\2/") &&
    "$PY" - "$p" "$cpus" "$mems" <<-\EOF &&
	import json, sys
	lines = [json.loads(l) for l in open(sys.argv[1])]
	assert lines[0]["policy"] == "dynamic", lines[0]
	assert lines[-1]["type"] == "end", lines[-1]
	conf = [l for l in lines if l["type"] == "confine"]
	t = [l["t"] for l in lines if l["type"] == "sample"]
	assert len(conf) == 1, conf
	print("confine:", conf, "samples:", len(t),
	      "confined %.1f s after the first sample, %.1f s before the last"
	      % ((conf[0]["t"] - t[0]) / 1e9, (t[-1] - conf[0]["t"]) / 1e9))
	c = conf[0]
	assert c["how"] == "cpuset", c
	assert c["cpus"] == sys.argv[2], (c["cpus"], sys.argv[2])
	assert c["mems"] == sys.argv[3], (c["mems"], sys.argv[3])
	assert t[0] < c["t"] < t[-1], (t[0], c["t"], t[-1])
	open("dyn.note", "w").write("confined (%s) to cpus %s mems %s at use %.2f, %.1f s after the first of %d samples\n"
	                            % (c["how"], c["cpus"], c["mems"], c["use"], (c["t"] - t[0]) / 1e9, len(t)))
	EOF
    vm_note "t50: dynamic step: $(cat dyn.note)"
'

test_expect_success 'stop this cluster (later tests start their own)' '
    vm_slurm_stop
'

# the profiles, for the record (and for debugging a failure)
if test -d "${PIN_VM_OUT:-}"; then
    mkdir -p "$PIN_VM_OUT/t50/dynamic" &&
    cp "$PROF"/*.jsonl "$PIN_VM_OUT/t50/" 2>/dev/null
    cp "$PROF_DYN"/*.jsonl "$PIN_VM_OUT/t50/dynamic/" 2>/dev/null
fi

test_done
