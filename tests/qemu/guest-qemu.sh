#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The lean arm64 kernel under QEMU with its test initramfs (Debian's
# busybox-static:arm64, the test /init, sysloop cross-built), traced by
# vmmtrace through user space, on 1 and on 2 vCPUs:
#  - exact counts, lossless: one sysloop per vCPU makes LOOPS getpriority
#    calls each; the trace of __arm64_sys_getpriority holds exactly that
#    many events per worker's pid (plus the hand-off step's 3), though the
#    rings (32 or 16 records per CPU: what the image's padding holds) wrap
#    many times: the doorbells drained them, nothing was dropped;
#  - the ftrace_init hand-off: in the same boot the guest's own function
#    tracer, on a function vmmtrace does not hold (__arm64_sys_getpid),
#    records its event, and dmesg has no "ftrace failed to modify" and no
#    WARNING;
#  - the guest's /init reaches its end and reboots: status 0.
. "$(dirname "$0")/../lib.sh"
require_file "$VMMTRACE"
A64=$VMMTRACE_CACHE/lean-arm64/Image
require_file "$A64"
require_file "$INITRAMFS_ARM64"
LOOPS=${LOOPS:-2000}

for cpus in 1 2; do
	name=cpus$cpus
	timeout -k 5 300 "$VMMTRACE" boot "$A64" --host qemu --cpus "$cpus" --initrd "$INITRAMFS_ARM64" \
		--cmdline "vmmtrace.steps=syscall-loop,ftrace-handoff vmmtrace.loops=$LOOPS vmmtrace.loop_cpus=$cpus vmmtrace.ftrace_func=__arm64_sys_getpid" \
		--trace __arm64_sys_getpriority -o "$TMPD/$name.txt" </dev/null >"$TMPD/$name.out" 2>"$TMPD/$name.err"
	rc=$?
	echo "INFO: $name: status $rc; $(tail -n 1 "$TMPD/$name.err")"
	check "$cpus vCPU(s): /init ran its steps and the guest rebooted: status 0 (got $rc)" \
		eval "[ $rc = 0 ] && grep -q '^VMMTRACE-INIT: done passed=2 failed=0' '$TMPD/$name.out'"
	want=$((cpus * LOOPS + 3))
	got=$(grep -vc '^#' "$TMPD/$name.txt")
	check "$cpus vCPU(s): exactly $want getpriority events ($cpus x $LOOPS, and the hand-off step's 3; got $got)" [ "$got" = "$want" ]
	# The console's lines end in CR LF.
	pids=$(tr -d '\r' <"$TMPD/$name.out" | sed -n 's/^VMMTRACE-STEP syscall-loop: worker=.* pid=\([0-9]*\)$/\1/p')
	check "$cpus vCPU(s): one sysloop per vCPU reported its pid ($(echo $pids))" [ "$(echo $pids | wc -w)" = "$cpus" ]
	for pid in $pids; do
		n=$(grep -c -- "-$pid \+\[" "$TMPD/$name.txt")
		check "$cpus vCPU(s): sysloop pid $pid: $LOOPS events with its pid (got $n)" [ "$n" = "$LOOPS" ]
	done
	check "$cpus vCPU(s): the summary counts them, none dropped, the rings drained at their doorbells ($(tail -n 1 "$TMPD/$name.err"))" \
		eval "grep -qE '^vmmtrace: trace: $want events .*; [1-9][0-9]* doorbells; 0 dropped' '$TMPD/$name.err'"
	check "$cpus vCPU(s): the guest's own ftrace after the hand-off: its event, no 'ftrace failed to modify', no WARNING" \
		eval "grep -qE '^VMMTRACE-STEP ftrace-handoff: func=__arm64_sys_getpid .*events=[1-9][0-9]* .*first_func=__arm64_sys_getpid .*ftrace_failed=0 warnings=0' '$TMPD/$name.out' && grep -q '^VMMTRACE-RESULT ftrace-handoff PASS' '$TMPD/$name.out'"
done
finish
