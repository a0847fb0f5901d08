#!/bin/sh

test_description='slurm-pin plan reads hwloc XML with both of hwloc'"'"'s readers

hwloc has a built-in XML reader, which reads only what hwloc'"'"'s own
exporter writes, and a libxml2 reader in the plugin of Debian'"'"'s
libhwloc-plugins, which reads any well-formed hwloc XML (comments,
other layouts, files from other tools).  HWLOC_LIBXML_IMPORT=0 forces the
built-in one.  Every XML the project ships or tests with must give the same
plan with both; a file one reader refuses gets one line naming that reader
and what to install.  contrib/install-deps.sh installs libhwloc-plugins, so
under CI a missing libxml2 plugin fails here instead of skipping.
'

. "$(dirname "$0")/sharness.sh"

plugin="$(pkg-config --variable=libdir hwloc 2>/dev/null)/hwloc/hwloc_xml_libxml.so"
if test -f "$plugin"; then
    test_set_prereq LIBXML_READER
elif test -n "${CI:-}"; then
    test_expect_success 'the libxml2 reader of libhwloc-plugins is installed' '
        echo "$plugin: not found (contrib/install-deps.sh installs libhwloc-plugins)" &&
        false
    '
else
    say "$plugin not found (Debian: libhwloc-plugins): libxml2-reader cases skipped"
fi

HYBRID="$PIN_SRCDIR/src/common/libplace/test/data/hybrid-4p8e.xml"

# plan_both FILE ARGS...: slurm-pin plan --json with each reader; the two
# plans must be equal.
plan_both () {
    file=$1
    shift
    HWLOC_LIBXML_IMPORT=0 slurm-pin plan --json --topology "$file" "$@" \
        >builtin.json &&
    HWLOC_LIBXML_IMPORT=1 slurm-pin plan --json --topology "$file" "$@" \
        >libxml2.json &&
    test_cmp builtin.json libxml2.json
}

test_expect_success 'the hybrid test machine loads with the built-in reader' '
    HWLOC_LIBXML_IMPORT=0 slurm-pin plan --topology "$HYBRID" \
        --policy numa-local -n 3 -c 4 >hybrid.out &&
    grep "^task 2" hybrid.out
'

test_expect_success LIBXML_READER 'the hybrid test machine: same plan with both readers' '
    for p in numa-local numa-spread cache-shared random none
    do
        plan_both "$HYBRID" --policy $p -n 3 -c 4 || return 1
    done
'

test_expect_success SHARED_TOPOLOGIES,LIBXML_READER 'every shared fixture: same plan with both readers' '
    n=0 &&
    for f in "$PIN_SHARED"/topologies/*.xml "$PIN_SHARED"/topologies/derived/*.xml
    do
        plan_both "$f" --policy numa-local -n 2 -c 1 || return 1
        n=$((n + 1))
    done &&
    test $n -ge 26
'

# A well-formed XML that only the libxml2 reader reads: the hybrid machine
# with a comment, as a hand-written file would carry.
test_expect_success 'a commented copy of the hybrid machine' '
    sed "2a <!-- written by hand -->" "$HYBRID" >commented.xml &&
    grep -c "written by hand" commented.xml
'

test_expect_success 'the built-in reader refuses it, naming itself and the package' '
    test_expect_code 1 env HWLOC_LIBXML_IMPORT=0 slurm-pin plan \
        --topology commented.xml --policy none >out 2>err &&
    test_must_be_empty out &&
    test "$(wc -l <err)" -eq 1 &&
    grep -F "commented.xml" err &&
    grep -F "hwloc'"'"'s built-in XML reader refused it" err &&
    grep -F "install libhwloc-plugins" err
'

test_expect_success LIBXML_READER 'the libxml2 reader reads it: the same plan as the plain file' '
    HWLOC_LIBXML_IMPORT=1 slurm-pin plan --json --topology commented.xml \
        --policy numa-local -n 3 -c 4 >commented.json &&
    HWLOC_LIBXML_IMPORT=0 slurm-pin plan --json --topology "$HYBRID" \
        --policy numa-local -n 3 -c 4 >plain.json &&
    test_cmp plain.json commented.json
'

test_expect_success LIBXML_READER 'a document both refuse: the libxml2 reader is named' '
    printf "<?xml version=\"1.0\"?>\n<topology version=\"2.0\"><object type=\"Machine\"><object type=\"Bogus\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\"/></object></topology>\n" >bogus.xml &&
    test_expect_code 1 env HWLOC_LIBXML_IMPORT=1 slurm-pin plan \
        --topology bogus.xml --policy none >out 2>err &&
    test "$(wc -l <err)" -eq 1 &&
    grep -F "hwloc'"'"'s libxml2 XML reader refused it: not a valid hwloc XML topology" err
'

test_expect_success 'a truncated file: one line, with either reader' '
    head -c 2000 "$HYBRID" >cut.xml &&
    for r in 0 1
    do
        test_expect_code 1 env HWLOC_LIBXML_IMPORT=$r slurm-pin plan \
            --topology cut.xml --policy none >out 2>err &&
        test "$(wc -l <err)" -eq 1 &&
        grep -F "the file ends before its closing </topology>" err ||
        return 1
    done
'

test_done
