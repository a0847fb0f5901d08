#!/bin/sh
# vm-slurm-modes: cgroup
# shellcheck disable=SC2016,SC2034,SC1091  # sharness: test bodies are single-quoted

test_description='a policy experiment in the guest: arms none and numa-local

Runs inside the qemu guest (t/vm/run-tests.sh; 2 NUMA nodes, SMT) with
JobSubmitPlugins=pin and pin.so, and a pin.conf experiment on the
partition (doc/experiments.md):

    PartitionName=debug Experiment=vmexp ExperimentPolicies=none,numa-local
        ExperimentShare=1 ExperimentJobNames=exp-*

A batch of real jobs of two kinds (job names exp-fork, -c 2, and exp-mem,
-c 4), each a CPU- and memory-heavy workload with many short-lived
processes like seed 001'"'"'s (t/vm/expload.c: children forked at 10-20 Hz
while two workers touch 64-160 MiB, a few seconds), plus a job giving
--pin-policy (never enrolled), a job the name filter leaves out, and one
step that opts out with its own --pin-policy.  Asserted: every enrolled
job carries its arm in AdminComment and Comment; every step record
(slurm-pin acct -o JobIDRaw,PinPolicy,Experiment,Arm) carries the
experiment and the job'"'"'s arm, the policy run is the arm except for the
opting-out step, numa-local steps got one NUMA node; the arms are
balanced within each kind; slurm-pin eff names the arm; slurm-pin
experiment report runs and shows both arms.  What the guest can and
cannot tell about the verdict (emulated NUMA has no memory distance) is
printed as notes, with a measurement, never as a pass.'

SHARNESS_TEST_SRCDIR=${PIN_SRCDIR:-/nonexistent}/t
SHARNESS_TEST_EXTENSION="sh"
export SHARNESS_TEST_SRCDIR SHARNESS_TEST_EXTENSION
if ! test -r "$SHARNESS_TEST_SRCDIR/sharness.sh"; then
    echo "1..0 # SKIP PIN_SRCDIR is not set: run this with t/vm/run-tests.sh"
    exit 0
fi
. "$SHARNESS_TEST_SRCDIR/sharness.sh"
. "$PIN_SRCDIR/t/vm/guest-lib.sh"

JS_DIR=${PIN_BUILDDIR:-/nonexistent}/src/plugins/job_submit/.libs
SLURM_PLUGINDIR=$(dirname "$(find /usr/lib -name job_submit_lua.so -path '*slurm*' 2>/dev/null | head -1)")
EXP=vmexp
W=$(mktemp -d /tmp/pin-t70.XXXXXX) && chmod 1777 "$W" || exit 1
export W

test_expect_success 'build the workload; it forks short-lived children and touches its memory' '
    start=$(vm_now) &&
    cc -O1 -o "$W/expload" "$PIN_SRCDIR/t/vm/expload.c" &&
    vm_record_time "t70: build the workload" "$start" &&
    "$W/expload" 2 16 1 20 >alone.out &&
    cat alone.out &&
    forks=$(sed -n "s/.* forks=\([0-9]*\) .*/\1/p" alone.out) &&
    passes=$(sed -n "s/.* passes=\([0-9]*\) .*/\1/p" alone.out) &&
    test "$forks" -ge 5 && test "$passes" -ge 2
'

# the same cluster as t20 (reused when t20 ran before), then the
# experiment in the pin.conf both plugins read: job_submit_pin.so the one
# beside slurm.conf (read anew when it changes), pin.so its plugstack conf=
test_expect_success 'Slurm (cgroup mode) with pin.so, JobSubmitPlugins=pin and the experiment' '
    start=$(vm_now) &&
    test -r "$JS_DIR/job_submit_pin.so" &&
    vm_pin_require cgroup --conf-extra "PluginDir=$SLURM_PLUGINDIR:$JS_DIR" \
        --conf-extra JobSubmitPlugins=pin &&
    vm_record_time "t70: slurm + pin.so + job_submit" "$start" &&
    JS_CONF=$(dirname "$SLURM_CONF")/pin.conf &&
    cp "$JS_CONF" "$W/js-pin.conf.orig" && cp "$PIN_CONF" "$W/pin.conf.orig" &&
    for f in "$JS_CONF" "$PIN_CONF"; do
        printf "%s\n" "PartitionName=debug Experiment=$EXP ExperimentPolicies=none,numa-local ExperimentShare=1 ExperimentJobNames=exp-*" >>"$f" || return 1
    done &&
    cat "$JS_CONF" &&
    slurm-pin check --conf "$JS_CONF" >check.out 2>check.err ; rc=$? &&
    cat check.out check.err &&
    grep "^pin.conf .*: ok" check.out
