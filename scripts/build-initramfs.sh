#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build the test guests' initramfs: Debian's busybox-static, /init from
# tests/guest/init and the static programs of tests/guest/progs/, as one
# uncompressed newc archive (the test guests' kernel code is emulated, and
# inflating a compressed one costs ~17 s there). Cached by the hash of its
# inputs; $VMMTRACE_CACHE/initramfs.cpio links to the current one.
#
#   build-initramfs.sh [x86_64|arm64|riscv64|loongarch64]     (default: x86_64)
#
# arm64 and riscv64 (the QEMU host's guests): the programs cross-built with
# Debian's compilers, all but the x86_64 vector-state ones; arm64's busybox
# is Debian's busybox-static:arm64, unpacked from its package (multiarch).
# Debian 12 has no riscv64 packages: riscv64's archive holds no busybox,
# only tests/guest/cinit.c as /init (arguments after "--" on the kernel
# command line). loongarch64 likewise, cinit.c alone, built by clang-19
# (Debian 12 has no loongarch64 gcc and no loongarch64 libc; cinit needs
# none) with -mno-lsx (clang's default LSX vector code would raise SIGILL on
# a kernel without CPU_HAS_LSX, such as the lean one) against linux-6.12's
# loongarch uapi headers, which `make headers` of linux-source-6.12 puts in
# $VMMTRACE_CACHE/uapi-loongarch64-*/ once. $VMMTRACE_CACHE/initramfs-ARCH.cpio
# links to the current one of each.
#
# The archive is written here rather than by GNU cpio so that it can hold
# /dev/console without root (the kernel opens /dev/console for init before
# anything is mounted; without it init runs with no stdin/stdout/stderr),
# and so that it is byte-for-byte reproducible (uid/gid 0, mtime 0).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/common.sh"
guest="$here/../tests/guest"
garch=${1:-x86_64}
busybox=${BUSYBOX:-/bin/busybox}
cc=${GUEST_CC:-gcc}
progs_src=("$guest"/progs/*.c)
tag=""
arch_cflags=""

# linux-6.12's loongarch uapi headers (asm/unistd.h and what linux/*.h
# include), made once from linux-source-6.12 and cached; prints their
# include directory. `make headers` in the tree: with O= this 6.12 leaves
# out asm-generic's wrappers (asm/types.h, ...).
la_uapi() {
	local tar=/usr/src/linux-source-6.12.tar.xz dir t
	[ -r "$tar" ] || die "$tar missing: apt-get install linux-source-6.12"
	dir="$VMMTRACE_CACHE/uapi-loongarch64-$(stat -c %s "$tar")"
	if [ ! -f "$dir/include/asm/unistd_64.h" ] || [ ! -f "$dir/include/asm/types.h" ]; then
		say "making linux-6.12's loongarch uapi headers"
		t=$(mktemp -d "$VMMTRACE_CACHE/uapi-build.XXXXXX")
		tar xJf "$tar" -C "$t" --exclude='linux-source-6.12/Documentation' \
			--exclude='linux-source-6.12/drivers' --exclude='linux-source-6.12/sound' \
			--exclude='linux-source-6.12/tools/testing' || { rm -rf "$t"; die "cannot unpack $tar"; }
		make -s -C "$t/linux-source-6.12" ARCH=loongarch headers >&2 || { rm -rf "$t"; die "make headers failed"; }
		rm -rf "$dir.tmp"; mkdir -p "$dir.tmp"
		cp -a "$t/linux-source-6.12/usr/include" "$dir.tmp/"
		rm -rf "$dir"; mv "$dir.tmp" "$dir"; rm -rf "$t"
	fi
	echo "$dir/include"
}
case $garch in
x86_64) ;;
arm64)
	cc=${GUEST_CC:-aarch64-linux-gnu-gcc}
	tag=-arm64
	progs_src=("$guest"/progs/{sysloop,markloop,argcall}.c)
	if [ -z "${BUSYBOX:-}" ]; then
		busybox="$VMMTRACE_CACHE/busybox-arm64/bin/busybox"
		if [ ! -x "$busybox" ]; then
			say "fetching Debian's busybox-static:arm64"
			bbdir=$(mktemp -d "$VMMTRACE_CACHE/busybox-arm64.XXXXXX")
			chmod 755 "$bbdir"	# apt downloads as its own user
			(cd "$bbdir" && apt-get download busybox-static:arm64 >/dev/null) ||
				die "cannot download busybox-static:arm64 (dpkg --add-architecture arm64 && apt-get update)"
			dpkg-deb -x "$bbdir"/busybox-static_*_arm64.deb "$bbdir/x"
			rm -rf "$VMMTRACE_CACHE/busybox-arm64"
			mkdir -p "$VMMTRACE_CACHE/busybox-arm64/bin"
			mv "$bbdir/x/bin/busybox" "$busybox"
			rm -rf "$bbdir"
		fi
	fi
	;;
riscv64)
	cc=${GUEST_CC:-riscv64-linux-gnu-gcc}
	tag=-riscv64
	progs_src=()
	busybox=""
	;;
loongarch64)
	cc=${GUEST_CC:-clang-19}
	tag=-loongarch64
	progs_src=()
	busybox=""
	command -v "$cc" >/dev/null || die "$cc missing: scripts/packages-arch.txt (clang-19, lld-19)"
	arch_cflags="--target=loongarch64-linux-gnu -mno-lsx -fuse-ld=lld -nostdinc -isystem $(la_uapi)"
	;;
*) die "no initramfs for $garch (x86_64, arm64, riscv64 or loongarch64)" ;;
esac
# The busybox to ask for its applets: the guest's own, under qemu-user when foreign.
bbrun() { if [ "$garch" = x86_64 ]; then "$busybox" "$@"; else "qemu-$([ "$garch" = arm64 ] && echo aarch64)" "$busybox" "$@"; fi; }
# Applets the init script and a debugging shell use; each link costs a little
# unpacking time in the emulated guest kernel, so not all ~300.
applets="sh ash awk cat cttyhack dd dmesg echo env free grep head hexdump kill
ln ls md5sum mkdir mount mv nproc od ps readlink reboot rm sed seq setsid sleep sort
stat sync tail taskset tee test timeout tr true false umount uname uptime vi wc
xxd"
# Programs are built without libc: fewer syscalls, which cost milliseconds
# in the guest and would show up in the traces the tests count.
prog_cflags="-static -nostdlib -ffreestanding -fno-builtin -O2 -Wall -Wextra -Werror
-fno-stack-protector -fno-asynchronous-unwind-tables -fcf-protection=none
-Wl,--build-id=none"

if [ -n "$busybox" ]; then
	[ -x "$busybox" ] || die "$busybox missing: apt-get install busybox-static"
	readelf -lW "$busybox" | grep -q INTERP && die "$busybox is not static: apt-get install busybox-static"
fi
[ -r "$guest/init" ] || die "$guest/init missing"

key=$( (sha256sum "$here/build-initramfs.sh" "$guest/init" "$guest/calls-of.awk" "$guest/cinit.c" "$guest"/progs/* ${busybox:+"$busybox"} |
	cut -d' ' -f1; "$cc" --version | head -n1; echo "$prog_cflags $applets"
	[ -z "$arch_cflags" ] || echo "$arch_cflags") |
	sha256sum | cut -c1-16)
name="initramfs$tag-$key.cpio"
out="$VMMTRACE_CACHE/$name"
link="$VMMTRACE_CACHE/initramfs$tag.cpio"

# Replaces the link in one rename, so a reader never sees it missing.
publish() {
	ln -sfn "$name" "$link.tmp.$$"
	mv -fT "$link.tmp.$$" "$link"
	for old in "$VMMTRACE_CACHE"/initramfs$tag-*.cpio; do
		[ "$old" = "$out" ] && continue
		# x86_64's pattern matches the other arches' archives and links too: not those.
		[ -z "$tag" ] && case $old in */initramfs-arm64[-.]* | */initramfs-riscv64[-.]* | */initramfs-loongarch64[-.]*) continue ;; esac
		rm -f "$old"
	done
}

