#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Debian's 6.12 x86_64 kernel (scripts/fetch-debian-kernel.sh amd64-6.12:
# IBT landing pads, call padding, the CPU number in pcpu_hot) on vmmtrace's
# own KVM VMM, 2 vCPUs, to driver_init (after smp_init; a stock kernel's
# user space cannot run on this project's KVM, HOST-KVM.md §4, and its
# initcalls take many minutes here: tests/kvm/lean612-kvm.sh runs a
# workload on the lean 6.12 kernel instead):
#  - start_kernel, setup_arch, trap_init, sched_init and rest_init each
#    named once (four of them have ENDBR64 before their slot), in the
#    order the QEMU host gives on the same kernel (tests/qemu/stock612.sh
#    checks that one against QEMU's own breakpoints);
#  - the CPU number known (no warning): notify_cpu_starting, which only a
#    CPU coming up runs, once, by swapper/1 under CPU 1; the rest under CPU 0;
#  - nothing dropped, no event shown as a bare address.
# Long (a few minutes to driver_init: guest kernel code is emulated on
# this project's KVM): the long tier, make check-long.
. "$(dirname "$0")/../lib.sh"
require_kvm
require_file "$VMMTRACE"
IMAGE=$VMMTRACE_CACHE/stock612-bzImage
require_file "$IMAGE"
FIVE="start_kernel setup_arch trap_init sched_init rest_init"
trace=()
for f in $FIVE; do trace+=(--trace "$f"); done

timeout -k 5 120 "$VMMTRACE" boot "$IMAGE" --host qemu "${trace[@]}" --stop-at kernel_init \
	-o "$TMPD/qemu.txt" </dev/null >/dev/null 2>"$TMPD/qemu.err"
trace_funcs "$TMPD/qemu.txt" >"$TMPD/qemu.order"
check "the QEMU host's reference: the five, once each ($(paste -sd' ' "$TMPD/qemu.order"))" \
	eval "[ \$(sort -u '$TMPD/qemu.order' | wc -l) = 5 ] && [ \$(wc -l <'$TMPD/qemu.order') = 5 ]"

start=$(date +%s)
timeout -k 30 -s INT "${STOCK_BUDGET:-1200}" "$VMMTRACE" boot "$IMAGE" --cpus 2 --mem 1G "${trace[@]}" \
	--trace notify_cpu_starting --stop-at driver_init -o "$TMPD/kvm.txt" --console "$TMPD/kvm.con" \
	</dev/null >/dev/null 2>"$TMPD/kvm.err"
rc=$?
echo "INFO: KVM boot: status $rc after $(($(date +%s) - start)) s; $(grep '^vmmtrace: trace:' "$TMPD/kvm.err")"
check "KVM, 2 vCPUs: stopped at driver_init: status 0 (got $rc)" \
	eval "[ $rc = 0 ] && grep -q 'stopped at driver_init' '$TMPD/kvm.err'"
grep -v ': notify_cpu_starting <-' "$TMPD/kvm.txt" >"$TMPD/five.txt"
trace_funcs "$TMPD/five.txt" >"$TMPD/kvm.order"
check "KVM: the five named once each, in the QEMU host's order ($(paste -sd' ' "$TMPD/kvm.order"))" \
	cmp -s "$TMPD/qemu.order" "$TMPD/kvm.order"
check "KVM: the five under CPU 0, as swapper/0" \
	eval "[ \$(grep -cE '^ *swapper/0-0 +\[000\] ' '$TMPD/five.txt') = 5 ]"
check "KVM: notify_cpu_starting once, by swapper/1 under CPU 1 (the CPU number from pcpu_hot)" \
	eval "[ \$(grep -c ': notify_cpu_starting <-' '$TMPD/kvm.txt') = 1 ] &&
	      grep -qE '^ *swapper/1-0 +\[001\] .*: notify_cpu_starting <-' '$TMPD/kvm.txt'"
check "KVM: no event shown as a bare address" sh -c "! grep -qE ': 0x[0-9a-f]+ <-' '$TMPD/kvm.txt'"
check "KVM: the CPU number known, nothing dropped" \
	eval "! grep -q 'CPU number is unknown' '$TMPD/kvm.err' &&
	      grep -qE '^vmmtrace: trace: 6 events .* 0 dropped \(0 by the stub, 0 lost\)' '$TMPD/kvm.err'"
check "KVM: no oops or WARNING in the guest" sh -c "! grep -qE 'Oops|BUG:|WARNING: CPU|ftrace failed' '$TMPD/kvm.con'"
finish
