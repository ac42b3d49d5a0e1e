#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# vmmtrace boot --host qemu (vmm/qemu/host-qemu-boot.c) on the lean kernels under
# QEMU TCG (tracing there: test-qemu-trace):
#  - arm64 and riscv64 Images without a root file system: the console on
#    stdout, the kernel's panic repeated on stderr, status 3;
#  - the lean x86_64 kernel with the test initramfs: its steps pass, the
#    guest reboots, status 0;
#  - SIGTERM ends QEMU too: status 143, no QEMU left;
#  - traced, the trace so far is written and counted whatever ends the
#    run: SIGTERM (143), QEMU killed under vmmtrace (1, one line naming
#    the signal), an output that cannot be written (6, one line);
#  - guest input: the test /init's wait-host step gets the line written to
#    vmmtrace's stdin (a FIFO) once it asks, untraced and traced;
#  - bad input, one line and status 2 each: what the QEMU host does not do
#    yet (--event), a --trace that
#    matches nothing, --arch that is not the kernel's, --host of no such host, a
#    --console that cannot be opened, --mem not in whole MiB; a QEMU that
#    cannot be run: status 1.
. "$(dirname "$0")/../lib.sh"
require_file "$VMMTRACE"
A64=$VMMTRACE_CACHE/lean-arm64/Image
RV=$VMMTRACE_CACHE/lean-riscv64/Image
require_file "$A64"
require_file "$RV"
require_file "$LEAN_BZIMAGE"
require_file "$INITRAMFS"
require_file "$INITRAMFS_ARM64"

# boot NAME ARGS...: vmmtrace boot ARGS, stdout and stderr to NAME.out/.err; sets rc.
boot() {
	local name=$1
	shift
	timeout -k 5 120 "$VMMTRACE" boot "$@" </dev/null >"$TMPD/$name.out" 2>"$TMPD/$name.err"
	rc=$?
	echo "INFO: $name: status $rc"
}

for arch in arm64 riscv64; do
	img=$A64
	[ $arch = riscv64 ] && img=$RV
	boot "$arch" "$img" --cpus 2
	check "$arch: a kernel without a root file system panics: status 3 (got $rc)" [ "$rc" = 3 ]
	check "$arch: the console is on stdout" grep -q 'Linux version 6\.1' "$TMPD/$arch.out"
	check "$arch: the panic is one line on stderr" \
		eval "[ \"\$(cat '$TMPD/$arch.err')\" = 'vmmtrace: guest kernel panic: No working init found.  Try passing init= option to kernel. See Linux Documentation/admin-guide/init.rst for guidance.' ]"
done
check "arm64: booted with nokaslr on the virt board's PL011" grep -q 'Kernel command line: console=ttyAMA0 nokaslr panic=-1' "$TMPD/arm64.out"

boot x86 "$LEAN_BZIMAGE" --host qemu --initrd "$INITRAMFS" --cmdline vmmtrace.steps=uname
check "x86_64 --host qemu: the guest's steps pass and it reboots: status 0 (got $rc)" \
	eval "[ $rc = 0 ] && grep -q '^VMMTRACE-INIT: done passed=1 failed=0' '$TMPD/x86.out'"

# SIGTERM: QEMU goes with vmmtrace. The marker finds any QEMU left behind.
marker="vt-boot-qemu-$$"
"$VMMTRACE" boot "$A64" --cmdline "$marker" </dev/null >"$TMPD/term.out" 2>"$TMPD/term.err" &
vt=$!
sleep 0.3
kill -TERM "$vt"
wait "$vt"
rc=$?
sleep 0.2
check "SIGTERM: status 143 (got $rc)" [ "$rc" = 143 ]
check "... and no QEMU is left" eval "! pgrep -f '$marker' >/dev/null"

