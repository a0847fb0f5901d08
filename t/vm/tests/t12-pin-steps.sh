#!/bin/sh
# vm-slurm-modes: cgroup affinity
# shellcheck disable=SC2016,SC2034,SC1091  # sharness: test bodies are single-quoted

test_description='pin.so in the guest: concurrent steps, random, nothing left behind

In both Slurm modes: three srun --overlap steps of one whole-node job run
at the same time (each waits for the others) and get disjoint CPUs, each
placed by numa-local on what the others left; a random step is placed the
same way when its job is requeued (same job and step id: same seed, same
CPUs), inside the allocation, with the seed pin.so derives from job and
step id (computed here on its own); and once every job ended, no job cgroup and no claim of ours is
left.  Runs last in each mode.'

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
# Slurm writes job output here: no space in the path, writable by jobs.
W=$(mktemp -d /tmp/pin-t12.XXXXXX) && chmod 1777 "$W" || exit 1
export VM_PROBE W

# The pilot: three overlapping steps, started together; each records its
# probe and waits (at most 120 s) until all three run, so they certainly
# overlap in time.
cat >"$W/pilot.sh" <<'EOF'
#!/bin/sh
for s in 1 2 3; do
    srun --overlap -n 1 -c 4 --hint=nomultithread --pin-policy=numa-local,verbose \
        sh -c "$VM_PROBE
touch $W/up.$s
i=0
while ! test -e $W/release && test \$i -lt 1200; do sleep 0.1; i=\$((i + 1)); done" \
        >"$W/ov.$s.out" 2>"$W/ov.$s.err" &
done
i=0
until test -e "$W/up.1" && test -e "$W/up.2" && test -e "$W/up.3"; do
    test $i -lt 1200 || break
    sleep 0.1
    i=$((i + 1))
done
ls "$W"/up.* >"$W/ups"
touch "$W/release"
wait
EOF

# The random job, run again after a requeue (same job id, same step ids):
# step 0, one task of 4 CPUs drawn from the 8 of 4 whole cores (0-7);
# step 1, two tasks sharing the 8 PUs Slurm gives (0-3,8-11).
cat >"$W/random.sh" <<'EOF'
#!/bin/sh
run=${SLURM_RESTART_COUNT:-0}
srun -n 1 -c 4 --hint=nomultithread --pin-policy=random,verbose \
    sh -c "$VM_PROBE" >"$W/random.$run.0.out" 2>"$W/random.$run.0.err"
srun -n 2 -c 4 --pin-policy=random,verbose \
    sh -c "$VM_PROBE" >"$W/random.$run.1.out" 2>"$W/random.$run.1.err"
EOF
chmod 755 "$W/pilot.sh" "$W/random.sh"

# seed JOB STEP: pin.so's seed, computed here on its own (splitmix64 of
# job << 32 | step, doc/admin-guide.md "Verbose output").
seed ()
{
    python3 -c 'import sys
M = (1 << 64) - 1
z = ((int(sys.argv[1]) << 32 | int(sys.argv[2])) + 0x9e3779b97f4a7c15) & M
z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M
z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M
print(z ^ (z >> 31))' "$1" "$2"
}

test_expect_success "Slurm ($mode mode) with pin.so" '
    vm_pin_require "$mode"
'

# --- concurrent --overlap steps ---------------------------------------------

test_expect_success 'three concurrent --overlap steps in one whole-node job' '
    start=$(vm_now) &&
    id=$(sbatch --parsable --exclusive -o "$W/pilot.log" "$W/pilot.sh") &&
    vm_jobs_wait &&
    vm_record_time "t12: 3 overlapping steps ($mode)" "$start" &&
    cat "$W"/pilot.log "$W"/ov.*.out "$W"/ov.*.err &&
    test "$(wc -l <"$W/ups")" = 3
'

test_expect_success 'they got numa-local placements on what the others left, disjoint' '
    for s in 1 2 3; do
        vm_probe_tasks "$W/ov.$s.out" || return 1
    done | sort >kernel &&
    cat >expect <<-EOF &&
	task 0: cpus=0,2,4,6 mems=0
	task 0: cpus=1,3,5,7 mems=0
	task 0: cpus=8,10,12,14 mems=1
	EOF
    test_cmp expect kernel
