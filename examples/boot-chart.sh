#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Where a boot's time goes, as a picture: the boot recorded with its
# returns (--graph) and its VM events (--event 'kvm:*'), then drawn by
# `vmmtrace report --chart` as one SVG that any browser opens: the boot's
# stages (start_kernel, setup_arch, sched_init, kernel_init, smp_init, each
# initcall level, told apart by do_one_initcall's argument with --args),
# a lane per vCPU and task with the longest calls nested by depth and the
# VM exits as ticks, and a table of each stage's duration, share and exits.
# The SVG goes to CHART (default boot-chart.svg here), the recording beside
# it (.raw); stdout gets the stages' calls by total time (report --stat).
# --stop-at ends the guest when it unpacks its initramfs (the rootfs
# initcall): without it the chart covers the whole boot, which on an
# emulating host takes minutes.
#
#   examples/boot-chart.sh [KERNEL]      (KVM: --event needs it)
. "$(dirname "$0")/common.sh"
CHART=${CHART:-boot-chart.svg}
RAW=${CHART%.svg}.raw
trace=()
for f in start_kernel setup_arch sched_init rest_init kernel_init kernel_init_freeable smp_init do_one_initcall; do
	trace+=(--trace "$f")
done

"$VMMTRACE" boot "$KERNEL" --graph --args --event 'kvm:*' "${trace[@]}" --stop-at populate_rootfs \
	-o "$RAW" --console /dev/null
"$VMMTRACE" report "$RAW" --chart "$CHART"
echo "### $CHART: the boot chart (open it in a browser); the calls that took longest:"
"$VMMTRACE" report "$RAW" --stat --top 8 | sed -n '/^functions:/,/^$/p'
