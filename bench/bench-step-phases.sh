#!/bin/bash
# bench-step-phases.sh - where pin.so's CPU time goes in a step start,
# read from its own debug log on a real local Slurm.
#
#   bench/bench-step-phases.sh [-n RUNS] [-p POLICY] [--build DIR] [--topology XML]
#
# Starts a private Slurm (contrib/local-slurm.sh, SlurmdDebug=debug) with
# the build's pin.so, runs `srun -n 1 -c 1 --pin-policy=POLICY true` RUNS
# times (default 30, policy numa-local; the first run writes the topology
# cache and is not counted), and reads slurmstepd's lines
#   pin: step J.S: plugin CPU time T us (init: conf C ...; setup: start ...,
#        topology ..., alloc ..., mode ..., statedir ..., lock ..., busy
#        ..., plan ..., claim ..., step cgroup ..., unlock ...; total ...)
#   pin: step J.S task 0: applied in A us CPU, W us wall
# from slurmd.log.  Prints the median and 90th percentile of each phase in
# microseconds of CPU time of slurmstepd's thread running the plugin
# (CLOCK_THREAD_CPUTIME_ID).  A measurement, never an assertion.  Needs
# root (slurmd runs as root).
#
# --topology XML gives the plugin a bigger machine than this one: its
# topology cache is written beforehand from XML with this machine's
# fingerprint (bench-step -w), so the plugin loads that machine's model on
# every step (a cache hit).  Slurm still allocates this machine's core 0,
# which the model maps to that machine's core 0; a task of one CPU is
# placed on CPU 0, which exists here.  The phases that depend on the
# machine's size (topology, alloc, plan) then show what a big node pays.
set -u
LC_ALL=C
export LC_ALL

prog=bench-step-phases
die () { echo "$prog: $*" >&2; exit 1; }

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
runs=30 policy=numa-local topology=
build=${PIN_BUILDDIR:-$src/build}
while [ $# -gt 0 ]; do
    case "$1" in
        -n) [ $# -ge 2 ] || die "-n: needs a number"; runs=$2; shift 2 ;;
        -p) [ $# -ge 2 ] || die "-p: needs a policy"; policy=$2; shift 2 ;;
        --build) [ $# -ge 2 ] || die "--build: needs a directory"; build=$2; shift 2 ;;
        --topology) [ $# -ge 2 ] || die "--topology: needs an XML file"; topology=$2; shift 2 ;;
        -h|--help) sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'; exit 0 ;;
        *) die "'$1': unknown option; known: -n RUNS, -p POLICY, --build DIR, --topology XML" ;;
    esac
done
case "$runs" in
    '' | *[!0-9]*) die "-n $runs: not a number of runs" ;;
esac
pin_so=$build/src/plugins/spank/.libs/pin.so
[ -r "$pin_so" ] || die "$pin_so: not built (make in the build tree, or --build DIR)"
[ "$(id -u)" = 0 ] || die "needs root (slurmd runs as root)"

work=$(mktemp -d /tmp/bench-step-phases.XXXXXX) || die "mktemp failed"
cleanup () {
    "$src/contrib/local-slurm.sh" stop --dir "$work/slurm" >/dev/null 2>&1
    rm -rf "$work" "$state"
}
trap cleanup EXIT
# StateDir on a tmpfs, as the admin guide asks (/run)
state=$(mktemp -d /run/bench-step-phases.XXXXXX) || die "mktemp in /run failed"
cat >"$work/pin.conf" <<EOF
StateDir=$state/pin-state
TopologyCache=$work/cache/topology.xml
EOF
echo "required $pin_so conf=@PIN_CONF@" >"$work/plugstack.conf"
if [ -n "$topology" ]; then
    [ -x "$build/bench/bench-step" ] || die "$build/bench/bench-step: not built (make -C $build/bench bench)"
    "$build/bench/bench-step" -w "$work/cache/topology.xml" "$topology" \
        || die "cannot write the cache of $topology"
fi
env=$("$src/contrib/local-slurm.sh" start --dir "$work/slurm" \
      --plugstack "$work/plugstack.conf" --pin-conf "$work/pin.conf" \
      --conf-extra SlurmdDebug=debug) || die "the local Slurm did not start"
eval "$env"

# the first step writes the topology cache (a miss): not counted
srun -n 1 -c 1 --pin-policy="$policy" true || die "srun failed"
log=$LOCAL_SLURM_DIR/log/slurmd.log
skip=$(grep -c 'plugin CPU time' "$log")
for ((i = 0; i < runs; i++)); do
    srun -n 1 -c 1 --pin-policy="$policy" true || die "srun failed"
done
sleep 1     # slurmstepd's last lines

# "name value" pairs of every counted step, one per line
grep 'plugin CPU time' "$log" | tail -n +"$((skip + 1))" | sed -E '
    s/.*plugin CPU time ([0-9]+) us \(init: (.*); setup: (.*)\)$/plugin_total \1, \2, \3/
    s/; total [0-9]+ us CPU, [0-9]+ us wall//g
    s/, /\n/g' | grep -E '^[a-z_+() ]+ [0-9]+$' >"$work/phases"
grep -E 'task 0: applied in' "$log" | tail -n "$runs" \
    | sed -E 's/.*applied in ([0-9]+) us CPU, ([0-9]+) us wall/task_apply_cpu \1\ntask_apply_wall \2/' \
    >>"$work/phases"
n=$(grep -c '^plugin_total ' "$work/phases")
[ "$n" -gt 0 ] || die "no 'plugin CPU time' lines in $log (SlurmdDebug=debug?)"

echo "$prog: pin.so --pin-policy=$policy, $n steps, $(nproc) CPUs, kernel $(uname -r)${topology:+, topology $topology}"
echo "CPU time of the plugin in slurmstepd, microseconds (median, p90):"
awk '{ k = $0; sub(/ [0-9]+$/, "", k); v = $NF; vals[k] = vals[k] " " v;
       if (!(k in seen)) { seen[k] = 1; order[++n] = k } }
     END {
       for (i = 1; i <= n; i++) {
         m = split(vals[order[i]], a, " ");
         for (x = 1; x <= m; x++) for (y = x + 1; y <= m; y++)
           if (a[y] + 0 < a[x] + 0) { t = a[x]; a[x] = a[y]; a[y] = t }
         p = int(m * 0.9 + 0.5)
         if (p < 1) p = 1
         printf "  %-28s %8d %8d\n", order[i], a[int((m + 1) / 2)], a[p]
       }
     }' "$work/phases"
