# Helpers of the Slurm-level tests for CPU lists and the plugin's cgroup
# tree (sourced by sharness; POSIX sh).

# cpus_of FILE: the Cpus_allowed_list value in FILE (/proc/PID/status).
cpus_of () {
    sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$1"
}

# count_cpus LIST: how many CPUs of this machine a kernel list ("0-3,8")
# names, counted by hwloc-calc (its locations pu:0-3 pu:8, physical
# indexes; contrib/install-deps.sh installs it).
count_cpus () {
    # shellcheck disable=SC2046 # one location per list element
    hwloc-calc --pi $(echo "$1" | sed 's/^/pu:/; s/,/ pu:/g') --number-of pu
}

# wait_tree_empty: until no job directory is left under $CGROOT/$BASE
# (slurmstepd removes it after srun returned), at most PIN_SLURM_TIMEOUT
# seconds; then list what is left (empty when all went well).  CGROOT and
# BASE are the test's cgroup2 mount and the plugin's CgroupBase.
wait_tree_empty () {
    _i=0
    while test $_i -lt $((PIN_SLURM_TIMEOUT * 5)) &&
          test -n "$(ls "$CGROOT/$BASE" 2>/dev/null | grep job_)"; do
        sleep 0.2
        _i=$((_i + 1))
    done
    find "$CGROOT/$BASE" -mindepth 1 -type d 2>/dev/null || true
}

# cpu_heavy_exclusive: the test files that keep CPUs busy and measure what
# they got (t4000 efficiency, t5000 over-use at nice -20, t6000 fork
# bursts), and those that time daemons or steps under load (t3000, t4001,
# t4080 and t4090 with MariaDB and slurmdbd) take turns under 'make -j':
# this file holds an exclusive lock from here until it exits, so two of
# them never share this machine's CPUs.  The lock is a
# file of the build tree (descriptor 8, closed by the exit of the script).
cpu_heavy_exclusive () {
    _lock=${PIN_BUILDDIR:-${SHARNESS_BUILD_DIRECTORY:-.}}/t/.cpu-heavy.lock
    exec 8>>"$_lock" || return 1
    echo "# waiting for the other CPU-heavy test files (flock $_lock)"
    flock 8 && _cpu_heavy_held=1
}

# cpu_heavy_idle COMMAND...: run COMMAND (a function too) with the lock
# handed to the other CPU-heavy files, then take it back, waiting for the
# one that has it; COMMAND's status.  For waits in which this file's jobs
# only sleep, after everything it measures has ended: a job running out
# its one-minute time limit to end as TIMEOUT takes 60 to 90 s (slurmctld
# checks limits every 30 s), time the other files can use.  Without the
# lock (cpu_heavy_exclusive not called) it only runs COMMAND.
cpu_heavy_idle () {
    if test -z "${_cpu_heavy_held:-}"; then
        "$@"
        return
    fi
    flock -u 8
    "$@"
    _cpu_heavy_rc=$?
    echo "# taking the CPU-heavy lock back"
    flock 8 || return 1
    return $_cpu_heavy_rc
}
