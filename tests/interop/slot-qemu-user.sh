#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Executes slots patched by the arch/ layer on QEMU user mode.
# arm64, riscv64 (with and without the C extension): a program cross-compiled
# with -fpatchable-function-entry patches its own slots to reach a counting
# stub, at both edges of the call's range too, and un-patches them; the stub's
# counts must equal the calls and the results must not change
# (tests/interop/slot-qemu/prog.c prints the checks).
# loongarch64: Debian has no compiler for it, so hand-assembled programs whose
# slot words come from arch/ must exit with the status that proves whether
# the slot reached the stub (tests/interop/slot-qemu/la64-elf.c).
. "$(dirname "$0")/../lib.sh"

QDIR=$TOP/tests/interop/slot-qemu
OUT=$TMPD/build
mkdir -p "$OUT"

# need TOOL PACKAGE: fails, naming the Debian package, when TOOL is missing.
need() {
	command -v "$1" >/dev/null 2>&1 && return 0
	fail "$1 not found: install Debian package $2 (scripts/packages-arch.txt)"
	return 1
}

build() {
	if bash "$QDIR/build.sh" "$1" "$OUT" >"$TMPD/build-$1.log" 2>&1; then
		return 0
	fi
	fail "$1: building the slot test failed: $(tail -n 3 "$TMPD/build-$1.log" | tr '\n' ' ')"
	return 1
}

# run_prog ARCH QEMU [QEMU-ARGS...]: runs the cross-compiled program, relays
# its PASS:/FAIL: lines tagged with ARCH, and checks that it ran to the end.
run_prog() {
	local arch=$1 rc n log
	shift
	timeout 120 "$@" "$OUT/slot-prog-$arch" >"$TMPD/run-$arch.log" 2>&1
	rc=$?
	sed -n "s/^\(PASS\|FAIL\): /\1: $arch: /p" "$TMPD/run-$arch.log"
	log=$TMPD/run-$arch.log
	n=$(grep -c '^PASS:' "$log")
	if [ "$rc" = 0 ] && [ "$n" -ge 25 ] && grep -q '^INFO: .* ran to the end' "$log"; then
		pass "$arch: patched program ran to the end under $1 ($n checks)"
	else
		fail "$arch: under $1: status $rc after $n checks: $(tail -n 2 "$log" | tr '\n' ' ')"
	fi
}

if need qemu-aarch64 qemu-user && need aarch64-linux-gnu-gcc gcc-aarch64-linux-gnu &&
   build arm64; then
	run_prog arm64 qemu-aarch64
fi

RV_SYSROOT=/usr/riscv64-linux-gnu
if need qemu-riscv64 qemu-user && need riscv64-linux-gnu-gcc gcc-riscv64-linux-gnu; then
	if [ ! -e "$RV_SYSROOT/lib/ld-linux-riscv64-lp64d.so.1" ]; then
		fail "riscv64: $RV_SYSROOT has no dynamic loader: install Debian package libc6-riscv64-cross"
	else
		for v in riscv64 riscv64-norvc; do
			build "$v" && run_prog "$v" qemu-riscv64 -L "$RV_SYSROOT"
		done
	fi
fi

# Debian 12's qemu-user 7.2 has qemu-loongarch64; the encodings it runs are
# the ones arch/loongarch64/slot.c produces.
if need qemu-loongarch64 "qemu-user (7.2 or later)" && need "${CC:-cc}" gcc &&
   build loongarch64; then
	if "$OUT/la64-elf" "$OUT" >"$TMPD/la64.list" 2>"$TMPD/la64.err"; then
		while read -r elf want; do
			timeout 20 qemu-loongarch64 "$elf" </dev/null >/dev/null 2>&1
			got=$?
			check "loongarch64: $(basename "$elf" .elf) exits $want under qemu-loongarch64 (got $got)" \
				test "$got" = "$want"
		done <"$TMPD/la64.list"
		check "loongarch64: six hand-assembled programs ran" test "$(wc -l <"$TMPD/la64.list")" = 6
	else
		fail "loongarch64: la64-elf could not write the programs: $(cat "$TMPD/la64.err")"
	fi
fi
finish
