#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# vmmtrace's own arm64 KVM host tracing (issue 38), in one boot of the arm64
# test machine (scripts/arm64-machine.sh: KVM at EL2 under QEMU's emulator,
# so no /dev/kvm is needed here); the boots' files come back in a tar on
# the machine's stdout and are checked here:
# - start_kernel, setup_arch, trap_init, sched_init and rest_init to
#   --stop-at kernel_init on the lean arm64 6.1 kernel, on it and the lean
#   6.12 one built without padding below _etext, on Debian's 6.1 and 6.12
#   arm64 kernels (every place of the stub: the full stub in padding; the
#   one-page stub in 6.12's one page of padding, and in _end's guard page,
#   mapped by tables added before the boot (6.1) or by the host at
#   __primary_switched (6.12)): each once, three
#   before the hand-over and two after, in the order QEMU's own gdbstub
#   breakpoints hit them on the same kernel (test-qemu-trace --reference,
#   run here; the Debian kernels' addresses from `vmmtrace symbols`, their
#   System.map being a stub);
# - the lean kernel to /init and its reboot on 1 vCPU with 32-record rings
#   and on 2 vCPUs: exact getpriority counts per worker, every event
#   written, the doorbell drained the tiny rings, and the guest's own
#   function tracer works after the hand-over on a function vmmtrace holds
#   (arm64_loop_checks, the QEMU host's checks of the same boots);
# - a panic with no console (no init, console= a UART the board lacks,
#   panic=-1): --flight-recorder stops it at emergency_restart with exit
#   status 3, its last events (with --args: panic's fmt from the BTF) and
#   vCPU 0's registers printed; a guest that dies early and spins
#   (mem=1M): --hang 5 stops it with exit status 7;
# - --graph --retval on 2 vCPUs: every block closes (graph_boot_checks),
#   getpriority's returns counted and valued;
# - live attach with markloop on both vCPUs: `vmmtrace status` names the
#   host, `vmmtrace nmi` is refused in one line, ATTACH_CYCLES (20)
#   attach/detach cycles with attach_cycles's globs, every window exact
#   (attach_check.py), the slots' bytes back after the last detach,
#   `vmmtrace stop` ends it with 0;
# - the seccomp sandbox: every thread filtered while the guest runs, a
#   forbidden open fails with EPERM, execve kills with SIGSYS;
# - --event 'kvm:*': the PL011's probe as MMIO exits between the function
#   events; --handshake with no --trace runs to the reboot with nothing
#   lost (its rings leave the init data at the hand-over all the same).
# - on this machine's KVM (6.1, no SMCCC filter): kvm:hypercall refused once,
#   none made up; --handshake's arm64 table says why in one line.
# Then a second run of the machine, booted with Debian's 6.12 arm64 kernel
# as its host (KVM of today's kernels): the five in order and a loop; and
# PSCI answered by vmmtrace through KVM's SMCCC filter: Debian's 6.12 guest
# on 2 vCPUs, CPU 1 offline and back, its PSCI and SMCCC calls between the
# function events around them, --handshake's arm64 table, trace-cmd; and
# the PSCI payload (docs/TEST-GUEST.md), the calls no Linux boot makes,
# answered by KVM and by vmmtrace: the two consoles the same.
# tests/e2e/arm64-kvm-full.sh (the long tier) traces every function of a
# whole boot on 2 vCPUs.
. "$(dirname "$0")/../lib.sh"
MACHINE=$TOP/scripts/arm64-machine.sh
LEAN_A64=$VMMTRACE_CACHE/lean-arm64/Image
LEAN_A64_NOPAD=$VMMTRACE_CACHE/lean-arm64-nopad/Image
LEAN612_A64_NOPAD=$VMMTRACE_CACHE/lean-arm64-6.12-nopad/Image
STOCK_A64=$VMMTRACE_CACHE/stock-arm64-Image
STOCK612_A64=$VMMTRACE_CACHE/stock612-arm64-Image
QTRACE=$(dirname "$VMMTRACE")/tests/qemu/test-qemu-trace
PSCI_PAYLOAD=$(dirname "$VMMTRACE")/tests/guest/psci-arm64/psci.Image
LOOPS=${LOOPS:-2000}
GLOOPS=20	# the --graph boot's loops and argcall's rounds
CYCLES=${ATTACH_CYCLES:-20}
# graph.sh's functions: the early ones, kernel_init, argcall's system calls.
GFUNCS="start_kernel setup_arch trap_init sched_init rest_init kernel_init __arm64_sys_getpriority"
GFUNCS="$GFUNCS __arm64_sys_dup3 ksys_dup3 __arm64_sys_close close_fd"

if ! command -v qemu-system-aarch64 >/dev/null; then
	echo "##################################################################"
	echo "SKIP: trace.sh: qemu-system-aarch64 is absent; NOT RUN"
	echo "##################################################################"
	exit 77
fi
for f in "$LEAN_A64" "$LEAN_A64_NOPAD" "$LEAN612_A64_NOPAD" "${LEAN_A64%/Image}/vmlinux.btf" "$STOCK_A64" "$STOCK612_A64" "$INITRAMFS_ARM64" \
	"$QTRACE" "$PSCI_PAYLOAD"; do
	require_file "$f"
done

