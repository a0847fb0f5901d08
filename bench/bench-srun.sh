#!/bin/bash
# bench-srun.sh - what pin.so adds to the latency of `srun -n1 true`
#
# One private Slurm (contrib/local-slurm.sh), three variants measured in
# the same run, round-robin (A B C A B C ...), so that drift of the machine
# hits all of them alike:
#   without     plugstack.conf empty: Slurm alone
#   none        pin.so loaded, no --pin-policy (DefaultPolicy=none): the
#               cost every job pays once the plugin is installed
#   numa-local  pin.so loaded, --pin-policy=numa-local: topology, lock,
#               plan, claim, cgroup, affinity
# srun and slurmstepd read plugstack.conf anew for every job, so switching
# variants is a rename of that file, with no daemon restart.  Reports the
# median (and p10/p90) of each and the ratios to `without`.  Target: the
# plugin adds under 5 % or under 5 ms to the median.
#
#   bench/bench-srun.sh [-n RUNS] [--build DIR] [--keep] [--steps]
#
#   -n RUNS     runs per variant (default 30, at least 30 for a report)
#   --build DIR the build tree holding src/plugins/spank/.libs/pin.so
#               (default: ./build, or $PIN_BUILDDIR)
#   --steps     time job steps inside one allocation (salloc) instead of
#               whole `srun -n1 true` jobs: the plugin's share of a step
#   --keep      leave the cluster running and say where
# Needs root (it starts slurmd).  Prints a table on stdout.
set -u
LC_ALL=C
export LC_ALL

prog=bench-srun
die () { echo "$prog: $*" >&2; exit 1; }

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
runs=30
build=${PIN_BUILDDIR:-$src/build}
keep=no
steps=no
while [ $# -gt 0 ]; do
    case "$1" in
        -n) [ $# -ge 2 ] || die "-n: needs a number"; runs=$2; shift 2 ;;
        --build) [ $# -ge 2 ] || die "--build: needs a directory"; build=$2; shift 2 ;;
        --keep) keep=yes; shift ;;
        --steps) steps=yes; shift ;;
        -h|--help) sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'; exit 0 ;;
        *) die "'$1': unknown option; known: -n RUNS, --build DIR, --steps, --keep" ;;
    esac
done
case "$runs" in
    ''|*[!0-9]*) die "-n $runs: not a number of runs" ;;
esac
[ "$runs" -ge 1 ] || die "-n $runs: at least 1 run"
[ "$runs" -ge 30 ] || echo "$prog: warning: $runs runs per variant; use at least 30 for a report" >&2
pin_so=$build/src/plugins/spank/.libs/pin.so
[ -r "$pin_so" ] || die "$pin_so: not built (make in the build tree, or --build DIR)"
[ "$(id -u)" = 0 ] || die "needs root (slurmd runs as root)"

