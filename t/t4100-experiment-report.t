#!/bin/sh

test_description='slurm-pin experiment report, acct -o Experiment,Arm and eff on a synthetic journal

A journal of a policy experiment is written here (JSON lines in the key
names of src/common/libacct/acct.h) by a small Python generator: blocks of
like jobs, each holding jobs of the control arm none and of numa-local,
the numa-local jobs with 30 % less system time share, plus the jobs the
report must leave out or count apart (an opted-out job, a job whose
records disagree, extern steps, another experiment, a job not enrolled).
The same script computes the expected figures on its own (per-block log
ratios and a Student t interval with the 0.975 quantile from a published
table), and the tests compare them with the text and --json of
`slurm-pin experiment report`.  Neither Slurm nor the plugin is needed.
'

. "$(dirname "$0")/sharness.sh"

pin_prereq_cmd PYTHON3 python3

TZ=UTC
# the fixtures' cluster c1 is shown whatever slurm.conf this machine has:
# none to read, every cluster (slurm-pin-acct(1), -M)
SLURM_CONF=$PWD/no-slurm.conf
export SLURM_CONF
export TZ

test_expect_success PYTHON3 'set up: the generator and expected figures' '
	cat >gen.py <<-\EOF &&
	import json, math, os, random, sys

	out, nblocks, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
	SYS = 0.7  # numa-local: 30 % less system time share
	T0 = 1700000000 * 1000000
	BATCH, EXTERN = 4294967291, 4294967292
	NOVAL = 4294967294
	rng = random.Random(seed)
	recs = []

	def rec(job, step, node, arm, block, policy, cpus, start, wall, cpu, share,
	        exp="exp1", task=None):
	    r = {"v": 1, "kind": "step", "cluster": "c1", "job_id": job,
	         "step_id": step, "array_job_id": 5000 if task else NOVAL,
	         "array_task_id": task if task else NOVAL, "node": node,
	         "uid": 0, "user": "root", "partition": "batch",
	         "job_name": "sim", "policy": policy, "fallback": "",
	         "cpus": "0-%d" % (cpus - 1), "mems": "0", "alloc_cpus": cpus,
	         "start_us": start, "end_us": start + int(wall * 1e6),
	         "elapsed_us": int(wall * 1e6),
	         "user_usec": int(cpu * 1e6) - int(cpu * share * 1e6),
	         "system_usec": int(cpu * share * 1e6),
	         "usage_usec": int(cpu * 1e6), "exit_status": 0,
	         "state": "COMPLETED", "source": "step-cgroup",
	         "cgroup": "/sys/fs/cgroup/x", "mode": "nested"}
	    if exp:
	        r.update(experiment=exp, arm=arm, block=block)
	    recs.append(r)

	job = 1000
	for b in range(nblocks):
	    block = "%016x" % (0xabc000 + b)
	    cpus = 1 + b % 8
	    cpu_b = 300 * math.exp(rng.gauss(0, 1))
	    share_b = 0.05 + 0.2 * rng.random()
	    wall_b = cpu_b / cpus / 0.7
	    for arm in ("none", "numa-local"):
	        for k in range(2 + b % 2):
	            job += 1
	            f = SYS if arm == "numa-local" else 1
	            cpu = cpu_b * math.exp(rng.gauss(0, 0.2))
	            share = share_b * f * math.exp(rng.gauss(0, 0.1))
	            wall = wall_b * math.exp(rng.gauss(0, 0.1))
	            start = T0 + job * 10000000
	            task = 1 if job == 1003 else None
	            pol = arm
	            # extern: never counted; batch: a little of everything
	            rec(job, EXTERN, "n1", arm, block, pol, cpus, start - 1000000,
	                wall + 2, 99999, 0.5, task=task)
	            rec(job, BATCH, "n1", arm, block, pol, cpus, start, wall,
	                1, share, task=task)
	            if job % 5 == 0:  # step 0 on two nodes
	                rec(job, 0, "n1", arm, block, pol, cpus, start + 1000000,
	                    wall - 1, cpu / 2, share, task=task)
	                rec(job, 0, "n2", arm, block, pol, cpus, start + 1000000,
	                    wall - 1, cpu / 2, share, task=task)
	            else:
	                rec(job, 0, "n1", arm, block, pol, cpus, start + 1000000,
	                    wall - 1, cpu, share, task=task)
	# opted out: its step 1 ran numa-spread
	blk0 = "%016x" % 0xabc000
	rec(9001, 0, "n1", "numa-local", blk0, "numa-local", 2, T0, 100, 50, 0.1)
	rec(9001, 1, "n1", "numa-local", blk0, "numa-spread", 2, T0, 100, 50, 0.1)
	# inconsistent: its two nodes disagree on the block
	rec(9002, 0, "n1", "none", blk0, "none", 2, T0, 100, 50, 0.1)
	rec(9002, 0, "n2", "none", "ffffffffffffffff", "none", 2, T0, 100, 50, 0.1)
	# another experiment, and a job not enrolled at all
	rec(9003, 0, "n1", "none", blk0, "none", 2, T0, 100, 50, 0.1, exp="exp2")
	rec(9004, 0, "n1", "", "", "none", 2, T0, 100, 50, 0.1, exp=None)
	os.makedirs(out, mode=0o700, exist_ok=True)
	with open(os.path.join(out, "journal"), "w") as f:
	    for r in recs:
	        f.write(json.dumps(r) + "\n")
	os.chmod(os.path.join(out, "journal"), 0o600)

	# ---- the expected figures, computed here ----
	T975 = {4: 2.7764451, 11: 2.2009852, 14: 2.1447867}  # t(0.975, df)
	jobs = {}
	foreign = set()
	for r in recs:
	    if r["step_id"] == EXTERN:
	        continue
	    key = (r["cluster"], r["job_id"])
	    if r.get("experiment") != "exp1":
	        foreign.add(key)
	        continue
	    j = jobs.setdefault(key, {"arm": r["arm"], "block": r["block"],
	                              "bad": False, "out": False, "cpu": 0,
	                              "sys": 0, "alloc": 0, "start": None,
	                              "end": 0, "steps": set()})
	    j["bad"] |= (r["arm"], r["block"]) != (j["arm"], j["block"])
	    j["out"] |= r["policy"] != r["arm"]
	    j["cpu"] += r["user_usec"] + r["system_usec"]
	    j["sys"] += r["system_usec"]
	    j["alloc"] += r["elapsed_us"] * r["alloc_cpus"]
	    j["start"] = min(j["start"] or r["start_us"], r["start_us"])
	    j["end"] = max(j["end"], r["end_us"])
	    j["steps"].add(r["step_id"])
	for k in foreign & set(jobs):
	    jobs[k]["bad"] = True
	good = [j for j in jobs.values() if not j["bad"]]
	kept = [j for j in good if not j["out"]]
	arms = {}
	for j in good:
	    a = arms.setdefault(j["arm"], {"arm": j["arm"], "jobs": 0, "steps": 0,
	                                   "opted_out": 0, "cpu": 0, "sys": 0,
	                                   "alloc": 0, "wall": 0})
	    if j["out"]:
	        a["opted_out"] += 1
	        continue
	    a["jobs"] += 1
	    a["steps"] += len(j["steps"])
	    for x in ("cpu", "sys", "alloc"):
	        a[x] += j[x]
	    a["wall"] += j["end"] - j["start"]

	def metric(cell, m):
	    n, cpu, sys_, alloc, wall = cell
	    return {"system_share": sys_ / cpu, "wall_time": wall / n,
	            "cpu_time": cpu / n, "efficiency": cpu / alloc}[m]

	cells = {}
	for j in kept:
	    c = cells.setdefault((j["block"], j["arm"]), [0, 0, 0, 0, 0])
	    c[0] += 1
	    c[1] += j["cpu"]
	    c[2] += j["sys"]
	    c[3] += j["alloc"]
	    c[4] += j["end"] - j["start"]
	cmp = {"arm": "numa-local", "control": "none", "differences": {}}
	blocks = sorted({b for b, a in cells if (b, "none") in cells
	                 and (b, "numa-local") in cells})
	cmp["matched_blocks"] = len(blocks)
	cmp["arm_jobs"] = sum(cells[(b, "numa-local")][0] for b in blocks)
	cmp["control_jobs"] = sum(cells[(b, "none")][0] for b in blocks)
	for m in ("system_share", "wall_time", "cpu_time", "efficiency"):
	    d = [math.log(metric(cells[(b, "numa-local")], m)
	                  / metric(cells[(b, "none")], m)) for b in blocks]
	    n = len(d)
	    mean = sum(d) / n
	    s = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1))
	    h = T975[n - 1] * s / math.sqrt(n)
	    cmp["differences"][m] = {"estimate": math.exp(mean) - 1,
	                             "low": math.exp(mean - h) - 1,
	                             "high": math.exp(mean + h) - 1,
	                             "blocks": n}
	exp = {"jobs": len(jobs), "inconsistent": len(jobs) - len(good),
	       "arms": [arms[k] for k in sorted(arms)], "cmp": cmp}
	with open(out + ".expect.json", "w") as f:
	    json.dump(exp, f)
	EOF
	python3 gen.py j12 12 1 &&
	python3 gen.py j5 5 2 &&
	test -s j12/journal && test -s j12.expect.json
