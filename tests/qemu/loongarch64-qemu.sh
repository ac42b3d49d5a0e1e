#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The lean LoongArch64 kernel (scripts/build-lean-kernel.sh loongarch64)
# under QEMU 7.2, booted by vmmtrace's QEMU host, which writes the EFI
# system table, device tree, command line and initramfs QEMU does not give
# it (docs/LOONGARCH64.md); its /init is tests/guest/cinit.c:
#  - test-qemu-trace loongarch64: QEMU's own gdbstub breakpoints on
#    start_kernel, setup_arch, trap_init, sched_init and rest_init give the
#    reference order; `--trace` of the five `--stop-at kernel_init` gives
#    exactly those events in it, across the ftrace_init hand-over;
#    `--trace '*'` keeps that first-hit order among all events, to
#    kernel_init on 1 vCPU and to the guest's reboot on 2, every event
#    written and none dropped;
#  - exact counts through small rings that wrap: one worker per vCPU
#    makes LOOPS getpriority calls, the trace holds exactly LOOPS events of
#    each worker's pid, none dropped, drained at dozens of doorbells; the
#    guest's own function tracer after the hand-over records its 3 getpid
#    events with no "ftrace failed to modify" and no WARNING, vmmtrace
#    holding getpid too (its call goes on to the guest's tracer, issue 37); the counter's
#    rate (100 MHz, QEMU's constant timer) against the guest's own clock:
#    a worker's first-to-last span in the trace lies within the time the
#    worker measured itself; --args shows reboot(2)'s magic numbers;
#  - --graph: five early functions, kernel_init, the getpriority handler
#    and the timer softirq, every block closed at its depth, 20 returned
#    by each getpriority; --graph --trace '*' to the reboot; 150 sleepers
#    holding shadow stacks at once;
#  - the guest's own function, then function_graph, tracer on every
#    function around a read of /proc/version while vmmtrace holds every
#    slot: no ftrace_bug, the guest's calls equal vmmtrace's (issue 37);
#  - live attach: ATTACH_CYCLES (20) attach/detach cycles on 2 busy vCPUs
#    (cinit's markloop), every window exact, the slots' bytes as before;
#  - a kernel with a device tree built in (lean-loongarch64-dtb), which
#    the kernel prefers to the host's: the five against QEMU's breakpoints
#    and `--trace '*'` (test-qemu-trace loongarch64-dtb), exact counts
#    through wrapping rings on 2 vCPUs, all RAM and the initramfs found
#    through the EFI tables; RAM in its tree the guest has not: status 2;
#    another number of CPUs than --cpus: a warning;
#  - the guest's ends: a power-off is status 0, a panic 3;
#  - bad input: the kernel under --host kvm, a wrong --arch, a command
#    line longer than the kernel takes: one line, status 2.
. "$(dirname "$0")/../lib.sh"
require_file "$VMMTRACE"
LA=$VMMTRACE_CACHE/lean-loongarch64/vmlinux
LA_DTB=$VMMTRACE_CACHE/lean-loongarch64-dtb/vmlinux
INITRAMFS_LA=$VMMTRACE_CACHE/initramfs-loongarch64.cpio
require_file "$LA"
require_file "$INITRAMFS_LA"
QTRACE=$(dirname "$VMMTRACE")/tests/qemu/test-qemu-trace
require_file "$QTRACE"
LOOPS=${LOOPS:-1000}
CYCLES=${ATTACH_CYCLES:-20}
t0=$(date +%s)

# The reference, the five and --trace '*' (PASS:/FAIL: lines of its own).
"$QTRACE" loongarch64 || T_FAILS=$((T_FAILS + 1))
echo "INFO: test-qemu-trace loongarch64: $(($(date +%s) - t0)) s"

