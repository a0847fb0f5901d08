#!/bin/sh
# t/slurm-bin/client.sh NAME ARGS...: run Slurm's client command NAME (the
# first one in PATH after this directory) with a time limit, so that a
# client that waits forever (a step that never gets its resources, a
# controller that does not answer) fails the test with a message instead
# of hanging the suite.  The files beside it (srun, sbatch, ...) call it;
# t/sharness.d/10-slurm.sh puts this directory first in PATH.
#
# Limit: PIN_CLIENT_TIMEOUT seconds (default 3 x PIN_SLURM_TIMEOUT, 180).
# On expiry timeout(1) says "timeout: sending signal TERM to command ..."
# on stderr, kills the client (KILL 10 s later if need be) and the
# command exits with 124 (137 after KILL).  Inside a job (SLURM_JOB_ID
# set: a batch script, salloc's command) there is no limit of its own:
# the client that started the job, or the test's slurm_wait_job, bounds it.
# The shell execs timeout, so $! of a client started with & is the pid
# that forwards TERM, INT and HUP to it.
name=$1
shift
here=${0%/*}
real=
_ifs=$IFS
IFS=:
for _d in $PATH; do
    case $_d in
        ''|"$here") continue ;;
    esac
    if test -f "$_d/$name" && test -x "$_d/$name"; then
        real=$_d/$name
        break
    fi
done
IFS=$_ifs
if test -z "$real"; then
    echo "$here/$name: no $name in PATH after $here" >&2
    exit 127
fi
if test -n "${SLURM_JOB_ID:-}" || ! command -v timeout >/dev/null 2>&1; then
    exec "$real" "$@"
fi
limit=${PIN_CLIENT_TIMEOUT:-$((3 * ${PIN_SLURM_TIMEOUT:-60}))}
# On a terminal (salloc under script(1)) the client must stay in the
# terminal's foreground process group, or reading it stops it (SIGTTIN).
if test -t 0; then
    exec timeout --foreground --verbose --kill-after=10 "$limit" "$real" "$@"
fi
exec timeout --verbose --kill-after=10 "$limit" "$real" "$@"
