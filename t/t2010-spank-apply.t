#!/bin/sh

test_description='pin.so: what each task gets on a real Slurm

Starts a private Slurm (contrib/local-slurm.sh, task/affinity) whose
plugstack.conf loads the build'"'"'s pin.so and checks, as the tasks see it
(/proc/self/status, /proc/self/cgroup, the environment): the CPUs of every
policy, the verbose line, OMP_PLACES/OMP_PROC_BIND and their inheritance
from the batch step, the policy given to sbatch reaching its steps, the
cgroup v2 accounting tree and its removal, the --cpu-bind conflict, and
that the daemons survive.  Kernel-enforced cpusets are tested in t/vm/.
'

. "$(dirname "$0")/sharness.sh"

slurm_require

pin_so_prereq
test "$(nproc)" -ge 2 && test_set_prereq TWO_CPUS
pin_prereq_cmd PIN_CLI slurm-pin

# The cgroup v2 mount (the plugin's CgroupRoot=auto takes the first one).
CGROOT=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
test -n "$CGROOT" && test_set_prereq CGROUP2
if test -n "$CGROOT" && ! grep -qw cpuset "$CGROOT/cgroup.controllers"; then
    test_set_prereq NO_V2_CPUSET
fi

STATE=$(mktemp -d /tmp/pin-t2010.XXXXXX) || exit 1
cleanup "rm -rf '$STATE'"
BASE=slurm-pin-t2010-$$
cleanup "rmdir '$CGROOT/$BASE' 2>/dev/null; true"

# verbose_cpus FILE [TASK]: cpus= of task TASK (default 0) in FILE.
verbose_cpus () {
    sed -n "s/^pin: task ${2:-0} on [^:]*: .* cpus=\\([^ ]*\\) .*/\\1/p" "$1"
}

test_expect_success PIN_SO 'start a cluster with pin.so' '
    cat >pin.conf <<-EOF &&
	CgroupBase=$BASE
	StateDir=$STATE/state
	TopologyCache=$STATE/topology.xml
	EOF
    echo "required $PIN_SO conf=@PIN_CONF@" >plugstack.conf &&
    slurm_start --plugstack plugstack.conf --pin-conf pin.conf
'

test_expect_success SLURM,PIN_SO 'numa-local -c 1: the task sees a single CPU' '
    srun --pin-policy=numa-local -n1 -c1 grep Cpus_allowed_list /proc/self/status >one.out &&
    test "$(count_cpus "$(cpus_of one.out)")" -eq 1
'

test_expect_success SLURM,PIN_SO 'the verbose line has the documented form' '
    srun --pin-policy=numa-local,verbose -n1 -c1 grep Cpus_allowed_list /proc/self/status \
        >v.out 2>v.err &&
    grep -E "^pin: task 0 on $LOCAL_SLURM_NODE: policy=numa-local cpus=[0-9]+ mems=[0-9]+$" v.err &&
    test "$(verbose_cpus v.err)" = "$(cpus_of v.out)"
'

test_expect_success SLURM,PIN_SO,NO_V2_CPUSET 'without a v2 cpuset controller the fallback is said once per task 0' '
    grep "^pin: warning: $LOCAL_SLURM_NODE: cpuset controller not available in the cgroup v2 hierarchy at $CGROOT: CPUs bound with sched_setaffinity only" v.err &&
    test "$(grep -c "^pin: warning" v.err)" -eq 1 &&
    grep "pin: warning: cpuset controller not available" "$LOCAL_SLURM_DIR/log/slurmd.log"
'

test_expect_success SLURM,PIN_SO 'without verbose the plugin prints nothing' '
    srun --pin-policy=numa-local -n1 -c1 true 2>quiet.err &&
    ! grep "pin" quiet.err
'

for policy in numa-local numa-spread cache-shared random; do
    test_expect_success SLURM,PIN_SO "$policy -c 1: one CPU, the one the verbose line names" "
        srun --pin-policy=$policy,verbose -n1 -c1 grep Cpus_allowed_list /proc/self/status \
            >$policy.1.out 2>$policy.1.err &&
        test \"\$(count_cpus \"\$(cpus_of $policy.1.out)\")\" -eq 1 &&
        test \"\$(verbose_cpus $policy.1.err)\" = \"\$(cpus_of $policy.1.out)\" &&
        grep 'policy=$policy ' $policy.1.err
    "
    test_expect_success SLURM,PIN_SO,TWO_CPUS "$policy -c 2: two CPUs, the ones the verbose line names" "
        srun --pin-policy=$policy,verbose -n1 -c2 grep Cpus_allowed_list /proc/self/status \
            >$policy.2.out 2>$policy.2.err &&
        test \"\$(count_cpus \"\$(cpus_of $policy.2.out)\")\" -eq 2 &&
        test \"\$(verbose_cpus $policy.2.err)\" = \"\$(cpus_of $policy.2.out)\"
    "
