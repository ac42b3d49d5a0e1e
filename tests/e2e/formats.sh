#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Trace formats on a real boot of the lean kernel (docs/FORMATS.md):
# - one run recorded raw; `vmmtrace report` turns it into text, trace.dat
#   and Perfetto: trace-cmd report prints exactly the text's events (CPU,
#   irqs-off, µs timestamp, function, parent, order), protoc parses the
#   Perfetto file with one track event per traced call, and --stat splits
#   the events around ftrace_init exactly as the boot summary did;
# - -o x.dat from boot itself opens in trace-cmd report with every event;
# - kill -9 in the middle of a '*' boot: report reads the file up to its last
#   complete chunk, says the recording did not end cleanly, and every event
#   it prints is whole; a flipped byte inside an event chunk is reported
#   with its offset while the chunks around it still read.
. "$(dirname "$0")/../lib.sh"
require_file "$VMMTRACE"
require_file "$LEAN_BZIMAGE"
require_kvm
for tool in trace-cmd protoc; do
	command -v "$tool" >/dev/null || { fail "$tool is missing (scripts/prepare-tests.sh installs it)"; finish; }
done

# report_lines FILE: trace-cmd report's events as "cpu flag µs func parent".
report_lines() {
	trace-cmd report -l -O parent=1 -i "$1" 2>/dev/null |
		sed -nE 's/^ *[^ ]+-[0-9]+ +([0-9]+)([d.])[^ ]* +([0-9]+\.[0-9]{6}): function: +([^ ]+) <-- ([^ ]+)$/\1 \2 \3 \4 \5/p'
}
# text_lines FILE: the text writer's events in the same shape.
text_lines() {
	grep -v '^#' "$1" | sed -nE 's/^ *[^ ]+-[0-9]+ +\[0*([0-9]+)\] ([dDb.])[^ ]* +([0-9]+\.[0-9]{6}): ([^ ]+) <-([^ ]+)$/\1 \2 \3 \4 \5/p' |
		sed -E 's/^([0-9]+) D /\1 d /; s/^([0-9]+) b /\1 . /'
}

echo "== one raw recording, every format from it"
timeout -k 5 300 "$VMMTRACE" boot "$LEAN_BZIMAGE" --trace start_kernel --trace '*_init' \
	--stop-at rest_init -o "$TMPD/boot.raw" --console /dev/null 2>"$TMPD/boot.err"
rc=$?
check "boot: status 0 (got $rc)" [ "$rc" = 0 ]
read -r n early after _ < <(trace_summary "$TMPD/boot.err")
check "boot: a summary with events (${n:-none})" eval "[ -n '$n' ] && [ '$n' -gt 100 ]"
"$VMMTRACE" report "$TMPD/boot.raw" >"$TMPD/boot.txt" 2>"$TMPD/report.err"
check "report: text, status 0, nothing on stderr" eval "[ $? = 0 ] && [ ! -s '$TMPD/report.err' ]"
text_lines "$TMPD/boot.txt" >"$TMPD/text.lines"
check "report: the text has every event of the summary ($(wc -l <"$TMPD/text.lines") of $n)" \
	[ "$(wc -l <"$TMPD/text.lines")" = "$n" ]
"$VMMTRACE" report "$TMPD/boot.raw" --format dat -o "$TMPD/boot.dat"
check "report --format dat: status 0" [ $? = 0 ]
report_lines "$TMPD/boot.dat" >"$TMPD/dat.lines"
check "trace-cmd report: the same events as the text, in the same order, to the µs" \
	cmp -s "$TMPD/text.lines" "$TMPD/dat.lines"
