#!/bin/bash
# bench-acct-accuracy.sh - seed 001's question, side by side on one step
#
#   bench/bench-acct-accuracy.sh [SECS]          (root; default 60 s)
#
# Starts a private local Slurm (contrib/local-slurm.sh, with --accounting
# when that option exists) with the build's pin.so, runs ONE step
# (srun -n1 -c2) of t/acct/workload.py "mixed": short-lived processes at
# 10 Hz plus two children that detach (setsid, double fork), for SECS, and
# reports the step's CPU time (user + system) as counted by
#   - the workload itself (ground truth: getrusage of itself and its
#     waited children, plus what each detached process reported of itself),
#   - slurm-pin's journal record (cgroup cpu.stat),
#   - Slurm's sacct TotalCPU for the same step (accounting only),
#   - `ps` sampled every second (largest cumulative time seen per process),
#   - /proc/PID/stat utime+stime of the live descendants summed each second,
# each with its distance to the ground truth.  Then the cost accounting
# adds to a step's end: `srun --overlap -n1 true` alternately with Accounting=yes
# and Accounting=no (pin.conf is read anew by every step; the steps run
# in one held job so that no job scheduling is timed), and the
# plugin's own time for the record (slurmd debug log).
#
# Environment: PIN_BUILDDIR (default ./build), PIN_LOCAL_SLURM (default
# contrib/local-slurm.sh), BENCH_COST_RUNS (default 20).
set -euo pipefail

secs=${1:-60}
src=$(cd "$(dirname "$0")/.." && pwd)
build=${PIN_BUILDDIR:-$src/build}
local_slurm=${PIN_LOCAL_SLURM:-$src/contrib/local-slurm.sh}
runs=${BENCH_COST_RUNS:-20}
py=/usr/bin/python3
so=$build/src/plugins/spank/.libs/pin.so

[ "$(id -u)" = 0 ] || { echo "bench-acct-accuracy: needs root (slurmd)" >&2; exit 1; }
[ -r "$so" ] || { echo "bench-acct-accuracy: no $so: build first" >&2; exit 1; }

dir=$(mktemp -d /tmp/pin-bench-acct.XXXXXX)
started=no
cleanup () {
    [ "$started" = yes ] && "$local_slurm" stop --dir "$dir/slurm" >/dev/null 2>&1 || :
    rm -rf "$dir"
}
trap cleanup EXIT

conf () {   # conf yes|no: pin.conf with Accounting=$1
    {
        echo "CgroupBase=slurm-pin-bench-$$"
        echo "StateDir=$dir/state"
        echo "TopologyCache=$dir/topology.xml"
        echo "JournalDir=$dir/journal"
        echo "Accounting=$1"
    } >"$2"
}
conf yes "$dir/pin.conf"
echo "required $so conf=@PIN_CONF@" >"$dir/plugstack.conf"

acct_opt=()
sacct_why=""
if "$local_slurm" --help 2>&1 | grep -q -- '--accounting'; then
    acct_opt=(--accounting)
else
    sacct_why="n/a: $local_slurm has no --accounting option (slurmdbd not started)"
fi

eval "$("$local_slurm" start --dir "$dir/slurm" --plugstack "$dir/plugstack.conf" \
        --pin-conf "$dir/pin.conf" --conf-extra SlurmdDebug=debug \
        "${acct_opt[@]}")"
started=yes

# ---- accuracy ---------------------------------------------------------
tag=acctbench-$$
srun -J "$tag" -n1 -c2 "$py" "$src/t/acct/workload.py" mixed "$secs" "$tag" \
    >"$dir/workload.out" 2>"$dir/workload.err" &
srun_pid=$!
pid=""
for _ in $(seq 600); do
    pid=$(pgrep -o -f -x "$py $src/t/acct/workload.py mixed $secs $tag" || :)
    [ -n "$pid" ] && break
    sleep 0.05
done
[ -n "$pid" ] || { echo "bench-acct-accuracy: the workload did not start" >&2; cat "$dir/workload.err" >&2; exit 1; }
"$py" "$src/bench/acct-sampler.py" "$pid" 1 >"$dir/sampler.out"
wait "$srun_pid"

truth=$(sed -n 's/^cpu_usec=\([0-9]*\) .*/\1/p' "$dir/workload.out")
wall=$(sed -n 's/.* wall_usec=\([0-9]*\)$/\1/p' "$dir/workload.out")
ps_us=$(sed -n 's/^ps_usec=\([0-9]*\) .*/\1/p' "$dir/sampler.out")
proc_us=$(sed -n 's/.* proc_usec=\([0-9]*\) .*/\1/p' "$dir/sampler.out")
seen=$(sed -n 's/.* seen=\([0-9]*\)$/\1/p' "$dir/sampler.out")