done

test_expect_success SLURM,PIN_SO,TWO_CPUS 'two tasks of a step get different CPUs' '
    srun --pin-policy=numa-local,verbose -n2 -c1 sh -c \
        "echo \$SLURM_LOCALID \$(grep Cpus_allowed_list /proc/self/status)" \
        >two.out 2>two.err &&
    t0=$(sed -n "s/^0 Cpus_allowed_list: *//p" two.out) &&
    t1=$(sed -n "s/^1 Cpus_allowed_list: *//p" two.out) &&
    test "$(count_cpus "$t0")" -eq 1 &&
    test "$(count_cpus "$t1")" -eq 1 &&
    test "$t0" != "$t1" &&
    test "$(verbose_cpus two.err 0)" = "$t0" &&
    test "$(verbose_cpus two.err 1)" = "$t1"
'

test_expect_success SLURM,PIN_SO 'random prints the seed of the step' '
    srun --pin-policy=random,verbose -n1 -c1 grep Cpus_allowed_list /proc/self/status \
        >r1.out 2>r1.err &&
    grep -E "^pin: task 0 on .* policy=random .* seed=[0-9]+$" r1.err
'

test_expect_success SLURM,PIN_SO,PIN_CLI 'slurm-pin plan --seed reproduces the random placement' '
    seed=$(sed -n "s/^pin: task 0 .* seed=//p" r1.err) &&
    cpus=$(cpus_of r1.out) &&
    slurm-pin plan --topology "$STATE/topology.xml" --policy random -n 1 -c 1 \
        --allowed "$cpus" --seed "$seed" >plan.out &&
    grep "^task 0: cpus=$cpus " plan.out
'

test_expect_success SLURM,PIN_SO 'none: no binding of ours, no OMP variables' '
    srun --pin-policy=none,verbose -n1 -c1 sh -c \
        "echo OMP_PLACES=\${OMP_PLACES-unset} OMP_PROC_BIND=\${OMP_PROC_BIND-unset}" \
        >none.out 2>none.err &&
    grep "policy=none" none.err &&
    echo "OMP_PLACES=unset OMP_PROC_BIND=unset" >none.expected &&
    test_cmp none.expected none.out &&
    ! grep "^pin: warning" none.err
'

test_expect_success SLURM,PIN_SO 'OMP_PLACES and OMP_PROC_BIND follow the task mask' '
    srun --pin-policy=numa-local -n1 -c1 sh -c \
        "grep Cpus_allowed_list /proc/self/status; echo \$OMP_PLACES \$OMP_PROC_BIND" \
        >omp.out &&
    cpu=$(cpus_of omp.out) &&
    echo "{$cpu} close" >omp.expected &&
    tail -n1 omp.out >omp.actual &&
    test_cmp omp.expected omp.actual
'

test_expect_success SLURM,PIN_SO 'numa-spread asks OpenMP to spread' '
    srun --pin-policy=numa-spread -n1 -c1 printenv OMP_PROC_BIND >spread.out &&
    echo spread >spread.expected &&
    test_cmp spread.expected spread.out
'

test_expect_success SLURM,PIN_SO 'a user'"'"'s own OMP_PLACES and OMP_PROC_BIND are kept' '
    OMP_PLACES=cores OMP_PROC_BIND=master srun --pin-policy=numa-local -n1 -c1 \
        sh -c "echo \$OMP_PLACES \$OMP_PROC_BIND" >user.out &&
    echo "cores master" >user.expected &&
    test_cmp user.expected user.out
'

cat >job.sh <<'EOF'
#!/bin/sh
echo "batch OMP_PLACES=${OMP_PLACES-unset} record=${SLURM_PIN_OMP_PLACES-unset}"
srun -n1 -c1 sh -c 'echo "step0 $(grep Cpus_allowed_list /proc/self/status) OMP_PLACES=${OMP_PLACES-unset}"'
srun -n1 -c1 --pin-policy=none,verbose sh -c 'echo "step1 OMP_PLACES=${OMP_PLACES-unset} OMP_PROC_BIND=${OMP_PROC_BIND-unset}"'
OMP_PLACES=threads srun -n1 -c1 sh -c 'echo "step2 OMP_PLACES=${OMP_PLACES-unset}"'
EOF
chmod +x job.sh

test_expect_success SLURM,PIN_SO 'sbatch --pin-policy reaches the batch step and its steps' '
    jobid=$(sbatch --parsable -n1 -c1 --pin-policy=numa-local,verbose -o job.out job.sh) &&
    slurm_wait_job "$jobid" &&
    cat job.out &&
    test "$(grep -c "^pin: task 0 on .*: policy=numa-local " job.out)" -eq 3 &&
    grep "^pin: task 0 on .*: policy=none " job.out &&
    grep "^step0 Cpus_allowed_list:" job.out
