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

# Slurm >= 25.05 drains the node when a required plugin's init fails,
# unless the plugin says slurm_spank_init_failure_mode=ESPANK_JOB_FAILURE
# (pin.so does, where the headers have it); pin.so's init does not fail in
# slurmstepd for a broken pin.conf anyway.  Either way: no drain, and the
# node takes the next job once pin.conf is good again.
test_expect_success SLURM,PIN_SO 'required, broken on the node only: the node is not drained; fixed, the next job runs' '
    scontrol show node "$LOCAL_SLURM_NODE" >node.out &&
    ! grep -E "State=[A-Z+]*(DRAIN|DOWN|FAIL)" node.out &&
    ! grep -E "Reason=[^ ]" node.out &&
    cp "$LOCAL_SLURM_DIR/etc/pin.conf" node-broken.conf &&
    test_when_finished "cp node-broken.conf \"$LOCAL_SLURM_DIR/etc/pin.conf\"" &&
    cp good.conf "$LOCAL_SLURM_DIR/etc/pin.conf" &&
    jobid=$(SLURM_CONF=$STATE/client-slurm.conf sbatch --parsable -o fixed.out --wrap "touch ran; srun -n1 true") &&
    slurm_wait_job "$jobid" &&
    test -e ran &&
    rm -f ran &&
    ! grep "pin: " fixed.out
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

# srun returns before slurmstepd has done its exit work (from Slurm 24.11
# that work first waits for slurmstepd to be root again): the steps above
# must be gone before StateDir is made untrusted, or their exit, which
# takes the node lock in StateDir, refuses it and leaves its job directory
# (seen on 24.11, 1 run in 3)
test_expect_success SLURM,PIN_SO 'a StateDir writable by others: the step fails and says why' '
    wait_tree_empty >before.out &&
    test_must_be_empty before.out &&
    mkdir -p "$STATE/state" &&
    chmod 0777 "$STATE/state" &&
    test_when_finished "chmod 0700 \"$STATE/state\"" &&
    test_must_fail srun --pin-policy=numa-local -n1 touch ran 2>statedir.err &&
    ! test -e ran &&
    grep "^pin: error: step [0-9]*\.0 on $LOCAL_SLURM_NODE: StateDir $STATE/state: writable by group or others (mode 0777)" statedir.err ||
    { cat statedir.err; false; }
'

# --- who may write pin.conf (pin.conf(5), "Ownership") --------------------

if id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null 2>&1; then
    test_set_prereq NOBODY
fi

# A pin.conf that nobody owns, which would have root make a directory of
# nobody's choosing: refused by srun, slurmstepd and slurm-pin check, in
# one line naming the file, its owner and mode and what is required.
test_expect_success SLURM,PIN_SO,NOBODY 'a pin.conf owned by nobody: refused in one line, nothing of it applied' '
    rm -f ran &&
    cat good.conf - >"$STATE/nobody-pin.conf" <<-EOF &&
	Profile=yes
	ProfileDir=$STATE/nobody-chose
	EOF
    chown nobody "$STATE/nobody-pin.conf" &&
    chmod 0644 "$STATE/nobody-pin.conf" &&
    echo "required $PIN_SO conf=$STATE/nobody-pin.conf" >"$(plugstack_conf)" &&
    test_must_fail srun --pin-policy=numa-local -n1 touch ran 2>owner.err &&
    ! test -e ran &&
    grep "pin: " owner.err >ours &&
    test "$(wc -l <ours)" -eq 1 &&
    grep "pin: bad configuration: $STATE/nobody-pin.conf: owner uid $(id -u nobody), mode 0644; pin.conf must be owned by root and writable by nobody else" ours &&
    ! test -e "$STATE/nobody-chose" ||
    { cat owner.err; false; }
'

test_expect_success SLURM,PIN_SO,NOBODY 'the same file on the node only: the step fails, slurmstepd made nothing' '
    rm -f ran &&
    echo "required $PIN_SO conf=$STATE/node-pin.conf" >"$STATE/client-plugstack.conf" &&
    cp good.conf "$STATE/node-pin.conf" &&
    test_must_fail env SLURM_CONF=$STATE/client-slurm.conf \
        srun --pin-policy=numa-local -n1 touch ran 2>node-owner.err &&
    ! test -e ran &&
    grep "slurm-pin disabled: bad configuration: $STATE/nobody-pin.conf: owner uid $(id -u nobody), mode 0644" node-owner.err &&
    ! test -e "$STATE/nobody-chose" ||
    { cat node-owner.err; false; }
