#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Issue 37's check on the x86_64 KVM host: the lean x86_64 kernel with
# --trace '*' to /init on this project's KVM while the guest runs its own
# function, then function_graph, tracer on every function around a dd
# (tests/lib.sh's both_tracers, as tests/qemu/x86-qemu.sh runs it under the
# QEMU host): no ftrace_bug, no WARNING, no oops, the dd's calls alike in
# both traces, over 10,000 held slots going on to the guest's tracer.
# Guest kernel code is emulated on these machines (shared/docs/HOST-KVM.md):
# the guest's switch of every function had not returned after 8 minutes
# there, so this waits up to an hour, and lives in the long tier.
# make check's tests/kvm/lean612-kvm.sh checks one function on KVM.
. "$(dirname "$0")/../lib.sh"
require_file "$VMMTRACE"
require_file "$LEAN_BZIMAGE"
require_file "$INITRAMFS"
require_kvm
BOTH_HOST=kvm BOTH_TIMEOUT=${BOTH_TIMEOUT:-3600} both_tracers x86_64-kvm "$LEAN_BZIMAGE" "$INITRAMFS" 10000
finish
