# A local Slurm for the integration tests (sourced by sharness; POSIX sh).
#
# Usage in a test file:
#
#   . ./sharness.sh
#   slurm_require                     # skip_all unless root and Slurm installed
#   test_expect_success 'start local Slurm' 'slurm_start --mode affinity'
#   test_expect_success SLURM 'one CPU' 'srun -c 1 ...'
#   test_done                         # stops Slurm (it also stops on any exit)
#
# slurm_start runs contrib/local-slurm.sh in $SHARNESS_TRASH_DIRECTORY/slurm,
# exports SLURM_CONF, LOCAL_SLURM_DIR, LOCAL_SLURM_NODE and LOCAL_SLURM_JOURNAL and sets the
# prerequisite SLURM.  Every instance started through it (or registered with
# slurm_stop_at_exit) is stopped at test_done and, through an EXIT trap, when
# the script fails or dies.  Call slurm_start inside test_expect_success so
# that a failed start is a failed test, not a silent skip.
#
# Environment:
#   PIN_SLURM_TIMEOUT  seconds to wait for the cluster / a job (default 60;
#                      the qemu guest is ~20x slower)
#   PIN_REQUIRE_SLURM  if non-empty (and whenever CI is set), a machine that
#                      cannot run Slurm fails the test file (Bail out!)
#                      instead of skipping it
#   PIN_SLURM_KEEP     if non-empty, leave the cluster running at the end
#                      and print how to reach it (debugging)
#   PIN_SKIP_SLURM     if non-empty, the reason why the files that need a
#                      local Slurm skip (make distcheck sets it: the Slurm
#                      tier runs once, in the main build); it wins over
#                      PIN_REQUIRE_SLURM and CI
#   PIN_CLIENT_TIMEOUT seconds a Slurm client command of a test (srun,
#                      sbatch, salloc, scontrol, squeue, sacct, sacctmgr,
#                      scancel, sinfo, sstat) may run before it is killed
#                      and fails (default 3 x PIN_SLURM_TIMEOUT)

LOCAL_SLURM="$PIN_SRCDIR/contrib/local-slurm.sh"
: "${PIN_SLURM_TIMEOUT:=60}"
: "${PIN_CLIENT_TIMEOUT:=$((3 * PIN_SLURM_TIMEOUT))}"
export PIN_SLURM_TIMEOUT PIN_CLIENT_TIMEOUT

# Every Slurm client a test runs, in its own shell, a batch script, under
# setpriv or env, goes through t/slurm-bin/ (first in PATH), which runs
# the real one under timeout(1): a client that waits forever is a failed
# test that says so ("timeout: sending signal TERM to command 'srun'",
# exit 124), never a stuck suite.
if test -x "$PIN_SRCDIR/t/slurm-bin/client.sh"; then
    PATH="$PIN_SRCDIR/t/slurm-bin:$PATH"
    export PATH
fi

# as_user USER COMMAND...: run COMMAND as USER (its uid, primary group
# and groups), with this environment (SLURM_CONF, PATH, ...) unchanged:
# what `srun --uid=USER` and `sbatch --uid=USER` did as root.  srun 24.11
# has no --uid, and sbatch 26.05 refuses a user name for it.
as_user () {
    _au_user=$1
    shift
    _au_gid=$(id -g "$_au_user") || return 1
    setpriv --reuid="$_au_user" --regid="$_au_gid" --init-groups -- "$@"
}

# The directories of the instances this test started, one per line.
_slurm_dirs=""
_slurm_traps=no

# slurm_missing: print why a local Slurm cannot run here (nothing if it can).
slurm_missing () {
    if test "$(id -u)" != 0; then
        echo "not root (slurmd must run as root)"
        return 0
    fi
    for _b in slurmctld slurmd munged srun sbatch scontrol sinfo squeue scancel runuser setpriv timeout; do
        if ! command -v "$_b" >/dev/null 2>&1 && ! test -x "/usr/sbin/$_b"; then
            echo "$_b not found (Debian packages slurmctld slurmd slurm-client munge: contrib/install-deps.sh)"
            return 0
        fi
    done
    if ! id munge >/dev/null 2>&1; then
        echo "no munge user (Debian package munge)"
        return 0
    fi
    if ! test -x "$LOCAL_SLURM"; then
        echo "$LOCAL_SLURM not found or not executable"
        return 0
    fi
}