# The references: QEMU's breakpoints on each kernel, here.
"$VMMTRACE" symbols "$STOCK_A64" >"$TMPD/stock.map" 2>/dev/null
"$VMMTRACE" symbols "$STOCK612_A64" >"$TMPD/stock612.map" 2>/dev/null
{
	"$QTRACE" --reference arm64
	QTEST_SYSMAP=$TMPD/stock.map "$QTRACE" --reference arm64-6.1
	QTEST_SYSMAP=$TMPD/stock612.map "$QTRACE" --reference arm64-6.12
	"$QTRACE" --reference arm64-nopad lean-arm64-6.12-nopad
} >"$TMPD/reference" 2>&1
sed 's/^/INFO: /' "$TMPD/reference"

cat >"$TMPD/inside.sh" <<EOF
t0=\$(date +%s)
phase() { echo "phase \$1: \$((\$(date +%s) - t0)) s" >&2; }
five="--trace start_kernel --trace setup_arch --trace trap_init --trace sched_init --trace rest_init --stop-at kernel_init"
for k in Image Image-nopad Image-612nopad stock-arm64-Image stock612-arm64-Image; do
	b=
	[ -f btf-\$k ] && b="--btf btf-\$k"
	# Debian's 6.1 with no --host: KVM is the default for an arm64 kernel here.
	h="--host kvm"
	[ \$k = stock-arm64-Image ] && h=
	timeout 200 vmmtrace boot \$h \$k \$five \$b -v -o five-\$k.txt >five-\$k.out 2>five-\$k.err
	echo \$? >five-\$k.rc
done
phase five
for cpus in 1 2; do
	size=
	[ \$cpus = 1 ] && size="--buffer-size 4K"
	timeout 300 vmmtrace boot --host kvm Image --cpus \$cpus \$size --initrd initramfs-arm64.cpio \
		--cmdline "\$(echo '$(arm64_loop_cmdline 1)' | sed "s/loop_cpus=1/loop_cpus=\$cpus/")" \
		--trace __arm64_sys_getpriority --trace __arm64_sys_getpid -v -o loop\$cpus.txt >loop\$cpus.out 2>loop\$cpus.err
	echo \$? >loop\$cpus.rc
done
phase loops
timeout 120 vmmtrace boot --host kvm Image --cmdline-replace "console=ttyAMA3 panic=-1" --flight-recorder 20 \
	--args --trace panic --trace kernel_init --trace try_to_run_init_process --console panic.con >panic.out 2>panic.err
echo \$? >panic.rc
# A guest that dies in its early set-up and spins (mem=1M): --hang.
timeout 120 vmmtrace boot --host kvm Image --cmdline mem=1M --flight-recorder 30 --trace panic --trace make_task_dead \
	--trace 'memblock_alloc*' --trace setup_arch --hang 5 --console hang.con </dev/null >hang.out 2>hang.err
echo \$? >hang.rc
phase panic
# VM exits on the functions' clock; --handshake with no --trace (the rings must still leave the init data).
timeout 120 vmmtrace boot --host kvm Image --initrd initramfs-arm64.cpio --event 'kvm:*' --trace start_kernel \
	--trace rest_init -o ev.txt --console ev.con </dev/null >ev.out 2>ev.err
echo \$? >ev.rc
timeout 120 vmmtrace boot --host kvm Image --initrd initramfs-arm64.cpio --handshake --console hs.con \
	</dev/null >hs.out 2>hs.err
echo \$? >hs.rc
phase events
# The sandbox on arm64 (its hidden self-test): a forbidden open fails with EPERM, execve kills with SIGSYS.
for t in eperm kill; do
	VMMTRACE_SANDBOX_SELFTEST=\$t timeout 120 vmmtrace boot --host kvm Image --trace start_kernel --stop-at kernel_init \
		-v </dev/null >sb-\$t.out 2>sb-\$t.err
	echo \$? >sb-\$t.rc
done
# --graph --retval: the boot's early functions and argcall's system calls.
g=
for f in $GFUNCS; do g="\$g --trace \$f"; done
timeout 300 vmmtrace boot --host kvm Image --cpus 2 --initrd initramfs-arm64.cpio --graph --retval \$g -o graph.txt \
	--console graph.con --cmdline "vmmtrace.steps=syscall-loop,arg-calls vmmtrace.loops=$GLOOPS vmmtrace.loop_cpus=2" \
	</dev/null >graph.out 2>graph.err
echo \$? >graph.rc
phase graph
# Live attach: markloop on both vCPUs, $CYCLES attach/detach cycles with
# attach_cycles's globs and durations (tests/lib.sh), every tenth two clients
# at once; the boot's own trace of the markers recorded raw (a third of the
# text's bytes to bring back).
vmmtrace boot --host kvm Image --initrd initramfs-arm64.cpio --cpus 2 --control vt.sock \
	--trace __arm64_sys_sched_get_priority_max -o boot.raw --console att.con \
	--cmdline "vmmtrace.steps=mark-loop vmmtrace.loop_cpus=2 vmmtrace.mark_secs=400" </dev/null >att.out 2>boot.err &
vt=\$!
i=0
until grep -q 'mark-loop: running cpu=0' att.con 2>/dev/null && grep -q 'mark-loop: running cpu=1' att.con; do
	i=\$((i + 1))
	[ \$i -gt 600 ] && break
	sleep 0.5
