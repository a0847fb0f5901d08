#!/bin/sh
# vm-slurm-modes: cgroup
# shellcheck disable=SC2016,SC2034,SC1091  # sharness: test bodies are single-quoted

test_description='pin.so in the guest: policy dynamic confines over-using steps

A cluster in cgroup mode that does not constrain cores (ConstrainCores=no,
TaskPlugin=task/cgroup without task/affinity: the "site that does not
constrain cores" of issue 11), so that a step may use every CPU of its
job.  A whole-node job runs two "srun --overlap --pin-policy=dynamic -c 2"
steps at once, each with 6 busy processes, one of them multi-threaded.
pin.conf: DynamicGrace=10, DynamicInterval=2.  After the grace period
(not before it: the bound grace + 2 intervals is not checked here, the
emulated guest stretches the watcher'"'"'s intervals; libwatch'"'"'s unit test
and bench/bench-dynamic.sh check it) every thread of each has Cpus_allowed_list of 2 PUs of one NUMA node and
Mems_allowed_list that node, the two steps hold different PUs, and each
step then uses at most 2.1 CPUs.  Then, with DynamicConfine=quota, one
over-using step gets cpu.max = 2 CPUs instead (its CPUs stay wide) and
uses at most 2.1 CPUs.  Nothing is left afterwards.  The
cluster is stopped at the end (the next test starts its own).'

SHARNESS_TEST_SRCDIR=${PIN_SRCDIR:-/nonexistent}/t
SHARNESS_TEST_EXTENSION="sh"
export SHARNESS_TEST_SRCDIR SHARNESS_TEST_EXTENSION
if ! test -r "$SHARNESS_TEST_SRCDIR/sharness.sh"; then
    echo "1..0 # SKIP PIN_SRCDIR is not set: run this with t/vm/run-tests.sh"
    exit 0
fi
. "$SHARNESS_TEST_SRCDIR/sharness.sh"
. "$PIN_SRCDIR/t/vm/guest-lib.sh"

W=$(mktemp -d /tmp/pin-t40.XXXXXX) && chmod 1777 "$W" || exit 1
export W

cat >"$W/load.c" <<'EOF'
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
static double secs;
static double now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}
static void *spin (void *arg)
{
    double end = now () + secs;
    (void)arg;
    while (now () < end)
        ;
    return NULL;
}
int main (int argc, char **argv)
{
    int n = argc > 1 ? atoi (argv[1]) : 1;
    pthread_t t[64];
    secs = argc > 2 ? atof (argv[2]) : 10;
    if (n > 64)
        n = 64;
    for (int i = 0; i < n; i++)
        pthread_create (&t[i], NULL, spin, NULL);
    for (int i = 0; i < n; i++)
        pthread_join (t[i], NULL);
    return 0;
}
EOF

# One step: 6 busy processes (one with 4 threads) until its own affinity
# shrinks (at most 300 s), then every thread's CPUs and mems, and its use.
cat >"$W/overuse.sh" <<'EOF'
#!/bin/sh
# The busy processes at nice 19, so that this shell (nice 0) keeps
# running on the 2 PUs they end up sharing with it; the guest has nothing
# else to run, so their over-use is the same.
n=$1
cd "$W" || exit 1
nice -n 19 ./dynload 4 280 & p1=$!
nice -n 19 ./dynload 1 280 & p2=$!
nice -n 19 ./dynload 1 280 & p3=$!
nice -n 19 ./dynload 1 280 & p4=$!
nice -n 19 ./dynload 1 280 & p5=$!
nice -n 19 ./dynload 1 280 & p6=$!
start=$(date +%s)
i=0
# until both its CPUs (its affinity: not nproc, which honours OpenMP's
# variables and, from coreutils 9.8 (sid), cgroup v2's cpu.max) and its
# memory nodes have shrunk: writing cpuset.mems migrates the step's pages
# first, which takes a while under emulation
while { test "$(python3 -c "import os; print(len(os.sched_getaffinity(0)))")" -gt 2 ||
        grep -q "^Mems_allowed_list:.*[-,]" /proc/self/status; } &&
      test $i -lt 1000; do
    sleep 0.2
    i=$((i + 1))
