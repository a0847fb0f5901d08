#!/bin/bash
# bench-profile-slurm.sh - what --pin-profile costs a fork-heavy job step
#
#   bench/bench-profile-slurm.sh [--rate R] [FORKS] [ROUNDS]     (root: starts slurmd)
#
# One private Slurm with pin.so (contrib/local-slurm.sh).  The same step,
# `srun -n1 -c1 BURST FORKS` (a C program: FORKS fork()s whose children
# _exit(0) at once, reaped after the last: bench/burst.c; it prints the
# time its forks took), runs ROUNDS times each way, interleaved so that a change of the
# machine's load hits both:
#   off      srun --pin-profile=off
#   profile  srun --pin-profile=1s  (pin.so's recorder in the step's
#            watcher thread: proc connector, taskstats, samples with PSS)
#   strace   srun --pin-profile=off ... strace -f -e trace=process -ttt
#            -o FILE BURST FORKS  (the same step traced, for comparison)
# and prints the median of the workload's own fork time (what the job
# feels) and of srun's wall time (the recorder's start and end included),
# with the ratios to off, and per round the processes each profile holds
# and the events it lost.  Defaults: 2000 forks, 9 rounds.
# --rate R: the workload forks on a clock-driven schedule, R per second
# (bench/burst.c --rate); a second table gives the workload's own
# measures in every mode: its CPU time with its children's (getrusage),
# the rate it achieved and whether it kept R, its per-fork latency.
# Environment: PIN_BUILDDIR (default ./build).
set -euo pipefail
LC_ALL=C
export LC_ALL

prog=bench-profile-slurm
die () { echo "$prog: $*" >&2; exit 1; }
top=$(cd "$(dirname "$0")/.." && pwd)
build=${PIN_BUILDDIR:-$top/build}
pin_so=$build/src/plugins/spank/.libs/pin.so
slurmpin=$build/src/cmd/slurm-pin
rate=""
if [ "${1:-}" = --rate ]; then
    rate=${2:-}
    shift 2 || true
    case $rate in
    ''|*[!0-9]*|0) die "--rate '$rate': give forks per second, a whole number above 0" ;;
    esac
fi
forks=${1:-2000}
rounds=${2:-9}
load0=$(cut -d' ' -f1-3 /proc/loadavg)
py=/usr/bin/python3

[ "$(id -u)" = 0 ] || die "needs root (slurmd runs as root)"
[ -r "$pin_so" ] || die "$pin_so: not built"
[ -x "$slurmpin" ] || die "$slurmpin: not built"

work=$(mktemp -d /tmp/bench-profile-slurm.XXXXXX) || die "mktemp failed"
chmod 755 "$work"
cleanup () {
    "$top/contrib/local-slurm.sh" stop --dir "$work/cluster" --clean \
        >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

"${CC:-cc}" -O2 -o "$work/burst" "$top/bench/burst.c"

cat >"$work/pin.conf" <<EOF
DefaultPolicy=none
StateDir=$work/state
TopologyCache=$work/topology.xml
JournalDir=$work/journal
DeliverCommand=none
ProfileDir=$work/profile
EOF
echo "required $pin_so conf=@PIN_CONF@" >"$work/plugstack.conf"
env_out=$("$top/contrib/local-slurm.sh" start --dir "$work/cluster" \
    --plugstack "$work/plugstack.conf" --pin-conf "$work/pin.conf") \
    || die "the cluster did not start"
eval "$env_out"

now () { date +%s.%N; }
burst=("$work/burst" "$forks")
[ -z "$rate" ] || burst=("$work/burst" --rate "$rate" "$forks")
command -v strace >/dev/null || die "strace not found"
modes="off profile strace"
declare -A wall inner seen wcpu wrate wkept wlat wlat99
for r in $(seq "$rounds"); do
    for mode in $modes; do
        opt=--pin-profile=off
        [ "$mode" = profile ] && opt=--pin-profile=1s
        pre=()
        [ "$mode" = strace ] && pre=(strace -f -e trace=process -ttt -o "$work/s.txt")
        t0=$(now)
        out=$(srun "$opt" -n1 -c1 sh -c 'echo $SLURM_JOB_ID; exec "$@"' sh \
              "${pre[@]}" "${burst[@]}")
        t1=$(now)
        job=$(echo "$out" | sed -n 1p)
        line=$(echo "$out" | sed -n 2p)
        inner[$mode]+="$(echo "$line" | "$py" -c 'import json,sys; print(json.load(sys.stdin)["burst_s"])') "
        read -r a b c d e < <(echo "$line" | "$py" -c 'import json,sys; j=json.load(sys.stdin); print(j["cpu_s"], j["rate"], {True: "yes", False: "no", None: "-"}[j["kept"]], j["fork_us_p50"], j["fork_us_p99"])')
        wcpu[$mode]+="$a "
        wrate[$mode]+="$b "
        wkept[$mode]+="$c "
        wlat[$mode]+="$d "
        wlat99[$mode]+="$e "
        wall[$mode]+="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }') "
        if [ "$mode" = profile ]; then
            "$slurmpin" profile --dir "$work/profile" --json "$job.0" \
                >"$work/p.json"
            seen[$mode]+="$("$py" -c 'import json,sys; j=json.load(open(sys.argv[1]))[0]; l=j["lost"]; print("%d lost=%d" % (j["processes_created"], l["sequence_gaps"]+l["enobufs"]+l["socket_drops"]+l["untracked"]))' "$work/p.json"); "
        elif [ "$mode" = strace ]; then
            seen[$mode]+="$(grep -E '(clone3?|v?fork)\(|<\.\.\. (clone3?|v?fork) resumed>' "$work/s.txt" |
                grep -v CLONE_THREAD | grep -cE '= [0-9]+$' || true); "
        fi
    done
