#!/bin/bash
# Show what slurm-pin does, from a fresh Debian machine (12, 13 or
# unstable: Slurm 22.05, 24.11 or 26.05), as root.
#
#   contrib/demo.sh
#
# Installs the packages, builds in build/ and prints the placement
# 'slurm-pin plan' computes for every policy, for a 2-socket
# 8-core/16-thread node like ALICE's (a real machine's hwloc XML from
# ../shared/topologies) and for this machine.  Then it starts a private
# local Slurm (munge, slurmctld, slurmd: contrib/local-slurm.sh) with the
# build's pin.so in its plugstack.conf, runs pinned job steps with
# srun --pin-policy=...,verbose, prints what each task got as the kernel
# reports it (/proc/self/status), and stops the cluster again.  Each step
# is a function called from main().
#
#   contrib/demo.sh --installed
#
# does the same with the installed packages instead of the build tree:
# slurm-pin from /usr/bin, pin.so from Slurm's plugin directory, the
# plugstack.conf line of the installed drop-in
# (/etc/slurm/plugstack.conf.d/50-slurm-pin.conf, uncommented as an admin
# would) and the installed /etc/slurm/pin.conf as it ships.  Where the
# packages are not installed it builds and installs them first
# (contrib/build-debs.sh --install: Debian only).  CI runs it after the
# tests, on each release.
#
#   contrib/demo.sh --vm
#
# also shows the multi-NUMA case this machine cannot: it boots the qemu
# guest of the test bed (t/vm/run-guest.sh: 2 sockets x 4 cores x 2
# threads, 2 NUMA nodes, pure cgroup v2), starts Slurm in cgroup mode in it
# with pin.so, and runs the same -n 2 -c 4 request with Slurm alone and
# with each policy, printing each task's CPUs and memory nodes as the
# guest's kernel reports them (a few minutes: the guest is emulated).
#
# Environment: JOBS (default 2) for make -j.
set -euo pipefail

# Inside the guest (run-guest.sh runs this file with --in-guest).
if test "${1:-}" = --in-guest; then
    vm_guest=yes
else
    vm_guest=no
    cd "$(dirname "$0")/.."
fi
top=$PWD
jobs=${JOBS:-2}
# Relative to the top of the repository, where the commands run.
alice_xml=../shared/topologies/32em64t-2n8c2t-pci-noio.xml
policies="numa-local numa-spread cache-shared random none"
installed=no

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
    if test $installed = yes; then
        step_install
        return
    fi
    PATH=$top/build/src/cmd:$PATH
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

