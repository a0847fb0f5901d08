#!/bin/bash
# Build the libFuzzer harnesses of t/fuzz/ with clang and run each for a
# bounded time, as a regression check (doc/fuzzing.md).
#
#   t/fuzz/run.sh [--keep DIR] [--all] [HARNESS...]
#
# Each harness is compiled together with the library sources it needs
# (no configure, no libtool: clang with -fsanitize=fuzzer,address,undefined),
# then run for FUZZ_SECONDS on a copy of its seed corpus
# t/fuzz/corpus/<harness>/ (the repository's corpus is never written).
# Prints TAP: "ok N - fuzz_x: E execs in S s, cov C, no crash", or
# "not ok N - fuzz_x: <what broke>; input saved to <file>" followed by the
# end of the fuzzer's output as "#" lines.
#
# Options:
#   --keep DIR   keep each harness's grown corpus, crash files and log in
#                DIR/<harness>/ (reused by the next run with the same DIR:
#                a longer campaign can be continued); without it they go
#                to build/fuzz/run/, emptied at the start, and the grown
#                corpora are removed at the end (crash files and logs stay)
#   --all        also the harnesses not run by default
#                (fuzz_topoxml_builtin)
#   HARNESS...   run only these (default: those run by default)
# Environment:
#   FUZZ_SECONDS  time per harness (default 20)
#   FUZZ_SEED     libFuzzer's -seed (default 1: a regression run explores
#                 the same inputs each time, so that it fails for a change
#                 of the code, not of luck; 0: a random seed, for the
#                 longer runs that look for new bugs)
#   FUZZ_JOBS     harnesses fuzzed at the same time (default 1)
#   FUZZ_BUILD    where objects and binaries go (default build/fuzz)
#   CC            the compiler (default clang; must have libFuzzer)
# Exit status: 0 only if every harness built and ran without a crash;
# 1 otherwise, also when clang or libFuzzer is missing.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd) || exit 1
fuzzdir=$top/t/fuzz
seconds=${FUZZ_SECONDS:-20}
jobs=${FUZZ_JOBS:-1}
seed=${FUZZ_SEED:-1}
build=${FUZZ_BUILD:-$top/build/fuzz}
cc=${CC:-clang}
keep=""
all=0

# name  source  corpus  max_len  environment  run by default
# fuzz_topoxml_builtin is fuzz_topoxml with hwloc's built-in XML reader
# instead of the libxml2 one (used where libhwloc-plugins is missing:
# doc/topology.md).  It still finds crashes of hwloc 2.9 that libtopo
# does not guard against (doc/fuzzing.md), so it runs only when named or
# with --all, not in the regression run.
HARNESSES="
fuzz_pinopt          fuzz_pinopt.c    fuzz_pinopt    4096  -                     yes
fuzz_conf            fuzz_conf.c      fuzz_conf      16384 -                     yes
fuzz_confargs        fuzz_confargs.c  fuzz_confargs  16384 -                     yes
fuzz_cpulist         fuzz_cpulist.c   fuzz_cpulist   4096  -                     yes
fuzz_claims          fuzz_claims.c    fuzz_claims    4096  -                     yes
fuzz_cpustat         fuzz_cpustat.c   fuzz_cpustat   4096  -                     yes
fuzz_topoxml         fuzz_topoxml.c   fuzz_topoxml   65536 -                     yes
fuzz_netlink         fuzz_netlink.c   fuzz_netlink   4096  -                     yes
fuzz_procfs          fuzz_procfs.c    fuzz_procfs    4096  -                     yes
fuzz_series          fuzz_series.c    fuzz_series    16384 -                     yes
fuzz_text            fuzz_text.c      fuzz_text      4096  -                     yes
fuzz_summary         fuzz_summary.c   fuzz_summary   16384 -                     yes
fuzz_topoxml_builtin fuzz_topoxml.c   fuzz_topoxml   65536 HWLOC_LIBXML_IMPORT=0 no
"

# The library sources the harnesses link (an archive: each harness pulls
# in only what it uses).
LIB_SOURCES="
src/common/libutil/errprintf.c
src/common/libutil/mkdirp.c
src/common/libutil/safefile.c
src/common/libutil/text.c
src/common/libutil/safeio.c
src/common/libutil/atomicfile.c
src/common/libtopo/topo.c
src/common/libtopo/list.c
src/common/libtopo/slurm.c
src/common/libtopo/cache.c
src/common/libtopo/model.c
src/common/libtopo/devices.c
src/common/libplace/place.c
src/common/libconf/conf.c
src/common/libcgroup2/cg2.c
src/common/libclaims/claims.c
src/common/libconf/pinopt.c
src/common/libprof/cnproc.c
src/common/libprof/tracker.c
src/common/libprof/taskstats.c
src/common/libprof/procfs.c
src/common/libprof/profile.c
src/common/libprof/series.c
src/common/libacct/summary.c
"

usage () {
    sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
}

die () {
    echo "Bail out! $*"
    exit 1
}