done

median () { tr ' ' '\n' | grep . | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
what="$forks fork()s by a C program (unpaced: as fast as it goes)"
[ -z "$rate" ] || what="$forks fork()s by a C program paced at $rate/s"
echo "srun -n1 -c1 of $what, $rounds rounds each, $(nproc) CPUs, load $load0 before, $(cut -d' ' -f1-3 /proc/loadavg) after"
printf '%-8s %9s %9s %9s %9s  %s\n' mode forks_s ratio srun_s ratio "processes in the profile per round (of $forks, +1 for the task)"
ib=$(echo "${inner[off]}" | median)
wb=$(echo "${wall[off]}" | median)
for mode in $modes; do
    i=$(echo "${inner[$mode]}" | median)
    w=$(echo "${wall[$mode]}" | median)
    printf '%-8s %9.3f %8.2fx %9.3f %8.2fx  %s\n' "$mode" "$i" \
        "$(awk -v a="$i" -v b="$ib" 'BEGIN { print a / b }')" "$w" \
        "$(awk -v a="$w" -v b="$wb" 'BEGIN { print a / b }')" \
        "${seen[$mode]:-(not profiled)}"
done
grep -h "profiled; watcher CPU time" "$work/cluster/log/slurmd.log" |
    sed 's/.*watcher CPU time \([0-9]*\) us in \([0-9]*\) ms.*/\1 \2/' |
    awk '{ cpu += $1; ms += $2; n++ } END { if (n) printf "watcher (recorder) CPU time: %.0f ms in %.0f ms of steps, %.1f %% of a CPU (%d steps)\n", cpu / 1000, ms, 100 * cpu / 1000 / ms, n }'
echo "the workload's own measures (bench/burst.c, medians of the rounds): work_cpu_s: its and its children's user + system CPU time (getrusage)"
echo "rate: forks per second achieved; kept: rounds within 1 % of --rate; fork_us: one fork() call in the parent, median round's p50 and p99"
printf '%-8s %11s %9s %10s %8s %9s %9s\n' mode work_cpu_s ratio rate kept fork_p50 fork_p99
cb=$(echo "${wcpu[off]}" | median)
for mode in $modes; do
    c=$(echo "${wcpu[$mode]}" | median)
    k=$(echo "${wkept[$mode]}" | tr ' ' '\n' | grep -c '^yes$' || true)
    [ -n "$rate" ] && k="$k/$rounds" || k=-
    printf '%-8s %11.3f %8.2fx %10.0f %8s %9.1f %9.1f\n' "$mode" "$c" \
        "$(awk -v a="$c" -v b="$cb" 'BEGIN { print (b > 0 ? a / b : 0) }')" \
        "$(echo "${wrate[$mode]}" | median)" "$k" \
        "$(echo "${wlat[$mode]}" | median)" "$(echo "${wlat99[$mode]}" | median)"
done
for mode in $modes; do
    echo "per round, $mode: work_cpu_s ${wcpu[$mode]}| rate ${wrate[$mode]}| forks_s ${inner[$mode]}"
done
