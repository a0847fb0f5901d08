#!/bin/sh

test_description='pin.so: tasks land on the CPUs next to the GPUs Slurm gave the step

A private Slurm on this 2-CPU machine told it has 2 sockets of one core
(local-slurm.sh --sockets 2), two GPUs in gres.conf (AutoDetect=off,
File= two character devices made here with mknod, Cores= 0 and 1) and
pin.so with the test-only pin.conf keys TestTopology= (t/fixtures/
gres-2pkg.xml: the two CPUs as two packages, GPU 0000:3b:00.0 near CPU 0,
GPU 0000:af:00.0 and the NIC enp216s0 near CPU 1) and TestDeviceRoot= (a
directory standing for /, whose sys/dev/char/MAJ:MIN/device leads to the
fixture'"'"'s bus ids).  Two steps of one job side by side, each with one GPU and
--pin-policy=numa-local -c 1, land each on the CPU next to its GPU; the
record'"'"'s gpus field and slurm-pin acct -o Gpus,Nic name the GPU;
numa-local,nic without GPUs puts task 0 next to the NIC; without the sysfs
match gres.conf Cores= is used and said; a forged SLURM_STEP_GPUS or
CUDA_VISIBLE_DEVICES in a job without GPUs changes nothing; a hostile
gres.conf line crashes nothing.
'

. "$(dirname "$0")/sharness.sh"

slurm_require

pin_so_prereq
PY=/usr/bin/python3
test -x "$PY" && test_set_prereq PY
test "$(nproc)" -ge 2 && test_set_prereq TWO_CPUS
SLURM_PIN=$PIN_BIN/slurm-pin
# pin.conf takes paths without ".." components
FIXTURE=$(cd "$PIN_SRCDIR/t/fixtures" && pwd)/gres-2pkg.xml

# the device nodes, the fake sysfs and gres.conf: a path without blanks
STATE=$(mktemp -d /tmp/pin-t2090.XXXXXX) || exit 1
cleanup "rm -rf '$STATE'"
BASE=slurm-pin-t2090-$$
CGROOT=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
cleanup "rmdir '$CGROOT/$BASE' 2>/dev/null; true"
J=$STATE/journal
mkdir -p "$STATE/dev" &&
    mknod "$STATE/dev/gpu0" c 4000 0 && mknod "$STATE/dev/gpu1" c 4000 1 &&
    test_set_prereq MKNOD

# sysfs_link MIN BUSID: STATE/sys/dev/char/4000:MIN/device -> a directory
# named by the bus id, as the kernel links a PCI device's char device
sysfs_link () {
    mkdir -p "$STATE/sys/devices/pci0000:00/$2" "$STATE/sys/dev/char/4000:$1" &&
    ln -sfn "../../../devices/pci0000:00/$2" "$STATE/sys/dev/char/4000:$1/device"
}
sysfs_link 0 0000:3b:00.0 && sysfs_link 1 0000:af:00.0

ALL=PIN_SO,PY,MKNOD,TWO_CPUS

# Slurm's GPU 0 is the device of bus 0000:af:00.0, next to CPU 1, and its
# GPU 1 that of 0000:3b:00.0, next to CPU 0: Slurm's own binding of task
# 0 to CPU 0 is then the wrong one for it.
cat >gres.conf <<EOF
AutoDetect=off
Name=gpu File=$STATE/dev/gpu1 Cores=1
Name=gpu File=$STATE/dev/gpu0 Cores=0
EOF

# cpu_of GPU: the CPU next to Slurm's GPU index GPU
cpu_of () {
    case "$1" in
        0) echo 1 ;;
        1) echo 0 ;;
        *) return 1 ;;
    esac
}

cat >pin.conf <<EOF
CgroupBase=$BASE
StateDir=$STATE/state
TopologyCache=$STATE/topology.xml
JournalDir=$J
DeliverCommand=none
EOF
printf "TestTopology=%s\nTestDeviceRoot=%s\n" "$FIXTURE" "$STATE" >>pin.conf

# rec JOB STEP EXPR: a Python expression on the record r of step STEP of
# job JOB in the node journal
rec () {
    "$PY" - "$J/journal" "$@" <<-\PYEOF
	import json, sys
	path, job, step, expr = sys.argv[1:5]
	found = [r for r in map(json.loads, open(path))
	         if r["job_id"] == int(job) and r["kind"] == "step"
	         and r["step_id"] == int(step)]
	if len(found) != 1:
	    sys.exit("job %s step %s: %d records" % (job, step, len(found)))
	r = found[0]
	print(eval(expr))
	PYEOF
}

# The task prints its job, step, GPUs and CPUs.
PRINT='echo job=$SLURM_JOB_ID step=$SLURM_STEP_ID rank=$SLURM_PROCID gpus=$SLURM_STEP_GPUS cuda=$CUDA_VISIBLE_DEVICES cpus=$(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)'

