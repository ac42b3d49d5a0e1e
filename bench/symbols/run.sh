#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Times `vmmtrace symbols` on a kernel (default: the stock Debian bzImage):
# the phases it reports with -v (open + decompress, symbols, slots) and the
# whole command, listing every symbol and listing every slot. Prints the
# median of RUNS runs (default 5) of each. Record results in docs/PERFORMANCE.md.
#   bench/symbols/run.sh [KERNEL] [RUNS]
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/common.sh"
kernel=${1:-$VMMTRACE_CACHE/stock-bzImage}
runs=${2:-5}
vmmtrace=${VMMTRACE:-$top/build/vmmtrace}
[ -x "$vmmtrace" ] || { echo "build first: make -j2" >&2; exit 1; }
[ -r "$kernel" ] || { echo "no kernel at $kernel (scripts/setup.sh)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

bench() {	# bench LABEL ARGS...
	local label=$1; shift
	: >"$tmp/open"; : >"$tmp/sym"; : >"$tmp/slots"; : >"$tmp/wall"
	for _ in $(seq "$runs"); do
		local t0 t1
		t0=$(date +%s.%N)
		"$vmmtrace" symbols "$kernel" "$@" -v >/dev/null 2>"$tmp/err"
		t1=$(date +%s.%N)
		sed -n 's/.*open+decompress \([0-9.]*\) s, symbols \([0-9.]*\) s, slots \([0-9.]*\) s.*/\1 \2 \3/p' \
			"$tmp/err" | { read -r o s l; echo "$o" >>"$tmp/open"; echo "$s" >>"$tmp/sym"; echo "$l" >>"$tmp/slots"; }
		echo "$t1 - $t0" | bc >>"$tmp/wall"
	done
	printf '%-22s open+decompress %6.3f s  symbols %6.3f s  slots %6.3f s  whole command %6.3f s\n' \
		"$label" "$(median <"$tmp/open")" "$(median <"$tmp/sym")" "$(median <"$tmp/slots")" \
		"$(median <"$tmp/wall")"
}

echo "kernel: $kernel ($(stat -L -c %s "$kernel") bytes), $runs runs, medians; $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
bench "all symbols"
bench "all slots" --slots
bench "one glob" 'vfs_*'
tail -n1 "$tmp/err"
