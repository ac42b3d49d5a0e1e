#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# NMIs on top of the stub (issue 4: the stub is safe against interrupts and
# NMIs on the same CPU). One boot of the lean kernel on 2 vCPUs with
# markloop busy on both CPUs:
#  - the boot traces nmi_handle, which default_do_nmi calls twice per NMI
#    here (NMI_LOCAL, then NMI_UNKNOWN: the test guest has no NMI handler
#    that claims it, so each NMI also prints "Uhhuh. NMI received");
#  - `vmmtrace attach --trace '*'` makes the stub hot on both CPUs, and
#    while it holds every slot, `vmmtrace nmi` injects NMIs into both vCPUs
#    (NMI_ROUNDS times); vmmtrace counts the NMIs that land while a vCPU is
#    inside the stub, so that nesting demonstrably happened;
#  - exactness: the guest's own NMI count (/proc/interrupts, before and
#    after) equals the NMIs injected, and each CPU's nmi_handle events equal
#    twice its NMIs, in the boot's trace and in the attached '*' trace alike;
#    no record is rejected, lost or left unfinished, and the guest never
#    oopses.
. "$(dirname "$0")/../lib.sh"
require_kvm
require_file "$LEAN_BZIMAGE"
require_file "$INITRAMFS"
ROUNDS=${NMI_ROUNDS:-150}
SECS=${NMI_LOOP_SECS:-90}
SOCK=$TMPD/vt.sock

timeout -k 30 -s INT 1200 "$VMMTRACE" boot "$LEAN_BZIMAGE" --initrd "$INITRAMFS" --cpus 2 --control "$SOCK" \
	--trace nmi_handle -o "$TMPD/boot.trace" --console "$TMPD/console" \
	--cmdline "vmmtrace.steps=nmi-count,mark-loop,nmi-count vmmtrace.loop_cpus=2 vmmtrace.mark_secs=$SECS" \
	2>"$TMPD/boot.err" </dev/null &
vt=$!
if ! wait_markloop "$TMPD/console" 2 900 "$vt"; then
	fail "markloop did not start on both CPUs"; kill "$vt"; tail -5 "$TMPD/console"; finish
fi
start=$(date +%s)

# Every slot, while markloop runs; wait until the attach holds them.
"$VMMTRACE" attach "$SOCK" --trace '*' -o "$TMPD/all.trace" 2>"$TMPD/attach.err" &
at=$!
if ! wait_line "$TMPD/attach.err" "slots" 300 "$at"; then
	fail "attach '*' did not take the slots: $(head -c 200 "$TMPD/attach.err")"
	kill "$at" "$vt"; finish
fi
check "attach '*' holds the slots ($(head -c 100 "$TMPD/attach.err"))" kill -0 "$at"
sleep 1
sent=0
for ((r = 0; r < ROUNDS; r++)); do
	"$VMMTRACE" nmi "$SOCK" >>"$TMPD/nmi.out" 2>&1 && sent=$((sent + 1))
	sleep 0.05
done
check "every 'vmmtrace nmi' was answered ($sent of $ROUNDS)" [ "$sent" = "$ROUNDS" ]
sleep 3		# the last NMIs run their handlers before the detach
kill -INT "$at"
wait "$at"
rc=$?
check "attach '*' ends with status 0 on SIGINT (got $rc)" [ "$rc" = 0 ]
check "markloop was still busy on both CPUs when the '*' window closed" \
	eval "! grep -q '^VMMTRACE-STEP mark-loop: worker=' '$TMPD/console'"
"$VMMTRACE" status "$SOCK" >"$TMPD/status"
echo "INFO: NMIs injected in $(($(date +%s) - start)) s; $(grep '^vcpu [0-9]' "$TMPD/status" | tr '\n' ' ')"
wait "$vt"
rc=$?
check "vmmtrace exits 0 when the guest reboots (got $rc)" [ "$rc" = 0 ]
check "/init ran every step" grep -q 'VMMTRACE-INIT: done passed=[0-9]* failed=0' "$TMPD/console"

