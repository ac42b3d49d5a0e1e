#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build a lean test kernel from Debian's linux-source-6.1 (loongarch64:
# linux-source-6.12) with the config fragment of tests/guest/lean-kernel/.
# The result (the boot image, vmlinux, System.map, .config, and vmlinux.btf:
# the kernel's types as a detached BTF file that pahole makes from the DWARF
# of vmlinux) is cached by the hash of its inputs.
#
#   scripts/build-lean-kernel.sh [x86_64|x86_64-wx|arm64|riscv64|riscv64-nostrict|loongarch64|
#                                 loongarch64-dtb|x86_64-6.12|arm64-6.12|arm64-6.12-gcc|
#                                 riscv64-6.12|riscv64-6.12-nostrict]
#                                                                           (default x86_64)
#
# x86_64 (lean.config plus the test-only SYSCALL fix, syscall-compat.patch):
# $VMMTRACE_CACHE/lean/{bzImage,...}; x86_64-wx the same with lean-wx.config
# on top (CONFIG_DEBUG_WX, as Debian's): $VMMTRACE_CACHE/lean-wx/. arm64 and riscv64 (lean-ARCH.config,
# cross-built with Debian's gcc-aarch64-linux-gnu / gcc-riscv64-linux-gnu):
# $VMMTRACE_CACHE/lean-ARCH/{Image,...}. loongarch64 (lean-loongarch64.config):
# Debian 12 has no loongarch64 gcc and 6.1 has no LoongArch ftrace, so it is
# linux-source-6.12 built with clang-19/lld-19 (LLVM=-19); QEMU boots the ELF,
# so the boot image is vmlinux itself: $VMMTRACE_CACHE/lean-loongarch64/
# {vmlinux,...}. Its build runs under nice (about 14 minutes with one job
# here); LEAN_JOBS sets the jobs (default: nproc). loongarch64-dtb is the
# same with a device tree built in (vmmtrace-la64-virt.dts, copied into the
# tree; lean-loongarch64-dtb.config): $VMMTRACE_CACHE/lean-loongarch64-dtb/. The -6.12 ones are the
# same kernels from linux-source-6.12 as 6.12 builds what users run
# (lean-ARCH-6.12.config on top; issue 36): x86_64 with clang-19 (IBT,
# kCFI, FineIBT's call padding; the SYSCALL fix too), arm64 with clang-19
# (call ops, pointer authentication, BTI; arm64-6.12-gcc with gcc at -Os:
# WITH_ARGS without call ops, neither BTI nor pointer authentication),
# riscv64 with gcc:
# $VMMTRACE_CACHE/lean-ARCH-6.12/; riscv64-6.12-nostrict that one without
# STRICT_KERNEL_RWX, as riscv64-nostrict is the 6.1 one.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
arch=${1:-x86_64}
src_ver=6.1
guest="$here/../tests/guest/lean-kernel"
llvm='' dts='' jobs=$(nproc)
case $arch in
x86_64)
	frag="$guest/lean.config" patch="$guest/syscall-compat.patch"
	karch=x86_64 cross= image=arch/x86/boot/bzImage target=bzImage name=lean ;;
x86_64-wx)
	# The lean kernel with the W+X check Debian's has (lean-wx.config):
	# what the kvm tier boots as on hardware KVM (--fast-boot off).
	frag="$guest/lean.config $guest/lean-wx.config" patch="$guest/syscall-compat.patch"
	karch=x86_64 cross= image=arch/x86/boot/bzImage target=bzImage name=lean-wx ;;
arm64)
	frag="$guest/lean-arm64.config" patch=
	karch=arm64 cross=aarch64-linux-gnu- image=arch/arm64/boot/Image target=Image name=lean-arm64 ;;
riscv64)
	frag="$guest/lean-riscv64.config" patch=
	karch=riscv cross=riscv64-linux-gnu- image=arch/riscv/boot/Image target=Image name=lean-riscv64 ;;
riscv64-nostrict)
	# The same without STRICT_KERNEL_RWX, as embedded configurations build it:
	# no padding below __init_begin for the stub (docs/STUB-PLACEMENT.md).
	frag="$guest/lean-riscv64.config $guest/lean-riscv64-nostrict.config" patch=
	karch=riscv cross=riscv64-linux-gnu- image=arch/riscv/boot/Image target=Image name=lean-riscv64-nostrict ;;
loongarch64)
	frag="$guest/lean-loongarch64.config" patch='' src_ver=6.12 llvm=-19
	karch=loongarch cross='' image=vmlinux target=vmlinux name=lean-loongarch64 ;;
loongarch64-dtb)
	# The same with a device tree built in (CONFIG_BUILTIN_DTB), which the
	# kernel prefers to the one vmmtrace hands over (issue 36).
	frag="$guest/lean-loongarch64.config $guest/lean-loongarch64-dtb.config" patch='' src_ver=6.12 llvm=-19
	dts="$guest/vmmtrace-la64-virt.dts"
	karch=loongarch cross='' image=vmlinux target=vmlinux name=lean-loongarch64-dtb ;;
x86_64-6.12)
	frag="$guest/lean.config $guest/lean-x86_64-6.12.config" patch="$guest/syscall-compat.patch"
	src_ver=6.12 llvm=-19 karch=x86_64 cross= image=arch/x86/boot/bzImage target=bzImage name=lean-x86_64-6.12 ;;
arm64-6.12)
	frag="$guest/lean-arm64.config $guest/lean-arm64-6.12.config" patch= src_ver=6.12 llvm=-19
	karch=arm64 cross= image=arch/arm64/boot/Image target=Image name=lean-arm64-6.12 ;;