done
vmmtrace status vt.sock >status0 2>&1
grep -h '^Seccomp:' /proc/\$vt/task/*/status >seccomp.txt
vmmtrace nmi vt.sock >nmi.out 2>nmi.err
echo \$? >nmi.rc
p=__arm64_sys_
i=0
while [ \$i -lt $CYCLES ]; do
	case \$((i % 6)) in
	0) g=\${p}getpriority ;; 1) g='*sys_getpriority' ;; 2) g="\${p}getp*" ;;
	3) g='*getpriority*' ;; 4) g="\${p}getpriority*" ;; 5) g="\${p}get*ority" ;;
	esac
	d=0.\$((2 + i % 5))
	if [ \$((i % 10)) = 5 ]; then
		vmmtrace attach vt.sock --trace "\$g" --duration \$d --format text -o w\$i.a 2>>attach.err &
		a=\$!
		vmmtrace attach vt.sock --trace \${p}getpriority --trace \${p}getpgid --duration 0.3 --format text \
			-o w\$i.b 2>>attach.err || echo "cycle \$i: attach status \$?" >>attach.err
		wait \$a || echo "cycle \$i: attach status \$?" >>attach.err
	else
		vmmtrace attach vt.sock --trace "\$g" --notrace \${p}getpid --duration \$d --format text -o w\$i.a \
			2>>attach.err || echo "cycle \$i: attach status \$?" >>attach.err
	fi
	i=\$((i + 1))
done
touch attach.err
vmmtrace status vt.sock >status1 2>&1
vmmtrace stop vt.sock >stop.out 2>&1
echo \$? >stop.rc
wait \$vt
echo \$? >att.rc
if [ -S vt.sock ]; then echo left; else echo gone; fi >sock.txt
phase attach
ls -la boot.raw >&2
tar czf - *.txt *.out *.err *.rc *.con *.raw w*.* status0 status1 seccomp.txt sock.txt
EOF

start=$(date +%s)
cp "$LEAN_A64_NOPAD" "$TMPD/Image-nopad"
cp "$LEAN612_A64_NOPAD" "$TMPD/Image-612nopad"
cp "${LEAN_A64_NOPAD%/Image}/vmlinux.btf" "$TMPD/btf-Image-nopad"
cp "${LEAN612_A64_NOPAD%/Image}/vmlinux.btf" "$TMPD/btf-Image-612nopad"
ARM64_MACHINE_CONSOLE=$TMPD/console "$MACHINE" --file "$TMPD/inside.sh" --file "$LEAN_A64" \
	--file "$TMPD/Image-nopad" --file "$TMPD/Image-612nopad" --file "$TMPD/btf-Image-nopad" \
	--file "$TMPD/btf-Image-612nopad" \
	--file "${LEAN_A64%/Image}/vmlinux.btf" --file "$STOCK_A64" --file "$STOCK612_A64" --file "$INITRAMFS_ARM64" \
	-- sh inside.sh >"$TMPD/out.tgz" 2>"$TMPD/err"
rc=$?
echo "INFO: the machine ran for $(( $(date +%s) - start )) s"
grep -E '^phase|boot.raw' "$TMPD/err" | sed 's/^/INFO: /'
mkdir -p "$TMPD/in"
check "the machine ran the boots and gave back their files (status $rc)" \
	eval "[ $rc = 0 ] && tar xzf '$TMPD/out.tgz' -C '$TMPD/in'"
if [ ! -f "$TMPD/in/panic.rc" ]; then
	sed 's/^/   | /' "$TMPD/err" | tail -20
	finish
fi
cd "$TMPD/in" || finish

# The five early functions on each kernel.
for k in Image:arm64 Image-nopad:arm64-nopad Image-612nopad:lean-arm64-6.12-nopad stock-arm64-Image:arm64-6.1 \
	stock612-arm64-Image:arm64-6.12; do
	name=${k%%:*} ref=${k#*:}
	want=$(sed -n "s/^REFERENCE $ref: //p" "$TMPD/reference")
	got=$(grep -v '^#' "five-$name.txt" | sed -nE 's/^ *swapper\/0-0 .*[0-9]: ([a-z_]+) <-.*/\1/p' | tr '\n' ' ' | sed 's/ $//')
	check "$name: QEMU's breakpoints give the five's order (${want:-none})" [ "$(wc -w <<<"$want")" = 5 ]
	check "$name on the arm64 KVM host: the five once each, as swapper/0, in that order ($got)" [ "$got" = "$want" ]
	check "$name: stopped at kernel_init, status 0, three events before the hand-over and two after" \
		eval "[ \$(cat five-$name.rc) = 0 ] && grep -q '^vmmtrace: stopped at kernel_init (--stop-at)' five-$name.err &&
		      grep -qE '^vmmtrace: trace: 5 events \(3 before ftrace_init, 2 after\);.* 0 dropped' five-$name.err"
done
check "stock612-arm64-Image: the one-page stub in its page of padding, KASLR off for the trace" \
	eval "grep -q 'one page), its rings at' five-stock612-arm64-Image.err &&
	      grep -q 'nokaslr added to the command line' five-stock612-arm64-Image.err"
check "stock-arm64-Image with no --host: the KVM host boots it (an arm64 kernel on an arm64 machine with /dev/kvm)" \
	eval "grep -q '^vmmtrace: info: kvm: the stub at' five-stock-arm64-Image.err && ! grep -q 'qemu' five-stock-arm64-Image.err"
