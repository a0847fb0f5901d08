#!/bin/sh

test_description='pin.so: a --cpu-bind list and a policy the user did not ask for

On a real local Slurm whose pin.conf sets DefaultPolicy=numa-local and a
partition default: an srun inside a step (which inherits the parent
task'"'"'s SLURM_CPU_BIND) runs, and so does a step with an explicit
--cpu-bind list under the site default or the partition default: each
keeps Slurm'"'"'s binding and says so in one line.  The user'"'"'s own
--pin-policy with the user'"'"'s own --cpu-bind list is still refused with
the line slurm-pin-spank(8) documents (issue 18, item 10), at the top
level, inside a batch job and in an srun inside a step that gives its
own, different list.
'

. "$(dirname "$0")/sharness.sh"

slurm_require

pin_so_prereq
test "$(nproc)" -ge 2 && test_set_prereq TWO_CPUS

STATE=$(mktemp -d /tmp/pin-t2070.XXXXXX) || exit 1
cleanup "rm -rf '$STATE'"
BASE=slurm-pin-t2070-$$
CGROOT=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
cleanup "rmdir '$CGROOT/$BASE' 2>/dev/null; true"

test_expect_success PIN_SO,TWO_CPUS 'start a cluster whose pin.conf has a default policy' '
    cat >pin.conf <<-EOF &&
	CgroupBase=$BASE
	StateDir=$STATE/state
	TopologyCache=$STATE/topology.xml
	JournalDir=$STATE/journal
	DeliverCommand=none
	DefaultPolicy=numa-local
	PartitionName=pilot DefaultPolicy=cache-shared
	EOF
    echo "required $PIN_SO conf=@PIN_CONF@" >plugstack.conf &&
    slurm_start --plugstack plugstack.conf --pin-conf pin.conf \
        --conf-extra "PartitionName=pilot Nodes=ALL MaxTime=INFINITE State=UP"
'

test_expect_success SLURM,PIN_SO,TWO_CPUS 'an srun inside a step runs, one line per inner step' '
    srun -n2 -O --overlap srun -n2 -O --overlap \
        sh -c "echo ran" >nested.out 2>nested.err &&
    cat nested.err &&
    test "$(grep -c "^ran$" nested.out)" -eq 4 &&
    ! grep "pin: error" nested.err &&
    test "$(grep -c "^pin: step [0-9]*\.[0-9]* on .*: --cpu-bind=.* (inherited from the step this srun runs in) conflicts with policy numa-local (pin.conf DefaultPolicy): the step keeps Slurm.s binding, no policy applied$" nested.err)" -eq 2
'

test_expect_success SLURM,PIN_SO,TWO_CPUS 'an explicit --cpu-bind list under the site default: Slurm binds, one line' '
    srun -n1 -c2 --cpu-bind=map_cpu:1 grep Cpus_allowed_list /proc/self/status \
        >map.out 2>map.err &&
    cat map.out map.err &&
    grep "Cpus_allowed_list:[[:space:]]*1$" map.out &&
    test "$(grep -c "^pin: " map.err)" -eq 1 &&
    grep "^pin: step [0-9]*\.0 on .*: --cpu-bind=quiet,map_cpu:1 conflicts with policy numa-local (pin.conf DefaultPolicy): the step keeps Slurm.s binding, no policy applied$" map.err
'

test_expect_success SLURM,PIN_SO,TWO_CPUS 'an explicit --cpu-bind list under a partition default: the same' '
    srun -p pilot -n1 -c2 --cpu-bind=map_cpu:1 grep Cpus_allowed_list /proc/self/status \
        >pmap.out 2>pmap.err &&
    cat pmap.out pmap.err &&
    grep "Cpus_allowed_list:[[:space:]]*1$" pmap.out &&
    grep "conflicts with policy cache-shared (the partition.s default): the step keeps" pmap.err
'

test_expect_success SLURM,PIN_SO,TWO_CPUS 'the user.s --pin-policy with the user.s --cpu-bind list: refused as documented' '
    test_must_fail srun -n1 -c2 --pin-policy=numa-local --cpu-bind=map_cpu:1 \
        touch ran 2>ref.err &&
    cat ref.err &&
    grep "^pin: error: step [0-9]*\.0 on .*: --cpu-bind=quiet,map_cpu:1 conflicts with --pin-policy=numa-local: both set explicit CPUs; drop one of them (or use --pin-policy=none)$" ref.err &&
    ! test -e ran
'

test_expect_success SLURM,PIN_SO,TWO_CPUS 'inside a batch job: the user.s own pair is still refused' '
    jobid=$(sbatch --parsable -n1 -c2 -o batch.out \
            --wrap "srun -n1 -c2 --pin-policy=numa-local --cpu-bind=map_cpu:1 true; echo rc=\$?") &&
    slurm_wait_job "$jobid" &&
    cat batch.out &&
    grep "^pin: error: step [0-9]*\.0 on .*: --cpu-bind=quiet,map_cpu:1 conflicts with --pin-policy=numa-local: both set explicit CPUs" batch.out &&
    grep "^rc=1$" batch.out
'

test_expect_success SLURM,PIN_SO,TWO_CPUS 'an srun inside a step with its own, different --cpu-bind list and --pin-policy: refused' '
    srun -n1 -c2 sh -c "srun -n1 -c2 --overlap --pin-policy=numa-local --cpu-bind=map_cpu:1 true; echo rc=\$?" \
        >inner.out 2>inner.err &&
    cat inner.out inner.err &&
    grep "conflicts with --pin-policy=numa-local: both set explicit CPUs" inner.err &&
    grep "^rc=1$" inner.out
'

test_done