"$VMMTRACE" report "$TMPD/boot.raw" --format perfetto -o "$TMPD/boot.perfetto"
check "report --format perfetto: status 0" [ $? = 0 ]
protoc --decode_raw <"$TMPD/boot.perfetto" >"$TMPD/perfetto.decoded" 2>"$TMPD/protoc.err"
check "protoc --decode_raw parses the Perfetto trace" [ $? = 0 ]
# A track event is TracePacket field 11; one per traced call, plus none else.
events=$(grep -c '^  11 {' "$TMPD/perfetto.decoded")
check "Perfetto: one track event per traced call ($events of $n)" [ "$events" = "$n" ]
"$VMMTRACE" report "$TMPD/boot.raw" --stat >"$TMPD/stat.out"
check "report --stat: $early before ftrace_init, as the summary says" \
	grep -qE "^ *$early  before ftrace_init$" "$TMPD/stat.out"
check "report --stat: $after after it" grep -qE "^ *$after  after$" "$TMPD/stat.out"

echo "== -o x.dat straight from boot"
timeout -k 5 300 "$VMMTRACE" boot "$LEAN_BZIMAGE" --trace start_kernel --trace 'setup_*' \
	--stop-at trap_init -o "$TMPD/direct.dat" --console /dev/null 2>"$TMPD/direct.err"
check "boot -o direct.dat: status 0" [ $? = 0 ]
read -r n2 _ < <(trace_summary "$TMPD/direct.err")
check "trace-cmd report reads it: all $n2 events" [ "$(report_lines "$TMPD/direct.dat" | wc -l)" = "$n2" ]

echo "== kill -9 while recording"
"$VMMTRACE" boot "$LEAN_BZIMAGE" --trace '*' -o "$TMPD/kill.raw" --console /dev/null \
	</dev/null 2>"$TMPD/kill.err" &
pid=$!
# Past the header and symbols (~200 KB for this kernel), several rounds of events.
for ((i = 0; i < 240; i++)); do
	[ "$(stat -c %s "$TMPD/kill.raw" 2>/dev/null || echo 0)" -gt 2000000 ] && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.5
done
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
size=$(stat -c %s "$TMPD/kill.raw")
check "killed while recording ($size bytes written)" [ "$size" -gt 2000000 ]
"$VMMTRACE" report "$TMPD/kill.raw" >"$TMPD/kill.txt" 2>"$TMPD/kill-report.err"
rc=$?
sed 's/^/INFO: /' "$TMPD/kill-report.err"
check "report of the killed recording: status 0 (got $rc)" [ "$rc" = 0 ]
check "report says the recording did not end cleanly" grep -q "did not end cleanly" "$TMPD/kill-report.err"
got=$(text_lines "$TMPD/kill.txt" | wc -l)
said=$(sed -nE 's/.* ([0-9]+) events in [0-9]+ complete chunks read.*/\1/p' "$TMPD/kill-report.err")
check "every event of the complete chunks is there ($got printed, ${said:-?} said)" \
	eval "[ '$got' -gt 10000 ] && [ '$got' = '${said:-x}' ]"
check "every printed event line is whole" [ "$(grep -vc '^#' "$TMPD/kill.txt")" = "$got" ]
# Flip one byte in the middle of the file, inside some event chunk.
cp "$TMPD/kill.raw" "$TMPD/flip.raw"
off=$((size / 2))
printf '\xff' | dd of="$TMPD/flip.raw" bs=1 seek="$off" conv=notrunc status=none
cmp -s "$TMPD/kill.raw" "$TMPD/flip.raw" && printf '\x00' | dd of="$TMPD/flip.raw" bs=1 seek="$off" conv=notrunc status=none
"$VMMTRACE" report "$TMPD/flip.raw" >"$TMPD/flip.txt" 2>"$TMPD/flip.err"
rc=$?
sed 's/^/INFO: /' "$TMPD/flip.err"
check "report of a flipped byte: status 0 (got $rc)" [ "$rc" = 0 ]
check "the damaged chunk is named with its offset" grep -qE "damaged|corrupt" "$TMPD/flip.err"
gotf=$(text_lines "$TMPD/flip.txt" | wc -l)
check "the chunks around it still read ($gotf of $got events)" eval "[ '$gotf' -lt '$got' ] && [ '$gotf' -gt $((got / 2)) ]"
finish
