#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The lean x86_64 kernel traced under QEMU (--host qemu: QEMU's BIOS and the
# bzImage's decompressor first, the stub in RAM kept with memmap=, its
# doorbell a breakpoint), with the test initramfs, on 1 and 2 vCPUs:
#  - exact counts, lossless: one sysloop per vCPU makes LOOPS getpriority
#    calls; with --buffer-size 4K (32-record rings, drained at dozens of
#    doorbells) the trace of __x64_sys_getpriority holds exactly that many
#    per worker's pid, nothing dropped;
#  - both tracers on one function (issue 37): in the same boot the guest's
#    own function tracer on __x64_sys_getpriority, which vmmtrace holds,
#    records exactly its 3 calls while vmmtrace records them too (its
#    count above includes them); no "ftrace failed to modify", no WARNING,
#    no oops;
#  - the console arrives whole: every E820 line the kernel prints is well
#    formed (QEMU's 16550 drops bytes a slow reader leaves in its socket);
#  - --trace '*' on 2 vCPUs from the first call to the reboot: every event
#    the summary counts is written, none dropped, e820__reallocate_tables
#    (an init function free_initmem calls) among them;
#  - --trace '*' on 1 vCPU while the guest turns on its function tracer
#    for every function, then its function_graph tracer (step ftrace-all),
#    each around a dd: no "ftrace failed to modify", no WARNING, no oops;
#    the guest's trace of the first dd is vmmtrace's, call for call and
#    parent for parent, and both count dd's vfs_read calls alike;
#  - live attach: ATTACH_CYCLES (20) attach/detach cycles on 2 busy vCPUs
#    while the guest's own function tracer is on getpriority, every window
#    exact (attach_check.py), the slots' bytes restored to the guest's (its
#    call at getpriority), stop ends it with 0.
# tests/kvm/hosts-x86.sh compares this host with the KVM one on one kernel.
# X86_KERNEL names another x86_64 kernel with the test SYSCALL fix
# (tests/qemu/lean612.sh: the lean 6.12 one, IBT, kCFI, call padding).
. "$(dirname "$0")/../lib.sh"
require_file "$VMMTRACE"
KERNEL=${X86_KERNEL:-$LEAN_BZIMAGE}
require_file "$KERNEL"
require_file "$INITRAMFS"
LOOPS=${LOOPS:-2000}
CYCLES=${ATTACH_CYCLES:-20}

for cpus in 1 2; do
	name=cpus$cpus
	timeout -k 5 300 "$VMMTRACE" boot "$KERNEL" --host qemu --cpus "$cpus" --buffer-size 4K --initrd "$INITRAMFS" \
		--cmdline "vmmtrace.steps=syscall-loop,ftrace-handoff vmmtrace.loops=$LOOPS vmmtrace.loop_cpus=$cpus vmmtrace.ftrace_func=__x64_sys_getpriority" \
		--trace __x64_sys_getpriority -o "$TMPD/$name.txt" </dev/null >"$TMPD/$name.out" 2>"$TMPD/$name.err"
	rc=$?
	tr -d '\r' <"$TMPD/$name.out" >"$TMPD/$name.con"
	echo "INFO: $name: status $rc; $(tail -n 1 "$TMPD/$name.err")"
	check "$cpus vCPU(s): /init ran its steps and the guest rebooted: status 0 (got $rc)" \
		eval "[ $rc = 0 ] && grep -q '^VMMTRACE-INIT: done passed=2 failed=0' '$TMPD/$name.con'"
	# The hand-off step calls getpriority 3 times itself.
	want=$((cpus * LOOPS + 3))
	got=$(grep -vc '^#' "$TMPD/$name.txt")
	check "$cpus vCPU(s): exactly $want getpriority events ($cpus x $LOOPS, and the hand-off step's 3; got $got)" [ "$got" = "$want" ]
	pids=$(sed -n 's/^VMMTRACE-STEP syscall-loop: worker=.* pid=\([0-9]*\)$/\1/p' "$TMPD/$name.con")
	check "$cpus vCPU(s): one sysloop per vCPU reported its pid ($(echo $pids))" [ "$(echo $pids | wc -w)" = "$cpus" ]
	for pid in $pids; do
		n=$(grep -c -- "-$pid \+\[" "$TMPD/$name.txt")
		check "$cpus vCPU(s): sysloop pid $pid: $LOOPS events with its pid (got $n)" [ "$n" = "$LOOPS" ]
	done
	check "$cpus vCPU(s): the summary counts them, none dropped, drained at dozens of doorbells" \
		eval "grep -qE '^vmmtrace: trace: $want events .*; [1-9][0-9]+ doorbells; 0 dropped' '$TMPD/$name.err'"
	check "$cpus vCPU(s): the guest's own ftrace on the function vmmtrace holds: exactly its 3 calls, no 'ftrace failed to modify', no WARNING or oops" \
		eval "grep -qE '^VMMTRACE-STEP ftrace-handoff: func=__x64_sys_getpriority loops=3 events=3 .*first_func=__x64_sys_getpriority .*ftrace_failed=0 warnings=0' '$TMPD/$name.con' && grep -q '^VMMTRACE-RESULT ftrace-handoff PASS' '$TMPD/$name.con'"
	check "$cpus vCPU(s): vmmtrace saw the guest's ftrace change its code twice, its call went on to the guest's tracer in between, no slot given" \
		grep -qE "^vmmtrace: trace: the guest's ftrace changed its code 2 times; of the slots vmmtrace held, 1 at most went on to its tracer \(0 at the end\), 0 at most were given to it \(0 at the end\)" "$TMPD/$name.err"
	check "$cpus vCPU(s): the kernel saw $cpus CPU(s)" grep -q "smp: Brought up 1 node, $cpus CPU" "$TMPD/$name.con"
	bad=$(grep -E 'BIOS-e820|user: ' "$TMPD/$name.con" |
		grep -vcE '^\[ *[0-9.]+\] (BIOS-e820|user): \[mem 0x[0-9a-f]{16}-0x[0-9a-f]{16}\] (usable|reserved)$')
	check "$cpus vCPU(s): the console arrived whole: every E820 line well formed ($bad damaged)" \
		eval "[ '$bad' = 0 ] && [ \$(grep -cE 'BIOS-e820|user: ' '$TMPD/$name.con') -ge 10 ]"
