#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Debian 12's backported QEMU (10.0 today: whatever bookworm-backports
# carries, never a hard-coded version), unpacked into the cache beside the
# system's 7.2, nothing installed and no apt source added:
#
#   $VMMTRACE_CACHE/qemu-backports/usr/bin/qemu-system-{x86_64,aarch64,loongarch64,riscv64,...}
#   $VMMTRACE_CACHE/qemu-backports/usr/lib/riscv64-linux-gnu/opensbi/generic/fw_dynamic.bin
#
# --deterministic on several vCPUs needs QEMU 10 (7.2's instruction
# counting hangs x86_64 and loongarch64 guests starting their second CPU;
# docs/TRACING.md): the tests run those boots with this directory first in
# PATH. The binaries use the system's firmware and libraries (QEMU 7.2's
# packages, which the project's set-up installs); a library they lack is
# named and the script fails. riscv64 on several vCPUs also needs the
# backported OpenSBI (1.5; Debian 12's 1.1 keeps a waiting hart busy),
# which the tests pass with --firmware.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
out="$VMMTRACE_CACHE/qemu-backports"
pkgs=(qemu-system-x86 qemu-system-arm qemu-system-misc qemu-system-riscv qemu-system-common qemu-system-data opensbi)
fw=$out/usr/lib/riscv64-linux-gnu/opensbi/generic/fw_dynamic.bin
if [ -x "$out/usr/bin/qemu-system-x86_64" ] && "$out/usr/bin/qemu-system-x86_64" --version >/dev/null 2>&1 &&
	[ -x "$out/usr/bin/qemu-system-riscv64" ] && [ -s "$fw" ]; then
	say "QEMU from bookworm-backports cached in $out ($("$out/usr/bin/qemu-system-x86_64" --version | head -n 1))"
	exit 0
fi
apt_dir="$VMMTRACE_CACHE/apt-backports"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
echo "deb http://deb.debian.org/debian bookworm-backports main" >"$apt_dir/sources.list"
apt_opts=(-o "Dir::Etc::sourcelist=$apt_dir/sources.list" -o Dir::Etc::sourceparts=/nonexistent
	-o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o APT::Get::List-Cleanup=0
	-o APT::Sandbox::User=root)
say "bookworm-backports' package list"
apt-get "${apt_opts[@]}" update -q >/dev/null || die "cannot read bookworm-backports' package list"
tmp=$(mktemp -d); trap 'rm -rf "$tmp" "$out.tmp"' EXIT
for p in "${pkgs[@]}"; do
	say "downloading $p from bookworm-backports"
	(cd "$tmp" && apt-get "${apt_opts[@]}" download -q "$p/bookworm-backports" >/dev/null) ||
		die "cannot download $p from bookworm-backports"
done
rm -rf "$out.tmp"; mkdir -p "$out.tmp"
for d in "$tmp"/*.deb; do dpkg-deb -x "$d" "$out.tmp"; done
missing=$(for b in "$out.tmp"/usr/bin/qemu-system-{x86_64,aarch64,loongarch64,riscv64}; do ldd "$b"; done | awk '/not found/ { print $1 }' | sort -u | tr '\n' ' ')
[ -z "$missing" ] || die "the backported QEMU needs libraries this machine lacks: $missing"
rm -rf "$out"; mv "$out.tmp" "$out"
say "QEMU from bookworm-backports in $out ($("$out/usr/bin/qemu-system-x86_64" --version | head -n 1))"
