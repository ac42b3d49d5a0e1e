#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Where two boots part, told from noise: the same kernel booted RUNS times
# (3 unless given) as it is and RUNS times with one initcall left out
# (initcall_blacklist=proc_version_init, the initcall that makes
# /proc/version), each recorded with its returns (--graph). Then:
#  - `vmmtrace diff a1.raw b1.raw`, one boot of each: its first line says
#    in which task and at which call the two boots part, its second which
#    calls part there and who called them, then the calls around it marked
#    as diff -u marks lines, the functions called in one boot only, the
#    largest differences in call counts and times, and the stages;
#  - `vmmtrace diff a1.raw a2.raw a3.raw -- b1.raw b2.raw b3.raw`: only the
#    partings that hold in every run of A against every run of B; a call
#    whose count differs between runs of one side (a timer that fired in
#    some boots only) is set aside as noise. Nothing makes boots on KVM or
#    hardware alike; `vmmtrace boot --host qemu --deterministic` does
#    under QEMU, and then one run a side is enough;
#  - `vmmtrace report --stat` of A's runs: each function's calls and time
#    as the fewest, the median and the most.
# diff's exit status is diff(1)'s: 0 when the boots agree, 1 when they
# part. --stop-at ends each guest when it unpacks its initramfs, after the
# initcalls of that level.
#
#   examples/boot-diff.sh [KERNEL [RUNS]]
. "$(dirname "$0")/common.sh"
runs=${2:-3}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
trace=(--graph)
for f in start_kernel setup_arch sched_init rest_init kernel_init smp_init do_one_initcall proc_version_init; do
	trace+=(--trace "$f")
done

a=() b=()
for i in $(seq 1 "$runs"); do
	echo "### boot A$i: as it is"
	"$VMMTRACE" boot "$KERNEL" "${trace[@]}" --stop-at populate_rootfs -o "$dir/a$i.raw" --console /dev/null
	echo "### boot B$i: initcall_blacklist=proc_version_init"
	"$VMMTRACE" boot "$KERNEL" "${trace[@]}" --stop-at populate_rootfs --cmdline initcall_blacklist=proc_version_init \
		-o "$dir/b$i.raw" --console /dev/null
	a+=("a$i.raw") b+=("b$i.raw")
done
echo "### vmmtrace diff a1.raw b1.raw"
status=0
(cd "$dir" && "$VMMTRACE" diff a1.raw b1.raw --top 5) || status=$?
echo "### exit status $status (0: the boots agree, 1: they part)"
echo "### vmmtrace diff ${a[*]} -- ${b[*]}"
status=0
(cd "$dir" && "$VMMTRACE" diff "${a[@]}" -- "${b[@]}" --top 5) || status=$?
echo "### exit status $status (0: the boots agree in every run, 1: they part in every run)"
echo "### vmmtrace report --stat ${a[*]}"
(cd "$dir" && "$VMMTRACE" report --stat "${a[@]}" --top 5)
