#!/bin/sh

test_description='slurm-pin plan: options, output formats and errors

Drives the built slurm-pin binary on synthetic topologies (always there)
and on the real machines of ../shared/topologies (prereq SHARED_TOPOLOGIES).
'

. "$(dirname "$0")/sharness.sh"

# The project's own synthetic machine: 2 sockets x 4 cores x 2 threads,
# one NUMA node and one L3 per socket, one L2 per core, Linux numbering
# (the SMT sibling of P#x is P#x+8): socket 0 = 0-3,8-11.
SMT2="pack:2 [numa] l3:1 l2:4 core:1 pu:2(indexes=core:pack)"
# The same with round-robin numbering: socket 0 = even P#.
SMT2RR="pack:2 [numa] l3:1 l2:4 core:1 pu:2(indexes=pack:core)"

pin_prereq_cmd PYTHON3 python3
if test -w /dev/full; then
    test_set_prereq DEV_FULL
fi

# plan_fails VALUE ARGS...: 'slurm-pin plan ARGS' exits with status 1,
# prints nothing on stdout and exactly one line on stderr, which
# contains VALUE.
plan_fails () {
    value=$1
    shift
    test_expect_code 1 slurm-pin plan "$@" >fail.out 2>fail.err &&
    test_must_be_empty fail.out &&
    test "$(wc -l <fail.err)" -eq 1 &&
    grep -F -e "$value" fail.err >/dev/null ||
    { echo "stderr was:"; cat fail.err; false; }
}

# --- help and version -------------------------------------------------

test_expect_success 'slurm-pin --help prints usage on stdout, exit 0' '
    slurm-pin --help >help.out 2>help.err &&
    test_must_be_empty help.err &&
    grep "^Usage: slurm-pin COMMAND" help.out &&
    grep "^  plan " help.out
'

test_expect_success 'slurm-pin -h is --help' '
    slurm-pin -h >h.out &&
    test_cmp help.out h.out
'

test_expect_success 'slurm-pin --version prints the package version' '
    slurm-pin --version >version.out &&
    grep -E "^slurm-pin [0-9]+\.[0-9]+\.[0-9]+$" version.out
'

test_expect_success 'slurm-pin plan --help prints plan usage on stdout' '
    slurm-pin plan --help >plan-help.out 2>plan-help.err &&
    test_must_be_empty plan-help.err &&
    grep "^Usage: slurm-pin plan" plan-help.out &&
    for opt in topology policy ntasks cpus-per-task allowed busy seed json
    do
        grep -e "--$opt" plan-help.out || return 1
    done
'

test_expect_success 'slurm-pin plan --help lists every policy' '
    for p in numa-local numa-spread cache-shared random none
    do
        grep -w -e "$p" plan-help.out || return 1
    done
'

test_expect_success 'no command: one line, exit 1' '
    test_expect_code 1 slurm-pin >out 2>err &&
    test_must_be_empty out &&
    test "$(wc -l <err)" -eq 1 &&
    grep "missing command; known: plan, check" err
'

test_expect_success 'unknown command: one line naming it, exit 1' '
    test_expect_code 1 slurm-pin plna >out 2>err &&
    test_must_be_empty out &&
    echo "slurm-pin: plna: unknown command; known: plan, check, acct, eff, report, profile, plot, deliver, experiment" >expected &&
    test_cmp expected err
'

test_expect_success 'unknown global option: one line naming it, exit 1' '
    test_expect_code 1 slurm-pin --frobnicate >out 2>err &&
    test_must_be_empty out &&
    test "$(wc -l <err)" -eq 1 &&
    grep -e "--frobnicate: unknown option" err
'

# --- text output --------------------------------------------------------

test_expect_success 'text: one line per task' '
    slurm-pin plan -t "$SMT2" -p none -n 3 -c 1 >out &&
    test "$(wc -l <out)" -eq 3 &&
    grep -E "^task 0: cpus=[0-9,-]+ mems=[0-9,-]+" out &&
    grep -E "^task 2: " out
'

test_expect_success 'defaults: -n 1 -c 1' '
    slurm-pin plan -t "$SMT2" -p numa-local >out &&
    test "$(wc -l <out)" -eq 1 &&
    grep -E "^task 0: cpus=[0-9]+ mems=0$" out
'

