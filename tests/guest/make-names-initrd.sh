#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make-names-initrd.sh NAMESFILE OUT.cpio
# Makes the small second initrd archive that carries /test/names.txt (one
# symbol name per line) for the init's kallsyms step. The initramfs itself is
# fixed and the command line too short for thousands of names; the kernel
# extracts concatenated archives into the same rootfs, so a test loads
# `cat initramfs.cpio OUT.cpio` as the initrd.
set -euo pipefail
[ $# = 2 ] || { echo "usage: $0 NAMESFILE OUT.cpio" >&2; exit 2; }
names=$1 out=$2
[ -r "$names" ] || { echo "$0: cannot read $names" >&2; exit 1; }
stage=$(mktemp -d "${TMPDIR:-/tmp}/vmmtrace-names.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/test"
cp "$names" "$stage/test/names.txt"
chmod 0755 "$stage/test"
chmod 0644 "$stage/test/names.txt"
# mtime 0 and owner root keep the archive reproducible and root-owned
# without running as root.
touch -d @0 "$stage/test" "$stage/test/names.txt"
(cd "$stage" && printf 'test\ntest/names.txt\n' |
	cpio --quiet -o -H newc -R 0:0 --reproducible) >"$out.tmp.$$"
mv -f "$out.tmp.$$" "$out"
