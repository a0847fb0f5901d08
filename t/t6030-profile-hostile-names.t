#!/bin/sh

test_description='hostile names never reach root'"'"'s terminal raw

A step run with --pin-profile on a local Slurm (pin.so, ProfileDir and
JournalDir in a private directory) whose child processes name themselves
with prctl(PR_SET_NAME) (t/profile/rename.py: an OSC title and colour
escape, a newline, C1 controls in UTF-8, a right-to-left override, an
8-bit CSI with bad UTF-8 and DEL), in a job named the same way.  What
slurm-pin profile, acct and eff print, as text and as --json, holds no
raw control byte, C1 or bidi control, nor bad UTF-8
(t/profile/textcheck.py), and shows the names with those replaced by ?.
Needs root (slurmd, the proc connector) and /usr/bin/python3.
'

. "$(dirname "$0")/sharness.sh"

slurm_require

pin_so_prereq
PY=/usr/bin/python3
test -x "$PY" && test_set_prereq PY
RENAME="$PIN_SRCDIR/t/profile/rename.py"
CHECK="$PIN_SRCDIR/t/profile/textcheck.py"

STATE=$(mktemp -d /tmp/pin-t6030.XXXXXX) || exit 1
chmod 755 "$STATE"
cleanup "rm -rf '$STATE'"
PROF=$STATE/profile
J=$STATE/journal
ALL=SLURM,PIN_SO,PY

test_expect_success PIN_SO 'start a cluster with pin.so, ProfileDir and JournalDir' '
    cat >pin.conf <<-EOF &&
	StateDir=$STATE/state
	TopologyCache=$STATE/topology.xml
	JournalDir=$J
	DeliverCommand=none
	ProfileDir=$PROF
	EOF
    echo "required $PIN_SO conf=@PIN_CONF@" >plugstack.conf &&
    slurm_start --plugstack plugstack.conf --pin-conf pin.conf
'

test_expect_success $ALL 'a profiled step whose processes and job have hostile names' '
    name=$(printf "j\033]0;PWNED\007\302\233\342\200\256x\nb") &&
    srun -J "$name" --pin-profile=100ms -n1 -c1 \
        sh -c "echo \$SLURM_JOB_ID >job.id; exec $PY $RENAME 2" >rename.out &&
    cat rename.out &&
    test -s job.id
'

test_expect_success $ALL 'slurm-pin profile: the names, none of their control bytes' '
    job=$(cat job.id) &&
    slurm-pin profile --dir "$PROF" "$job" >summary.txt &&
    cat summary.txt &&
    "$PY" "$CHECK" summary.txt &&
    grep -F "  ?]0;PWNED??[31m" summary.txt &&
    grep "  a?b$" summary.txt &&
    grep "  ?31m?0;x$" summary.txt &&
    grep "  x?evil$" summary.txt &&
    # bytes that are not UTF-8 were written as U+FFFD (the profile is
    # ASCII JSON on every json-c), the DEL is shown as ?
    r=$(printf "\357\277\275") &&
    grep -F "  ${r}2J${r}${r}?" summary.txt
'

test_expect_success $ALL 'slurm-pin profile --json (after the operand): valid JSON, no raw control' '
    job=$(cat job.id) &&
    slurm-pin profile "$job" --dir "$PROF" --json >summary.json &&
    "$PY" "$CHECK" summary.json &&
    "$PY" -c "
import json, sys
j = json.load(open(sys.argv[1]))
names = {c[\"command\"] for c in j[0][\"top_by_count\"]}
print(sorted(names))
want = {\"\x1b]0;PWNED\x07\x1b[31m\", \"a\nb\", \"?31m?0;x\", \"x?evil\", \"\ufffd2J\ufffd\ufffd?\"}
sys.exit(0 if want <= names else 1)
" summary.json
'

test_expect_success $ALL 'slurm-pin acct and eff: the job name, none of its control bytes' '
    job=$(cat job.id) &&
    acct_wait_records "$J" job_id="$job" step_id=0 -- job_name >/dev/null &&
    slurm-pin acct --journal "$J" -j "$job" -o JobID,JobName%40 -P >acct.txt &&
    slurm-pin acct --journal "$J" -j "$job" --json >acct.json &&
    slurm-pin eff --journal "$J" "$job" >eff.txt &&
    cat acct.txt eff.txt &&
    "$PY" "$CHECK" acct.txt acct.json eff.txt &&
    grep -F "j?]0;PWNED???x?b" acct.txt &&
    "$PY" -c "import json, sys; json.load(open(sys.argv[1]))" acct.json
'

test_done
