#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Exact counts in lossless mode: the test /init's syscall loop
# (docs/TEST-GUEST.md) calls getpriority exactly N times per worker, and
# nothing else in the guest calls it, so `--trace __x64_sys_getpriority`
# must hold exactly N x workers events of that function (plus the
# ftrace-handoff step's own sysloop calls) -- one lost or duplicated event
# fails the test. The guest's own counts (the syscall-loop STEP lines) are
# the reference, per worker and, since workers are pinned, per CPU.
#
# Two boots of the lean kernel: 1 vCPU (which also runs the ftrace-handoff
# step: the guest's own function tracer on a function vmmtrace does not
# hold, with no "ftrace failed to modify" in dmesg), and 2 vCPUs.
#
# Buffer size and N: the default --buffer-size (512K = 4096 records per
# vCPU), as the issue asks, and N = 40000 calls per worker, so the index of
# every ring wraps 9.8 times. A getpriority call costs ~0.5-1 ms of
# emulated guest kernel code on this project's hosts (HOST-KVM.md §1;
# measured 0.93 ms untraced on a loaded host), so the loop adds 20-40 s to a
# boot of 1-4 minutes (more when the host is loaded): the default buffer
# fits, no smaller one was needed. The consumer drains every 20 ms, faster
# than this loop fills a ring, so the doorbell path is rarely taken here
# (trace-reference.sh forces it); the ring wrap and the commit markers of
# every lap are. EXACT_LOOPS and EXACT_TIMEOUT override N and the per-boot
# timeout (default 1200 s); EXACT_BOOTS="one-cpu" or "two-cpus" runs one boot.
. "$(dirname "$0")/../lib.sh"
require_kvm
require_file "$VMMTRACE"
require_file "$LEAN_BZIMAGE"
require_file "$INITRAMFS"
loops=${EXACT_LOOPS:-40000}
timeout_s=${EXACT_TIMEOUT:-1200}
ring_records=4096		# the default --buffer-size 512K / 128-byte records
ftrace_loops=3
handoff_func=__x64_sys_getcpu	# sysloop calls it once; vmmtrace does not hold it
FUNC=__x64_sys_getpriority

summary() { trace_summary "$@"; }
events() { trace_events "$@"; }
ordered() { trace_ordered "$@"; }
count_cpu() { trace_count_cpu "$1" "$FUNC" "$2"; }

