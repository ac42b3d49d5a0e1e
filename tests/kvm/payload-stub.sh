#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The stub on the payload (docs/TEST-GUEST.md, "The payload"): a few hundred
# bytes of guest code, booted and traced in a fraction of a second.
# - the image: vmmtrace finds the payload's slots, all `call __fentry__`;
# - --trace f_a: exactly A events of f_a, each `<-run_calls`, none of the
#   untraced f_b, while f_leaf (called by f_b) shows `<-f_b`; the flags
#   column says 'd' for calls with interrupts off and '.' for f_irqon, the
#   one function called with them on;
# - globs and --notrace select exactly the functions they name;
# - --trace '*': every slot calls the stub and works (the payload's console
#   lines are one pr() each, and pr's events count them);
# - --stop-at f_b: stops before f_b's first instruction, after exactly A f_a.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/guest/payload/lib.sh"
payload_require

A=300 B=200 K=50
args=(--cmdline "vt.a=$A vt.b=$B vt.irqon=$K")

echo "== the image"
"$VMMTRACE" symbols "$PAYLOAD" --slots >"$TMPD/slots" 2>"$TMPD/slots.err"
for f in f_a f_b f_leaf f_irqon f_mark f_work f_nmi run_calls loop_cpu nmi_handler; do
	check "slot of $f found, holding call __fentry__" grep -qE " $f e8 .* original$" "$TMPD/slots"
done
check "ftrace_init has no slot (notrace, as in Linux)" eval "! grep -q ' ftrace_init ' '$TMPD/slots'"
check "every slot holds call __fentry__" eval "! grep -vqE ' original$' '$TMPD/slots'"

echo "== untraced boot"
payload_boot plain "${args[@]}"
payload_ended plain 0
check "plain: the payload made its calls" grep -q "^PAYLOAD round=1 f_a=$A f_b=$B f_leaf=$B f_irqon=$K\$" "$TMPD/plain.out"
check "plain: booted and ended within 10 s ($ms ms)" [ "$ms" -lt 10000 ]

echo "== --trace f_a --trace f_leaf --trace f_irqon"
payload_boot stub "${args[@]}" --trace f_a --trace f_leaf --trace f_irqon -o "$TMPD/stub.trace"
payload_ended stub 0
summary_clean stub
t="$TMPD/stub.trace"
check "stub: $A events f_a <-run_calls ($(trace_count "$t" f_a run_calls))" [ "$(trace_count "$t" f_a run_calls)" = "$A" ]
check "stub: no f_a from elsewhere" [ "$(trace_count "$t" f_a)" = "$A" ]
check "stub: $B events f_leaf <-f_b ($(trace_count "$t" f_leaf f_b))" [ "$(trace_count "$t" f_leaf f_b)" = "$B" ]
check "stub: $K events f_irqon <-run_calls ($(trace_count "$t" f_irqon run_calls))" [ "$(trace_count "$t" f_irqon run_calls)" = "$K" ]
check "stub: no event of the untraced f_b" [ "$(trace_count "$t" f_b)" = 0 ]
check "stub: every event on CPU 0" [ "$(trace_pairs "$t" | awk '$3 != 0' | wc -l)" = 0 ]
check "stub: interrupts off ('d') for f_a and f_leaf" \
	[ "$(trace_events "$t" | grep -E ' (f_a|f_leaf) <-' | grep -c '\] d\.\.\.\. ')" = $((A + B)) ]
check "stub: interrupts on ('.') for f_irqon" \
	[ "$(trace_events "$t" | grep ' f_irqon <-' | grep -c '\] \.\.\.\.\. ')" = "$K" ]
check "stub: the calls in program order (f_a, then f_leaf, then f_irqon)" \
	[ "$(trace_funcs "$t" | uniq | tr '\n' ' ')" = "f_a f_leaf f_irqon " ]
check "stub: timestamps never go back" trace_ordered "$t"
check "stub: summary counts $((A + B + K)) events in 3 slots" \
	[ "$(summary_field "$TMPD/stub.err" 1) $(summary_field "$TMPD/stub.err" 4)" = "$((A + B + K)) 3" ]
check "stub: no doorbell with the default 512K ring" [ "$(summary_field "$TMPD/stub.err" 5)" = 0 ]

echo "== globs: --trace 'f_*' --notrace f_b --notrace 'f_irq*'"
payload_boot glob "${args[@]}" --trace 'f_*' --notrace f_b --notrace 'f_irq*' -o "$TMPD/glob.trace"
payload_ended glob 0
check "glob: exactly f_a and f_leaf" \
	[ "$(trace_funcs "$TMPD/glob.trace" | sort | uniq -c | awk '{ printf "%s=%s ", $2, $1 }')" = "f_a=$A f_leaf=$B " ]

echo "== --trace '*'"
payload_boot all "${args[@]}" --trace '*' -o "$TMPD/all.trace"
payload_ended all 0
summary_clean all
t="$TMPD/all.trace"
nslots=$(grep -c ' original$' "$TMPD/slots")
check "all: every slot held ($(summary_field "$TMPD/all.err" 4) of $nslots)" [ "$(summary_field "$TMPD/all.err" 4)" = "$nslots" ]
check "all: $A f_a, $B f_b, $B f_leaf" [ "$(trace_count "$t" f_a) $(trace_count "$t" f_b) $(trace_count "$t" f_leaf)" = "$A $B $B" ]
check "all: bsp_main once, from startup_64" [ "$(trace_count "$t" bsp_main startup_64)" = 1 ]
check "all: one pr per console line ($(trace_count "$t" pr) events, $(grep -c '^PAYLOAD' "$TMPD/all.out") lines)" \
	[ "$(trace_count "$t" pr)" = "$(grep -c '^PAYLOAD' "$TMPD/all.out")" ]
check "all: the trace file holds every event counted" \
	[ "$(trace_events "$t" | wc -l)" = "$(summary_field "$TMPD/all.err" 1)" ]

echo "== --stop-at f_b"
payload_boot stopat "${args[@]}" --trace f_a --stop-at f_b -o "$TMPD/stopat.trace"
payload_ended stopat 0 stopped
check "stopat: stopped at f_b" grep -q "stopped at f_b (--stop-at) on vCPU 0" "$TMPD/stopat.err"
check "stopat: exactly the $A f_a calls before it" [ "$(trace_count "$TMPD/stopat.trace" f_a run_calls)" = "$A" ]
check "stopat: f_b never ran (no round line)" eval "! grep -q '^PAYLOAD round' '$TMPD/stopat.out'"
finish
