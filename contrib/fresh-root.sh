#!/bin/bash
# Run a command of slurm-pin in a brand-new Debian root, as on a machine
# nothing was ever installed on by hand.
#
#   contrib/fresh-root.sh [--suite SUITE] [-k] [-r ROOT] [-b BASE] -- COMMAND [ARG...]
#
# SUITE is bookworm (Debian 12, Slurm 22.05; the default), trixie (Debian
# 13, Slurm 24.11) or sid (Debian unstable, Slurm 26.05).  Makes ROOT
# (default: a new directory under /var/tmp) with
# `debootstrap --variant=minbase SUITE`, writes the root's apt sources for
# that suite (its updates and security archives where it has them; for sid
# Check-Valid-Until is off, as the mirror's Release file may be past its
# date), clones the repository's
# committed HEAD into ROOT/work/<name> with ../shared beside it (when it
# exists), mounts /proc, /sys and /dev (recursively, so that the cgroup
# mounts and /dev/pts come along) and a tmpfs on /dev/shm, and runs
# COMMAND there as root from the clone (ROOT itself bind-mounted, so that
# "/" is a mount point there as on a machine), with an empty environment but
# HOME, PATH, TERM and CI.  So every package COMMAND needs must come from
# the project's own install step (contrib/install-deps.sh), as on a new
# machine.  Examples:
#
#   contrib/fresh-root.sh -- contrib/demo.sh        # try slurm-pin, leave nothing
#   contrib/fresh-root.sh -- contrib/test-all.sh    # what .ci/run does
#   contrib/fresh-root.sh -k -- bash                # look around, keep the root
#
# -b BASE keeps a pristine debootstrap in BASE (made on first use) and
# copies it for each run: two runs from one BASE each start from the same
# untouched minbase, without a second download.  -k keeps ROOT
# afterwards; otherwise every process left inside it is killed, the
# mounts are undone and ROOT is removed, also on failure or interrupt.
# The exit status is COMMAND's (1 if the root could not be made).
#
# Needs root, debootstrap (installed if missing) and Debian's archive:
# PIN_DEBIAN_MIRROR (default http://deb.debian.org/debian) and
# PIN_DEBIAN_SECURITY (default http://deb.debian.org/debian-security).
# Daemons that packages would start are kept
# from starting (policy-rc.d): tests start their own.
set -euo pipefail

