#!/bin/sh

test_description='accounting: the job summary in slurmdbd (slurm-pin deliver)

Starts a private Slurm with slurmdbd and MariaDB and two slurmd on this
machine (local-slurm.sh --accounting --nodes 2), runs real jobs and sends
their node records to slurmdbd with slurm-pin deliver.  Checks: the
summary is in the job'"'"'s AdminComment (sacct, and the database itself),
survives a slurmdbd restart, arrives once slurmdbd is back when it was
down at job end and exactly once, keeps another tool'"'"'s text (jobstats
still decodes its own), and a two-node job gets one summary with both
nodes.  With pin.so built, the job epilog starts the delivery itself.

The node journal records are written here by hand, one JSON line each in
acct.h'"'"'s key names: they stand in for pin.so'"'"'s journal writer
(acct-core) until the branches are merged.
'

. "$(dirname "$0")/sharness.sh"

# not beside the other heavy files (t/sharness.d/20-cpus.sh): MariaDB and
# slurmdbd starting, or steps timed, starve under t5000's busy threads
cpu_heavy_exclusive || exit 1

slurm_require_accounting
pin_so_prereq
PY=/usr/bin/python3
test -x $PY && test_set_prereq PYTHON

J=$PWD/journal
mkdir -p "$J/epilog" && chmod 700 "$J" "$J/epilog"

# rec KIND JOB STEP NODE: one record line of acct.h
rec () {
    printf '{"v":1,"kind":"%s","cluster":"pin","job_id":%s,"step_id":%s,"array_job_id":4294967294,"array_task_id":4294967294,"node":"%s","uid":0,"user":"root","partition":"debug","job_name":"wrap","policy":"none","fallback":"","cpus":"0","mems":"0","alloc_cpus":1,"start_us":1700000000000000,"end_us":1700000001000000,"elapsed_us":1000000,"user_usec":%s,"system_usec":10,"usage_usec":%s,"exit_status":0,"state":"COMPLETED","source":"step-cgroup","cgroup":"/x","mode":"standalone","confined_us":0,"confine_use":0,"confine_cpus":"","confine_mems":"","steps":0}\n' \
        "$1" "$2" "$3" "$4" "$((1000 + $3))" "$((1010 + $3))"
}

# journal DIR JOB NODE: step records 0 and 1 and the job record of JOB
journal () {
    { rec step "$2" 0 "$3" && rec step "$2" 1 "$3" && rec job "$2" 2 "$3"; } >>"$1/journal"
}

admin_comment () {
    sacct -j "$1" -X -n -P -o AdminComment
}

# decode FILE: print "NODE COUNT" per node of the summary in FILE (an
# AdminComment), and "other:<text>" for what precedes it (without the space
# between).  Our token is "slurm-pin/1:" base64 alone in the field, and
# "{~}" base 16 over punctuation after other text (summary.h).
decode () {
    $PY - "$1" <<-\EOF
	import base64, gzip, json, re, sys
	s = open(sys.argv[1]).read().rstrip("\n")
	m = re.search(r"(?:^| )(?:slurm-pin/1:([A-Za-z0-9+/=]+)|\{~\}([!#()*,.:;<>?@\[\]^]+))(?: |$)", s)
	if m.group(1):
	    assert m.start() == 0, "base64 token after other text"
	    gz = base64.b64decode(m.group(1), validate=True)
	else:
	    assert m.start() > 0, "base-16 token alone"
	    digits = str.maketrans("!#()*,.:;<>?@[]^", "0123456789abcdef")
	    gz = bytes.fromhex(m.group(2).translate(digits))
	d = json.loads(gzip.decompress(gz))
	assert d["v"] == 1
	print("other:" + s[:m.start()])
	for n in sorted(d["nodes"]):
	    print(n, len(d["nodes"][n]))
	EOF
}

# wait_ended JOB: until slurmdbd knows the job ended (bounded)
wait_ended () {
    _n=$((PIN_SLURM_TIMEOUT * 2))
    while :; do
        _st=$(sacct -j "$1" -X -n -P -o State 2>/dev/null)
        case "$_st" in
            COMPLETED*|FAILED*|CANCELLED*|TIMEOUT*) return 0 ;;
        esac
        _n=$((_n - 1))
        test $_n -gt 0 || { echo "job $1 still '$_st' in slurmdbd" >&2; return 1; }
        sleep 0.5
    done
}

# The command the job epilog runs (DeliverCommand=): the real one, with
# this test's journal.  Root-owned and 0755, as pin.so demands.
# (In $STATE: pin.conf paths take no spaces, the trash directory has one.)
STATE=$(mktemp -d /tmp/pin-t4080.XXXXXX) || exit 1
cleanup "rm -rf '$STATE'"
cat >"$STATE/deliver-wrapper" <<EOF
#!/bin/sh
# pin.so runs: CMD deliver --job N --journal JOURNALDIR --timeout S;
# deliver from this test's hand-written journal instead of JournalDir.
shift
job= tmo=
while [ \$# -gt 0 ]; do
    case \$1 in
    --job) job=\$2; shift 2 ;;
    --timeout) tmo=\$2; shift 2 ;;
    *) shift ;;
    esac
