#!/bin/bash
# bench-profile.sh - what profiling costs a fork-heavy workload, next to strace
#
#   bench/bench-profile.sh [--rate R] [FORKS] [ROUNDS] [py|c|c10]   (root: the proc connector)
#
# Runs t/profile/workload.py burst FORKS (FORKS fork()s, reaped after the
# last one; default 2000), or with "c" the same in a small C program built
# here (no interpreter diluting the cost of a fork), or with "c10" FORKS
# short programs (/bin/true) started by that C program at about 10 per
# second between slices of CPU work (ALICE's rate; the work per slice is
# calibrated once, bare, so every mode does the same work), ROUNDS
# times (default 5) in each of five ways,
# interleaved so that a change of the machine's load hits all of them:
#   bare     the workload alone
#   profile  under slurm-pin profile --record (proc connector, taskstats
#            in its default mode auto: paused while the processes end
#            faster than 2000/s; samples every 1000 ms with PSS)
#   tson     the same with --taskstats=on (a record for every exit)
#   notask   the same without taskstats (slurm-pin profile --record
#            --no-taskstats: no exact CPU time per command), to tell the
#            kernel's taskstats work in the workload from the rest
#   strace   under strace -f -e trace=process -ttt -o FILE
# and prints the median wall time of each, the slowdown against bare, and
# how many of the FORKS processes each recorded (profile: fork events in
# the profile and the losses it reports; strace: fork/clone/vfork calls
# that returned a pid without CLONE_THREAD).  Then the cost of one
# smaps_rollup read (PSS) for workers sharing 64 MiB.
# --rate R (with c): the C program forks on a clock-driven schedule, R
# forks per second (bench/burst.c --rate), instead of as fast as it can;
# then the wall times are the schedule's and the fair measures are the
# second table's: whether each round kept the rate, the workload's own
# CPU time (getrusage of it and its children: the kernel's work for the
# proc connector and taskstats messages in the forking processes
# included), its per-fork latency, and the recorder's CPU per process.
# The C workloads always print that table.
# Environment: PIN_BUILDDIR (default ./build), PY (default /usr/bin/python3).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${PIN_BUILDDIR:-$top/build}
slurmpin=$build/src/cmd/slurm-pin
py=${PY:-/usr/bin/python3}
workload=$top/t/profile/workload.py
rate=""
if [ "${1:-}" = --rate ]; then
    rate=${2:-}
    shift 2 || true
    case $rate in
    ''|*[!0-9]*|0) echo "bench-profile: --rate '$rate': give forks per second, a whole number above 0" >&2; exit 1 ;;
    esac
fi
forks=${1:-2000}
rounds=${2:-5}
lang=${3:-py}
case $lang in
py|c|c10) ;;
*) echo "bench-profile: workload '$lang': give py, c or c10" >&2; exit 1 ;;
esac
if [ -n "$rate" ] && [ "$lang" != c ]; then
    echo "bench-profile: --rate $rate: only with the c workload (not $lang)" >&2
    exit 1
fi
load0=$(cut -d' ' -f1-3 /proc/loadavg)

if [ "$(id -u)" -ne 0 ]; then
    echo "bench-profile: needs root (proc connector)" >&2
    exit 1
