#!/usr/bin/python3
"""acct-gen.py --records N --dir DIR [--seed S] [--max-size BYTES]

Write a realistic node journal of N records into DIR, in exactly the
record format pin.so writes (src/common/libacct/record.c: the same keys in
the same order, the same spelling of numbers, one JSON object per line):
DIR/journal, and rotated DIR/journal.N files as JournalMaxSize= would cut
them (--max-size, default 64 MiB as pin.conf's default; 0: never rotate).

The mix: jobs of 1 to 20 steps, batch jobs (batch + extern + numbered
steps) and srun jobs (extern + numbered steps), array jobs, several users,
accounts, partitions and policies, states COMPLETED, FAILED, TIMEOUT,
CANCELLED and OUT_OF_MEMORY, times spread over six months; every job ends
with its job record ("kind":"job", source "step-records") as the epilog
writes it, after its step records.  Job ids increase; records are in the
order of their end times within a job, jobs in the order they ended.

The same --seed gives the same journal, byte for byte.  Python 3
standard library only.  Exit status 2 with a one-line error on bad
options; DIR is created (0700) if missing and must not hold a journal.
"""
import argparse
import json
import os
import random
import sys

STEP_BATCH = 0xFFFFFFFB
STEP_EXTERN = 0xFFFFFFFC
NO_VAL = 0xFFFFFFFE
MAX_DEFAULT = 64 << 20

USERS = [("alice", 1001), ("bob", 1002), ("carol", 1003), ("dave", 1004),
         ("erin", 1005), ("frank", 1006), ("grace", 1007), ("heidi", 1008),
         ("ivan", 1009), ("judy", 1010), ("mallory", 1011), ("oscar", 1012)]
ACCOUNTS = ["physics", "chemistry", "biology", "climate", "ml"]
QOS = ["normal", "normal", "normal", "high", "long"]
PARTITIONS = ["batch", "batch", "batch", "short", "long", "gpu"]
POLICIES = ["numa-local", "numa-local", "numa-local", "numa-spread",
            "cache-shared", "none", "random", "dynamic"]
NAMES = ["sim", "relax", "md-run", "train.py", "postproc", "vasp",
         "gromacs", "analysis", "wrf", "bench", "job.sh", "array-task"]
NODE = "node%03d"


