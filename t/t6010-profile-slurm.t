#!/bin/sh

test_description='pin.so --pin-profile: every process of a step, on a real local Slurm

A local cluster (slurmctld, slurmd, munged started here) with pin.so and
ProfileDir in a private directory.  Steps started by srun and sbatch run
t/profile/workload.py, which counts the processes, threads and execs it
makes (~10 Hz short-lived processes, a burst of 1,000 forks, threads);
the profile pin.so records in slurmstepd must show exactly those counts,
or report its losses.  Also: forked workers sharing 64 MiB (PSS well
under summed RSS), the step cgroup in the samples, the partition default
of pin.conf (Profile=) and --pin-profile=off, bad values refused with
one line, and a profile owned by root, readable by the user of its job
(a POSIX ACL) and by nobody else, and never writable by that user.
Needs root (slurmd), the proc connector (pin.so records in slurmstepd)
and /usr/bin/python3.
'

. "$(dirname "$0")/sharness.sh"

# CPU-heavy: not beside t4000, t5000 or t6000 (t/sharness.d/20-cpus.sh)
cpu_heavy_exclusive || exit 1

slurm_require

pin_so_prereq
PY=/usr/bin/python3
WORKLOAD="$PIN_SRCDIR/t/profile/workload.py"
if test -x "$PY"; then
    test_set_prereq PY
elif test -n "${CI:-}"; then
    test_expect_success '/usr/bin/python3 is installed' 'false'
fi
if id nobody >/dev/null 2>&1 && id daemon >/dev/null 2>&1 &&
   command -v setpriv >/dev/null 2>&1; then
    test_set_prereq USERS
fi

