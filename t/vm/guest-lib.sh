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
# has ConstrainRAMSpace=yes from the start (local-slurm.sh --cgroup-extra,
# like any --cgroup-extra K=V of OPTIONS): in 22.05.8 task/cgroup's cpuset
# code moves every task back to user/task_special after jobacct/proctrack
# put it in task_<n>, and only the memory code, which runs after it, moves
# it to task_<n> again (doc/vm.md).  It is written before the daemons
# start: an 'scontrol reconfigure' right after the start restarts both
# daemons from 23.11 on, and on Slurm 24.11 the first start after boot
# then once left the node never idle (doc/vm.md).
vm_slurm_start ()
{
    _mode=$1
    shift
    _state="$_mode${*:+ $*}"
    mkdir -p "$VM_SLURM_DIR" || return 1
    if test "$_mode" = cgroup; then
        set -- --cgroup-extra ConstrainRAMSpace=yes "$@"
    fi
    "$PIN_SRCDIR/contrib/local-slurm.sh" start --dir "$VM_SLURM_DIR" \
        --mode "$_mode" --timeout "${PIN_SLURM_TIMEOUT:-300}" "$@" \
        >"$VM_SLURM_DIR.env" 2>"$VM_SLURM_DIR.start.log" || {
        cat "$VM_SLURM_DIR.start.log" >&2
        return 1
    }
    eval "$(cat "$VM_SLURM_DIR.env")"
    vm_slurm_wait_idle || { vm_slurm_diagnose >&2; return 1; }
    echo "$_state" >"$VM_SLURM_STATE"
}

# vm_slurm_diagnose: what the cluster looks like (on stderr of a failed
# start): the node as slurmctld sees it and the ends of the daemons' logs.
vm_slurm_diagnose ()
{
    echo "# vm_slurm_diagnose: sinfo -N -l; scontrol show node; the daemons' logs"
    sinfo -N -l 2>&1
    scontrol show node 2>&1
    for _log in "$VM_SLURM_DIR"/log/*.log "$VM_SLURM_DIR.start.log"; do
        test -f "$_log" || continue
        echo "# --- $_log (last 30 lines)"
        tail -n 30 "$_log"
    done
}

# vm_slurm_job_id_paths: true if Slurm names job cgroups job_<id> although
# it has SLUIDs (26.05's CgroupJobIdPaths=yes, as scontrol shows it).
vm_slurm_job_id_paths ()
{
    scontrol show config 2>/dev/null | grep -qiE '^CgroupJobIdPaths *= *yes'
}

# vm_job_cgdir JOB: the name of job JOB's cgroup directory below the
# slurmstepd scope: its SLUID where Slurm has them (26.05: SLUID= in
# 'scontrol -d show job') unless CgroupJobIdPaths=yes, else job_JOB.
vm_job_cgdir ()
{
    _sluid=$(scontrol -d show job "$1" 2>/dev/null \
                 | sed -n 's/^ *SLUID=\([^ ]*\).*/\1/p')
    if test -n "$_sluid" && ! vm_slurm_job_id_paths; then
        echo "$_sluid"
    else
        echo "job_$1"
    fi
}

# VM_JOBDIR_RE: an ERE for a job's cgroup directory of either scheme.
# shellcheck disable=SC2034  # for tests
VM_JOBDIR_RE='(job_[0-9]+|s[0-9A-HJKMNP-TV-Z]{13})'

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

# --- slurm-pin's pin.so in the guest's Slurm (t/vm/tests/t10-t49) ----------
#
# vm_pin_require MODE installs the build's pin.so in the cluster's
# plugstack; the probes below print what the kernel says about a task; the
# vm_hw_* helpers check rule-level properties with hwloc-calc, independently
# of libtopo/libplace.  See doc/vm.md "slurm-pin in the guest".

VM_PIN_DIR=/run/pin-vm/pin          # pin.conf, StateDir, TopologyCache
VM_PIN_BASE=slurm-pin               # CgroupBase of the standalone tree
VM_HW_XML=/run/pin-vm/hwloc.xml     # the guest's topology, for hwloc-calc

