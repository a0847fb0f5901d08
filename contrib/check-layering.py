#!/usr/bin/python3
"""Check the layering of src/common: no arrow up, no circle.

    contrib/check-layering.py [--srcdir DIR] [--builddir DIR]

The libraries of src/common/lib*/ sit below the plugins (src/plugins/)
and the command (src/cmd/): nothing in a library may include a file from
there.  Between libraries, and between the files of one library, the
arrows must not close a circle: A uses B and B uses A (directly or
through others) is one concern cut in two, and neither half can be
understood, tested or moved alone.

Two graphs are read:
  includes  #include "..." of every .c and .h of src/common/lib*/ (not
            test/), resolved as the compiler does (the file's directory,
            then src/common): an include of src/plugins/ or src/cmd/ is
            an arrow up, and the library-to-library edges must form no
            circle;
  symbols   with --builddir, the global symbols each object file of a
            library's archive (BUILDDIR/src/common/libX/.libs/*.a)
            defines and uses (nm): library-to-library and, inside one
            library, file-to-file edges must form no circle.

Prints one line per violation, naming the files and a symbol or include
that makes each arrow, and exits 1 if there is any; 0 and one summary
line otherwise.  t/t0010-layering.t runs it.
"""

import argparse
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def sccs(nodes, edges):
    """Strongly connected components of more than one node (Tarjan)."""
    index = {}
    low = {}
    stack = []
    on = set()
    out = []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def describe_cycle(comp, why):
    """One line per edge inside the component, with what makes it."""
    lines = []
    members = set(comp)
    for (a, b), reason in sorted(why.items()):
        if a in members and b in members:
            lines.append("    %s -> %s (%s)" % (a, b, reason))
    return lines


def library_dirs(common):
    return sorted(d for d in os.listdir(common)
                  if d.startswith("lib")
                  and os.path.isdir(os.path.join(common, d)))


def check_includes(srcdir):
    errors = []
    common = os.path.join(srcdir, "src", "common")
    libs = library_dirs(common)
    edges = {}
    why = {}
    for lib in libs:
        top = os.path.join(common, lib)
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = [d for d in dirnames if d != "test"]
            for name in sorted(filenames):
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, srcdir)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for lineno, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        inc = m.group(1)
                        target = None
                        for base in (dirpath, common):
                            cand = os.path.normpath(os.path.join(base, inc))
                            if os.path.exists(cand):
                                target = cand
                                break
                        if target is None:
                            continue    # config.h and generated files
                        trel = os.path.relpath(target, srcdir)
                        parts = trel.split(os.sep)
                        if parts[:2] in (["src", "plugins"], ["src", "cmd"]):
                            errors.append(
                                "%s:%d: a library includes %s (an arrow "
                                "from src/common up into %s/)"
                                % (rel, lineno, trel, "/".join(parts[:2])))
                            continue
                        if parts[:2] == ["src", "common"] and len(parts) > 3:
                            other = parts[2]
                            if other != lib and other in libs:
                                edges.setdefault(lib, set()).add(other)
                                why.setdefault((lib, other),
                                               "%s:%d includes %s"
                                               % (rel, lineno, trel))
    for comp in sccs(libs, edges):
        errors.append("libraries include each other in a circle: %s"
                      % " ".join(comp))
        errors.extend(describe_cycle(comp, why))
    return errors, len(libs)


def nm(archive, args):
    out = subprocess.run(["nm", "-A", "-P"] + args + [archive],
                         check=True, capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        # "archive.a[member.o]: symbol TYPE ..."
        m = re.match(r'^.*\[([^\]]+)\]: (\S+) (\S)', line)
        if m:
            rows.append(m.groups())
    return rows


def member_file(member):
    """libtopo_la-cache.o -> cache.c, cache.o -> cache.c"""
    base = member[:-2] if member.endswith(".o") else member
    base = re.sub(r'^[A-Za-z0-9_]+_la-', '', base)
    return base + ".c"


def check_symbols(builddir):
    errors = []
    common = os.path.join(builddir, "src", "common")
    if not os.path.isdir(common):
        return ["%s: no build here (run make first)" % common], 0
    defined = {}        # symbol -> (lib, file)
    used = []           # (lib, file, symbol)
    narchives = 0
    for lib in library_dirs(common):
        libs_dir = os.path.join(common, lib, ".libs")
        if not os.path.isdir(libs_dir):
            continue
        for ar in sorted(os.listdir(libs_dir)):
            if not ar.endswith(".a"):
                continue
            narchives += 1
            path = os.path.join(libs_dir, ar)
            for member, sym, typ in nm(path, ["-g", "--defined-only"]):
                defined.setdefault(sym, (lib, member_file(member)))
            for member, sym, typ in nm(path, ["-u"]):
                used.append((lib, member_file(member), sym))
    if narchives == 0:
        return ["%s: no library archives (run make first)" % common], 0
    lib_edges, lib_why = {}, {}
    file_edges, file_why = {}, {}
    for lib, f, sym in used:
        if sym not in defined:
            continue    # libc, hwloc, json-c, Slurm
        olib, of = defined[sym]
        if olib != lib:
            lib_edges.setdefault(lib, set()).add(olib)
            lib_why.setdefault((lib, olib), "%s/%s uses %s of %s/%s"
                               % (lib, f, sym, olib, of))
        elif of != f:
            a, b = "%s/%s" % (lib, f), "%s/%s" % (lib, of)
            file_edges.setdefault(a, set()).add(b)
            file_why.setdefault((a, b), sym)
    libs = set(lib_edges) | {b for v in lib_edges.values() for b in v}
    for comp in sccs(libs, lib_edges):
        errors.append("libraries call each other in a circle: %s"
                      % " ".join(comp))
        errors.extend(describe_cycle(comp, lib_why))
    files = set(file_edges) | {b for v in file_edges.values() for b in v}
    for comp in sccs(files, file_edges):
        errors.append("files of one library call each other in a circle: %s"
                      % " ".join(comp))
        errors.extend(describe_cycle(comp, file_why))
    return errors, narchives


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--srcdir", default=os.path.dirname(here))
    ap.add_argument("--builddir")
    opts = ap.parse_args()
    errors, nlibs = check_includes(opts.srcdir)
    narchives = 0
    if opts.builddir:
        errs, narchives = check_symbols(opts.builddir)
        errors += errs
    for e in errors:
        print(e)
    if errors:
        return 1
    print("layering: %d libraries, %s: no include from src/common into "
          "src/plugins or src/cmd, no circle"
          % (nlibs, "%d archives by symbol" % narchives if opts.builddir
             else "includes only"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