'

test_expect_success SLURM,PIN_SO 'a pin.conf writable by its group, or in a directory others can write: refused' '
    rm -f ran &&
    cp good.conf "$STATE/group-pin.conf" &&
    chmod 0664 "$STATE/group-pin.conf" &&
    echo "required $PIN_SO conf=$STATE/group-pin.conf" >"$(plugstack_conf)" &&
    test_must_fail srun -n1 touch ran 2>group.err &&
    grep "pin: bad configuration: $STATE/group-pin.conf: owner uid 0, mode 0664; pin.conf must be owned by root" group.err &&
    mkdir -m 0777 "$STATE/open" &&
    cp good.conf "$STATE/open/pin.conf" &&
    echo "required $PIN_SO conf=$STATE/open/pin.conf" >"$(plugstack_conf)" &&
    test_must_fail srun -n1 touch ran 2>opendir.err &&
    grep "pin: bad configuration: $STATE/open/pin.conf: not trusted: $STATE/open: writable by group or others (mode 0777)" opendir.err &&
    ! test -e ran ||
    { cat group.err opendir.err; false; }
'

test_expect_success SLURM,PIN_SO,NOBODY 'slurm-pin check refuses the file nobody owns' '
    test_expect_code 1 slurm-pin check --conf "$STATE/nobody-pin.conf" >check.out 2>check.err &&
    cat check.err &&
    test "$(wc -l <check.err)" -eq 1 &&
    grep "$STATE/nobody-pin.conf: owner uid $(id -u nobody), mode 0644; pin.conf must be owned by root" check.err
'

test_expect_success SLURM,PIN_SO 'a root-owned pin.conf behind a symbolic link of root'"'"'s: accepted' '
    cat good.conf - >"$STATE/real-pin.conf" <<-\EOF &&
	DefaultPolicy=numa-local
	Verbose=yes
	EOF
    ln -sf "$STATE/real-pin.conf" "$STATE/link-pin.conf" &&
    echo "required $PIN_SO conf=$STATE/link-pin.conf" >"$(plugstack_conf)" &&
    srun -n1 -c1 true 2>link.err &&
    grep "^pin: task 0 on $LOCAL_SLURM_NODE: policy=numa-local cpus=" link.err
'

# StateDir and JournalDir under a sticky directory (/tmp) where a user
# planted a symbolic link: root makes nothing through it (mkdir -p checks
# each component before it makes the next).
test_expect_success SLURM,PIN_SO,NOBODY 'StateDir through a symlink nobody planted in a sticky directory: nothing made there' '
    rm -f ran &&
    chmod 0755 "$STATE" &&
    test_when_finished "chmod 0700 \"$STATE\"" &&
    mkdir -m 1777 "$STATE/sticky" &&
    mkdir -m 0777 "$STATE/elsewhere" &&
    setpriv --reuid=nobody --regid=nogroup --clear-groups \
        ln -s "$STATE/elsewhere" "$STATE/sticky/victim" &&
    test "$(stat -c %U "$STATE/sticky/victim")" = nobody &&
    cat >"$STATE/sticky-pin.conf" <<-EOF &&
	CgroupBase=$BASE
	TopologyCache=$STATE/topology.xml
	StateDir=$STATE/sticky/victim/state
	Accounting=yes
	JournalDir=$STATE/sticky/victim/journal
	DeliverCommand=none
	EOF
    echo "required $PIN_SO conf=$STATE/sticky-pin.conf" >"$(plugstack_conf)" &&
    test_must_fail srun --pin-policy=numa-local -n1 touch ran 2>sticky.err &&
    ! test -e ran &&
    ls -la "$STATE/elsewhere" &&
    test -z "$(ls -A "$STATE/elsewhere")" &&
    grep "StateDir $STATE/sticky/victim/state: above it, $STATE/sticky/victim: a symbolic link; refusing to follow it" sticky.err ||
    { cat sticky.err; false; }