check "Image-nopad (6.1, no padding): the one-page stub in _end's guard page, mapped by tables added to swapper_pg_dir" \
	grep -q "one page, in _end's guard page, mapped by tables added to swapper_pg_dir" five-Image-nopad.err
check "Image-612nopad (6.12, no padding): the guard page mapped in the kernel's own tables at __primary_switched" \
	eval "grep -q \"one page, in _end's guard page, mapped when the kernel has built its tables\" five-Image-612nopad.err &&
	      grep -q \"the stub's guard page at 0x[0-9a-f]* mapped in the kernel's own tables\" five-Image-612nopad.err"

# The getpriority loops and the guest's own ftrace after the hand-over.
for cpus in 1 2; do
	arm64_loop_checks "arm64 KVM host, lean" "$cpus" "$TMPD/in/loop$cpus" "$(cat "loop$cpus.rc")"
done

# The flight recorder on a guest that panics.
check "panic: exit status 3 (got $(cat panic.rc)), stopped at emergency_restart" \
	eval "[ \$(cat panic.rc) = 3 ] && grep -q '^vmmtrace: guest kernel panic: vCPU 0 called emergency_restart()' panic.err"
recorder_checks "panic" panic.err PC
got=$(last_function panic.err)
check "panic: the last function event is the call of panic from kernel_init (${got:-none})" [ "$got" = "panic <-kernel_init" ]
check "panic: the console holds no kernel line (console= a UART the board lacks)" \
	eval "! grep -qE '^\[ *[0-9]+\.[0-9]+\]|Linux version' panic.con"
check "panic with --args: the recorder's panic call names its argument from the BTF beside the Image (fmt=)" \
	grep -qE ': panic\(fmt=0xffffff[0-9a-f]+(, \.\.\.)?\) <-kernel_init$' panic.err
check "hang: exit status 7 (got $(cat hang.rc)), one line says so, the console never came up" \
	eval "[ \$(cat hang.rc) = 7 ] && grep -qx 'vmmtrace: the guest made no progress for 5 s (--hang): no event recorded' hang.err &&
	      ! grep -qE '^\[ *[0-9]+\.[0-9]+\]|Linux version' hang.con"
recorder_checks "hang" hang.err PC
got=$(last_function hang.err)
check "hang: the last function event is the call of panic (${got:-none}), the vCPU spinning in its wait" \
	eval "case '$got' in 'panic <-'*) true ;; *) false ;; esac &&
	      grep -qE '^vmmtrace: flight recorder: vCPU 0 at (panic|[a-z_]*delay[a-z_]*|cpu_relax|arch_timer_read_counter[a-z_]*)\+0x[0-9a-f]+:$' hang.err"

# --event 'kvm:*': the PL011's ID registers read as MMIO exits (the AMBA
# bus's probe), on the clock of the function events around them.
first=$(grep -n ' kvm_mmio: mmio read len 4 gpa 0x9000fe0 val 0x11 ' ev.txt | head -1 | cut -d: -f1)
sk=$(grep -n ': start_kernel <-' ev.txt | cut -d: -f1)
ri=$(grep -n ': rest_init <-' ev.txt | cut -d: -f1)
check "--event 'kvm:*': status 0 (got $(cat ev.rc)), the guest's reboot ended it" \
	eval "[ \$(cat ev.rc) = 0 ] && grep -q '^vmmtrace: guest rebooted' ev.err"
check "--event 'kvm:*': the PL011's probe as MMIO exits (PrimeCell ID 0x11 at 0x9000fe0), after start_kernel and rest_init (lines $sk, $ri, $first)" \
	eval "[ -n '$first' ] && [ -n '$sk' ] && [ -n '$ri' ] && [ '$sk' -lt '$first' ] && [ '$ri' -lt '$first' ]"
# Whether a text trace's timestamps never go back.
monotonic() {
	grep -v '^#' "$1" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) { t = $i + 0; if (t < last) bad++; last = t; break } }
		END { exit bad > 0 }'
}
check "--event 'kvm:*': the timestamps never go back ($(grep -vc '^#' ev.txt) lines)" monotonic ev.txt
check "--handshake alone: status 0 (got $(cat hs.rc)); its rings left the init data: nothing lost, nothing rejected" \
	eval "[ \$(cat hs.rc) = 0 ] && grep -q '^vmmtrace: trace: 0 events .* 0 dropped' hs.err && ! grep -q rejected hs.err"
# This machine's KVM (Debian's 6.1) has no SMCCC filter: it answers PSCI itself, which is said, never faked.
check "--event 'kvm:*' on arm64: one line says port I/O and CPUID never come (arm64 has neither)" \
	eval "[ \$(grep -c '^vmmtrace: warning: kvm:pio, kvm:cpuid: arm64 guests bring this host none: none are recorded\$' ev.err) = 1 ]"
check "--event 'kvm:*' on 6.1's KVM: said once that it answers PSCI and SMCCC itself; no hypercall made up" \
	eval "[ \$(grep -c '^vmmtrace: warning: kvm:hypercall: this host.s KVM has no SMCCC filter .*: no hypercall events are recorded' ev.err) = 1 ] &&
	      ! grep -q kvm_hvc_arm64 ev.txt"
check "--handshake on 6.1's KVM: arm64's table says in one line why no call is known, with no warning" \
	eval "grep -q '^vmmtrace: handshake: arm64, SMCCC calls to the hypervisor: not recorded: this host.s KVM has no SMCCC filter' hs.err &&
	      ! grep -q 'warning: kvm:' hs.err"

