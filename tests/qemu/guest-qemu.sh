#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The lean arm64 kernel under QEMU with its test initramfs (Debian's
# busybox-static:arm64, the test /init, sysloop cross-built), traced by
# vmmtrace through user space, on 1 and on 2 vCPUs:
#  - exact counts, lossless: one sysloop per vCPU makes LOOPS getpriority
#    calls each; the trace of __arm64_sys_getpriority holds exactly that
#    many events per worker's pid (plus the hand-off step's 3), nothing
#    dropped: on 1 vCPU with --buffer-size 4K, 32-record rings in the
#    image's init-data tail that wrap dozens of times (drained at the
#    doorbell);
#    on 2, the default size, in the region the device tree reserves,
#    where the rings move at the hand-over;
#  - the ftrace_init hand-off: in the same boot the guest's own function
#    tracer, on a function vmmtrace does not hold (__arm64_sys_getpid),
#    records its event, and dmesg has no "ftrace failed to modify" and no
#    WARNING;
#  - the guest's /init reaches its end and reboots: status 0;
#  - --trace '*' on 2 vCPUs from the first call to the reboot: about 4
#    million events (riscv64: 1 million), every one the summary counts is
#    written, none dropped.
# The same for the lean riscv64 kernels (with and without
# STRICT_KERNEL_RWX), whose initramfs has no busybox
# (Debian 12 has no riscv64 packages): /init is tests/guest/cinit.c,
# which runs the workers and the hand-off check itself.
. "$(dirname "$0")/../lib.sh"
require_file "$VMMTRACE"
A64=$VMMTRACE_CACHE/lean-arm64/Image
require_file "$A64"
require_file "$INITRAMFS_ARM64"
RV=$VMMTRACE_CACHE/lean-riscv64/Image
INITRAMFS_RV=$VMMTRACE_CACHE/initramfs-riscv64.cpio
require_file "$RV"
require_file "$INITRAMFS_RV"
LOOPS=${LOOPS:-2000}

# arm64_checks TAG IMAGE: the arm64 checks on IMAGE.
arm64_checks() {
	local tag=$1 img=$2 cpus name size rc want got pids pid n
	for cpus in 1 2; do
		name=$tag-cpus$cpus
		size=()
		[ "$cpus" = 1 ] && size=(--buffer-size 4K)
		timeout -k 5 300 "$VMMTRACE" boot "$img" --host qemu --cpus "$cpus" "${size[@]}" --initrd "$INITRAMFS_ARM64" \
			--cmdline "vmmtrace.steps=syscall-loop,ftrace-handoff vmmtrace.loops=$LOOPS vmmtrace.loop_cpus=$cpus vmmtrace.ftrace_func=__arm64_sys_getpid" \
			--trace __arm64_sys_getpriority -o "$TMPD/$name.txt" </dev/null >"$TMPD/$name.out" 2>"$TMPD/$name.err"
		rc=$?
		echo "INFO: $name: status $rc; $(tail -n 1 "$TMPD/$name.err")"
		check "$tag, $cpus vCPU(s): /init ran its steps and the guest rebooted: status 0 (got $rc)" \
			eval "[ $rc = 0 ] && grep -q '^VMMTRACE-INIT: done passed=2 failed=0' '$TMPD/$name.out'"
		want=$((cpus * LOOPS + 3))
		got=$(grep -vc '^#' "$TMPD/$name.txt")
		check "$tag, $cpus vCPU(s): exactly $want getpriority events ($cpus x $LOOPS, and the hand-off step's 3; got $got)" [ "$got" = "$want" ]
		# The console's lines end in CR LF.
		pids=$(tr -d '\r' <"$TMPD/$name.out" | sed -n 's/^VMMTRACE-STEP syscall-loop: worker=.* pid=\([0-9]*\)$/\1/p')
		check "$tag, $cpus vCPU(s): one sysloop per vCPU reported its pid ($(echo $pids))" [ "$(echo $pids | wc -w)" = "$cpus" ]
		for pid in $pids; do
			n=$(grep -c -- "-$pid \+\[" "$TMPD/$name.txt")
			check "$tag, $cpus vCPU(s): sysloop pid $pid: $LOOPS events with its pid (got $n)" [ "$n" = "$LOOPS" ]
		done
		check "$tag, $cpus vCPU(s): the summary counts them, none dropped ($(tail -n 1 "$TMPD/$name.err"))" \
			eval "grep -qE '^vmmtrace: trace: $want events .* 0 dropped' '$TMPD/$name.err'"
		[ "$cpus" = 1 ] && check "$tag, 1 vCPU, 32-record rings: drained at dozens of doorbells" \
			eval "grep -qE '; [1-9][0-9]+ doorbells;' '$TMPD/$name.err'"
		check "$tag, $cpus vCPU(s): the guest's own ftrace after the hand-off: its event, no 'ftrace failed to modify', no WARNING" \
			eval "grep -qE '^VMMTRACE-STEP ftrace-handoff: func=__arm64_sys_getpid .*events=[1-9][0-9]* .*first_func=__arm64_sys_getpid .*ftrace_failed=0 warnings=0' '$TMPD/$name.out' && grep -q '^VMMTRACE-RESULT ftrace-handoff PASS' '$TMPD/$name.out'"
	done
}
arm64_checks arm64 "$A64"