# VM_PROBE: a shell snippet a task runs (sh -c "$VM_PROBE"): one line
#   task=N cpus=LIST mems=LIST cg=PATH cg_cpus=LIST cg_mems=LIST step_cpus=LIST
# from the task's own /proc/PID/status (the shell's, $$), its cgroup
# (/proc/PID/cgroup) and that cgroup's cpuset.*.effective; step_cpus is
# cpuset.cpus.effective of the task cgroup's parent: in cgroup mode Slurm's
# step_<id>/user, which holds the CPUs Slurm gave the step.
# shellcheck disable=SC2016,SC2034  # expanded by the task's shell; for tests
VM_PROBE='vm_c=$(sed -n "s/^0:://p" /proc/$$/cgroup)
vm_s=${vm_c%/task_*}
echo "task=${SLURM_PROCID:-?} cpus=$(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/$$/status) mems=$(sed -n "s/^Mems_allowed_list:[[:space:]]*//p" /proc/$$/status) cg=$vm_c cg_cpus=$(cat /sys/fs/cgroup$vm_c/cpuset.cpus.effective) cg_mems=$(cat /sys/fs/cgroup$vm_c/cpuset.mems.effective) step_cpus=$(cat /sys/fs/cgroup$vm_s/cpuset.cpus.effective)"'

# VM_ESCAPE: a snippet that tries to widen the task's CPUs every way a user
# could: sched_setaffinity to every CPU (taskset), writing its cgroup's
# cpuset, moving itself to the root cgroup.  Prints "escape: ..." lines:
# the kernel's Cpus_allowed_list after taskset (not taskset's own text,
# whose list format changed: util-linux in sid prints 0,2,4,6 as "0-6:2"),
# and "wrote cpuset" / "moved to root" if those worked.
# shellcheck disable=SC2016,SC2034
VM_ESCAPE='taskset -p -c 0-15 $$ >/dev/null 2>&1
echo "escape: $(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/$$/status)"
echo 0-15 2>/dev/null >/sys/fs/cgroup$vm_c/cpuset.cpus && echo "escape: wrote cpuset"
echo $$ 2>/dev/null >/sys/fs/cgroup/cgroup.procs && echo "escape: moved to root"
true'

# vm_pin_require MODE [OPTIONS...]: the guest's cluster in MODE
# (vm_slurm_require, OPTIONS passed on to local-slurm.sh start) with
# the build's pin.so in its plugstack and a pin.conf of ours.  Slurm reads
# plugstack.conf anew in every srun/sbatch and slurmstepd (doc/admin-guide.md),
# so it is written into the running cluster's etc/ without a restart.
# Its journal is the cluster's (LOCAL_SLURM_JOURNAL, new at every start),
# with nothing to deliver to.  Exports PIN_SO, PIN_CONF and puts the
# build's slurm-pin on PATH.
vm_pin_require ()
{
    PIN_SO=${PIN_BUILDDIR:-}/src/plugins/spank/.libs/pin.so
    if test -z "${PIN_BUILDDIR:-}" || ! test -r "$PIN_SO"; then
        echo "vm_pin_require: no pin.so at '$PIN_SO': give run-tests.sh --builddir DIR of a build" >&2
        return 1
    fi
    vm_slurm_require "$@" || return 1
    mkdir -p "$VM_PIN_DIR" || return 1
    PIN_CONF=$VM_PIN_DIR/pin.conf
    export PIN_SO PIN_CONF
    cat >"$PIN_CONF.tmp" <<-EOF || return 1
	# written by t/vm/guest-lib.sh vm_pin_require
	CgroupBase=$VM_PIN_BASE
	StateDir=$VM_PIN_DIR/state
	TopologyCache=$VM_PIN_DIR/topology.xml
	JournalDir=$LOCAL_SLURM_JOURNAL
	DeliverCommand=none
	EOF
    chmod 644 "$PIN_CONF.tmp" && mv -f "$PIN_CONF.tmp" "$PIN_CONF" || return 1
    _ps=$(dirname "$SLURM_CONF")/plugstack.conf
    echo "required $PIN_SO conf=$PIN_CONF" >"$_ps.tmp" \
        && mv -f "$_ps.tmp" "$_ps" || return 1
    case :$PATH: in
        *":$PIN_BUILDDIR/src/cmd:"*) ;;
        *) PATH=$PIN_BUILDDIR/src/cmd:$PATH; export PATH ;;
    esac
    test -s "$VM_HW_XML" || lstopo --of xml --force "$VM_HW_XML" || return 1
}

