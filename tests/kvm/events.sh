#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# --event (docs/VM-EVENTS.md) on the lean kernel: one boot to just after
# the guest switched to kvm-clock (--stop-at populate_rootfs), text output,
# every VM event and a few functions:
# - kvm:pio: the bytes written to COM1's transmit register (DLAB clear, no
#   loopback) equal the console vmmtrace printed for the same window, and
#   each such write sorts right after the io_serial_out call that made it;
# - kvm:msr: the guest's write of MSR_KVM_SYSTEM_TIME_NEW (0x4b564d01) has
#   the enable bit and a GPA inside guest RAM and lies between two calls
#   made by kvmclock_init, after kvm_init_platform; the guest still says
#   "Switched to clocksource kvm-clock" (the write went through KVM);
# - kvm:exit precedes each kvm:pio of the same exit; timestamps never go
#   back; kvm:hypercall is refused once on stderr, never faked.
# A live `attach --event` gets its own window of kvm:pio events meanwhile.
# Then a short boot recorded raw: KVM reads back each forwarded MSR write as
# the guest wrote it; vmmtrace report prints the kvm:msr write exactly as
# the text writer did, trace-cmd report prints the trace.dat conversion's VM
# events as the text does, and so does its Perfetto conversion (protoc).
. "$(dirname "$0")/../lib.sh"
require_file "$VMMTRACE"
require_file "$LEAN_BZIMAGE"
require_kvm
MEM_MB=512

echo "== one boot, text, every VM event"
timeout -k 5 400 "$VMMTRACE" boot "$LEAN_BZIMAGE" --mem ${MEM_MB}M --event 'kvm:*' --handshake \
	--trace kvm_init_platform --trace 'kvm_arch_para_*' --trace io_serial_out --control "$TMPD/sock" \
	--stop-at populate_rootfs -q -o "$TMPD/ev.txt" --console "$TMPD/con.txt" </dev/null 2>"$TMPD/ev.err" &
pid=$!
# A live window of VM events only, while the console prints its first burst.
if wait_line "$TMPD/con.txt" 'printk: console \[ttyS0\] enabled' 300 "$pid"; then
	timeout -k 5 60 "$VMMTRACE" attach "$TMPD/sock" --event 'kvm:p*' --event kvm:hypercall --duration 3 \
		>"$TMPD/attach.txt" 2>"$TMPD/attach.err"
	check "attach --event: status 0" [ $? = 0 ]
	sed 's/^/INFO: /' "$TMPD/attach.err"
	check "attach --event: the reply says kvm:pio is recorded, kvm:hypercall not, and why" eval \
		"grep -q 'kvm:pio recorded; kvm:hypercall not recorded: this host' '$TMPD/attach.err'"
	n=$(grep -c ' kvm_pio: ' "$TMPD/attach.txt")
	check "attach --event: the window has kvm_pio events ($n) and nothing else" \
		eval "[ '$n' -gt 0 ] && [ '$n' = \"\$(grep -vc '^#' '$TMPD/attach.txt')\" ]"
else
	fail "the console never said 'console [ttyS0] enabled': no attach"
fi
wait "$pid"
rc=$?
sed 's/^/INFO: /' "$TMPD/ev.err"
check "boot: status 0 (got $rc)" [ "$rc" = 0 ]
check "boot: stopped at populate_rootfs" grep -q "stopped at populate_rootfs" "$TMPD/ev.err"
check "kvm:hypercall: said once on stderr that this host hands none over" \
	[ "$(grep -c 'kvm:hypercall: .*no hypercall events are recorded' "$TMPD/ev.err")" = 1 ]
check "no hypercall event was made up" eval "! grep -q 'kvm_hypercall' '$TMPD/ev.txt'"
check "the summary counts VM events" grep -qE "^vmmtrace: trace: [1-9][0-9]* VM events$" "$TMPD/ev.err"
check "timestamps never go back" trace_ordered "$TMPD/ev.txt"
check "kvm:cpuid: the KVM signature leaf offered, as a record at time zero" grep -qE \
	' 0\.000000: kvm_cpuid: func 40000000 idx 0 rax [0-9a-f]+ rbx 4b4d564b rcx 564b4d56 rdx 4d, cpuid entry offered$' \
	"$TMPD/ev.txt"

