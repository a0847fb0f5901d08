#!/usr/bin/python3
"""rename.py: child processes that give themselves hostile names.

Each name in NAMES (escape sequences, a newline, C1 controls in UTF-8, a
bidi override, bad UTF-8, DEL) is set by a forked child with
prctl(PR_SET_NAME), as any program a user runs can do (the kernel keeps
15 bytes); the child then runs for 0.1 s and exits, so that the profile
sees its name in the samples and in its exit record.  Each name is used
by COUNT children.  Prints the names (as Python bytes) on stdout.
"""
import ctypes
import os
import sys
import time

PR_SET_NAME = 15
NAMES = [
    b"\x1b]0;PWNED\x07\x1b[31m",    # OSC window title, then red
    b"a\nb",                         # a line break
    b"\xc2\x9b31m\xc2\x9d0;x",       # C1 CSI and OSC in UTF-8
    b"x\xe2\x80\xaeevil",           # RIGHT-TO-LEFT OVERRIDE
    b"\x9b2J\xff\xfe\x7f",           # 8-bit CSI, bad UTF-8, DEL
]

libc = ctypes.CDLL(None, use_errno=True)
count = int(sys.argv[1]) if len(sys.argv) > 1 else 3
pids = []
for name in NAMES:
    for _ in range(count):
        pid = os.fork()
        if pid == 0:
            if libc.prctl(PR_SET_NAME, ctypes.c_char_p(name), 0, 0, 0) != 0:
                os._exit(2)
            end = time.monotonic() + 0.1
            while time.monotonic() < end:
                pass
            os._exit(0)
        pids.append(pid)
bad = 0
for pid in pids:
    _, status = os.waitpid(pid, 0)
    bad += status != 0
print(repr(NAMES))
sys.exit(1 if bad else 0)