test_expect_success 'long and short options give the same plan' '
    slurm-pin plan -t "$SMT2" -p random -n 2 -c 3 -s 7 -a 0-11 -b 1 \
        >short.out &&
    slurm-pin plan --topology="$SMT2" --policy=random --ntasks=2 \
        --cpus-per-task=3 --seed=7 --allowed=0-11 --busy=1 >long.out &&
    slurm-pin plan --topology "$SMT2" --policy random --ntasks 2 \
        --cpus-per-task 3 --seed 7 --allowed 0-11 --busy 1 >long2.out &&
    test_cmp short.out long.out &&
    test_cmp short.out long2.out
'

test_expect_success 'random: the same seed gives the same plan' '
    slurm-pin plan -t "$SMT2" -p random -n 2 -c 4 -s 12345 >r1.out &&
    slurm-pin plan -t "$SMT2" -p random -n 2 -c 4 -s 12345 >r2.out &&
    test_cmp r1.out r2.out
'

test_expect_success 'random: some seed gives a different plan' '
    slurm-pin plan -t "$SMT2" -p random -n 1 -c 4 -s 1 >s1.out &&
    for s in 2 3 4 5 6 7 8 9 10
    do
        slurm-pin plan -t "$SMT2" -p random -n 1 -c 4 -s $s >s.out &&
        ! test_cmp s1.out s.out >/dev/null && return 0
    done &&
    false
'

# --- placements on the synthetic machines ---------------------------------
# Expected plans follow the rules of ../shared/DESIGN.md; each case says
# why.  SMT2: socket 0 = cores 0-3 (siblings 8-11) = NUMA 0, socket 1 =
# cores 4-7 (siblings 12-15) = NUMA 1, one L2 per core.

test_expect_success 'numa-local -n 2 -c 4: one PU per core, one NUMA each' '
    # task 0 takes one PU of each core of NUMA 0; what is left there are
    # siblings of busy cores, so task 1 goes to NUMA 1, where 4 cores are
    # wholly free (CPUs 4-7 are socket 1, hence mems=1)
    slurm-pin plan -t "$SMT2" -p numa-local -n 2 -c 4 >out &&
    cat >expected <<-\EOF &&
	task 0: cpus=0-3 mems=0
	task 1: cpus=4-7 mems=1
	EOF
    test_cmp expected out
'

test_expect_success 'numa-local -n 3 -c 4: no two tasks share a core' '
    # one core per CPU for task 1 would leave task 2 on the siblings of
    # task 0 or 1: tasks 1 and 2 take 2 whole cores each (issue 10)
    slurm-pin plan -t "$SMT2" -p numa-local -n 3 -c 4 >out &&
    cat >expected <<-\EOF &&
	task 0: cpus=0-3 mems=0
	task 1: cpus=4-5,12-13 mems=1 fallback=shared-l2,shared-core
	task 2: cpus=6-7,14-15 mems=1 fallback=shared-l2,shared-core
	EOF
    test_cmp expected out
'

test_expect_success 'numa-local -c 6: more than the cores of a node' '
    # a NUMA node has 4 cores: staying in one node (fewest NUMA nodes)
    # means sharing cores, and the plan says so
    slurm-pin plan -t "$SMT2" -p numa-local -c 6 >out &&
    echo "task 0: cpus=0-3,8-9 mems=0 fallback=shared-l2,shared-core" \
        >expected &&
    test_cmp expected out
'

test_expect_success 'numa-local skips busy CPUs' '
    slurm-pin plan -t "$SMT2" -p numa-local -c 4 --busy=0-3 >out &&
    echo "task 0: cpus=4-7 mems=1" >expected &&
    test_cmp expected out
'

test_expect_success 'numa-spread -n 2 -c 4: two per NUMA node, one per core' '
    slurm-pin plan -t "$SMT2" -p numa-spread -n 2 -c 4 >out &&
    cat >expected <<-\EOF &&
	task 0: cpus=0-1,4-5 mems=0-1
	task 1: cpus=2-3,6-7 mems=0-1
	EOF
    test_cmp expected out
'

test_expect_success 'numa-spread -c 3: counts differ by one at most' '
    slurm-pin plan -t "$SMT2" -p numa-spread -c 3 >out &&
    echo "task 0: cpus=0-1,4 mems=0-1" >expected &&
    test_cmp expected out
'

test_expect_success 'cache-shared -c 4: two whole cores' '
    slurm-pin plan -t "$SMT2" -p cache-shared -c 4 >out &&
    echo "task 0: cpus=0-1,8-9 mems=0" >expected &&
    test_cmp expected out
'

