#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Debian's stock arm64 kernel (scripts/fetch-debian-kernel.sh arm64: a
# relocatable Image, KASLR unless told nokaslr) under QEMU, untraced, with
# the arm64 test initramfs plus every text symbol's name
# (tests/guest/make-names-initrd.sh):
#  - it boots to "Run /init" and its /init's steps pass; the guest reboots;
#  - the guest's own /proc/kallsyms holds exactly what `vmmtrace symbols`
#    recovered from the Image for every text symbol name (address, type,
#    name; names that several symbols share compared as a whole): the image
#    reader relocates it as the nokaslr boot vmmtrace's command line asks for;
#  - tracing it is refused in one line (status 2): without KALLSYMS_ALL its
#    __mcount_loc bounds are not in kallsyms, and Debian's packaged
#    System.map is a placeholder, so vmmtrace finds no slots (issue 12).
. "$(dirname "$0")/../lib.sh"
require_file "$VMMTRACE"
STOCK=$VMMTRACE_CACHE/stock-arm64-Image
require_file "$STOCK"
require_file "$INITRAMFS_ARM64"

"$VMMTRACE" symbols "$STOCK" 2>/dev/null | awk '$2 ~ /^[tTwW]$/' | sort -u >"$TMPD/want"
awk '{ print $3 }' "$TMPD/want" | sort -u >"$TMPD/names.txt"
nnames=$(wc -l <"$TMPD/names.txt")
check "vmmtrace symbols lists over 40000 text symbol names ($nnames)" [ "$nnames" -gt 40000 ]
bash "$TOP/tests/guest/make-names-initrd.sh" "$TMPD/names.txt" "$TMPD/names.cpio"
cat "$INITRAMFS_ARM64" "$TMPD/names.cpio" >"$TMPD/initrd.cpio"
timeout -k 5 300 "$VMMTRACE" boot "$STOCK" --host qemu --cpus 2 --initrd "$TMPD/initrd.cpio" \
	--cmdline "vmmtrace.steps=uname,kallsyms vmmtrace.kallsyms_max=1000000" --console "$TMPD/console" \
	</dev/null >/dev/null 2>"$TMPD/err"
rc=$?
tr -d '\r' <"$TMPD/console" >"$TMPD/con"
echo "INFO: stock arm64: status $rc; $(grep -m1 'Linux version' "$TMPD/con" | cut -c1-100)"
check "the stock kernel boots to Run /init, its steps pass, it reboots: status 0 (got $rc)" \
	eval "[ $rc = 0 ] && grep -q 'Run /init as init process' '$TMPD/con' && grep -q '^VMMTRACE-INIT: done passed=2 failed=0' '$TMPD/con'"
# Every kallsyms line with one of the names, against the recovered symbols of those names.
sed -n 's/^KSYM \([0-9a-f]*\) \([a-zA-Z]\) \([^ ]*\)$/\1 \2 \3/p' "$TMPD/con" | sort -u >"$TMPD/got"
ngot=$(wc -l <"$TMPD/got")
ndiff=$(comm -3 "$TMPD/want" "$TMPD/got" | wc -l)
echo "INFO: $(wc -l <"$TMPD/want") recovered text symbols, $ngot kallsyms lines; first differences:"
comm -3 "$TMPD/want" "$TMPD/got" | head -n 5 | sed 's/^/INFO:   /'
check "the guest's /proc/kallsyms equals the recovered symbols for all $nnames text names ($ndiff lines differ)" \
	eval "[ '$ndiff' = 0 ] && [ '$ngot' -gt 40000 ]"

timeout -k 5 60 "$VMMTRACE" boot "$STOCK" --host qemu --trace start_kernel --trace kernel_init \
	</dev/null >/dev/null 2>"$TMPD/trace.err"
rc=$?
check "tracing it: refused in one line, status 2, naming the missing __mcount_loc bounds (got $rc: $(cat "$TMPD/trace.err"))" \
	eval "[ $rc = 2 ] && [ \$(wc -l <'$TMPD/trace.err') = 1 ] && grep -q 'no __start_mcount_loc/__stop_mcount_loc symbols' '$TMPD/trace.err'"
finish
