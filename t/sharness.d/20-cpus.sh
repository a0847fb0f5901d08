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
    flock 8
}
