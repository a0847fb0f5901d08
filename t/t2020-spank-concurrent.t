#!/bin/sh

test_description='pin.so: concurrent steps of one allocation get disjoint CPUs

A job plays the whole-node pilot: it starts two "srun --overlap -c 1
--pin-policy=numa-local" steps in the same instant, each of which records
its CPUs and waits until the other runs too (a file barrier, bounded), so
the two certainly overlap in time.  Slurm gives both the same core; the
plugin must give them different CPUs (lock + claims).  A third step while
both run finds no free CPU and, with ShareWithSteps=refuse (the default
allow shares, see t2050), fails with a clear message; once they ended,
a new step gets a CPU again.  A claim left by a dead slurmstepd holds
nothing, and what a killed slurmstepd left in the cgroup tree is removed
when its job ends (PrologFlags=Contain).  Needs at least 2 CPUs.
'

. "$(dirname "$0")/sharness.sh"

slurm_require

pin_so_prereq
test "$(nproc)" -ge 2 && test_set_prereq TWO_CPUS
CGROOT=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
test -n "$CGROOT" && test_set_prereq CGROUP2

STATE=$(mktemp -d /tmp/pin-t2020.XXXXXX) || exit 1
cleanup "rm -rf '$STATE'"
BASE=slurm-pin-t2020-$$
cleanup "rmdir '$CGROOT/$BASE' 2>/dev/null; true"
NCPUS=$(nproc)

# The pilot: ROUNDS rounds of NCPUS concurrent one-CPU steps (started
# together, each waiting for all the others), the first round with an
# extra step while all of them run, then one more step alone.
cat >pilot.sh <<'EOF'
#!/bin/sh
rounds=$1 n=$2
# wait_for FILE...: until every FILE exists, at most 60 s.
wait_for () {
    i=0
    for f in "$@"; do
        while ! test -e "$f" && test $i -lt 600; do
            sleep 0.1
            i=$((i + 1))
        done
    done
}
r=1
while test $r -le $rounds; do
    d=round.$r   # relative: the trash directory has a space
    mkdir -p "$d"
    s=1 ups=""
    while test $s -le $n; do
        srun --overlap -n1 -c1 --pin-policy=numa-local sh -c "
            grep Cpus_allowed_list /proc/self/status >$d/$s.cpus
            touch $d/$s.up
            i=0
            while ! test -e $d/release && test \$i -lt 600; do
                sleep 0.1
                i=\$((i + 1))
            done" 2>"$d/$s.err" &
        ups="$ups $d/$s.up"
        s=$((s + 1))
    done
    wait_for $ups
    if test $r = 1; then
        srun --overlap -n1 -c1 --pin-policy=numa-local \
            touch "$d/extra.ran" >"$d/extra.out" 2>"$d/extra.err"
        echo $? >"$d/extra.rc"
    fi
    touch "$d/release"
    wait
    r=$((r + 1))
done
srun --overlap -n1 -c1 --pin-policy=numa-local grep Cpus_allowed_list /proc/self/status \
    >after.cpus 2>after.err
echo $? >after.rc
EOF
chmod +x pilot.sh

ROUNDS=3

test_expect_success PIN_SO,TWO_CPUS 'start a cluster with pin.so' '
    cat >pin.conf <<-EOF &&
	CgroupBase=$BASE
	StateDir=$STATE/state
	TopologyCache=$STATE/topology.xml
	ShareWithSteps=refuse
	EOF
    echo "required $PIN_SO conf=@PIN_CONF@" >plugstack.conf &&
    slurm_start --plugstack plugstack.conf --pin-conf pin.conf \
        --conf-extra PrologFlags=Contain
'

test_expect_success SLURM,PIN_SO,TWO_CPUS 'run the pilot job on the whole node' '
    jobid=$(sbatch --parsable -N1 -n1 -c "$NCPUS" -o pilot.out pilot.sh "$ROUNDS" "$NCPUS") &&
    slurm_wait_job "$jobid" &&
    cat pilot.out &&
    test -e after.rc
'

