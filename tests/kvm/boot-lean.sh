#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The lean test kernel on two vCPUs, booted to the test /init
# (docs/TEST-GUEST.md) and back: both CPUs come up, /init runs its cpus and
# uname steps, the guest reboots and vmmtrace exits 0 with the console on its
# stdout. The vector-state step checks that task switches in the guest keep
# each task's AVX/AVX-512 registers (on this host only through the compat
# layer's xsave/xrstor assists), and sigframe that signal frames get the
# same from the kernel, a corrupt one ending its task with SIGSEGV (the
# assists' #PF and #GP). Guest kernel code may be emulated here (about 80 s
# to /init), so one boot serves every check; a hang is cut off after
# LEAN_TIMEOUT seconds.
. "$(dirname "$0")/../lib.sh"
require_kvm
require_file "$VMMTRACE"
require_file "$LEAN_BZIMAGE"
require_file "$INITRAMFS"
timeout_s=${LEAN_TIMEOUT:-900}
raw=$TMPD/stdout out=$TMPD/console err=$TMPD/stderr
not_grep() { ! grep -q "$@"; }

# The same boot is the oracle for symbol recovery (issue 3): /init looks up
# names chosen at random here, plus the ones the tracer relies on, in the
# guest's own /proc/kallsyms; each must equal what vmmtrace recovered.
oracle=$TOP/tests/guest/kallsyms-oracle-names.sh
"$oracle" pick "$LEAN_BZIMAGE" 1500 >"$TMPD/expected" 2>/dev/null
"$VMMTRACE" symbols "$LEAN_BZIMAGE" setup_arch ftrace_init __fentry__ __start_mcount_loc \
	level3_kernel_pgt cpu_number 2>/dev/null >>"$TMPD/expected"
"$oracle" names "$TMPD/expected" >"$TMPD/names.txt"
"$TOP/tests/guest/make-names-initrd.sh" "$TMPD/names.txt" "$TMPD/names.cpio" >/dev/null
cat "$INITRAMFS" "$TMPD/names.cpio" >"$TMPD/initrd"
nnames=$(wc -l <"$TMPD/names.txt")

start=$(date +%s)
# -v: the exit reason goes to stderr even when the status is 0.
timeout -k 30 -s INT "$timeout_s" "$VMMTRACE" boot "$LEAN_BZIMAGE" --initrd "$TMPD/initrd" \
	--cpus 2 --cmdline "vmmtrace.steps=cpus,uname,kallsyms,vector-state,sigframe vmmtrace.expect_cpus=2 vmmtrace.kallsyms_max=4000" -v \
	</dev/null >"$raw" 2>"$err"
rc=$?
echo "INFO: lean kernel, 2 vCPUs: exit status $rc after $(( $(date +%s) - start )) s"
tr -d '\r' <"$raw" >"$out"
grep -E '^VMMTRACE-|Brought up|Run /init|reboot:' "$out" | grep -v '^KSYM' | sed 's/^/    console: /'
grep -v 'compat assist' "$err" | sed 's/^/    stderr: /'

check "vmmtrace exits 0 after the guest reboots (status $rc)" [ "$rc" = 0 ]
check "it was not cut off by the ${timeout_s} s timeout nor killed by a signal" [ "$rc" -lt 124 ]
check "stdout carries the guest console from the first kernel line" \
	grep -q '^\[ *0\.000000\] Linux version ' "$out"
check "the kernel brought up both vCPUs" grep -q 'smp: Brought up 1 node, 2 CPUs' "$out"
check "the kernel started /init" grep -q 'Run /init as init process' "$out"
check "/init started" grep -qx 'VMMTRACE-INIT: start' "$out"
check "cpus step passed" grep -q '^VMMTRACE-RESULT cpus PASS 2 CPUs online' "$out"
check "cpus step counted 2 online CPUs" grep -qE '^VMMTRACE-STEP cpus: .*\bcount=2( |$)' "$out"
check "... and init may run on both (nproc=2)" grep -qE '^VMMTRACE-STEP cpus: .*\bnproc=2( |$)' "$out"
check "uname step passed on x86_64" grep -qE '^VMMTRACE-STEP uname: .*\bmachine=x86_64( |$)' "$out"
check "... naming the kernel release" grep -qE '^VMMTRACE-RESULT uname PASS [0-9]+\.[0-9]+' "$out"
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
	# sigxstate's frame reaching an untouched page (#PF) and its corrupt header (#GP)
	check "... which raised the #PF and the #GP of sigframe in the guest" \
		grep -qE 'compat assist fault-injected +fired ([2-9]|[1-9][0-9]+) times' "$err"
fi
check "no user process segfaulted" not_grep 'segfault at' "$out"
check "/init finished every step: done passed=5 failed=0" \
	grep -qx 'VMMTRACE-INIT: done passed=5 failed=0' "$out"
"$oracle" check "$TMPD/expected" "$out" >"$TMPD/oracle" 2>&1
orc=$?
grep '^FAIL' "$TMPD/oracle" | head -5 | sed 's/^FAIL/    mismatch/'
check "all $nnames names in the guest's /proc/kallsyms equal the recovered symbols ($(grep -c '^PASS' "$TMPD/oracle") match)" \
	[ "$orc" = 0 -a "$(grep -c '^PASS' "$TMPD/oracle")" = "$nnames" ]
check "the guest rebooted" grep -q 'reboot: Restarting system' "$out"
check "vmmtrace reports the reboot as the exit reason" grep -q 'guest rebooted' "$err"
check "no kernel panic on the console" not_grep 'Kernel panic' "$out"
finish
