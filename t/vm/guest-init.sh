#!/bin/sh
# t/vm/guest-init.sh - /init (PID 1) of the qemu test bed's initramfs; runs
# under busybox sh inside the guest.  Built into the initramfs by
# mkinitramfs.sh; t/vm/run-guest.sh boots it.
#
# It loads the 9p/virtio/overlay modules, mounts the host's root (9p tag
# "hostroot", read-only) with a tmpfs overlay on top as the new root, mounts
# proc, sys, dev, a pure cgroup v2 hierarchy and a fresh /run in it, mounts
# the results share (9p tag "pinshare", read-write) at /share, sets up lo
# (127.0.0.1 and 127.0.0.2) and the host name, then runs the script named
# on the kernel command line inside the new root (chroot), with its stdout
# and stderr going to /share/out/{stdout,stderr} and to the console.  When it
# ends, its exit status goes to /share/out/status and the guest powers off.
# PID 1 stays outside the chroot, so it also reaps orphaned daemons.
#
# Kernel command line:
#   pin.script=PATH    script to run, a path inside the new root, or "shell"
#                      for an interactive shell on the console
#   pin.timeout=SEC    guest watchdog: kill the script after SEC seconds
#                      (default 600) and record a timeout
#   pin.hostname=NAME  host name of the guest (default node1)
#   pin.io=1           also load the drivers of the devices run-guest.sh
#                      --io-numa adds (/modules/order.io)

PATH=/bin
export PATH

mount -t devtmpfs devtmpfs /dev 2>/dev/null
exec </dev/console >/dev/console 2>&1

say ()
{
    echo "pin-init: $*"
}

halt_guest ()
{
    sync
    poweroff -f
    echo o >/proc/sysrq-trigger
    sleep 10
}

# A failure before the script runs: say why (the host shows the console
# log when there is no status file) and stop the guest.
fail ()
{
    say "FATAL: $*"
    halt_guest
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys

script=""
timeout=600
hostname=node1
io=0
# shellcheck disable=SC2013  # the command line is words
for arg in $(cat /proc/cmdline); do
    case $arg in
        pin.script=*) script=${arg#pin.script=} ;;
        pin.timeout=*) timeout=${arg#pin.timeout=} ;;
        pin.hostname=*) hostname=${arg#pin.hostname=} ;;
        pin.io=*) io=${arg#pin.io=} ;;
    esac
done
test -n "$script" || fail "no pin.script= on the kernel command line"
case $timeout in
    ''|*[!0-9]*) fail "pin.timeout=$timeout: not a number of seconds" ;;
esac

orders=/modules/order
test "$io" = 1 && orders="$orders /modules/order.io"
# shellcheck disable=SC2013,SC2086  # one module name per line
for m in $(cat $orders); do
    insmod "/modules/$m.ko" || fail "insmod $m failed (kernel $(uname -r), modules for $(cat /modules/kver))"
done

opts9p=trans=virtio,version=9p2000.L,msize=262144
mkdir -p /mnt/host /mnt/rw /newroot
mount -t 9p -o "$opts9p,ro,cache=loose" hostroot /mnt/host \
    || fail "cannot mount the host root (9p tag hostroot)"
mount -t tmpfs -o mode=0755 tmpfs /mnt/rw || fail "cannot mount tmpfs"
mkdir -p /mnt/rw/upper /mnt/rw/work
mount -t overlay -o lowerdir=/mnt/host,upperdir=/mnt/rw/upper,workdir=/mnt/rw/work \
    overlay /newroot || fail "cannot mount the overlay on the host root"

R=/newroot
mount -t proc proc $R/proc || fail "cannot mount $R/proc"
mount -t sysfs sysfs $R/sys || fail "cannot mount $R/sys"
mount -t cgroup2 cgroup2 $R/sys/fs/cgroup || fail "cannot mount cgroup2"
mount -t devtmpfs devtmpfs $R/dev || fail "cannot mount $R/dev"
mkdir -p $R/dev/pts $R/dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts $R/dev/pts
mount -t tmpfs -o mode=1777 tmpfs $R/dev/shm
# The host's /run (pid files, sockets of its daemons) means nothing here.
mount -t tmpfs -o mode=0755 tmpfs $R/run || fail "cannot mount $R/run"
mkdir -p $R/run/lock
mkdir -p $R/share
mount -t 9p -o "$opts9p,rw" pinshare $R/share \
    || fail "cannot mount the results share (9p tag pinshare)"
mkdir -p $R/share/out || fail "cannot write to the results share"

# Loopback only (-nic none; the NIC of --io-numa stays down, without an
# address, so that names resolve as without it).  glibc's getaddrinfo(AI_ADDRCONFIG) refuses
# every name when 127.0.0.1 is the only address: add 127.0.0.2.
ip link set lo up
ip addr show dev lo | grep -q 'inet 127.0.0.1/' || ip addr add 127.0.0.1/8 dev lo
ip addr add 127.0.0.2/8 dev lo || fail "cannot add 127.0.0.2 to lo"
hostname "$hostname"
echo "$hostname" >$R/etc/hostname
printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s\n' "$hostname" >$R/etc/hosts

out=$R/share/out
cut -d' ' -f1 /proc/uptime >$out/uptime.start

guest_env="HOME=/root TERM=${TERM:-linux} LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
if test "$script" = shell; then
    say "interactive shell; leave it with 'exit' to power off"
    # shellcheck disable=SC2086
    setsid cttyhack chroot $R /usr/bin/env -i $guest_env \
        /bin/bash --rcfile /share/run/env -i
    echo $? >$out/status
    halt_guest
fi

test -x "$R$script" || fail "pin.script=$script: no such executable in the guest"
mkfifo /tmp/stdout /tmp/stderr
tee $out/stdout </tmp/stdout &
tee_out=$!
tee $out/stderr </tmp/stderr >&2 &
tee_err=$!

# The script runs in a session of its own, so the watchdog can kill it with
# all the children that stayed in its process group.
# shellcheck disable=SC2086
setsid chroot $R /usr/bin/env -i $guest_env "$script" >/tmp/stdout 2>/tmp/stderr &
child=$!
(
    sleep "$timeout"
    say "guest watchdog: $script still running after ${timeout}s, killing it"
    echo "$timeout" >$out/timeout
    kill -TERM -- "-$child" "$child" 2>/dev/null
    sleep 5
    kill -KILL -- "-$child" "$child" 2>/dev/null
) &
watchdog=$!

# While PID 1 waits here, ash reaps every child, orphaned daemons included.
wait $child
status=$?
kill $watchdog 2>/dev/null
cut -d' ' -f1 /proc/uptime >$out/uptime.end

# A daemon that kept the script's stdout open would hold tee forever.
(sleep 3; kill $tee_out $tee_err 2>/dev/null) &
reaper=$!
wait $tee_out $tee_err
kill $reaper 2>/dev/null
echo $status >$out/status
say "$script exited with status $status"
halt_guest
