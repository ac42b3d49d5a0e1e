#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# What a user with hardware KVM gets (issue 29): there the compat layer is
# off and with it the options that only shorten an emulated boot; the
# guest kernel then runs its own checks against what vmmtrace put into its
# address space. Here the layer stays on (the guest cannot run without
# clearcpuid), --fast-boot off takes the rest away, and the lean kernel
# built with CONFIG_DEBUG_WX (as Debian's, Ubuntu's and Fedora's are:
# lean-wx.config) boots on two vCPUs, traced from start_kernel, to the
# test /init (docs/TEST-GUEST.md) and back. One boot serves every check
# (guest kernel code is emulated here: about 5 minutes):
# - the command line has no speed-only option, and -v said why each
#   compat option is there;
# - the kernel's W+X check walks every page table, the stub's among them
#   (a setup_data node in its direct map), and passes; no oops, no
#   WARNING, no BUG;
# - the trace holds start_kernel, the boot's early setup_arch and
#   mark_rodata_ro (which runs the check), once each;
# - both CPUs come up, /init runs its cpus and uname steps; the
#   vector-state step checks that task switches keep each task's AVX
#   registers (on this host only through the compat layer's xsave/xrstor
#   assists), and sigframe that signal frames get the same from the
#   kernel, a corrupt one ending its task with SIGSEGV;
# - the boot is the oracle for symbol recovery (issue 3): /init looks up
#   names chosen at random here, plus the ones the tracer relies on, in the
#   guest's own /proc/kallsyms; each must equal what vmmtrace recovered;
# - the guest reboots and vmmtrace exits 0.
. "$(dirname "$0")/../lib.sh"
require_kvm
require_file "$VMMTRACE"
WX=$VMMTRACE_CACHE/lean-wx/bzImage
require_file "$WX"
require_file "$INITRAMFS"
timeout_s=${LEAN_TIMEOUT:-1200}
out=$TMPD/console err=$TMPD/err
not_grep() { ! grep -q "$@"; }

oracle=$TOP/tests/guest/kallsyms-oracle-names.sh
"$oracle" pick "$WX" 1500 >"$TMPD/expected" 2>/dev/null
"$VMMTRACE" symbols "$WX" setup_arch ftrace_init __fentry__ __start_mcount_loc \
	level3_kernel_pgt cpu_number 2>/dev/null >>"$TMPD/expected"
"$oracle" names "$TMPD/expected" >"$TMPD/names.txt"
"$TOP/tests/guest/make-names-initrd.sh" "$TMPD/names.txt" "$TMPD/names.cpio" >/dev/null
cat "$INITRAMFS" "$TMPD/names.cpio" >"$TMPD/initrd"
nnames=$(wc -l <"$TMPD/names.txt")

start=$(date +%s)
timeout -k 30 -s INT "$timeout_s" "$VMMTRACE" boot "$WX" --fast-boot off -v --cpus 2 --initrd "$TMPD/initrd" \
	--cmdline "vmmtrace.steps=cpus,uname,kallsyms,vector-state,sigframe vmmtrace.expect_cpus=2 vmmtrace.kallsyms_max=4000" \
	--trace start_kernel --trace setup_arch --trace mark_rodata_ro -o "$TMPD/trace.txt" --console "$TMPD/con.raw" \
	</dev/null >"$TMPD/stdout" 2>"$err"
rc=$?
echo "INFO: lean kernel with CONFIG_DEBUG_WX, 2 vCPUs, --fast-boot off: exit status $rc after $(( $(date +%s) - start )) s"
tr -d '\r' <"$TMPD/con.raw" >"$out"
grep -E '^vmmtrace: (trace|info: (compat|--fast-boot))' "$err" | sed 's/^/INFO: /'
grep -E 'W\+X|Command line|^VMMTRACE-(STEP|RESULT)' "$out" | sed 's/^/INFO: /'

check "vmmtrace exits 0 after the guest reboots (status $rc)" [ "$rc" = 0 ]
check "it was not cut off by the ${timeout_s} s timeout nor killed by a signal" [ "$rc" -lt 124 ]
cmdline=$(sed -n 's/.*Command line: //p' "$out" | head -n 1)
check "no speed-only option on the command line ($cmdline)" \
	eval "[ -n '$cmdline' ] && ! echo '$cmdline' | grep -qE 'rodata=off|cryptomgr.notests|initcall_blacklist'"
