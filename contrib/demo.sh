#!/bin/bash
# Show what slurm-pin does, from a fresh Debian 12 machine, as root.
#
#   contrib/demo.sh
#
# Installs the packages, builds in build/ and prints the placement
# 'slurm-pin plan' computes for every policy, for a 2-socket
# 8-core/16-thread node like ALICE's (a real machine's hwloc XML from
# ../shared/topologies) and for this machine.  Each step is a function
# called from main(), so the demo can grow (a local Slurm, a pinned job,
# the report) without being rewritten.
#
# Environment: JOBS (default 2) for make -j.
set -euo pipefail

cd "$(dirname "$0")/.."
top=$PWD
jobs=${JOBS:-2}
# Relative to the top of the repository, where the commands run.
alice_xml=../shared/topologies/32em64t-2n8c2t-pci-noio.xml
policies="numa-local numa-spread cache-shared random none"
PATH=$top/build/src/cmd:$PATH

say () {
    printf '\n==== %s ====\n' "$*"
}

# Print a command, then run it.
show () {
    printf '$ %s\n' "$*"
    "$@"
}

step_deps () {
    say "installing the Debian packages (contrib/install-deps.sh)"
    contrib/install-deps.sh
}

step_build () {
    say "building in build/"
    test -x configure || ./autogen.sh >autogen.log 2>&1 \
        || { cat autogen.log; return 1; }
    mkdir -p build
    if ! test -f build/Makefile; then
        (cd build && ../configure -q --enable-werror)
    fi
    make -C build -s -j"$jobs" >/dev/null
    echo "built build/src/cmd/slurm-pin"
}

step_plan_alice () {
    say "slurm-pin plan: 2 sockets x 8 cores x 2 threads (ALICE-like node)"
    if ! test -r "$alice_xml"; then
        echo "skipped: $alice_xml not found (../shared sits beside the" \
             "repository in CI)"
        return 0
    fi
    local policy
    for policy in $policies; do
        show slurm-pin plan --topology "$alice_xml" --policy "$policy" \
            -n 2 -c 4
    done
}

step_plan_system () {
    local ncpus ntasks=2 cpt=4 policy
    ncpus=$(nproc)
    # -n 2 -c 4 where it fits, else the largest 2-task step that does.
    if ((ncpus < 8)); then
        ntasks=$((ncpus >= 2 ? 2 : 1))
        cpt=$((ncpus / ntasks))
    fi
    say "slurm-pin plan: this machine ($ncpus CPUs)"
    for policy in $policies; do
        show slurm-pin plan --topology system --policy "$policy" \
            -n "$ntasks" -c "$cpt"
    done
}

main () {
    step_deps
    step_build
    step_plan_alice
    step_plan_system
}

main "$@"