# slurm_require: skip the whole file, visibly, unless a local Slurm can run
# here; where one is required (PIN_REQUIRE_SLURM or CI set) fail instead.
# Call it before the first test.
slurm_require () {
    if test -n "${PIN_SKIP_SLURM:-}"; then
        skip_all="local Slurm tests not run here (PIN_SKIP_SLURM): $PIN_SKIP_SLURM"
        test_done
    fi
    _why=$(slurm_missing)
    test -z "$_why" && return 0
    if test -n "${PIN_REQUIRE_SLURM:-}${CI:-}"; then
        echo "Bail out! $this_test needs a local Slurm (PIN_REQUIRE_SLURM/CI set) but: $_why"
        EXIT_OK=t
        exit 1
    fi
    skip_all="local Slurm unavailable: $_why"
    test_done
}

_slurm_add_dir () {
    case "
$_slurm_dirs
" in
        *"
$1
"*) ;;
        *) _slurm_dirs="$_slurm_dirs
$1" ;;
    esac
}

# Stop every instance of this test (idempotent).
_slurm_stop_all () {
    _rc=0
    if test -n "${PIN_SLURM_KEEP:-}" && test -n "$_slurm_dirs"; then
        echo "# PIN_SLURM_KEEP: left running; reach it with:" >&2
        printf '%s\n' "$_slurm_dirs" | while read -r _d; do
            test -n "$_d" &&
            echo "#   eval \"\$($LOCAL_SLURM env --dir '$_d')\"; $LOCAL_SLURM stop --dir '$_d'" >&2
        done
        _slurm_dirs=""
        return 0
    fi
    _dirs=$_slurm_dirs
    _slurm_dirs=""
    # Not in a pipe: a subshell would not see the result.
    _ifs=$IFS
    IFS='
'
    for _d in $_dirs; do
        IFS=$_ifs
        test -n "$_d" || continue
        "$LOCAL_SLURM" stop --dir "$_d" >&2 || _rc=1
    done
    IFS=$_ifs
    _slurm_rm_cgroups
    return $_rc
}

# Remove the cgroup directories this test file's plugin made: every test
# names its CgroupBase slurm-pin-tNNNN-$$ (this shell's pid), so the ones of
# this run are found under either cgroup2 mount once its daemons are gone.
# Runs on success and failure alike: a test leaves the machine as it found
# it.  A directory still holding a process stays (rmdir fails) and is named.
_slurm_rm_cgroups () {
    for _m in /sys/fs/cgroup/unified /sys/fs/cgroup; do
        for _c in "$_m"/slurm-pin-t[0-9]*-$$; do
            test -d "$_c" || continue
            find "$_c" -depth -type d -exec rmdir {} + 2>/dev/null ||
            { sleep 1; find "$_c" -depth -type d -exec rmdir {} + 2>/dev/null; } ||
            echo "# cgroup $_c left behind: it still holds a process" >&2
        done
    done
}

_slurm_on_exit () {
    _slurm_exit_code=$?
    _slurm_stop_all
    # sharness runs the commands given to `cleanup` only when every test
    # passed (test_done); a failed or dead file must leave the machine as
    # it found it too (processes, cgroup directories, /tmp), so they run
    # here, once, after Slurm stopped.  PIN_SLURM_KEEP keeps everything.
    if test "$_slurm_exit_code" != 0 && test -n "$final_cleanup" &&
       test -z "${PIN_SLURM_KEEP:-}"; then
        _fc=$final_cleanup
        final_cleanup=
        eval_ret=0
        eval "$_fc" </dev/null >&2 ||
            echo "# cleanup after the failure failed (exit $?)" >&2
    fi
    (exit $_slurm_exit_code)
    die
}

_slurm_install_traps () {
    test "$_slurm_traps" = yes && return 0
    _slurm_traps=yes
    # sharness' own EXIT trap is `die`: run it after stopping Slurm.
    trap '_slurm_on_exit' EXIT
    # Signals end the script through exit, so the EXIT trap runs.
    trap 'exit 129' HUP
    trap 'exit 130' INT
    trap 'exit 143' TERM
    # On success, stop before sharness removes the trash directory.
    cleanup _slurm_stop_all
}

# slurm_stop_at_exit DIR: stop the local-slurm instance in DIR at the end of
# the test, like the one of slurm_start (for extra instances).
slurm_stop_at_exit () {
    _slurm_install_traps
    _slurm_add_dir "$1"
}

