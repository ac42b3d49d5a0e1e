#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Reproducible boots (issue 39): `vmmtrace boot --host qemu --deterministic`
# gives the guest a clock that counts its instructions, and drains the
# rings only while the guest is stopped at a doorbell or at its end, so
# two boots of one kernel trace alike, timestamps included:
#  - the lean x86_64, arm64, loongarch64 and riscv64 kernels, each booted twice with
#    --trace 'init_*' --trace '*_init' --graph to /init and its reboot, 1
#    vCPU, recorded raw: the consoles are byte-identical, `vmmtrace diff`
#    exits 0 and `vmmtrace report` gives byte-identical text; the rings are
#    16M unless asked (no doorbell in these boots), and x86_64 twice more
#    with 64K rings, whose many doorbells repeat alike too;
#  - x86_64 with two of /init's steps swapped: the diff of several runs
#    names the order of do_syscall_64's calls as its one parting;
#  - x86_64 booted again with initcall_blacklist=proc_cmdline_init: diff
#    exits 1 and its first parting point is that initcall under
#    do_one_initcall, and no other function is called in one boot only;
#  - the same kernels on 2 vCPUs under QEMU 10 (the backported one
#    scripts/fetch-qemu-backports.sh caches; riscv64 with its OpenSBI 1.5,
#    --firmware): the two boots alike too, CPU 1's calls in the trace; with
#    Debian 12's OpenSBI 1.1 riscv64 ends at the first stop in one line;
#  - riscv64 (6.1 and 6.12): the two stops of the hand-over, before the kernel starts its
#    timer, each move the clock on by the 10 s vmmtrace's VS timer allows
#    (not to 2^63 ns, where no timer fires again);
#  - what it cannot promise is refused with one line and status 2: the KVM
#    host, more than one vCPU under the system's QEMU 7.2 (riscv64 too).
. "$(dirname "$0")/../lib.sh"
require_file "$VMMTRACE"
require_file "$LEAN_BZIMAGE"
require_file "$INITRAMFS"
A64=$VMMTRACE_CACHE/lean-arm64/Image
LA=$VMMTRACE_CACHE/lean-loongarch64/vmlinux
INITRAMFS_LA=$VMMTRACE_CACHE/initramfs-loongarch64.cpio
GLOBS=(--trace 'init_*' --trace '*_init' --graph)

# det_boot NAME KERNEL INITRD [CMDLINE]: a deterministic boot to the guest's reboot, raw to NAME.raw.
det_boot() {
	local name=$1 kernel=$2 initrd=$3 cmdline=${4:-}
	# shellcheck disable=SC2086
	timeout -k 5 300 "$VMMTRACE" boot "$kernel" --host qemu --deterministic --initrd "$initrd" "${GLOBS[@]}" ${EXTRA:-} \
		${cmdline:+--cmdline "$cmdline"} -o "$TMPD/$name.raw" --console "$TMPD/$name.con" -q </dev/null 2>"$TMPD/$name.err"
	echo "$?" >"$TMPD/$name.rc"
	"$VMMTRACE" report "$TMPD/$name.raw" >"$TMPD/$name.txt" 2>&1
}

# twice TAG KERNEL INITRD DONE [CMDLINE]: two boots alike, call for call and timestamp for timestamp.
twice() {
	local tag=$1 kernel=$2 initrd=$3 done_re=$4 cmdline=${5:-} t0 rc1 rc2 drc n
	t0=$(date +%s)
	det_boot "$tag-1" "$kernel" "$initrd" "$cmdline"
	det_boot "$tag-2" "$kernel" "$initrd" "$cmdline"
	rc1=$(cat "$TMPD/$tag-1.rc") rc2=$(cat "$TMPD/$tag-2.rc")
	n=$(grep -c ' | ' "$TMPD/$tag-1.txt")
	echo "INFO: $tag: two deterministic boots in $(($(date +%s) - t0)) s; $(grep '^vmmtrace: trace:' "$TMPD/$tag-1.err" | head -n 1)"
	doorbells=$(sed -nE 's/^vmmtrace: trace: .* ([0-9]+) doorbells; .*/\1/p' "$TMPD/$tag-1.err")
	check "$tag: both boots reached /init's end and rebooted: status 0 ($rc1, $rc2)" \
		eval "[ $rc1 = 0 ] && [ $rc2 = 0 ] && tr -d '\r' <'$TMPD/$tag-1.con' | grep -q '$done_re' && tr -d '\r' <'$TMPD/$tag-2.con' | grep -q '$done_re'"
	check "$tag: the two consoles are byte-identical" cmp -s "$TMPD/$tag-1.con" "$TMPD/$tag-2.con"
	"$VMMTRACE" diff "$TMPD/$tag-1.raw" "$TMPD/$tag-2.raw" >"$TMPD/$tag.diff" 2>&1
	drc=$?
	check "$tag: vmmtrace diff says the boots agree: status 0 (got $drc; $(head -n 1 "$TMPD/$tag.diff"))" [ "$drc" = 0 ]
	check "$tag: vmmtrace report gives byte-identical text for the two, timestamps included ($n graph lines)" \
		eval "[ '$n' -ge 1000 ] && cmp -s '$TMPD/$tag-1.txt' '$TMPD/$tag-2.txt'"
	cmp -s "$TMPD/$tag-1.txt" "$TMPD/$tag-2.txt" || diff "$TMPD/$tag-1.txt" "$TMPD/$tag-2.txt" | head -n 6 | sed 's/^/INFO: /'
}