check "the compat layer's options are there, each with its reason (-v)" \
	eval "echo '$cmdline' | grep -q 'clearcpuid=' && grep -q '^vmmtrace: info: compat layer: clearcpuid=.* added to the command line: ' '$err'"
check "the kernel's W+X check walked the stub's tables and passed" \
	grep -q 'x86/mm: Checked W+X mappings: passed, no W+X pages found' "$out"
check "no oops, no BUG, no WARNING, no panic" sh -c "! grep -qE 'Oops|BUG:|WARNING:|Kernel panic|ftrace failed' '$out'"
for f in start_kernel setup_arch mark_rodata_ro; do
	n=$(grep -c ": $f <-" "$TMPD/trace.txt")
	check "the trace has $f once ($n)" [ "$n" = 1 ]
done

check "the console holds the kernel's from its first line; nothing else on stdout" \
	eval "grep -q '^\[ *0\.000000\] Linux version ' '$out' && [ ! -s '$TMPD/stdout' ]"
check "the kernel brought up both vCPUs" grep -q 'smp: Brought up 1 node, 2 CPUs' "$out"
check "the kernel started /init" grep -q 'Run /init as init process' "$out"
check "cpus step passed, 2 online CPUs, init may run on both" \
	eval "grep -q '^VMMTRACE-RESULT cpus PASS 2 CPUs online' '$out' && grep -qE '^VMMTRACE-STEP cpus: .*\\bcount=2 .*\\bnproc=2( |\$)' '$out'"
check "uname step passed on x86_64, naming the kernel release" \
	eval "grep -qE '^VMMTRACE-STEP uname: .*\\bmachine=x86_64( |\$)' '$out' && grep -qE '^VMMTRACE-RESULT uname PASS [0-9]+\\.[0-9]+' '$out'"
# The guest's user code sees the host CPU's vector extensions.
want=$(host_vector_level)
check "vector-state: 3 tasks switching on one vCPU kept their vector registers, checked=$want" \
	grep -qx "VMMTRACE-RESULT vector-state PASS 3 workers on CPU 0 x 300 yields, checked=$want" "$out"
check "sigframe: a handler on a fresh stack kept the vector state; a corrupt frame got SIGSEGV" \
	grep -qx "VMMTRACE-RESULT sigframe PASS vector state kept across a handler; a corrupt frame ends the task with SIGSEGV" "$out"
check "... and the kernel's xsave into that frame reached a page nothing had touched (fresh=1)" \
	grep -q "^VMMTRACE-STEP sigframe: ok=0 bad=139 ok-said='SIGXSTATE ok kept=1 fresh=1'" "$out"
if grep -q 'compat layer on' "$err"; then
	check "... through the compat layer's xsave and xrstor assists" \
		grep -qE 'compat assist xrstor +fired [1-9][0-9]* times' "$err"
	# sigxstate's frame reaching an untouched page (#PF) and its corrupt
	# header (#GP) usually come through the assists (2 to 4 injected), but
	# not always: in one run of make check (2026-11-27) fewer than 2 were
	# injected and the guest saw the same outcome, which the checks above
	# hold to (this host's KVM seems to raise them itself at times). So
	# the count is said, not checked.
	echo "INFO: faults the assists injected: $(sed -nE 's/.*compat assist fault-injected +fired ([0-9]+) times/\1/p' "$err")"
fi
check "no user process segfaulted" not_grep 'segfault at' "$out"
check "/init finished every step: done passed=5 failed=0" \
	grep -qx 'VMMTRACE-INIT: done passed=5 failed=0' "$out"
"$oracle" check "$TMPD/expected" "$out" >"$TMPD/oracle" 2>&1
orc=$?
grep '^FAIL' "$TMPD/oracle" | head -5 | sed 's/^FAIL/INFO: mismatch/'
check "all $nnames names in the guest's /proc/kallsyms equal the recovered symbols ($(grep -c '^PASS' "$TMPD/oracle") match)" \
	[ "$orc" = 0 -a "$(grep -c '^PASS' "$TMPD/oracle")" = "$nnames" ]
check "the guest rebooted, and vmmtrace says so" \
	eval "grep -q 'reboot: Restarting system' '$out' && grep -q 'guest rebooted' '$err'"
finish
