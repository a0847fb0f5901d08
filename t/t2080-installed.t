#!/bin/sh

test_description='the installed packages: the files a site gets work as installed

Runs only with PIN_INSTALLED (contrib/test-all.sh'"'"'s packages tier, after
contrib/build-debs.sh --install): the plugstack.conf.d drop-in, with its
one line uncommented as the admin guide says, loads the installed pin.so,
which reads the installed /etc/slurm/pin.conf as shipped (every key
commented out: the defaults); the tmpfiles.d entry made the directories
with the modes the code requires; the timer of slurm-pin deliver is
installed but not enabled; the plugins come without .la files; and what a
compute node installs (slurm-pin, slurm-pin-spank) pulls no PLplot, cairo,
Qt or GTK, by the dependency closure apt computes.
'

. "$(dirname "$0")/sharness.sh"

if ! test_have_prereq INSTALLED; then
    skip_all="the installed packages are tested with PIN_INSTALLED=1 (contrib/test-all.sh --tiers packages)"
    test_done
fi

slurm_require
pin_so_prereq

DROPIN=/etc/slurm/plugstack.conf.d/50-slurm-pin.conf

test_expect_success 'the packages are installed, from this build'"'"'s version' '
    dpkg-query -W -f "\${Package} \${Version} \${Status}\n" \
        slurm-pin slurm-pin-spank slurm-pin-jobsubmit slurm-pin-plot >pkgs &&
    test "$(grep -c " install ok installed$" pkgs)" -eq 4 &&
    version=$(sed -n "s/^PACKAGE_VERSION = //p" "$PIN_BUILDDIR/Makefile") &&
    "$PIN_BIN/slurm-pin" --version >v &&
    test "$(cat v)" = "slurm-pin $version" &&
    dpkg -S "$PIN_BIN/slurm-pin" | grep "^slurm-pin:" &&
    dpkg -S "$PIN_SO" | grep "^slurm-pin-spank:" &&
    dpkg -S "$PIN_JS_DIR/job_submit_pin.so" | grep "^slurm-pin-jobsubmit:"
'

test_expect_success 'no .la file of ours in the plugin directory' '
    test ! -e "$PIN_JS_DIR/pin.la" &&
    test ! -e "$PIN_JS_DIR/job_submit_pin.la" &&
    ! dpkg -L slurm-pin-spank slurm-pin-jobsubmit | grep "\.la$"
'

test_expect_success 'tmpfiles.d made the directories, with the modes the code requires' '
    for d in /run/slurm-pin:700 /var/lib/slurm-pin/journal:700 \
             /var/lib/slurm-pin/profile:755 /var/cache/slurm-pin:755; do
        test "$(stat -c "%a %U" "${d%%:*}")" = "${d##*:} root" ||
        { stat -c "%n %a %U" "${d%%:*}"; return 1; }
    done
'

test_expect_success 'the deliver timer is installed, not enabled' '
    dpkg -L slurm-pin | grep "/slurm-pin-deliver\.timer$" &&
    dpkg -L slurm-pin | grep "/slurm-pin-deliver\.service$" &&
    ! ls /etc/systemd/system/*.wants/slurm-pin-deliver.* 2>/dev/null
'

test_expect_success 'a compute node (slurm-pin, slurm-pin-spank) pulls no PLplot, cairo, Qt or GTK' '
    apt-cache depends --recurse --no-recommends --no-suggests \
        --no-conflicts --no-breaks --no-replaces --no-enhances \
        slurm-pin slurm-pin-spank >closure &&
    grep -q "^slurm-pin-spank$" closure &&
    ! grep -Ei "plplot|cairo|qt|gtk" closure
'

test_expect_success 'pin.conf as installed: every key commented out, loads, nothing set' '
    test -f /etc/slurm/pin.conf &&
    ! grep -Ev "^[[:space:]]*(#|$)" /etc/slurm/pin.conf &&
    grep "^#DeliverCommand=$PIN_BIN/slurm-pin$" /etc/slurm/pin.conf &&
    slurm-pin check --conf /etc/slurm/pin.conf >check.out 2>&1 ||
    { cat check.out; false; }
'

test_expect_success PIN_SO 'start Slurm with the drop-in'"'"'s line uncommented' '
    sed -n "s/^#[[:space:]]*\(required[[:space:]].*pin\.so.*\)$/\1/p" \
        "$DROPIN" >plugstack.conf &&
    test "$(wc -l <plugstack.conf)" -eq 1 &&
    grep -F "required $PIN_SO" plugstack.conf &&
    slurm_start --plugstack plugstack.conf
'

test_expect_success SLURM,PIN_SO 'a pinned step with the installed pin.so and pin.conf' '
    srun -n 1 -c 1 --pin-policy=numa-local,verbose \
        grep Cpus_allowed_list /proc/self/status >out 2>err &&
    grep "^pin: " err &&
    grep "policy=numa-local\|numa-local" err &&
    grep "^Cpus_allowed_list:" out
'

test_expect_success SLURM,PIN_SO 'a bad policy is refused by the installed pin.so, one line' '
    test_must_fail srun --pin-policy=numa-locl true 2>err &&
    grep "pin: " err >ours &&
    test "$(wc -l <ours)" -eq 1 &&
    grep -F "numa-locl" ours
'

test_expect_success SLURM,PIN_SO 'slurm-pin plot runs the installed slurm-pin-plot' '
    slurm-pin plot --help >h &&
    grep "^Usage: slurm-pin plot" h &&
    dpkg -S "$PIN_BIN/slurm-pin-plot" | grep "^slurm-pin-plot:"
'

test_done