twice x86_64 "$LEAN_BZIMAGE" "$INITRAMFS" '^VMMTRACE-INIT: done'
check "x86_64: the rings are 16M by default: no doorbell (${doorbells:-none})" [ "${doorbells:-x}" = 0 ]
EXTRA="--buffer-size 64K" twice x86_64-64K "$LEAN_BZIMAGE" "$INITRAMFS" '^VMMTRACE-INIT: done'
check "x86_64, 64K rings: doorbells (${doorbells:-none}), each at the same record in both boots" [ "${doorbells:-0}" -ge 10 ]
require_file "$A64"
twice arm64 "$A64" "$INITRAMFS_ARM64" '^VMMTRACE-INIT: done'
require_file "$LA"
twice loongarch64 "$LA" "$INITRAMFS_LA" '^CINIT: done' "-- 10 1"
RV=$VMMTRACE_CACHE/lean-riscv64/Image
require_file "$RV"
twice riscv64 "$RV" "$INITRAMFS_RV" '^CINIT: done' "-- 10 1"
RV612=$VMMTRACE_CACHE/lean-riscv64-6.12/Image
require_file "$RV612"
twice riscv64-6.12 "$RV612" "$INITRAMFS_RV" '^CINIT: done' "-- 10 1"
# sched_init, the first traced call after ftrace_init returned, comes 20 s
# on: the two stops moved the clock 10 s each, not to 2^63 ns.
"$VMMTRACE" report "$TMPD/riscv64-1.raw" --trace sched_init --from 20 --to 21 >"$TMPD/rv-late.txt" 2>&1
"$VMMTRACE" report "$TMPD/riscv64-1.raw" --trace poking_init --from 0 --to 1 >"$TMPD/rv-early.txt" 2>&1
check "riscv64: before the hand-over the clock is the guest's (poking_init within its first second)" \
	grep -q ' poking_init();' "$TMPD/rv-early.txt"
check "riscv64: the hand-over's two stops moved the clock 10 s each, no further (sched_init between 20 and 21 s)" \
	grep -q ' sched_init();' "$TMPD/rv-late.txt"
# A riscv64 CPU without Sstc has no vstimecmp to bound the moves: one line, not a hang.
mkdir -p "$TMPD/nosstc"
printf '#!/bin/sh\nexec %s "$@" -cpu rv64,sstc=false\n' "$(command -v qemu-system-riscv64)" >"$TMPD/nosstc/qemu-system-riscv64"
chmod +x "$TMPD/nosstc/qemu-system-riscv64"
PATH="$TMPD/nosstc:$PATH" timeout -k 5 120 "$VMMTRACE" boot "$RV" --host qemu --deterministic --initrd "$INITRAMFS_RV" \
	--trace start_kernel -o /dev/null </dev/null >"$TMPD/nosstc.out" 2>&1
rc=$?
check "riscv64 without Sstc: --deterministic stops before the guest runs, status 1, saying why (got $rc: $(head -n 1 "$TMPD/nosstc.out"))" \
	eval "[ $rc = 1 ] && head -n 1 '$TMPD/nosstc.out' | grep -q 'this riscv64 CPU keeps no vstimecmp (Sstc and H)'"

