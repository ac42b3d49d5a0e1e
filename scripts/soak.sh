#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Soak test (issue 16, not in `make check`): one boot of the lean kernel on
# 4 vCPUs with markloop busy on every CPU, then MINUTES (default 30) of
# attach/detach cycles through the control socket, with an NMI to every
# vCPU each cycle and rings so small (--buffer-size 4K: the smallest ring, 64 records) that
# the wide windows fill them and ring the doorbell. It reports vmmtrace's
# resident memory (VmRSS) and open descriptors at the start (after a
# warm-up of WARMUP cycles, so that allocator caches have reached their
# size) and at the end, and checks every window's events for exactness.
#
# Exactness: each window traces the marker and getpriority together
# (docs/TEST-GUEST.md, mark-loop): a change set enables both at once, so
# on every CPU a window's events must alternate marker, getpriority,
# marker... Two of the same in a row on one CPU is a lost or a duplicated
# event. Windows vary: text and raw (converted back by `vmmtrace report`),
# two clients at once, and every 25th cycle '*' (every traceable function),
# which fills the rings.
#
# Fails (exit 1) if the RSS grows by more than RSS_TOLERANCE_KB (default
# 8192) from the start to the end reading, if the descriptor count grows at
# all, if any window is inexact, if an attach fails, or if fewer than 90% of
# the windows caught any event. Needs /dev/kvm and the test guests
# (scripts/setup.sh). Run it niced on a shared machine:
#     nice scripts/soak.sh 30 2>&1 | tee soak.log
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/scripts/common.sh"
MINUTES=${1:-30}
VMMTRACE=${VMMTRACE:-$TOP/build/vmmtrace}
LEAN_BZIMAGE=$VMMTRACE_CACHE/lean/bzImage
INITRAMFS=$VMMTRACE_CACHE/initramfs.cpio
WARMUP=${WARMUP:-25}
RSS_TOLERANCE_KB=${RSS_TOLERANCE_KB:-8192}
CPUS=4
MARKER=__x64_sys_sched_get_priority_max
TARGET=__x64_sys_getpriority

for f in "$VMMTRACE" "$LEAN_BZIMAGE" "$INITRAMFS"; do
	[ -e "$f" ] || { echo "soak: missing $f (run scripts/setup.sh)"; exit 2; }
done
[ -c /dev/kvm ] || { echo "soak: /dev/kvm is absent"; exit 2; }
# SOAK_REUSE="PID DIR": soak a guest an earlier run booted (its vmmtrace's
# pid, its directory holding vt.sock and console), e.g. after a failed run.
if [ -n "${SOAK_REUSE:-}" ]; then
	read -r vt TMPD <<<"$SOAK_REUSE"
else
	TMPD=$(mktemp -d "${TMPDIR:-/tmp}/vmmtrace-soak.XXXXXX")
fi
SOCK=$TMPD/vt.sock
echo "soak: $MINUTES minutes on $CPUS vCPUs, files in $TMPD ($(date -u '+%F %T UTC'), $(git -C "$TOP" rev-parse --short HEAD 2>/dev/null))"

# The markloop runs well past the soak; `vmmtrace stop` ends the guest.
# The boot itself records the marker, raw, for the whole soak (~1 MB a minute).
if [ -z "${SOAK_REUSE:-}" ]; then
	"$VMMTRACE" boot "$LEAN_BZIMAGE" --initrd "$INITRAMFS" --cpus $CPUS --control "$SOCK" \
		--trace $MARKER -o "$TMPD/boot.raw" --buffer-size 4K --console "$TMPD/console" </dev/null \
		--cmdline "vmmtrace.steps=mark-loop vmmtrace.loop_cpus=$CPUS vmmtrace.mark_secs=$((MINUTES * 60 + 3600))" \
		2>"$TMPD/boot.err" &
	vt=$!
