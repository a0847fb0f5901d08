#!/usr/bin/python3
"""A workload that counts what it creates, for t6000-profile.t and bench/.

  workload.py forks [SHORT] [BURST] [THREADS]
      SHORT short-lived processes (fork + exec /bin/true) at ~10 Hz,
      then a burst of BURST fork()s whose children _exit(0) at once,
      then THREADS threads that each sleep 50 ms.
      Prints one JSON line: the processes, threads and execs it made and
      the burst's duration.
  workload.py burst N
      N fork()s as fast as possible (bench/): prints its JSON line too.
  workload.py shared MIB WORKERS SECONDS
      Fills MIB MiB, forks WORKERS workers that read every page of it
      (sharing it copy-on-write) and sleep SECONDS; prints the JSON line.

Only os.fork/os.execv/threading are used, so the counts are exact:
Debian's /usr/bin/python3 makes no thread or process of its own.
"""
import json
import os
import sys
import threading
import time


def burst(n):
    """n fork()s, reaped after the last one: returns the forking time."""
    t0 = time.monotonic()
    pids = []
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        pids.append(pid)
    took = time.monotonic() - t0
    for pid in pids:
        os.waitpid(pid, 0)
    return took


def forks(short, nburst, nthreads):
    execs = 0
    for _ in range(short):
        t0 = time.monotonic()
        pid = os.fork()
        if pid == 0:
            try:
                os.execv("/bin/true", ["true"])
            finally:
                os._exit(127)
        os.waitpid(pid, 0)
        execs += 1
        time.sleep(max(0.0, 0.1 - (time.monotonic() - t0)))
    burst_s = burst(nburst)
    ts = [threading.Thread(target=time.sleep, args=(0.05,))
          for _ in range(nthreads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return {"processes": short + nburst, "threads": nthreads,
            "execs": execs, "short": short, "burst": nburst,
            "burst_s": burst_s}


def shared(mib, workers, seconds):
    area = bytearray(mib << 20)
    for i in range(0, len(area), 4096):
        area[i] = 1
    pids = []
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:
            s = 0
            for i in range(0, len(area), 4096):
                s += area[i]
            time.sleep(seconds)
            os._exit(0 if s == len(area) // 4096 else 1)
        pids.append(pid)
    bad = 0
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        bad += status != 0
    return {"processes": workers, "threads": 0, "execs": 0,
            "mib": mib, "failed": bad}


def main():
    kind = sys.argv[1]
    args = [int(a) for a in sys.argv[2:]]
    if kind == "forks":
        out = forks(*(args + [20, 1000, 8][len(args):]))
    elif kind == "burst":
        out = {"processes": args[0], "threads": 0, "execs": 0,
               "burst_s": burst(args[0])}
    elif kind == "shared":
        out = shared(*args)
    else:
        sys.exit("unknown kind " + kind)
    print(json.dumps(out), flush=True)


main()
