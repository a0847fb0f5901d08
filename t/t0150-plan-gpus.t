#!/bin/sh

test_description='slurm-pin plan --gpus/--nic: tasks next to their GPUs and NIC

On real machines of ../shared/topologies (prereq SHARED_TOPOLOGIES) and on
the project'"'"'s own capture of the lent H100 machine (t/fixtures/gpu/,
always there): GPUs named by index, PCI bus id or OS device name, tasks
split block-wise over them, each on CPUs local to its GPU; a partial
allocation without CPUs there takes the nearest NUMA domain (gpu-remote);
the NIC alone places, beside GPUs it is only checked (nic-remote); bad
names are one line naming the value and what the machine has.
'

. "$(dirname "$0")/sharness.sh"

T=$PIN_SHARED/topologies
H100=$PIN_SRCDIR/t/fixtures/gpu/h100-vm-whole-io.xml
pin_prereq_cmd PYTHON3 python3

# plan_fails VALUE ARGS...: exit 1, nothing on stdout, one line on stderr
# that contains VALUE
plan_fails () {
    value=$1
    shift
    test_expect_code 1 slurm-pin plan "$@" >fail.out 2>fail.err &&
    test_must_be_empty fail.out &&
    test "$(wc -l <fail.err)" -eq 1 &&
    grep -F -e "$value" fail.err >/dev/null ||
    { echo "stderr was:"; cat fail.err; false; }
}

test_expect_success 'H100 machine: GPU 0 by index and by bus id, as nvidia-smi named it' '
    slurm-pin plan -t "$H100" -p numa-local -n 2 -c 4 --gpus 0 >idx.out &&
    slurm-pin plan -t "$H100" -p numa-local -n 2 -c 4 --gpus 0000:00:06.0 >bus.out &&
    test_cmp idx.out bus.out &&
    cat >expect <<-\EOT &&
	task 0: cpus=0-3 mems=0 gpus=0(0000:00:06.0)
	task 1: cpus=4-7 mems=0 gpus=0(0000:00:06.0)
	EOT
    test_cmp expect idx.out
'

test_expect_success 'H100 machine: a second GPU does not exist' '
    plan_fails "GPU '"'"'1'"'"': no such GPU; this topology has 0 (0000:00:06.0)" \
        -t "$H100" -p numa-local --gpus 1
'

test_expect_success SHARED_TOPOLOGIES 'g4dnmetal: 8 tasks, 8 GPUs, each task on its GPU'"'"'s socket' '
    slurm-pin plan -t "$T/g4dnmetal.xml" -p numa-local -n 8 -c 2 \
        --gpus 0,1,2,3,4,5,6,7 >out &&
    cat >expect <<-\EOT &&
	task 0: cpus=0-1 mems=0 gpus=0(0000:18:00.0)
	task 1: cpus=2-3 mems=0 gpus=1(0000:19:00.0)
	task 2: cpus=4-5 mems=0 gpus=2(0000:35:00.0)
	task 3: cpus=6-7 mems=0 gpus=3(0000:36:00.0)
	task 4: cpus=24-25 mems=1 gpus=4(0000:e7:00.0)
	task 5: cpus=26-27 mems=1 gpus=5(0000:e8:00.0)
	task 6: cpus=28-29 mems=1 gpus=6(0000:f4:00.0)
	task 7: cpus=30-31 mems=1 gpus=7(0000:f5:00.0)
	EOT
    test_cmp expect out
'

test_expect_success SHARED_TOPOLOGIES 'GPUs by CUDA, NVML and OpenCL names and short bus ids are the same GPUs' '
    slurm-pin plan -t "$T/g4dnmetal.xml" -p numa-local -n 2 --gpus 5,0 >a &&
    slurm-pin plan -t "$T/g4dnmetal.xml" -p numa-local -n 2 --gpus cuda5,nvml0 >b &&
    slurm-pin plan -t "$T/g4dnmetal.xml" -p numa-local -n 2 --gpus e8:00.0,opencl0d0 >c &&
    test_cmp a b && test_cmp a c &&
    grep "^task 0: cpus=24 .*gpus=5(0000:e8:00.0)" a
'

test_expect_success SHARED_TOPOLOGIES 'ipa20 (SNC4): each GPU'"'"'s tasks on its own sub-NUMA node, not the BMC'"'"'s VGA' '
    slurm-pin plan -t "$T/ipa20.xml" -p numa-local -n 4 -c 4 --gpus 0,1,2,3 --json >out.json &&
    python3 - out.json <<-\EOP
	import json, sys
	p = json.load(open(sys.argv[1]))
	want = {"0000:4e:00.0": "3", "0000:5f:00.0": "1", "0000:cb:00.0": "7", "0000:db:00.0": "5"}
	for t in p["tasks"]:
	    (g,) = t["gpus"]
	    assert t["mems"] == want[g["pci_busid"]], t
	    assert t["fallback"] is None, t
	EOP
'

test_expect_success SHARED_TOPOLOGIES 'partial node without CPUs near the GPU: the nearest NUMA domain by distance, gpu-remote' '
    slurm-pin plan -t "$T/epyc-corona.xml" -p numa-local -c 4 --gpus 0 \
        --allowed 12-17,24-29,60-65,72-77 >out &&
    echo "task 0: cpus=12-15 mems=2 gpus=0(0000:13:00.0) fallback=gpu-remote" >expect &&
    test_cmp expect out
'

test_expect_success SHARED_TOPOLOGIES 'the NIC alone places; beside GPUs it is checked (nic-remote)' '
    slurm-pin plan -t "$T/g4dnmetal.xml" -p numa-local -n 2 --nic >nic.out &&
    grep -c "cpus=2[45] mems=1 nic=rdmap197s0$" nic.out >count &&
    echo 2 >two && test_cmp two count &&
    slurm-pin plan -t "$T/g4dnmetal.xml" -p numa-local --gpus 0 --nic=eth0 >both.out &&
    echo "task 0: cpus=0 mems=0 gpus=0(0000:18:00.0) nic=eth0 fallback=nic-remote" >expect &&
    test_cmp expect both.out
'

test_expect_success SHARED_TOPOLOGIES 'bad GPU and NIC names: one line naming them and what there is' '
    plan_fails "GPU '"'"'8'"'"': no such GPU; this topology has 0 (0000:18:00.0), 1 (0000:19:00.0)" \
        -t "$T/g4dnmetal.xml" -p numa-local --gpus 8 &&
    plan_fails "NIC '"'"'ib9'"'"': no such NIC; this topology has 0 (rdmap197s0), 1 (eth0)" \
        -t "$T/g4dnmetal.xml" -p numa-local --nic=ib9 &&
    plan_fails "GPU '"'"'cuda0'"'"' given twice" -t "$T/g4dnmetal.xml" -p numa-local --gpus 0,cuda0 &&
    plan_fails "--gpus='"'"''"'"'" -t "$T/g4dnmetal.xml" -p numa-local --gpus "" &&
    plan_fails "no such GPU; this topology has none" -t "pack:2 core:2 pu:1" -p numa-local --gpus 0 &&
    plan_fails "this topology has no network device" -t "pack:2 core:2 pu:1" -p numa-local --nic
'

test_done
