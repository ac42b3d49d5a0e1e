#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The lean 6.12 kernels (scripts/build-lean-kernel.sh arm64-6.12,
# riscv64-6.12, x86_64-6.12) under QEMU: the checks the 6.1 lean kernels
# pass (tests/qemu/guest-qemu.sh, x86-qemu.sh, attach-qemu.sh), on 6.12
# as it builds what users run:
#  - arm64 built with clang: per-callsite ops (an 8-byte literal before
#    every function), BTI (`bti c` before each slot) and pointer
#    authentication: every slot attributed, exact per-worker counts
#    through small wrapping rings, the guest's own ftrace after the
#    hand-over, --trace '*' to the reboot with nothing dropped, the
#    first-hit order against QEMU's breakpoints, 20 attach/detach cycles
#    with every window exact; and the same kernel with no padding below
#    _etext (lean-arm64-6.12-nopad): the stub in _end's guard page, which
#    the host maps in the tables the kernel builds for itself; and
#    built with gcc at -Os (lean-arm64-6.12-gcc): WITH_ARGS without call
#    ops, neither BTI nor pointer authentication;
#  - riscv64 6.12 (WITH_ARGS, the auipc/jalr detour), with and without
#    STRICT_KERNEL_RWX (the stub below __init_begin, or past the image's
#    end): the same, but attach (riscv64's cinit has no marker loop:
#    attach-qemu.sh's riscv64 part runs on the 6.1 kernel);
#  - x86_64 built with clang: IBT, kCFI's __cfi_ preambles, FineIBT's call
#    padding: x86-qemu.sh whole (exact counts, the hand-over, '*', 20
#    attach cycles) and the first-hit order.
#
#   tests/qemu/lean612.sh [arm64] [riscv64] [x86_64]   (default: all three)
#
# make check runs the part of it that is new with 6.12 (the slots of each
# kernel; on arm64, the exact counts through wrapping rings, whose
# doorbells are what BTI guards; on x86_64 and riscv64 the first-hit order
# and '*'); LEAN612_FULL=1 runs all of it (tests/e2e/lean612-full.sh, the
# long tier).
. "$(dirname "$0")/../lib.sh"
require_file "$VMMTRACE"
LOOPS=${LOOPS:-2000}

# relay NAME SCRIPT ENV...: another test script's PASS/FAIL lines as this one's.
relay() {
	local name=$1 script=$2 rc
	shift 2
	env "$@" VMMTRACE="$VMMTRACE" bash "$TOP/tests/qemu/$script" >"$TMPD/$name.relay" 2>&1
	rc=$?
	sed -nE "s/^(PASS|FAIL): /\1: $name: /p" "$TMPD/$name.relay"
	T_FAILS=$((T_FAILS + $(grep -c '^FAIL: ' "$TMPD/$name.relay")))
	check "$name: $script ran to its end (status $rc)" eval "[ $rc = 0 ] || grep -q '^FAIL: ' '$TMPD/$name.relay'"
}

# slots_named TAG IMAGE: every slot at a function of the build's System.map
# (or 4 bytes into it: ENDBR64, bti c) attributed to it; those left are the
# bodies of overridden __weak functions, which have no symbol at all.
slots_named() {
	local nosym named
	"$VMMTRACE" symbols --slots -v "$2" >"$TMPD/$1.slots" 2>"$TMPD/$1.sym"
	nosym=$(sed -nE 's/.* ([0-9]+) without a symbol.*/\1/p' "$TMPD/$1.sym")
	named=$(python3 - "$(dirname "$2")/System.map" "$TMPD/$1.slots" <<'PY'
import sys
fn = {int(f[0], 16) for f in (l.split() for l in open(sys.argv[1])) if len(f) == 3 and f[1] in "tTwW"}
print(sum(1 for l in open(sys.argv[2]) if "[no-symbol" in l and {int(l.split()[0], 16) - d for d in (0, 4)} & fn))
PY
)
	check "$1: every slot at a function attributed to it ($nosym without a symbol: overridden __weak bodies; $named at a function)" \
		eval "[ '$named' = 0 ] && [ -n '$nosym' ]"
}

