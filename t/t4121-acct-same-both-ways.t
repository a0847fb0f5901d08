#!/bin/sh

test_description='slurm-pin acct, eff and report: the same numbers read from slurmdbd and from the journal

Issue 22 item 1.  Real jobs of several shapes on a private Slurm with
slurmdbd (local-slurm.sh --accounting) and pin.so: -c 1, -c 2, -n 2, a
batch job with steps, a TIMEOUT, a CANCELLED and an array.  pin.so
writes their records to the node journal; they are delivered to
slurmdbd.  Then every column slurm-pin acct can print is read both ways
(slurmdbd, and --journal) and compared field by field, on job lines and
steps.  The intended differences (a field only one source has, a value
only one source can know) are listed below and in
doc/accounting-reports.md; any other difference fails.  eff'"'"'s and
report'"'"'s numbers must be the same both ways too.
'

. "$(dirname "$0")/sharness.sh"

cpu_heavy_exclusive || exit 1

slurm_require_accounting
pin_so_prereq

STATE=$(mktemp -d /tmp/pin-t4121.XXXXXX) || exit 1
cleanup "rm -rf '$STATE'"
JOURNAL=$STATE/journal
cat >pin.conf <<EOF
StateDir=$STATE/state
TopologyCache=$STATE/topology.xml
CgroupBase=slurm-pin-t4121-$$
JournalDir=$JOURNAL
DeliverCommand=none
EOF
echo "required $PIN_SO conf=@PIN_CONF@" >plugstack.conf
test "$(nproc)" -ge 2 && test_set_prereq TWO_CPUS

# wait_db JOB STATE-PATTERN: until slurmdbd has the job's line in a state
# matching the pattern (bounded)
wait_db () {
    _n=$((PIN_SLURM_TIMEOUT * 8))
    until sacct -j "$1" -X -n -P -o State 2>/dev/null | grep -q "$2"; do
        _n=$((_n - 1)) && test $_n -gt 0 || {
            echo "wait_db: job $1 not $2 in slurmdbd: $(sacct -j "$1" -X -n -P -o State)" >&2
            return 1
        }
        sleep 0.5
    done
}

# wait_journal JOBIDRAW: until the epilog has written the job's record
wait_journal () {
    _n=$((PIN_SLURM_TIMEOUT * 4))
    until grep -q "\"kind\":\"job\",\"cluster\":\"[^\"]*\",\"job_id\":$1," "$JOURNAL"/journal*; do
        _n=$((_n - 1)) && test $_n -gt 0 || {
            echo "wait_journal: no job record of $1" >&2
            return 1
        }
        sleep 0.5
    done
}

test_expect_success PIN_SO 'start Slurm with slurmdbd and pin.so' '
    slurm_start --accounting --plugstack plugstack.conf --pin-conf pin.conf
'

