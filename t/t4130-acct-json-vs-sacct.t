#!/bin/sh

test_description='slurm-pin acct --json in the shape of the installed sacct --json

Issue 22 item 3.  Real jobs on a private Slurm with slurmdbd and pin.so:
COMPLETED (a batch job with steps), FAILED, TIMEOUT, CANCELLED while it
runs, an array of two, and a script that exits 143 (return_code 143 in
JSON, ExitCode 15:0).  For the same jobs, slurm-pin acct --json
(read from slurmdbd, and from the journal) must have the key sets and
value types of the installed sacct --json at every path, recursively
(the data_parser version of the installed Slurm), and the values that
must agree do: ids, states, exit codes, signals, CPUs, times.  The
intended differences are listed below, one path a line, and in
doc/accounting-reports.md.
'

. "$(dirname "$0")/sharness.sh"

cpu_heavy_exclusive || exit 1

if ! slurm-pin acct --help >/dev/null 2>&1; then
    echo "Bail out! slurm-pin acct --help fails: the slurm-pin under test has no acct"
    EXIT_OK=t
    exit 1
fi

slurm_require_accounting
pin_so_prereq
pin_prereq_cmd PYTHON3 python3

STATE=$(mktemp -d /tmp/pin-t4130.XXXXXX) || exit 1
cleanup "rm -rf '$STATE'"
JOURNAL=$STATE/journal
cat >pin.conf <<EOF2
StateDir=$STATE/state
TopologyCache=$STATE/topology.xml
CgroupBase=slurm-pin-t4130-$$
JournalDir=$JOURNAL
DeliverCommand=none
EOF2
echo "required $PIN_SO conf=@PIN_CONF@" >plugstack.conf

# wait_db JOB STATE-PATTERN: until slurmdbd has the job's line in a state
# matching the pattern (bounded)
wait_db () {
    _n=$((PIN_SLURM_TIMEOUT * 4))
    until sacct -j "$1" -X -n -P -o State 2>/dev/null | grep -q "$2"; do
        _n=$((_n - 1)) && test $_n -gt 0 || {
            echo "wait_db: job $1 not $2 in slurmdbd: $(sacct -j "$1" -X -n -P -o State)" >&2
            return 1
        }
        sleep 0.5
    done
}

# PIN_T4130_SAVE=FILE (debugging): keep sacct'"'"'s JSON in FILE, slurm-pin'"'"'s
# in FILE.pin and FILE.journal, sacct'"'"'s ExitCodes in FILE.exit
test_expect_success PIN_SO 'start Slurm with slurmdbd and pin.so' '
    slurm_start --accounting --plugstack plugstack.conf --pin-conf pin.conf
'

test_expect_success SLURM,PIN_SO 'run jobs: COMPLETED with steps, FAILED, TIMEOUT, CANCELLED, an array' '
    t=$(sbatch --parsable -t 1 -c 1 -J tojob --wrap "sleep 300") &&
    c=$(sbatch --parsable -c 1 -J okjob --wrap "srun -n1 true; srun -n1 sleep 1") &&
    f=$(sbatch --parsable -c 1 -J failjob --wrap "sleep 1; exit 3") &&
    e=$(sbatch --parsable -c 1 -J exit143 --wrap "exit 143") &&
    r=$(sbatch --parsable -c 1 -J canceljob --wrap "srun -n1 sleep 300") &&
    a=$(sbatch --parsable -c 1 -J arrjob --array=1-2 --wrap "sleep 1") &&
    n=$((PIN_SLURM_TIMEOUT * 4)) &&
    until test "$(sacct -j $r -n -P -o JobID | grep -c "^$r\.0$")" = 1; do
        n=$((n - 1)) && test $n -gt 0 && sleep 0.5 || return 1
    done &&
    sleep 1 &&
    scancel "$r" &&
    wait_db "$c" COMPLETED && wait_db "$f" FAILED && wait_db "$r" CANCELLED &&
    wait_db "$e" FAILED &&
    wait_db "${a}_1" COMPLETED && wait_db "${a}_2" COMPLETED &&
    cpu_heavy_idle wait_db "$t" TIMEOUT &&
    echo "$t,$c,$f,$r,$a,$e" >jobs &&
    n=$((PIN_SLURM_TIMEOUT * 4)) &&
    for j in $t $c $f $r $e; do
        until grep -q "\"kind\":\"job\",\"cluster\":\"[^\"]*\",\"job_id\":$j," "$JOURNAL"/journal*; do
            n=$((n - 1)) && test $n -gt 0 && sleep 0.5 || return 1
        done
    done &&
    sleep 2 &&
    slurm-pin acct --deliver --journal "$JOURNAL" -v &&
    n=$((PIN_SLURM_TIMEOUT * 4)) &&
    until test "$(slurm-pin acct -j $(cat jobs) -X -n -P -o JobID 2>/dev/null | wc -l)" = 7; do
        n=$((n - 1)) && test $n -gt 0 && sleep 0.5 || return 1
    done &&
    sacct -j $(cat jobs) --json >sacct.json &&
    sacct -j $(cat jobs) -n -P -o JobIDRaw,ExitCode >sacct.exit &&
    case $(sed -n "s/^$e|//p" sacct.exit) in
        15:0) echo 1 ;;
        143:0) echo 0 ;;
        *) echo "sacct ExitCode of the exit-143 job: $(sed -n "s/^$e|//p" sacct.exit)" >&2; false ;;
    esac >take128 &&
    if test -n "$PIN_T4130_SAVE"; then cp sacct.json "$PIN_T4130_SAVE"; fi
