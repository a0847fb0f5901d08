#!/bin/sh

test_description='slurm-pin plan on every recorded machine, against golden files

For every hwloc XML of ../shared/topologies (INDEX.md there), the plans
of every policy for a fixed set of requests (one task; two tasks of 4
CPUs; four tasks of 2 CPUs beside a step holding the first quarter of
the CPUs; the whole node in two tasks; two tasks of 3 CPUs in a job
allowed the last half; one and a half nodes, oversubscribed) are
compared with t/plan-golden/FIXTURE.out, as hwloc compares its tools
with .output files: a change of a placement rule shows as a diff.

After a deliberate change, regenerate them and review the diff:
    PIN_GOLDEN_UPDATE=1 make check TESTS=t0140-plan-golden.t   (in build/t)
    git diff t/plan-golden/
'

. "$(dirname "$0")/sharness.sh"

GOLDEN="$PIN_SRCDIR/t/plan-golden"
FIXTURES="$PIN_SHARED/topologies"
POLICIES="numa-local numa-spread cache-shared random dynamic none"

if ! test_have_prereq SHARED_TOPOLOGIES; then
    skip_all="the fixtures ($FIXTURES) are not there: the golden plans are made from them"
    test_done
fi
if test -n "${PIN_GOLDEN_UPDATE:-}"; then
    say "PIN_GOLDEN_UPDATE is set: writing the golden files in $GOLDEN"
fi

# The fixtures, as paths relative to $FIXTURES (derived/ included).
(cd "$FIXTURES" && find . -name '*.xml' | sed 's|^\./||' | LC_ALL=C sort) \
    >fixtures.list

# cpulist_take first|last K: of the kernel CPU list on stdin, the first
# or last K CPUs (OS order), as a kernel CPU list.
cpulist_take () {
    awk -v which="$1" -v k="$2" '
        {
            n = split($0, r, ",")
            m = 0
            for (i = 1; i <= n; i++) {
                if (split(r[i], b, "-") == 2)
                    for (c = b[1]; c <= b[2]; c++) cpu[m++] = c
                else
                    cpu[m++] = r[i]
            }
            if (k > m) k = m
            lo = which == "first" ? 0 : m - k
            out = ""
            for (i = lo; i < lo + k; i++) {
                if (i > lo && cpu[i] == cpu[i - 1] + 1 &&
                    (i + 1 < lo + k && cpu[i + 1] == cpu[i] + 1))
                    continue
                if (i > lo && cpu[i] == cpu[i - 1] + 1)
                    out = out "-" cpu[i]
                else
                    out = out (out == "" ? "" : ",") cpu[i]
            }
            print out
        }'
}

# cpulist_count: the number of CPUs of the kernel CPU list on stdin.
cpulist_count () {
    awk -F, '{
        n = 0
        for (i = 1; i <= NF; i++) {
            if (split($i, b, "-") == 2) n += b[2] - b[1] + 1; else n++
        }
        print n }'
}

# golden_generate FIXTURE OUT: every policy and request on FIXTURE (a
# path relative to $FIXTURES), written to OUT as the golden files are.
# A plan that fails is recorded too (its exit status and stderr).
golden_generate () {
    xml="$FIXTURES/$1"
    slurm-pin plan -t "$xml" -p none >all.out 2>all.err || {
        echo "cannot read $1:"; cat all.err; return 1
    }
    all=$(sed -n 's/^task 0: cpus=\([^ ]*\) .*/\1/p' all.out)
    npus=$(echo "$all" | cpulist_count)
    quarter=$((npus / 4 > 0 ? npus / 4 : 1))
    half=$((npus / 2 > 0 ? npus / 2 : 1))
    busy=$(echo "$all" | cpulist_take first "$quarter")
    allowed=$(echo "$all" | cpulist_take last "$half")
    {
        echo "# slurm-pin plan -t ../shared/topologies/$1: $npus CPUs ($all)"
        echo "# t/t0140-plan-golden.t; regenerate with PIN_GOLDEN_UPDATE=1 (doc/testing.md)"
    } >"$2"
    for p in $POLICIES
    do
        for req in "-n 1 -c 1" "-n 2 -c 4" "-n 4 -c 2 -b $busy" \
                   "-n 2 -c $half" "-n 2 -c 3 -a $allowed" \
                   "-n 3 -c $half"
        do
            seed=
            test "$p" = random && seed="-s 42"
            echo "" >>"$2"
            echo "-p $p $req $seed" | sed 's/ *$//' >>"$2"
            # shellcheck disable=SC2086
            slurm-pin plan -t "$xml" -p "$p" $req $seed >plan.out 2>plan.err
            rc=$?
            cat plan.out >>"$2"
            if test "$rc" != 0; then
                echo "exit $rc" >>"$2"
                sed 's/^/stderr: /' plan.err >>"$2"
            fi
        done
    done
}

test_expect_success 'cpulist_take and cpulist_count on kernel CPU lists' '
    test "$(echo 0-3,8-11 | cpulist_take first 6)" = 0-3,8-9 &&
    test "$(echo 0-3,8-11 | cpulist_take last 3)" = 9-11 &&
    test "$(echo 4,6,8,10 | cpulist_take first 3)" = 4,6,8 &&
    test "$(echo 0-1 | cpulist_take first 1)" = 0 &&
    test "$(echo 7 | cpulist_take last 1)" = 7 &&
    test "$(echo 0-2 | cpulist_take first 5)" = 0-2 &&
    test "$(echo 0-3,8-11,16 | cpulist_count)" = 9
'

test_expect_success 'every fixture has a golden file, every golden file a fixture' '
    sed "s/\.xml\$/.out/" fixtures.list >expected.list &&
    if test -n "${PIN_GOLDEN_UPDATE:-}"
    then
        mkdir -p "$GOLDEN/derived" &&
        for f in $(cat fixtures.list)
        do
            touch "$GOLDEN/${f%.xml}.out" || return 1
        done
    fi &&
    (cd "$GOLDEN" && find . -name "*.out" | sed "s|^\./||" | LC_ALL=C sort) \
        >golden.list &&
    test_cmp expected.list golden.list
'

while read -r f
do
    name=${f%.xml}
    test_expect_success "$f: every policy plans as recorded" '
        mkdir -p "actual/$(dirname "$name")" &&
        golden_generate "$f" "actual/$name.out" &&
        if test -n "${PIN_GOLDEN_UPDATE:-}"
        then
            cp "actual/$name.out" "$GOLDEN/$name.out"
        fi &&
        test_cmp "$GOLDEN/$name.out" "actual/$name.out"
    '
done <fixtures.list

test_done
