# Common settings for slurm-pin's integration tests (sourced by sharness).

# Where the sources and the build are (set by t/Makefile.am; defaults for
# running a test by hand from the build's t/ directory).
: "${PIN_SRCDIR:=$(cd "$SHARNESS_TEST_SRCDIR/.." && pwd)}"
: "${PIN_BUILDDIR:=$(cd "$SHARNESS_BUILD_DIRECTORY" && pwd)}"
export PIN_SRCDIR PIN_BUILDDIR

# What is under test: the build tree (default), or with PIN_INSTALLED
# non-empty the installed files (contrib/test-all.sh's packages tier,
# after installing the packages): slurm-pin from PIN_INST_BINDIR, pin.so
# and job_submit_pin.so from Slurm's plugin directory PIN_INST_PLUGINDIR
# (both from configure, as the packages use them; t/Makefile.am sets
# them).  Tests name the files through these variables only:
#   PIN_BIN        the directory of slurm-pin and slurm-pin-plot
#   PIN_SO         pin.so
#   PIN_JS_DIR     the directory of job_submit_pin.so (for PluginDir=)
if test -n "${PIN_INSTALLED:-}"; then
    PIN_BIN=${PIN_INST_BINDIR:-/usr/bin}
    PIN_SO=${PIN_INST_PLUGINDIR:-/nonexistent}/pin.so
    PIN_JS_DIR=${PIN_INST_PLUGINDIR:-/nonexistent}
    test_set_prereq INSTALLED
else
    PIN_BIN=$PIN_BUILDDIR/src/cmd
    PIN_SO=$PIN_BUILDDIR/src/plugins/spank/.libs/pin.so
    PIN_JS_DIR=$PIN_BUILDDIR/src/plugins/job_submit/.libs
fi
export PIN_BIN PIN_SO PIN_JS_DIR
PATH="$PIN_BIN:$PATH"
export PATH

# The shared fixtures sit beside the repository (../shared).
: "${PIN_SHARED:=$(cd "$PIN_SRCDIR/.." && pwd)/shared}"
export PIN_SHARED
if test -d "$PIN_SHARED/topologies"; then
    test_set_prereq SHARED_TOPOLOGIES
else
    say "shared topologies not found at $PIN_SHARED/topologies: tests that need them are skipped"
fi

test "$(id -u)" = 0 && test_set_prereq ROOT || :

# pin_prereq_cmd PREREQ COMMAND: set PREREQ where COMMAND is installed.
# contrib/install-deps.sh installs every command the tests use, so under
# CI (CI non-empty) a missing one is a failed test, never a quiet skip.
pin_prereq_cmd () {
    if command -v "$2" >/dev/null 2>&1; then
        test_set_prereq "$1"
    elif test -n "${CI:-}"; then
        test_expect_success "$2 is installed (contrib/install-deps.sh)" "
            echo '$2: not found in PATH' && false
        "
    else
        say "$2 not found: the tests that need it ($1) are skipped"
    fi
}

# pin_release_independent: called by a test file that tests only
# slurm-pin's own code, the same way on every Slurm release (no Slurm in
# it).  With PIN_RELEASE_ONLY set (contrib/test-all.sh --release-only: CI
# on the releases after the first, doc/testing.md) the whole file is
# skipped and says why; otherwise it runs.
pin_release_independent () {
    if test -n "${PIN_RELEASE_ONLY:-}"; then
        skip_all="release-independent (no Slurm in it): CI runs it on its first release only (test-all.sh --release-only, doc/testing.md)"
        test_done
    fi
}
