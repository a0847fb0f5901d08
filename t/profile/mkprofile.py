#!/usr/bin/python3
"""Write a crafted profile with known content, for t6020-plot.t.

  mkprofile.py OUT [options]

slurm-pin plot only reads profiles, so a file written here tests it as
well as a recording would, with every number known in advance: the
processes and their commands, start and end times, per-CPU use, states,
context switches, memory and the confinement.  The format is the one of
doc/profiling.md (version 1), with the cgroup members and the "confine"
line of the plugin's recordings.

Options:
  --commands SPEC   processes forked by the root, "sim:12,reco:8" (the
                    root, "bash", is one more process)
  --threads N       thread creations (and exits) of the root (default 3)
  --cpus N          CPUs 0..N-1 in the samples (default 4; 0: no "cpus")
  --duration S      seconds recorded (default 10)
  --interval MS     sampling interval (default 500; 0: no samples)
  --cg              samples carry the step cgroup's "cg" object
  --confine S       a "confine" line at S seconds
  --no-pss          samples without rss_kb and pss_kb
  --header-job      the header names job 4242, step 0, node n1, policy
  --saturated       every CPU 100% busy (equal per-CPU lines)
  --mem-max MIB     "cg" carries memory_max (the step's memory limit)
  --smaps-skipped K every K-th sample skipped smaps reads for time
                    (smaps_skipped > 0): its rss_kb and pss_kb are low
  --gap S           no sample from S to S + 1.6 seconds (missed ones)

Prints one JSON line: what was written (processes, commands, cpus, ...).
"""
import json
import sys

T0 = 1_000_000_000_000   # CLOCK_MONOTONIC ns at the start
NS = 1_000_000_000