'

# The comparison: every path of sacct --json (arrays as PATH[], objects
# recursively) and the JSON types seen there, against slurm-pin's; then
# the values that must agree, job by job and step by step (steps matched
# by id).  Intended differences come from the list below, one a line:
#   missing PATH   sacct has PATH (and all under it), slurm-pin not
#   extra PATH     slurm-pin has PATH, sacct not
#   null PATH      slurm-pin prints null (dbv0.0.38's unknown) where
#                  sacct has a value slurm-pin does not keep
#   exit22         22.05 (openapi/dbv0.0.38) prints every exit status
#                  "SUCCESS" with return_code 0: slurm-pin prints the
#                  code (ExitCode's), status "ERROR" when not 0
# A listed difference that does not occur with this Slurm is said in the
# output (exit22 where it must occur fails); slurm-pin's own keys under "slurm_pin" are not compared.
cat >cmp.py <<'PY'
import json, sys

sacct = json.load(open(sys.argv[1]))
pin = json.load(open(sys.argv[2]))
listed = [l.split() for l in open(sys.argv[3]) if l.strip() and not l.startswith("#")]
exits = dict(l.strip().split("|") for l in open(sys.argv[4]) if l.strip())
mode = sys.argv[5]  # values: all below; ids: job and step ids
# whether the installed sacct's ExitCode takes 128 off a code of 128 and
# more (24.11: 143 is "15:0"; 26.05: "143:0"), as seen for the exit-143 job
take128 = len(sys.argv) > 6 and sys.argv[6] == "1"
values = mode == "values"
bad = []
used = set()

def tname(v):
    if v is None: return "null"
    if isinstance(v, bool): return "bool"
    if isinstance(v, int): return "int"
    if isinstance(v, float): return "float"
    if isinstance(v, str): return "string"
    if isinstance(v, list): return "array"
    return "object"

def walk(v, p, out):
    if p.endswith(".slurm_pin"):
        return
    out.setdefault(p, set()).add(tname(v))
    if isinstance(v, dict):
        for k, x in v.items():
            walk(x, p + "." + k, out)
    elif isinstance(v, list):
        for x in v:
            walk(x, p + "[]", out)

def covered(kind, p):
    for i, l in enumerate(listed):
        if l[0] == kind and (p == l[1] or p.startswith(l[1] + ".") or p.startswith(l[1] + "[]")):
            used.add(i)
            return True
    return False

S, P = {}, {}
walk(sacct, "", S)
walk(pin, "", P)
for p in sorted(S):
    if p not in P:
        if not covered("missing", p):
            bad.append("missing in slurm-pin: %s (%s)" % (p, "/".join(sorted(S[p]))))
    elif not P[p] <= S[p] and not (P[p] - S[p] == {"null"} and covered("null", p)):
        bad.append("type of %s: sacct %s, slurm-pin %s" % (p, "/".join(sorted(S[p])), "/".join(sorted(P[p]))))
for p in sorted(P):
    if p not in S and not covered("extra", p):
        bad.append("only in slurm-pin: %s (%s)" % (p, "/".join(sorted(P[p]))))

def num(v):
    if isinstance(v, dict) and "number" in v:
        return None if not v["set"] else ("inf" if v["infinite"] else v["number"])
    return v

def flag(v):
    return v[0] if isinstance(v, list) and len(v) == 1 else v

