#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The long fuzzing run: scripts/fuzz.sh [SECONDS] [TARGET...] runs each
# target of tests/fuzz/ (default: all) for SECONDS (default 3600), one
# after the other so that it shares a 2-core machine politely. Corpora
# grow in build/fuzz/corpus-TARGET; crashes are kept as
# build/fuzz/crash-TARGET-*. Prints per target the executions, exec/s,
# libFuzzer's final cov:/ft: figures and the crashes; exits non-zero if
# any target found one. docs/RELIABILITY.md records the figures.
# FUZZ_TIMEOUT (default 10) is libFuzzer's -timeout in seconds: raise it on
# a loaded machine, where a niced fuzzer can be starved past 10 s on one
# input and report a timeout that is not one.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP" || exit 1
. tests/fuzz/build.sh
seconds=3600
case ${1:-} in [0-9]*) seconds=$1; shift ;; esac
targets=${*:-$FUZZ_TARGETS}
command -v clang >/dev/null || { echo "clang (libFuzzer) is not installed" >&2; exit 2; }
fuzz_build_lib || { echo "building the instrumented library failed" >&2; exit 1; }
bad=0
printf '%-8s %8s %12s %8s %8s %8s %7s\n' target seconds executions exec/s cov ft crashes
for t in $targets; do
	fuzz_build "$t" || { echo "$t: build failed" >&2; bad=1; continue; }
	log=$FUZZ_DIR/log-$t.txt
	start=$(date +%s)
	fuzz_run "$t" "$seconds" "$log"
	rc=$?
	took=$(( $(date +%s) - start ))
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
	# The last status line (#N DONE/pulse...) carries cov: and ft:.
	last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
	cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	# libFuzzer also keeps any input slower than 10 s, as crash-TARGET-slow-unit-*:
	# on a loaded machine a niced fuzzer is starved that long, so such a unit is
	# reported (run it alone to time it) but is not a crash.
	crashes=$(ls "$FUZZ_DIR"/crash-"$t"-* 2>/dev/null | grep -vc -- '-slow-unit-')
	slow=$(ls "$FUZZ_DIR"/crash-"$t"-slow-unit-* 2>/dev/null | wc -l)
	printf '%-8s %8s %12s %8s %8s %8s %7s\n' "$t" "$took" "${runs:-?}" "${rate:-?}" \
		"${cov:-?}" "${ft:-?}" "$crashes"
	[ "$slow" = 0 ] || echo "  $t: $slow input(s) took over 10 s once: $FUZZ_DIR/crash-$t-slow-unit-*"
	if [ $rc != 0 ] || [ "$crashes" != 0 ]; then
		bad=1
		grep -E '^(==[0-9]+==ERROR|SUMMARY)' "$log" | head -n 3 | sed "s/^/  $t: /"
	fi
done
exit $bad
