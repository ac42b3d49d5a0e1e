#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Builds every libFuzzer target of tests/fuzz/ (ASan, UBSan; see
# tests/fuzz/build.sh) and runs each for FUZZ_SECONDS (default 10) from its
# committed seeds and the corpus kept in build/fuzz: any crash, leak,
# timeout, out-of-memory or sanitizer report fails. A short run catches
# regressions on known inputs; scripts/fuzz.sh does the long runs.
. "$(dirname "$0")/../lib.sh"
seconds=${FUZZ_SECONDS:-10}
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
	mkdir -p "$FUZZ_DIR/corpus-$t"
	"$FUZZ_DIR/fuzz-$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$TMPD/crash-$t-" "$FUZZ_DIR/corpus-$t" "tests/fuzz/seeds/$t" \
		>"$TMPD/log-$t" 2>&1
	rc=$?
	echo "INFO: fuzz-$t: $(grep -E '^Done [0-9]+ runs' "$TMPD/log-$t")"
	check "fuzz-$t: $seconds s: no crash, leak, hang or undefined behaviour" [ $rc = 0 ]
	if [ $rc != 0 ]; then
		tail -n 30 "$TMPD/log-$t"
		mkdir -p "$TOP/build/fuzz/failed" && cp "$TMPD"/crash-"$t"-* "$TOP/build/fuzz/failed/" 2>/dev/null
	fi
done
finish
