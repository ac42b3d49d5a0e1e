#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Output formats side by side (docs/PERFORMANCE.md, "Output formats"): each
# writer (text, dat, perfetto, raw) writing EVENTS events of one trace, and
# the tracer's per-event path (ring consumer, ordering buffer, raw writer),
# ROUNDS interleaved rounds; prints events/s, ratios to the text writer and
# a PASS/MISS line per target. RAW is a recorded raw trace; without one the
# bench writes a synthetic boot-shaped one. Builds itself against
# build/libvmmtrace.a with the Makefile's own flags; not a default target,
# since it is run by hand, not by the tests.
#   bench/output/run.sh [-n EVENTS] [-r ROUNDS] [-c CPUS] [RAW]
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/bench/bench-output
make --no-print-directory -s -C "$top" -j2 build/libvmmtrace.a
# Ask make for CFLAGS and LIBS so the bench builds exactly as the library did.
# shellcheck disable=SC2016  # $(...) here is make's, not the shell's
flags=$(make --no-print-directory -s -C "$top" \
	--eval 'bench-flags: ; @echo "$(filter-out -MMD -MP,$(CFLAGS))"; echo "$(LIBS)"' bench-flags)
cflags=$(sed -n 1p <<<"$flags")
libs=$(sed -n 2p <<<"$flags")
mkdir -p "$(dirname "$out")"
# shellcheck disable=SC2086  # word splitting of the flag lists is wanted
(cd "$top" && ${CC:-cc} $cflags -o "$out" bench/output/bench-output.c build/libvmmtrace.a $libs)
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'); load average $(cut -d' ' -f1-3 /proc/loadavg) before"
"$out" "$@"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) after"
