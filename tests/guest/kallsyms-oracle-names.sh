#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The booted guest's /proc/kallsyms is an independent oracle for the symbols
# vmmtrace recovers from the image (docs/DESIGN.md §3). This script does the
# host's two halves of that check around the init's `kallsyms` step
# (docs/TEST-GUEST.md), which prints "KSYM addr type name" for the names in
# /test/names.txt:
#
#   kallsyms-oracle-names.sh pick KERNEL [N] [SEED] > expected
#       start_kernel plus N random symbols (default 64) whose names are
#       unique in `vmmtrace symbols KERNEL` and whose address is not 0 (the
#       step treats an all-zero address as hidden), per-cpu ones included,
#       as "ADDRESS TYPE NAME" lines. A SEED makes the pick repeatable.
#   kallsyms-oracle-names.sh names expected > names.txt
#       The names alone, for tests/guest/make-names-initrd.sh.
#   kallsyms-oracle-names.sh check expected CONSOLE_LOG [--allow-kaslr]
#       Compares the guest's KSYM lines with the expected ones: one PASS or
#       FAIL line per name, exit 0 when all match. vmmtrace boots without the
#       kernel's decompressor, so there is no KASLR and the addresses must be
#       equal; --allow-kaslr accepts one constant offset (from start_kernel)
#       for a kernel booted through its decompressor. Per-cpu ('A') symbols
#       never move.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
VMMTRACE=${VMMTRACE:-$top/build/vmmtrace}

usage() { sed -n '3,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

pick() {
	local kernel=$1 n=${2:-64} seed=${3:-$RANDOM} all
	all=$(mktemp) || exit 1
	if ! "$VMMTRACE" symbols "$kernel" >"$all" 2>"$all.err"; then
		cat "$all.err" >&2
		rm -f "$all" "$all.err"
		exit 1
	fi
	# Unique names only: a static function's name may appear several times.
	awk '{ n[$3]++; line[$3] = $0 } END { for (k in n) if (n[k] == 1) print line[k] }' "$all" |
		grep -v '^0* ' | sort -k3 >"$all.unique"
	{
		grep -E ' T start_kernel$' "$all.unique"
		awk -v seed="$seed" 'BEGIN { srand(seed) } $3 != "start_kernel" { print rand() "\t" $0 }' \
			"$all.unique" | sort -n | head -n "$n" | cut -f2-
	} | sort -u
	rm -f "$all" "$all.err" "$all.unique"
}

check() {
	local expected=$1 log=$2 allow=${3:-} fails=0 delta=0 guest gk ek
	guest=$(mktemp) || exit 1
	# KSYM lines of the kernel proper (module lines carry a fifth field).
	tr -d '\r' <"$log" | grep -oE 'KSYM [0-9a-f]{16} [^ ]+ [^ ]+( \[[^]]*\])?$' |
		awk 'NF == 4 { print $2, $3, $4 }' >"$guest"
	gk=$(awk '$3 == "start_kernel" { print $1; exit }' "$guest")
	ek=$(awk '$3 == "start_kernel" { print $1; exit }' "$expected")
	if [ -n "$gk" ] && [ -n "$ek" ] && [ "$gk" != "$ek" ]; then
		delta=$(( 16#$gk - 16#$ek ))
		echo "INFO: the guest's kernel text moved by $delta bytes (KASLR)"
		[ "$allow" = --allow-kaslr ] || { echo "FAIL: addresses moved, but vmmtrace boots without KASLR"; fails=1; }
	fi
	while read -r addr type name; do
		local want got count
		want=$addr
		[ "$type" = A ] || want=$(printf '%016x' $(( 16#$addr + delta )))
		count=$(awk -v n="$name" '$3 == n' "$guest" | wc -l)
		got=$(awk -v n="$name" '$3 == n { print $1, $2; exit }' "$guest")
		if [ "$count" = 1 ] && [ "$got" = "$want $type" ]; then
			echo "PASS: $name: $want $type"
		else
			echo "FAIL: $name: expected $want $type, the guest has ${got:-no such symbol} ($count entries)"
			fails=$((fails + 1))
		fi
	done <"$expected"
	rm -f "$guest"
	[ "$fails" = 0 ]
}

case "${1:-}" in
pick) [ $# -ge 2 ] || usage; shift; pick "$@" ;;
names) [ $# = 2 ] || usage; cut -d' ' -f3 "$2" ;;
check) [ $# -ge 3 ] || usage; shift; check "$@" ;;
*) usage ;;
esac
