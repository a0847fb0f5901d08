#!/bin/sh

test_description='pin.so never fails a step that Slurm alone would run (issue 10)

With the policy given by the user (--pin-policy=numa-local) and by the site
(DefaultPolicy=numa-local in pin.conf): an overcommitted step (srun -O, more
tasks than CPUs) runs with tasks sharing the allocated CPUs
(oversubscribed) and srun exits with the program'"'"'s code; a step attaching
to a running job whose steps hold every CPU (srun --jobid=J --overlap) and
a third concurrent --overlap step in a 2-CPU job run on busy CPUs
(shared-with-step).  With Oversubscribe=refuse and ShareWithSteps=refuse
they fail with one clear line.  Nothing is left in the claims directory.
Needs at least 2 CPUs.

Which overcommitted steps Slurm runs depends on its release: 22.05 runs
srun -O -n 3 -c 1 on a 2-CPU node, 24.11 and 26.05 leave it pending for
ever (an explicit -c counts every task'"'"'s CPU), while srun -O -n 3 runs
on all of them.  So the file first asks Slurm alone (no plugstack) which
forms it runs, and pin.so must then run each of those the same way.
'

. "$(dirname "$0")/sharness.sh"

slurm_require

pin_so_prereq
test "$(nproc)" -ge 2 && test_set_prereq TWO_CPUS
NCPUS=$(nproc)

STATE=$(mktemp -d /tmp/pin-t2050.XXXXXX) || exit 1
cleanup "rm -rf '$STATE'"
BASE=slurm-pin-t2050-$$

cpus_of () {
    sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$1"
}

count_cpus () {
    echo "$1" | tr ',' '\n' | awk -F- '
        /^[0-9]+$/ { n++ }
        /^[0-9]+-[0-9]+$/ { n += $2 - $1 + 1 }
        END { print n + 0 }'
}

# every CPU of list $1 is one of the node's 0..NCPUS-1
inside_node () {
    for c in $(echo "$1" | tr ',' ' '); do
        case $c in
            *-*) lo=${c%-*} hi=${c#*-} ;;
            *) lo=$c hi=$c ;;
        esac
        test "$lo" -ge 0 && test "$hi" -lt "$NCPUS" || return 1
    done
}

claims_empty () {
    i=0
    while test $i -lt 50 && test -n "$(ls "$STATE/state/claims" 2>/dev/null)"; do
        sleep 0.2
        i=$((i + 1))
    done
    ls "$STATE/state/claims" 2>/dev/null >claims.left
    test_must_be_empty claims.left
}

# The job: NCPUS one-CPU --overlap steps that hold every CPU until
# "release" (bounded), then a third step beside them; its output and exit
# code go to DIR/third.{out,err,rc}; DIR/held when all steps run.
# $1: directory, $2: the srun policy option or "" (site default).
cat >holder.sh <<'EOF'
#!/bin/sh
d=$1 pol=$2 n=$3
mkdir -p "$d"
wait_for () {
    i=0
    for f in "$@"; do
        while ! test -e "$f" && test $i -lt 600; do
            sleep 0.1
            i=$((i + 1))
        done
    done
}
s=1 ups=""
while test $s -le $n; do
    srun --overlap -n1 -c1 $pol sh -c "
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
srun --overlap -n1 -c1 $pol sh -c 'grep Cpus_allowed_list /proc/self/status; exit 4' \
    >"$d/third.out" 2>"$d/third.err"
echo $? >"$d/third.rc"
touch "$d/held"
wait_for "$d/release"
wait
EOF
chmod +x holder.sh

# start_cluster NAME EXTRA-PIN.CONF-LINES...
start_cluster () {
    name=$1
    shift
    {
        echo "CgroupBase=$BASE"
        echo "StateDir=$STATE/state"
        echo "TopologyCache=$STATE/topology.xml"
        echo "DefaultPolicy=numa-local"
        echo "Verbose=yes"
        for l in "$@"; do echo "$l"; done
    } >pin-$name.conf &&
    echo "required $PIN_SO conf=@PIN_CONF@" >plugstack.conf &&
    slurm_start --plugstack plugstack.conf --pin-conf pin-$name.conf
}

wait_file () {
    i=0
    while ! test -e "$1" && test $i -lt $((PIN_SLURM_TIMEOUT * 10)); do
        sleep 0.1
        i=$((i + 1))
    done
    test -e "$1"
}

# The overcommitted forms probed, one per line: each runs NCPUS + 1 tasks.
printf '%s\n' "-O -n $((NCPUS + 1)) -c 1" "-O -n $((NCPUS + 1))" >forms.all

test_expect_success TWO_CPUS 'Slurm alone (no plugstack): which srun -O forms run' '
    slurm_start &&
    test_when_finished slurm_stop &&
    : >forms.ok &&
    while read -r form; do
        # a form Slurm leaves pending is cut short (PIN_CLIENT_TIMEOUT)
        if PIN_CLIENT_TIMEOUT=20 srun $form sh -c \
            "grep Cpus_allowed_list /proc/self/status; exit 3" \
            </dev/null >alone.out 2>alone.err; then rc=0; else rc=$?; fi &&
        say "Slurm alone: srun $form: exit $rc, $(grep -c ^Cpus_allowed_list alone.out) tasks" &&
        if test $rc = 3; then echo "$form" >>forms.ok; fi || return 1
    done <forms.all &&
    cat forms.ok &&
    # srun -O -n NCPUS+1 runs on every release: the test needs one form
    grep -x -- "-O -n $((NCPUS + 1))" forms.ok
'

test_expect_success PIN_SO,TWO_CPUS 'start a cluster: DefaultPolicy=numa-local, defaults allow' '
    start_cluster allow