# vm_pin_remove: an empty plugstack again (Slurm alone).
vm_pin_remove ()
{
    echo "# empty: Slurm alone" >"$(dirname "$SLURM_CONF")/plugstack.conf"
}

# vm_probe_tasks FILE [FIELD_CPUS FIELD_MEMS]: from VM_PROBE lines in
# FILE, one line per task in task order, "task N: cpus=LIST mems=LIST"
# (the form of 'slurm-pin plan'), taken from the fields cpus/mems (the
# kernel's view of the task, the default) or cg_cpus/cg_mems (its cgroup).
vm_probe_tasks ()
{
    sed -n 's/^task=\([0-9]*\) .*/&/p' "$1" | awk -v fc="${2:-cpus}" -v fm="${3:-mems}" '
        {
            delete f
            for (i = 1; i <= NF; i++) {
                k = $i; sub(/=.*/, "", k); v = $i; sub(/^[^=]*=/, "", v); f[k] = v
            }
            printf "task %s: cpus=%s mems=%s\n", f["task"], f[fc], f[fm]
        }' | sort -n -k 2
}

# vm_probe_field FILE TASK FIELD: FIELD of task TASK's first probe line.
vm_probe_field ()
{
    awk -v t="task=$2" -v k="$3=" '
        $1 == t {
            for (i = 2; i <= NF; i++)
                if (index($i, k) == 1) { print substr($i, length(k) + 1); exit }
            exit
        }' "$1"
}

# vm_verbose_tasks FILE: pin's verbose lines in FILE as "task N: cpus=..
# mems=.." in task order.
vm_verbose_tasks ()
{
    sed -n 's/^pin: task \([0-9]*\) on [^:]*: policy=[^ ]* cpus=\([^ ]*\) mems=\([^ ]*\).*/task \1: cpus=\2 mems=\3/p' \
        "$1" | sort -n -k 2
}

# vm_plan POLICY NTASKS CPUS ALLOWED [SEED]: what 'slurm-pin plan' says on
# this machine's topology, without fallback notes.
vm_plan ()
{
    slurm-pin plan --topology system --policy "$1" -n "$2" -c "$3" \
        --allowed "$4" ${5:+--seed "$5"} | sed 's/ fallback=.*//'
}

# vm_hw ARGS...: hwloc-calc on the guest's topology (XML saved once: each
# discovery costs a second or more under emulation).
vm_hw ()
{
    hwloc-calc --input "$VM_HW_XML" "$@"
}

# vm_hw_locs LIST: kernel CPU list "0-3,8" as hwloc-calc locations.
vm_hw_locs ()
{
    echo "$1" | sed 's/^/pu:/; s/,/ pu:/g'
}

# vm_hw_count TYPE LIST: how many TYPE objects (core, numa, l2, ...) the
# CPUs of LIST touch.
vm_hw_count ()
{
    # shellcheck disable=SC2046
    vm_hw --physical-input -N "$1" $(vm_hw_locs "$2")
}

# vm_hw_in TYPE INDEX LIST: how many CPUs of LIST are in TYPE:INDEX (an OS
# index for numa, logical otherwise).
vm_hw_in ()
{
    # shellcheck disable=SC2046
    vm_hw --physical-input -N pu $(vm_hw_locs "$3") "x$1:$2"
}

