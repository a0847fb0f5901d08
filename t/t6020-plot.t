#!/bin/sh

test_description='slurm-pin plot: every kind of chart, in PNG and SVG

slurm-pin plot only reads profiles, so most cases draw crafted ones,
written by t/profile/mkprofile.py with known processes, commands,
samples, cgroup members and a confinement (no root needed).  One real
recording (root: proc connector) of t/profile/workload.py, which forks
a known number of processes, is drawn in every kind too.  Every image
is checked in the image itself by t/profile/imgcheck.py: it decodes
(PIL for PNG, an XML parser for SVG), has exactly the size asked for,
and shows the expected number of series, counted as the palette colours
of slurm-pin-plot(1) present inside the plot frame, and for the Gantt
chart one bar per process.
'

. "$(dirname "$0")/sharness.sh"

# the same on every release: once per CI (t/sharness.d/00-pin.sh)
pin_release_independent

# CPU-heavy (a real recording, dozens of renderings): not beside t4000,
# t5000 or t6000 (t/sharness.d/20-cpus.sh)
cpu_heavy_exclusive || exit 1

PY=/usr/bin/python3
MK="$PIN_SRCDIR/t/profile/mkprofile.py"
CHECK="$PIN_SRCDIR/t/profile/imgcheck.py"
MAN="$PIN_SRCDIR/doc/man/slurm-pin-plot.1"
WORKLOAD="$PIN_SRCDIR/t/profile/workload.py"
KINDS="cpu gantt forks ctxsw states memory"  # io: its own tests below

if test -x "$PY" && "$PY" -c "import PIL" 2>/dev/null; then
    test_set_prereq PY
elif test -n "${CI:-}"; then
    test_expect_success '/usr/bin/python3 and python3-pil are installed' 'false'
else
    say "/usr/bin/python3 with PIL (python3-pil) not found: image checks skipped"
fi

# jget FILE EXPR: a Python expression on the JSON object in FILE (j).
jget () {
    "$PY" -c 'import json, sys; j = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# check_image IMAGE W H SERIES [BARS]: IMAGE decodes, is W x H, shows
# SERIES palette colours inside its frame (and BARS bars); its findings
# are left in IMAGE.json.
check_image () {
    "$PY" "$CHECK" "$1" "$MAN" >"$1.json" &&
    got="$(jget "$1.json" "j[\"width\"], j[\"height\"], len(j[\"colours\"]), j[\"bars\"]")" &&
    echo "$1: (width, height, series, bars) = $got; want $2 $3 $4 ${5:-any}" &&
    test "$(jget "$1.json" "j[\"frame\"] is not None")" = True &&
    test "$(jget "$1.json" "int(j[\"width\"])")" -eq "$2" &&
    test "$(jget "$1.json" "int(j[\"height\"])")" -eq "$3" &&
    if test "$(jget "$1.json" "j[\"format\"]")" = svg; then
        test "$(jget "$1.json" "int(j[\"width_attr\"])")" -eq "$2" &&
        test "$(jget "$1.json" "int(j[\"height_attr\"])")" -eq "$3"
    fi &&
    test "$(jget "$1.json" "len(j[\"colours\"])")" -eq "$4" &&
    if test -n "${5:-}"; then
        test "$(jget "$1.json" "j[\"bars\"]")" -eq "$5"
    fi
}

# want_series FACTS KIND: the series a chart of the crafted profile
# described by FACTS (mkprofile.py's output) must show, by the rules of
# slurm-pin-plot(1).
want_series () {
    case $2 in
    cpu)    jget "$1" "(j[\"cpus\"] if j[\"cpus\"] <= 16 else 0) + (1 if j[\"cg\"] else 0)" ;;
    gantt)  jget "$1" "min(8, j[\"ncommands\"]) + (1 if j[\"ncommands\"] > 8 else 0)" ;;
    forks)  echo 4 ;;
    ctxsw)  echo 2 ;;
    states) echo 5 ;;
    memory) jget "$1" "(2 if j[\"pss\"] else 0) + (4 if j[\"cg\"] else 0) + (1 if j.get(\"mem_max\") else 0)" ;;
    esac
}

# --- usage ------------------------------------------------------------

test_expect_success 'slurm-pin --help lists plot' '
    slurm-pin --help >help.out &&
    grep "^  plot " help.out
'

test_expect_success 'plot --help prints the usage on stdout, exit 0' '
    slurm-pin plot --help >h.out 2>h.err &&
    test_must_be_empty h.err &&
    grep "^Usage: slurm-pin plot FILE|JOB\[.STEP\] --kind KIND" h.out &&
    for k in $KINDS; do grep "^  $k " h.out || return 1; done
'

# --- crafted profiles ---------------------------------------------------

# slurm-pin plot runs slurm-pin-plot from slurm-pin's own directory
# (src/cmd/plotexec.c): where it is not installed (a compute node with
# the slurm-pin package only), one line names the package.
test_expect_success 'plot without slurm-pin-plot beside slurm-pin: one line naming the package' '
    mkdir -p alone &&
    cp "$PIN_BIN/slurm-pin" alone/ &&
    test_must_fail alone/slurm-pin plot x.jsonl --kind cpu -o x.png 2>err &&
    test "$(wc -l <err)" -eq 1 &&
    grep -F "slurm-pin plot: $PWD/alone/slurm-pin-plot is not installed" err &&
    grep -F "install the package slurm-pin-plot" err
