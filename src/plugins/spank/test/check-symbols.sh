#!/bin/sh
# check-symbols.sh - pin.so exports only the SPANK entry points, leaves only
# Slurm, hwloc and libc symbols to the process that loads it, and links
# neither libslurm nor anything missing.  TAP on stdout.
so=${1:-.libs/pin.so}
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
expected="plugin_name plugin_type plugin_version slurm_spank_exit slurm_spank_init slurm_spank_init_post_opt slurm_spank_job_epilog slurm_spank_task_exit slurm_spank_task_init slurm_spank_task_post_fork "
test "$exports" = "$expected"
ok $? "exports are the SPANK entry points only"
test "$exports" = "$expected" || echo "# got: $exports"

undef=$(nm -D --undefined-only "$so" | awk '{ print $2 }')
if printf '%s\n' "$undef" | grep -q '^__asan_'; then
    # --enable-sanitizers: ASan interposes libc, whose symbols then carry
    # no version, so this check cannot tell them from stray ones.
    n=$((n + 1))
    echo "ok $n # SKIP sanitizer build: undefined symbols not checked"
else
    stray=$(printf '%s\n' "$undef" | grep -v '@' |
        grep -v -E '^(slurm_(error|info|debug|verbose)|spank_[a-z_]+|hwloc_[a-z0-9_]+|_ITM_[A-Za-z]+|__gmon_start__|__cxa_finalize)$')
    test -z "$stray"
    ok $? "undefined symbols are Slurm's, hwloc's or libc's"
    test -z "$stray" || echo "# stray: $stray"
fi

deps=$(ldd "$so" 2>&1)
! printf '%s\n' "$deps" | grep -q -e "not found" -e libslurm
ok $? "links no libslurm and no missing library"

echo "1..$n"
exit $failed
