#!/bin/sh

test_description='bench/burst.c: the fork workload of the profile benches, paced and unpaced

bench-profile.sh and bench-profile-slurm.sh measure the recorder at a
stated fork rate (issue 23: 12,000 forks/s) with burst --rate R: fork i
is due at start + i/R, the program never runs ahead of its schedule, and
it reports the rate it achieved, whether it kept R, its CPU time with
its children'"'"'s and its per-fork latency.  Unpaced it forks as fast
as it can.  Needs a C compiler; no root, no Slurm.
'

. "$(dirname "$0")/sharness.sh"

# the same on every release: once per CI (t/sharness.d/00-pin.sh)
pin_release_independent

PY=/usr/bin/python3
test -x "$PY" && test_set_prereq PY
command -v "${CC:-cc}" >/dev/null 2>&1 && test_set_prereq CC

# jget FILE EXPR: evaluate a Python expression on the JSON object in FILE
jget () {
    "$PY" -c 'import json, sys; j = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

test_expect_success CC 'burst builds' '
    ${CC:-cc} -O2 -Wall -o burst "$PIN_SRCDIR/bench/burst.c"
'

test_expect_success CC,PY 'paced: never ahead of its schedule, and says so' '
    ./burst --rate 1000 100 >paced.json &&
    # fork 99 is due at 99 ms: the forks cannot take less
    test "$(jget paced.json "j[\"burst_s\"] >= 0.099")" = True &&
    test "$(jget paced.json "j[\"target\"]")" = 1000.0 &&
    test "$(jget paced.json "0 < j[\"rate\"] <= 100 / 0.099")" = True &&
    test "$(jget paced.json "j[\"kept\"] == (j[\"rate\"] >= 990)")" = True &&
    test "$(jget paced.json "j[\"cpu_s\"] > 0 and j[\"fork_us_p50\"] > 0")" = True &&
    test "$(jget paced.json "0 <= j[\"fork_us_p50\"] <= j[\"fork_us_p99\"]")" = True &&
    test "$(jget paced.json "0 <= j[\"late_us_p99\"] <= j[\"late_us_max\"]")" = True
'

test_expect_success CC,PY 'unpaced: no target, no verdict on a rate' '
    ./burst 50 >storm.json &&
    test "$(jget storm.json "j[\"target\"]")" = 0.0 &&
    test "$(jget storm.json "j[\"kept\"]")" = None &&
    test "$(jget storm.json "j[\"rate\"] > 0 and j[\"cpu_s\"] >= 0")" = True
'

test_expect_success CC 'a rate that is not above 0 is refused, naming it' '
    test_expect_code 2 ./burst --rate 0 5 >out 2>err &&
    grep "rate .0.: give forks per second > 0" err &&
    test_expect_code 2 ./burst --rate abc 5 >out 2>err &&
    grep "rate .abc." err
'

test_done
