#!/bin/sh

test_description='accounting: a user filling the journal'"'"'s file system loses no record (issue 18)

The journal'"'"'s room is taken beforehand (fallocate, FALLOC_FL_KEEP_SIZE:
the current file up to JournalMaxSize, and an empty journal.spare for the
next one). On the real local Slurm, JournalDir is on a small tmpfs that
also holds a world-writable sticky directory; nobody fills the file
system through it, and the records of a job run after that are all in the
journal, and slurmd'"'"'s log says no record was lost.
'

. "$(dirname "$0")/sharness.sh"

slurm_require
pin_so_prereq
PY=/usr/bin/python3
test -x $PY && test_set_prereq PYTHON3
id nobody >/dev/null 2>&1 && test_set_prereq NOBODY

STATE=$(mktemp -d /tmp/pin-t4003.XXXXXX) || exit 1
cleanup "rm -rf '$STATE'"
# the tmpfs' mount point: reachable by nobody (STATE is mode 0700)
FS=$(mktemp -d /tmp/pin-t4003-fs.XXXXXX) || exit 1
chmod 755 "$FS"
cleanup "umount '$FS' 2>/dev/null; rmdir '$FS'"
BASE=slurm-pin-t4003-$$
CGROOT=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
test -n "$CGROOT" && cleanup "find '$CGROOT/$BASE' -depth -type d -exec rmdir {} + 2>/dev/null"
J=$FS/journal

test_expect_success PIN_SO,PYTHON3,NOBODY 'a small tmpfs with a sticky tmp dir; JournalDir on it' '
    mount -t tmpfs -o size=8m,mode=0755 pin-t4003 "$FS" &&
    mkdir -m 1777 "$FS/tmp" &&
    {
        echo "CgroupBase=$BASE"
        echo "StateDir=$STATE/state"
        echo "TopologyCache=$STATE/topology.xml"
        echo "JournalDir=$J"
        echo "JournalMaxSize=1M"
    } >pin.conf &&
    echo "required $PIN_SO conf=@PIN_CONF@" >plugstack.conf &&
    slurm_start --plugstack plugstack.conf --pin-conf pin.conf &&
    # on failure too (sharness runs cleanup only on success): after Slurm
    trap "_slurm_exit_code=\$?; _slurm_stop_all; umount \"$FS\" 2>/dev/null; rmdir \"$FS\"; (exit \$_slurm_exit_code); die" EXIT &&
    test_set_prereq FS
'

test_expect_success SLURM,PIN_SO,PYTHON3,FS 'a first job: the journal is there' '
    j=$(timeout 60 sbatch --parsable -o /dev/null --wrap "srun true") &&
    slurm_wait_job $j &&
    acct_wait_records "$J" kind=job job_id=$j -- state >rec &&
    echo COMPLETED >expect &&
    test_cmp expect rec
'

test_expect_success SLURM,PIN_SO,PYTHON3,FS 'nobody fills the file system; the next job loses no record' '
    test_must_fail runuser -u nobody -- dd if=/dev/zero of="$FS/tmp/fill" bs=64k 2>dd.err &&
    grep "No space left on device" dd.err &&
    test "$(df -P "$FS" | awk "NR == 2 { print \$4 }")" -eq 0 &&
    # 12 steps: more than the page or block the journal'"'"'s last write left
    j=$(timeout 60 sbatch --parsable -o /dev/null --wrap "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do srun true; done") &&
    slurm_wait_job $j &&
    acct_wait_records "$J" kind=job job_id=$j -- state >rec &&
    echo COMPLETED >expect &&
    test_cmp expect rec &&
    acct_wait_records "$J" kind=step job_id=$j -- step_id >steps &&
    test "$(wc -l <steps)" -eq 13 &&
    ! grep "is lost" "$SLURM_TEST_DIR"/log/slurmd*.log
'

test_done
