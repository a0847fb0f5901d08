#!/bin/sh

test_description='slurm-pin eff side by side with SchedMD'"'"'s seff, acct'"'"'s ExitCode with sacct

Runs real jobs on a private Slurm with slurmdbd (local-slurm.sh
--accounting) and pin.so: COMPLETED (a batch script that only runs
srun, two CPUs), FAILED (exit 3), TIMEOUT, CANCELLED while running,
CANCELLED while pending (no step ever ran: slurm-pin has no record of
it, slurmdbd has), and an array.  slurm-pin eff reads slurmdbd.

seff (Slurm'"'"'s contribs/seff/seff, the release installed) runs with
the libslurmdb-perl and libslurm-perl packages: PIN_SEFF names the
script, else seff in PATH.  Where it runs, the first lines of slurm-pin
eff must equal seff'"'"'s output exactly, for every job.  Where it cannot
(no script, or its Perl modules missing), the seff lines are checked
against seff'"'"'s documented format instead (the printf formats of the
script, in its order): the test says which in its output.

Also: acct'"'"'s ExitCode and State equal sacct'"'"'s for these states
(job lines and steps), a step under one second read from slurmdbd has a
CPUEff, eff'"'"'s CPU Efficiency adds up from the lines it prints, and the
low-efficiency hint leaves alone a batch script that only runs srun.
'

. "$(dirname "$0")/sharness.sh"

# not beside the other heavy files (t/sharness.d/20-cpus.sh): MariaDB and
# slurmdbd starting, or steps timed, starve under t5000's busy threads
cpu_heavy_exclusive || exit 1

slurm_require_accounting
pin_so_prereq

# perl_has MODULE: the module is installed (not loaded: Slurm's want a
# slurm.conf at load time)
perl_has () {
    perl -e 'exit !grep { -r "$_/$ARGV[0].pm" } @INC' "$1"
}

SEFF=${PIN_SEFF:-$(command -v seff || true)}
if test -n "$SEFF" && test -r "$SEFF" &&
        perl_has Slurm && perl_has Slurmdb; then
    test_set_prereq SEFF
    say "comparing with seff: $SEFF"
else
    say "seff cannot run here (script: ${SEFF:-none in PATH, PIN_SEFF unset}; Perl Slurm/Slurmdb modules: $(perl_has Slurm && perl_has Slurmdb && echo present || echo missing)): checking seff's documented format instead"
    test_set_prereq NO_SEFF
fi
test "$(nproc)" -ge 2 && test_set_prereq TWO_CPUS

STATE=$(mktemp -d /tmp/pin-t4110.XXXXXX) || exit 1
cleanup "rm -rf '$STATE'"
JOURNAL=$STATE/journal
cat >pin.conf <<EOF
StateDir=$STATE/state
TopologyCache=$STATE/topology.xml
CgroupBase=slurm-pin-t4110-$$
JournalDir=$JOURNAL
DeliverCommand=none
EOF
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

test_expect_success PIN_SO 'start Slurm with slurmdbd and pin.so' '
    slurm_start --accounting --plugstack plugstack.conf --pin-conf pin.conf
'

test_expect_success SLURM,PIN_SO,TWO_CPUS 'run jobs of every state' '
    printf "#!/bin/sh\ntimeout 2 sh -c \"while :; do :; done\"\nexit 0\n" >burn.sh &&
    chmod +x burn.sh &&
    c=$(sbatch --parsable -c 2 --wrap "srun -n1 true; srun -n1 true; srun -n1 true; srun -n1 sleep 1") &&
    echo "$c" >job.completed &&
    b=$(sbatch --parsable -c 2 --wrap "srun -n1 -c 2 ./burn.sh") &&
    echo "$b" >job.burn &&
    # after the two-CPU jobs, which would wait for its CPU until it ends
    t=$(sbatch --parsable -t 1 -c 1 --wrap "sleep 300") &&
    echo "$t" >job.timeout &&
    f=$(sbatch --parsable -c 1 --wrap "sleep 1; exit 3") &&
    echo "$f" >job.failed &&
    r=$(sbatch --parsable -c 1 --wrap "srun -n1 sleep 300") &&
    echo "$r" >job.cancelled &&
    p=$(sbatch --parsable -c 1 --hold --wrap "true") &&
    echo "$p" >job.pending &&
    a=$(sbatch --parsable -c 1 --array=1-2 --wrap "sleep 1") &&
    echo "$a" >job.array &&
    n=$((PIN_SLURM_TIMEOUT * 4)) &&
    until test "$(sacct -j $r -n -P -o JobID | grep -c "^$r\.0$")" = 1; do
        n=$((n - 1)) && test $n -gt 0 && sleep 0.5 || return 1
    done &&
    scancel "$r" && scancel "$p" &&
    wait_db "$c" COMPLETED && wait_db "$b" COMPLETED && wait_db "$f" FAILED &&
    wait_db "$r" CANCELLED && wait_db "$p" CANCELLED &&
    wait_db "${a}_1" COMPLETED && wait_db "${a}_2" COMPLETED &&
    cpu_heavy_idle wait_db "$t" TIMEOUT &&
    sleep 2 &&
    slurm-pin acct --deliver --journal "$JOURNAL" -v
