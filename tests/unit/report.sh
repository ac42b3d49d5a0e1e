#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# vmmtrace report against a raw trace written by test-trace-raw --fixture
# (4,000 synthetic events on 4 CPUs over about 4 s, with symbols, unknown
# addresses and hostile fields) and full.txt, the text writer's output for
# the same events: the default output equals it byte for byte, every filter
# equals the equivalent awk over it, --stat and --flame count what it
# holds, a cut file gives its complete chunks and one line on stderr, and
# bad input is refused with status 2 and one line.
. "$(dirname "$0")/../lib.sh"
FIXTURE=${FIXTURE:-$TOP/build/tests/unit/test-trace-raw}
require_file "$VMMTRACE"
require_file "$FIXTURE"
export LC_ALL=C
d=$TMPD
"$FIXTURE" --fixture "$d" || { fail "test-trace-raw --fixture failed"; finish; }
full=$d/full.txt raw=$d/trace.raw
check "fixture: full.txt has 4000 events" test "$(grep -vc '^#' "$full")" = 4000

# report_is DESCRIPTION EXPECTED-FILE ARGS...: `vmmtrace report ARGS` exits 0,
# writes EXPECTED-FILE's bytes and nothing on stderr.
report_is() {
	local desc=$1 want=$2 rc
	shift 2
	"$VMMTRACE" report "$@" >"$d/got" 2>"$d/err"
	rc=$?
	if [ "$rc" = 0 ] && cmp -s "$want" "$d/got" && [ ! -s "$d/err" ]; then
		pass "$desc ($(grep -vc '^#' "$want") events)"
	else
		fail "$desc: status $rc, $(wc -l <"$d/got") lines want $(wc -l <"$want"), stderr: $(head -c 200 "$d/err")"
		diff "$want" "$d/got" | head -5
	fi
}
# expect AWK-CONDITION: the header and the event lines of full.txt that pass
# it ($1 task-pid, $2 [cpu], $4 timestamp:, $5 function, $6 <-caller).
expect() { awk "/^#/ || ($1)" "$full" >"$d/want"; }

report_is "default output: the text writer's, byte for byte" "$full" "$raw"
"$VMMTRACE" report "$raw" -o "$d/out.txt" 2>"$d/err"
check "-o FILE: the same text in the file" cmp -s "$full" "$d/out.txt"
"$VMMTRACE" report "$raw" --format raw -o "$d/copy.raw" 2>"$d/err"
report_is "--format raw: a copy that reports the same" "$full" "$d/copy.raw"
report_is "--format text: the default" "$full" "$raw" --format text

expect '$5 ~ /^vfs_/'
report_is "--trace 'vfs_*'" "$d/want" "$raw" --trace 'vfs_*'
expect '$5 ~ /^f_1/ && $5 !~ /^f_12/'
report_is "--trace 'f_1*' --notrace 'f_12*'" "$d/want" "$raw" --trace 'f_1*' --notrace 'f_12*'
expect '$5 == "start_kernel" || $5 == "schedule"'
report_is "--trace start_kernel --trace schedule" "$d/want" "$raw" --trace start_kernel --trace schedule
expect '$5 !~ /_/'
report_is "--notrace '*_*'" "$d/want" "$raw" --notrace '*_*'
# Addresses without a symbol are named as printed (a glob cannot start with a
# digit: the filter takes that for an ftrace function index).
expect '$5 ~ /xffff/'
report_is "--trace '*xffff*' (addresses without a symbol)" "$d/want" "$raw" --trace '*xffff*'
expect '$5 !~ /xffff/ && $5 != "schedule"'
report_is "--notrace '*xffff*' --notrace schedule" "$d/want" "$raw" --notrace '*xffff*' --notrace schedule
expect '$2 == "[002]"'
report_is "--cpu 2" "$d/want" "$raw" --cpu 2
expect '$2 == "[65535]"'
report_is "--cpu 65535 (a hostile cpu value)" "$d/want" "$raw" --cpu 65535
expect '$4 + 0 >= 1.5 && $4 + 0 <= 2.25'
report_is "--from 1.5 --to 2.25" "$d/want" "$raw" --from 1.5 --to 2.25
expect '$4 + 0 >= 3'
report_is "--from 3" "$d/want" "$raw" --from 3
# A bound equal to a printed timestamp includes that event.
t=$(grep -v '^#' "$full" | awk 'NR == 1000 { sub(/:$/, "", $4); print $4 }')
expect "\$4 + 0 <= $t"
report_is "--to $t (an event's own timestamp, included)" "$d/want" "$raw" --to "$t"
expect '$2 == "[001]" && $5 ~ /^f_2/ && $4 + 0 >= 1 && $4 + 0 <= 2'
report_is "--cpu 1 --trace 'f_2*' --from 1 --to 2" "$d/want" "$raw" --cpu 1 --trace 'f_2*' --from 1 --to 2
# $1 is TASK-PID: the pid follows the last '-' (the fixture's comms have none).
expect '$1 ~ /-0$/'
report_is "--pid 0: the boot and idle tasks, VM events, events of no known task" "$d/want" "$raw" --pid 0
expect '$1 ~ /-1000$/'
report_is "--pid 1000" "$d/want" "$raw" --pid 1000
expect '$1 ~ /-4194304$/'
report_is "--pid 4194304 (PID_MAX_LIMIT)" "$d/want" "$raw" --pid 4194304
expect '0'
report_is "--pid 7: none" "$d/want" "$raw" --pid 7

