#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# vmmtrace boot on bad input: missing, empty, truncated, random and foreign
# kernels, memory too small for the kernel or its initrd, bad --cpus, --mem
# and initrds, unknown options, tracing options that cannot work (no such
# function, bad mode or buffer size, unwritable output, an unknown --event,
# a malformed --msr list, --flight-recorder 0, --hang alone). Each must be refused
# at once with exit status 2 and exactly one line on stderr naming the
# problem: no guest console on stdout, no crash, no hang (BAD_TIMEOUT seconds
# each). Then Ctrl-C: a real boot interrupted with SIGINT must stop with
# status 130 within seconds and with the console output so far on stdout.
# The control commands (nmi, status, detach, stop, attach) without a guest
# behind the socket get the same one-line treatment.
. "$(dirname "$0")/../lib.sh"
require_file "$VMMTRACE"
require_file "$LEAN_BZIMAGE"
require_file "$LEAN_VMLINUX"
require_file "$INITRAMFS"
BAD_TIMEOUT=${BAD_TIMEOUT:-30}
out=$TMPD/out err=$TMPD/err

# bad DESCRIPTION PATTERN ARGS...: `vmmtrace boot ARGS` is refused as above,
# its stderr line matching the extended regex PATTERN.
bad() {
	local d=$1 pat=$2 rc n
	local -a why=()
	shift 2
	timeout -k 5 "$BAD_TIMEOUT" "$VMMTRACE" boot "$@" </dev/null >"$out" 2>"$err"
	rc=$?
	n=$(wc -l <"$err")
	case $rc in
	2) ;;
	124|137) why+=("hung: killed after $BAD_TIMEOUT s") ;;
	*) if [ "$rc" -ge 128 ]; then why+=("killed by signal $((rc - 128))");
	   else why+=("exit status $rc, want 2"); fi ;;
	esac
	[ "$n" = 1 ] || why+=("$n stderr lines, want 1")
	grep -qE -e "$pat" "$err" || why+=("stderr does not match /$pat/")
	[ ! -s "$out" ] || why+=("$(wc -c <"$out") bytes on stdout")
	if [ "${#why[@]}" = 0 ]; then
		pass "$d: $(cut -c1-160 "$err")"
	else
		fail "$d: $(printf '%s; ' "${why[@]}")stderr: $(head -c 400 "$err" | tr '\n' '|')"
	fi
}

# Inputs made here.
: >"$TMPD/empty"
head -c $(( $(stat -c %s "$LEAN_BZIMAGE") / 2 )) "$LEAN_BZIMAGE" >"$TMPD/half-bzImage"
head -c 1000000 "$LEAN_VMLINUX" >"$TMPD/half-vmlinux"
head -c 262144 /dev/urandom >"$TMPD/random"
# An ELF for another architecture: a copy of the lean vmlinux with e_machine
# (offset 18) set to 183, AArch64; and a real aarch64 program if the cross
# compiler is installed (scripts/packages-arch.txt).
cp "$LEAN_VMLINUX" "$TMPD/aarch64-vmlinux"
printf '\267\000' | dd of="$TMPD/aarch64-vmlinux" bs=1 seek=18 conv=notrunc status=none
mkdir "$TMPD/dir"
head -c $((60 << 20)) /dev/zero >"$TMPD/initrd-60M"
long() { head -c "$1" /dev/zero | tr '\0' a; }

echo "== the kernel"
bad "missing kernel" "cannot open kernel '.*/no-such-kernel'.*No such file" "$TMPD/no-such-kernel"
bad "empty kernel" "kernel '.*/empty' is empty" "$TMPD/empty"
bad "a directory as kernel" "kernel '.*/dir' is not a regular file" "$TMPD/dir"
bad "bzImage cut in half" "half-bzImage: truncated bzImage" "$TMPD/half-bzImage"
bad "vmlinux cut short" "half-vmlinux: ELF segment .* outside the file" "$TMPD/half-vmlinux"
bad "random bytes" "random: not a kernel image" "$TMPD/random"
bad "ELF of another architecture (e_machine patched)" "aarch64-vmlinux: ELF is for aarch64 .*not x86_64" \
	"$TMPD/aarch64-vmlinux"