r=1
while test $r -le $ROUNDS; do
    test_expect_success SLURM,PIN_SO,TWO_CPUS "round $r: $NCPUS concurrent --overlap steps got one CPU each, all different" "
        s=1 &&
        : >all.$r &&
        while test \$s -le $NCPUS; do
            test -e round.$r/\$s.up &&
            c=\$(cpus_of round.$r/\$s.cpus) &&
            test \"\$(count_cpus \"\$c\")\" -eq 1 &&
            echo \"\$c\" >>all.$r &&
            s=\$((s + 1)) || return 1
        done &&
        test \"\$(sort -u all.$r | wc -l)\" -eq $NCPUS
    "
    r=$((r + 1))
done

test_expect_success SLURM,PIN_SO,TWO_CPUS 'a step while every CPU is held fails with one clear line' '
    test "$(cat round.1/extra.rc)" -ne 0 &&
    ! test -e round.1/extra.ran &&
    grep "^pin: " round.1/extra.err >extra.ours &&
    test "$(wc -l <extra.ours)" -eq 1 &&
    grep "^pin: error: step [0-9]*\.[0-9]* on $LOCAL_SLURM_NODE: .*exceeds.*; other running steps hold cpus .*; refused by ShareWithSteps=refuse in pin.conf" extra.ours
'

test_expect_success SLURM,PIN_SO,TWO_CPUS 'once they ended, a new step gets a CPU again' '
    test "$(cat after.rc)" -eq 0 &&
    test "$(count_cpus "$(cpus_of after.cpus)")" -eq 1
'

test_expect_success SLURM,PIN_SO,TWO_CPUS 'a claim of a dead slurmstepd holds nothing' '
    sh -c "echo \$\$ >dead.pid" &&
    dead=$(cat dead.pid) &&
    ! kill -0 "$dead" 2>/dev/null &&
    claim="$STATE/state/claims/job_999999.step_0" &&
    echo "$dead 0-$((NCPUS - 1))" >"$claim" &&
    chmod 0600 "$claim" &&
    srun --pin-policy=numa-local -n1 -c1 grep Cpus_allowed_list /proc/self/status >stale.out &&
    test "$(count_cpus "$(cpus_of stale.out)")" -eq 1 &&
    ! test -e "$claim"
'

test_expect_success SLURM,PIN_SO,TWO_CPUS,CGROUP2 'a killed slurmstepd leaves nothing once its job ends' '
    jobid=$(sbatch --parsable -n1 -c "$NCPUS" -o crash.out --wrap \
        "srun --overlap -n1 -c1 --pin-policy=numa-local sh -c \"touch crash.up; sleep 600\"") &&
    i=0 &&
    while ! test -e crash.up && test $i -lt $((PIN_SLURM_TIMEOUT * 5)); do
        sleep 0.2; i=$((i + 1))
    done &&
    claim="$STATE/state/claims/job_$jobid.step_0" &&
    stepd=$(cut -d" " -f1 "$claim") &&
    test "$(cat /proc/$stepd/comm)" = slurmstepd &&
    tasks=$(cat "$CGROOT/$BASE/job_$jobid/step_0/task_0/cgroup.procs") &&
    test -n "$tasks" &&
    kill -9 $stepd $tasks &&
    srun --jobid="$jobid" --overlap -n1 -c1 --pin-policy=numa-local \
        grep Cpus_allowed_list /proc/self/status >crash.cpus &&
    test "$(count_cpus "$(cpus_of crash.cpus)")" -eq 1 &&
    scancel "$jobid" &&
    test_expect_code 1 slurm_wait_job "$jobid" >crash.state &&
    wait_tree_empty >crash.left &&
    test_must_be_empty crash.left &&
    grep "pin: job $jobid: removed leftovers of crashed steps" \
        "$LOCAL_SLURM_DIR/log/slurmd.log"
'

test_expect_success SLURM,PIN_SO,TWO_CPUS,CGROUP2 'nothing of ours is left under the cgroup tree' '
    wait_tree_empty >left.out &&
    test_must_be_empty left.out
'

test_expect_success SLURM,PIN_SO,TWO_CPUS 'no claim is left' '
    ls "$STATE/state/claims" >claims.out &&
    test_must_be_empty claims.out
'

test_expect_success SLURM,PIN_SO,TWO_CPUS 'slurmctld and slurmd are still alive' '
    scontrol ping >ping.out &&
    grep "is UP" ping.out &&
    slurm_node_state >state.out &&
    grep -E "^(idle|mix|alloc|comp)" state.out
'

test_done
