#!/bin/bash
# bench-dynamic.sh - policy dynamic: reaction time and the watcher's cost
#
# One private Slurm (contrib/local-slurm.sh, TaskPlugin=task/none so that
# steps run free), pin.so with DynamicGrace=G and DynamicInterval=I.
#   reaction  RUNS one-CPU dynamic steps; each idles a random 0..I s (so
#             the over-use starts anywhere against the watcher's samples),
#             then starts 4 busy threads (nice $NICE, default 0; -20 on
#             a loaded machine) and polls its own
#             affinity every 20 ms; reaction = confinement seen - over-use
#             start.  Compared with grace + interval and grace + 2 x
#             interval (the bound of libwatch/watch.h).
#   cost      one step that sleeps COST_SECS at the default interval (5 s,
#             pin.conf has no DynamicInterval for it) and one that over-uses
#             for COST_SECS with grace 1 day (watched, never confined): the
#             watcher's own CPU time (CLOCK_THREAD_CPUTIME_ID) from slurmd's
#             log, as a share of one CPU.
#
#   bench/bench-dynamic.sh [-n RUNS] [-g GRACE] [-i INTERVAL] [-c COST_SECS] [--build DIR]
# Needs root, a C compiler.  Prints the numbers on stdout.
set -u
LC_ALL=C
export LC_ALL
prog=bench-dynamic
die () { echo "$prog: $*" >&2; exit 1; }

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
runs=10 grace=4 interval=1 cost=60
nice=${NICE:-0}
build=${PIN_BUILDDIR:-$src/build}
while [ $# -gt 0 ]; do
    case "$1" in
        -n) runs=$2; shift ;;
        -g) grace=$2; shift ;;
        -i) interval=$2; shift ;;
        -c) cost=$2; shift ;;
        --build) build=$2; shift ;;
        *) die "unknown argument '$1'" ;;
    esac
    shift
done
pin_so=$build/src/plugins/spank/.libs/pin.so
[ -r "$pin_so" ] || die "no $pin_so: build first"
[ "$(id -u)" = 0 ] || die "needs root"

dir=$(mktemp -d /tmp/bench-dynamic.XXXXXX) || exit 1
chmod 755 "$dir"
work=$dir/work
mkdir -p "$work" && chmod 1777 "$work"
cat >"$work/load.c" <<'EOF'
#include <pthread.h>
#include <stdlib.h>
static void *spin (void *a) { (void)a; for (;;) ; return NULL; }
int main (int argc, char **argv)
{
    int n = argc > 1 ? atoi (argv[1]) : 1;
    pthread_t t;
    for (int i = 1; i < n; i++)
        pthread_create (&t, NULL, spin, NULL);
    spin (NULL);
    return 0;
}
EOF
cc -O1 -pthread -o "$work/busy" "$work/load.c" || die "cannot build the load"

conf () {   # conf GRACE INTERVAL|"" -> pin.conf
    {
        echo "CgroupBase=bench-dynamic-$$"
        echo "StateDir=$dir/state"
        echo "TopologyCache=$dir/topology.xml"
        echo "DynamicGrace=$1"
        [ -n "$2" ] && echo "DynamicInterval=$2"
    } >"$dir/pin.conf"
}
conf "$grace" "$interval"
echo "required $pin_so conf=$dir/pin.conf" >"$dir/plugstack.conf"
eval "$("$src/contrib/local-slurm.sh" start --dir "$dir/slurm" \
    --plugstack "$dir/plugstack.conf" --conf-extra TaskPlugin=task/none)" \
    || die "cannot start Slurm"
trap '"$src/contrib/local-slurm.sh" stop --dir "$dir/slurm" >/dev/null 2>&1; rm -rf "$dir"' EXIT
# the cluster reads pin.conf from its own etc/ copy? No: conf= names ours.

cat >"$work/step.sh" <<EOF
#!/bin/bash
renice -n $nice \$\$ >/dev/null
sleep \$1
t0=\$(date +%s%N)
$work/busy 4 & p=\$!
while grep -q '[-,]' <(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status); do
    sleep 0.02
done
t1=\$(date +%s%N)
kill \$p
echo \$(( (t1 - t0) / 1000000 ))
EOF
chmod 755 "$work/step.sh"

# what 4 busy threads at nice $nice get on this machine now (other load)
cap=$( { /usr/bin/time -f "%U %S" timeout 3 nice -n "$nice" "$work/busy" 4; } 2>&1 >/dev/null | tail -1 | awk '{ printf "%.2f", ($1 + $2) / 3 }')
echo "# machine: $(nproc) CPUs; 4 busy threads (nice $nice) got $cap CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# reaction: $runs runs, DynamicGrace=$grace s, DynamicInterval=$interval s, 1 CPU allocated, 4 busy threads on $(nproc) CPUs"
: >"$dir/reaction"
cd "$work" || exit 1
for r in $(seq 1 "$runs"); do
    off=$(awk -v s="$r$$" -v i="$interval" 'BEGIN { srand (s); printf "%.3f", rand () * i }')
    ms=$(srun -n1 -c1 --pin-policy=dynamic "$work/step.sh" "$off" 2>/dev/null | tail -1)
    echo "run $r: offset $off s, confined after $ms ms"
    echo "$ms" >>"$dir/reaction"
done
sort -n "$dir/reaction" | awk -v g="$grace" -v i="$interval" '
    { v[NR] = $1; s += $1 }
    END {
        printf "reaction ms: min %d median %d max %d mean %.0f (n=%d)\n", v[1], v[int((NR + 1) / 2)], v[NR], s / NR, NR
        printf "grace + interval = %d ms, grace + 2 intervals = %d ms\n", (g + i) * 1000, (g + 2 * i) * 1000
        for (k = 1; k <= NR; k++) if (v[k] > (g + 2 * i) * 1000) late++
        printf "runs over grace + 2 intervals: %d\n", late
    }'

echo "# cost: default interval (5 s), ${cost} s per step"
conf 86400 ""
log=$dir/slurm/log/slurmd.log
srun -n1 -c1 --pin-policy=dynamic sleep "$cost" >/dev/null 2>&1
srun -n1 -c1 --pin-policy=dynamic timeout "$cost" "$work/busy" 4 >/dev/null 2>&1
sleep 1
grep "policy dynamic: .*watcher CPU time" "$log" | tail -2 | sed 's/.*pin: /  /'
