#!/bin/sh

test_description='src/common: no arrow up into the plugins or the command, no circle

contrib/check-layering.py reads the #include lines of every library in
src/common/lib*/ and, in the build, the symbols each object file of a
library archive defines and uses (nm).  A library must not include a file
of src/plugins/ or src/cmd/, and neither libraries nor the files of one
library may use each other in a circle.  The checker is first shown to
find each kind of fault in a small crafted tree, then run on the real one.
'

. "$(dirname "$0")/sharness.sh"

CHECK="$PIN_SRCDIR/contrib/check-layering.py"

pin_prereq_cmd PYTHON3 python3
pin_prereq_cmd NM nm
pin_prereq_cmd CC "${CC:-cc}"

# mklib DIR/FILE.c TEXT: a source file of the crafted tree
mkfile () {
    mkdir -p "$(dirname "$1")" &&
    printf "%s\n" "$2" >"$1"
}

test_expect_success PYTHON3 'crafted tree: clean libraries pass' '
    mkfile fake/src/common/liba/a.h "int a (void);" &&
    mkfile fake/src/common/liba/a.c "#include \"liba/a.h\"" &&
    mkfile fake/src/common/libb/b.c "#include \"liba/a.h\"" &&
    "$CHECK" --srcdir fake >out &&
    grep "no circle" out
'

test_expect_success PYTHON3 'crafted tree: an include of src/plugins fails' '
    test_when_finished "rm -rf fake/src/plugins fake/src/common/libb/bad.c" &&
    mkfile fake/src/plugins/spank/opt.c "int opt;" &&
    mkfile fake/src/common/libb/bad.c "#include \"../../plugins/spank/opt.c\"" &&
    test_expect_code 1 "$CHECK" --srcdir fake >out &&
    grep "src/common/libb/bad.c:1: a library includes src/plugins/spank/opt.c" out
'

test_expect_success PYTHON3 'crafted tree: two libraries including each other fail' '
    test_when_finished "rm -f fake/src/common/liba/back.c" &&
    mkfile fake/src/common/libb/b.h "int b (void);" &&
    mkfile fake/src/common/liba/back.c "#include \"libb/b.h\"" &&
    test_expect_code 1 "$CHECK" --srcdir fake >out &&
    grep "libraries include each other in a circle: liba libb" out
'

# mkar LIB FILE TEXT...: compile FILE.c of LIB into its archive, as
# libtool leaves a convenience library (build/src/common/LIB/.libs/LIB.a)
mkar () {
    lib=$1 &&
    shift &&
    mkdir -p "fakebuild/src/common/$lib/.libs" &&
    for f in "$@"
    do
        ${CC:-cc} -c -o "fakebuild/src/common/$lib/${lib}_la-$f.o" \
            "fakebuild/$lib-$f.c" || return 1
    done &&
    (cd "fakebuild/src/common/$lib" &&
     rm -f ".libs/$lib.a" &&
     for f in "$@"; do ar rc ".libs/$lib.a" "${lib}_la-$f.o" || exit 1; done)
}

test_expect_success PYTHON3,NM,CC 'crafted build: two files of one library calling each other fail' '
    mkdir -p fakebuild &&
    echo "int m (void); int c (void) { return m (); }" >fakebuild/libx-cache.c &&
    echo "int c (void); int m (void) { return 1; } int w (void) { return c (); }" \
        >fakebuild/libx-model.c &&
    mkar libx cache model &&
    test_expect_code 1 "$CHECK" --srcdir fake --builddir fakebuild >out &&
    cat out &&
    grep "files of one library call each other in a circle: libx/cache.c libx/model.c" out &&
    grep "libx/model.c -> libx/cache.c (c)" out
'

test_expect_success PYTHON3,NM,CC 'crafted build: the same without the back call passes' '
    echo "int c (void) { return 1; }" >fakebuild/libx-model.c &&
    echo "int c (void); int w (void) { return c (); }" >fakebuild/libx-cache.c &&
    mkar libx cache model &&
    "$CHECK" --srcdir fake --builddir fakebuild >out &&
    grep "1 archives by symbol" out
'

test_expect_success PYTHON3,NM,CC 'crafted build: two libraries calling each other fail' '
    echo "int y (void); int x (void) { return y (); }" >fakebuild/libx-x.c &&
    echo "int x (void); int y (void) { return x (); }" >fakebuild/liby-y.c &&
    mkar libx x &&
    mkar liby y &&
    test_expect_code 1 "$CHECK" --srcdir fake --builddir fakebuild >out &&
    grep "libraries call each other in a circle: libx liby" out
'

test_expect_success PYTHON3,NM 'slurm-pin: no include of src/plugins or src/cmd, no circle' '
    "$CHECK" --srcdir "$PIN_SRCDIR" --builddir "$PIN_BUILDDIR" >out ||
    { cat out; false; }
'

test_done
