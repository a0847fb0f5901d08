# shellcheck shell=sh
# t/vm/guest-lib.sh - helpers for the tests that run inside the qemu guest.
# POSIX sh, sourced by t/vm/tests/t*.sh (after sharness) and by
# t/vm/guest-run.sh.  See doc/vm.md.
#
# The guest's Slurm cluster (contrib/local-slurm.sh) lives in
# /run/pin-vm/slurm (a tmpfs that exists only in this boot) and is shared by
# every test of the boot: a test asks for the mode (and local-slurm.sh
# options) it needs with vm_slurm_require, which reuses the running cluster
# when it matches and restarts it otherwise.  Tests never stop it: the
# guest powers off after guest-run.sh, which only saves its logs.
#
# Modes (DESIGN.md "Where Slurm's own cgroups are"):
#   cgroup    cgroup/v2, proctrack/cgroup, task/cgroup,task/affinity
#   affinity  proctrack/linuxproc, task/affinity (no Slurm cgroups)

: "${PIN_VM_OUT:=/share/out}"
VM_SLURM_DIR=/run/pin-vm/slurm
VM_SLURM_STATE=/run/pin-vm/slurm.mode

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

# vm_slurm_mode: what the running cluster was started with ("MODE
# [OPTIONS]"), or nothing.
vm_slurm_mode ()
{
    cat "$VM_SLURM_STATE" 2>/dev/null
}

# vm_slurm_require MODE [OPTIONS...]: make sure the guest's cluster runs in
# MODE (cgroup or affinity) with the given contrib/local-slurm.sh start
# OPTIONS (--plugstack FILE, --pin-conf FILE, --conf-extra K=V, ...); reuse
# it when it already does, else (re)start it.  Exports SLURM_CONF and
# LOCAL_SLURM_DIR.  Returns non-zero, with the reason on stderr, when the
# cluster cannot start (its logs are then in $PIN_VM_OUT/slurm-MODE-logs/).
vm_slurm_require ()
{
    case ${1:-} in
        cgroup|affinity) ;;
        *) echo "vm_slurm_require: mode '${1:-}' unknown; known: cgroup, affinity" >&2
           return 1 ;;
    esac
    if test "$(vm_slurm_mode)" = "$*" \
            && eval "$("$PIN_SRCDIR/contrib/local-slurm.sh" env --dir "$VM_SLURM_DIR" 2>/dev/null)" \
            && scontrol ping >/dev/null 2>&1; then
        return 0
    fi
    vm_slurm_stop
    _start=$(vm_now)
    vm_slurm_start "$@" || { vm_slurm_stop; return 1; }
    vm_record_time "slurm start ($1)" "$_start"
}

# vm_slurm_start MODE [OPTIONS...]: start a cluster with
# contrib/local-slurm.sh in $VM_SLURM_DIR.  In cgroup mode, cgroup.conf
# then gets ConstrainRAMSpace=yes (and slurmd re-reads it): in 22.05.8
# task/cgroup's cpuset code moves every task back to user/task_special
# after jobacct/proctrack put it in task_<n>, and only the memory code,
# which runs after it, moves it to task_<n> again (doc/vm.md).
vm_slurm_start ()
{
    _mode=$1
    shift
    mkdir -p "$VM_SLURM_DIR" || return 1
    "$PIN_SRCDIR/contrib/local-slurm.sh" start --dir "$VM_SLURM_DIR" \
        --mode "$_mode" --timeout "${PIN_SLURM_TIMEOUT:-300}" "$@" \
        >"$VM_SLURM_DIR.env" 2>"$VM_SLURM_DIR.start.log" || {
        cat "$VM_SLURM_DIR.start.log" >&2
        return 1
    }
    eval "$(cat "$VM_SLURM_DIR.env")"
    if test "$_mode" = cgroup; then
        _cgconf=$(dirname "$SLURM_CONF")/cgroup.conf
        if grep -q '^ConstrainRAMSpace=no' "$_cgconf"; then
            sed -i 's/^ConstrainRAMSpace=no/ConstrainRAMSpace=yes/' "$_cgconf" \
                && scontrol reconfigure || return 1
            vm_slurm_wait_idle || return 1
        fi
    fi
    echo "$_mode${*:+ $*}" >"$VM_SLURM_STATE"
}

# vm_slurm_wait_idle: wait (PIN_SLURM_TIMEOUT, 300 s) for the node to be idle.
vm_slurm_wait_idle ()
{
    _n=0
    _limit=$((2 * ${PIN_SLURM_TIMEOUT:-300}))
    while test "$(sinfo -h -o %t 2>/dev/null)" != idle; do
        _n=$((_n + 1))
        if test $_n -gt $_limit; then
            echo "vm_slurm_wait_idle: node not idle after ${PIN_SLURM_TIMEOUT:-300}s: $(sinfo -h -o %t 2>&1)" >&2
            return 1
        fi
        sleep 0.5
    done
}

# vm_slurm_save_logs: copy the cluster's logs to $PIN_VM_OUT/slurm-MODE-logs/.
vm_slurm_save_logs ()
{
    _mode=$(vm_slurm_mode)
    if test -d "$PIN_VM_OUT" && test -d "$VM_SLURM_DIR/log"; then
        _logs=$PIN_VM_OUT/slurm-${_mode%% *}-logs
        mkdir -p "$_logs"
        cp "$VM_SLURM_DIR"/log/*.log "$VM_SLURM_DIR.start.log" "$_logs/" 2>/dev/null
    fi
    return 0
}

# vm_slurm_stop: stop the cluster if one runs, keeping its logs (above).
vm_slurm_stop ()
{
    test -d "$VM_SLURM_DIR" || return 0
    "$PIN_SRCDIR/contrib/local-slurm.sh" stop --dir "$VM_SLURM_DIR" >/dev/null 2>&1
    _rc=$?
    vm_slurm_save_logs
    rm -f "$VM_SLURM_STATE"
    return $_rc
}
