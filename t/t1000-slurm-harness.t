#!/bin/sh

test_description='the local Slurm harness (contrib/local-slurm.sh, sharness.d/10-slurm.sh)

Starts a private munged + slurmctld + slurmd in the trash directory,
runs real srun and sbatch on it, starts a second instance beside it and
checks that stop ends exactly the processes of its own instance.
Needs root and the Slurm packages; skipped (visibly) otherwise.
'

. "$(dirname "$0")/sharness.sh"

slurm_require

# pid_of NAME [DIR]: the pid in the pid file of daemon NAME.
pid_of () {
    _d=${2:-$LOCAL_SLURM_DIR}
    case "$1" in
        munged) cat "$_d/munge/munged.pid" ;;
        *) cat "$_d/run/$1.pid" ;;
    esac
}

# runs_in PID DIR: PID is alive and is a daemon of the instance in DIR:
# its command line has DIR's slurm.conf (as the instance names it, maybe
# through an alias) or, for munged, the instance's munge socket.
runs_in () {
    ! gone "$1" &&
    _root=$(sed -n 's|^SlurmctldPidFile=\(.*\)/run/slurmctld.pid$|\1|p' "$2/etc/slurm.conf") &&
    _sock=$(sed -n 's|^AuthInfo=socket=||p' "$2/etc/slurm.conf") &&
    test -n "$_root" && test -n "$_sock" &&
    tr '\0' '\n' <"/proc/$1/cmdline" >cmdline.$1 &&
    grep -Fx -e "$_root/etc/slurm.conf" -e "--socket=$_sock" cmdline.$1
}

# gone PID: no such process any more (or only its zombie is left).
gone () {
    ! test -e "/proc/$1/status" || grep -q "^State:[[:space:]]*Z" "/proc/$1/status"
}

# wait_running JOBID: until the job runs (bounded by PIN_SLURM_TIMEOUT).
wait_running () {
    _n=$((PIN_SLURM_TIMEOUT * 5))
    while test "$(slurm_job_state "$1")" != RUNNING; do
        _n=$((_n - 1))
        test $_n -gt 0 || return 1
        sleep 0.2
    done
}

# wait_pids JOBID: print the pids of the job's processes on the node once
# slurmd knows some (RUNNING comes before the launch), bounded.
wait_pids () {
    _n=$((PIN_SLURM_TIMEOUT * 5))
    while :; do
        scontrol listpids "$1" 2>/dev/null |
            sed -n "s/^\([0-9][0-9]*\) .*/\1/p" >pids.$1
        test -s pids.$1 && cat pids.$1 && return 0
        _n=$((_n - 1))
        test $_n -gt 0 || return 1
        sleep 0.2
    done
}

# cpus_of FILE: the Cpus_allowed_list value in FILE (a /proc status copy).
cpus_of () {
    sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$1"
}

ncpus=$(nproc --all)
test "$ncpus" -ge 2 && test_set_prereq MULTICPU

test_expect_success 'start a local Slurm in affinity mode' '
    slurm_start --mode affinity &&
    test -n "$SLURM_CONF" &&
    test -f "$SLURM_CONF" &&
    grep -x "TaskPlugin=task/affinity" "$SLURM_CONF" &&
    grep -x "ProctrackType=proctrack/linuxproc" "$SLURM_CONF" &&
    test_set_prereq STARTED
'

test_expect_success SLURM 'the configuration is private to the trash directory' '
    grep "^AuthInfo=socket=" "$SLURM_CONF" >auth &&
    ! grep "/run/munge" auth &&
    ! grep -i "^[A-Za-z]*=/etc/" "$SLURM_CONF" &&
    ! grep -i "^[A-Za-z]*=/var/" "$SLURM_CONF" &&
    test "$(cd "$LOCAL_SLURM_DIR" && pwd -P)" = "$(cd "$SHARNESS_TRASH_DIRECTORY/slurm" && pwd -P)"
'

test_expect_success SLURM 'scontrol ping answers and the node is idle' '
    scontrol ping >ping &&
    grep " is UP" ping &&
    slurm_node_state >state &&
    echo idle >state.expected &&
    test_cmp state.expected state
