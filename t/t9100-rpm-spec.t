#!/bin/sh

test_description='contrib/slurm-pin.spec: rpmbuild -ta on the tarball, and what it made

The tarball is made from this build (make distdir into a directory of
this test, then tar: nothing is written into the build tree) and
"rpmbuild -ta --nodeps --without check" builds it as an RPM site would,
with the rpm package of Debian, against the Debian Slurm headers
installed here.  The produced RPMs are then read with rpm -qlp, -qp
--requires, --scripts and rpm2cpio: the package split (the command
without PLplot; the plugins in %{_libdir}/slurm, no .la), the Slurm
pins (the SPANK plugin the major.minor of the headers, the job_submit
plugin their exact version), the config files (noreplace), the modes of
the tmpfiles.d directories and the systemd scriptlets (the timer is never
enabled by the package).

Not checked here: the BuildRequires (--nodeps: they are RHEL package
names, not met on Debian), and the packages are not installed.  Not
tested on a RHEL host (doc/packaging.md).  The unit tests of the spec'"'"'s
%check run with make check already; --without check skips them here.
'

. "$(dirname "$0")/sharness.sh"

pin_prereq_cmd RPMBUILD rpmbuild
pin_prereq_cmd RPM2CPIO rpm2cpio
pin_prereq_cmd CPIO cpio

# It compiles the whole project (make -j): not beside the files that
# measure CPU time (t/sharness.d/20-cpus.sh).
cpu_heavy_exclusive || exit 1

VERSION=$(sed -n 's/^PACKAGE_VERSION = //p' "$PIN_BUILDDIR/Makefile")
# rpmbuild and automake want a path without spaces: the trash directory
# has one.
WORK=$(mktemp -d /tmp/pin-t9100.XXXXXX) || exit 1
cleanup "rm -rf '$WORK'"
TOP=$WORK/rpmtop
# make distdir's distdir must be relative to the build directory (each
# subdirectory's make prepends ../ to it).
REL=$(realpath --relative-to="$PIN_BUILDDIR" "$WORK")
RPMS=$TOP/RPMS/$(rpm --eval '%{_arch}' 2>/dev/null)
LIBDIR=$(rpm --eval '%{_libdir}' 2>/dev/null)
ISA=$(rpm --eval '%{?_isa}' 2>/dev/null)
# Nothing of the make that runs this test reaches the makes it runs
# (make check TESTS=t9100-rpm-spec.t would ship only this test, and the
# jobserver of make -j is not open in rpmbuild's scriptlets).
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
build_make () {
    make -s -C "$PIN_BUILDDIR" "$@"
}
rpmq () {
    rpm -qp --nosignature "$@" 2>/dev/null
}

test_expect_success 'the build knows its version' '
    test -n "$VERSION"
'

test_expect_success RPMBUILD 'make distdir: the spec ships with the version filled in' '
    build_make distdir distdir="$REL/slurm-pin-$VERSION" \
        >distdir.out 2>&1 &&
    spec="$WORK/slurm-pin-$VERSION/contrib/slurm-pin.spec" &&
    test -f "$spec" &&
    ! grep -n "@[A-Z_]*@" "$spec" &&
    grep "^Version:" "$spec" >version &&
    echo "Version:        $VERSION" >expect &&
    test_cmp expect version &&
    (cd "$WORK" && find "slurm-pin-$VERSION" -name "*.spec") >specs &&
    echo "slurm-pin-$VERSION/contrib/slurm-pin.spec" >expect &&
    test_cmp expect specs
'

test_expect_success RPMBUILD 'make dist fails when the spec has another version' '
    test_when_finished "rm -rf \"$WORK/other\" \"$WORK/other.tracked\" \"$WORK/other.shipped\"" &&
    test_must_fail build_make distdir distdir="$REL/other" \
        VERSION=0.0.0-other >other.out 2>&1 &&
    grep "contrib/slurm-pin.spec: Version .$VERSION., but this is slurm-pin 0.0.0-other" other.out
'

