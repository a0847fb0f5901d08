#!/bin/bash
# bench-acct-scale.sh - slurm-pin acct/report over a large journal, next to
# real sacct over the same jobs in slurmdbd
#
#   bench/bench-acct-scale.sh [--records "N ..."] [--rounds R] [--timeout S]
#                             [--mem-limit MB] [--seed S] [--build DIR]
#                             [--workdir DIR] [--keep]
#
#   --records   journal sizes in records (repeatable or blank-separated;
#               default 100000 300000 1000000; e.g. 2000 for a quick run)
#   --rounds    runs of each command (default 3; the table gives the median
#               wall time and the largest max RSS)
#   --timeout   seconds one run of a command may take (default 300); a run
#               past it is killed, printed as >S, and not repeated
#   --mem-limit address space of one command, MB (ulimit -v; default three
#               quarters of MemAvailable): a command past it fails and is
#               printed as fail, instead of taking the machine down
#   --seed      the generator's seed (default 1)
#   --build     the build tree with src/cmd/slurm-pin (default ./build or
#               $PIN_BUILDDIR)
#   --workdir   where journals and the private Slurm go (default a mktemp -d
#               dir under $TMPDIR; a 1M-record journal is about 750 MB)
#   --keep      leave the journals (the private Slurm is always stopped)
#
# For each size: bench/acct-gen.py writes a journal of N records (rotated
# as JournalMaxSize=64M rotates), bench/acct-load-slurmdbd.py loads its
# jobs and steps into a private slurmdbd + MariaDB (contrib/local-slurm.sh
# start --accounting; one instance for the whole run, its tables emptied
# between sizes), then these run side by side, interleaved (acct, sacct,
# acct, sacct, ...) so that drift of the machine hits both alike:
#   -j ID      slurm-pin acct --journal DIR -j ID  |  sacct -j ID
#   listing    slurm-pin acct --journal DIR -a -S -E  |  sacct -a -S -E
#              (the default fields; the row counts of both are compared
#              and a mismatch is printed)
#   --json     the same with --json (jobs in each output compared)
#   report     slurm-pin report --journal DIR  (sacct has no counterpart)
# Wall time and max RSS from GNU time (/usr/bin/time -f '%e %M').
# Needs root (local-slurm.sh starts slurmd, munged, MariaDB, slurmdbd).
# Prints the run's conditions and one table on stdout.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${PIN_BUILDDIR:-$top/build}
sizes=""
rounds=3
tmo=300
memlim=""
seed=1
workdir=""
keep=no
die () { echo "bench-acct-scale: $*" >&2; exit 1; }
need () { [ $# -ge 2 ] || die "$1 needs a value"; }
while [ $# -gt 0 ]; do
    case $1 in
    --records) need "$@"; sizes="$sizes $2"; shift 2 ;;
    --rounds) need "$@"; rounds=$2; shift 2 ;;
    --timeout) need "$@"; tmo=$2; shift 2 ;;
    --mem-limit) need "$@"; memlim=$2; shift 2 ;;
    --seed) need "$@"; seed=$2; shift 2 ;;
    --build) need "$@"; build=$2; shift 2 ;;
    --workdir) need "$@"; workdir=$2; shift 2 ;;
    --keep) keep=yes; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "'$1': unknown option; known: --records, --rounds, --timeout, --mem-limit, --seed, --build, --workdir, --keep" ;;
    esac
done
sizes=${sizes:-100000 300000 1000000}
for n in $sizes $rounds $tmo $seed ${memlim:-1}; do
    [[ $n =~ ^[1-9][0-9]*$ ]] || die "'$n': not a positive number"
done
[ "$(id -u)" -eq 0 ] || die "needs root (contrib/local-slurm.sh starts slurmd, MariaDB, slurmdbd)"
slurmpin=$build/src/cmd/slurm-pin
[ -x "$slurmpin" ] || die "$slurmpin: not built (give --build DIR)"
[ -x /usr/bin/time ] || die "/usr/bin/time (GNU time, Debian package time) not found"
for x in sacct python3 timeout; do
    command -v "$x" >/dev/null || die "$x not found"
done
if [ -z "$memlim" ]; then
    memlim=$(awk '/^MemAvailable:/ { printf "%d", $2 * 3 / 4 / 1024 }' /proc/meminfo)
fi

if [ -z "$workdir" ]; then
    work=$(mktemp -d "${TMPDIR:-/tmp}/bench-acct.XXXXXX")
else
    mkdir -p "$workdir"
    work=$(cd "$workdir" && pwd)