# The sandbox.
check "sandbox: -v says it is on; a forbidden open under it failed with EPERM and the boot went on (status $(cat sb-eperm.rc))" \
	eval "[ \$(cat sb-eperm.rc) = 0 ] && grep -q '^vmmtrace: info: sandbox on: seccomp filter on every thread' sb-eperm.err &&
	      grep -q 'sandbox self-test: open(\"/etc/passwd\") Operation not permitted' sb-eperm.err"
check "sandbox: execve() under it killed vmmtrace with SIGSYS (status 159, got $(cat sb-kill.rc))" [ "$(cat sb-kill.rc)" = 159 ]

# --graph --retval on 2 vCPUs.
check "graph: status 0 (got $(cat graph.rc)), both steps passed" \
	eval "[ \$(cat graph.rc) = 0 ] && grep -q '^VMMTRACE-INIT: done passed=2 failed=0' graph.con"
graph_boot_checks "$TMPD/in/graph.txt"
want=$((2 * GLOOPS + GLOOPS))
got=$(grep -cE "__arm64_sys_getpriority\(\); /\* = 0x14 \*/\$|\} /\* __arm64_sys_getpriority = 0x14 \*/\$" graph.txt)
check "graph: $want getpriority returns, each 20 (the loops' and argcall's; got $got)" [ "$got" = "$want" ]

# Live attach.
check "attach: the boot reached markloop on both vCPUs" \
	eval "grep -q 'mark-loop: running cpu=0' att.con && grep -q 'mark-loop: running cpu=1' att.con"
check "attach: every thread of the running vmmtrace is in seccomp filter mode ($(grep -c . seccomp.txt) threads)" \
	eval "[ \$(grep -c . seccomp.txt) -ge 3 ] && ! grep -qv '^Seccomp:[[:space:]]*2\$' seccomp.txt"
check "attach: status names the KVM host and both vCPUs" \
	eval "grep -qx 'host: KVM' status0 && [ \$(grep -c '^vcpu [01]: ' status0) = 2 ]"
check "attach: vmmtrace nmi is refused in one line (status $(cat nmi.rc)): arm64 has no NMI to give" \
	eval "[ \$(cat nmi.rc) != 0 ] && [ \$(cat nmi.out nmi.err | wc -l) = 1 ] && grep -q 'cannot send an NMI' nmi.err"
check "attach: every one of the $CYCLES cycles' clients exited 0" eval "! grep -q 'attach status' attach.err"
digest0=$(sed -n 's/^slot bytes digest: //p' status0)
check "attach: slot bytes after the last detach equal those before the first ($digest0)" \
	eval "[ -n '$digest0' ] && [ '$digest0' = \"\$(sed -n 's/^slot bytes digest: //p' status1)\" ]"
check "attach: only the boot's own slot calls the stub after the last detach" grep -qx "slots calling the stub: 1" status1
check "attach: vmmtrace stop ends the boot, status 0 (stop $(cat stop.rc), boot $(cat att.rc))" \
	eval "[ \$(cat stop.rc) = 0 ] && [ \$(cat att.rc) = 0 ]"
check "attach: the control socket's file is gone at the end (unlinkat, arm64's unlink, allowed by the sandbox)" \
	grep -qx gone sock.txt
check "attach: no record unfinished or lost; no oops, panic or warning in the guest" \
	eval "! grep -qE 'unfinished|[1-9][0-9]* lost\\)' boot.err && ! grep -qE 'Oops|BUG:|Kernel panic|WARNING:|ftrace failed' att.con"
# The boot's markers, recorded raw there, as text here.
"$VMMTRACE" report boot.raw --format text -o boot.trace 2>report.err
check "attach: the boot's raw trace reads back here (status $?)" [ -s boot.trace ]
TMPD=$TMPD/in ATTACH_MARKER=__arm64_sys_sched_get_priority_max ATTACH_TARGET=__arm64_sys_getpriority attach_windows_check 2

# The same host on the KVM of Debian's 6.12 (the machine booted with it:
# --kernel), what an arm64 machine runs today: the five in order, and a
# loop's exact count through 32-record rings on 2 vCPUs. Its SMCCC filter
# brings PSCI to vmmtrace, which answers it: Debian's 6.12 as the guest on 2
# vCPUs with --event 'kvm:*' and --handshake, CPU 1 taken offline and back
# (PSCI CPU_OFF, AFFINITY_INFO, CPU_ON), then the getpriority loop on both.
HCLOOPS=500
cat >"$TMPD/inside612.sh" <<EOF
exec 3>&1 >out612 2>&1
uname -r
five="--trace start_kernel --trace setup_arch --trace trap_init --trace sched_init --trace rest_init --stop-at kernel_init"
timeout 100 vmmtrace boot Image \$five -o five.txt 2>five.err
echo "five status \$?"
grep -v '^#' five.txt | sed -nE 's/^ *swapper\/0-0 .*[0-9]: ([a-z_]+) <-.*/five \1/p'
timeout 200 vmmtrace boot Image --cpus 2 --buffer-size 4K --initrd initramfs-arm64.cpio --trace __arm64_sys_getpriority \
	--cmdline "vmmtrace.steps=syscall-loop vmmtrace.loops=$LOOPS vmmtrace.loop_cpus=2" -o loop.txt </dev/null >loop.out 2>loop.err
