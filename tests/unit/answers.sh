#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# vmmtrace report and vmmtrace diff on the --graph recordings that
# test-trace-returns --fixture writes (tests/unit/graph-fixture.h's boot,
# the same boot again, the boot without foo_init's call, the boot of a
# kernel with one more symbol, the boot cut inside its last chunk):
# report's text is function_graph's, --stat gives total and self time,
# --chart writes well-formed XML (xmllint); diff exits 0 when the boots
# agree, 1 when they part, naming where in its first two lines (text and
# JSON alike), 2 with one line on bad input; --ignore, --context, --top
# and --force do what they say.
. "$(dirname "$0")/../lib.sh"
FIXTURE=${FIXTURE:-$TOP/build/tests/unit/test-trace-returns}
require_file "$VMMTRACE"
require_file "$FIXTURE"
export LC_ALL=C
d=$TMPD
"$FIXTURE" --fixture "$d" || { fail "test-trace-returns --fixture failed"; finish; }
V=$VMMTRACE

"$V" report "$d/graph.raw" >"$d/graph.txt" 2>"$d/err"
check "report: a --graph recording's text is function_graph's" \
	eval "[ \$? = 0 ] && [ ! -s '$d/err' ] && head -1 '$d/graph.txt' | grep -qx '# tracer: function_graph' &&
	      grep -qE '^ 0\) .{14}\|        foo_init\(\); /\* = 0x24b8 \*/\$' '$d/graph.txt'"
