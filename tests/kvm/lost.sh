#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Nothing lost when vmmtrace dies (issue 16), on the lean kernel with
# --trace '*' so that files grow fast:
# - SIGSEGV in the middle of a raw recording (kill -SEGV is delivered as a
#   real fault's default action is): status 139, one line saying what the
#   file holds, and `vmmtrace report` reads it up to its last complete chunk
#   and says the recording did not end cleanly;
# - the disk fills (a 384 KiB tmpfs; `ulimit -f`, EFBIG, where mount is not
#   permitted) under `boot -o` in every format (trace.dat, written at the
#   end, under a boot that --stop-at ends early), and under four `attach -o`
#   clients (raw, text, Perfetto; trace.dat, whose bytes come at detach)
#   while another client writes to a roomy disk: one line "cannot write
#   FILE: why", boot exits 6 with the guest stopped cleanly (nothing lost or
#   unfinished in its account), an attach client exits 6 while the guest and
#   the other client go on, and the raw files read back up to their last
#   complete chunk;
# - an attach client that stops reading (SIGSTOP) past the boot's
#   --attach-backlog: the guest's side ends its window, says why in one
#   line on both sides, and the client, let go on, exits 6 with every event
#   it was sent whole, while the guest and the other client go on;
# - a trace.dat header larger than the boot's --attach-backlog: the attach
#   is refused with exit 1 and one line, leaves no file, and the guest and
#   its control socket go on (this once crashed the boot: fopencookie's
#   write returned -1).
. "$(dirname "$0")/../lib.sh"
require_file "$VMMTRACE"
require_file "$LEAN_BZIMAGE"
require_file "$INITRAMFS"
require_kvm
FULL_KB=384
# The sanitizer build: no handler of its own for SIGSEGV, so vmmtrace's runs and then the default.
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:handle_segv=0"

# Small file systems for the out-of-disk cases, unmounted whatever happens.
mounts=()
cleanup() {
	local m
	for m in "${mounts[@]}"; do umount "$m" 2>/dev/null || umount -l "$m"; done
	[ -n "${VMMTRACE_KEEP_TMP:-}" ] || rm -rf "$TMPD"
}
trap cleanup EXIT
limit=tmpfs
FORMATS="raw text perfetto dat"
# ext FORMAT: the file name ending that picks FORMAT.
ext() { case $1 in text) echo txt ;; *) echo "$1" ;; esac; }
# A trace.dat's header (its symbols: about 0.9 MB) is written when it opens:
# its boot's disk holds that and fills with the events (up to trap_init).
DAT_KB=1280
for d in boot-raw boot-text boot-perfetto boot-dat attach-raw attach-text attach-perfetto attach-dat; do
	mkdir -p "$TMPD/$d"
	kb=$FULL_KB
	[ $d = boot-dat ] && kb=$DAT_KB
	if [ "$limit" = tmpfs ] && mount -t tmpfs -o size=${kb}k tmpfs "$TMPD/$d" 2>"$TMPD/mount.err"; then
		mounts+=("$TMPD/$d")
	else
		limit=ulimit
	fi
done
if [ "$limit" = tmpfs ]; then
	echo "INFO: out of disk: a ${FULL_KB} KiB tmpfs per case (ENOSPC)"
else
	for m in "${mounts[@]}"; do umount "$m"; done
	mounts=()
	echo "INFO: out of disk: mount refused ($(head -c 100 "$TMPD/mount.err")); ulimit -f $FULL_KB instead (EFBIG, SIGXFSZ ignored)"
fi
# limited CMD... &: runs CMD where the files it writes stop at LIMIT_KB
# (default FULL_KB; ulimit mode). Only in the background: it execs, so that
# $! is CMD's pid.
limited() {
	if [ "$limit" = ulimit ]; then
		ulimit -f "${LIMIT_KB:-$FULL_KB}"
		trap '' XFSZ
	fi
	exec "$@"
}
NOSPACE='cannot write [^ ]+: (No space left on device|File too large)$'

