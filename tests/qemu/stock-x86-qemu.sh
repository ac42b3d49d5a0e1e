#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Debian's stock x86_64 kernel (the bzImage scripts/fetch-debian-kernel.sh
# fetches) traced under QEMU, on 2 vCPUs, with the test initramfs plus
# 16 MiB of ballast (an initrd QEMU puts where a first guess of the stub's
# region would be):
#  - as on hardware KVM (issue 29): the QEMU host adds none of the options
#    that only shorten an emulated boot, so the kernel runs its own checks
#    (crypto self-tests, the W+X walk) on what vmmtrace put into its
#    address space; traced at start_kernel, kernel_init, mark_rodata_ro
#    (which runs the W+X check), the uname handler and a '*'-free set of
#    a few hundred functions (setup_*, x86_*, vfs_*, e820__*, memblock_*):
#    /init's steps pass and the guest reboots (status 0), start_kernel,
#    kernel_init and mark_rodata_ro once each, uname's calls from user
#    space, events of every glob, no oops, no warning;
#  - the stub's region was placed clear of the initrd (below its start);
#  - the kernel's own W+X check (CONFIG_DEBUG_WX) walks the stub's page
#    tables, which it reads through its direct map (they are a setup_data
#    node), and finds no W+X page;
#  - --trace '*' (every one of its ~40,000 slots) from the first call to
#    the reboot: over 5 million events, every one counted written, none
#    dropped, each CPU's in its own ring under its own number
#    (trace_all_cpus_check), no oops or warning.
. "$(dirname "$0")/../lib.sh"
require_file "$VMMTRACE"
STOCK=$VMMTRACE_CACHE/stock-bzImage
require_file "$STOCK"
require_file "$INITRAMFS"
mkdir -p "$TMPD/pad"
head -c 16777216 /dev/urandom >"$TMPD/pad/ballast"
(cd "$TMPD/pad" && echo ballast | cpio -o -H newc 2>/dev/null) >"$TMPD/pad.cpio"
cat "$INITRAMFS" "$TMPD/pad.cpio" >"$TMPD/initrd.cpio"

timeout -k 5 300 "$VMMTRACE" boot "$STOCK" --host qemu --cpus 2 --initrd "$TMPD/initrd.cpio" -v \
	--cmdline vmmtrace.steps=cpus,uname --trace start_kernel --trace kernel_init --trace __x64_sys_newuname \
	--trace mark_rodata_ro --trace 'setup_*' --trace 'x86_*' --trace 'vfs_*' --trace 'e820__*' --trace 'memblock_*' \
	-o "$TMPD/trace.txt" --console "$TMPD/console" </dev/null 2>"$TMPD/err"
rc=$?
tr -d '\r' <"$TMPD/console" >"$TMPD/con"
grep '^vmmtrace: trace:' "$TMPD/err" | sed 's/^/INFO: /'
check "traced: /init's steps pass, the guest reboots: status 0 (got $rc)" \
	eval "[ $rc = 0 ] && grep -q '^VMMTRACE-INIT: done passed=2 failed=0' '$TMPD/con'"
events="start_kernel=$(grep -c ': start_kernel <-' "$TMPD/trace.txt") kernel_init=$(grep -c ': kernel_init <-' "$TMPD/trace.txt") mark_rodata_ro=$(grep -c ': mark_rodata_ro <-' "$TMPD/trace.txt")"
check "start_kernel, kernel_init and mark_rodata_ro once each ($events)" \
	test "$events" = "start_kernel=1 kernel_init=1 mark_rodata_ro=1"
held=$(sed -nE 's/^vmmtrace: info: attached as client 0: ([0-9]+) slots match.*/\1/p' "$TMPD/err")
check "a few hundred slots traced, not '*' ($held)" eval "[ -n '$held' ] && [ '$held' -gt 300 ] && [ '$held' -lt 2000 ]"
for g in setup_ x86_ vfs_ e820__ memblock_; do
	n=$(grep -cE ": $g[a-z0-9_]* <-" "$TMPD/trace.txt")
	check "events of $g* ($n)" [ "$n" -gt 0 ]
done
cmdline=$(sed -n 's/.*Command line: //p' "$TMPD/con" | head -n 1)
check "the kernel's own checks on: no speed-only option on its command line ($cmdline)" \
	eval "[ -n '$cmdline' ] && ! echo '$cmdline' | grep -qE 'rodata=off|cryptomgr.notests|initcall_blacklist'"
check "uname's calls from user space" grep -qE '^ *uname-[0-9]+ .*: __x64_sys_newuname <-do_syscall_64$' "$TMPD/trace.txt"
region=$(sed -nE 's/.*the x86_64 stub.s region at guest-physical (0x[0-9a-f]+) \(([0-9]+) MiB\).*/\1 \2/p' "$TMPD/err")
ramdisk=$(sed -nE 's/.*RAMDISK: \[mem (0x[0-9a-f]+)-.*/\1/p' "$TMPD/con")
read -r rpa rmib <<<"$region"
check "the stub's region ($rpa, $rmib MiB) ends below the initrd ($ramdisk)" \
	eval "[ -n '$rpa' ] && [ -n '$ramdisk' ] && [ \$(( $rpa + ($rmib << 20) )) -le \$(( $ramdisk )) ]"
check "the kernel's W+X check read the stub's tables and passed" \
	grep -q 'x86/mm: Checked W+X mappings: passed, no W+X pages found' "$TMPD/con"
check "no oops, no warning" sh -c "! grep -qE 'Oops|BUG:|WARNING:|ftrace failed' '$TMPD/con'"

trace_all_count all "$STOCK" --host qemu --cpus 2 --initrd "$INITRAMFS" --cmdline vmmtrace.steps=uname
check "--trace '*', 2 vCPUs: /init finished and the guest rebooted: status 0 (got $rc)" \
	eval "[ $rc = 0 ] && tr -d '\r' <'$TMPD/all.con' | grep -q '^VMMTRACE-INIT: done passed=1 failed=0'"
check "--trace '*', 2 vCPUs: $n events (over 5 million), every one counted written, none dropped" \
	eval "[ '$n' -gt 5000000 ] && grep -qE '^vmmtrace: trace: $n events .* 0 dropped' '$TMPD/all.err' && ! grep -q 'not written' '$TMPD/all.err'"
trace_all_cpus_check all
check "--trace '*': the W+X check passed, no oops, no warning" \
	eval "tr -d '\r' <'$TMPD/all.con' | grep -q 'Checked W+X mappings: passed' && ! tr -d '\r' <'$TMPD/all.con' | grep -qE 'Oops|BUG:|WARNING:|ftrace failed'"
finish
