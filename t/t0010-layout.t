#!/bin/sh

test_description='the layers of the source tree point one way

Libraries (src/common) are used by the plugins (src/plugins) and the
command (src/cmd), never the other way round: no source or Makefile of a
library names a file of a plugin or of the command.  Reads the source tree
only; needs neither Slurm nor root.
'

. "$(dirname "$0")/sharness.sh"

# upward REFERENCE_RE: the files under src/common whose #include lines or
# Makefile.am text name src/plugins or src/cmd, one "FILE:LINE: text" each.
upward () {
    find "$PIN_SRCDIR/src/common" -type f \
        \( -name "*.c" -o -name "*.h" \) -exec \
        grep -nE "^[[:space:]]*#[[:space:]]*include[[:space:]].*(plugins|cmd)/" \
        /dev/null {} + >upward.out
    find "$PIN_SRCDIR/src/common" -type f -name Makefile.am -exec \
        grep -nE "src/(plugins|cmd)|\.\./\.\./(plugins|cmd)" \
        /dev/null {} + >>upward.out
    :
}

test_expect_success 'the library sources are there to read' '
    test -f "$PIN_SRCDIR/src/common/libconf/conf.c" &&
    test -f "$PIN_SRCDIR/src/common/libsubmit/submit.c"
'

test_expect_success 'no library includes a file of a plugin or of slurm-pin' '
    upward &&
    test_must_be_empty upward.out
'

test_expect_success 'the --pin-policy parser is a library of its own layer' '
    test -f "$PIN_SRCDIR/src/common/libconf/pinopt.c" &&
    ! test -e "$PIN_SRCDIR/src/plugins/spank/pinopt.c"
'

test_done