# two_steps PREFIX [srun options]: a job of both CPUs and both GPUs runs
# two steps side by side, each with one GPU and one CPU (the first sleeps
# until the second has run): PREFIX.a/.b hold their lines, stderr in
# PREFIX.a.err/.b.err.
two_steps () {
    _p=$1
    shift
    cat >"$_p.sh" <<-EOF
	#!/bin/sh
	srun -n1 -c1 --gres=gpu:1 $* sh -c '$PRINT; sleep 4' >$_p.a 2>$_p.a.err &
	sleep 1
	srun -n1 -c1 --gres=gpu:1 $* sh -c '$PRINT' >$_p.b 2>$_p.b.err
	wait
	EOF
    job=$(sbatch --parsable -n1 -c2 --gres=gpu:2 -o "$_p.batch" "$_p.sh") &&
    slurm_wait_job "$job" &&
    cat "$_p.a" "$_p.a.err" "$_p.b" "$_p.b.err" &&
    echo "$job" >"$_p.job"
}

# near FILE: the one task in FILE runs on the CPU next to its GPU
near () {
    _g=$(sed -n "s/.* gpus=\([0-9]*\) .*/\1/p" "$1") &&
    _c=$(sed -n "s/.* cpus=//p" "$1") &&
    test -n "$_g" && test "$_c" = "$(cpu_of "$_g")"
}

# cpu_of_rank FILE RANK: the CPUs of task RANK in FILE
cpu_of_rank () {
    sed -n "s/.* rank=$2 .* cpus=//p" "$1"
}

test_expect_success $ALL 'start Slurm: 2 sockets of one core, 2 GPUs, pin.so' '
    echo "required $PIN_SO conf=@PIN_CONF@" >plugstack.conf &&
    slurm_start --plugstack plugstack.conf --pin-conf pin.conf \
        --gres-conf gres.conf --node-gres gpu:2 --sockets 2 &&
    scontrol show node >node.out &&
    grep "Gres=gpu:2" node.out
'

test_expect_success SLURM,MKNOD 'Slurm gives a step its GPU: SLURM_STEP_GPUS, CUDA_VISIBLE_DEVICES' '
    srun -n1 -c1 --gres=gpu:1 sh -c "$PRINT" >one.out &&
    cat one.out &&
    grep " gpus=[01] cuda=[01] " one.out &&
    srun -n1 -c2 --gres=gpu:2 sh -c "$PRINT" >both.out &&
    cat both.out &&
    grep " gpus=0,1 cuda=0,1 " both.out
'

test_expect_success SLURM,MKNOD 'two steps side by side hold the two GPUs' '
    two_steps side &&
    g1=$(sed -n "s/.* gpus=\([0-9]*\) .*/\1/p" side.a) &&
    g2=$(sed -n "s/.* gpus=\([0-9]*\) .*/\1/p" side.b) &&
    test "$(printf "%s\n" "$g1" "$g2" | sort | paste -sd,)" = 0,1 &&
    near side.a &&
    near side.b
'

test_expect_success SLURM,MKNOD 'without a policy Slurm binds task 0 of a 2-GPU step to CPU 0, far from its GPU' '
    srun -n2 -c1 --gres=gpu:2 --pin-policy=none sh -c "$PRINT" >slurm2.out &&
    cat slurm2.out &&
    test "$(cpu_of_rank slurm2.out 0)" = 0 &&
    grep "rank=0 gpus=0,1 " slurm2.out
'

test_expect_success SLURM,MKNOD 'numa-local: each step lands on the CPU next to its GPU' '
    two_steps local --pin-policy=numa-local,verbose &&
    near local.a &&
    near local.b
'

test_expect_success SLURM,MKNOD 'numa-local, one step of 2 tasks and 2 GPUs: task i next to GPU i' '
    srun -n2 -c1 --gres=gpu:2 --pin-policy=numa-local,verbose sh -c "$PRINT" >local2.out 2>local2.err &&
    cat local2.out local2.err &&
    test "$(cpu_of_rank local2.out 0)" = "$(cpu_of 0)" &&
    test "$(cpu_of_rank local2.out 1)" = "$(cpu_of 1)"
'

test_expect_success SLURM,MKNOD 'the record names the GPU; acct -o Gpus,Nic' '
    job=$(cat local.job) &&
    for s in 0 1; do
        rec "$job" $s "r[\"gpus\"]" >gpus.$s || return 1
    done &&
    test "$(cat gpus.0 gpus.1 | sort | paste -sd,)" = "0000:3b:00.0,0000:af:00.0" &&
    "$SLURM_PIN" acct --journal="$J" -j "$job" -o JobID,Gpus,Nic -P -n >acct.out &&
    cat acct.out &&
    grep -F "$job.0|0000:" acct.out &&
    grep -F "0000:3b:00.0|-" acct.out &&
    grep -F "0000:af:00.0|-" acct.out
'