# --stat: the top functions, per CPU, the account.
"$VMMTRACE" report "$raw" --stat >"$d/stat" 2>"$d/err"
check "--stat: exit 0, nothing on stderr" test $? = 0 -a ! -s "$d/err"
grep -v '^#' "$full" | awk '{ print $5 }' | sort | uniq -c | sort -k1,1nr -k2,2 | head -20 |
	awk '{ print $1, $2 }' >"$d/want"
sed -n '/^functions:/,/^$/p' "$d/stat" | awk 'NR > 2 && NF == 2 { print $1, $2 }' >"$d/got"
check "--stat: the top 20 functions and their counts, as uniq -c of the text" cmp -s "$d/want" "$d/got"
grep -v '^#' "$full" | awk '{ c = substr($2, 2, length($2) - 2) + 0; n[c]++ } END { for (c in n) print n[c], c }' |
	sort -k2,2n >"$d/want"
sed -n '/^cpus:/,/^$/p' "$d/stat" | awk 'NR > 2 && NF == 2 { print $1, $2 }' >"$d/got"
check "--stat: events per CPU" cmp -s "$d/want" "$d/got"
check "--stat: the event count" grep -qx 'events: 4000 selected of 4000 read' "$d/stat"
check "--stat: the drops from the trailer" grep -qx 'drops: 7 dropped by the stub, 3 lost' "$d/stat"
check "--stat: says phases are not recorded" grep -q '^phases: not recorded' "$d/stat"
n=$("$VMMTRACE" report "$raw" --stat --top 5 | sed -n '/^functions:/,/^$/p' | awk 'NR > 2 && NF == 2' | wc -l)
check "--stat --top 5: five functions" test "$n" = 5
want=$(grep -v '^#' "$full" | awk '$2 == "[003]"' | wc -l)
check "--stat --cpu 3: counts the selected events ($want)" \
	grep -qx "events: $want selected of 4000 read" <("$VMMTRACE" report "$raw" --stat --cpu 3)

# --flame: caller;function count, over the same names.
grep -v '^#' "$full" | awk '{ sub(/^<-/, "", $6); print $6 ";" $5 }' | sort | uniq -c |
	awk '{ print $2, $1 }' >"$d/want"
"$VMMTRACE" report "$raw" --flame 2>"$d/err" | sort >"$d/got"
check "--flame: one 'caller;function count' line per pair, as the text has them" cmp -s "$d/want" "$d/got"
check "--flame: the counts add up to the events" \
	test "$(awk '{ s += $NF } END { print s }' "$d/got")" = 4000

