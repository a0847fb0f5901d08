#!/bin/bash
# t/vm/run-tests.sh - the qemu tier: boot ONE guest that runs every
# t/vm/tests/t*.sh (or the TESTs given) and print their combined TAP.
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
# Options are passed on to run-guest.sh.  See doc/vm.md.
set -u

here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/../.." && pwd)

opts=()
while test $# -gt 0; do
    case $1 in
        --builddir|--timeout|--share|--mem)
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

start=$(date +%s)
"$here/run-guest.sh" --timeout 1200 "${opts[@]}" "$here/guest-run.sh" "${tests[@]}"
status=$?
end=$(date +%s)
echo "# vm tier: ${#tests[@]} test file(s), wall time $((end - start))s, exit status $status"
exit $status