'

test_expect_success PYTHON3 'text: the table per arm holds the numbers computed apart' '
	slurm-pin experiment report exp1 --journal=j12 >out 2>err &&
	test_must_be_empty err &&
	cat out &&
	cat >table.py <<-\EOF &&
	import json
	e = json.load(open("j12.expect.json"))
	def hms(s):
	    s = int(s + 0.5)
	    return "%02d:%02d:%02d" % (s // 3600, s // 60 % 60, s % 60)
	print("%-16s %6s %6s %8s %9s %8s %9s %10s %10s" % ("Arm", "Jobs",
	      "Steps", "OptedOut", "CPUHours", "CPUEff", "SysShare",
	      "WallPerJob", "CPUPerJob"))
	for a in e["arms"]:
	    print("%-16s %6d %6d %8d %9.2f %8s %9s %10s %10s" % (a["arm"],
	          a["jobs"], a["steps"], a["opted_out"], a["cpu"] / 3.6e9,
	          "%.2f%%" % (100 * a["cpu"] / a["alloc"]),
	          "%.2f%%" % (100 * a["sys"] / a["cpu"]),
	          hms(a["wall"] / 1e6 / a["jobs"]), hms(a["cpu"] / 1e6 / a["jobs"])))
	EOF
	python3 table.py >expect &&
	sed -n "4,6p" out >table &&
	test_cmp expect table &&
	head -n 2 out >head &&
	cat >expect <<-EOF &&
	Experiment exp1: 62 jobs, 1 left out (their records disagree); records from journal $PWD/j12
	Control arm: none (the arm none)
	EOF
	test_cmp expect head &&
	grep -x "numa-local against none: 12 matched blocks, 30 + 30 jobs" out
'

test_expect_success PYTHON3 '--json: arms, comparison and verdict match the figures computed apart' '
	slurm-pin experiment report exp1 --journal=j12 --json >out.json &&
	cat >check.py <<-\EOF &&
	import json, math
	d = json.load(open("out.json"))
	e = json.load(open("j12.expect.json"))
	assert d["experiment"] == "exp1" and d["control"] == "none", d
	assert d["source"] == "journal"
	assert d["jobs"] == e["jobs"] == 62, (d["jobs"], e["jobs"])
	assert d["inconsistent"] == e["inconsistent"] == 1
	assert [a["arm"] for a in d["arms"]] == ["none", "numa-local"]
	for got, want in zip(d["arms"], e["arms"]):
	    for k in ("jobs", "steps", "opted_out"):
	        assert got[k] == want[k], (k, got, want)
	    close = lambda x, y: abs(x - y) <= 1e-9 * max(1, abs(y))
	    assert close(got["cpu_hours"], want["cpu"] / 3.6e9)
	    assert close(got["efficiency"], want["cpu"] / want["alloc"])
	    assert close(got["system_share"], want["sys"] / want["cpu"])
	    assert close(got["wall_time_per_job"], want["wall"] / 1e6 / want["jobs"])
	    assert close(got["cpu_time_per_job"], want["cpu"] / 1e6 / want["jobs"])
	assert d["arms"][1]["opted_out"] == 1
	(c,) = d["comparisons"]
	w = e["cmp"]
	assert c["arm"] == "numa-local" and c["control"] == "none"
	assert c["matched_blocks"] == w["matched_blocks"] == 12
	assert c["arm_jobs"] == w["arm_jobs"] and c["control_jobs"] == w["control_jobs"]
	assert c["matched_jobs"] == w["arm_jobs"] + w["control_jobs"] == 60
	assert c["enough"] is True
	labels = {"system_share": "system time share", "wall_time": "wall time",
	          "cpu_time": "CPU time", "efficiency": "efficiency"}
	v = c["verdict"]
	def pct(x):
	    r = math.floor(abs(x) * 100 + 0.5)
	    return "0" if r == 0 else ("\u2212" if x < 0 else "+") + str(r)
	for m, want in w["differences"].items():
	    got = c["differences"][m]
	    for k in ("estimate", "low", "high"):
	        assert abs(got[k] - want[k]) < 1e-6, (m, k, got, want)
	    assert got["blocks"] == want["blocks"] == 12
	    stated = want["low"] > 0 or want["high"] < 0
	    assert got["stated"] == stated, (m, got)
	    ci = "(95 %% CI %s to %s %%)" % (pct(want["low"]), pct(want["high"]))
	    if stated:
	        frag = "%s %% %s %s" % (pct(want["estimate"]), labels[m], ci)
	    else:
	        frag = "; %s: no difference %s" % (labels[m], ci)
	    assert frag in v, (frag, v)
	# the effect: 30 % less system time share, inside the interval
	s = w["differences"]["system_share"]
	assert s["low"] < -0.3 < s["high"] and s["high"] < 0, s
	assert v.startswith("numa-local: \u2212"), v
	assert ", 60 matched jobs" in v, v
	print(v)
	EOF
	python3 check.py >verdict &&
	slurm-pin experiment report exp1 --journal=j12 >out &&
	tail -n 1 out >got &&
	test_cmp verdict got
'

test_expect_success PYTHON3 '--control numa-local: the comparison turned round' '
	slurm-pin experiment report exp1 --journal=j12 --control numa-local --json >out.json &&
	python3 - <<-\EOF
	import json
	d = json.load(open("out.json"))
	e = json.load(open("j12.expect.json"))["cmp"]["differences"]
	(c,) = d["comparisons"]
	assert d["control"] == "numa-local" and c["arm"] == "none"
	for m, w in e.items():
	    got = c["differences"][m]
	    assert abs((1 + got["estimate"]) * (1 + w["estimate"]) - 1) < 1e-9
	    assert abs((1 + got["low"]) * (1 + w["high"]) - 1) < 1e-6
	assert c["verdict"].startswith("none: +"), c["verdict"]
	EOF
'

test_expect_success 'the control from pin.conf: its first ExperimentPolicies=' '
	printf "Experiment=exp1\nExperimentPolicies=numa-local,none\n" >global.conf &&
	slurm-pin experiment report exp1 --journal=j12 --conf=global.conf >out &&
	grep -x "Control arm: numa-local (the first of pin.conf'"'"'s ExperimentPolicies=)" out &&
	grep "^none: " out &&
	# a partition line overrides the global experiment
	printf "PartitionName=batch Experiment=exp1 ExperimentPolicies=none,numa-local\nExperiment=exp9\nExperimentPolicies=numa-spread,none\n" >part.conf &&
	slurm-pin experiment report exp1 --journal=j12 --conf=part.conf -v >out 2>err &&
	grep -x "Control arm: none (the first of pin.conf'"'"'s ExperimentPolicies=)" out &&
	grep -x "slurm-pin experiment report: control arm none (the first of pin.conf'"'"'s ExperimentPolicies=)" err &&
	# an arm without jobs yet: the rule without pin.conf
	printf "Experiment=exp1\nExperimentPolicies=numa-spread,none\n" >spread.conf &&
	slurm-pin experiment report exp1 --journal=j12 --conf=spread.conf >out &&
	grep -x "Control arm: none (the arm none)" out &&
	# --control wins over pin.conf
	slurm-pin experiment report exp1 --journal=j12 --conf=global.conf --control=none >out &&
	grep -x "Control arm: none (--control)" out &&
	# a bad --conf: exit 1, its error
	printf "Bogus=1\n" >bad.conf &&
	test_expect_code 1 slurm-pin experiment report exp1 --journal=j12 --conf=bad.conf >out 2>err &&
	test_must_be_empty out &&
	grep -F "slurm-pin experiment report: --conf: bad.conf:1: Bogus: unknown key" err
