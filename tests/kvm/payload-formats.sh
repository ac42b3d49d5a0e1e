#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `vmmtrace attach -o FILE` in every format, on the payload looping on 2
# vCPUs: the window's name (or --format) picks the format, the server writes
# it and the client stores its bytes. Each window must open in its reader
# (trace-cmd report, protoc, vmmtrace report) with only the traced
# functions, and a raw window must end with its closing account. An unknown
# --format is refused at once with status 2.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/guest/payload/lib.sh"
payload_require
for tool in trace-cmd protoc; do
	command -v "$tool" >/dev/null || { fail "$tool is missing (scripts/prepare-tests.sh installs it)"; finish; }
done

sock=$TMPD/fmt.sock
payload_start fmt --cpus 2 --cmdline "vt.cpus=2 vt.loop=1 vt.spin=40" --control "$sock"
if ! payload_wait_running "$TMPD/fmt.out" 2; then
	fail "the loops did not start: $(tail -n 3 "$TMPD/fmt.err")"
	kill "$pid"
	payload_quit
	finish
fi
for f in w.txt w.dat w.perfetto w.raw; do
	"$VMMTRACE" attach "$sock" --trace f_mark --trace f_work --duration 0.3 -o "$TMPD/$f" 2>"$TMPD/$f.err"
	check "attach -o $f: status 0" [ $? = 0 ]
done
"$VMMTRACE" attach "$sock" --trace f_mark --duration 0.2 --format dat -o "$TMPD/forced.txt" 2>"$TMPD/forced.err"
check "attach --format dat -o forced.txt: status 0" [ $? = 0 ]
"$VMMTRACE" attach "$sock" --trace f_mark --format pdf 2>"$TMPD/bad.err"
rc=$?
check "attach --format pdf: status 2 (got $rc)" [ "$rc" = 2 ]
check "attach --format pdf: one line naming the formats" \
	eval "[ \"\$(wc -l <'$TMPD/bad.err')\" = 1 ] && grep -q \"text, dat, perfetto or raw, not 'pdf'\" '$TMPD/bad.err'"
payload_quit
check "the payload ended normally (status $rc)" [ "$rc" = 0 ]

n=$(grep -vc '^#' "$TMPD/w.txt")
check "text window: events ($n), only f_mark and f_work" \
	eval "[ '$n' -gt 0 ] && ! grep -v '^#' '$TMPD/w.txt' | grep -vqE ' (f_mark|f_work) <-'"
trace-cmd report -i "$TMPD/w.dat" >"$TMPD/w.dat.txt" 2>"$TMPD/w.dat.rep"
check "dat window: trace-cmd report reads it" [ $? = 0 ]
nd=$(grep -cE 'function: +(f_mark|f_work)' "$TMPD/w.dat.txt")
check "dat window: $nd events, all of them f_mark or f_work" \
	eval "[ '$nd' -gt 0 ] && [ '$nd' = \"\$(grep -c 'function:' '$TMPD/w.dat.txt')\" ]"
check "dat window: both CPUs have events" grep -q '^cpus=2$' "$TMPD/w.dat.txt"
trace-cmd report -i "$TMPD/forced.txt" >/dev/null 2>&1
check "--format dat wins over the .txt name: trace-cmd report reads it" [ $? = 0 ]
protoc --decode_raw <"$TMPD/w.perfetto" >"$TMPD/w.perfetto.txt" 2>/dev/null
check "perfetto window: protoc parses it" [ $? = 0 ]
np=$(grep -c '^  11 {' "$TMPD/w.perfetto.txt")
check "perfetto window: track events ($np)" [ "$np" -gt 0 ]
"$VMMTRACE" report "$TMPD/w.raw" >"$TMPD/w.raw.txt" 2>"$TMPD/w.raw.err"
check "raw window: vmmtrace report reads it, ended cleanly (nothing on stderr)" \
	eval "[ $? = 0 ] && [ ! -s '$TMPD/w.raw.err' ]"
nr=$(grep -vc '^#' "$TMPD/w.raw.txt")
check "raw window: events ($nr), only f_mark and f_work" \
	eval "[ '$nr' -gt 0 ] && ! grep -v '^#' '$TMPD/w.raw.txt' | grep -vqE ' (f_mark|f_work) <-'"
finish
