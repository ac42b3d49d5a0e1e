#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Live attach on a running arm64 guest under QEMU (2 busy vCPUs), one boot
# for all of it, as tests/e2e/attach-stress.sh does on KVM:
#  - the control socket: mode 0600, `vmmtrace status` names the host and
#    both vCPUs, `vmmtrace nmi` is refused in one line (QEMU's host cannot);
#  - ATTACH_CYCLES (50) attach/detach cycles with varying globs (every
#    tenth two clients at once, overlapping) while markloop runs on both
#    vCPUs: every window holds exactly one __arm64_sys_getpriority event per
#    loop iteration inside it (attach_check.py), and after the last detach
#    the slots' bytes are what they were before the first attach;
#  - the guest never oopses or warns, `vmmtrace stop` ends it with 0, the
#    trace lost nothing and left no record unfinished.
# Then riscv64 (1 vCPU; tests/guest/cinit.c's ROUNDS mode, no marker loop):
# attached while the guest makes exactly RV_LOOPS getpriority calls, each
# window holds exactly RV_LOOPS sys_getpriority events, and the guest's own
# function tracer, on the same function after the detach, still counts its
# calls.
# Each pause goes through QEMU's gdbstub, held by the control thread
# between its pause and resume (vmm/qemu/host-qemu.h).
# ATTACH_A64 names another arm64 kernel (tests/qemu/lean612.sh: the lean
# 6.12 one); ATTACH_RV another riscv64 kernel, or none when set empty.
. "$(dirname "$0")/../lib.sh"
require_file "$VMMTRACE"
A64=${ATTACH_A64:-$VMMTRACE_CACHE/lean-arm64/Image}
require_file "$A64"
require_file "$INITRAMFS_ARM64"
CYCLES=${ATTACH_CYCLES:-50}
SOCK=$TMPD/vt.sock

timeout -k 10 -s INT 600 "$VMMTRACE" boot "$A64" --host qemu --initrd "$INITRAMFS_ARM64" --cpus 2 --control "$SOCK" \
	--trace __arm64_sys_sched_get_priority_max -o "$TMPD/boot.trace" --console "$TMPD/console" \
	--cmdline "vmmtrace.steps=mark-loop vmmtrace.loop_cpus=2 vmmtrace.mark_secs=400" 2>"$TMPD/boot.err" &
vt=$!
if ! wait_markloop "$TMPD/console" 2 120 "$vt"; then
	fail "markloop did not start on both vCPUs"; kill "$vt"; tail -5 "$TMPD/console" "$TMPD/boot.err"; finish
fi

check "socket has mode 0600" test "$(stat -c %a "$SOCK")" = 600
"$VMMTRACE" status "$SOCK" >"$TMPD/status0" 2>&1
check "status names the QEMU host" grep -qx "host: qemu" "$TMPD/status0"
check "status lists both vCPUs, each with its pc (read in a pause of its own; markloop's are in user space)" \
	sh -c "grep -cE '^vcpu [01]: in QEMU \(pid [0-9]+\), running, pc 0x[0-9a-f]+$' '$TMPD/status0' | grep -qx 2"
digest0=$(sed -n 's/^slot bytes digest: //p' "$TMPD/status0")
"$VMMTRACE" nmi "$SOCK" >"$TMPD/nmi" 2>&1
rc=$?
check "nmi is refused on QEMU's host, in one line (status $rc): $(head -c 80 "$TMPD/nmi")" \
	sh -c "[ $rc != 0 ] && [ \$(wc -l <'$TMPD/nmi') = 1 ] && grep -q 'cannot send an NMI' '$TMPD/nmi'"

start=$(date +%s)
attach_cycles "$SOCK" "$CYCLES" __arm64_sys_
echo "INFO: $CYCLES attach/detach cycles in $(($(date +%s) - start)) s"
attach_cycles_check "$SOCK" "$digest0" "$vt"
ATTACH_MARKER=__arm64_sys_sched_get_priority_max ATTACH_TARGET=__arm64_sys_getpriority attach_windows_check 2
grep -E "^vmmtrace: trace:" "$TMPD/boot.err" | sed 's/^/INFO: /'

RV=${ATTACH_RV-$VMMTRACE_CACHE/lean-riscv64/Image}
[ -n "$RV" ] || finish
require_file "$RV"
require_file "$INITRAMFS_RV"
RV_LOOPS=${RV_LOOPS:-3000}
RV_ROUNDS=3
RSOCK=$TMPD/rv.sock
: >"$TMPD/rv.console"
timeout -k 10 -s INT 300 "$VMMTRACE" boot "$RV" --host qemu --initrd "$INITRAMFS_RV" --control "$RSOCK" \
	--console "$TMPD/rv.console" --cmdline "-- 0 1 sys_getpriority $RV_LOOPS $RV_ROUNDS" 2>"$TMPD/rv.err" &
vt=$!
seen=0 attached=0 apid= windows=0
while kill -0 "$vt" 2>/dev/null; do
	complete_lines "$TMPD/rv.console" "$seen"
	for line in "${new[@]}"; do
		case $line in CINIT-SLEEP\ n=*) ;; *) continue ;; esac
		if [ "$attached" = 0 ]; then
			windows=$((windows + 1))
			"$VMMTRACE" attach "$RSOCK" --trace sys_getpriority --format text -o "$TMPD/rv.w$windows" \
				2>"$TMPD/rv.w$windows.err" &
			apid=$!
			until grep -q 'attached as client' "$TMPD/rv.w$windows.err" 2>/dev/null; do
				kill -0 "$apid" 2>/dev/null || break
				sleep 0.05
			done
			attached=1
		else
			kill -TERM "$apid" 2>/dev/null
			wait "$apid" 2>/dev/null || echo "window $windows: attach status $?" >>"$TMPD/rv.attach.err"
			attached=0
		fi
	done
	sleep 0.05
done
wait "$vt"
rc=$?
check "riscv64: the guest ran to its end, status 0 (got $rc)" sh -c "[ $rc = 0 ] && grep -q '^CINIT: done' '$TMPD/rv.console'"
check "riscv64: $RV_ROUNDS windows attached, each ended with status 0" \
	sh -c "[ $windows = $RV_ROUNDS ] && [ ! -s '$TMPD/rv.attach.err' ]"
for ((w = 1; w <= windows; w++)); do
	n=$(grep -c ': sys_getpriority <-' "$TMPD/rv.w$w")
	check "riscv64: window $w holds exactly the $RV_LOOPS calls made while attached ($n)" test "$n" = "$RV_LOOPS"
done
floops=$(tr -d '\r' <"$TMPD/rv.console" | sed -n 's/^CINIT-FLOOP calls=\([0-9]*\) .*/\1/p' | paste -sd' ')
check "riscv64: the guest's own tracer, after each detach, made its $RV_LOOPS calls ($floops)" \
	test "$floops" = "$(printf "$RV_LOOPS %.0s" $(seq $RV_ROUNDS) | sed 's/ $//')"
check "riscv64: nothing dropped, no warning" sh -c "grep -qE '0 dropped \(0 by the stub, 0 lost\)' '$TMPD/rv.err' && ! grep -qE 'Oops|WARNING:|ftrace failed' '$TMPD/rv.console'"
finish
