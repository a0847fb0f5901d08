#!/bin/sh

test_description='qemu test bed scripts, without booting a guest

Checks what t/vm/ does before and after a boot: that run-guest.sh and
run-tests.sh fail loudly (Bail out!, non-zero) when qemu, the kernel or
their arguments are wrong, that mkinitramfs.sh packs the modules in order
and caches its result, and that guest-run.sh merges the TAP of several
tests into one plan and turns every kind of failure into a "not ok".
Booting is for t/vm/run-tests.sh (doc/vm.md).
'

. "$(dirname "$0")/sharness.sh"

vm=$PIN_SRCDIR/t/vm

if ls /boot/vmlinuz-* >/dev/null 2>&1; then
    test_set_prereq KERNEL
fi
if command -v cpio >/dev/null 2>&1; then
    test_set_prereq CPIO
fi

# bails CMD...: CMD exits non-zero and its first line of output is a TAP
# "Bail out!" line (kept in bail.out for more checks).
bails () {
    test_must_fail "$@" >bail.out 2>bail.err &&
    head -n 1 bail.out | grep "^Bail out! " >/dev/null ||
    { echo "stdout was:"; cat bail.out; echo "stderr was:"; cat bail.err; false; }
}

echo "#!/bin/sh" >script.sh

# --- run-guest.sh refuses to pass without a guest ---------------------

test_expect_success 'no qemu: Bail out naming the package' '
    PIN_VM_QEMU=/nonexistent/qemu-system-x86_64 bails "$vm/run-guest.sh" script.sh &&
    grep -F "qemu-system-x86" bail.out
'

test_expect_success 'no kernel: Bail out naming the bad PIN_VM_KERNEL' '
    PIN_VM_KERNEL=/nonexistent/vmlinuz bails "$vm/run-guest.sh" script.sh &&
    grep -F "PIN_VM_KERNEL=/nonexistent/vmlinuz" bail.out
'

test_expect_success 'no such script: Bail out naming it' '
    bails "$vm/run-guest.sh" ./no-such-script.sh &&
    grep -F "no-such-script.sh" bail.out
'

test_expect_success '--timeout must be a number of seconds' '
    bails "$vm/run-guest.sh" --timeout 10m script.sh &&
    grep -F -- "--timeout 10m" bail.out
'

test_expect_success '--mem must be at least 512 MB' '
    bails "$vm/run-guest.sh" --mem 100 script.sh &&
    grep -F -- "--mem 100" bail.out
'

test_expect_success '--numa must split the CPUs evenly' '
    bails "$vm/run-guest.sh" --numa 3 script.sh &&
    grep -F -- "--numa 3" bail.out
'

test_expect_success '--io-numa must name one of the guest'"'"'s NUMA nodes' '
    bails "$vm/run-guest.sh" --io-numa 2 script.sh &&
    grep -F -- "--io-numa 2" bail.out &&
    bails "$vm/run-guest.sh" --io-numa one script.sh &&
    grep -F -- "--io-numa one" bail.out
'

test_expect_success 'unknown option: Bail out listing the known ones' '
    bails "$vm/run-guest.sh" --frobnicate script.sh &&
    grep -F -- "--frobnicate" bail.out &&
    grep -F -- "--timeout" bail.out
'

test_expect_success 'a build directory the guest cannot see is refused' '
    mkdir -p /dev/shm/pin-t9000 &&
    test_when_finished "rmdir /dev/shm/pin-t9000" &&
    bails "$vm/run-guest.sh" --builddir /dev/shm/pin-t9000 script.sh &&
    grep -F -- "--builddir /dev/shm/pin-t9000" bail.out
'

test_expect_success 'run-tests.sh: a missing test file is a Bail out' '
    bails "$vm/run-tests.sh" ./no-such-test.sh &&
    grep -F "no-such-test.sh" bail.out
'

# Without qemu each boot bails, and the next one still runs: the plain
# guest's boot first, then one per other set of guest options.
test_expect_success 'run-tests.sh: one boot per set of guest options, the plain one first' '
    printf "#!/bin/sh\n# vm-guest-options: --io-numa 1\n" >tio.sh &&
    printf "#!/bin/sh\n# vm-guest-options: none\n# vm-guest-options: --io-numa 1\n" >tboth.sh &&
    printf "#!/bin/sh\n" >tplain.sh &&
    PIN_VM_QEMU=/nonexistent/qemu test_must_fail "$vm/run-tests.sh" tio.sh tboth.sh tplain.sh >tier.out 2>&1 &&
    sed -n "s/^# vm tier: \(boot [0-9]*, .*\)/\1/p" tier.out >boots &&
    cat >expect <<-EOF &&
	boot 1, guest options: none, 2 test file(s)
	boot 2, guest options: --io-numa 1, 2 test file(s)
	EOF
    test_cmp expect boots &&
    test "$(grep -c "^Bail out! " tier.out)" = 2
