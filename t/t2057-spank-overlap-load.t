#!/bin/sh

test_description='--overlap steps share the least-loaded CPUs (issue 18, item 9)

A -n2 job on a 2-CPU node runs 40 concurrent one-CPU
"srun --overlap --pin-policy=numa-local" steps, each holding its CPU until
released.  From the third step on every CPU of the job is busy, so each
step is placed by the fallback on the CPU the fewest other live steps
hold (pin.so counts holders per CPU from the claims): the CPUs of the job
end with step counts that differ by at most one.  Before, the busy set was
a bitmap and every step after the second went to the lowest CPU (39 of 40
on CPU 0).  Every client command is bounded by a timeout; nothing is left
in the claims directory.  Needs at least 2 CPUs.
'

. "$(dirname "$0")/sharness.sh"

slurm_require

pin_so_prereq
test "$(nproc)" -ge 2 && test_set_prereq TWO_CPUS

CGROOT=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
STATE=$(mktemp -d /tmp/pin-t2057.XXXXXX) || exit 1
BASE=slurm-pin-t2057-$$
NSTEPS=40
T=$PIN_SLURM_TIMEOUT

# The job: NSTEPS concurrent --overlap steps; step s writes its task's
# /proc/self/status line to DIR/s.cpus, then holds its CPU until
# DIR/release (at most 120 s).  DIR/held once every step is up.
cat >overlap.sh <<'EOF'
#!/bin/sh
d=$1 n=$2 t=$3
mkdir -p "$d"
grep Cpus_allowed_list /proc/self/status >"$d/job.cpus"
s=1
while test $s -le $n; do
    timeout $((t + 120)) srun --overlap -n1 -c1 --pin-policy=numa-local,verbose sh -c "
        grep Cpus_allowed_list /proc/self/status >'$d/$s.tmp' &&
        mv '$d/$s.tmp' '$d/$s.cpus'
        i=0
        while ! test -e '$d/release' && test \$i -lt 1200; do
            sleep 0.1
            i=\$((i + 1))
        done" 2>"$d/$s.err" &
    s=$((s + 1))
done
i=0
while test $i -lt $((t * 10)); do
    test "$(ls "$d" | grep -c '^[0-9]*\.cpus$')" -ge "$n" && break
    sleep 0.1
    i=$((i + 1))
done
touch "$d/held"
wait
EOF
chmod +x overlap.sh

wait_file () {
    i=0
    while ! test -e "$1" && test $i -lt $((T * 10)); do
        sleep 0.1
        i=$((i + 1))
    done
    test -e "$1"
}

# cpu_list LIST: the CPUs of a kernel list, one per line
cpu_list () {
    echo "$1" | tr ',' '\n' | awk -F- '
        /^[0-9]+$/ { print $1 }
        /^[0-9]+-[0-9]+$/ { for (i = $1; i <= $2; i++) print i }'
}

test_expect_success PIN_SO,TWO_CPUS 'start a cluster with pin.so' '
    {
        echo "CgroupBase=$BASE"
        echo "StateDir=$STATE/state"
        echo "TopologyCache=$STATE/topology.xml"
        echo "Verbose=yes"
    } >pin.conf &&
    echo "required $PIN_SO conf=@PIN_CONF@" >plugstack.conf &&
    slurm_start --plugstack plugstack.conf --pin-conf pin.conf
'

test_expect_success SLURM,PIN_SO,TWO_CPUS "$NSTEPS concurrent --overlap steps in a -n2 job are balanced within 1" '
    jobid=$(timeout $T sbatch --parsable -N1 -n2 -c1 -t 5 -o job.out \
            overlap.sh "$PWD/ov" $NSTEPS $T) &&
    test_when_finished "touch ov/release; timeout $T scancel $jobid || :" &&
    wait_file ov/held &&
    ls ov/*.cpus >cpus.files &&
    test "$(grep -c "/[0-9]*\.cpus$" cpus.files)" -eq $NSTEPS &&
    job=$(cpus_of ov/job.cpus) &&
    cpu_list "$job" >job.list &&
    test "$(wc -l <job.list)" -ge 2 &&
    s=1 &&
    : >steps.list &&
    while test $s -le $NSTEPS; do
        c=$(cpus_of ov/$s.cpus) &&
        test "$(cpu_list "$c" | wc -l)" -eq 1 &&
        grep -qx "$c" job.list &&
        echo "$c" >>steps.list || return 1
        s=$((s + 1))
    done &&
    for c in $(cat job.list); do
        echo "$c $(grep -cx "$c" steps.list)"
    done >load &&
    cat load &&
    lo=$(awk "NR == 1 || \$2 < m { m = \$2 } END { print m }" load) &&
    hi=$(awk "\$2 > m { m = \$2 } END { print m + 0 }" load) &&
    test $((hi - lo)) -le 1 &&
    grep -l "fallback=shared-with-step" ov/*.err >shared.files &&
    test "$(wc -l <shared.files)" -ge $((NSTEPS - $(wc -l <job.list))) &&
    touch ov/release &&
    slurm_wait_job $jobid $T
'

# Runs whatever happened before: the claims are checked, then the state
# directory and the plugin's cgroup base go (sharness' cleanup would run
# only when every test passed).
test_expect_success 'no claim is left behind; nothing else either' '
    test_when_finished "rm -rf \"$STATE\"; rmdir \"$CGROOT/$BASE\" 2>/dev/null; :" &&
    i=0 &&
    while test $i -lt $((T * 5)) &&
          test -n "$(ls "$STATE/state/claims" 2>/dev/null)"; do
        sleep 0.2
        i=$((i + 1))
    done &&
    ls "$STATE/state/claims" 2>/dev/null >claims.left &&
    if test -n "$CGROOT"; then wait_tree_empty >tree.left; else : >tree.left; fi &&
    test_must_be_empty claims.left &&
    test_must_be_empty tree.left
'

test_done
