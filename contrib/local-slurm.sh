#!/bin/bash
# contrib/local-slurm.sh - a private, throw-away Slurm cluster on this machine
#
# Starts munged, slurmctld and slurmd with their own configuration, key,
# socket, ports, state, spool, pid files and logs, all in one directory, so
# that tests and demos run real srun/sbatch without touching /etc/slurm,
# /etc/munge, the system's munged or another instance.  See doc/testing.md.
#
#   eval "$(contrib/local-slurm.sh start --dir /tmp/x)"
#   srun -c 1 grep Cpus_allowed_list /proc/self/status
#   contrib/local-slurm.sh stop --dir /tmp/x [--clean]
#
# Needs root (slurmd runs as root; munged is started as the munge user).
# Processes are identified by their command line (`-f DIR/etc/slurm.conf`,
# `--socket=DIR/munge/munge.socket`), never by name alone, so `stop` only
# ends this instance's daemons (and the slurmstepd processes whose sockets
# sit in this instance's spool directory).

prog=local-slurm
LC_ALL=C
# the daemons, runuser and munged live in sbin
PATH=/usr/sbin:/sbin:$PATH
export LC_ALL PATH

die () {
    echo "$prog: $*" >&2
    exit 1
}
say () {
    echo "$prog: $*" >&2
}

usage () {
    cat <<EOF
Usage: $0 start|stop|status|env|dbd-stop|dbd-start|ctld-restart [options]

  dbd-stop, dbd-start  stop or start again only slurmdbd of an instance
                       started with --accounting (its database stays)
  ctld-restart         stop slurmctld and start it again on its state
                       (what 'scontrol reconfigure' does from Slurm 23.11)

  --dir DIR            state directory (start: default a new mktemp dir;
                       stop/status/env: default \$LOCAL_SLURM_DIR)
  --mode MODE          affinity (proctrack/linuxproc, task/affinity; default)
                       or cgroup (proctrack/cgroup, task/cgroup,task/affinity,
                       cgroup/v2; needs a pure cgroup v2 host)
  --plugstack FILE     plugstack.conf to use (copied; @PIN_CONF@ and
                       @LOCAL_SLURM_DIR@ in it are replaced)
  --pin-conf FILE      pin.conf copied to DIR/etc/pin.conf
  --gres-conf FILE     gres.conf copied to DIR/etc/gres.conf (@LOCAL_SLURM_DIR@
                       and @NODENAME@ in it are replaced); slurm.conf gets
                       GresTypes=gpu.  Give AutoDetect=off and File= device
                       nodes (a test may mknod them in its own directory);
                       in --mode cgroup, ConstrainDevices stays no, so
                       those nodes need not be real devices.  From Slurm
                       24.11 a Cores= must cover whole sockets: with one
                       GPU per core on a 2-core machine give --sockets 2
  --node-gres GRES     Gres= of the node line(s), e.g. gpu:2 (with
                       --gres-conf; default: none)
  --conf-extra K=V     line appended to slurm.conf (repeatable; later wins)
  --cgroup-extra K=V   with --mode cgroup: a cgroup.conf line, replacing the
                       default's line of that key (repeatable; later wins),
                       e.g. ConstrainRAMSpace=yes; written before the
                       daemons start, so no reconfigure is needed
  --nodename NAME      node name (default: the short hostname)
  --nodes N            1 (default) or 2 slurmd on this machine (the second
                       node is NAME-2, with its own port and spool)
  --sockets N          tell Slurm the node has N sockets (its cores split
                       evenly over them; SlurmdParameters=config_overrides):
                       a 2-socket layout on a 1-socket test machine
  --accounting         also a private MariaDB and slurmdbd; slurm.conf gets
                       accounting_storage/slurmdbd, jobacct_gather/linux;
                       the cluster, account 'pin' and the users are added
  --acct-user USER     with --accounting: add this user too (repeatable;
                       root is always added)
  --cluster NAME       ClusterName (default: pin)
  --timeout SECS       start: wait at most this long for an idle node (60);
                       a quarter of it (at least 15) for each client command
  --grace SECS         stop: SIGTERM to SIGKILL delay (10)
  --clean              stop: also remove DIR; ctld-restart: slurmctld -c
                       (its jobs forgotten: job ids start again at 1)
  -h, --help           this text

Environment: LOCAL_SLURM_SLURMCTLD, the slurmctld to start (default: the
one in PATH; t/t3020 gives a wrapper that preloads ASan and UBSan).
EOF
}

# ---------------------------------------------------------------------
# arguments

cmd=${1:-}
case "$cmd" in
    start|stop|status|env|dbd-stop|dbd-start|ctld-restart) shift ;;
    -h|--help) usage; exit 0 ;;
    "") usage >&2; exit 1 ;;
    *) die "'$cmd': unknown command; known: start, stop, status, env, dbd-stop, dbd-start, ctld-restart" ;;
esac

opt_dir=""
opt_mode=affinity
opt_plugstack=""
opt_pinconf=""
opt_gresconf=""
opt_nodegres=""
opt_nodename=""
opt_nodes=1
opt_sockets=""
opt_accounting=no
acct_users=(root)
opt_cluster=pin
opt_timeout=60
opt_grace=10
opt_clean=no
conf_extra=()
cgroup_extra=()

need_arg () {
    [ $# -ge 2 ] || die "$1: needs a value"
}
is_uint () {
    case "$1" in
        ''|*[!0-9]*) return 1 ;;
    esac
    [ ${#1} -le 6 ]
}

while [ $# -gt 0 ]; do
    case "$1" in
        --*=*) opt=${1%%=*}; val=${1#*=}; shift; set -- "$opt" "$val" "$@" ;;
    esac
    case "$1" in
        --dir) need_arg "$@"; opt_dir=$2; shift 2 ;;
        --mode) need_arg "$@"; opt_mode=$2; shift 2 ;;
        --plugstack) need_arg "$@"; opt_plugstack=$2; shift 2 ;;
        --pin-conf) need_arg "$@"; opt_pinconf=$2; shift 2 ;;
        --gres-conf) need_arg "$@"; opt_gresconf=$2; shift 2 ;;
        --node-gres) need_arg "$@"; opt_nodegres=$2; shift 2 ;;
        --conf-extra) need_arg "$@"; conf_extra+=("$2"); shift 2 ;;
        --cgroup-extra) need_arg "$@"; cgroup_extra+=("$2"); shift 2 ;;
        --nodename) need_arg "$@"; opt_nodename=$2; shift 2 ;;
        --nodes) need_arg "$@"; opt_nodes=$2; shift 2 ;;
        --sockets) need_arg "$@"; opt_sockets=$2; shift 2 ;;
        --accounting) opt_accounting=yes; shift ;;
        --acct-user) need_arg "$@"; acct_users+=("$2"); shift 2 ;;
        --cluster) need_arg "$@"; opt_cluster=$2; shift 2 ;;
        --timeout) need_arg "$@"; opt_timeout=$2; shift 2 ;;
        --grace) need_arg "$@"; opt_grace=$2; shift 2 ;;
        --clean) opt_clean=yes; shift ;;
        -h|--help) usage; exit 0 ;;
        *) die "'$1': unknown option; known: --dir, --mode, --plugstack, --pin-conf, --gres-conf, --node-gres, --conf-extra, --cgroup-extra, --nodename, --nodes, --sockets, --accounting, --acct-user, --cluster, --timeout, --grace, --clean" ;;
    esac
done

if [ -n "$opt_nodegres" ]; then
    [[ "$opt_nodegres" =~ ^[a-z][a-z0-9_]*(:[A-Za-z0-9_.-]+)*(,[a-z][a-z0-9_]*(:[A-Za-z0-9_.-]+)*)*$ ]] \
        || die "--node-gres=$opt_nodegres: not a Gres= value (e.g. gpu:2 or gpu:tesla:2)"
    [ -n "$opt_gresconf" ] \
        || die "--node-gres=$opt_nodegres: needs --gres-conf FILE (slurmd would look for the devices itself)"
