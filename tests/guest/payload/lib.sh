# SPDX-License-Identifier: GPL-2.0
# Helpers for the payload tests (tests/guest/payload-*.sh), sourced after
# tests/lib.sh. The payload's console protocol is in docs/TEST-GUEST.md
# ("The payload"); this file lives under payload/ so that the kvm tier,
# which runs tests/kvm/*.sh, does not run it as a test.

# Built next to the vmmtrace under test (build/ or build/san/), never with
# its sanitizers: it is guest code.
PAYLOAD=${PAYLOAD:-$(dirname "$VMMTRACE")/tests/guest/payload/payload.elf}
PAYLOAD_TIMEOUT=${PAYLOAD_TIMEOUT:-60}
PAYLOAD_MEM=64M
CHECK_WINDOWS="$TOP/tests/guest/payload/check_windows.py"

payload_require() {
	require_file "$VMMTRACE"
	require_file "$PAYLOAD"
	require_kvm
}

# payload_boot NAME ARGS...: `vmmtrace boot PAYLOAD ARGS` to its end, stdin
# empty; NAME.out (the console: tests send traces to -o), NAME.err; sets rc and ms.
payload_boot() {
	local name=$1 start
	shift
	start=$(date +%s%N)
	timeout -k 5 "$PAYLOAD_TIMEOUT" "$VMMTRACE" boot "$PAYLOAD" --mem "$PAYLOAD_MEM" "$@" \
		</dev/null >"$TMPD/$name.out" 2>"$TMPD/$name.err"
	rc=$?
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	echo "INFO: $name: status $rc after $ms ms"
}

# payload_start NAME ARGS...: the same in the background, its stdin a FIFO
# that fd 3 writes to (payload_quit sends the loop's 'q'); sets pid.
payload_start() {
	local name=$1
	shift
	rm -f "$TMPD/$name.in"
	mkfifo "$TMPD/$name.in"
	exec 3<>"$TMPD/$name.in"
	timeout -k 5 "$PAYLOAD_TIMEOUT" "$VMMTRACE" boot "$PAYLOAD" --mem "$PAYLOAD_MEM" "$@" \
		<"$TMPD/$name.in" >"$TMPD/$name.out" 2>"$TMPD/$name.err" &
	pid=$!
}

# payload_wait_running FILE CPUS: every CPU's loop runs (fails the test if not within 30 s).
payload_wait_running() {
	local c
	for ((c = 0; c < $2; c++)); do
		wait_line "$1" "^PAYLOAD loop: running cpu=$c\$" 30 "$pid" || return 1
	done
}

# payload_quit: 'q' ends the loop; waits for vmmtrace; sets rc.
payload_quit() {
	echo q >&3
	wait "$pid"
	rc=$?
	exec 3>&-
}

# no_sanitizer_report NAME FILE...: vmmtrace's stderr went to FILE, where
# tests/run-all.sh cannot see a report of the san tier's build: look here.
no_sanitizer_report() {
	local name=$1
	shift
	check "$name: no sanitizer report" eval "! grep -qsE '(ERROR: [A-Za-z]+Sanitizer|: runtime error: )' $(printf "'%s' " "$@")"
}

# payload_ended NAME STATUS [stopped]: vmmtrace exited with STATUS, the
# payload met no fatal exception and, unless stopped from outside, finished.
payload_ended() {
	local name=$1 want=$2 con="$TMPD/$1.out"

	check "$name: exit status $want (got $rc)" [ "$rc" = "$want" ]
	check "$name: no PAYLOAD FATAL line" eval "! grep -h 'PAYLOAD FATAL' '$con' '$TMPD/$name.err'"
	no_sanitizer_report "$name" "$TMPD/$name.err"
	if [ "${3:-}" != stopped ]; then
		check "$name: the payload reached its end (PAYLOAD done)" grep -q '^PAYLOAD done$' "$con"
	fi
}

# payload_value FILE PATTERN KEY: KEY's value on the first console line matching PATTERN.
payload_value() {
	grep -E "$2" "$1" | head -n 1 | sed -nE "s/.*[ :]$3=([^ ]+).*/\1/p"
}

# trace_pairs FILE: "func parent cpu" per event (parent without its "<-").
trace_pairs() {
	trace_events "$1" | awk '{ c = $2; gsub(/[][]/, "", c); p = $NF; sub(/^<-/, "", p); print $(NF-1), p, c + 0 }'
}
# trace_count FILE FUNC [PARENT [CPU]]: its events, "-" matching anything.
trace_count() {
	trace_pairs "$1" | awk -v f="$2" -v p="${3:--}" -v c="${4:--}" \
		'$1 == f && (p == "-" || $2 == p) && (c == "-" || $3 == c) { n++ } END { print n + 0 }'
}

# summary_field FILE N: field N (1 events, 2 before, 3 after, 4 slots,
# 5 doorbells, 6 dropped, 7 by the stub, 8 lost, 9 mode) of the closing summary.
summary_field() {
	trace_summary "$1" | awk -v n="$2" '{ print $n }'
}

# The closing summary says no record was dropped, lost or left half-written,
# and no event went to a released slot.
summary_clean() {
	local name=$1 err="$TMPD/$1.err"
	check "$name: summary present" [ -n "$(trace_summary "$err")" ]
	check "$name: nothing dropped or lost ($(summary_field "$err" 6))" [ "$(summary_field "$err" 6)" = 0 ]
	check "$name: no record left unfinished" eval "! grep -q unfinished '$err'"
	check "$name: no event for a released slot" eval "! grep -q 'slots no client held' '$err'"
	check "$name: no vCPU stayed inside the stub" eval "! grep -q 'stayed inside the stub' '$err'"
}