# --installed: the packages, built from this tree where none is installed.
step_install () {
    say "the installed packages"
    if ! dpkg -s slurm-pin slurm-pin-spank >/dev/null 2>&1; then
        echo "slurm-pin is not installed: building and installing the packages"
        contrib/build-debs.sh -o build/deb --install
    fi
    dpkg-query -W -f '${Package} ${Version}\n' slurm-pin slurm-pin-spank \
        slurm-pin-jobsubmit slurm-pin-plot 2>/dev/null || true
    PATH=/usr/bin:$PATH
    echo "slurm-pin: $(command -v slurm-pin) ($(slurm-pin --version))"
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

demo_dir=""
pilot_job=""
stop_cluster () {
    if test -n "$demo_dir"; then
        contrib/local-slurm.sh stop --dir "$demo_dir" --clean >/dev/null 2>&1 || true
        demo_dir=""
    fi
}

journal=""
profdir=""
demo_start=""
step_slurm () {
    local pin_so=$top/build/src/plugins/spank/.libs/pin.so
    local dropin=/etc/slurm/plugstack.conf.d/50-slurm-pin.conf
    say "a local Slurm with pin.so (contrib/local-slurm.sh)"
    demo_dir=$(mktemp -d /tmp/slurm-pin-demo.XXXXXX)
    trap stop_cluster EXIT
    # the records of this run only (the installed journal may hold others)
    demo_start=$(date +%Y-%m-%dT%H:%M:%S)
    if test $installed = yes; then
        # the drop-in's line, uncommented as the admin guide says; pin.so
        # then reads the installed /etc/slurm/pin.conf (all defaults)
        sed -n 's/^#[[:space:]]*\(required[[:space:]].*pin\.so.*\)$/\1/p' \
            "$dropin" >"$demo_dir/plugstack.conf"
        test -s "$demo_dir/plugstack.conf" \
            || { echo "demo: no commented-out pin.so line in $dropin" >&2; return 1; }
        echo "plugstack.conf: the line of $dropin, uncommented:"
        cat "$demo_dir/plugstack.conf"
        echo "pin.conf: /etc/slurm/pin.conf as installed"
        journal=/var/lib/slurm-pin/journal
        profdir=/var/lib/slurm-pin/profile
        # a cluster name of its own: the installed journal may hold records
        # of other local clusters whose job ids start at 1 too (a job is
        # its cluster and its id)
        contrib/local-slurm.sh start --dir "$demo_dir/slurm" \
            --cluster "demo$(date +%s)" \
            --plugstack "$demo_dir/plugstack.conf" >"$demo_dir/env"
    else
        cat >"$demo_dir/pin.conf" <<-EOF
	DefaultPolicy=none
	StateDir=$demo_dir/pin-state
	TopologyCache=$demo_dir/pin-state/topology.xml
	JournalDir=$demo_dir/journal
	DeliverCommand=none
	ProfileDir=$demo_dir/profile
	EOF
        echo "required $pin_so conf=@PIN_CONF@" >"$demo_dir/plugstack.conf"
        journal=$demo_dir/journal
        profdir=$demo_dir/profile
        contrib/local-slurm.sh start --dir "$demo_dir/slurm" \
            --plugstack "$demo_dir/plugstack.conf" \
            --pin-conf "$demo_dir/pin.conf" >"$demo_dir/env"
    fi
    local env
    env=$(cat "$demo_dir/env")
    demo_dir=$demo_dir/slurm
    eval "$env"
    echo "SLURM_CONF=$SLURM_CONF"
    sinfo

    local ncpus policy
    ncpus=$(nproc)
    say "pinned job steps (srun --pin-policy=POLICY,verbose)"
    for policy in numa-local cache-shared random; do
        show srun -n 1 -c 1 --pin-policy="$policy",verbose \
            grep -E '^(Cpus|Mems)_allowed_list' /proc/self/status
    done
    if ((ncpus >= 2)); then
        say "a whole-node pilot: two overlapping steps, disjoint CPUs"
        # Each step holds its CPU for 2 s, so the two really overlap.
        local pilot_step="srun --overlap -n 1 -c 1 --pin-policy=numa-local,verbose sh -c 'grep Cpus_allowed_list /proc/self/status; sleep 2'"
        # (no -Q: from 24.11 'sbatch --wait --parsable -Q' prints no job id)
        printf '$ sbatch --wait --parsable -o %s -n 1 -c %s --wrap "..."\n' \
            "$demo_dir/pilot.out" "$ncpus"
        pilot_job=$(sbatch --wait --parsable -o "$demo_dir/pilot.out" \
            -n 1 -c "$ncpus" --wrap "$pilot_step & $pilot_step & wait" \
            2>"$demo_dir/pilot.err") || { cat "$demo_dir/pilot.err" >&2; false; }
        [[ $pilot_job =~ ^[0-9]+ ]] \
            || { echo "demo: sbatch printed no job id: '$pilot_job'" >&2; cat "$demo_dir/pilot.err" >&2; false; }
        pilot_job=${pilot_job%%;*}
        cat "$demo_dir/pilot.out"
    fi
    say "a bad policy is refused at submission"
    show srun --pin-policy=numa-locl true || echo "(srun exited $?)"
    step_profile
    step_acct
    stop_cluster
    trap - EXIT
}

# A profiled step: 20 short-lived processes at ~10 Hz, every one of them
# seen by the kernel's proc connector, summarised by slurm-pin profile.
step_profile () {
    local prof=$profdir job
    say "a profiled step (srun --pin-profile): every process, from the kernel"
    echo "\$ srun --pin-profile=200ms -n 1 -c 1 sh -c 'for i in \$(seq 20); do /bin/true; sleep 0.1; done'"
    job=$(srun --pin-profile=200ms -n 1 -c 1 \
        sh -c 'echo $SLURM_JOB_ID; for i in $(seq 20); do /bin/true; sleep 0.1; done')
    show slurm-pin profile --dir "$prof" "$job"
}

# The records pin.so wrote for the jobs above, read from the demo's own
# journal (JournalDir= in its pin.conf; no slurmdbd: MariaDB would cost
# seconds and the journal holds the same records).
step_acct () {
    local jobs n=0
    say "accounting: slurm-pin acct and slurm-pin eff (the node journal)"
    # the job records come from the job epilog, which slurmd runs after
    # the job has ended: wait for them (5 s at most)
    while test $n -lt 25 && test -n "$(squeue -h -o %i 2>/dev/null)"; do
        sleep 0.2
        n=$((n + 1))
    done
    sleep 0.5
    jobs=$(slurm-pin acct --journal "$journal" -S "$demo_start" -X -n -P \
        -o JobID | paste -sd, -)
    if test -z "$jobs"; then
        echo "no records in $journal"
        return 1
    fi
    show slurm-pin acct --journal "$journal" -S "$demo_start" -j "$jobs" \
        -o JobID,JobName%12,AllocCPUS,Elapsed,State,PinPolicy,Cpuset,CPUEff
    show slurm-pin eff --journal "$journal" "${pilot_job:-${jobs##*,}}"
}

step_vm () {
    say "the multi-NUMA case in the qemu guest (t/vm/run-guest.sh)"
    echo "booting the guest: 2 sockets x 4 cores x 2 threads, 2 NUMA nodes;"
    echo "its Slurm runs under emulation, about 20 times slower than here"
    t/vm/run-guest.sh --quiet --builddir "$top/build" contrib/demo.sh --in-guest
}

# The guest's part of --vm (in the guest, as root; guest-lib.sh starts and
# reuses its Slurm).
vm_main () {
    # shellcheck source=t/vm/guest-lib.sh disable=SC1091
    . "$PIN_SRCDIR/t/vm/guest-lib.sh"
    local where=/tmp/where policy
    cat >"$where" <<-'EOF'
	#!/bin/sh
	# where: the CPUs and memory nodes of this task, as the kernel says
	s=/proc/self/status
	echo "task $SLURM_PROCID: cpus $(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' $s)" \
	     "mems $(sed -n 's/^Mems_allowed_list:[[:space:]]*//p' $s)"
	EOF
    chmod 755 "$where"
    say "the guest's machine"
    show lscpu --extended=CPU,CORE,SOCKET,NODE
    echo "starting Slurm in cgroup mode (cgroup/v2, task/cgroup,task/affinity)..."
    vm_pin_require cgroup
    vm_pin_remove
    say "Slurm alone (no SPANK plugin)"
    show srun -n 2 -c 4 "$where"
    show srun -n 2 -c 4 --hint=nomultithread "$where"
    vm_pin_require cgroup
    say "with pin.so: srun --pin-policy=POLICY,verbose"
    for policy in numa-local numa-spread; do
        show srun --pin-policy="$policy",verbose -n 2 -c 4 \
            --hint=nomultithread "$where" 2>&1
    done
    for policy in cache-shared random; do
        show srun --pin-policy="$policy",verbose -n 2 -c 4 "$where" 2>&1
    done
}

main () {
    local vm=no
    while test $# -gt 0; do
        case $1 in
            --vm) vm=yes; shift ;;
            --installed) installed=yes; shift ;;
            *) echo "demo.sh: '$1': unknown option; known: --vm, --installed" >&2; exit 2 ;;
        esac
    done
    step_deps
    step_build
    step_plan_alice
    step_plan_system
    step_slurm
    if test $vm = yes; then
        step_vm
    fi
}

if test $vm_guest = yes; then
    vm_main
else
    main "$@"
fi
