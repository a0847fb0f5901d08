#!/usr/bin/python3
"""workload.py - CPU workloads that measure their own CPU time (ground truth
for the accounting tests and bench/bench-acct-accuracy.sh).

    workload.py busy N SECS       N processes spin for SECS of wall time
    workload.py idle SECS         sleep
    workload.py detach N CPUSECS  N children leave the process tree (setsid
                                  and a double fork), each burns CPUSECS of
                                  CPU, and report their own CPU time
    workload.py spawn HZ SECS CPUMS
                                  start HZ short processes per second for
                                  SECS, each burning CPUMS ms of CPU
    workload.py mixed SECS        spawn 10 Hz (20 ms each) plus 2 detached
                                  children of SECS/4 s each, for SECS

Prints one line "cpu_usec=N wall_usec=N" at the end: N is the CPU time
(user + system) of this process, of every child it waited for
(getrusage RUSAGE_CHILDREN, which includes their own waited children) and
of every detached process, as each reported getrusage(RUSAGE_SELF) just
before exiting.  Only the Python standard library.
"""
import os
import resource
import sys
import time


def usec(ru):
    return int(round((ru.ru_utime + ru.ru_stime) * 1e6))


def spin_wall(secs):
    end = time.monotonic() + secs
    x = 0
    while time.monotonic() < end:
        for _ in range(2000):
            x += 1
    return x


def spin_cpu(secs):
    """Burn `secs` of this process's own CPU time."""
    end = time.process_time() + secs
    x = 0
    while time.process_time() < end:
        for _ in range(2000):
            x += 1
    return x


def detached(cpusecs, report_fd):
    """Fork a grandchild in its own session that burns CPU and writes its
    own CPU time to report_fd; the intermediate child exits at once."""
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() != 0:
            os._exit(0)
        spin_cpu(cpusecs)
        msg = b"%d\n" % usec(resource.getrusage(resource.RUSAGE_SELF))
        os.write(report_fd, msg)
        os._exit(0)
    os.waitpid(pid, 0)


def collect_reports(rfd):
    """Read the detached processes' reports until every writer is gone."""
    data = b""
    while True:
        chunk = os.read(rfd, 4096)
        if not chunk:
            break
        data += chunk
    return sum(int(x) for x in data.split())


def spawner(hz, secs, cpums):
    """Start hz short processes per second for secs; reap them all."""
    period = 1.0 / hz
    t0 = time.monotonic()
    n = 0
    live = 0
    while True:
        due = t0 + n * period
        now = time.monotonic()
        if now - t0 >= secs:
            break
        if now < due:
            time.sleep(due - now)
        pid = os.fork()
        if pid == 0:
            spin_cpu(cpums / 1000.0)
            os._exit(0)
        n += 1
        live += 1
        while live:
            r, _ = os.waitpid(-1, os.WNOHANG)
            if r == 0:
                break
            live -= 1
    while live:
        os.waitpid(-1, 0)
        live -= 1
    return n


def main(argv):
    t0 = time.monotonic()
    what = argv[1] if len(argv) > 1 else ""
    detached_cpu = 0
    if what == "busy":
        n, secs = int(argv[2]), float(argv[3])
        pids = []
        for _ in range(n - 1):
            pid = os.fork()
            if pid == 0:
                spin_wall(secs)
                os._exit(0)
            pids.append(pid)
        spin_wall(secs)
        for pid in pids:
            os.waitpid(pid, 0)
    elif what == "idle":
        time.sleep(float(argv[2]))
    elif what == "detach":
        n, cpusecs = int(argv[2]), float(argv[3])
        rfd, wfd = os.pipe()
        for _ in range(n):
            detached(cpusecs, wfd)
        os.close(wfd)
        detached_cpu = collect_reports(rfd)
    elif what == "spawn":
        spawner(float(argv[2]), float(argv[3]), float(argv[4]))
    elif what == "mixed":
        secs = float(argv[2])
        rfd, wfd = os.pipe()
        for _ in range(2):
            detached(secs / 4, wfd)
        os.close(wfd)
        spawner(10, secs, 20)
        detached_cpu = collect_reports(rfd)
    else:
        sys.stderr.write(__doc__)
        return 2
    total = (usec(resource.getrusage(resource.RUSAGE_SELF))
             + usec(resource.getrusage(resource.RUSAGE_CHILDREN))
             + detached_cpu)
    wall = int((time.monotonic() - t0) * 1e6)
    sys.stdout.write("cpu_usec=%d wall_usec=%d\n" % (total, wall))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    rc = main(sys.argv)
    sys.stdout.flush()
    # no interpreter teardown after the count: its CPU time (tens of ms in
    # an emulated guest) would be counted by the cgroup but not above
    os._exit(rc)