'

test_expect_success SLURM,PIN_SO 'the batch step gets OMP_PLACES and records it' '
    grep -E "^batch OMP_PLACES=\{[0-9]+\} record=\{[0-9]+\}$" job.out &&
    line=$(grep "^batch " job.out) &&
    test "${line#*OMP_PLACES=}" != "${line}" &&
    places=$(echo "$line" | sed "s/^batch OMP_PLACES=\([^ ]*\) .*/\1/") &&
    record=$(echo "$line" | sed "s/.* record=//") &&
    test "$places" = "$record"
'

test_expect_success SLURM,PIN_SO 'a later step gets its own OMP_PLACES, not the batch step'"'"'s' '
    cpu=$(sed -n "s/^step0 Cpus_allowed_list:[[:space:]]*\([^ ]*\) .*/\1/p" job.out) &&
    grep "^step0 .* OMP_PLACES={$cpu}$" job.out
'

test_expect_success SLURM,PIN_SO 'the batch step'"'"'s OMP variables do not leak into an unbound step' '
    grep "^step1 OMP_PLACES=unset OMP_PROC_BIND=unset$" job.out
'

test_expect_success SLURM,PIN_SO 'OMP_PLACES set by the user in the job script is kept' '
    grep "^step2 OMP_PLACES=threads$" job.out
'

test_expect_success SLURM,PIN_SO 'salloc --pin-policy reaches its steps, a step'"'"'s own wins' '
    salloc -n1 -c1 --pin-policy=cache-shared,verbose sh -c \
        "srun -n1 -c1 true; srun -n1 -c1 --pin-policy=random,verbose true" 2>salloc.err &&
    grep "^pin: task 0 on [^:]*: policy=" salloc.err >salloc.lines &&
    sed "s/^pin: task 0 on [^:]*: policy=\([a-z-]*\) .*/\1/" salloc.lines >salloc.policies &&
    printf "cache-shared\nrandom\n" >salloc.expected &&
    test_cmp salloc.expected salloc.policies
'

test_expect_success SLURM,PIN_SO,CGROUP2 'each task runs in its own cgroup v2 leaf of our tree' '
    srun --pin-policy=numa-local -n1 -c1 cat /proc/self/cgroup >cg.out &&
    grep -E "^0::/$BASE/job_[0-9]+/step_0/task_0$" cg.out
'

test_expect_success SLURM,PIN_SO,CGROUP2 'a step with policy none is in the accounting tree too' '
    srun --pin-policy=none -n1 -c1 cat /proc/self/cgroup >cgnone.out &&
    grep -E "^0::/$BASE/job_[0-9]+/step_0/task_0$" cgnone.out
'

test_expect_success SLURM,PIN_SO,CGROUP2 'the batch step has a step_batch cgroup' '
    jobid=$(sbatch --parsable -n1 -c1 --pin-policy=numa-local -o cgb.out \
        --wrap "cat /proc/self/cgroup") &&
    slurm_wait_job "$jobid" &&
    grep -E "^0::/$BASE/job_$jobid/step_batch/task_0$" cgb.out
'

test_expect_success SLURM,PIN_SO 'an explicit --cpu-bind list conflicts with a policy' '
    test_must_fail srun --cpu-bind=map_cpu:0 --pin-policy=numa-local -n1 -c1 touch ran \
        2>conflict.err &&
    grep "^pin: error: step [0-9]*\.0 on $LOCAL_SLURM_NODE: --cpu-bind=.*map_cpu:0 conflicts with --pin-policy=numa-local" conflict.err &&
    test "$(grep -c "^pin: " conflict.err)" -eq 1 &&
    ! test -e ran
'

test_expect_success SLURM,PIN_SO 'the policy wins over --cpu-bind=none and --cpu-bind=cores' '
    srun --cpu-bind=none --pin-policy=numa-local -n1 -c1 grep Cpus_allowed_list /proc/self/status >cb1.out &&
    test "$(count_cpus "$(cpus_of cb1.out)")" -eq 1 &&
    srun --cpu-bind=cores --pin-policy=numa-local -n1 -c1 true &&
    srun --cpu-bind=map_cpu:0 --pin-policy=none -n1 -c1 true
'

test_expect_success SLURM,PIN_SO,CGROUP2 'nothing of ours is left under the cgroup tree' '
    wait_tree_empty >left.out &&
    test_must_be_empty left.out
'

test_expect_success SLURM,PIN_SO 'no claim is left in the state directory' '
    ls "$STATE/state/claims" >claims.out &&
    test_must_be_empty claims.out
'

test_expect_success SLURM,PIN_SO 'slurmctld and slurmd are still alive' '
    scontrol ping >ping.out &&
    grep "is UP" ping.out &&
    slurm_node_state >state.out &&
    grep -E "^(idle|mix|alloc|comp)" state.out
'

test_done
