#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The seccomp sandbox on the QEMU host (docs/SANDBOX.md), the lean x86_64
# kernel under QEMU with its test /init:
#  - traced with a control socket, while the guest sleeps: every thread of
#    vmmtrace is in seccomp filter mode with no capability left, -v says
#    so; a control client attaches with trace.dat (the O_TMPFILE pages),
#    asks the status and detaches; the guest goes on to its reboot and
#    vmmtrace, which kills and reaps QEMU (kill and wait4 on QEMU's pid
#    only), ends with status 0;
#  - untraced too: -v says the sandbox is on, status 0;
#  - --no-sandbox leaves it unfiltered (Seccomp 0);
#  - VMMTRACE_SANDBOX_SELFTEST: "eperm" opens an existing file once the
#    filter is on, which fails while the boot goes on to status 0; "kill"
#    calls execve(), which kills vmmtrace with SIGSYS (status 159), and
#    QEMU dies with it.
# tests/kvm/sandbox.sh checks the same on the KVM host.
. "$(dirname "$0")/../lib.sh"
require_file "$VMMTRACE"
require_file "$LEAN_BZIMAGE"
require_file "$INITRAMFS"
SOCK=$TMPD/vt.sock

# vt_threads PID WANT: every thread of PID has Seccomp WANT (2: filter, 0: none).
vt_threads() {
	local t mode bad=0
	for t in /proc/"$1"/task/*; do
		mode=$(sed -nE 's/^Seccomp:[[:space:]]+//p' "$t/status")
		[ "$mode" = "$2" ] || { bad=1; echo "INFO: $t: Seccomp $mode"; }
	done
	return "$bad"
}

# running NAME WANT ARGS...: a traced boot that sleeps; its threads' seccomp state, an attach, the end.
running() {
	local name=$1 want=$2 vt vpid rc
	shift 2
	rm -f "$SOCK"
	timeout -k 5 300 "$VMMTRACE" boot "$LEAN_BZIMAGE" --host qemu --cpus 2 --initrd "$INITRAMFS" --control "$SOCK" \
		--trace __x64_sys_newuname -o "$TMPD/$name.txt" --console "$TMPD/$name.con" -v "$@" \
		--cmdline "vmmtrace.steps=sleep,uname vmmtrace.sleep_secs=6" </dev/null 2>"$TMPD/$name.err" &
	vt=$!
	if ! wait_line "$TMPD/$name.con" '^VMMTRACE-STEP sleep: n=1' 120 "$vt"; then
		fail "$name: the guest never reached its sleep ($(tail -n 1 "$TMPD/$name.err"))"; kill "$vt"; wait "$vt"; return
	fi
	vpid=$(pgrep -P "$vt" -x vmmtrace | head -n 1)
	check "$name: every thread of vmmtrace (pid $vpid, $(ls /proc/"$vpid"/task | wc -l) threads) has Seccomp $want" \
		eval "[ -n '$vpid' ] && [ \$(ls /proc/'$vpid'/task | wc -l) -ge 4 ] && vt_threads '$vpid' '$want'"
	if [ "$want" = 2 ]; then
		check "$name: no effective capability left ($(sed -nE 's/^CapEff:[[:space:]]+//p' /proc/"$vpid"/status))" \
			grep -qE '^CapEff:[[:space:]]+0000000000000000$' "/proc/$vpid/status"
		"$VMMTRACE" attach "$SOCK" --trace '__x64_sys_*' --format dat -o "$TMPD/$name.dat" --duration 0.5 \
			2>"$TMPD/$name.attach.err"
		rc=$?
		check "$name: an attach with trace.dat (O_TMPFILE pages) under the filter: status 0 (got $rc)" [ "$rc" = 0 ]
		check "$name: the trace.dat it wrote reads back (trace-cmd report)" \
			eval "trace-cmd report -i '$TMPD/$name.dat' >/dev/null 2>&1"
		"$VMMTRACE" status "$SOCK" >"$TMPD/$name.status" 2>&1
		check "$name: status answers under the filter" grep -qx 'host: qemu' "$TMPD/$name.status"
	fi
	wait "$vt"
	rc=$?
	check "$name: the guest went on to its reboot: status 0 (got $rc), QEMU ended with it" \
		eval "[ $rc = 0 ] && tr -d '\r' <'$TMPD/$name.con' | grep -q '^VMMTRACE-INIT: done passed=2 failed=0' && ! pgrep -f 'qemu-system.*$SOCK' >/dev/null"
	check "$name: the trace holds uname's calls" grep -q '__x64_sys_newuname <-do_syscall_64' "$TMPD/$name.txt"
}

running filtered 2
check "filtered: -v says the sandbox is on" \
	grep -qE '^vmmtrace: info: sandbox on: seccomp filter on every thread, [0-9]+ system calls allowed$' "$TMPD/filtered.err"
running unfiltered 0 --no-sandbox
check "unfiltered: -v says --no-sandbox turned it off" grep -qx 'vmmtrace: info: sandbox off (--no-sandbox)' "$TMPD/unfiltered.err"

timeout -k 5 120 "$VMMTRACE" boot "$LEAN_BZIMAGE" --host qemu --initrd "$INITRAMFS" --cmdline vmmtrace.steps=uname -v \
	</dev/null >"$TMPD/plain.out" 2>"$TMPD/plain.err"
rc=$?
check "untraced: status 0 (got $rc), -v says the sandbox is on" \
	eval "[ $rc = 0 ] && grep -q '^vmmtrace: info: sandbox on:' '$TMPD/plain.err'"

VMMTRACE_SANDBOX_SELFTEST=eperm timeout -k 5 120 "$VMMTRACE" boot "$LEAN_BZIMAGE" --host qemu --initrd "$INITRAMFS" \
	--cmdline vmmtrace.steps=uname --trace __x64_sys_newuname -o "$TMPD/eperm.txt" </dev/null >/dev/null 2>"$TMPD/eperm.err"
rc=$?
check "self-test eperm: the open fails with EPERM, the boot goes on: status 0 (got $rc)" \
	eval "[ $rc = 0 ] && grep -q 'sandbox self-test: open(\"/etc/passwd\") Operation not permitted' '$TMPD/eperm.err' && grep -q '__x64_sys_newuname' '$TMPD/eperm.txt'"
VMMTRACE_SANDBOX_SELFTEST=kill timeout -k 5 120 "$VMMTRACE" boot "$LEAN_BZIMAGE" --host qemu --initrd "$INITRAMFS" \
	--cmdline vmmtrace.steps=uname --trace __x64_sys_newuname -o "$TMPD/kill.raw" --control "$TMPD/kill.sock" \
	</dev/null >/dev/null 2>"$TMPD/kill.err"
rc=$?
sleep 1
check "self-test kill: execve kills vmmtrace with SIGSYS: status 159 (got $rc), and QEMU is gone with it" \
	eval "[ $rc = 159 ] && ! pgrep -f 'qemu-system.*kill.sock' >/dev/null"
finish