test_expect_success 'cache-shared -c 3: fills a core before the next' '
    slurm-pin plan -t "$SMT2" -p cache-shared -c 3 >out &&
    echo "task 0: cpus=0-1,8 mems=0" >expected &&
    test_cmp expected out
'

test_expect_success 'cache-shared avoids a core with a busy sibling' '
    slurm-pin plan -t "$SMT2" -p cache-shared -n 2 -c 2 --busy=0 >out &&
    cat >expected <<-\EOF &&
	task 0: cpus=1,9 mems=0
	task 1: cpus=2,10 mems=0
	EOF
    test_cmp expected out
'

test_expect_success 'none: every task gets all allowed CPUs, busy or not' '
    slurm-pin plan -t "$SMT2" -p none -n 2 -c 2 --busy=0-3 >out &&
    cat >expected <<-\EOF &&
	task 0: cpus=0-15 mems=0-1
	task 1: cpus=0-15 mems=0-1
	EOF
    test_cmp expected out
'

test_expect_success 'none: the size check is against the allocation, not minus busy' '
    # 14 of 16 CPUs busy: none ignores busy when it places, so it must not
    # refuse -n 2 -c 8 because of them
    slurm-pin plan -t "$SMT2" -p none -n 2 -c 8 --busy=0-13 >out &&
    cat >expected <<-\EOF &&
	task 0: cpus=0-15 mems=0-1
	task 1: cpus=0-15 mems=0-1
	EOF
    test_cmp expected out &&
    slurm-pin plan -t "$SMT2" -p none -c 8 --allowed=0-7 --busy=0-7 >out &&
    echo "task 0: cpus=0-7 mems=0-1" >expected &&
    test_cmp expected out
'

test_expect_success 'none --strict: a request larger than the allocation is refused' '
    plan_fails "exceeds the 4 available (allowed 0-3)" -t "$SMT2" -p none \
        -n 1 -c 5 --allowed=0-3 --busy=0-1 --strict &&
    ! grep busy fail.err
'

test_expect_success 'other policies --strict still count busy CPUs in the size check' '
    for p in numa-local numa-spread cache-shared random
    do
        plan_fails "exceeds the 2 available (allowed 0-15 minus busy 0-13)" \
            -t "$SMT2" -p $p -n 2 -c 8 --busy=0-13 --strict || return 1
    done
'

# issue 10: by default plan shows what pin.so does, the fallback
test_expect_success 'none: a request larger than the allocation is oversubscribed' '
    slurm-pin plan -t "$SMT2" -p none -n 1 -c 5 --allowed=0-3 --busy=0-1 >out &&
    echo "task 0: cpus=0-3 mems=0-1 fallback=oversubscribed" >expected &&
    test_cmp expected out
'

test_expect_success 'overcommit: every thread of a core once, then round again' '
    # allowed 0-1,8-9 = core 0 {0,8}, core 1 {1,9}
    for p in numa-local numa-spread cache-shared random
    do
        slurm-pin plan -t "$SMT2" -p $p -n 6 --allowed=0-1,8-9 >out &&
        cat >expected <<-\EOF &&
	task 0: cpus=0 mems=0 fallback=oversubscribed
	task 1: cpus=1 mems=0 fallback=oversubscribed
	task 2: cpus=8 mems=0
	task 3: cpus=9 mems=0
	task 4: cpus=0 mems=0 fallback=oversubscribed
	task 5: cpus=1 mems=0 fallback=oversubscribed
	EOF
        test_cmp expected out || return 1
    done
'

test_expect_success 'a step that does not fit in the free CPUs shares busy ones' '
    # the free 14-15 first, then the busy ones, no CPU twice
    slurm-pin plan -t "$SMT2" -p numa-local -n 2 -c 8 --busy=0-13 >out &&
    cat >expected <<-\EOF &&
	task 0: cpus=0-5,14-15 mems=0-1 fallback=shared-with-step
	task 1: cpus=6-13 mems=0-1 fallback=shared-with-step
	EOF
    test_cmp expected out &&
    slurm-pin plan -t "$SMT2" -p numa-local -n 2 --busy=0-15 --json >out &&
    grep "\"cpus\":\"0\",\"mems\":\"0\",\"fallback\":\"shared-with-step\"" out
'

test_expect_success '--strict takes no value' '
    plan_fails "--strict=1: this option takes no value" -t "$SMT2" \
        -p none --strict=1
'

