#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A clean stop ends the trace without losing a record. With '*' traced, a
# booting vCPU spends about two thirds of its time inside the stub; a stop
# that caught it there would leave its record reserved but never committed
# ("unfinished", counted as lost in the summary). SIGINT, SIGTERM and
# `vmmtrace stop` must first let such a vCPU finish its record: the summary
# counts nothing dropped or unfinished, and the trace file holds exactly the
# events the summary counts. Each case stops the lean kernel just after its
# first console line, with --trace '*' on 2 vCPUs. About half the stops
# catch a vCPU inside the stub (vmmtrace -v says so), a few of those between
# its reservation and its commit, where the record would be lost; eight
# cases make at least one stop inside the stub all but certain, and the
# test checks that one did.
. "$(dirname "$0")/../lib.sh"
require_file "$VMMTRACE"
require_file "$LEAN_BZIMAGE"
require_kvm

# stop_case NAME HOW STATUS: HOW is INT, TERM or ctl (vmmtrace stop).
seq=0 in_stub=0
stop_case() {
	local name=$1 how=$2 want=$3 pid rc n ctl=()
	seq=$((seq + 1))
	[ "$how" = ctl ] && ctl=(--control "$TMPD/$name.sock")
	timeout -k 10 300 "$VMMTRACE" boot -v "$LEAN_BZIMAGE" --cpus 2 --trace '*' -o "$TMPD/$name.trace" "${ctl[@]}" \
		--cmdline "earlyprintk=serial,ttyS0,115200" </dev/null >"$TMPD/$name.out" 2>"$TMPD/$name.err" &
	pid=$!
	if ! wait_line "$TMPD/$name.out" 'Linux version' 120 "$pid"; then
		fail "$name: no console line within 120 s: $(tail -n 2 "$TMPD/$name.err")"
		kill -KILL "$pid" 2>/dev/null; wait "$pid"
		return
	fi
	sleep "0.$((seq % 10))"
	case $how in
	ctl) check "$name: 'vmmtrace stop' is accepted" sh -c "'$VMMTRACE' stop '$TMPD/$name.sock' >/dev/null" ;;
	*) kill "-$how" "$pid" ;;
	esac
	wait "$pid"
	rc=$?
	set -- $(trace_summary "$TMPD/$name.err") - - - - - - - - -
	n=$(trace_events "$TMPD/$name.trace" 2>/dev/null | wc -l)
	echo "INFO: $name: status $rc; summary events=$1 dropped=$6 (stub $7, lost $8); $n events in the file"
	check "$name: exit status $want (got $rc)" [ "$rc" = "$want" ]
	check "$name: the boot was traced (>= 1000 events: $1)" [ "$1" != - ] && [ "$1" -ge 1000 ]
	check "$name: nothing dropped or lost ($6)" [ "$6" = 0 ]
	check "$name: no record left unfinished" eval "! grep -q unfinished '$TMPD/$name.err'"
	check "$name: the trace file holds every event counted ($n == $1)" [ "$n" = "$1" ]
	check "$name: no warning on stderr" eval "! grep -q 'stayed inside the stub' '$TMPD/$name.err'"
	grep -q "stop: a vCPU was inside the stub" "$TMPD/$name.err" && in_stub=$((in_stub + 1))
}

for round in 1 2 3; do
	stop_case "sigint-$round" INT 130
	stop_case "stop-$round" ctl 0
	[ "$round" = 3 ] || stop_case "sigterm-$round" TERM 143
done
check "stops caught a vCPU inside the stub and let it finish ($in_stub of $seq)" [ "$in_stub" -ge 1 ]
finish