# exact_boot NAME CPUS STEPS [EXTRA_CMDLINE]
exact_boot() {
	local name=$1 cpus=$2 steps=$3 extra=${4:-} start rc secs out=$TMPD/$1
	local total workers=0 calls expect n nf w cpu pin ok_w=1 st
	start=$(date +%s)
	timeout -k 30 -s INT "$timeout_s" "$VMMTRACE" boot "$LEAN_BZIMAGE" --initrd "$INITRAMFS" \
		--cpus "$cpus" --trace "$FUNC" -o "$out.trace" --console "$out.raw" \
		--cmdline "vmmtrace.steps=$steps vmmtrace.loops=$loops vmmtrace.loop_cpus=$cpus $extra" \
		</dev/null 2>"$out.err"
	rc=$?
	secs=$(( $(date +%s) - start ))
	tr -d '\r' <"$out.raw" >"$out.console"
	echo "INFO: $name: $cpus vCPU(s), $loops calls per worker: exit status $rc after $secs s"
	grep -E '^VMMTRACE-' "$out.console" | sed 's/^/    console: /'
	grep -v 'compat assist' "$out.err" | sed 's/^/    stderr: /'

	check "$name: vmmtrace exits 0 after the guest reboots (status $rc)" [ "$rc" = 0 ]
	check "$name: /init ran every step (done ... failed=0)" \
		grep -qE '^VMMTRACE-INIT: done passed=[1-9][0-9]* failed=0$' "$out.console"
	check "$name: syscall-loop passed" grep -q "^VMMTRACE-RESULT syscall-loop PASS $cpus workers x $loops calls" "$out.console"
	if ! grep -q '^VMMTRACE-STEP syscall-loop: syscall=' "$out.console"; then
		fail "$name: the syscall loop never ran (console ends: $(tail -n1 "$out.console")): count checks skipped"
		return
	fi

	# The guest's own counts, per worker (pinned to CPU = worker).
	total=0
	while read -r st; do
		w=$(sed -nE 's/.*worker=([0-9]+) .*/\1/p' <<<"$st")
		pin=$(sed -nE 's/.* pin=([0-9-]+) .*/\1/p' <<<"$st")
		cpu=$(sed -nE 's/.* cpu=([0-9?]+) .*/\1/p' <<<"$st")
		calls=$(sed -nE 's/.* calls=([0-9]+) .*/\1/p' <<<"$st")
		[ -n "$calls" ] || { ok_w=0; continue; }
		workers=$((workers + 1))
		total=$((total + calls))
		n=$(count_cpu "$out.trace" "$pin")
		check "$name: worker $w (pinned to CPU $pin, ran on $cpu): $calls calls in the guest, $n events on CPU $pin in the trace" \
			[ "$n" = "$((calls + (pin == 0 && handoff ? ftrace_loops : 0)))" ]
		check "$name: CPU $pin's ring wrapped at least 3 times ($n events > 3 x $ring_records records)" \
			[ "$n" -gt $((3 * ring_records)) ]
	done < <(grep -E '^VMMTRACE-STEP syscall-loop: worker=' "$out.console")
	check "$name: $cpus workers reported their counts" [ "$ok_w$workers" = "1$cpus" ]
	expect=$((total + (handoff ? ftrace_loops : 0)))
	n=$(events "$out.trace" | grep -c " $FUNC <-")
	nf=$(events "$out.trace" | wc -l)
	check "$name: exactly $expect events of $FUNC ($total from the loop$( ((handoff)) && echo " + $ftrace_loops from ftrace-handoff")): got $n" \
		[ "$n" = "$expect" ]
	check "$name: the guest made at least $loops x $cpus calls (so the expectation is not vacuous)" \
		[ "$total" -ge $((loops * cpus)) ]
	check "$name: no other function in the trace ($nf lines)" [ "$nf" = "$n" ]
	check "$name: every event's parent is do_syscall_64" \
		[ "$(events "$out.trace" | grep -c " $FUNC <-do_syscall_64\$")" = "$n" ]
	check "$name: timestamps never go back" ordered "$out.trace"
	set -- $(summary "$out.err") - - - - - - - - -
	echo "INFO: $name: summary events=$1 slots=$4 doorbells=$5 dropped=$6 (stub $7, lost $8) mode=$9"
	check "$name: summary events ($1) == event lines in the file ($nf)" [ "$1" = "$nf" ]
	check "$name: summary: 1 slot held, 0 dropped, 0 lost, mode lossless" [ "$4 $6 $8 $9" = "1 0 0 lossless" ]
	check "$name: no invalid ring value or doorbell" eval "! grep -q 'rejected' '$out.err'"
	sed -nE 's/^VMMTRACE-STEP syscall-loop: worker=([0-9]+) .* calls=([0-9]+) ns=([0-9]+) .*/\1 \2 \3/p' "$out.console" |
		while read -r w calls ns; do
			echo "INFO: $name: worker $w: $((ns / (calls ? calls : 1))) ns per traced getpriority call in the guest"
		done
	echo "INFO: $name: $secs s"
}

# EXACT_BOOTS: which boots to run (default both).
boots=${EXACT_BOOTS:-one-cpu two-cpus}

# Boot 1: one vCPU, plus the hand-over to the guest's own ftrace.
if [[ " $boots " == *" one-cpu "* ]]; then
	handoff=1
	exact_boot one-cpu 1 syscall-loop,ftrace-handoff \
		"vmmtrace.ftrace_func=$handoff_func vmmtrace.ftrace_loops=$ftrace_loops"
	out=$TMPD/one-cpu.console
	check "ftrace-handoff: the guest's function tracer works on $handoff_func after vmmtrace's hand-over" \
		grep -qE "^VMMTRACE-RESULT ftrace-handoff PASS" "$out"
	check "ftrace-handoff: the guest traced $handoff_func itself" \
		grep -qE "^VMMTRACE-STEP ftrace-handoff: func=$handoff_func .*events=[1-9][0-9]* .*first_func=$handoff_func " "$out"
	check "ftrace-handoff: dmesg has no 'ftrace failed to modify' and no WARNING" \
		grep -qE '^VMMTRACE-STEP ftrace-handoff: .*ftrace_failed=0 warnings=0 flags=[^ ]+$' "$out"
	check "no 'ftrace failed to modify' on the console either" eval "! grep -q 'ftrace failed to modify' '$out'"
	check "no WARNING on the console" eval "! grep -q 'WARNING' '$out'"
fi

# Boot 2: two vCPUs, a pinned worker on each.
if [[ " $boots " == *" two-cpus "* ]]; then
	handoff=0
	exact_boot two-cpus 2 cpus,syscall-loop vmmtrace.expect_cpus=2
fi
finish