for k in ${*:-arm64 riscv64 x86_64}; do
	case $k in
	arm64)
		img=$VMMTRACE_CACHE/lean-arm64-6.12/Image
		require_file "$img"
		require_file "$INITRAMFS_ARM64"
		slots_named arm64-6.12 "$img"
		check "arm64-6.12: the records point before the functions (call ops), and its functions start with bti c" \
			eval "grep -q 'the records point before the functions' '$TMPD/arm64-6.12.sym' &&
			      \"$VMMTRACE\" symbols --slots '$img' start_kernel 2>/dev/null | awk '{ print \$1 }' >'$TMPD/sk.slot' &&
			      \"$VMMTRACE\" symbols '$img' start_kernel 2>/dev/null | awk '{ print \$1 }' >'$TMPD/sk.sym' &&
			      [ \$((0x\$(cat '$TMPD/sk.slot') - 0x\$(cat '$TMPD/sk.sym'))) = 4 ]"
		arm64_checks arm64-6.12 "$img"
		# Without padding below _etext the stub's other place is _end's guard page,
		# which 6.12's early mapping from C leaves out: the host maps it in the
		# kernel's own tables at __primary_switched (52-bit VAs with LPA2 here).
		nopad=$VMMTRACE_CACHE/lean-arm64-6.12-nopad/Image
		require_file "$nopad"
		arm64_checks arm64-6.12-nopad "$nopad"
		check "arm64-6.12-nopad: the stub in the guard page at _end, mapped by the host in the kernel's own tables (52-bit VAs, 4 KiB pages)" \
			eval "grep -q 'the stub goes in the guard page at _end' '$TMPD/arm64-6.12-nopad-cpus1.err' &&
			      grep -qE \"the stub's guard page at 0x[0-9a-f]+ mapped in the kernel's own tables \\(52-bit VAs, 4 KiB pages\\)\" '$TMPD/arm64-6.12-nopad-cpus2.err'"
		qtrace_order lean-arm64-6.12-nopad
		# Built with gcc at -Os: ftrace WITH_ARGS without call ops (the two-NOP
		# slot at the function's entry, no literal before it), neither BTI nor
		# pointer authentication.
		gcc612=$VMMTRACE_CACHE/lean-arm64-6.12-gcc/Image
		require_file "$gcc612"
		slots_named arm64-6.12-gcc "$gcc612"
		check "arm64-6.12-gcc: no call ops (no literal before the functions), the slot at the function's first instruction (no bti c)" \
			eval "! grep -q 'the records point before the functions' '$TMPD/arm64-6.12-gcc.sym' &&
			      \"$VMMTRACE\" symbols --slots '$gcc612' start_kernel 2>/dev/null | awk '{ print \$1 }' >'$TMPD/gk.slot' &&
			      \"$VMMTRACE\" symbols '$gcc612' start_kernel 2>/dev/null | awk '{ print \$1 }' >'$TMPD/gk.sym' &&
			      [ \$((0x\$(cat '$TMPD/gk.slot') - 0x\$(cat '$TMPD/gk.sym'))) = 0 ]"
		arm64_checks arm64-6.12-gcc "$gcc612"
		[ "${LEAN612_FULL:-0}" = 1 ] || continue
		qtrace_order lean-arm64-6.12-gcc
		trace_all arm64-6.12 "$img" "$INITRAMFS_ARM64" 'VMMTRACE-INIT: done passed=2 failed=0' vmmtrace.steps=cpus,uname 500000
		trace_all arm64-6.12-nopad "$nopad" "$INITRAMFS_ARM64" 'VMMTRACE-INIT: done passed=2 failed=0' vmmtrace.steps=cpus,uname 500000
		qtrace_order lean-arm64-6.12
		relay arm64-6.12-attach attach-qemu.sh ATTACH_A64="$img" ATTACH_RV= ATTACH_CYCLES=20
		;;
	riscv64)
		img=$VMMTRACE_CACHE/lean-riscv64-6.12/Image
		require_file "$img"
		require_file "$INITRAMFS_RV"
		slots_named riscv64-6.12 "$img"
		qtrace_order lean-riscv64-6.12
		# Without STRICT_KERNEL_RWX: no padding below __init_begin, the stub past the image's end.
		nostrict=$VMMTRACE_CACHE/lean-riscv64-6.12-nostrict/Image
		require_file "$nostrict"
		qtrace_order lean-riscv64-6.12-nostrict
		[ "${LEAN612_FULL:-0}" = 1 ] || continue
		# 6.12's riscv64 system calls have wrappers (__riscv_sys_getpriority), as arm64's.
		RV_SYS=__riscv_sys_ riscv_checks riscv64-6.12 "$img"
		RV_SYS=__riscv_sys_ riscv_checks riscv64-6.12-nostrict "$nostrict"
		;;
	x86_64)
		img=$VMMTRACE_CACHE/lean-x86_64-6.12/bzImage
		require_file "$img"
		slots_named x86_64-6.12 "$img"
		# With kCFI the padding's symbols are __cfi_ (PREFIX_SYMBOLS, __pfx_, is for CALL_PADDING without it).
		check "x86_64-6.12: kCFI's __cfi_ symbols are there, never a function" \
			eval "\"$VMMTRACE\" symbols '$img' '__cfi_*' 2>/dev/null | grep -q . &&
			      ! \"$VMMTRACE\" symbols --functions '$img' '__cfi_*' '__pfx_*' 2>/dev/null | grep -q ."
		qtrace_order lean-x86_64-6.12
		[ "${LEAN612_FULL:-0}" = 1 ] || continue
		relay x86_64-6.12 x86-qemu.sh X86_KERNEL="$img" ATTACH_CYCLES=20
		;;
	*) fail "unknown kernel '$k'" ;;
	esac
done
finish