test_expect_success '--allowed CPUs outside the topology are never used' '
    slurm-pin plan -t "$SMT2" -p none --allowed=0-5,100-200 >out &&
    echo "task 0: cpus=0-5 mems=0-1" >expected &&
    test_cmp expected out
'

test_expect_success 'random takes every free allowed CPU when it must' '
    # 2 tasks x 3 CPUs out of allowed 2-8 minus busy 5: exactly the six
    # CPUs 2-4,6-8, whatever the draw
    slurm-pin plan -t "$SMT2" -p random -n 2 -c 3 -s 99 --allowed=2-8 \
        --busy=5 >out &&
    sed -n "s/^task [01]: cpus=\([0-9,-]*\) .*/\1/p" out >lists &&
    test "$(wc -l <lists)" -eq 2 &&
    slurm-pin plan -t "$SMT2" -p none --allowed="$(paste -s -d, lists)" \
        >union &&
    echo "task 0: cpus=2-4,6-8 mems=0-1" >expected &&
    test_cmp expected union
'

test_expect_success 'round-robin numbering: numa-local follows sockets' '
    # socket 0 = even P#, socket 1 = odd P#; siblings are P#x+8
    slurm-pin plan -t "$SMT2RR" -p numa-local -n 2 -c 4 >out &&
    cat >expected <<-\EOF &&
	task 0: cpus=0,2,4,6 mems=0
	task 1: cpus=1,3,5,7 mems=1
	EOF
    test_cmp expected out
'

test_expect_success 'round-robin numbering: cache-shared takes siblings' '
    slurm-pin plan -t "$SMT2RR" -p cache-shared -n 2 -c 4 >out &&
    cat >expected <<-\EOF &&
	task 0: cpus=0,2,8,10 mems=0
	task 1: cpus=4,6,12,14 mems=0
	EOF
    test_cmp expected out
'

# --- JSON -----------------------------------------------------------------

test_expect_success 'json: one object, exactly' '
    slurm-pin plan -t "$SMT2" -p numa-local -n 2 -c 4 --json >out.json &&
    cat >expected <<-\EOF &&
	{"policy":"numa-local","ntasks":2,"cpus_per_task":4,"tasks":[{"task":0,"cpus":"0-3","mems":"0","fallback":null},{"task":1,"cpus":"4-7","mems":"1","fallback":null}]}
	EOF
    test_cmp expected out.json
'

test_expect_success 'json: a fallback is its reason string' '
    slurm-pin plan -t "$SMT2" -p numa-local -c 6 -j >fb.json &&
    cat >expected <<-\EOF &&
	{"policy":"numa-local","ntasks":1,"cpus_per_task":6,"tasks":[{"task":0,"cpus":"0-3,8-9","mems":"0","fallback":"shared-l2,shared-core"}]}
	EOF
    test_cmp expected fb.json
'

cat >check-json.py <<\EOF
import json, sys
with open(sys.argv[1]) as f:
    d = json.load(f)
assert set(d) == {"policy", "ntasks", "cpus_per_task", "tasks"}, d.keys()
assert d["policy"] == sys.argv[2], d["policy"]
assert d["ntasks"] == int(sys.argv[3]) == len(d["tasks"]), d
assert d["cpus_per_task"] == int(sys.argv[4]), d
for i, t in enumerate(d["tasks"]):
    assert set(t) == {"task", "cpus", "mems", "fallback"}, t.keys()
    assert t["task"] == i, t
    assert isinstance(t["cpus"], str) and t["cpus"], t
    assert isinstance(t["mems"], str) and t["mems"], t
    assert t["fallback"] is None or isinstance(t["fallback"], str), t
EOF

# Print a JSON plan in the text format.
cat >json-to-text.py <<\EOF
import json, sys
with open(sys.argv[1]) as f:
    d = json.load(f)
for t in d["tasks"]:
    fb = " fallback=" + t["fallback"] if t["fallback"] else ""
    print("task %d: cpus=%s mems=%s%s" % (t["task"], t["cpus"], t["mems"], fb))
EOF

# Print the CPUs of task 0 of a JSON plan, one per line.
cat >json-cpus.py <<\EOF
import json, sys
with open(sys.argv[1]) as f:
    s = json.load(f)["tasks"][0]["cpus"]
for part in s.split(","):
    lo, _, hi = part.partition("-")
    for cpu in range(int(lo), int(hi or lo) + 1):
        print(cpu)
EOF

