#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# --flight-recorder (docs/VM-EVENTS.md) on the lean kernel, three guests:
# - one that panics in setup_arch, before its console is up, and then spins
#   (memmap=exactmap leaves no RAM; the panic comes before panic= is
#   parsed, so it never reboots): --hang stops it, exit status 7, and the
#   recorder's last events end in the call of panic, made from the e820
#   code, with the vCPU's registers; the console stays empty, no trace;
# - one that panics with no console at all (console=ttyS1, which it does
#   not have) because it has no init to run (no initramfs): with panic=-1 it would
#   reboot at once; the recorder's breakpoint on emergency_restart() stops
#   it first, exit status 3, and the last function event is panic; this
#   one also records with --args, which the recorder prints too;
# - one that ends normally (--stop-at): the recorder prints nothing.
. "$(dirname "$0")/../lib.sh"
require_file "$VMMTRACE"
require_file "$LEAN_BZIMAGE"
require_kvm

echo "== a panic in setup_arch before the console is up; --hang"
timeout -k 5 300 "$VMMTRACE" boot "$LEAN_BZIMAGE" --mem 512M --cmdline memmap=exactmap \
	--flight-recorder 40 --trace panic --trace setup_arch --trace 'e820__*' --event 'kvm:*' --hang 20 \
	--console "$TMPD/hang.con" </dev/null >"$TMPD/hang.out" 2>"$TMPD/hang.err"
rc=$?
check "exit status 7: no progress (got $rc)" [ "$rc" = 7 ]
check "one line says so" grep -qx 'vmmtrace: the guest made no progress for 20 s (--hang): no event recorded' "$TMPD/hang.err"
check "the console never came up (empty) and no trace was written (stdout empty)" \
	eval "[ ! -s '$TMPD/hang.con' ] && [ ! -s '$TMPD/hang.out' ]"
recorder_checks "hang" "$TMPD/hang.err" RIP '^CR0: '
got=$(last_function "$TMPD/hang.err")
check "the last function event is the call of panic, from the e820 code (${got:-none})" \
	eval "case '$got' in 'panic <-e820_'*) true ;; *) false ;; esac"

echo "== a panic with no console, which panic=-1 would reboot at once"
# vmmtrace's own command line, with the console moved to a port the guest lacks.
cmdline=$("$VMMTRACE" boot "$LEAN_BZIMAGE" -v --stop-at start_kernel --console /dev/null </dev/null 2>&1 |
	sed -nE 's/^vmmtrace: info: compat layer [a-z]+; command line: //p' | sed 's/console=ttyS0/console=ttyS1/')
echo "INFO: command line: $cmdline"
check "the command line has the console on ttyS1 and panic=-1" \
	eval "case '$cmdline' in *console=ttyS1*panic=-1*) true ;; *) false ;; esac"
timeout -k 5 400 "$VMMTRACE" boot "$LEAN_BZIMAGE" --mem 512M --cmdline-replace "$cmdline" \
	--flight-recorder 20 --args --trace panic --trace kernel_init --trace 'try_to_run_init_process' \
	--console "$TMPD/panic.con" </dev/null >"$TMPD/panic.out" 2>"$TMPD/panic.err"
rc=$?
check "exit status 3: a panic (got $rc)" [ "$rc" = 3 ]
check "stopped at emergency_restart(), before the reset" \
	grep -q '^vmmtrace: guest kernel panic: vCPU 0 called emergency_restart()' "$TMPD/panic.err"
check "nothing on the console (ttyS1 does not exist) and no trace" \
	eval "[ ! -s '$TMPD/panic.con' ] && [ ! -s '$TMPD/panic.out' ]"
recorder_checks "panic" "$TMPD/panic.err" RIP '^CR0: '
got=$(last_function "$TMPD/panic.err")
check "the last function event is the call of panic from kernel_init (no init to run: ${got:-none})" \
	eval "[ '$got' = 'panic <-kernel_init' ] && grep -qE ' try_to_run_init_process\(init_filename=0xffffffff[0-9a-f]{8}\) <-kernel_init$' '$TMPD/panic.err'"
check "--args: the recorder prints panic's format pointer, and '...' for the rest of a variadic call" \
	grep -qE ': panic\(fmt=0xffffffff[0-9a-f]{8}, \.\.\.\) <-kernel_init$' "$TMPD/panic.err"
check "vCPU 0 stopped in emergency_restart" grep -q '^vmmtrace: flight recorder: vCPU 0 at emergency_restart+0x0:$' "$TMPD/panic.err"

echo "== a normal end: nothing from the recorder"
timeout -k 5 300 "$VMMTRACE" boot "$LEAN_BZIMAGE" --mem 512M --flight-recorder 100 --stop-at trap_init \
	--console /dev/null </dev/null >"$TMPD/ok.out" 2>"$TMPD/ok.err"
rc=$?
check "status 0, stopped at trap_init (got $rc)" \
	eval "[ '$rc' = 0 ] && grep -q 'stopped at trap_init (--stop-at)' '$TMPD/ok.err'"
check "no flight recorder output, no trace" \
	eval "! grep -q 'flight recorder' '$TMPD/ok.err' && [ ! -s '$TMPD/ok.out' ]"
finish
