#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Where two boots part: the same kernel booted twice, the second time
# with one initcall left out (initcall_blacklist=proc_version_init, the
# initcall that makes /proc/version), each recorded with its returns
# (--graph), then `vmmtrace diff`: its first line says in which task and
# at which call the two boots part, its second which calls part there and
# who called them, then the calls around it marked as diff -u marks lines,
# the functions called in one boot only, the largest differences in call
# counts and times, and the boot's stages side by side. Its exit status
# is diff's: 0 when the boots agree, 1 when they part. --stop-at ends each
# guest when it unpacks its initramfs, after the initcalls of that level.
#
#   examples/boot-diff.sh [KERNEL]
. "$(dirname "$0")/common.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
trace=(--graph)
for f in start_kernel setup_arch sched_init rest_init kernel_init smp_init do_one_initcall proc_version_init; do
	trace+=(--trace "$f")
done

echo "### boot A: as it is"
"$VMMTRACE" boot "$KERNEL" "${trace[@]}" --stop-at populate_rootfs -o "$dir/a.raw" --console /dev/null
echo "### boot B: initcall_blacklist=proc_version_init"
"$VMMTRACE" boot "$KERNEL" "${trace[@]}" --stop-at populate_rootfs --cmdline initcall_blacklist=proc_version_init \
	-o "$dir/b.raw" --console /dev/null
echo "### vmmtrace diff a.raw b.raw"
status=0
(cd "$dir" && "$VMMTRACE" diff a.raw b.raw --top 5) || status=$?
echo "### exit status $status (0: the boots agree, 1: they part)"