test_expect_success PYTHON3 'json: parses, with the documented structure' '
    python3 check-json.py out.json numa-local 2 4 &&
    python3 check-json.py fb.json numa-local 1 6 &&
    for p in numa-spread cache-shared random none
    do
        slurm-pin plan -t "$SMT2" -p $p -n 3 -c 2 -j >p.json &&
        python3 check-json.py p.json $p 3 2 || return 1
    done
'

test_expect_success PYTHON3 'json and text give the same placement' '
    slurm-pin plan -t "$SMT2" -p random -n 4 -c 3 -s 5 -j >r.json &&
    slurm-pin plan -t "$SMT2" -p random -n 4 -c 3 -s 5 >r.txt &&
    python3 json-to-text.py r.json >r.from-json &&
    test_cmp r.txt r.from-json
'

# --- this machine ------------------------------------------------------------

pin_prereq_cmd HWLOC_CALC hwloc-calc

test_expect_success HWLOC_CALC 'system: a step as large as this machine fits' '
    n=$(hwloc-calc -N pu all) &&
    slurm-pin plan -p numa-spread -c $n >out &&
    test "$(wc -l <out)" -eq 1 &&
    slurm-pin plan --topology=system -p cache-shared -n $n >out &&
    test "$(wc -l <out)" -eq $n
'

test_expect_success HWLOC_CALC 'system: one CPU more is refused with --strict' '
    n=$(hwloc-calc -N pu all) &&
    plan_fails "$((n + 1)) CPUs" -p numa-local -c $((n + 1)) --strict
'

test_expect_success HWLOC_CALC,PYTHON3 'system: none gives the CPUs hwloc sees' '
    hwloc-calc --physical-output -I pu --sep "
" all >hwloc.cpus &&
    slurm-pin plan -p none -j >none.json &&
    python3 json-cpus.py none.json >plan.cpus &&
    test_cmp hwloc.cpus plan.cpus
'

# --- every bad input: exit 1, one line naming the value ------------------

test_expect_success 'unknown policy names it and lists the known ones' '
    plan_fails "numa-locl" -t "$SMT2" --policy=numa-locl &&
    cat >expected <<-\EOF &&
	slurm-pin plan: --policy=numa-locl: unknown policy; known: numa-local, numa-spread, cache-shared, random, dynamic, none
	EOF
    test_cmp expected fail.err
'

test_expect_success 'missing --policy is an error listing the policies' '
    plan_fails "--policy" -t "$SMT2" -n 1 &&
    grep "numa-local, numa-spread, cache-shared, random, dynamic, none" fail.err
'

test_expect_success '-n -1 is refused' '
    plan_fails "-n -1: expected a positive integer" -t "$SMT2" -p none -n -1
'

for bad in 0 00 -1 1x x "" " 1" "+1" 0x10 1.5 99999999999 4294967296 \
    18446744073709551616
do
    test_expect_success "-n '$bad' is refused" '
        plan_fails "-n $bad" -t "$SMT2" -p none -n "$bad"
    '
    test_expect_success "--cpus-per-task='$bad' is refused" '
        plan_fails "-c $bad" -t "$SMT2" -p none --cpus-per-task="$bad"
    '
done

empty_n="-n '': expected a positive integer"
test_expect_success 'an empty -n is shown as two quotes' '
    plan_fails "$empty_n" -t "$SMT2" -p none -n ""
'

test_expect_success 'an overflowing -c says the range' '
    plan_fails "-c 99999999999: expected a positive integer no larger than 4294967295" \
        -t "$SMT2" -p none -c 99999999999
'

for bad in -1 x 1x "" 18446744073709551616
do
    test_expect_success "--seed='$bad' is refused" '
        plan_fails "--seed=$bad" -t "$SMT2" -p random --seed="$bad"
    '
done

test_expect_success '--seed takes the full 64-bit range' '
    slurm-pin plan -t "$SMT2" -p random -s 18446744073709551615 >out &&
    test "$(wc -l <out)" -eq 1
'

for bad in "0-x" "1-" "3-1" "1,,2" "a" "0 1" "-1" ","
do
    test_expect_success "--allowed='$bad' is refused" '
        plan_fails "$bad" -t "$SMT2" -p none --allowed="$bad"
    '
    test_expect_success "--busy='$bad' is refused" '
        plan_fails "$bad" -t "$SMT2" -p none --busy="$bad"
    '
done

