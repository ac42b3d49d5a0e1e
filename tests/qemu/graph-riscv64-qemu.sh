#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# --graph and --retval on riscv64, the lean kernel under QEMU on 2 vCPUs
# (its /init is tests/guest/cinit.c: one getpriority worker per vCPU):
#  - five early functions, kernel_init, the getpriority handler and the
#    timer softirq: every block closes at its depth in its task,
#    start_kernel is still running at the end with setup_arch, trap_init and
#    sched_init returned inside it, kernel_init returned, and exactly one
#    return of 20 (= 0x14) per getpriority call the workers made;
#  - the stress of graph.sh: --graph --trace '*' from start_kernel to the
#    reboot, every block closed or listed, the summary's events the graph's;
#  - graph.sh's 150 sleepers (cinit's sleepers=150): every hrtimer_nanosleep
#    closes after its 3 s, tasks took tables beyond their first;
#  - a boot without --graph gets its shadow stacks with the rings' move at
#    the hand-over (into a region the device tree reserves, below QEMU's own
#    device tree): a later attach --graph holds exactly the calls made while
#    attached, each with its return.
. "$(dirname "$0")/../lib.sh"
RV=$VMMTRACE_CACHE/lean-riscv64/Image
INITRAMFS_RV=$VMMTRACE_CACHE/initramfs-riscv64.cpio
require_file "$VMMTRACE"
require_file "$RV"
require_file "$INITRAMFS_RV"
LOOPS=50

args=(--graph --retval)
for f in start_kernel setup_arch trap_init sched_init rest_init kernel_init sys_getpriority run_timer_softirq; do
	args+=(--trace "$f")
done
timeout -k 10 300 "$VMMTRACE" boot "$RV" --host qemu --initrd "$INITRAMFS_RV" --cpus 2 "${args[@]}" -v \
	-o "$TMPD/graph.txt" --console "$TMPD/console" --cmdline "-- $LOOPS 2" </dev/null 2>"$TMPD/err"
rc=$?
check "boot: status 0 (got $rc), cinit ran to its end" eval "[ $rc = 0 ] && grep -q '^CINIT: done' '$TMPD/console'"
bad=$(grep -cE 'Oops|WARNING:|BUG:|Call Trace|Unable to handle' "$TMPD/console")
check "boot: no oops, no WARNING, no BUG on the console ($bad lines)" [ "$bad" = 0 ]
check "boot: -v says how many shadow stacks the stub's first place holds" \
	grep -qE '^vmmtrace: info: --graph: [1-9][0-9]* shadow stacks in the stub.s first place(, all of them if the rings move)?$' "$TMPD/err"
graph_boot_checks "$TMPD/graph.txt"
want=$((2 * LOOPS))
got=$(grep -cE 'sys_getpriority\(\); /\* = 0x14 \*/$|\} /\* sys_getpriority = 0x14 \*/$' "$TMPD/graph.txt")
all=$(grep -cE 'sys_getpriority\(\);|\} /\* sys_getpriority ' "$TMPD/graph.txt")
check "getpriority: $want returns, each 20 (got $got of $all)" eval "[ $got = $want ] && [ $all = $want ]"

graph_star "$RV" "$INITRAMFS_RV" "-- $LOOPS 2" '^CINIT: done'
graph_sleepers "$RV" "$INITRAMFS_RV" "sleepers=150 -- 0 1" '^CINIT-SLEEPERS n=150'

# No --graph at boot: the shadow stacks come with the rings' move at the
# hand-over, so attach --graph works later on. cinit's bench rounds: a
# loop, a sleep (attach), a loop, a sleep (detach): the window holds that
# loop's calls, each with its return.
SOCK=$TMPD/sock
WLOOPS=100
: >"$TMPD/plain.console"
timeout -k 10 -s INT 300 "$VMMTRACE" boot "$RV" --host qemu --initrd "$INITRAMFS_RV" --control "$SOCK" -v \
	--console "$TMPD/plain.console" --cmdline "-- 0 1 sys_getpriority $WLOOPS 1" </dev/null 2>"$TMPD/plain.err" &
vt=$!
if wait_line "$TMPD/plain.console" '^CINIT-SLEEP n=1' 200 "$vt"; then
	"$VMMTRACE" attach "$SOCK" --graph --retval --trace sys_getpriority -o "$TMPD/window.txt" 2>"$TMPD/attach.err" &
	apid=$!
	wait_line "$TMPD/plain.console" '^CINIT-SLEEP n=2' 200 "$vt" || fail "cinit never slept a second time"
	kill -TERM "$apid"
	wait "$apid"
	arc=$?
	n=$(grep -cE '^ 0\) .{14}\|  sys_getpriority\(\); /\* = 0x14 \*/$' "$TMPD/window.txt")
	check "attach --graph on a boot without it (status $arc): the window holds the $WLOOPS calls made in it, each returning 20 (got $n)" \
		eval "[ $arc = 0 ] && [ $n = $WLOOPS ]"
else
	fail "cinit never slept (console ends: $(tail -n1 "$TMPD/plain.console"))"
fi
wait "$vt"
rc=$?
check "... the boot went on to its end, status 0 (got $rc)" \
	eval "[ $rc = 0 ] && grep -q '^CINIT: done' '$TMPD/plain.console'"
check "... its shadow stacks came with the rings at the hand-over" \
	grep -qE '^vmmtrace: info: shadow stacks moved to 0x[0-9a-f]+: 1024 of them, 0 in use$' "$TMPD/plain.err"
finish
