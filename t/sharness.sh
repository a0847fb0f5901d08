# t/sharness.sh - load Debian's sharness (package "sharness"); the files in
# t/sharness.d/ are sourced by it as extensions.
if ! test -r /usr/share/sharness/sharness.sh; then
    echo "Bail out! /usr/share/sharness/sharness.sh not found: install the Debian package 'sharness' (contrib/install-deps.sh)"
    exit 1
fi
: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")" && pwd)}"
export SHARNESS_TEST_SRCDIR
. /usr/share/sharness/sharness.sh
