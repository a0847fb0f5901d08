#!/bin/sh

test_description='every subcommand takes its options anywhere on the line

As GNU getopt and sacct do: an option after an operand is an option
("slurm-pin profile JOB --json", "slurm-pin eff 101 --journal DIR"), "--"
ends the options, and profile --record leaves the options after its CMD
to CMD.  Needs neither Slurm nor root: a hand-written journal and a
crafted profile (t/profile/mkprofile.py).
'

. "$(dirname "$0")/sharness.sh"

pin_prereq_cmd PYTHON3 /usr/bin/python3

TZ=UTC
# the fixtures' cluster c1 is shown whatever slurm.conf this machine has:
# none to read, every cluster (slurm-pin-acct(1), -M)
SLURM_CONF=$PWD/no-slurm.conf
export SLURM_CONF
export TZ
T0=1700000000

# rec KIND STEP USER_S: one journal line of job 101 (see t4050-acct-cli.t).
rec () {
    printf '{"v":1,"kind":"%s","cluster":"c1","job_id":101,"step_id":%s,' "$1" "$2"
    printf '"array_job_id":4294967294,"array_task_id":4294967294,'
    printf '"node":"node1","uid":0,"user":"root","partition":"debug",'
    printf '"job_name":"sim","policy":"numa-local","fallback":"","cpus":"0-3","mems":"0",'
    printf '"alloc_cpus":4,"start_us":%s000000,"end_us":%s000000,' "$T0" "$((T0 + 100))"
    printf '"elapsed_us":100000000,"user_usec":%s000000,"system_usec":0,' "$3"
    printf '"usage_usec":%s000000,"exit_status":0,"state":"COMPLETED",' "$3"
    printf '"source":"step-cgroup","cgroup":"/sys/fs/cgroup/x","mode":"nested"}\n'
}

test_expect_success 'set up a journal and a profile' '
    mkdir -p journal &&
    { rec job 4294967294 300 && rec step 0 300; } >journal/journal &&
    chmod 0700 journal && chmod 0600 journal/journal
'

test_expect_success PYTHON3 'a crafted profile' '
    /usr/bin/python3 "$PIN_SRCDIR/t/profile/mkprofile.py" p.jsonl \
        --commands sim:3,reco:2 >facts.json
'

# Every subcommand: --help after an operand is --help (usage, status 0).
for cmd in acct eff report plan check profile plot deliver; do
    test_expect_success "$cmd: --help after an operand" '
        slurm-pin '$cmd' operand --help >help.out 2>help.err &&
        grep "^Usage: slurm-pin '$cmd'" help.out &&
        test_must_be_empty help.err
    '
done

test_expect_success 'acct: the same rows whatever the order' '
    slurm-pin acct -j 101 -P -o JobID,JobName --journal=journal -S 2023-11-01 >a1.out &&
    slurm-pin acct --journal=journal -S 2023-11-01 -o JobID,JobName -P -j 101 >a2.out &&
    test_cmp a1.out a2.out &&
    grep "^101|sim$" a1.out
'

test_expect_success 'eff: options after JOBID' '
    slurm-pin eff --journal=journal 101 >e1.out &&
    slurm-pin eff 101 --journal=journal >e2.out &&
    test_cmp e1.out e2.out &&
    grep "^Job ID: 101$" e2.out
'

test_expect_success 'report: options in any order' '
    slurm-pin report --journal=journal -S 2023-11-01 --by user >r1.out &&
    slurm-pin report --by user -S 2023-11-01 --journal=journal >r2.out &&
    test_cmp r1.out r2.out &&
    grep "^root " r1.out
'

test_expect_success 'plan: options in any order' '
    slurm-pin plan -p numa-local -n 2 -c 1 >p1.out &&
    slurm-pin plan -c 1 -n 2 -p numa-local >p2.out &&
    test_cmp p1.out p2.out
'

test_expect_success 'check: an operand after the options is still refused, by name' '
    test_expect_code 1 slurm-pin check --json extra >c.out 2>c.err &&
    grep "extra" c.err
'

test_expect_success PYTHON3 'profile FILE --json --top N: the same as with the options first' '
    slurm-pin profile --json --top 3 p.jsonl >s1.json &&
    slurm-pin profile p.jsonl --json --top 3 >s2.json &&
    test_cmp s1.json s2.json &&
    /usr/bin/python3 -c "import json, sys; json.load(open(sys.argv[1]))" s2.json
'

