#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# vmmtrace attach --graph in every format (issue 32: returns in every
# format, live too): on a running arm64 guest under QEMU with markloop
# busy on 2 vCPUs, one window to trace.dat and one to raw. Debian's
# trace-cmd report shows the first's calls as funcgraph_entry and
# funcgraph_exit events (a leaf as one line), an exit closing every block
# but those still open when the window closed; vmmtrace report turns the
# second into function_graph's text layout.
. "$(dirname "$0")/../lib.sh"
require_file "$VMMTRACE"
A64=$VMMTRACE_CACHE/lean-arm64/Image
require_file "$A64"
require_file "$INITRAMFS_ARM64"
SOCK=$TMPD/sock

timeout -k 10 -s INT 300 "$VMMTRACE" boot "$A64" --host qemu --initrd "$INITRAMFS_ARM64" --cpus 2 --control "$SOCK" \
	--graph --console "$TMPD/console" \
	--cmdline "vmmtrace.steps=mark-loop vmmtrace.loop_cpus=2 vmmtrace.mark_secs=120" 2>"$TMPD/boot.err" &
vt=$!
if ! wait_markloop "$TMPD/console" 2 120 "$vt"; then
	fail "markloop did not start on both vCPUs"; kill "$vt"; finish
fi
"$VMMTRACE" attach "$SOCK" --trace '__arm64_sys_*' --graph --duration 2 -o "$TMPD/w.dat" 2>"$TMPD/dat.err"
check "attach --graph -o w.dat: status 0 ($(tail -n 1 "$TMPD/dat.err"))" [ $? = 0 ]
"$VMMTRACE" attach "$SOCK" --trace '__arm64_sys_*' --graph --duration 2 -o "$TMPD/w.raw" 2>"$TMPD/raw.err"
check "attach --graph -o w.raw: status 0" [ $? = 0 ]
"$VMMTRACE" stop "$SOCK" >/dev/null
wait "$vt"
check "the guest stopped cleanly: status 0" [ $? = 0 ]

if command -v trace-cmd >/dev/null; then
	trace-cmd report "$TMPD/w.dat" >"$TMPD/dat.txt" 2>/dev/null
	# trace-cmd draws a leaf call (its exit the next event) as one funcgraph_entry line "func();".
	opened=$(grep -c 'funcgraph_entry: .*() {$' "$TMPD/dat.txt") exits=$(grep -c ': funcgraph_exit: ' "$TMPD/dat.txt")
	leaves=$(grep -c 'funcgraph_entry: .*();$' "$TMPD/dat.txt")
	check "trace-cmd report: funcgraph events, a closing exit for every block it opened but at most 2 still open ($leaves leaf calls, $opened blocks, $exits exits)" \
		eval "[ \$(( $leaves + $opened )) -gt 100 ] && [ '$exits' -le '$opened' ] && [ \$(( $opened - $exits )) -le 2 ]"
	check "trace-cmd report: markloop's calls of the syscall handlers, as the graph draws them" \
		grep -qE 'markloop-[0-9]+ +\[00[01]\] .*funcgraph_entry: .*\|  __arm64_sys_[a-z_]+\(\) \{' "$TMPD/dat.txt"
else
	echo "SKIP: trace-cmd is not installed: the trace.dat window is not read back"
fi
"$VMMTRACE" report "$TMPD/w.raw" >"$TMPD/raw.txt" 2>"$TMPD/report.err"
check "vmmtrace report of the raw window: function_graph's layout" \
	eval "grep -q '^# tracer: function_graph' '$TMPD/raw.txt' && grep -qE '^ [01]\\) .*\\|  __arm64_sys_[a-z_]+\\(\\);' '$TMPD/raw.txt'"
finish
