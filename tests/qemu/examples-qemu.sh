#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The examples that need no KVM (examples/arm64-qemu.sh) run as they are
# and print what their comments promise; tests/kvm/examples.sh runs the rest.
. "$(dirname "$0")/../lib.sh"
require_file "$VMMTRACE"
require_file "$VMMTRACE_CACHE/lean-arm64/Image"
VMMTRACE=$VMMTRACE timeout -k 5 120 "$TOP/examples/arm64-qemu.sh" >"$TMPD/a64.out" 2>"$TMPD/a64.err"
rc=$?
check "arm64-qemu.sh: status 0 (got $rc)" [ "$rc" = 0 ]
check "arm64-qemu.sh: start_kernel's slot, two NOPs as compiled" \
	grep -qE '^ffffffc[0-9a-f]{9} start_kernel 1f 20 03 d5 1f 20 03 d5 original$' "$TMPD/a64.out"
check "arm64-qemu.sh: the traced boot: early_init_dt_scan with its argument, called by setup_arch" \
	grep -qE '^ +swapper/0-0 +\[000\] .{5} +[0-9.]+: early_init_dt_scan\(params=0x[0-9a-f]+\) <-setup_arch$' "$TMPD/a64.out"
check "arm64-qemu.sh: the traced boot: rest_init, the last, after sched_init" \
	eval "grep -oE ': (start_kernel|setup_arch|sched_init|rest_init)\\(' '$TMPD/a64.out' | tr -d ':( ' | tr '\n' ' ' | grep -qx 'start_kernel setup_arch sched_init rest_init '"
check "arm64-qemu.sh: stopped at kernel_init, the summary on stderr" \
	eval "grep -q '^vmmtrace: stopped at kernel_init (--stop-at)' '$TMPD/a64.err' && grep -q '^vmmtrace: trace: .* 0 dropped' '$TMPD/a64.err'"
check "arm64-qemu.sh: the boot ended in the kernel's panic, status 3" grep -qx '### exit status 3 (3: the guest kernel panicked)' "$TMPD/a64.out"
check "arm64-qemu.sh: the panic line on stderr" grep -q '^vmmtrace: guest kernel panic: No working init found' "$TMPD/a64.err"
finish
