#!/bin/sh

test_description='accounting: two nodes delivering the same job at the same instant lose no part (issue 18)

A private Slurm with slurmdbd, MariaDB and two slurmd (local-slurm.sh
--accounting --nodes 2) and pin.so, which records every step and, from
each node'"'"'s job epilog, starts DeliverCommand. DeliverCommand here is a
root-owned script of this test (pin.conf, root-only): it gives each node
its own journal (the two slurmd share one JournalDir on this machine),
waits until slurmdbd has the job'"'"'s end, then waits at a barrier until
the other node'"'"'s delivery of the same job is there too, and runs the
real slurm-pin deliver: both nodes read, merge and write the job'"'"'s
AdminComment at the same instant. Over 200 two-node jobs (an array), the
summary of every job must hold the part of each node exactly once, each
with every record that node'"'"'s journal has of the job.
'

. "$(dirname "$0")/sharness.sh"

# MariaDB, slurmdbd and 400 deliveries: not beside the CPU-heavy files
cpu_heavy_exclusive || exit 1

slurm_require_accounting
pin_so_prereq
PY=/usr/bin/python3
test -x $PY && test_set_prereq PYTHON3

NJOBS=${PIN_RACE_JOBS:-200}
# pin.conf paths take no spaces; the trash directory has one
STATE=$(mktemp -d /tmp/pin-t4081.XXXXXX) || exit 1
cleanup "rm -rf '$STATE'"
BASE=slurm-pin-t4081-$$
CGROOT=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
test -n "$CGROOT" && cleanup "find '$CGROOT/$BASE' -depth -type d -exec rmdir {} + 2>/dev/null"
mkdir -p "$STATE/nj" "$STATE/barrier" "$STATE/done" && chmod 700 "$STATE/nj"

# The command each node's job epilog runs (pin.so: CMD deliver --job N
# --journal DIR --timeout S, in the epilog's environment, which slurmd
# builds: SLURMD_NODENAME, SLURM_CONF; no PATH).
cat >"$STATE/deliver-barrier" <<EOF
#!/bin/sh
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
# pin.so arms alarm(timeout + 10) for the delivery: outlive it to say how
# the delivery ended
trap '' ALRM
shift
job= dir= tmo=
while [ \$# -gt 0 ]; do
    case \$1 in
    --job) job=\$2; shift 2 ;;
    --journal) dir=\$2; shift 2 ;;
    --timeout) tmo=\$2; shift 2 ;;
    *) shift ;;
    esac
done
node=\$SLURMD_NODENAME
nj=$STATE/nj/\$job.\$node
mkdir -m 700 "\$nj" || exit 1
# this node's records of the job: its own journal
# (journal.idx, journal.N.idx: the binary sidecar indexes, not records)
grep -h -F --exclude="*.idx" "\"job_id\":\$job," "\$dir"/journal* 2>/dev/null | grep -F "\"node\":\"\$node\"" >"\$nj/journal"
# until slurmdbd knows the job ended (else the first read only waits)
i=0
while [ \$i -lt 600 ]; do
    case \$(timeout 10 sacct -j "\$job" -X -n -P -o State 2>/dev/null) in
    COMPLETED*|FAILED*|CANCELLED*|TIMEOUT*) break ;;
    esac
    sleep 0.1
    i=\$((i + 1))
done
# the barrier: both nodes' deliveries of the job start together
touch "$STATE/barrier/\$job.\$node"
i=0
while [ "\$(ls "$STATE/barrier" | grep -c "^\$job\\.")" -lt 2 ] && [ \$i -lt 3000 ]; do
    sleep 0.01
    i=\$((i + 1))
done
"$PIN_BIN/slurm-pin" deliver -v --journal "\$nj" --job "\$job" --timeout "\$tmo" >"\$nj/out" 2>"\$nj/err"
echo \$? >"$STATE/done/\$job.\$node"
EOF
chmod 0755 "$STATE/deliver-barrier"

# killed_epilogs: "JOBID|" of each job whose epilog Slurm killed
killed_epilogs () {
    sed -n "s/.*error: \[job \([0-9]*\)\] epilog failed status=0:9.*/^\1|/p" \
        "$SLURM_TEST_DIR"/log/slurmd-*.log 2>/dev/null | sort -u
}

test_expect_success PIN_SO,PYTHON3 'start Slurm with slurmdbd, MariaDB, two nodes and pin.so' '
    {
        echo "CgroupBase=$BASE"
        echo "StateDir=$STATE/state"
        echo "TopologyCache=$STATE/topology.xml"
        echo "JournalDir=$STATE/journal"
        echo "DeliverCommand=$STATE/deliver-barrier"
    } >pin.conf &&
    echo "required $PIN_SO conf=@PIN_CONF@" >plugstack.conf &&
    slurm_start --accounting --nodes 2 --plugstack plugstack.conf --pin-conf pin.conf &&
    timeout 30 sinfo -h -N -o "%N %t" >nodes &&
    test "$(grep -c " idle$" nodes)" -eq 2
'