'

JS_CONF=$(dirname "${SLURM_CONF:-/nonexistent/x}")/pin.conf
J=${LOCAL_SLURM_JOURNAL:-/nonexistent}

# submit KIND CPUS WORKERS MB HZ [SBATCH OPTIONS...]: one job of the kind
# (its job name), the workload for 3 s in one srun step of all its CPUs
# (srun 22.05 does not take -c from the job); its id on jobs.
submit () {
    _k=$1 _c=$2 _w=$3 _m=$4 _h=$5
    shift 5
    sbatch --parsable -p debug -J "$_k" -c "$_c" -o "$W/%j.out" "$@" \
        --wrap "srun -c $_c $W/expload $_w $_m 3 $_h" >>"jobs.$_k" 2>>sbatch.err ||
        return 1
    tail -n 1 "jobs.$_k" >>./jobs
}

test_expect_success 'a batch of jobs of two kinds, one giving its own policy, one left out by name' '
    start=$(vm_now) &&
    : >jobs && : >jobs.exp-fork && : >jobs.exp-mem &&
    submit exp-fork 2 2 64 20 &&
    # opts its second step out with a policy of its own
    sbatch --parsable -p debug -J exp-mem -c 4 -o "$W/%j.out" --wrap \
        "srun -c 4 $W/expload 2 160 3 10 && srun --pin-policy=cache-shared true" \
        >>jobs.exp-mem 2>>sbatch.err &&
    tail -n 1 jobs.exp-mem >>jobs && tail -n 1 jobs.exp-mem >optout.job &&
    submit exp-fork 2 2 64 20 &&
    # never enrolled: a policy of its own at submission
    sbatch --parsable -p debug -J exp-fork -c 2 --pin-policy=numa-local \
        -o "$W/%j.out" --wrap "srun -c 2 $W/expload 2 64 3 20" >explicit.job \
        2>>sbatch.err &&
    submit exp-mem 4 2 160 10 &&
    # never enrolled: ExperimentJobNames=exp-* leaves it out
    sbatch --parsable -p debug -J other -c 2 -o "$W/%j.out" --wrap true \
        >other.job 2>>sbatch.err &&
    submit exp-fork 2 2 64 20 &&
    submit exp-mem 4 2 160 10 &&
    submit exp-fork 2 2 64 20 &&
    submit exp-mem 4 2 160 10 &&
    cat jobs &&
    test "$(wc -l <jobs)" = 8 &&
    vm_jobs_wait &&
    vm_record_time "t70: 10 jobs" "$start" &&
    for j in $(cat jobs explicit.job other.job); do
        echo "job $j: $(slurm_job_state $j)" &&
        cat "$W/$j.out" &&
        test "$(slurm_job_state $j)" = COMPLETED || return 1
    done &&
    for j in $(cat jobs explicit.job); do
        grep "^expload: workers=2 .* forks=[1-9][0-9]* " "$W/$j.out" || return 1
    done
'

test_expect_success 'every enrolled job carries its arm in AdminComment and Comment' '
    test "$(wc -l <jobs)" = 8 &&
    : >arms.ctl &&
    for j in $(cat jobs); do
        scontrol show job "$j" >job.$j &&
        tok=$(grep -o "pin-experiment=$EXP/[a-z-]*/[0-9a-f]*" job.$j) &&
        arm=$(echo "$tok" | cut -d/ -f2) &&
        block=$(echo "$tok" | cut -d/ -f3) &&
        echo "job $j: $tok" &&
        case $arm in none|numa-local) ;; *) return 1 ;; esac &&
        test "${#block}" = 16 &&
        grep "AdminComment=.*pin-experiment=$EXP/$arm/$block" job.$j &&
        grep "Comment=.*pin: $arm (experiment $EXP, arm [12] of 2; opt out with --pin-policy)" job.$j &&
        echo "$j $arm $block" >>arms.ctl || return 1
    done &&
    test "$(wc -l <arms.ctl)" = 8