# COM1's transmitted bytes, from the events: writes to 0x3f8 while LCR.DLAB
# (0x3fb bit 7) and MCR.LOOP (0x3fc bit 4) are clear, one hex byte a line.
awk 'function hex(s,  i, v, c) { v = 0; s = tolower(substr(s, 3))
	for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)); v = v * 16 + c - 1 }
	return v }
	/ kvm_pio: pio_write at 0x3f[8bc] size 1 count 1 / {
		for (i = 1; i <= NF; i++) if ($i == "at") port = $(i + 1); else if ($i == "val") val = hex($(i + 1))
		if (port == "0x3fb") dlab = int(val / 128) % 2
		else if (port == "0x3fc") loop = int(val / 16) % 2
		else if (!dlab && !loop) printf "%02x\n", val
	}' "$TMPD/ev.txt" >"$TMPD/pio.hex"
od -An -v -tx1 "$TMPD/con.txt" | tr -s ' ' '\n' | grep -v '^$' >"$TMPD/con.hex"
check "kvm:pio: COM1's bytes equal the console ($(wc -l <"$TMPD/pio.hex") and $(wc -l <"$TMPD/con.hex") bytes)" \
	eval "[ -s '$TMPD/con.hex' ] && cmp -s '$TMPD/pio.hex' '$TMPD/con.hex'"