def ec(e, text=False):
    """(return code, signal) of an exit_code; text: as ExitCode's text,
    which takes 128 off a code of 128 and more (a shell that ended on
    SIGTERM returns 143: return_code 143, ExitCode 15:0)"""
    sig = e.get("signal") or {}
    sig = num(sig.get("id", sig.get("signal_id"))) or 0
    rc = num(e.get("return_code")) or 0
    if text and take128 and rc >= 128:
        rc -= 128
    return "%d:%d" % (rc, sig)

def step_id(job, st):
    i = st["step"]["id"]
    return i if isinstance(i, str) and "." in i else "%d.%s" % (job["job_id"], i)

def cpus(tres):
    return [t["count"] for t in tres if t["type"] == "cpu"]

def cmp(what, a, b):
    if a != b:
        bad.append("%s: sacct %r, slurm-pin %r" % (what, a, b))

def cmp_exit(what, raw, se, pe):
    cmp(what + " exit_code (as ExitCode " + exits.get(raw, "?") + ")", exits.get(raw), ec(pe, True))
    if ec(se, True) != exits.get(raw):
        # only 22.05's "SUCCESS"/0 for every exit may differ
        if flag(se["status"]) == "SUCCESS" and covered("exit22", "exit22"):
            return
        bad.append("%s: sacct --json exit_code %s is not its ExitCode %s" % (what, ec(se), exits.get(raw)))
    else:
        cmp(what + " exit_code.status", flag(se["status"]), flag(pe["status"]))
        cmp(what + " exit_code return_code:signal", ec(se), ec(pe))

def compare_values():
        pj = {j["job_id"]: j for j in pin["jobs"]}
        cmp("job ids", sorted(pj), sorted(j["job_id"] for j in sacct["jobs"]))
        for sj in sacct["jobs"]:
            j = pj.get(sj["job_id"])
            if not j:
                continue
            w = "job %d" % sj["job_id"]
            for k in ("name", "user", "partition", "cluster", "account", "qos", "nodes", "allocation_nodes"):
                if values:
                    cmp(w + " " + k, sj[k], j[k])
            cmp(w + " array.job_id", sj["array"]["job_id"], j["array"]["job_id"])
            cmp(w + " array.task_id", num(sj["array"]["task_id"]), num(j["array"]["task_id"]))
            if values:
                cmp(w + " state", flag(sj["state"]["current"]), flag(j["state"]["current"]))
                cmp(w + " kill_request_user", sj["kill_request_user"] or "", j["kill_request_user"] or "")
                for k in ("start", "end", "elapsed", "submission", "limit"):
                    cmp(w + " time." + k, num(sj["time"][k]), num(j["time"][k]))
                cmp(w + " required.CPUs", sj["required"]["CPUs"], j["required"]["CPUs"])
                cmp(w + " tres.allocated cpu", cpus(sj["tres"]["allocated"]), cpus(j["tres"]["allocated"]))
            if values:
                cmp_exit(w, str(sj["job_id"]), sj["exit_code"], j["exit_code"])
            ps = {step_id(j, s): s for s in j["steps"]}
            cmp(w + " steps", sorted(ps), sorted(step_id(sj, s) for s in sj["steps"]))
            for ss in sj["steps"]:
                i = step_id(sj, ss)
                s = ps.get(i)
                if not s:
                    continue
                w = "step " + i
                cmp(w + " step.id", ss["step"]["id"], s["step"]["id"])
                if not values:
                    continue
                cmp(w + " step.name", ss["step"]["name"], s["step"]["name"])
                cmp(w + " state", flag(ss["state"]), flag(s["state"]))
                cmp_exit(w, i, ss["exit_code"], s["exit_code"])
                for k in ("start", "end", "elapsed"):
                    cmp(w + " time." + k, num(ss["time"][k]), num(s["time"][k]))
                cmp(w + " nodes.count", ss["nodes"]["count"], s["nodes"]["count"])
                cmp(w + " nodes.range", ss["nodes"]["range"], s["nodes"]["range"])
                cmp(w + " tasks.count", ss["tasks"]["count"], s["tasks"]["count"])
                cmp(w + " tres.allocated cpu", cpus(ss["tres"]["allocated"]), cpus(s["tres"]["allocated"]))

if mode in ("values", "ids"):
    try:
        compare_values()
    except (KeyError, TypeError, IndexError) as e:
        bad.append("values: a key sacct has is not there: %r" % (e,))

for i, l in enumerate(listed):
    if i not in used and l[0] == "exit22" and values:
        bad.append("listed difference that does not occur: " + " ".join(l))
    elif i not in used:
        print("# listed difference not seen with this Slurm: " + " ".join(l))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY

