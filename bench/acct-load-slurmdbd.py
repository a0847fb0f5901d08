#!/usr/bin/python3
"""acct-load-slurmdbd.py [options] JOURNAL_DIR

Load the jobs and steps of a slurm-pin node journal directory (journal.N
by ascending N, then journal; the JSON Lines pin.so writes, see
src/common/libacct/acct.h) into a running slurmdbd's MariaDB tables
<cluster>_job_table and <cluster>_step_table, so that the installed
sacct(1) lists the same jobs: same ids, users, times, states, CPU counts
and CPU times (TotalCPU is the steps' user + system seconds).  A bench
tool (bench/bench-acct-scale.sh), never for a production database.

The tables are the ones slurmdbd created for the installed release: their
columns are read from the live database; only the columns named below are
required, every other NOT NULL column without a default gets 0 or ''.
Rows go in with LOAD DATA LOCAL INFILE (a million records in minutes).

Options:
  --slurmdbd-conf FILE  slurmdbd.conf to read StorageHost, StoragePort,
                        StorageUser, StoragePass, StorageLoc from
                        (default: slurmdbd.conf beside $SLURM_CONF)
  --socket PATH         connect as root over this MariaDB socket instead
                        (host, port, user and password are then not used)
  --cluster NAME        the cluster's tables (default: the journal's
                        "cluster", else the only cluster in cluster_table)
  --replace             first delete the cluster's jobs and steps
  --tmpdir DIR          where the load files are written (default: $TMPDIR)
  -q, --quiet           no summary line on stderr

Prints one line on stderr: records read, jobs and steps loaded, seconds.
Exit status 0 on success, 1 on an error (one line naming it), 2 on usage.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

# Slurm's enum job_states (slurm.h), in order
STATES = ["PENDING", "RUNNING", "SUSPENDED", "COMPLETED", "CANCELLED",
          "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL",
          "DEADLINE", "OUT_OF_MEMORY"]
STATE_NUM = {s: i for i, s in enumerate(STATES)}
NO_VAL = 0xfffffffe
INFINITE = 0xffffffff

# the columns written; each must exist in the live table
JOB_COLS = ["job_db_inx", "mod_time", "account", "cpus_req", "exit_code",
            "job_name", "id_assoc", "id_array_job", "id_array_task", "id_job",
            "id_user", "id_group", "kill_requid", "nodelist", "nodes_alloc",
            "partition", "state", "timelimit", "time_submit", "time_eligible",
            "time_start", "time_end", "tres_alloc", "tres_req"]
STEP_COLS = ["job_db_inx", "exit_code", "id_step", "kill_requid", "nodelist",
             "nodes_alloc", "state", "step_name", "task_cnt", "time_start",
             "time_end", "user_sec", "user_usec", "sys_sec", "sys_usec",
             "tres_alloc"]


def die(msg):
    sys.stderr.write("acct-load-slurmdbd: %s\n" % msg)
    sys.exit(1)


def journal_files(d):
    if not os.path.isdir(d):
        die("%s: not a directory" % d)
    rot = []
    for name in os.listdir(d):
        m = re.fullmatch(r"journal\.([1-9][0-9]*)", name)
        if m:
            rot.append(int(m.group(1)))
    out = [os.path.join(d, "journal.%d" % n) for n in sorted(rot)]
    if os.path.exists(os.path.join(d, "journal")):
        out.append(os.path.join(d, "journal"))
    if not out:
        die("%s: no journal or journal.N in it" % d)
    return out


def signed32(v):
    v &= 0xffffffff
    return v - (1 << 32) if v >= (1 << 31) else v


def state_of(s):
    """(state number, kill_requid or None) of a journal state string"""
    m = re.fullmatch(r"CANCELLED by ([0-9]+)", s or "")
    if m:
        return STATE_NUM["CANCELLED"], int(m.group(1))
    return STATE_NUM.get(s, STATE_NUM["COMPLETED"] if not s else 3), None


class Job:
    __slots__ = ("job_id", "cluster", "uid", "user", "account", "partition",
                 "name", "array_job", "array_task", "submit", "timelimit",
                 "req_mem", "nodes", "cpus", "start", "end", "state",
                 "exit", "has_job_rec", "steps")

    def __init__(self, r):
        self.job_id = r["job_id"]
        self.cluster = r.get("cluster", "")
        self.uid = r.get("uid", 0)
        self.user = r.get("user", "")
        self.account = r.get("account", "")
        self.partition = r.get("partition", "")
        self.name = r.get("job_name", "")
        self.array_job = r.get("array_job_id", NO_VAL)
        self.array_task = r.get("array_task_id", NO_VAL)
        self.submit = r.get("submit_us", 0) // 1000000
        self.timelimit = r.get("timelimit")
        self.req_mem = r.get("req_mem", 0)
        self.nodes = []
        self.cpus = 0
        self.start = 0
        self.end = 0
        self.state = None
        self.exit = None
        self.has_job_rec = False
        self.steps = {}  # step id -> Step


class Step:
    __slots__ = ("nodes", "cpus", "start", "end", "user_us", "sys_us",
                 "state", "exit")

    def __init__(self):
        self.nodes = []
        self.cpus = 0
        self.start = 0
        self.end = 0
        self.user_us = 0
        self.sys_us = 0
        self.state = None
        self.exit = None


def worse(a, b):
    """the worse of two journal states (a COMPLETED never wins)"""
    if a is None or a == "COMPLETED":
        return b
    return a


def span(obj, r):
    s = r["start_us"] // 1000000
    e = r["end_us"] // 1000000
    if s and (not obj.start or s < obj.start):
        obj.start = s
    if e > obj.end:
        obj.end = e


def read_journal(d):
    jobs = {}
    nrec = bad = 0
    for path in journal_files(d):
        with open(path, "rb") as f:
            for raw in f:
                try:
                    r = json.loads(raw)
                    kind = r["kind"]
                    jid = r["job_id"]
                    node = r["node"]
                    r["start_us"], r["end_us"]
                except (ValueError, KeyError, TypeError):
                    bad += 1  # a torn last line: skipped, as acct does
                    continue
                nrec += 1
                j = jobs.get(jid)
                if j is None:
                    j = jobs[jid] = Job(r)
                for k, attr in (("user", "user"), ("account", "account"),
                                ("partition", "partition"), ("job_name", "name")):
                    if r.get(k) and not getattr(j, attr):
                        setattr(j, attr, r[k])
                if kind == "job":
                    j.has_job_rec = True
                    if node not in j.nodes:
                        j.nodes.append(node)
                    j.cpus += r.get("alloc_cpus", 0)
                    span(j, r)
                    j.state = worse(j.state, r.get("state"))
                    ex = r.get("exit_status", -1)
                    if j.exit is None or (ex not in (0, -1) and j.exit in (0, -1)):
                        j.exit = ex
                    for k, attr in (("submit_us", "submit"),):
                        if r.get(k):
                            j.submit = r[k] // 1000000
                    if "timelimit" in r:
                        j.timelimit = r["timelimit"]
                elif kind == "step":
                    sid = r.get("step_id", 0)
                    st = j.steps.get(sid)
                    if st is None:
                        st = j.steps[sid] = Step()
                    if node not in st.nodes:
                        st.nodes.append(node)
                    st.cpus += r.get("alloc_cpus", 0)
                    span(st, r)
                    st.user_us += r.get("user_usec", 0)
                    st.sys_us += r.get("system_usec", 0)
                    st.state = worse(st.state, r.get("state"))
                    ex = r.get("exit_status", -1)
                    if st.exit is None or (ex not in (0, -1) and st.exit in (0, -1)):
                        st.exit = ex
    return jobs, nrec, bad


def finish_job(j):
    """a job with only step records: built from them as
    acct_job_from_steps does (the batch step's CPUs and state, else the
    largest / the worst)"""
    if j.has_job_rec:
        return
    batch = j.steps.get(0xfffffffb)
    for st in j.steps.values():
        for n in st.nodes:
            if n not in j.nodes:
                j.nodes.append(n)
        if st.start and (not j.start or st.start < j.start):
            j.start = st.start
        j.end = max(j.end, st.end)
    if batch is not None:
        j.cpus, j.state, j.exit = batch.cpus, batch.state, batch.exit
    else:
        j.cpus = max((st.cpus for st in j.steps.values()), default=0)
        for st in j.steps.values():
            j.state = worse(j.state, st.state)
            if j.exit in (None, 0, -1):
                j.exit = st.exit


def step_name(sid, jobname):
    return {0xfffffffb: "batch", 0xfffffffc: "extern",
            0xfffffffa: "interactive"}.get(sid, jobname)


# ---------------------------------------------------------------------
# the database

class DB:
    def __init__(self, args):
        self.client = shutil.which("mariadb") or shutil.which("mysql")
        if not self.client:
            die("neither 'mariadb' nor 'mysql' client found (Debian: mariadb-client)")
        self.env = dict(os.environ)
        self.base = [self.client, "--no-defaults", "--local-infile=1", "-B", "-N"]
        if args["socket"]:
            self.base += ["-S", args["socket"], "-uroot"]
            self.loc = args["loc"] or "slurm_acct_db"
        else:
            conf = read_dbd_conf(args["conf"])
            self.base += ["-h", conf.get("StorageHost", "localhost"),
                          "-P", conf.get("StoragePort", "3306"),
                          "-u", conf.get("StorageUser", "root")]
            if "StoragePass" in conf:
                self.env["MYSQL_PWD"] = conf["StoragePass"]
            self.loc = conf.get("StorageLoc", "slurm_acct_db")
        self.base.append(self.loc)

    def sql(self, text):
        p = subprocess.run(self.base, input=text, env=self.env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True)
        if p.returncode != 0:
            die("%s: %s" % (self.loc, p.stderr.strip().splitlines()[-1]
                            if p.stderr.strip() else "client exit %d" % p.returncode))
        return [line.split("\t") for line in p.stdout.splitlines()]


def read_dbd_conf(path):
    if not path:
        sc = os.environ.get("SLURM_CONF", "/etc/slurm/slurm.conf")
        path = os.path.join(os.path.dirname(sc), "slurmdbd.conf")
    conf = {}
    try:
        with open(path) as f:
            for line in f:
                line = line.split("#", 1)[0].strip()
                if "=" in line:
                    k, v = line.split("=", 1)
                    conf[k.strip()] = v.strip()
    except OSError as e:
        die("%s: %s (give --slurmdbd-conf FILE or --socket PATH)" % (path, e.strerror))
    return conf


def columns(db, table):
    """name -> (type, nullable, default) of the live table"""
    rows = db.sql("SHOW COLUMNS FROM `%s`" % table)
    return {r[0]: (r[1], r[2] == "YES", r[4]) for r in rows}


def fill_value(coltype):
    return "0" if re.match(r"(tiny|small|medium|big)?int|double|float|decimal",
                           coltype) else ""


def tsv(v):
    if v is None:
        return "\\N"
    s = str(v)
    return (s.replace("\\", "\\\\").replace("\t", "\\t")
            .replace("\n", "\\n").replace("\r", "\\r"))


def plan(db, table, want):
    have = columns(db, table)
    missing = [c for c in want if c not in have]
    if missing:
        die("%s: no column %s (not a slurmdbd table this loader knows)"
            % (table, ", ".join(missing)))
    extra = []
    for c, (ctype, nullable, default) in have.items():
        if c in want or nullable or default is not None or c == "job_db_inx":
            continue
        if "auto_increment" in ctype:
            continue
        extra.append((c, fill_value(ctype)))
    return extra


def load(db, table, path, cols, extra):
    collist = ", ".join("`%s`" % c for c in cols + [c for c, _ in extra])
    db.sql("SET unique_checks=0; SET foreign_key_checks=0; "
           "LOAD DATA LOCAL INFILE '%s' INTO TABLE `%s` CHARACTER SET utf8mb4 "
           "FIELDS TERMINATED BY '\\t' ESCAPED BY '\\\\' "
           "LINES TERMINATED BY '\\n' (%s);"
           % (path.replace("'", "''"), table, collist))


def main(argv):
    args = {"conf": None, "socket": None, "cluster": None, "replace": False,
            "tmpdir": None, "quiet": False, "loc": None}
    pos = []
    i = 1
    while i < len(argv):
        a = argv[i]
        if a in ("--slurmdbd-conf", "--socket", "--cluster", "--tmpdir"):
            if i + 1 >= len(argv):
                sys.stderr.write("acct-load-slurmdbd: %s needs a value\n" % a)
                return 2
            args[{"--slurmdbd-conf": "conf"}.get(a, a[2:])] = argv[i + 1]
            i += 2
            continue
        if a == "--replace":
            args["replace"] = True
        elif a in ("-q", "--quiet"):
            args["quiet"] = True
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        elif a.startswith("-"):
            sys.stderr.write("acct-load-slurmdbd: '%s': unknown option; known: "
                             "--slurmdbd-conf, --socket, --cluster, --replace, "
                             "--tmpdir, --quiet\n" % a)
            return 2
        else:
            pos.append(a)
        i += 1
    if len(pos) != 1:
        sys.stderr.write("usage: acct-load-slurmdbd.py [options] JOURNAL_DIR\n")
        return 2
    t0 = time.time()
    jobs, nrec, bad = read_journal(pos[0])
    db = DB(args)

    clusters = [r[0] for r in db.sql("SELECT name FROM cluster_table WHERE deleted=0")]
    cluster = args["cluster"]
    if not cluster:
        named = {j.cluster for j in jobs.values() if j.cluster}
        cluster = next(iter(named)) if len(named) == 1 else None
        if cluster not in clusters:
            if len(clusters) != 1:
                die("cannot tell the cluster (clusters in %s: %s); give --cluster"
                    % (db.loc, ", ".join(clusters) or "none"))
            cluster = clusters[0]
    if cluster not in clusters:
        die("cluster '%s' is not in %s (known: %s)" % (cluster, db.loc, ", ".join(clusters)))
    jt, stt = "%s_job_table" % cluster, "%s_step_table" % cluster
    jextra = plan(db, jt, JOB_COLS)
    sextra = plan(db, stt, STEP_COLS)

    if args["replace"]:
        db.sql("DELETE FROM `%s`; DELETE FROM `%s`;" % (stt, jt))
    nxt = int(db.sql("SELECT COALESCE(MAX(job_db_inx), 0) FROM `%s`" % jt)[0][0]) + 1
    now = int(time.time())
    tmp = tempfile.mkdtemp(prefix="acct-load.", dir=args["tmpdir"])
    try:
        jpath, spath = os.path.join(tmp, "job.tsv"), os.path.join(tmp, "step.tsv")
        nsteps = 0
        with open(jpath, "w", encoding="utf-8", errors="replace") as jf, \
                open(spath, "w", encoding="utf-8", errors="replace") as sf:
            jtail = "".join("\t" + tsv(v) for _, v in jextra)
            stail = "".join("\t" + tsv(v) for _, v in sextra)
            for jid in sorted(jobs):
                j = jobs[jid]
                finish_job(j)
                inx = nxt
                nxt += 1
                state, requid = state_of(j.state)
                ex = j.exit if j.exit not in (None, -1) else 0
                # sacct's job line of a TIMEOUT or CANCELLED job: 0:0
                # (slurmctld records no exit code for it; the batch step has
                # the signal)
                if state in (STATE_NUM["CANCELLED"], STATE_NUM["TIMEOUT"]):
                    ex = 0
                nn = max(len(j.nodes), 1)
                mem = j.req_mem or 0
                tres = "1=%d,2=%d,4=%d" % (j.cpus, mem, nn)
                submit = j.submit or j.start
                row = {
                    "job_db_inx": inx, "mod_time": now,
                    "account": j.account or None, "cpus_req": j.cpus,
                    "exit_code": ex & 0xffffffff, "job_name": j.name,
                    "id_assoc": 0,
                    "id_array_job": 0 if j.array_job in (NO_VAL, None) else j.array_job,
                    "id_array_task": NO_VAL if j.array_task is None else j.array_task,
                    "id_job": jid, "id_user": j.uid, "id_group": j.uid,
                    "kill_requid": requid, "nodelist": ",".join(sorted(j.nodes)),
                    "nodes_alloc": nn, "partition": j.partition, "state": state,
                    "timelimit": INFINITE if j.timelimit is None else j.timelimit,
                    "time_submit": submit, "time_eligible": submit,
                    "time_start": j.start, "time_end": j.end,
                    "tres_alloc": tres, "tres_req": tres,
                }
                jf.write("\t".join(tsv(row[c]) for c in JOB_COLS) + jtail + "\n")
                for sid in sorted(j.steps):
                    st = j.steps[sid]
                    sstate, srequid = state_of(st.state)
                    sex = st.exit if st.exit not in (None, -1) else 0
                    snn = max(len(st.nodes), 1)
                    srow = {
                        "job_db_inx": inx, "exit_code": signed32(sex),
                        "id_step": signed32(sid), "kill_requid": srequid,
                        "nodelist": ",".join(sorted(st.nodes)), "nodes_alloc": snn,
                        "state": sstate, "step_name": step_name(sid, j.name),
                        "task_cnt": snn, "time_start": st.start, "time_end": st.end,
                        "user_sec": st.user_us // 1000000,
                        "user_usec": st.user_us % 1000000,
                        "sys_sec": st.sys_us // 1000000,
                        "sys_usec": st.sys_us % 1000000,
                        "tres_alloc": "1=%d,2=0,4=%d" % (st.cpus, snn),
                    }
                    sf.write("\t".join(tsv(srow[c]) for c in STEP_COLS) + stail + "\n")
                    nsteps += 1
        njobs = len(jobs)
        del jobs
        load(db, jt, jpath, JOB_COLS, jextra)
        load(db, stt, spath, STEP_COLS, sextra)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if not args["quiet"]:
        sys.stderr.write("acct-load-slurmdbd: %d records (%d unreadable lines skipped): "
                         "%d jobs, %d steps into %s.%s in %.1f s\n"
                         % (nrec, bad, njobs, nsteps, db.loc, jt, time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