def jdump(obj):
    """json-c's JSON_C_TO_STRING_PLAIN: no blanks, keys in insertion order;
    record.c then writes every non-ASCII character as a \\u escape."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=True)


class Raw(float):
    """A double json-c writes from its own string (json_object_new_double_s)."""

    def __new__(cls, text):
        o = float.__new__(cls, float(text))
        o.text = text
        return o

    def __repr__(self):
        return self.text


class Enc(json.JSONEncoder):
    pass


def encode(rec):
    # json.dumps calls float.__repr__ for floats: write the efficiency from
    # its string by hand (the key order is kept)
    parts = []
    for k, v in rec.items():
        if isinstance(v, Raw):
            parts.append("%s:%s" % (jdump(k), v.text))
        else:
            parts.append("%s:%s" % (jdump(k), jdump(v)))
    return "{" + ",".join(parts) + "}"


def step_record(job, step_id, node, start, end, alloc, user_frac, st,
                exit_status, rnd, mem_peak):
    elapsed = end - start
    busy = int(elapsed * alloc * user_frac)
    user_usec = int(busy * 0.93)
    system_usec = busy - user_usec
    r = {"v": 1, "kind": "step", "cluster": job["cluster"],
         "job_id": job["job_id"], "step_id": step_id,
         "array_job_id": job["array_job_id"],
         "array_task_id": job["array_task_id"], "node": node,
         "uid": job["uid"]}
    ext = step_id == STEP_EXTERN
    # the extern step runs without the job's environment
    r["user"] = "" if ext else job["user"]
    r["partition"] = "" if ext else job["partition"]
    r["job_name"] = "" if ext else job["job_name"]
    if not ext:
        r["account"] = job["account"]
        r["qos"] = job["qos"]
        r["submit_us"] = job["submit_us"]
        r["timelimit"] = job["timelimit"]
        r["req_mem"] = job["req_mem"]
    r["policy"] = "none" if ext else job["policy"]
    r["fallback"] = ""
    if job["experiment"] and not ext:
        r["experiment"], r["arm"], r["block"] = job["experiment"]
    if job["policy"] == "random" and not ext:
        r["seed"] = job["seed"]
    ncpu = max(alloc, 1)
    base = job["cpu_base"]
    r["cpus"] = "%d-%d" % (base, base + ncpu - 1) if ncpu > 1 else str(base)
    r["mems"] = "0" if base < 32 else "1"
    r["alloc_cpus"] = alloc
    r["start_us"] = start
    r["end_us"] = end
    r["elapsed_us"] = elapsed
    r["user_usec"] = user_usec
    r["system_usec"] = system_usec
    r["usage_usec"] = user_usec + system_usec
    if elapsed > 0 and alloc > 0:
        r["efficiency"] = Raw("%.4f" % ((user_usec + system_usec)
                                        / (elapsed * alloc)))
    periods = elapsed // 100000
    thr = rnd.randrange(0, periods // 50 + 1) if periods else 0
    r["nr_periods"] = periods
    r["nr_throttled"] = thr
    r["throttled_usec"] = thr * rnd.randrange(1000, 50000)
    r["mem_peak"] = mem_peak
    r["exit_status"] = exit_status
    r["state"] = st
    r["source"] = "step-cgroup"
    sname = {STEP_BATCH: "batch", STEP_EXTERN: "extern"}.get(step_id,
                                                             str(step_id))
    r["cgroup"] = ("/sys/fs/cgroup/system.slice/slurmstepd.scope/job_%d/"
                   "step_%s" % (job["job_id"], sname))
    r["mode"] = "nested"
    r["confined_us"] = 0
    if job["policy"] == "dynamic" and not ext and rnd.random() < 0.3:
        r["confined_us"] = start + elapsed // 3
        r["confine_use"] = Raw("%.17g" % round(rnd.uniform(0.5, alloc), 2))
        r["confine_cpus"] = str(base)
        r["confine_mems"] = "0"
    return r


def job_record(job, steps):
    """What acct_job_from_steps() makes of the job's step records."""
    j = dict(steps[0])
    j["kind"] = "job"
    j["step_id"] = NO_VAL
    for k in ("user", "partition", "job_name"):
        for s in steps:
            if s.get(k):
                j[k] = s[k]
                break
    u = sum(s["user_usec"] for s in steps)
    sy = sum(s["system_usec"] for s in steps)
    start = min(s["start_us"] for s in steps)
    end = max(s["end_us"] for s in steps)
    batch = [s for s in steps if s["step_id"] == STEP_BATCH]
    if batch:
        alloc = batch[0]["alloc_cpus"]
        ex, st = batch[0]["exit_status"], batch[0]["state"]
    else:
        alloc = max(s["alloc_cpus"] for s in steps)
        worst = [s for s in steps if s["step_id"] != STEP_EXTERN][-1]
        ex, st = worst["exit_status"], worst["state"]
    pol = [s["policy"] for s in steps if s["step_id"] != STEP_EXTERN]
    out = {}
    for k in steps[0]:
        if k in ("efficiency", "confine_use", "confine_cpus", "confine_mems"):
            continue
        out[k] = j[k]
    # keys the first step lacks but a later one has (extern first)
    for k in ("account", "qos", "submit_us", "timelimit", "req_mem",
              "experiment", "arm", "block"):
        if k not in out:
            for s in steps:
                if k in s:
                    out[k] = s[k]
                    break
    # in record.c's order
    order = ["v", "kind", "cluster", "job_id", "step_id", "array_job_id",
             "array_task_id", "node", "uid", "user", "partition", "job_name",
             "account", "qos", "submit_us", "timelimit", "req_mem", "policy",
             "fallback", "gpus", "nic", "experiment", "arm", "block", "cpus",
             "mems", "alloc_cpus", "start_us", "end_us", "elapsed_us",
             "user_usec", "system_usec", "usage_usec", "efficiency",
             "nr_periods", "nr_throttled", "throttled_usec", "mem_peak",
             "exit_status", "state", "source", "cgroup", "mode",
             "confined_us", "steps"]
    out["policy"] = pol[0] if pol and all(p == pol[0] for p in pol) else (
        "mixed" if pol else out["policy"])
    out["alloc_cpus"] = alloc
    out["start_us"] = start
    out["end_us"] = end
    out["elapsed_us"] = end - start
    out["user_usec"] = u
    out["system_usec"] = sy
    out["usage_usec"] = sum(s["usage_usec"] for s in steps)
    if end - start > 0 and alloc > 0:
        out["efficiency"] = Raw("%.4f" % ((u + sy) / ((end - start) * alloc)))
    out["nr_periods"] = sum(s["nr_periods"] for s in steps)
    out["nr_throttled"] = sum(s["nr_throttled"] for s in steps)
    out["throttled_usec"] = sum(s["throttled_usec"] for s in steps)
    out["mem_peak"] = max(s["mem_peak"] for s in steps)
    out["exit_status"] = ex
    out["state"] = st
    out["source"] = "step-records"
    out["cgroup"] = ""
    out["confined_us"] = 0
    out["steps"] = len(steps)
    return {k: out[k] for k in order if k in out}