if [ -f "$out" ]; then
	publish
	say "initramfs cached in $out"
	exit 0
fi

work=$(mktemp -d "$VMMTRACE_CACHE/initramfs-build.XXXXXX")
trap 'rm -rf "$work"' EXIT

progs=()
for src in "${progs_src[@]}"; do
	p=$(basename "$src" .c)
	# shellcheck disable=SC2086
	"$cc" $arch_cflags $prog_cflags -o "$work/$p" "$src" || die "cannot build $src"
	progs+=("$p")
done

if [ -n "$busybox" ]; then
	have=" $(bbrun --list | tr '\n' ' ') "
	for a in $applets; do
		case $have in *" $a "*) ;; *) die "$busybox has no applet '$a'" ;; esac
	done
else
	# shellcheck disable=SC2086
	"$cc" $arch_cflags $prog_cflags -I"$here/.." -o "$work/cinit" "$guest/cinit.c" || die "cannot build $guest/cinit.c"
fi

# newc ("070701") entries: 13 hex fields, the NUL-terminated name padded to
# 4 bytes, then the data padded to 4 bytes (Documentation/driver-api/
# early-userspace/buffer-format.rst).
ino=1
pad4() {
	local n=$(((4 - $1 % 4) % 4))
	[ "$n" = 0 ] || head -c "$n" /dev/zero
}
header() {	# name mode size nlink rdevmajor rdevminor
	local nsz=$((${#1} + 1))
	printf '070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X' \
		"$ino" "$2" 0 0 "$4" 0 "$3" 0 0 "$5" "$6" "$nsz" 0
	printf '%s\0' "$1"
	pad4 $((110 + nsz))
	ino=$((ino + 1))
}
entry_dir() { header "$1" $((8#040755)) 0 2 0 0; }
entry_file() {	# name mode path
	local size
	size=$(stat -c %s "$3")
	header "$1" $((8#0100000 | $2)) "$size" 1 0 0
	cat "$3"
	pad4 "$size"
}
entry_symlink() { header "$1" $((8#0120777)) ${#2} 1 0 0; printf '%s' "$2"; pad4 ${#2}; }
entry_chardev() { header "$1" $((8#020000 | $2)) 0 1 "$3" "$4"; }

{
	for d in bin dev proc sys tmp root; do entry_dir "$d"; done
	entry_chardev dev/console 8#600 5 1
	if [ -n "$busybox" ]; then
		entry_file init 8#755 "$guest/init"
		entry_file bin/calls-of.awk 8#644 "$guest/calls-of.awk"
		entry_file bin/busybox 8#755 "$busybox"
		for a in $applets; do entry_symlink "bin/$a" busybox; done
	else
		entry_file init 8#755 "$work/cinit"
	fi
	for p in "${progs[@]}"; do entry_file "bin/$p" 8#755 "$work/$p"; done
	header "TRAILER!!!" 0 0 1 0 0
} >"$work/initramfs.cpio"

mv -f "$work/initramfs.cpio" "$out"
publish
say "initramfs built in $out ($(stat -c %s "$out") bytes)"