'

test_expect_success SLURM 'slurmctld, slurmd and munged run from this directory' '
    for d in munged slurmctld slurmd; do
        pid_of $d >$d.pid &&
        runs_in "$(cat $d.pid)" "$LOCAL_SLURM_DIR" || return 1
    done
'

test_expect_success SLURM 'srun -N1 -n1 hostname runs one task on the node' '
    srun -N1 -n1 hostname >hostname.out &&
    hostname >hostname.expected &&
    test_cmp hostname.expected hostname.out
'

# With CR_Core Slurm allocates whole cores: on an SMT node `srun -c 1`
# gets one core and starts one task per hardware thread (seen in the qemu
# guest: two tasks, CPUs 0 and 1).  Each task still gets exactly one CPU.
test_expect_success SLURM 'srun -c 1 pins each task to exactly one CPU' '
    srun -c 1 grep Cpus_allowed_list /proc/self/status >c1.out &&
    cpus_of c1.out >c1.cpus &&
    test -s c1.cpus &&
    ! grep -Evx "[0-9]+" c1.cpus &&
    for c in $(cat c1.cpus); do
        test "$c" -lt "$ncpus" || return 1
    done &&
    test "$(sort -u c1.cpus | wc -l)" -eq "$(wc -l <c1.cpus)"
'

test_expect_success SLURM,MULTICPU 'srun -c 2 gets two CPUs, so the pinning follows the request' '
    srun -c 2 grep Cpus_allowed_list /proc/self/status >c2.out &&
    cpus_of c2.out >c2.cpus &&
    test "$(cat c2.cpus)" != "$(cat c1.cpus)" &&
    ! grep -Ex "[0-9]+" c2.cpus
'

test_expect_success SLURM 'sbatch --wait runs a batch script that writes a file' '
    cat >job.sh <<-EOF &&
	#!/bin/sh
	echo "job \$SLURM_JOB_ID on \$SLURMD_NODENAME" >"$PWD/job.result"
	EOF
    sbatch --wait -o job.log job.sh >submit.out &&
    jobid=$(sed -n "s/^Submitted batch job \([0-9][0-9]*\)$/\1/p" submit.out) &&
    test -n "$jobid" &&
    echo "job $jobid on $LOCAL_SLURM_NODE" >job.expected &&
    test_cmp job.expected job.result
'

test_expect_success SLURM 'slurm_wait_job reports COMPLETED and FAILED' '
    ok=$(sbatch --parsable -o /dev/null --wrap true) &&
    slurm_wait_job "$ok" >ok.state &&
    echo COMPLETED >ok.expected &&
    test_cmp ok.expected ok.state &&
    bad=$(sbatch --parsable -o /dev/null --wrap "exit 3") &&
    test_expect_code 1 slurm_wait_job "$bad" >bad.state &&
    echo FAILED >bad.expected &&
    test_cmp bad.expected bad.state
'

test_expect_success SLURM 'a second instance in another directory starts beside the first' '
    dir2=$(mktemp -d /tmp/pin-t1000.XXXXXX) &&
    echo "$dir2" >dir2 &&
    slurm_stop_at_exit "$dir2" &&
    "$LOCAL_SLURM" start --dir "$dir2" --nodename second --cluster second \
        --timeout "$PIN_SLURM_TIMEOUT" >env2 &&
    grep "^export SLURM_CONF=" env2 &&
    port1=$(sed -n "s/^SlurmctldPort=//p" "$SLURM_CONF") &&
    port2=$(sed -n "s/^SlurmctldPort=//p" "$dir2/etc/slurm.conf") &&
    test "$port1" != "$port2" &&
    (eval "$(cat env2)" && srun -N1 -n1 printenv SLURMD_NODENAME) >node2.out &&
    echo second >node2.expected &&
    test_cmp node2.expected node2.out &&
    scontrol ping | grep " is UP"
'