# events_match ERR TXT: the summary's event count is the number of events in the text trace.
events_match() {
	local n
	n=$(sed -n 's/^vmmtrace: trace: \([0-9]*\) events.*/\1/p' "$1")
	[ -n "$n" ] && [ "$n" -gt 0 ] && [ "$n" = "$(grep -vc '^#' "$2")" ]
}
marker="vt-traced-term-$$"
# The guest must be running, traced, when the signal comes: its console's first line says so.
"$VMMTRACE" boot "$A64" --trace '*' -o "$TMPD/tterm.txt" --cmdline "$marker" </dev/null >"$TMPD/tterm.con" 2>"$TMPD/tterm.err" &
vt=$!
wait_line "$TMPD/tterm.con" 'Linux version' 60 "$vt"
kill -TERM "$vt"
wait "$vt"
rc=$?
check "traced, SIGTERM: status 143 (got $rc)" [ "$rc" = 143 ]
check "traced, SIGTERM: the stop's line, and every event counted is written ($(head -c 300 "$TMPD/tterm.err"))" \
	eval "grep -q '^vmmtrace: stopped by signal 15' '$TMPD/tterm.err' && events_match '$TMPD/tterm.err' '$TMPD/tterm.txt'"
check "traced, SIGTERM: no QEMU left" eval "! pgrep -f '$marker' >/dev/null"
marker="vt-traced-kill-$$"
"$VMMTRACE" boot "$A64" --trace '*' -o "$TMPD/tkill.txt" --cmdline "$marker" </dev/null >"$TMPD/tkill.con" 2>"$TMPD/tkill.err" &
vt=$!
wait_line "$TMPD/tkill.con" 'Linux version' 60 "$vt"
pkill -KILL -f "qemu-system.*$marker"
wait "$vt"
rc=$?
check "traced, QEMU killed: status 1 (got $rc)" [ "$rc" = 1 ]
check "traced, QEMU killed: one line says so, then the summary; every event counted is written ($(head -c 300 "$TMPD/tkill.err"))" \
	eval "[ \"\$(head -1 '$TMPD/tkill.err')\" = 'vmmtrace: qemu died (signal 9, Killed): the guest is gone' ] && ! grep -q warning '$TMPD/tkill.err' && events_match '$TMPD/tkill.err' '$TMPD/tkill.txt'"
boot tfull "$RV" --trace '*' -o /dev/full
check "traced, an output that cannot be written: status 6, one line (got $rc: $(head -c 300 "$TMPD/tfull.err"))" \
	eval "[ $rc = 6 ] && [ \$(wc -l <'$TMPD/tfull.err') = 1 ] && grep -q 'cannot write /dev/full: No space left on device' '$TMPD/tfull.err'"

boot event "$A64" --trace start_kernel --event kvm:pio
check "--event under QEMU: status 2, one line (got $rc: $(cat "$TMPD/event.err"))" \
	eval "[ $rc = 2 ] && [ \$(wc -l <'$TMPD/event.err') = 1 ] && grep -q 'the QEMU host (--host qemu) reports no VM exits: --event' '$TMPD/event.err'"
boot x86room "$LEAN_BZIMAGE" --host qemu --trace start_kernel --mem 64M --buffer-size 16M
check "an x86_64 kernel traced under QEMU, its rings more than a quarter of --mem: status 2, one line (got $rc: $(cat "$TMPD/x86room.err"))" \
	eval "[ $rc = 2 ] && [ \$(wc -l <'$TMPD/x86room.err') = 1 ] && grep -q 'rings take more than a quarter of --mem' '$TMPD/x86room.err'"
boot nomatch "$RV" --trace 'no_such_function_*'
check "a --trace that matches nothing under QEMU: status 2, one line (got $rc: $(cat "$TMPD/nomatch.err"))" \
	eval "[ $rc = 2 ] && [ \$(wc -l <'$TMPD/nomatch.err') = 1 ] && grep -q 'no traceable function matches' '$TMPD/nomatch.err'"
boot archbad "$A64" --arch riscv64
check "--arch that is not the kernel's: status 2 (got $rc: $(cat "$TMPD/archbad.err"))" \
	eval "[ $rc = 2 ] && grep -q 'the kernel is arm64, not riscv64' '$TMPD/archbad.err'"
boot hostbad "$A64" --host xen
check "--host xen: status 2 (got $rc: $(cat "$TMPD/hostbad.err"))" [ "$rc" = 2 ]
boot kvmarm "$A64" --host kvm
check "--host kvm for an arm64 kernel: status 2 (got $rc: $(cat "$TMPD/kvmarm.err"))" \
	eval "[ $rc = 2 ] && grep -q 'not x86_64' '$TMPD/kvmarm.err'"