'

test_expect_success 'a job giving --pin-policy, and one the name filter leaves out: not enrolled' '
    test -s explicit.job && test -s other.job &&
    for j in $(cat explicit.job other.job); do
        scontrol show job "$j" >job.$j &&
        ! grep "pin-experiment=" job.$j &&
        ! grep "experiment $EXP" job.$j || return 1
    done
'

# every step line (JobIDRaw J.batch, J.0, ...) of the jobs, waiting until
# slurmstepd has written the records of each enrolled job'"'"'s two steps
# (three for the opting-out one)
test_expect_success 'the step records: read from the journal' '
    ids=$(cat jobs explicit.job | paste -sd, -) &&
    n=0 &&
    while :; do
        slurm-pin acct --journal "$J" -j "$ids" -P -n \
            -o JobIDRaw,JobName,PinPolicy,Experiment,Arm,Mems >acct.out \
            2>acct.err ; rc=$? &&
        test $rc = 0 || { cat acct.err; return 1; }
        grep "^[0-9]*\.[0-9a-z]*|" acct.out >steps.out
        test "$(wc -l <steps.out)" -ge 19 && break
        n=$((n + 1)) && test $n -lt 60 || { cat acct.out; return 1; }
        sleep 1
    done &&
    cat acct.out
'

test_expect_success 'every step record of an enrolled job carries the experiment and the job'"'"'s arm' '
    test "$(wc -l <arms.ctl)" = 8 &&
    while read j arm block; do
        grep "^$j\." steps.out >s.$j &&
        test "$(wc -l <s.$j)" -ge 2 &&
        while IFS="|" read id name pol exp sarm mems; do
            echo "$id $name policy=$pol experiment=$exp arm=$sarm mems=$mems" &&
            test "$exp" = "$EXP" && test "$sarm" = "$arm" || return 1
        done <s.$j || return 1
    done <arms.ctl
'

test_expect_success 'each step ran its arm, but the one that opted out; numa-local steps on one NUMA node, none on both' '
    o=$(cat optout.job) &&
    grep "^$o\.1|exp-mem|cache-shared|$EXP|" steps.out &&
    grep -v "^$o\.1|" steps.out | grep "|$EXP|" >enrolled.steps &&
    awk -F"|" "\$3 != \$5 { print \"policy \" \$3 \" != arm \" \$5 \": \" \$0; bad = 1 } END { exit bad }" enrolled.steps &&
    grep "^[0-9]*\.0|[^|]*|numa-local|$EXP|numa-local|" enrolled.steps >nl.steps &&
    test -s nl.steps &&
    awk -F"|" "\$6 !~ /^[0-9]+\$/ { print \"mems \" \$6 \": \" \$0; bad = 1 } END { exit bad }" nl.steps &&
    # none places nothing: its steps keep every node (Slurm fences no memory)
    grep "^[0-9]*\.0|[^|]*|none|$EXP|none|" enrolled.steps >none.steps &&
    test -s none.steps &&
    awk -F"|" "\$6 != \"0-1\" { print \"mems \" \$6 \": \" \$0; bad = 1 } END { exit bad }" none.steps
'

test_expect_success 'the step records of the job that gave --pin-policy carry no experiment' '
    e=$(cat explicit.job) &&
    grep "^$e\." steps.out >s.explicit &&
    test -s s.explicit &&
    awk -F"|" "\$4 != \"\" || \$5 != \"\" { bad = 1 } END { exit bad }" s.explicit &&
    grep "^$e\.0|exp-fork|numa-local|" s.explicit
'