class Writer:
    def __init__(self, d, max_size):
        self.d = d
        self.max = max_size
        self.rot = 0
        self.path = os.path.join(d, "journal")
        self.f = open(self.path, "x", encoding="ascii")
        os.chmod(self.path, 0o600)
        self.size = 0

    def put(self, line):
        n = len(line)
        if self.max and self.size > 0 and self.size + n + 2 > self.max:
            self.f.close()
            self.rot += 1
            os.rename(self.path, os.path.join(self.d, "journal.%d" % self.rot))
            self.f = open(self.path, "x", encoding="ascii")
            os.chmod(self.path, 0o600)
            self.size = 0
        self.f.write(line + "\n")
        self.size += n + 1

    def close(self):
        self.f.close()


def outcome(rnd, timelimit_us, elapsed):
    x = rnd.random()
    if x < 0.78:
        return "COMPLETED", 0, elapsed
    if x < 0.88:
        return "FAILED", rnd.choice([1, 2, 127, 137]) << 8, elapsed
    if x < 0.94:
        # killed at the time limit: slurmstepd's SIGTERM
        return "TIMEOUT", 15, timelimit_us
    if x < 0.985:
        return "CANCELLED", 15, elapsed // 2 + 1
    return "OUT_OF_MEMORY", 9, elapsed


