#!/bin/bash
# t/vm/bench/timings.sh - what the qemu tier's budget is made of, measured
# inside the guest (run it with: t/vm/run-guest.sh t/vm/bench/timings.sh).
#
# Prints, as TAP comments, the seconds of: one exec of a small program,
# a bash start, an hwloc topology load, starting the guest's Slurm in each
# mode (contrib/local-slurm.sh through vm_slurm_require), a few kinds of
# steps in each mode (median of 3), switching modes, and stopping.  Nothing
# is asserted: timings vary with the host's load (other qemu guests on the
# same 2 CPUs slow everything down several times), so they are reported
# with the load average seen by the guest.  See doc/vm.md.
set -u
# shellcheck source=t/vm/guest-lib.sh disable=SC1091
. "$PIN_SRCDIR/t/vm/guest-lib.sh"

# timeit NAME N CMD...: run CMD N times (in this shell: vm_slurm_require
# exports SLURM_CONF), print the median wall time.
timeit ()
{
    local name=$1 n=$2 i s e times=()
    shift 2
    for ((i = 0; i < n; i++)); do
        s=$EPOCHREALTIME
        if ! "$@" >/dev/null 2>&1; then
            echo "not ok 1 - $name failed"
            exit 1
        fi
        e=$EPOCHREALTIME
        times+=("$(awk -v s="$s" -v e="$e" 'BEGIN { printf "%.2f", e - s }')")
    done
    printf '%s\n' "${times[@]}" | sort -n | awk -v name="$name" -v n="$n" \
        '{ t[NR] = $1 } END { printf "# %-44s %7.2f s (median of %d)\n", name, t[int((NR + 1) / 2)], n }'
}

echo "1..1"
echo "# guest uptime at start: $(cut -d' ' -f1 /proc/uptime) s"
timeit "exec /bin/true" 5 /bin/true
timeit "bash -c true" 3 bash -c true
timeit "hwloc-calc -N pu all (topology load)" 3 hwloc-calc -N pu all
for mode in cgroup affinity; do
    timeit "slurm start ($mode)" 1 vm_slurm_require "$mode"
    timeit "srun true ($mode)" 3 srun true
    timeit "srun -c 4 true ($mode)" 3 srun -c 4 true
    timeit "srun -n 4 -c 4 true ($mode)" 3 srun -n 4 -c 4 true
    timeit "sbatch --wait, 2 steps ($mode)" 1 \
        sbatch --wait -o /dev/null -c 4 --wrap "srun true; srun true"
done
timeit "slurm stop" 1 vm_slurm_stop
echo "# guest load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "ok 1 - timings measured"
