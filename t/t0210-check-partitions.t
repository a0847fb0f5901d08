#!/bin/sh

test_description='slurm-pin check: what a step of each partition gets

pin.so, job_submit_pin.so and slurm-pin check resolve a step'"'"'s policy,
profile and dynamic thresholds with one function of libconf.  check
prints one "partition" line per PartitionName= line of pin.conf (and
the same in --json); these cases hold it to the rules pin.conf(5) and
job_submit_pin(8) state: a forced policy, a partition'"'"'s own default, a
line that keeps the global default, and per-partition Profile= and
Dynamic* values.  Needs neither Slurm nor root.
'

. "$(dirname "$0")/sharness.sh"

pin_prereq_cmd PYTHON3 python3

# Never read the host's Slurm configuration.
TRASH=$(pwd)
SLURM_CONF="$TRASH/etc/slurm.conf"
export SLURM_CONF
mkdir -p "$TRASH/etc"

cat >parts.conf <<CONF
TopologyCache=$TRASH/cache/topology.xml
StateDir=$TRASH/state
DefaultPolicy=numa-local
AllowedPolicies=numa-local,numa-spread,none
Profile=2s
DynamicOveruse=1.5
PartitionName=pilot ForcedPolicy=numa-spread Profile=no
PartitionName=open AllowedPolicies=all DefaultPolicy=none
PartitionName=dyn DynamicGrace=500ms DynamicConfine=quota SpreadSockets=2
CONF

# field LABEL FILE: the text after the 16-column label of each report line.
field () {
    sed -n "s/^$1  *//p" "$2"
}

test_expect_success 'one partition line per PartitionName= line, in order' '
    # the exit status depends on the cgroups of this machine
    slurm-pin check --conf "$TRASH/parts.conf" >p.out 2>p.err
    field partition p.out >p.lines &&
    cat >p.exp <<-\EXP &&
	pilot: numa-spread (forced by the partition), profile no, dynamic overuse 1.5 grace 60s interval 5s confine cpuset
	open: none (the partition'"'"'s default), allowed all, profile 2s, dynamic overuse 1.5 grace 60s interval 5s confine cpuset
	dyn: numa-local (the partition'"'"'s default), allowed none,numa-local,numa-spread, profile 2s, dynamic overuse 1.5 grace 0.5s interval 5s confine quota, spread over 2 sockets
	EXP
    test_cmp p.exp p.lines
'

test_expect_success 'the partition lines follow the pin.conf line' '
    sed "s/ .*//" p.out | sed -n "1,4p" >labels.got &&
    printf "%s\n" pin.conf partition partition partition >labels.exp &&
    test_cmp labels.exp labels.got
'

test_expect_success 'no PartitionName= line: no partition line' '
    grep -v "^PartitionName=" parts.conf >global.conf &&
    # the exit status depends on the cgroups of this machine
    slurm-pin check --conf "$TRASH/global.conf" >g.out 2>g.err
    field pin.conf g.out | grep -F "$TRASH/global.conf: ok" &&
    ! grep "^partition " g.out
'

test_expect_success 'a broken pin.conf: no partition line' '
    printf "PartitionName=x Bogus=1\n" >>global.conf &&
    test_expect_code 1 slurm-pin check --conf "$TRASH/global.conf" \
        >b.out 2>b.err &&
    grep -F "PartitionName=x: '"'"'Bogus=1'"'"': not a per-partition Key=Value" b.err &&
    ! grep "^partition " b.out
'

test_expect_success PYTHON3 '--json: pin_conf.partitions says the same' '
    slurm-pin check --conf "$TRASH/parts.conf" --json >p.json 2>/dev/null
    python3 -c "
import json
d = json.load(open(\"p.json\"))
l = d[\"pin_conf\"][\"partitions\"]
p = {x[\"name\"]: x for x in l}
assert [x[\"name\"] for x in l] == [\"pilot\", \"open\", \"dyn\"], l
assert p[\"pilot\"][\"policy\"] == \"numa-spread\", p[\"pilot\"]
assert p[\"pilot\"][\"forced\"] is True, p[\"pilot\"]
assert p[\"pilot\"][\"from\"] == \"forced by the partition\", p[\"pilot\"]
assert p[\"pilot\"][\"profile_us\"] == 0, p[\"pilot\"]
assert p[\"open\"][\"policy\"] == \"none\", p[\"open\"]
assert p[\"open\"][\"allowed_policies\"] == \"all\", p[\"open\"]
assert p[\"open\"][\"from\"] == \"the partition\x27s default\", p[\"open\"]
assert p[\"open\"][\"profile_us\"] == 2000000, p[\"open\"]
assert p[\"dyn\"][\"policy\"] == \"numa-local\", p[\"dyn\"]
assert p[\"dyn\"][\"forced\"] is False, p[\"dyn\"]
assert p[\"dyn\"][\"dynamic_grace_us\"] == 500000, p[\"dyn\"]
assert p[\"dyn\"][\"dynamic_interval_us\"] == 5000000, p[\"dyn\"]
assert p[\"dyn\"][\"dynamic_confine\"] == \"quota\", p[\"dyn\"]
assert p[\"dyn\"][\"dynamic_overuse\"] == 1.5, p[\"dyn\"]
assert p[\"dyn\"][\"spread_sockets\"] == 2, p[\"dyn\"]
"
'

test_expect_success PYTHON3 'experiment lines: the global rules and each partition that names one' '
    cat >exp.conf <<-CONF &&
	TopologyCache=$TRASH/cache/topology.xml
	StateDir=$TRASH/state
	AllowedPolicies=all
	Experiment=numa2026
	ExperimentPolicies=none,numa-local
	ExperimentShare=20%
	ExperimentUntil=2026-12-31
	PartitionName=batch ExperimentJobNames=sim-* ExperimentSeed=7
	PartitionName=off Experiment=none
	PartitionName=pilot ForcedPolicy=numa-local
	CONF
    slurm-pin check --conf "$TRASH/exp.conf" >e.out 2>e.err
    field experiment e.out >e.lines &&
    cat >e.exp <<-\EXP &&
	global rules, numa2026: arms none (control), numa-local; share 20%; until 2026-12-31T00:00:00; job names all; accounts all; seed auto
	batch, numa2026: arms none (control), numa-local; share 20%; until 2026-12-31T00:00:00; job names sim-*; accounts all; seed 7
	pilot, numa2026: arms none (control), numa-local; share 20%; until 2026-12-31T00:00:00; job names all; accounts all; seed auto; not enrolled here (forced policy)
	EXP
    test_cmp e.exp e.lines &&
    slurm-pin check --conf "$TRASH/exp.conf" --json >e.json 2>/dev/null
    python3 -c "import json,sys
d = json.load(open(sys.argv[1]))
print(\" \".join(\"%s=%s\" % (p[\"name\"], p[\"experiment\"]) for p in d[\"pin_conf\"][\"partitions\"]))" e.json >e.jlines &&
    echo "batch=numa2026 off=None pilot=None" >e.jexp &&
    test_cmp e.jexp e.jlines
'

test_expect_success 'no experiment: no experiment line' '
    field experiment p.out >none.lines &&
    test_must_be_empty none.lines
'

test_done