def generate(n, d, seed, max_size):
    rnd = random.Random(seed)
    w = Writer(d, max_size)
    written = 0
    job_id = 1000 + rnd.randrange(0, 1000)
    # six months, ending at a fixed date (reproducible)
    t_end = 1767225600 * 1000000  # 2026-01-01
    t = t_end - 183 * 86400 * 1000000
    node = NODE % rnd.randrange(1, 65)
    array = None  # [array_job_id, next task, tasks left, submit]
    prev_submit = 0
    t0 = t
    months = t_end - t0
    while written < n:
        # jobs end spread evenly over the six months, in record order (a
        # node runs several at once: they overlap)
        t = max(t, t0 + months * written // max(n, 1)) + rnd.randrange(1, 60000000)
        if array is None and rnd.random() < 0.08:
            array = [job_id + 1, 0, rnd.randrange(2, 40), None]
        uname, uid = rnd.choice(USERS)
        job = {"cluster": "cluster", "job_id": job_id + 1, "uid": uid,
               "user": uname, "partition": rnd.choice(PARTITIONS),
               "job_name": rnd.choice(NAMES), "account": rnd.choice(ACCOUNTS),
               "qos": rnd.choice(QOS), "policy": rnd.choice(POLICIES),
               "array_job_id": NO_VAL, "array_task_id": NO_VAL,
               "experiment": None, "seed": rnd.getrandbits(63),
               "cpu_base": rnd.randrange(0, 64)}
        job_id += 1
        task_of = array  # the array this job is a task of (None: none)
        if array:
            job["array_job_id"] = array[0]
            job["array_task_id"] = array[1]
            job["job_name"] = "array-task"
            array[1] += 1
            array[2] -= 1
            if array[2] == 0:
                array = None
        if rnd.random() < 0.05:
            job["experiment"] = ("numa-ab", job["policy"],
                                 "%016x" % rnd.getrandbits(64))
        tl_min = rnd.choice([10, 30, 60, 120, 240, 720, 1440, 2880])
        job["timelimit"] = tl_min
        job["req_mem"] = rnd.choice([1000, 2000, 4000, 8000, 16000, 64000])
        alloc = rnd.choice([1, 1, 2, 4, 4, 8, 8, 16, 32, 64])
        job["cpu_base"] = min(job["cpu_base"], 64 - min(alloc, 64))
        # as slurmctld: job ids are given at submission, so a later job
        # was submitted no earlier; the tasks of an array share its
        # submission (sacct sorts by Submit, then array and task ids)
        if task_of is not None and task_of[3] is not None:
            submit = task_of[3]
        else:
            submit = min(t, max(prev_submit, t - rnd.randrange(0, 3600 * 1000000)))
            if task_of is not None:
                task_of[3] = submit
        prev_submit = submit
        job["submit_us"] = submit
        start = t
        tl_us = tl_min * 60 * 1000000
        elapsed = min(int(rnd.lognormvariate(15.5, 1.6)), tl_us * 2)
        st, ex, elapsed = outcome(rnd, tl_us, max(elapsed, 1000000))
        end = start + elapsed
        batch = rnd.random() < 0.75
        nsteps = rnd.randrange(0, 19) if batch else rnd.randrange(1, 19)
        if rnd.random() < 0.6:
            nsteps = min(nsteps, 2)
        eff = rnd.betavariate(5, 2)
        mem = rnd.randrange(50, job["req_mem"]) * 1048576 * 2 // 3
        steps = []
        # numbered steps, one after the other inside the job
        cur = start + 200000
        span = max((end - start - 400000) // max(nsteps, 1), 1000)
        for i in range(nsteps):
            s_end = min(cur + span, end)
            last = i == nsteps - 1
            s_st, s_ex = (st, ex) if last or st == "COMPLETED" else (
                "COMPLETED", 0)
            steps.append(step_record(job, i, node, cur, s_end,
                                     rnd.choice([alloc, max(alloc // 2, 1)]),
                                     eff * rnd.uniform(0.7, 1.0), s_st, s_ex,
                                     rnd, mem // 2 + rnd.randrange(0, mem)))
            cur = s_end
        if batch:
            steps.append(step_record(job, STEP_BATCH, node, start + 100000,
                                     end, alloc, eff * 0.05, st, ex, rnd,
                                     rnd.randrange(4, 64) * 1048576))
        steps.append(step_record(job, STEP_EXTERN, node, start, end + 50000,
                                 alloc, 0.0001, "CANCELLED" if st != "COMPLETED"
                                 else "COMPLETED", 15 if st != "COMPLETED"
                                 else 0, rnd, 4096 * rnd.randrange(1, 200)))
        recs = steps + [job_record(job, steps)]
        for r in recs:
            if written >= n:
                break
            w.put(encode(r))
            written += 1
    w.close()


def main(argv):
    class P(argparse.ArgumentParser):
        def error(self, message):
            sys.stderr.write("acct-gen.py: %s\n" % message)
            sys.exit(2)

    p = P(description="Write a realistic slurm-pin node journal.")
    p.add_argument("--records", required=True, type=int)
    p.add_argument("--dir", required=True)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--max-size", type=int, default=MAX_DEFAULT)
    a = p.parse_args(argv)
    if a.records < 0:
        p.error("--records %d: must be 0 or more" % a.records)
    if a.max_size < 0:
        p.error("--max-size %d: must be 0 (never rotate) or more bytes"
                % a.max_size)
    try:
        os.makedirs(a.dir, mode=0o700, exist_ok=True)
        if any(x == "journal" or x.startswith("journal.")
               for x in os.listdir(a.dir)):
            p.error("--dir %s already holds a journal; give an empty "
                    "directory" % a.dir)
        generate(a.records, a.dir, a.seed, a.max_size)
    except OSError as e:
        sys.stderr.write("acct-gen.py: %s\n" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
