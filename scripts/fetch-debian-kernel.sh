#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Download Debian's stock kernel: whatever linux-image-<flavour> depends on
# today (never a hard-coded version), unpacked into the cache.
#
#   scripts/fetch-debian-kernel.sh [FLAVOUR]     (default amd64)
#
# Debian 12's own kernel (6.1), and the 6.12 its security suite carries
# (what Debian 13 and the current LTS run):
#
#   amd64           $VMMTRACE_CACHE/stock-bzImage
#   arm64           $VMMTRACE_CACHE/stock-arm64-Image
#   amd64-6.12      $VMMTRACE_CACHE/stock612-bzImage          (IBT, call padding)
#   arm64-6.12      $VMMTRACE_CACHE/stock612-arm64-Image      (call ops, 52-bit VAs)
#   arm64-16k-6.12  $VMMTRACE_CACHE/stock612-arm64-16k-Image  (16 KiB pages)
#
# The arm64 ones are multiarch downloads: they need `dpkg --add-architecture
# arm64` and apt-get update, which scripts/prepare-tests.sh does as root.
# Debian's vmlinuz for arm64 is a plain arm64 Image.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
arch=${1:-amd64}
case $arch in
amd64) meta=linux-image-amd64 link=stock-bzImage ;;
arm64) meta=linux-image-arm64:arm64 link=stock-arm64-Image ;;
amd64-6.12) meta=linux-image-6.12-amd64 link=stock612-bzImage ;;
arm64-6.12) meta=linux-image-6.12-arm64:arm64 link=stock612-arm64-Image ;;
arm64-16k-6.12) meta=linux-image-6.12-arm64-16k:arm64 link=stock612-arm64-16k-Image ;;
*) die "unknown Debian kernel flavour '$arch' (amd64, arm64, amd64-6.12, arm64-6.12 or arm64-16k-6.12)" ;;
esac
pkg=$(apt-cache depends "$meta" 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
hint="run apt-get update"
[ "${arch#arm64}" = "$arch" ] || hint="dpkg --add-architecture arm64, then apt-get update"
[ -n "$pkg" ] || die "cannot resolve $meta's kernel package ($hint)"
out="$VMMTRACE_CACHE/${pkg%%:*}"
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
ln -sfn "$out/boot/$(cd "$out/boot" && ls vmlinuz-* | head -n1)" "$VMMTRACE_CACHE/$link"
say "stock $arch kernel: $(readlink "$VMMTRACE_CACHE/$link")"
