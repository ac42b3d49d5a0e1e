#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# NMIs inside the stub, on the payload, on 1 and 2 vCPUs. Every CPU calls
# the traced f_mark in a tight loop (vt.spin=0: most of its time inside the
# stub), and `vmmtrace nmi` is sent NMIS times. The payload's NMI handler
# counts the NMI and calls the traced f_nmi: an NMI that lands inside the
# stub, possibly between a reservation and its commit, makes a nested
# record in the same ring, the one case the stub's design allows nesting.
# - vmmtrace status: every NMI injected into every vCPU, some inside the stub;
# - the payload took each one (its own count per CPU);
# - f_nmi <-nmi_handler once per NMI, f_mark once per iteration, per CPU:
#   the nested records and the ones they interrupted all arrived;
# - nothing dropped, lost or unfinished.
# tests/e2e/trace-nmi.sh does this on a real kernel in minutes.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/guest/payload/lib.sh"
payload_require

NMIS=${NMI_COUNT:-30}

nmi_run() {
	local cpus=$1 name=nmi$1 sock="$TMPD/nmi$1.sock" c it got injected inside total_inside=0
	echo "== $cpus vCPU(s)"
	payload_start "$name" --cpus "$cpus" --cmdline "vt.cpus=$cpus vt.loop=1" \
		--trace f_mark --trace f_nmi -o "$TMPD/$name.trace" --control "$sock"
	if ! payload_wait_running "$TMPD/$name.out" "$cpus"; then
		fail "$name: the loops did not start: $(tail -n 3 "$TMPD/$name.err")"
		kill "$pid"
		payload_quit
		return
	fi
	for ((i = 0; i < NMIS; i++)); do
		"$VMMTRACE" nmi "$sock" >>"$TMPD/$name.nmi" 2>&1 || break
	done
	check "$name: $NMIS x 'vmmtrace nmi' reached every vCPU" \
		[ "$(grep -c "^NMI sent to $cpus vCPUs$" "$TMPD/$name.nmi")" = "$NMIS" ]
	"$VMMTRACE" status "$sock" >"$TMPD/$name.status"
	payload_quit
	payload_ended "$name" 0
	summary_clean "$name"
	for ((c = 0; c < cpus; c++)); do
		read -r injected inside < <(sed -nE "s/^vcpu $c: .*, ([0-9]+) NMIs injected \(([0-9]+) inside the stub\)$/\1 \2/p" \
			"$TMPD/$name.status")
		it=$(payload_value "$TMPD/$name.out" "^PAYLOAD loop: cpu=$c " iterations)
		got=$(payload_value "$TMPD/$name.out" "^PAYLOAD loop: cpu=$c " nmis)
		echo "INFO: $name: vCPU $c: $injected NMIs injected, ${inside:-?} inside the stub, $got taken"
		check "$name: vCPU $c: $NMIS NMIs injected ($injected)" [ "${injected:-}" = "$NMIS" ]
		check "$name: CPU $c: the payload took them all ($got)" [ "$got" = "$NMIS" ]
		check "$name: CPU $c: one f_nmi <-nmi_handler per NMI" [ "$(trace_count "$TMPD/$name.trace" f_nmi nmi_handler "$c")" = "$NMIS" ]
		check "$name: CPU $c: one f_mark per iteration ($it)" \
			[ -n "$it" ] && [ "$(trace_count "$TMPD/$name.trace" f_mark loop_cpu "$c")" = "$it" ]
		total_inside=$((total_inside + ${inside:-0}))
	done
	check "$name: NMIs landed inside the stub ($total_inside of $((NMIS * cpus)))" [ "$total_inside" -gt 0 ]
}

nmi_run 1
nmi_run 2
finish
