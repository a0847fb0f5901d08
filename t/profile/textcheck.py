#!/usr/bin/python3
"""textcheck.py FILE...: fail if a file holds what a terminal would obey.

Reports (and exits 1 for) any byte below 0x20 other than a newline, DEL,
ill-formed UTF-8, a C1 control (U+0080..U+009F), a Bidi_Control character
(U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069) or U+2028/U+2029:
what slurm-pin's text_sanitize() (src/common/libutil/text.h) replaces.
"""
import sys

BAD = {0x061C, 0x200E, 0x200F, 0x2028, 0x2029} | set(range(0x202A, 0x202F)) \
    | set(range(0x2066, 0x206A)) | set(range(0x7F, 0xA0))

rc = 0
for path in sys.argv[1:]:
    data = open(path, "rb").read()
    for i, b in enumerate(data):
        if b < 0x20 and b != 0x0A:
            print(f"{path}: byte {i}: raw control 0x{b:02x}: {data[max(0, i - 20):i + 20]!r}")
            rc = 1
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        print(f"{path}: ill-formed UTF-8: {e}")
        rc = 1
        text = data.decode("utf-8", "replace")
    for i, ch in enumerate(text):
        if ord(ch) in BAD:
            print(f"{path}: character {i}: U+{ord(ch):04X}: {text[max(0, i - 20):i + 20]!r}")
            rc = 1
sys.exit(rc)