fi
for x in "$slurmpin" "$py" strace; do
    command -v "$x" >/dev/null || { echo "bench-profile: $x not found" >&2; exit 1; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

now () { date +%s.%N; }

# the workload: one command line
if [ "$lang" = c ]; then
    "${CC:-cc}" -O2 -o "$tmp/burst" "$top/bench/burst.c"
    if [ -n "$rate" ]; then
        work=("$tmp/burst" --rate "$rate" "$forks")
        what="fork()s by a C program paced at $rate/s"
    else
        work=("$tmp/burst" "$forks")
        what="fork()s by a C program (unpaced: as fast as it goes)"
    fi
elif [ "$lang" = c10 ]; then
    "${CC:-cc}" -O2 -o "$tmp/burst" "$top/bench/burst.c"
    # the work of 100 ms: 10 slices of a calibration run, scaled
    cal=20000000
    s=$("$tmp/burst" 10 "$cal" | "$py" -c 'import json,sys; print(json.load(sys.stdin)["burst_s"])')
    spin=$(awk -v c="$cal" -v s="$s" 'BEGIN { printf "%d", c * 10 * 0.1 / s }')
    work=("$tmp/burst" "$forks" "$spin")
    what="programs started by a C program at ~10 Hz between CPU work"
else
    work=("$py" "$workload" burst "$forks")
    what="fork()s by Python"
fi

modes="bare profile tson notask strace"
declare -A times seen inner cpus wcpu wrate wkept wlat wlat99
cpu=""
cpunt=""
cpuon=""
# the CPU time (user + system) of the whole command: the workload, its
# children and the recorder or strace (GNU time; a measure the load of a
# shared machine moves far less than wall times)
timer=""
if [ -x /usr/bin/time ]; then
    timer="/usr/bin/time -f %U+%S -o $tmp/time"
fi
for r in $(seq "$rounds"); do
    for mode in $modes; do
        t0=$(now)
        case $mode in
        bare)
            $timer "${work[@]}" >"$tmp/w.json" ;;
        profile)
            $timer "$slurmpin" profile --record "$tmp/p.jsonl" -- \
                "${work[@]}" >"$tmp/w.json" ;;
        tson)
            $timer "$slurmpin" profile --record "$tmp/p.jsonl" \
                --taskstats=on -- "${work[@]}" >"$tmp/w.json" ;;
        notask)
            $timer "$slurmpin" profile --record "$tmp/p.jsonl" \
                --no-taskstats -- "${work[@]}" >"$tmp/w.json" ;;
        strace)
            $timer strace -f -e trace=process -ttt -o "$tmp/s.txt" \
                "${work[@]}" >"$tmp/w.json" ;;
        esac
        [ -z "$timer" ] || cpus[$mode]+="$(cat "$tmp/time") "
        t1=$(now)
        times[$mode]+="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }') "
        inner[$mode]+="$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["burst_s"])' "$tmp/w.json") "
        if [ "$lang" != py ]; then
            read -r a b c d e < <("$py" -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["cpu_s"], j["rate"], {True: "yes", False: "no", None: "-"}[j["kept"]], j["fork_us_p50"], j["fork_us_p99"])' "$tmp/w.json")
            wcpu[$mode]+="$a "
            wrate[$mode]+="$b "
            wkept[$mode]+="$c "
            wlat[$mode]+="$d "
            wlat99[$mode]+="$e "
        fi
        case $mode in
        bare) n=$forks ;;
        profile|tson|notask)
            "$slurmpin" profile --json "$tmp/p.jsonl" >"$tmp/p.json"
            n=$("$py" -c 'import json,sys; j=json.load(open(sys.argv[1])); l=j["lost"]; t=j["taskstats"]; print("%d lost=%d" % (j["processes_created"], l["sequence_gaps"]+l["enobufs"]+l["socket_drops"]+l["untracked"]) + (" ts=%d+%dp+%dm" % (t["records"], t.get("paused", 0), t["missing"]) if t["available"] else ""))' "$tmp/p.json")
            case $mode in notask) v=cpunt ;; tson) v=cpuon ;; *) v=cpu ;; esac
            printf -v "$v" '%s%s ' "${!v}" "$("$py" -c 'import json,sys; print(json.loads(open(sys.argv[1]).readlines()[-1]).get("recorder_cpu_us", -1))' "$tmp/p.jsonl")"
            ;;
        strace)
            # a completed or resumed fork-like call returning a pid
            n=$(grep -E '(clone3?|v?fork)\(|<\.\.\. (clone3?|v?fork) resumed>' "$tmp/s.txt" |
                grep -v CLONE_THREAD | grep -cE '= [0-9]+$' || true) ;;
        esac
        seen[$mode]+="$n; "
    done
done