"$V" report "$d/graph.raw" --stat >"$d/stat" 2>"$d/err"
check "report --stat: calls, total and self time per function, by total time" \
	eval "grep -qE '^ +1 +1\\.900 +0\\.600  kernel_init_freeable\$' '$d/stat' &&
	      grep -qE '^ +3 +1\\.000 +0\\.700  do_one_initcall\$' '$d/stat' &&
	      [ \"\$(sed -n '/^functions:/{n;n;p}' '$d/stat' | awk '{ print \$4 }')\" = kernel_init ]"

# The chart: well-formed, its stages, and refused where it makes no sense.
"$V" report "$d/graph.raw" --chart "$d/chart.svg" --chart-min 100ns >"$d/out" 2>"$d/err"
check "report --chart: status 0, nothing on stdout or stderr" eval "[ \$? = 0 ] && [ ! -s '$d/out' ] && [ ! -s '$d/err' ]"
if command -v xmllint >/dev/null; then
	check "report --chart: xmllint --noout finds the SVG well-formed" xmllint --noout "$d/chart.svg"
else
	fail "xmllint is missing (libxml2-utils; scripts/prepare-tests.sh installs it)"
fi
check "report --chart: the ten stages, each with its span" \
	test "$(grep -c '<rect class="stage"' "$d/chart.svg")" = 10

# bad DESCRIPTION STATUS PATTERN COMMAND...: that status, one line on stderr matching, nothing on stdout.
bad() {
	local desc=$1 want=$2 pat=$3 rc
	shift 3
	"$@" >"$d/got" 2>"$d/err"
	rc=$?
	if [ "$rc" = "$want" ] && [ "$(wc -l <"$d/err")" = 1 ] && grep -qE -e "$pat" "$d/err" && [ ! -s "$d/got" ]; then
		pass "$desc: $(cat "$d/err")"
	else
		fail "$desc: status $rc, stderr: $(head -c 300 "$d/err"), stdout $(wc -c <"$d/got") bytes"
	fi
}
bad "--chart-min without a unit" 2 "--chart-min '5'" "$V" report "$d/graph.raw" --chart "$d/x.svg" --chart-min 5
bad "--chart with --stat" 2 'own file' "$V" report "$d/graph.raw" --chart "$d/x.svg" --stat
bad "--chart-min without --chart" 2 'goes with --chart' "$V" report "$d/graph.raw" --chart-min 1ms
bad "--chart into a missing directory" 1 '--chart ' "$V" report "$d/graph.raw" --chart "$d/no/such/x.svg"

# diff: agree, part, ignore.
"$V" diff "$d/graph.raw" "$d/same.raw" >"$d/diff" 2>"$d/err"
check "diff of the same boot twice: exit 0, no parting point" \
	eval "[ \$? = 0 ] && [ ! -s '$d/err' ] && head -1 '$d/diff' | grep -q '^vmmtrace diff: the boots agree' && ! grep -q '^@@' '$d/diff'"
"$V" diff "$d/graph.raw" "$d/blacklist.raw" >"$d/diff" 2>"$d/err"
rc=$?
check "diff of a boot without an initcall: exit 1 (got $rc)" [ "$rc" = 1 ]
check "diff: the first line names the task and the call where the boots part" \
	eval "head -1 '$d/diff' | grep -q '^vmmtrace diff: the boots part in 1 of 4 tasks; first in init-1 at call 4 '"
check "diff: the second names the calls there and their callers" \
	eval "sed -n 2p '$d/diff' | grep -qx 'first parting point: A calls foo_init <- do_one_initcall, B calls smp_init <- kernel_init_freeable'"
check "diff: a hunk marked like diff -u: 3 calls of context, the call only A made, the context after" \
	eval "sed -n '/^@@ init-1: call 4 of 9 in A, of 8 in B @@\$/,/^\$/p' '$d/diff' | cut -c1 | tr -d '\n' | grep -qx '@   -   '"
check "diff: foo_init is called in A only; its count differs by -1" \
	eval "sed -n '/^functions called in A only: 1\$/{n;p}' '$d/diff' | grep -qE '^ +1  foo_init\$' &&
	      grep -qE '^ +1 +0 +-1  foo_init\$' '$d/diff'"
check "diff: the stages side by side, initcalls: pure in A only" \
	grep -qE '^  initcalls: pure +0\.000000 +- *$' "$d/diff"
"$V" diff "$d/graph.raw" "$d/blacklist.raw" --context 1 | sed -n '/^@@/,/^$/p' | cut -c1 | tr -d '\n' >"$d/marks"
check "diff --context 1: one call of context each side" grep -qx '@ - ' "$d/marks"
"$V" diff "$d/graph.raw" "$d/blacklist.raw" --ignore 'foo_*' >"$d/diff" 2>&1
check "diff --ignore 'foo_*': the boots agree, exit 0" eval "[ \$? = 0 ] && head -1 '$d/diff' | grep -q 'the boots agree'"
"$V" diff "$d/graph.raw" "$d/graph.raw" --ignore do_one_initcall >"$d/diff" 2>&1
check "diff --ignore do_one_initcall: with returns, the calls under it are left out too (13 calls)" \
	grep -q 'made the same calls in the same order (13 calls)' "$d/diff"

# JSON: the same content, for scripts.
"$V" diff "$d/graph.raw" "$d/blacklist.raw" --format json --top 1 >"$d/diff.json" 2>"$d/err"
rc=$?
check "diff --format json: exit 1, and python3's json module reads it" \
	eval "[ $rc = 1 ] && python3 -c 'import json,sys; json.load(open(sys.argv[1]))' '$d/diff.json'"
check "diff --format json: agree false, the parting task and call, the hunk, counts, stages" python3 - "$d/diff.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
p = j["parted"][0]
ops = [(h["op"], h["func"]) for h in p["hunk"]]
assert j["agree"] is False and len(j["parted"]) == 1, j["agree"]
assert p["task"] == "init-1" and p["call"] == 4 and p["only_in"] is None, p
assert ("-", "foo_init") in ops and ops[0] == ("=", "kernel_init"), ops
assert j["only_in_a"]["functions"] == 1 and j["only_in_a"]["top"][0]["func"] == "foo_init"
assert len(j["calls"]["top"]) == 1 and j["calls"]["top"][0]["delta"] == -1
assert {"stage": "initcalls: pure", "a_ns": 100, "b_ns": None} in j["stages"]
assert j["a"]["returns"] is True and j["b"]["calls"] == 17
PY

# Bad input: one line, exit 2.
printf 'not a trace\n' >"$d/foreign"
bad "diff: recordings of two kernels" 2 'different kernels: .*--force' "$V" diff "$d/graph.raw" "$d/other.raw"
"$V" diff "$d/graph.raw" "$d/other.raw" --force >/dev/null 2>&1
check "diff --force: two kernels compared by function name (exit 0: the same calls)" [ $? = 0 ]
bad "diff: a truncated recording" 2 'cut.raw: cut at offset [0-9]+ .*did not end cleanly' "$V" diff "$d/graph.raw" "$d/cut.raw"
"$V" diff "$d/graph.raw" "$d/cut.raw" --force >/dev/null 2>&1
check "diff --force: a cut recording compared for what it holds" [ $? = 0 ]
bad "diff: a foreign file" 2 'not a vmmtrace raw trace' "$V" diff "$d/graph.raw" "$d/foreign"
bad "diff: a missing file" 2 'No such file' "$V" diff "$d/graph.raw" "$d/nonexistent.raw"
bad "diff: one recording" 2 'two recordings' "$V" diff "$d/graph.raw"
bad "diff: three recordings" 2 'more than two' "$V" diff "$d/graph.raw" "$d/same.raw" "$d/same.raw"
bad "diff: a bad --context" 2 "--context 'x'" "$V" diff "$d/graph.raw" "$d/same.raw" --context x
bad "diff: a bad --format" 2 "--format 'xml'" "$V" diff "$d/graph.raw" "$d/same.raw" --format xml
bad "diff: an unknown option" 2 "unknown or incomplete option '--bogus'" "$V" diff "$d/graph.raw" "$d/same.raw" --bogus
"$V" diff --help >"$d/got" 2>"$d/err"
check "diff --help: status 0, usage on stdout" test $? = 0 -a -s "$d/got" -a ! -s "$d/err"
finish