test_expect_success RPMBUILD 'rpmbuild -ta --nodeps builds the four packages' '
    (cd "$WORK" && tar -czf "slurm-pin-$VERSION.tar.gz" "slurm-pin-$VERSION") &&
    rpmbuild -ta --nodeps --without check \
        --define "_topdir $TOP" --define "_tmppath $WORK/tmp" \
        "$WORK/slurm-pin-$VERSION.tar.gz" >rpmbuild.out 2>&1 || {
        tail -40 rpmbuild.out; false; } &&
    # rpm >= 4.20 (Debian 13) also writes -debuginfo (and -debugsource)
    # packages, as RHEL does: not ours to check
    (cd "$RPMS" && ls | grep -Ev -- "-debug(info|source)-") >rpms &&
    cat >expect <<-EOF &&
	slurm-pin-$VERSION-1.$(rpm --eval %_arch).rpm
	slurm-pin-jobsubmit-$VERSION-1.$(rpm --eval %_arch).rpm
	slurm-pin-plot-$VERSION-1.$(rpm --eval %_arch).rpm
	slurm-pin-spank-$VERSION-1.$(rpm --eval %_arch).rpm
	EOF
    test_cmp expect rpms &&
    test_set_prereq RPMS
'

P=$RPMS/slurm-pin-$VERSION-1.$(rpm --eval %_arch 2>/dev/null).rpm
PLOT=$RPMS/slurm-pin-plot-$VERSION-1.$(rpm --eval %_arch 2>/dev/null).rpm
SPANK=$RPMS/slurm-pin-spank-$VERSION-1.$(rpm --eval %_arch 2>/dev/null).rpm
JS=$RPMS/slurm-pin-jobsubmit-$VERSION-1.$(rpm --eval %_arch 2>/dev/null).rpm

test_expect_success RPMS 'slurm-pin: the command, pin.conf, the units, tmpfiles.d' '
    rpmq -l "$P" >files &&
    for f in /usr/bin/slurm-pin /etc/slurm/pin.conf \
             /usr/lib/systemd/system/slurm-pin-deliver.service \
             /usr/lib/systemd/system/slurm-pin-deliver.timer \
             /usr/lib/tmpfiles.d/slurm-pin.conf; do
        grep -x "$f" files || { echo "missing: $f"; return 1; }
    done &&
    grep "^/usr/share/man/man1/slurm-pin.1" files &&
    grep "^/usr/share/man/man5/pin.conf.5" files &&
    ! grep -e slurm-pin-plot -e "\.so$" -e "\.la$" -e /slurm/plugstack files
'

test_expect_success RPMS 'slurm-pin-plot: slurm-pin-plot and its man page' '
    rpmq -l "$PLOT" | grep -v "^/usr/lib/.build-id" >files &&
    cat >expect <<-EOF &&
	/usr/bin/slurm-pin-plot
	/usr/share/man/man1/slurm-pin-plot.1
	EOF
    sed "s/\.gz$//" files >plain &&
    test_cmp expect plain
'

test_expect_success RPMS 'the plugins are in %{_libdir}/slurm, without .la' '
    rpmq -l "$SPANK" >spank &&
    grep -x "$LIBDIR/slurm/pin.so" spank &&
    grep -x /etc/slurm/plugstack.conf.d/50-slurm-pin.conf spank &&
    grep "^/usr/share/man/man8/slurm-pin-spank.8" spank &&
    rpmq -l "$JS" >js &&
    grep -x "$LIBDIR/slurm/job_submit_pin.so" js &&
    grep "^/usr/share/man/man8/job_submit_pin.8" js &&
    for r in "$P" "$PLOT" "$SPANK" "$JS"; do rpmq -l "$r"; done >all &&
    ! grep "\.la$" all &&
    ! grep "\.a$" all
'

test_expect_success RPMS,RPM2CPIO,CPIO 'the plugstack drop-in names the packaged pin.so, commented out' '
    mkdir spankroot &&
    (cd spankroot && rpm2cpio "$SPANK" | cpio -idm --quiet) &&
    grep -x "#required $LIBDIR/slurm/pin.so" \
        spankroot/etc/slurm/plugstack.conf.d/50-slurm-pin.conf &&
    ! grep "^[^#]" spankroot/etc/slurm/plugstack.conf.d/50-slurm-pin.conf
'

