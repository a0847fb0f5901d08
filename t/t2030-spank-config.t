#!/bin/sh

test_description='pin.so: site configuration and what a broken one does

Starts a private Slurm with pin.so required and a broken pin.conf:
slurmd must start anyway; srun, sbatch and salloc refuse to run with one
line naming the file, the line and the key.  When only the compute node
has the broken file (the commands read a good copy), the step fails with
the reason on its stderr and a batch job fails without draining the node.
With optional, everything runs unpinned and the reason is logged.  Also:
plugstack.conf arguments, DefaultPolicy and Verbose from pin.conf.
'

. "$(dirname "$0")/sharness.sh"

slurm_require

pin_so_prereq
CGROOT=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
test -n "$CGROOT" && test_set_prereq CGROUP2

STATE=$(mktemp -d /tmp/pin-t2030.XXXXXX) || exit 1
cleanup "rm -rf '$STATE'"
BASE=slurm-pin-t2030-$$
cleanup "rmdir '$CGROOT/$BASE' 2>/dev/null; true"

daemons_alive () {
    scontrol ping >ping.out &&
    grep "is UP" ping.out &&
    slurm_node_state >state.out &&
    grep -E "^(idle|mix|alloc|comp)" state.out
}

cat >good.conf <<EOF
CgroupBase=$BASE
StateDir=$STATE/state
TopologyCache=$STATE/topology.xml
EOF
cat good.conf - >broken.conf <<EOF
Bogus=1
EOF
BROKEN_LINE="etc/pin.conf:4: Bogus: unknown key; known: "

test_expect_success PIN_SO 'slurmd starts with pin.so required and a broken pin.conf' '
    echo "required $PIN_SO conf=@PIN_CONF@" >plugstack.conf &&
    slurm_start --plugstack plugstack.conf --pin-conf broken.conf &&
    daemons_alive
'

test_expect_success SLURM,PIN_SO 'slurmd logged why' '
    grep "pin: bad configuration: .*$BROKEN_LINE" "$LOCAL_SLURM_DIR/log/slurmd.log"
'

# refused CMD...: CMD exits non-zero without running "touch ran", and
# exactly one line of ours names the file, the line and the key.
refused () {
    test_must_fail "$@" >refused.out 2>refused.err &&
    grep "pin: " refused.err >ours &&
    test "$(wc -l <ours)" -eq 1 &&
    grep "pin: bad configuration: /.*$BROKEN_LINE" ours &&
    ! test -e ran ||
    { echo "stderr:"; cat refused.err; false; }
}

test_expect_success SLURM,PIN_SO 'required: srun refuses to run, one line names file and line' '
    refused srun -n1 touch ran
'

test_expect_success SLURM,PIN_SO 'required: sbatch refuses the job' '
    refused sbatch --wrap "touch ran"
'

test_expect_success SLURM,PIN_SO 'required: salloc refuses the allocation' '
    refused salloc touch ran
'

# The commands read a good copy (their own slurm.conf and plugstack.conf),
# slurmd and slurmstepd the broken file: a compute node out of step.
test_expect_success SLURM,PIN_SO 'make a client configuration with a good pin.conf' '
    cp good.conf "$STATE/client-pin.conf" &&
    echo "required $PIN_SO conf=$STATE/client-pin.conf" >"$STATE/client-plugstack.conf" &&
    sed "s|^PlugStackConfig=.*|PlugStackConfig=$STATE/client-plugstack.conf|" \
        "$SLURM_CONF" >"$STATE/client-slurm.conf" &&
    grep "^PlugStackConfig=$STATE/client-plugstack.conf$" "$STATE/client-slurm.conf"
'

test_expect_success SLURM,PIN_SO 'required, broken on the node only: the step fails with the reason' '
    SLURM_CONF=$STATE/client-slurm.conf test_must_fail srun -n1 touch ran 2>node.err &&
    ! test -e ran &&
    grep "^pin: " node.err >ours &&
    test "$(wc -l <ours)" -eq 1 &&
    grep "^pin: step [0-9]*\.0 on $LOCAL_SLURM_NODE: slurm-pin disabled: bad configuration: .*$BROKEN_LINE" ours
'

