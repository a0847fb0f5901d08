#!/bin/bash
# Build slurm-pin's four Debian packages from this checkout, check them
# with lintian, and optionally install them (doc/packaging.md, "Debian
# packages").
#
#   contrib/build-debs.sh [-o OUTDIR] [-j JOBS] [--no-deps] [--install]
#
# Run as root from anywhere in a checkout on Debian 12, 13 or unstable.
# Stages, each printed with its time:
#   deps     apt-get update, then dpkg-dev, debhelper and lintian and the
#            Build-Depends of debian/control (apt-get build-dep); skipped
#            with --no-deps (then root is not needed to build)
#   copy     the checkout's tracked files (git ls-files; without git, or
#            in a tarball, the tree minus build*/ and .git) into
#            OUTDIR/slurm-pin-VERSION, so that no build directory or
#            stray file of the checkout gets into the packages
#   build    dpkg-buildpackage -us -uc -b -jJOBS there: OUTDIR gets the
#            .debs, .buildinfo and .changes
#   lintian  lintian on the .changes; its tags are printed, and any error
#            or warning fails (overrides: debian/*.lintian-overrides)
#   install  with --install: apt-get install -y the four packages (not
#            their -dbgsym), then the installed versions
# OUTDIR defaults to build/deb at the top of the checkout, JOBS to 2.  The
# stages' output goes to OUTDIR/logs/STAGE.log, shown (its end) when the
# stage fails.  DEB_BUILD_OPTIONS is obeyed (nocheck skips the unit tests).
# The exit status is 0 when every stage passed, 1 otherwise, 2 on bad
# usage.
set -euo pipefail

out='' jobs=2 deps=1 install=0
usage () {
    echo "usage: contrib/build-debs.sh [-o OUTDIR] [-j JOBS] [--no-deps] [--install]" >&2
    exit 2
}
while (($#)); do
    case $1 in
        -o) (($# >= 2)) || usage; out=$2; shift 2 ;;
        -j) (($# >= 2)) || usage; jobs=$2; shift 2 ;;
        -j?*) jobs=${1#-j}; shift ;;
        --no-deps) deps=0; shift ;;
        --install) install=1; shift ;;
        -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
        *) usage ;;
    esac
done
[[ $jobs =~ ^[1-9][0-9]*$ ]] || {
    echo "build-debs: -j '$jobs': not a number of jobs (1 or more)" >&2
    exit 2
}

top=$(cd "$(dirname "$0")/.." && pwd)
[[ -f $top/debian/control ]] || {
    echo "build-debs: $top/debian/control not found: not a slurm-pin source tree" >&2
    exit 1
}
if ((deps || install)) && (($(id -u) != 0)); then
    echo "build-debs: must run as root to install packages (or give --no-deps)" >&2
    exit 1
fi
out=${out:-$top/build/deb}
mkdir -p "$out/logs"
out=$(cd "$out" && pwd)
logs=$out/logs

say () {
    echo "build-debs: $*"
}
t_stage=0 stage_name=''
stage () {
    stage_name=$1
    t_stage=$SECONDS
    say "== $1"
}
stage_done () {
    say "   $stage_name done in $((SECONDS - t_stage)) s"
}
# run LOG CMD...: CMD with its output in $logs/LOG; on failure its end
run () {
    local log=$logs/$1
    shift
    if ! "$@" >>"$log" 2>&1; then
        say "$stage_name failed: $*; the end of $log:"
        tail -40 "$log" | sed 's/^/  | /'
        exit 1
    fi
}

export DEBIAN_FRONTEND=noninteractive

if ((deps)); then
    stage deps
    : >"$logs/deps.log"
    run deps.log apt-get update
    run deps.log apt-get install -y --no-install-recommends \
        dpkg-dev debhelper lintian
    run deps.log apt-get build-dep -y --no-install-recommends "$top"
    stage_done
fi

stage copy
version=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
src=$out/slurm-pin-$version
rm -rf "$src"
rm -f "$out"/slurm-pin*_"$version"_*.deb "$out"/slurm-pin_"$version"_*.changes \
    "$out"/slurm-pin_"$version"_*.buildinfo
mkdir -p "$src"
if command -v git >/dev/null && git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
    # tracked files as they are in the work tree (uncommitted changes
    # included; a tracked file deleted from the tree is an error)
    (cd "$top" && git ls-files -z | tar --null -T - -cf -) | tar -xf - -C "$src"
else
    # a tarball or a copy without git: all but build directories
    (cd "$top" && tar --exclude='./build*' --exclude=./.git \
        --exclude=./autom4te.cache -cf - .) | tar -xf - -C "$src"
fi
say "   $(find "$src" -type f | wc -l) files in $src"
stage_done

stage build
: >"$logs/build.log"
(cd "$src" && run build.log dpkg-buildpackage -us -uc -b -j"$jobs")
changes=$(ls "$out"/slurm-pin_"$version"_*.changes)
for deb in "$out"/*_"$version"_*.deb; do
    say "   $(basename "$deb")"
done
stage_done

stage lintian
: >"$logs/lintian.log"
set +e
lintian --fail-on error,warning "$changes" >"$logs/lintian.log" 2>&1
rc=$?
set -e
# (lintian's note that it runs as root is not a finding)
grep -v '^running with root privileges' "$logs/lintian.log" | sed 's/^/  | /' || :
if ((rc)); then
    say "lintian failed (exit status $rc): errors or warnings above"
    exit 1
fi
stage_done

if ((install)); then
    stage install
    : >"$logs/install.log"
    run install.log apt-get install -y "$out"/slurm-pin_"$version"_*.deb \
        "$out"/slurm-pin-plot_"$version"_*.deb \
        "$out"/slurm-pin-spank_"$version"_*.deb \
        "$out"/slurm-pin-jobsubmit_"$version"_*.deb
    dpkg-query -W -f='build-debs:    ${Package} ${Version} ${db:Status-Abbrev}\n' \
        slurm-pin slurm-pin-plot slurm-pin-spank slurm-pin-jobsubmit
    stage_done
fi
say "packages in $out"