'

# The job of the srun above ends after srun: slurmd then runs pin.so'"'"'s
# job epilog, which writes the job'"'"'s record in JournalDir (Accounting=yes,
# even with no step record: src/common/libstep/account.c), so it makes
# $STATE/sticky/victim/journal, and victim too once the link is gone.  Wait
# until no job is left (squeue lists COMPLETING jobs; a job leaves
# COMPLETING when its epilog has ended) before the link is replaced.
no_job_left () {
    _end=$(($(date +%s) + PIN_SLURM_TIMEOUT))
    while test -n "$(timeout 10 squeue -h -o %i)"; do
        test "$(date +%s)" -lt "$_end" || { squeue; return 1; }
        sleep 0.2
    done
}

test_expect_success SLURM,PIN_SO,NOBODY 'the same with a directory of nobody'"'"'s there: refused before anything is made in it' '
    rm -f ran &&
    chmod 0755 "$STATE" &&
    test_when_finished "chmod 0700 \"$STATE\"" &&
    no_job_left &&
    rm "$STATE/sticky/victim" &&
    setpriv --reuid=nobody --regid=nogroup --clear-groups \
        mkdir -m 0777 "$STATE/sticky/victim" &&
    test_must_fail srun --pin-policy=numa-local -n1 touch ran 2>sticky2.err &&
    ls -la "$STATE/sticky/victim" &&
    test -z "$(ls -A "$STATE/sticky/victim")" &&
    grep "StateDir $STATE/sticky/victim/state: above it, $STATE/sticky/victim: owned by uid $(id -u nobody)" sticky2.err ||
    { cat sticky2.err; false; }
'

# job_submit_pin.so reads DIR/etc/pin.conf beside slurm.conf, in
# slurmctld: a file nobody owns is refused there too (the last good rules
# stay), and a root-owned 0644 file is what it accepts.
JS_DIR="$PIN_JS_DIR"
test -r "$JS_DIR/job_submit_pin.so" && test_set_prereq JS_SO
SLURM_PLUGINDIR=$(dirname "$(find /usr/lib -name job_submit_lua.so -path '*slurm*' 2>/dev/null | head -1)")

test_expect_success SLURM,PIN_SO,JS_SO,NOBODY 'job_submit: restart with JobSubmitPlugins=pin and a root-owned 0644 pin.conf' '
    cat good.conf - >js.conf <<-\EOF &&
	AllowedPolicies=numa-local,none
	EOF
    echo "required $PIN_SO conf=$STATE/node-pin.conf" >plugstack.conf &&
    slurm_restart --plugstack plugstack.conf --pin-conf js.conf \
        --conf-extra "PluginDir=$SLURM_PLUGINDIR:$JS_DIR" \
        --conf-extra JobSubmitPlugins=pin &&
    chmod 0644 "$LOCAL_SLURM_DIR/etc/pin.conf" &&
    test "$(stat -c %U:%a "$LOCAL_SLURM_DIR/etc/pin.conf")" = root:644 &&
    grep "pin: loaded /.*/etc/pin.conf (0 partition lines)" "$LOCAL_SLURM_DIR/log/slurmctld.log"
'

test_expect_success SLURM,PIN_SO,JS_SO,NOBODY 'job_submit: the same pin.conf given to nobody is refused in one line' '
    chown nobody "$LOCAL_SLURM_DIR/etc/pin.conf" &&
    test_when_finished "chown root \"$LOCAL_SLURM_DIR/etc/pin.conf\"" &&
    jobid=$(sbatch --parsable -o /dev/null --wrap true) &&
    slurm_wait_job "$jobid" &&
    grep "pin: bad configuration: /.*/etc/pin.conf: owner uid $(id -u nobody), mode 0644; pin.conf must be owned by root and writable by nobody else (chown root, chmod go-w); keeping the last good rules" \
        "$LOCAL_SLURM_DIR/log/slurmctld.log"
'

test_expect_success SLURM,PIN_SO,CGROUP2 'nothing of ours is left under the cgroup tree' '
    wait_tree_empty >left.out &&
    test_must_be_empty left.out
'

test_expect_success SLURM,PIN_SO 'slurmctld and slurmd are still alive' '
    daemons_alive
'

test_done