# Two vCPUs under QEMU 10 (scripts/fetch-qemu-backports.sh): 7.2 hangs
# x86_64 and loongarch64 starting CPU 1 under -icount; 10 boots them, and
# its turns between the vCPUs follow the instruction counts.
QEMU10=$VMMTRACE_CACHE/qemu-backports/usr/bin
require_file "$QEMU10/qemu-system-x86_64"
FW15=$VMMTRACE_CACHE/qemu-backports/usr/lib/riscv64-linux-gnu/opensbi/generic/fw_dynamic.bin
require_file "$FW15"
for k in x86_64 arm64 loongarch64 riscv64; do
	case $k in
	x86_64) PATH="$QEMU10:$PATH" EXTRA="--cpus 2" twice x86_64-2cpus "$LEAN_BZIMAGE" "$INITRAMFS" '^VMMTRACE-INIT: done' ;;
	arm64) PATH="$QEMU10:$PATH" EXTRA="--cpus 2" twice arm64-2cpus "$A64" "$INITRAMFS_ARM64" '^VMMTRACE-INIT: done' ;;
	loongarch64) PATH="$QEMU10:$PATH" EXTRA="--cpus 2" twice loongarch64-2cpus "$LA" "$INITRAMFS_LA" '^CINIT: done' "-- 10 2" ;;
	riscv64) PATH="$QEMU10:$PATH" EXTRA="--cpus 2 --firmware $FW15" twice riscv64-2cpus "$RV" "$INITRAMFS_RV" '^CINIT: done' "-- 10 2" ;;
	esac
	# function_graph's text: " CPU) duration | func" per line.
	n1=$(grep -cE '^ *1\) ' "$TMPD/$k-2cpus-1.txt")
	check "$k, 2 vCPUs under QEMU 10: CPU 1 came up and its calls are in the trace ($n1 lines under CPU 1)" [ "$n1" -gt 0 ]
done

# riscv64 on 2 vCPUs with Debian 12's OpenSBI 1.1 (QEMU's default): its
# second hart waits busy, so the first stop ends the boot with one line.
PATH="$QEMU10:$PATH" timeout -k 5 120 "$VMMTRACE" boot "$RV" --host qemu --deterministic --cpus 2 --initrd "$INITRAMFS_RV" \
	--trace '*_init' -o /dev/null --console /dev/null </dev/null >"$TMPD/sbi11.out" 2>&1
rc=$?
check "riscv64, 2 vCPUs, OpenSBI 1.1: status 1 at the first stop, saying why (got $rc: $(head -n 1 "$TMPD/sbi11.out"))" \
	eval "[ $rc = 1 ] && head -n 1 '$TMPD/sbi11.out' | grep -q 'riscv64 hart 1 waits in its firmware with an IPI pending'"

# Small rings on 2 vCPUs: doorbells while the other vCPU runs part the boots (x86_64 with 16K
# rings: 12,608 and 12,846 events), so vmmtrace warns.
PATH="$QEMU10:$PATH" timeout -k 5 120 "$VMMTRACE" boot "$LEAN_BZIMAGE" --host qemu --deterministic --cpus 2 \
	--buffer-size 16K --initrd "$INITRAMFS" --trace start_kernel --stop-at start_kernel -o /dev/null \
	--console /dev/null </dev/null >"$TMPD/small.out" 2>&1
check "2 vCPUs with 16K rings: a warning that doorbells may part the boots ($(grep -c warning "$TMPD/small.out") line)" \
	grep -q '^vmmtrace: warning: --deterministic on 2 vCPUs with --buffer-size below 16M' "$TMPD/small.out"

# One initcall left out: the first parting point is that initcall, under do_one_initcall.
det_boot x86_64-bl "$LEAN_BZIMAGE" "$INITRAMFS" initcall_blacklist=proc_cmdline_init
"$VMMTRACE" diff "$TMPD/x86_64-1.raw" "$TMPD/x86_64-bl.raw" >"$TMPD/bl.diff" 2>&1
rc=$?
echo "INFO: $(sed -n 2p "$TMPD/bl.diff")"
check "initcall_blacklist=proc_cmdline_init: diff exits 1 (got $rc), first parting at proc_cmdline_init <- do_one_initcall" \
	eval "[ $rc = 1 ] && grep -qx 'first parting point: A calls proc_cmdline_init <- do_one_initcall, B calls [a-z_0-9]* <- do_one_initcall' '$TMPD/bl.diff'"
check "initcall_blacklist: proc_cmdline_init is the one function only one boot calls" \
	eval "grep -A1 '^functions called in A only: 1\$' '$TMPD/bl.diff' | grep -qE '^ +1  proc_cmdline_init\$' && grep -q '^functions called in B only: 0\$' '$TMPD/bl.diff'"

# /init's two steps swapped (uname, then 5 getpriority calls; or the other
# way): the same calls in another order. The diff of several runs names
# that as a parting (=) where the counts alone see none.
for o in uname,syscall-loop syscall-loop,uname; do
	timeout -k 5 120 "$VMMTRACE" boot "$LEAN_BZIMAGE" --host qemu --deterministic --initrd "$INITRAMFS" \
		--trace __x64_sys_newuname --trace __x64_sys_getpriority --cmdline "vmmtrace.steps=$o vmmtrace.loops=5" \
		-o "$TMPD/order-$o.raw" --console /dev/null </dev/null 2>"$TMPD/order-$o.err"