# Exact counts through 64-record rings (--buffer-size 4K) that wrap.
for cpus in 1 2; do
	name=la$cpus
	args=()
	[ "$cpus" = 1 ] && args=(--args --trace sys_reboot)
	timeout -k 5 300 "$VMMTRACE" boot "$LA" --host qemu --cpus "$cpus" --buffer-size 4K --initrd "$INITRAMFS_LA" \
		--cmdline "-- $LOOPS $cpus sys_getpid" --trace sys_getpriority --trace sys_getpid "${args[@]}" -o "$TMPD/$name.txt" \
		</dev/null >"$TMPD/$name.out" 2>"$TMPD/$name.err"
	rc=$?
	tr -d '\r' <"$TMPD/$name.out" >"$TMPD/$name.con"
	echo "INFO: $name: status $rc; $(tail -n 1 "$TMPD/$name.err")"
	check "$cpus vCPU(s): cinit ran and the guest rebooted: status 0 (got $rc)" \
		eval "[ $rc = 0 ] && grep -q '^CINIT: done' '$TMPD/$name.con'"
	want=$((cpus * LOOPS))
	got=$(grep -c ': sys_getpriority[( ]' "$TMPD/$name.txt")
	check "$cpus vCPU(s): exactly $want getpriority events (got $got), none dropped" \
		eval "[ '$got' = $want ] && grep -qE '^vmmtrace: trace: [0-9]+ events .* 0 dropped \(0 by the stub, 0 lost\)' '$TMPD/$name.err'"
	check "$cpus vCPU(s): 64-record rings, drained at dozens of doorbells" \
		eval "grep -qE '; [1-9][0-9]+ doorbells;' '$TMPD/$name.err'"
	workers=$(sed -n "s/^CINIT-WORKER cpu=\([0-9]*\) calls=$LOOPS ns=\([0-9]*\) pid=\([0-9]*\)$/\1 \2 \3/p" "$TMPD/$name.con")
	check "$cpus vCPU(s): one worker per vCPU made every call ($(echo $workers))" \
		[ "$(echo "$workers" | grep -c .)" = "$cpus" ]
	while read -r cpu ns pid; do
		[ -n "$pid" ] || continue
		n=$(grep -c -- "-$pid \+\[00$cpu\] .*: sys_getpriority[( ]" "$TMPD/$name.txt")
		check "$cpus vCPU(s): worker pid $pid: $LOOPS events with its pid on CPU $cpu (got $n)" [ "$n" = "$LOOPS" ]
		# The trace's clock is the constant timer at the 100 MHz the host assumes:
		# the worker's calls span most of the time it measured itself, never more.
		span=$(grep -- "-$pid \+\[.*: sys_getpriority[( ]" "$TMPD/$name.txt" |
			sed -nE 's/.* ([0-9]+\.[0-9]+): sys_getpriority.*/\1/p' | sed -n '1p;$p' | tr -d . | paste -sd' ' |
			awk '{ printf "%d", ($2 - $1) * 1000 }')
		check "$cpus vCPU(s): worker pid $pid: its calls span $span ns in the trace, within the $ns ns it measured (more than half)" \
			eval "[ $span -le $ns ] && [ $((2 * span)) -gt $ns ]"
	done <<<"$workers"
	check "$cpus vCPU(s): the guest's own ftrace after the hand-over: 3 events, no 'ftrace failed to modify', no WARNING" \
		grep -qx 'CINIT-FTRACE func=sys_getpid events=3 ftrace_failed=0 warnings=0 loops=0 ns=[0-9]*' "$TMPD/$name.con"
	guest_ftrace_shared "$cpus vCPU(s)" "$TMPD/$name.err"
	[ "$cpus" = 1 ] && check "--args: reboot(2)'s a0-a2 are its magic numbers and command" \
		grep -qE ': sys_reboot\(0xfee1dead, 0x28121969, 0x1234567, ' "$TMPD/$name.txt"
done
check "no oops, no WARNING on either console" sh -c "! grep -qE 'Oops|WARNING:|BUG:|Call Trace' '$TMPD'/la[12].con"
echo "INFO: counts: $(($(date +%s) - t0)) s"

# --graph and --retval on 2 vCPUs.
GLOOPS=50
args=(--graph --retval)
for f in start_kernel setup_arch trap_init sched_init rest_init kernel_init sys_getpriority run_timer_softirq; do
	args+=(--trace "$f")
done
timeout -k 10 300 "$VMMTRACE" boot "$LA" --host qemu --initrd "$INITRAMFS_LA" --cpus 2 "${args[@]}" \
	-o "$TMPD/graph.txt" --console "$TMPD/gconsole" --cmdline "-- $GLOOPS 2" </dev/null 2>"$TMPD/gerr"
rc=$?
check "--graph boot: status 0 (got $rc), cinit ran to its end" eval "[ $rc = 0 ] && grep -q '^CINIT: done' '$TMPD/gconsole'"
graph_boot_checks "$TMPD/graph.txt"
want=$((2 * GLOOPS))
got=$(grep -cE 'sys_getpriority\(\); /\* = 0x14 \*/$|\} /\* sys_getpriority = 0x14 \*/$' "$TMPD/graph.txt")
all=$(grep -cE 'sys_getpriority\(\);|\} /\* sys_getpriority ' "$TMPD/graph.txt")
check "--graph: $want getpriority returns, each 20 (got $got of $all)" eval "[ $got = $want ] && [ $all = $want ]"
graph_star "$LA" "$INITRAMFS_LA" "-- $GLOOPS 2" '^CINIT: done'
graph_sleepers "$LA" "$INITRAMFS_LA" "sleepers=150 -- 0 1" '^CINIT-SLEEPERS n=150'
# The guest's own function and function_graph tracers on every function
# while vmmtrace holds every slot (issue 37; tests/lib.sh).
both_tracers loongarch64 "$LA" "$INITRAMFS_LA" 5000 cinit
echo "INFO: graph: $(($(date +%s) - t0)) s"

