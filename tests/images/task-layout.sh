#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# vmmtrace symbols --tasks: the task_struct offsets vmmtrace takes from the
# lean kernel's BTF (vmlinux.btf beside the image, made by pahole from the
# DWARF) equal what pahole reads from the DWARF of the same vmlinux, and the
# per-CPU offsets equal the System.map's. A BTF of another kernel is refused
# in one line with status 2. No guest runs.
. "$(dirname "$0")/../lib.sh"
require_file "$VMMTRACE"
require_file "$LEAN_BZIMAGE"
require_file "$LEAN_DIR/vmlinux.btf"
command -v pahole >/dev/null || { fail "pahole missing (apt-get install dwarves)"; finish; }

"$VMMTRACE" symbols "$LEAN_BZIMAGE" --tasks >"$TMPD/tasks" 2>"$TMPD/err"
check "symbols --tasks: status 0, nothing on stderr" eval "[ $? = 0 ] && [ ! -s '$TMPD/err' ]"
sed 's/^/INFO: /' "$TMPD/tasks"
# The value after a key: the first word that is a number.
got() { awk -v k="$1" 'index($0, k " ") == 1 { for (i = 2; i <= NF; i++) if ($i ~ /^(0x[0-9a-f]+|[0-9]+)$/) { print $i; exit } }' "$TMPD/tasks"; }
pahole -F dwarf -C task_struct "$LEAN_VMLINUX" >"$TMPD/pahole" 2>&1
# pahole: "	TYPE	NAME;	/* OFFSET SIZE */"; members of anonymous unions and structs too.
dwarf() { awk -v m="$1" '$0 ~ ("[ *]" m ";") { for (i = 1; i <= NF; i++) if ($i == "/*") { print $(i + 1); exit } }' "$TMPD/pahole"; }
hex() { printf '%#x' "$1"; }
for m in pid 'comm\[16\]' migration_disabled; do
	name=${m%%\\*}
	want=$(dwarf "$m")
	key=task_struct.$name
	[ "$name" = migration_disabled ] && key=$name
	g=$(got "$key")
	check "task_struct.$name: BTF $g, DWARF (pahole) $want" eval "[ -n '$want' ] && [ '$g' = '$(hex "$want")' ]"
done
ti=$(dwarf thread_info)
check "thread_info.flags: BTF $(got thread_info.flags), DWARF: thread_info at $ti, flags first" \
	eval "[ '$ti' = 0 ] && [ '$(got thread_info.flags)' = 0 ]"
size=$(sed -nE 's@.*/\* size: ([0-9]+),.*@\1@p' "$TMPD/pahole" | tail -1)
check "sizeof(task_struct): $(awk '$1 == "task_struct" { print $2 }' "$TMPD/tasks") here, $size in DWARF" \
	[ "$(awk '$1 == "task_struct" { print $2 }' "$TMPD/tasks")" = "$size" ]
for v in current_task __preempt_count; do
	case $v in current_task) k="current task" ;; *) k="preempt count" ;; esac
	want=$(awk -v s="$v" '$3 == s { print $1 }' "$LEAN_DIR/System.map")
	check "$v: per-CPU offset $(got "$k"), System.map 0x$want" [ "$(got "$k")" = "$(hex "0x$want")" ]
done

if [ -e "$STOCK_BZIMAGE" ]; then
	"$VMMTRACE" symbols "$STOCK_BZIMAGE" --tasks >"$TMPD/stock" 2>&1
	check "the stock kernel's own .BTF: found ($(head -1 "$TMPD/stock"))" grep -q '^btf .*(.BTF)$' "$TMPD/stock"
	"$VMMTRACE" symbols "$STOCK_BZIMAGE" --tasks --btf "$LEAN_DIR/vmlinux.btf" >/dev/null 2>"$TMPD/err"
	rc=$?
	check "--btf of another kernel (the lean one's over the stock image): status 2, one line ($(cat "$TMPD/err"))" \
		eval "[ $rc = 2 ] && [ \$(wc -l <'$TMPD/err') = 1 ] && grep -q 'does not describe this kernel' '$TMPD/err'"
else
	echo "INFO: $STOCK_BZIMAGE absent: the stock kernel's cases are not run"
fi
"$VMMTRACE" symbols "$LEAN_BZIMAGE" --tasks --btf "$LEAN_DIR/vmlinux.btf" >"$TMPD/given" 2>"$TMPD/err"
check "--btf FILE: the same file given explicitly gives the same offsets" \
	eval "[ $? = 0 ] && [ ! -s '$TMPD/err' ] && diff <(sed 1d '$TMPD/tasks') <(sed 1d '$TMPD/given') >/dev/null"
"$VMMTRACE" symbols "$LEAN_BZIMAGE" --tasks --btf "$TMPD/nonexistent.btf" >/dev/null 2>"$TMPD/err"
rc=$?
check "--btf of a missing file: status 2, one line ($(cat "$TMPD/err"))" \
	eval "[ $rc = 2 ] && [ \$(wc -l <'$TMPD/err') = 1 ]"
head -c 4096 /dev/urandom >"$TMPD/junk.btf"
"$VMMTRACE" symbols "$LEAN_BZIMAGE" --tasks --btf "$TMPD/junk.btf" >/dev/null 2>"$TMPD/err"
rc=$?
check "--btf of random bytes: status 2, one line ($(cat "$TMPD/err"))" \
	eval "[ $rc = 2 ] && [ \$(wc -l <'$TMPD/err') = 1 ]"
# A vmlinux.btf found beside the image but not asked for: one that cannot be
# read, or is another kernel's, leaves the tasks unknown; it does not stop
# vmmtrace (an explicit --btf does, above).
mkdir -p "$TMPD/beside"
cp "$LEAN_BZIMAGE" "$TMPD/beside/bzImage"
cp "$TMPD/junk.btf" "$TMPD/beside/vmlinux.btf"
"$VMMTRACE" symbols "$TMPD/beside/bzImage" --tasks >"$TMPD/b1" 2>"$TMPD/err"
check "a broken vmlinux.btf beside the image: status 0, tasks unknown, why on the btf line" \
	eval "[ $? = 0 ] && grep -q '^btf .*cannot read BTF' '$TMPD/b1' && grep -q '^task_struct.comm  *unknown' '$TMPD/b1'"
if [ -e "$STOCK_BZIMAGE" ]; then
	cp "$LEAN_DIR/vmlinux.btf" "$TMPD/beside/vmlinux.btf"
	cp "$STOCK_BZIMAGE" "$TMPD/beside/bzImage"
	"$VMMTRACE" symbols "$TMPD/beside/bzImage" --tasks >"$TMPD/b2" 2>"$TMPD/err"
	rc=$?
	# The stock image has its own .BTF, which comes first.
	check "the image's own .BTF wins over a vmlinux.btf beside it (status $rc)" \
		eval "[ $rc = 0 ] && grep -q '^btf .*(.BTF)$' '$TMPD/b2'"
fi
finish