# report_ok NAME FILE: the raw FILE reads up to its last complete chunk.
report_ok() {
	local got said rc
	"$VMMTRACE" report "$2" >"$TMPD/$1.txt" 2>"$TMPD/$1-report.err"
	rc=$?
	sed 's/^/INFO: /' "$TMPD/$1-report.err"
	check "$1: report reads it, status 0 (got $rc)" [ "$rc" = 0 ]
	check "$1: report says the recording did not end cleanly" grep -q "did not end cleanly" "$TMPD/$1-report.err"
	check "$1: no chunk is damaged (the symbols are whole)" eval "! grep -q damaged '$TMPD/$1-report.err'"
	got=$(grep -vc '^#' "$TMPD/$1.txt")
	said=$(sed -nE 's/.* ([0-9]+) events in [0-9]+ complete chunks read.*/\1/p' "$TMPD/$1-report.err")
	check "$1: every event of the complete chunks is there ($got printed, ${said:-?} said)" \
		eval "[ '$got' -gt 1000 ] && [ '$got' = '${said:-x}' ]"
	check "$1: every printed event is whole" \
		[ "$(grep -v '^#' "$TMPD/$1.txt" | grep -cE "$EVENT_LINE_RE")" = "$got" ]
}
# sanitizer_lines FILE...: a sanitizer's report in vmmtrace's stderr reaches the test log.
sanitizer_lines() { grep -hE '^==[0-9]+==ERROR: [A-Za-z]+Sanitizer|: runtime error: ' "$@" 2>/dev/null; }

start=$(date +%s)
echo "== SIGSEGV while recording raw; boot -o on a full disk in every format"
(ulimit -c 0; exec "$VMMTRACE" boot "$LEAN_BZIMAGE" --trace '*' -o "$TMPD/segv.raw" --console /dev/null \
	</dev/null 2>"$TMPD/segv.err") &
segv=$!
for fmt in $FORMATS; do
	# A trace.dat's events are written when the trace ends: --stop-at ends it early.
	stop=() kb=$FULL_KB
	[ $fmt = dat ] && stop=(--stop-at trap_init) kb=$DAT_KB
	LIMIT_KB=$kb limited timeout -k 10 180 "$VMMTRACE" boot "$LEAN_BZIMAGE" --trace '*' "${stop[@]}" \
		-o "$TMPD/boot-$fmt/trace.$(ext $fmt)" --console "$TMPD/boot-$fmt.console" \
		</dev/null 2>"$TMPD/boot-$fmt.err" &
	eval "pid_$fmt=$!"
done
for ((i = 0; i < 360; i++)); do
	[ "$(stat -c %s "$TMPD/segv.raw" 2>/dev/null || echo 0)" -gt 300000 ] && break
	kill -0 "$segv" 2>/dev/null || break
	sleep 0.5
done
kill -SEGV "$segv" 2>/dev/null
wait "$segv"
rc=$?
size=$(stat -c %s "$TMPD/segv.raw" 2>/dev/null || echo 0)
check "segv: killed while recording ($size bytes), status 139 (got $rc)" eval "[ $size -gt 300000 ] && [ $rc = 139 ]"
check "segv: one line says what the file holds: $(grep SIGSEGV "$TMPD/segv.err")" \
	grep -qx "vmmtrace boot: SIGSEGV: vmmtrace crashed; $TMPD/segv.raw reads back up to its last complete chunk (vmmtrace report)" "$TMPD/segv.err"
report_ok segv "$TMPD/segv.raw"

for fmt in $FORMATS; do
	eval "pid=\$pid_$fmt"
	wait "$pid"
	rc=$?
	err=$TMPD/boot-$fmt.err
	sed 's/^/INFO: /' "$err"
	check "boot $fmt: exit status 6, the trace could not be written (got $rc)" [ "$rc" = 6 ]
	# The guest stops for a failed write; a trace.dat fails after it stopped.
	check "boot $fmt: one line says what failed and where" \
		eval "[ \"\$(grep -cE '$NOSPACE' '$err')\" = 1 ] && grep -qE '^vmmtrace( boot)?: $NOSPACE' '$err'"
	check "boot $fmt: nothing else on stderr but the trace's account" \
		eval "! grep -vE '$NOSPACE|^vmmtrace: trace: |^vmmtrace: stopped at trap_init \(--stop-at\)' '$err'"
	set -- $(trace_summary "$err") - - - - - - - -
	check "boot $fmt: the guest was stopped cleanly: events traced ($1), none lost ($8), none unfinished" \
		eval "[ '$1' != - ] && [ '$8' = 0 ] && ! grep -q unfinished '$err'"
	check "boot $fmt: the guest never oopsed or panicked" \
		eval "! grep -qE 'Oops|BUG:|Kernel panic' '$TMPD/boot-$fmt.console'"
