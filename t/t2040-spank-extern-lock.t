#!/bin/sh

test_description='pin.so: a job that leaves a process behind does not block other steps

Standalone tree, PrologFlags=Contain.  Job A runs a step whose task
double-forks a process (setsid, reparented to init): proctrack/linuxproc
loses it, so it outlives the step and the job, and it stays in the task
cgroup of the plugin'"'"'s tree.  When A ends, its extern step tries to
remove that tree and cannot while the process lives (EBUSY, retried for
10 s).  Meanwhile a step of job B, another user'"'"'s (nobody; the client
runs as nobody), starts: it takes the node lock of the plugin, and must get it at
once, not after the extern step gave up (10 s, also the lock timeout).
The leftover is logged; once the process is killed it can be removed and
nothing else is left.  Needs at least 2 CPUs (A and B run side by side)
and a cgroup2 mount.'

. "$(dirname "$0")/sharness.sh"

slurm_require

pin_so_prereq
test "$(nproc)" -ge 2 && test_set_prereq TWO_CPUS
CGROOT=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
test -n "$CGROOT" && test_set_prereq CGROUP2
id nobody >/dev/null 2>&1 && test_set_prereq NOBODY

STATE=$(mktemp -d /tmp/pin-t2040.XXXXXX) || exit 1
cleanup "rm -rf '$STATE'"
BASE=slurm-pin-t2040-$$
cleanup "rmdir '$CGROOT/$BASE' 2>/dev/null; true"
# Job B's output, written by nobody.
OUT=$STATE/out
mkdir "$OUT" && chmod 0755 "$STATE" && chmod 1777 "$OUT" || exit 1
# Whatever happens, the escaped process goes and its directories with it.
ESCAPED=$STATE/escaped.pid
cleanup "test -s '$ESCAPED' && kill \$(cat '$ESCAPED') 2>/dev/null; sleep 0.2;
    find '$CGROOT/$BASE' -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null; true"

ALL="SLURM,PIN_SO,TWO_CPUS,CGROUP2,NOBODY"

# wait_until SECS CMD...: until CMD succeeds, polling every 0.1 s.
wait_until () {
    _n=$(($1 * 10))
    shift
    while ! "$@"; do
        test $_n -gt 0 || return 1
        sleep 0.1
        _n=$((_n - 1))
    done
}

# stepd JOB.STEP: pid of that step's slurmstepd (nothing if none).
stepd () {
    pgrep -f "^slurmstepd: \[$1\]" | head -n 1
}
no_stepd () {
    test -z "$(stepd "$1")"
}
job_running () {
    test "$(slurm_job_state "$1")" = RUNNING
}

# A's step: the task starts a process in a new session and exits at once;
# the process (sleep 4711) records its pid first.
cat >a.sh <<EOF
#!/bin/sh
srun -n1 -c1 --pin-policy=numa-local sh -c 'setsid sh -c "echo \\\$\\\$ >$ESCAPED; exec sleep 4711" </dev/null >/dev/null 2>&1 &'
echo \$? >a.step.rc
sleep 600
EOF
chmod +x a.sh

test_expect_success PIN_SO,TWO_CPUS,CGROUP2,NOBODY 'start a cluster with pin.so and PrologFlags=Contain' '
    cat >pin.conf <<-EOF &&
	CgroupBase=$BASE
	StateDir=$STATE/state
	TopologyCache=$STATE/topology.xml
	EOF
    echo "required $PIN_SO conf=@PIN_CONF@" >plugstack.conf &&
    slurm_start --plugstack plugstack.conf --pin-conf pin.conf \
        --conf-extra PrologFlags=Contain
'