# trace_all NAME IMAGE INITRD DONE_LINE CMDLINE MIN: --trace '*' on 2 vCPUs from the
# first call to the reboot, the trace on stdout counted as it comes (hundreds
# of MB as text), the console to a file whose DONE_LINE says /init finished;
# at least MIN events (the count varies by a tenth between boots: timers, idle).
trace_all() {
	local name=$1 img=$2 initrd=$3 done_line=$4 cmdline=$5 min=$6 n rc
	set -o pipefail
	timeout -k 5 600 "$VMMTRACE" boot "$img" --host qemu --cpus 2 --initrd "$initrd" \
		--cmdline "$cmdline" --trace '*' --console "$TMPD/$name.con" </dev/null 2>"$TMPD/$name.err" |
		grep -vc '^#' >"$TMPD/$name.n"
	rc=$?
	set +o pipefail
	n=$(cat "$TMPD/$name.n")
	echo "INFO: $name --trace '*': status $rc; $n events written; $(tail -n 1 "$TMPD/$name.err")"
	check "$name --trace '*', 2 vCPUs: /init finished and the guest rebooted: status 0 (got $rc)" \
		eval "[ $rc = 0 ] && tr -d '\r' <'$TMPD/$name.con' | grep -q '^$done_line'"
	check "$name --trace '*', 2 vCPUs: $n events (at least $min), every one counted written, none dropped" \
		eval "[ '$n' -ge $min ] && grep -qE '^vmmtrace: trace: $n events .* 0 dropped' '$TMPD/$name.err'"
}

# qtrace_order TAG: test-qemu-trace on TAG's kernel: the first-hit order of
# five early functions against QEMU's own breakpoints, and --trace '*'.
qtrace_order() {
	local tag=$1 rc
	"$TOP/build/tests/qemu/test-qemu-trace" "$tag" >"$TMPD/order-$tag.out" 2>&1
	rc=$?
	sed 's/^/  /' "$TMPD/order-$tag.out" | grep -E '^  (PASS|FAIL)' | sed "s/^  /$tag order: /" | sed "s/^$tag order: PASS: /INFO: /; s/^$tag order: FAIL: /INFO: FAILED: /"
	check "$tag: the first-hit order of QEMU's breakpoints, and --trace '*' (test-qemu-trace: $(grep -c '^PASS' "$TMPD/order-$tag.out") passed, $(grep -c '^FAIL' "$TMPD/order-$tag.out") failed)" \
		eval "[ $rc = 0 ] && ! grep -q '^FAIL' '$TMPD/order-$tag.out' && grep -q '^PASS' '$TMPD/order-$tag.out'"
}

trace_all arm64 "$A64" "$INITRAMFS_ARM64" 'VMMTRACE-INIT: done passed=2 failed=0' vmmtrace.steps=cpus,uname 2000000

# An arm64 kernel with no padding below _etext (lean-arm64-nopad: the lean
# Image with those 8 KiB made non-zero, scripts/prepare-tests.sh): the stub
# goes in the guard page at _end, its doorbell on its own page, mapped in
# init_pg_dir by the image's last 2 MiB block and in swapper_pg_dir by
# tables vmmtrace adds before the first instruction. The same checks, its
# doorbells on 1 vCPU included, and the order of five early functions
# against QEMU's own breakpoints across paging_init.
A64NP=$VMMTRACE_CACHE/lean-arm64-nopad/Image
require_file "$A64NP"
arm64_checks arm64-nopad "$A64NP"
trace_all arm64-nopad "$A64NP" "$INITRAMFS_ARM64" 'VMMTRACE-INIT: done passed=2 failed=0' vmmtrace.steps=cpus,uname 2000000
check "arm64-nopad: the stub went in the guard page at _end (-v)" \
	eval "\"$VMMTRACE\" boot '$A64NP' --host qemu --trace start_kernel --stop-at setup_arch -v 2>&1 | grep -q 'the stub goes in the guard page at _end'"
