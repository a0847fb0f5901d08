#!/bin/sh

test_description='slurm-pin plan agrees with the placement library on random machines

src/common/libplace/test_place_random --emit N draws N random machines
(hwloc synthetic descriptions), allowed and busy sets and requests, and
prints the plan the library computes for each.  slurm-pin plan --json must
print the same plan for the same options: the command adds nothing and
loses nothing on machines nobody wrote by hand.
'

. "$(dirname "$0")/sharness.sh"

GEN="$PIN_BUILDDIR/src/common/libplace/test_place_random"
if test -x "$GEN"; then
    test_set_prereq GENERATOR
else
    say "$GEN not built (make check builds it): cases skipped"
fi
pin_prereq_cmd PYTHON3 python3

# plan.json on stdin -> "cpus|mems|fallback;..." as --emit prints it
cat >to_line.py <<'EOF'
import json, sys
plan = json.load(sys.stdin)
print(";".join("%s|%s|%s" % (t["cpus"], t["mems"], t["fallback"] or "")
               for t in plan["tasks"]))
EOF

test_expect_success GENERATOR 'the generator emits 60 cases' '
    "$GEN" --emit 60 >cases &&
    test "$(wc -l <cases)" -eq 60
'

test_expect_success GENERATOR 'the cases cover every policy and restrictions' '
    for p in numa-local numa-spread cache-shared random none
    do
        cut -f2 cases | grep -x -e "$p" >/dev/null || return 1
    done &&
    cut -f5 cases | grep -v -x -e - >/dev/null &&
    cut -f6 cases | grep -v -x -e - >/dev/null
'

test_expect_success GENERATOR,PYTHON3 'slurm-pin plan --json gives the library plan on every case' '
    tab=$(printf "\t") &&
    i=0 &&
    while IFS=$tab read -r topo policy n c allowed busy seed expect
    do
        i=$((i + 1)) &&
        set -- --topology "$topo" --policy "$policy" -n "$n" -c "$c" \
            --seed "$seed" --json &&
        if test "$allowed" != -; then set -- "$@" --allowed "$allowed"; fi &&
        if test "$busy" != -; then set -- "$@" --busy "$busy"; fi &&
        slurm-pin plan "$@" >plan.json 2>plan.err &&
        test_must_be_empty plan.err &&
        python3 to_line.py <plan.json >got &&
        printf "%s\n" "$expect" >want &&
        test_cmp want got ||
        { echo "case $i: slurm-pin plan $*"; return 1; }
    done <cases &&
    test $i -eq 60
'

test_expect_success GENERATOR 'text output names the same CPUs as --json' '
    head -n 5 cases >few &&
    while IFS=$(printf "\t") read -r topo policy n c allowed busy seed expect
    do
        set -- --topology "$topo" --policy "$policy" -n "$n" -c "$c" \
            --seed "$seed" &&
        if test "$allowed" != -; then set -- "$@" --allowed "$allowed"; fi &&
        if test "$busy" != -; then set -- "$@" --busy "$busy"; fi &&
        slurm-pin plan "$@" >plan.txt &&
        printf "%s\n" "$expect" | tr ";" "\n" | cut -d"|" -f1 >want &&
        sed -e "s/^task [0-9]*: cpus=\([^ ]*\) .*/\1/" plan.txt >got &&
        test_cmp want got || return 1
    done <few
'

test_done
