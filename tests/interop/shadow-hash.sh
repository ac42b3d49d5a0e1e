#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The stubs' SHADOW_HASH against the host's vt_shadow_hash (proto/trace.h):
# when the tracer moves --graph's shadow stacks (tracer_rings_move) it puts
# each where the stub will look for its task first, so the two must agree.
# Nothing else can see a difference: a stub that hashed otherwise would
# still find its frames, by scanning every table, at a cost. Each arch's
# macro (proto/trace.h, for the assembler) runs in a program of its own,
# x86_64 natively, arm64, riscv64 and loongarch64 under QEMU user mode, over task
# pointers whose hashes the host computed; it exits with the number of the
# first that differs.
. "$(dirname "$0")/../lib.sh"
tasks="0xffff888003f88000 0xffffff8002d10000 0xff6000000284cec0 0 1 0xffffffffffffffff 0x123456789abcdef0"

cat >"$TMPD/host.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include "proto/trace.h"
int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		printf("%s 0x%llx\n", argv[i], (unsigned long long)vt_shadow_hash(strtoull(argv[i], NULL, 0)));
	return 0;
}
C
if ! cc -I"$TOP" -o "$TMPD/host" "$TMPD/host.c" 2>"$TMPD/host.err"; then
	fail "the host's hash program does not build: $(head -n 3 "$TMPD/host.err")"; finish
fi
"$TMPD/host" $tasks >"$TMPD/pairs"

# program ARCH: the test program's source, one check per task.
program() {
	local i=0 t e
	echo "#include \"proto/trace.h\""
	echo "	.text"
	echo "	.globl _start"
	echo "_start:"
	while read -r t e; do
		i=$((i + 1))
		case $1 in
		x86_64) printf '\tmovabsq $%s, %%r10\n\tSHADOW_HASH %%rax\n\tmovabsq $%s, %%rcx\n\tmovl $%d, %%edi\n\tcmpq %%rcx, %%rax\n\tjne out\n' "$t" "$e" "$i" ;;
		arm64) printf '\tldr x1, =%s\n\tSHADOW_HASH x0, x1, x2\n\tldr x3, =%s\n\tmov x4, #%d\n\tcmp x0, x3\n\tb.ne out\n' "$t" "$e" "$i" ;;
		riscv64) printf '\tli a1, %s\n\tSHADOW_HASH a0, a1, a2\n\tli a3, %s\n\tli a4, %d\n\tbne a0, a3, out\n' "$t" "$e" "$i" ;;
		loongarch64) printf '\tli.d $a1, %s\n\tSHADOW_HASH $a0, $a1, $a2\n\tli.d $a3, %s\n\tli.d $a4, %d\n\tbne $a0, $a3, out\n' "$t" "$e" "$i" ;;
		esac
	done <"$TMPD/pairs"
	case $1 in
	x86_64) printf '\txorl %%edi, %%edi\nout:\tmovl $60, %%eax\n\tsyscall\n' ;;
	arm64) printf '\tmov x4, #0\nout:\tmov x0, x4\n\tmov x8, #93\n\tsvc #0\n\t.ltorg\n' ;;
	riscv64) printf '\tli a4, 0\nout:\tmv a0, a4\n\tli a7, 93\n\tecall\n' ;;
	loongarch64) printf '\tli.d $a4, 0\nout:\tmove $a0, $a4\n\tli.d $a7, 93\n\tsyscall 0\n' ;;
	esac
}

n=$(wc -l <"$TMPD/pairs")
for arch in x86_64 arm64 riscv64 loongarch64; do
	case $arch in
	x86_64) cc=cc run=() ;;
	arm64) cc=aarch64-linux-gnu-gcc run=(qemu-aarch64) ;;
	riscv64) cc=riscv64-linux-gnu-gcc run=(qemu-riscv64) ;;
	# No loongarch64 gcc in Debian 12: clang-19 and lld, as the stub is built.
	loongarch64) cc="clang-19 --target=loongarch64-linux-gnu -fuse-ld=lld" run=(qemu-loongarch64) ;;
	esac
	if ! command -v "${cc%% *}" >/dev/null || { [ ${#run[@]} = 1 ] && ! command -v "${run[0]}" >/dev/null; }; then
		fail "$arch: $cc or ${run[*]} is missing (scripts/packages-arch.txt)"
		continue
	fi
	program "$arch" >"$TMPD/$arch.S"
	# shellcheck disable=SC2086
	if ! $cc -I"$TOP" -nostdlib -static -o "$TMPD/$arch" "$TMPD/$arch.S" 2>"$TMPD/$arch.err"; then
		fail "$arch: the stub's hash program does not build: $(head -n 3 "$TMPD/$arch.err")"
		continue
	fi
	timeout 60 "${run[@]}" "$TMPD/$arch"
	rc=$?
	check "$arch: the stub's SHADOW_HASH equals vt_shadow_hash for $n task pointers (status $rc: 0, or the first that differs)" \
		[ "$rc" = 0 ]
done
finish
