#!/bin/sh

test_description='accounting: slurmdbd starts on the private MariaDB of every release

local-slurm.sh --accounting starts MariaDB, makes the database
slurm_acct_db and its user, then slurmdbd.  slurmdbd must come up, answer
sacctmgr, record a job, and start again on its own database, with no failed
query in its log.  On trixie and sid (MariaDB Connector/C 3.4, libmariadb3
of MariaDB 11.8) a slurmdbd that has to make the database itself reuses the
connection handle whose connect failed and dies with error 5027
(doc/slurmdbd-mariadb.md): this file fails there if the database is not
made before slurmdbd starts.  MariaDB 11.8 also has
innodb_snapshot_isolation on by default, which makes concurrent changes of
one job fail (error 1020); Slurm requires it off.
'

. "$(dirname "$0")/sharness.sh"

# not beside the other heavy files (t/sharness.d/20-cpus.sh): MariaDB and
# slurmdbd starting starve under t5000's busy threads
cpu_heavy_exclusive || exit 1

slurm_require_accounting

T=${PIN_SLURM_TIMEOUT:-60}

# dbd_log_clean [LINE]: slurmdbd logged no failed query and no fatal
# error (from line LINE of its log on; default: the whole log)
dbd_log_clean () {
    if tail -n +"${1:-1}" "$LOCAL_SLURM_DIR/log/slurmdbd.log" |
            grep -E "mysql_query failed|mysql_real_connect failed|fatal:"; then
        echo "slurmdbd logged a database error (above)" >&2
        return 1
    fi
}

test_expect_success 'start Slurm with slurmdbd and MariaDB' '
    slurm_start --accounting
'

test_expect_success SLURM 'slurmdbd answers with the cluster, the account and root' '
    timeout "$T" sacctmgr -n -P show assoc format=cluster,account,user >assoc &&
    grep -x "pin|pin|root" assoc
'

test_expect_success SLURM 'slurmdbd logged no database error' '
    dbd_log_clean
'

test_expect_success SLURM 'a job is recorded in slurmdbd' '
    j=$(timeout "$T" sbatch --parsable --wrap true) &&
    slurm_wait_job "$j" &&
    n=$((T * 2)) &&
    until timeout "$T" sacct -j "$j" -X -n -P -o State >state &&
          grep -x COMPLETED state; do
        n=$((n - 1)) &&
        test $n -gt 0 || { echo "job $j: sacct says: $(cat state)" >&2; return 1; }
        sleep 0.5
    done
'

test_expect_success SLURM 'MariaDB runs with innodb_snapshot_isolation off' '
    sock="$LOCAL_SLURM_DIR/run/mariadb.sock" &&
    if mariadb --no-defaults -S "$sock" -uroot -N -B \
            -e "select @@global.innodb_snapshot_isolation" >iso 2>iso.err; then
        echo 0 >off &&
        test_cmp off iso
    else
        grep "Unknown system variable" iso.err
    fi
'

test_expect_success SLURM 'concurrent changes of one job all reach slurmdbd' '
    j=$(timeout "$T" sbatch --parsable --wrap true) &&
    slurm_wait_job "$j" &&
    i=0 &&
    while test $i -lt 20; do
        timeout "$T" sacctmgr -i modify job where jobid="$j" set AdminComment="a$i" >a.out 2>&1 &
        pa=$! &&
        timeout "$T" sacctmgr -i modify job where jobid="$j" set AdminComment="b$i" >b.out 2>&1 &&
        wait $pa || { cat a.out b.out >&2; return 1; }
        i=$((i + 1))
    done &&
    dbd_log_clean &&
    ! grep "Record has changed since last read" "$LOCAL_SLURM_DIR/log/slurmdbd.log"
'

test_expect_success SLURM 'slurmdbd starts again on its database' '
    "$LOCAL_SLURM" dbd-stop --dir "$LOCAL_SLURM_DIR" &&
    from=$(($(wc -l <"$LOCAL_SLURM_DIR/log/slurmdbd.log") + 1)) &&
    "$LOCAL_SLURM" dbd-start --dir "$LOCAL_SLURM_DIR" &&
    timeout "$T" sacctmgr -n -P show cluster format=cluster >clusters &&
    grep -x pin clusters &&
    dbd_log_clean $from
'

test_done
