#!/bin/sh
# vm-slurm-modes: cgroup affinity
# vm-guest-options: none
# vm-guest-options: --io-numa 1
# shellcheck disable=SC2016,SC2034,SC1091  # sharness: test bodies are single-quoted

test_description='pin.so in the guest: CPUs next to the step'"'"'s GPU and NIC

Runs inside the qemu guest (t/vm/run-tests.sh) twice.  In the guest of
run-guest.sh --io-numa 1, a GPU (virtio-gpu-pci, /dev/dri/card0) and a
NIC (virtio-net-pci, eth0) sit behind a PCIe host bridge on NUMA node 1:
the guest kernel and hwloc must say they are local to node 1; Slurm hands
the card out as gpu:1 (gres.conf AutoDetect=off, File=/dev/dri/cardN);
srun --gres=gpu:1 --pin-policy=numa-local lands on node 1'"'"'s CPUs where
the same step without a GPU lands on node 0'"'"'s, and its record names the
card'"'"'s PCI bus id; --pin-policy=numa-local,nic lands on node 1 and
records eth0.  In the plain guest (no such devices, no GresTypes) the same
,nic step lands where numa-local alone puts it and records no GPU and no
NIC.  Each step holds the whole node (salloc --exclusive, srun --whole),
so that the choice between the nodes is pin.so'"'"'s, not Slurm'"'"'s.'

SHARNESS_TEST_SRCDIR=${PIN_SRCDIR:-/nonexistent}/t
SHARNESS_TEST_EXTENSION="sh"
export SHARNESS_TEST_SRCDIR SHARNESS_TEST_EXTENSION
if ! test -r "$SHARNESS_TEST_SRCDIR/sharness.sh"; then
    echo "1..0 # SKIP PIN_SRCDIR is not set: run this with t/vm/run-tests.sh"
    exit 0
fi
. "$SHARNESS_TEST_SRCDIR/sharness.sh"
. "$PIN_SRCDIR/t/vm/guest-lib.sh"

mode=${PIN_VM_SLURM_MODE:-cgroup}
io=${PIN_VM_IO_NUMA:-}
# the node a step without devices lands on (numa-local: the first)
other=0
# gres.conf and the steps' files: no space in the path, readable by slurmd.
W=$(mktemp -d /tmp/pin-t60.XXXXXX) && chmod 755 "$W" || exit 1

# step OUT [--gres=gpu:1] --pin-policy=...: one task of 1 CPU in a step
# holding the whole node: an exclusive allocation and srun --whole (srun
# --exclusive alone gives the step only the CPUs it asks for, and implies
# --exact, which excludes --whole, from 24.11; 24.11 ignores --whole when
# -c is given).  OUT.out gets the probe and the job id, OUT.err srun's
# stderr.  Returns srun's status.
step ()
{
    _o=$1
    shift
    _g=""
    case $1 in --gres=*) _g=$1 ;; esac
    # shellcheck disable=SC2086  # _g is one word or none
    salloc -Q --exclusive -n 1 $_g srun --whole -n 1 "$@" \
        sh -c "$TASK" >"$_o.out" 2>"$_o.err"
}
TASK='echo "job=$SLURM_JOB_ID gpus=${SLURM_STEP_GPUS:-}"
'$VM_PROBE

# check_lands FILE NODE: the task of FILE runs on 1 CPU of node NODE, with
# its memory there, in /proc and in its cgroup.
check_lands ()
{
    _cpus=$(vm_probe_field "$1" 0 cpus) &&
    _cgc=$(vm_probe_field "$1" 0 cg_cpus) &&
    echo "task 0: cpus=$_cpus mems=$(vm_probe_field "$1" 0 mems)" &&
    test "$_cpus" = "$_cgc" &&
    test "$(vm_cpulist_expand "$_cpus" | wc -l)" = 1 &&
    vm_cpus_within "$_cpus" "$2" &&
    test "$(vm_probe_field "$1" 0 mems)" = "$2"
}

# lstopo_tops FILE NAME...: for each line of FILE (lstopo's console
# output) naming an OS device "NAME", the top-level object it is in
# (the line with 2 spaces of indent above it: "  Package L#1").
lstopo_tops ()
{
    _f=$1
    shift
    awk -v names="$*" 'BEGIN { n = split(names, a, " ") }
        /^  [^ ]/ { top = $0 }
        { for (i = 1; i <= n; i++) if (index($0, "\"" a[i] "\"")) print top }' "$_f"
}

# record FILE FIELD...: the fields of the record of FILE's step (step 0 of
# the job it names), as t/acct/records.py prints them ("-" when absent).
record ()
{
    _job=$(sed -n "s/^job=\([0-9]*\) .*/\1/p" "$1") &&
    test -n "$_job" &&
    shift &&
    acct_wait_records "$LOCAL_SLURM_JOURNAL" job_id="$_job" step_id=0 -- "$@"
}

if test -n "$io"; then

