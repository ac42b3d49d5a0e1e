#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The lean arm64 kernel under QEMU with its test initramfs (Debian's
# busybox-static:arm64, the test /init, sysloop cross-built), traced by
# vmmtrace through user space, on 1 and on 2 vCPUs:
#  - exact counts, lossless: one sysloop per vCPU makes LOOPS getpriority
#    calls each; the trace of __arm64_sys_getpriority holds exactly that
#    many events per worker's pid (plus the hand-off step's 3), nothing
#    dropped: on 1 vCPU with --buffer-size 4K, 32-record rings in the
#    image's init-data tail that wrap dozens of times (drained at the
#    doorbell);
#    on 2, the default size, in the region the device tree reserves,
#    where the rings move at the hand-over;
#  - the ftrace_init hand-off: in the same boot the guest's own function
#    tracer, on a function vmmtrace does not hold (__arm64_sys_getpid),
#    records its event, and dmesg has no "ftrace failed to modify" and no
#    WARNING;
#  - the guest's /init reaches its end and reboots: status 0;
#  - --trace '*' on 2 vCPUs from the first call to the reboot: about 4
#    million events (riscv64: 1 million), every one the summary counts is
#    written, none dropped.
# The same for the lean riscv64 kernels (with and without
# STRICT_KERNEL_RWX), whose initramfs has no busybox
# (Debian 12 has no riscv64 packages): /init is tests/guest/cinit.c,
# which runs the workers and the hand-off check itself; on the strict one
# also the guest's own function and function_graph tracers on every
# function while vmmtrace holds every slot, the guest's calls equal to
# vmmtrace's (issue 37, as arm64's both_tracers).
. "$(dirname "$0")/../lib.sh"
require_file "$VMMTRACE"
A64=$VMMTRACE_CACHE/lean-arm64/Image
require_file "$A64"
require_file "$INITRAMFS_ARM64"
RV=$VMMTRACE_CACHE/lean-riscv64/Image
require_file "$RV"
require_file "$INITRAMFS_RV"
LOOPS=${LOOPS:-2000}

arm64_checks arm64 "$A64"
both_tracers arm64 "$A64" "$INITRAMFS_ARM64" 9000

trace_all arm64 "$A64" "$INITRAMFS_ARM64" 'VMMTRACE-INIT: done passed=2 failed=0' vmmtrace.steps=cpus,uname 2000000

# An arm64 kernel with no padding below _etext (lean-arm64-nopad: the lean
# Image with those 8 KiB made non-zero, scripts/prepare-tests.sh): the stub
# goes in the guard page at _end, its doorbell on its own page, mapped in
# init_pg_dir by the image's last 2 MiB block and in swapper_pg_dir by
# tables vmmtrace adds before the first instruction. The same checks, its
# doorbells on 1 vCPU included, and the order of five early functions
# against QEMU's own breakpoints across paging_init.
A64NP=$VMMTRACE_CACHE/lean-arm64-nopad/Image
require_file "$A64NP"
arm64_checks arm64-nopad "$A64NP"
trace_all arm64-nopad "$A64NP" "$INITRAMFS_ARM64" 'VMMTRACE-INIT: done passed=2 failed=0' vmmtrace.steps=cpus,uname 2000000
check "arm64-nopad: the stub went in the guard page at _end (-v)" \
	eval "\"$VMMTRACE\" boot '$A64NP' --host qemu --trace start_kernel --stop-at setup_arch -v 2>&1 | grep -q 'the stub goes in the guard page at _end'"
qtrace_order arm64-nopad
# --graph: paging_init is entered under init_pg_dir and returns under
# swapper_pg_dir, through the return hook in the guard page.
timeout -k 5 120 "$VMMTRACE" boot "$A64NP" --host qemu --graph --trace setup_arch --trace paging_init --trace trap_init \
	--stop-at kernel_init </dev/null >"$TMPD/nopad-graph.txt" 2>"$TMPD/nopad-graph.err"
rc=$?
check "arm64-nopad --graph: status 0 (got $rc); paging_init's and setup_arch's blocks close, trap_init after them" \
	eval "[ $rc = 0 ] && grep -A3 'setup_arch() {' '$TMPD/nopad-graph.txt' | tr -d '\n' | grep -qE 'paging_init\(\);.*[0-9] us \|  \}.*trap_init\(\);'"

riscv_checks riscv64 "$RV"
# The guest's own function and function_graph tracers on every function
# while vmmtrace holds every slot (issue 37; tests/lib.sh).
both_tracers riscv64 "$RV" "$INITRAMFS_RV" 5000 cinit

# A riscv64 kernel without STRICT_KERNEL_RWX (as embedded configurations
# build it): no padding below __init_begin, so the stub goes past the
# image's end, in its last 2 MiB block, which such a kernel maps
# executable in every phase and the device tree reserves. The same checks,
# and the order of five early functions against QEMU's own breakpoints.
RVNS=$VMMTRACE_CACHE/lean-riscv64-nostrict/Image
require_file "$RVNS"
riscv_checks riscv64-nostrict "$RVNS"
check "riscv64-nostrict: the stub went past the image's end (-v)" \
	eval "\"$VMMTRACE\" boot '$RVNS' --trace start_kernel --stop-at setup_arch -v 2>&1 | grep -q 'the stub goes past the image.s end'"
qtrace_order riscv64-nostrict
finish
