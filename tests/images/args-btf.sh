#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# vmmtrace symbols --args: the parameters --args prints for each traceable
# function of the lean kernel, read from its BTF (vmlinux.btf beside the
# image) with libbpf, agree with pahole's own reader of the same BTF
# (pfunct -F btf -P): the same parameters in the same order, their names,
# "..." for variadic functions, and the kind of every parameter whose C type
# says it (pointers, function pointers, structs and unions by value, enums,
# the base integer types and the common typedefs). No guest runs.
. "$(dirname "$0")/../lib.sh"
require_file "$VMMTRACE"
require_file "$LEAN_BZIMAGE"
require_file "$LEAN_DIR/vmlinux.btf"
command -v pfunct >/dev/null || { fail "pfunct missing (apt-get install dwarves)"; finish; }

"$VMMTRACE" symbols "$LEAN_BZIMAGE" --args >"$TMPD/ours" 2>"$TMPD/err"
check "symbols --args: status 0, nothing on stderr" eval "[ $? = 0 ] && [ ! -s '$TMPD/err' ]"
pfunct -F btf -P "$LEAN_DIR/vmlinux.btf" >"$TMPD/pfunct" 2>"$TMPD/pfunct.err"
check "pfunct reads the BTF ($(wc -l <"$TMPD/pfunct") prototypes)" [ -s "$TMPD/pfunct" ]

# pfunct's prototypes in our line format, kinds where the C type says them
# ("-" where a typedef hides it). Names pfunct prints more than once (static
# functions of several files) are left out: --args takes the first, as the
# kernel's btf_find_by_name_kind does, and the order is not pfunct's.
awk '
function kind(t,   b) {
	if (t ~ /\(\*/ || t ~ /\*/) return "ptr"
	b = t; sub(/^const /, "", b); sub(/^volatile /, "", b); gsub(/ +$/, "", b)
	if (b ~ /^struct /) return "STRUCT"
	if (b ~ /^union /) return "UNION"
	if (b ~ /^enum /) return "enum"
	if (b == "int" || b == "s32") return "sint4"
	if (b == "unsigned int" || b == "u32" || b == "gfp_t") return "uint4"
	if (b == "long int" || b == "long long int" || b == "s64" || b == "loff_t" || b == "ssize_t") return "sint8"
	if (b == "long unsigned int" || b == "long long unsigned int" || b == "u64" || b == "size_t") return "uint8"
	if (b == "bool" || b == "_Bool" || b == "u8" || b == "unsigned char") return "uint1"
	if (b == "short int" || b == "s16") return "sint2"
	if (b == "short unsigned int" || b == "u16") return "uint2"
	return "-"
}
{
	line = $0
	open = index(line, "(")
	if (!open || line !~ /\);$/) next
	head = substr(line, 1, open - 1)
	n = split(head, w, /[ *]+/)
	name = w[n]
	body = substr(line, open + 1, length(line) - open - 2)
	# Split at the commas outside parentheses (function pointer parameters).
	np = 0; depth = 0; cur = ""
	for (i = 1; i <= length(body); i++) {
		c = substr(body, i, 1)
		if (c == "(") depth++
		if (c == ")") depth--
		if (c == "," && !depth) { p[++np] = cur; cur = ""; continue }
		cur = cur c
	}
	if (cur != "") p[++np] = cur
	out = name
	for (i = 1; i <= np; i++) {
		q = p[i]; sub(/^ +/, "", q); sub(/ +$/, "", q)
		if (q == "void" && np == 1) break
		if (q == "...") { out = out " ..."; continue }
		if (match(q, /\(\*[A-Za-z_0-9]*\)/)) {
			pn = substr(q, RSTART + 2, RLENGTH - 3); t = q
		} else {
			m = split(q, v, /[ *]+/); pn = v[m]; t = substr(q, 1, length(q) - length(pn))
		}
		out = out " " pn "=" kind(t)
	}
	count[name]++
	proto[name] = out
}
END { for (f in proto) if (count[f] == 1) print proto[f] }' "$TMPD/pfunct" | sort >"$TMPD/want"

