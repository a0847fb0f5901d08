#!/bin/sh

test_description='pin.so: the --pin-policy option in srun, sbatch and salloc

Starts a private Slurm (contrib/local-slurm.sh) whose plugstack.conf loads
the build'"'"'s pin.so, then checks the option in the help of all three
commands, the refusal of bad and disallowed values (exit status, one line
that names the value and the valid policies), and that the daemons survive.
The exported and undefined symbols of pin.so are checked by
src/plugins/spank/test/check-symbols.sh (make check).
'

. "$(dirname "$0")/sharness.sh"

slurm_require

pin_so_prereq

KNOWN="numa-local, numa-spread, cache-shared, random, dynamic, none"

# A private state directory without spaces (the trash directory has one).
STATE=$(mktemp -d /tmp/pin-t2000.XXXXXX) || exit 1
cleanup "rm -rf '$STATE'"
BASE=slurm-pin-t2000-$$
CGROOT=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
cleanup "rmdir '$CGROOT/$BASE' 2>/dev/null; true"

test_expect_success PIN_SO 'start a cluster with pin.so required' '
    cat >pin.conf <<-EOF &&
	CgroupBase=$BASE
	StateDir=$STATE/state
	TopologyCache=$STATE/topology.xml
	AllowedPolicies=none,numa-local,numa-spread,cache-shared
	ProfileDir=$STATE/profile
	JournalDir=$STATE/journal
	DeliverCommand=none
	EOF
    echo "required $PIN_SO conf=@PIN_CONF@" >plugstack.conf &&
    slurm_start --plugstack plugstack.conf --pin-conf pin.conf
'

for cmd in srun sbatch salloc; do
    test_expect_success SLURM,PIN_SO "$cmd --help lists --pin-policy" "
        $cmd --help >help.$cmd 2>&1 &&
        grep -e '--pin-policy=POLICY\[,verbose\]' help.$cmd &&
        grep -F 'numa-local' help.$cmd
    "
done

# refused CMD VALUE TEXT: CMD --pin-policy=VALUE exits non-zero before
# running anything, and exactly one line of ours (pin: ...) says TEXT.
refused () {
    cmd=$1 value=$2 text=$3
    case $cmd in
        srun) test_must_fail srun --pin-policy="$value" -n1 touch ran ;;
        sbatch) test_must_fail sbatch --pin-policy="$value" --wrap "touch ran" ;;
        salloc) test_must_fail salloc --pin-policy="$value" touch ran ;;
    esac >refused.out 2>refused.err &&
    grep "pin: " refused.err >ours &&
    test "$(wc -l <ours)" -eq 1 &&
    grep -F -e "$text" ours &&
    ! test -e ran ||
    { echo "stderr:"; cat refused.err; false; }
}

for cmd in srun sbatch salloc; do
    test_expect_success SLURM,PIN_SO "$cmd refuses an unknown policy" "
        refused $cmd numa-locl \
            \"--pin-policy=numa-locl: unknown policy 'numa-locl'; known: $KNOWN\"
    "
    test_expect_success SLURM,PIN_SO "$cmd refuses an unknown flag" "
        refused $cmd numa-local,loud \"unknown flag 'loud'\"
    "
    test_expect_success SLURM,PIN_SO "$cmd refuses a policy the site does not allow" "
        refused $cmd random \
            \"--pin-policy=random: policy 'random' is not allowed on this cluster; allowed: numa-local, numa-spread, cache-shared, none\"
    "
done

test_expect_success SLURM,PIN_SO 'an empty value is refused' '
    refused srun "" "--pin-policy=: empty value"
'