rec=""
for _ in $(seq 300); do
    rec=$("$py" "$src/t/acct/records.py" "$dir/journal" job_name="$tag" step_id=0 -- \
          job_id user_usec system_usec efficiency 2>/dev/null || :)
    [ -n "$rec" ] && break
    sleep 0.2
done
IFS='|' read -r job ru rs reff <<<"$rec"
pin_us=$((ru + rs))

sacct_us=""
if [ -z "$sacct_why" ]; then
    for _ in $(seq 100); do
        t=$(sacct -n -P -j "$job.0" -o TotalCPU 2>/dev/null | head -n1)
        [ -n "$t" ] && break
        sleep 0.3
    done
    # [D-]HH:MM:SS, MM:SS.mmm or HH:MM:SS
    sacct_us=$(echo "$t" | awk '{
        d = 0; s = $0
        if (index(s, "-")) { split(s, a, "-"); d = a[1]; s = a[2] }
        n = split(s, p, ":")
        if (n == 3) sec = p[1] * 3600 + p[2] * 60 + p[3]
        else sec = p[1] * 60 + p[2]
        printf "%d", (d * 86400 + sec) * 1000000 }')
    [ -n "$sacct_us" ] || sacct_why="n/a: sacct printed nothing for step $job.0"
fi

row () {   # row NAME USEC
    awk -v n="$1" -v v="$2" -v t="$truth" 'BEGIN {
        printf "| %-44s | %10.3f | %+8.2f %% |\n", n, v / 1e6, 100 * (v - t) / t }'
}
echo
echo "One step, srun -n1 -c2, workload.py mixed $secs: $seen processes seen by the sampler, wall $(awk -v w="$wall" 'BEGIN { printf "%.1f", w / 1e6 }') s"
echo
echo "| method | CPU s | vs truth |"
echo "|---|---:|---:|"
row "ground truth (the workload's own count)" "$truth"
row "slurm-pin record (cgroup cpu.stat)" "$pin_us"
if [ -n "$sacct_us" ] && [ -z "$sacct_why" ]; then
    row "sacct TotalCPU (jobacct_gather/linux)" "$sacct_us"
else
    printf "| %-44s | %10s | %10s |\n" "sacct TotalCPU" "n/a" "n/a"
    echo "($sacct_why)"
fi
row "ps sampled every 1 s (max TIME per pid)" "$ps_us"
row "/proc/PID/stat of live descendants, 1 s" "$proc_us"
echo
echo "slurm-pin's efficiency for the step: $reff"

# ---- cost at the step's end -------------------------------------------
# Steps of one running job (srun --jobid --overlap): no job scheduling in
# the times, only the step's launch and end.
pinconf=$dir/slurm/etc/pin.conf
hold=$(sbatch --parsable -J cost-hold -n1 -c2 -o /dev/null --wrap "sleep 3600")
for _ in $(seq 300); do
    [ "$(squeue -h -j "$hold" -o %T)" = RUNNING ] && break
    sleep 0.2
done
declare -a t_yes t_no
for i in $(seq "$runs"); do
    # ABBA: neither setting always follows the other's step end
    if [ $((i % 2)) = 1 ]; then order="yes no"; else order="no yes"; fi
    for a in $order; do
        conf "$a" "$pinconf.tmp" && mv -f "$pinconf.tmp" "$pinconf"
        s=$(date +%s%N)
        srun --jobid="$hold" --overlap -n1 -c1 true 2>/dev/null
        e=$(date +%s%N)
        if [ "$a" = yes ]; then t_yes+=($(((e - s) / 1000))); else t_no+=($(((e - s) / 1000))); fi
    done
done
median () { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
scancel "$hold"
my=$(median "${t_yes[@]}")
mn=$(median "${t_no[@]}")
sleep 2
own=$(grep -o 'accounting took [0-9]* us CPU, [0-9]* us wall' "$dir/slurm/log/slurmd.log" |
      awk '{ c[NR] = $3; w[NR] = $6 } END {
          n = asort(c); asort(w)
          printf "%d us CPU, %d us wall (median of %d steps)", c[int((n + 1) / 2)], w[int((n + 1) / 2)], n }')
echo
echo "Cost at the step's end: srun --jobid=J --overlap -n1 -c1 true in one running job, $runs runs each, in ABBA order:"
echo
echo "| Accounting= | median srun wall | ratio |"
echo "|---|---:|---:|"
awk -v y="$my" -v n="$mn" 'BEGIN {
    printf "| no  | %8.1f ms | 1.000 |\n", n / 1000
    printf "| yes | %8.1f ms | %.3f |\n", y / 1000, y / n }'
echo
echo "pin.so's own time for the record (read cpu.stat, format, append + fsync): $own"