# Our lines: kinds reduced to what the oracle can tell ("STRUCT/16" -> STRUCT,
# "enum4"/"senum4" -> enum), and the "+N" of parameters past the six
# registers expanded from pfunct's line, which names them all.
awk 'NR == FNR { want[$1] = $0; next }
$2 == "?" { missing++; next }
($1 in want) {
	split(want[$1], wv, " ")
	out = $1; k = 0
	for (i = 2; i <= NF; i++) {
		if ($i ~ /^\+[0-9]+$/) {
			for (j = 0; j < substr($i, 2) + 0; j++) { k++; out = out " " wv[k + 1] }
			continue
		}
		if ($i == "...") { out = out " ..."; continue }
		k++
		split($i, kv, "=")
		t = kv[2]; sub(/\/[0-9]+$/, "", t); sub(/^s?enum[0-9]+$/, "enum", t)
		# Where a typedef hides the kind from the oracle, take ours.
		split(wv[k + 1], ov, "=")
		if (ov[2] == "-") t = "-"
		out = out " " kv[1] "=" t
	}
	print out
	next
}
{ unmatched++ }
END { printf "%d %d\n", missing + 0, unmatched + 0 > "/dev/stderr" }' "$TMPD/want" "$TMPD/ours" 2>"$TMPD/counts" | sort >"$TMPD/got"
read -r missing unmatched <"$TMPD/counts"
total=$(wc -l <"$TMPD/ours")
compared=$(wc -l <"$TMPD/got")
echo "INFO: $total traceable functions: $compared compared, $missing without a BTF prototype, $unmatched not in pfunct's list or named more than once"
check "most traceable functions have a prototype to compare ($compared of $total)" [ "$compared" -gt $((total * 8 / 10)) ]
join -j1 <(awk '{ print $1 "\t" $0 }' "$TMPD/got" | sort -t $'\t' -k1,1) \
	<(awk '{ print $1 "\t" $0 }' "$TMPD/want" | sort -t $'\t' -k1,1) -t $'\t' |
	awk -F '\t' '{ n++ } $2 != $3 { print "  ours:   " $2; print "  pfunct: " $3; bad++ } END { print n > "/dev/stderr"; exit bad > 0 }' >"$TMPD/diff" 2>"$TMPD/joined"
check "every compared prototype agrees with pfunct: names, order, kinds, variadic ($(cat "$TMPD/joined") joined)" eval "[ ! -s '$TMPD/diff' ] && [ \"\$(cat '$TMPD/joined')\" = $compared ]"
head -20 "$TMPD/diff" | sed 's/^/INFO: /'
for f in 'ksys_dup3 oldfd=uint4 newfd=uint4 flags=sint4' 'close_fd fd=uint4' 'find_task_by_vpid vnr=sint4' \
	'vfs_read file=ptr buf=ptr count=uint8 pos=ptr' '_printk fmt=ptr ...'; do
	check "symbols --args: '$f'" grep -qxF "$f" "$TMPD/ours"
done
check "a struct passed by value takes its words: $(grep -m1 'STRUCT/16' "$TMPD/ours")" grep -q '=STRUCT/16' "$TMPD/ours"
check "a seventh parameter is counted past the six registers: $(grep -m1 ' +[0-9]' "$TMPD/ours")" grep -q ' +[0-9]$' "$TMPD/ours"
"$VMMTRACE" symbols "$LEAN_BZIMAGE" --args --btf /dev/null >/dev/null 2>"$TMPD/err2"
rc=$?
check "symbols --args --btf /dev/null: status 2, one line ($(head -c 160 "$TMPD/err2"))" \
	eval "[ $rc = 2 ] && [ \$(wc -l <'$TMPD/err2') = 1 ]"
finish
