#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build the lean test kernel from Debian's linux-source-6.1 with the config
# fragment and the test-only SYSCALL fix in tests/guest/lean-kernel/. The
# result (bzImage, vmlinux, System.map, and vmlinux.btf: the kernel's types
# as a detached BTF file that pahole makes from the DWARF of vmlinux) is
# cached by the hash of its inputs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
src_tar=/usr/src/linux-source-6.1.tar.xz
frag="$here/../tests/guest/lean-kernel/lean.config"
patch="$here/../tests/guest/lean-kernel/syscall-compat.patch"
[ -r "$src_tar" ] || die "$src_tar missing: apt-get install linux-source-6.1"
command -v pahole >/dev/null || die "pahole missing: apt-get install dwarves"
key=$( (sha256sum "$frag" "$patch" | cut -d' ' -f1; stat -c %s "$src_tar") | sha256sum | cut -c1-16)
out="$VMMTRACE_CACHE/lean-$key"
if [ -f "$out/bzImage" ] && [ -f "$out/vmlinux" ] && [ -f "$out/System.map" ] && [ -f "$out/vmlinux.btf" ]; then
	ln -sfn "$out" "$VMMTRACE_CACHE/lean"
	say "lean kernel cached in $out"
	exit 0
fi
work="$VMMTRACE_CACHE/lean-build"
rm -rf "$work"; mkdir -p "$work"
say "unpacking linux-source-6.1"
tar xJf "$src_tar" -C "$work"
cd "$work/linux-source-6.1"
patch -p1 < "$patch"
make -s ARCH=x86_64 tinyconfig
scripts/kconfig/merge_config.sh -m .config "$frag" >/dev/null
make -s ARCH=x86_64 olddefconfig
# merge_config drops what Kconfig refuses: report any option that did not stick.
missing=0
while IFS= read -r line; do
	case "$line" in CONFIG_*=y) grep -qx "$line" .config || { say "option not set: $line"; missing=1; } ;; esac
done < "$frag"
[ "$missing" = 0 ] || die "lean kernel config incomplete"
say "building the lean kernel ($(nproc) jobs)"
make -s ARCH=x86_64 -j"$(nproc)" bzImage
say "encoding the kernel's BTF with pahole"
pahole --btf_encode_detached=vmlinux.btf vmlinux
mkdir -p "$out.tmp"
cp arch/x86/boot/bzImage vmlinux vmlinux.btf System.map .config "$out.tmp/"
rm -rf "$out"; mv "$out.tmp" "$out"
ln -sfn "$out" "$VMMTRACE_CACHE/lean"
cd /; rm -rf "$work"
say "lean kernel built in $out"
