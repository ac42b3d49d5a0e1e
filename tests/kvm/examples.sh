#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The scripts in examples/ are what users copy first: each must run as it is
# and print what its comment promises. Runs those that need KVM on the lean
# kernel (a few minutes in all on this project's hosts); symbols.sh,
# boot-trace.sh, boot-diff.sh and arm64-qemu.sh run in
# tests/qemu/examples-qemu.sh.
. "$(dirname "$0")/../lib.sh"
require_file "$VMMTRACE"
require_file "$LEAN_BZIMAGE"
require_kvm
EX=$TOP/examples

# handshake.sh: no trace on stdout, the table on stderr with kvm-clock on
# from kvmclock_init, stopped at populate_rootfs.
VMMTRACE=$VMMTRACE timeout -k 5 300 "$EX/handshake.sh" "$LEAN_BZIMAGE" >"$TMPD/hs.out" 2>"$TMPD/hs.err"
rc=$?
check "handshake.sh: status 0 (got $rc), stopped at populate_rootfs" \
	eval "[ '$rc' = 0 ] && grep -q 'stopped at populate_rootfs (--stop-at)' '$TMPD/hs.err'"
check "handshake.sh: nothing on stdout (no trace, console to /dev/null)" [ ! -s "$TMPD/hs.out" ]
check "handshake.sh: the table says what was offered" \
	grep -qE "^vmmtrace: handshake: KVM features 0x[0-9a-f]+ offered \(CPUID 0x40000001 EAX, signature 'KVMKVMKVM'\)$" "$TMPD/hs.err"
check "handshake.sh: kvm-clock on, from kvmclock_init" \
	grep -qE '^  kvm-clock +yes +4b564d01 +1/1 CPUs .* kvmclock_init +pvclock area at GPA 0x' "$TMPD/hs.err"

# flight-recorder.sh: status 7, the recorder's events end in the call of
# panic from the e820 code, then the registers.
VMMTRACE=$VMMTRACE timeout -k 5 300 "$EX/flight-recorder.sh" "$LEAN_BZIMAGE" >"$TMPD/fr.out" 2>"$TMPD/fr.err"
rc=$?
check "flight-recorder.sh: status 7, no progress (got $rc)" \
	eval "[ '$rc' = 7 ] && grep -q 'made no progress for 20 s (--hang)' '$TMPD/fr.err'"
check "flight-recorder.sh: the last of its events is the call of panic, then vCPU 0's registers" eval \
	"sed -n '/^vmmtrace: flight recorder: the last/,/^vmmtrace: flight recorder: vCPU 0/p' '$TMPD/fr.err' |
	 grep -E ' <-|^vmmtrace: flight recorder: vCPU' | tail -n 2 | head -n 1 | grep -q ': panic <-e820_' &&
	 grep -qE '^RIP: ffffffff' '$TMPD/fr.err'"

# attach.sh: a window with events, all of them kmem_cache_*, a window of
# kvm:pio events, then the status and the stop.
VMMTRACE=$VMMTRACE timeout -k 5 300 "$EX/attach.sh" "$LEAN_BZIMAGE" >"$TMPD/attach.out" 2>"$TMPD/attach.err"
rc=$?
check "attach.sh: status 0 (got $rc)" [ "$rc" = 0 ]
[ "$rc" = 0 ] || sed 's/^/INFO: attach.sh stderr: /' "$TMPD/attach.err" | tail -n 5
n=$(sed -nE 's/^\.\.\. ([0-9]+) events in the window$/\1/p' "$TMPD/attach.out")
check "attach.sh: the window has events (got '${n:-none}')" eval "[ -n '$n' ] && [ '$n' -gt 0 ]"
check "attach.sh: every event shown is a kmem_cache_ function" \
	eval "! trace_funcs '$TMPD/attach.out' | grep -qv '^kmem_cache_'"
n=$(sed -nE 's/^\.\.\. ([0-9]+) port accesses in the window$/\1/p' "$TMPD/attach.out")
check "attach.sh: the kvm:pio window has port accesses (got '${n:-none}'), shown as kvm_pio" eval \
	"[ -n '$n' ] && [ '$n' -gt 0 ] &&
	 sed -n '/--event kvm:pio/,/port accesses in the window/p' '$TMPD/attach.out' | grep -q ' kvm_pio: pio_'"
check "attach.sh: the status after the window shows no client left" grep -q "^clients: 0$" "$TMPD/attach.out"
check "attach.sh: the stop was answered" grep -q "^stopping the guest" "$TMPD/attach.out"

# boot-chart.sh: the chart written where CHART says, well-formed, with the
# boot's stages and VM event ticks; the calls that took longest on stdout.
(cd "$TMPD" && CHART=$TMPD/chart.svg VMMTRACE=$VMMTRACE timeout -k 5 600 "$EX/boot-chart.sh" "$LEAN_BZIMAGE") \
	>"$TMPD/chart.out" 2>"$TMPD/chart.err"
rc=$?
check "boot-chart.sh: status 0 (got $rc), stopped at populate_rootfs" \
	eval "[ '$rc' = 0 ] && grep -q 'stopped at populate_rootfs (--stop-at)' '$TMPD/chart.err'"
check "boot-chart.sh: the chart is well-formed XML, with start_kernel, setup_arch and kernel_init, and VM event ticks" \
	eval "xmllint --noout '$TMPD/chart.svg' && grep -q 'data-stage=\"setup_arch\"' '$TMPD/chart.svg' &&
	      grep -q 'data-stage=\"kernel_init\"' '$TMPD/chart.svg' && grep -q '<rect class=\"vm\" data-kind=\"kvm:pio\"' '$TMPD/chart.svg'"
check "boot-chart.sh: the calls by total time on stdout (setup_arch among them)" \
	eval "grep -q '^### .*chart.svg: the boot chart' '$TMPD/chart.out' && grep -qE '^ +1 +[0-9.]+ +[0-9.]+  setup_arch\$' '$TMPD/chart.out'"
finish
