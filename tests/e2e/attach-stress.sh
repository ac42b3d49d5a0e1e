#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Live attach on a running lean guest (2 vCPUs; ATTACH_CPUS), one boot for all of it:
#  - the control socket: mode 0600, another uid refused, garbage / truncated /
#    1 MiB / unknown requests answered with errors while the guest runs;
#  - 200 attach/detach cycles with varying globs (some overlapping, two
#    clients at once) while markloop runs on both CPUs: every window holds
#    exactly one getpriority event per loop iteration inside it
#    (attach_check.py), and after the last detach every slot's bytes are
#    what they were before the first attach (status digest);
#  - the guest never oopses or panics, no process segfaults, and vmmtrace
#    stop ends it with 0.
. "$(dirname "$0")/../lib.sh"
require_kvm
require_file "$LEAN_BZIMAGE"
require_file "$INITRAMFS"
CYCLES=${ATTACH_CYCLES:-200}
CPUS=${ATTACH_CPUS:-2}
SECS=${ATTACH_LOOP_SECS:-600}
SOCK=$TMPD/vt.sock
here=$(cd "$(dirname "$0")" && pwd)

timeout -k 30 -s INT 1800 "$VMMTRACE" boot "$LEAN_BZIMAGE" --initrd "$INITRAMFS" --cpus "$CPUS" --control "$SOCK" \
	--trace __x64_sys_sched_get_priority_max -o "$TMPD/boot.trace" --console "$TMPD/console" \
	--cmdline "vmmtrace.steps=mark-loop vmmtrace.loop_cpus=$CPUS vmmtrace.mark_secs=$SECS" \
	2>"$TMPD/boot.err" &
vt=$!
if ! wait_markloop "$TMPD/console" "$CPUS" 900 "$vt"; then
	fail "markloop did not start on all $CPUS CPUs"; kill "$vt"; tail -5 "$TMPD/console"; finish
fi

# The socket.
check "socket has mode 0600" test "$(stat -c %a "$SOCK")" = 600
if setpriv --reuid=65534 --regid=65534 --clear-groups "$VMMTRACE" status "$SOCK" >"$TMPD/nobody" 2>&1; then
	fail "uid 65534 could use the socket"
else
	pass "uid 65534 cannot connect through the 0600 socket ($(head -c 80 "$TMPD/nobody"))"
fi
chmod 711 "$TMPD"; chmod 666 "$SOCK"	# past the file modes: the SO_PEERCRED check must refuse it
if setpriv --reuid=65534 --regid=65534 --clear-groups "$VMMTRACE" status "$SOCK" >"$TMPD/nobody" 2>&1; then
	fail "uid 65534 was served past SO_PEERCRED"
else
	check "another uid is refused by the server: $(head -c 100 "$TMPD/nobody")" grep -q "permission denied" "$TMPD/nobody"
fi
chmod 600 "$SOCK"; chmod 700 "$TMPD"
for kind in garbage truncated oversized badtype badpattern; do
	if timeout 30 python3 "$here/control_raw.py" "$SOCK" "$kind" >"$TMPD/raw" 2>&1; then
		pass "$kind request gets an error reply: $(cut -c1-90 "$TMPD/raw")"
	else
		fail "$kind request: $(cat "$TMPD/raw")"
	fi
done
check "status still answers after hostile requests" "$VMMTRACE" status "$SOCK"
"$VMMTRACE" status "$SOCK" >"$TMPD/status0"
digest0=$(sed -n 's/^slot bytes digest: //p' "$TMPD/status0")

# The cycles.
start=$(date +%s)
attach_cycles "$SOCK" "$CYCLES" __x64_sys_
echo "INFO: $CYCLES attach/detach cycles in $(($(date +%s) - start)) s"
attach_cycles_check "$SOCK" "$digest0" "$vt"
attach_windows_check "$CPUS"
grep -E "^vmmtrace: trace:" "$TMPD/boot.err" | sed 's/^/INFO: /'
finish