done
exec "$PIN_BIN/slurm-pin" deliver -v --journal "$J/epilog" --job "\$job" --timeout "\$tmo" 2>>"$STATE/deliver.log"
EOF
chmod 0755 "$STATE/deliver-wrapper"
cat >pin.conf <<EOF
StateDir=$STATE/state
TopologyCache=$STATE/topology.xml
CgroupBase=slurm-pin-t4080-$$
DeliverCommand=$STATE/deliver-wrapper
EOF
if test_have_prereq PIN_SO; then
    echo "optional $PIN_SO conf=@PIN_CONF@" >plugstack.conf
else
    echo "# no pin.so" >plugstack.conf
fi

test_expect_success 'start Slurm with slurmdbd, MariaDB and two nodes' '
    slurm_start --accounting --nodes 2 --plugstack plugstack.conf --pin-conf pin.conf &&
    sinfo -h -N -o "%N %t" >nodes &&
    test "$(grep -c " idle$" nodes)" -eq 2
'
N1=$(sinfo -h -N -o %N 2>/dev/null | sed -n 1p)
N2=$(sinfo -h -N -o %N 2>/dev/null | sed -n 2p)
mkdir -p "$J/$N1" "$J/$N2" && chmod 700 "$J"/*

test_expect_success SLURM,PYTHON 'a job'"'"'s summary reaches slurmdbd' '
    j=$(sbatch --parsable --wait -w "$N1" --wrap "srun true; srun true") &&
    echo $j >job.single &&
    journal "$J/$N1" $j "$N1" &&
    wait_ended $j &&
    slurm-pin deliver --journal "$J/$N1" --job $j &&
    admin_comment $j >ac.single &&
    grep "^slurm-pin/1:" ac.single &&
    decode ac.single >got &&
    printf "other:\n%s 3\n" "$N1" >expect &&
    test_cmp expect got
'

test_expect_success SLURM,PYTHON 'the database holds the same text' '
    j=$(cat job.single) &&
    sock="$LOCAL_SLURM_DIR/run/mariadb.sock" &&
    mariadb --no-defaults -S "$sock" -uroot -N -B -r \
        -e "select admin_comment from slurm_acct_db.pin_job_table where id_job=$j" >db.single &&
    test_cmp ac.single db.single
'

test_expect_success SLURM 'delivering again changes nothing and marks once' '
    j=$(cat job.single) &&
    slurm-pin deliver --journal "$J/$N1" &&
    slurm-pin deliver --journal "$J/$N1" --job $j &&
    admin_comment $j >ac.again &&
    test_cmp ac.single ac.again &&
    grep -c "^pin $j $N1 " "$J/$N1/delivered" >count &&
    echo 1 >one &&
    test_cmp one count
'

test_expect_success SLURM 'the summary survives a slurmdbd restart' '
    j=$(cat job.single) &&
    "$LOCAL_SLURM" dbd-stop --dir "$LOCAL_SLURM_DIR" &&
    test_must_fail sacct -j $j -X -n -P -o AdminComment &&
    "$LOCAL_SLURM" dbd-start --dir "$LOCAL_SLURM_DIR" &&
    admin_comment $j >ac.restart &&
    test_cmp ac.single ac.restart
'

test_expect_success SLURM,PYTHON 'slurmdbd down at job end: sent once it is back, exactly once' '
    "$LOCAL_SLURM" dbd-stop --dir "$LOCAL_SLURM_DIR" &&
    test_when_finished "\"$LOCAL_SLURM\" dbd-start --dir \"$LOCAL_SLURM_DIR\"" &&
    j=$(sbatch --parsable --wait -w "$N1" --wrap "srun true") &&
    journal "$J/$N1" $j "$N1" &&
    test_expect_code 1 slurm-pin deliver --journal "$J/$N1" --job $j --timeout 3 2>down.err &&
    grep "kept for a later run" down.err &&
    ! grep "^pin $j " "$J/$N1/delivered" &&
    "$LOCAL_SLURM" dbd-start --dir "$LOCAL_SLURM_DIR" &&
    wait_ended $j &&
    slurm-pin deliver --journal "$J/$N1" &&
    admin_comment $j >ac.back1 &&
    decode ac.back1 >got &&
    printf "other:\n%s 3\n" "$N1" >expect &&
    test_cmp expect got &&
    slurm-pin deliver --journal "$J/$N1" --job $j &&
    admin_comment $j >ac.back2 &&
    test_cmp ac.back1 ac.back2 &&
    test "$(grep -c "^pin $j " "$J/$N1/delivered")" = 1
'

test_expect_success SLURM,PYTHON 'a comment set with sacctmgr before delivery is kept' '
    j=$(sbatch --parsable --wait -w "$N1" --wrap true) &&
    wait_ended $j &&
    sacctmgr -i modify job where jobid=$j set AdminComment="site note: checked" &&
    admin_comment $j >before &&
    echo "site note: checked" >expect &&
    test_cmp expect before &&
    journal "$J/$N1" $j "$N1" &&
    slurm-pin deliver --journal "$J/$N1" --job $j &&
    admin_comment $j >after &&
    decode after >got &&
    printf "other:site note: checked\n%s 3\n" "$N1" >expect &&
    test_cmp expect got &&
    grep "^site note: checked {~}[^A-Za-z0-9+/= -]*\$" after
'

# A jobstats summary whose base64 has no padding (the case where a
# decoder that reads everything after JS1: would go on into ours).  Python
# 3.13 decodes on after padding too (Debian 13 and unstable), coreutils
# base64 -di always did: our token there has no base64 character at all.
# sacctmgr 22.05 lowercases what it sets (seen: AbC=D became abc=d), so
# the blob goes into slurmdbd'"'"'s table directly, as a tool using the
# API would leave it.
test_expect_success SLURM,PYTHON 'another tool'"'"'s AdminComment is kept; jobstats still reads it' '
    j=$(sbatch --parsable --wait -w "$N1" --wrap true) &&
    wait_ended $j &&
    $PY -c "
import base64, gzip, json
for pad in range(64):
    d = {\"gpus\": 0, \"nodes\": {\"vm\": {\"cpus\": 1, \"total_time\": 3.5, \"x\": \"a\" * pad}}, \"total_time\": 3}
    b = base64.b64encode(gzip.compress(json.dumps(d).encode(), mtime=0)).decode()
    if not b.endswith(\"=\"):
        break
print(\"JS1:\" + b)
open(\"js.json\", \"w\").write(json.dumps(d))
" >js1 &&
    ! grep "=\$" js1 &&
    mariadb --no-defaults -S "$LOCAL_SLURM_DIR/run/mariadb.sock" -uroot \
        -e "update slurm_acct_db.pin_job_table set admin_comment=\"$(cat js1)\" where id_job=$j" &&
    admin_comment $j >before &&
    test_cmp js1 before &&
    journal "$J/$N1" $j "$N1" &&
    slurm-pin deliver --journal "$J/$N1" --job $j &&
    admin_comment $j >after &&
    decode after >got &&
    printf "other:%s\n%s 3\n" "$(cat js1)" "$N1" >expect &&
    test_cmp expect got &&
    grep "^JS1:[A-Za-z0-9+/]* {~}[^A-Za-z0-9+/= -]*\$" after &&
    cut -c5- after | base64 -di | gzip -dc >js.out &&
    test_cmp js.json js.out &&
    $PY -c "
import base64, gzip, json, sys
data = open(\"after\").read().rstrip(\"\\n\")
# jobstats.py: data.startswith(\"JS1:\") and this exact decoding
assert data.startswith(\"JS1:\")
t = json.loads(gzip.decompress(base64.b64decode(data[4:])))
assert t == json.load(open(\"js.json\")), t
print(\"jobstats reads\", sorted(t[\"nodes\"]))
"
'

test_expect_success SLURM,PYTHON 'a two-node job gives one summary with both nodes' '
    j=$(sbatch --parsable --wait -N2 --wrap "srun -N2 true") &&
    journal "$J/$N1" $j "$N1" &&
    journal "$J/$N2" $j "$N2" &&
    rec step $j 2 "$N2" >>"$J/$N2/journal" &&
    wait_ended $j &&
    { slurm-pin deliver --journal "$J/$N1" --job $j & p1=$!; } &&
    slurm-pin deliver --journal "$J/$N2" --job $j &&
    wait $p1 &&
    admin_comment $j >ac.two &&
    decode ac.two >got &&
    printf "other:\n%s 3\n%s 4\n" "$N1" "$N2" >expect &&
    test_cmp expect got
'

test_expect_success SLURM,PIN_SO,PYTHON 'the job epilog starts the delivery' '
    j=$(sbatch --parsable -w "$N1" --wrap "sleep 3") &&
    journal "$J/epilog" $j "$N1" &&
    slurm_wait_job $j &&
    n=$((PIN_SLURM_TIMEOUT * 2)) &&
    # the mark comes last, after the write and its read-backs
    while ! grep -qs "^pin $j $N1 " "$J/epilog/delivered"; do
        n=$((n - 1)) && test $n -gt 0 && sleep 0.5 || break
    done &&
    { cat "$STATE/deliver.log" || true; } &&
    grep "^pin $j $N1 " "$J/epilog/delivered" &&
    admin_comment $j >ac.epilog &&
    decode ac.epilog >got &&
    printf "other:\n%s 3\n" "$N1" >expect &&
    test_cmp expect got
'

test_done
