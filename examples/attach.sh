#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Attach to a running guest: boot it with a control socket, wait until its
# kernel is well into its boot, record its port I/O for three seconds
# (kvm:pio: mostly the console's bytes, printed as the host kernel's kvm_pio
# tracepoint prints them), then trace every function whose name starts with
# "kmem_cache_" for three seconds, ask for the status, then stop the guest.
#
#   examples/attach.sh [KERNEL]
. "$(dirname "$0")/common.sh"

dir=$(mktemp -d)
sock=$dir/vt.sock
"$VMMTRACE" boot "$KERNEL" --control "$sock" --cmdline earlyprintk=serial,ttyS0,115200 \
	>"$dir/console" 2>"$dir/boot.err" </dev/null &
guest=$!
trap 'kill "$guest" 2>/dev/null || true; rm -rf "$dir"' EXIT

# The socket exists before the guest's first instruction. An attach before
# the guest's own ftrace_init has returned waits for it (the guest rewrites
# every slot there), so wait until the kernel is well past it and its slab
# allocator is busy: "pid_max:" is printed just before the caches of
# processes, files and mounts are made, and initcalls follow.
until grep -q "pid_max:" "$dir/console" 2>/dev/null; do
	kill -0 "$guest" 2>/dev/null || { cat "$dir/boot.err" >&2; exit 1; }
	sleep 0.5
done

echo "### vmmtrace attach $sock --event kvm:pio --duration 3"
"$VMMTRACE" attach "$sock" --event kvm:pio --duration 3 -o "$dir/pio.txt"
grep -v '^#' "$dir/pio.txt" | sed -n 1,5p || true
echo "... $(grep -vc '^#' "$dir/pio.txt" || true) port accesses in the window"

echo "### vmmtrace attach $sock --trace 'kmem_cache_*' --duration 3"
"$VMMTRACE" attach "$sock" --trace 'kmem_cache_*' --duration 3 -o "$dir/window.txt"
grep -v '^#' "$dir/window.txt" | sed -n 1,5p || true
echo "... $(grep -vc '^#' "$dir/window.txt" || true) events in the window"

echo "### vmmtrace status $sock"
"$VMMTRACE" status "$sock"
echo "### vmmtrace stop $sock"
"$VMMTRACE" stop "$sock"
wait "$guest"	# vmmtrace boot's own status: 0 after a stop
