#!/bin/sh

test_description='bench: a generated journal loaded into slurmdbd reads back the same

bench/acct-load-slurmdbd.py loads the jobs and steps of a node journal
(bench/acct-gen.py, 200 records) into a private slurmdbd'"'"'s MariaDB tables
(local-slurm.sh --accounting), for bench/bench-acct-scale.sh to time real
sacct on the same jobs as slurm-pin acct on the journal.  Checks: sacct
lists every job and step of the journal with the ids, states, CPU counts,
CPU times, times and exit codes slurm-pin acct reads from the journal;
slurm-pin acct reading slurmdbd lists the same; --replace loads again
without doubling; an unknown cluster is refused with one line naming it.
'

. "$(dirname "$0")/sharness.sh"

cpu_heavy_exclusive || exit 1
slurm_require_accounting
PY=/usr/bin/python3
test -x $PY && test_set_prereq PYTHON

GEN=$PIN_SRCDIR/bench/acct-gen.py
LOAD=$PIN_SRCDIR/bench/acct-load-slurmdbd.py
J=$PWD/journal
# every generated job, whatever the generator's now
W="-a -S 2000-01-01T00:00:00 -E 2099-12-31T00:00:00"
# Not compared here, the journal and slurmdbd differ there by design or by
# an open defect of acct (issue 22 items 1 and 2): Elapsed (the journal
# has microseconds, slurmdbd whole seconds of Start and End), a TIMEOUT or
# CANCELLED job line'"'"'s ExitCode (the loader writes 0:0 there, as
# slurmctld does; acct on the journal prints the batch step'"'"'s 0:15), a
# step'"'"'s Account (sacct: the job'"'"'s) and the order of a job'"'"'s steps
# (sacct: by step id, batch first; acct: extern first): the lists are
# sorted before they are compared.
F=JobID,JobName,Partition,State,AllocCPUS,TotalCPU,Start,End

# the generator names its cluster "cluster": acct and sacct list the jobs
# of slurm.conf's ClusterName only
test_expect_success 'start Slurm with slurmdbd and MariaDB' '
    slurm_start --accounting --cluster cluster
'

test_expect_success SLURM,PYTHON 'a 200-record journal loads into slurmdbd' '
    $PY "$GEN" --records 200 --dir "$J" --seed 7 &&
    $PY "$LOAD" "$J" 2>load.log &&
    cat load.log &&
    grep -q "^acct-load-slurmdbd: 200 records (0 unreadable lines skipped): [1-9][0-9]* jobs, [1-9][0-9]* steps" load.log
'

test_expect_success SLURM,PYTHON 'sacct lists the journal'"'"'s jobs and steps as acct reads them from the journal' '
    sacct $W -P -o $F >sacct.raw &&
    "$PIN_BIN/slurm-pin" acct --journal "$J" $W -P -o $F >journal.raw &&
    sort sacct.raw >sacct.out &&
    sort journal.raw >journal.out &&
    test "$(wc -l <sacct.out)" -gt 150 &&
    test_cmp journal.out sacct.out
'

test_expect_success SLURM,PYTHON 'the steps'"'"' exit codes and the jobs'"'"' accounts too' '
    sacct $W -P -o JobID,ExitCode >sacct-ec.raw &&
    "$PIN_BIN/slurm-pin" acct --journal "$J" $W -P -o JobID,ExitCode >journal-ec.raw &&
    grep "^[^|]*\." sacct-ec.raw | sort >sacct-ec.out &&
    grep "^[^|]*\." journal-ec.raw | sort >journal-ec.out &&
    test "$(wc -l <sacct-ec.out)" -gt 100 &&
    test_cmp journal-ec.out sacct-ec.out &&
    sacct $W -X -P -o JobID,Account,User >sacct-acc.out &&
    "$PIN_BIN/slurm-pin" acct --journal "$J" $W -X -P -o JobID,Account >journal-acc.out &&
    cut -d"|" -f1,2 sacct-acc.out >sacct-acc.cut &&
    test_cmp journal-acc.out sacct-acc.cut
'

test_expect_success SLURM,PYTHON 'sacct -j of one job: the same rows' '
    id=$(sed -n "20p" journal.out | cut -d"|" -f1 | cut -d. -f1 | cut -d_ -f1) &&
    sacct -j "$id" -P -o $F >sacct-j.raw &&
    "$PIN_BIN/slurm-pin" acct --journal "$J" -j "$id" -P -o $F >journal-j.raw &&
    sort sacct-j.raw >sacct-j.out &&
    sort journal-j.raw >journal-j.out &&
    test "$(wc -l <sacct-j.out)" -gt 1 &&
    test_cmp journal-j.out sacct-j.out
'

test_expect_success SLURM,PYTHON 'acct reading slurmdbd: the steps as sacct prints them' '
    sacct $W -P -o JobID,State,AllocCPUS,TotalCPU >sacct4.out &&
    "$PIN_BIN/slurm-pin" acct $W -P -o JobID,State,AllocCPUS,TotalCPU >dbd4.out &&
    grep "^[^|]*\." sacct4.out | sort >sacct4.steps &&
    grep "^[^|]*\." dbd4.out | sort >dbd4.steps &&
    test "$(wc -l <sacct4.steps)" -gt 100 &&
    test_cmp dbd4.steps sacct4.steps
'

# A job slurm-pin holds no summary of is listed from slurmdbd'"'"'s records
# alone (acctdbd.c job_from_dbd): its TotalCPU is, as sacct makes it, the
# job row'"'"'s own CPU time (0) plus that of every step that ended.
test_expect_success SLURM,PYTHON 'acct reading slurmdbd: job lines as sacct prints them (TotalCPU: the sum of the ended steps)' '
    sort sacct4.out >sacct4.sorted &&
    sort dbd4.out >dbd4.sorted &&
    test_cmp dbd4.sorted sacct4.sorted
'

test_expect_success SLURM,PYTHON '--replace loads again without doubling the jobs' '
    $PY "$LOAD" --replace "$J" 2>load2.log &&
    sacct $W -P -o $F >sacct2.raw &&
    test_cmp sacct.raw sacct2.raw
'

test_expect_success SLURM,PYTHON 'an unknown cluster: one line naming it' '
    { $PY "$LOAD" --cluster nosuch "$J" 2>err; test $? -eq 1; } &&
    test "$(wc -l <err)" -eq 1 &&
    grep "cluster .nosuch. is not in slurm_acct_db (known: cluster)" err &&
    sacct $W -P -o $F >sacct3.raw &&
    test_cmp sacct.raw sacct3.raw
'

test_expect_success SLURM 'stop Slurm' '
    slurm_stop
'

test_done