# jget FILE EXPR: evaluate a Python expression on the JSON in FILE (j).
jget () {
    "$PY" -c 'import json, sys; j = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
# header FILE EXPR: the same on the first line of a profile (h).
header () {
    "$PY" -c 'import json, sys; h = json.loads(open(sys.argv[1]).readline()); print(eval(sys.argv[2]))' "$1" "$2"
}

# The state directory: users must reach ProfileDir to read their own.
STATE=$(mktemp -d /tmp/pin-t6010.XXXXXX) || exit 1
chmod 755 "$STATE"
cleanup "rm -rf '$STATE'"
PROF=$STATE/profile
ALL=PIN_SO,PY

test_expect_success PIN_SO 'start a cluster with pin.so, ProfileDir and a partition default' '
    cat >pin.conf <<-EOF &&
	StateDir=$STATE/state
	TopologyCache=$STATE/topology.xml
	JournalDir=$STATE/journal
	DeliverCommand=none
	ProfileDir=$PROF
	PartitionName=debug Profile=300ms
	EOF
    echo "required $PIN_SO conf=@PIN_CONF@" >plugstack.conf &&
    slurm_start --plugstack plugstack.conf --pin-conf pin.conf &&
    echo "$LOCAL_SLURM_NODE" >node
'

# profile_of JOB STEP: the path of the step's profile on this node.
profile_of () {
    echo "$PROF/$1.$2.$(cat node).jsonl"
}

test_expect_success $ALL 'srun --pin-profile=200ms: the fork workload' '
    srun --pin-profile=200ms --pin-policy=numa-local -n1 -c1 \
        sh -c "echo \$SLURM_JOB_ID >job.id; exec $PY $WORKLOAD forks 20 1000 8" \
        >workload.json &&
    job=$(cat job.id) &&
    p=$(profile_of "$job" 0) &&
    test -f "$p" &&
    ls -l "$p" &&
    test "$(stat -c %U:%a "$p")" = root:640 &&
    slurm-pin profile --dir "$PROF" --json "$job.0" >summary.json &&
    slurm-pin profile --dir "$PROF" "$job" >summary.txt &&
    cat workload.json summary.txt &&
    grep "^step $job.0 on $(cat node)\$" summary.txt &&
    test "$(grep -c "^memory " summary.txt)" -eq 1 &&
    grep "^memory  *summed RSS peak [1-9]" summary.txt
'

# lost: the number of events the profile says it lost.
lost () {
    jget summary.json "j[0][\"lost\"][\"sequence_gaps\"] + j[0][\"lost\"][\"enobufs\"] + j[0][\"lost\"][\"socket_drops\"] + j[0][\"lost\"][\"untracked\"]"
}

test_expect_success $ALL 'processes, threads and execs: exactly what the workload made, or a loss reported' '
    test "$(jget summary.json "len(j)")" -eq 1 &&
    want_p=$(jget workload.json "j[\"processes\"]") &&
    want_t=$(jget workload.json "j[\"threads\"]") &&
    # the task runs sh, which execs python3
    want_x=$(jget workload.json "j[\"execs\"] + 2") &&
    got_p=$(jget summary.json "j[0][\"processes_created\"]") &&
    got_t=$(jget summary.json "j[0][\"threads_created\"]") &&
    got_x=$(jget summary.json "j[0][\"execs\"]") &&
    echo "processes $got_p/$want_p threads $got_t/$want_t execs $got_x/$want_x lost $(lost)" &&
    test "$(jget summary.json "j[0][\"roots\"]")" -eq 1 &&
    if test "$(lost)" -eq 0; then
        test "$got_p" -eq "$want_p" &&
        test "$got_t" -eq "$want_t" &&
        test "$got_x" -eq "$want_x" &&
        test "$(jget summary.json "j[0][\"process_exits\"]")" -eq $((want_p + 1))
    else
        say "events lost under load: $(lost); counts checked as bounds" &&
        test "$got_p" -le "$want_p" && test "$got_t" -le "$want_t" &&
        grep "^lost events .*[1-9]" summary.txt
    fi &&
    test "$(jget summary.json "[c[\"processes\"] for c in j[0][\"top_by_count\"] if c[\"command\"] == \"true\"][0]")" -eq 20
'

test_expect_success $ALL 'the header names the job, the step, the node and the step CPUs' '
    job=$(cat job.id) &&
    p=$(profile_of "$job" 0) &&
    test "$(header "$p" "h[\"job\"]")" = "$job" &&
    test "$(header "$p" "h[\"step\"]")" = 0 &&
    test "$(header "$p" "h[\"node\"]")" = "$(cat node)" &&
    test "$(header "$p" "h[\"interval_ms\"]")" = 200 &&
    test "$(header "$p" "h[\"policy\"]")" = numa-local &&
    test "$(header "$p" "h.get(\"taskstats_mode\") if h[\"taskstats\"] else \"auto\"")" = auto &&
    cpus=$(header "$p" "h[\"cpus\"]") &&
    echo "sampled CPUs: $cpus" &&
    test "$(count_cpus "$cpus")" -eq 1
'

# imgcheck IMAGE: what t/profile/imgcheck.py finds in IMAGE, into
# IMAGE.json (the palette from slurm-pin-plot(1)).
imgcheck () {
    "$PY" "$PIN_SRCDIR/t/profile/imgcheck.py" "$1" \
        "$PIN_SRCDIR/doc/man/slurm-pin-plot.1" >"$1.json"
}
"$PY" -c "import PIL" 2>/dev/null && test_set_prereq PIL

# lanes: "COMMAND (N)" for each lane of a grouped Gantt chart, from the
# texts imgcheck read in the SVG
lanes () {
    "$PY" -c "import json, re, sys
for t in json.load(open(sys.argv[1]))[\"texts\"]:
    m = re.fullmatch(r\"(\\S+) \\((\\d+)\\)\", t)
    if m: print(m.group(1), m.group(2))" "$1"
}

test_expect_success $ALL,PIL 'slurm-pin plot JOB.STEP: the Gantt chart holds every process of the step' '
    job=$(cat job.id) &&
    slurm-pin plot --dir "$PROF" "$job.0" --kind gantt -o gantt.svg &&
    slurm-pin plot --dir "$PROF" "$job" --kind gantt -o gantt.png \
        --size 1000x600 &&
    imgcheck gantt.svg && imgcheck gantt.png &&
    n=$(($(jget summary.json "j[0][\"processes_created\"]") + 1)) &&
    test "$(jget gantt.png.json "j[\"width\"], j[\"height\"]")" = "(1000, 600)" &&
    # over 200 processes: one lane per command (slurm-pin-plot(1)), each
    # labelled with its count, and no bars; the counts add up to the step
    test "$n" -gt 200 &&
    lanes gantt.svg.json >lanes &&
    cat lanes &&
    test "$(jget gantt.svg.json "j[\"bars\"]")" -eq 0 &&
    test "$(jget gantt.svg.json "j[\"heat_rows\"]")" -eq "$(wc -l <lanes)" &&
    test "$(awk "{ s += \$2 } END { print s }" lanes)" -eq "$n" &&
    # --filter: one command, under 200 processes: a bar for each again
    read -r cmd count <<-EOF &&
	$(sort -k2n lanes | head -n 1)
	EOF
    test "$count" -le 200 &&
    slurm-pin plot --dir "$PROF" "$job.0" --kind gantt --filter "$cmd" \
        -o one.svg &&
    imgcheck one.svg &&
    echo "--filter $cmd: $(jget one.svg.json "j[\"bars\"]") bars, want $count" &&
    test "$(jget one.svg.json "j[\"bars\"]")" -eq "$count"
'

test_expect_success $ALL,PIL 'every kind of chart of the step decodes' '
    job=$(cat job.id) &&
    for k in cpu forks ctxsw states memory; do
        slurm-pin plot --dir "$PROF" "$job.0" --kind $k -o $k.png &&
        imgcheck $k.png &&
        echo "$k: $(jget $k.png.json "j[\"width\"], j[\"height\"], len(j[\"colours\"])")" &&
        test "$(jget $k.png.json "j[\"width\"], j[\"height\"]")" = "(1200, 700)" &&
        test "$(jget $k.png.json "len(j[\"colours\"])")" -ge 1 || return 1
    done
'

test_expect_success $ALL 'slurm-pin plot of a job with several steps asks for one' '
    two=$(sbatch --parsable --pin-profile=200ms -n1 -o two.out \
          --wrap "srun -n1 true") &&
    slurm_wait_job "$two" &&
    slurm-pin profile --dir "$PROF" "$two" >two.txt &&
    grep "^step $two.0 on " two.txt && grep "^step $two.batch on " two.txt &&
    test_must_fail slurm-pin plot --dir "$PROF" "$two" --kind cpu \
        -o x.png 2>two.err &&
    cat two.err &&
    test "$(wc -l <two.err)" -eq 1 &&
    grep "^slurm-pin plot: job $two has profiles of 2 steps ($two.0, $two.batch); name one with JOB.STEP\$" two.err &&
    slurm-pin plot --dir "$PROF" "$two.batch" --kind cpu -o two.png &&
    job=$(cat job.id) &&
    test_must_fail slurm-pin plot --dir "$PROF" "$job.0" --node nowhere \
        --kind cpu -o x.png 2>node.err &&
    cat node.err &&
    grep "^slurm-pin plot: --node=nowhere: no profile of $job.0 on that node\$" node.err &&
    ! test -e x.png
'

test_expect_success $ALL 'samples carry the step cgroup CPU time, growing' '
    p=$(profile_of "$(cat job.id)" 0) &&
    "$PY" - "$p" <<-\EOF
	import json, sys
	lines = [json.loads(l) for l in open(sys.argv[1])]
	if "cgroup_error" in lines[0]:
	    sys.exit("no cgroup: " + lines[0]["cgroup_error"])
	use = [l["cg"]["usage_usec"] for l in lines if l["type"] == "sample"
	       and "usage_usec" in l.get("cg", {})]
	print("samples with cgroup CPU:", len(use), "last", use[-1])
	assert len(use) >= 5, use
	assert use == sorted(use) and use[-1] > use[0], use
	EOF
'

test_expect_success $ALL 'forked workers sharing 64 MiB: PSS well under summed RSS' '
    srun --pin-profile=100ms -n1 -c1 \
        sh -c "echo \$SLURM_JOB_ID >shared.id; exec $PY $WORKLOAD shared 64 4 1" \
        >shared-workload.json &&
    test "$(jget shared-workload.json "j[\"failed\"]")" -eq 0 &&
    slurm-pin profile --dir "$PROF" --json "$(cat shared.id).0" >shared.json &&
    rss=$(jget shared.json "j[0][\"memory\"][\"peak_rss_sum_kb\"]") &&
    pss=$(jget shared.json "j[0][\"memory\"][\"pss_at_peak_rss_kb\"]") &&
    echo "summed RSS $rss KiB, PSS $pss KiB" &&
    test "$rss" -gt $((4 * 64 * 1024)) &&
    test $((pss * 2)) -lt "$rss"
'

test_expect_success $ALL 'sbatch --pin-profile: the batch step is profiled' '
    job=$(sbatch --parsable --pin-profile=200ms -n1 -c1 -o batch.out \
          --wrap "$PY $WORKLOAD forks 5 0 0") &&
    slurm_wait_job "$job" &&
    cat batch.out &&
    slurm-pin profile --dir "$PROF" --json "$job.batch" >batch.json &&
    test "$(jget batch.json "j[0][\"step\"]")" = batch &&
    got=$(jget batch.json "j[0][\"processes_created\"]") &&
    echo "batch step: $got processes" &&
    # python3 forks 5; the batch shell may fork it or exec it
    test "$got" -ge 5 && test "$got" -le 6
'

test_expect_success $ALL 'the partition default (Profile=300ms) profiles a step that asks nothing' '
    srun -n1 sh -c "echo \$SLURM_JOB_ID >default.id" &&
    p=$(profile_of "$(cat default.id)" 0) &&
    test -f "$p" &&
    test "$(header "$p" "h[\"interval_ms\"]")" = 300
'

test_expect_success $ALL '--pin-profile=off turns the default off' '
    srun --pin-profile=off -n1 sh -c "echo \$SLURM_JOB_ID >off.id" &&
    ! test -e "$(profile_of "$(cat off.id)" 0)" &&
    test_must_fail slurm-pin profile --dir "$PROF" "$(cat off.id)" 2>off.err &&
    cat off.err &&
    test "$(wc -l <off.err)" -eq 1 &&
    grep "no profile of job $(cat off.id) in $PROF" off.err
'

test_expect_success $ALL 'a bad --pin-profile: srun and sbatch exit non-zero, naming the value' '
    test_must_fail srun --pin-profile=fast -n1 true 2>srun.err &&
    cat srun.err &&
    grep -- "--pin-profile=fast: not a duration; give seconds, e.g. 60, 60s, 500ms or 2m (or yes, no)" srun.err &&
    test_must_fail sbatch --pin-profile=10ms --wrap true 2>sbatch.err &&
    cat sbatch.err &&
    grep -- "--pin-profile=10ms: out of range; give 100ms to 3600s" sbatch.err
'

test_expect_success $ALL,USERS 'a job of nobody: its profile is root'"'"'s (0640: the ACL mask), a new file' '
    job=$(as_user nobody sbatch --parsable --pin-profile=200ms -n1 -D / \
          -o /dev/null --wrap "for i in 1 2 3; do /bin/true; done") &&
    echo "$job" >nobody.id &&
    slurm_wait_job "$job" &&
    p=$(profile_of "$job" batch) &&
    test "$(stat -c %U:%a "$p")" = root:640
'

# The job's user can read the profile but neither write it, nor grow it,
# nor chmod it (ProfileMaxSize is root's writer's alone to keep).
test_expect_success $ALL,USERS 'the job'"'"'s user cannot write, truncate or chmod its profile' '
    p=$(profile_of "$(cat nobody.id)" batch) &&
    cp "$p" before.jsonl &&
    test_must_fail setpriv --reuid=nobody --regid=nogroup --clear-groups \
        sh -c "echo x >>\"$p\"" &&
    test_must_fail setpriv --reuid=nobody --regid=nogroup --clear-groups \
        truncate -s 1G "$p" &&
    test_must_fail setpriv --reuid=nobody --regid=nogroup --clear-groups \
        chmod 0666 "$p" &&
    test_cmp before.jsonl "$p" &&
    test "$(stat -c %U:%a "$p")" = root:640
'

test_expect_success $ALL,USERS 'its owner reads it; another user cannot' '
    job=$(cat nobody.id) &&
    setpriv --reuid=nobody --regid=nogroup --clear-groups \
        slurm-pin profile --dir "$PROF" "$job" >owner.txt &&
    grep "^processes created  3 " owner.txt &&
    test_must_fail setpriv --reuid=daemon --regid=daemon --clear-groups \
        slurm-pin profile --dir "$PROF" "$job" 2>other.err &&
    cat other.err &&
    test "$(wc -l <other.err)" -eq 1 &&
    grep "permission denied: a profile is readable by the job'"'"'s owner (and root) only" other.err &&
    test_must_fail setpriv --reuid=daemon --regid=daemon --clear-groups \
        cat "$(profile_of "$job" batch)" >/dev/null &&
    test_must_fail setpriv --reuid=daemon --regid=daemon --clear-groups \
        slurm-pin plot --dir "$PROF" "$job" --kind gantt -o /tmp/pin-t6010-$$.png 2>plot-other.err &&
    grep "permission denied" plot-other.err &&
    ! test -e /tmp/pin-t6010-$$.png
'

test_expect_success $ALL 'no profile file is left open or half-written: each ends with its end line' '
    bad=0 &&
    for p in "$PROF"/*.jsonl; do
        tail -n 1 "$p" | grep -q "\"type\":\"end\"" ||
        { echo "$p: no end line"; bad=1; }
    done &&
    test "$bad" = 0
'

test_done