test_expect_success 'the arms are balanced within each kind' '
    for k in exp-fork exp-mem; do
        n0=0 && n1=0 &&
        for j in $(cat jobs.$k); do
            arm=$(awk -v j=$j "\$1 == j { print \$2 }" arms.ctl) &&
            case $arm in
                none) n0=$((n0 + 1)) ;;
                numa-local) n1=$((n1 + 1)) ;;
                *) return 1 ;;
            esac || return 1
        done &&
        echo "$k: none $n0, numa-local $n1" &&
        vm_note "t70: $k: none $n0 jobs, numa-local $n1 jobs" &&
        test $n0 = 2 && test $n1 = 2 || return 1
    done
'

test_expect_success 'slurm-pin eff names the experiment and the arm' '
    read j arm block <arms.ctl &&
    slurm-pin eff --journal "$J" "$j" >eff.out 2>eff.err ; rc=$? &&
    cat eff.out eff.err && test $rc = 0 &&
    grep "$EXP" eff.out && grep -w -- "$arm" eff.out
'

test_expect_success 'slurm-pin experiment report: runs, shows both arms, none the control' '
    slurm-pin experiment report "$EXP" --conf "$JS_CONF" --journal "$J" \
        >report.out 2>report.err ; rc=$? &&
    cat report.out report.err && test $rc = 0 &&
    # the table: each arm 4 jobs, compared (Jobs) or opted out (OptedOut)
    awk "(\$1 == \"none\" || \$1 == \"numa-local\") && \$2 ~ /^[0-9]+\$/ {
             n++; if (\$2 + \$4 != 4) bad = 1 }
         END { exit bad || n != 2 }" report.out &&
    grep "^Control arm: none" report.out &&
    slurm-pin experiment report "$EXP" --conf "$JS_CONF" --json \
        --journal "$J" >report.json &&
    /usr/bin/python3 -c "
import json, sys
r = json.load(open(\"report.json\"))
arms = sorted(a[\"arm\"] for a in r[\"arms\"])
print(r[\"control\"], arms)
sys.exit(not (r[\"control\"] == \"none\" and arms == [\"none\", \"numa-local\"]))
" &&
    sed "s/^/t70: report: /" report.out >report.notes &&
    while IFS= read -r l; do vm_note "$l"; done <report.notes
'

test_expect_success 'the experiment ends: pin.conf as it was' '
    cp "$W/js-pin.conf.orig" "$JS_CONF" &&
    cp "$W/pin.conf.orig" "$PIN_CONF" &&
    ! grep "Experiment" "$JS_CONF" "$PIN_CONF"
'

# What the guest can and cannot tell: notes (TAP comments at the end of the
# tier), never a pass.  A load from each NUMA node's memory, on CPU 0.
if test -x "$W/expload"; then
    start=$(vm_now)
    d0=$(cat /sys/devices/system/node/node0/distance 2>/dev/null)
    m0=$("$W/expload" --memwalk 0 32 2>&1 | sed -n "s/.*ns_per_load=\([0-9.]*\).*/\1/p")
    m1=$("$W/expload" --memwalk 1 32 2>&1 | sed -n "s/.*ns_per_load=\([0-9.]*\).*/\1/p")
    vm_record_time "t70: two memory walks" "$start"
    vm_note "t70: the guest can tell: jobs enrolled, arms applied (numa-local on one node), recorded on every step and balanced per kind, the report computed from the journal"
    vm_note "t70: the guest cannot tell whether numa-local saves time: emulated NUMA has no real memory distance (node0 distance '${d0:-?}' is qemu's SLIT, but a load from node 0's memory took ${m0:-?} ns and from node 1's ${m1:-?} ns, on CPU 0: both are the host's same RAM), TCG models no L1/L2/L3, and the 16 vCPUs share the host's CPUs, so CPU and wall times measure the emulator and the host's load: the verdict here is about the machinery, not about placement"
fi

# what the jobs wrote and what the commands said, for the record (and for
# debugging a failure: run-tests.sh --share DIR keeps them)
if test -d "${PIN_VM_OUT:-}"; then
    mkdir -p "$PIN_VM_OUT/t70" &&
        cp "$W"/*.out ./*.out ./*.err ./job.* ./jobs* ./*.job ./arms.ctl \
            ./report.json "$PIN_VM_OUT/t70/" 2>/dev/null
fi
rm -rf "$W"

test_done