test_expect_success SLURM,MKNOD 'numa-local,nic without GPUs: task 0 next to the NIC, the other nic-remote' '
    srun -n2 -c1 --pin-policy=numa-local,verbose sh -c "$PRINT" >plain2.out 2>plain2.err &&
    cat plain2.out plain2.err &&
    test "$(cpu_of_rank plain2.out 0)" = 0 &&
    srun -n2 -c1 --pin-policy=numa-local,nic,verbose sh -c "$PRINT" >nic.out 2>nic.err &&
    cat nic.out nic.err &&
    test "$(cpu_of_rank nic.out 0)" = 1 &&
    test "$(cpu_of_rank nic.out 1)" = 0 &&
    grep "pin: task 0 on .* cpus=1 .*nic=enp216s0$" nic.err &&
    grep "pin: task 1 on .* cpus=0 .*nic=enp216s0 fallback=nic-remote" nic.err &&
    job=$(sed -n "s/.*job=\([0-9]*\) .*/\1/p" nic.out | head -n1) &&
    test "$(rec "$job" 0 "r[\"nic\"]")" = enp216s0 &&
    "$SLURM_PIN" acct --journal="$J" -j "$job" -o JobID,Gpus,Nic -P -n >nicacct.out &&
    grep -F "$job.0|-|enp216s0" nicacct.out
'

test_expect_success SLURM,MKNOD 'without a sysfs match gres.conf Cores= decides, and says so' '
    mv "$STATE/sys" "$STATE/sys.off" &&
    test_when_finished "mv \"$STATE/sys.off\" \"$STATE/sys\"" &&
    two_steps cores --pin-policy=numa-local,verbose &&
    near cores.a &&
    near cores.b &&
    grep "gpus=gres:[01]" cores.a.err cores.b.err &&
    grep "^pin: step [0-9.]* on .*: GPU [01] (gres:[01]) located by gres.conf Cores=" cores.a.err &&
    grep "^pin: step [0-9.]* on .*: GPU [01] (gres:[01]) located by gres.conf Cores=" cores.b.err &&
    grep "located by gres.conf Cores=" "$SLURM_TEST_DIR/log/slurmd.log" &&
    srun -n2 -c1 --gres=gpu:2 --pin-policy=numa-local,verbose sh -c "$PRINT" >cores2.out 2>cores2.err &&
    cat cores2.out cores2.err &&
    test "$(cpu_of_rank cores2.out 0)" = "$(cpu_of 0)" &&
    test "$(cpu_of_rank cores2.out 1)" = "$(cpu_of 1)"
'

# pin.so takes a step's GPUs only where Slurm's variable and slurmctld's
# record of the job agree (src/plugins/spank/gpus.c): in a job without
# GPUs, forged variables put no GPU in its verbose line nor in the record.
# (Slurm 22.05 clears them for such a step; where they reach the step,
# slurmctld's record still says the job holds none.)  This test once
# compared the step's CPUs with those of a step run before it in the same
# job: with -c1 Slurm gives each step one CPU of the job's two, which one
# is Slurm's choice, and that comparison failed in two CI runs on 24.11.
test_expect_success SLURM,MKNOD 'a forged SLURM_STEP_GPUS / CUDA_VISIBLE_DEVICES changes nothing' '
    cat >forged.sh <<-EOF &&
	#!/bin/sh
	srun -n1 -c1 --pin-policy=numa-local,verbose --export=ALL,SLURM_STEP_GPUS=0,CUDA_VISIBLE_DEVICES=0,SLURM_JOB_GPUS=0 sh -c '"'"'$PRINT'"'"' >forged.out 2>forged.err
	EOF
    job=$(sbatch --parsable -n1 -c2 -o forged.batch forged.sh) &&
    slurm_wait_job "$job" &&
    cat forged.out forged.err forged.batch &&
    grep "^pin: task 0 on .*: policy=numa-local cpus=" forged.err &&
    ! grep "gpus=" forged.err &&
    step=$(sed -n "s/.* step=\([0-9]*\) .*/\1/p" forged.out) &&
    test -n "$step" &&
    test -z "$(rec "$job" "$step" "r.get(\"gpus\", \"\")")" &&
    test "$(rec "$job" "$step" "r[\"policy\"]")" = numa-local
'

test_expect_success SLURM,MKNOD 'a hostile gres.conf line for another node crashes nothing' '
    cp gres.conf gres-hostile.conf &&
    cat >>gres-hostile.conf <<-EOF &&
	NodeName=elsewhere Name=gpu File=$STATE/dev/gpu[0-1]%n%s%s%s Cores=0-1
	NodeName=elsewhere Name=gpu Type=$(printf "x%.0s" $(seq 1 300)) File=$STATE/dev/../dev/gpu0 Cores=1
	EOF
    slurm_restart --plugstack plugstack.conf --pin-conf pin.conf \
        --gres-conf gres-hostile.conf --node-gres gpu:2 --sockets 2 &&
    two_steps hostile --pin-policy=numa-local,verbose &&
    near hostile.a &&
    near hostile.b &&
    srun -n2 -c1 --gres=gpu:2 --pin-policy=numa-local sh -c "$PRINT" >hostile2.out &&
    test "$(cpu_of_rank hostile2.out 0)" = "$(cpu_of 0)" &&
    ! grep -i "segfault\|core dumped" "$SLURM_TEST_DIR/log/slurmd.log"
'

test_expect_success SLURM 'stop the cluster' '
    slurm_stop
'

test_done
