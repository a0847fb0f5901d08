#!/usr/bin/python3
"""acct-sampler.py PID [INTERVAL] -- the two per-second monitors of seed 001

Every INTERVAL seconds (default 1) until PID is gone, list PID and its
live descendants (by walking /proc's parent links) and

  ps:    run `ps -o pid=,time= -p PIDS` and keep, per process, the largest
         cumulative CPU time seen (ps prints whole seconds);
  proc:  read utime + stime (fields 14, 15, clock ticks) of
         /proc/PID/stat and keep, per process (pid and start time), the
         largest value seen: seed 001's "summation of increases".

Prints "ps_usec=N proc_usec=N samples=N seen=N" at the end.  Processes
that live less than an interval between two samples are missed by both,
and processes that leave the tree (setsid, double fork) are not
descendants any more: that is what the comparison shows.
"""
import os
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def stat_of(pid):
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            data = f.read().decode("ascii", "replace")
    except OSError:
        return None
    rest = data[data.rindex(")") + 2:].split()
    # rest[0] is field 3 (state): field N is rest[N - 3]
    return int(rest[1]), int(rest[11]), int(rest[12]), int(rest[19])


def tree(root):
    parent = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = stat_of(int(name))
            if st:
                parent[int(name)] = st[0]
    out = {root} if root in parent else set()
    grew = True
    while grew:
        grew = False
        for pid, ppid in parent.items():
            if ppid in out and pid not in out:
                out.add(pid)
                grew = True
    return out


def ps_time(s):
    days = 0
    if "-" in s:
        d, s = s.split("-", 1)
        days = int(d)
    h, m, sec = (int(x) for x in s.split(":"))
    return ((days * 24 + h) * 60 + m) * 60 + sec


def main(argv):
    root = int(argv[1])
    interval = float(argv[2]) if len(argv) > 2 else 1.0
    ps_max = {}
    proc_max = {}
    samples = 0
    while os.path.exists("/proc/%d" % root):
        pids = tree(root)
        samples += 1
        for pid in pids:
            st = stat_of(pid)
            if st:
                key = (pid, st[3])
                proc_max[key] = max(proc_max.get(key, 0), st[1] + st[2])
        if pids:
            r = subprocess.run(["ps", "-o", "pid=,time=", "-p",
                                ",".join(str(p) for p in pids)],
                               capture_output=True, text=True)
            for line in r.stdout.splitlines():
                pid, t = line.split()
                ps_max[int(pid)] = max(ps_max.get(int(pid), 0), ps_time(t))
        time.sleep(interval)
    print("ps_usec=%d proc_usec=%d samples=%d seen=%d" % (
        sum(ps_max.values()) * 1000000,
        sum(proc_max.values()) * 1000000 // TICK, samples, len(proc_max)))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
