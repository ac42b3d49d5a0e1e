#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The examples that need no KVM run as they are and print what their
# comments promise: arm64-qemu.sh, and symbols.sh, boot-trace.sh and
# boot-diff.sh on the lean x86_64 kernel. The last two boot on vmmtrace's
# default host, KVM where /dev/kvm opens: here they are given `--host qemu`
# (through a wrapper that adds it to `vmmtrace boot`), which boots in
# seconds where this project's KVM hosts take minutes; their features run
# on KVM in tests/e2e/answers-kvm.sh and hosts-x86.sh. tests/kvm/examples.sh
# runs the examples that need KVM.
. "$(dirname "$0")/../lib.sh"
require_file "$VMMTRACE"
require_file "$VMMTRACE_CACHE/lean-arm64/Image"
require_file "$LEAN_BZIMAGE"
EX=$TOP/examples
# vmmtrace boot with --host qemu, whatever the machine has.
cat >"$TMPD/vmmtrace-qemu" <<EOF
#!/bin/sh
[ "\$1" = boot ] && { shift; exec "$VMMTRACE" boot --host qemu "\$@"; }
exec "$VMMTRACE" "\$@"
EOF
chmod +x "$TMPD/vmmtrace-qemu"
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

# symbols.sh: no boot; start_kernel and setup_arch found, and vfs_read's slot
# as the compiler left it (call __fentry__, e8 rel32).
VMMTRACE=$VMMTRACE "$EX/symbols.sh" "$LEAN_BZIMAGE" >"$TMPD/symbols.out" 2>"$TMPD/symbols.err"
rc=$?
check "symbols.sh: status 0 (got $rc)" [ "$rc" = 0 ]
check "symbols.sh: start_kernel is a text symbol" grep -qE '^ffffffff[0-9a-f]{8} T start_kernel$' "$TMPD/symbols.out"
check "symbols.sh: setup_arch is a text symbol" grep -qE '^ffffffff[0-9a-f]{8} T setup_arch$' "$TMPD/symbols.out"
check "symbols.sh: five vfs_* symbols" [ "$(grep -cE ' [Tt] vfs_' "$TMPD/symbols.out")" = 5 ]
check "symbols.sh: vfs_read's slot is call __fentry__" grep -qE '^ffffffff[0-9a-f]{8} vfs_read e8( [0-9a-f]{2}){4} ' "$TMPD/symbols.out"

# boot-trace.sh: exactly the four functions, once each, in boot order, and
# the summary splits them around ftrace_init.
VMMTRACE=$TMPD/vmmtrace-qemu timeout -k 5 300 "$EX/boot-trace.sh" "$LEAN_BZIMAGE" >"$TMPD/boot.out" 2>"$TMPD/boot.err"
rc=$?
check "boot-trace.sh: status 0 (got $rc)" [ "$rc" = 0 ]
check "boot-trace.sh: start_kernel, setup_arch, trap_init, sched_init in that order" \
	[ "$(trace_funcs "$TMPD/boot.out" | tr '\n' ' ')" = "start_kernel setup_arch trap_init sched_init " ]
check "boot-trace.sh: stopped at rest_init" grep -q "stopped at rest_init (--stop-at)" "$TMPD/boot.err"
check "boot-trace.sh: 3 events before ftrace_init, 1 after, none dropped" \
	grep -q "trace: 4 events (3 before ftrace_init, 1 after); 4 slots held; .* 0 dropped" "$TMPD/boot.err"

# boot-diff.sh: three boots of each, B's without proc_version_init; the
# diff of one of each names it and its caller in its first lines and
# exits 1; the diff of the runs names it as the one parting in every run;
# --stat of A's runs has it once in each.
VMMTRACE=$TMPD/vmmtrace-qemu timeout -k 5 900 "$EX/boot-diff.sh" "$LEAN_BZIMAGE" >"$TMPD/diff.out" 2>"$TMPD/diff.err"
rc=$?
check "boot-diff.sh: status 0 (got $rc), all six boots stopped at populate_rootfs" \
	eval "[ '$rc' = 0 ] && [ \$(grep -c 'stopped at populate_rootfs (--stop-at)' '$TMPD/diff.err') = 6 ]"
check "boot-diff.sh: diff of one boot each exits 1, the boots part in pid 1 where B leaves out proc_version_init" \
	eval "grep -qx '### exit status 1 (0: the boots agree, 1: they part)' '$TMPD/diff.out' &&
	      grep -qE '^vmmtrace diff: the boots part in 1 of [0-9]+ tasks; first in [^ ]+-1 at call' '$TMPD/diff.out' &&
	      grep -q '^first parting point: A calls proc_version_init <- do_one_initcall, B calls ' '$TMPD/diff.out'"
check "boot-diff.sh: proc_version_init is called in A only" \
	eval "sed -n '/^functions called in A only: 1\$/{n;p}' '$TMPD/diff.out' | grep -qE '^ +1  proc_version_init\$'"
check "boot-diff.sh: the diff of 3 runs against 3 exits 1 with proc_version_init under do_one_initcall its one parting" \
	eval "grep -qx '### exit status 1 (0: the boots agree in every run, 1: they part in every run)' '$TMPD/diff.out' &&
	      grep -q '^vmmtrace diff: the boots part in 1 place in every run (3 of A against 3 of B)' '$TMPD/diff.out' &&
	      grep -A1 '^- proc_version_init <- do_one_initcall ' '$TMPD/diff.out' | grep -q '^    calls per run: A 1, B 0;'"
check "boot-diff.sh: report --stat of A's runs: proc_version_init once in each (fewest, median, most)" \
	eval "sed -n '/^runs: 3: a1.raw a2.raw a3.raw\$/,\$p' '$TMPD/diff.out' | grep -qE '^ +1 +1 +1 .*  proc_version_init\$'"
finish