arm64-6.12-gcc)
	# 6.12 built with gcc at -Os: WITH_ARGS without call ops, no BTI, no
	# pointer authentication (lean-arm64-6.12-gcc.config).
	frag="$guest/lean-arm64.config $guest/lean-arm64-6.12-gcc.config" patch= src_ver=6.12
	karch=arm64 cross=aarch64-linux-gnu- image=arch/arm64/boot/Image target=Image name=lean-arm64-6.12-gcc ;;
riscv64-6.12)
	frag="$guest/lean-riscv64.config $guest/lean-riscv64-6.12.config" patch= src_ver=6.12
	karch=riscv cross=riscv64-linux-gnu- image=arch/riscv/boot/Image target=Image name=lean-riscv64-6.12 ;;
riscv64-6.12-nostrict)
	frag="$guest/lean-riscv64.config $guest/lean-riscv64-6.12.config $guest/lean-riscv64-nostrict.config"
	patch= src_ver=6.12
	karch=riscv cross=riscv64-linux-gnu- image=arch/riscv/boot/Image target=Image name=lean-riscv64-6.12-nostrict ;;
*) die "unknown architecture '$arch' (x86_64, x86_64-wx, arm64, riscv64, riscv64-nostrict, loongarch64, loongarch64-dtb, x86_64-6.12, arm64-6.12, arm64-6.12-gcc, riscv64-6.12 or riscv64-6.12-nostrict)" ;;
esac
jobs=${LEAN_JOBS:-$jobs}
src_tar=/usr/src/linux-source-$src_ver.tar.xz
[ -r "$src_tar" ] || die "$src_tar missing: apt-get install linux-source-$src_ver"
command -v pahole >/dev/null || die "pahole missing: apt-get install dwarves"
[ -z "$cross" ] || command -v "${cross}gcc" >/dev/null || die "${cross}gcc missing: scripts/packages-arch.txt"
for t in ${llvm:+clang$llvm ld.lld$llvm llvm-objcopy$llvm llvm-nm$llvm}; do
	command -v "$t" >/dev/null || die "$t missing: scripts/packages-arch.txt (clang-19, lld-19, llvm-19)"
done
# x86_64's key is what it always was, so that a cached kernel stays valid;
# an LLVM build's also covers the compiler's version.
key=$( (sha256sum $frag $patch $dts | cut -d' ' -f1; stat -c %s "$src_tar"
	[ -z "$llvm" ] || "clang$llvm" --version | head -n1) | sha256sum | cut -c1-16)
out="$VMMTRACE_CACHE/$name-$key"
img=$(basename "$image")
if [ -f "$out/$img" ] && [ -f "$out/vmlinux" ] && [ -f "$out/System.map" ] &&
	{ [ -f "$out/vmlinux.btf" ] || [ -f "$out/NO-BTF" ]; }; then
	ln -sfn "$out" "$VMMTRACE_CACHE/$name"
	say "$name kernel cached in $out"
	exit 0
fi
work="$VMMTRACE_CACHE/$name-build"
rm -rf "$work"; mkdir -p "$work"
say "unpacking linux-source-$src_ver for $arch"
tar xJf "$src_tar" -C "$work"
cd "$work/linux-source-$src_ver"
[ -z "$patch" ] || patch -p1 < "$patch"
[ -z "$dts" ] || cp "$dts" "arch/$karch/boot/dts/"
kmake() { make -s ARCH="$karch" ${cross:+CROSS_COMPILE=$cross} ${llvm:+LLVM=$llvm} "$@"; }
kmake tinyconfig
# shellcheck disable=SC2086
scripts/kconfig/merge_config.sh -m .config $frag >/dev/null
kmake olddefconfig
# merge_config drops what Kconfig refuses: report any option that did not
# stick (of each option, what the last fragment that names it says).
missing=0
while IFS= read -r line; do
	case "$line" in CONFIG_*=y) grep -qx "$line" .config || { say "option not set: $line"; missing=1; } ;; esac
done < <(cat $frag | awk -F'[= ]' '/^CONFIG_/ { v[$1] = $0 } /^# CONFIG_.* is not set/ { v[$2] = $0 }
	END { for (k in v) print v[k] }')
[ "$missing" = 0 ] || die "$name kernel config incomplete"
say "building the $name kernel ($jobs jobs)"
start=$(date +%s)
if [ -n "$llvm" ]; then nice -n 10 make -s ARCH="$karch" LLVM="$llvm" -j"$jobs" "$target"; else kmake -j"$jobs" "$target"; fi
say "built in $(($(date +%s) - start)) s"
say "encoding the kernel's BTF with pahole"
rm -rf "$out.tmp"; mkdir -p "$out.tmp"
if [ -n "$llvm" ]; then
	# clang's DWARF: should pahole not take it, the kernel is still usable,
	# only without task names and pids in its traces (docs/TASKS.md).
	if pahole --btf_encode_detached=vmlinux.btf vmlinux >pahole.log 2>&1 && [ -s vmlinux.btf ]; then
		cp vmlinux.btf "$out.tmp/"
	else
		say "WARNING: pahole made no BTF from clang's DWARF: $(head -n 3 pahole.log)"
		cp pahole.log "$out.tmp/NO-BTF"
	fi
else
	pahole --btf_encode_detached=vmlinux.btf vmlinux
	cp vmlinux.btf "$out.tmp/"
fi
# The boot image is vmlinux itself on loongarch64: copy each file once.
for f in "$image" vmlinux System.map .config; do cp "$f" "$out.tmp/"; done
rm -rf "$out"; mv "$out.tmp" "$out"
ln -sfn "$out" "$VMMTRACE_CACHE/$name"
cd /; rm -rf "$work"
say "$name kernel built in $out"