# The kernel reads list numbers as decimal; hwloc alone would read 010 as
# CPU 8 (octal).  A leading zero is refused, on a machine where both
# readings would otherwise be accepted or refused for another reason.
QUAD="pack:1 core:4 pu:1"
test_expect_success '--allowed=010 (leading zero) is refused, not read as octal' '
    plan_fails "010" --topology "$QUAD" --policy none --allowed 010 &&
    echo "slurm-pin plan: --allowed: '"'"'010'"'"': CPU number 010 has a leading zero; expected the kernel list format, e.g. 0-3,8" \
        >expected &&
    test_cmp expected fail.err
'

for bad in 01 00 0-07 1,03 08 08-8
do
    test_expect_success "--allowed='$bad' (leading zero) is refused" '
        plan_fails "has a leading zero" -t "$QUAD" -p none --allowed="$bad" &&
        grep -F -e "$bad" fail.err
    '
    test_expect_success "--busy='$bad' (leading zero) is refused" '
        plan_fails "has a leading zero" -t "$QUAD" -p none --busy="$bad" &&
        grep -F -e "$bad" fail.err
    '
done

test_expect_success 'a CPU number of 6 digits is out of range' '
    plan_fails "CPU number 123456 is out of range; CPU numbers are below 100000" \
        -t "$QUAD" -p none --allowed=0-123456
'

test_expect_success '0 and 10 are plain decimal CPU numbers' '
    slurm-pin plan -t "pack:1 core:12 pu:1" -p none --allowed=0,10 >out &&
    echo "task 0: cpus=0,10 mems=0" >expected &&
    test_cmp expected out
'

test_expect_success 'a list with a newline inside still gives one line' '
    plan_fails "--allowed" -t "$SMT2" -p none --allowed="1
2"
'

test_expect_success '--allowed with no CPU of the topology names the list' '
    plan_fails "--allowed=100-200: no CPU of the topology is in this list; the topology has 0-15" \
        -t "$SMT2" -p none --allowed=100-200
'

test_expect_success '--strict: a request larger than the topology is refused' '
    plan_fails "5 tasks x 4 CPUs = 20 CPUs" -t "$SMT2" -p none -n 5 -c 4 \
        --strict
'

test_expect_success 'a request whose CPU count overflows is refused' '
    plan_fails "65536 tasks x 65536 CPUs = 4294967296 CPUs" \
        -t "$SMT2" -p none -n 65536 -c 65536 --strict &&
    plan_fails "-n 65536: more than 4096 tasks cannot share the 16 allowed CPUs" \
        -t "$SMT2" -p none -n 65536 -c 65536
'

test_expect_success '--strict: a request larger than --allowed is refused' '
    plan_fails "8 CPUs" -t "$SMT2" -p numa-local -n 2 -c 4 --allowed=0-3 \
        --strict &&
    grep -e "0-3" fail.err
'

test_expect_success '--strict: a request larger than allowed minus busy is refused' '
    plan_fails "8 CPUs" -t "$SMT2" -p numa-local -n 1 -c 8 --allowed=0-7 \
        --busy=0 --strict &&
    grep -e "0-7" fail.err
'

test_expect_success 'an invalid synthetic topology is named' '
    plan_fails "pack:2 bogus:3" -t "pack:2 bogus:3" -p none
'

test_expect_success 'a missing XML file is named' '
    plan_fails "/nonexistent/topo.xml" -t /nonexistent/topo.xml -p none
'

test_expect_success 'an XML file that is not XML is named' '
    echo "not xml" >bad.xml &&
    plan_fails "bad.xml" -t ./bad.xml -p none
'

test_expect_success 'an empty --topology is refused' '
    plan_fails "--topology=" -t "" -p none
'

test_expect_success 'an unknown long option is named' '
    plan_fails "--bogus" -t "$SMT2" -p none --bogus
'

test_expect_success 'an unknown short option is named' '
    plan_fails "-x" -t "$SMT2" -p none -x
'

test_expect_success 'a value given to --json is refused' '
    plan_fails "--json=yes" -t "$SMT2" -p none --json=yes
'

test_expect_success 'a missing option value is named' '
    plan_fails "-n" -t "$SMT2" -p none -n &&
    grep "missing value" fail.err &&
    plan_fails "--policy" -t "$SMT2" --policy &&
    grep "missing value" fail.err
'

test_expect_success 'an extra argument is named' '
    plan_fails "extra" -t "$SMT2" -p none extra
'

test_expect_success DEV_FULL 'a write error on stdout is reported' '
    test_expect_code 1 slurm-pin plan -t "$SMT2" -p none >/dev/full \
        2>err &&
    test "$(wc -l <err)" -eq 1 &&
    grep "cannot write the output" err
