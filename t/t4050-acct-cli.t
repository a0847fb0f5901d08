#!/bin/sh

test_description='slurm-pin acct, eff and report on hand-written journals

The journal lines are written here by hand, in the key names of
src/common/libacct/acct.h, so these tests need neither Slurm nor the
plugin: they check the sacct conventions (header, -p/-P/-n, widths and the
+ cut, -X, -j with steps and arrays), the reading of a torn last line, and
that a user other than root sees only their own jobs.
'

. "$(dirname "$0")/sharness.sh"

pin_prereq_cmd PYTHON3 python3
pin_prereq_cmd SETPRIV setpriv

TZ=UTC
# The records are of cluster c1: c1 is the local cluster (slurm.conf's
# ClusterName, which acct, eff and report show by default), whatever
# slurm.conf this machine has
printf "ClusterName=c1\nSlurmctldHost=localhost\n" >slurm.conf
SLURM_CONF=$PWD/slurm.conf
export SLURM_CONF
export TZ
T0=1700000000          # 2023-11-14T22:13:20 UTC
NOBODY=65534

# rec KIND JOB STEP NODE UID USER START END ALLOC USER_S SYS_S [EXTRA]:
# one journal line; START/END in seconds after T0, times in seconds.
# EXTRA is more "key":value pairs (with a leading comma).
rec () {
    printf '{"v":1,"kind":"%s","cluster":"c1","job_id":%s,"step_id":%s,' "$1" "$2" "$3"
    printf '"array_job_id":4294967294,"array_task_id":4294967294,'
    printf '"node":"%s","uid":%s,"user":"%s","partition":"debug",' "$4" "$5" "$6"
    printf '"job_name":"sim","policy":"numa-local","fallback":"","cpus":"0-%s","mems":"0",' "$(($9 - 1))"
    printf '"alloc_cpus":%s,"start_us":%s000000,"end_us":%s000000,' "$9" "$((T0 + $7))" "$((T0 + $8))"
    printf '"elapsed_us":%s000000,"user_usec":%s000000,"system_usec":%s000000,' "$(($8 - $7))" "${10}" "${11}"
    printf '"usage_usec":%s000000,"exit_status":0,"state":"COMPLETED",' "$((${10} + ${11}))"
    printf '"source":"step-cgroup","cgroup":"/sys/fs/cgroup/x","mode":"nested"%s}\n' "${12:-}"
}
BATCH=4294967291
EXTERN=4294967292

