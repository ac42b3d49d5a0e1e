#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# attach_check.py, the judge of every live-attach test, on small hand-made
# traces: markers and calls that print the same microsecond (as under QEMU's
# TCG) are not a loss, while a real gap, a duplicate or a call before any
# marker is reported.
. "$(dirname "$0")/../lib.sh"
checker=$TOP/tests/e2e/attach_check.py
# trace FILE FUNC US...: one CPU-0 event of FUNC at each time (microseconds).
trace() {
	local f=$1 fn=$2; shift 2
	for us in "$@"; do
		printf '       loop-42    [000] .....  %d.%06d: %s <-do_syscall_64\n' \
			$((us / 1000000)) $((us % 1000000)) "$fn" >>"$f"
	done
}
marks() { trace "$TMPD/boot" __x64_sys_sched_get_priority_max "$@"; }
window() { : >"$TMPD/$1"; trace "$TMPD/$1" __x64_sys_getpriority "${@:2}"; }
judge() { python3 "$checker" "$TMPD/boot" "$TMPD/$1" >"$TMPD/$1.out" 2>&1; }

# Iterations start at these times; two markers share 100 us, so the call
# at 100 us may belong to the first, second or third iteration.
marks 90 100 100 104 106 110 120 130 1000120
window tie 100 105 107
check "a call tied with two markers is placed where the window is exact" judge tie
window tie2 100 100 105 107
check "two calls tied with two markers are not a duplicate" judge tie2
window gap 105 112
judge gap; rc=$?
check "a skipped iteration fails" test "$rc" = 1
check "... and is named" grep -q '^FAIL: .*: cpu 0: 1 iterations inside the window have no event' "$TMPD/gap.out"
window dup 105 105 107
judge dup; rc=$?
check "two calls in one iteration fail" test "$rc" = 1
check "... and are named" grep -q '^FAIL: .*: cpu 0: 1 duplicated events' "$TMPD/dup.out"
window early 50 95
judge early; rc=$?
check "a call before any marker fails" test "$rc" = 1
check "... and is named" grep -q 'getpriority events before any marker' "$TMPD/early.out"
window late 1000125 1000130
judge late; rc=$?
check "two calls after the last marker are a duplicate" test "$rc" = 1
window empty
check "a window with no calls passes" judge empty
finish