'

# the ids eff and seff are asked for
ids () {
    echo "$(cat job.completed) $(cat job.failed) $(cat job.timeout)" \
         "$(cat job.cancelled) $(cat job.pending) $(cat job.array)_1" \
         "$(cat job.array)_2"
}

# One intended difference (doc/accounting-reports.md): where Slurm
# allocated no memory (CR_Core: memory is not a consumable resource, as
# on this test cluster), seff from 23.02 on multiplies TRES_MEM'"'"'s
# "not found" (INFINITE64) by 1024 and prints it as "16.00 B"; eff says
# "0.00 MB".  Only that artefact is rewritten before the exact compare.
seff_artefact () {
    sed "s#^\(Memory Efficiency: 0\.00% of \)16\.00 B (16\.00 B/\(node\|core\))\$#\10.00 MB (0.00 MB/\2)#"
}

test_expect_success SLURM,PIN_SO,SEFF 'eff prints seff'"'"'s lines, exactly, for every state' '
    for id in $(ids); do
        "$SEFF" "$id" >seff.raw.$id &&
        seff_artefact <seff.raw.$id >seff.$id &&
        slurm-pin eff "$id" >eff.$id &&
        cat seff.$id eff.$id &&
        head -n "$(wc -l <seff.$id)" eff.$id >head.$id &&
        test_cmp seff.$id head.$id || return 1
    done
'

# seff's own printf formats, in its order (contribs/seff/seff)
check_format () {
    /usr/bin/python3 - "$1" <<-\EOF
	import re, sys
	lines = open(sys.argv[1]).read().split("\n")
	T = r"(\d+-)?\d\d:\d\d:\d\d"
	M = r"\d+\.\d\d [KMGTPE]?B"
	pat = [r"Job ID: \d+", r"(Array Job ID: \d+_\d+)?", r"Cluster: \S+",
	       r"User/Group: \S+/\S+",
	       r"State: (PENDING|RUNNING|[A-Z_]+ \(exit code \d+\))"]
	i = 0
	for p in pat:
	    if p.endswith(")?"):
	        if re.fullmatch(p[1:-2], lines[i]): i += 1
	        continue
	    assert re.fullmatch(p, lines[i]), (p, lines[i]); i += 1
	if lines[i] == "Cores: 1": i += 1
	else:
	    assert re.fullmatch(r"Nodes: \d+", lines[i]), lines[i]
	    assert re.fullmatch(r"Cores per node: \d+", lines[i + 1]), lines[i + 1]
	    i += 2
	if lines[4] == "State: PENDING":
	    assert lines[i] == "Efficiency not available for jobs in the PENDING state."
	    sys.exit(0)
	for p in [r"CPU Utilized: " + T,
	          r"CPU Efficiency: \d+\.\d\d% of " + T + " core-walltime",
	          r"Job Wall-clock time: " + T,
	          r"Memory Utilized: " + M + r"( \(estimated maximum\))?",
	          r"Memory Efficiency: \d+\.\d\d% of " + M + r"( \(" + M + r"/(node|core)\))?"]:
	    assert re.fullmatch(p, lines[i]), (p, lines[i]); i += 1
	EOF
}

test_expect_success SLURM,PIN_SO,NO_SEFF 'eff prints seff'"'"'s lines in seff'"'"'s documented format (no seff here)' '
    for id in $(ids); do
        slurm-pin eff "$id" >eff.$id &&
        cat eff.$id &&
        check_format eff.$id || return 1
    done
'

test_expect_success SLURM,PIN_SO 'eff: State and exit code as seff has them' '
    slurm-pin eff $(cat job.timeout) >eff.t &&
    grep -x "State: TIMEOUT (exit code 0)" eff.t &&
    slurm-pin eff $(cat job.cancelled) >eff.c &&
    grep -x "State: CANCELLED (exit code 0)" eff.c &&
    slurm-pin eff $(cat job.failed) >eff.f &&
    grep -x "State: FAILED (exit code 3)" eff.f &&
    slurm-pin eff $(cat job.pending) >eff.p &&
    grep -x "State: CANCELLED (exit code 0)" eff.p &&
    slurm-pin eff $(cat job.array)_2 >eff.a &&
    grep -x "Job ID: $(sacct -j $(cat job.array)_2 -X -n -P -o JobIDRaw)" eff.a &&
    grep -x "Array Job ID: $(cat job.array)_2" eff.a &&
    slurm-pin eff $(cat job.completed) >eff.cc &&
    grep -x "Nodes: 1" eff.cc &&
    grep -x "Cores per node: 2" eff.cc &&
    grep "^Memory Utilized: " eff.cc &&
    grep "^Memory Efficiency: " eff.cc
