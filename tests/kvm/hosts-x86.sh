#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# One lean x86_64 kernel (the bzImage) under both hosts: --host kvm (this
# VMM; the stub outside RAM) and --host qemu (QEMU TCG; QEMU's own BIOS
# and decompressor, the stub in RAM kept with memmap=). Traced with the
# same fixed set of early functions to kernel_init on 1 vCPU, both give
# the same event sequence: each function once, with the same task, CPU,
# flags and caller, in the same order, and the same split at ftrace_init.
# Timestamps differ (the hosts' clocks) and are left out.
. "$(dirname "$0")/../lib.sh"
require_kvm
require_file "$VMMTRACE"
require_file "$LEAN_BZIMAGE"
FUNCS="start_kernel setup_arch trap_init sched_init init_IRQ time_init console_init vfs_caches_init rest_init"
args=()
for f in $FUNCS; do
	args+=(--trace "$f")
done

for host in kvm qemu; do
	timeout -k 5 600 "$VMMTRACE" boot "$LEAN_BZIMAGE" --host "$host" "${args[@]}" --stop-at kernel_init \
		-o "$TMPD/$host.txt" </dev/null >"$TMPD/$host.out" 2>"$TMPD/$host.err"
	rc=$?
	echo "INFO: --host $host: status $rc; $(tail -n 1 "$TMPD/$host.err")"
	check "--host $host: the traced boot stops at kernel_init: status 0 (got $rc)" [ "$rc" = 0 ]
	# "comm-pid [cpu] flags timestamp: func <-caller" without the timestamp.
	grep -v '^#' "$TMPD/$host.txt" | sed -E 's/^ *([^ ]+) +(\[[0-9]+\]) +([^ ]+) +[0-9.]+: (.*)$/\1 \2 \3 \4/' \
		>"$TMPD/$host.seq"
	sed -n 's/^vmmtrace: trace: \([0-9]*\) events (\([0-9]*\) before ftrace_init.*/\1 \2/p' "$TMPD/$host.err" \
		>"$TMPD/$host.sum"
	for f in $FUNCS; do
		n=$(grep -c " $f <-" "$TMPD/$host.seq")
		check "--host $host: $f once (got $n)" [ "$n" = 1 ]
	done
done
sed 's/^/INFO: kvm:  /' "$TMPD/kvm.seq"
sed 's/^/INFO: qemu: /' "$TMPD/qemu.seq"
check "both hosts: the same $(wc -l <"$TMPD/kvm.seq") events in the same order, with the same task, CPU, flags and caller" \
	eval "[ -s '$TMPD/kvm.seq' ] && cmp -s '$TMPD/kvm.seq' '$TMPD/qemu.seq'"
check "both hosts: the same summary: events, and how many before ftrace_init ($(cat "$TMPD/kvm.sum") / $(cat "$TMPD/qemu.sum"))" \
	eval "[ -s '$TMPD/kvm.sum' ] && cmp -s '$TMPD/kvm.sum' '$TMPD/qemu.sum'"
finish