echo "loop status \$? events \$(grep -c ': __arm64_sys_getpriority <-' loop.txt)"
tail -n 1 loop.err
h=
for f in psci_dt_init kvm_init_hyp_services smp_init_cpus cpu_psci_cpu_boot cpu_psci_cpu_die notify_cpu_starting \
	__arm64_sys_getpriority; do h="\$h --trace \$f"; done
timeout 300 vmmtrace boot stock612-arm64-Image --cpus 2 --initrd initramfs-arm64.cpio --event 'kvm:*' --handshake \$h \
	--cmdline "vmmtrace.steps=cpu-hotplug,syscall-loop vmmtrace.loops=$HCLOOPS vmmtrace.loop_cpus=2" -o hc.raw \
	--console hc.con </dev/null >hc.out 2>hc.err
echo \$? >hc.rc
# The PSCI payload, answered by KVM (no --event) and by vmmtrace (--event kvm:hypercall), ended two ways.
for e in off reset2-vendor; do
	for m in kvm vmmtrace; do
		ev=; [ \$m = vmmtrace ] && ev="--event kvm:hypercall -o psci-\$e.raw"
		timeout 60 vmmtrace boot psci.Image --cpus 2 --mem 64M --cmdline "psci.end=\$e" \$ev \
			</dev/null >psci-\$e-\$m.con 2>psci-\$e-\$m.err
		echo \$? >psci-\$e-\$m.rc
	done
done
tar czf - out612 hc.raw hc.con hc.err hc.rc psci-* >&3
EOF
"$MACHINE" --kernel "$STOCK612_A64" --file "$TMPD/inside612.sh" --file "$LEAN_A64" --file "${LEAN_A64%/Image}/vmlinux.btf" \
	--file "$STOCK612_A64" --file "$INITRAMFS_ARM64" --file "$PSCI_PAYLOAD" -- sh inside612.sh >"$TMPD/out612.tgz" 2>"$TMPD/err612"
rc=$?
mkdir -p "$TMPD/in612"
tar xzf "$TMPD/out612.tgz" -C "$TMPD/in612" 2>/dev/null
cd "$TMPD/in612" || finish
touch out612 hc.rc hc.err hc.con hc.raw
sed 's/^/INFO: 6.12 host: /' out612
want=$(sed -n "s/^REFERENCE arm64: //p" "$TMPD/reference")
got=$(grep -v '^five status' out612 | sed -n 's/^five //p' | tr '\n' ' ' | sed 's/ $//')
check "on Debian 6.12's KVM (status $rc): the machine runs 6.12, the five in QEMU's order ($got), with no --host" \
	eval "[ $rc = 0 ] && grep -q '^6\.12\.' out612 && grep -qx 'five status 0' out612 && [ '$got' = '$want' ]"
check "on Debian 6.12's KVM: $((2 * LOOPS)) getpriority events through 32-record rings on 2 vCPUs, nothing dropped" \
	eval "grep -qx 'loop status 0 events $((2 * LOOPS))' out612 && grep -qE '^vmmtrace: trace: .* 0 dropped' out612"
sed -n '/^vmmtrace: handshake:/,$p' hc.err | sed 's/^/INFO: hc: /'
check "PSCI answered by vmmtrace: status 0 (got $(cat hc.rc)), CPU 1 offline and online again, the loop passed, no kernel warning" \
	eval "[ \$(cat hc.rc) = 0 ] && grep -q '^VMMTRACE-RESULT cpu-hotplug PASS 1 CPUs off and on' hc.con &&
	      grep -q '^VMMTRACE-INIT: done passed=2 failed=0' hc.con && ! grep -qE 'Oops|BUG:|WARNING:|Kernel panic' hc.con &&
	      ! grep -q 'warning: kvm:hypercall' hc.err"
"$VMMTRACE" report hc.raw -o hc.txt 2>hc.report.err
got=$(grep -c ': __arm64_sys_getpriority <-' hc.txt)
check "PSCI answered by vmmtrace: $((2 * HCLOOPS)) getpriority calls after CPU 1 came back ($got), nothing lost" \
	eval "[ '$got' = $((2 * HCLOOPS)) ] && grep -q '^vmmtrace: trace: .* 0 dropped (0 by the stub, 0 lost)' hc.err"
# The calls and the functions around them, in trace order: NAME(ARG)=ANSWER@CPU or function@CPU.
grep -v '^#' hc.txt | grep -v getpriority | sed -nE \
	-e 's/.*\[0*([0-9]+)\] .* kvm_hvc_arm64: HVC at 0x[0-9a-f]+ \(r0: 0x[0-9a-f]+\) (.*) = ([^[]*[^[ ]) \[.*/\2=\3@\1/p' \
	-e 's/.*\[0*([0-9]+)\] .*[0-9]: ([a-z_0-9]+) <-.*/\2@\1/p' | tr ' ' '_' >seq
