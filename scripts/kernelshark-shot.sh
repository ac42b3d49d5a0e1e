#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Opens a trace.dat in KernelShark on a virtual X display and saves a
# screenshot, to check by eye that KernelShark reads vmmtrace's dat output
# (docs/FORMATS.md, "Checking with KernelShark"). Not in the test suite: a
# GUI's start-up time and layout are not a reliable pass/fail signal.
#   scripts/kernelshark-shot.sh DAT [PNG]      (PNG default: DAT with .png)
# Installs nothing: names the missing packages and exits 2.
set -eu
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: $0 DAT [PNG]" >&2
	exit 1
fi
dat=$(realpath "$1")
png=${2:-${1%.dat}.png}
wait_s=${KS_WAIT:-15}	# KernelShark needs several seconds to load and draw
[ -r "$dat" ] || { echo "cannot read $dat" >&2; exit 1; }

missing=()
command -v kernelshark >/dev/null || missing+=(kernelshark)
command -v Xvfb >/dev/null || missing+=(xvfb)
command -v import >/dev/null || missing+=(imagemagick)
command -v xdpyinfo >/dev/null || missing+=(x11-utils)
if [ "$(id -u)" = 0 ]; then
	command -v runuser >/dev/null || missing+=(util-linux)
fi
if [ ${#missing[@]} -gt 0 ]; then
	echo "missing: apt-get install -y ${missing[*]}" >&2
	exit 2
fi

tmp=$(mktemp -d)
xvfb_pid=''
ks_pid=''
cleanup() {
	[ -z "$ks_pid" ] || kill "$ks_pid" 2>/dev/null || true
	[ -z "$xvfb_pid" ] || kill "$xvfb_pid" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

# A display number nobody uses: the first without a lock file from :77 on.
disp=77
while [ -e "/tmp/.X$disp-lock" ]; do disp=$((disp + 1)); done
Xvfb ":$disp" -screen 0 1600x1000x24 -nolisten tcp >"$tmp/xvfb.log" 2>&1 &
xvfb_pid=$!
for _ in $(seq 50); do
	DISPLAY=":$disp" xdpyinfo >/dev/null 2>&1 && break
	sleep 0.2
done
DISPLAY=":$disp" xdpyinfo >/dev/null 2>&1 || { echo "Xvfb :$disp did not start" >&2; cat "$tmp/xvfb.log" >&2; exit 1; }

# As root KernelShark opens a modal "running with Root privileges" dialog
# that hides the trace; run it as an unprivileged user, who must be able to
# read the file (a copy in a world-readable directory).
cp "$dat" "$tmp/trace.dat"
chmod 777 "$tmp"	# HOME for the unprivileged user, too
chmod 644 "$tmp/trace.dat"
run=()
if [ "$(id -u)" = 0 ]; then
	run=(runuser -u nobody --)
fi
(cd "$tmp" && DISPLAY=":$disp" HOME="$tmp" XDG_RUNTIME_DIR="$tmp" \
	exec "${run[@]}" kernelshark "$tmp/trace.dat") >"$tmp/ks.log" 2>&1 &
ks_pid=$!
sleep "$wait_s"
if ! kill -0 "$ks_pid" 2>/dev/null; then
	echo "kernelshark exited before the screenshot:" >&2
	cat "$tmp/ks.log" >&2
	exit 1
fi
DISPLAY=":$disp" import -window root "$png"
echo "$png"
