#!/bin/sh

test_description='job_submit_pin.so job_modify: an update through slurm_update_job()

Slurm 22.05 calls a job_submit plugin'"'"'s job_modify with three arguments
(job_desc, job_ptr, submit_uid); 23.02 added char **err_msg.  A plugin
built with the other signature reads a fourth argument that is not there
and, refusing an update, writes through it inside slurmctld.  Here a
helper (t/helpers/update-job) sends updates that carry a --pin-policy in
spank_job_env, good and bad, as nobody and as root, to a local slurmctld
with JobSubmitPlugins=pin: the good one is accepted, the bad one refused
with the message the user sees, and slurmctld is the same process,
alive and answering, afterwards.
'

. "$(dirname "$0")/sharness.sh"

slurm_require

UPDATE="$PIN_BUILDDIR/t/helpers/update-job"
JS_DIR="$PIN_JS_DIR"
test -r "$JS_DIR/job_submit_pin.so" && test -x "$UPDATE" && test_set_prereq JS_SO
id nobody >/dev/null 2>&1 && command -v runuser >/dev/null 2>&1 &&
    test_set_prereq NOBODY
SLURM_PLUGINDIR=$(dirname "$(find /usr/lib -name job_submit_lua.so -path '*slurm*' 2>/dev/null | head -1)")

# refused OUT ERR: the helper's stdout (OUT) and stderr (ERR) of a
# refused update.  What slurm_update_job() reports is Slurm's text for
# ESPANK_BAD_ARG on every release (the plugin returns it); from 23.02 the
# plugin's own line goes to err_msg, which libslurm may print on stderr
# and slurmctld's log has (the tests below grep the log).
refused () {
    test "$(cat "$1")" = "refused: Bad argument" || {
        echo "stdout: $(cat "$1")"; echo "stderr: $(cat "$2")"; false; }
}

# A sanitizer build (--enable-sanitizers): slurmctld loads the plugin
# only with ASan's and UBSan's runtimes first; a report of theirs (in
# san/) fails the last test.
SAN=
if grep -q "^SANITIZER_CFLAGS = .*-fsanitize" "$PIN_BUILDDIR/Makefile" 2>/dev/null; then
    # no space in these paths (ASAN_OPTIONS), unlike the trash directory's
    SAN=$(mktemp -d /tmp/pin-t3020-san.XXXXXX) || exit 1
    cleanup "rm -rf '$SAN'"
    {
        echo "#!/bin/sh"
        echo "LD_PRELOAD=$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so) \\"
        echo "ASAN_OPTIONS=detect_leaks=0:log_path=$SAN/asan \\"
        echo "UBSAN_OPTIONS=print_stacktrace=1:log_path=$SAN/ubsan \\"
        echo "exec /usr/sbin/slurmctld \"\$@\""
    } >"$SAN/slurmctld" &&
    chmod 755 "$SAN/slurmctld" &&
    LOCAL_SLURM_SLURMCTLD=$SAN/slurmctld &&
    export LOCAL_SLURM_SLURMCTLD &&
    say "sanitizer build: slurmctld runs with ASan and UBSan preloaded"
fi

cat >pin.conf <<EOF
DefaultPolicy=none
AllowedPolicies=numa-local,numa-spread,cache-shared,none
EOF

# alive: slurmctld is the process it was, answers, and lists the queue.
alive () {
    test "$(cat "$LOCAL_SLURM_DIR/run/slurmctld.pid")" = "$(cat ctld.pid)" &&
    kill -0 "$(cat ctld.pid)" &&
    scontrol ping >ping.out && grep "is UP" ping.out &&
    squeue >/dev/null
}

test_expect_success JS_SO 'start Slurm with JobSubmitPlugins=pin' '
    test -n "$SLURM_PLUGINDIR" &&
    slurm_start --pin-conf pin.conf \
        --conf-extra "PluginDir=$SLURM_PLUGINDIR:$JS_DIR" \
        --conf-extra JobSubmitPlugins=pin &&
    cp "$LOCAL_SLURM_DIR/run/slurmctld.pid" ctld.pid &&
    test -s ctld.pid
'

# submit [USER]: a held job of USER (root by default); its id in job.id.
submit () {
    if test -n "${1:-}"; then
        runuser -u "$1" -- sbatch --parsable --hold --chdir=/ -o /dev/null \
            --wrap true >job.id
    else
        sbatch --parsable --hold --chdir=/ -o /dev/null --wrap true >job.id
    fi
}

test_expect_success SLURM,JS_SO,NOBODY 'nobody: a good policy is accepted' '
    submit nobody &&
    runuser -u nobody -- "$UPDATE" "$(cat job.id)" numa-local >good.out &&
    cat good.out &&
    test "$(cat good.out)" = accepted &&
    alive
'

test_expect_success SLURM,JS_SO,NOBODY 'nobody: a policy the site does not allow is refused, slurmctld stays up' '
    for i in 1 2 3 4 5 6 7 8; do
        test_expect_code 1 runuser -u nobody -- \
            "$UPDATE" "$(cat job.id)" random >bad.out 2>bad.err &&
        cat bad.out bad.err &&
        refused bad.out bad.err &&
        alive || return 1
    done &&
    grep "pin: update of uid [0-9]* refused: --pin-policy=random: not allowed" \
        "$LOCAL_SLURM_DIR/log/slurmctld.log"
'

test_expect_success SLURM,JS_SO,NOBODY 'nobody: garbage values are refused the same way' '
    for v in numa-locl "" "$(printf "\377\376")" "numa-local,loud"; do
        test_expect_code 1 runuser -u nobody -- \
            "$UPDATE" "$(cat job.id)" "$v" >bad.out 2>bad.err &&
        cat bad.out bad.err &&
        refused bad.out bad.err &&
        alive || return 1
    done
'

test_expect_success SLURM,JS_SO 'root: good accepted, bad refused, slurmctld alive' '
    submit &&
    "$UPDATE" "$(cat job.id)" numa-spread >good.out &&
    test "$(cat good.out)" = accepted &&
    test_expect_code 1 "$UPDATE" "$(cat job.id)" random >bad.out 2>bad.err &&
    cat bad.out bad.err &&
    refused bad.out bad.err &&
    alive
'

test_expect_success SLURM,JS_SO 'slurmctld logged no memory error and still runs jobs' '
    ! grep -i -E "double free|corrupt|AddressSanitizer|runtime error|invalid pointer" \
        "$LOCAL_SLURM_DIR/log/slurmctld.log" &&
    for f in ${SAN:+"$SAN"/asan*} ${SAN:+"$SAN"/ubsan*}; do
        test -e "$f" || continue
        cat "$f"
        return 1
    done &&
    scancel -u "$(id -u nobody)" && scancel -u 0 &&
    jobid=$(sbatch --parsable --chdir=/ -o /dev/null --wrap true) &&
    slurm_wait_job "$jobid" &&
    alive
'

test_done