if command -v aarch64-linux-gnu-gcc >/dev/null; then
	echo 'int main(void) { return 0; }' >"$TMPD/a.c"
	aarch64-linux-gnu-gcc -static -o "$TMPD/aarch64-prog" "$TMPD/a.c"
	bad "ELF of another architecture (aarch64-linux-gnu-gcc)" "aarch64-prog: ELF is for aarch64" \
		"$TMPD/aarch64-prog"
else
	echo "INFO: aarch64-linux-gnu-gcc not installed: the patched ELF stands in for it"
fi

echo "== options"
bad "no KERNEL" "KERNEL is missing"
bad "two KERNELs" "expected exactly one KERNEL" "$LEAN_BZIMAGE" "$LEAN_BZIMAGE"
for o in --bogus -x --no-such-option=1; do
	bad "unknown option $o" "unknown or incomplete option '$o'" "$LEAN_BZIMAGE" "$o"
done
bad "--cpus without its value" "unknown or incomplete option '--cpus'" "$LEAN_BZIMAGE" --cpus
for n in 0 999 9 -1 abc 1x ''; do
	bad "--cpus '$n'" "--cpus must be between 1 and 8, not '$n'" "$LEAN_BZIMAGE" --cpus "$n"
done
for m in foo 12X -5 1.5G 100G 65G 0x10000000000 ''; do
	bad "--mem '$m'" "--mem '$m' is not a size" "$LEAN_BZIMAGE" --mem "$m"
done
bad "--compat maybe" "--compat must be auto, on or off, not 'maybe'" "$LEAN_BZIMAGE" --compat maybe
bad "--cmdline past the option's 4 KiB" "--cmdline is too long" "$LEAN_BZIMAGE" --cmdline "$(long 5000)"

echo "== the initrd"
bad "missing initrd" "cannot read initrd '.*/no-such-initrd'.*No such file" \
	"$LEAN_BZIMAGE" --initrd "$TMPD/no-such-initrd"
bad "a directory as initrd" "initrd '.*/dir' is not a regular file" "$LEAN_BZIMAGE" --initrd "$TMPD/dir"
bad "empty --initrd path" "cannot read initrd ''" "$LEAN_BZIMAGE" --initrd ''

# Past this point vmmtrace opens /dev/kvm before it sees the problem. Without
# it, the failures above must still count: skip only if there were none.
[ -c /dev/kvm ] || [ "$T_FAILS" = 0 ] || finish
require_kvm

echo "== guest memory and command line (checked once the VM exists)"
bad "an x86_64 program, not a kernel" "true: kernel segment .* is outside guest RAM" /bin/true
bad "--mem 16M, below the 64 MiB minimum" "--mem 16M is too small \(at least 64M\)" \
	"$LEAN_BZIMAGE" --mem 16M
bad "--mem 63M, one below the minimum" "--mem 63M is too small \(at least 64M\)" \
	"$LEAN_BZIMAGE" --mem 63M
if [ -e "$STOCK_BZIMAGE" ]; then
	# The stock kernel's segments end near 75 MiB: past a 64 MiB guest.
	bad "--mem 64M: the stock kernel's segments do not fit" \
		"--mem 64 MiB is too small for the kernel \(it needs more than [0-9]+ MiB\)" \
		"$STOCK_BZIMAGE" --mem 64M
else
	echo "INFO: $STOCK_BZIMAGE absent: the segments-do-not-fit case is not run"
fi
bad "--mem 64M: the lean kernel fits, a 60 MiB initrd does not" \
	"--mem 64 MiB is too small for the kernel and a 61440 KiB initrd" \
	"$LEAN_BZIMAGE" --mem 64M --initrd "$TMPD/initrd-60M"
bad "a command line longer than the kernel takes" "kernel command line is 3[0-9]{3} bytes, the kernel accepts 2047" \
	"$LEAN_BZIMAGE" --cmdline "$(long 3000)"
# Regressions: these sizes used to reach KVM and fail there with status 1,
# and a --cmdline-replace past 8 KiB was reported as 8191 bytes long.
bad "--mem 0" "--mem.*(0|too small)" "$LEAN_BZIMAGE" --mem 0
bad "--mem 1K, below the minimum and not whole pages, in the user's own words" "--mem 1K is too small \(at least 64M\)" "$LEAN_BZIMAGE" --mem 1K
bad "--mem 65537K, not whole pages" "--mem.*65537K?" "$LEAN_BZIMAGE" --mem 65537K
bad "--cmdline-replace of 70000 bytes: its length reported as is" "70000 bytes" \
	"$LEAN_BZIMAGE" --cmdline-replace "$(long 70000)"