# A cut file: its complete chunks, one line on stderr, status 0.
read -r cut_events cut_off cut_bytes <"$d/cut.events"
"$VMMTRACE" report "$d/cut.raw" >"$d/got" 2>"$d/err"
rc=$?
{ grep '^#' "$full"; grep -v '^#' "$full" | head -n "$cut_events"; } >"$d/want"
check "cut file: status 0" test "$rc" = 0
check "cut file: the $cut_events events of its complete chunks" cmp -s "$d/want" "$d/got"
check "cut file: one line on stderr: $(cat "$d/err")" test "$(wc -l <"$d/err")" = 1
check "cut file: the line names the offset and the bytes cut" \
	grep -q "cut at offset $cut_off ($cut_bytes bytes after the last complete chunk" "$d/err"

# A damaged chunk: the others, one line on stderr naming its offset, status 0.
read -r dmg_off dmg_first dmg_n <"$d/damaged.events"
"$VMMTRACE" report "$d/damaged.raw" >"$d/got" 2>"$d/err"
rc=$?
awk -v a="$dmg_first" -v n="$dmg_n" '/^#/ { print; next } { i++ } i <= a || i > a + n' "$full" >"$d/want"
check "damaged chunk: status 0" test "$rc" = 0
check "damaged chunk: every event but its $dmg_n" cmp -s "$d/want" "$d/got"
check "damaged chunk: one line naming offset $dmg_off: $(cat "$d/err")" \
	bash -c '[ "$(wc -l <"$1")" = 1 ] && grep -q "1 damaged chunk(s) skipped, at offset $2 (payload checksum)" "$1"' - "$d/err" "$dmg_off"

# bad DESCRIPTION PATTERN ARGS...: refused with status 2, one line matching PATTERN, no stdout.
bad() {
	local desc=$1 pat=$2 rc
	shift 2
	"$VMMTRACE" report "$@" >"$d/got" 2>"$d/err"
	rc=$?
	if [ "$rc" = 2 ] && [ "$(wc -l <"$d/err")" = 1 ] && grep -qE -e "$pat" "$d/err" && [ ! -s "$d/got" ]; then
		pass "$desc: $(cat "$d/err")"
	else
		fail "$desc: status $rc, stderr: $(head -c 300 "$d/err"), stdout $(wc -c <"$d/got") bytes"
	fi
}
: >"$d/empty"
head -c 40 "$raw" >"$d/head.raw"
printf 'hello, not a trace\n' >"$d/foreign"
bad "a missing file" 'No such file' "$d/nonexistent.raw"
bad "an empty file" 'empty file' "$d/empty"
bad "a file cut inside its header chunk" 'cut before the end of its header chunk' "$d/head.raw"
bad "a foreign file" 'not a vmmtrace raw trace' "$d/foreign"
bad "a text trace" 'not a vmmtrace raw trace' "$full"
bad "an unknown format" "unknown format 'nope'" "$raw" --format nope
bad "a bad --cpu" "--cpu 'x'" "$raw" --cpu x
bad "a bad --from" "--from '1.2.3'" "$raw" --from 1.2.3
bad "a --to with 7 decimals" "--to '1.0000001'" "$raw" --to 1.0000001
bad "--from after --to" 'after --to' "$raw" --from 2 --to 1
bad "an empty --trace" 'empty|pattern' "$raw" --trace ''
bad "an unknown option" "unknown or incomplete option '--bogus'" "$raw" --bogus
bad "a missing option value" "unknown or incomplete option" "$raw" --cpu
bad "no FILE" 'FILE is missing' --stat
bad "two FILEs" "unexpected argument" "$raw" "$raw"
bad "--stat with --flame" 'exclusive' "$raw" --stat --flame
bad "--top without --stat" 'goes with --stat' "$raw" --top 3
bad "-o into a missing directory" '-o ' "$raw" -o "$d/no/such/dir"
"$VMMTRACE" report --help >"$d/got" 2>"$d/err"
check "--help: status 0, usage on stdout" test $? = 0 -a -s "$d/got" -a ! -s "$d/err"
finish
