#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# --flight-recorder, --hang and --handshake under --host qemu: the one boot
# driver gives them every host (issue 28). On the lean arm64 and riscv64
# kernels, two guests each:
# - one that spins: mem=1M leaves the kernel too little memory and it
#   dies in setup_arch, before its console is up, before ftrace_init and
#   before panic= is parsed, so it never reboots: --hang stops it (exit
#   status 7), the recorder's last events end in the call of panic, and
#   every vCPU's registers are printed with the PC symbolised;
# - one that panics with no console at all (console= a UART the machine
#   lacks) because it has no init to run: panic=-1 would reset it at once;
#   the recorder's breakpoint on emergency_restart() stops it first (exit
#   status 3), the last function event is the call of panic from
#   kernel_init.
# The consoles hold no line of the kernel's (riscv64's holds OpenSBI's
# banner, printed before the kernel runs). And --handshake under QEMU: the
# boot goes on to the guest's reboot, one line says what the table cannot
# show there, and the stub's rings left the init data at the hand-over.
. "$(dirname "$0")/../lib.sh"
require_file "$VMMTRACE"

for arch in arm64 riscv64; do
	img=$VMMTRACE_CACHE/lean-$arch/Image
	require_file "$img"
	case $arch in
	arm64) uart=ttyAMA0 nouart=ttyAMA3 ;;
	riscv64) uart=ttyS0 nouart=ttyS3 ;;
	esac

	echo "== $arch: a guest that dies in its early set-up and spins; --hang"
	timeout -k 5 120 "$VMMTRACE" boot "$img" --host qemu --cmdline mem=1M --flight-recorder 30 \
		--trace panic --trace 'make_task_dead' --trace 'memblock_alloc*' --trace setup_arch --hang 5 \
		--console "$TMPD/$arch-hang.con" </dev/null >"$TMPD/$arch-hang.out" 2>"$TMPD/$arch-hang.err"
	rc=$?
	check "$arch: exit status 7, no progress (got $rc)" [ "$rc" = 7 ]
	check "$arch: one line says so" \
		grep -qx 'vmmtrace: the guest made no progress for 5 s (--hang): no event recorded' "$TMPD/$arch-hang.err"
	check "$arch: the kernel's console never came up and no trace was written (stdout empty)" \
		eval "! grep -qE '^\[ *[0-9]+\.[0-9]+\]|Linux version' '$TMPD/$arch-hang.con' && [ ! -s '$TMPD/$arch-hang.out' ]"
	recorder_checks "$arch hang" "$TMPD/$arch-hang.err" PC
	got=$(last_function "$TMPD/$arch-hang.err")
	check "$arch: the last function event is the call of panic (${got:-none})" \
		eval "case '$got' in 'panic <-'*) true ;; *) false ;; esac"
	check "$arch: and the vCPU spins in panic's wait, its PC inside panic" \
		grep -qE '^vmmtrace: flight recorder: vCPU 0 at (panic|__delay|__const_udelay|__udelay|delay_loop|delay_tsc|__timer_delay|cpu_relax|arch_timer_read_counter|[a-z_]*delay[a-z_]*)\+0x[0-9a-f]+:$' \
		"$TMPD/$arch-hang.err"

	echo "== $arch: a panic with no console, which panic=-1 would reset at once"
	timeout -k 5 120 "$VMMTRACE" boot "$img" --host qemu --cmdline-replace "console=$nouart panic=-1" \
		--flight-recorder 20 --trace panic --trace kernel_init --trace 'try_to_run_init_process' \
		--console "$TMPD/$arch-panic.con" </dev/null >"$TMPD/$arch-panic.out" 2>"$TMPD/$arch-panic.err"
	rc=$?
	check "$arch: exit status 3, a panic (got $rc)" [ "$rc" = 3 ]
	check "$arch: stopped at emergency_restart(), before the reset" \
		grep -q '^vmmtrace: guest kernel panic: vCPU [0-9] called emergency_restart()' "$TMPD/$arch-panic.err"
	check "$arch: nothing of the kernel's on the console ($nouart does not exist) and no trace" \
		eval "! grep -qE '^\[ *[0-9]+\.[0-9]+\]|Linux version' '$TMPD/$arch-panic.con' && [ ! -s '$TMPD/$arch-panic.out' ]"
	recorder_checks "$arch panic" "$TMPD/$arch-panic.err" PC
	got=$(last_function "$TMPD/$arch-panic.err")
	check "$arch: the last function event is the call of panic from kernel_init (no init to run: ${got:-none})" \
		[ "$got" = 'panic <-kernel_init' ]
	check "$arch: vCPU 0 stopped in emergency_restart" \
		grep -qE '^vmmtrace: flight recorder: vCPU 0 at emergency_restart\+0x0:$' "$TMPD/$arch-panic.err"
done

# To the guest's reboot after /init: past free_initmem, which frees the init
# data the stub's rings start in (they must move at the hand-over, no slot
# traced or not: once they did not, and the host read and wrote memory the
# guest had reused).
echo "== --handshake under QEMU: one line on what it cannot show"
require_file "$INITRAMFS_ARM64"
timeout -k 5 120 "$VMMTRACE" boot "$VMMTRACE_CACHE/lean-arm64/Image" --host qemu --handshake --initrd "$INITRAMFS_ARM64" \
	--console "$TMPD/hs.con" </dev/null >"$TMPD/hs.out" 2>"$TMPD/hs.err"
rc=$?
sed 's/^/INFO: /' "$TMPD/hs.err"
check "--handshake under QEMU: the boot runs to /init and the guest's reboot, status 0 (got $rc)" \
	eval "[ $rc = 0 ] && grep -q '^VMMTRACE-INIT: done' '$TMPD/hs.con'"
check "--handshake under QEMU: the rings moved out of the init data at the hand-over: nothing lost, nothing rejected" \
	eval "grep -q '^vmmtrace: trace: 0 events .* 0 dropped' '$TMPD/hs.err' && ! grep -q 'rejected' '$TMPD/hs.err'"
check "--handshake under QEMU: one line says there is no table, and why" eval \
	"[ \$(grep -c '^vmmtrace: --handshake: no table: the qemu host reports no VM exits' '$TMPD/hs.err') = 1 ]"
check "--handshake under QEMU: no table rows" eval "! grep -q '^vmmtrace: handshake: ' '$TMPD/hs.err'"
finish