'

# --- a qemu that aborts on its own assertion at boot ------------------
# A stand-in for qemu (the real one cannot be made to hit its TCG bug on
# demand): it counts its runs and, in mode assert, aborts as qemu did in
# CI (an assertion message, SIGABRT) before any guest script could start.
cat >fake-qemu <<-\FAKE
	#!/bin/sh
	echo run >>"$FAKE_QEMU_RUNS"
	case $FAKE_QEMU_MODE in
	assert)
	    echo "qemu-system-x86_64: system/physmem.c:2671: iotlb_to_section: Assertion failed." >&2
	    kill -ABRT $$ ;;
	*) echo "qemu-system-x86_64: cannot set up guest memory" >&2; exit 1 ;;
	esac
FAKE
chmod +x fake-qemu

test_expect_success KERNEL,CPIO 'qemu aborting on its assertion before the guest starts: booted once more, then a Bail out' '
    FAKE_QEMU_RUNS=$PWD/runs.assert FAKE_QEMU_MODE=assert PIN_VM_QEMU=$PWD/fake-qemu \
        PIN_VM_CACHE=$PWD/cache test_must_fail "$vm/run-guest.sh" --share share1 script.sh >bail.out 2>bail.err &&
    test "$(wc -l <runs.assert)" = 2 &&
    grep "^# vm: qemu aborted (exit status 134) before the guest script started: .*Assertion.*booting again, once" bail.out &&
    grep "Assertion" share1/qemu.log.1 &&
    grep "^Bail out! .*no exit status" bail.out
'

test_expect_success KERNEL,CPIO 'qemu failing otherwise: no second boot' '
    FAKE_QEMU_RUNS=$PWD/runs.other FAKE_QEMU_MODE=other PIN_VM_QEMU=$PWD/fake-qemu \
        PIN_VM_CACHE=$PWD/cache test_must_fail "$vm/run-guest.sh" --share share2 script.sh >bail.out 2>bail.err &&
    test "$(wc -l <runs.other)" = 1 &&
    ! grep "booting again" bail.out bail.err &&
    ! test -e share2/qemu.log.1 &&
    grep "^Bail out! .*no exit status (qemu exit status 1;" bail.out
'

# --- mkinitramfs.sh ---------------------------------------------------

test_expect_success KERNEL,CPIO 'mkinitramfs.sh packs init, busybox and the modules' '
    "$vm/mkinitramfs.sh" initrd.gz 2>build.err &&
    gzip -dc initrd.gz | cpio -t --quiet >list &&
    grep -x "init" list &&
    grep -x "bin/busybox" list &&
    grep -x "bin/mount" list &&
    gzip -dc initrd.gz | cpio -i --quiet --to-stdout modules/order >order &&
    gzip -dc initrd.gz | cpio -i --quiet --to-stdout modules/order.io >order.io &&
    for m in $(cat order order.io); do
        grep -x "modules/$m.ko" list || return 1
    done
'

# The modules the guest needs (virtio's PCI transport, 9p over virtio,
# overlay; then, in order.io, the drivers of --io-numa's GPU and NIC,
# whose files may spell _ as -: virtio-gpu.ko) and what they depend on,
# each after its dependencies, order.io after order (modinfo
# of the packed module files; what a kernel builds in is no module and
# no dependency: Debian 13's 6.12 builds virtio_pci in, Debian 12's 6.1
# has it as a module).  The order itself differs between kernels.
test_expect_success KERNEL,CPIO 'the modules load in dependency order' '
    rm -rf unpacked && mkdir unpacked &&
    (cd unpacked && gzip -dc ../initrd.gz | cpio -i -d --quiet) &&
    kver=$(. "$vm/vm-lib.sh" && vm_find_kernel && echo "$VM_KVER") &&
    for m in virtio_pci 9pnet_virtio 9p overlay; do
        grep -x "$m" order ||
        grep "/$m\.ko\$" "/lib/modules/$kver/modules.builtin" ||
        { echo "$m is neither packed nor built into $kver"; return 1; }
    done &&
    for m in virtio_gpu virtio_net; do
        d=$(echo $m | tr _ -) &&
        grep -x -e "$m" -e "$d" order.io ||
        grep -e "/$m\.ko\$" -e "/$d\.ko\$" "/lib/modules/$kver/modules.builtin" ||
        { echo "$m is neither packed nor built into $kver"; return 1; }
    done &&
    cat order order.io >all &&
    test "$(sort all | uniq -d)" = "" &&
    i=0 &&
    for m in $(cat all); do
        i=$((i + 1)) &&
        for d in $(modinfo -F depends "unpacked/modules/$m.ko" | tr , " "); do
            j=$(grep -n -x -e "$d" -e "$(echo "$d" | tr _ -)" all | cut -d: -f1) &&
            test -n "$j" && test "$j" -lt "$i" ||
            { echo "$m (line $i) needs $d (line ${j:-none})"; return 1; }
        done || return 1
    done