test_expect_success SLURM 'stopping the second instance leaves the first one running' '
    dir2=$(cat dir2) &&
    for d in munged slurmctld slurmd; do
        pid_of $d "$dir2" >$d.pid2 || return 1
    done &&
    "$LOCAL_SLURM" stop --dir "$dir2" --clean &&
    test ! -e "$dir2" &&
    for d in munged slurmctld slurmd; do
        gone "$(cat $d.pid2)" &&
        runs_in "$(cat $d.pid)" "$LOCAL_SLURM_DIR" || return 1
    done &&
    scontrol ping | grep " is UP" &&
    srun -n1 true
'

test_expect_success SLURM 'status reports the three daemons' '
    "$LOCAL_SLURM" status --dir "$LOCAL_SLURM_DIR" >status.out &&
    grep "^munged: running, pid $(cat munged.pid)$" status.out &&
    grep "^slurmctld: running, pid $(cat slurmctld.pid)$" status.out &&
    grep "^slurmd: running, pid $(cat slurmd.pid)$" status.out
'

test_expect_success SLURM 'a job still running when the cluster stops is ended' '
    long=$(sbatch --parsable -o /dev/null --wrap "exec sleep 600") &&
    wait_running "$long" &&
    wait_pids "$long" >task.pids &&
    test -s task.pids
'

test_expect_success SLURM 'slurmd and slurmctld were alive until stop; after it none of ours runs' '
    for d in munged slurmctld slurmd; do
        runs_in "$(cat $d.pid)" "$LOCAL_SLURM_DIR" || return 1
    done &&
    slurm_stop &&
    for p in $(cat munged.pid slurmctld.pid slurmd.pid task.pids); do
        gone "$p" || {
            echo "still there: $(grep State: /proc/$p/status) $(tr "\0" " " </proc/$p/cmdline)"
            return 1
        }
    done &&
    test_expect_code 3 "$LOCAL_SLURM" status --dir "$LOCAL_SLURM_DIR"
'

test_expect_success STARTED 'stop is idempotent' '
    slurm_stop &&
    "$LOCAL_SLURM" stop --dir "$LOCAL_SLURM_DIR"
'

test_expect_success STARTED 'a stale directory from a SIGKILLed run starts again' '
    slurm_start &&
    for d in munged slurmctld slurmd; do
        pid_of $d >$d.pid || return 1
    done &&
    kill -9 $(cat slurmd.pid slurmctld.pid munged.pid) &&
    test -f "$LOCAL_SLURM_DIR/run/slurmctld.pid" &&
    slurm_start &&
    srun -N1 -n1 true &&
    test "$(pid_of slurmctld)" != "$(cat slurmctld.pid)"
'

test_expect_success SLURM 'start refuses a directory that is already running' '
    test_must_fail "$LOCAL_SLURM" start --dir "$LOCAL_SLURM_DIR" 2>err &&
    grep "already running" err &&
    scontrol ping | grep " is UP"
'

test_expect_success SLURM 'slurm_restart brings it back with new options' '
    slurm_restart --nodename renamed &&
    test "$LOCAL_SLURM_NODE" = renamed &&
    srun -N1 -n1 printenv SLURMD_NODENAME >renamed.out &&
    echo renamed >renamed.expected &&
    test_cmp renamed.expected renamed.out
'

test_expect_success 'bad options are one-line errors naming the value' '
    test_must_fail "$LOCAL_SLURM" start --mode bogus 2>err.mode &&
    test $(wc -l <err.mode) -eq 1 &&
    grep -- "--mode=bogus: unknown mode; known: affinity, cgroup" err.mode &&
    test_must_fail "$LOCAL_SLURM" start --conf-extra nokey 2>err.extra &&
    test $(wc -l <err.extra) -eq 1 &&
    grep "nokey" err.extra &&
    test_must_fail "$LOCAL_SLURM" start --mode cgroup --cgroup-extra nokey 2>err.cg &&
    test $(wc -l <err.cg) -eq 1 &&
    grep -- "--cgroup-extra .nokey.: not a Key=Value line" err.cg &&
    test_must_fail "$LOCAL_SLURM" start --cgroup-extra ConstrainCores=no 2>err.cgmode &&
    test $(wc -l <err.cgmode) -eq 1 &&
    grep -- "--cgroup-extra: only with --mode cgroup" err.cgmode
'

test_done
