set -x
contrib/install-deps.sh >/dev/null 2>&1 || exit 1
./autogen.sh >/dev/null 2>&1 && mkdir -p build && cd build && ../configure >/dev/null 2>&1 && make -j2 >/dev/null 2>&1 || exit 2
cd t && PIN_REQUIRE_SLURM=1 make check TESTS=t4080-acct-dbd.t >/dev/null 2>&1
grep -E '^(ok|not ok)' t4080-acct-dbd.log | head -3
cat "trash directory.t4080-acct-dbd/slurm/log/start.log" 2>/dev/null | tail -30
tail -20 "trash directory.t4080-acct-dbd/slurm/log/slurmd-vm-2.log" 2>/dev/null
tail -10 "trash directory.t4080-acct-dbd/slurm/log/slurmctld.log" 2>/dev/null
grep -v '^ok\|^PASS\|^SKIP' t4080-acct-dbd.log | head -40