test_expect_success "the guest kernel: one DRM card and one NIC, local to node $io" '
    node_cpus=$(cat /sys/devices/system/node/node$io/cpulist) &&
    for c in /sys/class/drm/card[0-9]*; do
        case ${c##*/} in *-*) continue ;; esac
        echo "$c"
    done >cards &&
    test "$(wc -l <cards)" = 1 &&
    card=$(basename "$(cat cards)") &&
    gpu=$(vm_pci_busid "/sys/class/drm/$card/device") &&
    nic=$(vm_pci_busid /sys/class/net/eth0/device) &&
    test -n "$gpu" && test -n "$nic" &&
    for d in $gpu $nic; do
        echo "$d class=$(cat /sys/bus/pci/devices/$d/class) numa_node=$(cat /sys/bus/pci/devices/$d/numa_node) local_cpulist=$(cat /sys/bus/pci/devices/$d/local_cpulist)" || return 1
    done >kernel &&
    cat kernel &&
    vm_note "t60: /dev/$card: $(sed -n 1p kernel); eth0: $(sed -n 2p kernel); node$io cpulist $node_cpus" &&
    cat >expect <<-EOF &&
	$gpu numa_node=$io local_cpulist=$node_cpus
	$nic numa_node=$io local_cpulist=$node_cpus
	EOF
    sed "s/ class=[^ ]*//" kernel >actual &&
    test_cmp expect actual &&
    test -c "/dev/dri/$card" &&
    echo "$card" >card && echo "$gpu" >gpu.busid
'

test_expect_success "hwloc: the card and eth0 hang under node $io and its CPUs" '
    gpu=$(cat gpu.busid) && card=$(cat card) &&
    lstopo-no-graphics --of console --filter osdev:all >lstopo &&
    cat lstopo &&
    hwloc-ls -v --filter osdev:all >hwloc-ls.v &&
    grep -E "busid=$gpu|\"(eth0|$card)\"" hwloc-ls.v &&
    lstopo-no-graphics --of xml --filter osdev:all hw.xml &&
    test "$(hwloc-calc --input hw.xml --physical-output -I numa "pci=$gpu")" = "$io" &&
    test "$(hwloc-calc --input hw.xml --physical-output -I numa os=eth0)" = "$io" &&
    nodeset=$(hwloc-calc --input hw.xml --physical -I pu "numa:$io") &&
    test "$(hwloc-calc --input hw.xml --physical-output -I pu "pci=$gpu")" = "$nodeset" &&
    test "$(hwloc-calc --input hw.xml --physical-output -I pu os=eth0)" = "$nodeset" &&
    lstopo_tops lstopo "$card" eth0 >tops &&
    cat tops &&
    test "$(sort -u tops)" = "  Package L#$io" &&
    test "$(wc -l <tops)" = 2 &&
    vm_note "t60: lstopo: $(grep -E "PCI|GPU|Net" lstopo | sed "s/^ *//" | tr "\n" ";")"
'

test_expect_success "Slurm ($mode mode) with pin.so and gres gpu:1 = /dev/dri/card" '
    card=$(cat card) &&
    printf "AutoDetect=off\nName=gpu File=/dev/dri/%s\n" "$card" >"$W/gres.conf" &&
    start=$(vm_now) &&
    vm_pin_require "$mode" --gres-conf "$W/gres.conf" --node-gres gpu:1 &&
    vm_record_time "t60: slurm + gres + pin.so ($mode)" "$start" &&
    scontrol show node | grep -E "Gres=gpu:1"
'

test_expect_success "without a GPU, numa-local puts the task on node $other (the control)" '
    { step none --pin-policy=numa-local,verbose; rc=$?; } &&
    cat none.out none.err &&
    test "$rc" = 0 &&
    { test "$mode" != cgroup || test "$(vm_probe_field none.out 0 step_cpus)" = 0-15; } &&
    check_lands none.out $other &&
    record none.out gpus nic >rec &&
    cat rec &&
    { test "$(cat rec)" = "|" || test "$(cat rec)" = "-|-"; }
'

test_expect_success "srun --gres=gpu:1 --pin-policy=numa-local lands on node $io, next to the card" '
    start=$(vm_now) &&
    { step gpu --gres=gpu:1 --pin-policy=numa-local,verbose; rc=$?; } &&
    vm_record_time "t60: srun --gres=gpu:1 numa-local ($mode)" "$start" &&
    cat gpu.out gpu.err &&
    test "$rc" = 0 &&
    grep "^job=[0-9]* gpus=0\$" gpu.out &&
    check_lands gpu.out $io
'

test_expect_success 'its record names the card by its PCI bus id, and no NIC' '
    record gpu.out gpus nic >rec &&
    cat rec &&
    { test "$(cat rec)" = "$(cat gpu.busid)|" || test "$(cat rec)" = "$(cat gpu.busid)|-"; }
'

test_expect_success "--pin-policy=numa-local,nic (no GPU) lands on node $io, next to eth0" '
    { step nic --pin-policy=numa-local,nic,verbose; rc=$?; } &&
    cat nic.out nic.err &&
    test "$rc" = 0 &&
    check_lands nic.out $io &&
    record nic.out gpus nic >rec &&
    cat rec &&
    { test "$(cat rec)" = "|eth0" || test "$(cat rec)" = "-|eth0"; }
'

else

test_expect_success 'the plain guest has no DRM card and no NIC but lo' '
    ! ls -d /sys/class/drm/card[0-9]* 2>/dev/null &&
    test "$(ls /sys/class/net)" = lo
'

test_expect_success "Slurm ($mode mode) with pin.so, no GresTypes" '
    vm_pin_require "$mode" &&
    ! scontrol show config | grep -E "^GresTypes *= *gpu"
'

test_expect_success 'numa-local,nic without a NIC: placed as numa-local alone, records none' '
    { step plain --pin-policy=numa-local,nic,verbose; rc=$?; } &&
    cat plain.out plain.err &&
    test "$rc" = 0 &&
    grep "^job=[0-9]* gpus=\$" plain.out &&
    check_lands plain.out $other &&
    record plain.out gpus nic >rec &&
    cat rec &&
    { test "$(cat rec)" = "|" || test "$(cat rec)" = "-|-"; }
'

fi

rm -rf "$W"
test_done