def main():
    args = sys.argv[1:]
    out = args.pop(0)
    opt = {"commands": "sim:12,reco:8,merge:5,true:4,python3:3,cat:2,"
                       "sort:1,gzip:1",
           "threads": "3", "cpus": "4", "duration": "10",
           "interval": "500", "confine": None, "mem-max": None,
           "smaps-skipped": "0", "gap": None}
    flags = set()
    while args:
        a = args.pop(0)
        if a in ("--cg", "--no-pss", "--header-job", "--saturated"):
            flags.add(a)
        else:
            opt[a[2:]] = args.pop(0)
    commands = []
    for part in opt["commands"].split(","):
        if part:
            name, n = part.split(":")
            commands += [name] * int(n)
    ncpus = int(opt["cpus"])
    duration = float(opt["duration"])
    interval = int(opt["interval"])
    nthreads = int(opt["threads"])
    end_t = T0 + int(duration * NS)
    lines = []

    header = {"type": "header", "format": "slurm-pin-profile", "version": 1,
              "clock": "CLOCK_MONOTONIC", "t0": T0, "unix_t0": 1.7e9,
              "interval_ms": interval, "clk_tck": 100, "rcvbuf": 1 << 26,
              "pss": "--no-pss" not in flags, "taskstats": True,
              "max_bytes": 1 << 28, "command": ["bash", "job.sh"],
              "recorder": "mkprofile.py"}
    if ncpus:
        header["cpus"] = "0-%d" % (ncpus - 1) if ncpus > 1 else "0"
    if "--header-job" in flags:
        header.update({"job": 4242, "step": 0, "node": "n1", "uid": 1000,
                       "policy": "numa-local"})
    lines.append(header)
    root = 1000
    lines.append({"type": "root", "t": T0 + NS // 100, "pid": root,
                  "comm": "bash"})

    # process i: forked at 0.1 s + i * step, lives a known time; events
    # are kept in time order
    events = []
    n = len(commands)
    step = (duration * 0.6) / max(n, 1)
    for i, comm in enumerate(commands):
        pid = 2000 + i
        start = T0 + int((0.1 + i * step) * NS)
        life = int((0.05 + (i % 7) * 0.3) * NS)
        stop = min(start + life, end_t - NS // 10)
        events.append((start, {"type": "fork", "t": start, "cpu": 0,
                               "pid": pid, "tgid": pid, "thread": False,
                               "ppid": root, "ptgid": root,
                               "comm": "bash"}))
        events.append((start + 1000, {"type": "exec", "t": start + 1000,
                                      "cpu": 0, "pid": pid, "tgid": pid,
                                      "comm": comm}))
        events.append((stop, {"type": "exit", "t": stop, "cpu": 0,
                              "pid": pid, "tgid": pid, "thread": False,
                              "status": 0, "start": start, "comm": comm}))
        events.append((stop + 1, {"type": "task", "pid": pid, "tgid": pid,
                                  "ppid": root, "comm": comm, "exitcode": 0,
                                  "btime": 1700000000, "etime_us": 1000,
                                  "utime_us": 500, "stime_us": 100,
                                  "nvcsw": 3, "nivcsw": 1,
                                  "hiwater_rss_kb": 1000,
                                  "cpu_delay_ns": 0, "blkio_delay_ns": 0}))
    for k in range(nthreads):
        tid = 9000 + k
        start = T0 + int((0.2 + k * 0.5) * NS)
        events.append((start, {"type": "fork", "t": start, "cpu": 1,
                               "pid": tid, "tgid": root, "thread": True,
                               "ppid": 1, "ptgid": 1, "comm": "bash"}))
        events.append((start + NS // 5, {"type": "exit",
                                         "t": start + NS // 5, "cpu": 1,
                                         "pid": tid, "tgid": root,
                                         "thread": True, "status": 0,
                                         "start": start, "comm": "bash"}))
    if opt["confine"] is not None:
        t = T0 + int(float(opt["confine"]) * NS)
        events.append((t, {"type": "confine", "t": t, "how": "cpuset",
                           "cpus": "0-1", "mems": "0", "use": 5.2}))

    # samples: every state, context switches, memory and CPU use change
    # in a known way
    ticks = [[0] * 8 for _ in range(ncpus)]
    usage = 0
    nv = niv = 0
    nsamples = 0
    skipped_every = int(opt["smaps-skipped"])
    nskipped = 0
    gap = None
    if opt["gap"] is not None:
        gap = (T0 + int(float(opt["gap"]) * NS),
               T0 + int((float(opt["gap"]) + 1.6) * NS))
    if interval > 0:
        k = 0
        t = T0
        while t <= end_t:
            procs = {"R": 1 + k % 3, "S": 2, "D": 1 if k % 4 == 0 else 0,
                     "Z": 1 if k % 5 == 1 else 0, "other": 0}
            threads = {"R": 2 + k % 3, "S": 6, "D": 1 if k % 3 == 0 else 0,
                       "Z": 1 if k % 5 == 1 else 0, "other": 1}
            nv += 100 + 10 * k
            niv += 5 + k % 4
            s = {"type": "sample", "t": t,
                 "tracked_processes": sum(procs.values()),
                 "tracked_threads": sum(threads.values()),
                 "procs": procs, "threads": threads,
                 "nvcsw": nv, "nivcsw": niv,
                 "utime_ticks": 10 * k, "stime_ticks": 2 * k}
            if "--no-pss" not in flags:
                s.update({"rss_kb": (100 + k) * 1024, "pss_kb": 40 * 1024,
                          "smaps_reads": 3, "smaps_failed": 0,
                          "smaps_ns": 100000, "smaps_skipped": 0})
                if skipped_every and k % skipped_every == skipped_every - 1:
                    # 2 of 3 processes not read: RSS and PSS a third
                    s.update({"rss_kb": (100 + k) * 1024 // 3,
                              "pss_kb": 40 * 1024 // 3, "smaps_reads": 1,
                              "smaps_skipped": 2})
                    nskipped += 1
            if ncpus:
                per = interval // 10   # ticks of 10 ms per interval
                cpus = []
                for c in range(ncpus):
                    busy = per * (c + 1) // (ncpus + 1)
                    if "--saturated" in flags:
                        busy = per
                    ticks[c][0] += busy * 3 // 4          # user
                    ticks[c][2] += busy - busy * 3 // 4   # system
                    ticks[c][3] += per - busy             # idle
                    usage += busy * 10000
                    cpus.append([c] + ticks[c])
                s["cpus"] = cpus
            if "--cg" in flags:
                s["cg"] = {"usage_usec": usage, "user_usec": usage * 3 // 4,
                           "system_usec": usage // 4,
                           "memory_current": (200 + k) << 20,
                           "anon": (120 + k) << 20, "file": 60 << 20,
                           "shmem": 20 << 20}
                if opt["mem-max"] is not None:
                    s["cg"]["memory_max"] = int(opt["mem-max"]) << 20
            if gap and gap[0] <= t < gap[1]:
                # the recorder missed these samples: no line at all
                pass
            else:
                events.append((t, s))
                nsamples += 1
            k += 1
            t += interval * 1_000_000
    events.sort(key=lambda e: e[0])
    lines += [e[1] for e in events]
    lines.append({"type": "end", "t": end_t, "status": 0, "events": 0,
                  "step_events": 0, "lost_seq": 0, "enobufs": 0,
                  "reordered": 0, "bad_cpu": 0, "foreign": 0,
                  "untracked": 0, "parse_errors": 0,
                  "taskstats_records": n, "taskstats_missing": 0,
                  "taskstats_enobufs": 0, "samples": nsamples,
                  "flushed_cpus": 0, "socket_drops": 0,
                  "alive": {"processes": 1, "threads": 0},
                  "dropped_lines": 0})
    with open(out, "w") as f:
        for line in lines:
            f.write(json.dumps(line, separators=(",", ":")) + "\n")
    counts = {}
    for c in commands + ["bash"]:
        counts[c] = counts.get(c, 0) + 1
    print(json.dumps({"processes": n + 1, "commands": counts,
                      "ncommands": len(counts), "cpus": ncpus,
                      "samples": nsamples, "threads": nthreads,
                      "cg": "--cg" in flags,
                      "pss": "--no-pss" not in flags,
                      "mem_max": opt["mem-max"] is not None,
                      "smaps_skipped": nskipped}))


main()
