#!/bin/sh

test_description='slurm-pin acct and report on a large generated journal

A journal of 200,000 records from bench/acct-gen.py (the format pin.so
writes, rotated every 16 MB): the listing (text and --json) and the
report stay within a memory bound whatever the journal holds (issue 22
item 7; before, every record kept a 2.5 KB row: 500 MB here); acct -j
gives the same lines through the sidecar index as the listing read
without it; progress shows on a terminal only (item 8).  No Slurm
needed.  Nothing here is timed.
'

. "$(dirname "$0")/sharness.sh"

# the same on every release: once per CI (t/sharness.d/00-pin.sh)
pin_release_independent

pin_prereq_cmd PYTHON3 python3
pin_prereq_cmd SCRIPT script

TZ=UTC
export TZ
# the generated records are of cluster "cluster"
printf "ClusterName=cluster\nSlurmctldHost=localhost\n" >slurm.conf
SLURM_CONF=$PWD/slurm.conf
export SLURM_CONF

GEN=$PIN_SRCDIR/bench/acct-gen.py
RECORDS=$PIN_SRCDIR/t/acct/records.py
MAXRSS=$PIN_SRCDIR/t/acct/maxrss.py
LIMIT_KB=51200

# lines OP N FILE: the number of lines of FILE compared with N
lines () {
    test "$(wc -l <"$3" | tr -d " ")" "$1" "$2"
}
LIST="-a -S 2020-01-01 -E now -P -o JobID,JobIDRaw,State,ExitCode,AllocCPUS,CPUEff,PinPolicy,Start,End"

test_expect_success PYTHON3 'acct-gen.py: bad options are one line and exit 2' '
    test_expect_code 2 python3 "$GEN" --records x --dir g 2>err &&
    lines -eq 1 err &&
    test_expect_code 2 python3 "$GEN" --dir g 2>err &&
    lines -eq 1 err &&
    test_expect_code 2 python3 "$GEN" --records 5 --dir g --max-size -1 2>err &&
    grep "max-size" err
'

test_expect_success PYTHON3 'a journal of 200,000 records, rotated' '
    python3 "$GEN" --records 200000 --dir j --seed 7 --max-size 16000000 &&
    test -f j/journal.1 && test -f j/journal &&
    python3 "$RECORDS" j -- job_id >all &&
    lines -eq 200000 all
'

test_expect_success PYTHON3 'the full listing: memory bounded, every job' '
    python3 "$MAXRSS" rss slurm-pin acct --journal=j $LIST >list 2>err &&
    test_must_be_empty err &&
    echo "max RSS $(cat rss) KB" &&
    test "$(cat rss)" -lt $LIMIT_KB &&
    sort -u all >jobs &&
    grep -c "^[0-9_]*|" list >n &&
    test "$(cat n)" = "$(wc -l <jobs | tr -d " ")"
'

test_expect_success PYTHON3 '--json: memory bounded, the jobs of the listing in its order' '
    python3 "$MAXRSS" rss slurm-pin acct --journal=j -a -S 2020-01-01 -E now \
        --json >list.json 2>err &&
    test_must_be_empty err &&
    echo "max RSS $(cat rss) KB" &&
    test "$(cat rss)" -lt $LIMIT_KB &&
    python3 -c "
import json, sys
d = json.load(open(\"list.json\"))
assert d[\"meta\"][\"slurm_pin\"][\"source\"] == \"journal\", d[\"meta\"]
assert d[\"errors\"] == [], d[\"errors\"]
for j in d[\"jobs\"]:
    print(j[\"job_id\"])
" >json-ids &&
    awk -F"|" "NR > 1 && \$2 !~ /\\./ { print \$2 }" list >list-ids &&
    lines -gt 1000 list-ids &&
    test_cmp list-ids json-ids
'

test_expect_success PYTHON3 'report: memory bounded, every step counted' '
    python3 "$MAXRSS" rss slurm-pin report --journal=j -a -S 2020-01-01 \
        --with-extern --json >rep.json 2>err &&
    test_must_be_empty err &&
    echo "max RSS $(cat rss) KB" &&
    test "$(cat rss)" -lt $LIMIT_KB &&
    python3 "$RECORDS" j kind=step -- job_id >steps &&
    python3 -c "import json,sys; print(sum(g[\"steps\"] for g in json.load(open(\"rep.json\"))[\"groups\"]))" >n &&
    test "$(cat n)" = "$(wc -l <steps | tr -d " ")"
'

test_expect_success PYTHON3 'acct -j: the same lines as the listing, through the index' '
    python3 "$RECORDS" j kind=job array_job_id=4294967294 -- job_id >plain &&
    python3 "$RECORDS" j kind=job -- array_job_id | grep -v 4294967294 | sort -u >arrays &&
    awk "NR % 1500 == 1" plain >pick &&
    head -n 3 arrays >>pick &&
    lines -ge 10 pick &&
    while read id; do
        slurm-pin acct --journal=j -v -j $id -n ${LIST#-a -S 2020-01-01 -E now} \
            >one 2>err || return 1
        grep -E "^${id}([._][^|]*)?\|" list >want &&
        test_cmp want one || return 1
    done <pick &&
    if test_have_prereq ROOT; then
        grep "lines checked against the index, 0 rejected" err &&
        ! grep " 0 lines checked" err &&
        test -f j/journal.1.idx
    fi
'

test_expect_success PYTHON3 'acct -j: the same without any index' '
    rm -f j/*.idx &&
    id=$(head -n 1 pick) &&
    slurm-pin acct --journal=j -j $id -n -P -o JobID,State,CPUEff >one &&
    grep -E "^${id}([._][^|]*)?\|" list | cut -d"|" -f1,3,6 >want &&
    test_cmp want one
'

test_expect_success PYTHON3,SCRIPT 'progress on a terminal, never on a pipe nor with -P' '
    PIN_PROGRESS_AFTER_MS=0 script -qec \
        "slurm-pin acct --journal=j -a -S 2020-01-01 -E now >/dev/null" \
        /dev/null >tty.out &&
    grep "records read, [0-9]*/s" tty.out &&
    PIN_PROGRESS_AFTER_MS=0 script -qec \
        "slurm-pin acct --journal=j -a -S 2020-01-01 -E now | cat >/dev/null" \
        /dev/null >pipe.out &&
    ! grep "records read" pipe.out &&
    PIN_PROGRESS_AFTER_MS=0 script -qec \
        "slurm-pin acct --journal=j $LIST >/dev/null" /dev/null >p.out &&
    ! grep "records read" p.out &&
    PIN_PROGRESS_AFTER_MS=0 script -qec \
        "slurm-pin report --journal=j -a -S 2020-01-01 --json >/dev/null" \
        /dev/null >json.out &&
    ! grep "records read" json.out &&
    PIN_PROGRESS_AFTER_MS=0 slurm-pin acct --journal=j -a -S 2020-01-01 \
        -E now >/dev/null 2>err &&
    ! grep "records read" err
'

test_done
