#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The hand-off around ftrace_init on the payload (TRACING.md, "Phases of a
# slot"). The payload's ftrace_init does what Linux's does: every slot must
# hold exactly `call __fentry__`, which becomes the 5-byte NOP; any other
# bytes are a mismatch (Linux's "ftrace failed to modify"). Round 1 calls
# f_a A times and f_b B times before it, round 2 A2 and B2 times after it.
# - vmmtrace puts every held slot back before ftrace_init runs (no
#   mismatch), calls the stub again over the NOPs when it returns, and the
#   summary splits the events exactly: round 1 before, round 2 after;
# - with '*' every slot goes back and returns, and the counts still hold;
# - untraced, ftrace_init sees the compiler's bytes everywhere (the
#   baseline the other cases are measured against).
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/guest/payload/lib.sh"
payload_require

A=120 B=80 A2=70 B2=30
args=(--cmdline "vt.a=$A vt.b=$B vt.ftrace=1 vt.a2=$A2 vt.b2=$B2")

# handoff_common NAME: the payload's own account of its ftrace_init; sets slots.
handoff_common() {
	local name=$1 out="$TMPD/$1.out"

	payload_ended "$name" 0
	slots=$(payload_value "$out" '^PAYLOAD ftrace_init:' slots)
	check "$name: ftrace_init found no slot in an unexpected state (mismatched=$(payload_value "$out" '^PAYLOAD ftrace_init:' mismatched))" \
		[ "$(payload_value "$out" '^PAYLOAD ftrace_init:' mismatched)" = 0 ]
	check "$name: ftrace_init turned all $slots slots into NOPs" \
		[ -n "$slots" ] && [ "$(payload_value "$out" '^PAYLOAD ftrace_init:' nopped)" = "$slots" ]
	check "$name: both rounds ran" grep -q "^PAYLOAD round=2 f_a=$A2 f_b=$B2 " "$out"
}

echo "== untraced"
payload_boot plain "${args[@]}"
handoff_common plain

echo "== --trace f_a --trace f_leaf"
payload_boot two "${args[@]}" --trace f_a --trace f_leaf -o "$TMPD/two.trace" -v
handoff_common two
summary_clean two
err="$TMPD/two.err"
check "two: vmmtrace restored both slots at ftrace_init's entry" grep -q "guest entered ftrace_init: 2 slots restored, 0 foreign" "$err"
check "two: and re-enabled both when it returned" grep -q "ftrace_init returned: 2 slots re-enabled, 0 foreign" "$err"
check "two: $((A + B)) events before ftrace_init, $((A2 + B2)) after" \
	[ "$(summary_field "$err" 2) $(summary_field "$err" 3)" = "$((A + B)) $((A2 + B2))" ]
check "two: $((A + A2)) f_a and $((B + B2)) f_leaf in the trace" \
	[ "$(trace_count "$TMPD/two.trace" f_a run_calls) $(trace_count "$TMPD/two.trace" f_leaf f_b)" = "$((A + A2)) $((B + B2))" ]
check "two: no f_b" [ "$(trace_count "$TMPD/two.trace" f_b)" = 0 ]
check "two: the summary does not say ftrace_init was left unfinished" eval "! grep -q 'did not finish ftrace_init' '$err'"
check "two: no slot in a foreign state" eval "! grep -q 'foreign state' '$err'"

echo "== --trace '*'"
payload_boot all "${args[@]}" --trace '*' -o "$TMPD/all.trace" -v
handoff_common all
summary_clean all
err="$TMPD/all.err"
check "all: every slot ($slots) restored at ftrace_init's entry" grep -q "guest entered ftrace_init: $slots slots restored, 0 foreign" "$err"
check "all: and re-enabled when it returned" grep -q "ftrace_init returned: $slots slots re-enabled, 0 foreign" "$err"
check "all: $((A + A2)) f_a, $((B + B2)) f_b, $((B + B2)) f_leaf" \
	[ "$(trace_count "$TMPD/all.trace" f_a) $(trace_count "$TMPD/all.trace" f_b) $(trace_count "$TMPD/all.trace" f_leaf)" = \
	  "$((A + A2)) $((B + B2)) $((B + B2))" ]
# ftrace_init is not traced; the pr() after it that prints its line is the
# third (start, round 1, ftrace_init): every event before that one is "before".
before=$(trace_events "$TMPD/all.trace" | awk '$(NF-1) == "pr" && ++n == 3 { print NR - 1; exit }')
check "all: the events before ftrace_init's console line are the $(summary_field "$err" 2) counted before it" \
	[ "$before" = "$(summary_field "$err" 2)" ]
check "all: the trace file holds every event counted" \
	[ "$(trace_events "$TMPD/all.trace" | wc -l)" = "$(summary_field "$err" 1)" ]
finish
