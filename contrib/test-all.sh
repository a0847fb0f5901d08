#!/bin/bash
# Run every test of slurm-pin, from a fresh Debian machine (12, 13 or
# unstable), as root.
#
#   contrib/test-all.sh [--tiers LIST] [--vm-modes MODES] [--release-only]
#
# --tiers LIST runs only the named test stages after the build, LIST a
# comma-separated subset of unit,t,check,packages,sanitize,distcheck,fuzz,vm
# (default: unit,packages,sanitize,distcheck,fuzz,vm).  Install, autogen
# and build always run.  --vm-modes MODES runs the qemu tier in those
# Slurm modes only ("cgroup", "affinity" or both, the default;
# t/vm/run-tests.sh --modes).  With no option, every stage in every mode:
# the README's test command.  CI runs that on one Debian release and fewer
# stages on the others (doc/testing.md).  --release-only (CI, on the
# releases after the first) skips the t/ files that test only slurm-pin's
# own code the same way on every release (no Slurm in them: the profile
# recorder, the plots, the journal at scale); each says so in its TAP
# ("1..0 # SKIP"), counted as skipped, never as passed.
#
# Stages, each announced by a "==== ... ====" header:
#   1. install the Debian packages (contrib/install-deps.sh)
#   2. ./autogen.sh
#   3. build in build/ with --enable-werror (bench/ included, not run)
#   3a. unit: 'make check' in build/src (the unit tests of every library,
#      the plugins' symbol checks)
#   3b. t: 'make check' in build/t, the integration tests against the
#      build tree (the developers' tier; check = unit,t)
#   3c. packages: the Debian packages built from this tree
#      (contrib/build-debs.sh: dpkg-buildpackage, lintian; with
#      DEB_BUILD_OPTIONS=nocheck when stage 3a ran the unit tests) and installed,
#      then the integration tests of build/t against the INSTALLED files
#      (PIN_INSTALLED=1: /usr/bin/slurm-pin, pin.so and job_submit_pin.so
#      from Slurm's plugin directory; t/sharness.d/00-pin.sh).  This is
#      what the default runs instead of 3b: the files a site installs are
#      the ones tested.  It leaves the packages installed.
#   4. build src/common in build-sanitize/ with ASan+UBSan, run its unit
#      tests
#   4b. make distcheck in build/: the tarball alone builds, passes its unit
#      tests and the sharness files that need no Slurm (the Slurm tier ran
#      in stage 3 and skips there, saying why: PIN_SKIP_SLURM), installs,
#      uninstalls and cleans (doc/testing.md)
#   5. the fuzz harnesses, t/fuzz/run.sh: each built with clang and run for
#      FUZZ_SECONDS (default 20) as a regression check (doc/fuzzing.md)
#   6. the qemu tier, t/vm/run-tests.sh (always: it fails if qemu cannot run)
# A test failure does not stop the later stages; a failed build does.
# For each failed 'make check' the test-suite.log files with failures are
# printed.  The last line is the summary CI reads:
#   N passed, N failed, N skipped
# counted over the :test-result: lines of automake's .trs files (one per
# TAP test case, one per plain test program); PASS and XFAIL count as
# passed, FAIL, XPASS and ERROR as failed, SKIP as skipped; the TAP of the
# fuzz stage and of the qemu tier (build/fuzz.log, build/vm-tier.log)
# counts the same way, one result per "ok" / "not ok" line; distcheck's
# (its tree is removed when it passes) from the PASS:/FAIL:/... lines
# automake prints in build/distcheck.log.  A stage that
# fails outside any test (a build; a check stage, the fuzz stage or the
# qemu tier failing with no failed test result to show for it) counts as
# one more failure, so "0 failed" always means everything worked.
# Before it, each failed test on a line "failed: WHERE: RESULT" (at most
# 60), so that the end of the log says which.
# Exit status: 0 only if nothing failed.
#
# Environment: JOBS (default 2) for make -j.  FUZZ_SECONDS (default 20)
# for each fuzz harness.  PIN_REQUIRE_SLURM defaults
# to 1: a machine where the local Slurm cannot start fails the Slurm tests
# instead of skipping them.
set -uo pipefail