'

test_expect_success 'slurm-pin plot and slurm-pin-plot are one program: the same usage' '
    slurm-pin plot --help >via &&
    "$PIN_BIN/slurm-pin-plot" --help >direct &&
    test_cmp via direct &&
    ldd "$PIN_BIN/slurm-pin" >ldd.out &&
    ! grep -i plplot ldd.out
'

test_expect_success PY 'write the crafted profiles' '
    "$PY" "$MK" full.jsonl --cg --confine 5 --header-job >full.json &&
    "$PY" "$MK" plain.jsonl --cpus 3 --commands "sim:20,reco:10" >plain.json &&
    "$PY" "$MK" many.jsonl --commands "a:12,b:10,c:9,d:8,e:7,f:5,g:4,h:3,i:2,j:1" >many.json &&
    "$PY" "$MK" nosamples.jsonl --interval 0 >nosamples.json &&
    "$PY" "$MK" nopss.jsonl --no-pss --cpus 0 >nopss.json &&
    cat full.json plain.json many.json &&
    test "$(jget full.json "j[\"processes\"]")" -eq 37
'

for kind in $KINDS; do
    test_expect_success PY "$kind: PNG of the default size, SVG of another, each with its series" '
        slurm-pin plot full.jsonl --kind '$kind' -o full-'$kind'.png >out 2>err &&
        test_must_be_empty out && test_must_be_empty err &&
        slurm-pin plot full.jsonl -k '$kind' -o full-'$kind'.svg --size 1000x600 &&
        want=$(want_series full.json '$kind') &&
        check_image full-'$kind'.png 1200 700 $want &&
        check_image full-'$kind'.svg 1000 600 $want
    '
    test_expect_success PY "$kind: another profile (no cgroup, 3 CPUs), another size" '
        slurm-pin plot plain.jsonl --kind '$kind' -o plain-'$kind'.png --size 640x400 &&
        slurm-pin plot plain.jsonl --kind '$kind' -o plain-'$kind'.svg &&
        want=$(want_series plain.json '$kind') &&
        check_image plain-'$kind'.png 640 400 $want &&
        check_image plain-'$kind'.svg 1200 700 $want
    '
done

test_expect_success PY 'cpu: CPUs all 100% busy, equal lines, each one shows' '
    "$PY" "$MK" busy.jsonl --cpus 5 --saturated >busy.json &&
    slurm-pin plot busy.jsonl --kind cpu -o busy.png &&
    slurm-pin plot busy.jsonl --kind cpu -o busy.svg &&
    check_image busy.png 1200 700 5 &&
    check_image busy.svg 1200 700 5
'

test_expect_success PY 'gantt: one bar per process, counted in the SVG and in the PNG' '
    n=$(jget full.json "j[\"processes\"]") &&
    test "$(jget full-gantt.svg.json "j[\"bars\"]")" -eq "$n" &&
    test "$(jget full-gantt.png.json "j[\"bars\"]")" -eq "$n" &&
    n=$(jget plain.json "j[\"processes\"]") &&
    test "$(jget plain-gantt.svg.json "j[\"bars\"]")" -eq "$n" &&
    test "$(jget plain-gantt.png.json "j[\"bars\"]")" -eq "$n"
'

test_expect_success PY 'gantt: eleven commands are 8 colours and the grey of the others' '
    slurm-pin plot many.jsonl --kind gantt -o many.svg &&
    slurm-pin plot many.jsonl --kind gantt -o many.png &&
    check_image many.svg 1200 700 9 $(jget many.json "j[\"processes\"]") &&
    check_image many.png 1200 700 9 $(jget many.json "j[\"processes\"]") &&
    test "$(jget many.svg.json "j[\"colours\"][-1]")" = "#A0A0A0" &&
    grep "3 other commands (4)" many.svg.json
'

