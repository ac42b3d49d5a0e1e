#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The seccomp sandbox of `vmmtrace boot` (docs/SANDBOX.md), on the payload:
# - while the guest runs, every thread of vmmtrace is in seccomp filter
#   mode (/proc/PID/task/*/status: Seccomp 2, one filter) with no
#   capability left, and -v says so; a control client still attaches with
#   trace.dat (the O_TMPFILE pages), asks the status and detaches;
# - --no-sandbox leaves it unfiltered (Seccomp 0);
# - the hidden self-test hook VMMTRACE_SANDBOX_SELFTEST: "eperm" opens an
#   existing file once the filter is on, which fails with EPERM while the
#   boot goes on to status 0; "kill" calls execve(), which kills vmmtrace
#   with SIGSYS (status 159).
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/guest/payload/lib.sh"
payload_require

# status_field PID FIELD: the value of FIELD in /proc/PID/status.
status_field() { sed -nE "s/^$2:[[:space:]]+//p" "/proc/$1/status" 2>/dev/null; }

# vmm_pid: the vmmtrace under payload_start's timeout.
vmm_pid() { pgrep -P "$pid" -x vmmtrace | head -n 1; }

# A sanitizer build runs without the filter (LeakSanitizer needs ptrace at exit).
payload_boot probe -v
# That is a documented behaviour, checked here; the filter itself is
# checked by the kvm tier's run of this test on the normal build.
if grep -q 'sandbox off: an AddressSanitizer build' "$TMPD/probe.err"; then
	check "AddressSanitizer build: it ran, and -v says the sandbox is off" [ "$rc" = 0 ]
	finish
fi
check "probe: -v says the sandbox is on and how many calls it allows" \
	grep -qE '^vmmtrace: info: sandbox on: seccomp filter on every thread, [0-9]+ system calls allowed$' "$TMPD/probe.err"
payload_ended probe 0

# on|off NAME ARGS...: a running payload's seccomp state, then a clean quit.
running() {
	local want=$1 name=$2 vpid t mode nf bad=0
	shift 2
	sock="$TMPD/$name.sock"
	payload_start "$name" --cmdline "vt.cpus=1 vt.loop=1 vt.spin=40" --trace f_mark \
		-o "$TMPD/$name.raw" --control "$sock" -v "$@"
	if ! payload_wait_running "$TMPD/$name.out" 1; then
		fail "$name: the payload's loop never ran"; payload_quit; return
	fi
	vpid=$(vmm_pid)
	for t in /proc/"$vpid"/task/*; do
		mode=$(sed -nE 's/^Seccomp:[[:space:]]+//p' "$t/status")
		nf=$(sed -nE 's/^Seccomp_filters:[[:space:]]+//p' "$t/status")
		if [ "$want" = on ]; then
			[ "$mode" = 2 ] && [ "$nf" -ge 1 ] || { bad=1; echo "INFO: $t: Seccomp $mode, filters $nf"; }
		else
			[ "$mode" = 0 ] || { bad=1; echo "INFO: $t: Seccomp $mode"; }
		fi
	done
	check "$name: every thread of vmmtrace (pid $vpid, $(ls /proc/"$vpid"/task | wc -l) threads) has Seccomp $([ "$want" = on ] && echo 2 || echo 0)" [ "$bad" = 0 ]
	if [ "$want" = on ]; then
		check "$name: no effective capability left (CapEff $(status_field "$vpid" CapEff))" \
			[ "$(status_field "$vpid" CapEff)" = 0000000000000000 ]
		"$VMMTRACE" attach "$sock" --trace f_work --format dat -o "$TMPD/$name.dat" --duration 0.3 \
			2>"$TMPD/$name.attach.err"
		check "$name: a trace.dat window under the filter ends with status 0 (got $?)" [ $? = 0 ]
		check "$name: ... and holds f_work events" grep -q f_work "$TMPD/$name.dat"
		"$VMMTRACE" status "$sock" >"$TMPD/$name.status" 2>&1
		check "$name: vmmtrace status under the filter ends with status 0 (got $?)" [ $? = 0 ]
	fi
	payload_quit
	payload_ended "$name" 0 stopped
}
running on sandboxed
running off unsandboxed --no-sandbox
check "unsandboxed: -v says --no-sandbox turned it off" \
	grep -q '^vmmtrace: info: sandbox off (--no-sandbox)$' "$TMPD/unsandboxed.err"

VMMTRACE_SANDBOX_SELFTEST=eperm payload_boot eperm -v
check "eperm: the forbidden open failed with EPERM" \
	grep -q 'sandbox self-test: open("/etc/passwd") Operation not permitted' "$TMPD/eperm.err"
payload_ended eperm 0

VMMTRACE_SANDBOX_SELFTEST=kill payload_boot kill -v --trace f_mark -o "$TMPD/kill.raw"
check "kill: execve() under the filter killed vmmtrace with SIGSYS (status 159, got $rc)" [ "$rc" = 159 ]
check "kill: the sandbox was on before" grep -q 'sandbox on:' "$TMPD/kill.err"
finish
