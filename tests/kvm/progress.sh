#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# vmmtrace boot's live progress line: on a terminal (script(1) gives it a
# pseudo-terminal) a '*' trace of the lean kernel's first seconds shows
# "vmmtrace: guest T s, N events, R/s, D dropped, PHASE", refreshed (at most
# four times a second), and erased before the console's and vmmtrace's own
# lines; -q, or stderr not a terminal, shows none of it.
. "$(dirname "$0")/../lib.sh"
require_file "$VMMTRACE"
require_file "$LEAN_BZIMAGE"
require_kvm
command -v script >/dev/null || { fail "script(1) is missing (bsdutils)"; finish; }

# on_terminal NAME ARGS...: vmmtrace boot ARGS on a pseudo-terminal; output in $TMPD/NAME.
on_terminal() {
	local name=$1 cmd
	shift
	printf -v cmd '%q ' "$VMMTRACE" boot "$LEAN_BZIMAGE" "$@"
	start=$(date +%s.%N)
	timeout -k 5 300 script -qec "$cmd" /dev/null </dev/null >"$TMPD/$name" 2>&1
	rc=$?
	secs=$(echo "$(date +%s.%N) - $start" | bc)
}
status_re='vmmtrace: guest [0-9]+\.[0-9] s, [0-9]+ events, [0-9]+/s, [0-9]+ dropped, (early boot|ftrace_init|running)'

on_terminal tty --trace '*' --stop-at trap_init -o "$TMPD/tty.raw" --cmdline earlyprintk=serial,ttyS0,115200
check "on a terminal: status 0 (got $rc)" [ "$rc" = 0 ]
tr '\r' '\n' <"$TMPD/tty" | sed 's/\x1b\[K//g' >"$TMPD/tty.lines"
n=$(grep -cE "^$status_re\$" "$TMPD/tty.lines")
echo "INFO: $n refreshes in $secs s; last: $(grep -E "^$status_re" "$TMPD/tty.lines" | tail -n 1)"
check "on a terminal: the status line is drawn and refreshed ($n times)" [ "$n" -ge 2 ]
check "... at most four times a second" eval "[ \$(echo '$n <= 4 * $secs + 1' | bc) = 1 ]"
check "... its events grow, and it says early boot" \
	eval "grep -E '^$status_re' '$TMPD/tty.lines' | tail -n 1 | grep -qE ' [1-9][0-9]* events, .*early boot'"
# Each redraw starts with an erase; whatever follows a drawn line erases it first.
check "every status line is drawn after an erase (\\r ESC[K)" \
	[ "$(grep -o $'\r\x1b\\[Kvmmtrace: guest' "$TMPD/tty" | wc -l)" = "$n" ]
check "the console's lines are whole ([ time] Linux version ... on a line of its own)" \
	grep -qE '^\[ *[0-9]+\.[0-9]+\] Linux version ' "$TMPD/tty.lines"
check "vmmtrace's closing lines are whole (stop, summary)" \
	eval "grep -q '^vmmtrace: stopped at trap_init (--stop-at)' '$TMPD/tty.lines' && grep -q '^vmmtrace: trace: [0-9]* events' '$TMPD/tty.lines'"
check "nothing is left drawn at the end" eval "! tail -c 300 '$TMPD/tty' | tr '\\r' '\\n' | tail -n 2 | grep -qE '$status_re'"

on_terminal quiet -q --trace '*' --stop-at setup_arch -o "$TMPD/quiet.raw"
check "-q on a terminal: status 0 (got $rc)" [ "$rc" = 0 ]
check "-q: no status line" eval "! grep -qE '$status_re' '$TMPD/quiet'"

timeout -k 5 300 "$VMMTRACE" boot "$LEAN_BZIMAGE" --trace '*' --stop-at setup_arch -o "$TMPD/file.raw" \
	</dev/null >"$TMPD/file.out" 2>"$TMPD/file.err"
check "stderr not a terminal: status 0" [ $? = 0 ]
check "stderr not a terminal: no status line and no terminal escape" \
	eval "! grep -qE '$status_re' '$TMPD/file.err' && ! grep -q $'\x1b' '$TMPD/file.err'"
finish
