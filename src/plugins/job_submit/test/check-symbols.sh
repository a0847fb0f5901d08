#!/bin/sh
# check-symbols.sh - job_submit_pin.so exports only the job_submit entry
# points, leaves only Slurm, hwloc and libc symbols to slurmctld, and
# links neither libslurm nor anything missing.  TAP on stdout.
so=${1:-.libs/job_submit_pin.so}
n=0 failed=0

ok () {
    n=$((n + 1))
    if test "$1" = 0; then
        echo "ok $n - $2"
    else
        echo "not ok $n - $2"
        failed=1
    fi
}

if ! test -r "$so"; then
    echo "1..0 # SKIP $so not built"
    exit 0
fi

exports=$(nm -D --defined-only "$so" | awk '{ print $3 }' | sort | tr '\n' ' ')
expected="fini init job_modify job_submit plugin_name plugin_type plugin_version "
test "$exports" = "$expected"
ok $? "exports are the job_submit entry points only"
test "$exports" = "$expected" || echo "# got: $exports"

undef=$(nm -D --undefined-only "$so" | awk '{ print $2 }')
if printf '%s\n' "$undef" | grep -q '^__asan_'; then
    n=$((n + 1))
    echo "ok $n # SKIP sanitizer build: undefined symbols not checked"
else
    stray=$(printf '%s\n' "$undef" | grep -v '@' |
        grep -v -E '^(slurm_(error|info|debug|xcalloc|xfree|xrecalloc|xstrdup|conf)|hwloc_[a-z0-9_]+|_ITM_[A-Za-z]+|__gmon_start__|__cxa_finalize)$')
    test -z "$stray"
    ok $? "undefined symbols are Slurm's, hwloc's or libc's"
    test -z "$stray" || echo "# stray: $stray"
fi

deps=$(ldd "$so" 2>&1)
! printf '%s\n' "$deps" | grep -q -e "not found" -e libslurm
ok $? "links no libslurm and no missing library"

echo "1..$n"
exit $failed