'

test_expect_success 'too few matched blocks: the verdict says so' '
	slurm-pin experiment report exp1 --journal=j5 >out 2>err &&
	tail -n 1 out >got &&
	echo "numa-local: too few matched jobs to conclude (5 matched blocks, 12 jobs of numa-local and 12 of none; need at least 10 blocks and 20 jobs per arm)" >expect &&
	test_cmp expect got &&
	slurm-pin experiment report exp1 --journal=j5 --json >out.json &&
	grep -F "\"enough\": false" out.json ||
	grep -F "\"enough\":false" out.json
'

test_expect_success 'an unknown experiment: exit 1, one line naming it' '
	test_expect_code 1 slurm-pin experiment report nosuch --journal=j12 >out 2>err &&
	test_must_be_empty out &&
	test "$(wc -l <err)" -eq 1 &&
	grep -x "slurm-pin experiment report: experiment nosuch: no step records in journal $PWD/j12" err
'

test_expect_success 'an unknown --control names the arms; a bad name, a bad action' '
	test_expect_code 1 slurm-pin experiment report exp1 --journal=j12 --control=random >out 2>err &&
	test_must_be_empty out &&
	grep -x "slurm-pin experiment report: --control=random: no such arm in experiment exp1; its arms: none, numa-local" err &&
	test_expect_code 2 slurm-pin experiment report "../etc" --journal=j12 2>err &&
	grep -F "\"../etc\": not an experiment name" err &&
	test_expect_code 2 slurm-pin experiment report 2>err &&
	grep -F "experiment report: expected one experiment NAME" err &&
	test_expect_code 2 slurm-pin experiment summary 2>err &&
	grep -x "slurm-pin experiment: summary: unknown action; known: report (see '\''slurm-pin experiment --help'\'')" err &&
	slurm-pin experiment report --help >out &&
	grep -F "Usage: slurm-pin experiment report NAME [OPTIONS]" out &&
	grep -F -- "--control=ARM" out