# The intended differences (doc/accounting-reports.md, "acct --json"):
# values slurmdbd keeps that slurm-pin's records do not carry are there
# with the type's empty value ("", 0, [], unset); what is listed here is
# what is not there at all.
cat >intended <<'EOF2'
# the scheduler's job flags (STARTED_ON_SCHEDULE, ...): slurmdbd's only
missing .jobs[].flags[]
# TRES slurm-pin does not account: a step's consumed TRES (energy,
# fs/disk), which 22.05 lists even when 0
missing .jobs[].steps[].tres.consumed
# the CPU frequency governors a step may ask for
missing .jobs[].steps[].CPU.governor[]
# the job's AdminComment (slurmdbd's; job_submit_pin.so's own token is
# read from it, not the rest)
null .jobs[].comment.administrator
EOF2
# read from the journal, also: a step's requested TRES (MaxRSS etc.,
# slurmdbd's) is [] unless pin.so recorded memory.peak; a job line's
# exit code is its records' (a signal where slurmdbd has 0:0: the
# journal's values are issue 22 item 1's), which 22.05's dbv0.0.38 shows
# as a "signal" object
{
    cat intended &&
    echo "missing .jobs[].steps[].tres.requested.average[]" &&
    echo "missing .jobs[].steps[].tres.requested.total[]" &&
    echo "missing .jobs[].steps[].tres.requested.max[]" &&
    echo "missing .jobs[].steps[].tres.requested.min[]" &&
    echo "extra .jobs[].exit_code.signal" &&
    echo "null .jobs[].exit_code.return_code"
} >intended-journal
if test "$(sacct --json=list 2>/dev/null | grep -c data_parser)" = 0; then
    echo exit22 exit22 >>intended
else
    test_set_prereq DATA_PARSER
fi

test_expect_success SLURM,PIN_SO,PYTHON3 'slurm-pin acct --json (slurmdbd): sacct'"'"'s paths and types, and values' '
    slurm-pin acct -j $(cat jobs) --json >pin.json &&
    if test -n "$PIN_T4130_SAVE"; then cp pin.json "$PIN_T4130_SAVE.pin" && cp sacct.exit "$PIN_T4130_SAVE.exit"; fi &&
    python3 cmp.py sacct.json pin.json intended sacct.exit values "$(cat take128)" &&
    slurm-pin acct -j $(cat jobs) -n -P -o JobIDRaw,ExitCode >pin.exit &&
    test_cmp sacct.exit pin.exit
'

# --json=VERSION, as sacct'"'"'s: every data_parser slurm-pin prints that the
# installed sacct has (26.05: v0.0.42 to v0.0.45) against sacct --json=VERSION
# (22.05'"'"'s sacct takes no VERSION: its one shape is the default'"'"'s, above)
test_expect_success SLURM,PIN_SO,PYTHON3,DATA_PARSER 'slurm-pin acct --json=VERSION: sacct --json=VERSION'"'"'s paths, types and values' '
    slurm-pin acct --json=list >versions &&
    cat versions &&
    test -s versions &&
    for v in $(cat versions); do
        sacct -j $(cat jobs) --json=${v#data_parser/} >sacct-v.json &&
        slurm-pin acct -j $(cat jobs) --json=${v#data_parser/} >pin-v.json &&
        for f in sacct-v.json pin-v.json; do
            python3 -c "import json, sys; print(json.load(open(sys.argv[1]))[\"meta\"][\"plugin\"][\"data_parser\"])" $f || return 1
        done >parsers &&
        printf "%s\n%s\n" $v $v >parsers.expect &&
        test_cmp parsers.expect parsers &&
        python3 cmp.py sacct-v.json pin-v.json intended sacct.exit values "$(cat take128)" || return 1
    done
'

test_expect_success '--json=VERSION: one slurm-pin does not print is refused' '
    test_expect_code 2 slurm-pin acct --json=v0.0.1 2>err &&
    grep "not an installed serializer slurm-pin prints: one of" err
'

# The journal: the same shape, and the same jobs and steps.  Its values
# are those of the records pin.so wrote (whether they are slurmdbd'"'"'s is
# issue 22 item 1'"'"'s: the same jobs read both ways)
test_expect_success SLURM,PIN_SO,PYTHON3 'slurm-pin acct --json (the journal): sacct'"'"'s paths and types, job and step ids' '
    slurm-pin acct --journal "$JOURNAL" -j $(cat jobs) --json >pin-journal.json &&
    if test -n "$PIN_T4130_SAVE"; then cp pin-journal.json "$PIN_T4130_SAVE.journal"; fi &&
    python3 cmp.py sacct.json pin-journal.json intended-journal sacct.exit ids
'

test_done
