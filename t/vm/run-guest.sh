#!/bin/bash
# t/vm/run-guest.sh - boot the qemu test bed once and run one script in it.
#
# usage: run-guest.sh [OPTIONS] SCRIPT [ARGS...]
#        run-guest.sh [OPTIONS] --shell
#
# The guest is the host's own root filesystem (read-only 9p, tmpfs overlay)
# on the Debian kernel, with 2 sockets x 4 cores x 2 threads and 2 NUMA
# nodes, a pure cgroup v2 hierarchy and no network but loopback (with
# --io-numa, a NIC that stays down).  SCRIPT is
# copied into a share directory and run there as root (as /share/run/NAME);
# its stdout (TAP) and stderr are streamed here while it runs, and this
# script exits with SCRIPT's exit status.  Any failure of the test bed
# itself (no qemu, no kernel, timeout, guest died) prints a "Bail out!" line
# and exits non-zero: the tier never passes silently.
#
# Options:
#   --timeout SEC   kill qemu after SEC seconds (default 900); the guest's
#                   own watchdog stops SCRIPT about 30 s before that
#   --mem MB        guest memory, split evenly over the NUMA nodes (3072)
#   --smp SPEC      qemu -smp (default 16,sockets=2,cores=4,threads=2)
#   --numa N        NUMA nodes; CPUs are split into N equal blocks (2)
#   --io-numa N     add a GPU (virtio-gpu-pci: /dev/dri/card0) and a NIC
#                   (virtio-net-pci: eth0, on no host network) behind a
#                   PCIe host bridge on NUMA node N, q35 machine (doc/vm.md
#                   "Devices local to a NUMA node")
#   --builddir DIR  the project's build directory, passed to the guest as
#                   PIN_BUILDDIR (default: $PIN_BUILDDIR, else the current
#                   directory if it holds config.status, else build/ in
#                   the sources if it does)
#   --share DIR     results directory (created; kept); default: a temporary
#                   directory, removed on success and kept on failure
#   --shell         no script: an interactive shell on the guest console
#                   (Ctrl-a x quits qemu)
#   -q, --quiet     do not stream the guest's stderr
#
# Environment: PIN_VM_KERNEL (a /boot/vmlinuz-* to boot), PIN_VM_QEMU (the
# qemu binary), PIN_VM_ACCEL (qemu -accel, default tcg,thread=multi; KVM
# hangs on this project's machines), PIN_SHARED (the shared fixtures, default ../shared beside
# the sources), PIN_VM_CACHE (where the initramfs is cached).
set -u

prog=run-guest
here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/../.." && pwd)

bail ()
{
    echo "Bail out! $prog: $*"
    exit 1
}

usage ()
{
    echo "usage: $prog [OPTIONS] SCRIPT [ARGS...] | $prog [OPTIONS] --shell (--help for more)" >&2
    exit 2
}

# The comment at the top of this file, without its first line.
help ()
{
    sed -n '2,/^set -u/{/^set -u/d;s/^# \{0,1\}//p}' "$0"
    exit 0
}

timeout=900
mem=3072
smp=16,sockets=2,cores=4,threads=2
numa=2
io_numa=""
builddir=${PIN_BUILDDIR:-}
share=""
shell=no
quiet=no

need_arg ()
{
    test "$2" -ge 2 || bail "option $1 needs a value"
}

while test $# -gt 0; do
    case $1 in
        --timeout) need_arg "$1" $#; timeout=$2; shift 2 ;;
        --mem) need_arg "$1" $#; mem=$2; shift 2 ;;
        --smp) need_arg "$1" $#; smp=$2; shift 2 ;;
        --numa) need_arg "$1" $#; numa=$2; shift 2 ;;
        --io-numa) need_arg "$1" $#; io_numa=$2; shift 2 ;;
        --builddir) need_arg "$1" $#; builddir=$2; shift 2 ;;
        --share) need_arg "$1" $#; share=$2; shift 2 ;;
        --shell) shell=yes; shift ;;
        -q|--quiet) quiet=yes; shift ;;
        -h|--help) help ;;
        --) shift; break ;;
        -*) bail "unknown option '$1'; known: --timeout --mem --smp --numa --io-numa --builddir --share --shell --quiet" ;;
        *) break ;;
    esac
done

is_number ()
{
    case $1 in ''|*[!0-9]*) return 1 ;; esac
    test "$1" -gt 0
}
is_number "$timeout" || bail "--timeout $timeout: not a positive number of seconds"
if ! is_number "$mem" || test "$mem" -lt 512; then
    bail "--mem $mem: need a number of MB, at least 512"