'

test_expect_success 'a window (-S/-E) that holds none of its jobs: exit 1' '
	test_expect_code 1 slurm-pin experiment report exp1 --journal=j12 -S 2024-01-01 >out 2>err &&
	grep -F "experiment exp1: no step records in the time window" err
'

test_expect_success 'acct -o Experiment,Arm: the enrolment, blank when none' '
	slurm-pin acct --journal=j12 -S 2023-11-01 -j 1001,9003,9004 -X -o JobID,Experiment,Arm -P >out 2>err &&
	cat >expect <<-\EOF &&
	JobID|Experiment|Arm
	1001|exp1|none
	9003|exp2|none
	9004||
	EOF
	test_cmp expect out &&
	slurm-pin acct --journal=j12 -S 2023-11-01 -j 1004.0,9004.0 -o JobID,Experiment,Arm >out 2>err &&
	cat >expect <<-\EOF &&
	JobID          Experiment          Arm 
	------------ ------------ ------------ 
	1004.0               exp1   numa-local 
	9004.0                                 
	EOF
	test_cmp expect out
'

test_expect_success PYTHON3 'acct --json: experiment, arm and block under slurm_pin' '
	slurm-pin acct --journal=j12 -S 2023-11-01 -j 1004,9004 --json >out.json &&
	python3 - <<-\EOF
	import json
	j = {x["job_id"]: x for x in json.load(open("out.json"))["jobs"]}
	sp = j[1004]["slurm_pin"]
	assert (sp["experiment"], sp["arm"], sp["block"]) == ("exp1", "numa-local", "0000000000abc000"), sp
	assert j[1004]["steps"][0]["slurm_pin"]["arm"] == "numa-local"
	sp = j[9004]["slurm_pin"]
	assert sp["experiment"] is None and sp["arm"] is None and sp["block"] is None, sp
	EOF
'

test_expect_success 'eff: an enrolled job says its experiment and arm; another does not' '
	slurm-pin eff --journal=j12 1004 >out &&
	grep -x "Experiment: exp1, arm numa-local (opt out with --pin-policy)" out &&
	slurm-pin eff --journal=j12 9004 >out &&
	! grep -F "Experiment:" out
'

test_done
