#!/usr/bin/python3
"""records.py DIR [KEY=VALUE ...] -- FIELD ...

Read the journal files of DIR as a reader outside slurm-pin would
(journal.N by ascending N, then journal), check that every line is one
JSON object in strict UTF-8, and print, for each record whose keys match
every KEY=VALUE, the FIELDs separated by '|' (a missing field prints as
'-'; "eff" prints (user_usec + system_usec) / (elapsed_us * alloc_cpus)).
Exit status 3 if a line is not valid JSON (it is named on stderr).
"""
import json
import os
import re
import sys


def files(d):
    rot = []
    for name in os.listdir(d):
        m = re.fullmatch(r"journal\.([1-9][0-9]*)", name)
        if m:
            rot.append(int(m.group(1)))
    out = [os.path.join(d, "journal.%d" % n) for n in sorted(rot)]
    if os.path.exists(os.path.join(d, "journal")):
        out.append(os.path.join(d, "journal"))
    return out


def main(argv):
    d = argv[1]
    sep = argv.index("--")
    filters = [a.split("=", 1) for a in argv[2:sep]]
    fields = argv[sep + 1:]
    bad = 0
    for path in files(d):
        with open(path, "rb") as f:
            for no, raw in enumerate(f, 1):
                try:
                    rec = json.loads(raw.decode("utf-8", errors="strict"))
                    assert isinstance(rec, dict)
                except Exception as e:
                    sys.stderr.write("%s:%d: not a JSON record: %s\n" % (path, no, e))
                    bad += 1
                    continue
                if any(str(rec.get(k)) != v for k, v in filters):
                    continue
                vals = []
                for fld in fields:
                    if fld == "eff":
                        den = rec["elapsed_us"] * rec["alloc_cpus"]
                        v = "%.4f" % ((rec["user_usec"] + rec["system_usec"]) / den) if den else "-"
                    else:
                        v = rec.get(fld, "-")
                    vals.append(str(v))
                print("|".join(vals))
    return 3 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
