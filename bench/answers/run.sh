#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Issue 32's answers, timed (docs/PERFORMANCE.md, "Answers"): `vmmtrace
# diff` of two recordings of EVENTS events each (a synthetic --graph boot
# and the same boot parting once, bench/answers/gen-answers.c), and
# `vmmtrace report --chart` of one, on one core (taskset -c 1), ROUNDS
# times each; prints the best and the median wall time, the CPU time, the
# peak memory and the rate, as a table. Builds its generator against
# build/libvmmtrace.a with the Makefile's own flags; run by hand.
#   bench/answers/run.sh [-n EVENTS] [-r ROUNDS]
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
events=5000000 rounds=3
while getopts n:r: o; do
	case $o in n) events=$OPTARG ;; r) rounds=$OPTARG ;; *) echo "usage: $0 [-n EVENTS] [-r ROUNDS]" >&2; exit 2 ;; esac
done
gen=$top/build/bench/gen-answers
make --no-print-directory -s -C "$top" -j2 build/libvmmtrace.a build/vmmtrace
# shellcheck disable=SC2016  # $(...) here is make's, not the shell's
flags=$(make --no-print-directory -s -C "$top" \
	--eval 'bench-flags: ; @echo "$(filter-out -MMD -MP,$(CFLAGS))"; echo "$(LIBS)"' bench-flags)
mkdir -p "$(dirname "$gen")"
# shellcheck disable=SC2086  # word splitting of the flag lists is wanted
(cd "$top" && ${CC:-cc} $(sed -n 1p <<<"$flags") -o "$gen" bench/answers/gen-answers.c build/libvmmtrace.a $(sed -n 2p <<<"$flags"))
dir=$(mktemp -d "${TMPDIR:-/tmp}/bench-answers.XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$gen" "$dir/a.raw" "$events" 0 >/dev/null
"$gen" "$dir/b.raw" "$events" 1 >/dev/null
V=$top/build/vmmtrace
cpu=1
[ "$(nproc)" -gt 1 ] || cpu=0
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'); load average $(cut -d' ' -f1-3 /proc/loadavg) before"
echo "recordings: $events events each, $(($(stat -c %s "$dir/a.raw") / 1000000)) MB and $(($(stat -c %s "$dir/b.raw") / 1000000)) MB (raw)"
# measure NAME EXPECTED-STATUS COMMAND...: ROUNDS runs on one core; a table row.
measure() {
	local name=$1 want=$2 i rc
	shift 2
	: >"$dir/times"
	for ((i = 0; i < rounds; i++)); do
		rc=0
		/usr/bin/time -f '%e %U %S %M' -o "$dir/t" taskset -c "$cpu" "$@" >"$dir/out" 2>&1 || rc=$?
		[ "$rc" = "$want" ] || { echo "$name: status $rc, want $want: $(tail -1 "$dir/out")" >&2; exit 1; }
		tail -n 1 "$dir/t" >>"$dir/times"	# after "Command exited with non-zero status 1"
	done
	sort -n "$dir/times" | awk -v name="$name" -v ev="$events" -v r="$rounds" '
		{ wall[NR] = $1; cpu[NR] = $2 + $3; if ($4 > mem) mem = $4 }
		END { m = wall[int((r + 1) / 2)]; printf "%-34s %8.2f %8.2f %8.2f %8.0f %9.1f\n", name, wall[1], m, cpu[1], mem / 1024, ev / wall[1] / 1e6 }'
}
printf "%-34s %8s %8s %8s %8s %9s\n" "one core, $rounds rounds" "best s" "median s" "cpu s" "peak MB" "M ev/s"
measure "diff A B (they part: exit 1)" 1 "$V" diff "$dir/a.raw" "$dir/b.raw"
measure "diff A B --format json" 1 "$V" diff "$dir/a.raw" "$dir/b.raw" --format json
measure "report A --chart" 0 "$V" report "$dir/a.raw" --chart "$dir/a.svg"
measure "report A --stat (for scale)" 0 "$V" report "$dir/a.raw" --stat
echo "chart: $(stat -c %s "$dir/a.svg") bytes; diff's first line: $("$V" diff "$dir/a.raw" "$dir/b.raw" | head -1)"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) after"