echo "== tracing options"
bad "--trace that matches no function" "no traceable function matches --trace nosuchfunc_xyz" \
	"$LEAN_BZIMAGE" --trace nosuchfunc_xyz
bad "--trace of a malformed glob" "no traceable function matches --trace \[abc" "$LEAN_BZIMAGE" --trace '[abc'
bad "--stop-at an unknown function" "--stop-at nosuchfunc: no such function in the kernel" \
	"$LEAN_BZIMAGE" --stop-at nosuchfunc
bad "--notrace without --trace" "--notrace, -o and --format need at least one --trace" "$LEAN_BZIMAGE" --notrace foo
bad "-o without --trace" "--notrace, -o and --format need at least one --trace, --event, --handshake or --flight-recorder" "$LEAN_BZIMAGE" -o "$TMPD/x.trace"
bad "--format without --trace" "--notrace, -o and --format need at least one --trace" "$LEAN_BZIMAGE" --format dat
bad "an unknown --format" "--format must be text, dat, perfetto or raw, not 'pdf'" "$LEAN_BZIMAGE" --trace start_kernel --format pdf
bad "--event of an unknown event" "--event 'kvm:nope' matches no event \(kvm:pio, " "$LEAN_BZIMAGE" --event kvm:nope
bad "--event of a name without its group" "--event 'pio' matches no event" "$LEAN_BZIMAGE" --event pio
for l in '' 0x10, 0x10,,0x11 x10 0x10-0x0f 0x100000000 0x10-0x200 '1 2'; do
	bad "--msr '$l'" "--msr '$l' is not a list of MSRs" "$LEAN_BZIMAGE" --event kvm:msr --msr "$l"
done
bad "--msr past KVM's 16 filter ranges" "--msr: at most 14 ranges besides the default ones" \
	"$LEAN_BZIMAGE" --event kvm:msr --msr 1,2,3,4,5,6,7,8,9,10 --msr 11,12,13,14,15
bad "--msr without kvm:msr" "--msr needs --event kvm:msr" "$LEAN_BZIMAGE" --event kvm:pio --msr 0x10
for n in 0 -1 x 1000001 12k ''; do
	bad "--flight-recorder '$n'" "--flight-recorder must be a number from 1 to 1000000, not '$n'" \
		"$LEAN_BZIMAGE" --flight-recorder "$n"
done
bad "--hang 0" "--hang must be a number from 1 to 86400, not '0'" "$LEAN_BZIMAGE" --flight-recorder 10 --hang 0
bad "--hang without --flight-recorder" "--hang needs --flight-recorder" "$LEAN_BZIMAGE" --hang 30
bad "--attach-backlog without --control" "--attach-backlog needs --control" "$LEAN_BZIMAGE" --attach-backlog 1M
bad "--mode bogus" "--mode must be lossless, overwrite or exit, not 'bogus'" \
	"$LEAN_BZIMAGE" --trace start_kernel --mode bogus
bad "--buffer-size 12Q" "--buffer-size '12Q' is not a size from 4K to 256M" \
	"$LEAN_BZIMAGE" --trace start_kernel --buffer-size 12Q
bad "--buffer-size 100G" "--buffer-size '100G' is not a size from 4K to 256M" \
	"$LEAN_BZIMAGE" --trace start_kernel --buffer-size 100G
bad "--attach-backlog 1K" "--attach-backlog '1K' is not a size from 64K to 4G" \
	"$LEAN_BZIMAGE" --control "$TMPD/never.sock" --attach-backlog 1K
bad "--attach-backlog lots" "--attach-backlog 'lots' is not a size from 64K to 4G" \
	"$LEAN_BZIMAGE" --control "$TMPD/never.sock" --attach-backlog lots
bad "-o in a missing directory" "cannot open output '/nonexistent/dir/x': No such file" \
	"$LEAN_BZIMAGE" --trace start_kernel -o /nonexistent/dir/x
bad "--control in a missing directory" "cannot listen on '/nonexistent/dir/sock': No such file" \
	"$LEAN_BZIMAGE" --control /nonexistent/dir/sock
bad "--system-map that does not exist" "cannot open System.map '/nonexistent'" \
	"$LEAN_BZIMAGE" --trace start_kernel --system-map /nonexistent
