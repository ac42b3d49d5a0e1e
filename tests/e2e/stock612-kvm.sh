#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Debian's 6.12 x86_64 kernel (scripts/fetch-debian-kernel.sh amd64-6.12:
# IBT landing pads, call padding, the CPU number in pcpu_hot) on vmmtrace's
# own KVM VMM, 2 vCPUs, to /init and a getpriority loop on each CPU:
#  - start_kernel, setup_arch, trap_init, sched_init and rest_init each
#    named once (the four with ENDBR64 before their slot too), in the
#    order the QEMU host gives on the same kernel (tests/qemu/stock612.sh
#    checks that one against QEMU's own breakpoints);
#  - the CPU number known: no warning, events under CPU 0 and CPU 1;
#  - each worker's getpriority calls exactly, each under its worker's CPU;
#  - nothing dropped, the guest's /init done.
# Long: guest kernel code is emulated on this project's KVM, and this
# kernel takes minutes to kernel_init there (the long tier, make
# check-long). Budget: STOCK_BUDGET seconds (default 2400).
. "$(dirname "$0")/../lib.sh"
require_kvm
require_file "$VMMTRACE"
IMAGE=$VMMTRACE_CACHE/stock612-bzImage
require_file "$IMAGE"
require_file "$INITRAMFS"
budget=${STOCK_BUDGET:-2400}
LOOPS=100
FIVE="start_kernel setup_arch trap_init sched_init rest_init"
trace=()
for f in $FIVE; do trace+=(--trace "$f"); done
# The initcalls that cost most of a stock kernel's boot here and do nothing a VMM takes part in (boot-stock.sh).
speedup=initcall_blacklist=tracer_init_tracefs,cubictcp_register,slab_sysfs_init

timeout -k 5 120 "$VMMTRACE" boot "$IMAGE" --host qemu "${trace[@]}" --stop-at kernel_init \
	-o "$TMPD/qemu.txt" </dev/null >/dev/null 2>"$TMPD/qemu.err"
trace_funcs "$TMPD/qemu.txt" >"$TMPD/qemu.order"
check "the QEMU host's reference: the five, once each ($(paste -sd' ' "$TMPD/qemu.order"))" \
	eval "[ \$(sort -u '$TMPD/qemu.order' | wc -l) = 5 ] && [ \$(wc -l <'$TMPD/qemu.order') = 5 ]"

start=$(date +%s)
timeout -k 30 -s INT "$budget" "$VMMTRACE" boot "$IMAGE" --initrd "$INITRAMFS" --cpus 2 --mem 1G "${trace[@]}" \
	--trace __x64_sys_getpriority -o "$TMPD/kvm.txt" --console "$TMPD/kvm.con" \
	--cmdline "vmmtrace.steps=syscall-loop vmmtrace.loops=$LOOPS vmmtrace.loop_cpus=2 $speedup" \
	</dev/null >/dev/null 2>"$TMPD/kvm.err"
rc=$?
tr -d '\r' <"$TMPD/kvm.con" >"$TMPD/con"
echo "INFO: KVM boot: status $rc after $(($(date +%s) - start)) s; $(grep '^vmmtrace: trace:' "$TMPD/kvm.err")"
check "KVM, 2 vCPUs: /init's loop passed on both CPUs, the guest rebooted: status 0 (got $rc)" \
	eval "[ $rc = 0 ] && grep -q '^VMMTRACE-RESULT syscall-loop PASS 2 workers' '$TMPD/con'"
grep -v '__x64_sys_getpriority' "$TMPD/kvm.txt" >"$TMPD/five.txt"
trace_funcs "$TMPD/five.txt" >"$TMPD/kvm.order"
check "KVM: the five named once each, in the QEMU host's order ($(paste -sd' ' "$TMPD/kvm.order"))" \
	cmp -s "$TMPD/qemu.order" "$TMPD/kvm.order"
check "KVM: no event shown as a bare address" sh -c "! grep -qE ': 0x[0-9a-f]+ <-' '$TMPD/kvm.txt'"
check "KVM: the CPU number known (pcpu_hot.cpu_number), nothing dropped" \
	eval "! grep -q 'CPU number is unknown' '$TMPD/kvm.err' &&
	      grep -qE '^vmmtrace: trace: [0-9]+ events .* 0 dropped \(0 by the stub, 0 lost\)' '$TMPD/kvm.err'"
for w in 0 1; do
	read -r pid cpu < <(sed -nE "s/^VMMTRACE-STEP syscall-loop: worker=$w pin=[0-9]+ cpu=([0-9]+) .* pid=([0-9]+)$/\2 \1/p" "$TMPD/con")
	calls=$(grep -cE -- "-${pid:-x} +\[[0-9]+\] .*: __x64_sys_getpriority <-" "$TMPD/kvm.txt")
	on=$(grep -cE -- "-${pid:-x} +\[00${cpu:-9}\] .*: __x64_sys_getpriority <-" "$TMPD/kvm.txt")
	check "KVM: worker $w (pid $pid, CPU $cpu): exactly $LOOPS getpriority calls ($calls), each under its CPU ($on)" \
		eval "[ '$calls' = $LOOPS ] && [ '$on' = $LOOPS ]"
done
finish
