#!/bin/sh

test_description='accounting: with PrologFlags=Contain every record of a job reaches slurmdbd

A private Slurm with slurmdbd and MariaDB (local-slurm.sh --accounting),
PrologFlags=Contain and pin.so writing the node journal; the job epilog
delivers with the real slurm-pin deliver.  The extern step has no job
environment: its record must still carry the job'"'"'s cluster and user
(from Slurm, issue 18 item 2) so that it is grouped with the job and
delivered with it, and nothing is left behind in the journal.
'

. "$(dirname "$0")/sharness.sh"

# not beside the other heavy files (t/sharness.d/20-cpus.sh)
cpu_heavy_exclusive || exit 1

slurm_require_accounting
pin_so_prereq
PY=/usr/bin/python3
test -x $PY && test_set_prereq PYTHON
SLURM_PIN=$PIN_BIN/slurm-pin

# pin.conf paths take no spaces; the trash directory has one
STATE=$(mktemp -d /tmp/pin-t4082.XXXXXX) || exit 1
cleanup "rm -rf '$STATE'"
BASE=slurm-pin-t4082-$$
CGROOT=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
cleanup "rmdir '$CGROOT/$BASE' 2>/dev/null; true"
J=$STATE/journal

# steps FILE: "NODE STEP_ID,STEP_ID,..." per node of the summary in the
# AdminComment in FILE
steps () {
    $PY - "$1" <<-\PYEOF
	import base64, gzip, json, sys
	s = open(sys.argv[1]).read().rstrip("\n")
	i = s.index("slurm-pin/1:")
	tok = s[i + len("slurm-pin/1:"):].split(" ")[0]
	d = json.loads(gzip.decompress(base64.b64decode(tok, validate=True)))
	for n in sorted(d["nodes"]):
	    recs = d["nodes"][n]
	    print(n, ",".join(sorted(str(r["step_id"]) for r in recs)),
	          ",".join(sorted(set(r["cluster"] + ":" + r["user"] for r in recs))))
	PYEOF
}

test_expect_success PIN_SO,PYTHON 'start Slurm with slurmdbd, PrologFlags=Contain and pin.so' '
    cat >pin.conf <<-EOF &&
	StateDir=$STATE/state
	TopologyCache=$STATE/topology.xml
	CgroupBase=$BASE
	JournalDir=$J
	DeliverCommand=$SLURM_PIN
	EOF
    echo "required $PIN_SO conf=@PIN_CONF@" >plugstack.conf &&
    slurm_start --accounting --plugstack plugstack.conf --pin-conf pin.conf \
        --conf-extra PrologFlags=Contain
'

test_expect_success SLURM,PIN_SO,PYTHON 'the job epilog delivers step 0, the extern step and the job line together' '
    j=$(sbatch --parsable -n1 -o /dev/null --wrap "srun -n1 true") &&
    slurm_wait_job $j &&
    n=$((PIN_SLURM_TIMEOUT * 2)) &&
    while ! grep -qs "^pin $j $LOCAL_SLURM_NODE " "$J/delivered"; do
        n=$((n - 1)) && test $n -gt 0 && sleep 0.5 || break
    done &&
    grep "^pin $j $LOCAL_SLURM_NODE " "$J/delivered" &&
    sacct -j "$j" -X -n -P -o AdminComment >ac &&
    steps ac >got &&
    echo "$LOCAL_SLURM_NODE 0,4294967291,4294967292,4294967294 pin:root" >expect &&
    test_cmp expect got
'

# Every record of the journal belongs to a (cluster, job, node) group that
# was delivered (a line "CLUSTER JOB NODE ..." in JournalDir/delivered;
# cluster "-" when empty).
test_expect_success SLURM,PIN_SO,PYTHON 'nothing is left behind in the journal' '
    "$SLURM_PIN" deliver --journal "$J" --timeout 20 &&
    $PY - "$J/journal" "$J/delivered" <<-\PYEOF
	import json, sys
	done = set(tuple(l.split()[:3]) for l in open(sys.argv[2]))
	left = set()
	for line in open(sys.argv[1]):
	    r = json.loads(line)
	    key = (r["cluster"] or "-", str(r["job_id"]), r["node"])
	    if key not in done:
	        left.add(key)
	for k in sorted(left):
	    print("never delivered:", *k)
	sys.exit(1 if left else 0)
	PYEOF
'

test_done