# slurm_start [local-slurm.sh start options]: start a cluster in
# $SHARNESS_TRASH_DIRECTORY/slurm (or $SLURM_TEST_DIR if set), export its
# SLURM_CONF, set prereq SLURM.  Returns non-zero (with the daemons' last log
# lines on stderr) if it did not come up.
slurm_start () {
    SLURM_TEST_DIR=${SLURM_TEST_DIR:-$SHARNESS_TRASH_DIRECTORY/slurm}
    _slurm_install_traps
    _slurm_add_dir "$SLURM_TEST_DIR"
    _env=$("$LOCAL_SLURM" start --dir "$SLURM_TEST_DIR" \
           --timeout "$PIN_SLURM_TIMEOUT" "$@") || return 1
    eval "$_env" || return 1
    test -n "$SLURM_CONF" || return 1
    test_set_prereq SLURM
}

# slurm_stop [local-slurm.sh stop options]: stop the cluster of slurm_start.
slurm_stop () {
    test -n "${SLURM_TEST_DIR:-}" || return 0
    satisfied_prereq=$(printf '%s' "$satisfied_prereq" | sed 's/ SLURM / /g')
    "$LOCAL_SLURM" stop --dir "$SLURM_TEST_DIR" "$@"
}

# slurm_restart [local-slurm.sh start options]: stop, then start again
# (a new configuration: other options, another pin.conf).
slurm_restart () {
    slurm_stop && slurm_start "$@"
}

# slurm_node_state [NODE]: the node's state as sinfo's %t prints it (idle,
# alloc, mix, unk*, down*, drain, ...).
slurm_node_state () {
    sinfo -h -N -n "${1:-$LOCAL_SLURM_NODE}" -o %t
}

# slurm_job_state JOBID: JobState of the job (empty if Slurm forgot it).
slurm_job_state () {
    scontrol -o show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'
}

# slurm_wait_job JOBID [TIMEOUT]: wait until the job has ended; print its
# final state.  Returns 0 if it COMPLETED, 1 if it ended otherwise (FAILED,
# CANCELLED, TIMEOUT, ...) or is unknown, 2 if still not ended after TIMEOUT
# seconds (default $PIN_SLURM_TIMEOUT).
slurm_wait_job () {
    _job=$1
    _limit=${2:-$PIN_SLURM_TIMEOUT}
    _end=$(($(date +%s) + _limit))
    while :; do
        _st=$(slurm_job_state "$_job")
        case "$_st" in
            COMPLETED)
                echo "$_st"
                return 0 ;;
            "")
                echo "slurm_wait_job: job $_job: unknown to slurmctld" >&2
                return 1 ;;
            PENDING|CONFIGURING|RUNNING|COMPLETING|SUSPENDED|REQUEUED|RESIZING|SIGNALING|STAGE_OUT|RESV_DEL_HOLD|REQUEUE_FED|REQUEUE_HOLD|STOPPED)
                ;;
            *)
                echo "$_st"
                return 1 ;;
        esac
        if test "$(date +%s)" -ge "$_end"; then
            echo "slurm_wait_job: job $_job still $_st after ${_limit}s" >&2
            return 2
        fi
        sleep 0.2
    done
}

# pin_so_prereq: set the prerequisite PIN_SO where PIN_SO (the build's
# pin.so, or the installed one: 00-pin.sh) is there.  Under CI (CI
# non-empty) and with PIN_INSTALLED a missing pin.so is a failed test,
# never a quiet skip.
pin_so_prereq () {
    if test -r "$PIN_SO"; then
        test_set_prereq PIN_SO
    elif test -n "${CI:-}${PIN_INSTALLED:-}"; then
        test_expect_success 'pin.so is there' "
            echo '$PIN_SO: not there' && false
        "
    else
        say "pin.so not built at $PIN_SO: the plugin tests are skipped"
    fi
}

# slurm_acct_missing: print why slurmdbd + MariaDB (local-slurm.sh
# --accounting) cannot run here (nothing if they can).
slurm_acct_missing () {
    for _b in slurmdbd sacctmgr sacct mariadbd mariadb-install-db mariadb; do
        if ! command -v "$_b" >/dev/null 2>&1 && ! test -x "/usr/sbin/$_b"; then
            echo "$_b not found (Debian packages slurmdbd mariadb-server: contrib/install-deps.sh)"
            return 0
        fi
    done
}

# slurm_require_accounting: like slurm_require, for tests that start the
# cluster with --accounting.
slurm_require_accounting () {
    slurm_require
    _why=$(slurm_acct_missing)
    test -z "$_why" && return 0
    if test -n "${PIN_REQUIRE_SLURM:-}${CI:-}"; then
        echo "Bail out! $this_test needs slurmdbd and MariaDB (PIN_REQUIRE_SLURM/CI set) but: $_why"
        EXIT_OK=t
        exit 1
    fi
    skip_all="slurmdbd/MariaDB unavailable: $_why"
    test_done
}
