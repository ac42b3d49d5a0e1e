# SPDX-License-Identifier: GPL-2.0
# Shared by the scripts: where downloads and built guests are cached.
# Outside the repository so that a clean clone reuses them.
VMMTRACE_CACHE=${VMMTRACE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vmmtrace}
export VMMTRACE_CACHE
mkdir -p "$VMMTRACE_CACHE"
say() { printf 'vmmtrace-setup: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }
