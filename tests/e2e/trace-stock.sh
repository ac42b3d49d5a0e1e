#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Tracing every function of Debian's stock kernel (1 vCPU, 1 GiB, the test
# initramfs) from the first call of start_kernel to rest_init, in one boot
# (boot-stock.sh traces four chosen functions across the hand-over):
# --trace '*' completes with hundreds of thousands of events, none dropped,
# and the summary's event count equals the lines written. It is recorded raw
# (-o all.raw), and `vmmtrace report` turns that one recording into the text
# these checks read and into a trace.dat, whose every event Debian's
# `trace-cmd report` must print exactly as the text does (CPU, irqs-off, µs
# timestamp, function, parent, order).
# Guest kernel code is emulated on this project's hosts: the boot to
# rest_init takes 4-14 minutes, depending on the host's load; a hang is cut
# off after STOCK_TRACE_ALL_TIMEOUT (default 1500) seconds.
. "$(dirname "$0")/../lib.sh"
require_kvm
require_file "$VMMTRACE"
require_file "$STOCK_BZIMAGE"
require_file "$INITRAMFS"
all_timeout_s=${STOCK_TRACE_ALL_TIMEOUT:-1500}

# run_boot NAME TIMEOUT ARGS...: boots the stock kernel, trace to $TMPD/NAME.trace,
# console to $TMPD/NAME.console, stderr to $TMPD/NAME.err; sets rc and secs.
run_boot() {
	local name=$1 limit=$2 start
	shift 2
	start=$(date +%s)
	timeout -k 30 -s INT "$limit" "$VMMTRACE" boot "$STOCK_BZIMAGE" --initrd "$INITRAMFS" \
		--cpus 1 --mem 1G --stop-at rest_init --console "$TMPD/$name.console" \
		-o "$TMPD/$name.${ext:-trace}" "$@" </dev/null 2>"$TMPD/$name.err"
	rc=$?
	secs=$(( $(date +%s) - start ))
	echo "INFO: $name: exit status $rc after $secs s"
	grep -v 'compat assist' "$TMPD/$name.err" | sed 's/^/    stderr: /'
}

summary() { trace_summary "$@"; }
events() { trace_events "$@"; }
funcs() { trace_funcs "$@"; }
ordered() { trace_ordered "$@"; }

# ---- every traceable function ----
ext=raw run_boot all "$all_timeout_s" --trace '*'
all_s=$secs
"$VMMTRACE" report "$TMPD/all.raw" >"$TMPD/all.trace" 2>"$TMPD/all.report.err"
check "vmmtrace report turns the raw recording into text (status $?, nothing on stderr)" \
	[ ! -s "$TMPD/all.report.err" ]
check "all functions: vmmtrace stops at rest_init with status 0 (status $rc)" [ "$rc" = 0 ]
check "... because of --stop-at rest_init" grep -q 'stopped at rest_init (--stop-at)' "$TMPD/all.err"
# One pass over the (1.8 million line) trace; the checks read the results.
funcs "$TMPD/all.trace" >"$TMPD/all.funcs"
nlines=$(events "$TMPD/all.trace" | wc -l)
set -- $(summary "$TMPD/all.err") - - - - - - - - -
echo "INFO: '*' to rest_init: $nlines event lines; summary events=$1 before=$2 after=$3 slots=$4 doorbells=$5 dropped=$6 (stub $7, lost $8) mode=$9"
check "summary line present and parsed" [ "$1" != - ]
check "events in the file ($nlines) == events in the summary ($1)" [ "$nlines" = "$1" ]
check "hundreds of thousands of events (>= 200000: $nlines)" [ "$nlines" -ge 200000 ]
check "before + after ftrace_init == events ($2 + $3)" [ "$(( ${2/-/0} + ${3/-/0} ))" = "$1" ]
check "most events happen before ftrace_init, invisible to the guest's ftrace (>= 100000: $2)" \
	[ "${2/-/0}" -ge 100000 ]
check "events after the hand-over too ($3)" [ "${3/-/0}" -gt 0 ]
check "no event dropped ($6: $7 by the stub, $8 lost)" [ "$6" = 0 ]
check "tens of thousands of slots held ($4)" [ "${4/-/0}" -ge 10000 ]
# The consumer drains every 20 ms and the emulated guest makes a few
# thousand calls a second, so the default rings rarely fill here: the
# doorbell count is reported, whatever it is (trace-reference.sh forces it).
check "the doorbell count is reported ($5)" grep -qE '^[0-9]+$' <<<"$5"
check "mode lossless" [ "$9" = lossless ]
check "no record left unfinished at the stop" eval "! grep -q 'unfinished' '$TMPD/all.err'"
check "start_kernel traced exactly once" [ "$(grep -cx start_kernel "$TMPD/all.funcs")" = 1 ]
# head64.c has no fentry slots: before start_kernel come only the calls
# x86_64_start_kernel makes (idt_setup_early_handler, copy_bootdata, ...),
# and start_kernel returns into the boot entry (tail calls on the way).
first_sk=$(grep -nx -m1 start_kernel "$TMPD/all.funcs" | cut -d: -f1)
echo "INFO: first events: $(head -5 "$TMPD/all.funcs" | tr '\n' ' ')... start_kernel is event ${first_sk:-none}"
check "the trace begins before start_kernel, within the early boot code (start_kernel is event ${first_sk:-none} <= 500)" \
	[ "${first_sk:-999}" -le 500 ]
check "start_kernel's parent is the boot entry (secondary_startup_64*)" \
	grep -qE ': start_kernel <-secondary_startup_64' "$TMPD/all.trace"
check "sched_init (after the hand-over) is traced" grep -qE ': sched_init <-start_kernel$' "$TMPD/all.trace"
check "rest_init itself is not (the stop came first)" eval "! grep -qx rest_init '$TMPD/all.funcs'"
check "timestamps never go back" ordered "$TMPD/all.trace"
unknown=$(events "$TMPD/all.trace" | grep -c ': 0x[0-9a-f]* <-')
check "every traced function is symbolised ($unknown not)" [ "$unknown" = 0 ]
# The same recording as trace.dat, read by Debian's trace-cmd.
"$VMMTRACE" report "$TMPD/all.raw" --format dat -o "$TMPD/all.dat"
check "vmmtrace report --format dat: status 0" [ $? = 0 ]
trace-cmd report -l -O parent=1 -i "$TMPD/all.dat" 2>"$TMPD/all.dat.err" |
	sed -nE 's/^ *[^ ]+-[0-9]+ +([0-9]+)([d.])[^ ]* +([0-9]+\.[0-9]{6}): function: +([^ ]+) <-- ([^ ]+)$/\1 \2 \3 \4 \5/p' \
	>"$TMPD/all.dat.lines"
events "$TMPD/all.trace" |
	sed -nE 's/^ *[^ ]+-[0-9]+ +\[0*([0-9]+)\] ([dDb.])[^ ]* +([0-9]+\.[0-9]{6}): ([^ ]+) <-([^ ]+)$/\1 \2 \3 \4 \5/p' |
		sed -E 's/^([0-9]+) D /\1 d /; s/^([0-9]+) b /\1 . /' \
	>"$TMPD/all.text.lines"
echo "INFO: trace-cmd report: $(wc -l <"$TMPD/all.dat.lines") events, text: $(wc -l <"$TMPD/all.text.lines")"
check "trace-cmd report prints every event of the text, in the same order, with the same CPU, flags, µs, function and parent" \
	eval "[ -s '$TMPD/all.text.lines' ] && cmp -s '$TMPD/all.text.lines' '$TMPD/all.dat.lines'"
# ... and through libtracecmd's reader API, as KernelShark reads it.
if cc -std=c11 -O2 $(pkg-config --cflags libtracecmd 2>/dev/null) -o "$TMPD/dat-read" \
	"$TOP/tests/interop/dat/dat-read.c" $(pkg-config --libs libtracecmd 2>/dev/null); then
	echo "events $nlines loose" >"$TMPD/all.expect"
	"$TMPD/dat-read" "$TMPD/all.dat" "$TMPD/all.expect" | sed 's/^\(PASS\|FAIL\): /\1: libtracecmd: /'
else
	fail "tests/interop/dat/dat-read.c builds against libtracecmd"
fi
echo "INFO: timing: '*' $all_s s"
finish