fi
trap 'kill "$vt" 2>/dev/null' EXIT
for ((c = 0; c < CPUS; c++)); do
	for ((i = 0; i < 1800; i++)); do
		grep -qE "^VMMTRACE-STEP mark-loop: running cpu=$c\b" "$TMPD/console" 2>/dev/null && break
		kill -0 "$vt" 2>/dev/null || { echo "FAIL: vmmtrace ended before markloop ran"; tail -3 "$TMPD/boot.err"; exit 1; }
		sleep 0.5
	done
	grep -qE "^VMMTRACE-STEP mark-loop: running cpu=$c\b" "$TMPD/console" ||
		{ echo "FAIL: markloop did not start on CPU $c within 15 minutes"; exit 1; }
done
echo "soak: markloop runs on all $CPUS CPUs ($(date -u '+%T'))"

# rss_fds: "RSS_KB FDS" of vmmtrace, the smallest of three readings 0.3 s
# apart (a connection being closed can hold a descriptor for a moment).
rss_fds() {
	local best_r=999999999 best_f=999999 r f k
	for k in 1 2 3; do
		r=$(sed -nE 's/^VmRSS:\s+([0-9]+) kB/\1/p' "/proc/$vt/status")
		f=$(ls "/proc/$vt/fd" | wc -l)
		[ "$r" -lt "$best_r" ] && best_r=$r
		[ "$f" -lt "$best_f" ] && best_f=$f
		sleep 0.3
	done
	echo "$best_r $best_f"
}
status_line() {
	"$VMMTRACE" status "$SOCK" 2>/dev/null |
		sed -nE 's/^(events|doorbells|dropped|change sets): (.*)/\1 \2/p' | paste -sd ';' | sed 's/;/; /g'
}

# check_window FILE: the window's events alternate per CPU; prints "EVENTS BAD".
check_window() {
	grep -v '^#' "$1" | awk -v m="$MARKER" -v g="$TARGET" '
	{ f = ""; c = ""
	  for (i = 1; i <= NF; i++) {
		if ($i ~ /^\[[0-9]+\]$/) c = $i
		if ($i ~ /^[0-9]+\.[0-9][0-9][0-9][0-9][0-9][0-9]:$/) { f = $(i + 1); break }
	  }
	  if (f != m && f != g) next
	  n++
	  if (c in last && last[c] == f) bad++
	  last[c] = f }
	END { print n + 0, bad + 0 }'
}

nmis=0
# window I NAME FORMAT DURATION [EXTRA GLOBS...]: one attach window, checked;
# appends "EVENTS BAD" to $TMPD/counts (also from a concurrent subshell).
window() {
	local i=$1 name=$2 fmt=$3 d=$4 out n bad rc
	shift 4
	out=$TMPD/w$i$name.$fmt
	"$VMMTRACE" attach "$SOCK" --trace $MARKER --trace $TARGET "$@" --duration "$d" \
		--format "$fmt" -o "$out" 2>>"$TMPD/attach.err"
	rc=$?
	if [ "$rc" != 0 ]; then
		echo "cycle $i$name: attach status $rc" | tee -a "$TMPD/failures"
		return
	fi
	if [ "$fmt" = raw ]; then
		"$VMMTRACE" report "$out" >"$out.txt" 2>>"$TMPD/report.err" ||
			echo "cycle $i$name: report failed" | tee -a "$TMPD/failures"
		rm -f "$out"
		out=$out.txt
	fi
	read -r n bad < <(check_window "$out")
	echo "$n $bad" >>"$TMPD/counts"
	if [ "$bad" != 0 ]; then
		echo "cycle $i$name: $bad events out of alternation among $n (kept: $out)" | tee -a "$TMPD/failures"
	else
		rm -f "$out"
	fi
}

