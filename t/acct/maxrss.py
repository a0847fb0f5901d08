#!/usr/bin/python3
"""maxrss.py FILE CMD [ARG...]

Run CMD (its stdin, stdout and stderr are this program's), then write its
maximum resident set size in KiB (getrusage(RUSAGE_CHILDREN)) to FILE.
Exits with CMD's exit status.
"""
import resource
import subprocess
import sys


def main(argv):
    rc = subprocess.call(argv[2:])
    with open(argv[1], "w") as f:
        f.write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