# Live attach on 2 busy vCPUs: the markers traced for the whole boot,
# getpriority by each attached client.
SOCK=$TMPD/vt.sock
timeout -k 10 -s INT 600 "$VMMTRACE" boot "$LA" --host qemu --initrd "$INITRAMFS_LA" --cpus 2 --control "$SOCK" \
	--trace sys_sched_get_priority_max -o "$TMPD/boot.trace" --console "$TMPD/console" \
	--cmdline "markloop=300 -- 0 2" </dev/null 2>"$TMPD/boot.err" &
vt=$!
if wait_markloop "$TMPD/console" 2 120 "$vt"; then
	"$VMMTRACE" status "$SOCK" >"$TMPD/status0" 2>&1
	check "status names the QEMU host and both vCPUs" \
		sh -c "grep -qx 'host: qemu' '$TMPD/status0' && [ \$(grep -cE '^vcpu [01]: in QEMU' '$TMPD/status0') = 2 ]"
	digest0=$(sed -n 's/^slot bytes digest: //p' "$TMPD/status0")
	start=$(date +%s)
	attach_cycles "$SOCK" "$CYCLES" sys_
	echo "INFO: $CYCLES attach/detach cycles in $(($(date +%s) - start)) s"
	attach_cycles_check "$SOCK" "$digest0" "$vt"
	ATTACH_MARKER=sys_sched_get_priority_max ATTACH_TARGET=sys_getpriority attach_windows_check 2
	grep -E "^vmmtrace: trace:" "$TMPD/boot.err" | sed 's/^/INFO: /'
else
	fail "markloop did not start on both vCPUs ($(tail -n 1 "$TMPD/console"))"
	kill -INT "$vt"
	wait "$vt"
fi
echo "INFO: attach: $(($(date +%s) - t0)) s"

# The guest's ends: a power-off is status 0 as a reboot is, a panic (no
# initramfs: no init) status 3.
timeout -k 5 120 "$VMMTRACE" boot "$LA" --host qemu --initrd "$INITRAMFS_LA" --cmdline "poweroff=1 -- 10 1" \
	</dev/null >"$TMPD/off.out" 2>&1
rc=$?
check "power-off: status 0 (got $rc)" eval "[ $rc = 0 ] && grep -q 'reboot: Power down' '$TMPD/off.out'"
timeout -k 5 120 "$VMMTRACE" boot "$LA" --host qemu --trace start_kernel </dev/null >"$TMPD/panic.out" 2>&1
rc=$?
check "a panic (no init): status 3 (got $rc), traced" \
	eval "[ $rc = 3 ] && grep -q 'guest kernel panic: No working init found' '$TMPD/panic.out'"