work=$(mktemp -d /tmp/bench-srun.XXXXXX) || die "mktemp failed"
cluster=$work/cluster
cleanup () {
    if [ "$keep" = yes ]; then
        echo "$prog: cluster left running: eval \"\$($src/contrib/local-slurm.sh env --dir $cluster)\"; stop: $src/contrib/local-slurm.sh stop --dir $cluster --clean" >&2
        return
    fi
    "$src/contrib/local-slurm.sh" stop --dir "$cluster" --clean >/dev/null 2>&1
    base=$(sed -n 's/^CgroupBase=//p' "$work/pin.conf" 2>/dev/null)
    cgroot=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
    [ -n "$base" ] && [ -n "$cgroot" ] && rmdir "$cgroot/$base" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cat >"$work/pin.conf" <<EOF
DefaultPolicy=none
CgroupBase=slurm-pin-bench-$$
StateDir=$work/state
TopologyCache=$work/topology.xml
EOF
echo "optional $pin_so conf=$work/pin.conf" >"$work/plugstack.with"
echo "# no plugin" >"$work/plugstack.without"
cp "$work/plugstack.with" "$work/plugstack.conf"

env_out=$("$src/contrib/local-slurm.sh" start --dir "$cluster" \
    --plugstack "$work/plugstack.conf" --pin-conf "$work/pin.conf") \
    || die "the cluster did not start"
eval "$env_out"
plugstack=$(sed -n 's/^PlugStackConfig=//p' "$SLURM_CONF")
[ -n "$plugstack" ] || die "$SLURM_CONF: no PlugStackConfig"

use_plugstack () {
    cp "$work/plugstack.$1" "$plugstack.tmp" && mv -f "$plugstack.tmp" "$plugstack"
}

# now_ns: monotonic enough for intervals of milliseconds.
now_ns () {
    date +%s%N
}

alloc_job=""
if [ "$steps" = yes ]; then
    alloc_job=$(salloc --no-shell -n1 -c1 2>&1 | sed -n 's/.*Granted job allocation \([0-9]*\).*/\1/p')
    [ -n "$alloc_job" ] || die "salloc --no-shell gave no job"
fi

run_one () {
    local variant=$1 t0 t1 rc
    case "$variant" in
        without) use_plugstack without ;;
        *) use_plugstack with ;;
    esac
    local opt=()
    [ "$variant" = numa-local ] && opt=(--pin-policy=numa-local)
    [ -n "$alloc_job" ] && opt+=(--jobid="$alloc_job" --overlap)
    t0=$(now_ns)
    srun "${opt[@]}" -n1 true >/dev/null 2>>"$work/errors"
    rc=$?
    t1=$(now_ns)
    [ $rc -eq 0 ] || die "srun (${variant}) failed with status $rc; see $work/errors"
    echo "$variant $(( (t1 - t0) / 1000 ))" >>"$work/samples"
}

variants="without none numa-local"
# Warm up: topology cache, page cache, first-job effects.
for v in $variants; do run_one "$v"; done
: >"$work/samples"
i=0
while [ $i -lt "$runs" ]; do
    # Rotate the order every round so no variant always follows another.
    case $((i % 3)) in
        0) order="without none numa-local" ;;
        1) order="none numa-local without" ;;
        2) order="numa-local without none" ;;
    esac
    for v in $order; do run_one "$v"; done
    i=$((i + 1))
done

[ -n "$alloc_job" ] && scancel "$alloc_job"

what="srun -n1 true (a whole job each)"
[ "$steps" = yes ] && what="srun --overlap -n1 true inside one allocation (a step each)"
echo "# $prog: $what, $runs runs per variant, round-robin, on $(uname -n) ($(nproc) CPUs)"
echo "# pin.so: $pin_so"
awk -v runs="$runs" '
    { v[$1, ++n[$1]] = $2 / 1000.0 }
    function pct(name, p,    i, j, m, a, t, k) {
        m = n[name]
        for (i = 1; i <= m; i++) a[i] = v[name, i]
        for (i = 2; i <= m; i++) {       # insertion sort, m is small
            t = a[i]
            for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]
            a[j + 1] = t
        }
        if (p == 50 && m % 2 == 0) return (a[m / 2] + a[m / 2 + 1]) / 2
        k = int(p / 100 * (m - 1) + 1.5)
        if (k < 1) k = 1
        if (k > m) k = m
        return a[k]
    }
    END {
        printf "%-12s %5s %10s %10s %10s\n", "variant", "runs", "p10_ms", "median_ms", "p90_ms"
        split("without none numa-local", names, " ")
        for (i = 1; i <= 3; i++) {
            nm = names[i]
            med[nm] = pct(nm, 50)
            printf "%-12s %5d %10.1f %10.1f %10.1f\n", nm, n[nm], pct(nm, 10), med[nm], pct(nm, 90)
        }
        for (i = 2; i <= 3; i++) {
            nm = names[i]
            r = med[nm] / med["without"]
            d = med[nm] - med["without"]
            ok = (r < 1.05 || d < 5) ? "within target" : "OVER target"
            printf "ratio %s/without = %.3f (%+.1f ms): %s (< 5 %% or < 5 ms)\n", nm, r, d, ok
        }
    }' "$work/samples"
