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
#  - traced, `--trace start_kernel --trace kernel_init` on 2 vCPUs, it boots
#    to "Run /init" and reboots (status 0) with exactly those two events,
#    once each; its command line, given whole without nokaslr, gets it
#    (with -cpu max the kernel would randomise its base from RNDR); the
#    tasks and arguments come from the Image's own BTF (found in the file:
#    kallsyms does not name __start_BTF): swapper/0-0 in start_kernel,
#    kernel_init(unused=0x0), uname's task in __arm64_sys_newuname; Without KALLSYMS_ALL its kallsyms has no data symbols and
#    Debian's System.map is a placeholder: __mcount_loc's bounds come from
#    the Image's relocations (image-reloc.c), the early rings go in the
#    init data's tail and move at the hand-over (host-qemu.c);
#  - `--trace '*'` on 2 vCPUs (every one of its ~42,000 slots) from the
#    first call to the reboot: over 4 million events, every one the summary
#    counts written, none dropped, no warning; each CPU's in its own ring
#    under its own number (trace_all_cpus_check): its kallsyms has no
#    cpu_number, whose address comes from the code that reads it
#    (a64-percpu.c);
#  - the slots vmmtrace found are the kernel's own: outside .init.text
#    there are exactly as many as the guest's available_filter_functions
#    lists, under the same names;
#  - without padding below _etext (the Image with those 8 KiB made
#    non-zero): the stub in the guard page at _end, swapper_pg_dir from
#    head.S's code, a --graph across paging_init;
#  - with STOCK_ARM64_PART=graph (tests/e2e/stock-arm64-graph.sh, the long
#    tier: a boot of ~100 s), only this: `--graph --trace '*'` on 2 vCPUs
#    with syscall-loop (graph_star): every return hooked from start_kernel
#    to the reboot comes back right, with pointer authentication and BTI on
#    (QEMU's -cpu max has both, Debian's kernel uses both): each hooked
#    function signs the stub's return address with paciasp and
#    authenticates it before its ret.
. "$(dirname "$0")/../lib.sh"
require_file "$VMMTRACE"
STOCK=$VMMTRACE_CACHE/stock-arm64-Image
require_file "$STOCK"
require_file "$INITRAMFS_ARM64"

if [ "${STOCK_ARM64_PART:-}" = graph ]; then
	graph_star "$STOCK" "$INITRAMFS_ARM64" "vmmtrace.steps=syscall-loop vmmtrace.loops=20 vmmtrace.loop_cpus=2" \
		'^VMMTRACE-RESULT syscall-loop PASS 2 workers'
	check "--graph '*': the kernel used pointer authentication and BTI" \
		eval "grep -q 'CPU features: detected: Address authentication' '$TMPD/star.console' &&
		      grep -q 'CPU features: detected: Branch Target Identification' '$TMPD/star.console'"
	finish
fi

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

timeout -k 5 300 "$VMMTRACE" boot "$STOCK" --host qemu --cpus 2 --initrd "$INITRAMFS_ARM64" \
	--trace start_kernel --trace kernel_init --trace __arm64_sys_newuname --args \
	-o "$TMPD/trace" --format text --console "$TMPD/tconsole" -v \
	--cmdline-replace "console=ttyAMA0 panic=-1 vmmtrace.steps=uname,ftrace-funcs" </dev/null >/dev/null 2>"$TMPD/trace.err"
rc=$?
tr -d '\r' <"$TMPD/tconsole" >"$TMPD/tcon"
grep '^vmmtrace: trace:' "$TMPD/trace.err" | sed 's/^/INFO: /'
check "traced, the stock kernel boots to Run /init, its steps pass, it reboots: status 0 (got $rc)" \
	eval "[ $rc = 0 ] && grep -q 'Run /init as init process' '$TMPD/tcon' && grep -q '^VMMTRACE-INIT: done passed=2 failed=0' '$TMPD/tcon'"
events="start_kernel=$(grep -c ': start_kernel(' "$TMPD/trace") kernel_init=$(grep -c ': kernel_init(' "$TMPD/trace")"
check "the trace holds start_kernel and kernel_init, once each ($events)" test "$events" = "start_kernel=1 kernel_init=1"
check "start_kernel was called from __primary_switched" grep -qE ': start_kernel\(\) <-__primary_switched$' "$TMPD/trace"
check "tasks and arguments from the Image's own BTF: swapper/0-0 in start_kernel, kernel_init(unused=0x0), uname's own task in its syscall" \
	eval "grep -q 'tasks and context from .* (.BTF)' '$TMPD/trace.err' && grep -qE '^ *swapper/0-0 .*: start_kernel\(\) <-' '$TMPD/trace' && grep -qE ': kernel_init\(unused=0x0\) <-ret_from_fork$' '$TMPD/trace' && grep -qE '^ *uname-[0-9]+ .*: __arm64_sys_newuname\(regs=0x[0-9a-f]+\) <-invoke_syscall$' '$TMPD/trace'"
check "a command line without nokaslr gets it, and -v says so (the kernel would randomise its base otherwise)" \
	eval "grep -q '^vmmtrace: info: traced: nokaslr added to the command line' '$TMPD/trace.err' && grep -q 'Kernel command line: console=ttyAMA0 panic=-1 vmmtrace.steps=uname,ftrace-funcs nokaslr' '$TMPD/tcon'"