boot elfq "$VMMTRACE_CACHE/lean-arm64/vmlinux" --host qemu
check "--host qemu with an ELF vmlinux: status 2 (got $rc: $(cat "$TMPD/elfq.err"))" \
	eval "[ $rc = 2 ] && grep -q 'not an ELF vmlinux' '$TMPD/elfq.err'"
boot elfarm "$VMMTRACE_CACHE/lean-arm64/vmlinux"
check "an arm64 ELF vmlinux is refused as before: status 2 (got $rc: $(cat "$TMPD/elfarm.err"))" \
	eval "[ $rc = 2 ] && grep -q 'ELF is for aarch64 (e_machine 183), not x86_64' '$TMPD/elfarm.err'"
boot initrdbad "$A64" --initrd "$TMPD/no-such-initrd"
check "a missing initrd under QEMU: status 2, vmmtrace's own line (got $rc: $(cat "$TMPD/initrdbad.err"))" \
	eval "[ $rc = 2 ] && [ \$(wc -l <'$TMPD/initrdbad.err') = 1 ] && grep -q 'cannot read initrd' '$TMPD/initrdbad.err'"
boot conbad "$A64" --console /nonexistent/dir/console
check "--console that cannot be opened: status 2, one line (got $rc: $(cat "$TMPD/conbad.err"))" \
	eval "[ $rc = 2 ] && [ \$(wc -l <'$TMPD/conbad.err') = 1 ] && grep -q \"cannot open --console '/nonexistent/dir/console'\" '$TMPD/conbad.err'"
boot membad "$A64" --mem 100000K
check "--mem not in whole MiB: status 2 (got $rc: $(cat "$TMPD/membad.err"))" [ "$rc" = 2 ]
timeout 30 env PATH=/nonexistent "$VMMTRACE" boot "$A64" </dev/null >"$TMPD/noqemu.out" 2>"$TMPD/noqemu.err"
rc=$?
check "no QEMU to run: status 1, one line (got $rc: $(cat "$TMPD/noqemu.err"))" \
	eval "[ $rc = 1 ] && [ \$(wc -l <'$TMPD/noqemu.err') = 1 ] && grep -q 'cannot run qemu-system-aarch64' '$TMPD/noqemu.err'"
# input NAME ARGS...: the arm64 test /init's wait-host step, answered through stdin (a FIFO).
input() {
	local name=$1 i
	shift
	rm -f "$TMPD/$name.fifo" "$TMPD/$name.console"
	mkfifo "$TMPD/$name.fifo"
	timeout -k 5 120 "$VMMTRACE" boot "$A64" --host qemu --initrd "$INITRAMFS_ARM64" --console "$TMPD/$name.console" \
		--cmdline "vmmtrace.steps=wait-host,uname vmmtrace.wait_secs=60" "$@" <"$TMPD/$name.fifo" 2>"$TMPD/$name.err" &
	local vt=$!
	exec 7>"$TMPD/$name.fifo"
	for ((i = 0; i < 600; i++)); do
		grep -q 'wait-host: ready=1' "$TMPD/$name.console" 2>/dev/null && break
		kill -0 "$vt" 2>/dev/null || break
		sleep 0.1
	done
	echo go >&7
	exec 7>&-
	wait "$vt"
	rc=$?
	tr -d '\r' <"$TMPD/$name.console" >"$TMPD/$name.con"
}
input in-plain
check "guest input, untraced: wait-host got the line from stdin, status 0 (got $rc)" \
	eval "[ $rc = 0 ] && grep -q \"^VMMTRACE-RESULT wait-host PASS 1: the host answered 'go'\" '$TMPD/in-plain.con' && grep -q '^VMMTRACE-INIT: done passed=2 failed=0' '$TMPD/in-plain.con'"
input in-traced --trace __arm64_sys_newuname -o "$TMPD/in-traced.txt"
check "guest input, traced: wait-host got the line, status 0 (got $rc), uname traced" \
	eval "[ $rc = 0 ] && grep -q \"^VMMTRACE-RESULT wait-host PASS 1: the host answered 'go'\" '$TMPD/in-traced.con' && grep -q ': __arm64_sys_newuname <-' '$TMPD/in-traced.txt'"
finish
