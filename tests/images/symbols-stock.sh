#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# vmmtrace symbols on Debian's stock kernel, which carries no symbol table:
# every function and slot must come from the image itself (docs/DESIGN.md §3).
. "$(dirname "$0")/../lib.sh"
require_file "$STOCK_BZIMAGE"
out=$TMPD/out err=$TMPD/err

"$VMMTRACE" symbols "$STOCK_BZIMAGE" -v >"$out" 2>"$err"
check "symbols on the stock bzImage exits 0" [ $? = 0 ]
check "94,266 symbols listed, one per line" [ "$(wc -l <"$out")" = 94266 ]
check "summary names the source and count" grep -q '^vmmtrace symbols: 94266 symbols from kallsyms (' "$err"
check "layout reported: offsets-first, absolute per-cpu, seqs_of_names" \
	grep -q 'offsets-first order.*absolute per-cpu.*kallsyms_seqs_of_names (3-byte)' "$err"
for name in start_kernel setup_arch ftrace_init __fentry__ __start_mcount_loc level3_kernel_pgt; do
	check "$name resolves" grep -qE "^ffffffff[0-9a-f]{8} [A-Za-z] $name\$" "$out"
done
check "start_kernel at ffffffff83079e46 T (as in the guest's /proc/kallsyms)" \
	grep -qx 'ffffffff83079e46 T start_kernel' "$out"
check "percpu symbols are absolute 'A' as /proc/kallsyms shows them" \
	grep -qx '0000000000000000 A fixed_percpu_data' "$out"

# Phase timings (after decompression) from -v: reported, not bounded here
# (a loaded machine would fail a bound; bench/symbols measures the speed).
t_sym=$(sed -n 's/.*symbols \([0-9.]*\) s, slots \([0-9.]*\) s.*/\1 \2/p' "$err")
echo "INFO: symbols and slots after decompression: $t_sym s (bench/symbols for the speed)"
check "-v reports the time of the symbol and slot phases ($t_sym s)" \
	eval "[[ '$t_sym' =~ ^[0-9]+\.[0-9]+\ [0-9]+\.[0-9]+$ ]]"

"$VMMTRACE" symbols "$STOCK_BZIMAGE" --slots >"$out" 2>"$err"
check "--slots exits 0" [ $? = 0 ]
check "40,521 slots listed" [ "$(wc -l <"$out")" = 40521 ]
check "summary: 40521 slots, 2269 in .init.text, all original" \
	grep -q '40521 slots (2269 in .init.text; 40521 original, 0 disabled, 0 enabled-elsewhere, 0 unknown)' "$err"
check "every slot is original on a freshly loaded image" [ "$(awk '$NF != "original"' "$out" | wc -l)" = 0 ]
orphans=$(sed -n 's/.*, \([0-9]*\) without a symbol.*/\1/p' "$err")
check "slots without a symbol are listed ($orphans), not dropped" \
	[ "$(grep -c ' \[no-symbol:' "$out")" = "$orphans" ]
check "start_kernel's slot is call __fentry__ at its first byte" \
	grep -qE '^ffffffff83079e46 start_kernel e8 [0-9a-f ]{11} original$' "$out"

"$VMMTRACE" symbols "$STOCK_BZIMAGE" --functions >"$out" 2>/dev/null
check "--functions: one function per slot that has one" \
	[ "$(wc -l <"$out")" = $((40521 - orphans)) ]
"$VMMTRACE" symbols "$STOCK_BZIMAGE" --slots 'vfs_*' '!vfs_write*' >"$out" 2>/dev/null
check "filtered slots are vfs_* but no vfs_write*" \
	awk 'NR > 0 { n++ } $2 !~ /^vfs_/ || $2 ~ /^vfs_write/ { bad++ } END { exit !(n > 10 && !bad) }' "$out"
"$VMMTRACE" symbols "$STOCK_BZIMAGE" start_kernel setup_arch >"$out" 2>/dev/null
check "two names, two lines" [ "$(wc -l <"$out")" = 2 ]

# Command-line errors: one line, exit status 2.
one_line() { [ "$(wc -l <"$1")" = 1 ] && grep -q '^vmmtrace symbols: ' "$1"; }
bad() {
	local what=$1; shift
	"$VMMTRACE" symbols "$@" >/dev/null 2>"$err"
	local rc=$?
	check "$what: exit 2" [ $rc = 2 ]
	check "$what: one line 'vmmtrace symbols: ...'" one_line "$err"
}
bad "no KERNEL"
bad "unknown option" "$STOCK_BZIMAGE" --bogus
bad "missing kernel file" /nonexistent/bzImage
bad "index pattern" "$STOCK_BZIMAGE" 123
bad "Debian's placeholder System.map" "$STOCK_BZIMAGE" --system-map \
	"$VMMTRACE_CACHE/linux-image-6.1.0-56-amd64/boot/System.map-6.1.0-56-amd64"
check "the placeholder is recognised as one" grep -q placeholder "$err"
finish