'

for how in user site; do
    if test $how = user; then POL=--pin-policy=numa-local; else POL=; fi

    test_expect_success SLURM,PIN_SO,TWO_CPUS "$how policy: each srun -O form Slurm alone runs runs oversubscribed, exit code kept" "
        test -s forms.ok &&
        while read -r form; do
            echo \"srun \$form $POL\" &&
            test_expect_code 3 srun \$form $POL sh -c \
                'grep Cpus_allowed_list /proc/self/status; exit 3' \
                </dev/null >over-$how.out 2>over-$how.err &&
            cat over-$how.err &&
            test \$(grep -c ^Cpus_allowed_list over-$how.out) -eq $((NCPUS + 1)) &&
            for c in \$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' over-$how.out); do
                test \"\$(count_cpus \"\$c\")\" -eq 1 &&
                inside_node \"\$c\" || return 1
            done &&
            grep \"^pin: task [0-9]* on .*: policy=numa-local cpus=.* fallback=oversubscribed\" over-$how.err &&
            ! grep \"^pin: error\" over-$how.err || return 1
        done <forms.ok
    "

    test_expect_success SLURM,PIN_SO,TWO_CPUS "$how policy: a third --overlap step beside steps holding every CPU runs" "
        jobid=\$(sbatch --parsable -N1 -n1 -c $NCPUS -o hold-$how.out holder.sh hold-$how '$POL' $NCPUS) &&
        echo \$jobid >hold-$how.job &&
        wait_file hold-$how/held &&
        cat hold-$how/third.err &&
        test \"\$(cat hold-$how/third.rc)\" -eq 4 &&
        c=\$(cpus_of hold-$how/third.out) &&
        test \"\$(count_cpus \"\$c\")\" -eq 1 &&
        inside_node \"\$c\" &&
        grep \"^pin: task 0 on .*: policy=numa-local cpus=\$c .*fallback=shared-with-step\" hold-$how/third.err
    "

    test_expect_success SLURM,PIN_SO,TWO_CPUS "$how policy: srun --jobid=J --overlap attaches to that full job" "
        jobid=\$(cat hold-$how.job) &&
        test_expect_code 5 srun --jobid=\$jobid --overlap -n1 -c1 $POL sh -c \
            'grep Cpus_allowed_list /proc/self/status; exit 5' \
            >attach-$how.out 2>attach-$how.err &&
        cat attach-$how.err &&
        c=\$(cpus_of attach-$how.out) &&
        test \"\$(count_cpus \"\$c\")\" -eq 1 &&
        inside_node \"\$c\" &&
        grep \"fallback=shared-with-step\" attach-$how.err &&
        touch hold-$how/release &&
        slurm_wait_job \$jobid
    "
done

test_expect_success SLURM,PIN_SO,TWO_CPUS 'slurmd logged each fallback' '
    grep "pin: step [0-9]*\.[0-9]*.*: placed oversubscribed" "$LOCAL_SLURM_DIR/log/slurmd.log" &&
    grep "pin: step [0-9]*\.[0-9]*.*: placed shared-with-step" "$LOCAL_SLURM_DIR/log/slurmd.log"
'

test_expect_success SLURM,PIN_SO,TWO_CPUS 'no claim is left behind' '
    claims_empty
'

test_expect_success PIN_SO,TWO_CPUS 'restart: Oversubscribe=refuse, ShareWithSteps=refuse' '
    slurm_stop &&
    start_cluster refuse Oversubscribe=refuse ShareWithSteps=refuse
'

for how in user site; do
    if test $how = user; then POL=--pin-policy=numa-local; else POL=; fi

    test_expect_success SLURM,PIN_SO,TWO_CPUS "$how policy: Oversubscribe=refuse fails srun -O with one line" "
        ! srun -O -n $((NCPUS + 1)) $POL sh -c 'touch ran-$how; exit 3' \
            >rover-$how.out 2>rover-$how.err &&
        cat rover-$how.err &&
        ! test -e ran-$how &&
        grep \"^pin: \" rover-$how.err | sort -u >rover-$how.ours &&
        test \"\$(wc -l <rover-$how.ours)\" -eq 1 &&
        grep \"^pin: error: step [0-9]*\\.[0-9]* on \$LOCAL_SLURM_NODE: request of $((NCPUS + 1)) tasks x 1 CPU = $((NCPUS + 1)) CPUs exceeds .*; refused by Oversubscribe=refuse in pin.conf\" rover-$how.ours
    "

    test_expect_success SLURM,PIN_SO,TWO_CPUS "$how policy: ShareWithSteps=refuse fails the third --overlap step with one line" "
        jobid=\$(sbatch --parsable -N1 -n1 -c $NCPUS -o rhold-$how.out holder.sh rhold-$how '$POL' $NCPUS) &&
        wait_file rhold-$how/held &&
        cat rhold-$how/third.err &&
        test \"\$(cat rhold-$how/third.rc)\" -ne 0 &&
        ! test -s rhold-$how/third.out &&
        grep \"^pin: \" rhold-$how/third.err | sort -u >rthird-$how.ours &&
        test \"\$(wc -l <rthird-$how.ours)\" -eq 1 &&
        grep \"^pin: error: step .*exceeds .*; other running steps hold cpus .*; refused by ShareWithSteps=refuse in pin.conf\" rthird-$how.ours &&
        touch rhold-$how/release &&
        slurm_wait_job \$jobid
    "
done

test_expect_success SLURM,PIN_SO,TWO_CPUS 'no claim is left behind after the refusals' '
    claims_empty
'

test_done
