#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# vmmtrace symbols on the lean arm64 and riscv64 kernels, against the
# System.map their build left: the raw Image (no ELF headers: symbols from
# its kallsyms tables alone, placed at the link address vmm/image/image-raw.c
# works out), the same gzip'ed (Image.gz, as distributions ship it), the
# vmlinux (.symtab) and a stripped copy of it (kallsyms through the ELF).
. "$(dirname "$0")/../lib.sh"
out=$TMPD/out err=$TMPD/err

text() { grep -E '^[0-9a-f]{16} [tT] ' "$1" | sort; }
# System.map's text symbols less those scripts/kallsyms (6.1) never keeps:
# its ignored prefixes (the EFI stub's private __efistub_ copies, linker
# thunks), suffixes and infixes.
kallsyms_text() {
	text "$1" | grep -vE ' (__efistub_|__AArch64ADRPThunk_|__ARMV5PILongThunk_|__ARMV7PILongThunk_|__ThumbV7PILongThunk_|__LA25Thunk_|__microLA25Thunk_|__kcfi_typeid_)|(_from_arm|_from_thumb|_veneer)$|\.(long|plt)_branch\.'
}
# Symbols in $1 that System.map $2 lacks (name, address and type).
not_in_map() { sort "$1" | comm -23 - <(sort "$2") | wc -l; }

# The listing of one kernel file whose symbols come from kallsyms.
from_kallsyms() {	# from_kallsyms ARCH WHAT FILE MAP
	local n
	"$VMMTRACE" symbols "$3" >"$out" 2>"$err"
	check "$1 $2: exit 0, symbols from kallsyms" eval "[ $? = 0 ] && grep -q ' symbols from kallsyms (' '$err'"
	n=$(text "$out" | wc -l)
	check "$1 $2: its $n text symbols are System.map's, exactly (those kallsyms keeps)" \
		cmp -s <(text "$out") <(kallsyms_text "$4")
	check "$1 $2: every symbol it lists is in System.map as is" [ "$(not_in_map "$out" "$4")" = 0 ]
}

for arch in arm64 riscv64; do
	dir=$VMMTRACE_CACHE/lean-$arch map=$VMMTRACE_CACHE/lean-$arch/System.map missing=
	for f in Image vmlinux System.map; do
		[ -e "$dir/$f" ] || missing="$missing $f"
	done
	if [ -n "$missing" ]; then
		fail "$arch: the lean kernel lacks$missing in $dir: build it with scripts/build-lean-kernel.sh $arch"
		continue
	fi
	from_kallsyms $arch Image "$dir/Image" "$map"
	cp "$dir/Image" "$TMPD/Image-$arch" && gzip -k "$TMPD/Image-$arch"
	from_kallsyms $arch Image.gz "$TMPD/Image-$arch.gz" "$map"

	"$VMMTRACE" symbols "$dir/Image" --system-map "$map" -v >/dev/null 2>"$err"
	check "$arch Image: --system-map agrees with the Image's kallsyms" \
		grep -q "System.map agrees with the image's kallsyms" "$err"
	"$VMMTRACE" symbols "$dir/Image" start_kernel >"$out" 2>"$err"
	check "$arch Image: start_kernel where System.map has it" \
		eval "[ \"\$(cat '$out')\" = \"\$(grep ' T start_kernel$' '$map')\" ]"

	"$VMMTRACE" symbols "$dir/vmlinux" -v >"$out" 2>"$err"
	check "$arch vmlinux: symbols from .symtab" grep -q ' symbols from .symtab' "$err"
	check "$arch vmlinux: its text symbols are System.map's, exactly" cmp -s <(text "$out") <(text "$map")
	check "$arch vmlinux: its listing is System.map, line for line" cmp -s <(sort "$out") <(sort "$map")
	check "$arch vmlinux: .symtab agrees with its kallsyms" grep -q '.symtab agrees with the image' "$err"

	objcopy=$(command -v "${arch/arm64/aarch64}-linux-gnu-objcopy" llvm-objcopy | head -1)
	if [ -n "$objcopy" ]; then
		"$objcopy" --strip-all "$dir/vmlinux" "$TMPD/stripped-$arch"
		from_kallsyms $arch "stripped vmlinux" "$TMPD/stripped-$arch" "$map"
	else
		echo "INFO: no ${arch/arm64/aarch64}-linux-gnu-objcopy nor llvm-objcopy: stripped vmlinux not tried"
	fi

	# Damaged copies: one line, exit 2, never a crash or a hang.
	head -c 60 "$dir/Image" >"$TMPD/cut"
	timeout 20 "$VMMTRACE" symbols "$TMPD/cut" >/dev/null 2>"$err"
	check "$arch Image cut inside its header: exit 2, one line" \
		eval "[ $? = 2 ] && [ \$(wc -l <'$err') = 1 ] && grep -q 'Image: truncated' '$err'"
	head -c 65536 "$dir/Image" >"$TMPD/head"
	timeout 20 "$VMMTRACE" symbols "$TMPD/head" >/dev/null 2>"$err"
	check "$arch Image without its kallsyms: exit 2, one line suggesting the vmlinux" \
		eval "[ $? = 2 ] && [ \$(wc -l <'$err') = 1 ] && grep -q 'no kallsyms tables found.*give its vmlinux' '$err'"
done
finish
