# Common settings for slurm-pin's integration tests (sourced by sharness).

# Where the sources and the build are (set by t/Makefile.am; defaults for
# running a test by hand from the build's t/ directory).
: "${PIN_SRCDIR:=$(cd "$SHARNESS_TEST_SRCDIR/.." && pwd)}"
: "${PIN_BUILDDIR:=$(cd "$SHARNESS_BUILD_DIRECTORY" && pwd)}"
export PIN_SRCDIR PIN_BUILDDIR

# The command under test.
PATH="$PIN_BUILDDIR/src/cmd:$PATH"
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