test_expect_success SLURM,PIN_SO,TWO_CPUS 'run jobs of several shapes' '
    printf "#!/bin/sh\ntimeout 1 sh -c \"while :; do :; done\"\nexit 0\n" >burn.sh &&
    chmod +x burn.sh &&
    n2=$(sbatch --parsable -n 2 -J shape-n2 --wrap "srun -n2 ./burn.sh") &&
    c1=$(sbatch --parsable -c 1 -J shape-c1 --wrap "srun -n1 -c1 ./burn.sh") &&
    c2=$(sbatch --parsable -c 2 -J shape-c2 --wrap "srun -n1 -c2 ./burn.sh") &&
    st=$(sbatch --parsable -c 1 -J shape-steps --wrap "srun -n1 true; srun -n1 sleep 1; srun -n1 ./burn.sh") &&
    to=$(sbatch --parsable -c 1 -t 1 -J shape-timeout --wrap "srun -n1 sleep 300") &&
    ca=$(sbatch --parsable -c 1 -J shape-cancel --wrap "srun -n1 sleep 300") &&
    ar=$(sbatch --parsable -c 1 --array=1-2 -J shape-array --wrap "srun -n1 ./burn.sh") &&
    echo "$n2 $c1 $c2 $st $to $ca ${ar}_1 ${ar}_2" >jobs &&
    k=$((PIN_SLURM_TIMEOUT * 8)) &&
    until test "$(sacct -j $ca -n -P -o JobID,State | grep -c "^$ca\.0|RUNNING$")" = 1; do
        k=$((k - 1)) && test $k -gt 0 && sleep 0.5 || return 1
    done &&
    sleep 1 &&
    scancel "$ca" &&
    for j in $n2 $c1 $c2 $st ${ar}_1 ${ar}_2; do
        wait_db $j COMPLETED || return 1
    done &&
    wait_db $ca CANCELLED && cpu_heavy_idle wait_db $to TIMEOUT &&
    for j in $(sacct -j $(echo $(cat jobs) | tr " " ,) -X -n -P -o JobIDRaw); do
        wait_journal $j || return 1
    done &&
    slurm-pin acct --deliver --journal "$JOURNAL" -v &&
    k=$((PIN_SLURM_TIMEOUT * 4)) &&
    until test "$(slurm-pin acct -j $(echo $(cat jobs) | tr " " ,) -X -n -P -o JobID 2>/dev/null | wc -l)" = 8; do
        k=$((k - 1)) && test $k -gt 0 && sleep 0.5 || return 1
    done
'

FIELDS=$(slurm-pin acct --helpformat)

# The intended differences, field by field: "FIELD ROWS REASON" where
# ROWS is job (job lines), step (numbered steps: 123.0), batch, extern,
# all, or "by" (State: slurmdbd'"'"'s "CANCELLED by UID" where the journal
# has "CANCELLED", on job lines, and no other difference).  Anything else that differs fails.  The same list, with the
# reasons, is doc/accounting-reports.md's "One definition of every field".
cat >intended <<\EOF
MaxRSS all slurmdbd's only (a step's TRESUsageInMax memory); a journal has none
Reason job slurmdbd's only (state_reason_prev); a journal has none
JobName step slurmdbd has the step's name; a record carries none and prints the job's name
State by slurmdbd's CANCELLED by UID is CANCELLED in the journal (job lines): slurmctld's answer to the epilog does not say who
EOF
# Steps only (not job lines): Start, End and Submit (a step's Submit is
# its Start) are slurmctld's seconds in slurmdbd (the end: when it handled
# the step's completion, seconds late on a loaded node), pin.so's own
# measurement of the same step in the journal (from the step's start in
# slurmstepd to its last task's exit): they may differ by up to the
# seconds below, and Elapsed and CPUTime (Elapsed x AllocCPUS) follow.
# A larger difference fails.
cat >tolerance <<\EOF
Start step,batch,extern 10
End step,batch,extern 10
Submit step,batch,extern 10
Elapsed step,batch,extern 10
CPUTime step,batch,extern 10
EOF