while (($#)); do
    case $1 in
        --keep)
            (($# >= 2)) || die "--keep needs a directory"
            keep=$2
            shift 2
            ;;
        --keep=*)
            keep=${1#--keep=}
            shift
            ;;
        --all)
            all=1
            shift
            ;;
        -h | --help)
            usage
            exit 0
            ;;
        -*)
            die "unknown option $1 (see --help)"
            ;;
        *)
            break
            ;;
    esac
done
[[ $seconds =~ ^[1-9][0-9]*$ ]] || die "FUZZ_SECONDS=$seconds: give a number of seconds"
[[ $jobs =~ ^[1-9][0-9]*$ ]] || die "FUZZ_JOBS=$jobs: give a number >= 1"
[[ $seed =~ ^[0-9]+$ ]] || die "FUZZ_SEED=$seed: give a number (0: random)"

# The harnesses to run, as table lines.
selected=()
while read -r name src corpus maxlen envs default; do
    [[ -n $name ]] || continue
    if (($#)); then
        for want in "$@"; do
            [[ $want == "$name" ]] && selected+=("$name $src $corpus $maxlen $envs")
        done
    elif [[ $default == yes ]] || ((all)); then
        selected+=("$name $src $corpus $maxlen $envs")
    fi
done <<<"$HARNESSES"
for want in "$@"; do
    grep -Eq "^$want " <<<"$HARNESSES" || die "unknown harness $want; known: $(awk 'NF {printf "%s ", $1}' <<<"$HARNESSES")"
done

# ---- the compiler ------------------------------------------------------
command -v "$cc" >/dev/null \
    || die "$cc not found: install the Debian packages clang and libclang-rt-14-dev (contrib/install-deps.sh)"
if ! command -v pkg-config >/dev/null || ! pkg-config --exists hwloc; then
    die "hwloc's pkg-config file not found: install libhwloc-dev and pkg-config (contrib/install-deps.sh)"
fi
mkdir -p "$build/obj" "$build/bin" || die "cannot create $build"
probe=$build/obj/probe
printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
    'int LLVMFuzzerTestOneInput (const uint8_t *d, size_t n);' \
    'int LLVMFuzzerTestOneInput (const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' \
    >"$probe.c"
"$cc" -fsanitize=fuzzer,address,undefined "$probe.c" -o "$probe" \
    >"$probe.log" 2>&1 \
    || die "$cc cannot build a libFuzzer program (libclang_rt.fuzzer missing?): install the Debian package libclang-rt-14-dev (contrib/install-deps.sh); see $probe.log"

# llvm-symbolizer names functions and lines in crash reports.
if ! command -v llvm-symbolizer >/dev/null && [[ -z ${ASAN_SYMBOLIZER_PATH-} ]]; then
    for s in /usr/lib/llvm-*/bin/llvm-symbolizer; do
        [[ -x $s ]] && export ASAN_SYMBOLIZER_PATH=$s
    done
fi

# ---- build ---------------------------------------------------------------
read -r -a hwloc_cflags <<<"$(pkg-config --cflags hwloc)"
read -r -a hwloc_libs <<<"$(pkg-config --libs hwloc json-c zlib) -lacl"
# No config.h: the library sources include it only under HAVE_CONFIG_H,
# and what it would give them is _GNU_SOURCE.
CFLAGS=(-g -O1 -fno-omit-frame-pointer -D_GNU_SOURCE
        "-fsanitize=address,undefined" -fno-sanitize-recover=all
        -Wall -Wextra -Wshadow -Wformat=2 -Wno-unused-parameter
        -Wmissing-prototypes -Wstrict-prototypes -Wpointer-arith -Werror
        -I"$top/src/common" -I"$fuzzdir"
        "${hwloc_cflags[@]}")

# Compile $1 into $2 with the fuzzer's coverage instrumentation.
compile () {
    "$cc" "${CFLAGS[@]}" -fsanitize=fuzzer-no-link -c "$1" -o "$2"
}

build_log=$build/build.log
: >"$build_log"
objs=()
pids=()
for src in $LIB_SOURCES; do
    obj=$build/obj/$(echo "${src%.c}" | tr / _).o
    objs+=("$obj")
    compile "$top/$src" "$obj" >>"$build_log" 2>&1 &
    pids+=($!)
    if ((${#pids[@]} >= jobs)); then
        wait "${pids[0]}" || die "cannot compile $src with $cc: see $build_log"
        pids=("${pids[@]:1}")
    fi
done
for pid in "${pids[@]}"; do
    wait "$pid" || die "cannot compile the library sources with $cc: see $build_log"
done
rm -f "$build/libfuzzpin.a"
ar rcs "$build/libfuzzpin.a" "${objs[@]}" || die "ar failed"

# Build harness $1 from source $2 (name ending in _builtin: the same
# source); prints nothing, returns non-zero on failure.
build_harness () {
    local name=$1 src=$2
    "$cc" "${CFLAGS[@]}" -fsanitize=fuzzer "$fuzzdir/$src" \
        "$build/libfuzzpin.a" "${hwloc_libs[@]}" -o "$build/bin/$name" \
        >>"$build_log" 2>&1
}

# ---- run -------------------------------------------------------------------
if [[ -n $keep ]]; then
    mkdir -p "$keep" || die "cannot create $keep"
    run=$(cd "$keep" && pwd)
else
    run=$build/run
    rm -rf "$run"
    mkdir -p "$run" || die "cannot create $run"
fi

# Scratch files of the harnesses (fuzz_topoxml writes each input to a
# file): on tmpfs when there is one, removed at the end even after a crash.
if [[ -d /dev/shm && -w /dev/shm ]]; then
    scratch=$(mktemp -d /dev/shm/slurm-pin-fuzz.XXXXXX)
else
    scratch=$(mktemp -d "${TMPDIR:-/tmp}/slurm-pin-fuzz.XXXXXX")
fi
[[ -n $scratch ]] || die "cannot create a scratch directory"
trap 'rm -rf "$scratch"' EXIT

# Fuzz one harness; writes its TAP line (without the number) to
# $run/<name>/result and the fuzzer's output to $run/<name>/log.
fuzz_one () {
    local name=$1 src=$2 corpus=$3 maxlen=$4 envs=$5
    local dir=$run/$name rc=0 summary artifact runs secs cov
    local -a env_args=()

    mkdir -p "$dir/corpus" "$dir/crashes" "$scratch/$name"
    rm -f "$dir/result"
    if ! build_harness "$name" "$src"; then
        echo "not ok - $name: does not build; see $build_log" >"$dir/result"
        return
    fi
    if [[ -d $fuzzdir/corpus/$corpus ]]; then
        cp -p "$fuzzdir/corpus/$corpus"/* "$dir/corpus/" 2>/dev/null
    fi
    [[ $envs == - ]] || read -r -a env_args <<<"$envs"
    (cd "$dir" && env FUZZ_TMPDIR="$scratch/$name" "${env_args[@]}" \
        timeout --kill-after=10 $((seconds * 2 + 60)) \
        "$build/bin/$name" -max_total_time="$seconds" -max_len="$maxlen" \
        -seed="$seed" -timeout=25 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$dir/crashes/" "$dir/corpus") \
        >"$dir/log" 2>&1 || rc=$?
    runs=$(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\1/p' "$dir/log" | tail -1)
    secs=$(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\2/p' "$dir/log" | tail -1)
    cov=$(grep -Eo 'cov: [0-9]+' "$dir/log" | tail -1 | sed 's/cov: //')
    if ((rc == 0)) && [[ -n $runs ]]; then
        echo "ok - $name: $runs execs in $secs s, cov ${cov:-?}, no crash" >"$dir/result"
        return
    fi
    summary=$(grep -Em1 '^fuzz: invariant broken: |^SUMMARY: |==ERROR: ' "$dir/log" \
              | sed 's/^==[0-9]*==//' | cut -c1-300)
    [[ -n $summary ]] || summary="exit status $rc, no sanitizer report"
    artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$dir/log" | tail -1)
    {
        echo "not ok - $name: $summary; input saved to ${artifact:-(none)}; log $dir/log"
        echo "# reproduce: $build/bin/$name ${artifact:-CRASH-FILE}"
        tail -n 40 "$dir/log" | sed 's/^/#   /'
    } >"$dir/result"
}

echo "1..${#selected[@]}"
n=0
failed=0
# Print the result of test number $1, harness $2.
report () {
    local num=$1 name=$2 line
    line=$(cat "$run/$name/result" 2>/dev/null) \
        || line="not ok - $name: no result (the run was killed?)"
    # the number goes after "ok"/"not ok"
    sed "1s/^\(not ok\|ok\) - /\1 $num - /" <<<"$line"
    [[ $line == ok* ]] || failed=$((failed + 1))
}

running=0
names=()
for entry in "${selected[@]}"; do
    read -r name src corpus maxlen envs <<<"$entry"
    names+=("$name")
    if ((jobs == 1)); then
        fuzz_one "$name" "$src" "$corpus" "$maxlen" "$envs"
        n=$((n + 1))
        report "$n" "$name"
        continue
    fi
    # FUZZ_JOBS at a time; the results are printed in order at the end
    if ((running >= jobs)); then
        wait -n
        running=$((running - 1))
    fi
    echo "# $name: fuzzing for $seconds s"
    fuzz_one "$name" "$src" "$corpus" "$maxlen" "$envs" &
    running=$((running + 1))
done
if ((jobs > 1)); then
    wait
    for name in "${names[@]}"; do
        n=$((n + 1))
        report "$n" "$name"
    done
fi

# The grown corpora are big and of no use after a regression run.
if [[ -z $keep ]]; then
    for name in "${names[@]}"; do
        rm -rf "${run:?}/$name/corpus"
    done
fi
((failed == 0))
