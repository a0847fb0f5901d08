#!/bin/sh

test_description='slurm-pin acct prints what real sacct prints for the same jobs

sacct -c reads job completion records from a jobcomp/filetxt file with no
daemon and no database, and prints them through the same code as any
listing (src/common/print_fields.c).  The same jobs are written as
slurm-pin journal records, and both programs must print byte for byte the
same text for the fields both have: the header, the dashes line, fixed and
%N widths, the + cut, -p, -P, --delimiter and -n, the time formats.
'

. "$(dirname "$0")/sharness.sh"

pin_prereq_cmd SACCT sacct

TZ=UTC
export TZ

test_expect_success SACCT 'set up the same two jobs for sacct -c and slurm-pin' '
    cat >slurm.conf <<-EOF &&
	ClusterName=c1
	SlurmctldHost=localhost
	JobCompType=jobcomp/filetxt
	JobCompLoc="$PWD/jobcomp.txt"
	AccountingStorageType=accounting_storage/none
	NodeName=node[1-2,10] CPUs=4 State=UNKNOWN
	PartitionName=debug Nodes=node[1-2,10] Default=YES
	PartitionName=averylongpartition Nodes=node[1-2,10]
	EOF
    cat >jobcomp.txt <<-\EOF &&
	JobId=101 UserId=root(0) GroupId=root(0) Name=averyverylongname JobState=COMPLETED Partition=debug TimeLimit=UNLIMITED StartTime=2023-11-14T22:13:20 EndTime=2023-11-14T22:15:20 NodeList=node[1-2] NodeCnt=2 ProcCnt=8 WorkDir=/tmp ReservationName= Tres=cpu=8,node=2 Account=a QOS=normal WcKey= Cluster=c1 SubmitTime=2023-11-14T22:13:19 EligibleTime=2023-11-14T22:13:19 DerivedExitCode=0:0 ExitCode=0:0
	JobId=102 UserId=root(0) GroupId=root(0) Name=sim JobState=FAILED Partition=averylongpartition TimeLimit=UNLIMITED StartTime=2023-11-14T22:13:20 EndTime=2023-11-16T01:14:25 NodeList=node10 NodeCnt=1 ProcCnt=2 WorkDir=/tmp ReservationName= Tres=cpu=2,node=1 Account=a QOS=normal WcKey= Cluster=c1 SubmitTime=2023-11-14T22:13:19 EligibleTime=2023-11-14T22:13:19 DerivedExitCode=0:0 ExitCode=2:0
	EOF
    mkdir journal &&
    for n in node1 node2; do
        printf "{\"v\":1,\"kind\":\"job\",\"cluster\":\"c1\",\"job_id\":101,\"node\":\"%s\",\"uid\":0,\"user\":\"root\",\"partition\":\"debug\",\"job_name\":\"averyverylongname\",\"policy\":\"none\",\"alloc_cpus\":4,\"start_us\":1700000000000000,\"end_us\":1700000120000000,\"elapsed_us\":120000000,\"exit_status\":0,\"state\":\"COMPLETED\"}\n" $n || return 1
    done >journal/journal &&
    printf "{\"v\":1,\"kind\":\"job\",\"cluster\":\"c1\",\"job_id\":102,\"node\":\"node10\",\"uid\":0,\"user\":\"root\",\"partition\":\"averylongpartition\",\"job_name\":\"sim\",\"policy\":\"none\",\"alloc_cpus\":2,\"start_us\":1700000000000000,\"end_us\":1700097265000000,\"elapsed_us\":97265000000,\"exit_status\":512,\"state\":\"FAILED\"}\n" >>journal/journal &&
    chmod 0700 journal && chmod 0600 journal/journal &&
    SLURM_CONF=$PWD/slurm.conf &&
    export SLURM_CONF &&
    sacct -c -j 101 -o JobID -P -n >probe 2>probe.err &&
    echo 101 >expect &&
    test_cmp expect probe
'

# same ARGS...: sacct -c ARGS and slurm-pin acct -X ARGS print the same.
same () {
    sacct -c -j 101,102 "$@" >sacct.out 2>sacct.err &&
    slurm-pin acct --journal=journal -X -j 101,102 "$@" >pin.out 2>pin.err &&
    test_cmp sacct.out pin.out
}

FIELDS=JobID,JobIDRaw,JobName,Partition,NodeList,AllocCPUS,State,Elapsed,Start,End,ExitCode

test_expect_success SACCT 'fixed width, default widths: header, dashes, + cut' '
    same -o $FIELDS &&
    grep "^101  *101  *averyvery+ " pin.out &&
    grep " 1-03:01:05 " pin.out
'

test_expect_success SACCT '%N widths: positive, negative, cuts, dates, times' '
    same -o JobID%4,JobName%-6,Partition%5,NodeList%-4,State%3,Elapsed%3,Start%10,End%-12,ExitCode%1,AllocCPUS%1
'

# %0 is a width of zero in sacct (atoi), not the default: strings and
# dates print an empty column, numbers and times whole; a date is cut to
# its column in -p and -P too (print_fields_date formats into a buffer of
# the width); a field named twice takes the last %N given to it in both
# places (sacct keeps the width in its one field table entry)
test_expect_success SACCT '%0 widths, dates cut in -p/-P, a field named twice' '
    same -o JobID%0,JobName%0,AllocCPUS%0,Elapsed%0,Start%0,State,ExitCode%-0 &&
    same -o JobID%0,JobName%0,AllocCPUS%0,Elapsed%0,Start%0,State -p &&
    same -o Start%1,End%2 -P &&
    same -o JobID,End%0 -p &&
    same -o JobID%3,JobName,JobID &&
    same -o JobID,JobName%4,JobID%-0 -P &&
    SLURM_TIME_FORMAT="%d/%m/%Y %H:%M:%S %Z" same -o JobID,Start,End -P
'

test_expect_success SACCT 'prefixes and case of -o names' '
    same -o jobidr,JOBN,part%-20,st%12,elap,nodel
'

test_expect_success SACCT '-p, -P, --delimiter, -n' '
    same -o $FIELDS -p &&
    same -o $FIELDS -P &&
    same -o $FIELDS -P --delimiter=:: &&
    same -o $FIELDS -p --delimiter=, &&
    same -o $FIELDS -n &&
    same -o $FIELDS -P -n
'

test_expect_success SACCT 'SLURM_TIME_FORMAT formats Start and End alike' '
    SLURM_TIME_FORMAT="%d/%m %H:%M" same -o JobID,Start,End%-8 &&
    grep "14/11 22:13" pin.out &&
    SLURM_TIME_FORMAT="%d/%m %H:%M" same -o JobID,Start,End -P &&
    SLURM_TIME_FORMAT=standard same -o JobID,Start,End
'

test_done
