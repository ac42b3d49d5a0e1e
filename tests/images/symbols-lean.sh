#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# vmmtrace symbols on the lean kernel, whose build left a System.map and an
# unstripped vmlinux to check against; then on copies whose kallsyms tables
# are damaged, which must get a clear error and never a crash or a hang.
. "$(dirname "$0")/../lib.sh"
require_file "$LEAN_BZIMAGE"
require_file "$LEAN_VMLINUX"
MAP=$LEAN_DIR/System.map
require_file "$MAP"
out=$TMPD/out err=$TMPD/err
not_grep() { ! grep -q "$@"; }
says() { [ "$1" = "$2" ] && grep -q "$3" "$err"; }	# says RC WANT PATTERN

"$VMMTRACE" symbols "$LEAN_VMLINUX" >"$out" 2>"$err"
check "unstripped vmlinux: symbols from .symtab" grep -q ' symbols from .symtab' "$err"
check "its listing is System.map, line for line" cmp -s <(sort "$out") <(sort "$MAP")

"$VMMTRACE" symbols "$LEAN_BZIMAGE" >"$out" 2>"$err"
check "bzImage: symbols from kallsyms" grep -q ' symbols from kallsyms (' "$err"
# kallsyms types per-cpu symbols 'A'; everything else must be in System.map as is.
check "every recovered symbol other than per-cpu is in System.map" \
	[ "$(grep -v ' A ' "$out" | sort | comm -23 - <(sort "$MAP") | wc -l)" = 0 ]
check "and every per-cpu one is there by name and address" \
	[ "$(grep ' A ' "$out" | cut -d' ' -f1,3 | sort | comm -23 - <(cut -d' ' -f1,3 "$MAP" | sort) | wc -l)" = 0 ]

"$VMMTRACE" symbols "$LEAN_BZIMAGE" --system-map "$MAP" -v >"$out" 2>"$err"
check "--system-map: used, and found to agree with kallsyms" \
	grep -q "System.map agrees with the image's kallsyms" "$err"
check "--system-map: no disagreement reported" not_grep warning "$err"

# A copy with a wrong symbol: the disagreement is reported, with an example.
sed 's/ T start_kernel$/ T start_kernel_renamed/' "$MAP" >"$TMPD/wrong.map"
"$VMMTRACE" symbols "$LEAN_BZIMAGE" --system-map "$TMPD/wrong.map" >/dev/null 2>"$err"
check "a wrong System.map: disagreement reported" \
	grep -q "disagrees with the image's kallsyms: 1 of" "$err"
check "... naming the symbol" grep -q 'not in reference: .* T start_kernel$' "$err"

# Damaged copies: strip the symbols, then break the kallsyms tables.
va() { awk -v n="$1" '$3 == n { print $1 }' "$MAP"; }
read -r ro_va ro_off < <(readelf -SW "$LEAN_VMLINUX" |
	awk '{ for (i = 1; i < NF; i++) if ($i == ".rodata") print $(i + 2), $(i + 3) }')
file_off() { echo $(( 16#$ro_off + 16#$(va "$1") - 16#$ro_va )); }
objcopy --strip-all "$LEAN_VMLINUX" "$TMPD/stripped"
"$VMMTRACE" symbols "$TMPD/stripped" start_kernel >"$out" 2>"$err"
check "the stripped copy still has its kallsyms" says $? 0 ' symbols from kallsyms'
damage() {	# damage NAME SYMBOL BYTES SOURCE: overwrite BYTES at SYMBOL's table
	cp "$TMPD/stripped" "$TMPD/$1"
	dd if="$4" of="$TMPD/$1" bs=1 seek="$(file_off "$2")" count="$3" conv=notrunc status=none
}
damage notokens kallsyms_token_table 1024 /dev/zero
timeout 20 "$VMMTRACE" symbols "$TMPD/notokens" >/dev/null 2>"$err"
check "no token table: exit 2, saying so and suggesting --system-map" \
	says $? 2 '^vmmtrace symbols: .*no kallsyms tables found.*--system-map FILE'
check "... in one line" [ "$(wc -l <"$err")" = 1 ]
"$VMMTRACE" symbols "$TMPD/notokens" --system-map "$MAP" start_kernel >"$out" 2>"$err"
check "... which then works, noting the map is unchecked" says $? 0 'is used unchecked'
check "... and finds start_kernel" grep -q ' T start_kernel$' "$out"
damage nomarkers kallsyms_markers 64 /dev/urandom
timeout 20 "$VMMTRACE" symbols "$TMPD/nomarkers" >/dev/null 2>"$err"
check "broken markers: exit 2, tables found but refused" says $? 2 'do not check out'
damage nooffsets kallsyms_offsets 256 /dev/urandom
timeout 20 "$VMMTRACE" symbols "$TMPD/nooffsets" >/dev/null 2>"$err"
check "broken offsets: exit 2, addresses refused" says $? 2 '_stext'

# Random bytes over random parts of the tables: an answer or exit 2, quickly.
start=$(file_off kallsyms_offsets) end=$(( $(file_off kallsyms_token_index) + 512 ))
crashes=0
for i in $(seq 1 12); do
	cp "$TMPD/stripped" "$TMPD/random"
	at=$(( start + (RANDOM * 32768 + RANDOM) % (end - start) ))
	dd if=/dev/urandom of="$TMPD/random" bs=1 seek="$at" count=$(( (RANDOM % 4096) + 1 )) \
		conv=notrunc status=none
	timeout 20 "$VMMTRACE" symbols "$TMPD/random" >/dev/null 2>"$err"
	rc=$?
	[ $rc = 0 ] || [ $rc = 2 ] || { crashes=$((crashes + 1)); echo "INFO: exit $rc, damage at $at"; }
done
check "12 random damages: no crash, no hang" [ $crashes = 0 ]
finish