sed 's/^/INFO: hc seq: /' seq
# seq_has LINE...: these lines, one after another, somewhere in seq.
seq_has() {
	awk -v want="$*" 'BEGIN { n = split(want, w, " ") } { s[NR] = $0 }
		END { for (i = 1; i + n - 1 <= NR; i++) { for (j = 1; j <= n && s[i + j - 1] == w[j]; j++); if (j > n) exit 0 } exit 1 }' seq
}
check "the guest's PSCI and SMCCC discovery between psci_dt_init and smp_init_cpus: version 1.1, SMCCC_VERSION's feature, KVM's UID and services" \
	seq_has psci_dt_init@0 'PSCI_VERSION()=1.1@0' 'PSCI_MIGRATE_INFO_TYPE()=NOT_PRESENT_MP@0' \
		'PSCI_FEATURES(SMCCC_VERSION)=SUCCESS@0' 'PSCI_FEATURES(PSCI_CPU_SUSPEND_64)=SUCCESS@0' \
		'PSCI_FEATURES(PSCI_SYSTEM_SUSPEND_64)=NOT_SUPPORTED@0' 'PSCI_FEATURES(PSCI_SYSTEM_RESET2_64)=SUCCESS@0' \
		kvm_init_hyp_services@0 'VENDOR_HYP_CALL_UID()=KVM@0' 'KVM_FEATURES()=0x3_FEATURES_PTP@0' smp_init_cpus@0
check "PSCI CPU_ON for CPU 1 between cpu_psci_cpu_boot on CPU 0 and CPU 1's first function, at boot and back online" \
	eval "[ \$(grep -c '^PSCI_CPU_ON(0x1,_...)=SUCCESS@0\$' seq) = 2 ] &&
	      seq_has cpu_psci_cpu_boot@0 'PSCI_CPU_ON(0x1,_...)=SUCCESS@0' notify_cpu_starting@1"
# CPU 0's AFFINITY_INFO and CPU 1's CPU_OFF may sort either way: each is
# stamped after its exit, and the two vCPUs' exits are that close.
check "CPU 1 offline: cpu_psci_cpu_die then PSCI CPU_OFF on CPU 1, AFFINITY_INFO on CPU 0 answered OFF, then CPU_ON brings it back" \
	eval "[ \"\$(grep -xE 'cpu_psci_cpu_die@1|PSCI_CPU_OFF\\(\\)=no_return@1' seq | tr '\\n' ' ')\" = 'cpu_psci_cpu_die@1 PSCI_CPU_OFF()=no_return@1 ' ] &&
	      grep -qx 'PSCI_AFFINITY_INFO(0x1,_...)=OFF@0' seq &&
	      [ \$(sed -n '/^PSCI_CPU_OFF/,\$p' seq | grep -c '^PSCI_CPU_ON(0x1,_...)=SUCCESS@0\$') = 1 ]"
