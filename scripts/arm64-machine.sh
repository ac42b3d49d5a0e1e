#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The arm64 test machine: an emulated arm64 machine with the virtualization
# extensions (QEMU's virt board at EL2, GICv3), in which Debian's arm64
# kernel runs KVM, with the arm64 build of vmmtrace on its PATH. It runs
# one command there and gives back what it printed and how it ended, so
# that anyone on an x86_64 workstation can try vmmtrace on arm64 (and its
# arm64 KVM host) on their own kernels, and the tests use the same door.
#
#   scripts/arm64-machine.sh [--file PATH]... [--kernel IMAGE] [--smp N] [--gic 2|3] -- COMMAND [ARG]...
#
# Each --file is copied to /files/ in the machine under its base name;
# COMMAND runs in /files with stdin empty. Its stdout and stderr come back
# to this script's, and this script exits with its status. The machine's
# own failures: 124 it did not end within ARM64_MACHINE_TIMEOUT seconds
# (default 900), 125 it ended without saying how COMMAND ended (its console's
# last lines on stderr), 2 bad arguments. ARM64_MACHINE_CONSOLE=FILE keeps
# the machine's console. --kernel: the machine's kernel (default Debian's
# arm64 6.1 kernel that scripts/prepare-tests.sh caches); --gic 2: a machine
# whose interrupt controller is a GICv2, on which KVM offers guests no
# GICv3 (default 3). `--prepare` alone
# only readies the sysroot and the arm64 build.
#
# What it needs (scripts/prepare-tests.sh installs and caches it): Debian's
# cross compiler and arm64 -dev packages (multiarch), qemu-system-aarch64,
# and in the cache an arm64 sysroot with libfdt and busybox (not
# multi-arch in Debian: unpacked from their .debs, `--prepare` does it).
# vmmtrace for arm64 is built static into build/arm64 (ARM64_MACHINE_O).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
. "$here/common.sh"

sysroot=$VMMTRACE_CACHE/arm64-sysroot
out_dir=${ARM64_MACHINE_O:-$root/build/arm64}
timeout_s=${ARM64_MACHINE_TIMEOUT:-900}
kernel=$VMMTRACE_CACHE/stock-arm64-Image
smp=2
gic=3
files=()

usage() {
	echo "usage: arm64-machine.sh [--file PATH]... [--kernel IMAGE] [--smp N] [--gic 2|3] -- COMMAND [ARG]... | --prepare" >&2
	exit 2
}
fail() { echo "arm64-machine: $*" >&2; exit 2; }