done
OA=$TMPD/order-uname,syscall-loop.raw OB=$TMPD/order-syscall-loop,uname.raw
"$VMMTRACE" diff "$OA" "$OA" -- "$OB" "$OB" >"$TMPD/order.txt" 2>&1
rc=$?
sed -n '/^= /,+1p' "$TMPD/order.txt" | sed 's/^/INFO: /'
check "steps swapped: the diff of runs exits 1 (got $rc) with one parting, in do_syscall_64's calls' order" \
	eval "[ $rc = 1 ] && head -n 1 '$TMPD/order.txt' | grep -q 'part in 1 place in every run' && grep -qx '= in do_syscall_64' '$TMPD/order.txt'"
check "steps swapped: it names where the order parts: getpriority, the third such call in A, the second in B" \
	grep -qx '    the same calls per run in another order: first apart at __x64_sys_getpriority, the call #3 in it in A, #2 in B' "$TMPD/order.txt"
"$VMMTRACE" diff "$OA" "$OA" -- "$OA" >"$TMPD/order-same.txt" 2>&1
check "the same order on both sides: exit 0 ($(head -n 1 "$TMPD/order-same.txt" | cut -c1-60))" \
	eval "grep -q '^vmmtrace diff: the boots agree in every run' '$TMPD/order-same.txt'"

# Refused, one line, status 2.
for args in "$LEAN_BZIMAGE --host kvm" "$LEAN_BZIMAGE --host qemu --cpus 2" "$VMMTRACE_CACHE/lean-riscv64/Image --host qemu --cpus 2"; do
	# shellcheck disable=SC2086
	"$VMMTRACE" boot $args --deterministic --trace start_kernel </dev/null >"$TMPD/bad.out" 2>&1
	rc=$?
	check "--deterministic refused for '${args#"$VMMTRACE_CACHE"/}': status 2, one line (got $rc: $(head -n 1 "$TMPD/bad.out"))" \
		eval "[ $rc = 2 ] && [ \$(wc -l <'$TMPD/bad.out') = 1 ] && grep -q '^vmmtrace boot: --deterministic' '$TMPD/bad.out'"
done
# --firmware: a riscv64 kernel under QEMU only, and a file that is there.
"$VMMTRACE" boot "$LEAN_BZIMAGE" --host qemu --firmware "$FW15" --trace start_kernel </dev/null >"$TMPD/fw1.out" 2>&1
rc=$?
check "--firmware with an x86_64 kernel: status 2, one line (got $rc: $(head -n 1 "$TMPD/fw1.out"))" \
	eval "[ $rc = 2 ] && [ \$(wc -l <'$TMPD/fw1.out') = 1 ] && grep -q '^vmmtrace boot: --firmware: only a riscv64 kernel' '$TMPD/fw1.out'"
"$VMMTRACE" boot "$RV" --host qemu --firmware "$TMPD/no-such-fw.bin" --trace start_kernel </dev/null >"$TMPD/fw2.out" 2>&1
rc=$?
check "--firmware naming no file: status 2, one line (got $rc: $(head -n 1 "$TMPD/fw2.out"))" \
	eval "[ $rc = 2 ] && [ \$(wc -l <'$TMPD/fw2.out') = 1 ] && grep -q 'no-such-fw.bin.: No such file or directory' '$TMPD/fw2.out'"
# 2 vCPUs: the QEMU first in PATH says its version, or cannot be run, or says none.
mkdir -p "$TMPD/fakeq"
for say in 'QEMU emulator version 9.2.0' 'garbage' ''; do
	rm -f "$TMPD/fakeq/qemu-system-x86_64"
	[ -z "$say" ] || printf '#!/bin/sh\necho "%s"\necho second line\n' "$say" >"$TMPD/fakeq/qemu-system-x86_64"
	[ -z "$say" ] || chmod +x "$TMPD/fakeq/qemu-system-x86_64"
	PATH="$TMPD/fakeq:/usr/bin/nonexistent" "$VMMTRACE" boot "$LEAN_BZIMAGE" --host qemu --deterministic --cpus 2 \
		--trace start_kernel </dev/null >"$TMPD/bad.out" 2>&1
	rc=$?
	check "--deterministic --cpus 2 with a QEMU that says '${say:-(none there)}': status 2, one line (got $rc: $(head -n 1 "$TMPD/bad.out"))" \
		eval "[ $rc = 2 ] && [ \$(wc -l <'$TMPD/bad.out') = 1 ] && grep -qE '^vmmtrace boot: --deterministic on 2 vCPUs(:| needs QEMU 10 or later \(qemu-system-x86_64 here is 9.2)' '$TMPD/bad.out'"
done
finish