test_expect_success $ALL 'a process of job A escapes its step and stays in our tree' '
    a=$(sbatch --parsable -n1 -c1 -o a.out a.sh) &&
    echo "$a" >a.id &&
    wait_until "$PIN_SLURM_TIMEOUT" test -s a.step.rc &&
    test "$(cat a.step.rc)" -eq 0 &&
    wait_until 10 test -s "$ESCAPED" &&
    pid=$(cat "$ESCAPED") &&
    # the step is over (its slurmstepd gave up on the busy directory)
    wait_until 30 no_stepd "$a.0" &&
    kill -0 "$pid" &&
    test "$(cat /proc/$pid/comm)" = sleep &&
    echo "0::/$BASE/job_$a/step_0/task_0" >cgroup.expect &&
    grep "^0::" /proc/$pid/cgroup >cgroup.actual &&
    test_cmp cgroup.expect cgroup.actual &&
    grep -x "$pid" "$CGROOT/$BASE/job_$a/step_0/task_0/cgroup.procs"
'

test_expect_success $ALL 'job B of another user runs beside A' '
    b=$(as_user nobody sbatch --parsable -n1 -c1 -D "$OUT" -o /dev/null \
        --wrap "sleep 600") &&
    echo "$b" >b.id &&
    wait_until "$PIN_SLURM_TIMEOUT" job_running "$b"
'

# B's step is started in B's allocation (a new job would wait for
# slurmctld, which schedules nothing while a job is completing: that
# delay is Slurm's, not the plugin's).
test_expect_success $ALL 'while A ends, a step of B starts at once' '
    a=$(cat a.id) b=$(cat b.id) &&
    scancel "$a" &&
    sleep 1 &&
    # A'"'"'s extern step is still trying to remove its tree
    ext=$(stepd "$a.extern") &&
    test -n "$ext" &&
    t0=$(date +%s.%N) &&
    as_user nobody srun --jobid="$b" -n1 -c1 --pin-policy=numa-local \
        sh -c "date +%s.%N; id -u" >b.out &&
    t1=$(head -n 1 b.out) &&
    test "$(sed -n 2p b.out)" = "$(id -u nobody)" &&
    secs=$(echo "$t0 $t1" | awk "{ printf \"%.2f\", \$2 - \$1 }") &&
    say "step of job B (uid nobody) ran $secs s after srun started" &&
    echo "$secs" >b.secs &&
    # B ran while A was still cleaning up, and well within the lock
    # timeout (10 s)
    kill -0 "$ext" &&
    echo "$secs" | awk "{ exit !(\$1 < 5) }"
'

test_expect_success $ALL 'A ended; the escaped process outlived it and was logged' '
    a=$(cat a.id) &&
    test_expect_code 1 slurm_wait_job "$a" >a.state &&
    wait_until 30 no_stepd "$a.extern" &&
    kill -0 "$(cat "$ESCAPED")" &&
    test -d "$CGROOT/$BASE/job_$a/step_0/task_0" &&
    grep "pin: job $a: .*$BASE/job_$a/step_0/task_0.* still holds 1 process" \
        "$LOCAL_SLURM_DIR/log/slurmd.log"
'

test_expect_success $ALL 'once the process is killed, nothing is left' '
    a=$(cat a.id) b=$(cat b.id) &&
    scancel "$b" &&
    test_expect_code 1 slurm_wait_job "$b" >b.state &&
    kill "$(cat "$ESCAPED")" &&
    # populated 0, as rmdir wants it: cgroup.procs already hides a task
    # that is exiting, which still makes rmdir fail with EBUSY
    wait_until 10 grep -qx "populated 0" "$CGROOT/$BASE/job_$a/cgroup.events" &&
    find "$CGROOT/$BASE/job_$a" -depth -type d -exec rmdir {} + &&
    find "$CGROOT/$BASE" -mindepth 1 -type d >left.out &&
    test_must_be_empty left.out &&
    ls "$STATE/state/claims" >claims.out &&
    test_must_be_empty claims.out
'

test_expect_success $ALL 'slurmctld and slurmd are still alive' '
    scontrol ping >ping.out &&
    grep "is UP" ping.out &&
    slurm_node_state >state.out &&
    grep -E "^(idle|mix|alloc|comp)" state.out
'

test_done