# The packages Debian does not make multi-arch, unpacked into the sysroot.
prepare_sysroot() {
	local pkg tmp
	[ -f "$sysroot/usr/lib/aarch64-linux-gnu/libfdt.a" ] && [ -x "$sysroot/bin/busybox" ] && return 0
	tmp=$(mktemp -d) || return 1
	for pkg in libfdt-dev:arm64 libfdt1:arm64 busybox-static:arm64; do
		(cd "$tmp" && apt-get download "$pkg" >/dev/null 2>&1) ||
			{ rm -rf "$tmp"; echo "arm64-machine: cannot download $pkg (apt-get update may help)" >&2; return 1; }
	done
	mkdir -p "$sysroot"
	for pkg in "$tmp"/*.deb; do
		dpkg-deb -x "$pkg" "$sysroot" || { rm -rf "$tmp"; return 1; }
	done
	rm -rf "$tmp"
}

# vmmtrace for arm64, static: it runs in an initramfs with no libraries.
build_vmmtrace() {
	make -s -C "$root" -j"$(nproc)" CC=aarch64-linux-gnu-gcc STATIC=1 O="$out_dir" \
		EXTRA_CFLAGS="-I$sysroot/usr/include" \
		EXTRA_LDFLAGS="-L$sysroot/usr/lib/aarch64-linux-gnu" "$out_dir/vmmtrace" >&2
}

if [ "${1:-}" = --prepare ]; then
	prepare_sysroot && build_vmmtrace
	exit
fi
while [ $# -gt 0 ]; do
	case $1 in
	--file) [ $# -ge 2 ] || usage; [ -f "$2" ] || fail "--file $2: no such file"; files+=("$2"); shift 2 ;;
	--kernel) [ $# -ge 2 ] || usage; kernel=$2; shift 2 ;;
	--smp) [ $# -ge 2 ] && [[ $2 =~ ^[1-8]$ ]] || fail "--smp: 1 to 8"; smp=$2; shift 2 ;;
	--gic) [ $# -ge 2 ] && [[ $2 =~ ^[23]$ ]] || fail "--gic: 2 or 3"; gic=$2; shift 2 ;;
	--) shift; break ;;
	*) usage ;;
	esac
done
[ $# -ge 1 ] || usage
[ -f "$kernel" ] || fail "no kernel at $kernel (scripts/prepare-tests.sh caches Debian's arm64 kernel; or --kernel)"
command -v qemu-system-aarch64 >/dev/null || fail "qemu-system-aarch64 is missing (apt-get install qemu-system-arm)"
prepare_sysroot || exit 2
build_vmmtrace || fail "cannot build vmmtrace for arm64 (scripts/prepare-tests.sh installs what it needs)"

work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT
tree=$work/tree
mkdir -p "$tree/bin" "$tree/files" "$tree/proc" "$tree/sys" "$tree/dev" "$tree/tmp"
cp "$sysroot/bin/busybox" "$out_dir/vmmtrace" "$tree/bin/"
for f in "${files[@]}"; do
	[ ! -e "$tree/files/$(basename "$f")" ] || fail "--file: two files named $(basename "$f")"
	cp "$f" "$tree/files/"
done
# The command, quoted for the machine's shell.
printf 'set --' >"$tree/cmd"
printf ' %q' "$@" >>"$tree/cmd"
echo >>"$tree/cmd"
# The machine's /init: run the command, then frame its outputs and status
# on the console in base64 (whatever the kernel prints between lines cannot
# corrupt them), and power off.
cat >"$tree/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
cd /files
. /cmd
"$@" </dev/null >/tmp/out 2>/tmp/err
st=$?
echo "@@arm64-machine stdout"
base64 /tmp/out
echo "@@arm64-machine stderr"
base64 /tmp/err
echo "@@arm64-machine status $st"
poweroff -f
EOF
chmod 755 "$tree/init" "$tree/bin/busybox" "$tree/bin/vmmtrace"
(cd "$tree" && find . | cpio -o -H newc --quiet -R 0:0) >"$work/initrd" || fail "cannot write the initramfs"

console=${ARM64_MACHINE_CONSOLE:-$work/console}
# -cpu max with QEMU's own pointer-authentication algorithm: the
# architected one (QARMA) costs TCG much time, and no guest checks which.
timeout "$timeout_s" qemu-system-aarch64 -M virt,virtualization=on,gic-version="$gic" \
	-cpu max,pauth-impdef=on -smp "$smp" -m 2G -nographic -no-reboot \
	-kernel "$kernel" -initrd "$work/initrd" \
	-append "console=ttyAMA0 rdinit=/init quiet loglevel=1 panic=-1" \
	</dev/null >"$console" 2>&1
qrc=$?
[ $qrc -eq 124 ] && { echo "arm64-machine: the machine did not end within ${timeout_s} s" >&2; exit 124; }

tr -d '\r' <"$console" >"$work/con"
status=$(sed -n 's/^@@arm64-machine status \([0-9]\{1,3\}\)$/\1/p' "$work/con" | tail -1)
if [ -z "$status" ]; then
	echo "arm64-machine: the machine ended (QEMU status $qrc) without the command's status; its console ended:" >&2
	tail -20 "$work/con" >&2
	exit 125
fi
# A section's base64 lines (a kernel message between them is dropped), decoded.
section() {
	sed -n "/^@@arm64-machine $1\$/,/^@@arm64-machine /{/^@@/d;p}" "$work/con" |
		grep -E '^[A-Za-z0-9+/=]+$' | base64 -d
}
section stdout || { echo "arm64-machine: the command's stdout came back damaged" >&2; exit 125; }
section stderr >&2 || { echo "arm64-machine: the command's stderr came back damaged" >&2; exit 125; }
exit "$status"
