#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The Perfetto writer's file read by a protobuf implementation that is not
# ours: protoc --decode_raw must parse it and show the packet structure
# vmmtrace writes (docs/FORMATS.md, "Perfetto"): one top-level field 1 per
# TracePacket, the guest's track and one track per vCPU, then one
# TrackEvent packet per event with non-decreasing timestamps.
. "$(dirname "$0")/../lib.sh"
if ! command -v protoc >/dev/null 2>&1; then
	echo "##################################################################"
	echo "SKIP: $(basename "$0"): protoc is absent (apt-get install protobuf-compiler); NOT RUN"
	echo "##################################################################"
	exit 77
fi
writer=$TOP/build/tests/unit/test-trace-perfetto
[ -x "$writer" ] || { fail "$writer missing (run make)"; finish; }
ncpus=4 nevents=1000
trace=$TMPD/trace.pftrace raw=$TMPD/raw.txt

check "the writer writes $nevents events on $ncpus vCPUs" "$writer" --write "$trace" "$ncpus" "$nevents"
check "protoc --decode_raw parses the file" bash -c 'protoc --decode_raw <"$1" >"$2" 2>"$2.err"' - "$trace" "$raw"
# count REGEX: lines of the decoded text matching REGEX (indentation is depth).
count() { grep -cE "$1" "$raw"; }
packets=$((1 + ncpus + nevents))
check "top level: field 1 repeated, $packets packets (got $(count '^1 \{$'))" test "$(count '^1 \{$')" = "$packets"
check "top level: nothing but field 1" test "$(grep -cvE '^(1 \{|\}|  .*)$' "$raw")" = 0
check "$((1 + ncpus)) track descriptors (field 60)" test "$(count '^  60 \{$')" = $((1 + ncpus))
check "$nevents track events (field 11)" test "$(count '^  11 \{$')" = "$nevents"
check "$nevents timestamps (field 8)" test "$(count '^  8: [0-9]+$')" = "$nevents"
check "timestamps never go back" awk '/^  8: / { if ($2 + 0 < last) bad = 1; last = $2 + 0 } END { exit bad }' "$raw"
check "every packet is on sequence 1 (field 10)" test "$(count '^  10: 1$')" = "$packets"
check "track \"guest kernel\"" test "$(count '^    2: "guest kernel"$')" = 1
for ((c = 0; c < ncpus; c++)); do
	check "track \"vCPU $c\"" test "$(count "^    2: \"vCPU $c\"\$")" = 1
done
# The first packet alone: it clears the incremental state (sequence_flags 1)
# and interns the categories and annotation names the events use.
awk 'NR > 1 && /^1 \{$/ { exit } { print }' "$raw" >"$TMPD/first.txt"
check "first packet: sequence_flags = SEQ_INCREMENTAL_STATE_CLEARED" grep -qx '  13: 1' "$TMPD/first.txt"
check "first packet: interns \"parent\" and \"irqs_off\"" \
	bash -c 'grep -q "\"parent\"" "$1" && grep -q "\"irqs_off\"" "$1"' - "$TMPD/first.txt"
check "event packets: type TYPE_INSTANT (3)" test "$(count '^    9: 3$')" = "$nevents"

# protoc is a real check: a file cut inside a packet is refused.
head -c -3 "$trace" >"$TMPD/cut.pftrace"
check "protoc refuses the file cut short by 3 bytes" bash -c '! protoc --decode_raw <"$1" >/dev/null 2>&1' - "$TMPD/cut.pftrace"
finish