keep=0 root='' base='' suite=bookworm
usage () {
    echo "usage: contrib/fresh-root.sh [--suite bookworm|trixie|sid] [-k] [-r ROOT] [-b BASE] -- COMMAND [ARG...]" >&2
    exit 2
}
while (($#)); do
    case $1 in
        --suite) (($# >= 2)) || usage; suite=$2; shift 2 ;;
        --suite=*) suite=${1#--suite=}; shift ;;
        -k) keep=1; shift ;;
        -r) (($# >= 2)) || usage; root=$2; shift 2 ;;
        -b) (($# >= 2)) || usage; base=$2; shift 2 ;;
        --) shift; break ;;
        *) usage ;;
    esac
done
(($#)) || usage
case $suite in
    bookworm | trixie | sid) ;;
    *)
        echo "fresh-root: --suite '$suite': not a supported Debian suite (bookworm, trixie or sid)" >&2
        exit 2
        ;;
esac
if (($(id -u) != 0)); then
    echo "fresh-root: must run as root (debootstrap, mount, chroot)" >&2
    exit 1
fi

top=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
name=$(basename "$top")
shared=$(cd "$top/.." && pwd)/shared
mirror=${PIN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
security=${PIN_DEBIAN_SECURITY:-http://deb.debian.org/debian-security}

say () {
    echo "fresh-root: $*" >&2
}

if ! command -v debootstrap >/dev/null; then
    say "installing debootstrap"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends debootstrap >/dev/null
fi

# The apt sources of a machine of $suite, in deb822 form, on stdout.
write_sources () {
    local key=/usr/share/keyrings/debian-archive-keyring.gpg
    if [[ $suite == sid ]]; then
        printf 'Types: deb\nURIs: %s\nSuites: sid\nComponents: main\nSigned-By: %s\nCheck-Valid-Until: no\n' \
            "$mirror" "$key"
        return
    fi
    printf 'Types: deb\nURIs: %s\nSuites: %s %s-updates\nComponents: main\nSigned-By: %s\n\n' \
        "$mirror" "$suite" "$suite" "$key"
    printf 'Types: deb\nURIs: %s\nSuites: %s-security\nComponents: main\nSigned-By: %s\n' \
        "$security" "$suite" "$key"
}

# debootstrap DIR: a minbase $suite in DIR, set up like a new machine.
make_minbase () {
    local dir=$1 t0=$SECONDS
    say "debootstrap --variant=minbase $suite into $dir"
    mkdir -p "$dir"
    if ! debootstrap --variant=minbase "$suite" "$dir" "$mirror" \
         >"$dir.debootstrap.log" 2>&1; then
        say "debootstrap failed; its log:"
        tail -20 "$dir.debootstrap.log" >&2
        return 1
    fi
    # the package sources of a machine of this suite (never this
    # machine's: they name its own release)
    rm -f "$dir/etc/apt/sources.list" "$dir"/etc/apt/sources.list.d/*
    mkdir -p "$dir/etc/apt/sources.list.d"
    write_sources >"$dir/etc/apt/sources.list.d/debian.sources"
    echo "$suite" >"$dir/.fresh-root-suite"
    cp /etc/resolv.conf "$dir/etc/" 2>/dev/null || :
    hostname >"$dir/etc/hostname"
    printf '127.0.0.1 localhost %s\n::1 localhost ip6-localhost\n' \
        "$(hostname)" >"$dir/etc/hosts"
    # packages must not start daemons in the root: they would outlive it
    printf '#!/bin/sh\nexit 101\n' >"$dir/usr/sbin/policy-rc.d"
    chmod 755 "$dir/usr/sbin/policy-rc.d"
    chmod 755 "$dir"   # "/" of the root: every user must traverse it
    say "minbase ready in $((SECONDS - t0)) s"
}

if [[ -z $root ]]; then
    root=$(mktemp -d /var/tmp/slurm-pin-root.XXXXXX)
fi
mounted=()
cleanup () {
    local i p pids=()
    # processes still running inside the root (a daemon a failed test
    # left) would keep its mounts busy
    for p in /proc/[0-9]*; do
        [[ $(readlink "$p/root" 2>/dev/null) == "$root" ]] \
            && pids+=("${p#/proc/}")
    done
    if ((${#pids[@]})); then
        say "killing ${#pids[@]} process(es) left in the root: ${pids[*]}"
        kill -KILL "${pids[@]}" 2>/dev/null || :
        sleep 1
    fi
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
        umount -R -l "${mounted[$i]}" 2>/dev/null || :
    done
    if ((keep)); then
        say "kept $root"
    else
        rm -rf --one-file-system "$root" "$root.debootstrap.log"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [[ -x $root/bin/bash ]]; then
    say "using the existing root $root"
elif [[ -n $base ]]; then
    if [[ -x $base/bin/bash && $(cat "$base/.fresh-root-suite" 2>/dev/null) != "$suite" ]]; then
        say "$base is not a $suite minbase"
        exit 1
    fi
    [[ -x $base/bin/bash ]] || make_minbase "$base"
    say "copying the pristine minbase $base"
    cp -a "$base/." "$root/"
    chmod 755 "$root"
else
    make_minbase "$root"
fi

# the root itself a mount point, as "/" is on a machine: unshare -m and
# other tools that change mount propagation refuse a plain directory
mount --bind "$root" "$root"
mounted+=("$root")
mount --bind /proc "$root/proc"
mounted+=("$root/proc")
for d in sys dev; do
    mount --rbind "/$d" "$root/$d"
    mount --make-rslave "$root/$d"
    mounted+=("$root/$d")
done
mkdir -p "$root/dev/shm"
mount -t tmpfs -o mode=1777 tmpfs "$root/dev/shm"
mounted+=("$root/dev/shm")

mkdir -p "$root/work"
rm -rf "${root:?}/work/$name" "$root/work/shared"
git clone -q "$top" "$root/work/$name"
if [[ -d $shared ]]; then
    cp -a "$shared" "$root/work/shared"
else
    say "no $shared beside the repository: tests that need it skip"
fi
say "running in $root/work/$name: $*"

set +e
chroot "$root" /usr/bin/env -i HOME=/root TERM="${TERM:-dumb}" \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 CI="${CI:-}" \
    /bin/bash -c 'cd "/work/$1" && shift && exec "$@"' fresh-root "$name" "$@"
rc=$?
set -e
say "exit status $rc"
exit $rc