bad=$(awk '/ io_serial_out <-/ { last = "call"; next }
	/ kvm_pio: pio_write .*\[io_serial_out\+/ { n++; if (last != "call") bad++; last = "pio"; next }
	/ kvm_pio: / { last = "pio" } END { print (n ? bad + 0 : "none") }' "$TMPD/ev.txt")
check "kvm:pio: each write sorts right after its io_serial_out call (misplaced: $bad)" [ "$bad" = 0 ]
bad=$(awk '/ kvm_userspace_exit: reason IO / { ok = 1; next } / kvm_pio: / { n++; if (!ok) bad++ } { ok = 0 }
	END { print (n ? bad + 0 : "none") }' "$TMPD/ev.txt")
check "kvm:exit: each kvm_pio follows its exit's kvm_userspace_exit line (not: $bad)" [ "$bad" = 0 ]

# kvm:msr: the system-time write, inside kvmclock_init (kvmclock.c itself has
# no fentry: the calls it makes show where it runs).
line=$(kvmclock_write "$TMPD/ev.txt")
val=$(msr_value "$line")
echo "INFO: ${line:-no write of 4b564d01}"
check "kvm:msr: MSR_KVM_SYSTEM_TIME_NEW written with the enable bit and a GPA in RAM ($val)" \
	kvmclock_value_ok "$val" $((MEM_MB << 20))
n=${line%%:*}
check "kvm:msr: after kvm_init_platform" eval "head -n '${n:-0}' '$TMPD/ev.txt' | grep -q ' kvm_init_platform <-'"
check "kvm:msr: between two calls made by kvmclock_init" eval \
	"head -n '${n:-0}' '$TMPD/ev.txt' | tail -n 5 | grep -q '<-kvmclock_init\$' &&
	 tail -n +'${n:-1}' '$TMPD/ev.txt' | head -n 5 | grep -q '<-kvmclock_init\$'"
check "kvm:msr: the guest uses MSRs 4b564d01 and 4b564d00 for kvm-clock" \
	grep -q "kvm-clock: Using msrs 4b564d01 and 4b564d00" "$TMPD/con.txt"
check "kvm:msr: the guest still switched to kvm-clock" \
	grep -q "clocksource: Switched to clocksource kvm-clock" "$TMPD/con.txt"
check "kvm:msr: no access failed (#GP)" eval "! grep -q ' kvm_msr: .*(#GP)' '$TMPD/ev.txt'"

# --handshake: the table agrees with the trace's own kvm:cpuid and kvm:msr
# events, and with what the guest says of itself.
handshake_rows "$TMPD/ev.err" >"$TMPD/hs.txt"
offered=$(sed -nE 's/.* kvm_cpuid: func 40000001 idx 0 rax ([0-9a-f]+) .*/\1/p' "$TMPD/ev.txt" | head -1)
check "handshake: the features offered are the trace's CPUID leaf 0x40000001 EAX (0x$offered)" \
	grep -q "^vmmtrace: handshake: KVM features 0x$offered offered (CPUID 0x40000001 EAX, signature 'KVMKVMKVM')$" \
	"$TMPD/hs.txt"
n=$(grep -c ' [0-9]*/[0-9]* CPUs ' "$TMPD/hs.txt")
bad=$(handshake_disagree "$TMPD/hs.txt" "$TMPD/ev.txt")
check "handshake: its $n enabled rows' first writes are in the trace (time, CPU, MSR, caller); no row said off was on ($bad disagree)" \
	eval "[ '$n' -ge 5 ] && [ '$bad' = 0 ]"
row() { grep -E "^  $1  " "$TMPD/hs.txt"; }
check "handshake: kvm-clock on MSR 4b564d01 from kvmclock_init, its pvclock area in RAM (as the guest says)" \
	eval "row kvm-clock | grep -qE ' yes +4b564d01 +1/1 CPUs .* kvmclock_init +pvclock area at GPA 0x[0-9a-f]+$' &&
	      grep -q 'kvm-clock: Using msrs 4b564d01 and 4b564d00' '$TMPD/con.txt'"
check "handshake: steal time and PV EOI on, as the lean guest's kvm_guest_cpu_init does" \
	eval "row 'steal time' | grep -q ' 1/1 CPUs ' && row 'PV EOI' | grep -q ' 1/1 CPUs '"
check "handshake: a feature without an MSR says so" eval "row 'PV TLB flush' | grep -q 'no MSR: '"

echo "== a short boot recorded raw, read back by report"
timeout -k 5 300 "$VMMTRACE" boot "$LEAN_BZIMAGE" --mem ${MEM_MB}M --event 'kvm:*' \
	--cmdline earlyprintk=serial,ttyS0,115200 --trace kvm_init_platform --stop-at trap_init -q -vv \
	-o "$TMPD/ev.raw" --console /dev/null </dev/null 2>"$TMPD/raw.err"
check "boot -o ev.raw: status 0" [ $? = 0 ]
check "kvm:msr: KVM reads back what the guest wrote to 0x4b564d01 (-vv)" \
	grep -q 'kvm:msr: vCPU 0: MSR 0x4b564d01 reads back 0x[0-9a-f]* as written' "$TMPD/raw.err"
check "kvm:msr: no forwarded write reads back otherwise" eval "! grep -qE 'kvm:msr: .*(written 0x[0-9a-f]+, reads back|cannot be read back)' '$TMPD/raw.err'"
"$VMMTRACE" report "$TMPD/ev.raw" >"$TMPD/raw.txt" 2>"$TMPD/report.err"
check "report: status 0, nothing on stderr" eval "[ $? = 0 ] && [ ! -s '$TMPD/report.err' ]"
strip() { grep ' kvm_msr: ' "$1" | head -1 | sed -E 's/.*[0-9]+\.[0-9]{6}: //'; }
check "report prints the kvm:msr write as the text writer did: $(strip "$TMPD/raw.txt")" \
	eval "[ -n \"\$(strip '$TMPD/raw.txt')\" ] && [ \"\$(strip '$TMPD/raw.txt')\" = \"\$(strip '$TMPD/ev.txt')\" ]"
check "report: kvm_userspace_exit lines too" grep -q ' kvm_userspace_exit: reason X86_WRMSR (30) ' "$TMPD/raw.txt"
# trace-cmd report prints every VM event as the text does (its own spacing),
# but for kvm_msr's caller: a field of the event (checked below) that its
# print format cannot leave out when unknown, so it prints the RIP alone.
vm_lines() { grep -E '[0-9]\.[0-9]{6}: kvm_[a-z_]+: ' | sed -E 's/^.* ([0-9]+\.[0-9]{6}): (kvm_[a-z_]+): +/\1 \2 /; s/ <-[^]]*\]$/]/'; }
"$VMMTRACE" report "$TMPD/ev.raw" --format dat -o "$TMPD/ev.dat"
check "report --format dat: status 0" [ $? = 0 ]
if command -v trace-cmd >/dev/null; then
	vm_lines <"$TMPD/raw.txt" >"$TMPD/vm-text.lines"
	trace-cmd report -i "$TMPD/ev.dat" 2>/dev/null | vm_lines >"$TMPD/vm-dat.lines"
	check "trace-cmd report: the same $(wc -l <"$TMPD/vm-text.lines") VM events as the text (pio, msr, exit, cpuid)" eval \
		"[ -s '$TMPD/vm-text.lines' ] && cmp -s '$TMPD/vm-text.lines' '$TMPD/vm-dat.lines' &&
		 grep -q ' kvm_pio ' '$TMPD/vm-dat.lines' && grep -q ' kvm_cpuid ' '$TMPD/vm-dat.lines'"
	caller=$(sed -nE 's/.* kvm_msr: msr_write 4b564d01 = .* <-([^]]+)\]$/\1/p' "$TMPD/raw.txt" | head -1)
	# The field's address lies in the function the text names (System.map,
	# sorted; kernel addresses are 16 hex digits, so strings compare as numbers).
	cad=$(trace-cmd report -R -i "$TMPD/ev.dat" 2>/dev/null | grep -E ' kvm_msr: .* ecx=4b564d01 ' | head -1 |
		sed -nE 's/.* caller=0x([0-9a-f]{16}).*/\1/p')
	cname=$(awk -v a="$cad" 'a != "" && $1 <= a && $2 ~ /^[tTwW]$/ { n = $3 } END { print n }' "$LEAN_DIR/System.map")
	check "trace-cmd: kvm_msr's caller field (0x$cad) lies in the text's caller (${caller:-none}: $cname)" \
		eval "[ -n '$caller' ] && [ '$cname' = '$caller' ]"
else
	fail "trace-cmd is missing (scripts/prepare-tests.sh installs it)"
fi
# Perfetto: each VM event an instant whose "args" annotation holds its
# fields; protoc (not our decoder) finds every COM1 write the text has.
"$VMMTRACE" report "$TMPD/ev.raw" --format perfetto -o "$TMPD/ev.perfetto" 2>"$TMPD/pf.err"
check "report --format perfetto: status 0, nothing on stderr" eval "[ $? = 0 ] && [ ! -s '$TMPD/pf.err' ]"
if command -v protoc >/dev/null; then
	protoc --decode_raw <"$TMPD/ev.perfetto" >"$TMPD/pf.txt" 2>"$TMPD/pf.dec.err"
	n_text=$(grep -c ' kvm_pio: pio_write at 0x3f8 ' "$TMPD/raw.txt")
	n_pf=$(grep -c '^ *6: "pio_write at 0x3f8 ' "$TMPD/pf.txt")
	check "Perfetto: the $n_text COM1 writes of the text, each an instant with its fields ($n_pf)" \
		eval "[ '$n_text' -gt 0 ] && [ '$n_text' = '$n_pf' ]"
	check "Perfetto: the VM events' names are interned (kvm:pio, kvm:msr)" \
		eval "grep -q '\"kvm:pio\"' '$TMPD/pf.txt' && grep -q '\"kvm:msr\"' '$TMPD/pf.txt'"
else
	fail "protoc is missing (scripts/prepare-tests.sh installs it)"
fi
finish
