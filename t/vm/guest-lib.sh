# shellcheck shell=sh
# t/vm/guest-lib.sh - helpers for the tests that run inside the qemu guest.
# POSIX sh, sourced by t/vm/tests/t*.sh (after sharness) and by
# t/vm/guest-run.sh.  See doc/vm.md.
#
# The guest's Slurm cluster lives in /run/pin-vm/slurm (a tmpfs that exists
# only in this boot) and is shared by every test of the boot: a test asks
# for the mode it needs with vm_slurm_require, which reuses the running
# cluster when it is in that mode and restarts it otherwise.  Tests never
# stop it; guest-run.sh does at the end (and the guest powers off anyway).
#
# Modes (DESIGN.md "Where Slurm's own cgroups are"):
#   cgroup    cgroup/v2, proctrack/cgroup, task/cgroup,task/affinity
#   affinity  proctrack/linuxproc, task/affinity (no Slurm cgroups)

: "${PIN_VM_OUT:=/share/out}"
VM_SLURM_DIR=/run/pin-vm/slurm

if test "${PIN_VM:-}" = 1 && test -d /share/out; then
    if command -v test_set_prereq >/dev/null 2>&1; then
        test_set_prereq VM
    fi
elif command -v test_done >/dev/null 2>&1; then
    # A guest test run on the host by mistake: skip, never pass.
    # shellcheck disable=SC2034
    skip_all="not inside the qemu guest: run it with t/vm/run-guest.sh or t/vm/run-tests.sh"
    test_done
fi

# vm_now: seconds since the epoch, with nanoseconds.
vm_now ()
{
    date +%s.%N
}

# vm_record_time NAME START: record the seconds since START (from vm_now)
# under NAME in $PIN_VM_OUT/timings (guest-run.sh prints them at the end).
vm_record_time ()
{
    awk -v name="$1" -v start="$2" -v now="$(vm_now)" \
        'BEGIN { printf "%s\t%.1f\n", name, now - start }' \
        >>"$PIN_VM_OUT/timings"
}

# vm_note TEXT: record an observation (a value seen, not asserted) in
# $PIN_VM_OUT/notes; guest-run.sh prints them as TAP comments.
vm_note ()
{
    echo "$*" >>"$PIN_VM_OUT/notes"
}

# vm_pus LIST: the number of PUs in a kernel CPU list ("0-3,8,10-11"),
# counted by hwloc on this machine's topology.
vm_pus ()
{
    # shellcheck disable=SC2046
    hwloc-calc --physical-input -N pu $(echo "$1" | sed 's/^/pu:/; s/,/ pu:/g')
}

# vm_cores LIST: the number of cores LIST touches.
vm_cores ()
{
    # shellcheck disable=SC2046
    hwloc-calc --physical-input -N core $(echo "$1" | sed 's/^/pu:/; s/,/ pu:/g')
}

# vm_status_field FILE NAME: the value of "NAME:" in a /proc/PID/status copy.
vm_status_field ()
{
    sed -n "s/^$2:[[:space:]]*//p" "$1"
}

# vm_cg_rmdir DIR: remove a cgroup, retrying while the kernel still holds
# exited processes (EBUSY for a moment, FACTS.md).
vm_cg_rmdir ()
{
    _n=0
    while ! rmdir "$1" 2>/dev/null; do
        test -d "$1" || return 0
        _n=$((_n + 1))
        test $_n -lt 50 || { rmdir "$1"; return 1; }
        sleep 0.1
    done
}

# vm_daemon CMD...: start a daemon (it forks itself) with no file open but
# /dev/null: a daemon that inherits a test's output (sharness keeps it on
# fd 5) would hold it open after the test ends.
vm_daemon ()
{
    "$@" </dev/null >/dev/null 2>&1 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-
}

# vm_slurm_mode: the mode of the running cluster, or nothing.
vm_slurm_mode ()
{
    cat "$VM_SLURM_DIR/mode" 2>/dev/null
}

# vm_slurm_require MODE: make sure the guest's cluster runs in MODE (start
# or restart it) and export SLURM_CONF for it.  Returns non-zero, with the
# reason on stderr, when it cannot.
vm_slurm_require ()
{
    case $1 in
        cgroup|affinity) ;;
        *) echo "vm_slurm_require: mode '$1' unknown; known: cgroup, affinity" >&2
           return 1 ;;
    esac
    SLURM_CONF=$VM_SLURM_DIR/etc/slurm.conf
    export SLURM_CONF
    if test "$(vm_slurm_mode)" = "$1" && scontrol ping >/dev/null 2>&1; then
        return 0
    fi
    vm_slurm_stop
    _start=$(vm_now)
    vm_slurm_start "$1" || return 1
    vm_record_time "slurm start ($1)" "$_start"
}