median () { tr ' ' '\n' | grep . | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

echo "fork-heavy workload: $forks $what, $rounds rounds, $(nproc) CPUs, load $load0 before, $(cut -d' ' -f1-3 /proc/loadavg) after"
echo "forks_s: the workload's own time for its forks (what the job feels); wall_s: the whole command, the recorder's start and end included"
echo "cpu_s: user + system CPU time of the whole command (workload, children, recorder or strace), when GNU time is there"
printf '%-8s %9s %9s %9s %9s %9s %9s  %s\n' mode forks_s slowdown wall_s slowdown cpu_s ratio "processes recorded per round (of $forks)"
bare=$(echo "${times[bare]}" | median)
ibare=$(echo "${inner[bare]}" | median)
cbare=$(for x in ${cpus[bare]:-0+0}; do awk -v x="$x" 'BEGIN { split(x, a, "+"); print a[1] + a[2] }'; done | tr '\n' ' ' | median)
for mode in $modes; do
    m=$(echo "${times[$mode]}" | median)
    i=$(echo "${inner[$mode]}" | median)
    c=$(for x in ${cpus[$mode]:-0+0}; do awk -v x="$x" 'BEGIN { split(x, a, "+"); print a[1] + a[2] }'; done | tr '\n' ' ' | median)
    printf '%-8s %9.3f %8.2fx %9.3f %8.2fx %9.3f %8.2fx  %s\n' "$mode" "$i" \
        "$(awk -v a="$i" -v b="$ibare" 'BEGIN { print a / b }')" "$m" \
        "$(awk -v a="$m" -v b="$bare" 'BEGIN { print a / b }')" \
        "$c" "$(awk -v a="$c" -v b="$cbare" 'BEGIN { print (b > 0 ? a / b : 0) }')" \
        "${seen[$mode]}"
done
for v in cpu cpuon cpunt; do
    c=$(echo "${!v}" | median)
    case $v in cpu) how=profile ;; cpuon) how=tson ;; *) how=notask ;; esac
    if [ "$c" -ge 0 ]; then
        echo "recorder CPU time, $how (the end line's recorder_cpu_us, median): $c us per run, $(awk -v c="$c" -v n="$forks" 'BEGIN { printf "%.1f", c / n }') us per process, $(awk -v c="$c" -v b="$bare" 'BEGIN { printf "%.1f", c / 1e4 / b }') % of the bare run's wall time; per round: ${!v}"
    fi
done

if [ "$lang" != py ]; then
    echo "the workload's own measures (bench/burst.c, medians of the rounds): work_cpu_s: its and its children's user + system CPU time (getrusage)"
    echo "rate: forks (or programs) per second achieved; kept: rounds within 1 % of --rate; fork_us: one fork() call in the parent, median round's p50 and p99"
    printf '%-8s %11s %9s %10s %8s %9s %9s\n' mode work_cpu_s ratio rate kept fork_p50 fork_p99
    wb=$(echo "${wcpu[bare]}" | median)
    for mode in $modes; do
        c=$(echo "${wcpu[$mode]}" | median)
        k=$(echo "${wkept[$mode]}" | tr ' ' '\n' | grep -c '^yes$' || true)
        [ -n "$rate" ] && k="$k/$rounds" || k=-
        printf '%-8s %11.3f %8.2fx %10.0f %8s %9.1f %9.1f\n' "$mode" "$c" \
            "$(awk -v a="$c" -v b="$wb" 'BEGIN { print (b > 0 ? a / b : 0) }')" \
            "$(echo "${wrate[$mode]}" | median)" "$k" \
            "$(echo "${wlat[$mode]}" | median)" "$(echo "${wlat99[$mode]}" | median)"
    done
    for mode in $modes; do
        echo "per round, $mode: work_cpu_s ${wcpu[$mode]}| rate ${wrate[$mode]}"
    done
    exit 0
fi
"$slurmpin" profile --record "$tmp/m.jsonl" --interval 100 -- \
    "$py" "$workload" shared 64 4 1 >/dev/null
"$slurmpin" profile --json "$tmp/m.jsonl" >"$tmp/m.json"
"$py" -c 'import json,sys; m=json.load(open(sys.argv[1]))["memory"]; print("smaps_rollup: %d reads, %.0f us per read (processes of ~64 MiB); summed RSS %d KiB, PSS %d KiB" % (m["smaps_reads"], m["smaps_us_per_read"], m["peak_rss_sum_kb"], m["pss_at_peak_rss_kb"]))' "$tmp/m.json"