done
echo "$start $(date +%s)" >$n.times
sleep 2
cg=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)
step=${cg%/user/*}/user
set --
for t in $(find "$step" -name cgroup.threads -exec cat {} +); do
    set -- "$@" /proc/$t/status
done
awk '/^Cpus_allowed_list/ { c = $2 } /^Mems_allowed_list/ { print FILENAME, c, $2 }' "$@" >$n.threads 2>/dev/null
# each read of the counter bracketed by two clock readings, timed at
# their midpoint (a fork can take a while under emulation)
a=$(date +%s%N) u0=$(sed -n 's/^usage_usec //p' $step/cpu.stat) b=$(date +%s%N)
sleep 10
c=$(date +%s%N) u1=$(sed -n 's/^usage_usec //p' $step/cpu.stat) d=$(date +%s%N)
echo $((u1 - u0)) $((((c + d) / 2 - (a + b) / 2) / 1000)) >$n.use
kill $p1 $p2 $p3 $p4 $p5 $p6
wait
EOF

# DynamicConfine=quota: the same load until the step's cpu.max holds a
# quota (at most 300 s), then cpu.max, the CPUs it may use and its use.
cat >"$W/quota.sh" <<'EOF'
#!/bin/sh
cd "$W" || exit 1
nice -n 19 ./dynload 4 280 & p1=$!
nice -n 19 ./dynload 1 280 & p2=$!
nice -n 19 ./dynload 1 280 & p3=$!
nice -n 19 ./dynload 1 280 & p4=$!
nice -n 19 ./dynload 1 280 & p5=$!
nice -n 19 ./dynload 1 280 & p6=$!
cg=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)
step=${cg%/user/*}/user
start=$(date +%s)
i=0
while grep -q "^max " $step/cpu.max && test $i -lt 1500; do
    sleep 0.2
    i=$((i + 1))
done
echo "$start $(date +%s)" >q.times
cat $step/cpu.max >q.max
sleep 2
a=$(date +%s%N) u0=$(sed -n 's/^usage_usec //p' $step/cpu.stat) b=$(date +%s%N)
sleep 10
c=$(date +%s%N) u1=$(sed -n 's/^usage_usec //p' $step/cpu.stat) d=$(date +%s%N)
echo $((u1 - u0)) $((((c + d) / 2 - (a + b) / 2) / 1000)) >q.use
# its affinity (not nproc: coreutils 9.8 and later count cpu.max's quota)
python3 -c "import os; print(len(os.sched_getaffinity(0)))" >q.nproc
kill $p1 $p2 $p3 $p4 $p5 $p6
wait
EOF

cat >"$W/pilot.sh" <<'EOF'
#!/bin/sh
srun --overlap -n1 -c2 --pin-policy=dynamic "$W/overuse.sh" a >"$W/a.out" 2>"$W/a.err" &
srun --overlap -n1 -c2 --pin-policy=dynamic "$W/overuse.sh" b >"$W/b.out" 2>"$W/b.err" &
wait
EOF
chmod 755 "$W/overuse.sh" "$W/pilot.sh" "$W/quota.sh"

test_expect_success 'build the load program' '
    cc -O1 -pthread -o "$W/dynload" "$W/load.c"
'

# vm_slurm_start, then the cgroup.conf this test needs; the state file then
# says plain "cgroup" so that vm_pin_require keeps this cluster (it is
# stopped at the end, so no later test inherits it).
test_expect_success 'Slurm (cgroup mode, cores not constrained) with pin.so' '
    vm_slurm_stop &&
    vm_slurm_start cgroup --conf-extra TaskPlugin=task/cgroup \
        --cgroup-extra ConstrainCores=no &&
    cgconf=$(dirname "$SLURM_CONF")/cgroup.conf &&
    grep "^ConstrainCores=no" "$cgconf" &&
    echo cgroup >"$VM_SLURM_STATE" &&
    vm_pin_require cgroup &&
    printf "DynamicGrace=10\nDynamicInterval=2\n" >>"$PIN_CONF"
'

test_expect_success 'a whole-node job with two over-using dynamic steps' '
    start=$(vm_now) &&
    sbatch --parsable --exclusive -o "$W/pilot.log" "$W/pilot.sh" >jobid &&
    vm_jobs_wait &&
    vm_record_time "t40: two dynamic steps" "$start" &&
    cat "$W"/pilot.log "$W"/a.err "$W"/b.err "$W"/a.times "$W"/b.times \
        "$W"/a.use "$W"/b.use &&
    test -s "$W/a.threads" && test -s "$W/b.threads"
'

for s in a b; do
    test_expect_success "step $s: one line on its stderr; every thread on 2 PUs of one NUMA node, mems that node" "
        grep \"^pin: step [0-9]*\.[0-9]* on .*: confined to cpus .* mems .* (cpuset)\$\" \"\$W/$s.err\" &&
        test \$(wc -l <\"\$W/$s.threads\") -ge 9 &&
        cut -d' ' -f2 \"\$W/$s.threads\" | sort -u >cpus.$s &&
        cut -d' ' -f3 \"\$W/$s.threads\" | sort -u >mems.$s &&
        test \$(wc -l <cpus.$s) -eq 1 &&
        test \$(wc -l <mems.$s) -eq 1 &&
        c=\$(cat cpus.$s) &&
        test \"\$(vm_hw_count pu \"\$c\")\" = 2 &&
        test \"\$(vm_hw_count numa \"\$c\")\" = 1 &&
        test \"\$(vm_hw_numa \"\$c\")\" = \"\$(vm_hw_nodes \"\$(cat mems.$s)\")\"
    "
    test_expect_success "step $s: confined, not before grace; then at most 2.1 CPUs" "
        awk '{ d = \$2 - \$1; print \"confined after \" d \" s\"; exit !(d >= 10) }' \"\$W/$s.times\" &&
        awk '{ u = \$1 / \$2; print \"use after: \" u \" CPUs\"; exit !(u <= 2.1) }' \"\$W/$s.use\"
    "
done

test_expect_success 'the two concurrent steps hold different PUs' '
    test "$(vm_hw_count pu "$(cat cpus.a),$(cat cpus.b)")" = 4
'

test_expect_success 'after the job: no job cgroup, no claim of ours is left' '
    vm_jobs_wait &&
    vm_pin_leftovers >left &&
    test_must_be_empty left
'

test_expect_success 'DynamicConfine=quota: a whole-node job with one over-using step' '
    echo DynamicConfine=quota >>"$PIN_CONF" &&
    start=$(vm_now) &&
    sbatch --parsable --exclusive -o "$W/qpilot.log" \
        --wrap "srun --overlap -n1 -c2 --pin-policy=dynamic $W/quota.sh 2>$W/q.err" >jobid.q &&
    vm_jobs_wait &&
    vm_record_time "t40: one dynamic step, quota" "$start" &&
    cat "$W"/qpilot.log "$W"/q.err "$W"/q.times "$W"/q.max "$W"/q.use "$W"/q.nproc
'

test_expect_success 'quota: one line on its stderr; cpu.max is 2 CPUs; its CPUs stay wide; then at most 2.1 CPUs' '
    grep "^pin: step [0-9]*\.[0-9]* on .*: used [0-9.]* CPUs of 2 allocated for longer than 10 s (DynamicOveruse=1.2): limited to 2 CPUs (cpu.max)\$" "$W/q.err" &&
    test "$(cat "$W/q.max")" = "200000 100000" &&
    test "$(cat "$W/q.nproc")" -gt 2 &&
    awk "{ d = \$2 - \$1; print \"limited after \" d \" s\"; exit !(d >= 10) }" "$W/q.times" &&
    awk "{ u = \$1 / \$2; print \"use after: \" u \" CPUs\"; exit !(u <= 2.1) }" "$W/q.use"
'

test_expect_success 'quota: after the job, nothing of ours is left' '
    vm_pin_leftovers >left.q &&
    test_must_be_empty left.q
'

test_expect_success 'stop this cluster (later tests start their own)' '
    vm_slurm_stop
'

# what the steps wrote, for the record (and for debugging a failure)
if test -d "${PIN_VM_OUT:-}"; then
    mkdir -p "$PIN_VM_OUT/t40" && cp "$W"/*.err "$W"/*.times "$W"/*.use \
        "$W"/*.threads "$W"/q.max "$W"/q.nproc "$PIN_VM_OUT/t40/" 2>/dev/null
fi

test_done