'

# compare ARGS...: sacct and slurm-pin acct print the same
compare () {
    sacct "$@" >sacct.out &&
    slurm-pin acct "$@" >pin.out &&
    cat sacct.out &&
    test_cmp sacct.out pin.out
}

# Start, End, Elapsed too: slurmdbd's own, not cut to a window (sacct
# prints "None" for the Start of a job cancelled while pending)
for j in completed failed timeout cancelled pending array; do
    f=JobID,State,ExitCode,Start,End,Elapsed
    test_expect_success SLURM,PIN_SO "acct $f as sacct: $j job" "
        compare -j \$(cat job.$j) -X -n -P -o JobID,State,ExitCode &&
        compare -j \$(cat job.$j) -n -P -o $f
    "
done

# (not the FAILED job: 22.05's sacct --json says SUCCESS 0 for a job
# and a batch step that exited 3, where its text output says 3:0)
# the job line's exit_code in --json: its status and return_code, as
# values (the shape of each is issue 22 item 3's: 24.11's sacct has a
# list and a {"set","number"} object where 22.05's has a string and a
# number)
json_exit () {
    /usr/bin/python3 -c "import json, sys
def val(v):
    if isinstance(v, list): return val(v[0]) if len(v) == 1 else v
    if isinstance(v, dict) and \"number\" in v: return v[\"number\"]
    return v
for j in json.load(open(sys.argv[1]))[\"jobs\"]:
    e = j[\"exit_code\"]
    print(j[\"job_id\"], val(e[\"status\"]), val(e[\"return_code\"]))" "$1"
}

test_expect_success SLURM,PIN_SO 'acct --json: exit_code as sacct --json, TIMEOUT and CANCELLED jobs too' '
    for j in completed timeout cancelled pending; do
        sacct -j $(cat job.$j) --json >sacct.json &&
        slurm-pin acct -j $(cat job.$j) --json >pin.json &&
        json_exit sacct.json >exit.sacct &&
        json_exit pin.json >exit.pin &&
        cat exit.sacct &&
        test_cmp exit.sacct exit.pin || return 1
    done
'

# three steps of "true": slurmdbd has whole seconds, most such steps start
# and end in the same one
test_expect_success SLURM,PIN_SO 'steps under a second read from slurmdbd have a CPUEff' '
    c=$(cat job.completed) &&
    slurm-pin acct -j $c -n -P -o JobID,Elapsed,CPUEff >cpueff.out &&
    cat cpueff.out &&
    test "$(grep -c "^$c\.[0-2]|[0-9:-]*|[0-9.][0-9.]*%$" cpueff.out)" = 3
'

# CPU Efficiency = CPU Utilized / core-walltime, to the printed digits
adds_up () {
    /usr/bin/python3 - "$1" <<-\EOF
	import re, sys
	def secs(t):
	    d, _, hms = t.rpartition("-")
	    h, m, s = map(int, hms.split(":"))
	    return int(d or 0) * 86400 + h * 3600 + m * 60 + s
	txt = open(sys.argv[1]).read()
	cpu = secs(re.search(r"^CPU Utilized: (\S+)$", txt, re.M).group(1))
	pct, core = re.search(r"^CPU Efficiency: ([\d.]+)% of (\S+) core-walltime$", txt, re.M).groups()
	want = cpu / secs(core) * 100 if secs(core) else 0.0
	assert "%.2f" % want == pct, (cpu, core, pct, want)
	EOF
}

test_expect_success SLURM,PIN_SO 'eff: CPU Efficiency adds up, from slurmdbd and from the journal' '
    c=$(cat job.burn) &&
    slurm-pin eff $c >eff.dbd &&
    adds_up eff.dbd &&
    slurm-pin eff --journal "$JOURNAL" $c >eff.journal &&
    cat eff.journal &&
    adds_up eff.journal
'

test_expect_success SLURM,PIN_SO 'eff: no low-efficiency hint for a batch script that only runs srun' '
    c=$(cat job.burn) &&
    slurm-pin eff $c >eff.hint &&
    grep -E "^$c\.batch " eff.hint &&
    ! grep -F "step $c.batch: CPU efficiency" eff.hint &&
    slurm-pin eff --journal "$JOURNAL" $c >eff.hint &&
    ! grep -F "step $c.batch: CPU efficiency" eff.hint
'

test_expect_success SLURM,PIN_SO 'a job with no summary: acct lists it as sacct, report leaves it out' '
    slurm-pin report >report.before &&
    n=$(sbatch --parsable --wait -c 1 --wrap "srun -n1 true") &&
    wait_db "$n" COMPLETED &&
    compare -j $n -n -P -o JobID,State,ExitCode,AllocCPUS &&
    grep "^$n\.0|" pin.out &&
    slurm-pin report >report.after &&
    cat report.after &&
    test_cmp report.before report.after
'

test_done