check "steal time offered and taken (the guest's 'using stolen time PV'); the reboot a PSCI SYSTEM_RESET, last" \
	eval "grep -qx 'PV_TIME_FEATURES(PV_TIME_ST)=SUCCESS@0' seq && grep -q 'arm-pv: using stolen time PV' hc.con &&
	      [ \"\$(tail -n 1 seq)\" = 'PSCI_SYSTEM_RESET()=no_return@0' ]"
check "--handshake: arm64's table, PSCI 1.1 and KVM's services in its header, CPU_ON twice, what the guest asked of each" \
	eval "grep -q '^vmmtrace: handshake: arm64, SMCCC calls to the hypervisor: [0-9]*; PSCI 1.1; KVM vendor services 0x3 FEATURES PTP' hc.err &&
	      grep -qE '^  PSCI_CPU_ON +0xc4000003 2 .* 0x1 -> SUCCESS\$' hc.err &&
	      grep -qE '^  PSCI_FEATURES +0x8400000a 1 .* SMCCC_VERSION -> SUCCESS\$' hc.err &&
	      grep -qE '^  VENDOR_HYP_CALL_UID +0x8600ff01 1 .* kvm_init_hyp_services +-> KVM\$' hc.err"
# trace.dat: trace-cmd reads the hypercalls as the host kernel's kvm_hvc_arm64 event.
"$VMMTRACE" report hc.raw --format dat -o hc.dat 2>/dev/null
n_text=$(grep -c ' kvm_hvc_arm64: ' hc.txt)
if command -v trace-cmd >/dev/null; then
	trace-cmd report -i hc.dat >hc.dat.txt 2>/dev/null
	n_dat=$(grep -c 'kvm_hvc_arm64: *HVC at 0x[0-9a-f]\{16\} (r0: 0x[0-9a-f]\{16\}, imm: 0x0) x1 0x' hc.dat.txt)
	check "trace-cmd report: the $n_text hypercalls of the text, each a kvm_hvc_arm64 event ($n_dat)" \
		eval "[ '$n_text' -gt 10 ] && [ '$n_text' = '$n_dat' ] &&
		      grep -q 'kvm_hvc_arm64: *HVC at .*(r0: 0x00000000c4000003, imm: 0x0) x1 0x1 = 0\$' hc.dat.txt"
else
	fail "trace-cmd is missing (scripts/prepare-tests.sh installs it)"
fi

# The PSCI payload (docs/TEST-GUEST.md): the calls no Linux boot makes,
# answered by vmmtrace as by KVM itself. KVM is the reference: the two
# consoles, every answer's four registers printed, must be the same.
for e in off reset2-vendor; do
	touch psci-$e-kvm.con psci-$e-vmmtrace.con psci-$e-kvm.err psci-$e-vmmtrace.err psci-$e.raw
	nk=$(grep -c '^PSCI ' psci-$e-kvm.con)
	check "PSCI payload (psci.end=$e): KVM's answers and vmmtrace's the same, line for line ($nk answers), each run to its end" \
		eval "[ \$(cat psci-$e-kvm.rc) = 0 ] && [ \$(cat psci-$e-vmmtrace.rc) = 0 ] && [ $nk -gt 70 ] &&
		      cmp -s psci-$e-kvm.con psci-$e-vmmtrace.con && grep -qx 'PAYLOAD psci: end $e' psci-$e-kvm.con &&
		      ! grep -q 'PAYLOAD FATAL' psci-$e-kvm.con psci-$e-vmmtrace.con"
	if ! cmp -s psci-$e-kvm.con psci-$e-vmmtrace.con; then
		diff psci-$e-kvm.con psci-$e-vmmtrace.con | head -n 20 | sed 's/^/INFO: psci kvm <> vmmtrace: /'
	fi
done
check "PSCI payload: CPU 1 started twice (SMC32 and SMC64 CPU_ON), x1..x3 zero and IRQs masked at EL1 after the reset; a second CPU_ON ALREADY_ON, not pending" \
	eval "grep -qx 'CPU1 up context 0x1111 x1 0x0 x2 0x0 x3 0x0 daif 0x3c0 el 0x1 mpidr 0x1' psci-off-kvm.con &&
	      grep -qx 'CPU1 up context 0x3333 x1 0x0 x2 0x0 x3 0x0 daif 0x3c0 el 0x1 mpidr 0x1' psci-off-kvm.con &&
	      grep -qx 'PSCI CPU_ON/cpu1-again(0x1) = -4 0x0 0x0 0x0' psci-off-kvm.con"
check "PSCI payload: an MPIDR with bits outside the affinity fields refused (INVALID_PARAMS) by CPU_ON and AFFINITY_INFO" \
	eval "grep -qx 'PSCI CPU_ON64(0x1000001) = -2 0x0 0x0 0x0' psci-off-kvm.con &&
	      grep -qx 'PSCI AFFINITY_INFO(0x1000000,0x0) = -2 0x0 0x0 0x0' psci-off-kvm.con"
"$VMMTRACE" report psci-off.raw -o psci-off.txt 2>/dev/null
"$VMMTRACE" report psci-reset2-vendor.raw -o psci-reset2-vendor.txt 2>/dev/null
n_ev=$(grep -c ' kvm_hvc_arm64: ' psci-off.txt)
check "PSCI payload: its forwarded calls recorded ($n_ev) with vmmtrace's answers, CPU 1's on CPU 1, the SMC as an SMC; the end a SYSTEM_OFF" \
	eval "grep -q 'vmmtrace: trace: $n_ev VM events' psci-off-vmmtrace.err && [ $n_ev -gt 70 ] &&
	      grep -q '\\[000\\] .* SMC at .* PSCI_VERSION() = 1.1' psci-off.txt &&
	      grep -q ' PSCI_CPU_ON(0x1000001, ...) = INVALID_PARAMS' psci-off.txt &&
	      grep -q ' PSCI_FEATURES(PSCI_CPU_ON_64) = SUCCESS' psci-off.txt &&
	      [ \$(grep -c '\\[001\\] .* PSCI_CPU_OFF() = no return' psci-off.txt) = 2 ] &&
	      grep ' kvm_hvc_arm64: ' psci-off.txt | tail -n 1 | grep -q ' PSCI_SYSTEM_OFF() = no return' &&
	      grep -qx 'vmmtrace: guest powered off' psci-off-vmmtrace.err"
check "PSCI payload: a vendor SYSTEM_RESET2 (SMC64) reboots the guest (status 0 with KVM's answer and with vmmtrace's), recorded last" \
	eval "grep -qx 'vmmtrace: guest rebooted (system reset event)' psci-reset2-vendor-vmmtrace.err &&
	      grep ' kvm_hvc_arm64: ' psci-reset2-vendor.txt | tail -n 1 | grep -q ' PSCI_SYSTEM_RESET2(0x80000000, ...) = no return'"
# A raw Image without kallsyms boots untraced; tracing it is refused in one line.
for o in --trace:psci_main --stop-at:psci_main --control:$TMPD/unplaced.sock; do
	"$VMMTRACE" boot "$PSCI_PAYLOAD" "${o%%:*}" "${o#*:}" </dev/null >"$TMPD/unplaced.out" 2>"$TMPD/unplaced.err"
	check "PSCI payload: ${o%%:*} on an Image without kallsyms: status 2, one line saying why" \
		eval "[ $? = 2 ] && [ \$(wc -l <'$TMPD/unplaced.err') = 1 ] &&
		      grep -q 'CONFIG_KALLSYMS.*; ${o%%:*} needs the kernel' '$TMPD/unplaced.err'"
done
# Traced with no stub (VM events alone) under the QEMU host too: no rings region to reserve.
timeout -k 5 60 "$VMMTRACE" boot "$PSCI_PAYLOAD" --host qemu --cpus 2 --handshake </dev/null >"$TMPD/unplaced.out" 2>"$TMPD/unplaced.err"
check "PSCI payload under the QEMU host with --handshake: it runs to its power-off (status $?), the table's absence said" \
	eval "[ $? = 0 ] && grep -q '^PAYLOAD psci: start' '$TMPD/unplaced.out' && grep -q '^vmmtrace: --handshake: no table' '$TMPD/unplaced.err'"
finish