'

test_expect_success 'each step'"'"'s cgroup effective cpuset is its placement' '
    for s in 1 2 3; do
        vm_probe_tasks "$W/ov.$s.out" cg_cpus cg_mems || return 1
    done | sort >cgroup &&
    test_cmp expect cgroup
'

test_expect_success 'hwloc-calc: each on 4 cores of one node, together 12 PUs' '
    all="" &&
    for s in 1 2 3; do
        cpus=$(vm_probe_field "$W/ov.$s.out" 0 cpus) &&
        test "$(vm_hw_count core "$cpus")" = 4 &&
        test "$(vm_hw_count numa "$cpus")" = 1 &&
        all=$all${all:+,}$cpus || return 1
    done &&
    test "$(vm_hw_count pu "$all")" = 12
'

# --- random: reproducible for the same job and step --------------------------

test_expect_success 'a random job with two steps, run twice (requeue)' '
    start=$(vm_now) &&
    id=$(sbatch --parsable --exclusive -o "$W/random.log" "$W/random.sh") &&
    vm_jobs_wait &&
    scontrol requeue "$id" &&
    scontrol update JobId="$id" StartTime=now &&
    vm_jobs_wait &&
    vm_record_time "t12: random job, twice ($mode)" "$start" &&
    echo "$id" >jobid &&
    cat "$W"/random.log "$W"/random.*.out "$W"/random.*.err &&
    for f in 0.0 0.1 1.0 1.1; do
        test -s "$W/random.$f.out" || return 1
    done
'

test_expect_success 'the rerun got exactly the same CPUs and mems, as its cgroups say' '
    for step in 0 1; do
        vm_probe_tasks "$W/random.0.$step.out" >run0.$step &&
        vm_probe_tasks "$W/random.1.$step.out" >run1.$step &&
        test_cmp run0.$step run1.$step &&
        vm_probe_tasks "$W/random.1.$step.out" cg_cpus cg_mems >cgroup1.$step &&
        test_cmp run0.$step cgroup1.$step || return 1
    done &&
    test "$(wc -l <run0.0)" = 1 &&
    test "$(wc -l <run0.1)" = 2
'

test_expect_success 'each step drew with the seed of its job and step id, in both runs' '
    for step in 0 1; do
        seed "$(cat jobid)" $step >seed.$step &&
        sed -n "s/^pin: task [0-9]* on .* seed=//p" \
            "$W/random.0.$step.err" "$W/random.1.$step.err" | sort -u >seeds &&
        test_cmp seed.$step seeds || return 1
    done
'

test_expect_success 'slurm-pin plan with those seeds on the allocations gives the same' '
    vm_plan random 1 4 0-7 "$(cat seed.0)" >plan.0 &&
    test_cmp plan.0 run0.0 &&
    vm_plan random 2 4 0-3,8-11 "$(cat seed.1)" >plan.1 &&
    test_cmp plan.1 run0.1
'

test_expect_success 'random stays inside the allocation; the two tasks are disjoint' '
    a=$(vm_probe_field "$W/random.0.0.out" 0 cpus) &&
    test "$(vm_hw_count pu "$a")" = 4 &&
    test "$(vm_hw_count pu "$a,0-7")" = 8 &&
    t0=$(vm_probe_field "$W/random.0.1.out" 0 cpus) &&
    t1=$(vm_probe_field "$W/random.0.1.out" 1 cpus) &&
    test "$(vm_hw_count pu "$t0,$t1")" = 8 &&
    test "$(vm_hw_count pu "$t0,$t1,0-3,8-11")" = 8
'

if test "$mode" = cgroup; then
    test_expect_success 'Slurm gave the random steps 0-7 and 0-3,8-11' '
        printf "0-7\n0-3,8-11\n" >expect &&
        vm_probe_field "$W/random.0.0.out" 0 step_cpus >actual &&
        vm_probe_field "$W/random.0.1.out" 0 step_cpus >>actual &&
        test_cmp expect actual
    '
fi

# --- nothing left behind -----------------------------------------------------

test_expect_success 'after all jobs: no job cgroup, no claim of ours is left' '
    vm_jobs_wait &&
    vm_pin_leftovers >left &&
    test_must_be_empty left
'

test_done