test_expect_success SLURM,PIN_SO 'our line carries no control characters' '
    refused srun "$(printf "x\033[2Jy")" "--pin-policy=x?[2Jy: unknown policy" &&
    ! grep "$(printf "\033")" ours
'

test_expect_success SLURM,PIN_SO 'an over-long value is refused and cut' '
    long=$(printf "%0200d" 0) &&
    refused srun "$long" "value longer than 64 characters" &&
    test $(wc -c <ours) -lt 400
'

test_expect_success SLURM,PIN_SO 'a bad value in SLURM_SPANK_ environment is refused too' '
    SLURM_SPANK__SLURM_SPANK_OPTION_pin_pin_policy=bogus \
        test_must_fail srun -n1 touch ran 2>env.err &&
    grep -F "unknown policy '"'"'bogus'"'"'" env.err &&
    ! test -e ran
'

test_expect_success SLURM,PIN_SO 'good values are accepted by all three commands' '
    srun --pin-policy=none -n1 true &&
    srun --pin-policy=numa-local,verbose -n1 true 2>verbose.err &&
    grep "^pin: task 0 on " verbose.err &&
    salloc --pin-policy=cache-shared true &&
    jobid=$(sbatch --parsable --pin-policy=numa-spread -o sbatch.out --wrap "echo done") &&
    test -n "$jobid"
'

# --pin-profile[=INTERVAL]: Slurm 22.05 hands "--pin-profile" alone on
# as the text (null) through the job's environment (issue 18, item 1).
test_expect_success SLURM,PIN_SO 'srun --pin-profile without a value runs the step' '
    srun --pin-profile -n1 -c1 sh -c "echo step-ran" >p0.out 2>p0.err &&
    grep "^step-ran$" p0.out &&
    ! grep -F "(null)" p0.err
'

test_expect_success SLURM,PIN_SO 'sbatch --pin-profile without a value: the job and its srun run' '
    jobid=$(sbatch --parsable --pin-profile -n1 -c1 -o p1.out \
            --wrap "srun -n1 -c1 echo step-ran") &&
    slurm_wait_job "$jobid" &&
    cat p1.out &&
    grep "^step-ran$" p1.out &&
    ! grep -F "(null)" p1.out &&
    test -s "$STATE/profile/$jobid.batch.$LOCAL_SLURM_NODE.jsonl" &&
    test -s "$STATE/profile/$jobid.0.$LOCAL_SLURM_NODE.jsonl"
'

test_expect_success SLURM,PIN_SO 'salloc --pin-profile without a value: its srun runs' '
    salloc -n1 -c1 --pin-profile srun -n1 -c1 echo step-ran \
        >p2.out 2>p2.err &&
    cat p2.err &&
    grep "^step-ran$" p2.out &&
    ! grep -F "(null)" p2.err
'

# --pin-policy in every place Slurm takes it: srun, the sbatch command
# line, an #SBATCH line, salloc; the batch step and the srun inside the
# job both print the verbose line.
cat >policy.sh <<'EOF'
#!/bin/sh
#SBATCH --pin-policy=cache-shared,verbose
srun -n1 -c1 true
EOF

test_expect_success SLURM,PIN_SO '--pin-policy from an #SBATCH line reaches the job and its steps' '
    jobid=$(sbatch --parsable -n1 -c1 -o pol1.out policy.sh) &&
    slurm_wait_job "$jobid" &&
    cat pol1.out &&
    test "$(grep -c "^pin: task 0 on .*: policy=cache-shared " pol1.out)" -eq 2
'

test_expect_success SLURM,PIN_SO '--pin-policy on the sbatch command line reaches the job and its steps' '
    jobid=$(sbatch --parsable -n1 -c1 -o pol2.out \
            --pin-policy=numa-local,verbose --wrap "srun -n1 -c1 true") &&
    slurm_wait_job "$jobid" &&
    cat pol2.out &&
    test "$(grep -c "^pin: task 0 on .*: policy=numa-local " pol2.out)" -eq 2
'

test_expect_success SLURM,PIN_SO '--pin-policy given to salloc reaches its srun' '
    salloc -n1 -c1 --pin-policy=numa-spread,verbose srun -n1 -c1 true \
        2>pol3.err &&
    grep "^pin: task 0 on .*: policy=numa-spread " pol3.err
'

test_expect_success SLURM,PIN_SO 'slurmctld and slurmd are still alive' '
    scontrol ping >ping.out &&
    grep "is UP" ping.out &&
    slurm_node_state >state.out &&
    grep -E "^(idle|mix|alloc|comp)" state.out
'

test_done
