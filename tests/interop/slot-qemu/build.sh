#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Builds the slot execution test for one arch into OUTDIR:
#   build.sh arm64|riscv64|riscv64-norvc OUTDIR -> OUTDIR/slot-prog-ARCH for qemu-user
#   build.sh loongarch64 OUTDIR     -> OUTDIR/la64-elf, a host tool that writes
#                                      hand-assembled loongarch64 ELFs
# Slots come from the compiler exactly as Linux asks for them
# (-fpatchable-function-entry=2 on arm64, =4 on riscv64 with the C extension,
# =2 on riscv64 without it: riscv64-norvc builds the slotted functions so).
# Exits non-zero with one line naming the missing Debian package.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
arch=${1:?usage: build.sh ARCH OUTDIR}
out=${2:?usage: build.sh ARCH OUTDIR}
mkdir -p "$out"
arch_src="$top/arch/slot.c $top/arch/x86_64/slot.c $top/arch/arm64/slot.c
	$top/arch/riscv64/slot.c $top/arch/loongarch64/slot.c"
cflags="-std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -I$top -I$here"

case $arch in
arm64)
	cc=aarch64-linux-gnu-gcc pkg="gcc-aarch64-linux-gnu libc6-dev-arm64-cross"
	pfe=-fpatchable-function-entry=2 id=SLOT_ARCH_ARM64
	# Text at 1 GiB leaves room for a stub copy 128 MiB below it.
	ld="-static -Wl,-Ttext-segment=0x40000000" ;;
riscv64 | riscv64-norvc)
	cc=riscv64-linux-gnu-gcc pkg="gcc-riscv64-linux-gnu libc6-dev-riscv64-cross"
	pfe=-fpatchable-function-entry=4 id=SLOT_ARCH_RISCV64
	[ "$arch" = riscv64 ] ||
		pfe="-fpatchable-function-entry=2 -march=rv64imafd_zicsr_zifencei"
	# A PIE, which qemu-user loads high, leaving room for a stub copy 2 GiB
	# below. Not static: Debian ships no rcrt1.o for riscv64, and its
	# crtbeginT.o is medlow, so fixed text cannot sit above 2 GiB. Run it
	# with qemu-riscv64 -L /usr/riscv64-linux-gnu.
	ld="-pie -fPIE" ;;
loongarch64)
	# shellcheck disable=SC2086
	exec ${CC:-cc} $cflags -o "$out/la64-elf" "$here/la64-elf.c" $arch_src ;;
*)
	echo "build.sh: unknown arch '$arch' (arm64, riscv64, loongarch64)" >&2
	exit 2 ;;
esac

command -v "$cc" >/dev/null 2>&1 ||
	{ echo "build.sh: $cc not found: install Debian packages $pkg" >&2; exit 1; }
# shellcheck disable=SC2086
"$cc" $cflags $ld -fno-optimize-sibling-calls $pfe -c -o "$out/funcs-$arch.o" "$here/funcs.c"
# shellcheck disable=SC2086
"$cc" $cflags $ld -DST_ARCH=$id -o "$out/slot-prog-$arch" "$here/prog.c" \
	"$out/funcs-$arch.o" "$here/stub-${arch%-norvc}.S" $arch_src ||
	{ echo "build.sh: linking for $arch failed: is $pkg installed?" >&2; exit 1; }
