#!/bin/sh

test_description='slurm-pin check: node readiness report

Runs slurm-pin check on this machine and compares what it says with what
/proc/self/mountinfo and the cgroup2 mount say (the host is not assumed to
be hybrid or pure v2), breaks pin.conf, StateDir and the cgroup root on
purpose, and uses a plain directory with a cgroup.controllers file as
CgroupRoot (the seam of libcgroup2) to reach every mode of the verdict.
'

. "$(dirname "$0")/sharness.sh"

pin_prereq_cmd PYTHON3 python3
if test "$(id -u)" = 0 && unshare -m true 2>/dev/null; then
    test_set_prereq UNSHARE
fi
if test "$(id -u)" = 0 && command -v setpriv >/dev/null 2>&1 &&
   id nobody >/dev/null 2>&1; then
    test_set_prereq SETPRIV
fi

# Never read the host's Slurm configuration: cgroup.conf is looked for
# beside $SLURM_CONF, here in the trash directory.
TRASH=$(pwd)
SLURM_CONF="$TRASH/etc/slurm.conf"
export SLURM_CONF
mkdir -p "$TRASH/etc"

# --- what the kernel says, independently of slurm-pin -------------------

# The first cgroup2 mount (what CgroupRoot=auto takes), "" if none.
CG2_ROOT=$(awk '{ for (i = 1; i <= NF; i++) if ($i == "-") break;
                  if ($(i + 1) == "cgroup2") { print $5; exit } }' \
           /proc/self/mountinfo)
# The cgroup v1 mount that carries controller $1 (in its super options).
v1_mount () {
    awk -v c="$1" '{ for (i = 1; i <= NF; i++) if ($i == "-") break;
                     if ($(i + 1) != "cgroup") next;
                     n = split($(i + 3), o, ",");
                     for (j = 1; j <= n; j++) if (o[j] == c) { print $5; exit } }' \
        /proc/self/mountinfo
}
CPUSET_V1=$(v1_mount cpuset)
CPU_V1=$(v1_mount cpu)
if test -n "$CG2_ROOT"; then
    test_set_prereq CGROUP2
    if tr ' ' '\n' <"$CG2_ROOT/cgroup.controllers" | grep -qx cpuset; then
        test_set_prereq V2_CPUSET
    else
        test_set_prereq NO_V2_CPUSET
    fi
else
    test_set_prereq NO_CGROUP2
fi
test -n "$CPUSET_V1" && test_set_prereq CPUSET_V1
say "cgroup2 at '${CG2_ROOT:-none}', cpuset v1 at '${CPUSET_V1:-none}', cpu v1 at '${CPU_V1:-none}'"

# A pin.conf that keeps every path in the trash directory.
cat >good.conf <<EOF
# slurm-pin check test
TopologyCache=$TRASH/cache/topology.xml
StateDir=$TRASH/state
EOF

# field LABEL FILE: the text after the 16-column label of a report line.
field () {
    sed -n "s/^$1  *//p" "$2"
}

# check_fails VALUE ARGS...: 'slurm-pin check ARGS' exits 1 with exactly
# one line on stderr containing VALUE (the report is on fail.out).
check_fails () {
    value=$1
    shift
    test_expect_code 1 slurm-pin check "$@" >fail.out 2>fail.err &&
    test "$(wc -l <fail.err)" -eq 1 &&
    grep -F -e "$value" fail.err >/dev/null ||
    { echo "stderr was:"; cat fail.err; false; }
}

# --- usage ---------------------------------------------------------------

test_expect_success 'slurm-pin --help lists check' '
    slurm-pin --help >help.out &&
    grep "^  check " help.out
'

test_expect_success 'check --help prints its usage on stdout, exit 0' '
    slurm-pin check --help >h.out 2>h.err &&
    test_must_be_empty h.err &&
    grep "^Usage: slurm-pin check \[--conf FILE\] \[--json\]" h.out
'

test_expect_success 'unknown option, extra argument, missing value: one line, no report' '
    for args in "--bogus" "-x" "extra" "--conf" "--json=1" "--conf="; do
        test_expect_code 1 slurm-pin check $args >u.out 2>u.err &&
        test_must_be_empty u.out &&
        test "$(wc -l <u.err)" -eq 1 &&
        grep "^slurm-pin check: " u.err || return 1
    done
'

# --- pin.conf ------------------------------------------------------------