test_expect_success RPMS 'the config files are %config(noreplace)' '
    rpmq --qf "[%{FILEFLAGS:fflags} %{FILENAMES}\n]" "$P" "$SPANK" >flags &&
    grep -x "cn /etc/slurm/pin.conf" flags &&
    grep -x "cn /etc/slurm/plugstack.conf.d/50-slurm-pin.conf" flags &&
    rpmq -c "$JS" "$PLOT" >none &&
    test_must_be_empty none
'

test_expect_success RPMS 'the directories of tmpfiles.d, with its modes' '
    rpmq --qf "[%{FILEMODES:perms} %{FILEUSERNAME} %{FILENAMES}\n]" "$P" >modes &&
    grep -x "drwx------ root /run/slurm-pin" modes &&
    grep -x "drwxr-xr-x root /var/cache/slurm-pin" modes &&
    grep -x "drwxr-xr-x root /var/lib/slurm-pin" modes &&
    grep -x "drwx------ root /var/lib/slurm-pin/journal" modes &&
    grep -x "drwxr-xr-x root /var/lib/slurm-pin/profile" modes &&
    rpmq --qf "[%{FILEFLAGS:fflags} %{FILENAMES}\n]" "$P" >flags &&
    grep -x "g /run/slurm-pin" flags
'

test_expect_success RPMS 'slurm-pin needs no PLplot, cairo, Qt or GTK' '
    rpmq --requires "$P" >req &&
    grep "^libslurm\.so" req &&
    ! grep -i -e plplot -e cairo -e qt -e gtk -e "^slurm" req &&
    rpmq --requires "$PLOT" >req &&
    grep "^libplplot" req
'

# The Slurm release of the headers rpmbuild compiled against, asked from
# them by the C compiler (not by the spec'"'"'s own reading).
test_expect_success RPMS 'the Slurm version of the installed headers' '
    cat >v.c <<-\EOF &&
	#include <stdio.h>
	#include <slurm/slurm_version.h>
	int main (void)
	{
	    printf ("%d.%02d.%d\n", SLURM_VERSION_MAJOR (SLURM_VERSION_NUMBER),
	            SLURM_VERSION_MINOR (SLURM_VERSION_NUMBER),
	            SLURM_VERSION_MICRO (SLURM_VERSION_NUMBER));
	    return 0;
	}
	EOF
    ${CC:-cc} -o v v.c &&
    ./v >slurm-version &&
    test -s slurm-version
'

test_expect_success RPMS 'slurm-pin-jobsubmit requires the exact Slurm version' '
    v=$(cat slurm-version) &&
    rpmq --requires "$JS" >req &&
    grep -x "slurm$ISA = $v" req &&
    grep -x "slurm-pin$ISA = $VERSION-1" req
'

test_expect_success RPMS 'slurm-pin-spank requires the Slurm major.minor' '
    v=$(cat slurm-version) &&
    mm=${v%.*} && major=${mm%.*} && minor=${mm#*.} &&
    next=$(printf "%d.%02d" "$major" $((${minor#0} + 1))) &&
    rpmq --requires "$SPANK" >req &&
    grep "^slurm[( ]" req >slurm &&
    cat >expect <<-EOF &&
	slurm$ISA < $next
	slurm$ISA >= $mm
	EOF
    sort slurm >sorted &&
    test_cmp expect sorted &&
    grep -x "slurm-pin$ISA = $VERSION-1" req &&
    rpmq --requires "$PLOT" >req &&
    ! grep "^slurm[( ]" req
'

test_expect_success RPMS 'scriptlets: tmpfiles created, the units preset, never enabled' '
    rpmq --scripts "$P" >scripts &&
    sed -n "/^postinstall/,/^preuninstall/p" scripts >post &&
    grep "systemd-tmpfiles --create.*/usr/lib/tmpfiles.d/slurm-pin.conf" post &&
    grep -E "(preset|install-system-units) .*slurm-pin-deliver.timer" post &&
    sed -n "/^preuninstall/,/^postuninstall/p" scripts >preun &&
    grep -E "(disable|remove-system-units) .*slurm-pin-deliver.timer" preun &&
    sed -n "/^postuninstall/,\$p" scripts >postun &&
    grep "daemon-reload" postun &&
    ! grep -E "systemctl[^|;]* (enable|start)" scripts &&
    for r in "$PLOT" "$SPANK" "$JS"; do rpmq --scripts "$r"; done >others &&
    test_must_be_empty others
'

test_done