'

test_expect_success KERNEL,CPIO 'an unchanged initramfs is not rebuilt' '
    cp -p initrd.gz before.gz &&
    "$vm/mkinitramfs.sh" initrd.gz 2>rebuild.err &&
    test_must_be_empty rebuild.err &&
    cmp before.gz initrd.gz &&
    test ! initrd.gz -nt before.gz
'

test_expect_success 'mkinitramfs.sh: an unknown kernel version is refused' '
    test_must_fail "$vm/mkinitramfs.sh" --kver 0.0-none out.gz 2>err &&
    grep -F "0.0-none" err &&
    test ! -e out.gz
'

# --- guest-run.sh: one TAP stream out of many tests --------------------

# A guest-run.sh that runs on the host: no Slurm test is involved.
guest_run () {
    mkdir -p out &&
    PIN_VM_OUT=$PWD/out PIN_VM_TEST_TIMEOUT=3 "$vm/guest-run.sh" "$@"
}

test_expect_success 'fake tests for guest-run.sh' '
    mkdir tests &&
    printf "#!/bin/sh\necho 1..2\necho \"ok 1 - a\"\necho \"ok 2 - b\"\n" >tests/tpass.sh &&
    printf "#!/bin/sh\necho 1..2\necho \"ok 1 - a\"\necho \"not ok 2 - b\"\nexit 1\n" >tests/tfail.sh &&
    printf "#!/bin/sh\necho 1..3\necho \"ok 1 - a\"\n" >tests/tshort.sh &&
    printf "#!/bin/sh\necho 1..1\necho \"ok 1 - a\"\nexit 3\n" >tests/texit.sh &&
    printf "#!/bin/sh\necho \"1..0 # SKIP no widget\"\n" >tests/tskip.sh &&
    printf "#!/bin/sh\necho 1..1\nsleep 60\necho \"ok 1 - late\"\n" >tests/thang.sh &&
    printf "#!/bin/sh\n# vm-slurm-modes: bogus\necho 1..0\n" >tests/tmode.sh &&
    chmod +x tests/*.sh
'

test_expect_success 'passing tests merge into one plan and exit 0' '
    guest_run tests/tpass.sh tests/tpass.sh >merged &&
    grep -v "^#" merged >results &&
    cat >expect <<-EOF &&
	ok 1 - a
	ok 2 - b
	ok 3 - a
	ok 4 - b
	1..4
	EOF
    test_cmp expect results
'

test_expect_success 'every kind of failure becomes a not ok, exit non-zero' '
    test_must_fail guest_run tests/tpass.sh tests/tfail.sh tests/tshort.sh \
        tests/texit.sh tests/tskip.sh tests/thang.sh tests/tmode.sh >merged &&
    grep -v "^#" merged >results &&
    cat >expect <<-EOF &&
	not ok 1 - tmode: vm-slurm-modes: '"'"'bogus'"'"' unknown; known: cgroup, affinity
	ok 2 - a
	ok 3 - b
	ok 4 - a
	not ok 5 - b
	ok 6 - a
	not ok 7 - tshort: planned 3 tests but ran 1 (exit status 0)
	ok 8 - a
	not ok 9 - texit: exited with status 3
	ok 10 - tskip # SKIP no widget
	not ok 11 - thang: killed after 3s (PIN_VM_TEST_TIMEOUT)
	1..11
	EOF
    test_cmp expect results
'

test_expect_success 'guest-run.sh records the time of each test' '
    grep "^test tpass	" out/timings &&
    grep "^test thang	" out/timings
'

test_done
