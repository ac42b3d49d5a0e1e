#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A clean stop of the payload while calls are in flight, on 1 and 2 vCPUs:
# `vmmtrace stop`, SIGINT and SIGTERM while every CPU loops over f_mark and
# f_work, both traced: on 1 vCPU in a tight loop (~95% of its time inside
# the stub), on 2 with a short spin between iterations (vt.spin=20, ~70%:
# the stop's quiesce needs both outside the stub at once).
# The stop pauses every vCPU and lets one caught inside the stub finish its
# record first (TRACING.md), so:
# - the exit status says what stopped the guest (0, 130, 143);
# - nothing is dropped, lost or left unfinished, and the trace file holds
#   every event the summary counts;
# - on every CPU f_mark and f_work alternate to the very last event (a
#   record missing anywhere, the last included, would break it);
# - at least one of the stops caught a vCPU inside the stub (-v says so),
#   so the finish-the-record path really ran.
# The stub-map and the hand-off are the boot's; this is the end of a trace
# that stop-clean.sh checks on a real kernel in minutes, here in seconds.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/guest/payload/lib.sh"
payload_require

in_stub=0 stops=0

# alternates FILE CPU: f_mark and f_work alternate on CPU from first to last event.
alternates() {
	trace_pairs "$1" | awk -v c="$2" '$3 == c { if ($1 == last) bad++; last = $1; n++ } END { exit bad || n < 2 }'
}

stop_case() {
	local cpus=$1 how=$2 want=$3 name="stop-$2-$1" spin=$(($1 > 1 ? 20 : 0)) e n c
	stops=$((stops + 1))
	payload_start "$name" -v --cpus "$cpus" --cmdline "vt.cpus=$cpus vt.loop=1 vt.spin=$spin" \
		--trace f_mark --trace f_work -o "$TMPD/$name.trace" --control "$TMPD/$name.sock"
	if ! payload_wait_running "$TMPD/$name.out" "$cpus"; then
		fail "$name: the loops did not start: $(tail -n 3 "$TMPD/$name.err")"
		kill "$pid"
		payload_quit
		return
	fi
	sleep "0.$((stops % 4 + 1))"
	case $how in
	ctl) check "$name: 'vmmtrace stop' accepted" sh -c "'$VMMTRACE' stop '$TMPD/$name.sock' >/dev/null" ;;
	*) kill "-$how" "$pid" ;;
	esac
	wait "$pid"
	rc=$?
	exec 3>&-
	payload_ended "$name" "$want" stopped
	summary_clean "$name"
	e=$(summary_field "$TMPD/$name.err" 1)
	n=$(trace_events "$TMPD/$name.trace" | wc -l)
	check "$name: the trace file holds every event counted ($n == $e)" [ "$n" = "$e" ]
	for ((c = 0; c < cpus; c++)); do
		check "$name: CPU $c: f_mark and f_work alternate to the last event" alternates "$TMPD/$name.trace" "$c"
	done
	if grep -q "stop: a vCPU was inside the stub" "$TMPD/$name.err"; then
		in_stub=$((in_stub + 1))
	fi
}

for cpus in 1 2; do
	echo "== $cpus vCPU(s)"
	stop_case "$cpus" ctl 0
	stop_case "$cpus" INT 130
	stop_case "$cpus" TERM 143
done
echo "INFO: $in_stub of $stops stops caught a vCPU inside the stub"
check "stops caught a vCPU inside the stub and let it finish ($in_stub of $stops)" [ "$in_stub" -ge 1 ]
finish