fi
if [ -n "$opt_gresconf" ] && [ ! -r "$opt_gresconf" ]; then
    die "--gres-conf=$opt_gresconf: no such readable file"
fi
case "$opt_sockets" in
    ""|[1-9]|[1-9][0-9]) ;;
    *) die "--sockets=$opt_sockets: a number of sockets, 1 to 99" ;;
esac
case "$opt_nodes" in
    1|2) ;;
    *) die "--nodes=$opt_nodes: 1 or 2 nodes are supported" ;;
esac
for u in "${acct_users[@]}"; do
    [[ "$u" =~ ^[a-z_][a-z0-9_-]{0,31}$ ]] \
        || die "--acct-user=$u: not a user name (lower-case letters, digits, '_', '-')"
done
case "$opt_mode" in
    affinity|cgroup) ;;
    *) die "--mode=$opt_mode: unknown mode; known: affinity, cgroup" ;;
esac
is_uint "$opt_timeout" && [ "$opt_timeout" -gt 0 ] \
    || die "--timeout=$opt_timeout: not a number of seconds (1-999999)"
is_uint "$opt_grace" \
    || die "--grace=$opt_grace: not a number of seconds (0-999999)"
# client commands (scontrol, sinfo, ...) get this long before we give up
client_timeout=$((opt_timeout / 4 > 15 ? opt_timeout / 4 : 15))

if [ -n "$opt_nodename" ]; then
    [[ "$opt_nodename" =~ ^[A-Za-z][A-Za-z0-9_-]{0,39}$ ]] \
        || die "--nodename=$opt_nodename: not a valid node name (a letter, then up to 39 letters, digits, '-' or '_')"
fi
[[ "$opt_cluster" =~ ^[a-z][a-z0-9_-]{0,31}$ ]] \
    || die "--cluster=$opt_cluster: not a valid cluster name (a lowercase letter, then up to 31 of a-z, 0-9, '-', '_')"
for kv in "${conf_extra[@]}"; do
    [[ "$kv" =~ ^[A-Za-z][A-Za-z0-9]*=[^$'\n']*$ ]] \
        || die "--conf-extra '$kv': not a Key=Value line (e.g. --conf-extra JobSubmitPlugins=pin)"
done
for kv in "${cgroup_extra[@]}"; do
    [[ "$kv" =~ ^[A-Za-z][A-Za-z0-9]*=[^$'\n']*$ ]] \
        || die "--cgroup-extra '$kv': not a Key=Value line (e.g. --cgroup-extra ConstrainRAMSpace=yes)"