'

# --- real machines (../shared/topologies) -----------------------------------

topo () {
    echo "$PIN_SHARED/topologies/$1"
}

test_expect_success SHARED_TOPOLOGIES 'every fixture: every policy places a task' '
    for f in "$PIN_SHARED"/topologies/*.xml \
             "$PIN_SHARED"/topologies/derived/*.xml
    do
        for p in numa-local numa-spread cache-shared random none
        do
            slurm-pin plan -t "$f" -p $p -n 2 -c 1 >out 2>err &&
            test_must_be_empty err &&
            test "$(wc -l <out)" -eq 2 ||
            { echo "failed: $f $p"; cat err; return 1; }
        done
    done
'

test_expect_success SHARED_TOPOLOGIES 'ALICE-like 2x8c/16t node, -n 2 -c 4' '
    # Linux numbering: socket 0 = 0-7,16-23, siblings P#x+16
    x=$(topo 32em64t-2n8c2t-pci-noio.xml) &&
    slurm-pin plan -t "$x" -p numa-local -n 2 -c 4 >local.out &&
    slurm-pin plan -t "$x" -p numa-spread -n 2 -c 4 >spread.out &&
    slurm-pin plan -t "$x" -p cache-shared -n 2 -c 4 >shared.out &&
    slurm-pin plan -t "$x" -p none -n 2 -c 4 >none.out &&
    cat >local.exp <<-\EOF &&
	task 0: cpus=0-3 mems=0
	task 1: cpus=8-11 mems=1
	EOF
    cat >spread.exp <<-\EOF &&
	task 0: cpus=0-1,8-9 mems=0-1
	task 1: cpus=2-3,10-11 mems=0-1
	EOF
    cat >shared.exp <<-\EOF &&
	task 0: cpus=0-1,16-17 mems=0
	task 1: cpus=2-3,18-19 mems=0
	EOF
    cat >none.exp <<-\EOF &&
	task 0: cpus=0-31 mems=0-1
	task 1: cpus=0-31 mems=0-1
	EOF
    test_cmp local.exp local.out &&
    test_cmp spread.exp spread.out &&
    test_cmp shared.exp shared.out &&
    test_cmp none.exp none.out
'

test_expect_success SHARED_TOPOLOGIES '384 PUs: numa-local gives each task a socket' '
    # 24 sockets of 8 cores, one NUMA node each; socket 0 = 0-7,192-199
    slurm-pin plan -t "$(topo 192em64t-24n8c2t.xml)" -p numa-local \
        -n 3 -c 8 >out &&
    cat >expected <<-\EOF &&
	task 0: cpus=0-7 mems=0
	task 1: cpus=8-15 mems=1
	task 2: cpus=16-23 mems=2
	EOF
    test_cmp expected out
'

test_expect_success SHARED_TOPOLOGIES '384 PUs: cache-shared fills whole cores' '
    slurm-pin plan -t "$(topo 192em64t-24n8c2t.xml)" -p cache-shared \
        -n 3 -c 8 >out &&
    cat >expected <<-\EOF &&
	task 0: cpus=0-3,192-195 mems=0
	task 1: cpus=4-7,196-199 mems=0
	task 2: cpus=8-11,200-203 mems=1
	EOF
    test_cmp expected out
'

test_expect_success SHARED_TOPOLOGIES '384 PUs: numa-spread -c 48 puts 2 on each of 24 nodes' '
    slurm-pin plan -t "$(topo 192em64t-24n8c2t.xml)" -p numa-spread \
        -c 48 >out &&
    echo "task 0: cpus=0-1,8-9,16-17,24-25,32-33,40-41,48-49,56-57,64-65,72-73,80-81,88-89,96-97,104-105,112-113,120-121,128-129,136-137,144-145,152-153,160-161,168-169,176-177,184-185 mems=0-23" \
        >expected &&
    test_cmp expected out
'

test_expect_success SHARED_TOPOLOGIES '384 PUs: numa-local -c 17 spans two nodes and says so' '
    # a node has 16 PUs: 17 need two nodes (the fewest), one shared core
    slurm-pin plan -t "$(topo 192em64t-24n8c2t.xml)" -p numa-local \
        -c 17 >out &&
    echo "task 0: cpus=0-15,192 mems=0-1 fallback=multi-numa,shared-l2,shared-core" \
        >expected &&
    test_cmp expected out
'

test_expect_success SHARED_TOPOLOGIES '384 PUs: a busy socket is skipped' '
    slurm-pin plan -t "$(topo 192em64t-24n8c2t.xml)" -p numa-local \
        -n 2 -c 8 --allowed=0-15,192-207 --busy=0-7 >out &&
    # the 8 whole cores of node 1 hold both tasks, 4 cores each; the
    # siblings of the busy CPUs 0-7 stay unused (issue 10)
    cat >expected <<-\EOF &&
	task 0: cpus=8-11,200-203 mems=1 fallback=shared-l2,shared-core
	task 1: cpus=12-15,204-207 mems=1 fallback=shared-l2,shared-core
	EOF
    test_cmp expected out
'

test_expect_success SHARED_TOPOLOGIES 'offline CPU 0 and node 0: PU 0 never appears' '
    # PUs 0-3 are offline; package 0 (P# 4,6,...,20) has no NUMA node
    x=$(topo derived/offline-cpu0-node0.xml) &&
    slurm-pin plan -t "$x" -p none >out &&
    echo "task 0: cpus=4-20 mems=1" >expected &&
    test_cmp expected out &&
    slurm-pin plan -t "$x" -p numa-local -n 2 -c 2 >out &&
    cat >expected <<-\EOF &&
	task 0: cpus=5,7 mems=1
	task 1: cpus=9,11 mems=1
	EOF
    test_cmp expected out
'

test_expect_success SHARED_TOPOLOGIES 'offline CPU 0: PUs without a NUMA node are flagged' '
    slurm-pin plan -t "$(topo derived/offline-cpu0-node0.xml)" \
        -p numa-local -n 2 --allowed=0-5 >out &&
    cat >expected <<-\EOF &&
	task 0: cpus=5 mems=1
	task 1: cpus=4 mems=1 fallback=no-local-numa
	EOF
    test_cmp expected out
'

test_expect_success SHARED_TOPOLOGIES 'offline CPU 0: --allowed of offline CPUs only is refused' '
    plan_fails "--allowed=0-3: no CPU of the topology is in this list; the topology has 4-20" \
        -t "$(topo derived/offline-cpu0-node0.xml)" -p none --allowed=0-3
'

test_expect_success SHARED_TOPOLOGIES 'round-robin 2 sockets: numa-local follows the sockets' '
    # socket 0 = even P#, socket 1 = odd P#; siblings P#x+12
    slurm-pin plan -t "$(topo 24em64t-2n6c2t-pci.xml)" -p numa-local \
        -n 2 -c 6 >out &&
    cat >expected <<-\EOF &&
	task 0: cpus=0,2,4,6,8,10 mems=0
	task 1: cpus=1,3,5,7,9,11 mems=1
	EOF
    test_cmp expected out &&
    slurm-pin plan -t "$(topo 24em64t-2n6c2t-pci.xml)" -p cache-shared \
        -n 2 -c 4 >out &&
    cat >expected <<-\EOF &&
	task 0: cpus=0,2,12,14 mems=0
	task 1: cpus=4,6,16,18 mems=0
	EOF
    test_cmp expected out
'

test_expect_success SHARED_TOPOLOGIES 'round-robin 4 sockets: numa-local packs into few L3' '
    # one NUMA node, 4 sockets (one L3 each) of 2 cores: 4 distinct cores
    # need 2 L3s; socket 0 = 0,4,8,12, siblings P#x+8
    slurm-pin plan -t "$(topo 16em64t-4s2c2t.xml)" -p numa-local \
        -n 2 -c 4 >out &&
    cat >expected <<-\EOF &&
	task 0: cpus=0-1,4-5 mems=0
	task 1: cpus=2-3,6-7 mems=0
	EOF
    test_cmp expected out
'

test_expect_success SHARED_TOPOLOGIES 'SNC2 round-robin: NUMA node 0 is 0,4,8,...' '
    x=$(topo memorysidecaches.xml) &&
    slurm-pin plan -t "$x" -p numa-local -n 2 -c 4 >out &&
    cat >expected <<-\EOF &&
	task 0: cpus=0,4,8,12 mems=0
	task 1: cpus=2,6,10,14 mems=2
	EOF
    test_cmp expected out &&
    slurm-pin plan -t "$x" -p numa-spread -c 8 >out &&
    echo "task 0: cpus=0-7 mems=0-3" >expected &&
    test_cmp expected out
'

test_done
