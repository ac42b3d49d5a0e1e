#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The VM core knows the tracer only through the hooks the tracer registers
# (vmm/kvm/vm.h, struct vm_hooks): a boot without tracing must pay nothing for
# it. Checked through the liburcu reader registrations that `-v` counts at
# the end: none for a plain boot (stopped with SIGINT once the kernel
# printed), some (the vCPU, the consumer) once the tracer is there.
. "$(dirname "$0")/../lib.sh"
require_file "$VMMTRACE"
require_file "$LEAN_BZIMAGE"
require_kvm

# registrations FILE: the count -v printed, or "none".
registrations() {
	sed -nE 's/^vmmtrace: info: liburcu reader registrations: ([0-9]+)$/\1/p' "$1" | tail -n 1 | grep . || echo none
}

"$VMMTRACE" boot "$LEAN_BZIMAGE" -v --cmdline "earlyprintk=serial,ttyS0,115200" \
	</dev/null >"$TMPD/plain.out" 2>"$TMPD/plain.err" &
pid=$!
if wait_line "$TMPD/plain.out" "Linux version" 60 "$pid"; then
	kill -INT "$pid"
fi
timeout 30 tail --pid="$pid" -f /dev/null
wait "$pid"
rc=$?
check "plain boot: stopped by SIGINT (status 130, got $rc)" [ "$rc" = 130 ]
n=$(registrations "$TMPD/plain.err")
check "plain boot: no liburcu reader registered (got $n)" [ "$n" = 0 ]

timeout -k 5 120 "$VMMTRACE" boot "$LEAN_BZIMAGE" -v --trace start_kernel --stop-at setup_arch \
	</dev/null >"$TMPD/traced.out" 2>"$TMPD/traced.err"
rc=$?
check "traced boot: --stop-at ends it with status 0 (got $rc)" [ "$rc" = 0 ]
n=$(registrations "$TMPD/traced.err")
# The main thread, the vCPU's and the consumer's: at least the vCPU and the consumer.
check "traced boot: the tracer registered its readers (got $n)" eval "[ '$n' != none ] && [ '$n' -ge 2 ]"
check "traced boot: the breakpoint reached the tracer through the debug-exit hook" \
	grep -q "stopped at setup_arch (--stop-at) on vCPU 0" "$TMPD/traced.err"
# Stopped long before ftrace_init: its one event counts as before it.
check "traced boot: the summary counts start_kernel before ftrace_init" \
	grep -q "trace: 1 events (1 before ftrace_init, 0 after)" "$TMPD/traced.err"
finish