# Another build's map, made from this kernel's own symbols: every address
# 16 MiB off; and a map lacking the __mcount_loc bounds.
"$VMMTRACE" symbols "$LEAN_BZIMAGE" 2>/dev/null | python3 -c '
import sys
for line in sys.stdin:
    a, t, n = line.split()[:3]
    print("%016x %s %s" % ((int(a, 16) + (16 << 20)) % 2**64, t, n))' >"$TMPD/shifted.map"
grep -E ' (start_kernel|setup_arch)$' "$TMPD/shifted.map" >"$TMPD/few.map"
bad "--system-map of another build" "__mcount_loc .* is not in the image file: is '$TMPD/shifted.map' this kernel's System.map\\?" \
	"$LEAN_BZIMAGE" --trace start_kernel --system-map "$TMPD/shifted.map"
bad "--system-map without __mcount_loc's bounds" "no __start_mcount_loc.*: is '$TMPD/few.map' this kernel's System.map\\?" \
	"$LEAN_BZIMAGE" --trace start_kernel --system-map "$TMPD/few.map"

echo "== control commands without a guest"
# ctl_bad DESCRIPTION PATTERN ARGS...: `vmmtrace ARGS` fails with status 2,
# one line on stderr matching PATTERN, nothing on stdout.
ctl_bad() {
	local d=$1 pat=$2 rc
	shift 2
	timeout -k 5 "$BAD_TIMEOUT" "$VMMTRACE" "$@" </dev/null >"$out" 2>"$err"
	rc=$?
	if [ "$rc" = 2 ] && [ "$(wc -l <"$err")" = 1 ] && [ ! -s "$out" ] && grep -qE -- "$pat" "$err"; then
		pass "$d: $(cat "$err")"
	else
		fail "$d: status $rc, stderr '$(head -c 200 "$err")', $(wc -c <"$out") bytes on stdout"
	fi
}
ctl_bad "nmi: no such socket" "vmmtrace nmi: cannot connect to '/nonexistent/sock'" nmi /nonexistent/sock
ctl_bad "nmi: no SOCKET" "usage: vmmtrace nmi SOCKET" nmi
ctl_bad "nmi: an extra argument" "vmmtrace nmi: unexpected argument 'extra'" nmi "$TMPD/sock" extra
ctl_bad "status: a file that is no socket" "vmmtrace status: cannot connect to '/etc/passwd'" status /etc/passwd
ctl_bad "detach: no such socket" "vmmtrace detach: cannot connect to '/nonexistent'" detach /nonexistent
ctl_bad "stop: no SOCKET" "usage: vmmtrace stop SOCKET" stop
ctl_bad "attach: no such socket" "vmmtrace attach: cannot connect to '/nonexistent'" attach /nonexistent --trace foo
ctl_bad "attach: an unknown --event" "vmmtrace attach: --event 'kvm:nope' matches no event" \
	attach /nonexistent --event kvm:nope

echo "== Ctrl-C during a boot"
# earlyprintk: the console starts at the first instruction, not ~10 s later.
start=$(date +%s)
"$VMMTRACE" boot "$LEAN_BZIMAGE" --initrd "$INITRAMFS" --cpus 2 \
	--cmdline earlyprintk=serial,ttyS0,115200 </dev/null >"$out" 2>"$err" &
pid=$!
# SIGINT in mid-boot: once the kernel has printed its first line, a moment later.
wait_line "$out" 'Linux version' 300 "$pid" || fail "Ctrl-C: no kernel line on stdout within 300 s"
sleep "${CTRLC_AFTER:-2}"
before=$(wc -c <"$out")
kill -INT "$pid"
sent=$(date +%s)
for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then
	fail "Ctrl-C: vmmtrace still runs 10 s after SIGINT"
	kill -KILL "$pid"
fi
wait "$pid"
rc=$?
stop_s=$(( $(date +%s) - sent ))
echo "INFO: SIGINT after $(( sent - start )) s, $before console bytes by then; status $rc after $stop_s s"
check "Ctrl-C: exit status 130 (status $rc)" [ "$rc" = 130 ]
check "Ctrl-C: stopped within 5 s ($stop_s s)" [ "$stop_s" -le 5 ]
check "Ctrl-C: one stderr line says why" [ "$(cat "$err")" = "vmmtrace: stopped by Interrupt" ]
check "Ctrl-C: the console so far is on stdout, from the first kernel line" \
	grep -q 'Linux version' "$out"
finish
