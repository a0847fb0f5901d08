#!/bin/bash
# Make the example images of README.md and doc/profiling-guide.md from a
# real profiled job step, as root:
#
#   contrib/doc-images.sh [--builddir DIR] [--out DIR]
#
# Boots the qemu guest of the test bed (t/vm/run-guest.sh: 2 sockets x 4
# cores x 2 threads, 2 NUMA nodes, pure cgroup v2, so that the step cgroup
# has its memory and io controllers, which this machine's cgroup v1 host
# does not give), starts the demo's local Slurm in it in cgroup mode with
# the build's pin.so (t/vm/guest-lib.sh, as contrib/demo.sh --vm does),
# runs one job step of a user (nobody) with
#
#   srun --pin-policy=numa-local --pin-profile=500ms -n 1 -c 4 job.sh
#
# where job.sh does what the seeds' jobs do, one phase after another:
#   1. 6 busy workers on the step's 4 CPUs for 8 s (more processes than
#      CPUs);
#   2. a parent fills 96 MiB and forks 4 workers that read all of it and
#      wait (AthenaMP's copy-on-write sharing: RSS against PSS);
#   3. writes 192 MiB to a file and reads them back;
# and all along, a short-lived process every 100 ms (ALICE's ~10 Hz);
# then draws every kind of chart (slurm-pin plot) into DIR (default
# doc/img), 1100x600.  The io kind is drawn only where Slurm delegated the
# io controller to the step's cgroup: Slurm's cgroup/v2 (seen with 24.11)
# enables cpuset, cpu, memory and pids, not io, so here it is not
# (slurm-pin plot says so; the profile's summary has the bytes each
# process read and wrote, from taskstats).  The guest is emulated (about 20 times slower than
# the host), so each phase lasts seconds of wall time, not minutes.
#
# Default DIR of the build: build/.  Takes about 5 minutes.
set -euo pipefail

kinds="cpu gantt forks ctxsw states memory io"

if test "${1:-}" = --in-guest; then
    # shellcheck source=t/vm/guest-lib.sh disable=SC1091
    . "$PIN_SRCDIR/t/vm/guest-lib.sh"
    out=$PIN_VM_OUT/img
    mkdir -p "$out"
    prof=$VM_PIN_DIR/profile
    w=$(mktemp -d /tmp/pin-img.XXXXXX)
    chmod 1777 "$w"
    cat >"$w/job.sh" <<-EOF
	#!/bin/sh
	cd "$w" || exit 1
	echo "\$SLURM_JOB_ID" >job.id
	# all along: a short-lived process every 100 ms (ALICE's ~10 Hz)
	while ! test -e stop; do /bin/true; sleep 0.1; done &
	# 1. 6 busy workers on the step's 4 CPUs for 8 s
	for i in 1 2 3 4 5 6; do
	    timeout 8 sh -c 'while :; do :; done' &
	done
	sleep 9
	# 2. 96 MiB shared copy-on-write by 4 workers, 6 s
	/usr/bin/python3 "$PIN_SRCDIR/t/profile/workload.py" shared 96 4 6 >/dev/null
	# 3. 192 MiB written and read back
	dd if=/dev/zero of=out.dat bs=1M count=192 status=none
	dd if=out.dat of=/dev/null bs=1M status=none
	rm -f out.dat
	sleep 2
	touch stop
	wait
	EOF
    chmod 755 "$w/job.sh"
    vm_pin_require cgroup
    echo "ProfileDir=$prof" >>"$PIN_CONF"
    runuser -u nobody -- srun --chdir="$w" --pin-policy=numa-local \
        --pin-profile=500ms -n 1 -c 4 "$w/job.sh"
    job=$(cat "$w/job.id")
    slurm-pin profile --dir "$prof" "$job"
    cp "$prof/$job.0.$LOCAL_SLURM_NODE.jsonl" "$out/profile.jsonl"
    for k in $kinds; do
        slurm-pin plot --dir "$prof" "$job.0" --kind "$k" \
            -o "$out/plot-$k.png" --size 1100x600 ||
            test "$k" = io # said why; the other kinds must be drawn
    done
    ls -l "$out"
    exit 0
fi

cd "$(dirname "$0")/.."
builddir=$PWD/build
out=$PWD/doc/img
while test $# -gt 0; do
    case $1 in
        --builddir) builddir=$(cd "$2" && pwd); shift 2 ;;
        --out) out=$2; shift 2 ;;
        *) echo "doc-images.sh: '$1': unknown option; known: --builddir DIR, --out DIR" >&2
           exit 2 ;;
    esac
done
test -x "$builddir/src/cmd/slurm-pin" || {
    echo "doc-images.sh: no slurm-pin in $builddir/src/cmd: build first (--builddir DIR)" >&2
    exit 1
}
share=$(mktemp -d "${TMPDIR:-/tmp}/pin-img.XXXXXX")
t/vm/run-guest.sh --timeout 1200 --builddir "$builddir" --share "$share" \
    contrib/doc-images.sh --in-guest
mkdir -p "$out"
for k in $kinds; do
    if test -e "$share/out/img/plot-$k.png"; then
        cp "$share/out/img/plot-$k.png" "$out/"
    else
        echo "doc-images.sh: no $k image (said above why)"
    fi
done
echo "images in $out; the profile they were drawn from: $share/out/img/profile.jsonl"