all_tiers=unit,t,check,packages,sanitize,distcheck,fuzz,vm
tiers=unit,packages,sanitize,distcheck,fuzz,vm
vm_modes=()
while (($#)); do
    case $1 in
        --vm-modes) (($# >= 2)) || { echo "test-all: --vm-modes needs a value (cgroup, affinity or both)" >&2; exit 2; }
                    vm_modes=(--modes "$2"); shift 2 ;;
        --tiers) (($# >= 2)) || { echo "test-all: --tiers needs a value (a comma-separated subset of $all_tiers)" >&2; exit 2; }
                 tiers=$2; shift 2 ;;
        --tiers=*) tiers=${1#--tiers=}; shift ;;
        --release-only) export PIN_RELEASE_ONLY=1; shift ;;
        *) echo "test-all: unknown argument '$1'; usage: contrib/test-all.sh [--tiers LIST] [--vm-modes MODES] [--release-only], LIST a subset of $all_tiers" >&2
           exit 2 ;;
    esac
done
IFS=, read -ra wanted <<<"$tiers"
((${#wanted[@]})) || { echo "test-all: --tiers '': name at least one of $all_tiers" >&2; exit 2; }
for t in "${wanted[@]}"; do
    [[ ,$all_tiers, == *,"$t",* ]] \
        || { echo "test-all: --tiers: '$t' is not a tier; known: $all_tiers" >&2; exit 2; }
done
# check is unit and t (the build tree's 'make check')
[[ ,$tiers, == *,check,* ]] && tiers=$tiers,unit,t
# want TIER: whether stage TIER runs in this run
want () {
    [[ ,$tiers, == *,"$1",* ]]
}

cd "$(dirname "$0")/.." || exit 1
top=$PWD
jobs=${JOBS:-2}
export PIN_REQUIRE_SLURM="${PIN_REQUIRE_SLURM-1}"
stage_failures=0
failed_stages=()

# Each header says how long the run has taken so far, so that the time
# of every stage can be read off the log.
header () {
    printf '\n==== %s ==== (%d s since start)\n' "$*" "$SECONDS"
}

# Run a command with its output in a log file; print the log on failure.
run_logged () {
    local log=$1
    shift
    if "$@" >"$log" 2>&1; then
        return 0
    fi
    echo "FAILED: $* (output follows, also in $log)"
    cat "$log"
    return 1
}

stage_failed () {
    stage_failures=$((stage_failures + 1))
    failed_stages+=("$1")
    echo "stage failed: $1"
}

# Print every test-suite.log under $1 that records a failure.
show_failed_logs () {
    local log
    while IFS= read -r log; do
        if grep -Eq '^# (FAIL|XPASS|ERROR): +[1-9]' "$log"; then
            printf '\n---- %s ----\n' "$log"
            cat "$log"
        fi
    done < <(find "$1" -name test-suite.log 2>/dev/null | sort)
}

# Drop the test results under directory $1.
clean_results () {
    find "$1" \( -name '*.trs' -o -name 'test-suite.log' \) -delete \
        2>/dev/null
    return 0
}

# Print the :test-result: values of every .trs file of this run (not
# those of a distcheck tree left by a failed distcheck: its results are
# counted from its log).
results () {
    find build build-sanitize -path 'build/slurm-pin-*' -prune \
        -o -name '*.trs' -print 2>/dev/null | sort \
        | xargs -r sed -n 's/^:test-result: *\([A-Z]*\).*/\1/p'
}

failed_results () {
    results | grep -Ec '^(FAIL|XPASS|ERROR)$'
}

# A test stage failed: it counts as one more failure only when no failed
# test result appeared during it (e.g. a test program did not build).
test_stage_failed () {
    local name=$1 before=$2
    failed_stages+=("$name")
    echo "stage failed: $name"
    if (($(failed_results) == before)); then
        stage_failures=$((stage_failures + 1))
    fi
}

# TAP logs of stages that are not automake test suites (the fuzz stage,
# the qemu tier): their "ok" / "not ok" lines count in the summary.
tap_logs=()

# Count the TAP results of log $1 into tap_pass, tap_fail and tap_skip
# ("ok ... # SKIP" is a skip, not a pass).
tap_count () {
    local ok
    tap_pass=0 tap_fail=0 tap_skip=0
    [[ -f $1 ]] || return 0
    ok=$(grep -Ec '^ok [0-9]+' "$1")
    tap_skip=$(grep -Eci '^ok [0-9]+.*# skip' "$1")
    tap_pass=$((ok - tap_skip))
    tap_fail=$(grep -Ec '^not ok [0-9]+' "$1")
}

# Run a TAP-printing stage: command $3... with its output shown and kept
# in log $2, registered for the summary.  Stage name $1 fails when the
# command does; with no 'not ok' to show for it (the command could not
# run at all) that is one more failure.
run_tap_stage () {
    local name=$1 log=$2 tap_pass tap_fail tap_skip
    shift 2
    tap_logs+=("$log")
    if "$@" 2>&1 | tee "$log"; then
        return 0
    fi
    failed_stages+=("$name")
    echo "stage failed: $name"
    tap_count "$log"
    ((tap_fail > 0)) || stage_failures=$((stage_failures + 1))
}

# Logs of make runs whose result lines ("PASS: ...", "FAIL: ...") count
# in the summary (distcheck: its tree, and its .trs files, are removed
# when it passes).
am_logs=()

# Count the automake result lines of log $1 into am_pass, am_fail and
# am_skip, as results() counts .trs files.
am_count () {
    am_pass=0 am_fail=0 am_skip=0
    [[ -f $1 ]] || return 0
    am_pass=$(grep -Ec '^(PASS|XFAIL): ' "$1")
    am_fail=$(grep -Ec '^(FAIL|XPASS|ERROR): ' "$1")
    am_skip=$(grep -Ec '^SKIP: ' "$1")
}

# Print each failed test result of this run on a line of its own,
# "failed: WHERE: RESULT", so that a log's last lines say which tests
# failed (CI repeats them in its summary): the "not ok" lines of the .log
# beside each failed .trs (or its result, for a plain test program), of
# the TAP logs, and the failed result lines of the automake logs.
failed_list () {
    local trs log
    while IFS= read -r trs; do
        grep -Eq '^:test-result: *(FAIL|XPASS|ERROR)' "$trs" || continue
        log=${trs%.trs}.log
        if grep -Eq '^not ok [0-9]+' "$log" 2>/dev/null; then
            grep -E '^not ok [0-9]+' "$log" | grep -v '# TODO' \
                | sed "s|^|failed: ${trs%.trs}: |"
        else
            echo "failed: ${trs%.trs}: $(sed -n 's/^:test-result: *//p' "$trs" | grep -E '^(FAIL|XPASS|ERROR)' | head -n 1)"
        fi
    done < <(find build build-sanitize -path 'build/slurm-pin-*' -prune \
                 -o -name '*.trs' -print 2>/dev/null | sort)
    for log in "${tap_logs[@]}"; do
        [[ -f $log ]] || continue
        grep -E '^not ok [0-9]+' "$log" | sed "s|^|failed: $log: |"
    done
    for log in "${am_logs[@]}"; do
        [[ -f $log ]] || continue
        grep -E '^(FAIL|XPASS|ERROR): ' "$log" | sed "s|^|failed: $log: |"
    done
}

summary () {
    local pass=0 fail=0 skip=0 result log tap_pass tap_fail tap_skip
    local am_pass am_fail am_skip
    while IFS= read -r result; do
        case $result in
            PASS | XFAIL) pass=$((pass + 1)) ;;
            FAIL | XPASS | ERROR) fail=$((fail + 1)) ;;
            SKIP) skip=$((skip + 1)) ;;
        esac
    done < <(results)
    for log in "${tap_logs[@]}"; do
        tap_count "$log"
        pass=$((pass + tap_pass))
        fail=$((fail + tap_fail))
        skip=$((skip + tap_skip))
    done
    for log in "${am_logs[@]}"; do
        am_count "$log"
        pass=$((pass + am_pass))
        fail=$((fail + am_fail))
        skip=$((skip + am_skip))
    done
    fail=$((fail + stage_failures))
    header "summary"
    if ((${#failed_stages[@]})); then
        echo "failed stages: ${failed_stages[*]}"
    fi
    failed_list | head -n 60
    echo "$pass passed, $fail failed, $skip skipped"
    ((fail == 0))
}

finish () {
    summary
    exit $?
}

# Configure and build in directory $1 with configure options $2...
build_tree () {
    local dir=$1
    shift
    mkdir -p "$dir" || return 1
    (cd "$dir" && run_logged configure.out ../configure "$@") \
        && run_logged "$dir/make.out" make -C "$dir" -j"$jobs"
}

# Results of an earlier run must not count in this one.
clean_results build
clean_results build-sanitize

header "install dependencies (contrib/install-deps.sh)"
if ! contrib/install-deps.sh; then
    stage_failed "install-deps"
    finish
fi

header "autogen (./autogen.sh)"
if ! run_logged "$top/autogen.log" ./autogen.sh; then
    stage_failed "autogen"
    finish
fi

header "build (build/, --enable-werror)"
# The benchmarks are not run here, only built, so they keep compiling.
if ! build_tree build --enable-werror \
   || ! run_logged build/make-bench.out make -C build/bench bench; then
    stage_failed "build"
    finish
fi
echo "built: build/src/cmd/slurm-pin, build/bench/bench-plan, bench-step, bench-quality"

echo "tiers: $tiers${vm_modes[1]:+ (qemu modes: ${vm_modes[1]})}${PIN_RELEASE_ONLY:+ (release-only: the release-independent t/ files skip)}; $(grep -h '^PRETTY_NAME=' /etc/os-release 2>/dev/null | cut -d= -f2 | tr -d '"'); $(sinfo -V 2>/dev/null || echo 'no sinfo')"

if want unit; then
header "unit (make check in build/src: the unit tests)"
before=$(failed_results)
if ! make -C build/src -k -j"$jobs" check; then
    show_failed_logs build/src
    test_stage_failed "unit" "$before"
fi
fi

if want t; then
header "t (make check in build/t: integration tests, build tree)"
before=$(failed_results)
if ! make -C build/t -k -j"$jobs" check; then
    show_failed_logs build/t
    test_stage_failed "t" "$before"
fi
fi

# The packages a site installs, built from this tree, installed, and the
# integration tests run against the installed files.
if want packages; then
header "packages (contrib/build-debs.sh --install: dpkg-buildpackage, lintian, apt-get install)"
# When the unit stage ran them in this run, the package build skips the
# same unit tests (DEB_BUILD_OPTIONS=nocheck; about 45 s): the installed
# files are then tested by the t/ tier below.
nocheck=""
want unit && nocheck=nocheck
if ! DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:-}${nocheck:+ $nocheck}" \
        contrib/build-debs.sh -o build/deb --install; then
    stage_failed "packages-build"
else
    # where the packages put slurm-pin and pin.so (dpkg's own list)
    inst_bin=$(dpkg -L slurm-pin | sed -n 's|/slurm-pin$||p' | grep /bin | head -n 1)
    inst_plugin=$(dpkg -L slurm-pin-spank | sed -n 's|/pin\.so$||p' | head -n 1)
    header "t against the installed packages (make check in build/t, PIN_INSTALLED=1: $inst_bin, $inst_plugin)"
    before=$(failed_results)
    if ! PIN_INSTALLED=1 PIN_INST_BINDIR=$inst_bin PIN_INST_PLUGINDIR=$inst_plugin \
            make -C build/t -k -j"$jobs" check; then
        show_failed_logs build/t
        test_stage_failed "packages-t" "$before"
    fi
fi
fi

# Only src/common (the libraries and their unit tests) is built here:
# the plugins and the command are built with -Werror in build/, and
# nothing of theirs runs in this stage.
if want sanitize; then
header "sanitizers (build-sanitize/src/common, ASan+UBSan, unit tests)"
if ! (mkdir -p build-sanitize && cd build-sanitize \
          && run_logged configure.out ../configure --enable-werror --enable-sanitizers); then
    stage_failed "sanitize-build"
else
    before=$(failed_results)
    if ! make -C build-sanitize/src/common -k -j"$jobs" check; then
        show_failed_logs build-sanitize
        test_stage_failed "sanitize-check" "$before"
    fi
fi
fi

# The tarball: 'make distcheck' unpacks 'make dist' alone, builds it out
# of a read-only source tree, runs its unit tests and the sharness files
# that need no Slurm (the local Slurm tier ran in the check stage and
# skips there: PIN_SKIP_SLURM, set by AM_DISTCHECK_CONFIGURE_FLAGS),
# installs, uninstalls and cleans it.  Output in build/distcheck.log,
# shown when it fails; its result lines count in the summary.
if want distcheck; then
header "distcheck (make distcheck in build/)"
am_logs+=(build/distcheck.log)
if make -C build -j"$jobs" distcheck >build/distcheck.log 2>&1; then
    am_count build/distcheck.log
    echo "distcheck: $am_pass passed, $am_skip skipped; $(ls build/slurm-pin-*.tar.gz)"
else
    echo "FAILED: make distcheck (output follows, also in build/distcheck.log)"
    for d in build/slurm-pin-*/; do
        [[ -d $d ]] && show_failed_logs "$d"
    done
    tail -n 60 build/distcheck.log
    failed_stages+=("distcheck")
    echo "stage failed: distcheck"
    am_count build/distcheck.log
    ((am_fail > 0)) || stage_failures=$((stage_failures + 1))
fi
fi

# Every parser of untrusted text has a libFuzzer harness; each runs for a
# bounded time here, a regression check (the longer run before a release
# is in doc/fuzzing.md).  Its TAP (one line per harness) is kept in
# build/fuzz.log; clang or libFuzzer missing fails the stage.
if want fuzz; then
header "fuzz (t/fuzz/run.sh, FUZZ_SECONDS=${FUZZ_SECONDS:-20} each)"
run_tap_stage fuzz build/fuzz.log t/fuzz/run.sh
fi

# The qemu tier is where placements are enforced by a real multi-NUMA
# kernel: it is part of every run, and a guest that cannot boot fails it.
if want vm; then
header "qemu guest (t/vm/run-tests.sh)"
# Its TAP (one stream for the whole boot) is kept in build/vm-tier.log.
run_tap_stage vm build/vm-tier.log t/vm/run-tests.sh "${vm_modes[@]}"
fi

finish