test_expect_success SLURM,PIN_SO 'required, broken on the node only: a batch job fails, the node stays up' '
    jobid=$(SLURM_CONF=$STATE/client-slurm.conf sbatch --parsable -o batch.out --wrap "touch ran") &&
    test_expect_code 1 slurm_wait_job "$jobid" >jobstate &&
    echo FAILED >jobstate.expected &&
    test_cmp jobstate.expected jobstate &&
    ! test -e ran &&
    grep "^pin: step $jobid.batch on $LOCAL_SLURM_NODE: slurm-pin disabled: bad configuration" batch.out &&
    daemons_alive
'

# The cluster's plugstack.conf, as slurm.conf names it.
plugstack_conf () {
    sed -n "s/^PlugStackConfig=//p" "$SLURM_CONF"
}

test_expect_success SLURM,PIN_SO 'switch to optional' '
    sed -i "s/^required /optional /" "$(plugstack_conf)" &&
    grep "^optional " "$(plugstack_conf)"
'

test_expect_success SLURM,PIN_SO 'optional: srun runs unpinned and says why' '
    srun --pin-policy=numa-local -n1 touch ran 2>opt.err &&
    test -e ran &&
    rm -f ran &&
    grep "pin: bad configuration: .*$BROKEN_LINE" opt.err &&
    grep "^pin: step [0-9]*\.0 on $LOCAL_SLURM_NODE: slurm-pin disabled" opt.err
'

test_expect_success SLURM,PIN_SO 'optional: a batch job runs, slurmd logs that the plugin is disabled' '
    jobid=$(sbatch --parsable -o optbatch.out --wrap "touch ran") &&
    slurm_wait_job "$jobid" &&
    test -e ran &&
    rm -f ran &&
    grep "pin: step $jobid.batch: slurm-pin disabled: bad configuration: .*$BROKEN_LINE" \
        "$LOCAL_SLURM_DIR/log/slurmd.log"
'

test_expect_success SLURM,PIN_SO 'a bad plugstack.conf argument names itself' '
    cp good.conf "$STATE/node-pin.conf" &&
    echo "required $PIN_SO conf=$STATE/node-pin.conf default_policy=numa-locl" \
        >"$(plugstack_conf)" &&
    test_must_fail srun -n1 touch ran 2>arg.err &&
    ! test -e ran &&
    grep "pin: " arg.err >ours &&
    test "$(wc -l <ours)" -eq 1 &&
    grep "pin: bad configuration: plugstack.conf argument .default_policy=numa-locl.: unknown policy" ours
'

test_expect_success SLURM,PIN_SO 'DefaultPolicy and Verbose from pin.conf apply without the option' '
    echo "required $PIN_SO conf=$STATE/node-pin.conf" >"$(plugstack_conf)" &&
    cat good.conf - >"$STATE/node-pin.conf" <<-\EOF &&
	DefaultPolicy=numa-local
	Verbose=yes
	EOF
    srun -n1 -c1 true 2>default.err &&
    grep "^pin: task 0 on $LOCAL_SLURM_NODE: policy=numa-local cpus=" default.err
'

test_expect_success SLURM,PIN_SO 'plugstack.conf arguments override pin.conf' '
    echo "required $PIN_SO conf=$STATE/node-pin.conf default_policy=cache-shared" \
        >"$(plugstack_conf)" &&
    srun -n1 -c1 true 2>override.err &&
    grep "^pin: task 0 on $LOCAL_SLURM_NODE: policy=cache-shared cpus=" override.err
'

test_expect_success SLURM,PIN_SO 'a StateDir writable by others: the step fails and says why' '
    mkdir -p "$STATE/state" &&
    chmod 0777 "$STATE/state" &&
    test_when_finished "chmod 0700 \"$STATE/state\"" &&
    test_must_fail srun --pin-policy=numa-local -n1 touch ran 2>statedir.err &&
    ! test -e ran &&
    grep "^pin: error: step [0-9]*\.0 on $LOCAL_SLURM_NODE: StateDir $STATE/state: writable by group or others (mode 0777)" statedir.err ||
    { cat statedir.err; false; }
'

test_expect_success SLURM,PIN_SO,CGROUP2 'nothing of ours is left under the cgroup tree' '
    wait_tree_empty >left.out &&
    test_must_be_empty left.out
'

test_expect_success SLURM,PIN_SO 'slurmctld and slurmd are still alive' '
    daemons_alive
'

test_done