test_expect_success 'a --conf file that does not exist: exit 1 naming it' '
    check_fails "$TRASH/nonexistent.conf" --conf "$TRASH/nonexistent.conf" &&
    field pin.conf fail.out | grep -F "$TRASH/nonexistent.conf" &&
    field mode fail.out | grep "^disabled: "
'

test_expect_success 'a broken pin.conf: exit 1, FILE:LINE: in the one line' '
    cat >bad.conf <<-EOF &&
	# a comment
	TopologyCache=$TRASH/badcache/topology.xml
	DefaultPolicy=numa-locl
	EOF
    check_fails "$TRASH/bad.conf:3: " --conf "$TRASH/bad.conf" &&
    grep -F "numa-locl" fail.err &&
    field pin.conf fail.out >pc.out &&
    grep -F "$TRASH/bad.conf:3: " pc.out &&
    field mode fail.out | grep "^disabled: "
'

test_expect_success 'a broken pin.conf: its TopologyCache is not touched' '
    ! test -e badcache
'

test_expect_success PYTHON3 'a broken pin.conf: --json says ok=false with the line' '
    test_expect_code 1 slurm-pin check --conf "$TRASH/bad.conf" --json \
        >bad.json 2>bad.err &&
    python3 -c "
import json, sys
d = json.load(open(\"bad.json\"))
assert d[\"ok\"] is False, d
assert d[\"reason\"].startswith(sys.argv[1]), d[\"reason\"]
assert d[\"pin_conf\"][\"ok\"] is False and d[\"pin_conf\"][\"found\"] is True
assert d[\"mode\"] == \"disabled\", d[\"mode\"]
" "$TRASH/bad.conf:3: "
'

# --- this machine, against mountinfo --------------------------------------

test_expect_success CGROUP2 'this machine: exit 0, pin.conf ok, cgroup2 root as in mountinfo' '
    slurm-pin check --conf "$TRASH/good.conf" >host.out 2>host.err &&
    test_must_be_empty host.err &&
    field pin.conf host.out >pc.out &&
    grep -F "$TRASH/good.conf: ok (DefaultPolicy=none, AllowedPolicies=all)" pc.out &&
    field cgroup2 host.out | grep -F "$CG2_ROOT: controllers: "
'

test_expect_success CGROUP2 'the cgroup2 line lists the root'"'"'s cgroup.controllers' '
    ctl=$(cat "$CG2_ROOT/cgroup.controllers") &&
    field cgroup2 host.out >cg.out &&
    if test -n "$ctl"; then
        grep -Fx "$CG2_ROOT: controllers: $ctl" cg.out
    else
        grep -Fx "$CG2_ROOT: controllers: (none)" cg.out
    fi
'

test_expect_success NO_V2_CPUSET 'no cpuset in cgroup2: the verdict is the affinity fallback' '
    field mode host.out >mode.out &&
    grep "^affinity fallback: no cpuset controller in the cgroup v2 hierarchy at $CG2_ROOT" mode.out &&
    field cpuset host.out | grep -F "not in cgroup2 at $CG2_ROOT"
'

test_expect_success NO_V2_CPUSET,CPUSET_V1 'cpuset bound to v1: libcgroup names the v1 mount of mountinfo' '
    field cpuset host.out >cpuset.out &&
    grep -F "bound to cgroup v1 at $CPUSET_V1 (libcgroup)" cpuset.out &&
    grep -F "(cpuset is bound to cgroup v1 at $CPUSET_V1)" mode.out
'

test_expect_success CGROUP2 'cpu: libcgroup agrees with mountinfo' '
    field cpu host.out >cpu.out &&
    if test -n "$CPU_V1"; then
        grep -F "bound to cgroup v1 at $CPU_V1 (libcgroup)" cpu.out
    elif tr " " "\n" <"$CG2_ROOT/cgroup.controllers" | grep -qx cpu; then
        grep -F "in cgroup v2 at $CG2_ROOT (libcgroup); available in cgroup2" cpu.out
    else
        grep -F "(libcgroup); not in cgroup2 at $CG2_ROOT" cpu.out
    fi
'

test_expect_success V2_CPUSET 'cpuset in cgroup2: the verdict is not the fallback' '
    field mode host.out >mode.out &&
    ! grep "^affinity" mode.out &&
    field cpuset host.out | grep -F "available in cgroup2 at $CG2_ROOT"
'

test_expect_success NO_CGROUP2 'no cgroup2 mount on this machine: exit 1' '
    check_fails "no cgroup2 file system is mounted" --conf "$TRASH/good.conf"
'

test_expect_success CGROUP2 'libcgroup prints nothing on stdout, whatever CGROUP_LOGLEVEL says' '
    slurm-pin check --conf "$TRASH/good.conf" >quiet.out &&
    CGROUP_LOGLEVEL=DEBUG slurm-pin check --conf "$TRASH/good.conf" \
        >loud.out 2>loud.err &&
    test_must_be_empty loud.err &&
    test_cmp quiet.out loud.out
'

test_expect_success 'every report line starts with a known label' '
    slurm-pin check --conf "$TRASH/good.conf" >labels.out 2>/dev/null
    sed "s/ .*//" labels.out >labels.got &&
    printf "%s\n" pin.conf topology cgroup2 cpuset cpu slurm.conf \
        cgroup.conf statedir journaldir mode >labels.exp &&
    test_cmp labels.exp labels.got
'

test_expect_success UNSHARE 'no cgroup mounted at all: exit 1, libcgroup still silent' '
    cat >umount-all.sh <<-\EOF &&
	for m in $(awk "{ for (i = 1; i <= NF; i++) if (\$i == \"-\") break;
	                 if (\$(i + 1) ~ /^cgroup2?\$/) print \$5 }" \
	               /proc/self/mountinfo | sort -r); do
	    umount -l "$m" || exit 1
	done
	! grep -q " - cgroup" /proc/self/mountinfo || exit 1
	CGROUP_LOGLEVEL=DEBUG exec slurm-pin check "$@"
	EOF
    test_expect_code 1 unshare -m sh umount-all.sh --conf "$TRASH/good.conf" \
        >nocg.out 2>nocg.err &&
    test "$(wc -l <nocg.err)" -eq 1 &&
    grep "^slurm-pin check: no cgroup v2 hierarchy: .*no cgroup2 file system is mounted" nocg.err &&
    field mode nocg.out | grep "^affinity only: " &&
    field cpuset nocg.out | grep -F "unknown (libcgroup: " &&
    sed "s/ .*//" nocg.out >nocg.labels &&
    test_cmp labels.exp nocg.labels
'

# --- the topology cache ---------------------------------------------------

test_expect_success ROOT 'as root, check writes the TopologyCache of pin.conf' '
    rm -rf cache &&
    # the exit status depends on the cgroups of this machine
    slurm-pin check --conf "$TRASH/good.conf" >t1.out 2>/dev/null
    test -s cache/topology.xml &&
    field topology t1.out >t1.topo &&
    grep -F "cached $TRASH/cache/topology.xml (refreshed): " t1.topo
'

test_expect_success ROOT 'the PU count is that of the cached XML' '
    npu=$(grep -c "type=\"PU\"" cache/topology.xml) &&
    test "$npu" -gt 0 &&
    grep -E ": $npu PUs?, [0-9]+ cores?, [0-9]+ NUMA domains?\$" t1.topo
'

test_expect_success ROOT 'a second check finds the cache up to date' '
    slurm-pin check --conf "$TRASH/good.conf" >t2.out 2>/dev/null
    field topology t2.out |
        grep -F "cached $TRASH/cache/topology.xml (up to date): "
'

test_expect_success ROOT 'a TopologyCache that cannot be written: the live topology is used' '
    echo "not a directory" >afile &&
    sed "s|^TopologyCache=.*|TopologyCache=$TRASH/afile/topology.xml|" \
        good.conf >nocache.conf &&
    # the exit status depends on the cgroups of this machine
    slurm-pin check --conf "$TRASH/nocache.conf" >nc.out 2>nc.err
    field topology nc.out |
        grep -F "live (cache $TRASH/afile/topology.xml cannot be written: every step discovers the machine): "
'

test_expect_success SETPRIV 'not root: the cache is neither checked nor written' '
    rm -rf cache &&
    setpriv --reuid=nobody --regid=nogroup --clear-groups \
        slurm-pin check --conf "$TRASH/good.conf" >nr.out 2>nr.err
    field topology nr.out >nr.topo &&
    grep -F "live (not root: cache $TRASH/cache/topology.xml not checked): " nr.topo &&
    ! test -e cache
'

# --- JSON ----------------------------------------------------------------

test_expect_success PYTHON3,CGROUP2 '--json parses and agrees with the text report' '
    slurm-pin check --conf "$TRASH/good.conf" >text.out 2>/dev/null
    slurm-pin check --conf "$TRASH/good.conf" --json >check.json 2>/dev/null
    test "$(wc -l <check.json)" -eq 1 &&
    field mode text.out >mode.txt &&
    python3 -c "
import json, sys
d = json.load(open(\"check.json\"))
mode = open(\"mode.txt\").read().rstrip(\"\n\")
assert mode == d[\"mode\"] + \": \" + d[\"mode_detail\"], (mode, d[\"mode\"])
assert d[\"cgroup2\"][\"ok\"] is True
assert d[\"cgroup2\"][\"root\"] == sys.argv[1], d[\"cgroup2\"]
ctl = open(sys.argv[1] + \"/cgroup.controllers\").read().split()
assert d[\"cgroup2\"][\"controllers\"] == ctl, d[\"cgroup2\"]
assert d[\"controllers\"][\"cpuset\"][\"cgroup2\"] == (\"cpuset\" in ctl)
if \"cpuset\" not in ctl:
    assert d[\"mode\"] == \"affinity fallback\", d[\"mode\"]
if sys.argv[2]:
    lc = d[\"controllers\"][\"cpuset\"][\"libcgroup\"]
    assert lc[\"mount\"] == sys.argv[2] and lc[\"version\"] == 1, lc
assert d[\"pin_conf\"][\"path\"] == sys.argv[3]
assert d[\"state_dir\"][\"path\"] == sys.argv[4]
assert d[\"topology\"][\"pus\"] > 0 and d[\"topology\"][\"cores\"] > 0
" "$CG2_ROOT" "$CPUSET_V1" "$TRASH/good.conf" "$TRASH/state"
'

# --- the verdict, on a CgroupRoot of plain files ---------------------------

# fake_root CONTROLLERS: a directory that libcgroup2 takes for a cgroup v2
# root offering CONTROLLERS, and a pin.conf (fake.conf) using it.
fake_root () {
    rm -rf fakecg &&
    mkdir fakecg &&
    echo "$1" >fakecg/cgroup.controllers &&
    cat >fake.conf <<-EOF
	CgroupRoot=$TRASH/fakecg
	TopologyCache=$TRASH/cache/topology.xml
	StateDir=$TRASH/state
	EOF
}

# verdict: the mode line of 'slurm-pin check --conf fake.conf' (exit 0).
verdict () {
    slurm-pin check --conf "$TRASH/fake.conf" >v.out 2>v.err &&
    test_must_be_empty v.err &&
    field mode v.out
}

test_expect_success 'no cpuset in the v2 root: affinity fallback, still exit 0' '
    fake_root "cpu memory" &&
    rm -f etc/slurm.conf etc/cgroup.conf &&
    verdict >m.out &&
    grep "^affinity fallback: no cpuset controller in the cgroup v2 hierarchy at $TRASH/fakecg (" m.out
'

test_expect_success 'cpuset in the v2 root, no cgroup.conf: depends on cgroup.conf' '
    fake_root "cpuset cpu memory" &&
    verdict >m.out &&
    grep -F "standalone or nested: depends on cgroup.conf (none at $TRASH/etc/cgroup.conf)" m.out &&
    field cgroup.conf v.out | grep -F "$TRASH/etc/cgroup.conf: not read"
'

test_expect_success 'CgroupPlugin=cgroup/v2 and task/cgroup: nested' '
    printf "%s\n" "ClusterName=t" "TaskPlugin=task/cgroup,task/affinity" \
        "ProctrackType=proctrack/cgroup" >etc/slurm.conf &&
    printf "%s\n" "# cgroup.conf" "CgroupPlugin=cgroup/v2" \
        "ConstrainCores=yes" >etc/cgroup.conf &&
    verdict >m.out &&
    grep "^nested: " m.out &&
    field cgroup.conf v.out | grep -Fx "$TRASH/etc/cgroup.conf: CgroupPlugin=cgroup/v2" &&
    field slurm.conf v.out |
        grep -Fx "$TRASH/etc/slurm.conf: TaskPlugin=task/cgroup,task/affinity, ProctrackType=proctrack/cgroup"
'

test_expect_success 'keys are case-insensitive, blanks and quotes allowed' '
    printf "%s\n" "  taskplugin = \"affinity,cgroup\"  # short names" \
        >etc/slurm.conf &&
    printf "%s\n" "cgroupplugin=cgroup/v2 # v2" >etc/cgroup.conf &&
    verdict >m.out &&
    grep "^nested: " m.out
'

test_expect_success 'cgroup/v2 but neither task/cgroup nor proctrack/cgroup: standalone' '
    printf "%s\n" "TaskPlugin=task/affinity" \
        "ProctrackType=proctrack/linuxproc" >etc/slurm.conf &&
    verdict >m.out &&
    grep -F "standalone: cpuset available at $TRASH/fakecg; Slurm makes no step cgroups (TaskPlugin=task/affinity, ProctrackType=proctrack/linuxproc): pin.so makes $TRASH/fakecg/slurm-pin/job_<id>/step_<id>" m.out
'

test_expect_success 'CgroupPlugin=cgroup/v1 with task/cgroup: standalone' '
    printf "%s\n" "TaskPlugin=task/cgroup" >etc/slurm.conf &&
    printf "%s\n" "CgroupPlugin=cgroup/v1" >etc/cgroup.conf &&
    verdict >m.out &&
    grep "^standalone: .*CgroupPlugin=cgroup/v1" m.out
'

test_expect_success 'control characters in slurm.conf values are shown as ?' '
    printf "TaskPlugin=task/aff\\001inity\\n" >etc/slurm.conf &&
    verdict >m.out &&
    field slurm.conf v.out |
        grep -Fx "$TRASH/etc/slurm.conf: TaskPlugin=task/aff?inity, ProctrackType=(default)"
'

test_expect_success 'an over-long line in slurm.conf is skipped, not cut' '
    long=$(printf "%5000s" "" | tr " " x) &&
    printf "%s\n" "TaskPlugin=task/affinity$long" "ProctrackType=proctrack/linuxproc" \
        >etc/slurm.conf &&
    printf "%s\n" "CgroupPlugin=cgroup/v2" >etc/cgroup.conf &&
    verdict >m.out &&
    field slurm.conf v.out |
        grep -Fx "$TRASH/etc/slurm.conf: TaskPlugin=(default), ProctrackType=proctrack/linuxproc"
'

test_expect_success 'a CgroupRoot that does not exist: exit 1 naming it' '
    sed "s|^CgroupRoot=.*|CgroupRoot=$TRASH/nonexistent|" fake.conf >nx.conf &&
    check_fails "$TRASH/nonexistent" --conf "$TRASH/nx.conf" &&
    grep "^slurm-pin check: no cgroup v2 hierarchy: " fail.err
'

test_expect_success 'a CgroupRoot without cgroup.controllers: exit 1' '
    mkdir -p notcg &&
    sed "s|^CgroupRoot=.*|CgroupRoot=$TRASH/notcg|" fake.conf >notcg.conf &&
    check_fails "not a cgroup v2 hierarchy" --conf "$TRASH/notcg.conf"
'

# --- JournalDir ------------------------------------------------------------

test_expect_success 'a JournalDir on the file system of a world-writable /tmp: a warning, exit 0' '
    test "$(stat -c %a /tmp)" = 1777 &&
    d=/tmp/pin-t0200-nonexistent-$$/journal &&
    printf "JournalDir=%s\nJournalMaxSize=0\n" "$d" >jd.conf &&
    slurm-pin check --conf jd.conf >jd.out &&
    field journaldir jd.out >jd.line &&
    grep -F "$d: warning: on the file system of /tmp, which every user can write, and JournalMaxSize=0 reserves no room" jd.line &&
    slurm-pin check --json --conf jd.conf >jd.json &&
    grep -F "\"shared_with\":\"/tmp\"" jd.json
'

# --- StateDir --------------------------------------------------------------

test_expect_success ROOT 'a root-owned 0700 StateDir is fine' '
    fake_root "cpuset cpu" &&
    rm -rf state && mkdir -m 0700 state &&
    slurm-pin check --conf "$TRASH/fake.conf" >sd.out &&
    field statedir sd.out | grep -Fx "$TRASH/state: ok (root, mode 0700)"
'

test_expect_success ROOT 'a StateDir writable by others: exit 1' '
    chmod 0777 state &&
    test_when_finished "chmod 0700 state" &&
    check_fails "StateDir $TRASH/state: writable by group or others (mode 0777)" \
        --conf "$TRASH/fake.conf"
'

test_expect_success ROOT 'a claims directory writable by group: exit 1' '
    mkdir -m 0770 state/claims &&
    test_when_finished "rm -rf state/claims" &&
    check_fails "StateDir $TRASH/state/claims: writable by group or others" \
        --conf "$TRASH/fake.conf"
'

test_expect_success 'a StateDir that is a symbolic link: exit 1' '
    mkdir -p elsewhere && rm -rf state && ln -s elsewhere state &&
    test_when_finished "rm -f state" &&
    check_fails "StateDir $TRASH/state: a symbolic link" --conf "$TRASH/fake.conf"
'

test_done