done
out=$TMPD/boot-text/trace.txt
size=$(stat -c %s "$out")
bad=$(grep -v '^#' "$out" | head -n -1 | grep -vcE '^ *[^ ]+-[0-9]+ +\[[0-9]{3}\] ')
check "boot text: the file filled the disk ($size bytes) and, but for the last, its lines are events ($bad others)" \
	eval "[ $size -gt $((FULL_KB * 1024 - 50000)) ] && [ $bad = 0 ]"
report_ok boot-raw "$TMPD/boot-raw/trace.raw"
echo "INFO: $(($(date +%s) - start)) s so far"

echo "== attach -o on a full disk in every format, and a client that stops reading, while another client writes elsewhere"
SOCK=$TMPD/vt.sock
BACKLOG_MB=2
timeout -k 10 300 "$VMMTRACE" boot "$LEAN_BZIMAGE" --initrd "$INITRAMFS" --control "$SOCK" \
	--attach-backlog ${BACKLOG_MB}M --console "$TMPD/attach.console" --cmdline vmmtrace.steps=wait-host \
	</dev/null 2>"$TMPD/attach-boot.err" &
vt=$!
for ((i = 0; i < 120; i++)); do [ -S "$SOCK" ] && break; sleep 0.25; done
# The other client: every function too, to a roomy disk, until told to stop.
"$VMMTRACE" attach "$SOCK" --trace '*' -o "$TMPD/other.txt" 2>"$TMPD/other.err" &
other=$!
# The stalled client: stopped once attached, so the guest's side queues for it.
"$VMMTRACE" attach "$SOCK" --trace '*' -o "$TMPD/stalled.txt" 2>"$TMPD/stalled.err" &
stalled=$!
for ((i = 0; i < 120; i++)); do grep -q '^vmmtrace attach: ' "$TMPD/stalled.err" && break; sleep 0.1; done
kill -STOP "$stalled"
for fmt in $FORMATS; do
	limited timeout -k 10 120 "$VMMTRACE" attach "$SOCK" --trace '*' -o "$TMPD/attach-$fmt/trace.$(ext $fmt)" \
		2>"$TMPD/attach-$fmt.err" &
	eval "pid_$fmt=$!"
done
for fmt in raw text perfetto; do
	eval "pid=\$pid_$fmt"
	wait "$pid"
	rc=$?
	err=$TMPD/attach-$fmt.err
	sed 's/^/INFO: /' "$err"
	check "attach $fmt: exit status 6 (got $rc)" [ "$rc" = 6 ]
	check "attach $fmt: one line says what failed and where" \
		eval "[ \"\$(grep -cE '$NOSPACE' '$err')\" = 1 ] && grep -qE '^vmmtrace attach: $NOSPACE' '$err'"
done
# trace.dat's bytes come when its window ends.
kill -INT "$pid_dat"
wait "$pid_dat"
rc=$?
sed 's/^/INFO: /' "$TMPD/attach-dat.err"
check "attach dat: written at detach, exit status 6 (got $rc)" [ "$rc" = 6 ]
check "attach dat: one line says what failed and where" \
	eval "[ \"\$(grep -cE '$NOSPACE' '$TMPD/attach-dat.err')\" = 1 ] && grep -qE '^vmmtrace attach: $NOSPACE' '$TMPD/attach-dat.err'"
check "the guest still runs after the clients failed" kill -0 "$vt"
report_ok attach-raw "$TMPD/attach-raw/trace.raw"

ENDED="the window was ended: this client fell $BACKLOG_MB MiB behind \(boot --attach-backlog\); its trace stops there"
for ((i = 0; i < 240; i++)); do grep -qE "$ENDED" "$TMPD/attach-boot.err" && break; sleep 0.5; done
kill -CONT "$stalled"
wait "$stalled"
rc=$?
sed 's/^/INFO: /' "$TMPD/stalled.err"
check "stalled: the guest's side ended its window and said so in one line" \
	eval "[ \"\$(grep -cE '$ENDED' '$TMPD/attach-boot.err')\" = 1 ]"
check "stalled: the client, let go on, exits 6 (got $rc) with that line" \
	eval "[ $rc = 6 ] && grep -qxE 'vmmtrace attach: $ENDED' '$TMPD/stalled.err'"
n=$(grep -vc '^#' "$TMPD/stalled.txt")
bad=$(grep -v '^#' "$TMPD/stalled.txt" | head -n -1 | grep -vcE "$EVENT_LINE_RE")
size=$(stat -c %s "$TMPD/stalled.txt")
check "stalled: it got the backlog's worth ($size bytes, $n lines), every line but the cut last an event ($bad others)" \
	eval "[ $size -ge $((BACKLOG_MB << 20)) ] && [ $bad = 0 ]"
