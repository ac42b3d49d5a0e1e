#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The lean x86_64 6.12 kernel (scripts/build-lean-kernel.sh x86_64-6.12:
# clang's IBT landing pads, kCFI preambles and FineIBT's call padding, the
# test SYSCALL fix) on vmmtrace's own KVM VMM, 2 vCPUs, to /init and a
# getpriority loop on each CPU, one boot for all of it:
#  - start_kernel, setup_arch, trap_init, sched_init and rest_init each
#    named once, by name (their slots follow an ENDBR64), in boot order;
#  - each worker's getpriority calls exactly, each under its own CPU (the
#    CPU number from pcpu_hot), nothing dropped;
#  - after the hand-over the guest's own function tracer on the function
#    vmmtrace holds (__x64_sys_getpriority, issue 37) counts exactly its 3
#    calls while vmmtrace records them too (a chained entry on to the
#    guest's tracer, past its IBT landing pad), no ftrace_bug, no WARNING.
. "$(dirname "$0")/../lib.sh"
require_kvm
require_file "$VMMTRACE"
IMAGE=$VMMTRACE_CACHE/lean-x86_64-6.12/bzImage
require_file "$IMAGE"
require_file "$INITRAMFS"
LOOPS=${LOOPS:-200}
FIVE="start_kernel setup_arch trap_init sched_init rest_init"
trace=()
for f in $FIVE; do trace+=(--trace "$f"); done

start=$(date +%s)
timeout -k 30 -s INT 1200 "$VMMTRACE" boot "$IMAGE" --initrd "$INITRAMFS" --cpus 2 "${trace[@]}" \
	--trace __x64_sys_getpriority -o "$TMPD/trace.txt" --console "$TMPD/console" \
	--cmdline "vmmtrace.steps=syscall-loop,ftrace-handoff vmmtrace.loops=$LOOPS vmmtrace.loop_cpus=2 vmmtrace.ftrace_func=__x64_sys_getpriority" \
	</dev/null >/dev/null 2>"$TMPD/err"
rc=$?
tr -d '\r' <"$TMPD/console" >"$TMPD/con"
echo "INFO: boot: status $rc after $(($(date +%s) - start)) s; $(grep '^vmmtrace: trace:' "$TMPD/err")"
check "2 vCPUs: /init's steps passed, the guest rebooted: status 0 (got $rc)" \
	eval "[ $rc = 0 ] && grep -q '^VMMTRACE-INIT: done passed=2 failed=0' '$TMPD/con'"
grep -v '__x64_sys_getpriority' "$TMPD/trace.txt" >"$TMPD/five.txt"
check "the five named once each, in boot order ($(trace_funcs "$TMPD/five.txt" | paste -sd' '))" \
	test "$(trace_funcs "$TMPD/five.txt" | paste -sd' ')" = "$FIVE"
check "no event shown as a bare address" sh -c "! grep -qE ': 0x[0-9a-f]+ <-' '$TMPD/trace.txt'"
check "the CPU number known, nothing dropped" \
	eval "! grep -q 'CPU number is unknown' '$TMPD/err' &&
	      grep -qE '^vmmtrace: trace: [0-9]+ events .* 0 dropped \(0 by the stub, 0 lost\)' '$TMPD/err'"
for w in 0 1; do
	read -r pid cpu < <(sed -nE "s/^VMMTRACE-STEP syscall-loop: worker=$w pin=[0-9]+ cpu=([0-9]+) .* pid=([0-9]+)$/\2 \1/p" "$TMPD/con")
	calls=$(grep -cE -- "-${pid:-x} +\[[0-9]+\] .*: __x64_sys_getpriority <-" "$TMPD/trace.txt")
	on=$(grep -cE -- "-${pid:-x} +\[00${cpu:-9}\] .*: __x64_sys_getpriority <-" "$TMPD/trace.txt")
	check "worker $w (pid $pid, CPU $cpu): exactly $LOOPS getpriority calls ($calls), each under its CPU ($on)" \
		eval "[ '$calls' = $LOOPS ] && [ '$on' = $LOOPS ]"
done
check "the guest's own ftrace on the function vmmtrace holds: exactly its 3 calls, no 'ftrace failed to modify', no WARNING or oops" \
	eval "grep -qE '^VMMTRACE-STEP ftrace-handoff: func=__x64_sys_getpriority loops=3 events=3 .*ftrace_failed=0 warnings=0' '$TMPD/con'"
n=$(grep -c ': __x64_sys_getpriority <-' "$TMPD/trace.txt")
check "vmmtrace recorded those 3 calls too: $((2 * LOOPS + 3)) getpriority events in all ($n)" [ "$n" = $((2 * LOOPS + 3)) ]
check "its call went on to the guest's tracer while that was on, and no slot was given to it" \
	grep -qE "^vmmtrace: trace: the guest's ftrace changed its code 2 times; of the slots vmmtrace held, 1 at most went on to its tracer \(0 at the end\), 0 at most were given to it \(0 at the end\)" "$TMPD/err"
finish
