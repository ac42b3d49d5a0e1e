#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build a lean test kernel from Debian's linux-source-6.1 with the config
# fragment of tests/guest/lean-kernel/. The result (the boot image, vmlinux,
# System.map, and vmlinux.btf: the kernel's types as a detached BTF file
# that pahole makes from the DWARF of vmlinux) is cached by the hash of its
# inputs.
#
#   scripts/build-lean-kernel.sh [x86_64|arm64|riscv64]     (default x86_64)
#
# x86_64 (lean.config plus the test-only SYSCALL fix, syscall-compat.patch):
# $VMMTRACE_CACHE/lean/{bzImage,...}. arm64 and riscv64 (lean-ARCH.config,
# cross-built with Debian's gcc-aarch64-linux-gnu / gcc-riscv64-linux-gnu):
# $VMMTRACE_CACHE/lean-ARCH/{Image,...}.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
arch=${1:-x86_64}
src_tar=/usr/src/linux-source-6.1.tar.xz
guest="$here/../tests/guest/lean-kernel"
case $arch in
x86_64)
	frag="$guest/lean.config" patch="$guest/syscall-compat.patch"
	karch=x86_64 cross= image=arch/x86/boot/bzImage target=bzImage name=lean ;;
arm64)
	frag="$guest/lean-arm64.config" patch=
	karch=arm64 cross=aarch64-linux-gnu- image=arch/arm64/boot/Image target=Image name=lean-arm64 ;;
riscv64)
	frag="$guest/lean-riscv64.config" patch=
	karch=riscv cross=riscv64-linux-gnu- image=arch/riscv/boot/Image target=Image name=lean-riscv64 ;;
*) die "unknown architecture '$arch' (x86_64, arm64 or riscv64)" ;;
esac
[ -r "$src_tar" ] || die "$src_tar missing: apt-get install linux-source-6.1"
command -v pahole >/dev/null || die "pahole missing: apt-get install dwarves"
[ -z "$cross" ] || command -v "${cross}gcc" >/dev/null || die "${cross}gcc missing: scripts/packages-arch.txt"
# x86_64's key is what it always was, so that a cached kernel stays valid.
key=$( (sha256sum "$frag" $patch | cut -d' ' -f1; stat -c %s "$src_tar") | sha256sum | cut -c1-16)
out="$VMMTRACE_CACHE/$name-$key"
img=$(basename "$image")
if [ -f "$out/$img" ] && [ -f "$out/vmlinux" ] && [ -f "$out/System.map" ] && [ -f "$out/vmlinux.btf" ]; then
	ln -sfn "$out" "$VMMTRACE_CACHE/$name"
	say "$name kernel cached in $out"
	exit 0
fi
work="$VMMTRACE_CACHE/$name-build"
rm -rf "$work"; mkdir -p "$work"
say "unpacking linux-source-6.1 for $arch"
tar xJf "$src_tar" -C "$work"
cd "$work/linux-source-6.1"
[ -z "$patch" ] || patch -p1 < "$patch"
kmake() { make -s ARCH="$karch" ${cross:+CROSS_COMPILE=$cross} "$@"; }
kmake tinyconfig
scripts/kconfig/merge_config.sh -m .config "$frag" >/dev/null
kmake olddefconfig
# merge_config drops what Kconfig refuses: report any option that did not stick.
missing=0
while IFS= read -r line; do
	case "$line" in CONFIG_*=y) grep -qx "$line" .config || { say "option not set: $line"; missing=1; } ;; esac
done < "$frag"
[ "$missing" = 0 ] || die "$name kernel config incomplete"
say "building the $name kernel ($(nproc) jobs)"
kmake -j"$(nproc)" "$target"
say "encoding the kernel's BTF with pahole"
pahole --btf_encode_detached=vmlinux.btf vmlinux
mkdir -p "$out.tmp"
cp "$image" vmlinux vmlinux.btf System.map .config "$out.tmp/"
rm -rf "$out"; mv "$out.tmp" "$out"
ln -sfn "$out" "$VMMTRACE_CACHE/$name"
cd /; rm -rf "$work"
say "$name kernel built in $out"
