# SPDX-License-Identifier: GPL-2.0
# Shared by the scripts: where downloads and built guests are cached.
# Outside the repository so that a clean clone reuses them.
VMMTRACE_CACHE=${VMMTRACE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vmmtrace}
export VMMTRACE_CACHE
mkdir -p "$VMMTRACE_CACHE"
say() { printf 'vmmtrace-setup: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

# complete_lines FILE SEEN: the lines of FILE (CR dropped) after the first
# SEEN, into the array `new`, and SEEN's new value into `seen`; only whole
# lines: a line still being written is left for the next call.
complete_lines() {
	local total
	total=$(wc -l <"$1")
	new=()
	seen=$2
	[ "$total" -gt "$2" ] || return 0
	mapfile -t -s "$2" -n "$((total - $2))" new < <(tr -d '\r' <"$1")
	seen=$total
}

# Benchmarks on a host of two CPUs or more run vmmtrace on CPU 1 (taskset
# -c 1, by the caller) and its QEMU on CPU 0: unpinned, boots here ran at
# one of two speeds, whichever each drew (docs/PERFORMANCE.md).
# pin_qemu_of PID: once the QEMU process among PID's descendants runs, all
# its threads go to CPU 0; 1 if none appeared within 10 s.
pin_qemu_of() {
	local i p kids
	for ((i = 0; i < 100; i++)); do
		kids=$(pgrep -P "$1")
		for p in $kids $(for k in $kids; do pgrep -P "$k"; done); do
			case $(ps -o comm= -p "$p") in
			qemu-system-*) taskset -a -p -c 0 "$p" >/dev/null; return 0 ;;
			esac
		done
		sleep 0.1
	done
	return 1
}
