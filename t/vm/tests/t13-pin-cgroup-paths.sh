#!/bin/sh
# vm-slurm-modes: cgroup
# shellcheck disable=SC2016,SC2034,SC1091  # sharness: test bodies are single-quoted

test_description='pin.so nests in Slurm'"'"'s own step cgroup, whatever Slurm names the job'"'"'s

Slurm 26.05 names a job'"'"'s cgroup after its SLUID (s and 13 base-32
characters) unless cgroup.conf has CgroupJobIdPaths=yes (26.05.2), which
names it job_<id> as every earlier release does.  pin.so must find Slurm'"'"'s
step cgroup in both schemes (nested mode) and narrow the task cgroups Slurm
made, never fall back to its own standalone tree (which moves tasks out of
Slurm'"'"'s cgroup).  On a Slurm without SLUIDs the SLUID checks are skipped
(prerequisite SLUID), on one without CgroupJobIdPaths the second scheme is
(prerequisite JOBIDPATHS).  The node is named vmnode, not the host name
node1: pin.so must find the name in slurmstepd'"'"'s socket.'

SHARNESS_TEST_SRCDIR=${PIN_SRCDIR:-/nonexistent}/t
SHARNESS_TEST_EXTENSION="sh"
export SHARNESS_TEST_SRCDIR SHARNESS_TEST_EXTENSION
if ! test -r "$SHARNESS_TEST_SRCDIR/sharness.sh"; then
    echo "1..0 # SKIP PIN_SRCDIR is not set: run this with t/vm/run-tests.sh"
    exit 0
fi
. "$SHARNESS_TEST_SRCDIR/sharness.sh"
. "$PIN_SRCDIR/t/vm/guest-lib.sh"

# a node name that is not the host name (node1): pin.so must take it from
# slurmstepd's socket, NODE_JOB.STEP in the spool directory (libstep's
# ident.c), not from the host name
NODE=vmnode
SCOPE=/system.slice/${NODE}_slurmstepd.scope

# place SCHEME: a numa-local -c 2 step as nobody; SCHEME.out has the probe
# and the job id, SCHEME.err pin's verbose line.
place ()
{
    runuser -u nobody -- timeout 120 srun --chdir=/ \
        --pin-policy=numa-local,verbose --hint=nomultithread -n 1 -c 2 \
        sh -c "$VM_PROBE"'
echo job=$SLURM_JOB_ID' >"$1.out" 2>"$1.err" &&
    cat "$1.out" "$1.err"
}

# check SCHEME JOBDIR_ERE: the task ran in Slurm's step cgroup below a job
# directory matching JOBDIR_ERE, named as Slurm names it, and its cgroup
# holds the CPUs pin.so chose ('slurm-pin plan' of the step's CPUs,
# narrower than them).
check ()
{
    job=$(sed -n "s/^job=//p" "$1.out") &&
    dir=$(vm_job_cgdir "$job") &&
    echo "$dir" | grep -E "^$2\$" &&
    cg=$(vm_probe_field "$1.out" 0 cg) &&
    echo "$SCOPE/$dir/step_0/user/task_0" >expect &&
    echo "$cg" >actual &&
    test_cmp expect actual &&
    grep "^pin: task 0 on $NODE: " "$1.err" &&
    vm_verbose_tasks "$1.err" >verbose &&
    vm_probe_tasks "$1.out" cg_cpus cg_mems >cgroup &&
    test_cmp verbose cgroup &&
    step=$(vm_probe_field "$1.out" 0 step_cpus) &&
    vm_plan numa-local 1 2 "$step" >expect &&
    test_cmp expect cgroup &&
    test "$(vm_hw_count pu "$step")" -gt 2 &&
    vm_note "t13 $1: task cgroup $cg, cpuset $(vm_probe_field "$1.out" 0 cg_cpus) of step $step"
}

scontrol_has_sluid ()
{
    _j=$(sbatch --parsable -o /dev/null --wrap true) &&
    scontrol -d show job "$_j" | grep -q "^ *SLUID=s" &&
    vm_jobs_wait
}

test_expect_success 'start Slurm (cgroup mode, default cgroup.conf) with pin.so' '
    vm_pin_require cgroup --nodename $NODE &&
    ! vm_slurm_job_id_paths
'

scontrol_has_sluid && test_set_prereq SLUID
scontrol show config | grep -qi "^CgroupJobIdPaths" && test_set_prereq JOBIDPATHS

test_expect_success 'default scheme: pin.so narrows the task cgroup in Slurm'"'"'s step' '
    place default &&
    check default "$VM_JOBDIR_RE"
'

test_expect_success SLUID 'default scheme on a Slurm with SLUIDs: the job directory is the SLUID' '
    job=$(sed -n "s/^job=//p" default.out) &&
    cg=$(vm_probe_field default.out 0 cg) &&
    echo "$cg" | grep -E "^$SCOPE/s[0-9A-HJKMNP-TV-Z]{13}/step_0/user/task_0\$"
'

test_expect_success 'default scheme: nothing left' '
    vm_jobs_wait &&
    test -z "$(vm_pin_leftovers)"
'

test_expect_success JOBIDPATHS 'restart Slurm with CgroupJobIdPaths=yes' '
    vm_pin_require cgroup --nodename $NODE --cgroup-extra CgroupJobIdPaths=yes &&
    vm_slurm_job_id_paths
'

test_expect_success JOBIDPATHS 'CgroupJobIdPaths=yes: pin.so narrows the task cgroup in Slurm'"'"'s job_<id>/step' '
    place jobid &&
    check jobid "job_[0-9]+"
'

test_expect_success JOBIDPATHS 'CgroupJobIdPaths=yes: nothing left' '
    vm_jobs_wait &&
    test -z "$(vm_pin_leftovers)"
'

test_done