test_expect_success 'set up a journal: rotated file and current file' '
    mkdir -p journal &&
    {
        rec job 101 4294967294 node1 0 root 0 120 4 191 10 &&
        rec step 101 $EXTERN node1 0 root 0 120 4 0 0 &&
        rec step 101 $BATCH node1 0 root 1 119 4 1 0 &&
        rec step 101 0 node1 0 root 2 102 2 190 10 &&
        rec step 101 0 node2 0 root 2 102 2 90 10 \
            ",\"fallback\":\"no-l3\",\"nr_periods\":100,\"nr_throttled\":12,\"throttled_usec\":1234000,\"mem_peak\":1610612736" &&
        rec job 101 4294967294 node2 0 root 0 120 4 90 10
    } >journal/journal.1 &&
    {
        rec step 102 $BATCH node3 $NOBODY nobody 10 70 1 30 0 \
            ",\"policy\":\"none\",\"exit_status\":256,\"state\":\"FAILED\"" &&
        rec step 102 0 node3 $NOBODY nobody 11 69 1 29 0 ",\"policy\":\"none\"" &&
        rec step 203 0 node1 0 root 20 80 2 60 0 \
            ",\"array_job_id\":200,\"array_task_id\":3,\"policy\":\"numa-spread\"" &&
        rec step 204 0 node2 0 root 20 80 2 120 0 \
            ",\"array_job_id\":200,\"array_task_id\":4,\"policy\":\"numa-spread\"" &&
        rec step 205 0 node2 0 root 20 80 1 30 0 \
            ",\"policy\":\"random\",\"seed\":12345678901" &&
        rec step 300 0 node1 0 root -3888000 -3887000 1 10 0 &&
        printf "{\"v\":1,\"kind\":\"step\",\"job_id\":10" # torn: no newline
    } >journal/journal &&
    chmod 0700 journal && chmod 0600 journal/*
'

ACCT="slurm-pin acct --journal=journal -S 2023-11-01"

test_expect_success '-o JobID,AllocCPUS,CPUEff,PinPolicy -P: the exact header' '
    $ACCT -o JobID,AllocCPUS,CPUEff,PinPolicy -P >out 2>err &&
    head -n 1 out >header &&
    printf "JobID|AllocCPUS|CPUEff|PinPolicy\n" >expect &&
    test_cmp expect header
'

test_expect_success 'a torn last line is skipped and reported on stderr' '
    $ACCT >out 2>err &&
    grep -F "journal: skipped 1 line that does not parse" err &&
    test "$(wc -l <err)" -eq 1
'

# The numbers: 101 (job records) 301 s over 120 s x 8 CPUs = 31.35%;
# 101.batch 1 s over 118 s x 4 = 0.21%; 101.0 300 s over 100 s x 4 = 75%;
# 102 has no job record: its line is its steps', 59 s over 60 s x 1.
test_expect_success '-P: rows in sacct order, job line then steps by start' '
    $ACCT -o JobID,JobIDRaw,NodeList,AllocCPUS,CPUEff,PinPolicy,Fallback -P >out 2>/dev/null &&
    cat >expect <<-\EOF &&
	JobID|JobIDRaw|NodeList|AllocCPUS|CPUEff|PinPolicy|Fallback
	101|101|node[1-2]|8|31.35%|numa-local|
	101.extern|101.extern|node1|4|0.00%|numa-local|
	101.batch|101.batch|node1|4|0.21%|numa-local|
	101.0|101.0|node[1-2]|4|75.00%|numa-local|no-l3
	102|102|node3|1|98.33%|none|
	102.batch|102.batch|node3|1|50.00%|none|
	102.0|102.0|node3|1|50.00%|none|
	200_3|203|node1|2|50.00%|numa-spread|
	200_3.0|203.0|node1|2|50.00%|numa-spread|
	200_4|204|node2|2|100.00%|numa-spread|
	200_4.0|204.0|node2|2|100.00%|numa-spread|
	205|205|node2|1|50.00%|random|
	205.0|205.0|node2|1|50.00%|random|
	EOF
    test_cmp expect out
'

test_expect_success '-p puts the delimiter after the last field too; --delimiter' '
    $ACCT -j 102 -o JobID,State,ExitCode -p >out 2>/dev/null &&
    printf "JobID|State|ExitCode|\n102|FAILED|1:0|\n102.batch|FAILED|1:0|\n102.0|COMPLETED|0:0|\n" >expect &&
    test_cmp expect out &&
    $ACCT -j 102 -o JobID,State -P --delimiter=:: >out 2>/dev/null &&
    printf "JobID::State\n102::FAILED\n102.batch::FAILED\n102.0::COMPLETED\n" >expect &&
    test_cmp expect out
'

test_expect_success '-n drops the header (and the dashes line)' '
    $ACCT -j 102 -o JobID,State -P -n >out 2>/dev/null &&
    printf "102|FAILED\n102.batch|FAILED\n102.0|COMPLETED\n" >expect &&
    test_cmp expect out &&
    $ACCT -j 102.0 -o JobID,State -n >out 2>/dev/null &&
    printf "102.0         COMPLETED \n" >expect &&
    test_cmp expect out
'

test_expect_success 'fixed width: dashes line, JobID left, the rest right' '
    $ACCT -j 101 -o JobID,JobName,User,Partition,AllocCPUS,Elapsed,TotalCPU,State,ExitCode >out 2>/dev/null &&
    cat >expect <<-\EOF &&
	JobID           JobName      User  Partition  AllocCPUS    Elapsed   TotalCPU      State ExitCode 
	------------ ---------- --------- ---------- ---------- ---------- ---------- ---------- -------- 
	101                 sim      root      debug          8   00:02:00   00:05:01  COMPLETED      0:0 
	101.extern       extern                               4   00:02:00   00:00:00  COMPLETED      0:0 
	101.batch         batch                               4   00:01:58   00:00:01  COMPLETED      0:0 
	101.0               sim                               4   00:01:40   00:05:00  COMPLETED      0:0 
	EOF
    test_cmp expect out
'

test_expect_success '%N widths and the + cut; negative widths left-justify' '
    $ACCT -j 101.0 -o jobid%5,cpuset%-12,mems%4,pinpol%-6,throttled,mempeak,start -n >out 2>/dev/null &&
    printf "101.0 node1:0-1;n+ nod+ numa-+  00:01.234      1.50G 2023-11-14T22:13:22 \n" >expect &&
    test_cmp expect out &&
    # a date too wide for its column: cut (Slurm 22.05) or "#"s (23.11
    # on), whichever the installed sacct does: t4051 compares the two
    $ACCT -j 101.0 -o start%10,alloccpus%1,elapsed%3 -n >out 2>/dev/null &&
    printf "2023-11-14 4 00:01:40 \n" >expect &&
    printf "########## 4 00:01:40 \n" >expect.hash &&
    { cmp -s expect out || test_cmp expect.hash out; } &&
    $ACCT -j 101.0 -o start%19,alloccpus%1,elapsed%3 -n >out 2>/dev/null &&
    printf "2023-11-14T22:13:22 4 00:01:40 \n" >expect &&
    test_cmp expect out
'

test_expect_success '-X: job lines only' '
    $ACCT -X -o JobID -P -n >out 2>/dev/null &&
    printf "101\n102\n200_3\n200_4\n205\n" >expect &&
    test_cmp expect out
'

test_expect_success '-o Gpus,Nic: the GPUs and NIC of a step, - when none' '
    mkdir -p jgpu &&
    {
        rec job 401 4294967294 node1 0 root 0 120 4 100 0 \
            ",\"gpus\":\"0000:3b:00.0,0000:86:00.0\",\"nic\":\"mlx5_0\"" &&
        rec step 401 0 node1 0 root 1 100 4 100 0 \
            ",\"gpus\":\"0000:3b:00.0,0000:86:00.0\",\"nic\":\"mlx5_0\"" &&
        rec step 401 1 node1 0 root 2 100 2 50 0 ",\"gpus\":\"gres:1\"" &&
        rec step 402 0 node1 0 root 2 100 2 50 0
    } >jgpu/journal &&
    chmod 0700 jgpu && chmod 0600 jgpu/journal &&
    slurm-pin acct --journal=jgpu -S 2023-11-01 -o JobID,Gpus,Nic -P >out 2>err &&
    cat >expect <<-\EOF &&
	JobID|Gpus|Nic
	401|0000:3b:00.0,0000:86:00.0|mlx5_0
	401.0|0000:3b:00.0,0000:86:00.0|mlx5_0
	401.1|gres:1|-
	402|-|-
	402.0|-|-
	EOF
    test_cmp expect out &&
    slurm-pin acct --journal=jgpu -S 2023-11-01 -j 401.1,402.0 -o JobID,Gpus,Nic >out 2>err &&
    cat >expect <<-\EOF &&
	JobID                  Gpus        Nic 
	------------ -------------- ---------- 
	401.1                gres:1          - 
	402.0                     -          - 
	EOF
    test_cmp expect out
'

test_expect_success PYTHON3 '--json: gpus and nic under slurm_pin, null when none' '
    slurm-pin acct --journal=jgpu -S 2023-11-01 --json >out.json 2>err &&
    cat >check.py <<-\EOF &&
	import json, sys
	d = json.load(open("out.json"))
	j = {x["job_id"]: x for x in d["jobs"]}
	s = j[401]["steps"]
	assert j[401]["slurm_pin"]["gpus"] == "0000:3b:00.0,0000:86:00.0", j[401]
	assert j[401]["slurm_pin"]["nic"] == "mlx5_0"
	assert s[0]["slurm_pin"]["gpus"] == "0000:3b:00.0,0000:86:00.0"
	assert s[1]["slurm_pin"]["gpus"] == "gres:1"
	assert s[1]["slurm_pin"]["nic"] is None
	assert j[402]["slurm_pin"]["gpus"] is None
	EOF
    python3 check.py
'

test_expect_success '-j: steps, array tasks, whole arrays' '
    $ACCT -j 101.0,102.batch -o JobID -P -n >out 2>/dev/null &&
    printf "101.0\n102.batch\n" >expect &&
    test_cmp expect out &&
    $ACCT -j 200_4 -o JobID -P -n >out 2>/dev/null &&
    printf "200_4\n200_4.0\n" >expect &&
    test_cmp expect out &&
    $ACCT -j 200 -X -o JobID,JobIDRaw -P -n >out 2>/dev/null &&
    printf "200_3|203\n200_4|204\n" >expect &&
    test_cmp expect out &&
    test_expect_code 1 $ACCT -j 101.x 2>err &&
    grep -F "invalid job id \"101.x\"" err
'

test_expect_success '-S/-E: a window; -j alone has none' '
    slurm-pin acct --journal=journal -S 2023-09-01 -E 2023-10-15 -X -o JobID -P -n >out 2>/dev/null &&
    printf "300\n" >expect &&
    test_cmp expect out &&
    slurm-pin acct --journal=journal -j 300 -X -o JobID -P -n >out 2>/dev/null &&
    test_cmp expect out &&
    slurm-pin acct --journal=journal -X -o JobID -P -n -S now-1days >out 2>/dev/null &&
    test_must_be_empty out &&
    test_expect_code 1 slurm-pin acct --journal=journal -S yesterdayish 2>err &&
    grep -F "invalid time \"yesterdayish\"" err
'

test_expect_success '-u selects users' '
    $ACCT -u nobody -X -o JobID,User -P -n >out 2>/dev/null &&
    printf "102|nobody\n" >expect &&
    test_cmp expect out
'

test_expect_success 'a bad -o field is named, with the valid ones' '
    test_expect_code 1 $ACCT -o JobID,Bogus 2>err >out &&
    test_must_be_empty out &&
    grep -F "invalid field requested: \"Bogus\"; valid fields: Account,AllocCPUS," err
'

# The journal is its owner's alone (0700, files 0600): a copy owned by
# nobody, with root's records in it, is read by nobody.
test_expect_success ROOT,SETPRIV 'a user other than root sees only their own jobs' '
    cp -r journal journal-nobody &&
    chown -R $NOBODY journal-nobody &&
    setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups \
        slurm-pin acct --journal=journal-nobody -S 2023-11-01 -a -o JobID,User -P >out 2>err &&
    printf "JobID|User\n102|nobody\n102.batch|\n102.0|\n" >expect &&
    test_cmp expect out &&
    grep -F "only root sees other users" err &&
    setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups \
        slurm-pin acct --journal=journal-nobody -S 2023-11-01 -u nobody -X -o JobID -P -n >out 2>err &&
    echo 102 >expect &&
    test_cmp expect out &&
    ! grep -F "only root" err &&
    test_expect_code 1 setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups \
        slurm-pin eff --journal=journal-nobody 101 2>err &&
    grep -F "job 101: no record of yours" err
'

test_expect_success PYTHON3 '--json: sacct top-level shape, steps, slurm_pin' '
    $ACCT -j 101 --json >out.json 2>/dev/null &&
    python3 - <<-\EOF
	import json
	d = json.load(open("out.json"))
	# the installed sacct shape (t4130 compares it with sacct):
	# dbv0.0.38 (22.05) or data_parser (23.02 on)
	def val(v):
	    if isinstance(v, list): return val(v[0]) if len(v) == 1 else v
	    if isinstance(v, dict) and "number" in v: return v["number"]
	    return v
	dp = "warnings" in d
	assert sorted(d) == ["errors", "jobs", "meta"] + (["warnings"] if dp else []), sorted(d)
	assert d["errors"] == []
	assert d["meta"]["slurm_pin"]["source"] == "journal"
	assert "skipped 1 journal line" in d["meta"]["slurm_pin"]["warnings"][0]["description"]
	(j,) = d["jobs"]
	assert j["job_id"] == 101 and j["user"] == "root" and j["nodes"] == "node[1-2]"
	assert val(j["state"]["current"]) == "COMPLETED"
	assert val(j["exit_code"]["status"]) == "SUCCESS"
	assert val(j["exit_code"]["return_code"]) == 0
	cpu = j["tres"]["allocated"][0]
	assert (cpu["type"], cpu["id"], cpu["count"]) == ("cpu", 1, 8), cpu
	assert j["time"]["total"] == {"seconds": 301, "microseconds": 0}
	ids = [s["step"]["id"] for s in j["steps"]]
	assert ids == (["101.extern", "101.batch", "101.0"] if dp else ["extern", "batch", 0]), ids
	assert all(isinstance(val(s["state"]), str) for s in j["steps"])
	s0 = j["steps"][2]
	assert (s0["nodes"]["count"], s0["nodes"]["range"], s0["nodes"]["list"]) == (2, "node[1-2]", ["node1", "node2"]), s0["nodes"]
	assert abs(s0["slurm_pin"]["efficiency"] - 0.75) < 1e-9
	assert s0["slurm_pin"]["throttled_usec"] == 1234000
	assert s0["slurm_pin"]["cpus"] == "node1:0-1;node2:0-1"
	assert "seed" not in s0["slurm_pin"]
	EOF
    $ACCT -j 205.0 --json >out.json 2>/dev/null &&
    python3 - <<-\EOF
	import json
	(j,) = json.load(open("out.json"))["jobs"]
	assert j["steps"][0]["slurm_pin"]["seed"] == 12345678901
	assert j["steps"][0]["slurm_pin"]["policy"] == "random"
	EOF
'

test_expect_success 'eff: the seff lines, per-step lines and plain-words hints' '
    slurm-pin eff --journal=journal 101 >out 2>/dev/null &&
    cat >expect <<-\EOF &&
	Job ID: 101
	Cluster: c1
	User/Group: root/root
	State: COMPLETED (exit code 0)
	Nodes: 2
	Cores per node: 4
	CPU Utilized: 00:05:01
	CPU Efficiency: 31.35% of 00:16:00 core-walltime
	Job Wall-clock time: 00:02:00
	EOF
    head -n 9 out >head &&
    test_cmp expect head &&
    grep "^Memory Utilized: " out &&
    grep -x "Node list: node\[1-2\]" out &&
    grep -E "^101.0 +numa-local +4 " out &&
    ! grep -F "step 101.batch: CPU efficiency" out &&
    grep -F "step 101.0: placement fell back (no-l3)" out &&
    grep -F "step 101.0: throttled for 00:01.234 in 12 of 100 periods" out &&
    ! grep -F "step 101.extern" out &&
    slurm-pin eff --journal=journal 200_4 >out 2>/dev/null &&
    grep -x "Job ID: 204" out &&
    grep -x "Array Job ID: 200_4" out &&
    grep -E "^200_4.0 +numa-spread +2 +0-1 +0 +00:02:00 +00:00:00 +100.00%$" out &&
    ! grep -F "Hints" out
'

test_expect_success 'eff: a step above its allocation gets the over-use hint' '
    mkdir -p over &&
    rec step 400 0 node1 0 root 0 100 2 300 0 >over/journal &&
    chmod 0700 over && chmod 0600 over/journal &&
    slurm-pin eff --journal=over 400 >out &&
    grep -F "step 400.0: CPU efficiency 150.00% is above 100%" out
'

# numa-local: 101.batch (0.21%) and 101.0 (75%), extern left out: (1 + 300) s
# over (118 x 4 + 100 x 4) s = 34.52%, quartiles by linear interpolation.
test_expect_success 'report --by policy: steps, CPU hours, efficiency, quartiles' '
    slurm-pin report --journal=journal -S 2023-11-01 >out 2>/dev/null &&
    cat >expect <<-\EOF &&
	Policy            Steps   CPUHours   CPUEff  SysShare    EffQ1   EffMed    EffQ3
	none                  2       0.02   50.00%     0.00%   50.00%   50.00%   50.00%
	numa-local            2       0.08   34.52%     6.64%   18.91%   37.61%   56.30%
	numa-spread           2       0.05   75.00%     0.00%   62.50%   75.00%   87.50%
	random                1       0.01   50.00%     0.00%   50.00%   50.00%   50.00%
	EOF
    test_cmp expect out
'

test_expect_success PYTHON3 'report --by user --json' '
    slurm-pin report --journal=journal -S 2023-11-01 --by user --json >out.json 2>/dev/null &&
    python3 - <<-\EOF
	import json
	d = json.load(open("out.json"))
	assert d["by"] == "user"
	g = {x["user"]: x for x in d["groups"]}
	assert sorted(g) == ["nobody", "root"], sorted(g)
	assert g["nobody"]["steps"] == 2
	assert abs(g["nobody"]["efficiency_median"] - (0.5 + 29/58) / 2) < 1e-9
	assert g["root"]["steps"] == 5
	EOF
'

test_expect_success 'report: a bad --by is named with the valid ones' '
    test_expect_code 2 slurm-pin report --journal=journal --by=node 2>err &&
    grep -F -- "--by=node: unknown grouping; known: policy, user, partition" err
'

# A FIFO (or device) planted as a journal file never blocks the reader:
# refused at once, named with what it is.
test_expect_success 'a FIFO as the journal file: acct, eff, report refuse it at once' '
    test_when_finished "rm -rf fjournal" &&
    mkdir -m 700 fjournal && mkfifo -m 600 fjournal/journal &&
    for cmd in "acct -X" "eff 100" report; do
        test_expect_code 1 timeout 20 slurm-pin $cmd --journal=fjournal \
            >out 2>err &&
        test_must_be_empty out &&
        cat err &&
        test "$(wc -l <err)" -eq 1 &&
        grep "fjournal/journal: a FIFO, not a regular file; remove it$" err ||
        return 1
    done
'

# ---- issue 22 item 5: sacct's selection options and fields ----------------
# jsel: job 401 on node1+node2 with the job values pin.so records (account,
# qos, submit_us, timelimit, req_mem), 402 and 4 as older records without
# them, 403 cancelled, job 4 of two clusters, job 7 submitted twice (a
# reused job id).  SLURM_CONF names the local cluster c1.
test_expect_success 'set up a journal of two clusters, a reused job id, job values' '
    NEW=",\"account\":\"physics\",\"qos\":\"normal\",\"submit_us\":$((T0 - 60))000000,\"timelimit\":90,\"req_mem\":4096" &&
    mkdir -p jsel &&
    {
        rec job 401 4294967294 node1 0 root 0 120 4 100 10 "$NEW" &&
        rec job 401 4294967294 node2 0 root 0 120 4 100 10 "$NEW" &&
        rec step 401 0 node1 0 root 1 119 4 100 10 "$NEW" &&
        rec step 401 0 node2 0 root 1 119 4 100 10 "$NEW" &&
        rec job 402 4294967294 node3 0 root 10 70 1 30 0 \
            ",\"partition\":\"long\",\"job_name\":\"other\",\"state\":\"FAILED\",\"exit_status\":256" &&
        rec job 403 4294967294 node3 0 root 20 80 1 30 0 \
            ",\"account\":\"chem\",\"state\":\"CANCELLED by 0\",\"timelimit\":4294967295,\"req_mem\":4000" &&
        rec job 4 4294967294 node1 0 root 30 90 1 30 0 &&
        rec job 4 4294967294 node9 0 root 30 90 2 60 0 | sed "s/\"cluster\":\"c1\"/\"cluster\":\"c2\"/" &&
        rec step 4 0 node9 0 root 30 90 2 60 0 | sed "s/\"cluster\":\"c1\"/\"cluster\":\"c2\"/" &&
        rec job 7 4294967294 node1 0 root 100 150 1 10 0 ",\"submit_us\":$((T0 + 90))000000" &&
        rec job 7 4294967294 node1 0 root 1000 1050 1 20 0 \
            ",\"submit_us\":$((T0 + 990))000000,\"state\":\"TIMEOUT\",\"timelimit\":1"
    } >jsel/journal &&
    chmod 0700 jsel && chmod 0600 jsel/journal
'

SEL="slurm-pin acct --journal=jsel -S 2023-11-01"

test_expect_success 'Account, QOS, Submit, Timelimit, ReqMem, NNodes, NodeList, Cluster; older records: unknown' '
    SLURM_CONF=$PWD/slurm.conf $SEL -o JobID,Account,QOS,Submit,Timelimit,ReqMem,NNodes,NodeList,Cluster -P >out 2>err &&
    cat >expect <<-\EOF &&
	JobID|Account|QOS|Submit|Timelimit|ReqMem|NNodes|NodeList|Cluster
	4|||Unknown|||1|node1|c1
	7|||2023-11-14T22:29:50|00:01:00||1|node1|c1
	401|physics|normal|2023-11-14T22:12:20|01:30:00|4G|2|node[1-2]|c1
	401.0|physics||2023-11-14T22:13:21|||2|node[1-2]|c1
	402|||Unknown|||1|node3|c1
	403|chem||Unknown|UNLIMITED|4000M|1|node3|c1
	EOF
    test_cmp expect out &&
    SLURM_CONF=$PWD/slurm.conf $SEL -j 401 -o Account,Submit,Timelimit,ReqMem,NNodes,MaxRSS,Reason,QOS >out 2>err &&
    cat >expect <<-\EOF &&
	   Account              Submit  Timelimit     ReqMem   NNodes     MaxRSS                 Reason        QOS 
	---------- ------------------- ---------- ---------- -------- ---------- ---------------------- ---------- 
	   physics 2023-11-14T22:12:20   01:30:00         4G        2                                       normal 
	   physics 2023-11-14T22:13:21                              2                                              
	EOF
    test_cmp expect out
'

test_expect_success '--units and --noconvert: ReqMem in sacct'\''s units' '
    SLURM_CONF=$PWD/slurm.conf $SEL -X -j 401,403 -o JobID,ReqMem -P -n --units=G >out 2>err &&
    printf "401|4G\n403|3.91G\n" >expect &&
    test_cmp expect out &&
    SLURM_CONF=$PWD/slurm.conf $SEL -X -j 401,403 -o JobID,ReqMem -P -n --units=k >out 2>err &&
    printf "401|4194304K\n403|4096000K\n" >expect &&
    test_cmp expect out &&
    SLURM_CONF=$PWD/slurm.conf $SEL -X -j 401 -o ReqMem -P -n --noconvert >out 2>err &&
    printf "4096M\n" >expect &&
    test_cmp expect out &&
    test_expect_code 2 $SEL --units=Q 2>err &&
    grep -F -- "--units: invalid unit type \"Q\": one of K, M, G, T, P" err
'

test_expect_success '-b and -l: sacct'\''s brief and long listings' '
    SLURM_CONF=$PWD/slurm.conf $SEL -b -P -j 402 >out 2>err &&
    printf "JobID|State|ExitCode\n402|FAILED|1:0\n" >expect &&
    test_cmp expect out &&
    SLURM_CONF=$PWD/slurm.conf $SEL --brief -P -n -X -j 403 >out 2>err &&
    printf "403|CANCELLED by 0|0:0\n" >expect &&
    test_cmp expect out &&
    SLURM_CONF=$PWD/slurm.conf $SEL -l -P -j 402 >out 2>err &&
    printf "JobID|JobIDRaw|JobName|Partition|MaxRSS|AllocCPUS|Elapsed|State|ExitCode|ReqMem\n402|402|other|long||1|00:01:00|FAILED|1:0|\n" >expect &&
    test_cmp expect out &&
    test_expect_code 2 $SEL -l -o JobID 2>err &&
    grep -F "mutually exclusive" err &&
    # sacct says so before it looks at the fields
    test_expect_code 2 $SEL -o Bogus -l 2>err &&
    grep -F "mutually exclusive" err
'

test_expect_success '-s: sacct'\''s states and window rule' '
    # without -S: -S and -E are now, and no ended job ended now
    SLURM_CONF=$PWD/slurm.conf slurm-pin acct --journal=jsel -s CA,TO -o JobID -P -n >out 2>err &&
    test_must_be_empty out &&
    # -S alone: -E is -S
    SLURM_CONF=$PWD/slurm.conf $SEL -s ca -o JobID -P -n >out 2>err &&
    test_must_be_empty out &&
    SLURM_CONF=$PWD/slurm.conf $SEL -E 2023-11-30 -s ca,TIMEOUT -X -o JobID,State -P -n >out 2>err &&
    printf "7|TIMEOUT\n403|CANCELLED by 0\n" >expect &&
    test_cmp expect out &&
    SLURM_CONF=$PWD/slurm.conf $SEL -E 2023-11-30 --state=completed,F -X -o JobID -P -n >out 2>err &&
    printf "4\n401\n402\n" >expect &&
    test_cmp expect out &&
    # with -j and no -S: the state alone
    SLURM_CONF=$PWD/slurm.conf slurm-pin acct --journal=jsel -j 402,403 -s CA -X -o JobID -P -n >out 2>err &&
    printf "403\n" >expect &&
    test_cmp expect out &&
    # ended in the window: 403 ended at T0+80 (22:14:40)
    SLURM_CONF=$PWD/slurm.conf $SEL -S 2023-11-14T22:14:00 -E 2023-11-14T22:14:39 -s CA -X -o JobID -P -n >out 2>err &&
    test_must_be_empty out &&
    test_expect_code 1 $SEL -s XX 2>err &&
    grep -F -- "-s: unrecognized job state value \"XX\"; valid: PENDING (PD)," err
'

test_expect_success '--name, -r, -A, -N select jobs (case-insensitive lists)' '
    SLURM_CONF=$PWD/slurm.conf $SEL --name other -o JobID -P -n >out 2>err &&
    printf "402\n" >expect &&
    test_cmp expect out &&
    SLURM_CONF=$PWD/slurm.conf $SEL -r long,nothing -o JobID -P -n >out 2>err &&
    test_cmp expect out &&
    SLURM_CONF=$PWD/slurm.conf $SEL --partition=LONG -o JobID -P -n >out 2>err &&
    test_cmp expect out &&
    SLURM_CONF=$PWD/slurm.conf $SEL -A chem -A PHYSICS -o JobID -P -n >out 2>err &&
    printf "401\n401.0\n403\n" >expect &&
    test_cmp expect out &&
    SLURM_CONF=$PWD/slurm.conf $SEL --accounts=physics -X -o JobID -P -n >out 2>err &&
    printf "401\n" >expect &&
    test_cmp expect out &&
    SLURM_CONF=$PWD/slurm.conf $SEL -N "node[2-3]" -X -o JobID -P -n >out 2>err &&
    printf "401\n402\n403\n" >expect &&
    test_cmp expect out &&
    SLURM_CONF=$PWD/slurm.conf $SEL --nodelist=node9 -L -X -o JobID,Cluster -P -n >out 2>err &&
    printf "4|c2\n" >expect &&
    test_cmp expect out
'

test_expect_success '-M, -L: the local cluster by default, for acct, eff and report' '
    SLURM_CONF=$PWD/slurm.conf $SEL -j 4 -o JobID,Cluster,NodeList -P -n >out 2>err &&
    printf "4|c1|node1\n" >expect &&
    test_cmp expect out &&
    SLURM_CONF=$PWD/slurm.conf $SEL -j 4 -L -o JobID,Cluster -P -n >out 2>err &&
    printf "4|c1\n4|c2\n4.0|c2\n" >expect &&
    test_cmp expect out &&
    SLURM_CONF=$PWD/slurm.conf $SEL -j 4 -M all -o JobID,Cluster -P -n >out 2>err &&
    test_cmp expect out &&
    # no slurm.conf to read (a journal copied to a workstation): every
    # cluster
    SLURM_CONF=$PWD/nonexistent.conf $SEL -j 4 -X -o JobID,Cluster -P -n >out 2>err &&
    printf "4|c1\n4|c2\n" >expect &&
    test_cmp expect out &&
    SLURM_CONF=$PWD/slurm.conf $SEL -j 4 --clusters=c2 -o JobID,Cluster -P -n >out 2>err &&
    printf "4|c2\n4.0|c2\n" >expect &&
    test_cmp expect out &&
    SLURM_CONF=$PWD/slurm.conf slurm-pin eff --journal=jsel 4 >out 2>err &&
    grep -c "^Job ID: 4$" out >count &&
    echo 1 >expect &&
    test_cmp expect count &&
    grep "^Cluster: c1$" out &&
    ! grep "c2" out &&
    SLURM_CONF=$PWD/slurm.conf slurm-pin report --journal=jsel -S 2023-11-01 --by user --json >out.json 2>err &&
    python3 -c "import json; d=json.load(open(\"out.json\")); print(sum(g[\"steps\"] for g in d[\"groups\"]))" >steps &&
    echo 1 >expect &&
    test_cmp expect steps
'

test_expect_success '-D: every job of a reused job id; without it the most recent' '
    SLURM_CONF=$PWD/slurm.conf $SEL -j 7 -o JobID,Submit,State,Elapsed -P -n >out 2>err &&
    printf "7|2023-11-14T22:29:50|TIMEOUT|00:00:50\n" >expect &&
    test_cmp expect out &&
    SLURM_CONF=$PWD/slurm.conf $SEL -j 7 -D -o JobID,Submit,State -P -n >out 2>err &&
    printf "7|2023-11-14T22:14:50|COMPLETED\n7|2023-11-14T22:29:50|TIMEOUT\n" >expect &&
    test_cmp expect out &&
    SLURM_CONF=$PWD/slurm.conf $SEL --duplicates -j 7 -X -o JobID -P -n >out 2>err &&
    printf "7\n7\n" >expect &&
    test_cmp expect out
'

test_expect_success '-T: Start, End and Elapsed cut to the window' '
    SLURM_CONF=$PWD/slurm.conf slurm-pin acct --journal=jsel -S 2023-11-14T22:14:00 -E 2023-11-14T22:14:30 -j 401 -T -o JobID,Start,End,Elapsed -P -n >out 2>err &&
    printf "401|2023-11-14T22:14:00|2023-11-14T22:14:30|00:00:30\n401.0|2023-11-14T22:14:00|2023-11-14T22:14:30|00:00:30\n" >expect &&
    test_cmp expect out &&
    SLURM_CONF=$PWD/slurm.conf slurm-pin acct --journal=jsel -S 2023-11-14T22:14:00 -E 2023-11-14T22:14:30 -j 401 --truncate -X -o Start -P -n >out 2>err &&
    printf "2023-11-14T22:14:00\n" >expect &&
    test_cmp expect out &&
    SLURM_CONF=$PWD/slurm.conf slurm-pin acct --journal=jsel -S 2023-11-14T22:14:00 -E 2023-11-14T22:14:30 -j 401 -X -o Start -P -n >out 2>err &&
    printf "2023-11-14T22:13:20\n" >expect &&
    test_cmp expect out
'

test_expect_success 'report: --by has no short letter (sacct'\''s -b is --brief)' '
    test_expect_code 2 slurm-pin report --journal=jsel -b user 2>err &&
    grep -F -- "-b: unknown option" err &&
    slurm-pin report --journal=jsel -S 2023-11-01 --by user >out 2>err &&
    grep "^User " out
'

test_done
