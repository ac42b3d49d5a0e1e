#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The rings and the doorbell on the payload, with the smallest ring
# (--buffer-size 4K: 64 records) and N calls of f_a, enough to wrap it
# dozens of times. The consumer thread would otherwise race the guest (it
# drains ever more often while the rings fill, and on this emulating host
# it wins), so VMMTRACE_DRAIN=doorbell leaves the rings to the doorbells
# and the final drain: every full ring rings, and the counts are exact.
# - lossless: exactly N events, nothing dropped, and a doorbell at every
#   wrap: floor((N - 1) / 64) — also on 2 vCPUs, one ring each, where the
#   loop's f_mark events match each CPU's iteration count and the
#   doorbells are each CPU's wraps;
# - overwrite: the stub never exits; the host reads only the last ring's
#   worth and counts what it lost, exactly: 64 events, N - 64 lost;
# - exit: a VM exit for every event but the first, exactly N events.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/guest/payload/lib.sh"
payload_require

N=${RING_CALLS:-4000}
RECS=64
export VMMTRACE_DRAIN=doorbell
small=(--trace f_a --buffer-size 4K --cmdline "vt.a=$N vt.b=10")

# ring_case MODE: boots with the small ring in MODE; sets e (events), d (dropped), db (doorbells).
ring_case() {
	payload_boot "$1" "${small[@]}" --mode "$1" -o "$TMPD/$1.trace"
	payload_ended "$1" 0
	e=$(summary_field "$TMPD/$1.err" 1) d=$(summary_field "$TMPD/$1.err" 6)
	db=$(summary_field "$TMPD/$1.err" 5)
	echo "INFO: $1: $e events, $d dropped, $db doorbells"
	check "$1: summary says mode $1" [ "$(summary_field "$TMPD/$1.err" 9)" = "$1" ]
	check "$1: the trace file holds every event counted" [ "$(trace_events "$TMPD/$1.trace" | wc -l)" = "$e" ]
	check "$1: only f_a <-run_calls" [ "$(trace_count "$TMPD/$1.trace" f_a run_calls)" = "$e" ]
	check "$1: the payload made $N calls" grep -q "^PAYLOAD round=1 f_a=$N " "$TMPD/$1.out"
}

echo "== lossless, 4K ring, $N calls"
ring_case lossless
summary_clean lossless
check "lossless: exactly $N events ($e)" [ "$e" = "$N" ]
check "lossless: a doorbell at each wrap of the full ring: $(((N - 1) / RECS)) (got $db)" [ "$db" = $(((N - 1) / RECS)) ]
check "lossless: timestamps never go back" trace_ordered "$TMPD/lossless.trace"

echo "== overwrite, 4K ring, $N calls"
ring_case overwrite
check "overwrite: the host read the last ring's worth: $RECS events (got $e)" [ "$e" = "$RECS" ]
check "overwrite: and lost the rest, exactly: $((N - RECS)) (got $d)" [ "$d" = $((N - RECS)) ]
check "overwrite: events + dropped = $N ($e + $d)" [ $((e + d)) = "$N" ]
check "overwrite: all of it lost by the host, none by the stub" \
	[ "$(summary_field "$TMPD/overwrite.err" 8)" = "$d" ] && [ "$(summary_field "$TMPD/overwrite.err" 7)" = 0 ]
check "overwrite: no doorbell" [ "$db" = 0 ]
check "overwrite: timestamps never go back" trace_ordered "$TMPD/overwrite.trace"

echo "== exit, 4K ring, $N calls"
ring_case exit
summary_clean exit
check "exit: exactly $N events ($e)" [ "$e" = "$N" ]
check "exit: a doorbell for every event but the first: $((N - 1)) (got $db)" [ "$db" = $((N - 1)) ]

echo "== lossless, 4K rings, 2 vCPUs looping"
payload_start smp --cpus 2 --cmdline "vt.cpus=2 vt.loop=1" --trace f_mark --buffer-size 4K -o "$TMPD/smp.trace"
payload_wait_running "$TMPD/smp.out" 2 || fail "smp: the loops did not start: $(tail -n 3 "$TMPD/smp.err")"
sleep 1
payload_quit
payload_ended smp 0
summary_clean smp
wraps=0
for c in 0 1; do
	it=$(payload_value "$TMPD/smp.out" "^PAYLOAD loop: cpu=$c " iterations)
	n=$(trace_count "$TMPD/smp.trace" f_mark loop_cpu "$c")
	check "smp: CPU $c: one f_mark event per iteration ($n events, $it iterations)" [ -n "$it" ] && [ "$n" = "$it" ]
	check "smp: CPU $c: its ring wrapped ($n > $RECS)" [ "$n" -gt "$RECS" ]
	[ "${n:-0}" -gt 0 ] && wraps=$((wraps + (n - 1) / RECS))
done
check "smp: a doorbell at each wrap of each CPU's ring: $wraps (got $(summary_field "$TMPD/smp.err" 5))" \
	[ "$(summary_field "$TMPD/smp.err" 5)" = "$wraps" ]
finish