done
((${#cgroup_extra[@]} == 0)) || [ "$opt_mode" = cgroup ] \
    || die "--cgroup-extra: only with --mode cgroup (in --mode $opt_mode Slurm constrains nothing)"

# ---------------------------------------------------------------------
# paths

# The directory holding everything.  Configs name paths through $root:
# $dir itself when its path is short and plain, else a fixed alias
# /run/local-slurm/<hash> -> $dir (unix socket paths are limited to 107
# bytes and Slurm's config files do not take spaces, e.g. sharness's
# "trash directory.t1000-...").  The alias depends only on $dir, so a
# later stop finds the processes of an earlier run even if $dir was wiped.
alias_base=/run/local-slurm

abs_path () {
    case "$1" in
        /*) printf '%s\n' "$1" ;;
        *) printf '%s\n' "$PWD/$1" ;;
    esac
}

set_paths () {
    local h
    h=$(printf '%s' "$dir" | md5sum | cut -c1-12)
    alias_path=$alias_base/$h
    if [[ "$dir" =~ ^/[A-Za-z0-9._/+-]*$ ]] && [ ${#dir} -le 48 ]; then
        root=$dir
    else
        root=$alias_path
    fi
    conf=$root/etc/slurm.conf      # as the daemons and exports name it
    dconf=$dir/etc/slurm.conf      # the same file, for reading and clients
    # munged refuses a key, socket or log below a directory that is not
    # owned by root/munge or is writable by others (a build tree in a
    # user's home, a world-writable /tmp subdirectory): its files live in
    # /run/local-slurm/<hash>.munge, and $dir/munge links there.
    mdir=$alias_base/$h.munge
    sock=$mdir/munge.socket
    # pin.so's journal (JournalDir=) must be a real path without a
    # symbolic link or a space: in $dir when $dir is plain, else in
    # /run/local-slurm/<hash>.journal, copied into $dir/journal at stop.
    if [ "$root" = "$dir" ]; then
        jdir=$dir/journal
    else
        jdir=$alias_base/$h.journal
    fi
    marker=$dir/.local-slurm
}

# ---------------------------------------------------------------------
# processes

# These run for every process on every scan: builtins only, no forks (in
# the qemu guest a fork costs ~20x more).

# proc_has_arg PID ARG: PID's command line has argument ARG (exactly).
proc_has_arg () {
    local a args=()
    { mapfile -d '' -t args <"/proc/$1/cmdline"; } 2>/dev/null || return 1
    for a in "${args[@]}"; do
        [ "$a" = "$2" ] && return 0
    done
    return 1
}

# proc_has_env PID VAR=VALUE: PID's environment has exactly that entry
# (slurmdbd takes no config option: it finds slurmdbd.conf beside
# $SLURM_CONF, so its environment names the instance).
proc_has_env () {
    local a args=()
    { mapfile -d '' -t args <"/proc/$1/environ"; } 2>/dev/null || return 1
    for a in "${args[@]}"; do
        [ "$a" = "$2" ] && return 0
    done
    return 1
}

# proc_alive PID: running and not a zombie.
proc_alive () {
    local line st
    { read -r line <"/proc/$1/stat"; } 2>/dev/null || return 1
    st=${line##*) }
    st=${st%% *}
    [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# proc_starttime PID: set REPLY to PID's start time (field 22 of stat).
proc_starttime () {
    local line f
    { read -r line <"/proc/$1/stat"; } 2>/dev/null || return 1
    read -r -a f <<<"${line##*) }"
    REPLY=${f[19]:-}
    [ -n "$REPLY" ]
}

# proc_is PID NAME: PID's command name (comm) is NAME.
proc_is () {
    local c
    { read -r c <"/proc/$1/comm"; } 2>/dev/null || return 1
    [ "$c" = "$2" ]
}

# is_ours NAME PID [ROOT...]: PID is daemon NAME of this instance.
is_ours () {
    local name=$1 pid=$2 r
    shift 2
    is_uint "$pid" || return 1
    proc_is "$pid" "$name" || return 1
    proc_alive "$pid" || return 1
    for r in "$@"; do
        case "$name" in
            munged)
                proc_has_arg "$pid" "--socket=$sock" && return 0
                # (versions before the move to /run/local-slurm)
                proc_has_arg "$pid" "--socket=$r/munge/munge.socket" && return 0 ;;
            slurmdbd) proc_has_env "$pid" "SLURM_CONF=$r/etc/slurm.conf" && return 0 ;;
            mariadbd) proc_has_arg "$pid" "--datadir=$r/db" && return 0 ;;
            *) proc_has_arg "$pid" "$r/etc/slurm.conf" && return 0 ;;
        esac
    done
    return 1
}

# find_daemons NAME: pids of daemon NAME of this instance (pid file first,
# then a scan of /proc for processes whose pid file is lost).
find_daemons () {
    local name=$1 p pid r
    {
        for p in "$dir/run/$name.pid" "$alias_path/run/$name.pid" "$mdir/$name.pid"; do
            [ -r "$p" ] && read -r pid <"$p" 2>/dev/null \
                && is_ours "$name" "$pid" "$dir" "$alias_path" && echo "$pid"
        done
        for p in /proc/[0-9]*; do
            pid=${p#/proc/}
            proc_is "$pid" "$name" || continue
            is_ours "$name" "$pid" "$dir" "$alias_path" && echo "$pid"
        done
    } | sort -un
}

# find_stepds: pids of slurmstepd processes listening on a socket in this
# instance's spool directory.
find_stepds () {
    local inodes r pid link
    inodes=" $(
        for r in "$dir" "$alias_path"; do
            awk -v pre="$r/spool/" \
                'NR > 1 && index($8, pre) == 1 { print "socket:[" $7 "]" }' /proc/net/unix
        done | sort -u | paste -sd' ') "
    [ -n "${inodes// /}" ] || return 0
    for pid in /proc/[0-9]*; do
        pid=${pid#/proc/}
        proc_is "$pid" slurmstepd || continue
        # fd targets with spaces split into words: harmless, only exact
        # "socket:[inode]" words match.
        # shellcheck disable=SC2044
        for link in $(find "/proc/$pid/fd" -maxdepth 1 -type l -printf '%l\n' 2>/dev/null); do
            case "$inodes" in
                *" $link "*) echo "$pid"; break ;;
            esac
        done
    done
}

# descendants PID...: the given pids and all their descendants.
descendants () {
    ps -e -o pid= -o ppid= 2>/dev/null | awk -v roots="$*" '
        BEGIN { n = split(roots, r, " "); for (i = 1; i <= n; i++) keep[r[i]] = 1 }
        { parent[$1] = $2; pids[NR] = $1 }
        END {
            do {
                changed = 0
                for (i in pids) {
                    p = pids[i]
                    if (!(p in keep) && (parent[p] in keep)) { keep[p] = 1; changed = 1 }
                }
            } while (changed)
            for (p in keep) print p
        }'
}

# terminate WHAT PID...: SIGTERM, wait up to the grace period, SIGKILL,
# wait again (bounded).  Returns 1 if something survived.
terminate () {
    local what=$1 pid left deadline
    shift
    [ $# -gt 0 ] || return 0
    kill -TERM "$@" 2>/dev/null
    deadline=$((SECONDS + opt_grace))
    while :; do
        left=()
        for pid in "$@"; do
            proc_alive "$pid" && left+=("$pid")
        done
        [ ${#left[@]} -eq 0 ] && return 0
        [ $SECONDS -ge $deadline ] && break
        sleep 0.2
    done
    say "$what did not exit within ${opt_grace}s: SIGKILL to ${left[*]}"
    kill -KILL "${left[@]}" 2>/dev/null
    deadline=$((SECONDS + 10))
    while [ $SECONDS -lt $deadline ]; do
        left=()
        for pid in "$@"; do
            proc_alive "$pid" && left+=("$pid")
        done
        [ ${#left[@]} -eq 0 ] && return 0
        sleep 0.2
    done
    say "$what still running after SIGKILL: ${left[*]}"
    return 1
}

# exec_clean CMD...: (in a subshell) close every descriptor beyond stdio,
# then exec CMD from /.
exec_clean () {
    local fd
    for fd in "/proc/$BASHPID"/fd/*; do
        fd=${fd##*/}
        [ "$fd" -gt 2 ] && eval "exec $fd>&-"
    done
    cd / && exec "$@"
}

# launch LOG CMD...: run CMD (which daemonizes itself) with no inherited
# descriptors beyond stdio, so no test harness pipe is held open.
launch () {
    local log=$1
    shift
    ( exec_clean "$@" ) </dev/null >>"$log" 2>&1
}

# launch_bg LOG CMD...: the same for a CMD that stays in the foreground
# (mariadbd): the background subshell execs it, so no shell of ours (with
# the instance's lock open) stays behind.
launch_bg () {
    local log=$1
    shift
    ( exec_clean "$@" ) </dev/null >>"$log" 2>&1 &
}

# ---------------------------------------------------------------------
# stop

slurm_up () {
    SLURM_CONF=$dconf timeout "$client_timeout" scontrol ping 2>/dev/null | grep -q ' is UP'
}

do_stop () {
    local rc=0 ids stepds deadline p t tasks="" alive=""
    # The steps' processes now, as pid:starttime (a pid alone may be reused
    # by the time it is checked): slurmstepd kills its tasks when the job is
    # cancelled, but may exit before they are gone (seen in the qemu guest).
    stepds=$(find_stepds)
    if [ -n "$stepds" ]; then
        # shellcheck disable=SC2086
        for p in $(descendants $stepds); do
            proc_starttime "$p" && tasks="$tasks $p:$REPLY"
        done
    fi
    if [ -r "$dconf" ] && slurm_up; then
        ids=$(SLURM_CONF=$dconf timeout "$client_timeout" squeue -h -o %A 2>/dev/null)
        if [ -n "$ids" ]; then
            say "cancelling jobs $(printf '%s\n' "$ids" | paste -sd' ')"
            # shellcheck disable=SC2086
            SLURM_CONF=$dconf timeout "$client_timeout" scancel $ids 2>/dev/null
            deadline=$((SECONDS + opt_grace))
            while [ $SECONDS -lt $deadline ] && [ -n "$(find_stepds)" ]; do
                sleep 0.2
            done
        fi
    fi
    # Pid lists are numbers only: unquoted expansion is safe (and no
    # process substitution: the qemu guest has no /dev/fd).
    # shellcheck disable=SC2046
    terminate slurmd $(find_daemons slurmd) || rc=1
    # shellcheck disable=SC2046
    terminate slurmctld $(find_daemons slurmctld) || rc=1
    stepds=$(find_stepds)
    if [ -n "$stepds" ]; then
        say "ending leftover steps: slurmstepd $(printf '%s\n' "$stepds" | paste -sd' ') and their tasks"
        # shellcheck disable=SC2046,SC2086
        terminate "job steps" $(descendants $stepds) || rc=1
    fi
    for t in $tasks; do
        p=${t%%:*}
        proc_starttime "$p" && [ "$REPLY" = "${t#*:}" ] && proc_alive "$p" \
            && alive="$alive $p"
    done
    # shellcheck disable=SC2086
    terminate "job tasks" $alive || rc=1
    # accounting (--accounting): slurmdbd, then its database
    # shellcheck disable=SC2046
    terminate slurmdbd $(find_daemons slurmdbd) || rc=1
    # shellcheck disable=SC2046
    terminate mariadbd $(find_daemons mariadbd) || rc=1
    # shellcheck disable=SC2046
    terminate munged $(find_daemons munged) || rc=1
    if [ $rc -eq 0 ]; then
        rm -f "$dir"/run/*.pid 2>/dev/null
        if [ -d "$mdir" ]; then
            # keep munged's log with the others
            [ -d "$dir/log" ] && [ -f "$mdir/munged.log" ] \
                && cp -f "$mdir/munged.log" "$dir/log/munged.log"
            rm -rf "$mdir"
        fi
        [ -L "$dir/munge" ] && rm -f "$dir/munge"
        if [ "$jdir" != "$dir/journal" ] && [ -d "$jdir" ]; then
            # keep the journal with the instance (readers: --journal DIR)
            if [ -d "$dir" ]; then
                rm -rf "${dir:?}/journal"
                cp -a "$jdir" "$dir/journal"
            fi
            rm -rf "$jdir"
        fi
        if [ -L "$alias_path" ] && [ "$(readlink "$alias_path")" = "$dir" ]; then
            rm -f "$alias_path"
        fi
    fi
    return $rc
}

cmd_stop () {
    [ -n "$opt_dir" ] || opt_dir=${LOCAL_SLURM_DIR:-}
    [ -n "$opt_dir" ] || die "stop: which instance? give --dir DIR (or set LOCAL_SLURM_DIR)"
    dir=$(abs_path "$opt_dir")
    [ -d "$dir" ] && dir=$(cd "$dir" && pwd -P)
    set_paths
    if [ -e "$marker" ]; then
        exec 9>>"$dir/.lock" || die "$dir: cannot open lock file"
        flock -w "$((opt_grace + 30))" 9 \
            || die "$dir: another local-slurm command holds the lock"
    fi
    do_stop || die "$dir: some processes of this instance could not be stopped"
    if [ "$opt_clean" = yes ] && [ -d "$dir" ]; then
        [ -e "$marker" ] || die "--clean: $dir has no $marker; not removing a directory local-slurm did not create"
        rm -rf -- "$dir"
    fi
    return 0
}

# ---------------------------------------------------------------------
# status and env

print_env () {
    local node j
    node=$(sed -n 's/^NodeName=\([^ ]*\) .*/\1/p' "$dconf" | head -n1)
    # One export per line, each ending in ';', so that both
    # eval "$(local-slurm.sh start)" and eval $(local-slurm.sh start) work.
    printf "export SLURM_CONF='%s';\n" "$conf"
    printf "export LOCAL_SLURM_DIR='%s';\n" "$dir"
    printf "export LOCAL_SLURM_NODE='%s';\n" "$node"
    # where pin.so writes its journal (pin.conf's JournalDir=)
    j=$(sed -n 's/^[[:space:]]*[Jj][Oo][Uu][Rr][Nn][Aa][Ll][Dd][Ii][Rr][[:space:]]*=[[:space:]]*\([^#[:space:]]*\).*/\1/p' \
        "$dir/etc/pin.conf" 2>/dev/null | tail -n1)
    printf "export LOCAL_SLURM_JOURNAL='%s';\n" "${j:-$jdir}"
}

open_existing () {
    [ -n "$opt_dir" ] || opt_dir=${LOCAL_SLURM_DIR:-}
    [ -n "$opt_dir" ] || die "$cmd: which instance? give --dir DIR (or set LOCAL_SLURM_DIR)"
    [ -d "$opt_dir" ] || die "$cmd: $opt_dir: no such directory"
    dir=$(cd "$opt_dir" && pwd -P)
    [ -e "$dir/.local-slurm" ] || die "$cmd: $dir: not a local-slurm directory (no .local-slurm)"
    set_paths
    [ -r "$dconf" ] || die "$cmd: $dconf: not readable (was the instance started?)"
}

cmd_env () {
    open_existing
    print_env
}

cmd_status () {
    local name pids n=0 up=0 port
    open_existing
    echo "dir: $dir"
    [ "$root" != "$dir" ] && echo "alias: $root"
    echo "conf: $conf"
    echo "munge: $mdir"
    names="munged slurmctld slurmd"
    [ -r "$dir/etc/slurmdbd.conf" ] && names="$names slurmdbd mariadbd"
    for name in $names; do
        n=$((n + 1))
        pids=$(find_daemons "$name" | tr '\n' ' ')
        if [ -n "$pids" ]; then
            up=$((up + 1))
            echo "$name: running, pid ${pids% }"
        else
            echo "$name: not running"
        fi
    done
    port=$(sed -n 's/^SlurmctldPort=//p' "$dconf")
    echo "ports: slurmctld $port, slurmd $(sed -n 's/^SlurmdPort=//p' "$dconf")"
    if [ $up -gt 0 ] && slurm_up; then
        echo "scontrol ping: UP"
        SLURM_CONF=$dconf timeout "$client_timeout" sinfo -N -h -o 'node %N: %t' 2>/dev/null
        SLURM_CONF=$dconf timeout "$client_timeout" squeue -h -o 'job %A %T %j' 2>/dev/null
    fi
    [ $up -eq $n ] && return 0
    [ $up -eq 0 ] && return 3
    return 1
}

# ---------------------------------------------------------------------
# start

# free_port_pair: print P such that TCP ports P to P+4 are unused on
# every address (P slurmctld, P+1 slurmd, P+2 a second slurmd, P+3
# slurmdbd, P+4 MariaDB).  Drawn at random below the ephemeral range, away from
# Slurm's defaults, so two instances started together rarely collide (and
# a collision is retried, see cmd_start).
used_ports () {
    local f addr
    for f in /proc/net/tcp /proc/net/tcp6; do
        [ -r "$f" ] || continue
        while read -r _ addr _; do
            case "$addr" in
                *:*) echo $((16#${addr##*:})) ;;
            esac
        done <"$f"
    done
}
free_port_pair () {
    local used i p k ok
    used=" $(used_ports | sort -un | tr '\n' ' ') "
    for ((i = 0; i < 200; i++)); do
        p=$(( $(od -An -N2 -tu2 /dev/urandom) % 11000 * 2 + 10000 ))
        ok=yes
        for ((k = 0; k < 5; k++)); do
            case "$used" in
                *" $((p + k)) "*) ok=no; break ;;
            esac
        done
        [ $ok = yes ] || continue
        echo "$p"
        return 0
    done
    return 1
}

# node_line: the NodeName line for this machine from `slurmd -C`, with
# RealMemory lowered by 5% so the node never registers with less.
node_line () {
    local line key val out="" mem=""
    line=$(slurmd -C 2>/dev/null | grep '^NodeName=' | head -n1)
    [ -n "$line" ] || return 1
    for kv in $line; do
        key=${kv%%=*}
        val=${kv#*=}
        case "$key" in
            CPUs|Boards|SocketsPerBoard|CoresPerSocket|ThreadsPerCore)
                is_uint "$val" || return 1
                out="$out $key=$val" ;;
            RealMemory)
                is_uint "$val" || return 1
                mem=$((val - val / 20))
                [ "$mem" -ge 1 ] || mem=1 ;;
        esac
    done
    [ -n "$out" ] && [ -n "$mem" ] || return 1
    if [ -n "$opt_sockets" ]; then
        # the same cores, told to Slurm as --sockets sockets
        local boards=1 sockets=1 cores=1 threads=1 total
        for kv in $out; do
            case "${kv%%=*}" in
                Boards) boards=${kv#*=} ;;
                SocketsPerBoard) sockets=${kv#*=} ;;
                CoresPerSocket) cores=${kv#*=} ;;
                ThreadsPerCore) threads=${kv#*=} ;;
            esac
        done
        total=$((boards * sockets * cores))
        if [ $((total % opt_sockets)) -ne 0 ]; then
            echo "local-slurm: --sockets=$opt_sockets: this machine's $total cores do not split evenly" >&2
            return 1
        fi
        out=" CPUs=$((total * threads)) Boards=1 SocketsPerBoard=$opt_sockets CoresPerSocket=$((total / opt_sockets)) ThreadsPerCore=$threads"
    fi
    echo "NodeHostname=$host NodeAddr=127.0.0.1$out RealMemory=$mem State=UNKNOWN"
}

# node_names: the node names of this instance, one per line.
node_names () {
    echo "$nodename"
    [ "$opt_nodes" -ge 2 ] && echo "$nodename-2"
    return 0
}

write_slurm_conf () {
    local tmp=$conf.tmp kv i n
    {
        echo "# Written by contrib/local-slurm.sh for a private test cluster."
        echo "# Regenerated on every start; use --conf-extra to change it."
        echo "ClusterName=$opt_cluster"
        echo "SlurmctldHost=$host(127.0.0.1)"
        echo "SlurmctldPort=$port"
        echo "SlurmdPort=$((port + 1))"
        echo "SlurmUser=root"
        echo "SlurmdUser=root"
        echo "AuthType=auth/munge"
        echo "CredType=cred/munge"
        echo "AuthInfo=socket=$sock"
        echo "StateSaveLocation=$root/state"
        if [ "$opt_nodes" -ge 2 ]; then
            echo "SlurmdSpoolDir=$root/spool/%n"
        else
            echo "SlurmdSpoolDir=$root/spool"
        fi
        echo "SlurmctldPidFile=$root/run/slurmctld.pid"
        if [ "$opt_nodes" -ge 2 ]; then
            # one slurmd per node: %n is the node name (slurmd -N)
            echo "SlurmdPidFile=$root/run/slurmd-%n.pid"
        else
            echo "SlurmdPidFile=$root/run/slurmd.pid"
        fi
        echo "SlurmctldLogFile=$root/log/slurmctld.log"
        if [ "$opt_nodes" -ge 2 ]; then
            echo "SlurmdLogFile=$root/log/slurmd-%n.log"
        else
            echo "SlurmdLogFile=$root/log/slurmd.log"
        fi
        echo "SlurmctldDebug=info"
        echo "SlurmdDebug=info"
        echo "PlugStackConfig=$root/etc/plugstack.conf"
        if [ "$opt_mode" = cgroup ]; then
            echo "ProctrackType=proctrack/cgroup"
            echo "TaskPlugin=task/cgroup,task/affinity"
        else
            echo "ProctrackType=proctrack/linuxproc"
            echo "TaskPlugin=task/affinity"
        fi
        echo "SelectType=select/cons_tres"
        echo "SelectTypeParameters=CR_Core"
        echo "SchedulerType=sched/backfill"
        [ -n "$opt_gresconf" ] && echo "GresTypes=gpu"
        if [ "$opt_accounting" = yes ]; then
            echo "AccountingStorageType=accounting_storage/slurmdbd"
            echo "AccountingStorageHost=127.0.0.1"
            echo "AccountingStoragePort=$dbd_port"
            # the munge socket for the connections to slurmdbd (slurm.conf(5))
            echo "AccountingStoragePass=$sock"
            echo "JobAcctGatherType=jobacct_gather/linux"
            echo "JobAcctGatherFrequency=30"
        else
            echo "AccountingStorageType=accounting_storage/none"
            echo "JobAcctGatherType=jobacct_gather/none"
        fi
        echo "JobCompType=jobcomp/none"
        echo "MailProg=/bin/true"
        echo "MpiDefault=none"
        echo "SwitchType=switch/none"
        echo "ReturnToService=2"
        echo "SlurmdTimeout=300"
        echo "SlurmctldTimeout=120"
        echo "MessageTimeout=$msg_timeout"
        echo "InactiveLimit=0"
        echo "KillWait=5"
        echo "MinJobAge=3600"
        echo "Waittime=0"
        i=0
        for n in $(node_names); do
            # the first node listens on SlurmdPort, the others on the
            # ports after the pair (free_port_block reserved them)
            if [ $i -eq 0 ]; then
                echo "NodeName=$n $nodeline${opt_nodegres:+ Gres=$opt_nodegres}"
            else
                echo "NodeName=$n Port=$((port + 1 + i)) $nodeline${opt_nodegres:+ Gres=$opt_nodegres}"
            fi
            i=$((i + 1))
        done
        echo "PartitionName=debug Nodes=$(node_names | paste -sd,) Default=YES MaxTime=INFINITE State=UP"
        [ -n "$opt_sockets" ] && echo "SlurmdParameters=config_overrides"
        if [ ${#conf_extra[@]} -gt 0 ]; then
            echo "# --conf-extra"
            for kv in "${conf_extra[@]}"; do
                echo "$kv"
            done
        fi
    } >"$tmp" && mv -f "$tmp" "$conf"
}

write_configs () {
    local esc_pin esc_dir
    write_slurm_conf || die "$conf: cannot write"
    if [ "$opt_mode" = cgroup ]; then
        cat >"$root/etc/cgroup.conf" <<EOF || die "$root/etc/cgroup.conf: cannot write"
# Written by contrib/local-slurm.sh (--mode cgroup).
CgroupPlugin=cgroup/v2
CgroupMountpoint=/sys/fs/cgroup
IgnoreSystemd=yes
ConstrainCores=yes
ConstrainRAMSpace=no
ConstrainDevices=no
EOF
        # --cgroup-extra K=V: replaces the line of key K, else appended
        for kv in "${cgroup_extra[@]}"; do
            tmpcg=$(mktemp "$root/etc/.cgroup.conf.XXXXXX") || die "$root/etc: cannot write"
            awk -v key="${kv%%=*}" -v line="$kv" '
                BEGIN { done = 0 }
                { k = $0; sub(/=.*/, "", k)
                  if (tolower(k) == tolower(key)) { if (!done) print line; done = 1; next }
                  print }
                END { if (!done) print line }' "$root/etc/cgroup.conf" >"$tmpcg" \
                && mv -f "$tmpcg" "$root/etc/cgroup.conf" \
                || die "$root/etc/cgroup.conf: cannot write"
        done
    elif v2_without_dbus; then
        cat >"$root/etc/cgroup.conf" <<EOF || die "$root/etc/cgroup.conf: cannot write"
# Written by contrib/local-slurm.sh (--mode affinity on a cgroup v2 host
# without systemd): slurmd loads its cgroup plugin anyway; nothing is
# constrained, IgnoreSystemd=yes lets it make its scope without dbus.
CgroupPlugin=cgroup/v2
CgroupMountpoint=/sys/fs/cgroup
IgnoreSystemd=yes
ConstrainCores=no
ConstrainRAMSpace=no
ConstrainDevices=no
EOF
    else
        rm -f "$root/etc/cgroup.conf"
    fi
    if [ -n "$opt_pinconf" ]; then
        cp -- "$opt_pinconf" "$root/etc/pin.conf" || die "--pin-conf=$opt_pinconf: cannot copy"
    else
        echo "# pin.conf of a local-slurm instance (no --pin-conf): defaults" >"$root/etc/pin.conf"
    fi
    # Accounting records of this instance stay in it, never in the host's
    # /var/lib/slurm-pin (unless the given pin.conf names a JournalDir).
    # (Without slurmdbd pin.so delivers nothing by itself: no DeliverCommand
    # is needed here.)
    if ! grep -qi '^[[:space:]]*JournalDir[[:space:]]*=' "$root/etc/pin.conf"; then
        echo "JournalDir=$jdir" >>"$root/etc/pin.conf"
    fi
    if [ -n "$opt_gresconf" ]; then
        # $root and the node name only hold [A-Za-z0-9._/+-]: safe in sed.
        sed -e "s|@LOCAL_SLURM_DIR@|$root|g" -e "s|@NODENAME@|$nodename|g" \
            -- "$opt_gresconf" >"$root/etc/gres.conf" \
            || die "--gres-conf=$opt_gresconf: cannot copy"
    else
        rm -f "$root/etc/gres.conf"
    fi
    if [ -n "$opt_plugstack" ]; then
        # $root only holds [A-Za-z0-9._/+-]: safe in a sed replacement.
        esc_pin=$root/etc/pin.conf
        esc_dir=$root
        sed -e "s|@PIN_CONF@|$esc_pin|g" -e "s|@LOCAL_SLURM_DIR@|$esc_dir|g" \
            -- "$opt_plugstack" >"$root/etc/plugstack.conf" \
            || die "--plugstack=$opt_plugstack: cannot copy"
    else
        echo "# plugstack.conf of a local-slurm instance (no --plugstack): empty" \
            >"$root/etc/plugstack.conf"
    fi
}

setup_munge () {
    local key=$mdir/munge.key
    rm -rf "$mdir" "${dir:?}/munge"
    install -d -m 0755 -o munge -g "$munge_group" "$mdir" \
        || die "$mdir: cannot create"
    ln -s "$mdir" "$dir/munge" || die "$dir/munge: cannot link to $mdir"
    (umask 077 && dd if=/dev/urandom of="$key" bs=1024 count=1 2>/dev/null) \
        || die "$key: cannot create the munge key"
    chown munge:"$munge_group" "$key" && chmod 0400 "$key" \
        || die "$key: cannot give it to the munge user"
}

start_munged () {
    local deadline
    launch "$dir/log/start.log" runuser -u munge -- "$munged_bin" \
        --socket="$sock" --key-file="$mdir/munge.key" \
        --pid-file="$mdir/munged.pid" --log-file="$mdir/munged.log" \
        --seed-file="$mdir/munged.seed" \
        || { start_failed "munged did not start"; return 1; }
    deadline=$((SECONDS + opt_timeout))
    until [ -S "$sock" ] && [ -n "$(find_daemons munged)" ]; do
        [ $SECONDS -ge $deadline ] && { start_failed "munged: no socket $sock after ${opt_timeout}s"; return 1; }
        sleep 0.2
    done
    if command -v munge >/dev/null && command -v unmunge >/dev/null; then
        munge -n -S "$sock" 2>>"$dir/log/start.log" | unmunge -S "$sock" >/dev/null 2>>"$dir/log/start.log" \
            || { start_failed "munged: a credential did not round-trip through $sock"; return 1; }
    fi
    return 0
}

# wait_daemon NAME: until NAME's pid file names a live process of ours
# (the daemon forked before its parent returned: if no process of ours
# is left, it died).
wait_daemon () {
    local name=$1 pidf=$root/run/${2:-$1}.pid deadline pid
    deadline=$((SECONDS + opt_timeout))
    while :; do
        pid=$(cat "$pidf" 2>/dev/null)
        is_ours "$name" "$pid" "$root" && return 0
        if [ -z "$(find_daemons "$name")" ]; then
            sleep 0.5
            pid=$(cat "$pidf" 2>/dev/null)
            is_ours "$name" "$pid" "$root" && return 0
            return 1
        fi
        [ $SECONDS -ge $deadline ] && return 1
        sleep 0.2
    done
}

show_logs () {
    local f
    for f in "$dir/log/start.log" "$mdir/munged.log" \
             "$dir/log/slurmctld.log" "$dir"/log/slurmd*.log \
             "$dir/log/slurmdbd.log" "$dir/log/mariadb.log"; do
        [ -s "$f" ] || continue
        echo "---- last lines of $f" >&2
        tail -n 15 "$f" >&2
    done
}

start_failed () {
    say "start failed: $*"
    show_logs
}

port_clash () {
    grep -qs 'Address already in use' "$dir/log/slurmctld.log" "$dir"/log/slurmd*.log \
        "$dir/log/start.log" "$dir/log/slurmdbd.log" "$dir/log/mariadb.log"
}

node_state () {
    SLURM_CONF=$dconf timeout "$client_timeout" sinfo -h -N -n "$1" -o %t 2>/dev/null | head -n1
}

# start_slurm: slurmctld + slurmd, then wait for an idle node.
# Returns 0, 1 (failed), 2 (failed on a port clash: worth a retry).
start_slurm () {
    local deadline state reason n pidname idle
    launch "$dir/log/start.log" "$slurmctld_bin" -f "$conf"
    if ! wait_daemon slurmctld; then
        port_clash && return 2
        start_failed "slurmctld did not start"
        return 1
    fi
    for n in $(node_names); do
        launch "$dir/log/start.log" "$slurmd_bin" -f "$conf" -N "$n"
        pidname=slurmd
        [ "$opt_nodes" -ge 2 ] && pidname=slurmd-$n
        if ! wait_daemon slurmd "$pidname"; then
            port_clash && return 2
            start_failed "slurmd -N $n did not start"
            return 1
        fi
    done
    deadline=$((SECONDS + opt_timeout))
    state=""
    while :; do
        for d in munged slurmctld slurmd $acct_daemons; do
            if [ -z "$(find_daemons $d)" ]; then
                port_clash && return 2
                start_failed "$d exited during start"
                return 1
            fi
        done
        if [ "$(find_daemons slurmd | wc -l)" -lt "$opt_nodes" ]; then
            port_clash && return 2
            start_failed "a slurmd exited during start"
            return 1
        fi
        if slurm_up; then
            idle=0
            for n in $(node_names); do
                state=$(node_state "$n")
                case "$state" in
                    idle) idle=$((idle + 1)) ;;
                    inval|drain|drain\*|drng|fail|fail\*)
                        reason=$(SLURM_CONF=$dconf scontrol show node "$n" 2>/dev/null \
                            | sed -n 's/^ *Reason=//p')
                        start_failed "node $n is '$state' (Reason=$reason); check the NodeName line in $conf against 'slurmd -C'"
                        return 1 ;;
                esac
            done
            [ $idle -eq "$opt_nodes" ] && return 0
        fi
        if [ $SECONDS -ge $deadline ]; then
            if [ -z "$state" ]; then
                start_failed "scontrol ping: slurmctld not UP after ${opt_timeout}s (--timeout)"
            else
                start_failed "node $nodename still '$state', not idle, after ${opt_timeout}s (--timeout)"
            fi
            return 1
        fi
        sleep 0.5
    done
}

# ---------------------------------------------------------------------
# accounting (--accounting): a private MariaDB and slurmdbd
#
# MariaDB runs as root (--user=root) on a datadir made for this start by
# mariadb-install-db in DIR/db, with its own socket, pid file, log and a
# TCP port on 127.0.0.1 only; --no-defaults keeps /etc/mysql out of it and
# nothing under /var/lib/mysql is touched.  slurmdbd finds its
# slurmdbd.conf beside $SLURM_CONF (that is how Slurm looks it up), so it
# is started with SLURM_CONF in its environment, which is also how stop
# recognizes it.

db_sql () {
    timeout "$client_timeout" "$mariadb_bin" --no-defaults -S "$root/run/mariadb.sock" \
        -uroot "$@"
}

start_mariadb () {
    local deadline
    rm -rf "${dir:?}/db"
    "$installdb_bin" --no-defaults --datadir="$root/db" --user=root \
        --auth-root-authentication-method=socket --skip-test-db \
        >>"$dir/log/start.log" 2>&1 \
        || { start_failed "mariadb-install-db failed (see $dir/log/start.log)"; return 1; }
    launch_bg "$dir/log/start.log" "$mariadbd_bin" --no-defaults --datadir="$root/db" \
        --user=root --socket="$root/run/mariadb.sock" --port="$db_port" \
        --bind-address=127.0.0.1 --pid-file="$root/run/mariadbd.pid" \
        --log-error="$root/log/mariadb.log" --skip-name-resolve \
        --innodb-buffer-pool-size=32M --innodb-log-file-size=16M \
        --innodb-flush-log-at-trx-commit=2
    deadline=$((SECONDS + opt_timeout))
    until db_sql -e 'select 1' >/dev/null 2>&1; do
        if [ $SECONDS -ge $deadline ]; then
            port_clash && return 2
            start_failed "mariadbd did not answer on $root/run/mariadb.sock within ${opt_timeout}s"
            return 1
        fi
        sleep 0.2
    done
    # innodb_snapshot_isolation (MariaDB 10.6.18, 10.11.8, 11.x; ON by
    # default from 11.6.2, so in trixie and sid) makes a write to a row
    # that another transaction changed fail with error 1020 (ER_CHECKREAD):
    # slurmdbd then loses the change (24.11) or exits (26.05.3 and later).
    # Slurm's accounting page: "Set this to OFF".  Servers without the
    # variable (MySQL, older MariaDB) behave as OFF.
    if db_sql -N -e 'SELECT @@global.innodb_snapshot_isolation' >/dev/null 2>&1; then
        db_sql -e 'SET GLOBAL innodb_snapshot_isolation=OFF' >>"$dir/log/start.log" 2>&1 \
            || { start_failed "cannot set innodb_snapshot_isolation=OFF"; return 1; }
    fi
    # The database is made here, before slurmdbd's first connection: when
    # slurmdbd finds no database it makes one and connects again on the
    # MYSQL handle whose connection failed, and MariaDB Connector/C 3.4
    # (libmariadb3 of MariaDB 11.x: trixie, sid) has then lost its default
    # column limit, so every query fails with error 5027 and slurmdbd
    # exits (fatal: _check_mysql_concat_is_sane).  doc/slurmdbd-mariadb.md
    db_sql -e "CREATE DATABASE slurm_acct_db;
               CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY '$db_pass';
               CREATE USER 'slurm'@'localhost' IDENTIFIED BY '$db_pass';
               GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';
               GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';" \
        >>"$dir/log/start.log" 2>&1 \
        || { start_failed "cannot create the database slurm_acct_db and its user slurm"; return 1; }
}

write_dbd_conf () {
    local f=$dir/etc/slurmdbd.conf
    {
        echo "# Written by contrib/local-slurm.sh (--accounting); 0600: it holds"
        echo "# the database password."
        echo "AuthType=auth/munge"
        echo "AuthInfo=socket=$sock"
        echo "DbdHost=localhost"
        echo "DbdAddr=127.0.0.1"
        echo "DbdPort=$dbd_port"
        echo "SlurmUser=root"
        echo "PidFile=$root/run/slurmdbd.pid"
        echo "LogFile=$root/log/slurmdbd.log"
        echo "DebugLevel=info"
        echo "StorageType=accounting_storage/mysql"
        echo "StorageHost=127.0.0.1"
        echo "StoragePort=$db_port"
        echo "StorageUser=slurm"
        echo "StoragePass=$db_pass"
        echo "StorageLoc=slurm_acct_db"
    } | (umask 077 && cat >"$f.tmp") && mv -f "$f.tmp" "$f" || die "$f: cannot write"
}

dbd_up () {
    SLURM_CONF=$dconf timeout "$client_timeout" sacctmgr -n -P show cluster format=cluster \
        >/dev/null 2>&1
}

# start_slurmdbd: start it and wait until sacctmgr gets an answer.
start_slurmdbd () {
    local deadline
    launch "$dir/log/start.log" env SLURM_CONF="$conf" "$slurmdbd_bin"
    deadline=$((SECONDS + opt_timeout))
    until dbd_up; do
        if [ $SECONDS -ge $deadline ]; then
            port_clash && return 2
            start_failed "slurmdbd did not answer sacctmgr within ${opt_timeout}s"
            return 1
        fi
        if [ -z "$(find_daemons slurmdbd)" ]; then
            sleep 0.5
            if [ -z "$(find_daemons slurmdbd)" ]; then
                port_clash && return 2
                start_failed "slurmdbd exited during start"
                return 1
            fi
        fi
        sleep 0.2
    done
}

# start_accounting: MariaDB, slurmdbd, then the cluster, account and users.
start_accounting () {
    local u rc
    start_mariadb || return $?
    write_dbd_conf
    start_slurmdbd
    rc=$?
    [ $rc -eq 0 ] || return $rc
    acct_mgr add cluster "$opt_cluster" \
        && acct_mgr add account pin cluster="$opt_cluster" \
            description=slurm-pin organization=slurm-pin \
        || { start_failed "sacctmgr could not add cluster $opt_cluster and account pin"; return 1; }
    for u in "${acct_users[@]}"; do
        acct_mgr add user "$u" account=pin cluster="$opt_cluster" \
            || { start_failed "sacctmgr could not add user $u"; return 1; }
    done
    return 0
}

acct_mgr () {
    SLURM_CONF=$dconf timeout "$client_timeout" sacctmgr -i "$@" >>"$dir/log/start.log" 2>&1
}

# v2_without_dbus: a pure cgroup v2 host without systemd's dbus (the qemu
# guest).  slurmd 22.05 loads its cgroup plugin even with proctrack/linuxproc
# and task/affinity; autodetected cgroup/v2 then asks systemd over dbus for
# its slurmstepd scope and fails ("cannot initialize cgroup directory for
# stepds") unless IgnoreSystemd=yes.  (Seen in the guest.)
v2_without_dbus () {
    [ -r /sys/fs/cgroup/cgroup.controllers ] && [ ! -S /run/dbus/system_bus_socket ]
}

prepare_cgroup () {
    local cg=/sys/fs/cgroup c want=""
    if [ "$opt_mode" = cgroup ]; then
        [ -r "$cg/cgroup.controllers" ] \
            || die "--mode cgroup: $cg is not a cgroup v2 mount (v1 or hybrid host); use --mode affinity here"
        grep -qw cpuset "$cg/cgroup.controllers" \
            || die "--mode cgroup: no cpuset controller in $cg/cgroup.controllers ($(cat "$cg/cgroup.controllers")); use --mode affinity here"
    fi
    for c in cpuset cpu memory pids; do
        grep -qw "$c" "$cg/cgroup.controllers" && want="$want +$c"
    done
    [ -n "$want" ] || return 0
    # Slurm 22.05 has no EnableControllers: enable them top-down by hand.
    echo "$want" >"$cg/cgroup.subtree_control" \
        || die "--mode $opt_mode: cannot write '$want' to $cg/cgroup.subtree_control"
    mkdir -p "$cg/system.slice" \
        || die "--mode $opt_mode: cannot create $cg/system.slice"
    echo "$want" >"$cg/system.slice/cgroup.subtree_control" \
        || die "--mode $opt_mode: cannot write '$want' to $cg/system.slice/cgroup.subtree_control (processes in system.slice itself?)"
}

check_loopback () {
    # glibc's getaddrinfo(AI_ADDRCONFIG) resolves nothing when 127.0.0.1 is
    # the only IPv4 address (seen in the qemu guest): Slurm then fails.
    command -v ip >/dev/null || return 0
    if ! ip -4 -o addr show 2>/dev/null | awk '{ print $4 }' | grep -vqx '127.0.0.1/8'; then
        say "warning: 127.0.0.1 is the only IPv4 address; Slurm may not resolve names (fix: ip addr add 127.0.0.2/8 dev lo)"
    fi
}

cmd_start () {
    local b rc attempt
    [ "$(id -u)" = 0 ] || die "start: needs root (slurmd runs as root, munged via runuser); run it with sudo"
    for b in slurmctld slurmd munged scontrol sinfo squeue scancel runuser flock md5sum timeout; do
        command -v "$b" >/dev/null \
            || die "start: '$b' not found; install the Debian packages slurmctld slurmd slurm-client munge util-linux (contrib/install-deps.sh)"
    done
    # LOCAL_SLURM_SLURMCTLD: another slurmctld to run (a wrapper that
    # preloads the sanitizer runtimes for a plugin built with them)
    slurmctld_bin=${LOCAL_SLURM_SLURMCTLD:-$(command -v slurmctld)}
    acct_daemons=""
    if [ "$opt_accounting" = yes ]; then
        for b in slurmdbd sacctmgr mariadbd mariadb-install-db mariadb; do
            command -v "$b" >/dev/null \
                || die "start --accounting: '$b' not found; install the Debian packages slurmdbd mariadb-server (contrib/install-deps.sh)"
        done
        slurmdbd_bin=$(command -v slurmdbd)
        mariadbd_bin=$(command -v mariadbd)
        installdb_bin=$(command -v mariadb-install-db)
        mariadb_bin=$(command -v mariadb)
        db_pass=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
        acct_daemons="slurmdbd mariadbd"
    fi
    slurmd_bin=$(command -v slurmd)
    munged_bin=$(command -v munged)
    id munge >/dev/null 2>&1 || die "start: no 'munge' user; install the Debian package munge"
    munge_group=$(id -gn munge)

    if [ -z "$opt_dir" ]; then
        opt_dir=$(mktemp -d /tmp/local-slurm.XXXXXX) || die "start: mktemp failed"
        # readable by users who submit to it (mktemp makes it 0700)
        chmod 0755 "$opt_dir" || die "$opt_dir: cannot chmod 0755"
        touch "$opt_dir/.local-slurm"
        say "state directory: $opt_dir"
    fi
    mkdir -p -- "$opt_dir" || die "--dir=$opt_dir: cannot create"
    dir=$(cd "$opt_dir" && pwd -P) || die "--dir=$opt_dir: cannot enter"
    if [ ! -e "$dir/.local-slurm" ] && [ -n "$(ls -A "$dir")" ]; then
        die "--dir=$dir: not empty and not a local-slurm directory; give a new or empty directory"
    fi
    [[ "$dir" =~ ^/[^\'$'\n']*$ ]] || die "--dir=$dir: quotes and newlines are not supported in the path"
    set_paths
    exec 9>>"$dir/.lock" || die "$dir: cannot open lock file"
    flock -n 9 || die "$dir: another local-slurm command is working on this directory"

    for b in munged slurmctld slurmd slurmdbd mariadbd; do
        if [ -n "$(find_daemons $b)" ]; then
            die "$dir: already running ($b pid $(find_daemons $b | paste -sd,)); run: $0 stop --dir '$dir'"
        fi
    done
    [ -z "$(find_stepds)" ] || die "$dir: slurmstepd processes of an earlier run still exist; run: $0 stop --dir '$dir'"

    [ -n "$opt_plugstack" ] && { [ -r "$opt_plugstack" ] && [ -f "$opt_plugstack" ] \
        || die "--plugstack=$opt_plugstack: not a readable file"; }
    [ -n "$opt_pinconf" ] && { [ -r "$opt_pinconf" ] && [ -f "$opt_pinconf" ] \
        || die "--pin-conf=$opt_pinconf: not a readable file"; }
    if [ "$opt_mode" = cgroup ] || v2_without_dbus; then
        prepare_cgroup
    fi

    host=$(uname -n)
    host=${host%%.*}
    [[ "$host" =~ ^[A-Za-z0-9][A-Za-z0-9_-]*$ ]] \
        || die "start: hostname '$host' is not usable as SlurmctldHost (letters, digits, '-', '_')"
    nodename=${opt_nodename:-$host}
    [[ "$nodename" =~ ^[A-Za-z][A-Za-z0-9_-]{0,39}$ ]] \
        || die "start: hostname '$nodename' is not a valid node name; give --nodename NAME"
    check_loopback

    # A fresh instance every time: a stale dir from a killed run keeps
    # nothing but its old logs and its last journal (moved aside: job ids
    # start at 1 again, and a new job must not meet an old one's records).
    touch "$marker"
    if [ "$jdir" != "$dir/journal" ] && [ -d "$jdir" ]; then
        rm -rf "${dir:?}/journal"
        mv -f "$jdir" "$dir/journal" || die "$jdir: cannot move to $dir/journal"
    fi
    if [ -d "$dir/journal" ]; then
        rm -rf "${dir:?}/journal.old"
        mv -f "$dir/journal" "$dir/journal.old" || die "$dir/journal: cannot move aside"
    fi
    rm -rf "${dir:?}/state" "${dir:?}/spool" "${dir:?}/run" "${dir:?}/etc"
    mkdir -p "$dir/state" "$dir/spool" "$dir/run" "$dir/etc" "$dir/log" \
        || die "$dir: cannot create subdirectories"
    for b in "$dir"/log/*.log; do
        [ -f "$b" ] && mv -f "$b" "$b.old"
    done
    install -d -m 0755 -o root -g root "$alias_base" || die "$alias_base: cannot create"
    if [ "$root" != "$dir" ]; then
        ln -sfn "$dir" "$alias_path" || die "$alias_path: cannot link to $dir"
    fi
    printf 'root=%s\nmode=%s\n' "$root" "$opt_mode" >"$marker"

    nodeline=$(node_line) || die "start: 'slurmd -C' gave no usable NodeName line"
    if [ "$opt_timeout" -gt 60 ]; then
        msg_timeout=$((opt_timeout / 6 > 100 ? 100 : opt_timeout / 6))
    else
        msg_timeout=10
    fi
    export SLURM_CONF=$conf

    # From here on a failed start (or a signal) stops what it started.
    trap 'rc=$?; [ $rc -eq 0 ] || do_stop >/dev/null 2>&1; exit $rc' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM HUP
    setup_munge
    start_munged || exit 1
    for attempt in 1 2 3; do
        port=$(free_port_pair) || die "start: no free TCP port pair found"
        dbd_port=$((port + 3))
        db_port=$((port + 4))
        write_configs
        rc=0
        if [ "$opt_accounting" = yes ]; then
            start_accounting
            rc=$?
        fi
        if [ $rc -eq 0 ]; then
            start_slurm
            rc=$?
        fi
        [ $rc -eq 0 ] && break
        # stop what this attempt started (munged stays)
        # shellcheck disable=SC2046
        terminate "slurm daemons" $(find_daemons slurmd; find_daemons slurmctld; \
            find_daemons slurmdbd; find_daemons mariadbd)
        if [ $rc -eq 2 ] && [ $attempt -lt 3 ]; then
            say "ports $port-$((port + 4)) taken meanwhile; trying others"
            for b in "$dir"/log/slurm*.log "$dir"/log/mariadb.log; do
                [ -f "$b" ] && mv -f "$b" "$b.clash"
            done
            continue
        fi
        [ $rc -eq 2 ] && start_failed "ports in use on each of 3 attempts"
        exit 1
    done
    trap - EXIT INT TERM HUP
    if [ "$opt_accounting" = yes ]; then
        say "running in $dir: nodes $(node_names | paste -sd,) ($opt_mode mode), slurmctld port $port, slurmdbd port $dbd_port, MariaDB port $db_port, ${SECONDS}s"
    else
        say "running in $dir: nodes $(node_names | paste -sd,) ($opt_mode mode), slurmctld port $port, ${SECONDS}s"
    fi
    print_env
}

# dbd-stop / dbd-start: only slurmdbd of a --accounting instance (tests
# of what happens while it is away).
cmd_dbd () {
    open_existing
    [ -r "$dir/etc/slurmdbd.conf" ] || die "$cmd: $dir was not started with --accounting"
    exec 9>>"$dir/.lock" || die "$dir: cannot open lock file"
    flock -w "$((opt_grace + 30))" 9 || die "$dir: another local-slurm command holds the lock"
    if [ "$cmd" = dbd-stop ]; then
        # shellcheck disable=SC2046
        terminate slurmdbd $(find_daemons slurmdbd) || die "$cmd: slurmdbd did not stop"
        return 0
    fi
    [ -z "$(find_daemons slurmdbd)" ] && { [ -n "$(find_daemons mariadbd)" ] \
        || die "$cmd: the instance's MariaDB is not running (start the instance again)"; }
    [ -n "$(find_daemons slurmdbd)" ] && return 0
    slurmdbd_bin=$(command -v slurmdbd) || die "$cmd: slurmdbd not found"
    start_slurmdbd || die "$cmd: slurmdbd did not start"
}

# ctld-restart: slurmctld alone, stopped and started again on its saved
# state (StateSaveLocation kept, jobs kept), as Slurm >= 23.11 does on
# `scontrol reconfigure`; for tests of what a restart forgets.
cmd_ctld_restart () {
    local deadline
    open_existing
    exec 9>>"$dir/.lock" || die "$dir: cannot open lock file"
    flock -w "$((opt_grace + 30))" 9 || die "$dir: another local-slurm command holds the lock"
    slurmctld_bin=${LOCAL_SLURM_SLURMCTLD:-$(command -v slurmctld)}
    # shellcheck disable=SC2046
    terminate slurmctld $(find_daemons slurmctld) || die "$cmd: slurmctld did not stop"
    # --clean: its saved jobs removed and slurmctld -c: jobs forgotten,
    # job ids start again at FirstJobId (a reused job id, as after a lost
    # state directory; slurmdbd keeps the old jobs)
    if [ -n "$opt_clean" ]; then
        rm -f "$root/state/job_state" "$root/state/job_state.old" \
            || die "$cmd: cannot remove $root/state/job_state"
    fi
    launch "$dir/log/start.log" "$slurmctld_bin" -f "$conf" ${opt_clean:+-c}
    wait_daemon slurmctld || { show_logs; die "$cmd: slurmctld did not start"; }
    deadline=$((SECONDS + opt_timeout))
    until slurm_up; do
        [ $SECONDS -ge $deadline ] && { show_logs; die "$cmd: slurmctld not UP after ${opt_timeout}s"; }
        sleep 0.5
    done
}

case "$cmd" in
    ctld-restart) cmd_ctld_restart ;;
    dbd-stop|dbd-start) cmd_dbd ;;
    start) cmd_start ;;
    stop) cmd_stop ;;
    status) cmd_status ;;
    env) cmd_env ;;
esac