# What vmmtrace injected, and how many of those hit the stub.
sum() { awk '{ s += $1 } END { print s + 0 }'; }
injected=$(sed -nE 's/^vcpu [0-9]+: .*, ([0-9]+) NMIs injected.*/\1/p' "$TMPD/status" | sum)
in_stub=$(sed -nE 's/^vcpu [0-9]+: .*\(([0-9]+) inside the stub\)/\1/p' "$TMPD/status" | sum)
check "vmmtrace injected one NMI per vCPU per round (${injected:-?} == 2 x $ROUNDS)" [ "${injected:-0}" = $((2 * ROUNDS)) ]
check "NMIs landed inside the stub (${in_stub:-0} of ${injected:-0}; at least 5)" [ "${in_stub:-0}" -ge 5 ]
check "no ring value was rejected" grep -qx "rejected guest values: 0" "$TMPD/status"

# What the guest saw.
mapfile -t counts < <(sed -nE 's/^VMMTRACE-STEP nmi-count: (.*)/\1/p' "$TMPD/console")
echo "INFO: guest NMI counts before/after: ${counts[0]:-?} / ${counts[1]:-?}"
before=$(sed -nE 's/^total=([0-9]+).*/\1/p' <<<"${counts[0]:-}")
after=$(sed -nE 's/^total=([0-9]+).*/\1/p' <<<"${counts[1]:-}")
check "the guest took no NMI before the test's (${before:-?})" [ "${before:-x}" = 0 ]
check "the guest took every injected NMI (${after:-?} == ${injected:-?})" [ "${after:-x}" = "${injected:-y}" ]
for c in 0 1; do
	n=$(sed -nE "s/.* cpu$c=([0-9]+).*/\\1/p" <<<"${counts[1]:-}")
	b=$(trace_count_cpu "$TMPD/boot.trace" nmi_handle "$c")
	a=$(trace_count_cpu "$TMPD/all.trace" nmi_handle "$c")
	check "CPU $c: boot trace has 2 nmi_handle events per NMI ($b == 2 x ${n:-?})" [ -n "$n" -a "$b" = $((2 * ${n:-0})) ]
	check "CPU $c: the '*' trace has the same ($a)" [ "$a" = "$b" ]
done

# The traces themselves.
set -- $(trace_summary "$TMPD/boot.err") - - - - - - - - -
echo "INFO: boot summary: events=$1 slots=$4 doorbells=$5 dropped=$6 (stub $7, lost $8)"
nall=$(trace_events "$TMPD/all.trace" | wc -l)
# Every nmi_handle event of the boot's trace is also in the '*' window, so
# the events vmmtrace drained are exactly the window's.
check "every event drained reached a client: summary events ($1) == events of the '*' window ($nall)" [ "$1" = "$nall" ]
check "no event arrived for a released slot (status)" grep -qx "events for released slots: 0" "$TMPD/status"
check "no event arrived for a released slot (summary)" eval "! grep -q 'slots no client held' '$TMPD/boot.err'"
check "nothing dropped or lost ($6)" [ "$6" = 0 ]
check "no record left unfinished" eval "! grep -q unfinished '$TMPD/boot.err'"
check "no change set gave up waiting for a vCPU to leave the stub" \
	eval "! grep -q 'stayed inside the stub' '$TMPD/boot.err'"
echo "INFO: '*' window: $nall events; $(trace_funcs "$TMPD/all.trace" | sort | uniq -c | sort -rn | head -3 | awk '{ printf "%s %s, ", $2, $1 }')..."
check "the '*' window traced the busy CPUs (>= 10000 events: $nall)" [ "$nall" -ge 10000 ]
for c in 0 1; do
	n=$(trace_count_cpu "$TMPD/all.trace" __x64_sys_getpriority "$c")
	check "the '*' window traced markloop on CPU $c ($n getpriority calls)" [ "$n" -gt 0 ]
done
check "timestamps never go back (boot trace)" trace_ordered "$TMPD/boot.trace"
check "timestamps never go back ('*' trace)" trace_ordered "$TMPD/all.trace"
check "the guest never oopsed, panicked or warned" \
	sh -c "! grep -qE 'Oops|BUG:|Kernel panic|WARNING:|general protection|double fault' '$TMPD/console'"
check "the NMIs reached the guest's handler ('Uhhuh. NMI received')" grep -q "Uhhuh. NMI received" "$TMPD/console"
finish
