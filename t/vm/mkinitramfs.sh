#!/bin/sh
# t/vm/mkinitramfs.sh - build the qemu test bed's initramfs.
#
# usage: mkinitramfs.sh [--kver VER] OUT
#
# OUT (a gzip'd newc cpio) holds busybox-static with its applet links, the
# guest's /init (t/vm/guest-init.sh) and the kernel modules the guest needs
# to mount the host's root over 9p with an overlay on top (modules/order),
# and those of the devices run-guest.sh --io-numa adds (modules/order.io,
# loaded only then), copied from /lib/modules/VER and decompressed (.ko.xz,
# .ko.zst, .ko.gz) so that busybox insmod can load them whatever it was
# built with.
#
# OUT is rebuilt only when an input changed: OUT.stamp records a checksum of
# every input (busybox, init, this script, each module, VER).
set -eu

# The modules the guest needs to mount the host's root (virtio PCI, 9p over
# virtio, overlay).  What they depend on is added from modinfo, each after
# its dependencies; what the kernel builds in is skipped: which are modules
# differs between kernels (6.1 has fscache.ko, 6.12 and 7.2 build fscache
# into netfs.ko), so no list of dependencies is written here.
MODULES="virtio_pci 9pnet_virtio 9p overlay"
# The drivers of the devices run-guest.sh --io-numa puts behind a NUMA
# node's host bridge: virtio-gpu-pci (DRM: /dev/dri/card0) and
# virtio-net-pci.  Loaded after MODULES, only when the kernel command line
# says pin.io=1; what MODULES already loads is not repeated.
IO_MODULES="virtio_gpu virtio_net"

here=$(cd "$(dirname "$0")" && pwd)
prog=mkinitramfs

die ()
{
    echo "$prog: $*" >&2
    exit 1
}

usage ()
{
    echo "usage: $prog [--kver VER] OUT" >&2
    exit 2
}

kver=""
while test $# -gt 0; do
    case $1 in
        --kver) test $# -ge 2 || usage; kver=$2; shift 2 ;;
        --kver=*) kver=${1#--kver=}; shift ;;
        -h|--help) usage ;;
        -*) die "unknown option '$1'; known: --kver VER" ;;
        *) break ;;
    esac
done
test $# -eq 1 || usage
out=$1

if test -z "$kver"; then
    # shellcheck source=t/vm/vm-lib.sh disable=SC1091
    . "$here/vm-lib.sh"
    vm_find_kernel || die "$VM_ERROR"
    kver=$VM_KVER
fi
moddir=/lib/modules/$kver
test -d "$moddir/kernel" || die "--kver $kver: $moddir/kernel not found; pick a version listed in /lib/modules"

busybox=""
for b in /bin/busybox /usr/bin/busybox; do
    if test -x "$b" && { ldd "$b" 2>&1 || true; } | grep -q 'not a dynamic'; then
        busybox=$b
        break
    fi
done
test -n "$busybox" || die "no statically linked busybox in /bin or /usr/bin: install busybox-static (contrib/install-deps.sh)"
for tool in cpio gzip sha256sum modinfo; do
    command -v "$tool" >/dev/null || die "$tool not found: install it (contrib/install-deps.sh)"
done

# find_module NAME: print the path of NAME's module file, or nothing if it
# is built into the kernel; fail if it is neither.
# A module's file may spell '_' as '-' (virtio_gpu is virtio-gpu.ko).
find_module ()
{
    _dash=$(echo "$1" | tr _ -)
    f=$(find "$moddir/kernel" \( -name "$1.ko" -o -name "$1.ko.xz" \
            -o -name "$1.ko.zst" -o -name "$1.ko.gz" -o -name "$_dash.ko" \
            -o -name "$_dash.ko.xz" -o -name "$_dash.ko.zst" -o -name "$_dash.ko.gz" \) \
            | head -n 1)
    if test -n "$f"; then
        echo "$f"
    elif grep -q -e "/$1\\.ko\$" -e "/$_dash\\.ko\$" "$moddir/modules.builtin" 2>/dev/null; then
        :
    else
        die "module $1 is neither in $moddir/kernel nor built into kernel $kver"
    fi
}

# add_module NAME: add NAME's dependencies (from modinfo), then NAME, to
# modfiles and the load order, once each; built-in ones are skipped.
modfiles=""
loaded=" "
add_module ()
{
    case $loaded in *" $1 "*) return 0 ;; esac
    loaded="$loaded$1 "
    _f=$(find_module "$1") || exit 1
    test -n "$_f" || return 0
    for _dep in $(modinfo -k "$kver" -F depends "$1" 2>/dev/null | tr ',' ' '); do
        add_module "$_dep"
    done
    _f=$(find_module "$1")
    modfiles="$modfiles $_f"
}
for m in $MODULES; do
    add_module "$m"
done
test -n "$modfiles" || die "kernel $kver: every module in '$MODULES' is built in; nothing to load (is modinfo working?)"
basefiles=$modfiles
modfiles=""
for m in $IO_MODULES; do
    add_module "$m"
done
iofiles=$modfiles
modfiles="$basefiles $iofiles"

# Checksum of every input: rebuild only when it changes.
stamp=$( {
    echo "kver $kver"
    sha256sum "$busybox" "$here/guest-init.sh" "$0"
    # shellcheck disable=SC2086
    test -z "$modfiles" || sha256sum $modfiles
} | sha256sum | cut -d' ' -f1)
if test -s "$out" && test -r "$out.stamp" && test "$(cat "$out.stamp")" = "$stamp"; then
    exit 0
fi

mkdir -p "$(dirname "$out")"
stage=$(mktemp -d "${TMPDIR:-/tmp}/pin-initramfs.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/dev" "$stage/proc" "$stage/sys" \
         "$stage/mnt" "$stage/tmp" "$stage/modules"
cp "$busybox" "$stage/bin/busybox"
for applet in $("$busybox" --list); do
    test "$applet" = busybox || ln -s busybox "$stage/bin/$applet"
done
cp "$here/guest-init.sh" "$stage/init"
chmod 755 "$stage/init"

# pack FILES ORDER: the module files, decompressed, named in ORDER.
pack ()
{
    : >"$stage/modules/$2"
    for f in $1; do
        name=$(basename "$f")
        case $name in
            *.ko) cp "$f" "$stage/modules/$name" ;;
            *.ko.xz) xz -dc "$f" >"$stage/modules/${name%.xz}" ;;
            *.ko.zst) zstd -qdc "$f" >"$stage/modules/${name%.zst}" ;;
            *.ko.gz) gzip -dc "$f" >"$stage/modules/${name%.gz}" ;;
        esac
        echo "${name%.ko*}" >>"$stage/modules/$2"
    done
}
pack "$basefiles" order
pack "$iofiles" order.io
echo "$kver" >"$stage/modules/kver"

(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) \
    | gzip -6 >"$out.tmp"
mv -f "$out.tmp" "$out"
echo "$stamp" >"$out.stamp"
echo "$prog: built $out for kernel $kver" >&2
