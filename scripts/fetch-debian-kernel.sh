#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Download Debian's stock kernel: whatever linux-image-amd64 depends on today
# (never a hard-coded version), unpacked into the cache.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
[ -n "$pkg" ] || die "cannot resolve linux-image-amd64's kernel package (run apt-get update)"
out="$VMMTRACE_CACHE/$pkg"
if ! ls "$out"/boot/vmlinuz-* >/dev/null 2>&1; then
	tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
	say "downloading $pkg"
	(cd "$tmp" && apt-get download -q "$pkg" >/dev/null)
	rm -rf "$out"; mkdir -p "$out.tmp"
	dpkg-deb -x "$tmp"/*.deb "$out.tmp"
	# Modules are not needed to boot or trace the kernel itself.
	rm -rf "$out.tmp/lib/modules"
	mv "$out.tmp" "$out"
fi
ln -sfn "$out/boot/$(cd "$out/boot" && ls vmlinuz-* | head -n1)" "$VMMTRACE_CACHE/stock-bzImage"
say "stock kernel: $(readlink "$VMMTRACE_CACHE/stock-bzImage")"