fi
sdir=$work/slurm
cleanup () {
    "$top/contrib/local-slurm.sh" stop --dir "$sdir" --clean >/dev/null 2>&1 || true
    if [ "$keep" = no ]; then
        rm -rf "$work"
    else
        echo "bench-acct-scale: journals kept in $work" >&2
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

# The private slurmdbd, named as the generator names its cluster (acct,
# like sacct, lists the jobs of slurm.conf's ClusterName only).
cluster=cluster
echo "bench-acct-scale: starting a private Slurm with slurmdbd and MariaDB in $sdir" >&2
"$top/contrib/local-slurm.sh" start --dir "$sdir" --accounting --cluster "$cluster" \
    --timeout 120 >"$work/start.env" 2>"$work/start.log" \
    || { cat "$work/start.log" >&2; die "contrib/local-slurm.sh start --accounting failed"; }
export SLURM_CONF=$sdir/etc/slurm.conf

# The window: wide enough for every generated job (six months up to a
# few days after the generator's now)
S=2000-01-01T00:00:00
E=2099-12-31T00:00:00

# run NAME CMD...: one measured run; appends "wall rss rc" to $work/NAME.m,
# the output in $work/NAME.out
run () {
    local name=$1 rc=0
    shift
    ( ulimit -v $((memlim * 1024)); exec timeout -k 5 "$tmo" \
        /usr/bin/time -f '%e %M' -o "$work/$name.t" "$@" ) \
        >"$work/$name.out" 2>"$work/$name.err" || rc=$?
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        echo "timeout 0 $rc" >>"$work/$name.m"
    else
        echo "$(tail -n1 "$work/$name.t" 2>/dev/null || echo '0 0') $rc" >>"$work/$name.m"
    fi
}

# cell NAME: "median_s max_rss_MB" of the runs, or ">S -" / "fail(rc) -"
cell () {
    local f=$work/$1.m
    if grep -q '^timeout' "$f"; then printf '>%ss -' "$tmo"; return; fi
    if awk '$3 != 0 { bad = 1 } END { exit !bad }' "$f"; then
        printf 'fail(%s) -' "$(awk '$3 != 0 { print $3; exit }' "$f")"
        return
    fi
    printf '%.3f %.0f' "$(cut -d' ' -f1 "$f" | sort -n |
        awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')" \
        "$(awk '$2 > m { m = $2 } END { print m / 1024 }' "$f")"
}

# ran_out NAME: true when a run of NAME timed out or failed (not repeated)
ran_out () { [ -f "$work/$1.m" ] && awk '$1 == "timeout" || $3 != 0 { f = 1 } END { exit !f }' "$work/$1.m"; }

# jobs_in_json FILE: the jobs of a --json output ("?" when it does not
# parse, "big" over 400 MB: Python would need several GB to count them)
jobs_in_json () {
    if [ "$(wc -c <"$1")" -gt $((400 << 20)) ]; then echo big; return; fi
    python3 -c 'import json,sys
try:
    print(len(json.load(open(sys.argv[1]))["jobs"]))
except Exception as e:
    print("?")' "$1"
}

results=()
for n in $sizes; do
    jdir=$work/j$n
    rm -rf "$jdir"
    echo "bench-acct-scale: $n records: generating" >&2
    python3 "$top/bench/acct-gen.py" --records "$n" --dir "$jdir" --seed "$seed" \
        || die "acct-gen.py failed"
    bytes=$(cat $(ls -d "$jdir"/journal* | grep -v '\.idx$') | wc -c)
    t0=$(date +%s.%N)
    python3 "$top/bench/acct-load-slurmdbd.py" --replace --cluster "$cluster" "$jdir" \
        2>"$work/load.log" || { cat "$work/load.log" >&2; die "loading into slurmdbd failed"; }
    t1=$(date +%s.%N)
    load=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    loaded=$(sed 's/.*: \([0-9]* jobs, [0-9]* steps\).*/\1/' "$work/load.log")
    # a job in the middle of the journal for -j
    id=$(python3 -c 'import json,os,re,sys
d = sys.argv[1]
fs = sorted((f for f in os.listdir(d) if re.fullmatch(r"journal(\.[0-9]+)?", f)),
            key=lambda f: int(f.split(".")[1]) if "." in f else 1 << 30)
lines = [l for f in fs for l in open(os.path.join(d, f))]
for l in lines[len(lines) // 2:]:
    r = json.loads(l)
    if r["kind"] == "job":
        print(r["job_id"]); break' "$jdir")
    rm -f "$work"/*.m
    echo "bench-acct-scale: $n records ($bytes bytes, $loaded loaded in ${load}s): measuring, job $id" >&2
    for _ in $(seq "$rounds"); do
        ran_out acct-j || run acct-j "$slurmpin" acct --journal "$jdir" -j "$id"
        ran_out sacct-j || run sacct-j sacct -j "$id"
        ran_out acct-l || run acct-l "$slurmpin" acct --journal "$jdir" -a -S "$S" -E "$E"
        ran_out sacct-l || run sacct-l sacct -a -S "$S" -E "$E"
        ran_out acct-json || run acct-json "$slurmpin" acct --journal "$jdir" -a -S "$S" -E "$E" --json
        ran_out sacct-json || run sacct-json sacct -a -S "$S" -E "$E" --json
        ran_out report || run report "$slurmpin" report --journal "$jdir"
    done
    # rows: the listing's lines less the two header lines; --json: jobs
    rl_a=$(($(wc -l <"$work/acct-l.out") - 2))
    rl_s=$(($(wc -l <"$work/sacct-l.out") - 2))
    rj_a=$(jobs_in_json "$work/acct-json.out")
    rj_s=$(jobs_in_json "$work/sacct-json.out")
    if [ "$rl_a" = "$rl_s" ]; then rows_l="$rl_a = $rl_s"; else rows_l="MISMATCH $rl_a != $rl_s"; fi
    case "$rj_a $rj_s" in
    *'?'*|*big*) rows_j="not compared: $rj_a, $rj_s jobs (? no JSON: the run failed)" ;;
    *) if [ "$rj_a" = "$rj_s" ]; then rows_j="$rj_a = $rj_s jobs"; else rows_j="MISMATCH $rj_a != $rj_s jobs"; fi ;;
    esac
    rj1=$(($(wc -l <"$work/acct-j.out") - 2))
    sj1=$(($(wc -l <"$work/sacct-j.out") - 2))
    if [ "$rj1" = "$sj1" ]; then rows_1="$rj1 = $sj1"; else rows_1="MISMATCH $rj1 != $sj1"; fi
    results+=("$n|$bytes|$loaded|$load|-j $id|$(cell acct-j)|$(cell sacct-j)|$rows_1")
    results+=("$n|||| listing|$(cell acct-l)|$(cell sacct-l)|$rows_l")
    results+=("$n|||| --json|$(cell acct-json)|$(cell sacct-json)|$rows_j")
    results+=("$n|||| report|$(cell report)|- -|")
    [ "$keep" = yes ] || rm -rf "$jdir"
done

# the conditions, then the table
rel=$(sacct --version 2>/dev/null | awk '{ print $2 }')
dbv=$(mariadb --version 2>/dev/null | sed 's/.*Distrib \([^ ,]*\).*/\1/; s/.* from \([^ ,]*\).*/\1/' || true)
# shellcheck disable=SC1091
os=$(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")
echo "acct at scale: slurm-pin acct/report reading the journal vs sacct reading slurmdbd, same jobs"
echo "$os, Slurm $rel, MariaDB $dbv, kernel $(uname -r), $(nproc) CPUs, $(awk '/^MemTotal:/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg) (at the end)"
echo "$("$slurmpin" --version 2>/dev/null | head -n1) ($(git -C "$top" describe --always --dirty 2>/dev/null || echo '?')); $rounds rounds, median wall s, largest max RSS MB; timeout ${tmo}s, address space limit ${memlim} MB"
echo "window -S $S -E $E; listing rows = output lines less 2 header lines"
printf '%-8s %-16s %9s %8s %9s %8s %8s %8s  %s\n' records command acct_s acct_MB sacct_s sacct_MB s_ratio MB_ratio "rows acct = sacct"
for line in "${results[@]}"; do
    IFS='|' read -r n bytes loaded load what a s rows <<<"$line"
    read -r at am <<<"$a"
    read -r st sm <<<"$s"
    ratio () { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2fx", b / a; else printf "-" }'; }
    if [ -n "$bytes" ]; then
        echo "-- $n records: journal $((bytes / 1048576)) MiB, $loaded in slurmdbd (loaded in ${load}s)"
    fi
    printf '%-8s %-16s %9s %8s %9s %8s %8s %8s  %s\n' "$n" "${what# }" "$at" "$am" "$st" "$sm" \
        "$(ratio "$at" "$st")" "$(ratio "$am" "$sm")" "$rows"
done
echo "s_ratio, MB_ratio: sacct's over acct's (above 1: acct is faster / smaller)"