done

# --trace '*' from the first call to the reboot, counted as it comes.
set -o pipefail
timeout -k 5 600 "$VMMTRACE" boot "$KERNEL" --host qemu --cpus 2 --initrd "$INITRAMFS" \
	--cmdline "vmmtrace.steps=syscall-loop vmmtrace.loops=200 vmmtrace.loop_cpus=2" --trace '*' \
	--console "$TMPD/all.con" </dev/null 2>"$TMPD/all.err" | grep -v '^#' |
	awk '{ n++ } / e820__reallocate_tables <-free_initmem$/ { e++ } END { print n + 0, e + 0 }' >"$TMPD/all.n"
rc=$?
set +o pipefail
read -r n e <"$TMPD/all.n"
echo "INFO: --trace '*': status $rc; $n events written; $(tail -n 1 "$TMPD/all.err")"
check "--trace '*', 2 vCPUs: /init finished and the guest rebooted: status 0 (got $rc)" \
	eval "[ $rc = 0 ] && tr -d '\r' <'$TMPD/all.con' | grep -q '^VMMTRACE-INIT: done passed=1 failed=0'"
check "--trace '*', 2 vCPUs: $n events (over a million), every one counted written, none dropped" \
	eval "[ '$n' -ge 1000000 ] && grep -qE '^vmmtrace: trace: $n events .* 0 dropped' '$TMPD/all.err' && ! grep -q 'not written' '$TMPD/all.err'"
check "--trace '*': free_initmem's call of an init function is there (e820__reallocate_tables: $e)" [ "$e" = 1 ]

# The guest's own function and function_graph tracers on every function
# while vmmtrace holds every slot (issue 37; tests/lib.sh).
both_tracers x86_64 "$KERNEL" "$INITRAMFS" 10000

# Live attach on 2 busy vCPUs, the guest's own function tracer on getpriority
# all along (issue 37): each attach takes its slot from the guest's call.
SOCK=$TMPD/vt.sock
timeout -k 10 -s INT 600 "$VMMTRACE" boot "$KERNEL" --host qemu --initrd "$INITRAMFS" --cpus 2 --control "$SOCK" \
	--trace __x64_sys_sched_get_priority_max -o "$TMPD/boot.trace" --console "$TMPD/console" \
	--cmdline "vmmtrace.steps=ftrace-on,mark-loop vmmtrace.ftrace_func=__x64_sys_getpriority vmmtrace.loop_cpus=2 vmmtrace.mark_secs=400" \
	2>"$TMPD/boot.err" &
vt=$!
if ! wait_markloop "$TMPD/console" 2 120 "$vt"; then
	fail "markloop did not start on both vCPUs"; kill "$vt"; tail -5 "$TMPD/console" "$TMPD/boot.err"; finish
fi
"$VMMTRACE" status "$SOCK" >"$TMPD/status0" 2>&1
check "status names the QEMU host" grep -qx "host: qemu" "$TMPD/status0"
digest0=$(sed -n 's/^slot bytes digest: //p' "$TMPD/status0")
start=$(date +%s)
attach_cycles "$SOCK" "$CYCLES" __x64_sys_
echo "INFO: $CYCLES attach/detach cycles in $(($(date +%s) - start)) s"
guest_call_check "$SOCK" __x64_sys_getpriority "$TMPD/console"
# status GLOB's bad input: one line and status 2, nothing on stdout; a GLOB matching nothing says so.
for bad in "!__x64_sys_getpriority|only exclude" "|bad pattern" "a:mod:b|bad pattern"; do
	"$VMMTRACE" status "$SOCK" "${bad%%|*}" >"$TMPD/st.out" 2>"$TMPD/st.err"
	rc=$?
	check "status SOCK '${bad%%|*}': status 2 (got $rc), one line: $(cat "$TMPD/st.err")" \
		eval "[ $rc = 2 ] && [ \$(wc -l <'$TMPD/st.err') = 1 ] && [ ! -s '$TMPD/st.out' ] && grep -q '${bad#*|}' '$TMPD/st.err'"
done
"$VMMTRACE" status "$SOCK" no_such_function_at_all >"$TMPD/st.out" 2>&1
check "status SOCK GLOB matching no function: status 0, says so" \
	eval "[ \$? = 0 ] && grep -qx 'slots: no traceable function matches' '$TMPD/st.out'"
attach_cycles_check "$SOCK" "$digest0" "$vt"
attach_windows_check 2
check "the guest's function tracer was on getpriority all along" grep -q '^VMMTRACE-RESULT ftrace-on PASS' "$TMPD/console"
check "each attach's getpriority call went on to the guest's tracer, none given to it, the guest's call back after the last detach" \
	grep -qE "^vmmtrace: trace: the guest's ftrace changed its code 1 times; of the slots vmmtrace held, 1 at most went on to its tracer \(0 at the end\), 0 at most were given to it \(0 at the end\)" "$TMPD/boot.err"
finish
