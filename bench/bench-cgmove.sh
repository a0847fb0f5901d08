#!/bin/bash
# bench-cgmove.sh - what moving a task into a cgroup costs, with and
# without the cgroup2 mount option favordynmods, side by side in one run.
#
#   bench/bench-cgmove.sh [-n MOVES] [-r ROUNDS] [-g GAP_MS] [CGROUP2_MOUNT]
#
# pin.so's standalone and affinity-fallback modes move each task into its
# own cgroup (cgroup.procs); on kernels without favordynmods that write
# waits for an RCU grace period (cgroup_threadgroup_rwsem, a percpu
# rwsem), which was measured at 11-14 ms per task on this kind of
# machine.  favordynmods (Linux >= 6.0) makes that rwsem favor writers.
# The wait is paid by a move that comes after a quiet spell (the rwsem's
# rcu_sync falls back to its reader-favoring state about one grace period
# after the last writer), as a step start's moves do, not by moves in a
# tight loop; so moves are GAP_MS apart (default 100).
# This script makes two cgroups under the cgroup2 mount (default: the
# first in /proc/mounts), moves a sleeping process between them MOVES
# times per round, and alternates rounds without and with favordynmods
# (remounting the hierarchy with and without the option, its other
# options kept; the original options are restored at the end, also on
# failure; mount(8) would otherwise merge the current options back in on a
# remount, so it is told not to: --options-source=disable).  It
# prints the median and 90th percentile per move for each setting and
# their ratio.  A measurement, never an assertion.  Needs root.
set -euo pipefail

moves=20 rounds=3 gap=100
while getopts n:r:g:h opt; do
    case $opt in
        n) moves=$OPTARG ;;
        r) rounds=$OPTARG ;;
        g) gap=$OPTARG ;;
        *) sed -n '2,4p' "$0" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
mnt=${1:-$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)}
if [[ -z $mnt || ! -f $mnt/cgroup.procs ]]; then
    echo "bench-cgmove: no cgroup2 mount found" >&2
    exit 1
fi
if ! grep -qw favordynmods /sys/kernel/cgroup/features 2>/dev/null; then
    echo "bench-cgmove: this kernel ($(uname -r)) has no favordynmods" >&2
    exit 1
fi
opts=$(awk -v m="$mnt" '$2 == m && $3 == "cgroup2" { print $4 }' /proc/mounts)
# the options without favordynmods: what "off" remounts with
base=$(tr ',' '\n' <<<"$opts" | grep -vx favordynmods | paste -sd, -)

dir=$mnt/bench-cgmove.$$
sleeper=
cleanup () {
    [[ -n $sleeper ]] && kill "$sleeper" 2>/dev/null
    wait 2>/dev/null || :
    rmdir "$dir/a" "$dir/b" "$dir" 2>/dev/null || :
    mount --options-source=disable -o "remount,$opts" "$mnt" 2>/dev/null || :
}
trap cleanup EXIT
mkdir -p "$dir/a" "$dir/b"
sleep 1000 &
sleeper=$!

# one round: $moves moves, one time (us) per line on stdout
round () {
    local i t0 t1 to
    for ((i = 0; i < moves; i++)); do
        to=a
        ((i % 2)) && to=b
        sleep "$(awk -v g="$gap" 'BEGIN { printf "%.3f", g / 1000 }')"
        t0=$EPOCHREALTIME
        echo "$sleeper" >"$dir/$to/cgroup.procs"
        t1=$EPOCHREALTIME
        echo $((${t1/./} - ${t0/./}))
    done
}

stats () {
    sort -n | awk '{ v[NR] = $1 } END {
        printf "%10.1f %10.1f %6d", v[int((NR + 1) / 2)], v[int(NR * 0.9 + 0.5)], NR }'
}

off=$(mktemp) on=$(mktemp)
trap 'rm -f "$off" "$on"; cleanup' EXIT
for ((r = 0; r < rounds; r++)); do
    mount --options-source=disable -o "remount,$base" "$mnt"
    grep -q "^cgroup2 $mnt .*favordynmods" /proc/mounts && { echo "bench-cgmove: could not switch favordynmods off" >&2; exit 1; }
    round >>"$off"
    mount --options-source=disable -o "remount,$base,favordynmods" "$mnt"
    grep -q "^cgroup2 $mnt .*favordynmods" /proc/mounts || { echo "bench-cgmove: could not switch favordynmods on" >&2; exit 1; }
    round >>"$on"
done

echo "bench-cgmove: $mnt, kernel $(uname -r), $(nproc) CPUs, $rounds rounds x $moves moves ${gap} ms apart, alternating"
printf '%-28s %10s %10s %6s\n' "cgroup.procs write" median_us p90_us moves
printf '%-28s %s\n' "without favordynmods" "$(stats <"$off")"
printf '%-28s %s\n' "with favordynmods" "$(stats <"$on")"
m_off=$(sort -n "$off" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
m_on=$(sort -n "$on" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
awk -v a="$m_on" -v b="$m_off" 'BEGIN { printf "ratio of medians, with / without: %.3f\n", (b > 0 ? a / b : 0) }'