# vm_hw_numa LIST: the NUMA nodes (OS indexes, "0,1") the CPUs of LIST are in.
vm_hw_numa ()
{
    # shellcheck disable=SC2046
    vm_hw --physical -I numa $(vm_hw_locs "$1")
}

# vm_hw_nodes MEMS: a kernel node list ("0-1") as "0,1".
vm_hw_nodes ()
{
    # shellcheck disable=SC2046
    vm_hw --physical -I numa $(echo "$1" | sed 's/^/numa:/; s/,/ numa:/g')
}

# vm_hw_whole_cores LIST: true if LIST holds every PU of every core it
# touches (both SMT threads).
vm_hw_whole_cores ()
{
    # shellcheck disable=SC2046
    _cores=$(vm_hw --physical-input --intersect core $(vm_hw_locs "$1") \
                 | sed 's/^/core:/; s/,/ core:/g')
    # shellcheck disable=SC2046,SC2086
    test "$(vm_hw --physical-output -I pu $_cores)" \
        = "$(vm_hw --physical -I pu $(vm_hw_locs "$1"))"
}

# vm_jobs_wait: until no job is left in the queue (at most
# PIN_SLURM_TIMEOUT, 300 s).
vm_jobs_wait ()
{
    _n=0
    while test -n "$(squeue -h -o %A 2>/dev/null)"; do
        _n=$((_n + 1))
        test $_n -le $((2 * ${PIN_SLURM_TIMEOUT:-300})) || return 1
        sleep 0.5
    done
}

# vm_pin_leftovers: what of ours is left once every job ended, waiting up
# to 30 s for slurmstepd to finish: job_* (and SLUID) cgroups under Slurm's scope and
# under the standalone base, claims in StateDir.  Prints them (nothing when
# all is clean).
vm_pin_leftovers ()
{
    _n=0
    while :; do
        _left=$(
            for _d in /sys/fs/cgroup/system.slice/*_slurmstepd.scope \
                      "/sys/fs/cgroup/$VM_PIN_BASE"; do
                test -d "$_d" && find "$_d" -mindepth 1 -maxdepth 1 -type d \
                    \( -name 'job_*' -o -regex '.*/s[0-9A-Z]\{13\}' \)
            done
            test -d "$VM_PIN_DIR/state/claims" \
                && find "$VM_PIN_DIR/state/claims" -mindepth 1
        )
        test -z "$_left" && return 0
        _n=$((_n + 1))
        if test $_n -gt 150; then
            echo "$_left"
            return 0
        fi
        sleep 0.2
    done
}

# --- devices local to a NUMA node (run-guest.sh --io-numa, t60) -------------

# vm_pci_busid SYSFS_PATH: the PCI bus id (0000:81:00.0) of the PCI device
# SYSFS_PATH is or hangs below (a DRM card's device is the PCI function;
# a virtio NIC's is virtioN, whose parent is): the last path component of
# the resolved path that is a bus id.  Nothing when there is none.
vm_pci_busid ()
{
    readlink -f "$1" | tr / '\n' \
        | grep -E '^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$' | tail -n 1
}

# vm_cpulist_expand LIST: a kernel CPU list ("8-11,14") one CPU a line.
vm_cpulist_expand ()
{
    echo "$1" | tr , '\n' | awk -F- 'NF { b = $1; e = (NF > 1) ? $2 : $1
                                          for (i = b; i <= e; i++) print i }'
}

# vm_cpus_within LIST NODE: true if every CPU of LIST is one of NUMA node
# NODE's, as the kernel lists them in /sys/devices/system/node/nodeNODE.
vm_cpus_within ()
{
    vm_cpulist_expand "$(cat "/sys/devices/system/node/node$2/cpulist")" >"${TMPDIR:-/tmp}/vm_within.$$"
    _out=$(vm_cpulist_expand "$1" | grep -v -x -F -f "${TMPDIR:-/tmp}/vm_within.$$")
    rm -f "${TMPDIR:-/tmp}/vm_within.$$"
    test -n "$1" && test -z "$_out"
}