test_expect_success SLURM,PIN_SO,PYTHON3 "$NJOBS two-node jobs, both nodes delivering each at the same instant" '
    a=$(timeout 60 sbatch --parsable -N2 -n2 -o /dev/null --array=1-$NJOBS \
        --wrap "unset SLURMD_NODENAME; srun -N2 -n2 true") &&
    echo $a >array &&
    end=$(($(date +%s) + 60 + NJOBS * 3)) &&
    # until every job ended and every delivery that started ended
    while test -n "$(timeout 10 squeue -h -o %i)" ||
          test "$(ls "$STATE/done" | wc -l)" -lt "$(ls "$STATE/nj" | wc -l)"; do
        # Slurm 22.05 sometimes SIGKILLs a job epilog (a second terminate
        # RPC for the job flushes its scripts: "epilog failed status=0:9")
        # and drains the node: nothing of slurm-pin; those jobs are left
        # out below and the node resumed, so that the others run
        for n in $(timeout 10 sinfo -h -N -t drain -o %N); do
            timeout 10 scontrol update NodeName=$n State=RESUME
        done
        if test "$(date +%s)" -ge $end; then
            echo "only $(ls "$STATE/done" | wc -l) of $((2 * NJOBS)) deliveries ended" &&
            timeout 10 squeue -h | head -n 5
            return 1
        fi
        sleep 1
    done &&
    cat "$STATE/done"/* | sort | uniq -c &&
    # a delivery the epilog started that never ran (seen: rarely, the
    # detached process was gone before its first line) is the later run
    # of slurm-pin deliver'"'"'s to send (cron): done here, and counted
    timeout 60 sacct -j $a -X -n -P -o JobIDRaw >jobs &&
    killed_epilogs >killed.now &&
    : >catchup &&
    for job in $(cat jobs); do
        for n in $(cut -d" " -f1 nodes); do
            nj="$STATE/nj/$job.$n" &&
            if ! test -d "$nj" && ! grep -qxF "^$job|" killed.now; then
                echo "$job $n" >>catchup &&
                mkdir -m 700 "$nj" &&
                grep -h -F --exclude="*.idx" "\"job_id\":$job," "$STATE/journal"/journal* |
                    grep -F "\"node\":\"$n\"" >"$nj/journal" &&
                "$PIN_BIN/slurm-pin" deliver --journal "$nj" --job $job --timeout 60 ||
                return 1
            fi
        done
    done &&
    echo "$(wc -l <catchup) deliveries never started by the epilog, sent afterwards:" &&
    cat catchup &&
    test "$(wc -l <catchup)" -le $((NJOBS / 20))
'

test_expect_success SLURM,PIN_SO,PYTHON3 'every job'"'"'s summary holds each node'"'"'s part exactly once' '
    a=$(cat array) &&
    killed_epilogs >killed &&
    echo "$(wc -l <killed) jobs left out: Slurm killed their epilog" &&
    test "$(wc -l <killed)" -le $((NJOBS / 20)) &&
    timeout 60 sacct -j $a -X -n -P -o JobIDRaw,AdminComment >ac.all &&
    test "$(wc -l <ac.all)" -eq $NJOBS &&
    grep -v -f killed ac.all >ac || : &&
    $PY - "$STATE/nj" ac <<-\EOF
	import base64, collections, gzip, json, os, sys
	nj, acfile = sys.argv[1], sys.argv[2]
	def pairs(kv):
	    keys = [k for k, _ in kv]
	    dup = [k for k, n in collections.Counter(keys).items() if n > 1]
	    assert not dup, "key twice: %s" % dup
	    return dict(kv)
	# what each node journal holds of each job: {job: {node: count}}
	want = collections.defaultdict(dict)
	jobs = set(l.split("|", 1)[0] for l in open(acfile))
	for d in os.listdir(nj):
	    job, node = d.split(".", 1)
	    if job not in jobs:
	        continue
	    with open(os.path.join(nj, d, "journal")) as f:
	        want[job][node] = sorted(json.dumps(json.loads(l), sort_keys=True) for l in f if l.strip())
	lost = dup = bad = 0
	for line in open(acfile):
	    job, ac = line.rstrip("\n").split("|", 1)
	    nodes = {}
	    if "slurm-pin/1:" in ac:
	        tok = ac[ac.index("slurm-pin/1:") + 12:].split(" ")[0]
	        d = json.loads(gzip.decompress(base64.b64decode(tok)), object_pairs_hook=pairs)
	        nodes = d["nodes"]
	    for node, recs in sorted(want[job].items()):
	        if not recs:
	            bad += 1
	            print("job %s: node %s has no record in its journal" % (job, node))
	        elif node not in nodes:
	            lost += 1
	            print("job %s: node %s part LOST" % (job, node))
	        else:
	            got = sorted(json.dumps(r, sort_keys=True) for r in nodes[node])
	            if got != recs:
	                dup += 1
	                print("job %s: node %s: %d records, the journal has %d" % (job, node, len(got), len(recs)))
	    if len(want[job]) != 2:
	        bad += 1
	        print("job %s: %d nodes delivered, not 2" % (job, len(want[job])))
	print("%d jobs: %d parts lost, %d parts with other records, %d other faults" % (len(want), lost, dup, bad))
	sys.exit(1 if lost or dup or bad else 0)
	EOF
'

test_done
