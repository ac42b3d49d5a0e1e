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
