#!/bin/sh
# Install the Debian packages slurm-pin needs (the same names on Debian 12
# bookworm, 13 trixie and unstable sid) to build and to run all of
# its tests (unit, local Slurm, fuzz harnesses, qemu guest).  Idempotent:
# does nothing when everything is already installed.  Needs root.
# The fuzz harnesses (t/fuzz/run.sh) need clang and its libFuzzer and
# sanitizer runtimes, libclang-rt-dev (only recommended by clang, and
# recommends are not installed here); llvm brings llvm-symbolizer, which
# names functions and lines in their crash reports.
# slurm-pin plot draws with PLplot: libplplot-dev, and plplot-driver-cairo
# for PNG (SVG comes with the library); its test decodes the images with
# python3-pil.
# pin.so makes each profile root's and lets its job's user read it through
# a POSIX ACL: libacl1-dev.
# t/t4110-eff-vs-seff.t runs SchedMD's seff, which needs Slurm's Perl API
# (libslurm-perl, libslurmdb-perl); the script itself comes from the
# Debian source package (contrib/get-seff.sh, run at the end).
# t/t9100-rpm-spec.t builds contrib/slurm-pin.spec with rpmbuild and reads
# the RPMs (rpm, rpm2cpio, cpio).
set -eu

PACKAGES="
  build-essential autoconf automake libtool pkg-config
  libhwloc-dev libhwloc-plugins hwloc libjson-c-dev libcgroup-dev check
  libplplot-dev plplot-driver-cairo python3-pil
  libslurm-dev slurm-wlm slurmctld slurmd slurm-client munge
  libslurm-perl libslurmdb-perl
  slurmdbd mariadb-server mariadb-client zlib1g-dev
  libacl1-dev
  sharness python3
  clang libclang-rt-dev llvm
  qemu-system-x86 linux-image-amd64 busybox-static cpio kmod
  iproute2 procps util-linux
  strace
  rpm rpm2cpio
"

missing=""
for p in $PACKAGES; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "ok installed" \
        || missing="$missing $p"
done
here=$(dirname "$0")
# seff: only where the archive has the source of the installed Slurm
# (t4110 checks seff's documented format where it has not)
get_seff () {
    "$here/get-seff.sh" ||
        echo "install-deps: no seff here; t4110 checks seff's format instead" >&2
}
[ -z "$missing" ] && { get_seff; exit 0; }

if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: need root to install:$missing" >&2
    exit 1
fi
echo "install-deps: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
get_seff