check "nothing dropped" grep -qE '^vmmtrace: trace: [0-9]+ events .* 0 dropped \(0 by the stub, 0 lost\)' "$TMPD/trace.err"
check "no warning from the guest" sh -c "! grep -qE 'Oops|BUG:|WARNING:|ftrace failed' '$TMPD/tcon'"

trace_all_count all "$STOCK" --host qemu --cpus 2 --initrd "$INITRAMFS_ARM64" --cmdline "vmmtrace.steps=uname"
check "--trace '*', 2 vCPUs: /init finished and the guest rebooted: status 0 (got $rc)" \
	eval "[ $rc = 0 ] && tr -d '\r' <'$TMPD/all.con' | grep -q '^VMMTRACE-INIT: done passed=1 failed=0'"
check "--trace '*', 2 vCPUs: $n events (over 4 million), every one counted written, none dropped, no warning" \
	eval "[ '$n' -gt 4000000 ] && grep -qE '^vmmtrace: trace: $n events .* 0 dropped' '$TMPD/all.err' && ! tr -d '\r' <'$TMPD/all.con' | grep -qE 'Oops|WARNING:|ftrace failed'"
trace_all_cpus_check all
check "--trace '*': the CPU number known (cpu_number from the code)" sh -c "! grep -q 'CPU number is unknown' '$TMPD/all.err'"

# The slots against the guest's own list of traceable functions (init text is freed by then).
"$VMMTRACE" symbols "$STOCK" 2>/dev/null | awk '$3 == "_sinittext" || $3 == "_einittext" { print $1 }' | paste -sd' ' >"$TMPD/init"
read -r ilo ihi <"$TMPD/init"
"$VMMTRACE" symbols --slots "$STOCK" 2>/dev/null | awk -v lo="$ilo" -v hi="$ihi" '$1 < lo || $1 >= hi { print $2 }' >"$TMPD/slots"
sed -n 's/^FFUNC //p' "$TMPD/tcon" >"$TMPD/ffunc"
nslots=$(wc -l <"$TMPD/slots")
nffunc=$(wc -l <"$TMPD/ffunc")
check "slots outside .init.text: $nslots, the guest's available_filter_functions: $nffunc" \
	eval "[ '$nslots' = '$nffunc' ] && [ '$nslots' -gt 40000 ]"
grep -v '^\[no-symbol' "$TMPD/slots" | sort -u >"$TMPD/slot.names"
sort -u "$TMPD/ffunc" >"$TMPD/ffunc.names"
ndiff=$(comm -3 "$TMPD/slot.names" "$TMPD/ffunc.names" | wc -l)
comm -3 "$TMPD/slot.names" "$TMPD/ffunc.names" | head -n 5 | sed 's/^/INFO:   differs: /'
check "their names are the same ($(wc -l <"$TMPD/ffunc.names") names; $ndiff differ)" test "$ndiff" = 0

# The same kernel without padding below _etext (its 8 KiB there made
# non-zero, as lean-arm64-nopad): the stub goes in the guard page at _end,
# mapped in swapper_pg_dir, whose address this kallsyms lacks and
# vmmtrace reads from head.S's code (a64-percpu.c). --graph across
# paging_init, which enters under init_pg_dir and returns under
# swapper_pg_dir through the stub's return hook.
"$VMMTRACE" symbols "$STOCK" 2>/dev/null | awk '$3 == "_stext" || $3 == "_etext" { print $3, $1 }' >"$TMPD/bounds"
python3 - "$STOCK" "$TMPD/bounds" "$TMPD/stock-nopad" <<'PY'
import sys
img = bytearray(open(sys.argv[1], "rb").read())
b = dict((l.split()[0], int(l.split()[1], 16)) for l in open(sys.argv[2]))
end = b["_etext"] - (b["_stext"] - 0x10000)	# _stext: 64 KiB (SEGMENT_ALIGN) into the Image
assert not any(img[end - 8192:end]), "the 8 KiB below _etext are not zeros"
img[end - 8192:end] = b"\xa5" * 8192
open(sys.argv[3], "wb").write(img)
PY
timeout -k 5 120 "$VMMTRACE" boot "$TMPD/stock-nopad" --host qemu --graph --trace setup_arch --trace paging_init \
	--trace trap_init --stop-at kernel_init -v </dev/null >"$TMPD/nopad.txt" 2>"$TMPD/nopad.err"
rc=$?
check "no padding: the stub went in the guard page at _end (-v), swapper_pg_dir read from head.S's code" \
	eval "grep -q 'the stub goes in the guard page at _end' '$TMPD/nopad.err' &&
	      \"$VMMTRACE\" symbols '$STOCK' 2>/dev/null | grep -q ' D swapper_pg_dir$'"
check "no padding: status 0 (got $rc); paging_init's and setup_arch's blocks close, trap_init after them" \
	eval "[ $rc = 0 ] && grep -A3 'setup_arch() {' '$TMPD/nopad.txt' | tr -d '\n' | grep -qE 'paging_init\(\);.*[0-9] us \|  \}.*trap_init\(\);'"

finish