# Each failed client's connection closes; the server then detaches it.
for ((i = 0; i < 60; i++)); do
	"$VMMTRACE" status "$SOCK" >"$TMPD/status" 2>&1 && grep -qx "clients: 1" "$TMPD/status" && break
	sleep 0.5
done
check "status answers; the failed clients are detached, one is left ($(grep '^clients' "$TMPD/status"))" \
	grep -qx "clients: 1" "$TMPD/status"
n0=$(grep -vc '^#' "$TMPD/other.txt")
for ((i = 0; i < 60; i++)); do	# a loaded host runs the guest slowly
	[ $(($(grep -vc '^#' "$TMPD/other.txt") - n0)) -gt 100 ] && break
	sleep 0.5
done
kill -INT "$other"
wait "$other"
rc=$?
n=$(grep -vc '^#' "$TMPD/other.txt")
check "the other client went on after them: status 0 on SIGINT (got $rc), $n events, $((n - n0)) after" \
	eval "[ $rc = 0 ] && [ $((n - n0)) -gt 100 ]"
check "the other client's events are whole lines" \
	[ "$(grep -v '^#' "$TMPD/other.txt" | grep -cE "$EVENT_LINE_RE")" = "$n" ]
"$VMMTRACE" stop "$SOCK" >/dev/null
wait "$vt"
rc=$?
check "vmmtrace stop ends the guest with status 0 (got $rc)" [ "$rc" = 0 ]
check "the guest never oopsed or panicked" eval "! grep -qE 'Oops|BUG:|Kernel panic' '$TMPD/attach.console'"
echo "== a header larger than --attach-backlog: the attach is refused, the guest goes on"
# A trace.dat's header holds the kernel's symbols (about 0.9 MB on the lean
# kernel): larger than 64 KiB, it cannot be queued for the client.
SOCK=$TMPD/small.sock
timeout -k 10 300 "$VMMTRACE" boot "$LEAN_BZIMAGE" --initrd "$INITRAMFS" --control "$SOCK" \
	--attach-backlog 64K --console "$TMPD/small.console" --cmdline vmmtrace.steps=wait-host \
	</dev/null 2>"$TMPD/small-boot.err" &
vt=$!
for ((i = 0; i < 120; i++)); do [ -S "$SOCK" ] && break; sleep 0.25; done
timeout -k 10 120 "$VMMTRACE" attach "$SOCK" --trace '*' -o "$TMPD/small.dat" 2>"$TMPD/small-dat.err"
rc=$?
sed 's/^/INFO: /' "$TMPD/small-dat.err"
check "dat header over the backlog: exit status 1 (got $rc) and one line that says so" \
	eval "[ $rc = 1 ] && grep -qxF \"vmmtrace attach: the dat trace's header is larger than the guest's --attach-backlog (64 KiB)\" '$TMPD/small-dat.err'"
check "dat header over the backlog: no output file is left" [ ! -e "$TMPD/small.dat" ]
# Its events must fit 64 KiB whatever the load: the timer interrupt's
# handler comes HZ (100) times a second per vCPU, a few KiB; the guest arms
# its LAPIC timer some 20 s into the boot, so the client retries until it
# sees one, and each attach must end with status 0.
tries=0
while :; do
	tries=$((tries + 1))
	timeout -k 10 120 "$VMMTRACE" attach "$SOCK" --trace '__sysvec_apic_timer_interrupt' --duration 1 \
		-o "$TMPD/small.txt" 2>"$TMPD/small-txt.err"
	rc=$?
	n=$(grep -vc '^#' "$TMPD/small.txt")
	[ "$rc" = 0 ] && [ "$n" = 0 ] && [ "$tries" -lt 90 ] || break
done
sed 's/^/INFO: /' "$TMPD/small-txt.err"
check "then a text client (a small header) is attached: status 0 (got $rc), $n events at try $tries" \
	eval "[ $rc = 0 ] && [ $n -gt 0 ]"
"$VMMTRACE" stop "$SOCK" >/dev/null
wait "$vt"
rc=$?
check "vmmtrace stop ends that guest with status 0 (got $rc)" [ "$rc" = 0 ]

sanitizer_lines "$TMPD"/*.err
echo "INFO: $(($(date +%s) - start)) s in all"
finish