# Above 200 processes the Gantt chart has one lane per command, shaded
# by the processes of that command running (slurm-pin-plot(1)): no bar
# of a process, the heat map's shades, one row per command.
test_expect_success PY 'gantt: 100,000 processes, one lane per command' '
    "$PY" "$MK" huge.jsonl --commands "w:60000,x:30000,y:9999" \
        --duration 100 --threads 0 >huge.json &&
    slurm-pin plot huge.jsonl --kind gantt -o huge.svg &&
    slurm-pin plot huge.jsonl --kind gantt -o huge.png &&
    check_image huge.svg 1200 700 0 0 &&
    check_image huge.png 1200 700 0 0 &&
    test "$(jget huge.svg.json "j[\"heat_rows\"]")" -eq 4 &&
    test "$(jget huge.svg.json "len(j[\"heat\"]) >= 2")" = True &&
    test "$(jget huge.png.json "len(j[\"heat\"]) >= 2")" = True &&
    for t in "w (60000)" "x (30000)" "y (9999)" "bash (1)" "white: none running"; do
        grep -F "\"$t\"" huge.svg.json || return 1
    done
'

test_expect_success PY 'gantt: 200 processes are bars, 201 are lanes' '
    "$PY" "$MK" g200.jsonl --commands "a:120,b:79" >g200.json &&
    "$PY" "$MK" g201.jsonl --commands "a:120,b:80" >g201.json &&
    test "$(jget g200.json "j[\"processes\"]")" -eq 200 &&
    for e in svg png; do
        slurm-pin plot g200.jsonl --kind gantt -o g200.$e &&
        slurm-pin plot g201.jsonl --kind gantt -o g201.$e &&
        check_image g200.$e 1200 700 3 &&
        test "$(jget g200.$e.json "len(j[\"heat\"])")" -eq 0 &&
        check_image g201.$e 1200 700 0 0 &&
        test "$(jget g201.$e.json "len(j[\"heat\"]) >= 2")" = True ||
        return 1
    done &&
    test "$(jget g200.svg.json "j[\"bars\"]")" -eq 200 &&
    test "$(jget g201.svg.json "j[\"heat_rows\"]")" -eq 3
'

test_expect_success PY 'gantt: more commands than 24 lanes share the last one' '
    spec=$(for i in $(seq 1 30); do printf "c%d:10," $i; done) &&
    "$PY" "$MK" lanes.jsonl --commands "$spec" >lanes.json &&
    slurm-pin plot lanes.jsonl --kind gantt -o lanes.svg &&
    check_image lanes.svg 1200 700 0 0 &&
    test "$(jget lanes.svg.json "j[\"heat_rows\"]")" -eq 24 &&
    grep -F "\"8 others (71)\"" lanes.svg.json
'

test_expect_success PY 'gantt --filter COMMAND: the processes of one command, as bars' '
    slurm-pin plot g201.jsonl --kind gantt --filter b -o fb.svg &&
    slurm-pin plot g201.jsonl --kind gantt -F b -o fb.png &&
    check_image fb.svg 1200 700 1 80 &&
    check_image fb.png 1200 700 1 80 &&
    slurm-pin plot huge.jsonl --kind gantt --filter y -o fy.svg &&
    check_image fy.svg 1200 700 0 0 &&
    test "$(jget fy.svg.json "j[\"heat_rows\"]")" -eq 1 &&
    grep -F "\"y (9999)\"" fy.svg.json
'

test_expect_success PY 'gantt --filter: an unknown command, another kind, a bad name: one line' '
    test_expect_code 1 slurm-pin plot g201.jsonl --kind gantt --filter zz \
        -o e.svg 2>err &&
    test "$(wc -l <err)" -eq 1 &&
    grep "^slurm-pin plot: --filter=zz: no process of that command in g201.jsonl; its commands: a (120), b (80), bash (1)$" err &&
    test_expect_code 1 slurm-pin plot g201.jsonl --kind cpu --filter a \
        -o e.svg 2>err &&
    grep "^slurm-pin plot: --filter=a: only --kind gantt draws processes by command, not --kind cpu$" err &&
    test_expect_code 1 slurm-pin plot g201.jsonl --kind gantt \
        --filter 0123456789abcdef -o e.svg 2>err &&
    grep "^slurm-pin plot: --filter=0123456789abcdef: a command name is 1 to 15 printable characters" err &&
    test ! -e e.svg
'

# More than 16 CPUs: a heat map, one row per CPU, instead of lines that
# hide each other; the step cgroup stays a line, in a panel below.
test_expect_success PY 'cpu: 16 CPUs are lines, 17 and 64 a heat map' '
    "$PY" "$MK" c16.jsonl --cpus 16 --cg >c16.json &&
    "$PY" "$MK" c17.jsonl --cpus 17 >c17.json &&
    "$PY" "$MK" c64.jsonl --cpus 64 --cg >c64.json &&
    for e in svg png; do
        slurm-pin plot c16.jsonl --kind cpu -o c16.$e &&
        slurm-pin plot c17.jsonl --kind cpu -o c17.$e &&
        slurm-pin plot c64.jsonl --kind cpu -o c64.$e &&
        check_image c16.$e 1200 700 17 &&
        test "$(jget c16.$e.json "len(j[\"heat\"])")" -eq 0 &&
        check_image c17.$e 1200 700 0 &&
        test "$(jget c17.$e.json "len(j[\"heat\"]) >= 2")" = True &&
        check_image c64.$e 1200 700 1 &&
        test "$(jget c64.$e.json "len(j[\"heat\"]) >= 2")" = True ||
        return 1
    done &&
    test "$(jget c17.svg.json "j[\"heat_rows\"]")" -eq 17 &&
    test "$(jget c64.svg.json "j[\"heat_rows\"]")" -eq 64 &&
    grep -F "\"90-100 % busy\"" c64.svg.json &&
    grep -F "\"step cgroup, % of 64 CPUs\"" c64.svg.json
'

# --- samples drawn honestly ---------------------------------------------

# A sample whose smaps_rollup reads were skipped for time has RSS and
# PSS of the processes read only: a cross (a lower bound), never a
# point of the line, which breaks there.
test_expect_success PY 'memory: samples with skipped smaps reads are marks, not line points' '
    "$PY" "$MK" skip.jsonl --cg --smaps-skipped 4 --mem-max 300 >skip.json &&
    n=$(jget skip.json "j[\"smaps_skipped\"]") &&
    test "$n" -ge 3 &&
    slurm-pin plot skip.jsonl --kind memory -o skip.svg &&
    slurm-pin plot skip.jsonl --kind memory -o skip.png &&
    want=$(want_series skip.json memory) &&
    test "$want" -eq 7 &&
    check_image skip.svg 1200 700 7 &&
    check_image skip.png 1200 700 7 &&
    test "$(jget skip.svg.json "j[\"marks\"].get(\"#1F77B4\", 0)")" -eq "$n" &&
    test "$(jget skip.svg.json "j[\"marks\"].get(\"#D62728\", 0)")" -eq "$n" &&
    test "$(jget skip.svg.json "j[\"strokes\"][\"#1F77B4\"]")" -gt 1 &&
    test "$(jget skip.svg.json "j[\"strokes\"][\"#D62728\"]")" -gt 1 &&
    test "$(jget skip.svg.json "j[\"strokes\"][\"#2CA02C\"]")" -eq 1 &&
    grep -F "\"x: RSS, PSS incomplete ($n samples)\"" skip.svg.json &&
    grep -F "\"cgroup memory.max (limit)\"" skip.svg.json &&
    # a profile without skipped reads: one line each, no mark
    test "$(jget full-memory.svg.json "j[\"marks\"]")" = "{}" &&
    test "$(jget full-memory.svg.json "j[\"strokes\"][\"#1F77B4\"]")" -eq 1
'

test_expect_success PY 'memory: every line is named; a missing cgroup or limit is said' '
    "$PY" "$CHECK" full-memory.svg "$MAN" >fm.json &&
    for t in "RSS summed over processes" "PSS summed over processes" \
        "cgroup memory.current" "cgroup anon" "cgroup file (page cache)" \
        "cgroup shmem" "no memory limit (memory.max)"; do
        grep -F "\"$t\"" fm.json || return 1
    done &&
    "$PY" "$CHECK" plain-memory.svg "$MAN" >pm.json &&
    grep -F "\"no step cgroup memory in this profile\"" pm.json
'

# Samples the recorder missed (more than 2.1 intervals apart) break the
# lines of every chart drawn from samples, and the legend counts them.
for kind in cpu ctxsw states memory; do
    test_expect_success PY "$kind: missed samples are a gap in every line" '
        test -e gap.json || "$PY" "$MK" gap.jsonl --cg --gap 4 >gap.json &&
        slurm-pin plot gap.jsonl --kind '$kind' -o gap-'$kind'.svg &&
        slurm-pin plot gap.jsonl --kind '$kind' -o gap-'$kind'.png &&
        want=$(want_series gap.json '$kind') &&
        check_image gap-'$kind'.svg 1200 700 $want &&
        check_image gap-'$kind'.png 1200 700 $want &&
        grep -F "\"gaps: 4 samples missed\"" gap-'$kind'.svg.json &&
        # a line a panel without the gap, two with it
        min=$(test '$kind' = states && echo 4 || echo 2) &&
        "$PY" -c "import json, sys; j = json.load(open(sys.argv[1])); bad = [c for c in j[\"colours\"] if j[\"strokes\"].get(c, 0) < int(sys.argv[2])]; print(\"unbroken:\", bad); sys.exit(1 if bad else 0)" gap-'$kind'.svg.json $min &&
        ! grep -F "gaps:" full-'$kind'.svg.json
    '
done

test_expect_success PY 'cpu heat map: missed samples stay white, said' '
    "$PY" "$MK" gap64.jsonl --cpus 64 --gap 4 >gap64.json &&
    slurm-pin plot gap64.jsonl --kind cpu -o gap64.svg &&
    check_image gap64.svg 1200 700 0 &&
    grep -F "\"white: no sample\"" gap64.svg.json &&
    grep -F "\"gaps: 4 samples missed\"" gap64.svg.json &&
    "$PY" - gap64.svg <<-\EOF
	# each CPU of mkprofile.py has one shade all along: one rectangle a
	# row without the gap, two with it
	import re, sys
	import xml.etree.ElementTree as ET
	ns = "{http://www.w3.org/2000/svg}"
	root = ET.parse(sys.argv[1]).getroot()
	xs = []
	for el in root.iter(ns + "polyline"):
	    if (el.get("fill") or "none").upper() not in ("#FFFFB2", "#FED976", "#FEB24C", "#FD8D3C", "#F03B20", "#BD0026"):
	        continue
	    nums = [float(v) for v in re.split(r"[ ,]+", el.get("points").strip()) if v]
	    xs.append((min(nums[0::2]), max(nums[0::2])))
	print(len(xs), "rectangles")
	assert len(xs) >= 2 * 64, len(xs)
	EOF
'

test_expect_success PY 'the title, the legend and the confinement are in the SVG text' '
    slurm-pin plot full.jsonl --kind cpu -o title.svg --title "CPUs of run #7" &&
    "$PY" "$CHECK" title.svg "$MAN" >title.json &&
    grep "\"CPUs of run #7\"" title.json &&
    grep "\"CPU 3 (step)\"" title.json &&
    grep "\"confined (cpuset: 0-1)\"" title.json &&
    grep "job 4242.0 on n1, policy numa-local" title.json
'

test_expect_success PY 'a hostile title is shown safely' '
    slurm-pin plot full.jsonl --kind ctxsw -o bad-title.svg \
        --title "$(printf "a\033[2J#b<c>&%%s\001")" &&
    "$PY" "$CHECK" bad-title.svg "$MAN" >bad-title.json &&
    grep "\"a?\[2J#b<c>&%s?\"" bad-title.json
'

# --- errors: one line naming the value, exit 1, no image ---------------

# fails ARGS...: exit 1, nothing on stdout, one line on stderr (err).
fails () {
    test_expect_code 1 slurm-pin plot "$@" >out 2>err &&
    test_must_be_empty out &&
    cat err &&
    test "$(wc -l <err)" -eq 1 &&
    grep "^slurm-pin plot: " err
}

test_expect_success 'bad --kind: names it and the known kinds' '
    fails full.jsonl --kind pie -o e.png &&
    grep "pie: unknown kind; known: cpu, gantt, forks, ctxsw, states, memory, io" err &&
    fails full.jsonl -o e.png &&
    grep "missing --kind; known: cpu" err &&
    test ! -e e.png
'

test_expect_success 'bad --size: names it and the bounds' '
    for s in 10x10 1200x 1200 x700 -5x700 1200x700x1 9000x700 0x0 abc; do
        fails full.jsonl --kind cpu -o e.png --size "$s" &&
        grep -e "--size=$s: expected WIDTHxHEIGHT in pixels, width 320 to 8192, height 200 to 8192" err ||
        return 1
    done &&
    test ! -e e.png
'

test_expect_success 'unknown extension: names it and the known ones' '
    for o in e.jpg e e.png.txt e.svgz; do
        fails full.jsonl --kind cpu -o "$o" &&
        grep -e "-o $o: unknown extension; known: .png, .svg" err &&
        test ! -e "$o" || return 1
    done &&
    fails full.jsonl --kind cpu &&
    grep "missing -o" err
'

test_expect_success 'a missing file, a directory, a file that is not a profile' '
    fails nonexistent.jsonl --kind cpu -o e.png &&
    grep "nonexistent.jsonl: cannot open: No such file" err &&
    fails . --kind gantt -o e.png &&
    echo hello >not.jsonl &&
    fails not.jsonl --kind gantt -o e.svg &&
    grep "not.jsonl:1: not a JSON object" err &&
    echo "{\"type\":\"header\",\"format\":\"other\"}" >other.jsonl &&
    fails other.jsonl --kind gantt -o e.svg &&
    grep "not a slurm-pin-profile file" err &&
    fails a.jsonl b.jsonl --kind gantt -o e.svg &&
    test ! -e e.png && test ! -e e.svg
'

test_expect_success 'a FIFO is refused at once, named (it would block for ever)' '
    test_when_finished "rm -f fifo.jsonl" &&
    mkfifo fifo.jsonl &&
    test_expect_code 1 timeout 20 slurm-pin plot fifo.jsonl --kind cpu \
        -o f.png >out 2>err &&
    test_must_be_empty out &&
    test "$(wc -l <err)" -eq 1 &&
    grep "^slurm-pin plot: fifo.jsonl: a FIFO, not a regular file$" err &&
    test ! -e f.png
'

test_expect_success PY 'nothing to draw for the kind: says why and which kinds have data' '
    for k in cpu ctxsw states memory; do
        fails nosamples.jsonl --kind $k -o e.png &&
        grep "nosamples.jsonl: .*nothing to draw for --kind $k; this profile has data for: gantt, forks$" err ||
        return 1
    done &&
    fails nopss.jsonl --kind memory -o e.png &&
    grep "no samples of memory" err &&
    fails nopss.jsonl --kind cpu -o e.png &&
    grep "has data for: gantt, forks, ctxsw, states$" err &&
    test ! -e e.png
'

# --- io: the step cgroup's io.stat ---------------------------------------

test_expect_success PY 'io: the cgroup read and write rates, in MiB/s and operations/s' '
    "$PY" "$MK" io.jsonl --cg --io --header-job >io.json &&
    slurm-pin plot io.jsonl --kind io -o io.png &&
    slurm-pin plot io.jsonl --kind io -o io.svg --size 1000x600 &&
    check_image io.png 1200 700 4 &&
    check_image io.svg 1000 600 4 &&
    for t in "cgroup read (io.stat rbytes)" "cgroup write (io.stat wbytes)" \
             "cgroup read operations (rios)" "cgroup write operations (wios)" \
             "MiB per second" "operations per second"; do
        grep "\"$t\"" io.svg.json || return 1
    done
'

test_expect_success PY 'io: no io.stat in the samples is said, not drawn as zeros' '
    fails full.jsonl --kind io -o e.png &&
    grep "full.jsonl: no samples of the step cgroup.s io.stat (no io controller delegated to it, or no cgroup recorded): nothing to draw for --kind io; this profile has data for: cpu, gantt, forks, ctxsw, states, memory$" err &&
    fails plain.jsonl --kind io -o e.png &&
    test ! -e e.png
'

test_expect_success PY 'io: the summary gives the sums, or says io.stat is absent' '
    slurm-pin profile io.jsonl >io.txt &&
    grep "^I/O (cgroup)  *read 10.0 MiB in 100 operations, written 20.0 MiB in 200 (io.stat, 21 samples)$" io.txt &&
    slurm-pin profile --json io.jsonl >io-sum.json &&
    test "$(jget io-sum.json "j[\"io\"][\"cgroup_write_bytes\"]")" -eq $((20 << 20)) &&
    slurm-pin profile full.jsonl >full.txt &&
    grep "^I/O (cgroup)  *not recorded: the step.s cgroup has no io.stat (no io controller delegated to it)$" full.txt &&
    slurm-pin profile --json full.jsonl >full-sum.json &&
    test "$(jget full-sum.json "\"cgroup_read_bytes\" in j[\"io\"]")" = False &&
    slurm-pin profile plain.jsonl >plain.txt &&
    grep "^I/O (cgroup)  *not recorded: no step cgroup sampled$" plain.txt
'

# --- several nodes of one step (a shared ProfileDir) ----------------------

test_expect_success PY 'JOB of two nodes: one chart, a panel per node, a legend line per series' '
    mkdir -p shared &&
    "$PY" "$MK" shared/4242.0.n1.jsonl --cg --io --header-job >/dev/null &&
    "$PY" "$MK" shared/4242.0.n2.jsonl --cg --header-job --node n2 \
        --commands "sim:3" >/dev/null &&
    slurm-pin plot --dir shared 4242 --kind memory -o two.svg &&
    check_image two.svg 1200 700 6 &&
    grep "\"n1: memory (MiB)\"" two.svg.json &&
    grep "\"n2: memory (MiB)\"" two.svg.json &&
    grep "job 4242.0 on 2 nodes (a panel each)" two.svg.json &&
    test "$(jget two.svg.json "j[\"texts\"].count(\"PSS summed over processes\")")" -eq 1 &&
    slurm-pin plot --dir shared 4242.0 --kind gantt -o two-gantt.svg &&
    check_image two-gantt.svg 1200 700 9 41 &&
    grep "job 4242.0 on 2 nodes (node after node)" two-gantt.svg.json &&
    # over PROF_GANTT_GROUP_MIN processes in all: lanes by command
    mkdir -p two-lanes &&
    "$PY" "$MK" two-lanes/4242.0.n1.jsonl --header-job --commands "sim:150" >/dev/null &&
    "$PY" "$MK" two-lanes/4242.0.n2.jsonl --header-job --node n2 \
        --commands "sim:100,reco:20" >/dev/null &&
    slurm-pin plot --dir two-lanes 4242 --kind gantt -o two-lanes.svg &&
    "$PY" "$CHECK" two-lanes.svg "$MAN" >two-lanes.svg.json &&
    test "$(jget two-lanes.svg.json "j[\"heat_rows\"]")" -eq 3 &&
    grep "\"sim (250)\"" two-lanes.svg.json &&
    grep "on 2 nodes (their processes together)" two-lanes.svg.json &&
    slurm-pin plot --dir shared 4242 --node n2 --kind gantt -o n2-gantt.svg &&
    check_image n2-gantt.svg 1200 700 2 4 &&
    # four panels: too short for imgcheck.py to find the frame by its
    # axes; the panels are counted by their labels
    slurm-pin plot --dir shared 4242 --kind states -o two-states.svg &&
    "$PY" "$CHECK" two-states.svg "$MAN" >two-states.svg.json &&
    for t in "n1: processes" "n1: threads" "n2: processes" "n2: threads"; do
        grep "\"$t\"" two-states.svg.json || return 1
    done
'

test_expect_success PY 'JOB of two nodes, io on one: drawn, the other node named as without data' '
    slurm-pin plot --dir shared 4242 --kind io -o two-io.svg &&
    check_image two-io.svg 1200 700 4 &&
    grep "no data for this kind on n2" two-io.svg.json
'

test_expect_success PY 'profile JOB of two nodes: each node, then the total' '
    slurm-pin profile --dir shared 4242 >two.txt &&
    cat two.txt &&
    grep "^step 4242.0 on n1$" two.txt &&
    grep "^step 4242.0 on n2$" two.txt &&
    grep "^step 4242.0, total over 2 nodes$" two.txt &&
    grep "^processes created  39 (+2 roots)$" two.txt &&
    grep "^I/O (cgroup)  *read 10.0 MiB in 100 operations, written 20.0 MiB in 200 (io.stat of 1 of 2 nodes)$" two.txt &&
    slurm-pin profile --dir shared --json 4242 >two.json &&
    test "$(jget two.json "len(j)")" -eq 3 &&
    test "$(jget two.json "\" \".join(str(e.get(\"node\")) for e in j)")" = "n1 n2 None" &&
    test "$(jget two.json "j[2][\"total\"], j[2][\"nodes\"], j[2][\"processes_created\"]")" = "(True, 2, 39)"
'

test_expect_success PY 'a failed plot leaves an existing image as it was' '
    cp full-cpu.png keep.png &&
    fails nosamples.jsonl --kind cpu -o keep.png &&
    test_cmp full-cpu.png keep.png
'

test_expect_success 'an image that cannot be written: one line' '
    fails full.jsonl --kind gantt -o no/such/dir/e.png &&
    grep "no/such/dir/e.png: cannot create" err
'

# -o in a directory a user can write, run by root: a symbolic link or an
# existing file at OUT is never written through (O_NOFOLLOW, O_EXCL), and
# --force replaces the name (a new file renamed over it), not the target.
test_expect_success PY 'an existing OUT is refused without --force, replaced with it' '
    echo precious >exists.png &&
    fails full.jsonl --kind gantt -o exists.png &&
    grep "exists.png: exists; give --force to replace it" err &&
    echo precious >want && test_cmp want exists.png &&
    slurm-pin plot full.jsonl --kind gantt -o exists.png --force &&
    test_cmp full-gantt.png exists.png &&
    slurm-pin plot --help >help &&
    grep "^  -f, --force " help &&
    test -z "$(ls exists.png.* 2>/dev/null)"
'

test_expect_success PY 'a symbolic link at OUT: its target is never truncated' '
    echo precious >target.png &&
    ln -s target.png link.png &&
    fails full.jsonl --kind gantt -o link.png &&
    echo precious >want && test_cmp want target.png &&
    slurm-pin plot full.jsonl --kind gantt -o link.png --force &&
    test_cmp want target.png &&
    test ! -L link.png &&
    test_cmp full-gantt.png link.png &&
    ln -s absent-target.png dangling.png &&
    fails full.jsonl --kind gantt -o dangling.png &&
    test ! -e absent-target.png
'

# A symbolic link to a directory above OUT, made by the user who owns the
# directory root writes into, is followed only into that user's own
# directory: never into one of root's (doc/security.md).
test_expect_success PY,ROOT 'a user'"'"'s directory link to a root-only directory: nothing written there' '
    test_when_finished "rm -rf rootonly userdir scratch" &&
    mkdir -m 700 rootonly && echo precious >rootonly/plot.png &&
    mkdir userdir && chown 65534 userdir &&
    ln -s "$PWD/rootonly" userdir/work && chown -h 65534 userdir/work &&
    fails full.jsonl --kind gantt -o userdir/work/plot.png --force &&
    grep "userdir/work is uid 65534.s and leads to .*/rootonly, a directory of uid 0" err &&
    fails full.jsonl --kind gantt -o userdir/work/new.png &&
    echo precious >want && test_cmp want rootonly/plot.png &&
    test ! -e rootonly/new.png &&
    test -z "$(ls rootonly/plot.png.* 2>/dev/null)" &&
    mkdir scratch && chown 65534 scratch &&
    rm userdir/work && ln -s ../scratch userdir/work &&
    chown -h 65534 userdir/work &&
    slurm-pin plot full.jsonl --kind gantt -o userdir/work/plot.png --force &&
    test_cmp full-gantt.png scratch/plot.png
'

# --- hostile profiles: an exit status, one line at most, never a crash --

test_expect_success PY 'hostile values: exit 0 or 1 for every kind, no crash' '
    "$PY" - hostile.jsonl <<-\EOF &&
	import json, sys
	big = 2**63 - 1
	lines = [
	    {"type": "header", "format": "slurm-pin-profile", "version": 1,
	     "t0": big, "cpus": "0-1000000000", "job": {"x": 1},
	     "node": "a\nb#c", "policy": "x" * 5000, "interval_ms": -5},
	    {"type": "root", "t": -big, "pid": 1, "comm": "\u00e9\u0001#"},
	    {"type": "fork", "t": "soon", "pid": 2, "thread": False},
	    {"type": "fork", "t": 5, "pid": big, "thread": "yes"},
	    {"type": "exit", "t": big, "pid": 3, "thread": False, "start": -1},
	    {"type": "exec", "t": 7, "pid": -4, "tgid": -4, "comm": None},
	    {"type": "confine", "t": 8, "how": [1], "cpus": "x" * 3000},
	    {"type": "sample", "t": 1, "cpus": [[70000] + [1] * 8,
	     [1, -1, 0, 0, 0, 0, 0, 0, 0], [2], "x", [3] + [1] * 8],
	     "procs": [1, 2], "rss_kb": -4, "cg": "none"},
	    {"type": "sample", "t": 0, "cpus": [[3] + [0] * 8],
	     "threads": {"R": big, "S": -big}, "nvcsw": big, "nivcsw": -1},
	    {"type": "sample", "t": 2, "cpus": [[3, big, big] + [0] * 6],
	     "nvcsw": 0, "nivcsw": 0, "pss_kb": big,
	     "cg": {"usage_usec": big, "memory_current": big}},
	    {"type": "mystery", "t": 3},
	]
	with open(sys.argv[1], "w") as f:
	    for l in lines:
	        f.write(json.dumps(l) + "\n")
	EOF
    for k in $KINDS; do
        for e in png svg; do
            slurm-pin plot hostile.jsonl --kind $k -o hostile-$k.$e 2>err
            rc=$?
            echo "$k.$e: exit $rc: $(cat err)"
            test $rc -le 1 && test "$(wc -l <err)" -le 1 || return 1
            if test $rc -eq 0; then
                "$PY" "$CHECK" hostile-$k.$e "$MAN" >/dev/null || return 1
            fi
        done
    done
'

# A recording killed while writing leaves its last line cut: the profile
# is read up to the line before (doc/profiling.md), and drawn.
test_expect_success PY 'a profile cut short inside a line is drawn up to its last whole line' '
    head -c 3000 full.jsonl >cut.jsonl &&
    test "$(tail -c 1 cut.jsonl | od -An -c | tr -d " ")" != "\n" &&
    slurm-pin plot cut.jsonl --kind gantt -o cut.png &&
    "$PY" "$CHECK" cut.png "$MAN" >cut.png.json &&
    test "$(jget cut.png.json "(j[\"width\"], j[\"height\"], len(j[\"colours\"]) > 0)")" = "(1200, 700, True)"
'

# --- a real recording (root) --------------------------------------------

if test_have_prereq ROOT,PY; then
    slurm-pin profile --record probe.jsonl --interval 0 -- /bin/true 2>probe.err
    if grep -q "\"type\":\"exec\"" probe.jsonl 2>/dev/null; then
        test_set_prereq CONNECTOR
    elif test -n "${CI:-}"; then
        test_expect_success 'the proc connector delivers events' '
            cat probe.err; false
        '
    else
        say "the proc connector delivers no events here: the real recording is skipped"
    fi
fi

test_expect_success CONNECTOR 'record a workload that forks a known number of processes' '
    slurm-pin profile --record real.jsonl --interval 100 -- \
        "$PY" "$WORKLOAD" forks 5 30 2 >real-workload.json &&
    slurm-pin profile --json real.jsonl >real-summary.json &&
    cat real-workload.json &&
    slurm-pin profile real.jsonl
'

# The facts of the recording, read from the profile (not from plot).
test_expect_success CONNECTOR 'the facts of the recording' '
    "$PY" - real.jsonl >real.json <<-\EOF &&
	import json, sys
	comm, cpus, roots = {}, set(), 0
	for l in map(json.loads, open(sys.argv[1])):
	    t = l["type"]
	    if t == "root" or (t == "fork" and not l["thread"]):
	        comm[l["pid"]] = l.get("comm")
	        roots += t == "root"
	    elif t in ("exec", "exit") and l["pid"] == l["tgid"] and l["pid"] in comm:
	        comm[l["pid"]] = l["comm"]
	    elif t == "sample":
	        cpus |= {c[0] for c in l.get("cpus", [])}
	for l in map(json.loads, open(sys.argv[1])):
	    if l["type"] == "task" and l["pid"] == l["tgid"] and l["pid"] in comm:
	        comm[l["pid"]] = l["comm"]
	ncmd = len(set(comm.values()))
	print(json.dumps({"processes": len(comm), "roots": roots,
	                  "commands": ncmd, "cpus": len(cpus), "cg": False,
	                  "pss": True, "ncommands": ncmd}))
	EOF
    cat real.json &&
    lost=$(jget real-summary.json "j[\"lost\"][\"sequence_gaps\"] + j[\"lost\"][\"enobufs\"] + j[\"lost\"][\"socket_drops\"]") &&
    if test "$lost" -eq 0; then
        test "$(jget real.json "j[\"processes\"]")" -eq \
            $(( $(jget real-workload.json "j[\"processes\"]") + 1 ))
    else
        say "events lost: $lost"
    fi
'

for kind in $KINDS; do
    test_expect_success CONNECTOR "real recording, $kind: PNG and SVG with their series" '
        slurm-pin plot real.jsonl --kind '$kind' -o real-'$kind'.png &&
        slurm-pin plot real.jsonl --kind '$kind' -o real-'$kind'.svg --size 900x500 &&
        want=$(want_series real.json '$kind') &&
        check_image real-'$kind'.png 1200 700 $want &&
        check_image real-'$kind'.svg 900 500 $want
    '
done

test_expect_success CONNECTOR 'real recording: one bar per process, the forks and the root' '
    n=$(jget real.json "j[\"processes\"]") &&
    echo "$(jget real-workload.json "j[\"processes\"]") forks + $(jget real.json "j[\"roots\"]") root = $n processes in the profile" &&
    test "$(jget real-gantt.svg.json "j[\"bars\"]")" -eq "$n" &&
    test "$(jget real-gantt.png.json "j[\"bars\"]")" -eq "$n"
'

test_done
