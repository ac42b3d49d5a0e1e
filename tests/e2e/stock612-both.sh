#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Debian's 6.12 x86_64 kernel under the QEMU host with --trace '*' to /init
# while the guest runs its own function, then function_graph, tracer on
# every function around a dd (issue 37; tests/lib.sh's both_tracers): no
# ftrace_bug, no oops, the dd's calls alike in both traces, over 40,000
# held slots going on to the guest's tracer. tests/qemu/stock612.sh's
# other checks of that kernel run in make check; this one takes about two
# minutes, so it is here (make check runs it on the lean x86_64 kernel,
# tests/qemu/x86-qemu.sh).
. "$(dirname "$0")/../lib.sh"
require_file "$VMMTRACE"
image=$VMMTRACE_CACHE/stock612-bzImage
require_file "$image"
require_file "$INITRAMFS"
both_tracers x86_64-6.12 "$image" "$INITRAMFS" 40000
finish
