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
#  - a boot without --graph keeps no shadow stacks on riscv64 (the stub's
#    place is the image's padding, and its rings do not move): a later
#    attach --graph is refused in one line, and the boot goes on.
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
graph_check "$TMPD/graph.txt" >"$TMPD/check.out"
stats=$(tail -n 1 "$TMPD/check.out")
problems=$(($(wc -l <"$TMPD/check.out") - 1))
check "boot: every block closes at its depth in its task ($stats; $problems problems)" \
	eval "[ $problems = 0 ] && [[ '$stats' =~ blocks=[1-9] ]]"
check "boot: start_kernel is listed as still running at the end (swapper/0-0)" \
	grep -qE '^ [01]\)               \|  /\* start_kernel: still running when the trace ended \(swapper/0-0\) \*/$' "$TMPD/graph.txt"
check "boot: setup_arch, trap_init and sched_init returned inside start_kernel's block" \
	eval "[ \$(grep -cE '^ [01]\) .{14}\|    (setup_arch|trap_init|sched_init)\(\);' '$TMPD/graph.txt') = 3 ]"
check "boot: kernel_init returned into ret_from_fork (its block closed)" \
	grep -qE '\|  \}( /\* kernel_init = 0x0 \*/)?$' "$TMPD/graph.txt"
want=$((2 * LOOPS))
got=$(grep -cE 'sys_getpriority\(\); /\* = 0x14 \*/$|\} /\* sys_getpriority = 0x14 \*/$' "$TMPD/graph.txt")
all=$(grep -cE 'sys_getpriority\(\);|\} /\* sys_getpriority ' "$TMPD/graph.txt")
check "getpriority: $want returns, each 20 (got $got of $all)" eval "[ $got = $want ] && [ $all = $want ]"

graph_star "$RV" "$INITRAMFS_RV" "-- $LOOPS 2" '^CINIT: done'

# No --graph at boot: no shadow stacks, so attach --graph is refused.
SOCK=$TMPD/sock
: >"$TMPD/plain.console"
timeout -k 10 -s INT 300 "$VMMTRACE" boot "$RV" --host qemu --initrd "$INITRAMFS_RV" --control "$SOCK" \
	--console "$TMPD/plain.console" --cmdline "-- 0 1 sys_getpriority 100 1" </dev/null 2>"$TMPD/plain.err" &
vt=$!
if wait_line "$TMPD/plain.console" '^CINIT-SLEEP' 200 "$vt"; then
	"$VMMTRACE" attach "$SOCK" --graph --trace sys_getpriority -o "$TMPD/refused.txt" 2>"$TMPD/attach.err"
	arc=$?
	check "attach --graph on a boot without it: refused in one line (status $arc: $(cat "$TMPD/attach.err"))" \
		eval "[ $arc != 0 ] && [ \$(wc -l <'$TMPD/attach.err') = 1 ] &&
		      grep -q 'this boot keeps no shadow stacks' '$TMPD/attach.err'"
else
	fail "cinit never slept (console ends: $(tail -n1 "$TMPD/plain.console"))"
fi
wait "$vt"
rc=$?
check "... and the boot went on to its end, status 0 (got $rc)" \
	eval "[ $rc = 0 ] && grep -q '^CINIT: done' '$TMPD/plain.console'"
finish
