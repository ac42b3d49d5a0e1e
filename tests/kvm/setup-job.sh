#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The README's first command, scripts/setup.sh, run as a user runs it, on
# this machine's cache (the packages and the lean kernel already there, so
# what it costs is its default job): status 0, a line with the seconds of
# each step, the lean kernel built alongside the packages and vmmtrace, and
# the default job's trace on stdout: the five boot phases from
# start_kernel, once each and in boot order, stopped at kernel_init, with
# nothing dropped; the console on stderr. Where /dev/kvm does not open the
# job runs under QEMU; this test wants the KVM path.
. "$(dirname "$0")/../lib.sh"
require_file "$LEAN_BZIMAGE"
require_file "$INITRAMFS"
require_kvm

timeout -k 10 600 "$TOP/scripts/setup.sh" </dev/null >"$TMPD/out" 2>"$TMPD/err"
rc=$?
grep '^vmmtrace-setup:' "$TMPD/err" | sed 's/^/INFO: /'
check "setup.sh: status 0 (got $rc)" [ "$rc" = 0 ]
for step in "packages: the [0-9]* the lean kernel's build needs \(apt\)" \
	"packages: the other [0-9]* the first trace needs \(apt\), while the kernel builds" \
	"vmmtrace, while the kernel builds" "the lean kernel and its initramfs" "the default job"; do
	check "setup.sh says how long '$step' took" grep -qE "^vmmtrace-setup:    $step: [0-9]+ s" "$TMPD/err"
done
check "the lean kernel's own lines are shown once it is done" \
	grep -q '^   | vmmtrace-setup: lean kernel cached in ' "$TMPD/err"
check "the default job runs on KVM here" eval "! grep -q 'runs the default job under QEMU' '$TMPD/err'"
funcs=$(grep -v '^#' "$TMPD/out" | sed -n 's/.*: \([a-z_]*\) <-.*/\1/p' | tr '\n' ' ')
check "the trace on stdout: the five boot phases once each, in boot order (got: $funcs)" \
	[ "$funcs" = "start_kernel setup_arch trap_init sched_init rest_init " ]
check "swapper/0 ran them on CPU 0" eval "[ \$(grep -v '^#' '$TMPD/out' | grep -c '^ *swapper/0-[01] *\[000\]') = 5 ]"
check "the job stopped at kernel_init, nothing dropped" \
	eval "grep -q 'stopped at kernel_init (--stop-at) on vCPU 0' '$TMPD/err' && grep -qE '^vmmtrace: trace: 5 events .* 0 dropped' '$TMPD/err'"
check "the console went to stderr ('Linux version'), not into the trace" \
	eval "grep -q 'Linux version' '$TMPD/err' && ! grep -q 'Linux version' '$TMPD/out'"
check "setup.sh's last word: the default job is done" grep -q "default job done: the guest ran to kernel_init" "$TMPD/err"
finish