# compare_rows DBD JOURNAL: every field of every row, rows by JobID
compare_rows () {
    /usr/bin/python3 - "$1" "$2" intended tolerance <<-\EOF
	import re, sys, time
	def rows(path):
	    lines = open(path).read().splitlines()
	    head = lines[0].split("|")
	    rows = [dict(zip(head, l.split("|"))) for l in lines[1:]]
	    return head, {r["JobID"]: r for r in rows}
	head, dbd = rows(sys.argv[1])
	_, jrn = rows(sys.argv[2])
	intended = {}
	for l in open(sys.argv[3]):
	    f, kind, why = l.split(" ", 2)
	    intended.setdefault(f, set()).add(kind)
	tolerance = {}
	for l in open(sys.argv[4]):
	    f, kinds, lim = l.split()
	    tolerance[f] = (set(kinds.split(",")), int(lim))
	def secs(v):
	    if re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", v):
	        return time.mktime(time.strptime(v, "%Y-%m-%dT%H:%M:%S"))
	    m = re.fullmatch(r"(?:(\d+)-)?(\d+):(\d\d):(\d\d)", v)
	    if m:
	        d, h, mi, s = (int(x or 0) for x in m.groups())
	        return ((d * 24 + h) * 60 + mi) * 60 + s
	    return None
	def kind(jobid):
	    if "." not in jobid: return "job"
	    s = jobid.split(".", 1)[1]
	    return s if s in ("batch", "extern", "interactive") else "step"
	bad = 0
	if set(dbd) != set(jrn):
	    print("rows differ: slurmdbd only %s, journal only %s"
	          % (sorted(set(dbd) - set(jrn)), sorted(set(jrn) - set(dbd))))
	    bad += 1
	for jobid in sorted(set(dbd) & set(jrn)):
	    for f in head:
	        a, b = dbd[jobid][f], jrn[jobid][f]
	        if a == b: continue
	        k = intended.get(f, set())
	        if f in tolerance and kind(jobid) in tolerance[f][0]:
	            lim = tolerance[f][1]
	            if f == "CPUTime":
	                lim *= int(dbd[jobid]["AllocCPUS"] or 1)
	            sa, sb = secs(a), secs(b)
	            if sa is not None and sb is not None and abs(sa - sb) <= lim:
	                print("within %ds: %s %s: slurmdbd %r, journal %r" % (lim, jobid, f, a, b))
	                continue
	        if "by" in k and kind(jobid) == "job" and re.fullmatch(re.escape(b) + r" by \d+", a):
	            print("intended: %s %s: slurmdbd %r, journal %r" % (jobid, f, a, b))
	            continue
	        if "all" in k or kind(jobid) in k:
	            print("intended: %s %s: slurmdbd %r, journal %r" % (jobid, f, a, b))
	            continue
	        print("DIFFERS: %s %s: slurmdbd %r, journal %r" % (jobid, f, a, b))
	        bad += 1
	print("%d rows, %d fields compared, %d unintended differences"
	      % (len(dbd), len(head), bad))
	sys.exit(1 if bad or not dbd else 0)
	EOF
}

test_expect_success SLURM,PIN_SO,TWO_CPUS 'acct: every column the same from slurmdbd and from the journal' '
    ids=$(echo $(cat jobs) | tr " " ,) &&
    slurm-pin acct -j $ids -P -o $FIELDS >dbd.out &&
    slurm-pin acct --journal "$JOURNAL" -j $ids -P -o $FIELDS >journal.out &&
    cat dbd.out journal.out &&
    compare_rows dbd.out journal.out
'

# eff: all its numbers (seff'"'"'s lines and slurm-pin'"'"'s step lines); the
# memory lines hold an intended difference above (MaxRSS)
test_expect_success SLURM,PIN_SO,TWO_CPUS 'eff: the same numbers from slurmdbd and from the journal' '
    for id in $(cat jobs); do
        slurm-pin eff $id >eff.dbd.$id &&
        slurm-pin eff --journal "$JOURNAL" $id >eff.journal.$id &&
        # memory: slurmdbd'"'"'s MaxRSS (and from 26.05'"'"'s seff its per-task
        # maximum against the average), which the journal has not
        grep -v -e "^Memory " -e "^The task which had the largest memory" \
            eff.dbd.$id >eff.dbd.cmp.$id &&
        grep -v -e "^Memory " -e "^The task which had the largest memory" \
            eff.journal.$id >eff.journal.cmp.$id &&
        test_cmp eff.dbd.cmp.$id eff.journal.cmp.$id || return 1
    done
'

test_expect_success SLURM,PIN_SO,TWO_CPUS 'report: the same numbers from slurmdbd and from the journal' '
    for by in policy user partition; do
        slurm-pin report -S now-1hour --by=$by >report.dbd.$by &&
        slurm-pin report -S now-1hour --by=$by --journal "$JOURNAL" >report.journal.$by &&
        cat report.dbd.$by &&
        test_cmp report.dbd.$by report.journal.$by || return 1
    done
'

