#!/bin/bash
# t/vm/run-tests.sh - the qemu tier: boot ONE guest that runs every
# t/vm/tests/t*.sh (or the TESTs given) and print their combined TAP.
# A test that needs another guest names the run-guest.sh options of each
# guest it runs in, one line each ("none": the plain guest):
#     # vm-guest-options: none
#     # vm-guest-options: --io-numa 1
# Each distinct set of options then gets a boot of its own, after the plain
# one, running the tests that name it (its TAP plan follows the first).
#
# usage: run-tests.sh [--builddir DIR] [--modes LIST] [--timeout SEC]
#                     [--share DIR] [TEST...]
#
# Exits non-zero on any failed test, a timeout, a guest that died, or a
# machine without qemu or a kernel (then with a "Bail out!" line): this tier
# never passes silently.  Prints the wall time of the whole tier.
#   --builddir DIR  the build to test (default $PIN_BUILDDIR, else the
#                   current directory if it holds config.status, else
#                   build/ in the sources, where contrib/test-all.sh builds)
#                   Build it against the Slurm of the root the tier runs in
#                   (a bookworm build/ does not load in trixie's slurmd).
#   --modes LIST    the Slurm modes to run, of "cgroup affinity" (default
#                   both; $PIN_VM_MODES): e.g. --modes cgroup
#   --timeout SEC   for the whole boot (default 1200: the tier's budget is
#                   20 minutes on a 2-CPU machine; it takes about 12)
#   --share DIR     keep the guest's results (logs, Slurm logs) in DIR
#                   (a second boot's in DIR/boot-2, ...)
# Options are passed on to run-guest.sh.  See doc/vm.md.
set -u

here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/../.." && pwd)

opts=()
share=""
while test $# -gt 0; do
    case $1 in
        --share)
            test $# -ge 2 || { echo "Bail out! run-tests: $1 needs a value"; exit 1; }
            share=$2; shift 2 ;;
        --builddir|--timeout|--mem)
            test $# -ge 2 || { echo "Bail out! run-tests: $1 needs a value"; exit 1; }
            opts+=("$1" "$2"); shift 2 ;;
        --modes)
            test $# -ge 2 || { echo "Bail out! run-tests: $1 needs a value"; exit 1; }
            PIN_VM_MODES=$2; shift 2 ;;
        -q|--quiet) opts+=("$1"); shift ;;
        -h|--help) sed -n '2,/^set -u/{/^set -u/d;s/^# \{0,1\}//p}' "$0"; exit 0 ;;
        -*) echo "Bail out! run-tests: unknown option '$1'; known: --builddir --modes --timeout --share --mem --quiet"
            exit 1 ;;
        *) break ;;
    esac
done

for m in ${PIN_VM_MODES:-}; do
    case $m in
        cgroup|affinity) ;;
        *) echo "Bail out! run-tests: --modes '$PIN_VM_MODES': mode '$m' unknown; known: cgroup, affinity"
           exit 1 ;;
    esac
done
export PIN_VM_MODES

tests=()
for t in "$@"; do
    test -f "$t" || { echo "Bail out! run-tests: TEST $t: no such file"; exit 1; }
    tests+=("$(cd "$(dirname "$t")" && pwd -P)/$(basename "$t")")
done
if test ${#tests[@]} -eq 0; then
    for t in "$srcdir"/t/vm/tests/t*.sh; do
        test -f "$t" && tests+=("$t")
    done
    test ${#tests[@]} -gt 0 \
        || { echo "Bail out! run-tests: no tests in $srcdir/t/vm/tests"; exit 1; }
fi

# guests_of TEST: the option sets TEST runs under, one a line ("none"
# for the plain guest, the only one when the test names none).
guests_of ()
{
    local g
    g=$(sed -n 's/^# vm-guest-options:[[:space:]]*//p' "$1" | sed 's/[[:space:]]*$//')
    if test -z "$g"; then echo none; else echo "$g"; fi
}

# The boots, the plain one first, then the others in the order tests name
# them; boot_tests[i] holds the tests of boot i, one a line.
boots=(none)
boot_tests=("")
for t in "${tests[@]}"; do
    while IFS= read -r g; do
        for ((i = 0; i < ${#boots[@]}; i++)); do
            test "${boots[i]}" = "$g" && break
        done
        if test "$i" -eq ${#boots[@]}; then
            boots+=("$g")
            boot_tests+=("")
        fi
        boot_tests[i]+="$t"$'\n'
    done < <(guests_of "$t")
done

start=$(date +%s)
status=0
nboots=0
for ((i = 0; i < ${#boots[@]}; i++)); do
    test -n "${boot_tests[i]}" || continue
    mapfile -t these < <(printf '%s' "${boot_tests[i]}")
    gopts=()
    test "${boots[i]}" = none || read -r -a gopts <<<"${boots[i]}"
    nboots=$((nboots + 1))
    # --share DIR: the first boot's results in DIR, boot N's in DIR/boot-N
    if test -n "$share"; then
        if test $nboots -eq 1; then
            gopts+=(--share "$share")
        else
            gopts+=(--share "$share/boot-$nboots")
        fi
    fi
    bstart=$(date +%s)
    echo "# vm tier: boot $nboots, guest options: ${boots[i]}, ${#these[@]} test file(s)"
    "$here/run-guest.sh" --timeout 1200 "${opts[@]}" "${gopts[@]}" \
        "$here/guest-run.sh" "${these[@]}"
    s=$?
    echo "# vm tier: boot $nboots (${boots[i]}): wall time $(($(date +%s) - bstart))s, exit status $s"
    test "$s" -eq 0 || status=$s
done
end=$(date +%s)
echo "# vm tier: ${#tests[@]} test file(s) in $nboots boot(s), wall time $((end - start))s, exit status $status"
exit $status