# vm_slurm_start MODE: start munged (once per boot), slurmctld and slurmd
# with a private configuration in $VM_SLURM_DIR, and wait until the node
# is idle.
#
# TEMPORARY: a minimal start of our own until contrib/local-slurm.sh
# (start --dir DIR --mode cgroup|affinity) is in the repository.
vm_slurm_start ()
{
    _d=$VM_SLURM_DIR
    rm -rf "$_d"
    mkdir -p "$_d/etc" "$_d/state" "$_d/spool" "$_d/log" "$_d/run" || return 1

    if ! munge -n </dev/null >/dev/null 2>&1; then
        mkdir -p /run/munge && chown munge:munge /run/munge || return 1
        vm_daemon runuser -u munge -- /usr/sbin/munged || {
            echo "vm_slurm_start: munged did not start" >&2
            return 1
        }
    fi

    _node=$(hostname -s)
    _nodeline=$(slurmd -C | sed -n 's/^\(NodeName=.* RealMemory=[0-9]*\).*/\1/p')
    test -n "$_nodeline" || {
        echo "vm_slurm_start: 'slurmd -C' printed no NodeName line" >&2
        return 1
    }
    if test "$1" = cgroup; then
        # Slurm 22.05 has no EnableControllers: enable them top-down.
        echo "+cpuset +cpu +memory +pids" >/sys/fs/cgroup/cgroup.subtree_control \
            && mkdir -p /sys/fs/cgroup/system.slice \
            && echo "+cpuset +cpu +memory +pids" \
                    >/sys/fs/cgroup/system.slice/cgroup.subtree_control \
            || return 1
        _proctrack=proctrack/cgroup
        _task=task/cgroup,task/affinity
        # ConstrainRAMSpace=yes: in 22.05.8 task/cgroup's cpuset code moves
        # each task back to user/task_special after it was put in task_<n>;
        # the memory code, which runs after it, moves it to task_<n> again.
        cat >"$_d/etc/cgroup.conf" <<EOF
CgroupPlugin=cgroup/v2
IgnoreSystemd=yes
ConstrainCores=yes
ConstrainRAMSpace=yes
EOF
    else
        _proctrack=proctrack/linuxproc
        _task=task/affinity
    fi
    : >"$_d/etc/plugstack.conf"
    cat >"$_d/etc/slurm.conf" <<EOF
ClusterName=pinvm
SlurmctldHost=$_node
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$_d/state
SlurmdSpoolDir=$_d/spool
SlurmctldPidFile=$_d/run/slurmctld.pid
SlurmdPidFile=$_d/run/slurmd.pid
SlurmctldLogFile=$_d/log/slurmctld.log
SlurmdLogFile=$_d/log/slurmd.log
PlugStackConfig=$_d/etc/plugstack.conf
ProctrackType=$_proctrack
TaskPlugin=$_task
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
ReturnToService=2
MessageTimeout=60
InactiveLimit=0
KillWait=5
$_nodeline State=UNKNOWN
PartitionName=debug Nodes=$_node Default=YES MaxTime=INFINITE State=UP
EOF
    echo "$1" >"$_d/mode"
    SLURM_CONF=$_d/etc/slurm.conf
    export SLURM_CONF
    if ! vm_daemon slurmctld || ! vm_daemon slurmd; then
        echo "vm_slurm_start: slurmctld or slurmd did not start (logs in $_d/log)" >&2
        return 1
    fi
    _n=0
    while test "$(sinfo -h -n "$_node" -o %t 2>/dev/null)" != idle; do
        _n=$((_n + 1))
        if test $_n -gt 240; then
            echo "vm_slurm_start: node $_node not idle after 120s: $(sinfo -h -n "$_node" -o %t 2>&1)" >&2
            return 1
        fi
        sleep 0.5
    done
}

# vm_slurm_stop: stop the cluster if one runs, keeping its logs in
# $PIN_VM_OUT/slurm-MODE-logs/.
vm_slurm_stop ()
{
    _mode=$(vm_slurm_mode)
    test -n "$_mode" || return 0
    SLURM_CONF=$VM_SLURM_DIR/etc/slurm.conf scontrol shutdown >/dev/null 2>&1
    for _pidfile in "$VM_SLURM_DIR/run/slurmctld.pid" "$VM_SLURM_DIR/run/slurmd.pid"; do
        _pid=$(cat "$_pidfile" 2>/dev/null) || continue
        _n=0
        while kill -0 "$_pid" 2>/dev/null && test $_n -lt 120; do
            sleep 0.5
            _n=$((_n + 1))
        done
        kill -KILL "$_pid" 2>/dev/null
    done
    if test -d "$PIN_VM_OUT"; then
        mkdir -p "$PIN_VM_OUT/slurm-$_mode-logs"
        cp "$VM_SLURM_DIR"/log/*.log "$PIN_VM_OUT/slurm-$_mode-logs/" 2>/dev/null
    fi
    rm -f "$VM_SLURM_DIR/mode"
}