# Issue 22 item 4: sacct lists jobs by Submit (seconds), then array job
# id (0 for a job that is no array), task id and job id
# (src/sacct/options.c); a job submitted in the same second as an array
# before it comes first.  Both submitted at the start of a second, tried
# until they share one (the tie is what sorting by job id gets wrong).
test_expect_success SLURM,PIN_SO 'acct lists jobs in sacct'"'"'s order: Submit, then array ids' '
    tries=0 &&
    while :; do
        /usr/bin/python3 -c "import time; time.sleep(1.05 - time.time() % 1)" &&
        a=$(sbatch --parsable -c 1 --array=1-2 -J order-array --wrap true) &&
        p=$(sbatch --parsable -c 1 -J order-plain --wrap true) &&
        wait_db $p COMPLETED &&
        wait_db ${a}_1 COMPLETED && wait_db ${a}_2 COMPLETED &&
        test "$(sacct -j $a,$p -X -n -P -o Submit | sort -u | wc -l)" = 1 && break
        tries=$((tries + 1)) && test $tries -lt 5 || return 1
    done &&
    sacct -j $a,$p -X -P -o JobID,Submit >order.sacct &&
    slurm-pin acct -j $a,$p -X -P -o JobID,Submit >order.pin &&
    cat order.sacct &&
    test_cmp order.sacct order.pin &&
    head -n 2 order.pin | grep -q "^$p|"
'

# Issue 22 item 4: MaxRSS's real value.  A step that holds 40 MiB, sampled
# every second (--acctg-freq): slurmdbd's MaxRSS of it is at least that,
# and acct prints sacct's number
test_expect_success SLURM,PIN_SO 'MaxRSS: the real value of a step that holds 40 MiB' '
    m=$(sbatch --parsable --wait -c 1 -J maxrss --wrap "srun -n1 --acctg-freq=task=1 python3 -c \"import time; x = bytearray(40 << 20); time.sleep(4)\"") &&
    wait_db $m COMPLETED &&
    sacct -j $m.0 -n -P -o MaxRSS --noconvert >rss.sacct &&
    slurm-pin acct -j $m.0 -n -P -o MaxRSS --noconvert >rss.pin &&
    cat rss.sacct &&
    test_cmp rss.sacct rss.pin &&
    test "$(cat rss.pin)" -ge $((40 << 20))
'

# Issue 22 item 4: -D with a reused job id.  slurmctld started again
# without its saved jobs (local-slurm.sh ctld-restart --clean: slurmctld
# -c) gives job ids from 1 again; slurmdbd keeps both jobs of the reused
# id.  Last in this file: the new jobs write to the same journal.
test_expect_success SLURM,PIN_SO '-D: a reused job id, from slurmdbd and from the journal' '
    first=$(sacct -X -n -P -o JobIDRaw -S now-1hour | sort -n | head -n 1) &&
    "$LOCAL_SLURM" ctld-restart --clean --dir "$LOCAL_SLURM_DIR" &&
    r=$(sbatch --parsable --wait -c 1 -J reused --wrap "srun -n1 true") &&
    test "$r" = "$first" &&
    wait_db $r COMPLETED &&
    k=$((PIN_SLURM_TIMEOUT * 4)) &&
    until test "$(cat "$JOURNAL"/journal* | grep -c "\"kind\":\"job\",\"cluster\":\"[^\"]*\",\"job_id\":$r,")" -ge 2; do
        k=$((k - 1)) && test $k -gt 0 && sleep 0.5 || return 1
    done &&
    for d in "" -D; do
        sacct -j $r $d -X -P -o JobID,JobName,Submit,State >dup.sacct &&
        slurm-pin acct -j $r $d -X -P -o JobID,JobName,Submit,State >dup.pin &&
        slurm-pin acct --journal "$JOURNAL" -j $r $d -X -P -o JobID,JobName,Submit,State >dup.journal &&
        cat dup.sacct &&
        test_cmp dup.sacct dup.pin &&
        test_cmp dup.sacct dup.journal || return 1
    done &&
    test "$(wc -l <dup.pin)" = 3
'

test_done