read -r rss0 fds0 < <(rss_fds)
echo "soak: before any attach: VmRSS $rss0 kB, $fds0 descriptors; $(status_line)"
t0=$(date +%s)
end=$((t0 + MINUTES * 60))
next_sample=$((t0 + 300))
for ((i = 0; ; i++)); do
	[ "$i" -ge "$WARMUP" ] && [ "$(date +%s)" -ge "$end" ] && break
	d=0.$((2 + i % 5))
	if [ $((i % 25)) = 12 ]; then
		window "$i" a text 1 --trace '*'
	elif [ $((i % 10)) = 5 ]; then	# two clients at once
		window "$i" a text "$d" &
		a=$!
		window "$i" b raw 0.3
		wait "$a"	# not a bare wait: that would wait for the guest too
	else
		window "$i" a "$([ $((i % 4)) = 3 ] && echo raw || echo text)" "$d"
	fi
	"$VMMTRACE" nmi "$SOCK" >/dev/null 2>>"$TMPD/nmi.err" && nmis=$((nmis + 1))
	if [ "$i" = $((WARMUP - 1)) ]; then
		read -r rss1 fds1 < <(rss_fds)
		echo "soak: start (after $WARMUP warm-up cycles, $(($(date +%s) - t0)) s): VmRSS $rss1 kB, $fds1 descriptors; $(status_line)"
	elif [ "$(date +%s)" -ge "$next_sample" ]; then
		read -r r f < <(rss_fds)
		echo "soak: $(($(date +%s) - t0)) s, cycle $i: VmRSS $r kB, $f descriptors; $(status_line)"
		next_sample=$((next_sample + 300))
	fi
done
read -r rss2 fds2 < <(rss_fds)
cycles=$i
echo "soak: end ($cycles cycles, $(($(date +%s) - t0)) s): VmRSS $rss2 kB, $fds2 descriptors; $(status_line)"
"$VMMTRACE" stop "$SOCK" >/dev/null
if [ -n "${SOAK_REUSE:-}" ]; then	# not our child: its status is its last line's
	while kill -0 "$vt" 2>/dev/null; do sleep 0.5; done
	grep -q "^vmmtrace: stopped by 'vmmtrace stop'" "$TMPD/boot.err" && rc=0 || rc=1
else
	wait "$vt"
	rc=$?
fi
trap - EXIT

failed=0
verdict() { if [ "$2" = 1 ]; then echo "PASS: $1"; else echo "FAIL: $1"; failed=1; fi; }
read -r windows events inexact empty < <(awk '{ w++; e += $1; if ($2) x++; if (!$1) z++ }
	END { print w + 0, e + 0, x + 0, z + 0 }' "$TMPD/counts" 2>/dev/null || echo 0 0 0 0)
nfail=$(cat "$TMPD/failures" 2>/dev/null | wc -l)
verdict "RSS flat: $rss1 kB at the start, $rss2 kB at the end (growth $((rss2 - rss1)) kB, tolerance $RSS_TOLERANCE_KB kB)" \
	"$([ $((rss2 - rss1)) -le "$RSS_TOLERANCE_KB" ] && echo 1)"
verdict "descriptors flat: $fds1 at the start, $fds2 at the end" "$([ "$fds2" -le "$fds1" ] && echo 1)"
verdict "every window exact: $windows windows, $events events, $inexact inexact" "$([ "$inexact" = 0 ] && echo 1)"
verdict "every attach and report succeeded ($nfail failures)" "$([ "$nfail" = 0 ] && echo 1)"
verdict "windows with events: $((windows - empty)) of $windows" \
	"$([ "$windows" -gt 0 ] && [ $(((windows - empty) * 10)) -ge $((windows * 9)) ] && echo 1)"
verdict "NMIs sent every cycle ($nmis of $cycles)" "$([ "$nmis" = "$cycles" ] && echo 1)"
verdict "vmmtrace stop ended the guest with status 0 (got $rc)" "$([ "$rc" = 0 ] && echo 1)"
verdict "the guest never oopsed or panicked" \
	"$(grep -qE 'Oops|BUG:|Kernel panic|segfault at' "$TMPD/console" || echo 1)"
grep -E '^vmmtrace: trace:' "$TMPD/boot.err" | sed 's/^/INFO: /'
grep -c 'NMI received' "$TMPD/console" | sed 's/^/INFO: NMI lines on the console: /'
[ "$failed" = 0 ] && rm -rf "$TMPD"
exit "$failed"