# The same kernel with a device tree built in (CONFIG_BUILTIN_DTB), which it
# prefers to the one vmmtrace hands over: the stub's rings reserved, the
# initramfs and the RAM above 256 MiB found, through the EFI tables alone.
if [ -f "$LA_DTB" ]; then
	"$QTRACE" loongarch64-dtb || T_FAILS=$((T_FAILS + 1))
	timeout -k 5 300 "$VMMTRACE" boot "$LA_DTB" --host qemu --cpus 2 --buffer-size 4K --initrd "$INITRAMFS_LA" \
		--cmdline "-- $LOOPS 2" --trace sys_getpriority --trace start_kernel --trace setup_arch -v \
		-o "$TMPD/dtb.txt" </dev/null >"$TMPD/dtb.out" 2>"$TMPD/dtb.err"
	rc=$?
	tr -d '\r' <"$TMPD/dtb.out" >"$TMPD/dtb.con"
	echo "INFO: built-in tree: status $rc; $(tail -n 1 "$TMPD/dtb.err")"
	check "built-in tree: the host knows the kernel reads its own tree, and the EFI memory map and initrd tables" \
		eval "grep -q 'unread: the kernel has its own' '$TMPD/dtb.err' && grep -q 'MEMMAP=0x10200 INITRD=0x10100' '$TMPD/dtb.con'"
	check "built-in tree: the initramfs ran on 2 CPUs and the guest rebooted: status 0 (got $rc)" \
		eval "[ $rc = 0 ] && grep -q '^CINIT: done' '$TMPD/dtb.con' && grep -q 'Brought up 1 node, 2 CPUs' '$TMPD/dtb.con'"
	check "built-in tree: all of the guest's 512 MiB, the 256 above the board's hole from the EFI memory map alone" \
		grep -q 'Memory: [0-9]*K/524288K available' "$TMPD/dtb.con"
	got=$(grep -c ': sys_getpriority[( ]' "$TMPD/dtb.txt")
	check "built-in tree: exactly $((2 * LOOPS)) getpriority events through wrapping rings (got $got), none dropped or rejected" \
		eval "[ '$got' = $((2 * LOOPS)) ] && grep -qE '^vmmtrace: trace: [0-9]+ events .* [1-9][0-9]* doorbells; 0 dropped \(0 by the stub, 0 lost\)' '$TMPD/dtb.err' && ! grep -q 'rejected' '$TMPD/dtb.err'"
	while read -r cpu pid; do
		n=$(grep -c -- "-$pid \+\[00$cpu\] .*: sys_getpriority[( ]" "$TMPD/dtb.txt")
		check "built-in tree: worker pid $pid: $LOOPS events on CPU $cpu (got $n)" [ "$n" = "$LOOPS" ]
	done < <(sed -n "s/^CINIT-WORKER cpu=\([0-9]*\) calls=$LOOPS ns=[0-9]* pid=\([0-9]*\)$/\1 \2/p" "$TMPD/dtb.con")
	check "built-in tree: start_kernel then setup_arch, once each" \
		eval "[ \"\$(grep -oE ': (start_kernel|setup_arch) ' '$TMPD/dtb.txt' | tr -d ': ' | paste -sd,)\" = start_kernel,setup_arch ]"
	check "built-in tree: no oops, no WARNING" sh -c "! grep -qE 'Oops|WARNING:|BUG:|Call Trace' '$TMPD/dtb.con'"
	# A tree whose RAM this guest has not: one line, status 2.
	"$VMMTRACE" boot --host qemu --mem 128M "$LA_DTB" --trace start_kernel >"$TMPD/bad-dtb" 2>&1
	rc=$?
	check "built-in tree with RAM outside --mem 128M: status 2, one line (got $rc: $(head -c 160 "$TMPD/bad-dtb"))" \
		eval "[ $rc = 2 ] && [ \$(wc -l <'$TMPD/bad-dtb') = 1 ] && grep -q 'own device tree.*not in this guest' '$TMPD/bad-dtb'"
	# A tree naming 2 CPUs booted on 1: a warning, and the boot goes on.
	timeout -k 5 120 "$VMMTRACE" boot "$LA_DTB" --host qemu --trace start_kernel --stop-at setup_arch \
		</dev/null >"$TMPD/cpus1.out" 2>&1
	rc=$?
	check "built-in tree naming 2 CPUs, --cpus 1: a warning saying so, start_kernel traced, status 0 (got $rc)" \
		eval "[ $rc = 0 ] && grep -q 'own device tree (CONFIG_BUILTIN_DTB) names 2 CPU(s), not 1 (--cpus)' '$TMPD/cpus1.out' && grep -q ': start_kernel ' '$TMPD/cpus1.out'"
	echo "INFO: built-in tree: $(($(date +%s) - t0)) s"
else
	fail "$LA_DTB missing: scripts/build-lean-kernel.sh loongarch64-dtb (scripts/prepare-tests.sh builds it)"
fi

# Bad input: one line, status 2.
"$VMMTRACE" boot --host kvm "$LA" >"$TMPD/bad1" 2>&1
rc=$?
check "--host kvm with a LoongArch kernel: status 2, one line (got $rc: $(head -c 100 "$TMPD/bad1"))" \
	eval "[ $rc = 2 ] && [ \$(wc -l <'$TMPD/bad1') = 1 ]"
"$VMMTRACE" boot --host qemu --arch riscv64 "$LA" >"$TMPD/bad2" 2>&1
rc=$?
check "--arch riscv64 with a LoongArch kernel: status 2, one line (got $rc: $(head -c 100 "$TMPD/bad2"))" \
	eval "[ $rc = 2 ] && [ \$(wc -l <'$TMPD/bad2') = 1 ] && grep -q 'is loongarch64, not riscv64' '$TMPD/bad2'"
"$VMMTRACE" boot --host qemu "$LA" --cmdline "$(printf 'x%.0s' $(seq 600))" >"$TMPD/bad3" 2>&1
rc=$?
check "a command line longer than the kernel takes: status 2, one line (got $rc: $(head -c 100 "$TMPD/bad3"))" \
	eval "[ $rc = 2 ] && [ \$(wc -l <'$TMPD/bad3') = 1 ]"
echo "INFO: loongarch64-qemu.sh: $(($(date +%s) - t0)) s"
finish
