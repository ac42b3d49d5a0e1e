#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# vmmtrace against a reference host: the same lean kernel, initramfs and
# command line boot under QEMU in TCG mode (a different VMM and CPU model;
# ~3 s to rest_init here) with gdb's breakpoints on ten early functions that
# run once, on both sides of the guest's ftrace_init. The order of their
# first hits under gdb and the order of their first events in vmmtrace's
# trace must agree, and so must each call's parent. (The functions all
# begin with an fentry slot; ftrace_init itself and arch_cpu_finalize_init
# have none, so they cannot be in the list.)
#
# vmmtrace traces every function ('*') with the smallest ring (--buffer-size
# 4K = 64 records per vCPU), so the same boot also checks lossless mode
# under pressure: the rings fill faster than the consumer's 20 ms period,
# the stub rings the doorbell, and still no event is dropped; the summary's
# counts must match the file. Timeouts: REF_TIMEOUT (default 900 s) for the
# vmmtrace boot, 120 s for QEMU.
. "$(dirname "$0")/../lib.sh"
require_kvm
require_file "$VMMTRACE"
require_file "$LEAN_BZIMAGE"
require_file "$LEAN_VMLINUX"
require_file "$INITRAMFS"
command -v gdb >/dev/null || { fail "gdb is not installed"; finish; }
command -v qemu-system-x86_64 >/dev/null || { fail "qemu-system-x86_64 is not installed"; finish; }
timeout_s=${REF_TIMEOUT:-900}
# In start_kernel's order in 6.1 (init/main.c); trap_init runs before
# ftrace_init, sched_init after it.
FUNCS="start_kernel setup_arch setup_per_cpu_areas trap_init sched_init rcu_init init_IRQ time_init console_init calibrate_delay"
STOP=rest_init

# ---- vmmtrace ----
start=$(date +%s)
timeout -k 30 -s INT "$timeout_s" "$VMMTRACE" boot "$LEAN_BZIMAGE" --initrd "$INITRAMFS" --cpus 1 \
	--trace '*' --buffer-size 4K --stop-at "$STOP" -o "$TMPD/vt.trace" --console "$TMPD/vt.console" -v \
	</dev/null 2>"$TMPD/vt.err"
rc=$?
echo "INFO: vmmtrace: exit status $rc after $(( $(date +%s) - start )) s"
grep -vE 'compat assist|: info: ' "$TMPD/vt.err" | sed 's/^/    stderr: /'
check "vmmtrace stops at $STOP with status 0 (status $rc)" [ "$rc" = 0 ]
# The exact command line the guest got, for QEMU.
cmdline=$(sed -n 's/^vmmtrace: info: compat layer [a-z]*; command line: //p' "$TMPD/vt.err")
echo "INFO: command line: $cmdline"
check "vmmtrace -v printed the guest's command line" [ -n "$cmdline" ]
# "func parent" of each listed function's first event, in trace order.
grep -v '^#' "$TMPD/vt.trace" | sed -nE 's/.*[0-9]+\.[0-9]{6}: ([^ ]+) <-([^ ]+)$/\1 \2/p' >"$TMPD/vt.events"
awk -v list="$FUNCS" 'BEGIN { n = split(list, f); for (i = 1; i <= n; i++) want[f[i]] = 1 }
	($1 in want) && !seen[$1]++' "$TMPD/vt.events" >"$TMPD/vt.first"
sed 's/^/    vmmtrace: /' "$TMPD/vt.first"

# ---- QEMU TCG + gdb ----
# Temporary hardware breakpoints: each function's first hit prints its name
# and the symbol of the return address on the stack (the parent), then the
# breakpoint is gone; the stop function kills QEMU.
{
	echo "set pagination off"
	echo "set confirm off"
	printf 'target remote | exec qemu-system-x86_64 -accel tcg -m 512 -smp 1 -no-reboot -display none -monitor none -serial file:%s -kernel %s -initrd %s -append "%s" -gdb stdio -S\n' \
		"$TMPD/qemu.console" "$LEAN_BZIMAGE" "$INITRAMFS" "$cmdline"
	for f in $FUNCS; do
		printf 'thbreak %s\ncommands\nsilent\nprintf "REF-HIT %s "\ninfo symbol *(unsigned long *)$sp\ncontinue\nend\n' "$f" "$f"
	done
	printf 'thbreak %s\ncommands\nsilent\nprintf "REF-DONE\\n"\nkill\nquit\nend\ncontinue\n' "$STOP"
} >"$TMPD/ref.gdb"
start=$(date +%s)
timeout -k 10 120 gdb -batch -nx -x "$TMPD/ref.gdb" "$LEAN_VMLINUX" >"$TMPD/gdb.out" 2>&1
grc=$?
echo "INFO: QEMU TCG + gdb: status $grc after $(( $(date +%s) - start )) s"
grep -E 'REF-|rror' "$TMPD/gdb.out" | sed 's/^/    gdb: /'
# "REF-HIT func parent + off in section .text" -> "func parent"
sed -nE 's/^REF-HIT ([^ ]+) ([^ ]+)( \+ [0-9]+)? in section .*/\1 \2/p' "$TMPD/gdb.out" >"$TMPD/ref.first"
check "gdb reached $STOP under QEMU TCG (status $grc)" grep -qx 'REF-DONE' "$TMPD/gdb.out"
check "QEMU ran the same kernel (console: Linux version)" grep -q 'Linux version' "$TMPD/qemu.console"

nfuncs=$(wc -w <<<"$FUNCS")
ref_order=$(cut -d' ' -f1 "$TMPD/ref.first" | tr '\n' ' ')
vt_order=$(cut -d' ' -f1 "$TMPD/vt.first" | tr '\n' ' ')
echo "INFO: reference order: $ref_order"
echo "INFO: vmmtrace order:  $vt_order"
check "the reference hit all $nfuncs functions" [ "$(wc -l <"$TMPD/ref.first")" = "$nfuncs" ]
check "vmmtrace traced all $nfuncs functions" [ "$(wc -l <"$TMPD/vt.first")" = "$nfuncs" ]
check "the reference order is start_kernel's source order" [ "$ref_order" = "$FUNCS " ]
check "vmmtrace's first-event order == the reference's" [ "$vt_order" = "$ref_order" ]
check "and so is each function's parent" diff -u "$TMPD/ref.first" "$TMPD/vt.first"
for f in $FUNCS; do
	n=$(grep -c "^$f " "$TMPD/vt.events")
	check "vmmtrace: $f traced once (as the reference sees it run once): $n" [ "$n" = 1 ]
done

# Lossless under pressure: the summary against the file.
nlines=$(wc -l <"$TMPD/vt.events")
set -- $(trace_summary "$TMPD/vt.err") - - - - - - - - -
echo "INFO: '*' with 128-record rings: $nlines events; summary events=$1 (before ftrace_init $2) slots=$4 doorbells=$5 dropped=$6 mode=$9"
check "summary events ($1) == events in the file ($nlines)" [ "$1" = "$nlines" ]
check "tens of thousands of events ($nlines)" [ "$nlines" -ge 20000 ]
check "the rings filled and the stub rang the doorbell ($5 times)" [ "${5/-/0}" -gt 0 ]
check "and no event was dropped ($6: $7 by the stub, $8 lost), mode lossless" [ "$6 $9" = "0 lossless" ]
check "no invalid ring value or doorbell" eval "! grep -q 'rejected' '$TMPD/vt.err'"
left=$(pgrep -f "serial file:$TMPD/qemu.console")
if [ -n "$left" ]; then
	fail "QEMU is still running after gdb (pid $left): killed"
	kill -9 $left
fi
finish
