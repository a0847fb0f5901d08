#!/bin/bash
# t/vm/guest-run.sh - inside the qemu guest: run the tier's tests and print
# them as one TAP stream.  t/vm/run-tests.sh boots the guest with it.
#
# usage: guest-run.sh [TEST...]     (default: every t/vm/tests/t*.sh)
#
# A test that needs Slurm names the modes it runs in on a line of its own:
#     # vm-slurm-modes: cgroup affinity
# Tests without that line run first, in order; then, for each mode in the
# order cgroup, affinity, every test naming that mode runs in order with
# PIN_VM_SLURM_MODE set, so the cluster is (re)started once per mode;
# PIN_VM_MODES (run-tests.sh --modes) runs only the modes it lists.
# Each test's results are renumbered into one plan; a test that exits
# non-zero without a failing result, runs a different number of tests than
# it planned, or outlives PIN_VM_TEST_TIMEOUT (300 s) adds a "not ok".
# Timings and notes the tests recorded are printed as comments at the end.
set -u

: "${PIN_SRCDIR:?PIN_SRCDIR is not set: run this through t/vm/run-tests.sh}"
# shellcheck source=t/vm/guest-lib.sh disable=SC1091
. "$PIN_SRCDIR/t/vm/guest-lib.sh"

per_test_timeout=${PIN_VM_TEST_TIMEOUT:-300}
HARNESS_ACTIVE=t        # sharness: no test-results/ directory
export HARNESS_ACTIVE

if test $# -eq 0; then
    set -- "$PIN_SRCDIR"/t/vm/tests/t*.sh
fi

modes_of ()
{
    sed -n 's/^# vm-slurm-modes:[[:space:]]*//p' "$1" | head -n 1
}

# mawk reads a pipe in blocks unless told otherwise: no live output then.
awk_lines=(awk)
if test -z "$(awk -W interactive 'BEGIN { exit 0 }' </dev/null 2>&1)"; then
    awk_lines=(awk -W interactive)
fi

total=0
failed=0

# run_one TEST MODE: run one test, renumber its results after $total.
run_one ()
{
    local t=$1 mode=$2 name sum status start log pid
    local n plan nfail bail skip
    name=$(basename "$t" .sh)${mode:+ ($mode)}
    echo "# --- $name"
    sum=$(mktemp)
    start=$(vm_now)
    log=$(mktemp)
    # The test writes to a file and tail follows it until the test exits:
    # daemons a test starts may keep its stdout open, which must not hold
    # up the run (a pipe would not see its end until they exit).
    PIN_VM_SLURM_MODE=$mode timeout -k 10 "$per_test_timeout" "$t" \
        ${PIN_VM_VERBOSE:+--verbose} </dev/null >"$log" &
    pid=$!
    # shellcheck disable=SC2016  # an awk program
    tail -n +1 -s 0.2 -f --pid="$pid" "$log" \
        | "${awk_lines[@]}" -v base="$total" -v sum="$sum" '
            BEGIN { n = 0; plan = -1; nfail = 0; bail = 0; skip = "" }
            /^(not )?ok([ \t]|$)/ {
                notok = ($0 ~ /^not /)
                match($0, /^(not )?ok( +[0-9]+)?/)
                rest = substr($0, RLENGTH + 1)
                n++
                if (notok && rest !~ /#[ \t]*[Tt][Oo][Dd][Oo]/)
                    nfail++
                printf "%s %d%s\n", notok ? "not ok" : "ok", base + n, rest
                fflush()
                next
            }
            /^1\.\.[0-9]+/ {
                plan = $0; sub(/^1\.\./, "", plan); sub(/[^0-9].*/, "", plan)
                if (match($0, /#[ \t]*[Ss][Kk][Ii][Pp]/))
                    skip = substr($0, RSTART + RLENGTH)
                next
            }
            /^Bail out!/ { bail = 1 }
            { print; fflush() }
            END { printf "%d %d %d %d %s\n", n, plan, nfail, bail, skip > sum }'
    wait "$pid"
    status=$?
    rm -f "$log"
    vm_record_time "test $name" "$start"
    read -r n plan nfail bail skip <"$sum"
    rm -f "$sum"
    total=$((total + n))
    failed=$((failed + nfail))

    if test "$plan" -eq 0 && test "$n" -eq 0 && test "$status" -eq 0; then
        total=$((total + 1))
        echo "ok $total - $name # SKIP${skip:+ $skip}"
        return
    fi
    local why=""
    if test "$status" -eq 124 || test "$status" -eq 137; then
        why="killed after ${per_test_timeout}s (PIN_VM_TEST_TIMEOUT)"
    elif test "$plan" -lt 0; then
        why="printed no TAP plan (exit status $status)"
    elif test "$plan" -ne "$n"; then
        why="planned $plan tests but ran $n (exit status $status)"
    elif test "$status" -ne 0 && test "$nfail" -eq 0; then
        why="exited with status $status"
    elif test "$bail" -ne 0; then
        why="bailed out"
    fi
    if test -n "$why"; then
        total=$((total + 1))
        failed=$((failed + 1))
        echo "not ok $total - $name: $why"
    fi
}

plain=()
for t in "$@"; do
    modes=$(modes_of "$t")
    for mode in $modes; do
        case $mode in
            cgroup|affinity) ;;
            *) total=$((total + 1))
               failed=$((failed + 1))
               echo "not ok $total - $(basename "$t" .sh): vm-slurm-modes: '$mode' unknown; known: cgroup, affinity" ;;
        esac
    done
    test -n "$modes" || plain+=("$t")
done
for t in "${plain[@]}"; do
    run_one "$t" ""
done
# PIN_VM_MODES (run-tests.sh --modes): only these modes
test -z "${PIN_VM_MODES:-}" \
    || echo "# only the Slurm modes '$PIN_VM_MODES' (PIN_VM_MODES): tests of other modes not run"
for mode in ${PIN_VM_MODES:-cgroup affinity}; do
    for t in "$@"; do
        case " $(modes_of "$t") " in
            *" $mode "*) run_one "$t" "$mode" ;;
        esac
    done
done
# No need to stop the cluster (about 15 s): the guest powers off next.
vm_slurm_save_logs

if test -s "$PIN_VM_OUT/notes"; then
    echo "# notes:"
    sed 's/^/#   /' "$PIN_VM_OUT/notes"
fi
if test -s "$PIN_VM_OUT/timings"; then
    echo "# timings (seconds, wall clock in the guest):"
    awk -F '\t' '{ printf "#   %-40s %6.1f\n", $1, $2 }' "$PIN_VM_OUT/timings"
fi
echo "1..$total"
test "$failed" -eq 0