qtrace_order arm64-nopad
# --graph: paging_init is entered under init_pg_dir and returns under
# swapper_pg_dir, through the return hook in the guard page.
timeout -k 5 120 "$VMMTRACE" boot "$A64NP" --host qemu --graph --trace setup_arch --trace paging_init --trace trap_init \
	--stop-at kernel_init </dev/null >"$TMPD/nopad-graph.txt" 2>"$TMPD/nopad-graph.err"
rc=$?
check "arm64-nopad --graph: status 0 (got $rc); paging_init's and setup_arch's blocks close, trap_init after them" \
	eval "[ $rc = 0 ] && grep -A3 'setup_arch() {' '$TMPD/nopad-graph.txt' | tr -d '\n' | grep -qE 'paging_init\(\);.*[0-9] us \|  \}.*trap_init\(\);'"

# riscv64: cinit's arguments after "--": LOOPS CPUS FUNC. riscv_checks TAG KERNEL: the checks on KERNEL.
riscv_checks() {
	local tag=$1 kernel=$2 cpus name rc want got pids pid n
	for cpus in 1 2; do
		name=$tag$cpus
		timeout -k 5 300 "$VMMTRACE" boot "$kernel" --host qemu --cpus "$cpus" --initrd "$INITRAMFS_RV" \
			--cmdline "-- $LOOPS $cpus sys_getpid" --trace sys_getpriority -o "$TMPD/$name.txt" \
			</dev/null >"$TMPD/$name.out" 2>"$TMPD/$name.err"
		rc=$?
		tr -d '\r' <"$TMPD/$name.out" >"$TMPD/$name.con"
		echo "INFO: $tag $name: status $rc; $(tail -n 1 "$TMPD/$name.err")"
		check "$tag, $cpus vCPU(s): cinit ran and the guest rebooted: status 0 (got $rc)" \
			eval "[ $rc = 0 ] && grep -q '^CINIT: done' '$TMPD/$name.con'"
		want=$((cpus * LOOPS))
		got=$(grep -vc '^#' "$TMPD/$name.txt")
		check "$tag, $cpus vCPU(s): exactly $want getpriority events (got $got), none dropped" \
			eval "[ '$got' = $want ] && grep -qE '^vmmtrace: trace: $want events .* 0 dropped' '$TMPD/$name.err'"
		pids=$(sed -n "s/^CINIT-WORKER cpu=.* calls=$LOOPS ns=[0-9]* pid=\([0-9]*\)$/\1/p" "$TMPD/$name.con")
		check "$tag, $cpus vCPU(s): one worker per vCPU made every call ($(echo $pids))" [ "$(echo $pids | wc -w)" = "$cpus" ]
		for pid in $pids; do
			n=$(grep -c -- "-$pid \+\[" "$TMPD/$name.txt")
			check "$tag, $cpus vCPU(s): worker pid $pid: $LOOPS events with its pid (got $n)" [ "$n" = "$LOOPS" ]
		done
		check "$tag, $cpus vCPU(s): the guest's own ftrace after the hand-off: 3 events, no 'ftrace failed to modify', no WARNING" \
			grep -qx 'CINIT-FTRACE func=sys_getpid events=3 ftrace_failed=0 warnings=0 loops=0 ns=[0-9]*' "$TMPD/$name.con"
	done
	trace_all "$tag" "$kernel" "$INITRAMFS_RV" 'CINIT: done' "-- 100 2" 500000
}
riscv_checks riscv64 "$RV"

# A riscv64 kernel without STRICT_KERNEL_RWX (as embedded configurations
# build it): no padding below __init_begin, so the stub goes past the
# image's end, in its last 2 MiB block, which such a kernel maps
# executable in every phase and the device tree reserves. The same checks,
# and the order of five early functions against QEMU's own breakpoints.
RVNS=$VMMTRACE_CACHE/lean-riscv64-nostrict/Image
require_file "$RVNS"
riscv_checks riscv64-nostrict "$RVNS"
check "riscv64-nostrict: the stub went past the image's end (-v)" \
	eval "\"$VMMTRACE\" boot '$RVNS' --trace start_kernel --stop-at setup_arch -v 2>&1 | grep -q 'the stub goes past the image.s end'"
qtrace_order riscv64-nostrict
finish