test_expect_success PYTHON3 'profile: "--" ends the options; --record after the operand is refused' '
    test_expect_code 1 slurm-pin profile -- p.jsonl --json 2>dd.err &&
    grep "expected one profile FILE" dd.err &&
    test_expect_code 1 slurm-pin profile p.jsonl --record x.jsonl 2>rec.err &&
    grep -- "--record: give it before the command" rec.err &&
    ! test -e x.jsonl
'

test_expect_success PYTHON3 'plot FILE --kind K -o OUT: options after the operand' '
    slurm-pin plot p.jsonl --kind cpu -o cpu.png &&
    test -s cpu.png
'

test_expect_success 'deliver: an operand after the options is refused, by name' '
    test_expect_code 2 slurm-pin deliver --journal=journal extra >d.out 2>d.err &&
    grep "extra" d.err
'

# Every subcommand words a usage error one way (src/cmd/cmdopt.h): the
# bad option named, then where the options are told; one line on stderr,
# nothing on stdout, the subcommand's usage status (acct, eff, report and
# deliver: 2, as their man pages say; the others: 1).
usage_status () {
    case $1 in acct|eff|report|deliver) echo 2 ;; *) echo 1 ;; esac
}
# usage_error CMD TEXT ARGS...: slurm-pin CMD ARGS fails with exactly
# "slurm-pin CMD: TEXT (see 'slurm-pin CMD --help')".
usage_error () {
    cmd=$1 text=$2 &&
    shift 2 &&
    printf "slurm-pin %s: %s (see 'slurm-pin %s --help')\n" \
        "$cmd" "$text" "$cmd" >expected &&
    test_expect_code $(usage_status $cmd) slurm-pin $cmd "$@" >u.out 2>u.err &&
    test_must_be_empty u.out &&
    test_cmp expected u.err
}
# a required value of each: CMD:OPTION
for pair in acct:--journal eff:--journal report:--journal plan:--policy \
            check:--conf profile:--top plot:--kind deliver:--journal; do
    cmd=${pair%%:*} opt=${pair#*:}
    test_expect_success "$cmd: unknown options, a missing value, a value too many: one wording" '
        usage_error '$cmd' "--bogus: unknown option" --bogus &&
        usage_error '$cmd' "--bogus: unknown option" operand --bogus=1 &&
        usage_error '$cmd' "-Z: unknown option" -Z &&
        usage_error '$cmd' "'$opt': missing value" '$opt' &&
        usage_error '$cmd' "--help=1: this option takes no value" --help=1
    '
done
for cmd in acct report plan check deliver; do
    test_expect_success "$cmd: an operand it does not take is named" '
        usage_error '$cmd' "extra: unexpected argument" extra
    '
done

test_expect_success 'acct: an unknown letter in a cluster is the one named' '
    usage_error acct "-Z: unknown option" -Zn --journal=journal &&
    usage_error acct "-Z: unknown option" -nZ --journal=journal
'

test_expect_success 'an abbreviation of several options names them' '
    usage_error acct "--jo: ambiguous option; could be --jobs, --journal, --job" --jo 101 &&
    slurm-pin acct --jour=journal -j 101 -X -P -o JobID -n >ab.out &&
    echo 101 >expected &&
    test_cmp expected ab.out
'

test_expect_success 'eff: one JOBID, and --journal wherever it is' '
    usage_error eff "expected one JOBID" --journal=journal &&
    usage_error eff "expected one JOBID" 101 102 --journal=journal
'

test_expect_success 'report: --uid is -u, as in acct' '
    slurm-pin report --journal=journal -S 2023-11-01 --uid=0 --by user >u1.out &&
    slurm-pin report --journal=journal -S 2023-11-01 -u 0 --by user >u2.out &&
    test_cmp u1.out u2.out &&
    grep "^root " u1.out
'

test_expect_success 'report and acct: a bad -S or -E is named the same way' '
    test_expect_code 2 slurm-pin report --journal=journal -E noonish 2>r.err &&
    grep -F "slurm-pin report: -E: invalid time \"noonish\"" r.err &&
    test_expect_code 1 slurm-pin acct --journal=journal -E noonish 2>a.err &&
    grep -F "slurm-pin acct: -E: invalid time \"noonish\"" a.err
'

test_expect_success 'POSIXLY_CORRECT: the first operand ends the options' '
    test_expect_code 2 env POSIXLY_CORRECT=1 \
        slurm-pin eff 101 --journal=journal >pc.out 2>pc.err &&
    grep -F "expected one JOBID" pc.err &&
    env POSIXLY_CORRECT=1 slurm-pin eff --journal=journal 101 >pc.out &&
    grep "^Job ID: 101$" pc.out
'

test_done
