#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Builds every libFuzzer target of tests/fuzz/ (ASan, UBSan; see
# tests/fuzz/build.sh) and replays a fixed budget on each: seed 1, the
# executions fuzz_suite_runs names, from the committed seeds only (the
# corpus build/fuzz keeps for scripts/fuzz.sh would make the run differ
# from machine to machine). Any crash, leak, timeout, out-of-memory or
# sanitizer report fails; FUZZ_SECONDS (default 60) caps each target's time.
. "$(dirname "$0")/../lib.sh"
seconds=${FUZZ_SECONDS:-60}
if ! command -v clang >/dev/null; then
	echo "##################################################################"
	echo "SKIP: $(basename "$0"): clang (libFuzzer) is not installed; NOT RUN"
	echo "##################################################################"
	exit 77
fi
cd "$TOP" || exit 1
. tests/fuzz/build.sh
check "instrumented library builds" fuzz_build_lib
[ "$T_FAILS" = 0 ] || finish
for t in $FUZZ_TARGETS; do
	check "fuzz-$t builds" fuzz_build "$t" || continue
	# Crashes go to TMPD, not build/fuzz: a unit run must not leave
	# artifacts that scripts/fuzz.sh would count as its own.
	runs=$(fuzz_suite_runs "$t")
	mkdir -p "$TMPD/corpus-$t"
	"$FUZZ_DIR/fuzz-$t" -seed=1 -runs="$runs" -max_total_time="$seconds" -timeout=10 \
		-rss_limit_mb=2048 -artifact_prefix="$TMPD/crash-$t-" "$TMPD/corpus-$t" \
		"tests/fuzz/seeds/$t" >"$TMPD/log-$t" 2>&1
	rc=$?
	echo "INFO: fuzz-$t: $(grep -E '^Done [0-9]+ runs' "$TMPD/log-$t")"
	check "fuzz-$t: $runs runs from seed 1: no crash, leak, hang or undefined behaviour" [ $rc = 0 ]
	if [ $rc != 0 ]; then
		tail -n 30 "$TMPD/log-$t"
		mkdir -p "$TOP/build/fuzz/failed" && cp "$TMPD"/crash-"$t"-* "$TOP/build/fuzz/failed/" 2>/dev/null
	fi
done
finish