fi
is_number "$numa" || bail "--numa $numa: need a positive number of NUMA nodes"
if test -n "$io_numa"; then
    case $io_numa in
        ''|*[!0-9]*) bail "--io-numa $io_numa: need a NUMA node number, 0 to $((numa - 1))" ;;
    esac
    test "$io_numa" -lt "$numa" \
        || bail "--io-numa $io_numa: the guest has NUMA nodes 0 to $((numa - 1)) (--numa $numa)"
fi

# -smp: N[,sockets=S,cores=C,threads=T]; the CPU count decides the NUMA split.
ncpus=${smp%%,*}
if ! is_number "$ncpus"; then
    s=1 c=1 t=1
    IFS=, read -r -a fields <<<"$smp"
    for f in "${fields[@]}"; do
        case $f in
            sockets=*) s=${f#*=} ;;
            cores=*) c=${f#*=} ;;
            threads=*) t=${f#*=} ;;
        esac
    done
    if ! is_number "$s" || ! is_number "$c" || ! is_number "$t"; then
        bail "--smp $smp: expected N,sockets=S,cores=C,threads=T"
    fi
    ncpus=$((s * c * t))
fi
test $((ncpus % numa)) -eq 0 \
    || bail "--smp $smp with --numa $numa: $ncpus CPUs do not split into $numa equal NUMA nodes"

if test $shell = yes; then
    test $# -eq 0 || bail "--shell takes no SCRIPT"
else
    test $# -ge 1 || usage
    script=$1
    shift
    if ! test -f "$script" || ! test -r "$script"; then
        bail "SCRIPT $script: no such readable file"
    fi
fi

# The guest sees the host's root at the same paths, except what it mounts
# afresh (/proc /sys /dev /run) and what lives in memory only on the host.
if test -z "$builddir" && test -f ./config.status; then
    builddir=$(pwd)
elif test -z "$builddir" && test -f "$srcdir/build/config.status"; then
    builddir=$srcdir/build     # contrib/test-all.sh builds there
fi
if test -n "$builddir"; then
    test -d "$builddir" || bail "--builddir $builddir: no such directory"
    builddir=$(cd "$builddir" && pwd -P)
    case $builddir/ in
        /proc/*|/sys/*|/dev/*|/run/*)
            bail "--builddir $builddir: hidden in the guest, which mounts /proc /sys /dev /run afresh; build somewhere else (e.g. /tmp/build-NAME)" ;;
    esac
    fstype=$(stat -f -c %T "$builddir")
    case $fstype in
        tmpfs|ramfs)
            bail "--builddir $builddir: on $fstype, not on the host's root filesystem; build on disk (e.g. /tmp/build-NAME when /tmp is not a tmpfs)" ;;
    esac
fi

# qemu and a kernel: missing either is a failure of the tier, not a skip.
qemu=${PIN_VM_QEMU:-qemu-system-x86_64}
command -v "$qemu" >/dev/null \
    || bail "$qemu not found: install qemu-system-x86 (contrib/install-deps.sh)"
# shellcheck source=t/vm/vm-lib.sh disable=SC1091
. "$here/vm-lib.sh"
vm_find_kernel || bail "$VM_ERROR"
: "${PIN_SHARED:=$(cd "$srcdir/.." && pwd)/shared}"

# The initramfs, cached and rebuilt when its inputs change.
if test -n "${PIN_VM_CACHE:-}"; then
    cache=$PIN_VM_CACHE
elif test -n "$builddir"; then
    cache=$builddir/t/vm/cache
else
    cache=${XDG_CACHE_HOME:-$HOME/.cache}/slurm-pin-vm
fi
initrd=$cache/initramfs-$VM_KVER.cpio.gz
"$here/mkinitramfs.sh" --kver "$VM_KVER" "$initrd" >&2 \
    || bail "cannot build the initramfs $initrd (see above)"

# The share: run/ holds the script and its wrapper, out/ what the guest writes.
keep=yes
if test -z "$share"; then
    share=$(mktemp -d "${TMPDIR:-/tmp}/pin-vm.XXXXXX") || bail "mktemp failed"
    keep=no
else
    mkdir -p "$share" || bail "--share $share: cannot create it"
    share=$(cd "$share" && pwd -P)
    rm -rf "$share/run" "$share/out"
fi
mkdir -p "$share/run" "$share/out"
: >"$share/out/stdout"
: >"$share/out/stderr"

# run/env: the environment of the guest script (and of --shell).
{
    echo "# written by $prog: the environment of the guest script"
    printf 'export PIN_VM=1 PIN_VM_SHARE=/share PIN_VM_OUT=/share/out\n'
    printf 'export PIN_SRCDIR=%q\n' "$srcdir"
    printf 'export PIN_BUILDDIR=%q\n' "$builddir"
    printf 'export PIN_SHARED=%q\n' "$PIN_SHARED"
    printf 'export PIN_VM_SMP=%q PIN_VM_NUMA=%q PIN_VM_MEM=%q\n' "$smp" "$numa" "$mem"
    # --io-numa N: the node the display device and the NIC are local to
    printf 'export PIN_VM_IO_NUMA=%q\n' "$io_numa"
    # PIN_VM_VERBOSE=1: the guest runs each test with sharness --verbose
    printf 'export PIN_VM_VERBOSE=%q\n' "${PIN_VM_VERBOSE:-}"
    printf 'export PIN_VM_MODES=%q\n' "${PIN_VM_MODES:-}"
} >"$share/run/env"
if test $shell = yes; then
    guest_script=shell
else
    name=$(basename "$script")
    cp "$script" "$share/run/$name"
    chmod 755 "$share/run/$name"
    {
        echo "#!/bin/bash"
        echo "# written by $prog: runs $name in the guest"
        echo ". /share/run/env"
        echo "mkdir -p /tmp/pin-vm && cd /tmp/pin-vm || exit 1"
        printf 'exec /share/run/%q' "$name"
        test $# -eq 0 || printf ' %q' "$@"
        echo
    } >"$share/run/guest.sh"
    chmod 755 "$share/run/guest.sh"
    guest_script=/share/run/guest.sh
fi

guest_timeout=$((timeout >= 90 ? timeout - 30 : timeout / 2))
cmdline="console=ttyS0 panic=-1 quiet cgroup_no_v1=all systemd.unified_cgroup_hierarchy=1"
cmdline="$cmdline pin.script=$guest_script pin.timeout=$guest_timeout pin.hostname=node1"
test -z "$io_numa" || cmdline="$cmdline pin.io=1"

# shellcheck disable=SC2054  # commas belong to qemu's option values
args=(-accel "${PIN_VM_ACCEL:-tcg,thread=multi}" -nodefaults -no-reboot -display none
      -cpu Cascadelake-Server -smp "$smp" -m "$mem"
      -kernel "$VM_KERNEL" -initrd "$initrd" -append "$cmdline"
      -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap
      -virtfs "local,path=$share,mount_tag=pinshare,security_model=none"
      -nic none)
if test -n "$io_numa"; then
    # A PCIe expander bridge (its own host bridge, bus 128) on node
    # io_numa, which QEMU's ACPI tables give a _PXM: the guest kernel then
    # reports every device below it local to that node.  Each device sits
    # in a root port of its own.  The NIC's netdev is a hub port with
    # nothing else on the hub: no host network, no slirp, no tap, no root.
    # shellcheck disable=SC2054  # commas belong to qemu's option values
    args+=(-machine q35
           -device "pxb-pcie,id=pxb1,bus_nr=128,numa_node=$io_numa"
           -device pcie-root-port,id=pin_rp1,bus=pxb1,chassis=1,addr=0
           -device pcie-root-port,id=pin_rp2,bus=pxb1,chassis=2,addr=1
           -device "virtio-gpu-pci,bus=pin_rp1"
           -netdev hubport,id=pin_net1,hubid=0
           -device virtio-net-pci,bus=pin_rp2,netdev=pin_net1)
fi
node_mb=$((mem / numa))
per=$((ncpus / numa))
for ((i = 0; i < numa; i++)); do
    args+=(-object "memory-backend-ram,id=mem$i,size=${node_mb}M"
           -numa "node,nodeid=$i,cpus=$((i * per))-$((i * per + per - 1)),memdev=mem$i")
done

qpid=""
tails=""
# shellcheck disable=SC2317  # called by the traps
cleanup ()
{
    # shellcheck disable=SC2086
    test -z "$qpid" || kill -KILL $qpid 2>/dev/null
    # shellcheck disable=SC2086
    test -z "$tails" || kill $tails 2>/dev/null
}
trap cleanup EXIT
trap 'cleanup; bail "interrupted"' INT TERM HUP

if test $shell = yes; then
    # the console is this terminal; qemu's monitor is muxed on it (Ctrl-a c)
    "$qemu" "${args[@]}" -serial mon:stdio
    exit $?
fi

start=$(date +%s)
hostload=$(cut -d' ' -f1 /proc/loadavg)
# setpriv --pdeathsig: qemu dies with this script even if it is SIGKILLed.
pdeath=()
setpriv --pdeathsig KILL true 2>/dev/null && pdeath=(setpriv --pdeathsig KILL --)
# qemu itself (TCG, several vCPUs) has aborted on an internal assertion a
# fraction of a second into the guest kernel's boot (CI, 2026-11-27:
# "iotlb_to_section: Assertion `section_index < d->map.sections_nb'
# failed", exit status 134, host load 5): the emulator's bug, before any
# of this project's code ran.  Such a boot (qemu killed by a signal, an
# assertion in its own output, the guest script never started) is tried
# once more and said so; any other failure is reported as it is.
attempt=1
while :; do
    "${pdeath[@]}" "$qemu" "${args[@]}" -serial "file:$share/console.log" \
        </dev/null >"$share/qemu.log" 2>&1 &
    qpid=$!

    # Stream what the guest writes while it runs.
    tail -n +1 -f -s 0.5 --pid="$qpid" "$share/out/stdout" &
    tails=$!
    if test $quiet = no; then
        tail -n +1 -f -s 0.5 --pid="$qpid" "$share/out/stderr" >&2 &
        tails="$tails $!"
    fi

    # Poll rather than sleep in a helper process: a helper would outlive this
    # script and keep its stdout open for whoever reads it.
    deadline=$((start + timeout))
    while kill -0 "$qpid" 2>/dev/null; do
        if test "$(date +%s)" -ge "$deadline"; then
            echo "$timeout" >"$share/host-timeout"
            kill -TERM "$qpid" 2>/dev/null
            sleep 5
            kill -KILL "$qpid" 2>/dev/null
            break
        fi
        sleep 1
    done
    wait "$qpid"
    qstatus=$?
    qpid=""
    # shellcheck disable=SC2086
    wait $tails
    tails=""
    if test $attempt -eq 1 && test $qstatus -gt 128 \
            && ! test -e "$share/host-timeout" \
            && ! test -e "$share/out/uptime.start" \
            && grep -q "Assertion" "$share/qemu.log" 2>/dev/null; then
        echo "# vm: qemu aborted (exit status $qstatus) before the guest script started: $(grep -m1 Assertion "$share/qemu.log"); booting again, once (first qemu output kept in $share/qemu.log.1)"
        mv "$share/qemu.log" "$share/qemu.log.1"
        attempt=2
        continue
    fi
    break
done
end=$(date +%s)

show_console ()
{
    echo "--- last lines of the guest console ($share/console.log) ---" >&2
    tail -n 40 "$share/console.log" >&2 2>/dev/null
    # qemu warns once per vCPU about every CPU feature TCG lacks: noise
    if grep -v "TCG doesn't support requested feature" "$share/qemu.log" \
            >"$share/qemu.log.short" 2>/dev/null && test -s "$share/qemu.log.short"; then
        echo "--- qemu's own output ($share/qemu.log) ---" >&2
        tail -n 20 "$share/qemu.log.short" >&2
    fi
}

read_num ()
{
    test -r "$1" && head -n 1 "$1"
}

t_boot=$(read_num "$share/out/uptime.start")
t_end=$(read_num "$share/out/uptime.end")
if test -n "$t_boot" && test -n "$t_end"; then
    awk -v w=$((end - start)) -v b="$t_boot" -v e="$t_end" 'BEGIN {
        printf "# vm: wall %ds: kernel boot to script start %.1fs, script %.1fs", w, b, e - b }'
    echo " (host load average at start: $hostload)"
else
    echo "# vm: wall $((end - start))s (host load average at start: $hostload)"
fi

status=1
if test -e "$share/host-timeout"; then
    show_console
    echo "Bail out! $prog: TIMEOUT: qemu killed after ${timeout}s (results in $share)"
elif test -e "$share/out/timeout"; then
    show_console
    echo "Bail out! $prog: TIMEOUT: guest watchdog killed the script after $(cat "$share/out/timeout")s (results in $share)"
elif ! test -s "$share/out/status"; then
    show_console
    echo "Bail out! $prog: the guest left no exit status (qemu exit status $qstatus; results in $share)"
else
    status=$(head -n 1 "$share/out/status")
    case $status in ''|*[!0-9]*) status=1 ;; esac
    if test "$status" -ne 0; then
        echo "# $prog: guest script exited with status $status (results in $share)" >&2
    fi
fi

if test "$status" -eq 0 && test $keep = no; then
    rm -rf "$share"
else
    keep=yes
fi
exit "$status"
