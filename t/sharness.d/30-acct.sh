# t/sharness.d/30-acct.sh - helpers for the accounting tests (t4xxx)
# shellcheck shell=sh

# acct_killed_record "ID|POLICY|STATE|WAIT_STATUS[|...]" POLICY: true if the
# record (fields as t/acct/records.py prints them) is of POLICY and its
# task was ended by Slurm's signal: killed by it (CANCELLED), or a shell
# (the batch script, a wrapper) that saw its child or its srun killed first
# and exited with 128 + SIGTERM or SIGKILL (FAILED, exit 143 or 137; srun
# itself exits so for a killed task).  Which of the two is a race between
# the processes Slurm signals: both were seen, here and in CI's fresh root.
acct_killed_record () {
    _akr_pol=$(echo "$1" | cut -d"|" -f2)
    _akr_st=$(echo "$1" | cut -d"|" -f3)
    _akr_ex=$(echo "$1" | cut -d"|" -f4)
    if test "$_akr_pol" != "$2"; then
        echo "acct_killed_record: policy $_akr_pol, not $2: $1" >&2
        return 1
    fi
    case $_akr_ex in
        ''|*[!0-9]*) echo "acct_killed_record: no wait status: $1" >&2
                     return 1 ;;
    esac
    case "$_akr_st:$((_akr_ex / 256))" in
        CANCELLED:*|FAILED:143|FAILED:137) return 0 ;;
    esac
    echo "acct_killed_record: not ended by Slurm's signal: $1" >&2
    return 1
}

# acct_wait_records JOURNAL FILTER... -- FIELD...: print the matching
# records of the journal directory (t/acct/records.py, at least one),
# waiting up to PIN_SLURM_TIMEOUT seconds for them: slurmstepd appends a
# step's record after srun has returned, the epilog the job's after the
# job ended, and the journal itself may not exist yet.  On timeout, says
# what was asked and what records.py last said, and fails.
acct_wait_records () {
    _awr_j=$1
    shift
    _awr_i=0
    while test $_awr_i -lt $((${PIN_SLURM_TIMEOUT:-60} * 5)); do
        if /usr/bin/python3 "$PIN_SRCDIR/t/acct/records.py" "$_awr_j" "$@" \
                >records.out 2>records.err && test -s records.out; then
            cat records.out
            return 0
        fi
        sleep 0.2
        _awr_i=$((_awr_i + 1))
    done
    echo "acct_wait_records: no record matching: $*" >&2
    cat records.err >&2
    return 1
}
